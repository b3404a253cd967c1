//! FDB5's configuration files, read as they are, so that an FDB5 user's `FDB5_CONFIG_FILE`
//! works unchanged: `type: local` with the `toc` engine, a `schema`, and `spaces` whose
//! `roots` name one directory. fieldstore's POSIX catalogue and store live in its
//! subdirectory `fieldstore`: FDB5 names its databases' directories as fieldstore names its
//! data sets', and neither may write into the other's (FDB5's tools pass over the
//! subdirectory, whose name is no database's).
//!
//! ```yaml
//! type: local
//! engine: toc
//! schema: /etc/fdb/schema
//! spaces:
//! - handler: Default
//!   regex: ".*"
//!   roots:
//!   - path: /data/fdb
//! ```
//!
//! What fieldstore cannot honour as FDB5 would (several roots chosen by regex, remote or
//! select FDBs, other engines) is refused by name, never half-honoured.

use std::path::PathBuf;

use serde::Deserialize;

use super::{BackendConfig, Config};
use crate::error::{Error, Result};

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Fdb5Config {
    #[serde(rename = "type", default)]
    kind: Option<String>,
    #[serde(default)]
    engine: Option<String>,
    #[serde(default)]
    schema: Option<PathBuf>,
    #[serde(default)]
    spaces: Vec<Space>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Space {
    #[serde(default, rename = "handler")]
    _handler: Option<String>,
    #[serde(default, rename = "regex")]
    _regex: Option<String>,
    #[serde(default)]
    roots: Vec<Root>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Root {
    path: PathBuf,
    #[serde(default, rename = "writable")]
    _writable: Option<bool>,
    #[serde(default, rename = "visit")]
    _visit: Option<bool>,
    #[serde(default, rename = "wipe")]
    _wipe: Option<bool>,
}

/// Where in an FDB5 root fieldstore keeps its own store.
pub const FDB5_ROOT_SUBDIRECTORY: &str = "fieldstore";

/// Whether a config's text is FDB5's rather than fieldstore's (FDB5's has no `catalogue`).
pub fn is_fdb5(value: &serde_yaml::Value) -> bool {
    value.as_mapping().is_some_and(|m| !m.contains_key("catalogue") && ["type", "engine", "spaces"].iter().any(|k| m.contains_key(*k)))
}

/// The fieldstore config an FDB5 config stands for.
pub fn translate(source: &str, value: serde_yaml::Value) -> Result<Config> {
    let error = |message: String| Error::Config { source_name: source.to_string(), message };
    let fdb5: Fdb5Config = serde_yaml::from_value(value).map_err(|e| error(format!("an FDB5 config, but {e}")))?;
    if let Some(kind) = fdb5.kind.as_deref().filter(|k| *k != "local") {
        return Err(error(format!("FDB5 config type '{kind}' is not supported (fieldstore reads type: local with engine: toc)")));
    }
    if let Some(engine) = fdb5.engine.as_deref().filter(|e| *e != "toc") {
        return Err(error(format!(
            "FDB5 engine '{engine}' is not supported (fieldstore reads the toc engine's config; see docs/config.md)"
        )));
    }
    let mut roots: Vec<PathBuf> = Vec::new();
    for root in fdb5.spaces.into_iter().flat_map(|s| s.roots) {
        if !roots.contains(&root.path) {
            roots.push(root.path);
        }
    }
    let root = match roots.as_slice() {
        [root] => root,
        [] => return Err(error("an FDB5 config without roots (spaces: - roots: - path: DIR)".into())),
        many => {
            let names: Vec<String> = many.iter().map(|r| r.display().to_string()).collect();
            return Err(error(format!(
                "an FDB5 config with {} roots ({}): fieldstore stores in one root; give it a config of its own",
                many.len(),
                names.join(", ")
            )));
        }
    };
    let own = root.join(FDB5_ROOT_SUBDIRECTORY);
    Ok(Config {
        schema: fdb5.schema,
        catalogue: BackendConfig::posix(&own),
        store: BackendConfig::posix(&own),
        source: format!("{source} (FDB5 config: fieldstore's store in {})", own.display()),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const LOCAL: &str =
        "type: local\nengine: toc\nschema: /etc/fdb/schema\nspaces:\n- handler: Default\n  regex: \".*\"\n  roots:\n  - path: /data/fdb\n";

    #[test]
    fn a_local_toc_config_is_one_posix_root_with_its_schema() {
        let config = Config::parse("fdb.yaml", LOCAL).unwrap();
        assert_eq!((config.catalogue.kind.as_str(), config.store.kind.as_str()), ("posix", "posix"));
        assert_eq!(config.store.options.get("root").and_then(|r| r.as_str()), Some("/data/fdb/fieldstore"));
        assert_eq!(config.schema.unwrap(), PathBuf::from("/etc/fdb/schema"));
        assert!(config.source.contains("FDB5 config"));
    }

    #[test]
    fn what_fieldstore_cannot_honour_is_refused_by_name() {
        let two = format!("{LOCAL}- handler: Default\n  regex: \"rd:.*\"\n  roots:\n  - path: /data/rd\n");
        for (text, needle) in [
            ("type: remote\nhost: h\n", "unknown field `host`"),
            ("type: remote\n", "type 'remote' is not supported"),
            ("type: local\nengine: daos\nspaces: []\n", "engine 'daos' is not supported"),
            ("type: local\nengine: toc\n", "without roots"),
            (two.as_str(), "2 roots (/data/fdb, /data/rd)"),
            ("type: local\nspaces:\n- roots:\n  - path: /a\n    size: 3\n", "unknown field `size`"),
        ] {
            let err = Config::parse("fdb.yaml", text).unwrap_err().to_string();
            assert!(err.contains("fdb.yaml") && err.contains(needle), "{text:?}: {err}");
        }
    }
}
