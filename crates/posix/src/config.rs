//! The `type: posix` sections of a config, and the backend's [`FACTORY`].
//!
//! ```yaml
//! catalogue: { type: posix, root: /data/fieldstore, commit: auto }   # commit: optional
//! store:     { type: posix, root: /data/fieldstore }
//! ```

use std::path::PathBuf;

use serde::Deserialize;

use fieldstore_core::error::Result;
use fieldstore_core::factory::{Factory, Section};
use fieldstore_core::{Catalogue, Store};

use crate::{CommitMode, PosixCatalogue, PosixStore};

/// A POSIX catalogue's section.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PosixCatalogueConfig {
    /// The directory holding a directory per data set.
    pub root: PathBuf,
    /// How a flush is made durable.
    #[serde(default)]
    pub commit: CommitSetting,
}

/// A POSIX store's section.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PosixStoreConfig {
    /// The directory holding a directory of data files per data set.
    pub root: PathBuf,
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

/// The POSIX catalogue and store, for the facade's list of backends.
pub const FACTORY: Factory = Factory { name: "posix", catalogue: Some(open_catalogue), store: Some(open_store) };

fn open_catalogue(section: &Section<'_>) -> Result<Box<dyn Catalogue>> {
    let config: PosixCatalogueConfig = section.typed()?;
    let root = checked_root(section, config.root)?;
    let mode = config.commit.mode(&root);
    Ok(Box::new(PosixCatalogue::with_commit_mode(root, mode)))
}

fn open_store(section: &Section<'_>) -> Result<Box<dyn Store>> {
    let config: PosixStoreConfig = section.typed()?;
    Ok(Box::new(PosixStore::new(checked_root(section, config.root)?)))
}

/// An empty root would be the working directory, whichever it is: refused.
fn checked_root(section: &Section<'_>, root: PathBuf) -> Result<PathBuf> {
    if root.as_os_str().is_empty() {
        return Err(section.error(format!("{}.root must not be empty", section.name)));
    }
    Ok(root)
}

#[cfg(test)]
mod tests {
    use super::*;
    use fieldstore_core::config::Config;

    fn opened(yaml: &str) -> std::result::Result<(), String> {
        let config = Config::parse("t.yaml", yaml).map_err(|e| e.to_string())?;
        let catalogue = Section { name: "catalogue", config: &config.catalogue, source: "t.yaml" };
        let store = Section { name: "store", config: &config.store, source: "t.yaml" };
        open_catalogue(&catalogue).and(open_store(&store)).map(drop).map_err(|e| e.to_string())
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
