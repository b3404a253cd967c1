//! The POSIX catalogue: a directory per dataset holding its key, its schema, the shared TOC,
//! lock files, and each writer's index files (see [`crate::toc`] and `docs/posix-layout.md`).
//!
//! A dataset exists once its `key` file exists. Creation is race-free: `mkdir` may race
//! harmlessly; `schema`, the TOC (holding only its identity record) and then `key` are
//! written to private temporary files and published with `link`, which fails if another
//! process got there first.
//!
//! How a flush is made durable is the [`CommitMode`]: in FDB5's order (index segments synced,
//! then TOC records appended and synced), or with the records and segments embedded in the
//! store's sync of the data (one device flush per flush instead of three) and recovered from
//! the store after a crash (`docs/consistency.md`).
//!
//! Its parts: `create` makes a data set's directory and reads its key and schema back,
//! `writer` archives and flushes, `recovery` publishes again what a crash lost, `view` reads,
//! `files` says what the catalogue keeps; this module holds the shared side.

mod create;
mod files;
mod recovery;
mod view;
mod writer;

use std::collections::{BTreeSet, HashMap};
use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use fieldstore_core::backend::{CatalogueFiles, CatalogueRecovery, Roots};
use fieldstore_core::error::{Error, ErrorKind, IoContext, Result};
use fieldstore_core::recent::RecentList;
use fieldstore_core::unique::unique_suffix;
use fieldstore_core::{Catalogue, CatalogueWriter, ControlAction, DatasetView, Key};

pub use writer::PosixCatalogueWriter;

use crate::config::CommitSetting;
use crate::naming::dataset_dir_name;
use crate::placement::Placement;
use crate::writers::{boot_id, on_local_file_system};
use create::{read_key, read_schema, sync_dir};
use view::PosixView;

const KEY_FILE: &str = "key";
const SCHEMA_FILE: &str = "schema";
const TOC_FILE: &str = "toc";

/// How a writer makes a flush's index records durable.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CommitMode {
    /// FDB5's order: after the store's sync, the index segments are synced, then the TOC
    /// records appended and synced (three device flushes per flush on a local disk).
    Ordered,
    /// The records and segments go into the store's data sync as a commit; the TOC records
    /// are appended without a sync, and a marker lets the next opener on this host recover
    /// them from the store if the host crashed first (one device flush per flush). Falls
    /// back to `Ordered` for a dataset whose store cannot embed commits.
    Embedded,
}

impl CommitMode {
    /// `Embedded` where a crash can be detected (a boot id) and everyone using the root is
    /// on this host (a local file system); `Ordered` elsewhere (Lustre, GPFS, NFS, ...), where
    /// a crashed host's lost records could only be recovered from that host.
    pub fn for_root(root: &Path) -> CommitMode {
        if boot_id().is_some() && on_local_file_system(root) {
            CommitMode::Embedded
        } else {
            CommitMode::Ordered
        }
    }

    /// The mode's name in the config.
    pub fn name(self) -> &'static str {
        match self {
            CommitMode::Ordered => "ordered",
            CommitMode::Embedded => "embedded",
        }
    }
}

/// The catalogue's shared side: listing, views, locks, wipes, recovery.
pub struct PosixCatalogue {
    /// The roots, and which data set is in which.
    placement: Arc<Placement>,
    /// How a flush is made durable: by each root's file system, or as configured.
    commit: CommitSetting,
    /// Dataset keys by directory name, so each `key` file is read once per handle. (Only a
    /// dataset wiped and re-created under another key whose escaped values are the same
    /// would be misnamed, until the handle is reopened.)
    known: Mutex<HashMap<std::ffi::OsString, Key>>,
}

impl PosixCatalogue {
    /// A catalogue under `root` committing in [`CommitMode::for_root`]'s mode; the root is made
    /// by the first archive if it is not there (the caller named it; a config's roots are
    /// made only with `create: true`).
    pub fn new(root: impl Into<PathBuf>) -> Self {
        PosixCatalogue::with_placement(Placement::one_root(root.into()).creating_roots(true), CommitSetting::Auto)
    }

    /// A catalogue under `root` committing in `commit_mode`, whatever the root's file system;
    /// the root is made by the first archive if it is not there.
    pub fn with_commit_mode(root: impl Into<PathBuf>, commit_mode: CommitMode) -> Self {
        let commit = match commit_mode {
            CommitMode::Embedded => CommitSetting::Embedded,
            CommitMode::Ordered => CommitSetting::Ordered,
        };
        PosixCatalogue::with_placement(Placement::one_root(root.into()).creating_roots(true), commit)
    }

    /// A catalogue over the roots of `placement`, committing as `commit` says.
    pub fn with_placement(placement: Placement, commit: CommitSetting) -> Self {
        PosixCatalogue { placement: Arc::new(placement), commit, known: Mutex::new(HashMap::new()) }
    }

    /// An existing data set's directory, if it is in a root.
    fn dataset_dir(&self, dataset: &Key) -> Result<Option<PathBuf>> {
        self.placement.existing(dataset, &dataset_dir_name(dataset)?)
    }

    /// An existing data set's directory; an error naming it if it is in no root.
    fn existing_dir(&self, dataset: &Key) -> Result<PathBuf> {
        self.dataset_dir(dataset)?.ok_or_else(|| Error::new(ErrorKind::NotFound, format!("data set {dataset} is in no root")))
    }
}

impl Catalogue for PosixCatalogue {
    fn writer(&self) -> Result<Box<dyn CatalogueWriter>> {
        Ok(Box::new(PosixCatalogueWriter { placement: self.placement.clone(), commit: self.commit, writers: RecentList::default() }))
    }

    fn datasets(&self) -> Result<Vec<Key>> {
        let roots = self.placement.roots();
        let mut known = self.known.lock().unwrap_or_else(|p| p.into_inner());
        let mut out = Vec::new();
        // Over several roots, twice: a data set moving to a root looked at before the switch,
        // from one looked at after its source went, is found in neither by one pass, and in
        // its new root by a second begun after the first ended (crate::moving).
        let passes = if roots.len() > 1 { 2 } else { 1 };
        for root in (0..passes).flat_map(|_| &roots) {
            // Of several roots, one may be missing (FDB5 passes over it too).
            let names = match crate::listing::names(root, "read store root") {
                Err(e) if roots.len() > 1 && !root.exists() => {
                    drop(e);
                    continue;
                }
                names => names?,
            };
            for name in names {
                if name.to_string_lossy().starts_with('.') {
                    continue;
                }
                let path = root.join(&name);
                if let Some(key) = known.get(&name) {
                    out.push(key.clone());
                } else if path.join(KEY_FILE).exists() {
                    let key = match read_key(&path) {
                        // Moved to another root (or wiped) since it was seen.
                        Err(e) if e.kind() == ErrorKind::NotFound && !path.exists() => continue,
                        key => key?.key,
                    };
                    known.insert(name, key.clone());
                    out.push(key);
                }
            }
        }
        out.sort();
        // One data set in two roots is listed once; opening it says it is in both.
        out.dedup();
        Ok(out)
    }

    fn open(&self, dataset: &Key) -> Result<Option<Box<dyn DatasetView>>> {
        Ok(PosixView::open(&self.placement, dataset)?.map(|view| Box::new(view) as Box<dyn DatasetView>))
    }

    fn schema_text(&self, dataset: &Key) -> Result<Option<String>> {
        match self.dataset_dir(dataset)? {
            Some(dir) => read_schema(&dir),
            None => Ok(None),
        }
    }

    fn wipe_dataset(&self, dataset: &Key) -> Result<()> {
        let Some(dir) = self.dataset_dir(dataset)? else { return Ok(()) };
        let _held = crate::moving::hold_for_change(&dir, "wiping it")?;
        // Copies a killed move left in other roots go first: alone, one would be the data set.
        let name = dataset_dir_name(dataset)?;
        for copy in self.placement.moved_away_copies(dataset, &name)?.into_iter().filter(|c| *c != dir) {
            wipe_directory(&copy)?;
        }
        wipe_directory(&dir)
    }

    /// The lock files, and the actions the flags of the data set's root deny.
    fn locks(&self, dataset: &Key) -> Result<BTreeSet<ControlAction>> {
        let Some(dir) = self.dataset_dir(dataset)? else { return Ok(BTreeSet::new()) };
        let mut locks = self.placement.denied(dataset, &dir)?;
        locks.extend(ControlAction::ALL.into_iter().filter(|a| dir.join(lock_name(*a)).exists()));
        Ok(locks)
    }

    fn set_lock(&self, dataset: &Key, action: ControlAction, locked: bool) -> Result<()> {
        let dir = self.existing_dir(dataset)?;
        // A lock set while the data set is copied could be left behind with the source.
        crate::moving::refuse_if_moving(&dir, "locking or unlocking it")?;
        let path = dir.join(lock_name(action));
        if locked {
            File::create(&path).ctx("create lock", &path)?;
        } else if let Err(e) = std::fs::remove_file(&path) {
            if e.kind() != std::io::ErrorKind::NotFound {
                return Err(Error::io("remove lock", path, e));
            }
        }
        Ok(())
    }

    fn locations(&self, dataset: &Key) -> Result<Vec<String>> {
        let dir = self.dataset_dir(dataset)?.filter(|d| d.join(KEY_FILE).exists());
        Ok(dir.into_iter().map(|d| d.display().to_string()).collect())
    }

    fn describe(&self, dataset: &Key) -> String {
        match self.existing_dir(dataset) {
            Ok(dir) => format!("posix {} (commit: {})", dir.display(), self.commit.mode(dir.parent().unwrap_or(&dir)).name()),
            Err(e) => e.report().to_string(),
        }
    }

    fn root(&self) -> Option<&dyn Roots> {
        Some(self)
    }

    fn recovery(&self) -> Option<&dyn CatalogueRecovery> {
        Some(self)
    }

    fn own_files(&self) -> Option<&dyn CatalogueFiles> {
        Some(self)
    }
}

impl Roots for PosixCatalogue {
    fn check_exists(&self) -> Result<()> {
        self.placement.check_exists()
    }

    fn create_missing(&self) -> Result<Vec<String>> {
        self.placement.create_roots()
    }
}

/// Removes a data set's directory: renamed out of its name (one atomic step for readers),
/// made durable, then removed.
fn wipe_directory(dir: &Path) -> Result<()> {
    let root = dir.parent().unwrap_or(dir);
    let doomed = root.join(format!(".wiped.{}", unique_suffix()));
    match std::fs::rename(dir, &doomed) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        other => other.ctx("hide dataset directory", dir)?,
    }
    // Durable before anything in it goes: a power loss must not bring the data set back
    // with some of its files removed.
    sync_dir(root)?;
    std::fs::remove_dir_all(&doomed).ctx("remove wiped dataset", &doomed)
}

fn lock_name(action: ControlAction) -> String {
    format!("lock.{}", action.name())
}

#[cfg(test)]
mod tests {
    use fieldstore_core::{FieldStore, Request, Schema};

    use super::*;
    use crate::store::PosixStore;

    /// A store of one data set (class=od, expver=0001), its three fields archived by one writer
    /// in one flush into one collocation (type=an).
    fn store_of_one_data_set(root: &Path) -> FieldStore {
        let schema = Schema::parse("test", "[ class, expver [ type [ step ]]]").unwrap();
        let fs = FieldStore::new(schema, Box::new(PosixCatalogue::new(root)), Box::new(PosixStore::new(root)));
        for step in ["0", "6", "12"] {
            let id = Key::from_pairs([("class", "od"), ("expver", "0001"), ("type", "an"), ("step", step)]);
            fs.archive(&id, format!("field {step}").as_bytes()).unwrap();
        }
        fs.flush().unwrap();
        fs
    }

    #[test]
    fn stats_say_what_the_catalogue_keeps_as_fdb5_counts_it() {
        let root = tempfile::tempdir().unwrap();
        let fs = store_of_one_data_set(root.path());
        let dir = root.path().join("od:0001");
        let size = |name: &str| std::fs::metadata(dir.join(name)).unwrap().len();
        let named = |suffix: &str| {
            let names: Vec<String> =
                crate::listing::names(&dir, "test").unwrap().into_iter().filter_map(|n| n.into_string().ok()).collect();
            names.into_iter().filter(|n| n.ends_with(suffix)).collect::<Vec<_>>()
        };
        let (index_files, data_files) = (named(".index"), named(".data"));
        assert_eq!((index_files.len(), data_files.len()), (1, 1));
        let usage = fs.stats(&Request::parse("class=od,expver=0001").unwrap()).unwrap().catalogue.expect("POSIX says what it keeps");
        // Its identity record and the flush's one index record, as FDB5's TOC_INIT and TOC_INDEX.
        assert_eq!(usage.records, Some(2));
        assert_eq!(usage.record_bytes, Some(size("toc")));
        assert_eq!(usage.schema_bytes, Some(size("schema")));
        assert_eq!((usage.index_files, usage.index_bytes), (Some(1), Some(size(&index_files[0]))));
        assert_eq!((usage.data_files, usage.data_bytes), (Some(1), Some(size(&data_files[0]))));
        // A lock adds a file but no record; two data sets sum.
        fs.control(&Request::parse("class=od,expver=0001").unwrap(), &[ControlAction::Archive], Some(true)).unwrap();
        let id = Key::from_pairs([("class", "od"), ("expver", "0002"), ("type", "an"), ("step", "0")]);
        fs.archive(&id, b"field").unwrap();
        fs.flush().unwrap();
        let both = fs.stats(&Request::parse("class=od").unwrap()).unwrap().catalogue.unwrap();
        assert_eq!((both.records, both.index_files, both.data_files), (Some(4), Some(2), Some(2)));
    }

    #[test]
    fn a_wipe_names_the_catalogue_files_it_removes_dry_run_or_done() {
        let root = tempfile::tempdir().unwrap();
        let fs = store_of_one_data_set(root.path());
        let request = Request::parse("class=od,expver=0001").unwrap();
        fs.control(&request, &[ControlAction::Retrieve], Some(true)).unwrap();
        let dry = fs.wipe(&request, false).unwrap();
        assert_eq!(dry.catalogue_files, ["od:0001/key", "od:0001/schema", "od:0001/toc"]);
        assert_eq!(dry.control_files, ["od:0001/lock.retrieve"]);
        assert_eq!(dry.catalogue_removed.len(), 1);
        assert!(dry.catalogue_removed[0].starts_with("od:0001/") && dry.catalogue_removed[0].ends_with(".index"));
        assert_eq!(dry.removed.len(), 1, "the data file, named by the store");
        assert!(root.path().join(&dry.catalogue_removed[0]).exists(), "a dry run removes nothing");
        fs.control(&request, &[ControlAction::Retrieve], Some(false)).unwrap();
        let done = fs.wipe(&request, true).unwrap();
        assert_eq!(done.catalogue_files, dry.catalogue_files);
        assert_eq!((done.control_files.len(), &done.catalogue_removed, &done.removed), (0, &dry.catalogue_removed, &dry.removed));
        assert!(!root.path().join("od:0001").exists());
    }
}
