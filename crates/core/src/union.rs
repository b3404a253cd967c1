//! Catalogues and stores read beside the configured ones, never written (a config's
//! `read_also:`): FDB5's databases read in place beside fieldstore's own data sets. Requests
//! see the data sets of all of them; archives, locks, wipes and purges go to the configured
//! catalogue and store alone, and are refused for a data set that one read beside holds.
//!
//! A data set several of them hold is one view: the configured catalogue's indexes first
//! (fieldstore's own fields are the newer), then each other's in config order. A read goes to
//! the store that claims the location's URI ([`Store::claims_uri`]), else the configured one.

use std::collections::{BTreeSet, HashMap};
use std::sync::Arc;

use crate::backend::{
    Catalogue, CatalogueFiles, CatalogueRecovery, CatalogueUsage, CatalogueWriter, CommitSource, ControlAction, DatasetFiles, DatasetView,
    FieldLocation, IndexInfo, Overlays, RelativeUris, Roots, SideObjects, StartedRead, Store, StoreWriter, Unused,
};
use crate::error::{Error, ErrorKind, Result};
use crate::key::Key;

/// The configured catalogue and those read beside it.
pub struct UnionCatalogue {
    main: Box<dyn Catalogue>,
    beside: Vec<Box<dyn Catalogue>>,
}

/// The configured store and those read beside it.
pub struct UnionStore {
    main: Box<dyn Store>,
    beside: Vec<Box<dyn Store>>,
}

impl UnionCatalogue {
    /// `main`, with `beside` read too.
    pub fn new(main: Box<dyn Catalogue>, beside: Vec<Box<dyn Catalogue>>) -> Self {
        UnionCatalogue { main, beside }
    }

    /// Refuses a change to a data set a catalogue read beside holds.
    fn refuse_if_beside(&self, dataset: &Key, change: &str) -> Result<()> {
        for catalogue in self.beside.iter() {
            if catalogue.open(dataset)?.is_some() {
                return Err(Error::new(
                    ErrorKind::Unsupported,
                    format!("{change} {dataset}: it is in {}, which fieldstore reads but never changes", catalogue.describe(dataset)),
                ));
            }
        }
        Ok(())
    }
}

impl Catalogue for UnionCatalogue {
    fn writer(&self) -> Result<Box<dyn CatalogueWriter>> {
        self.main.writer()
    }

    fn datasets(&self) -> Result<Vec<Key>> {
        // The configured catalogue's place is made by the first archive: until then, the
        // data sets read beside are all there is (and a place read beside that is not there
        // holds none).
        let mut all = match self.main.datasets() {
            Err(_) if self.main.root().is_some_and(|root| root.check_exists().is_err()) => Vec::new(),
            found => found?,
        };
        let mut seen: BTreeSet<Key> = all.iter().cloned().collect();
        for catalogue in self.beside.iter().filter(|c| c.root().is_none_or(|root| root.check_exists().is_ok())) {
            all.extend(catalogue.datasets()?.into_iter().filter(|d| seen.insert(d.clone())));
        }
        Ok(all)
    }

    fn open(&self, dataset: &Key) -> Result<Option<Box<dyn DatasetView>>> {
        let main = self.main.open(dataset)?;
        let holds_it = main.is_some();
        let mut views: Vec<Box<dyn DatasetView>> = main.into_iter().collect();
        for catalogue in self.beside.iter() {
            views.extend(catalogue.open(dataset)?);
        }
        match views.len() {
            0 => Ok(None),
            // The configured catalogue's alone; one read beside is wrapped, so that nothing
            // changes it (masks and overlays are refused).
            1 if holds_it => Ok(views.pop()),
            _ => Ok(Some(Box::new(UnionView::new(dataset, views, holds_it)?))),
        }
    }

    fn schema_text(&self, dataset: &Key) -> Result<Option<String>> {
        if let Some(text) = self.main.schema_text(dataset)? {
            return Ok(Some(text));
        }
        for catalogue in self.beside.iter() {
            if let Some(text) = catalogue.schema_text(dataset)? {
                return Ok(Some(text));
            }
        }
        Ok(None)
    }

    fn wipe_dataset(&self, dataset: &Key) -> Result<()> {
        self.refuse_if_beside(dataset, "wiping")?;
        self.main.wipe_dataset(dataset)
    }

    fn locks(&self, dataset: &Key) -> Result<BTreeSet<ControlAction>> {
        let mut locks = self.main.locks(dataset)?;
        for catalogue in self.beside.iter() {
            locks.extend(catalogue.locks(dataset)?);
        }
        Ok(locks)
    }

    fn set_lock(&self, dataset: &Key, action: ControlAction, locked: bool) -> Result<()> {
        self.refuse_if_beside(dataset, &format!("setting the {} lock of", action.name()))?;
        self.main.set_lock(dataset, action, locked)
    }

    /// Those of each catalogue holding it.
    fn locations(&self, dataset: &Key) -> Result<Vec<String>> {
        let mut out = Vec::new();
        for catalogue in std::iter::once(&self.main).chain(self.beside.iter()) {
            out.extend(catalogue.locations(dataset)?);
        }
        Ok(out)
    }

    fn describe(&self, dataset: &Key) -> String {
        let mut places = Vec::new();
        for catalogue in std::iter::once(&self.main).chain(self.beside.iter()) {
            if let Ok(Some(_)) = catalogue.open(dataset) {
                places.push(catalogue.describe(dataset));
            }
        }
        if places.is_empty() {
            self.main.describe(dataset)
        } else {
            places.join("; and ")
        }
    }

    fn root(&self) -> Option<&dyn Roots> {
        Some(self)
    }

    fn recovery(&self) -> Option<&dyn CatalogueRecovery> {
        self.main.recovery()
    }

    fn own_files(&self) -> Option<&dyn CatalogueFiles> {
        Some(self)
    }
}

/// What each catalogue holding a data set keeps for it, added up; a wipe names the
/// configured catalogue's files (it alone changes).
impl CatalogueFiles for UnionCatalogue {
    fn usage(&self, dataset: &Key) -> Result<Option<CatalogueUsage>> {
        let mut total: Option<CatalogueUsage> = None;
        for catalogue in std::iter::once(&self.main).chain(self.beside.iter()) {
            if let Some(usage) = catalogue.own_files().map(|f| f.usage(dataset)).transpose()?.flatten() {
                match &mut total {
                    Some(total) => total.add(&usage),
                    None => total = Some(usage),
                }
            }
        }
        Ok(total)
    }

    fn files(&self, dataset: &Key) -> Result<DatasetFiles> {
        self.main.own_files().map_or_else(|| Ok(DatasetFiles::default()), |f| f.files(dataset))
    }
}

impl Roots for UnionCatalogue {
    /// The configured catalogue's place may be missing (nothing archived yet) where a
    /// catalogue read beside is there.
    fn check_exists(&self) -> Result<()> {
        let exists = |c: &dyn Catalogue| c.root().is_none_or(|root| root.check_exists().is_ok());
        if self.beside.iter().any(|c| exists(c.as_ref())) {
            return Ok(());
        }
        self.main.root().map_or(Ok(()), |root| root.check_exists())
    }

    /// The configured catalogue's roots: those read beside are never made.
    fn create_missing(&self) -> Result<Vec<String>> {
        self.main.root().map_or(Ok(Vec::new()), |root| root.create_missing())
    }
}

/// One data set held by several catalogues: their indexes in order, each id prefixed by its
/// view's place (`0/`, `1/`, ...) so that ids stay unique.
struct UnionView {
    views: Vec<Box<dyn DatasetView>>,
    /// Whether the first view is the configured catalogue's (the only one changed).
    first_writable: bool,
    /// By prefixed id: the view and the index as that view knows it.
    indexes: HashMap<String, (usize, Arc<IndexInfo>)>,
    /// The data sets overlaid onto it in any of the catalogues, as last read.
    overlaid: Vec<Key>,
}

impl UnionView {
    fn new(dataset: &Key, views: Vec<Box<dyn DatasetView>>, first_writable: bool) -> Result<Self> {
        let schema = views[0].schema_text();
        if views.iter().any(|v| v.schema_text() != schema) {
            return Err(Error::new(
                ErrorKind::Conflict,
                format!("data set {dataset} is held by catalogues read together with different schemas: its fields cannot be read as one"),
            ));
        }
        Ok(UnionView { views, first_writable, indexes: HashMap::new(), overlaid: Vec::new() })
    }

    fn of(&self, index: &IndexInfo) -> Result<(usize, Arc<IndexInfo>)> {
        self.indexes
            .get(&index.id)
            .cloned()
            .ok_or_else(|| Error::new(ErrorKind::NotFound, format!("index {} is not in this view", index.id)))
    }
}

impl DatasetView for UnionView {
    fn schema_text(&self) -> &str {
        self.views[0].schema_text()
    }

    fn indexes(&mut self) -> Result<Vec<Arc<IndexInfo>>> {
        let mut all = Vec::new();
        let mut indexes = HashMap::new();
        self.overlaid.clear();
        for (i, view) in self.views.iter_mut().enumerate() {
            let own = view.indexes()?;
            for source in view.overlays().map(|o| o.overlaid().to_vec()).unwrap_or_default() {
                if !self.overlaid.contains(&source) {
                    self.overlaid.push(source);
                }
            }
            for index in own {
                let id = format!("{i}/{}", index.id);
                let outer = Arc::new(IndexInfo { id: id.clone(), ..(*index).clone() });
                indexes.insert(id, (i, index));
                all.push(outer);
            }
        }
        self.indexes = indexes;
        Ok(all)
    }

    fn lookup(&mut self, index: &IndexInfo, element: &Key) -> Result<Option<FieldLocation>> {
        let (i, inner) = self.of(index)?;
        self.views[i].lookup(&inner, element)
    }

    fn entries(&mut self, index: &IndexInfo) -> Result<Vec<(Key, FieldLocation)>> {
        let (i, inner) = self.of(index)?;
        self.views[i].entries(&inner)
    }

    /// Only the configured catalogue's indexes are hidden: where any other's is asked for,
    /// nothing is (a purge or wipe is never left half done).
    fn mask(&mut self, indexes: &[&IndexInfo], unused: Unused) -> Result<Vec<String>> {
        let mut inner = Vec::with_capacity(indexes.len());
        for index in indexes {
            let (i, found) = self.of(index)?;
            if i != 0 || !self.first_writable {
                return Err(Error::new(
                    ErrorKind::Unsupported,
                    format!("hiding index {}: it is in a catalogue fieldstore reads but never changes; nothing was hidden", index.id),
                ));
            }
            inner.push(found);
        }
        if inner.is_empty() {
            return Ok(Vec::new());
        }
        self.views[0].mask(&inner.iter().map(Arc::as_ref).collect::<Vec<_>>(), unused)
    }

    fn overlays(&mut self) -> Option<&mut dyn Overlays> {
        Some(self)
    }

    fn prefetch(&mut self, indexes: &[&IndexInfo]) -> Result<()> {
        for (i, view) in self.views.iter_mut().enumerate() {
            let inner: Vec<Arc<IndexInfo>> =
                indexes.iter().filter_map(|x| self.indexes.get(&x.id)).filter(|(j, _)| *j == i).map(|(_, found)| found.clone()).collect();
            if !inner.is_empty() {
                view.prefetch(&inner.iter().map(Arc::as_ref).collect::<Vec<_>>())?;
            }
        }
        Ok(())
    }
}

/// Those of every catalogue holding the data set are read; only the configured catalogue's
/// are changed.
impl Overlays for UnionView {
    fn overlaid(&self) -> &[Key] {
        &self.overlaid
    }

    fn set_overlay(&mut self, source: &Key, shown: bool) -> Result<()> {
        let refused =
            || Error::new(ErrorKind::Unsupported, "overlaying: the data set is in a catalogue fieldstore reads but never changes");
        if !self.first_writable {
            return Err(refused());
        }
        self.views[0].overlays().ok_or_else(refused)?.set_overlay(source, shown)?;
        self.indexes().map(drop)
    }
}

impl UnionStore {
    /// `main`, with `beside` read too.
    pub fn new(main: Box<dyn Store>, beside: Vec<Box<dyn Store>>) -> Self {
        UnionStore { main, beside }
    }

    /// The store whose URI `uri` is.
    fn of(&self, uri: &str) -> &dyn Store {
        self.beside.iter().find(|s| s.claims_uri(uri)).map_or(self.main.as_ref(), |s| s.as_ref())
    }
}

impl Store for UnionStore {
    fn writer(&self) -> Result<Box<dyn StoreWriter>> {
        self.main.writer()
    }

    fn read(&self, uri: &str, offset: u64, buf: &mut [u8]) -> Result<()> {
        self.of(uri).read(uri, offset, buf)
    }

    fn read_each_piece(
        &self,
        uri: &str,
        offset: u64,
        buf: &mut [u8],
        piece: usize,
        visit: &mut dyn FnMut(&[u8]) -> Result<()>,
    ) -> Result<()> {
        self.of(uri).read_each_piece(uri, offset, buf, piece, visit)
    }

    fn read_ahead(&self) -> usize {
        self.main.read_ahead()
    }

    fn largest_read(&self) -> u64 {
        self.main.largest_read()
    }

    fn start_read(&self, uri: &str, offset: u64, length: usize, buffer: Vec<u8>) -> Result<Box<dyn StartedRead>> {
        self.of(uri).start_read(uri, offset, length, buffer)
    }

    fn remove(&self, uri: &str) -> Result<bool> {
        self.of(uri).remove(uri)
    }

    fn remove_all(&self, uris: &[String]) -> Result<Vec<bool>> {
        // The configured store's in one call (S3 deletes in bulk); another's URI is refused
        // by its store as one.
        if uris.iter().any(|u| self.beside.iter().any(|s| s.claims_uri(u))) {
            return uris.iter().map(|u| self.remove(u)).collect();
        }
        self.main.remove_all(uris)
    }

    fn wipe_dataset(&self, dataset: &Key) -> Result<()> {
        self.main.wipe_dataset(dataset)
    }

    fn describe(&self, dataset: &Key) -> String {
        self.main.describe(dataset)
    }

    fn relative_uris(&self) -> Option<&dyn RelativeUris> {
        Some(self)
    }

    fn commit_source(&self) -> Option<&dyn CommitSource> {
        self.main.commit_source()
    }

    fn merge_gap(&self) -> u64 {
        self.main.merge_gap()
    }

    /// The configured store's: packings of fields read beside it are kept there too.
    fn side_objects(&self) -> Option<&dyn SideObjects> {
        self.main.side_objects()
    }

    fn claims_uri(&self, uri: &str) -> bool {
        self.beside.iter().any(|s| s.claims_uri(uri)) || self.main.claims_uri(uri)
    }
}

impl RelativeUris for UnionStore {
    fn absolute_uri(&self, uri: &str) -> Result<String> {
        match self.of(uri).relative_uris() {
            Some(relative) => relative.absolute_uri(uri),
            None => Ok(uri.to_string()),
        }
    }
}
