//! A reader's view of one data set directory: its schema, its TOC read incrementally, the
//! index segments it loads, and masks (purge, partial wipe).

use std::collections::{BTreeSet, HashMap};
use std::fs::OpenOptions;
use std::io::Write;
use std::path::PathBuf;
use std::sync::Arc;

use fieldstore_core::backend::{Overlays, Unused};
use fieldstore_core::error::{Error, ErrorKind, IoContext, Result};
use fieldstore_core::{DatasetView, FieldLocation, IndexInfo, Key};

use super::create::read_schema;
use super::{KEY_FILE, TOC_FILE};
use crate::naming::dataset_dir_name;
use crate::placement::Placement;
use crate::toc::{mask_frame, overlay_frame, Segment, SegmentSource, TocReader};

/// A reader's view of one dataset directory.
pub(super) struct PosixView {
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
    pub(super) fn open(placement: &Arc<Placement>, dataset: &Key) -> Result<Option<PosixView>> {
        let name = dataset_dir_name(dataset)?;
        // A directory gone between finding and reading it moved to another root
        // (crate::moving): found again there.
        for _ in 0..2 {
            let Some(dir) = placement.existing(dataset, &name)? else { return Ok(None) };
            let schema_text = match read_schema(&dir) {
                Err(e) if e.kind() == ErrorKind::NotFound && !dir.exists() => None,
                other => other?,
            };
            if let Some(schema_text) = schema_text {
                let toc = TocReader::new(dir.join(TOC_FILE));
                return Ok(Some(PosixView {
                    dataset: dataset.clone(),
                    placement: placement.clone(),
                    dir,
                    schema_text,
                    toc,
                    segments: HashMap::new(),
                }));
            }
            if dir.exists() {
                // There, without its key yet: a data set being created.
                return Ok(None);
            }
        }
        Ok(None)
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
            Some(SegmentSource::File(place)) => match Segment::load(&self.dir, place) {
                // Moved to another root since its TOC was read (crate::moving): read there.
                Err(e) if e.kind() == ErrorKind::NotFound && !self.dir.join(KEY_FILE).exists() => {
                    let before = self.dir.clone();
                    self.follow_a_new_data_set()?;
                    match (self.dir != before, self.toc.source(&index.id)) {
                        (true, Some(SegmentSource::File(place))) => Arc::new(Segment::load(&self.dir, place)?),
                        _ => return Err(e),
                    }
                }
                other => Arc::new(other?),
            },
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

    fn index_place(&self, index: &IndexInfo) -> Option<(String, u64)> {
        match self.toc.source(&index.id)? {
            SegmentSource::File(place) => Some((self.dir.join(&place.file).display().to_string(), place.offset)),
            SegmentSource::Inline(_) => None,
        }
    }

    /// Appends a mask record, then removes the index files no visible index uses any more
    /// (as FDB5's wipe and purge do): only once the mask is durable, so a crash leaves at
    /// worst a file nothing reads.
    fn mask(&mut self, indexes: &[&IndexInfo], unused: Unused) -> Result<Vec<String>> {
        if indexes.is_empty() {
            return Ok(Vec::new());
        }
        let ids: Vec<String> = indexes.iter().map(|i| i.id.clone()).collect();
        self.append_record(&mask_frame(&ids), "purging or wiping in it")?;
        for id in &ids {
            self.segments.remove(id);
        }
        if unused == Unused::Keep {
            return Ok(Vec::new());
        }
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
        Ok(removed)
    }

    fn overlays(&mut self) -> Option<&mut dyn Overlays> {
        Some(self)
    }
}

impl Overlays for PosixView {
    fn overlaid(&self) -> &[Key] {
        &self.toc.overlays
    }

    fn set_overlay(&mut self, source: &Key, shown: bool) -> Result<()> {
        self.append_record(&overlay_frame(source, shown), "overlaying onto it")
    }
}

impl PosixView {
    /// Appends one record to the TOC, durably (never while the data set is moved: `doing`
    /// says what for), and reads it back.
    fn append_record(&mut self, frame: &[u8], doing: &str) -> Result<()> {
        let _held = crate::moving::hold_for_change(&self.dir, doing)?;
        let path = self.dir.join(TOC_FILE);
        let mut toc = OpenOptions::new().append(true).open(&path).ctx("open TOC", &path)?;
        toc.write_all(frame).and_then(|_| toc.sync_data()).ctx("append to TOC", &path)?;
        self.toc.refresh()
    }
}
