//! Recovery: the records a crash of their host lost, published again from the commits the
//! store embedded with the data (`docs/posix-layout.md`, "Recovery").

use std::collections::BTreeSet;
use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::Path;

use fieldstore_core::backend::CatalogueRecovery;
use fieldstore_core::error::{Error, IoContext, Result};
use fieldstore_core::{FieldLocation, Key};

use super::{PosixCatalogue, TOC_FILE};
use crate::toc::{decode_commit, read_place, record_place, recovered_frame, Segment, SegmentSource, TocReader};
use crate::writers::{on_local_file_system, Sharing};

/// Who may have written a data set directory's writer markers (judged from its file system).
fn sharing(dir: &Path) -> Sharing {
    if on_local_file_system(dir.parent().unwrap_or(dir)) {
        Sharing::ThisMachine
    } else {
        Sharing::Hosts
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
