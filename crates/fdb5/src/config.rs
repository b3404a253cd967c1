//! The `fdb5` backend type: FDB5's databases under `roots`, read in place as a catalogue and
//! a store that refuse every write.
//!
//! ```yaml
//! catalogue: {type: fdb5, roots: [/data/fdb, {path: /data/old, list: false}]}
//! store: {type: fdb5, roots: [/data/fdb, /data/old]}
//! ```
//!
//! A root is a directory, or FDB5's root entry (`path` and flags): a root whose flags deny
//! `list` or `retrieve` (`visit: false` denies both) locks its databases for that action, as
//! FDB5 passes over them.

use std::collections::BTreeSet;
use std::path::{Component, Path, PathBuf};

use fieldstore_core::factory::{Factory, Section};
use fieldstore_core::{Catalogue, ControlAction, Result, Store};
use serde::Deserialize;

use crate::catalogue::Fdb5Catalogue;
use crate::store::Fdb5Store;

/// An `fdb5` section: FDB5's roots (catalogue roots and, where FDB5 keeps its data apart,
/// store roots: data files are read only under one of them).
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Fdb5Config {
    /// The directories FDB5's databases are in.
    pub roots: Vec<Fdb5Root>,
}

/// One of FDB5's roots: a directory, or FDB5's root entry with its flags (as in FDB5's config).
#[derive(Deserialize)]
#[serde(untagged)]
pub enum Fdb5Root {
    /// A directory, every action allowed.
    Path(PathBuf),
    /// FDB5's form: `path` and the flags that deny actions.
    Entry(RootEntry),
}

/// A root as FDB5's config gives it: `visit` is the default of `list` and `retrieve`
/// (`writable` of `archive` and `wipe`, which fieldstore never does here anyway).
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(missing_docs)]
pub struct RootEntry {
    pub path: PathBuf,
    pub name: Option<String>,
    pub visit: Option<bool>,
    pub list: Option<bool>,
    pub retrieve: Option<bool>,
    pub writable: Option<bool>,
    pub archive: Option<bool>,
    pub wipe: Option<bool>,
}

/// A root as read: where, and which reading actions its flags deny.
pub struct Root {
    /// The directory (made absolute).
    pub path: PathBuf,
    /// `list` and `retrieve` where its flags deny them.
    pub denied: BTreeSet<ControlAction>,
}

/// The `fdb5` type's constructors.
pub const FACTORY: Factory = Factory { name: "fdb5", catalogue: Some(open_catalogue), store: Some(open_store), object_pool: None };

/// The section's roots, a relative one taken from the working directory (as FDB5 does).
fn roots(section: &Section<'_>) -> Result<Vec<Root>> {
    let config: Fdb5Config = section.typed()?;
    if config.roots.is_empty() {
        return Err(section.error(format!("{}.roots: FDB5's roots are one or more directories", section.name)));
    }
    let here = std::env::current_dir().map_err(|e| section.error_because("the working directory, for FDB5's relative roots", e))?;
    let root = |root: Fdb5Root| match root {
        Fdb5Root::Path(path) => Root { path: absolute(&here, &path), denied: BTreeSet::new() },
        Fdb5Root::Entry(entry) => {
            let visit = entry.visit.unwrap_or(true);
            let allowed = [(ControlAction::List, entry.list.unwrap_or(visit)), (ControlAction::Retrieve, entry.retrieve.unwrap_or(visit))];
            Root { path: absolute(&here, &entry.path), denied: allowed.into_iter().filter(|(_, ok)| !ok).map(|(a, _)| a).collect() }
        }
    };
    Ok(config.roots.into_iter().map(root).collect())
}

/// `path` made absolute from `here`, its `.` and `..` resolved by name (`/data/fdb/../old` is
/// `/data/old`), as the paths FDB5 records under it are compared by name.
fn absolute(here: &Path, path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for part in here.join(path).components() {
        match part {
            Component::ParentDir => drop(out.pop()),
            Component::CurDir => {}
            other => out.push(other),
        }
    }
    out
}

/// The directories data files may be in: the roots by name, and where a root is reached
/// through a symbolic link, also where it really is (FDB5 may record either).
pub fn allowed_dirs(roots: &[PathBuf]) -> Vec<PathBuf> {
    let mut dirs = roots.to_vec();
    dirs.extend(roots.iter().filter_map(|root| std::fs::canonicalize(root).ok()).filter(|real| !roots.contains(real)));
    dirs
}

fn open_catalogue(section: &Section<'_>) -> Result<Box<dyn Catalogue>> {
    Ok(Box::new(Fdb5Catalogue::new(roots(section)?)))
}

fn open_store(section: &Section<'_>) -> Result<Box<dyn Store>> {
    Ok(Box::new(Fdb5Store::new(roots(section)?.into_iter().map(|r| r.path).collect())))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn roots_are_absolute_without_dots() {
        let here = Path::new("/work/run");
        assert_eq!(absolute(here, Path::new("../fdb/./root")), PathBuf::from("/work/fdb/root"));
        assert_eq!(absolute(here, Path::new("/data/fdb/../old/")), PathBuf::from("/data/old"));
        assert_eq!(absolute(here, Path::new("/../..")), PathBuf::from("/"));
    }
}
