//! FDB5's configuration files, read as they are, so that an FDB5 user's `FDB5_CONFIG_FILE`
//! works unchanged: `type: local` with the `toc` engine, a `schema`, and `spaces` of `roots`
//! (with FDB5's `regex`, `handler` and root flags), or `type: select` over several of these
//! (`fdbs:` with `select:`/`excludes:`). They become a POSIX catalogue and store whose
//! `spaces` place each data set as FDB5 places its database (`fieldstore_posix::placement`),
//! in the subdirectory `fieldstore` of each root: FDB5 names its databases' directories as
//! fieldstore names its data sets', and neither may write into the other's (FDB5's tools pass
//! over the subdirectory, whose name is no database's).
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
//! What fieldstore cannot honour as FDB5 would is refused by name, never half-honoured: other
//! engines and types (remote, dist), handlers other than `Default`/`First`, sub-FDBs of a
//! select with schemas of their own, a select on keywords below the data set level (at the
//! first archive: a data set lives in one root).

use std::path::{Path, PathBuf};

use serde::Deserialize;

use super::{BackendConfig, Config};
use crate::error::{Error, Result};

/// An FDB5 config: `type: local` (the default) or `type: select` with `fdbs`, each of which
/// is a local config with `select`/`excludes`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Fdb5Config {
    #[serde(rename = "type", default)]
    kind: Option<String>,
    #[serde(default)]
    engine: Option<String>,
    #[serde(default)]
    schema: Option<PathBuf>,
    /// FDB5's home for this config: its `etc/fdb/schema` is the schema when none is given.
    #[serde(default)]
    fdb_home: Option<PathBuf>,
    /// Each: `regex`, `handler`, `name` and `roots`, passed on to the POSIX sections, which
    /// check them.
    #[serde(default)]
    spaces: Vec<serde_yaml::Mapping>,
    #[serde(default)]
    fdbs: Vec<Fdb5Config>,
    #[serde(default)]
    select: Option<String>,
    #[serde(default)]
    excludes: Vec<String>,
}

/// Where in an FDB5 root fieldstore keeps its own store.
pub const FDB5_ROOT_SUBDIRECTORY: &str = "fieldstore";

/// Whether a config's text is FDB5's rather than fieldstore's (FDB5's has no `catalogue`).
pub fn is_fdb5(value: &serde_yaml::Value) -> bool {
    value
        .as_mapping()
        .is_some_and(|m| !m.contains_key("catalogue") && ["type", "engine", "spaces", "fdbs"].iter().any(|k| m.contains_key(*k)))
}

/// The fieldstore config an FDB5 config stands for.
pub fn translate(source: &str, value: serde_yaml::Value) -> Result<Config> {
    let error = |message: String| Error::config(source, message);
    let fdb5: Fdb5Config =
        serde_yaml::from_value(value).map_err(|e| Error::config_because(source, "an FDB5 config that fieldstore cannot read", e))?;
    let (schema, spaces) = match fdb5.kind.as_deref() {
        Some("select") => select_spaces(fdb5).map_err(error)?,
        None | Some("local") => {
            if fdb5.select.is_some() || !fdb5.excludes.is_empty() {
                return Err(error("select and excludes belong to the fdbs of a type: select config".into()));
            }
            // What is wrong with the spaces is said first, the schema missing after.
            let schema = schema_of(&fdb5);
            let spaces = local_spaces(fdb5, None, &[]).map_err(error)?;
            (required(schema).map_err(error)?, spaces)
        }
        Some(kind) => {
            return Err(error(format!(
                "FDB5 config type '{kind}' is not supported (fieldstore reads type: local with engine: toc, and type: select over those)"
            )))
        }
    };
    let roots: Vec<&str> = spaces
        .iter()
        .filter_map(|s| s.get("roots").and_then(|r| r.as_sequence()))
        .flatten()
        .filter_map(|r| r.get("path").and_then(|p| p.as_str()))
        .collect();
    let place = match roots.as_slice() {
        [one] => format!("{}", Path::new(one).join(FDB5_ROOT_SUBDIRECTORY).display()),
        _ => format!("the subdirectory {FDB5_ROOT_SUBDIRECTORY} of each of {} roots", roots.len()),
    };
    let root_entries: Vec<serde_yaml::Value> =
        spaces.iter().filter_map(|s| s.get("roots").and_then(|r| r.as_sequence())).flatten().cloned().collect();
    let read_also = fdb5_databases(root_entries);
    let mut section = serde_yaml::Mapping::new();
    section.insert("spaces".into(), serde_yaml::Value::Sequence(spaces.into_iter().map(serde_yaml::Value::Mapping).collect()));
    section.insert("subdirectory".into(), FDB5_ROOT_SUBDIRECTORY.into());
    let posix = BackendConfig { kind: "posix".into(), options: section };
    let source = format!("{source} (FDB5 config: fieldstore's store in {place}, FDB5's databases read in place)");
    Ok(Config { schema: Some(schema), catalogue: posix.clone(), store: posix, read_also, extract: Default::default(), source, file: None })
}

/// FDB5's own databases in `roots` (FDB5's root entries, flags and all), read in place beside
/// fieldstore's data sets.
fn fdb5_databases(roots: Vec<serde_yaml::Value>) -> Vec<BackendConfig> {
    let mut options = serde_yaml::Mapping::new();
    options.insert("roots".into(), serde_yaml::Value::Sequence(roots));
    vec![BackendConfig { kind: "fdb5".into(), options }]
}

/// The schema a local config names: its own, else its FDB5 home's `etc/fdb/schema` (the
/// config's `fdb_home`, else `$FDB_HOME`), there or not (as FDB5: reading it then fails
/// naming it, never falling back to another schema).
fn schema_of(fdb5: &Fdb5Config) -> Option<PathBuf> {
    let home = fdb5.fdb_home.clone().or_else(|| std::env::var_os(super::FDB_HOME_ENV).filter(|h| !h.is_empty()).map(PathBuf::from));
    fdb5.schema.clone().or_else(|| home.map(|h| h.join("etc/fdb/schema")))
}

/// The schema found, or FDB5's failure when a config names none: there is no schema to fall
/// back to (FDB5 looks in its install's `etc/fdb/schema`, which fieldstore does not have).
fn required(schema: Option<PathBuf>) -> std::result::Result<PathBuf, String> {
    schema.ok_or_else(|| {
        "names no schema, and no FDB5 home ($FDB_HOME or fdb_home:) whose etc/fdb/schema would be it: give schema: FILE".into()
    })
}

/// A local config's spaces, each with the select and excludes of the sub-FDB it is in.
fn local_spaces(fdb5: Fdb5Config, select: Option<&str>, excludes: &[String]) -> std::result::Result<Vec<serde_yaml::Mapping>, String> {
    if let Some(engine) = fdb5.engine.as_deref().filter(|e| *e != "toc") {
        return Err(format!("FDB5 engine '{engine}' is not supported (fieldstore reads the toc engine's config; see docs/config.md)"));
    }
    if fdb5.spaces.is_empty() {
        return Err("an FDB5 config without roots (spaces: - roots: - path: DIR)".into());
    }
    Ok(fdb5
        .spaces
        .into_iter()
        .map(|mut space| {
            if let Some(select) = select {
                space.insert("select".into(), select.into());
            }
            if !excludes.is_empty() {
                space.insert("excludes".into(), excludes.to_vec().into());
            }
            space
        })
        .collect())
}

/// A select config's spaces: each sub-FDB's, in order, with its select and excludes; and the
/// one schema they share.
fn select_spaces(fdb5: Fdb5Config) -> std::result::Result<(PathBuf, Vec<serde_yaml::Mapping>), String> {
    if fdb5.fdbs.is_empty() {
        return Err("a type: select config without fdbs".into());
    }
    if !fdb5.spaces.is_empty() {
        return Err("a type: select config places data through its fdbs, not spaces of its own".into());
    }
    let parent_schema = schema_of(&fdb5);
    let mut spaces = Vec::new();
    // Each sub-FDB's schema: its own, else its parent's (as FDB5 gives it); all the same one.
    let mut common: Option<Option<PathBuf>> = None;
    for (i, fdb) in fdb5.fdbs.into_iter().enumerate() {
        if !matches!(fdb.kind.as_deref(), None | Some("local")) || !fdb.fdbs.is_empty() {
            return Err(format!("fdbs[{i}]: only type: local FDBs are supported under a select"));
        }
        if fdb.select.is_none() && fdb.excludes.is_empty() {
            return Err(format!("fdbs[{i}]: no select or excludes (FDB5 needs one to route fields)"));
        }
        let schema = fdb.schema.clone().or_else(|| parent_schema.clone());
        match &common {
            None => common = Some(schema),
            Some(first) if *first != schema => {
                let name = |s: &Option<PathBuf>| s.as_ref().map_or("none".into(), |s| s.display().to_string());
                return Err(format!(
                    "fdbs[{i}]: schema {} differs from fdbs[0]'s ({}): fieldstore reads one schema for the whole configuration",
                    name(&schema),
                    name(first)
                ));
            }
            Some(_) => {}
        }
        let (select, excludes) = (fdb.select.clone(), fdb.excludes.clone());
        let mut own = local_spaces(fdb, select.as_deref(), &excludes).map_err(|e| format!("fdbs[{i}]: {e}"))?;
        // The spaces of one sub-FDB form a group: the first sub-FDB whose select takes a data
        // set owns it, whether or not one of its spaces does (FDB5 then refuses the field).
        own.iter_mut().for_each(|space| drop(space.insert("group".into(), (i as u64).into())));
        spaces.extend(own);
    }
    Ok((required(common.flatten())?, spaces))
}

#[cfg(test)]
mod tests {
    use super::*;

    const LOCAL: &str =
        "type: local\nengine: toc\nschema: /etc/fdb/schema\nspaces:\n- handler: Default\n  regex: \".*\"\n  roots:\n  - path: /data/fdb\n";

    fn spaces(config: &Config) -> Vec<serde_yaml::Value> {
        assert_eq!((config.catalogue.kind.as_str(), config.store.kind.as_str()), ("posix", "posix"));
        assert_eq!(config.catalogue.options, config.store.options);
        assert_eq!(config.store.options.get("subdirectory").and_then(|r| r.as_str()), Some(FDB5_ROOT_SUBDIRECTORY));
        config.store.options.get("spaces").and_then(|s| s.as_sequence()).cloned().unwrap()
    }

    #[test]
    fn a_local_toc_config_is_its_spaces_in_posix_sections_with_its_schema() {
        let config = Config::parse("fdb.yaml", LOCAL).unwrap();
        let spaces = spaces(&config);
        assert_eq!(spaces.len(), 1);
        assert_eq!(spaces[0]["regex"].as_str(), Some(".*"));
        assert_eq!(spaces[0]["roots"][0]["path"].as_str(), Some("/data/fdb"));
        assert_eq!(config.schema.unwrap(), PathBuf::from("/etc/fdb/schema"));
        assert!(config.source.contains("FDB5 config") && config.source.contains("/data/fdb/fieldstore"), "{}", config.source);
    }

    #[test]
    fn a_select_config_is_each_fdbs_spaces_with_its_select() {
        let text =
            "type: select\nschema: /s\nfdbs:\n- select: class=od\n  spaces: [{roots: [{path: /od}]}, {regex: x, roots: [{path: /x}]}]\n\
                    - excludes: [class=e6]\n  type: local\n  engine: toc\n  schema: /s\n  spaces: [{roots: [{path: /rest}]}]\n";
        let config = Config::parse("fdb.yaml", text).unwrap();
        let spaces = spaces(&config);
        let shape: Vec<(Option<&str>, Option<&str>, &str)> = spaces
            .iter()
            .map(|s| (s.get("select").and_then(|v| v.as_str()), s["excludes"][0].as_str(), s["roots"][0]["path"].as_str().unwrap()))
            .collect();
        assert_eq!(shape, [(Some("class=od"), None, "/od"), (Some("class=od"), None, "/x"), (None, Some("class=e6"), "/rest")]);
        assert_eq!(config.schema.unwrap(), PathBuf::from("/s"));
        assert!(config.source.contains("each of 3 roots"), "{}", config.source);
    }

    #[test]
    fn what_fieldstore_cannot_honour_is_refused_by_name() {
        for (text, needle) in [
            ("type: remote\nhost: h\n", "unknown field `host`"),
            ("type: remote\n", "type 'remote' is not supported"),
            ("type: local\nengine: daos\nspaces: []\n", "engine 'daos' is not supported"),
            ("type: local\nengine: toc\n", "without roots"),
            ("type: local\nspaces:\n- roots:\n  - path: /a\n    size: 3\n", ""),
            ("type: local\nselect: class=od\nspaces: [{roots: [{path: /a}]}]\n", "select and excludes belong to the fdbs"),
            ("type: select\n", "without fdbs"),
            ("type: select\nfdbs:\n- spaces: [{roots: [{path: /a}]}]\n", "fdbs[0]: no select or excludes"),
            ("type: select\nfdbs:\n- select: a=b\n  type: remote\n", "fdbs[0]: only type: local"),
            (
                "type: select\nschema: /s\nfdbs:\n- select: a=b\n  spaces: [{roots: [{path: /a}]}]\n- select: a=c\n  schema: /t\n  spaces: [{roots: [{path: /b}]}]\n",
                "fdbs[1]: schema /t differs from fdbs[0]'s (/s)",
            ),
            ("type: select\nfdbs:\n- select: a=b\n  engine: daos\n  spaces: []\n", "fdbs[0]: FDB5 engine 'daos'"),
        ] {
            // Root keys are checked where they are read, by the POSIX sections.
            match Config::parse("fdb.yaml", text) {
                Err(e) => assert!(e.to_string().contains("fdb.yaml") && e.report().to_string().contains(needle), "{text:?}: {e}"),
                Ok(_) => assert!(needle.is_empty(), "{text:?} was accepted"),
            }
        }
    }
}
