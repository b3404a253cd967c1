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

use std::collections::{BTreeSet, HashMap};
use std::fs::{File, OpenOptions};
use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use fieldstore_core::backend::{CatalogueFiles, CatalogueRecovery, CatalogueRoot, CatalogueUsage, DatasetFiles};
use fieldstore_core::checksum::crc32c;
use fieldstore_core::error::{Error, ErrorKind, IoContext, Result};
use fieldstore_core::indexing::PendingIndexes;
use fieldstore_core::recent::RecentList;
use fieldstore_core::unique::unique_suffix;
use fieldstore_core::{Catalogue, CatalogueWriter, Commit, ControlAction, DatasetView, FieldLocation, IndexInfo, Key};

use crate::config::CommitSetting;
use crate::naming::{collocation_name, dataset_dir_name};
use crate::placement::Placement;
use crate::toc::{
    decode_commit, encode_commit, encode_segment, flush_frame, identity_frame, index_record, mask_frame, read_place, record_place,
    recovered_frame, Segment, SegmentPlace, SegmentSource, TocReader,
};
use crate::writers::{boot_id, on_local_file_system, Marker, Sharing};

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

/// One writer: the datasets it writes to, each with its own index files and marker.
pub struct PosixCatalogueWriter {
    placement: Arc<Placement>,
    commit: CommitSetting,
    writers: RecentList<DatasetWriter>,
}

/// What one writer has archived into one dataset since its last flush.
struct DatasetWriter {
    dataset: Key,
    dir: PathBuf,
    toc: File,
    /// Present while TOC records or segments this writer appended may not be durable
    /// (embedded commits): removed at close once they are.
    marker: Option<Marker>,
    /// Index records or segments were written without a sync.
    unsynced: bool,
    /// Some of them are in index files closed after a failed write: they cannot be synced at
    /// close, so the marker must stay.
    unsynced_file_closed: bool,
    /// Entries archived since the last flush, by collocation and element keywords.
    pending: PendingIndexes,
    /// This writer's index file per collocation key: (file, name, size).
    index_files: HashMap<Key, (File, String, u64)>,
    /// The pending entries' segments once written ahead of the flush; any later archive
    /// drops them (their bytes stay in the index files, unreferenced).
    staged: Option<StagedSegments>,
    /// The data set was wiped under this writer: it is dropped at the next discard, so the
    /// next archive creates the data set again.
    wiped: bool,
    /// An index file was created since the directory was last synced: its name would not
    /// survive a power loss.
    names_unsynced: bool,
}

/// Index segments written but not yet synced nor published.
struct StagedSegments {
    /// The TOC records that will publish them, encoded.
    records: Vec<u8>,
    /// The collocations whose index files hold them.
    touched: BTreeSet<Key>,
    /// The commit the store may embed: the records and segments again (empty if `Ordered`).
    commit: Vec<u8>,
}

impl PosixCatalogue {
    /// A catalogue under `root` committing in [`CommitMode::for_root`]'s mode.
    pub fn new(root: impl Into<PathBuf>) -> Self {
        PosixCatalogue::with_placement(Placement::one_root(root.into()), CommitSetting::Auto)
    }

    /// A catalogue under `root` committing in `commit_mode`, whatever the root's file system.
    pub fn with_commit_mode(root: impl Into<PathBuf>, commit_mode: CommitMode) -> Self {
        let commit = match commit_mode {
            CommitMode::Embedded => CommitSetting::Embedded,
            CommitMode::Ordered => CommitSetting::Ordered,
        };
        PosixCatalogue::with_placement(Placement::one_root(root.into()), commit)
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

/// Who may have written a data set directory's writer markers (judged from its file system).
fn sharing(dir: &Path) -> Sharing {
    if on_local_file_system(dir.parent().unwrap_or(dir)) {
        Sharing::ThisMachine
    } else {
        Sharing::Hosts
    }
}

impl PosixCatalogueWriter {
    fn dataset_writer(&mut self, dataset: &Key, schema_text: &str) -> Result<&mut DatasetWriter> {
        let i = match self.writers.find(|w| w.dataset == *dataset) {
            Some(i) => i,
            None => {
                let dir = self.placement.for_archive(dataset, &dataset_dir_name(dataset)?)?;
                create_dataset(&dir, dataset, schema_text)?;
                let toc_path = dir.join(TOC_FILE);
                let toc = OpenOptions::new().append(true).create(true).mode(0o666).open(&toc_path).ctx("open TOC", &toc_path)?;
                let mode = self.commit.mode(dir.parent().unwrap_or(&dir));
                let marker = match (mode, boot_id()) {
                    (CommitMode::Embedded, Some(_)) => Some(Marker::create(&dir)?),
                    _ => None,
                };
                let dataset = dataset.clone();
                self.writers.push(DatasetWriter {
                    dataset,
                    dir,
                    toc,
                    marker,
                    unsynced: false,
                    unsynced_file_closed: false,
                    names_unsynced: false,
                    pending: PendingIndexes::default(),
                    index_files: HashMap::new(),
                    staged: None,
                    wiped: false,
                })
            }
        };
        Ok(&mut self.writers[i])
    }
}

/// Creates a dataset directory with its schema and key, or checks an existing one.
fn create_dataset(dir: &Path, dataset: &Key, schema_text: &str) -> Result<()> {
    let key_path = dir.join(KEY_FILE);
    if !key_path.exists() {
        crate::listing::create_dir_durably(dir)?;
        crate::toc::refuse_foreign(dir)?;
        publish(dir, SCHEMA_FILE, schema_text.as_bytes())?;
        publish(dir, TOC_FILE, &identity_frame(&unique_suffix()))?;
        // The key file says the data set is whole: after a power loss it is there only if the
        // schema and TOC are.
        sync_dir(dir)?;
        publish(dir, KEY_FILE, key_file_text(dataset, schema_text).as_bytes())?;
    }
    // The key and the directory's own name durable, before this writer's first flush can
    // return. Also when the key was there: another writer may have linked it and not yet
    // synced it (a writer opens a data set once per handle, so this costs two syncs each).
    sync_dir(dir)?;
    if let Some(parent) = dir.parent() {
        sync_dir(parent)?;
    }
    let stored = read_key(dir)?.key;
    if stored != *dataset {
        return Err(Error::new(ErrorKind::Corrupt, format!("directory {} holds data set {stored}, not {dataset}", dir.display())));
    }
    Ok(())
}

/// Makes the entries of a directory durable (created, renamed and removed names).
fn sync_dir(dir: &Path) -> Result<()> {
    File::open(dir).and_then(|d| d.sync_all()).ctx("sync directory", dir)
}

/// Writes `name` durably unless it exists: temp file, fsync, then `link` (atomic, no clobber).
fn publish(dir: &Path, name: &str, contents: &[u8]) -> Result<()> {
    let tmp = dir.join(format!(".{name}.{}", unique_suffix()));
    let mut f = OpenOptions::new().write(true).create_new(true).mode(0o666).open(&tmp).ctx("create", &tmp)?;
    f.write_all(contents).and_then(|_| f.sync_all()).ctx("write", &tmp)?;
    let result = std::fs::hard_link(&tmp, dir.join(name));
    let _ = std::fs::remove_file(&tmp);
    match result {
        Err(e) if e.kind() != std::io::ErrorKind::AlreadyExists => Err(Error::io("publish", dir.join(name), e)),
        _ => Ok(()),
    }
}

/// The version of the layout of a data set's files (key, schema, TOC, index files and the
/// commits in data files), the first line of its key file. A reader refuses a data set of
/// another version, by name, rather than misread it.
pub const LAYOUT_FORMAT: u32 = 1;

/// What a dataset's `key` file holds: `format=N` (the layout's version), the dataset key, the
/// CRC-32C of the schema file, and a CRC-32C of the lines before it, so that damage to either
/// file is found, not read as another dataset or another schema. Every version keeps the
/// first line and the last (the checksum of the rest), so any reader tells a data set of
/// another version from a damaged one.
fn key_file_text(dataset: &Key, schema_text: &str) -> String {
    let body = format!("format={LAYOUT_FORMAT}\n{dataset}\nschema-crc32c={:08x}\n", crc32c(schema_text.as_bytes()));
    format!("{body}crc32c={:08x}\n", crc32c(body.as_bytes()))
}

/// A dataset's key file, read and checked.
struct KeyFile {
    key: Key,
    /// The schema file's CRC-32C.
    schema_crc: u32,
}

/// A data set directory's schema, checked against its key file; `None` if the data set is not
/// whole (no key file).
fn read_schema(dir: &Path) -> Result<Option<String>> {
    if !dir.join(KEY_FILE).exists() {
        return Ok(None);
    }
    let schema_path = dir.join(SCHEMA_FILE);
    let schema_text = std::fs::read_to_string(&schema_path).ctx("read dataset schema", &schema_path)?;
    if crc32c(schema_text.as_bytes()) != read_key(dir)?.schema_crc {
        return Err(Error::corrupt("dataset schema", &schema_path, "its checksum does not match the one its key file records"));
    }
    Ok(Some(schema_text))
}

/// Reads and checks a dataset directory's key file: its checksum, its format, and that the
/// key names this directory (the directory's name is made from the key's values).
fn read_key(dir: &Path) -> Result<KeyFile> {
    let path = dir.join(KEY_FILE);
    let text = std::fs::read_to_string(&path).ctx("read dataset key", &path)?;
    let damaged = |reason: String| Error::corrupt("dataset key", &path, reason);
    let hex = |line: &str, prefix: &str| line.strip_prefix(prefix).and_then(|h| u32::from_str_radix(h, 16).ok());
    let lines: Vec<&str> = text.lines().collect();
    let Some((sum, body_lines)) = lines.split_last() else { return Err(damaged("it is empty".into())) };
    let body_end = text.len() - sum.len() - 1;
    if hex(sum, "crc32c=") != Some(crc32c(&text.as_bytes()[..body_end])) {
        return Err(damaged("its checksum does not match its contents".into()));
    }
    let format = body_lines.first().and_then(|line| line.strip_prefix("format="));
    if format != Some(LAYOUT_FORMAT.to_string().as_str()) {
        return Err(Error::new(
            ErrorKind::Unsupported,
            format!(
                "data set {}: its files are in layout format {}; this fieldstore ({}) reads format {LAYOUT_FORMAT} (docs/posix-layout.md)",
                dir.display(),
                format.unwrap_or("(none)"),
                env!("CARGO_PKG_VERSION")
            ),
        ));
    }
    let [_, key, schema] = body_lines else {
        return Err(damaged(format!("{} lines, where a key file of format {LAYOUT_FORMAT} has 4", lines.len())));
    };
    let schema_crc = hex(schema, "schema-crc32c=").ok_or_else(|| damaged(format!("line 3 is {schema:?}")))?;
    let key_file =
        KeyFile { key: Key::parse(key).map_err(|e| Error::corrupt_because("dataset key", &path, "line 2 is no key", e))?, schema_crc };
    let expected = dataset_dir_name(&key_file.key)?;
    if dir.file_name() != Some(std::ffi::OsStr::new(&expected)) {
        return Err(damaged(format!("it names data set {}, whose directory is {expected}", key_file.key)));
    }
    Ok(key_file)
}

impl DatasetWriter {
    /// Writes the pending index segments without syncing or publishing them (readers cannot
    /// reach a segment before its TOC record), so their write-back can share the store's
    /// sync. Does nothing if they are already staged.
    fn stage(&mut self) -> Result<()> {
        if self.staged.is_some() || self.pending.is_empty() {
            return Ok(());
        }
        let pending = std::mem::take(&mut self.pending);
        let result = self.write_segments(&pending);
        self.pending = pending;
        match result {
            Ok(staged) => {
                self.staged = Some(staged);
                Ok(())
            }
            Err(e) => Err(self.forget_index_files(e)),
        }
    }

    /// Stages the pending segments if needed, then publishes them: the TOC records appended
    /// in one write, after which readers see all of them. Unless the store made the commit
    /// durable (`embedded`), the segments are synced first and the TOC after.
    fn flush(&mut self, embedded: bool) -> Result<()> {
        if self.pending.is_empty() {
            return Ok(());
        }
        self.stage()?;
        let staged = self.staged.take().expect("staged above");
        match self.publish(&staged, embedded) {
            Ok(()) => {
                self.pending.clear();
                Ok(())
            }
            Err(e) => Err(self.forget_index_files(e)),
        }
    }

    /// A partly written index file has an unknown size: later segments go to new files, and
    /// the pending entries stay for the next flush.
    fn forget_index_files(&mut self, cause: Error) -> Error {
        self.unsynced_file_closed |= self.unsynced;
        self.index_files.clear();
        cause
    }

    fn write_segments(&mut self, pending: &PendingIndexes) -> Result<StagedSegments> {
        // The claim orders these records after every flush that returned before this one
        // began (crate::toc): the TOC's size now.
        let toc_path = self.dir.join(TOC_FILE);
        let claim = self.toc.metadata().ctx("stat TOC", &toc_path)?.len();
        let mut records = Vec::new();
        let mut touched = BTreeSet::new();
        let mut commit = Vec::new();
        for index in pending.iter() {
            let segment = encode_segment(&index.entries);
            let dir = self.dir.clone();
            let (file, name, size) = self.index_file(&index.collocation)?;
            file.write_all(&segment).ctx("write index file", dir.join(name.as_str()))?;
            let place = SegmentPlace { file: name.clone(), offset: *size, length: segment.len() as u64 };
            *size += segment.len() as u64;
            touched.insert(index.collocation.clone());
            let record = index_record(claim, &place, index);
            if self.marker.is_some() {
                commit.push((record.clone(), segment));
            }
            records.push(record);
        }
        // Started write-back shares the store's sync only when the segments are synced at
        // flush (Ordered). Embedded, they need no sync: their blocks, allocated now, would
        // join the journal commit of the data's sync and make it wait for them.
        if self.marker.is_none() {
            for collocation in &touched {
                let (file, _, _) = &self.index_files[collocation];
                crate::write_back::start(file);
            }
        }
        let commit = match &self.marker {
            Some(marker) if !commit.is_empty() => encode_commit(marker.name(), &commit),
            _ => Vec::new(),
        };
        let records = flush_frame(&records);
        Ok(StagedSegments { records, touched, commit })
    }

    /// Appends the staged records to the TOC. Unless the store embedded the commit (whose
    /// recovery brings back a lost index file's segments), the index files are synced first,
    /// and the directory if one of them is new, so the TOC never names what a power loss
    /// could take.
    fn publish(&mut self, staged: &StagedSegments, embedded: bool) -> Result<()> {
        if !embedded {
            for collocation in &staged.touched {
                let (file, name, _) = &self.index_files[collocation];
                file.sync_data().ctx("sync index file", self.dir.join(name))?;
            }
            if self.names_unsynced {
                sync_dir(&self.dir)?;
                self.names_unsynced = false;
            }
        }
        let toc_path = self.dir.join(TOC_FILE);
        self.toc.write_all(&staged.records).ctx("append to TOC", &toc_path)?;
        if embedded {
            self.unsynced = true;
        } else {
            self.toc.sync_data().ctx("sync TOC", &toc_path)?;
        }
        // A wipe hides a data set by renaming its directory: records appended to a TOC that
        // is no longer at its path were wiped with it, and this flush must not say otherwise.
        if !self.toc_in_place()? {
            self.wiped = true;
            return Err(Error::Wiped { dataset: self.dataset.to_string() });
        }
        Ok(())
    }

    /// Whether the TOC this writer appends to is still the one at the data set's path.
    fn toc_in_place(&self) -> Result<bool> {
        crate::listing::still_at(&self.toc, &self.dir.join(TOC_FILE))
    }

    fn index_file(&mut self, collocation: &Key) -> Result<(&mut File, &String, &mut u64)> {
        if !self.index_files.contains_key(collocation) {
            let name = format!("{}.{}.index", collocation_name(collocation)?, unique_suffix());
            let path = self.dir.join(&name);
            let file = OpenOptions::new().append(true).create_new(true).mode(0o666).open(&path).ctx("create index file", &path)?;
            crate::in_use::hold(&file);
            self.index_files.insert(collocation.clone(), (file, name, 0));
            self.names_unsynced = true;
        }
        let (f, n, s) = self.index_files.get_mut(collocation).expect("inserted above");
        Ok((f, n, s))
    }

    /// Makes what this writer published without syncing durable: its index files and the
    /// TOC. False if that cannot be known (an index file was closed after a failed write).
    fn sync_published(&mut self) -> bool {
        if !self.unsynced {
            return true;
        }
        // The names of new index files too: without the marker, nothing would recover them.
        let synced = !self.unsynced_file_closed
            && self.index_files.values().all(|(f, _, _)| f.sync_data().is_ok())
            && (!self.names_unsynced || sync_dir(&self.dir).is_ok())
            && self.toc.sync_data().is_ok();
        self.names_unsynced &= !synced;
        self.unsynced = !synced;
        synced
    }
}

impl Drop for DatasetWriter {
    /// Closing: once everything published is durable the marker goes, and with it any need
    /// to check this writer's records after a crash. Otherwise the marker stays, and the
    /// next opener on this host checks them against the store's commits.
    fn drop(&mut self) {
        if let Some(marker) = self.marker.take() {
            if self.sync_published() {
                marker.remove();
            }
        }
    }
}

impl CatalogueWriter for PosixCatalogueWriter {
    fn archive(&mut self, dataset: &Key, schema_text: &str, collocation: &Key, element: &Key, location: FieldLocation) -> Result<()> {
        let writer = self.dataset_writer(dataset, schema_text)?;
        writer.staged = None;
        writer.pending.insert(collocation, element, location);
        Ok(())
    }

    fn prepare_flush(&mut self) -> Result<Vec<Commit>> {
        let mut commits = Vec::new();
        for writer in &mut self.writers {
            writer.stage()?;
            if let Some(staged) = writer.staged.as_ref().filter(|s| !s.commit.is_empty()) {
                commits.push(Commit { dataset: writer.dataset.clone(), bytes: staged.commit.clone() });
            }
        }
        Ok(commits)
    }

    fn flush(&mut self, embedded: &[Key]) -> Result<()> {
        for writer in &mut self.writers {
            let in_store = embedded.contains(&writer.dataset);
            writer.flush(in_store)?;
        }
        Ok(())
    }

    fn discard(&mut self) {
        for writer in &mut self.writers {
            writer.pending.clear();
            writer.staged = None;
        }
        // A writer whose data set was wiped (found here or by the store) is dropped, so the
        // next archive creates the data set again.
        self.writers.retain(|w| !w.wiped && w.toc_in_place().unwrap_or(false));
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
        for root in &roots {
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
                    let key = read_key(&path)?.key;
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
        let root = dir.parent().unwrap_or(&dir);
        let doomed = root.join(format!(".wiped.{}", unique_suffix()));
        match std::fs::rename(&dir, &doomed) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
            other => other.ctx("hide dataset directory", &dir)?,
        }
        // Durable before anything in it goes: a power loss must not bring the data set back
        // with some of its files removed.
        sync_dir(root)?;
        std::fs::remove_dir_all(&doomed).ctx("remove wiped dataset", &doomed)
    }

    /// The lock files, and the actions the flags of the data set's root deny.
    fn locks(&self, dataset: &Key) -> Result<BTreeSet<ControlAction>> {
        let Some(dir) = self.dataset_dir(dataset)? else { return Ok(BTreeSet::new()) };
        let mut locks = self.placement.denied(dataset, &dir)?;
        locks.extend(ControlAction::ALL.into_iter().filter(|a| dir.join(lock_name(*a)).exists()));
        Ok(locks)
    }

    fn set_lock(&self, dataset: &Key, action: ControlAction, locked: bool) -> Result<()> {
        let path = self.existing_dir(dataset)?.join(lock_name(action));
        if locked {
            File::create(&path).ctx("create lock", &path)?;
        } else if let Err(e) = std::fs::remove_file(&path) {
            if e.kind() != std::io::ErrorKind::NotFound {
                return Err(Error::io("remove lock", path, e));
            }
        }
        Ok(())
    }

    fn describe(&self, dataset: &Key) -> String {
        match self.existing_dir(dataset) {
            Ok(dir) => format!("posix {} (commit: {})", dir.display(), self.commit.mode(dir.parent().unwrap_or(&dir)).name()),
            Err(e) => e.report().to_string(),
        }
    }

    fn root(&self) -> Option<&dyn CatalogueRoot> {
        Some(self)
    }

    fn recovery(&self) -> Option<&dyn CatalogueRecovery> {
        Some(self)
    }

    fn own_files(&self) -> Option<&dyn CatalogueFiles> {
        Some(self)
    }
}

impl CatalogueRoot for PosixCatalogue {
    /// Every root is there; of several, one is enough (FDB5 passes over missing roots).
    fn check_exists(&self) -> Result<()> {
        let roots = self.placement.roots();
        let mut first_error = None;
        for root in &roots {
            match std::fs::metadata(root) {
                Ok(_) if roots.len() > 1 => return Ok(()),
                Ok(_) => {}
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                    first_error = first_error.or(Some(Error::io("find a store at", root, e)))
                }
                Err(e) => return Err(Error::io("find a store at", root, e)),
            }
        }
        first_error.map_or(Ok(()), Err)
    }
}

impl CatalogueRecovery for PosixCatalogue {
    fn sessions_to_recover(&self, dataset: &Key) -> Result<Vec<String>> {
        match self.dataset_dir(dataset)? {
            Some(dir) => crate::writers::ended_without_closing(&dir, sharing(&dir)),
            None => Ok(Vec::new()),
        }
    }

    /// Each index of the session's commits whose record the TOC lacks, or whose segment in
    /// its index file is not the committed one, is appended again as a recovered record
    /// (segment inline, original claim); the intact ones' index files are synced, then the
    /// TOC, and the session's markers removed. Running it twice appends nothing new that
    /// readers would see twice: a record's index id is read once. Only commits of a marker
    /// still here count: the session's others are of writers that closed (their records are
    /// durable) or wrote into an earlier incarnation of the data set, since wiped.
    fn recover(&self, dataset: &Key, session: &str, commits: &[Vec<u8>], whole: &dyn Fn(&FieldLocation) -> Result<bool>) -> Result<()> {
        let dir = self.existing_dir(dataset)?;
        let markers = crate::writers::markers_of(&dir, session)?;
        let toc_path = dir.join(TOC_FILE);
        let mut toc = TocReader::new(toc_path.clone());
        toc.refresh()?;
        let undecodable = || Error::corrupt("embedded commit", dir.join(session), "its records do not decode".to_string());
        let mut lost = Vec::new();
        let mut intact_files = BTreeSet::new();
        for commit in commits {
            let (marker, parts) = decode_commit(commit).ok_or_else(undecodable)?;
            if !markers.iter().any(|m| m == marker) {
                continue;
            }
            let mut commit_lost = Vec::new();
            let mut commit_files = Vec::new();
            for (record, segment) in parts {
                let place = record_place(record).ok_or_else(undecodable)?;
                match toc.source(&place.id()) {
                    Some(SegmentSource::Inline(_)) => {}
                    Some(SegmentSource::File(p)) if read_place(&dir, p).is_ok_and(|bytes| bytes == segment) => {
                        commit_files.push(dir.join(&p.file));
                    }
                    _ => commit_lost.push((record, segment)),
                }
            }
            // A commit whose data is not whole: its flush never returned (so its writer began
            // none after it), and it is passed over alone; commits come file by file, not in
            // the order they were made.
            if !all_whole(&commit_lost, whole, undecodable)? {
                continue;
            }
            intact_files.extend(commit_files);
            for (record, segment) in commit_lost {
                lost.extend_from_slice(&recovered_frame(record, segment));
            }
        }
        for path in intact_files {
            File::open(&path).and_then(|f| f.sync_data()).ctx("sync index file", &path)?;
        }
        let mut toc_file = OpenOptions::new().append(true).open(&toc_path).ctx("open TOC", &toc_path)?;
        toc_file.write_all(&lost).and_then(|_| toc_file.sync_data()).ctx("append recovered records to TOC", &toc_path)?;
        crate::writers::forget(&dir, session)
    }
}

/// What a file of a data set directory is, by its name.
#[derive(Clone, Copy, PartialEq, Eq)]
enum DirEntry {
    Key,
    Schema,
    Toc,
    Lock,
    Index,
    /// A store's data file (the store shares the catalogue's root).
    Data,
    /// Anything else: the writers' markers (a directory of their own, there only while a
    /// writer runs or until recovery, and no file of FDB5's), temporary files.
    Other,
}

/// The entries of a data set directory, each with what it is.
fn dir_entries(dir: &Path) -> Result<Vec<(String, DirEntry)>> {
    let mut entries: Vec<(String, DirEntry)> = crate::listing::names(dir, "read dataset directory")?
        .into_iter()
        .filter_map(|name| name.into_string().ok())
        .map(|name| {
            let kind = match name.as_str() {
                KEY_FILE => DirEntry::Key,
                SCHEMA_FILE => DirEntry::Schema,
                TOC_FILE => DirEntry::Toc,
                n if ControlAction::ALL.iter().any(|a| lock_name(*a) == n) => DirEntry::Lock,
                n if n.ends_with(".index") => DirEntry::Index,
                n if n.ends_with(".data") => DirEntry::Data,
                _ => DirEntry::Other,
            };
            (name, kind)
        })
        .collect();
    entries.sort_by(|a, b| a.0.cmp(&b.0));
    Ok(entries)
}

impl CatalogueFiles for PosixCatalogue {
    /// The TOC's records, then the sizes of the directory's files as they are now: a writer
    /// appending meanwhile makes them a moment's picture, as FDB5's are.
    fn usage(&self, dataset: &Key) -> Result<Option<CatalogueUsage>> {
        let Some(dir) = self.dataset_dir(dataset)? else { return Ok(None) };
        let mut toc = TocReader::new(dir.join(TOC_FILE));
        toc.refresh()?;
        if toc.missing {
            // Wiped since it was found.
            return Ok(None);
        }
        let (mut toc_bytes, mut schema_bytes, mut index, mut data) = (0, 0, (0u64, 0u64), (0u64, 0u64));
        for (name, kind) in dir_entries(&dir)? {
            let path = dir.join(&name);
            let size = match std::fs::metadata(&path) {
                Ok(m) => m.len(),
                // Removed since the listing (an index file a purge no longer needed).
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
                Err(e) => return Err(Error::io("stat", path, e)),
            };
            match kind {
                DirEntry::Toc => toc_bytes = size,
                DirEntry::Schema => schema_bytes = size,
                DirEntry::Index => index = (index.0 + 1, index.1.saturating_add(size)),
                DirEntry::Data => data = (data.0 + 1, data.1.saturating_add(size)),
                DirEntry::Key | DirEntry::Lock | DirEntry::Other => {}
            }
        }
        Ok(Some(CatalogueUsage {
            records: Some(toc.records),
            record_bytes: Some(toc_bytes),
            schema_bytes: Some(schema_bytes),
            index_files: Some(index.0),
            index_bytes: Some(index.1),
            data_files: Some(data.0),
            data_bytes: Some(data.1),
        }))
    }

    /// Named `DIR/FILE` relative to the root, as [`DatasetView::mask`] and the store's URIs
    /// name theirs; data files are the store's to name.
    fn files(&self, dataset: &Key) -> Result<DatasetFiles> {
        let Some(dir) = self.dataset_dir(dataset)? else { return Ok(DatasetFiles::default()) };
        let dir_name = dataset_dir_name(dataset)?;
        let mut files = DatasetFiles::default();
        for (name, kind) in dir_entries(&dir)? {
            let list = match kind {
                DirEntry::Key | DirEntry::Schema | DirEntry::Toc => &mut files.catalogue,
                DirEntry::Lock => &mut files.control,
                DirEntry::Index => &mut files.indexes,
                DirEntry::Data | DirEntry::Other => continue,
            };
            list.push(format!("{dir_name}/{name}"));
        }
        Ok(files)
    }
}

/// Whether every field that the segments of these commit parts name is whole.
fn all_whole(parts: &[(&[u8], &[u8])], whole: &dyn Fn(&FieldLocation) -> Result<bool>, undecodable: impl Fn() -> Error) -> Result<bool> {
    for (_, segment) in parts {
        let segment = Segment::from_frame(segment).map_err(|_| undecodable())?;
        for (_, location) in segment.entries() {
            if !whole(&location)? {
                return Ok(false);
            }
        }
    }
    Ok(true)
}

fn lock_name(action: ControlAction) -> String {
    format!("lock.{}", action.name())
}

/// A reader's view of one dataset directory.
struct PosixView {
    dataset: Key,
    /// Where the data set is found again when it was wiped and created anew (perhaps in
    /// another root) since the view was opened.
    placement: Arc<Placement>,
    dir: PathBuf,
    schema_text: String,
    toc: TocReader,
    segments: HashMap<String, Arc<Segment>>,
}

impl PosixView {
    /// A view of `dataset` where `placement` finds it; `None` if it is in no root.
    fn open(placement: &Arc<Placement>, dataset: &Key) -> Result<Option<PosixView>> {
        let Some(dir) = placement.existing(dataset, &dataset_dir_name(dataset)?)? else { return Ok(None) };
        let Some(schema_text) = read_schema(&dir)? else { return Ok(None) };
        let toc = TocReader::new(dir.join(TOC_FILE));
        Ok(Some(PosixView { dataset: dataset.clone(), placement: placement.clone(), dir, schema_text, toc, segments: HashMap::new() }))
    }

    /// After a wipe (the view's directory gone): the view of the data set created again
    /// since, in whichever root it now is, if there is one and it has the same schema (the
    /// caller parsed this view's).
    fn follow_a_new_data_set(&mut self) -> Result<()> {
        let Some(new) = PosixView::open(&self.placement, &self.dataset)? else { return Ok(()) };
        if new.dir == self.dir {
            return Ok(());
        }
        if new.schema_text != self.schema_text {
            return Err(Error::new(
                ErrorKind::Conflict,
                format!("data set {} was created again with another schema while this handle read it: open a new handle", self.dataset),
            ));
        }
        *self = new;
        self.toc.refresh()
    }

    fn segment(&mut self, index: &IndexInfo) -> Result<Arc<Segment>> {
        if let Some(s) = self.segments.get(&index.id) {
            return Ok(s.clone());
        }
        let segment = match self.toc.source(&index.id) {
            Some(SegmentSource::File(place)) => Arc::new(Segment::load(&self.dir, place)?),
            Some(SegmentSource::Inline(segment)) => segment.clone(),
            None => return Err(Error::new(ErrorKind::Corrupt, format!("unknown index {}", index.id))),
        };
        self.segments.insert(index.id.clone(), segment.clone());
        Ok(segment)
    }
}

impl DatasetView for PosixView {
    fn schema_text(&self) -> &str {
        &self.schema_text
    }

    fn indexes(&mut self) -> Result<Vec<Arc<IndexInfo>>> {
        self.toc.refresh()?;
        if self.toc.missing {
            // A wipe removes the whole directory; a TOC gone from beside its key file is damage
            // (checked again: the data set may have been created again meanwhile).
            if !self.dir.join(KEY_FILE).exists() {
                self.follow_a_new_data_set()?;
            } else if !self.dir.join(TOC_FILE).exists() {
                return Err(Error::corrupt("TOC", self.dir.join(TOC_FILE), "it is missing while the data set's key file is there"));
            }
        }
        Ok(self.toc.visible().cloned().collect())
    }

    fn lookup(&mut self, index: &IndexInfo, element: &Key) -> Result<Option<FieldLocation>> {
        Ok(self.segment(index)?.lookup(&element.values_string()))
    }

    fn entries(&mut self, index: &IndexInfo) -> Result<Vec<(Key, FieldLocation)>> {
        let segment = self.segment(index)?;
        segment.entries().map(|(values, loc)| Ok((Key::from_values_string(&index.element_keywords, values)?, loc))).collect()
    }

    /// Appends a mask record, then removes the index files no visible index uses any more
    /// (as FDB5's wipe and purge do): only once the mask is durable, so a crash leaves at
    /// worst a file nothing reads.
    fn mask(&mut self, indexes: &[&IndexInfo]) -> Result<Vec<String>> {
        if indexes.is_empty() {
            return Ok(Vec::new());
        }
        let path = self.dir.join(TOC_FILE);
        let ids: Vec<String> = indexes.iter().map(|i| i.id.clone()).collect();
        let mut toc = OpenOptions::new().append(true).open(&path).ctx("open TOC", &path)?;
        toc.write_all(&mask_frame(&ids)).and_then(|_| toc.sync_data()).ctx("append mask to TOC", &path)?;
        self.toc.refresh()?;
        let file_of = |toc: &TocReader, id: &str| match toc.source(id) {
            Some(SegmentSource::File(place)) => Some(place.file.clone()),
            _ => None,
        };
        let used: BTreeSet<String> = self.toc.visible().filter_map(|i| file_of(&self.toc, &i.id)).collect();
        let unused: BTreeSet<String> = ids.iter().filter_map(|id| file_of(&self.toc, id)).filter(|f| !used.contains(f)).collect();
        let dataset = self.dir.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        let mut removed = Vec::new();
        for file in unused {
            let path = self.dir.join(&file);
            if crate::in_use::remove_unless_held(&path).ctx("remove index file", &path)? == crate::in_use::Removal::Removed {
                removed.push(format!("{dataset}/{file}"));
            }
        }
        for id in &ids {
            self.segments.remove(id);
        }
        Ok(removed)
    }
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
