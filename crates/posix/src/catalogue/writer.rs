//! A catalogue writer: the entries it archives into each data set, its index files, and how
//! its flush makes them durable and visible (staged before the store's sync, published after;
//! [`CommitMode`]).

use std::collections::{BTreeSet, HashMap};
use std::fs::{File, OpenOptions};
use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::path::PathBuf;
use std::sync::Arc;

use fieldstore_core::error::{Error, IoContext, Result};
use fieldstore_core::indexing::PendingIndexes;
use fieldstore_core::recent::RecentList;
use fieldstore_core::unique::unique_suffix;
use fieldstore_core::{CatalogueWriter, Commit, FieldLocation, Key};

use super::create::{create_dataset, sync_dir};
use super::{CommitMode, KEY_FILE, TOC_FILE};
use crate::config::CommitSetting;
use crate::naming::{collocation_name, dataset_dir_name};
use crate::placement::Placement;
use crate::toc::{encode_commit, encode_segment, flush_frame, index_record, SegmentPlace};
use crate::writers::{boot_id, Marker};

/// One writer: the datasets it writes to, each with its own index files and marker.
pub struct PosixCatalogueWriter {
    pub(super) placement: Arc<Placement>,
    pub(super) commit: CommitSetting,
    pub(super) writers: RecentList<DatasetWriter>,
}

/// What one writer has archived into one dataset since its last flush.
pub(super) struct DatasetWriter {
    dataset: Key,
    /// Where data set directories are found, should this one move.
    placement: Arc<Placement>,
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

impl PosixCatalogueWriter {
    fn dataset_writer(&mut self, dataset: &Key, schema_text: &str) -> Result<&mut DatasetWriter> {
        let i = match self.writers.find(|w| w.dataset == *dataset) {
            Some(i) => i,
            None => {
                let name = dataset_dir_name(dataset)?;
                let (dir, toc) = crate::moving::found_again(dataset, || {
                    let (dir, _) = self.placement.for_archive(dataset, &name)?;
                    // The data set is there once its key is (the store may have made the
                    // directory first).
                    let found = dir.join(KEY_FILE).exists();
                    crate::moving::refuse_if_moving(&dir, "archiving into it")?;
                    if !create_dataset(&dir, dataset, schema_text, found)? {
                        return Ok(None);
                    }
                    let toc_path = dir.join(TOC_FILE);
                    match OpenOptions::new().append(true).create(true).mode(0o666).open(&toc_path) {
                        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
                        toc => Ok(Some((dir, toc.ctx("open TOC", &toc_path)?))),
                    }
                })?;
                let mode = self.commit.mode(dir.parent().unwrap_or(&dir));
                let marker = match (mode, boot_id()) {
                    (CommitMode::Embedded, Some(_)) => Some(Marker::create(&dir)?),
                    _ => None,
                };
                let dataset = dataset.clone();
                self.writers.push(DatasetWriter {
                    dataset,
                    placement: self.placement.clone(),
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
            return Err(crate::moving::gone_under_writer(&self.placement, &self.dataset, Some(&self.dir)));
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
            // Checked once the file is held: a move locking the data set meanwhile sees it.
            if let Err(e) = crate::moving::refuse_if_moving(&self.dir, "archiving into it") {
                let _ = std::fs::remove_file(&path);
                return Err(e);
            }
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

    fn create(&mut self, dataset: &Key, schema_text: &str) -> Result<()> {
        self.dataset_writer(dataset, schema_text).map(drop)
    }
}
