//! One FDB5 database directory, read in place: its key and stored schema, its visible
//! indexes (newest first) and, through each, its fields. Nothing is ever written, created or
//! locked in it.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::fs::File;
use std::path::{Component, Path, PathBuf};
use std::sync::Arc;

use fieldstore_core::error::{Error, ErrorKind, IoContext, Result};

use crate::btree::{BTree, FieldRef};
use crate::toc::{visible_in, visible_indexes, Fdb5Key, IndexRecord, TocLog, VisibleIndex};

/// FDB5's control files: a database with one is closed to that action.
pub const LOCK_FILES: [(&str, &str); 4] =
    [("archive", "archive.lock"), ("list", "list.lock"), ("retrieve", "retrieve.lock"), ("wipe", "wipe.lock")];

/// A database as a reader sees it at the moment it was opened.
pub struct Database {
    /// Its directory.
    pub dir: PathBuf,
    /// Its key, from its TOC's first record, in schema order.
    pub key: Fdb5Key,
    /// The schema it was created with (its `schema` file).
    pub schema_text: String,
    /// Its visible indexes, newest first.
    pub indexes: Vec<Index>,
}

/// A visible index and where its files are.
pub struct Index {
    /// The index file.
    pub path: PathBuf,
    /// What the TOC says of it.
    pub record: IndexRecord,
    /// Its data files by id, as paths.
    pub data_files: BTreeMap<u64, PathBuf>,
}

impl Database {
    /// Reads the database in `dir`. `roots` are the directories its files may be in (data
    /// files with absolute paths, overlays' sub-TOCs): a path outside them is refused.
    pub fn open(dir: &Path, roots: &[PathBuf]) -> Result<Database> {
        let schema_path = dir.join("schema");
        let schema_text = std::fs::read_to_string(&schema_path).ctx("read FDB5 database schema", &schema_path)?;
        let visible = visible_indexes(dir)?;
        let indexes = visible.indexes.into_iter().map(|v| Index::place(v, roots)).collect::<Result<_>>()?;
        Ok(Database { dir: dir.to_path_buf(), key: visible.key, schema_text, indexes })
    }

    /// The visible indexes of the database in `dir`, newest first, and the TOCs of the
    /// databases overlaid onto it, from its TOC as `toc` reads it on (a long-lived reader
    /// reads only what was appended since).
    pub fn indexes(dir: &Path, toc: &mut TocLog, roots: &[PathBuf]) -> Result<(Vec<Index>, Vec<PathBuf>)> {
        let visible = visible_in(dir, toc.refresh()?)?;
        let indexes = visible.indexes.into_iter().map(|v| Index::place(v, roots)).collect::<Result<_>>()?;
        Ok((indexes, visible.overlays))
    }

    /// The actions FDB5's control files close this database to (`list`, `retrieve`, ...).
    pub fn locked_actions(dir: &Path) -> Vec<&'static str> {
        LOCK_FILES.iter().filter(|(_, file)| dir.join(file).exists()).map(|(action, _)| *action).collect()
    }
}

/// Index files open, by path.
#[derive(Default)]
pub struct IndexFiles(HashMap<PathBuf, Arc<File>>);

impl IndexFiles {
    fn open(&mut self, path: &Path) -> Result<Arc<File>> {
        if let Some(file) = self.0.get(path) {
            return Ok(file.clone());
        }
        let file = Arc::new(File::open(path).ctx("open FDB5 index", path)?);
        self.0.insert(path.to_path_buf(), file.clone());
        Ok(file)
    }

    /// Closes the files no index in `used` is in.
    pub fn keep_only<'a>(&mut self, used: impl IntoIterator<Item = &'a Index>) {
        let used: HashSet<&Path> = used.into_iter().map(|index| index.path.as_path()).collect();
        self.0.retain(|path, _| used.contains(path.as_path()));
    }
}

impl Index {
    fn place(visible: VisibleIndex, roots: &[PathBuf]) -> Result<Index> {
        let VisibleIndex { dir, record } = visible;
        let path = beside(&dir, &record.file, "index file")?;
        let mut data_files = BTreeMap::new();
        for (id, location) in &record.data_files {
            let data = if location.contains("://") {
                return Err(Error::new(
                    ErrorKind::Unsupported,
                    format!(
                        "{}: data file {location} is in a store fieldstore does not read in place (it reads FDB5's POSIX files)",
                        dir.join("toc").display()
                    ),
                ));
            } else if Path::new(location).is_absolute() {
                within(roots, location)?
            } else {
                beside(&dir, location, "data file")?
            };
            data_files.insert(*id, data);
        }
        Ok(Index { path, record, data_files })
    }

    /// The index's B-tree, its file opened once in `files` (one index file holds the
    /// B-trees of many flushes).
    pub fn btree(&self, files: &mut IndexFiles) -> Result<BTree> {
        BTree::open(files.open(&self.path)?, &self.path, self.record.offset, &self.record.kind)
    }

    /// The data file and range of a field reference.
    pub fn locate(&self, field: FieldRef) -> Result<(&Path, u64, u64)> {
        let path = self.data_files.get(&field.file).ok_or_else(|| {
            Error::corrupt("FDB5 index", &self.path, format!("a field names data file {} that its TOC record does not list", field.file))
        })?;
        Ok((path, field.offset, field.length))
    }
}

/// A name given in a TOC record for a file beside it: a plain name, never a path elsewhere.
fn beside(dir: &Path, name: &str, what: &str) -> Result<PathBuf> {
    let plain = !name.is_empty() && !name.contains('/') && name != "." && name != "..";
    if plain {
        Ok(dir.join(name))
    } else {
        Err(Error::corrupt("FDB5 TOC", dir.join("toc"), format!("{what} {name:?} is not a plain file name")))
    }
}

/// An absolute path from a TOC record, which must lie in one of `roots` (no `..`).
pub(crate) fn within(roots: &[PathBuf], location: &str) -> Result<PathBuf> {
    let path = Path::new(location);
    let clean = path.components().all(|c| matches!(c, Component::RootDir | Component::Normal(_)));
    if clean && roots.iter().any(|root| path.starts_with(root)) {
        return Ok(path.to_path_buf());
    }
    Err(Error::new(
        ErrorKind::BadConfig,
        format!("FDB5 data file {location} is outside the configured FDB5 roots: fieldstore reads none there"),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_from_records_stay_in_their_place() {
        let dir = Path::new("/fdb/db");
        assert_eq!(beside(dir, "fc:pl:.1.data", "data file").unwrap(), dir.join("fc:pl:.1.data"));
        for bad in ["", "..", "../x.data", "a/b.data", "/etc/passwd"] {
            assert_eq!(beside(dir, bad, "data file").unwrap_err().kind(), ErrorKind::Corrupt, "{bad}");
        }
        let roots = [PathBuf::from("/fdb"), PathBuf::from("/store")];
        assert_eq!(within(&roots, "/store/db/x.data").unwrap(), PathBuf::from("/store/db/x.data"));
        for bad in ["/etc/passwd", "/store/../etc/passwd", "/storex/db/x.data"] {
            assert!(within(&roots, bad).unwrap_err().to_string().contains("outside the configured FDB5 roots"), "{bad}");
        }
    }
}
