//! `FieldStore`: FDB5's API (archive, flush, retrieve, list, axes, wipe, purge, control, stats,
//! where) over any [`Catalogue`] and [`Store`]: the one handle the CLI, the benchmarks and
//! the bindings use.
//!
//! A `FieldStore` is `Send + Sync` and every call takes `&self`, so one handle serves many
//! threads at once; results are owned (a retrieve's [`DataReader`] holds what it reads
//! from, not a borrow of the handle). Readers share each dataset's view, which refreshes
//! incrementally, behind a lock per dataset. Archiving goes through an [`Archiver`]: the
//! handle keeps one for [`FieldStore::archive`] and [`FieldStore::flush`], and
//! [`FieldStore::archiver`] hands out more, each with its own files, objects and flush (one
//! per writing thread, as independent as writers of several processes).
//!
//! Writes go store first, catalogue second, and `flush` flushes them in that order, so an
//! index never points at bytes that are not durable. Reads resolve a MARS request against
//! each dataset's own schema (the `resolve` module), then read the bytes through
//! [`DataReader`], which merges adjacent byte ranges into single reads and checks every
//! field's checksum.

mod admin;
mod hooks;
mod overlay;
mod read;
mod remote;
mod resolve;

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard};

use serde::{Deserialize, Serialize};

pub use admin::{
    Axes, CompactReport, DatasetCompaction, DatasetDump, HideReport, IndexDump, IndexPurge, PurgeReport, StatsReport, WhereReport,
    WipeReport, MINIMUM_KEYS_TO_CHANGE,
};
pub use hooks::{ArchiveHook, ArchiveHooks, KeptBeside};
pub use overlay::{OverlayOptions, OverlayReport, VARIABLE_KEYS};
pub use read::{DataReader, FieldRewriter};
pub use remote::{
    call, decode_matches, encode_matches, Answering, Need, Operation, Permission, Remote, RemoteArchiver, Scope, NOTHING_ALLOWED_MATCHED,
};
pub use resolve::{FieldEntry, ListOptions, Matches};

use crate::backend::{Catalogue, CatalogueWriter, ControlAction, DatasetView, FieldLocation, Store, StoreWriter};
use crate::error::{Error, ErrorKind, Result};
use crate::key::Key;
use crate::recent::RecentList;
use crate::schema::Schema;

/// Counters of one [`Archiver`].
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct ArchiveStats {
    /// Fields stored since the archiver was made, counted at archive (a later failed flush may lose some).
    pub fields_archived: u64,
    /// The bytes of those fields, summed.
    pub bytes_archived: u64,
    /// Flushes that succeeded.
    pub flushes: u64,
    /// What the handle's [`ArchiveHooks`] kept beside the fields flushed (extraction's
    /// packings), if it has any.
    #[serde(default)]
    pub kept_beside: KeptBeside,
}

/// A dataset's read view, shared by the threads that read it (each refreshes it in turn).
type SharedView = Arc<Mutex<Box<dyn DatasetView>>>;

/// Locks a mutex, also after a thread panicked while holding it: every structure behind
/// one is consistent between calls (views refresh from the catalogue; caches only grow).
fn lock<T: ?Sized>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// What the handle and its archivers share.
struct Shared {
    /// The configured schema: used to find the dataset of a new identifier.
    schema: Arc<Schema>,
    catalogue: Box<dyn Catalogue>,
    /// Shared with the readers retrieves hand out.
    store: Arc<dyn Store>,
    /// Parsed schemas by text, so datasets sharing a schema share one parse.
    schemas: Mutex<HashMap<String, Arc<Schema>>>,
    /// Read views kept between requests (each refreshes incrementally).
    views: Mutex<HashMap<Key, SharedView>>,
}

/// The handle: see the module documentation.
pub struct FieldStore {
    shared: Arc<Shared>,
    /// The archiver of [`FieldStore::archive`] and [`FieldStore::flush`], made at the first
    /// archive.
    archiver: Mutex<Option<Archiver>>,
    /// What sets the keys of fields read through an overlay ([`FieldRewriter`]).
    rewriter: Option<Arc<dyn FieldRewriter>>,
    /// What its archivers keep beside the fields they store ([`ArchiveHooks`]).
    archive_hooks: Option<Arc<dyn ArchiveHooks>>,
    /// Whether requests leave out data sets that cannot be read (FDB5's `--ignore-errors`).
    skip_unreadable: bool,
    /// The data sets left out so, and why, until taken.
    skipped: Mutex<Vec<String>>,
}

/// One writer: the files or objects it appends to and the entries it has yet to publish.
/// What it archives becomes visible at its [`Archiver::flush`]; dropping it without a flush
/// leaves its fields unpublished. `Send`: it may move to the thread that archives.
pub struct Archiver {
    writing: Writing,
    stats: ArchiveStats,
}

/// Where an [`Archiver`] writes.
enum Writing {
    /// Into the configured catalogue and store.
    Local(LocalArchiver),
    /// Through a server ([`Remote`]), which writes into its own.
    Remote(RemoteWriting),
}

/// An [`Archiver`] sending fields to a server. It checks here what a local archiver checks
/// at archive (the identifier against the server's schema, the data set's archive lock once
/// per data set), so those errors come at once, not from the flush.
struct RemoteWriting {
    shared: Arc<Shared>,
    fields: Box<dyn RemoteArchiver>,
    split_memo: crate::schema::SplitMemo,
    /// Data sets whose lock was checked (once per archiver, as a local one does; the server
    /// checks again at each flush's request).
    checked: RecentList<Key>,
}

impl RemoteWriting {
    fn archive(&mut self, identifier: &Key, data: &[u8]) -> Result<()> {
        let split = self.shared.schema.split_remembering(identifier, &mut self.split_memo)?;
        if self.checked.find(|d| *d == *split.dataset).is_none() {
            check_archive_lock(self.shared.catalogue.as_ref(), &split.dataset).map_err(|e| self.discard_if_lost(e))?;
            self.checked.push(Key::clone(&split.dataset));
        }
        // An error of the stream itself: the server dropped the request, with every field
        // since the last flush.
        self.fields.archive(identifier, data).map_err(|e| self.discard(e))
    }

    /// After an error of the connection, the fields sent since the last flush may or may not
    /// have reached the server: as a local archiver after a failed write, none of them is
    /// ever published. A refusal of this field alone (its key, a lock) keeps them.
    fn discard_if_lost(&mut self, cause: Error) -> Error {
        if matches!(cause.kind(), ErrorKind::BadRequest | ErrorKind::Locked | ErrorKind::Denied) {
            return cause;
        }
        self.discard(cause)
    }

    /// Drops every field since the last flush: none will be published.
    fn discard(&mut self, cause: Error) -> Error {
        self.fields.discard();
        Error::caused_by(
            cause.kind(),
            "this field and those archived since the last flush were not stored and must be archived again",
            cause,
        )
    }

    fn flush(&mut self) -> Result<()> {
        self.fields.flush()
    }
}

/// An error if `dataset` is locked for archiving.
fn check_archive_lock(catalogue: &dyn Catalogue, dataset: &Key) -> Result<()> {
    if catalogue.locks(dataset)?.contains(&ControlAction::Archive) {
        return Err(Error::Locked { dataset: dataset.to_string(), action: "archive".into() });
    }
    Ok(())
}

/// An [`Archiver`] writing into the configured catalogue and store.
struct LocalArchiver {
    shared: Arc<Shared>,
    store: Box<dyn StoreWriter>,
    catalogue: Box<dyn CatalogueWriter>,
    /// The configured schema's last split (consecutive fields mostly differ in element values).
    split_memo: crate::schema::SplitMemo,
    /// Datasets this archiver writes into, with the schema they were created with.
    writing: RecentList<(Key, Arc<Schema>)>,
    /// Fields archived since the last successful flush.
    pending_fields: u64,
    /// What keeps something beside each field ([`ArchiveHooks`]).
    hook: Option<Box<dyn ArchiveHook>>,
}

impl FieldStore {
    /// A handle over a catalogue and a store; `schema` splits the identifiers of new datasets.
    pub fn new(schema: Schema, catalogue: Box<dyn Catalogue>, store: Box<dyn Store>) -> Self {
        let shared = Shared {
            schema: Arc::new(schema),
            catalogue,
            store: Arc::from(store),
            schemas: Mutex::new(HashMap::new()),
            views: Mutex::new(HashMap::new()),
        };
        FieldStore {
            shared: Arc::new(shared),
            archiver: Mutex::new(None),
            rewriter: None,
            archive_hooks: None,
            skip_unreadable: false,
            skipped: Mutex::new(Vec::new()),
        }
    }

    /// The handle with requests leaving out the data sets they name that cannot be read
    /// (damaged, found in two roots) instead of failing, as FDB5's tools do with
    /// `--ignore-errors`: each is noted, with why, for [`FieldStore::take_skipped`]. A data set
    /// whose reading fails once some of its fields were matched still fails the request.
    pub fn skipping_unreadable(mut self) -> Self {
        self.skip_unreadable = true;
        self
    }

    /// The data sets left out since the last call, each with why
    /// ([`FieldStore::skipping_unreadable`]).
    pub fn take_skipped(&self) -> Vec<String> {
        std::mem::take(&mut *lock(&self.skipped))
    }

    /// The handle with `rewriter` setting the keys of the fields it reads through an overlay
    /// ([`FieldStore::overlay`]); without one they are returned as stored.
    pub fn with_field_rewriter(mut self, rewriter: Arc<dyn FieldRewriter>) -> Self {
        self.rewriter = Some(rewriter);
        self
    }

    /// The handle with `hooks` shown every field its archivers store, to keep what they derive
    /// from them beside the data ([`ArchiveHooks`]; not through a server, whose own config
    /// sets its hooks).
    pub fn with_archive_hooks(mut self, hooks: Arc<dyn ArchiveHooks>) -> Self {
        self.archive_hooks = Some(hooks);
        self
    }

    /// An error naming where the store should be if it is not there: for tools, which
    /// refuse to read a store that was never made (most often a mistyped path, or a file
    /// system not mounted).
    pub fn check_exists(&self) -> Result<()> {
        if let Some(remote) = self.remote() {
            return remote::call(remote, Operation::CheckExists);
        }
        match self.shared.catalogue.root() {
            Some(root) => root.check_exists(),
            None => Ok(()),
        }
    }

    /// Makes the catalogue's and the store's roots that are not there (`fieldstore init`):
    /// the roots made, each once. Backends whose places need no making make none.
    pub fn create_roots(&self) -> Result<Vec<String>> {
        if let Some(remote) = self.remote() {
            return remote::call(remote, Operation::CreateRoots);
        }
        let mut made = self.shared.catalogue.root().map_or(Ok(Vec::new()), |root| root.create_missing())?;
        for root in self.shared.store.root().map_or(Ok(Vec::new()), |root| root.create_missing())? {
            if !made.contains(&root) {
                made.push(root);
            }
        }
        Ok(made)
    }

    /// The configured schema.
    pub fn schema(&self) -> &Schema {
        &self.shared.schema
    }

    /// A new archiver, independent of the handle's own and of every other one.
    pub fn archiver(&self) -> Result<Archiver> {
        let writing = match self.remote() {
            Some(remote) => Writing::Remote(RemoteWriting {
                shared: self.shared.clone(),
                fields: remote.archiver()?,
                split_memo: Default::default(),
                checked: RecentList::default(),
            }),
            None => Writing::Local(LocalArchiver::new(self.shared.clone(), self.archive_hooks.as_ref().map(|h| h.hook()))?),
        };
        Ok(Archiver { writing, stats: ArchiveStats::default() })
    }

    /// The bytes at `offset` of `uri` in the store, as they are there: unchecked, and whatever
    /// the locks (a server reading the locations it gave a client, which checks the bytes).
    pub fn read_stored(&self, uri: &str, offset: u64, buf: &mut [u8]) -> Result<()> {
        self.shared.store.read(uri, offset, buf)
    }

    /// The `len` bytes at `offset` of `uri` lent in place, where the store lends them and
    /// that is its faster way ([`crate::backend::MappedReads`]); `None`: [`FieldStore::read_stored`]
    /// them.
    pub fn map_stored(&self, uri: &str, offset: u64, len: usize) -> Result<Option<crate::backend::Mapping>> {
        match self.shared.store.mapped_reads() {
            Some(mapped) => mapped.map(uri, offset, len),
            None => Ok(None),
        }
    }

    /// The gap between two wanted ranges of one stored object below which one read of both
    /// costs less than two ([`Store::merge_gap`]).
    pub fn merge_gap(&self) -> u64 {
        self.shared.store.merge_gap()
    }

    /// The reads the store serves best at once: the one consumed and those it keeps in flight
    /// beyond it ([`Store::read_ahead`]: an object store's `reads_in_flight`).
    pub fn reads_in_flight(&self) -> usize {
        self.shared.store.read_ahead().saturating_add(1)
    }

    /// The store's side objects ([`crate::backend::SideObjects`]): what readers keep beside a
    /// data set's fields. `Unsupported` where the store keeps none (a server's clients, FDB5's
    /// data read on its own).
    pub fn side_objects(&self) -> Result<&dyn crate::backend::SideObjects> {
        self.shared.store.side_objects().ok_or_else(|| {
            Error::new(
                ErrorKind::Unsupported,
                "this store keeps no side objects (extraction's packings): a POSIX, S3, RADOS or DAOS store does",
            )
        })
    }

    /// The server this handle's calls go to, if its catalogue is one's ([`Remote`]): crates
    /// over this API send their own calls there too.
    pub fn remote(&self) -> Option<&dyn Remote> {
        self.shared.catalogue.remote()
    }

    /// Archives one field under a full identifier through the handle's archiver. The field is
    /// stored when this returns and becomes visible at the next [`FieldStore::flush`];
    /// archiving the same identifier again replaces it (the old field stays visible until
    /// then). Threads archiving through one handle take turns; an [`Archiver`] each does not.
    pub fn archive(&self, identifier: &Key, data: &[u8]) -> Result<()> {
        let mut archiver = lock(&self.archiver);
        if archiver.is_none() {
            *archiver = Some(self.archiver()?);
        }
        archiver.as_mut().expect("made above").archive(identifier, data)
    }

    /// Makes everything archived through [`FieldStore::archive`] durable and visible.
    pub fn flush(&self) -> Result<()> {
        match lock(&self.archiver).as_mut() {
            Some(archiver) => archiver.flush(),
            None => Ok(()),
        }
    }

    /// The counters of the handle's archiver.
    pub fn archive_stats(&self) -> ArchiveStats {
        lock(&self.archiver).as_ref().map(|a| a.stats.clone()).unwrap_or_default()
    }

    /// The shared view of a dataset, opened (and recovered) once and kept between calls;
    /// `None` if the dataset does not exist.
    fn view(&self, dataset: &Key) -> Result<Option<SharedView>> {
        if let Some(view) = lock(&self.shared.views).get(dataset) {
            return Ok(Some(view.clone()));
        }
        // Opened without the map's lock: opening may recover a crashed writer's records.
        let Some(view) = self.shared.open_dataset(dataset)? else { return Ok(None) };
        let mut views = lock(&self.shared.views);
        // Another thread may have opened it meanwhile: theirs is kept, so all share one.
        Ok(Some(views.entry(dataset.clone()).or_insert_with(|| Arc::new(Mutex::new(view))).clone()))
    }

    /// Forgets the views of datasets that are no longer stored.
    fn keep_views_of(&self, datasets: &[Key]) {
        lock(&self.shared.views).retain(|k, _| datasets.contains(k));
    }

    fn parse_schema(&self, text: &str, dataset: &Key) -> Result<Arc<Schema>> {
        self.shared.parse_schema(text, dataset)
    }

    fn catalogue(&self) -> &dyn Catalogue {
        self.shared.catalogue.as_ref()
    }

    fn store(&self) -> &dyn Store {
        self.shared.store.as_ref()
    }
}

impl Archiver {
    /// The counters of this archiver.
    pub fn stats(&self) -> &ArchiveStats {
        &self.stats
    }

    /// Archives one field under a full identifier. The field is stored when this returns and
    /// becomes visible at the next [`Archiver::flush`]; archiving the same identifier again
    /// replaces it (the old field stays visible until then). Through a server, the field may
    /// still be on its way; an error about it comes at the latest from the flush.
    pub fn archive(&mut self, identifier: &Key, data: &[u8]) -> Result<()> {
        match &mut self.writing {
            Writing::Local(local) => local.archive(identifier, data)?,
            Writing::Remote(remote) => remote.archive(identifier, data)?,
        }
        self.stats.fields_archived += 1;
        self.stats.bytes_archived += data.len() as u64;
        Ok(())
    }

    /// Indexes a field already stored at `location` (one this handle's store reads) under a
    /// full identifier, writing no data (FDB5's `reindex`): it becomes visible at the next
    /// [`Archiver::flush`], as an archived field does. Returns the data set it goes into.
    /// Reindex with an archiver of its own: fields archived by the same one into the same data
    /// set would share a commit with fields that may carry no checksum, which a crash
    /// recovery could then not check. Not through a server, whose store the fields are not in.
    pub fn reindex(&mut self, identifier: &Key, location: FieldLocation) -> Result<Key> {
        match &mut self.writing {
            Writing::Local(local) => local.reindex(identifier, location),
            Writing::Remote(_) => {
                Err(Error::new(ErrorKind::Unsupported, "a reindex indexes fields of a local store: its sink cannot be a server"))
            }
        }
    }

    /// Makes everything archived through this archiver durable and visible (through a
    /// server: returns once the server has flushed them).
    pub fn flush(&mut self) -> Result<()> {
        match &mut self.writing {
            Writing::Local(local) => self.stats.kept_beside.add(local.flush()?),
            Writing::Remote(remote) => remote.flush()?,
        }
        self.stats.flushes += 1;
        Ok(())
    }
}

impl LocalArchiver {
    fn new(shared: Arc<Shared>, hook: Option<Box<dyn ArchiveHook>>) -> Result<LocalArchiver> {
        Ok(LocalArchiver {
            store: shared.store.writer()?,
            catalogue: shared.catalogue.writer()?,
            shared,
            split_memo: Default::default(),
            writing: RecentList::default(),
            pending_fields: 0,
            hook,
        })
    }

    fn archive(&mut self, identifier: &Key, data: &[u8]) -> Result<()> {
        let (split, schema) = self.split_for_writing(identifier)?;
        let mut location = match self.store.archive(&split.dataset, &split.collocation, data) {
            Ok(location) => location,
            Err(e) => return Err(self.discard_pending(e, "this field and ")),
        };
        // The field's one checksum: stores leave it to core ([`FieldLocation`]).
        location.crc32c = Some(crate::checksum::crc32c(data));
        // Shown to the hook once the catalogue took it (a location copied only where one is).
        let shown = self.hook.as_ref().map(|_| location.clone());
        self.catalogue.archive(&split.dataset, schema.text(), &split.collocation, &split.element, location)?;
        if let (Some(hook), Some(location)) = (&mut self.hook, shown) {
            hook.stored(&split.dataset, &location, data);
        }
        self.pending_fields += 1;
        Ok(())
    }

    fn reindex(&mut self, identifier: &Key, location: FieldLocation) -> Result<Key> {
        let (split, schema) = self.split_for_writing(identifier)?;
        self.catalogue.archive(&split.dataset, schema.text(), &split.collocation, &split.element, location)?;
        self.pending_fields += 1;
        Ok(Key::clone(&split.dataset))
    }

    /// An identifier split by the schema of the data set it goes into (its stored one if it
    /// exists), with that schema.
    fn split_for_writing(&mut self, identifier: &Key) -> Result<(crate::schema::SplitKey, Arc<Schema>)> {
        let configured = &self.shared.schema;
        let split = configured.split_remembering(identifier, &mut self.split_memo)?;
        let schema = self.dataset_schema_for_writing(&split.dataset)?;
        let split = if Arc::ptr_eq(&schema, &self.shared.schema) { split } else { resplit(&schema, identifier, &split.dataset)? };
        Ok((split, schema))
    }

    /// Makes everything archived through this archiver durable and visible: the catalogue
    /// stages its index bytes, the store syncs (with the catalogue's commit records, if the
    /// catalogue offers them and the store can embed them), then the catalogue publishes,
    /// syncing only what the store did not make durable. Then the hook keeps what it made of
    /// the fields, and says what it kept.
    fn flush(&mut self) -> Result<KeptBeside> {
        // Nothing staged is visible, so a failure here loses nothing: entries stay pending.
        let commits = self.catalogue.prepare_flush()?;
        let flushed = match self.store.commit_carrier() {
            Some(carrier) => carrier.flush_with_commits(&commits),
            None => self.store.flush().map(|()| vec![false; commits.len()]),
        };
        let embedded = match flushed {
            Ok(embedded) => embedded,
            Err(e) => return Err(self.discard_pending(e, "")),
        };
        let embedded: Vec<Key> = commits.into_iter().zip(embedded).filter(|(_, e)| *e).map(|(c, _)| c.dataset).collect();
        // A catalogue failure keeps its entries pending: their bytes are durable, and the
        // next flush can still publish them; unless their data set was wiped meanwhile.
        match self.catalogue.flush(&embedded) {
            Err(e) if e.is_wiped() => return Err(self.discard_pending(e, "")),
            other => other?,
        }
        self.pending_fields = 0;
        let side = self.shared.store.side_objects();
        Ok(self.hook.as_mut().map(|hook| hook.flushed(side)).unwrap_or_default())
    }

    /// After a failed store write the bytes of unflushed fields may be incomplete: nothing
    /// pending may ever be published. Both sides forget it; the archiver stays usable.
    /// `also` names what else was lost ("this field and ", or "").
    fn discard_pending(&mut self, cause: Error, also: &str) -> Error {
        self.store.discard();
        self.catalogue.discard();
        if let Some(hook) = &mut self.hook {
            hook.discarded();
        }
        let lost = match (std::mem::take(&mut self.pending_fields), also.is_empty()) {
            (0, false) => "this field was".to_string(),
            (pending, _) => format!("{also}the {pending} field(s) archived since the last flush were"),
        };
        Error::caused_by(cause.kind(), format!("{lost} not stored and must be archived again"), cause)
    }

    /// The schema a dataset is written with: its stored schema if it exists, else the
    /// configured one. Checks the archive lock once per dataset and archiver.
    fn dataset_schema_for_writing(&mut self, dataset: &Key) -> Result<Arc<Schema>> {
        if let Some(i) = self.writing.find(|(d, _)| d == dataset) {
            return Ok(self.writing[i].1.clone());
        }
        let shared = &self.shared;
        check_archive_lock(shared.catalogue.as_ref(), dataset)?;
        // The stored schema alone: a writer needs no view, nor the recovery that opening one
        // for reading begins with.
        let schema = match shared.catalogue.schema_text(dataset)? {
            Some(text) if text != shared.schema.text() => shared.parse_schema(&text, dataset)?,
            _ => shared.schema.clone(),
        };
        self.writing.push((dataset.clone(), schema.clone()));
        Ok(schema)
    }
}

impl Shared {
    /// Opens a dataset for reading, first recovering any records its catalogue lost in a
    /// crash from the commits the store embedded with the data. A reader the file system does
    /// not let write reads without recovering: what a crash lost appears once a process that
    /// may write opens the dataset (after a writer merely killed, nothing is lost).
    fn open_dataset(&self, dataset: &Key) -> Result<Option<Box<dyn DatasetView>>> {
        let Some(recovery) = self.catalogue.recovery() else { return self.catalogue.open(dataset) };
        for session in recovery.sessions_to_recover(dataset)? {
            let commits = match self.store.commit_source() {
                Some(source) => source.embedded_commits(dataset, &session)?,
                None => Vec::new(),
            };
            match recovery.recover(dataset, &session, &commits, &|location| self.is_whole(location)) {
                Err(e) if e.is_write_refused() => break,
                other => other?,
            }
        }
        self.catalogue.open(dataset)
    }

    /// Whether a field's bytes are all in the store, with its checksum. A missing or short
    /// data file is an answer (no), not an error: a power loss can leave either.
    fn is_whole(&self, location: &FieldLocation) -> Result<bool> {
        let Ok(length) = usize::try_from(location.length) else { return Ok(false) };
        let mut bytes = vec![0u8; length];
        match self.store.read(&location.uri, location.offset, &mut bytes) {
            // Recovered records are fieldstore's own: each has its checksum.
            Ok(()) => Ok(Some(crate::checksum::crc32c(&bytes)) == location.crc32c),
            Err(e) if matches!(e.kind(), ErrorKind::Corrupt | ErrorKind::NotFound) => Ok(false),
            Err(e) => Err(e),
        }
    }

    /// A dataset's stored schema, parsed once per text.
    fn parse_schema(&self, text: &str, dataset: &Key) -> Result<Arc<Schema>> {
        if text == self.schema.text() {
            return Ok(self.schema.clone());
        }
        if let Some(s) = lock(&self.schemas).get(text) {
            return Ok(s.clone());
        }
        let schema = Arc::new(Schema::parse(&format!("schema of data set {dataset}"), text)?);
        Ok(lock(&self.schemas).entry(text.to_string()).or_insert(schema).clone())
    }
}

/// Splits an identifier again with a dataset's own schema, which must agree on the
/// dataset key.
fn resplit(schema: &Schema, identifier: &Key, dataset: &Key) -> Result<crate::schema::SplitKey> {
    let split = schema.split(identifier)?;
    if *split.dataset != *dataset {
        return Err(Error::new(
            ErrorKind::BadRequest,
            format!("data set {dataset} was created with a schema that names it {} for identifier {identifier}", split.dataset),
        ));
    }
    Ok(split)
}

/// The seam's promise, checked at compile time: one handle serves many threads, archivers and
/// readers move to the thread that uses them.
const _: () = {
    const fn shared_across_threads<T: Send + Sync>() {}
    const fn moved_across_threads<T: Send>() {}
    shared_across_threads::<FieldStore>();
    moved_across_threads::<Archiver>();
    moved_across_threads::<DataReader>();
};
