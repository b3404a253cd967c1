//! What the catalogue says about its own files ([`CatalogueFiles`]): their counts and sizes
//! for `stats`, their names for `wipe`.

use std::path::Path;

use fieldstore_core::backend::{CatalogueFiles, CatalogueUsage, DatasetFiles};
use fieldstore_core::error::{Error, Result};
use fieldstore_core::{ControlAction, Key};

use super::{lock_name, PosixCatalogue, KEY_FILE, SCHEMA_FILE, TOC_FILE};
use crate::naming::dataset_dir_name;
use crate::toc::TocReader;

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

    /// Named `DIR/FILE` relative to the root, as
    /// [`DatasetView::mask`](fieldstore_core::DatasetView::mask) and the store's URIs name
    /// theirs; data files are the store's to name.
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
