//! FDB5's databases as a catalogue: every database under the roots is a data set, its visible
//! indexes (newest first) its indexes, each B-tree's entries its fields. The TOC is read
//! again whenever a reader asks for the indexes, so a reader sees FDB5's writers' flushes as
//! FDB5's own readers do. Every change is refused.

use std::collections::hash_map::Entry;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::ffi::OsString;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use fieldstore_core::backend::{CatalogueFiles, CatalogueUsage, DatasetFiles, Overlays, Roots, Unused};
use fieldstore_core::error::{Error, ErrorKind, IoContext, Result};
use fieldstore_core::schema::Schema;
use fieldstore_core::{AxisValues, Catalogue, CatalogueWriter, ControlAction, DatasetView, FieldLocation, IndexInfo, Key};

use crate::btree::{BTree, FieldRef};
use crate::config::{allowed_dirs, Root};
use crate::database::{Database, Index, IndexFiles};
use crate::store::read_only;
use crate::toc::{read_key, Fdb5Key, TocLog};

/// The catalogue side of FDB5's databases under some roots.
pub struct Fdb5Catalogue {
    roots: Vec<Root>,
    /// The roots' directories.
    paths: Vec<PathBuf>,
    /// What data files must lie under ([`allowed_dirs`]).
    allowed: Vec<PathBuf>,
    /// Where each database listed so far is.
    known: Mutex<HashMap<Key, PathBuf>>,
}

fn to_key(key: &Fdb5Key) -> Key {
    Key::from_pairs(key.iter().map(|(k, v)| (k.as_str(), v.as_str())))
}

impl Fdb5Catalogue {
    /// A catalogue of the databases directly under `roots`.
    pub fn new(roots: Vec<Root>) -> Self {
        let paths: Vec<PathBuf> = roots.iter().map(|r| r.path.clone()).collect();
        Fdb5Catalogue { allowed: allowed_dirs(&paths), roots, paths, known: Mutex::new(HashMap::new()) }
    }

    /// Every database directory under the roots with its key; a root that is missing holds
    /// none (FDB5 passes over it too; tools say so, [`Roots::check_exists`]).
    fn scan(&self) -> Result<Vec<(Key, PathBuf)>> {
        let mut found = Vec::new();
        for root in &self.paths {
            let entries = match std::fs::read_dir(root) {
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
                entries => entries.ctx("read FDB5 root", root)?,
            };
            let mut dirs: Vec<PathBuf> = entries.filter_map(|e| e.ok()).map(|e| e.path()).filter(|p| p.join("toc").is_file()).collect();
            dirs.sort();
            for dir in dirs {
                // A database FDB5 is creating is not one yet.
                if let Some(key) = read_key(&dir.join("toc"))? {
                    found.push((to_key(&key), dir));
                }
            }
        }
        Ok(found)
    }

    /// A database's directory: as listed before, else where FDB5 names it (the key's values
    /// joined by `:`) in the first root that holds it with that key. No root is listed for
    /// it: a data set FDB5 does not hold costs a lookup per root.
    fn dir_of(&self, dataset: &Key) -> Result<Option<PathBuf>> {
        if let Some(dir) = self.known.lock().unwrap_or_else(|p| p.into_inner()).get(dataset) {
            if dir.join("toc").is_file() {
                return Ok(Some(dir.clone()));
            }
        }
        let name = dataset.values().collect::<Vec<_>>().join(":");
        if name.contains('/') || name.starts_with('.') {
            return Ok(None);
        }
        for root in &self.paths {
            let dir = root.join(&name);
            if dir.join("toc").is_file() && read_key(&dir.join("toc"))?.is_some_and(|key| to_key(&key) == *dataset) {
                self.known.lock().unwrap_or_else(|p| p.into_inner()).insert(dataset.clone(), dir.clone());
                return Ok(Some(dir));
            }
        }
        Ok(None)
    }
}

impl Catalogue for Fdb5Catalogue {
    fn writer(&self) -> Result<Box<dyn CatalogueWriter>> {
        Err(read_only("archive"))
    }

    fn datasets(&self) -> Result<Vec<Key>> {
        let found = self.scan()?;
        let mut known = self.known.lock().unwrap_or_else(|p| p.into_inner());
        known.clear();
        let mut keys = Vec::new();
        for (key, dir) in found {
            // The same database in two roots: FDB5 reads the first (it refuses to write either).
            if let Entry::Vacant(slot) = known.entry(key) {
                keys.push(slot.key().clone());
                slot.insert(dir);
            }
        }
        Ok(keys)
    }

    fn open(&self, dataset: &Key) -> Result<Option<Box<dyn DatasetView>>> {
        let Some(dir) = self.dir_of(dataset)? else { return Ok(None) };
        Ok(Some(Box::new(Fdb5View::open(dir, self.allowed.clone())?)))
    }

    fn wipe_dataset(&self, dataset: &Key) -> Result<()> {
        Err(read_only(&format!("wiping {dataset}")))
    }

    fn locks(&self, dataset: &Key) -> Result<BTreeSet<ControlAction>> {
        let Some(dir) = self.dir_of(dataset)? else { return Ok(BTreeSet::new()) };
        let locked = Database::locked_actions(&dir);
        let mut locks: BTreeSet<ControlAction> = ControlAction::ALL.into_iter().filter(|a| locked.contains(&a.name())).collect();
        // What the flags of the database's root deny.
        for root in self.roots.iter().filter(|r| dir.starts_with(&r.path)) {
            locks.extend(root.denied.iter().copied());
        }
        Ok(locks)
    }

    fn set_lock(&self, dataset: &Key, action: ControlAction, _locked: bool) -> Result<()> {
        Err(read_only(&format!("{} lock of {dataset}", action.name())))
    }

    fn root(&self) -> Option<&dyn Roots> {
        Some(self)
    }

    fn own_files(&self) -> Option<&dyn CatalogueFiles> {
        Some(self)
    }

    fn locations(&self, dataset: &Key) -> Result<Vec<String>> {
        Ok(self.dir_of(dataset)?.into_iter().map(|d| d.display().to_string()).collect())
    }

    fn describe(&self, dataset: &Key) -> String {
        match self.dir_of(dataset) {
            Ok(Some(dir)) => format!("FDB5 database {}, read in place", dir.display()),
            Ok(None) => format!("no FDB5 database {dataset}"),
            Err(e) => e.report().to_string(),
        }
    }
}

impl Roots for Fdb5Catalogue {
    /// FDB5's roots are there (of several, one is enough, as FDB5 passes over missing ones).
    fn check_exists(&self) -> Result<()> {
        if self.paths.iter().any(|root| root.is_dir()) {
            return Ok(());
        }
        let roots: Vec<String> = self.paths.iter().map(|r| r.display().to_string()).collect();
        Err(Error::new(ErrorKind::NotFound, format!("no FDB5 root is there: {}", roots.join(", "))))
    }

    /// None: FDB5's roots are read, never made (a config's roots are the POSIX catalogue's
    /// too, which makes them).
    fn create_missing(&self) -> Result<Vec<String>> {
        Ok(Vec::new())
    }
}

/// A reader's view of one FDB5 database.
struct Fdb5View {
    dir: PathBuf,
    roots: Vec<PathBuf>,
    schema: Schema,
    dataset: Key,
    /// Its TOC, read on at each request.
    toc: TocLog,
    /// The visible indexes as last read, by id.
    indexes: HashMap<String, (Arc<IndexInfo>, Arc<Index>)>,
    btrees: HashMap<String, Arc<BTree>>,
    index_files: IndexFiles,
    /// Data files as last seen, which fields' ranges are checked against. By their paths'
    /// bytes: hashed at once, where a `Path` is hashed component by component.
    data_files: HashMap<OsString, DataFile>,
    /// The databases overlaid onto this one (`fdb-overlay`), as last read.
    overlaid: Vec<Key>,
}

impl Fdb5View {
    fn open(dir: PathBuf, roots: Vec<PathBuf>) -> Result<Fdb5View> {
        let schema_path = dir.join("schema");
        let text = std::fs::read_to_string(&schema_path).ctx("read FDB5 database schema", &schema_path)?;
        let schema = Schema::parse(&schema_path.display().to_string(), &text)?;
        let key = read_key(&dir.join("toc"))?
            .ok_or_else(|| Error::new(ErrorKind::NotFound, format!("{}: FDB5 is creating this database", dir.display())))?;
        let dataset = to_key(&key);
        let toc = TocLog::new(dir.join("toc"));
        Ok(Fdb5View {
            dir,
            roots,
            schema,
            dataset,
            toc,
            indexes: HashMap::new(),
            btrees: HashMap::new(),
            index_files: IndexFiles::default(),
            data_files: HashMap::new(),
            overlaid: Vec::new(),
        })
    }

    /// The keys of the databases whose TOCs are overlaid onto this one: each must be in a root
    /// of the config, where the catalogue finds it by its key.
    fn overlaid_keys(&self, tocs: &[PathBuf]) -> Result<Vec<Key>> {
        let mut keys = Vec::with_capacity(tocs.len());
        for toc in tocs {
            let dir = toc.parent().unwrap_or(toc);
            if !dir.parent().is_some_and(|root| self.roots.iter().any(|r| r == root)) {
                return Err(Error::new(
                    ErrorKind::Unsupported,
                    format!(
                        "{}: the database overlaid onto it (fdb-overlay), {}, is in no root of this config",
                        self.dir.display(),
                        dir.display()
                    ),
                ));
            }
            // One being created shows nothing yet.
            keys.extend(read_key(toc)?.map(|key| to_key(&key)));
        }
        Ok(keys)
    }

    /// The element keywords of an index: those of the element rule under its database and
    /// index keys whose keywords its axes name, in the schema's order (the order of the
    /// values in its B-tree's keys).
    fn element_keywords(&self, index: &Index, collocation: &Key) -> Result<Vec<String>> {
        let paths = self.schema.paths_for(&self.dataset, Some(collocation));
        let axes = &index.record.axes;
        let names_the_axes = |rule: &fieldstore_core::schema::Rule| {
            rule.key_keywords().count() == axes.len() && rule.key_keywords().all(|k| axes.contains_key(k))
        };
        let rule = paths.iter().find(|path| names_the_axes(path.levels[2])).or(paths.first()).ok_or_else(|| {
            let reason = format!("no rule of the database's schema takes index key {collocation}");
            Error::corrupt("FDB5 index record", &index.path, reason)
        })?;
        Ok(rule.levels[2].key_keywords().map(String::from).collect())
    }

    fn info(&self, id: &str, index: &Index) -> Result<IndexInfo> {
        let collocation = to_key(&index.record.key);
        let element_keywords = self.element_keywords(index, &collocation)?;
        let axes: BTreeMap<Arc<str>, AxisValues> = index
            .record
            .axes
            .iter()
            .map(|(k, values)| (Arc::from(k.as_str()), AxisValues::new(values.iter().map(String::as_str))))
            .collect();
        // FDB5 records no count: at most one field per combination of the axes' values.
        let fields = element_keywords.iter().map(|k| axes.get(k.as_str()).map_or(1, |a| a.len() as u64)).fold(1u64, u64::saturating_mul);
        Ok(IndexInfo { id: id.to_string(), collocation: Arc::new(collocation), element_keywords: element_keywords.into(), axes, fields })
    }

    fn index(&self, info: &IndexInfo) -> Result<Arc<Index>> {
        match self.indexes.get(&info.id) {
            Some((_, index)) => Ok(index.clone()),
            None => Err(Error::new(ErrorKind::NotFound, format!("index {} is not visible in {}", info.id, self.dir.display()))),
        }
    }

    fn btree(&mut self, info: &IndexInfo) -> Result<(Arc<Index>, Arc<BTree>)> {
        let index = self.index(info)?;
        if let Some(tree) = self.btrees.get(&info.id) {
            return Ok((index, tree.clone()));
        }
        let tree = Arc::new(index.btree(&mut self.index_files)?);
        self.btrees.insert(info.id.clone(), tree.clone());
        Ok((index, tree))
    }

    /// A field's location, its range checked against its data file's size: the length read
    /// from a damaged index would otherwise size the reader's buffer.
    fn location(&mut self, index: &Index, field: FieldRef) -> Result<FieldLocation> {
        let (path, offset, length) = index.locate(field)?;
        // Both are at most i64::MAX (checked as read).
        let end = offset + length;
        let (size, uri) = match self.data_files.get(path.as_os_str()) {
            Some(file) if file.size >= end => (file.size, file.uri.clone()),
            // Unknown, or the file has grown since (FDB5 appends to it).
            known => {
                let uri = known.map_or_else(|| Arc::from(path.display().to_string()), |file| file.uri.clone());
                match std::fs::metadata(path) {
                    Ok(meta) => {
                        self.data_files.insert(path.as_os_str().to_owned(), DataFile { size: meta.len(), uri: uri.clone() });
                        (meta.len(), uri)
                    }
                    // A missing data file's fields are listed as FDB5 lists them (without
                    // reading data); reading them fails naming the file.
                    Err(e) if e.kind() == std::io::ErrorKind::NotFound => (end, uri),
                    Err(e) => return Err(e).ctx("stat FDB5 data file", path),
                }
            }
        };
        if end > size {
            let reason =
                format!("a field of {length} bytes at offset {offset} runs past the end of data file {} ({size} bytes)", path.display());
            return Err(Error::corrupt("FDB5 index", &index.path, reason));
        }
        Ok(FieldLocation { uri, offset, length, crc32c: None })
    }
}

/// A data file as last seen: its size, and its URI, which its fields' locations share.
struct DataFile {
    size: u64,
    uri: Arc<str>,
}

/// An index's id: its file and the B-tree's offset (what FDB5's masks name too).
fn index_id(index: &Index) -> String {
    format!("{}@{}", index.record.file, index.record.offset)
}

impl DatasetView for Fdb5View {
    fn schema_text(&self) -> &str {
        self.schema.text()
    }

    fn indexes(&mut self) -> Result<Vec<Arc<IndexInfo>>> {
        let (indexes, overlays) = Database::indexes(&self.dir, &mut self.toc, &self.roots)?;
        self.overlaid = self.overlaid_keys(&overlays)?;
        let mut visible = Vec::with_capacity(indexes.len());
        let mut now = HashMap::with_capacity(indexes.len());
        for index in indexes {
            let id = index_id(&index);
            let info = match self.indexes.remove(&id) {
                Some((info, _)) => info,
                None => Arc::new(self.info(&id, &index)?),
            };
            visible.push(info.clone());
            now.insert(id, (info, Arc::new(index)));
        }
        self.btrees.retain(|id, _| now.contains_key(id));
        self.index_files.keep_only(now.values().map(|(_, index)| index.as_ref()));
        self.indexes = now;
        Ok(visible)
    }

    fn lookup(&mut self, info: &IndexInfo, element: &Key) -> Result<Option<FieldLocation>> {
        let values: Option<Vec<&str>> = info.element_keywords.iter().map(|k| element.get(k)).collect();
        let Some(values) = values else { return Ok(None) };
        let (index, tree) = self.btree(info)?;
        tree.lookup(&values.join(":"))?.map(|field| self.location(&index, field)).transpose()
    }

    fn entries(&mut self, info: &IndexInfo) -> Result<Vec<(Key, FieldLocation)>> {
        let (index, tree) = self.btree(info)?;
        let mut out = Vec::new();
        for (fingerprint, field) in tree.entries()? {
            let values: Vec<&str> = fingerprint.split(':').collect();
            if values.len() != info.element_keywords.len() {
                let reason = format!("key {fingerprint:?} has {} values for keywords {:?}", values.len(), info.element_keywords);
                return Err(Error::corrupt("FDB5 index", &index.path, reason));
            }
            out.push((Key::from_pairs(info.element_keywords.iter().zip(values)), self.location(&index, field)?));
        }
        Ok(out)
    }

    fn mask(&mut self, _indexes: &[&IndexInfo], _unused: Unused) -> Result<Vec<String>> {
        Err(read_only(&format!("purging {}", self.dir.display())))
    }

    fn overlays(&mut self) -> Option<&mut dyn Overlays> {
        Some(self)
    }
}

/// FDB5's overlays are read in place; FDB5's `fdb-overlay` makes and removes them.
impl Overlays for Fdb5View {
    fn overlaid(&self) -> &[Key] {
        &self.overlaid
    }

    fn set_overlay(&mut self, _source: &Key, _shown: bool) -> Result<()> {
        Err(read_only(&format!("overlaying onto {}", self.dir.display())))
    }
}

/// What a database's directory holds, as FDB5's `fdb-stats` counts it: its TOC's records and
/// the sizes of its TOC files (the TOC and its sub-TOCs), schema, index files and the data
/// files in it (FDB5's "owned" data files).
impl CatalogueFiles for Fdb5Catalogue {
    fn usage(&self, dataset: &Key) -> Result<Option<CatalogueUsage>> {
        let Some(dir) = self.dir_of(dataset)? else { return Ok(None) };
        let records = crate::toc::read_records(&dir.join("toc"))?.len() as u64;
        let (mut toc, mut schema, mut index, mut data) = (0u64, 0u64, (0u64, 0u64), (0u64, 0u64));
        for entry in std::fs::read_dir(&dir).ctx("read FDB5 database", &dir)? {
            let entry = entry.ctx("read FDB5 database", &dir)?;
            let name = entry.file_name().to_string_lossy().into_owned();
            let size = entry.metadata().ctx("stat", entry.path())?.len();
            let add = |(count, bytes): &mut (u64, u64)| {
                *count += 1;
                *bytes = bytes.saturating_add(size);
            };
            match name.as_str() {
                n if n == "toc" || n.starts_with("toc.") => toc = toc.saturating_add(size),
                "schema" => schema = size,
                n if n.ends_with(".index") => add(&mut index),
                n if n.ends_with(".data") => add(&mut data),
                _ => {}
            }
        }
        Ok(Some(CatalogueUsage {
            records: Some(records),
            record_bytes: Some(toc),
            schema_bytes: Some(schema),
            index_files: Some(index.0),
            index_bytes: Some(index.1),
            data_files: Some(data.0),
            data_bytes: Some(data.1),
        }))
    }

    /// None: fieldstore never removes a file of FDB5's databases (their wipe is refused), so a
    /// wipe's dry run names none either.
    fn files(&self, _dataset: &Key) -> Result<DatasetFiles> {
        Ok(DatasetFiles::default())
    }
}
