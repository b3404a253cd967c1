//! The YAML configuration: which schema, which catalogue and which store.
//!
//! ```yaml
//! schema: /path/to/schema          # optional; fieldstore's default schema otherwise
//! catalogue: { type: posix, root: /data/fieldstore }   # create: true to make a missing root
//! store:     { type: posix, root: /data/fieldstore }
//! read_also:                        # optional; read beside them, never written
//! - { type: fdb5, roots: [/data/fdb] }
//! extract: { keep_packings: true }  # optional; packings kept as fields are archived
//! ```
//!
//! Without a config file, both live under `$FIELDSTORE_ROOT`, or under
//! `$XDG_DATA_HOME/fieldstore` (`~/.local/share/fieldstore`) when that is unset.
//!
//! FDB5's config files are read too ([`fdb5`]), wherever a config is, and from FDB5's own
//! variables when fieldstore's are not set.

mod fdb5;

use std::path::{Path, PathBuf};

use serde::Deserialize;

use crate::error::{Cause, Error, Result};
use crate::schema::Schema;

/// Environment variable naming a config file.
pub const CONFIG_ENV: &str = "FIELDSTORE_CONFIG";
/// Environment variable naming the root of the default POSIX store.
pub const ROOT_ENV: &str = "FIELDSTORE_ROOT";
/// FDB5's variables, read when fieldstore's config variable is not set: a config file's path,
/// a config's YAML text, and FDB5's home (whose `etc/fdb/config.yaml` is read if present).
pub const FDB5_CONFIG_FILE_ENV: &str = "FDB5_CONFIG_FILE";
/// FDB5's variable holding a config's YAML text, read before `$FDB5_CONFIG_FILE` (as FDB5 does).
pub const FDB5_CONFIG_ENV: &str = "FDB5_CONFIG";
/// FDB5's home directory: its `etc/fdb/config.yaml` is read, if present, when no other variable names a config.
pub const FDB_HOME_ENV: &str = "FDB_HOME";

/// A configuration: the schema, and the catalogue and store backends to open.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Config {
    /// Path of a schema file; relative paths are relative to the config file.
    #[serde(default)]
    pub schema: Option<PathBuf>,
    /// The `catalogue:` section: the backend that indexes fields.
    pub catalogue: BackendConfig,
    /// The `store:` section: the backend that holds the fields' bytes.
    pub store: BackendConfig,
    /// Catalogues and stores read beside these, never written ([`crate::union`]): each a
    /// section of a backend that offers both, e.g. `{type: fdb5, roots: [/data/fdb]}`,
    /// FDB5's databases read in place.
    #[serde(default)]
    pub read_also: Vec<BackendConfig>,
    /// The `extract:` section: what extraction keeps as fields are archived.
    #[serde(default)]
    pub extract: ExtractConfig,
    /// Where this config came from (for messages).
    #[serde(skip)]
    pub source: String,
    /// The file it was read from, if it was (FDB5's `fdb-info --config-file`).
    #[serde(skip)]
    pub file: Option<PathBuf>,
}

/// The `extract:` section.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExtractConfig {
    /// Keep each field's packing beside the data as it is archived (as gribjump's FDB5 plugin
    /// does), so that extraction reads only its points' bytes without a `fieldstore scan`.
    /// Costs the archive a parse of each message's sections; for CCSDS a decoding and coding
    /// again of its stream (docs/extract.md).
    #[serde(default)]
    pub keep_packings: bool,
}

/// One `catalogue:` or `store:` section: a `type` and that backend's own keys.
#[derive(Clone, Debug, Deserialize)]
pub struct BackendConfig {
    /// The backend's `type:` name (`posix`, `rados`, `daos`).
    #[serde(rename = "type")]
    pub kind: String,
    /// Every other key of the section, for the backend to read ([`crate::factory::Section::typed`]).
    #[serde(flatten)]
    pub options: serde_yaml::Mapping,
}

impl BackendConfig {
    /// A `posix` section rooted at `root`, made by the first archive if it is not there
    /// (the default store's own place; a config's roots are made only if it says so).
    pub fn posix(root: &Path) -> Self {
        let mut options = serde_yaml::Mapping::new();
        options.insert("root".into(), root.display().to_string().into());
        options.insert("create".into(), true.into());
        BackendConfig { kind: "posix".into(), options }
    }

    /// The section's keys as they may be shown (`fieldstore info`): the value of a key named
    /// like a credential (`secret`, `token`, `password`) and the user part of a URL
    /// (`http://user:password@host`) are replaced by `(secret)`.
    pub fn shown_options(&self) -> serde_yaml::Mapping {
        self.options.iter().map(|(k, v)| (k.clone(), shown_value(k.as_str().unwrap_or_default(), v))).collect()
    }
}

/// Names of keys whose values are never shown, as parts of the key's name.
const SECRET_KEY_PARTS: [&str; 4] = ["secret", "token", "password", "passwd"];

fn shown_value(key: &str, value: &serde_yaml::Value) -> serde_yaml::Value {
    let key = key.to_ascii_lowercase();
    if SECRET_KEY_PARTS.iter().any(|part| key.contains(part)) {
        return "(secret)".into();
    }
    match value {
        serde_yaml::Value::String(text) => without_url_user(text).into(),
        serde_yaml::Value::Mapping(map) => {
            serde_yaml::Value::Mapping(map.iter().map(|(k, v)| (k.clone(), shown_value(k.as_str().unwrap_or_default(), v))).collect())
        }
        serde_yaml::Value::Sequence(items) => items.iter().map(|v| shown_value("", v)).collect(),
        other => other.clone(),
    }
}

/// `text` with the user part of a URL in it (`scheme://user:password@`) replaced.
fn without_url_user(text: &str) -> String {
    let Some((scheme, rest)) = text.split_once("://") else { return text.to_string() };
    let authority_end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    match rest[..authority_end].rfind('@') {
        Some(at) => format!("{scheme}://(secret){}", &rest[at..]),
        None => text.to_string(),
    }
}

impl Config {
    /// The config named by `--config`, else `$FIELDSTORE_CONFIG`, else the default POSIX
    /// store under `$FIELDSTORE_ROOT` if it is set, else FDB5's (`$FDB_CONFIG` or `$FDB5_CONFIG`,
    /// `$FDB_CONFIG_FILE` or `$FDB5_CONFIG_FILE`, `$FDB_HOME/etc/fdb/config.yaml`, in FDB5's order), else the
    /// default POSIX store: fieldstore's own variables come first. Unlike FDB5, a
    /// `$FDB5_CONFIG_FILE` that is not there is an error, not a fall back.
    pub fn resolve(explicit: Option<&Path>) -> Result<Config> {
        let set = |name: &str| std::env::var_os(name).filter(|v| !v.is_empty());
        if let Some(path) = explicit.map(PathBuf::from).or_else(|| set(CONFIG_ENV).map(PathBuf::from)) {
            return Config::from_file(&path);
        }
        if set(ROOT_ENV).is_some() {
            return Ok(Config::default_posix());
        }
        // FDB5's order: the text before the file, each under its current name and the older one.
        for name in ["FDB_CONFIG", FDB5_CONFIG_ENV] {
            if let Some(text) = set(name) {
                let text = text.into_string().map_err(|_| Error::config(format!("${name}"), "not UTF-8"))?;
                return Config::parse(&format!("${name}"), &text);
            }
        }
        for name in ["FDB_CONFIG_FILE", FDB5_CONFIG_FILE_ENV] {
            if let Some(path) = set(name) {
                return Config::from_file(Path::new(&path));
            }
        }
        if let Some(home) = set(FDB_HOME_ENV).map(|h| PathBuf::from(h).join("etc/fdb/config.yaml")).filter(|p| p.exists()) {
            return Config::from_file(&home);
        }
        Ok(Config::default_posix())
    }

    /// A POSIX catalogue and store under the default root.
    pub fn default_posix() -> Config {
        let root = default_root();
        Config {
            schema: None,
            catalogue: BackendConfig::posix(&root),
            store: BackendConfig::posix(&root),
            read_also: Vec::new(),
            extract: ExtractConfig::default(),
            source: format!("default (posix root {})", root.display()),
            file: None,
        }
    }

    /// Reads a config file (fieldstore's or FDB5's); a relative schema path is taken from the file's directory.
    pub fn from_file(path: &Path) -> Result<Config> {
        let text =
            read_bounded(path, MAX_CONFIG_BYTES).map_err(|e| Error::config_because(path.display().to_string(), "cannot be read", e))?;
        let mut config = Config::parse(&path.display().to_string(), &text)?;
        config.file = Some(path.to_path_buf());
        if let Some(schema) = &config.schema {
            if schema.is_relative() {
                config.schema = Some(path.parent().unwrap_or(Path::new(".")).join(schema));
            }
        }
        Ok(config)
    }

    /// Parses a config's text: fieldstore's, or FDB5's.
    pub fn parse(source: &str, text: &str) -> Result<Config> {
        let value: serde_yaml::Value = serde_yaml::from_str(text).map_err(|e| Error::config_because(source, "not valid YAML", e))?;
        if fdb5::is_fdb5(&value) {
            return fdb5::translate(source, value);
        }
        let mut config: Config = serde_yaml::from_value(value).map_err(|e| Error::config_because(source, "not a valid config", e))?;
        config.source = source.to_string();
        Ok(config)
    }

    /// Loads the configured schema, or the default one.
    pub fn load_schema(&self) -> Result<Schema> {
        match &self.schema {
            None => Ok(Schema::default_schema()),
            Some(path) => {
                let text = read_bounded(path, MAX_SCHEMA_BYTES)
                    .map_err(|e| Error::config_because(self.source.clone(), format!("schema {}", path.display()), e))?;
                Schema::parse(&path.display().to_string(), &text)
            }
        }
    }
}

/// `$FIELDSTORE_ROOT`, else `$XDG_DATA_HOME/fieldstore`, else `~/.local/share/fieldstore`.
pub fn default_root() -> PathBuf {
    if let Some(root) = std::env::var_os(ROOT_ENV).filter(|r| !r.is_empty()) {
        return PathBuf::from(root);
    }
    if let Some(xdg) = std::env::var_os("XDG_DATA_HOME").filter(|r| !r.is_empty()) {
        return PathBuf::from(xdg).join("fieldstore");
    }
    let home = std::env::var_os("HOME").map(PathBuf::from).unwrap_or_else(|| PathBuf::from("."));
    home.join(".local/share/fieldstore")
}

/// Largest schema file read (FDB5's own is 32 KiB): `schema: /dev/zero` must not fill memory.
const MAX_SCHEMA_BYTES: u64 = 16 << 20;
/// Largest config file read.
const MAX_CONFIG_BYTES: u64 = 1 << 20;

/// A text file's contents, refused beyond `limit` bytes (devices and pipes have no size to
/// check first, so at most `limit + 1` bytes are read). The failure is the file system's
/// error, or what is wrong with the contents.
fn read_bounded(path: &std::path::Path, limit: u64) -> std::result::Result<String, Cause> {
    use std::io::Read;
    let file = std::fs::File::open(path)?;
    let mut bytes = Vec::new();
    file.take(limit + 1).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > limit {
        return Err(format!("larger than {limit} bytes").into());
    }
    String::from_utf8(bytes).map_err(|e| format!("not UTF-8 text (byte {})", e.utf8_error().valid_up_to()).into())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shown_options_hide_credentials() {
        let c = Config::parse(
            "t",
            "catalogue: {type: posix, root: /a}\nstore: {type: s3, endpoint: 'http://u:pw1@h:1/p', access_key_id: id, \
             secret_access_key: sk1, session_token: tk1, nested: {password: pw2}, list: ['https://x@h']}\n",
        )
        .unwrap();
        let shown = serde_json::to_string(&c.store.shown_options()).unwrap();
        for secret in ["pw1", "sk1", "tk1", "pw2", "x@"] {
            assert!(!shown.contains(secret), "{shown}");
        }
        for kept in ["http://(secret)@h:1/p", "\"access_key_id\":\"id\"", "https://(secret)@h"] {
            assert!(shown.contains(kept), "{shown}");
        }
    }

    #[test]
    fn parses_sections_and_backend_keys() {
        let c = Config::parse("t", "catalogue: {type: posix, root: /a}\nstore:\n  type: posix\n  root: /b\n").unwrap();
        assert_eq!(c.catalogue.kind, "posix");
        assert_eq!(c.store.options.get("root").and_then(|r| r.as_str()), Some("/b"));
    }

    #[test]
    fn broken_configs_name_the_problem() {
        for (text, needle) in [
            ("catalogue: {type: posix}\n", "missing field `store`"),
            ("catalogue: {type: posix}\nstore: {type: posix}\nstorr: 1\n", "unknown field `storr`"),
            ("catalogue: [\n", "t:"),
            ("catalogue: {root: /a}\nstore: {type: posix}\n", "missing field `type`"),
        ] {
            let err = Config::parse("t", text).unwrap_err().report().to_string();
            assert!(err.contains(needle), "{text:?}: {err}");
        }
    }

    #[test]
    fn a_config_error_keeps_the_parsers_and_the_file_systems_error_as_its_source() {
        use std::error::Error as _;
        let err = Config::parse("t", "catalogue: [\n").unwrap_err();
        assert!(err.source().is_some_and(|cause| cause.is::<serde_yaml::Error>()), "{err:?}");
        assert_eq!(err.kind(), crate::error::ErrorKind::BadConfig);
        let dir = tempfile::tempdir().unwrap();
        let err = Config::from_file(&dir.path().join("none.yaml")).unwrap_err();
        assert!(err.source().is_some_and(|cause| cause.is::<std::io::Error>()), "{err:?}");
        assert!(err.report().to_string().contains("none.yaml: cannot be read: No such file"), "{}", err.report());
    }

    #[test]
    fn relative_schema_paths_follow_the_config_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("c.yaml");
        std::fs::write(&path, "schema: my.schema\ncatalogue: {type: posix, root: /a}\nstore: {type: posix, root: /a}\n").unwrap();
        let c = Config::from_file(&path).unwrap();
        assert_eq!(c.schema.unwrap(), dir.path().join("my.schema"));
        assert!(Config::from_file(&dir.path().join("none.yaml")).unwrap_err().to_string().contains("none.yaml"));
    }
}
