//! The POSIX catalogue: a directory per dataset holding its key, its schema, the shared TOC,
//! lock files, and each writer's index files (see [`crate::toc`] and `docs/posix-layout.md`).
//!
//! A dataset exists once its `key` file exists. Creation is race-free: `mkdir` may race
//! harmlessly; `schema`, the TOC (holding only its identity record) and then `key` are
//! written to private temporary files and published with `link`, which fails if another
//! process got there first.

use std::collections::{BTreeSet, HashMap};
use std::fs::{File, OpenOptions};
use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use fieldstore_core::error::{Error, IoContext, Result};
use fieldstore_core::indexing::PendingIndexes;
use fieldstore_core::recent::RecentList;
use fieldstore_core::unique::unique_suffix;
use fieldstore_core::{Catalogue, ControlAction, DatasetView, FieldLocation, IndexInfo, Key};

use crate::naming::{collocation_name, dataset_dir_name};
use crate::toc::{encode_segment, identity_frame, index_frame, mask_frame, Segment, SegmentPlace, TocReader};

const KEY_FILE: &str = "key";
const SCHEMA_FILE: &str = "schema";
const TOC_FILE: &str = "toc";

pub struct PosixCatalogue {
    root: PathBuf,
    /// The datasets this handle writes to.
    writers: RecentList<DatasetWriter>,
    /// Dataset keys by directory name, so each `key` file is read once per handle. (Only a
    /// dataset wiped and re-created under another key whose escaped values are the same
    /// would be misnamed, until the handle is reopened.)
    known: Mutex<HashMap<std::ffi::OsString, Key>>,
}

/// What one writer has archived into one dataset since its last flush.
struct DatasetWriter {
    dataset: Key,
    dir: PathBuf,
    toc: File,
    /// Entries archived since the last flush, by collocation and element keywords.
    pending: PendingIndexes,
    /// This writer's index file per collocation key: (file, name, size).
    index_files: HashMap<Key, (File, String, u64)>,
    /// The pending entries' segments once written ahead of the flush; any later archive
    /// drops them (their bytes stay in the index files, unreferenced).
    staged: Option<StagedSegments>,
}

/// Index segments written but not yet synced nor published.
struct StagedSegments {
    /// The TOC records that will publish them, encoded.
    records: Vec<u8>,
    /// The collocations whose index files hold them.
    touched: BTreeSet<Key>,
}

impl PosixCatalogue {
    pub fn new(root: impl Into<PathBuf>) -> Self {
        PosixCatalogue { root: root.into(), writers: RecentList::default(), known: Mutex::new(HashMap::new()) }
    }

    fn dataset_dir(&self, dataset: &Key) -> Result<PathBuf> {
        Ok(self.root.join(dataset_dir_name(dataset)?))
    }

    fn writer(&mut self, dataset: &Key, schema_text: &str) -> Result<&mut DatasetWriter> {
        let i = match self.writers.find(|w| w.dataset == *dataset) {
            Some(i) => i,
            None => {
                let dir = self.dataset_dir(dataset)?;
                create_dataset(&dir, dataset, schema_text)?;
                let toc_path = dir.join(TOC_FILE);
                let toc = OpenOptions::new().append(true).create(true).mode(0o644).open(&toc_path).ctx("open TOC", &toc_path)?;
                let dataset = dataset.clone();
                self.writers.push(DatasetWriter {
                    dataset,
                    dir,
                    toc,
                    pending: PendingIndexes::default(),
                    index_files: HashMap::new(),
                    staged: None,
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
        std::fs::create_dir_all(dir).ctx("create dataset directory", dir)?;
        publish(dir, SCHEMA_FILE, schema_text.as_bytes())?;
        publish(dir, TOC_FILE, &identity_frame(&unique_suffix()))?;
        publish(dir, KEY_FILE, dataset.to_string().as_bytes())?;
        if let Some(parent) = dir.parent() {
            File::open(parent).and_then(|d| d.sync_all()).ctx("sync directory", parent)?;
        }
    }
    let stored = read_key(dir)?;
    if stored != *dataset {
        return Err(Error::Invalid(format!("directory {} holds data set {stored}, not {dataset}", dir.display())));
    }
    Ok(())
}

/// Writes `name` durably unless it exists: temp file, fsync, then `link` (atomic, no clobber).
fn publish(dir: &Path, name: &str, contents: &[u8]) -> Result<()> {
    let tmp = dir.join(format!(".{name}.{}", unique_suffix()));
    let mut f = OpenOptions::new().write(true).create_new(true).mode(0o644).open(&tmp).ctx("create", &tmp)?;
    f.write_all(contents).and_then(|_| f.sync_all()).ctx("write", &tmp)?;
    let result = std::fs::hard_link(&tmp, dir.join(name));
    let _ = std::fs::remove_file(&tmp);
    match result {
        Err(e) if e.kind() != std::io::ErrorKind::AlreadyExists => Err(Error::io("publish", dir.join(name), e)),
        _ => Ok(()),
    }
}

fn read_key(dir: &Path) -> Result<Key> {
    let path = dir.join(KEY_FILE);
    let text = std::fs::read_to_string(&path).ctx("read dataset key", &path)?;
    Key::parse(text.trim()).map_err(|e| Error::corrupt("dataset key", &path, e.to_string()))
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

    /// Stages the pending segments if needed, syncs them, then appends their TOC records in
    /// one write and syncs the TOC: after this, readers see all of them.
    fn flush(&mut self) -> Result<()> {
        if self.pending.is_empty() {
            return Ok(());
        }
        self.stage()?;
        let staged = self.staged.take().expect("staged above");
        match self.publish(&staged) {
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
        self.index_files.clear();
        cause
    }

    fn write_segments(&mut self, pending: &PendingIndexes) -> Result<StagedSegments> {
        let mut records = Vec::new();
        let mut touched = BTreeSet::new();
        for index in pending.iter() {
            let segment = encode_segment(&index.entries);
            let dir = self.dir.clone();
            let (file, name, size) = self.index_file(&index.collocation)?;
            file.write_all(&segment).ctx("write index file", dir.join(name.as_str()))?;
            let place = SegmentPlace { file: name.clone(), offset: *size, length: segment.len() as u64 };
            *size += segment.len() as u64;
            touched.insert(index.collocation.clone());
            records.extend_from_slice(&index_frame(&place, index));
        }
        for collocation in &touched {
            let (file, _, _) = &self.index_files[collocation];
            crate::write_back::start(file);
        }
        Ok(StagedSegments { records, touched })
    }

    fn publish(&mut self, staged: &StagedSegments) -> Result<()> {
        for collocation in &staged.touched {
            let (file, name, _) = &self.index_files[collocation];
            file.sync_data().ctx("sync index file", self.dir.join(name))?;
        }
        let toc_path = self.dir.join(TOC_FILE);
        self.toc.write_all(&staged.records).ctx("append to TOC", &toc_path)?;
        self.toc.sync_data().ctx("sync TOC", &toc_path)
    }

    fn index_file(&mut self, collocation: &Key) -> Result<(&mut File, &String, &mut u64)> {
        if !self.index_files.contains_key(collocation) {
            let name = format!("{}.{}.index", collocation_name(collocation)?, unique_suffix());
            let path = self.dir.join(&name);
            let file = OpenOptions::new().append(true).create_new(true).mode(0o644).open(&path).ctx("create index file", &path)?;
            self.index_files.insert(collocation.clone(), (file, name, 0));
        }
        let (f, n, s) = self.index_files.get_mut(collocation).expect("inserted above");
        Ok((f, n, s))
    }
}

impl Catalogue for PosixCatalogue {
    fn archive(&mut self, dataset: &Key, schema_text: &str, collocation: &Key, element: &Key, location: FieldLocation) -> Result<()> {
        let writer = self.writer(dataset, schema_text)?;
        writer.staged = None;
        writer.pending.insert(collocation, element, location);
        Ok(())
    }

    fn prepare_flush(&mut self) -> Result<()> {
        for writer in &mut self.writers {
            writer.stage()?;
        }
        Ok(())
    }

    fn flush(&mut self) -> Result<()> {
        for writer in &mut self.writers {
            writer.flush()?;
        }
        Ok(())
    }

    fn discard(&mut self) {
        for writer in &mut self.writers {
            writer.pending.clear();
            writer.staged = None;
        }
    }

    fn datasets(&self) -> Result<Vec<Key>> {
        let entries = match std::fs::read_dir(&self.root) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
            other => other.ctx("read store root", &self.root)?,
        };
        let mut known = self.known.lock().unwrap_or_else(|p| p.into_inner());
        let mut out = Vec::new();
        for entry in entries {
            let entry = entry.ctx("read store root", &self.root)?;
            let name = entry.file_name();
            if name.to_string_lossy().starts_with('.') {
                continue;
            }
            if let Some(key) = known.get(&name) {
                out.push(key.clone());
            } else if entry.path().join(KEY_FILE).exists() {
                let key = read_key(&entry.path())?;
                known.insert(name, key.clone());
                out.push(key);
            }
        }
        out.sort();
        Ok(out)
    }

    fn open(&self, dataset: &Key) -> Result<Option<Box<dyn DatasetView>>> {
        let dir = self.dataset_dir(dataset)?;
        if !dir.join(KEY_FILE).exists() {
            return Ok(None);
        }
        let schema_path = dir.join(SCHEMA_FILE);
        let schema_text = std::fs::read_to_string(&schema_path).ctx("read dataset schema", &schema_path)?;
        let toc = TocReader::new(dir.join(TOC_FILE));
        Ok(Some(Box::new(PosixView { dir, schema_text, toc, segments: HashMap::new() })))
    }

    fn wipe_dataset(&self, dataset: &Key) -> Result<()> {
        let dir = self.dataset_dir(dataset)?;
        let doomed = self.root.join(format!(".wiped.{}", unique_suffix()));
        match std::fs::rename(&dir, &doomed) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
            other => other.ctx("hide dataset directory", &dir)?,
        }
        std::fs::remove_dir_all(&doomed).ctx("remove wiped dataset", &doomed)
    }

    fn locks(&self, dataset: &Key) -> Result<BTreeSet<ControlAction>> {
        let dir = self.dataset_dir(dataset)?;
        Ok(ControlAction::ALL.into_iter().filter(|a| dir.join(lock_name(*a)).exists()).collect())
    }

    fn set_lock(&self, dataset: &Key, action: ControlAction, locked: bool) -> Result<()> {
        let path = self.dataset_dir(dataset)?.join(lock_name(action));
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
        match self.dataset_dir(dataset) {
            Ok(dir) => format!("posix {}", dir.display()),
            Err(e) => e.to_string(),
        }
    }
}

fn lock_name(action: ControlAction) -> String {
    format!("lock.{}", action.name())
}

/// A reader's view of one dataset directory.
struct PosixView {
    dir: PathBuf,
    schema_text: String,
    toc: TocReader,
    segments: HashMap<String, Arc<Segment>>,
}

impl PosixView {
    fn segment(&mut self, index: &IndexInfo) -> Result<Arc<Segment>> {
        if let Some(s) = self.segments.get(&index.id) {
            return Ok(s.clone());
        }
        let record = self.toc.place(&index.id).ok_or_else(|| Error::Invalid(format!("unknown index {}", index.id)))?;
        let segment = Arc::new(Segment::load(&self.dir, record)?);
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
        Ok(self.toc.visible().cloned().collect())
    }

    fn lookup(&mut self, index: &IndexInfo, element: &Key) -> Result<Option<FieldLocation>> {
        Ok(self.segment(index)?.lookup(&element.values_string()))
    }

    fn entries(&mut self, index: &IndexInfo) -> Result<Vec<(Key, FieldLocation)>> {
        let segment = self.segment(index)?;
        segment.entries().map(|(values, loc)| Ok((Key::from_values_string(&index.element_keywords, values)?, loc))).collect()
    }

    fn mask(&mut self, indexes: &[&IndexInfo]) -> Result<()> {
        if indexes.is_empty() {
            return Ok(());
        }
        let path = self.dir.join(TOC_FILE);
        let ids: Vec<String> = indexes.iter().map(|i| i.id.clone()).collect();
        let mut toc = OpenOptions::new().append(true).open(&path).ctx("open TOC", &path)?;
        toc.write_all(&mask_frame(&ids)).and_then(|_| toc.sync_data()).ctx("append mask to TOC", &path)
    }
}
