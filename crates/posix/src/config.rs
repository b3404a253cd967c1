//! The `type: posix` sections of a config, and the backend's [`FACTORY`].
//!
//! ```yaml
//! catalogue: { type: posix, root: /data/fieldstore, commit: auto }   # commit: optional
//! store:     { type: posix, root: /data/fieldstore }          # mapped_reads: false on NFS
//! ```
//!
//! Instead of `root:`, `spaces:` spread data sets over several roots ([`crate::placement`]).
//! A root that is not there is never made unless the section says `create: true` (or
//! `fieldstore init` makes it): archive fails naming it, as FDB5's "No writable roots
//! available", so that data meant for a file system not mounted never fills the local disk.

use std::path::PathBuf;

use serde::Deserialize;

use fieldstore_core::error::Result;
use fieldstore_core::factory::{Factory, PoolSection, Section};
use fieldstore_core::objects::Pool;
use fieldstore_core::{Catalogue, Store};
use fieldstore_objects::posix::PosixPool;

use crate::placement::{Placement, SpaceConfig};
use crate::{CommitMode, PosixCatalogue, PosixStore};

/// A POSIX catalogue's section.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PosixCatalogueConfig {
    /// The directory holding a directory per data set (or `spaces`).
    #[serde(default)]
    pub root: Option<PathBuf>,
    /// Several roots, and which data sets go where (or `root`).
    #[serde(default)]
    pub spaces: Option<Vec<SpaceConfig>>,
    /// With `spaces`: data set directories go in this subdirectory of each root (made when
    /// needed), as fieldstore keeps its store in an FDB5 config's roots.
    #[serde(default)]
    pub subdirectory: Option<String>,
    /// Whether a root that is not there is made (default: archive fails naming it).
    #[serde(default)]
    pub create: bool,
    /// How a flush is made durable.
    #[serde(default)]
    pub commit: CommitSetting,
}

/// A POSIX store's section.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PosixStoreConfig {
    /// The directory holding a directory of data files per data set (or `spaces`).
    #[serde(default)]
    pub root: Option<PathBuf>,
    /// Several roots, and which data sets go where (or `root`).
    #[serde(default)]
    pub spaces: Option<Vec<SpaceConfig>>,
    /// With `spaces`: data set directories go in this subdirectory of each root (made when
    /// needed), as fieldstore keeps its store in an FDB5 config's roots.
    #[serde(default)]
    pub subdirectory: Option<String>,
    /// Whether a root that is not there is made (default: archive fails naming it).
    #[serde(default)]
    pub create: bool,
    /// Whether reads may copy from mappings of the data files and side objects (default:
    /// yes, where faster). `false` on file systems shared by several machines (NFS), where a
    /// wipe by another machine could fault a mapping (SIGBUS) rather than fail a read.
    #[serde(default = "mapped_reads_by_default")]
    pub mapped_reads: bool,
}

fn mapped_reads_by_default() -> bool {
    true
}

/// The `commit:` key: a [`CommitMode`], or `auto` to choose by the root's file system.
#[derive(Clone, Copy, Debug, Default, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum CommitSetting {
    /// [`CommitMode::for_root`]: embedded on a local file system of a host with a boot id, else ordered.
    #[default]
    Auto,
    /// Always [`CommitMode::Embedded`].
    Embedded,
    /// Always [`CommitMode::Ordered`].
    Ordered,
}

impl CommitSetting {
    /// The mode for a catalogue under `root` ([`CommitMode::for_root`] if `auto`).
    pub fn mode(self, root: &std::path::Path) -> CommitMode {
        match self {
            CommitSetting::Auto => CommitMode::for_root(root),
            CommitSetting::Embedded => CommitMode::Embedded,
            CommitSetting::Ordered => CommitMode::Ordered,
        }
    }
}

/// The POSIX catalogue, store and object pool, for the facade's list of backends.
pub const FACTORY: Factory =
    Factory { name: "posix", catalogue: Some(open_catalogue), store: Some(open_store), object_pool: Some(open_object_pool) };

fn open_catalogue(section: &Section<'_>) -> Result<Box<dyn Catalogue>> {
    let config: PosixCatalogueConfig = section.typed()?;
    let placement = placement(section, config.root, config.spaces, config.subdirectory)?.creating_roots(config.create);
    Ok(Box::new(PosixCatalogue::with_placement(placement, config.commit)))
}

fn open_store(section: &Section<'_>) -> Result<Box<dyn Store>> {
    let config: PosixStoreConfig = section.typed()?;
    let store = PosixStore::with_placement(store_placement(section)?);
    Ok(Box::new(if config.mapped_reads { store } else { store.without_mappings() }))
}

/// The roots of a `type: posix` catalogue section, and the rules placing data sets in them.
pub fn catalogue_placement(section: &Section<'_>) -> Result<Placement> {
    let config: PosixCatalogueConfig = section.typed()?;
    Ok(placement(section, config.root, config.spaces, config.subdirectory)?.creating_roots(config.create))
}

/// The roots of a `type: posix` store section, and the rules placing data sets in them.
pub fn store_placement(section: &Section<'_>) -> Result<Placement> {
    let config: PosixStoreConfig = section.typed()?;
    Ok(placement(section, config.root, config.spaces, config.subdirectory)?.creating_roots(config.create))
}

/// The pool in the directory the pool's name is (created if missing); it has no options.
fn open_object_pool(pool: &PoolSection<'_>) -> Result<Box<dyn Pool>> {
    Ok(Box::new(PosixPool::new(pool.name)?))
}

/// The section's one `root`, or its `spaces`. An empty root would be the working directory,
/// whichever it is: refused.
fn placement(
    section: &Section<'_>,
    root: Option<PathBuf>,
    spaces: Option<Vec<SpaceConfig>>,
    subdirectory: Option<String>,
) -> Result<Placement> {
    if root.is_some() && subdirectory.is_some() {
        return Err(section.error(format!("{}.subdirectory goes with spaces, not root (give root: DIR/SUBDIRECTORY)", section.name)));
    }
    match (root, spaces) {
        (Some(root), None) if root.as_os_str().is_empty() => Err(section.error(format!("{}.root must not be empty", section.name))),
        (Some(root), None) => Ok(Placement::one_root(root)),
        (None, Some(spaces)) => Placement::from_spaces(spaces, subdirectory.as_deref()).map_err(|e| {
            let message = format!("{}.{}", section.name, e.message);
            match e.cause {
                Some(cause) => section.error_because(message, cause),
                None => section.error(message),
            }
        }),
        (Some(_), Some(_)) => Err(section.error(format!("{} has both root and spaces: give one", section.name))),
        (None, None) => Err(section.error(format!("{} (type 'posix'): missing field `root` (or `spaces`)", section.name))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use fieldstore_core::config::Config;

    fn opened(yaml: &str) -> std::result::Result<(), String> {
        let config = Config::parse("t.yaml", yaml).map_err(|e| e.report().to_string())?;
        let catalogue = Section { name: "catalogue", config: &config.catalogue, source: "t.yaml" };
        let store = Section { name: "store", config: &config.store, source: "t.yaml" };
        open_catalogue(&catalogue).and(open_store(&store)).map(drop).map_err(|e| e.report().to_string())
    }

    #[test]
    fn sections_are_checked_key_by_key() {
        let root = tempfile::tempdir().unwrap();
        let r = root.path().display();
        assert_eq!(opened(&format!("catalogue: {{type: posix, root: {r}, commit: ordered}}\nstore: {{type: posix, root: {r}}}\n")), Ok(()));
        for (yaml, expected) in [
            (
                format!("catalogue: {{type: posix, rot: {r}}}\nstore: {{type: posix, root: {r}}}\n"),
                "catalogue.rot (type 'posix'): unknown field `rot`",
            ),
            (format!("catalogue: {{type: posix}}\nstore: {{type: posix, root: {r}}}\n"), "catalogue (type 'posix'): missing field `root`"),
            (
                format!("catalogue: {{type: posix, root: {r}}}\nstore: {{type: posix, root: 3}}\n"),
                "store.root (type 'posix'): invalid type: integer `3`",
            ),
            (format!("catalogue: {{type: posix, root: {r}}}\nstore: {{type: posix, root: ''}}\n"), "store.root must not be empty"),
            (
                format!("catalogue: {{type: posix, root: {r}, commit: later}}\nstore: {{type: posix, root: {r}}}\n"),
                "catalogue.commit (type 'posix'): unknown variant `later`, expected one of `auto`, `embedded`, `ordered`",
            ),
            (
                format!("catalogue: {{type: posix, root: {r}}}\nstore: {{type: posix, root: {r}, commit: auto}}\n"),
                "store.commit (type 'posix'): unknown field",
            ),
        ] {
            let err = opened(&yaml).unwrap_err();
            assert!(err.contains("t.yaml") && err.contains(expected), "{yaml}: {err}");
        }
    }
}
