//! The POSIX store: one data file per (writer, dataset, collocation key), created exclusively
//! under a unique name and only ever appended to through a buffer whose contents are written,
//! and their write-back started, whenever it fills. `flush` writes the rest and `fdatasync`s
//! each file written since the last flush: one sync per file per flush, never one per field.
//! A catalogue's commit for a dataset is appended to one of that dataset's data files, synced
//! last, so its one sync makes the commit durable with the data ([`crate::embedded`]).
//!
//! A location's URI is the file's path relative to the store root (`dataset-dir/file`), so a
//! store can be moved, and a URI read from an index can never point outside the root. Over
//! several roots, the root is the one holding the data set's directory ([`Placement`]).

use std::collections::HashMap;
use std::fs::{File, OpenOptions};
use std::io::{IoSlice, Write};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use fieldstore_core::backend::{fill_in_pieces, CommitCarrier, CommitSource, MappedReads, Mapping, RelativeUris, Roots, SideObjects};
use fieldstore_core::error::{Error, IoContext, Result};
use fieldstore_core::recent::RecentList;
use fieldstore_core::unique::unique_suffix;
use fieldstore_core::{Commit, FieldLocation, Key, Store, StoreWriter};

use crate::in_use::{self, remove_unless_held, Removal};
use crate::large_reads::{self, LargeReads};
use crate::naming::{collocation_name, dataset_dir_name, resolve_relative};
use crate::placement::Placement;

/// Bytes buffered per data file before they are written and their write-back is started:
/// small enough that the disk works while the next fields are archived (on ext4, 10,000 x
/// 4 KiB with a flush per 100 fields: 0.16 -> 0.14 s; 128 KiB and 64 KiB were slower, the
/// calls cost more than the overlap gains), large enough for few system calls.
///
/// Writes between flushes also end on multiples of this size in the file. The page cache
/// gives a write pages in blocks (folios) aligned in the file as well as sized by the write:
/// a file written 256 KiB at a time 300 bytes off alignment is held in small folios and read
/// back 1.4-1.6x slower than one written aligned (ext4, Linux 6.18; `cargo bench -p
/// fieldstore-posix --bench page_cache_reads`).
pub const WRITE_BUFFER: usize = 256 << 10;

/// Open read handles kept per store handle.
const MAX_OPEN_READERS: usize = 256;

/// The store's shared side: reads, removals, recovery.
pub struct PosixStore {
    /// The roots, and which data set is in which.
    placement: Arc<Placement>,
    readers: Mutex<HashMap<String, Arc<File>>>,
    /// How reads of 256 KiB or more copy from the page cache (chosen by measurement).
    large_reads: LargeReads,
    /// Whether reads may copy from mappings (of data files and side objects) at all.
    pub(crate) maps: bool,
}

/// One writer: the data files it appends to, of its own.
pub struct PosixStoreWriter {
    placement: Arc<Placement>,
    /// Open data files (consecutive fields nearly always go to the same one).
    writers: RecentList<DataFile>,
}

/// One data file being appended to.
struct DataFile {
    dataset: Key,
    collocation: Key,
    uri: Arc<str>,
    path: PathBuf,
    name: String,
    file: File,
    buffer: Vec<u8>,
    /// Size of the file including what is still buffered.
    size: u64,
    /// Written since the last sync.
    dirty: bool,
    /// Where the last commit embedded in this file ends (0: none yet).
    last_commit_end: u64,
    /// Its directory was synced since it was created: its name survives a power loss.
    named_durably: bool,
}

impl PosixStore {
    /// A store whose data set directories are under `root`, made by the first archive if it
    /// is not there (the caller named it; a config's roots are made only with `create: true`).
    pub fn new(root: impl Into<PathBuf>) -> Self {
        PosixStore::with_placement(Placement::one_root(root.into()).creating_roots(true))
    }

    /// A store over the roots of `placement`.
    pub fn with_placement(placement: Placement) -> Self {
        PosixStore { placement: Arc::new(placement), readers: Mutex::new(HashMap::new()), large_reads: LargeReads::default(), maps: true }
    }

    /// The store, never reading from a mapping (`mapped_reads: false`: a file system shared
    /// by machines, where another's wipe could fault a mapping rather than fail a read).
    pub fn without_mappings(self) -> Self {
        PosixStore { large_reads: LargeReads::copying(), maps: false, ..self }
    }

    /// The data file a location's URI names (`dataset-dir/file`), under the root holding its
    /// directory.
    fn path_of(&self, uri: &str) -> Result<PathBuf> {
        let dir_name = uri.split('/').next().unwrap_or_default();
        resolve_relative(self.placement.root_holding(dir_name)?, uri)
    }

    /// An existing data set's directory, if it is in a root.
    pub(crate) fn dataset_dir(&self, dataset: &Key) -> Result<Option<PathBuf>> {
        self.placement.existing(dataset, &dataset_dir_name(dataset)?)
    }

    /// The error of a read of `len` bytes at `offset` of `uri` that failed with `e`.
    fn read_failed(&self, uri: &str, offset: u64, len: usize, e: std::io::Error) -> Error {
        let path = self.path_of(uri).unwrap_or_else(|_| PathBuf::from(uri));
        if e.kind() == std::io::ErrorKind::UnexpectedEof {
            Error::corrupt_because("data file", path, format!("truncated: {len} bytes at offset {offset} are not all there"), e)
        } else {
            Error::io("read data file", path, e)
        }
    }

    fn reader(&self, uri: &str) -> Result<Arc<File>> {
        let mut readers = self.readers.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(f) = readers.get(uri) {
            return Ok(f.clone());
        }
        let path = self.path_of(uri)?;
        let file = match File::open(&path) {
            // Its data set moved to another root between finding the file and opening it
            // (crate::moving): found again there.
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                let moved = self.path_of(uri)?;
                File::open(&moved).ctx("open data file", &moved)
            }
            other => other.ctx("open data file", &path),
        };
        let file = Arc::new(file?);
        if readers.len() >= MAX_OPEN_READERS {
            readers.clear();
        }
        readers.insert(uri.to_string(), file.clone());
        Ok(file)
    }
}

impl PosixStoreWriter {
    fn data_file(&mut self, dataset: &Key, collocation: &Key) -> Result<&mut DataFile> {
        let i = match self.writers.find(|w| w.collocation == *collocation && w.dataset == *dataset) {
            Some(i) => i,
            None => {
                let file = self.create_data_file(dataset, collocation)?;
                self.writers.push(file)
            }
        };
        Ok(&mut self.writers[i])
    }

    fn create_data_file(&self, dataset: &Key, collocation: &Key) -> Result<DataFile> {
        let dir_name = dataset_dir_name(dataset)?;
        let file_name = format!("{}.{}.data", collocation_name(collocation)?, unique_suffix());
        let (dir, path, file) = crate::moving::found_again(dataset, || {
            let (dir, found) = self.placement.for_archive(dataset, &dir_name)?;
            if !found {
                // On a root of its own (else the catalogue made it), the directory's name must
                // be durable before any commit or record points into it.
                crate::listing::create_dir_durably(&dir)?;
            }
            crate::toc::refuse_foreign(&dir)?;
            let path = dir.join(&file_name);
            // O_EXCL: a name collision can never make two writers share a file.
            match OpenOptions::new().append(true).create_new(true).mode(0o666).open(&path) {
                Err(e) if found && e.kind() == std::io::ErrorKind::NotFound => Ok(None),
                file => Ok(Some((dir, path.clone(), file.ctx("create data file", &path)?))),
            }
        })?;
        in_use::hold(&file);
        // Checked once the file is held: a move locking the data set meanwhile sees it.
        if let Err(e) = crate::moving::refuse_if_moving(&dir, "archiving into it") {
            let _ = std::fs::remove_file(&path);
            return Err(e);
        }
        let uri: Arc<str> = format!("{dir_name}/{file_name}").into();
        let (dataset, collocation) = (dataset.clone(), collocation.clone());
        let buffer = Vec::with_capacity(WRITE_BUFFER);
        Ok(DataFile {
            dataset,
            collocation,
            uri,
            path,
            name: file_name,
            file,
            buffer,
            size: 0,
            dirty: false,
            last_commit_end: 0,
            named_durably: false,
        })
    }

    /// The data file a dataset's commit goes into: one written since the last flush if any.
    fn carrier(&self, dataset: &Key) -> Option<usize> {
        let of_dataset = || self.writers.iter().enumerate().filter(|(_, w)| w.dataset == *dataset);
        of_dataset().find(|(_, w)| w.dirty || !w.buffer.is_empty()).or_else(|| of_dataset().next()).map(|(i, _)| i)
    }
}

impl DataFile {
    /// Whether the file this writer appends to is still the one at its path.
    fn in_place(&self) -> Result<bool> {
        crate::listing::still_at(&self.file, &self.path)
    }

    /// Writes what is buffered and syncs the file if anything was written since its last sync.
    fn sync(&mut self) -> Result<()> {
        if !self.buffer.is_empty() {
            self.file.write_all(&self.buffer).ctx("write data file", &self.path)?;
            self.buffer.clear();
            self.dirty = true;
        }
        if self.dirty {
            self.file.sync_data().ctx("sync data file", &self.path)?;
            self.dirty = false;
        }
        Ok(())
    }

    /// Appends a catalogue's commit after the fields written so far (not synced).
    fn append_commit(&mut self, payload: &[u8]) {
        let commit = crate::embedded::encode(&self.name, self.size, self.last_commit_end, payload);
        self.buffer.extend_from_slice(&commit);
        self.size += commit.len() as u64;
        self.last_commit_end = self.size;
    }

    /// Appends `data` after what is buffered. Whatever reaches past a multiple of
    /// [`WRITE_BUFFER`] in the file is written, with the buffer, in one call that ends on the
    /// last such multiple, and its write-back started (more fields will follow before the
    /// sync); the rest stays buffered.
    fn append(&mut self, data: &[u8]) -> Result<()> {
        let in_file = self.size - self.buffer.len() as u64;
        let end = self.size + data.len() as u64;
        let aligned_end = end - end % WRITE_BUFFER as u64;
        if aligned_end <= in_file {
            self.buffer.extend_from_slice(data);
            self.size = end;
            return Ok(());
        }
        let from_data = ((aligned_end - in_file) as usize).saturating_sub(self.buffer.len());
        let (written, kept) = data.split_at(from_data);
        write_all_vectored(&mut self.file, &mut [IoSlice::new(&self.buffer), IoSlice::new(written)]).ctx("write data file", &self.path)?;
        self.buffer.clear();
        self.buffer.extend_from_slice(kept);
        self.size = end;
        self.dirty = true;
        crate::write_back::start(&self.file);
        Ok(())
    }
}

/// Writes every byte of `slices` in order (`Write::write_all_vectored` is not stable yet).
fn write_all_vectored(file: &mut File, mut slices: &mut [IoSlice<'_>]) -> std::io::Result<()> {
    IoSlice::advance_slices(&mut slices, 0);
    while !slices.is_empty() {
        match file.write_vectored(slices) {
            Ok(0) => return Err(std::io::ErrorKind::WriteZero.into()),
            Ok(n) => IoSlice::advance_slices(&mut slices, n),
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

impl PosixStoreWriter {
    /// Syncs the directories of the data files created since the last flush (`written` says
    /// which files this flush wrote), once each: a file's sync makes its bytes durable, not
    /// its name, and a power loss could otherwise lose a flushed file whole with the commit
    /// in it. A writer pays this once per data set directory, at its first flush there.
    fn sync_new_names(&mut self, written: &[bool]) -> Result<()> {
        let mut synced: Vec<&Path> = Vec::new();
        for (w, _) in self.writers.iter_mut().zip(written).filter(|(w, written)| **written && !w.named_durably) {
            let dir = w.path.parent().expect("a data file is in a directory");
            if !synced.contains(&dir) {
                File::open(dir).and_then(|d| d.sync_all()).ctx("sync data set directory", dir)?;
                synced.push(dir);
            }
            w.named_durably = true;
        }
        Ok(())
    }
}

impl StoreWriter for PosixStoreWriter {
    fn archive(&mut self, dataset: &Key, collocation: &Key, data: &[u8]) -> Result<FieldLocation> {
        let w = self.data_file(dataset, collocation)?;
        let offset = w.size;
        w.append(data)?;
        Ok(FieldLocation { uri: w.uri.clone(), offset, length: data.len() as u64, crc32c: None })
    }

    fn flush(&mut self) -> Result<()> {
        self.flush_with_commits(&[]).map(drop)
    }

    /// Closes every data file: after a failed write its size is unknown, so later fields go
    /// to new files (the old bytes stay, unreferenced).
    fn discard(&mut self) {
        self.writers.clear();
    }

    fn commit_carrier(&mut self) -> Option<&mut dyn CommitCarrier> {
        Some(self)
    }
}

impl CommitCarrier for PosixStoreWriter {
    /// Each commit goes into a data file of its dataset (one written since the last flush if
    /// there is one), which is synced after every other file and after the directories of
    /// new files: its one sync makes the commit and the last of the data durable together,
    /// and the commit is durable only once all the data it describes is, names included. A
    /// dataset with no data file in this handle gets none.
    fn flush_with_commits(&mut self, commits: &[Commit]) -> Result<Vec<bool>> {
        let carriers: Vec<Option<usize>> = commits.iter().map(|c| self.carrier(&c.dataset)).collect();
        let written: Vec<bool> = self.writers.iter().map(|w| w.dirty || !w.buffer.is_empty()).collect();
        for (i, w) in self.writers.iter_mut().enumerate() {
            if !carriers.contains(&Some(i)) {
                w.sync()?;
            }
        }
        // The names of new files too, before a commit can be recovered that points into them.
        self.sync_new_names(&written)?;
        for (commit, carrier) in commits.iter().zip(&carriers) {
            if let Some(i) = *carrier {
                self.writers[i].append_commit(&commit.bytes);
                self.writers[i].sync()?;
            }
        }
        // A wipe takes a data set's directory away whole: fields written to a file no longer
        // at its path went with it, even if the data set exists again when the catalogue
        // publishes them.
        for (w, written) in self.writers.iter().zip(written) {
            if written && !w.in_place()? {
                return Err(crate::moving::gone_under_writer(&self.placement, &w.dataset, w.path.parent()));
            }
        }
        Ok(carriers.iter().map(Option::is_some).collect())
    }
}

impl Store for PosixStore {
    fn writer(&self) -> Result<Box<dyn StoreWriter>> {
        Ok(Box::new(PosixStoreWriter { placement: self.placement.clone(), writers: RecentList::default() }))
    }

    fn read(&self, uri: &str, offset: u64, buf: &mut [u8]) -> Result<()> {
        self.read_each_piece(uri, offset, buf, usize::MAX, &mut |_| Ok(()))
    }

    /// Copies the whole range by one method ([`LargeReads`]: from one mapping of it, or with
    /// one `pread` per piece), visiting each piece as it is copied.
    fn read_each_piece(
        &self,
        uri: &str,
        offset: u64,
        buf: &mut [u8],
        piece: usize,
        visit: &mut dyn FnMut(&[u8]) -> Result<()>,
    ) -> Result<()> {
        let file = self.reader(uri)?;
        let len = buf.len();
        let failed = |e| self.read_failed(uri, offset, len, e);
        let source = self.large_reads.source(&file, offset, len).map_err(failed)?;
        fill_in_pieces(buf, piece, |at, part| source.copy(at, part).map_err(failed), visit)?;
        source.finish();
        Ok(())
    }

    fn mapped_reads(&self) -> Option<&dyn MappedReads> {
        Some(self)
    }

    fn remove(&self, uri: &str) -> Result<bool> {
        let path = self.path_of(uri)?;
        self.readers.lock().unwrap_or_else(|p| p.into_inner()).remove(uri);
        let removal = remove_unless_held(&path).ctx("remove data file", &path)?;
        Ok(removal != Removal::InUse)
    }

    /// Removes the data set's directory once empty. Its data files were removed by name:
    /// deleting every file in the directory would delete those of a data set archived again
    /// after the wipe took effect. (On a root of its own, a crashed writer's files that no
    /// index names stay, and keep the directory.) Its side objects go too: they only save readers
    /// time.
    fn wipe_dataset(&self, dataset: &Key) -> Result<()> {
        if let Some(dir) = self.dataset_dir(dataset)? {
            crate::side::remove_side_objects(&dir);
            let _ = std::fs::remove_dir(&dir);
        }
        Ok(())
    }

    fn describe(&self, dataset: &Key) -> String {
        match self.dataset_dir(dataset) {
            Ok(Some(dir)) => format!("posix {}", dir.display()),
            Ok(None) => format!("posix: data set {dataset} is in no root"),
            Err(e) => e.report().to_string(),
        }
    }

    fn relative_uris(&self) -> Option<&dyn RelativeUris> {
        Some(self)
    }

    fn commit_source(&self) -> Option<&dyn CommitSource> {
        Some(self)
    }

    fn root(&self) -> Option<&dyn Roots> {
        Some(self)
    }

    fn side_objects(&self) -> Option<&dyn SideObjects> {
        Some(self)
    }
}

impl MappedReads for PosixStore {
    fn map(&self, uri: &str, offset: u64, len: usize) -> Result<Option<Mapping>> {
        if !self.large_reads.maps() {
            return Ok(None);
        }
        let file = self.reader(uri)?;
        let mapped = large_reads::map_range(&file, offset, len).map_err(|e| self.read_failed(uri, offset, len, e))?;
        Ok(Some(Box::new(mapped)))
    }
}

impl Roots for PosixStore {
    fn check_exists(&self) -> Result<()> {
        self.placement.check_exists()
    }

    fn create_missing(&self) -> Result<Vec<String>> {
        self.placement.create_roots()
    }
}

impl RelativeUris for PosixStore {
    fn absolute_uri(&self, uri: &str) -> Result<String> {
        let path = self.path_of(uri)?;
        let absolute = if path.is_absolute() { path } else { std::env::current_dir().ctx("find the working directory", ".")?.join(path) };
        Ok(absolute.display().to_string())
    }
}

impl CommitSource for PosixStore {
    fn embedded_commits(&self, dataset: &Key, session: &str) -> Result<Vec<Vec<u8>>> {
        let Some(dir) = self.dataset_dir(dataset)? else { return Ok(Vec::new()) };
        let marker = format!(".{session}.");
        let mut commits = Vec::new();
        for name in crate::listing::names(&dir, "read dataset directory")? {
            let name = name.to_string_lossy();
            if name.ends_with(".data") && name.contains(&marker) {
                commits.extend(crate::embedded::read_all(&dir.join(&*name))?);
            }
        }
        Ok(commits)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The one data file under `root`, and its length.
    fn data_file(root: &Path) -> (PathBuf, u64) {
        let dir = std::fs::read_dir(root).unwrap().next().unwrap().unwrap().path();
        let file = std::fs::read_dir(dir).unwrap().next().unwrap().unwrap().path();
        let len = file.metadata().unwrap().len();
        (file, len)
    }

    #[test]
    fn writes_between_flushes_end_on_buffer_multiples_and_keep_every_byte() {
        let root = tempfile::tempdir().unwrap();
        let store = PosixStore::new(root.path());
        let mut writer = store.writer().unwrap();
        let (dataset, collocation) = (Key::from_pairs([("class", "od")]), Key::from_pairs([("type", "pf")]));
        // Sizes from one byte to well over the buffer, none a multiple of it.
        let sizes = [1, 300, 5000, WRITE_BUFFER - 1, 3 * WRITE_BUFFER + 7, 77, WRITE_BUFFER + 1, 4 << 20, 12_345];
        let (mut written, mut locations) = (Vec::new(), Vec::new());
        for round in 0..3 {
            for (i, size) in sizes.iter().enumerate() {
                let field: Vec<u8> = (0..*size).map(|j| (j * 7 + i + round) as u8).collect();
                locations.push(writer.archive(&dataset, &collocation, &field).unwrap());
                written.extend_from_slice(&field);
                let on_disk = data_file(root.path()).1;
                // Each write goes up to a multiple of the buffer size, except the flush's.
                let after_flush = if round == 0 { 0 } else { written.len() as u64 - sizes[..=i].iter().sum::<usize>() as u64 };
                assert!(on_disk.is_multiple_of(WRITE_BUFFER as u64) || on_disk == after_flush, "round {round}, field {i}: {on_disk} bytes");
                assert!(written.len() as u64 - on_disk < WRITE_BUFFER as u64, "round {round}, field {i}: at most a buffer held back");
            }
            writer.flush().unwrap();
            let (file, on_disk) = data_file(root.path());
            assert_eq!(on_disk, written.len() as u64, "round {round}: a flush writes everything");
            assert!(std::fs::read(file).unwrap() == written, "round {round}");
        }
        for location in &locations {
            let mut buf = vec![0; location.length as usize];
            store.read(&location.uri, location.offset, &mut buf).unwrap();
            let at = location.offset as usize;
            assert!(buf == written[at..at + buf.len()]);
        }
    }

    #[test]
    fn a_store_lends_mappings_only_once_it_copies_faster_from_them() {
        let root = tempfile::tempdir().unwrap();
        let store = PosixStore::new(root.path());
        let mut writer = store.writer().unwrap();
        let (dataset, collocation) = (Key::from_pairs([("class", "od")]), Key::from_pairs([("type", "pf")]));
        let field: Vec<u8> = (0..3 << 20).map(|j| (j * 13 % 251) as u8).collect();
        let location = writer.archive(&dataset, &collocation, &field).unwrap();
        writer.flush().unwrap();
        let mapped = store.mapped_reads().expect("POSIX lends mappings");
        let (uri, offset) = (&location.uri, location.offset);
        assert!(mapped.map(uri, offset, field.len()).unwrap().is_none(), "undecided: read by copying");
        store.large_reads.decide(false);
        assert!(mapped.map(uri, offset, field.len()).unwrap().is_none(), "pread is faster here");
        store.large_reads.decide(true);
        let lent = mapped.map(uri, offset + 5, field.len() - 9).unwrap().expect("mapped is faster here");
        assert!((*lent).as_ref() == &field[5..field.len() - 4]);
        let beyond = mapped.map(uri, offset, field.len() + 1).err().expect("beyond the end");
        assert_eq!(beyond.kind(), fieldstore_core::ErrorKind::Corrupt, "{beyond}");
    }

    /// Whether this process maps a file whose path ends with `name` (`/proc/self/maps`).
    fn mapped_here(name: &str) -> bool {
        std::fs::read_to_string("/proc/self/maps").unwrap().lines().any(|line| line.ends_with(name))
    }

    #[test]
    fn a_store_without_mappings_copies_every_read_and_reads_side_objects_whole() {
        use fieldstore_core::backend::SideObjects;
        let root = tempfile::tempdir().unwrap();
        let (dataset, collocation) = (Key::from_pairs([("class", "od")]), Key::from_pairs([("type", "pf")]));
        let field: Vec<u8> = (0..3 << 20).map(|j| (j * 7 % 251) as u8).collect();
        let location = {
            let mut writer = PosixStore::new(root.path()).writer().unwrap();
            let location = writer.archive(&dataset, &collocation, &field).unwrap();
            writer.flush().unwrap();
            location
        };
        for (maps, name) in [(true, "0123456789abcdef0123456789abcdef"), (false, "fedcba9876543210fedcba9876543210")] {
            let store = if maps { PosixStore::new(root.path()) } else { PosixStore::new(root.path()).without_mappings() };
            store.put_side_object(&dataset, name, &field).unwrap();
            let lent = store.map_side_object(&dataset, name).unwrap().expect("the side object");
            assert!((*lent).as_ref() == field.as_slice());
            assert_eq!(mapped_here(name), maps, "side object {name} mapped: {maps}");
            // Large reads race the two ways, then keep one: never a mapping without them.
            let mut buf = vec![0; field.len()];
            for _ in 0..8 {
                store.read(&location.uri, location.offset, &mut buf).unwrap();
            }
            assert!(buf == field);
            if !maps {
                assert!(!store.large_reads.maps());
                assert!(store.mapped_reads().expect("the capability").map(&location.uri, location.offset, field.len()).unwrap().is_none());
            }
        }
    }
}
