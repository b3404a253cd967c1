//! One catalogue for every object store (RADOS, DAOS and S3): the data set list, the
//! data sets' records, their logs, index objects, views, locks and wipes, written once over a
//! small set of object primitives ([`Objects`], [`DatasetObjects`]) that each backend
//! implements in its own terms.
//!
//! ```text
//! the list        dataset key -> ""                        (Objects::set_listed, listed)
//! a data set      record: key, schema, identity, lock/<action>
//!                 log: batches of records, appended whole  (DatasetObjects::append, read_log)
//!                 index objects: entries, written whole     (write_index, read_index)
//! ```
//!
//! Invariants (the consistency argument of docs/rados.md and docs/daos.md):
//! - An index object is written whole, by an exclusive create, before any record names it; it
//!   never changes afterwards, so readers cache it forever.
//! - The log only grows, by appends of whole batches. A flush appends all its records as one
//!   batch, guarded by the data set's identity: concurrent writers' appends are ordered by the
//!   store, and a reader that has read the log up to a position only ever needs what follows.
//! - Records are never changed; hiding indexes (purge, partial wipe) appends a mask record.
//! - `identity` is unique per creation of a data set: a reader that finds another one knows the
//!   data set was wiped and created again, and starts over; a writer's append into a creation
//!   that is gone fails, and its flush says the fields went with it ([`Error::Wiped`]).
//! - A wipe unlists the data set, then removes its record before its index objects: a data set
//!   is whole or absent, never a log naming removed objects.
//! - Before that, a wipe marks the creation it removes ([`wipe_mark`]), then reads its log: a
//!   flush counts as kept only if it landed before the mark (so the wipe came after it), and a
//!   writer never takes a marked creation for the data set but waits for a new one; so a
//!   flush that succeeded after a listing showed the data set gone keeps its fields.
//! - A compaction writes a new index object holding the entries of adjacent indexes of one
//!   collocation (no element in two of them), then appends a record putting it in their place;
//!   the replay ([`LogReplay`]) gives it effect only where that changes nothing a reader sees.
//!   The objects it replaced stay (readers of an earlier position read them) until a wipe.
//!
//! Entries become visible at `flush`, all of an index at once (docs/consistency.md), and
//! `list` reads one object per index.
//!
//! The log's records, what a reader makes of them, and the encoding of index entries are in
//! [`index_log`]: the backends put them in objects of their own kinds.

pub mod index_log;
mod runs;

use std::collections::{BTreeSet, HashMap};
use std::sync::Arc;

use fieldstore_core::backend::{Overlays, Unused};
use fieldstore_core::error::{Error, ErrorKind, Result};
use fieldstore_core::indexing::{PendingIndex, PendingIndexes};
use fieldstore_core::recent::RecentList;
use fieldstore_core::unique::unique_suffix;
use fieldstore_core::{Catalogue, CatalogueWriter, Commit, Compaction, ControlAction, DatasetView, FieldLocation, IndexInfo, Key};

use crate::index_log::{
    compact_record, decode_batch, encode_batch, index_record, mask_record, overlay_record, IndexEntries, LogReplay, Sealing,
};

/// The record value holding the data set's key.
const KEY: &str = "key";
/// The record value holding the data set's schema.
const SCHEMA: &str = "schema";
/// The record value unique per creation of the data set.
const IDENTITY: &str = "identity";
/// The record value holding the version of the data set's formats ([`FORMAT_VERSION`]).
const FORMAT: &str = "format";
/// The record value holding the CRC-32C of its other values (format 3 on: [`record_checksum`]).
const CHECKSUM: &str = "checksum";

/// The version of the formats of a data set's objects (its record, log batches and index
/// objects), kept in its record, which new data sets get. A reader or writer refuses a data
/// set of a version it does not read, by name, rather than misread it. Version 2 added
/// compaction records to the log, which a reader of version 1 would take for damage: only
/// data sets of version 2 on are compacted. Version 3 writes index objects, index entries and
/// log batches in frames with their CRC-32C ([`Sealing`]) and the record with a checksum of
/// its values: a changed byte is damage reported by name.
pub const FORMAT_VERSION: u32 = 3;

/// The first format whose catalogue objects carry checksums.
const CHECKSUMMED_FORMAT: u32 = 3;

/// How a data set of `format` has its catalogue objects written: with checksums from format
/// 3 on, and plain before, so that the fieldstore versions that read those formats still do.
fn sealing_of(format: u32) -> Sealing {
    match format >= CHECKSUMMED_FORMAT {
        true => Sealing::Checksummed,
        false => Sealing::Plain,
    }
}

/// The CRC-32C of a record's format, key and schema, each with its length, as text: the
/// values every creator of a data set writes alike (its identity differs per creator, and a
/// store that sets values one by one, DAOS, keeps the first creator's of each), so a racing or
/// completing creator writes the same checksum.
fn record_checksum(format: &[u8], key: &[u8], schema: &[u8]) -> String {
    let mut e = fieldstore_core::codec::Encoder::new();
    for value in [format, key, schema] {
        e.u32(value.len() as u32);
        e.buf.extend_from_slice(value);
    }
    fieldstore_core::checksum::crc32c(&e.buf).to_string()
}

/// Checks a record's values: it holds `dataset`, and from format 3 on, its checksum matches;
/// `Ok(None)` for a record whose checksum is not written yet (a store that sets values one by
/// one, while its creator writes them).
fn check_record(values: &Values, dataset: &Key, place: &str) -> Result<Option<u32>> {
    let value = |name: &str| values.iter().find(|(k, _)| k == name).map(|(_, v)| v.as_slice());
    let format = check_format(value(FORMAT), dataset, place)?;
    let key = dataset.to_string();
    if value(KEY).is_some_and(|k| k != key.as_bytes()) {
        return Err(Error::corrupt("data set record", place, format!("it does not hold data set {dataset}")));
    }
    if sealing_of(format) == Sealing::Checksummed {
        let Some(checksum) = value(CHECKSUM) else { return Ok(None) };
        let expected =
            record_checksum(value(FORMAT).unwrap_or_default(), value(KEY).unwrap_or_default(), value(SCHEMA).unwrap_or_default());
        if checksum != expected.as_bytes() {
            return Err(Error::corrupt("data set record", place, "checksum mismatch (damaged)"));
        }
    }
    Ok(Some(format))
}

/// A creation of a data set as a writer found or made it.
struct Creation {
    /// Unique per creation.
    identity: Vec<u8>,
    /// Whether its objects carry checksums.
    sealing: Sealing,
}

/// The format versions this crate reads and writes.
const READABLE_FORMATS: std::ops::RangeInclusive<u32> = 1..=FORMAT_VERSION;

/// A record's format version; an error unless this crate reads it ([`READABLE_FORMATS`]).
fn check_format(format: Option<&[u8]>, dataset: &Key, record: &str) -> Result<u32> {
    let version = format.and_then(|f| std::str::from_utf8(f).ok()).and_then(|f| f.parse::<u32>().ok());
    if let Some(version) = version.filter(|v| READABLE_FORMATS.contains(v)) {
        return Ok(version);
    }
    let found = format.map_or_else(|| "(none)".to_string(), |f| String::from_utf8_lossy(f).into_owned());
    Err(Error::new(
        ErrorKind::Unsupported,
        format!(
            "data set {dataset} ({record}): its objects are in format {found}; this fieldstore ({}) reads formats 1 to {FORMAT_VERSION}",
            env!("CARGO_PKG_VERSION")
        ),
    ))
}

fn lock_name(action: ControlAction) -> String {
    format!("lock/{}", action.name())
}

/// The name of the record value a wipe sets on the creation `identity` of a data set before it
/// reads that creation's log and unlists it: from then on no flush into that creation counts
/// as kept ([`DatasetObjects::append_unless`]), and no writer takes it for the data set
/// ([`create_dataset`] waits for the wipe to remove it). Under `lock/`: the only values every
/// store can set after creation (S3's record is immutable); no [`ControlAction`] has this name,
/// and it names the creation, so a mark a wipe left on an earlier creation marks no later one.
pub fn wipe_mark(identity: &[u8]) -> String {
    format!("lock/wiping-{}", String::from_utf8_lossy(identity))
}

/// The value of a [`wipe_mark`]: not empty, because a RADOS comparison takes a missing value
/// for the empty one.
pub const WIPING: &[u8] = b"wiping";

/// How long (ms) a writer waits for a wipe to remove a creation it marked ([`create_dataset`])
/// before it takes the wipe for one that was killed and finishes it itself: a minute, where a
/// running wipe needs four operations from its mark to the record's removal.
static WIPE_PATIENCE_MS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(60_000);

/// For tests: how long a writer waits for a wipe before it finishes it itself.
#[doc(hidden)]
pub fn set_wipe_patience(patience: std::time::Duration) {
    WIPE_PATIENCE_MS.store(patience.as_millis() as u64, std::sync::atomic::Ordering::Relaxed);
}

/// A test's seam ([`set_wipe_pause`]).
type WipePause = Arc<dyn Fn(&Key) + Send + Sync>;
static WIPE_PAUSE: std::sync::RwLock<Option<WipePause>> = std::sync::RwLock::new(None);

/// For tests: `pause` is called by every wipe, with the data set's key, once the wipe has
/// unlisted the data set and before it removes its record and index objects; the wipe goes
/// on when it returns. A test thus puts an archive exactly where a slow wipe would let one in.
#[doc(hidden)]
pub fn set_wipe_pause(pause: Option<WipePause>) {
    *WIPE_PAUSE.write().unwrap_or_else(|p| p.into_inner()) = pause;
}

/// Named values of a data set's record.
pub type Values = Vec<(String, Vec<u8>)>;

/// An object store's primitives for the catalogue as a whole.
pub trait Objects: Send + Sync + 'static {
    /// One data set's objects.
    type Dataset: DatasetObjects;
    /// The objects of `dataset`; `create`: make their place first if the store needs one (a
    /// DAOS container). `None` if there is none (and not `create`).
    fn dataset(&self, dataset: &Key, create: bool) -> Result<Option<Arc<Self::Dataset>>>;
    /// The listed data sets' keys, as text.
    fn listed(&self) -> Result<Vec<String>>;
    /// Where the list is, for messages.
    fn describe_list(&self) -> String;
    /// Lists or unlists a data set (idempotent).
    fn set_listed(&self, dataset: &Key, listed: bool) -> Result<()>;
    /// Removes an unlisted data set: its record first (from then on readers find no data set,
    /// never a log naming removed objects), then the index objects `index_ids`, which its log
    /// named; nothing else of its place, where the data set may be created again meanwhile
    /// (unless the store removes a creation as a whole, as DAOS destroys a container).
    fn remove(&self, dataset: &Key, objects: Option<&Self::Dataset>, index_ids: &[String]) -> Result<()>;
    /// Where a data set's objects are, for humans (`fieldstore where`).
    fn describe(&self, dataset: &Key) -> String;
}

/// An object store's primitives for one data set's objects.
pub trait DatasetObjects: Send + Sync + 'static {
    /// Creates the record with `values` unless there is one: of racing creators one wins, and
    /// a creator killed half-way leaves a record the next one completes.
    fn create_record(&self, values: &[(&str, &[u8])]) -> Result<()>;
    /// The values of `names` the record has; `None` if there is no record.
    fn get(&self, names: &[&str]) -> Result<Option<Values>>;
    /// Sets (or with `None` removes) one value of the record.
    fn set(&self, name: &str, value: Option<&[u8]>) -> Result<()>;
    /// Appends one batch to the log of the record whose identity is `identity`, atomically;
    /// false if there is no such record (wiped, and maybe created again): nothing appended.
    fn append(&self, identity: &[u8], batch: &[u8]) -> Result<bool>;
    /// Appends as [`DatasetObjects::append`] unless the record holds the value `mark` (a wipe
    /// of this creation began: [`wipe_mark`]); false if nothing was appended, or if what was
    /// appended goes with that wipe. Default: the append, then a look at the record: the batch
    /// is kept only if, after it landed, the record was still this creation and unmarked, so
    /// the wipe marked later and reads (and removes) the log after it, which makes the flush
    /// come before the wipe. A store that guards one operation by two values does it at once.
    fn append_unless(&self, identity: &[u8], mark: &str, batch: &[u8]) -> Result<bool> {
        if !self.append(identity, batch)? {
            return Ok(false);
        }
        // The mark first, then the identity: a wipe sets its mark before it reads the log and
        // removes it last, after the record. No mark, then this creation's record still there,
        // means the wipe marks after the batch landed (and reads it), or took nothing of this
        // creation in between. The other order misses a wipe that marked before the batch
        // landed and ended between the two looks.
        match self.get(&[mark])? {
            Some(marks) if marks.is_empty() => {}
            _ => return Ok(false),
        }
        let Some(values) = self.get(&[IDENTITY])? else { return Ok(false) };
        Ok(values.iter().any(|(name, value)| name == IDENTITY && value == identity))
    }
    /// The record's identity and the log's batches after `position` (where an earlier read
    /// ended; 0: the start); `None` if there is no record. A log read in several parts whose
    /// identity changed in between is the new identity with no batches.
    fn read_log(&self, position: u64) -> Result<Option<LogRead>>;
    /// Starts writing a new index object holding `index`'s entries (an exclusive create);
    /// it is invisible until a record names it.
    fn write_index(&self, index: &PendingIndex, sealing: Sealing) -> Result<Box<dyn IndexWrite>>;
    /// The entries of index object `id`.
    fn read_index(&self, id: &str) -> Result<IndexEntries>;
    /// The entries of index objects `ids`, in that order. Default: one after another; a store
    /// with requests in flight together reads them at once.
    fn read_indexes(&self, ids: &[&str]) -> Result<Vec<IndexEntries>> {
        ids.iter().map(|id| self.read_index(id)).collect()
    }
    /// Where the record is, for messages.
    fn describe(&self) -> String;
    /// Where a batch at `position` of the log is, for messages.
    fn describe_position(&self, position: u64) -> String;
}

/// What [`DatasetObjects::read_log`] read.
pub struct LogRead {
    /// The record's identity, unique per creation of the data set.
    pub identity: Vec<u8>,
    /// Whole batches ([`encode_batch`]), oldest first, each with its position.
    pub batches: Vec<(u64, Vec<u8>)>,
    /// Where this read ended: the position of the next.
    pub end: u64,
}

/// An index object being written ([`DatasetObjects::write_index`]).
pub trait IndexWrite: Send {
    /// Waits for the write; the new object's id.
    fn finish(self: Box<Self>) -> Result<String>;
}

/// An index object written when it was started.
pub struct IndexWritten(pub String);

impl IndexWrite for IndexWritten {
    fn finish(self: Box<Self>) -> Result<String> {
        Ok(self.0)
    }
}

/// The catalogue's shared side over an object store: listing, views, locks, wipes.
pub struct ObjectCatalogue<O: Objects> {
    objects: Arc<O>,
}

impl<O: Objects> ObjectCatalogue<O> {
    /// A catalogue over `objects`.
    pub fn new(objects: O) -> Self {
        ObjectCatalogue { objects: Arc::new(objects) }
    }
}

/// One writer: the data sets it archives into.
pub struct ObjectCatalogueWriter<O: Objects> {
    objects: Arc<O>,
    writers: RecentList<DatasetWriter<O::Dataset>>,
}

/// What one writer archived into one data set since its last flush.
struct DatasetWriter<D> {
    dataset: Key,
    objects: Arc<D>,
    /// The data set's identity when this writer found or created it: a flush publishes only
    /// into that creation of the data set.
    identity: Vec<u8>,
    /// Whether that creation's objects carry checksums (its format's).
    sealing: Sealing,
    pending: PendingIndexes,
    /// The index objects of `pending`, in its order, started by `prepare_flush` while the
    /// store's last writes were in flight; empty if not started (yet).
    index_writes: Vec<Box<dyn IndexWrite>>,
    /// A flush found the data set wiped: the next archive creates it again.
    wiped: bool,
}

/// Creates a data set's record (or finds another creator's), lists it, and returns its
/// objects and identity. A record a wipe marked ([`wipe_mark`]) is no data set to write to:
/// the wipe unlisted it or is about to, and removes it with whatever a flush appends to it, so
/// a writer that took it would see its flush succeed and its fields go. The writer waits until
/// the wipe removed it and creates the data set anew; a mark it has seen for longer than
/// [`WIPE_PATIENCE_MS`] is a wipe that was killed, which the writer finishes itself first.
fn create_dataset<O: Objects>(objects: &O, dataset: &Key, schema_text: &str) -> Result<(Arc<O::Dataset>, Creation)> {
    let patience = std::time::Duration::from_millis(WIPE_PATIENCE_MS.load(std::sync::atomic::Ordering::Relaxed));
    let (since, mut pause) = (std::time::Instant::now(), std::time::Duration::from_millis(5));
    loop {
        // None: a wipe removed the record this call found (or the place it wrote it in)
        // before it read it back: again, after a pause, for as long as a writer waits for a
        // wipe.
        let Some((place, creation)) = create_record(objects, dataset, schema_text)? else {
            if since.elapsed() >= patience {
                let message = format!("{}: its record kept vanishing as it was created", objects.describe(dataset));
                return Err(Error::new(ErrorKind::Timeout, message));
            }
            std::thread::sleep(pause);
            pause = (pause * 2).min(std::time::Duration::from_millis(200));
            continue;
        };
        let identity = &creation.identity;
        let marks = match place.get(&[&wipe_mark(identity)]) {
            // Its place removed just now (DAOS: the container): as a record removed.
            Err(e) if e.kind() == ErrorKind::NotFound => None,
            other => other?,
        };
        match marks {
            Some(marks) if marks.is_empty() => {
                objects.set_listed(dataset, true)?;
                return Ok((place, creation));
            }
            // Removed just now: create it again.
            None => continue,
            Some(_) if since.elapsed() < patience => {
                std::thread::sleep(pause);
                pause = (pause * 2).min(std::time::Duration::from_millis(200));
            }
            Some(_) => finish_wipe(objects, dataset, Some(place.as_ref()), Some(identity))?,
        }
    }
}

/// Creates a data set's record unless there is one, and returns its objects and identity;
/// `None` if a wipe removed them meanwhile: the record it found before it read it back, or
/// the place of the record (DAOS: its container) as it was written.
fn create_record<O: Objects>(objects: &O, dataset: &Key, schema_text: &str) -> Result<Option<(Arc<O::Dataset>, Creation)>> {
    let Some(place) = objects.dataset(dataset, true)? else { return Ok(None) };
    let key = dataset.to_string();
    let identity = unique_suffix();
    let format = FORMAT_VERSION.to_string();
    let checksum = record_checksum(format.as_bytes(), key.as_bytes(), schema_text.as_bytes());
    // The format first: a store that sets values one by one (DAOS) has it whenever it has an
    // identity; the checksum last, so that a record cut short is damage, named.
    let values = [
        (FORMAT, format.as_bytes()),
        (KEY, key.as_bytes()),
        (SCHEMA, schema_text.as_bytes()),
        (IDENTITY, identity.as_bytes()),
        (CHECKSUM, checksum.as_bytes()),
    ];
    let removed = |e: &Error| e.kind() == ErrorKind::NotFound;
    match place.create_record(&values) {
        Err(e) if removed(&e) => return Ok(None),
        other => other?,
    }
    let stored = match place.get(&[FORMAT, KEY, SCHEMA, IDENTITY, CHECKSUM]) {
        Err(e) if removed(&e) => return Ok(None),
        other => other?,
    };
    let Some(stored) = stored else { return Ok(None) };
    // This creator wrote every value unless one was there: the record is whole.
    let format = check_record(&stored, dataset, &place.describe())?
        .ok_or_else(|| Error::corrupt("data set record", place.describe(), "no checksum after its creation"))?;
    let identity = match stored.into_iter().find(|(k, _)| k == IDENTITY) {
        Some((_, identity)) if !identity.is_empty() => identity,
        _ => return Err(Error::corrupt("data set record", place.describe(), format!("it does not hold data set {dataset}"))),
    };
    Ok(Some((place, Creation { identity, sealing: sealing_of(format) })))
}

impl<O: Objects> ObjectCatalogueWriter<O> {
    fn dataset_writer(&mut self, dataset: &Key, schema_text: &str) -> Result<&mut DatasetWriter<O::Dataset>> {
        let i = match self.writers.find(|w| w.dataset == *dataset) {
            Some(i) if self.writers[i].wiped => {
                let (objects, creation) = create_dataset(self.objects.as_ref(), dataset, schema_text)?;
                let writer = &mut self.writers[i];
                (writer.objects, writer.identity, writer.sealing, writer.wiped) = (objects, creation.identity, creation.sealing, false);
                i
            }
            Some(i) => i,
            None => {
                let (objects, Creation { identity, sealing }) = create_dataset(self.objects.as_ref(), dataset, schema_text)?;
                self.writers.push(DatasetWriter {
                    dataset: dataset.clone(),
                    objects,
                    identity,
                    sealing,
                    pending: PendingIndexes::default(),
                    index_writes: Vec::new(),
                    wiped: false,
                })
            }
        };
        Ok(&mut self.writers[i])
    }
}

impl<D: DatasetObjects> DatasetWriter<D> {
    /// Starts one new index object per pending index.
    fn start_index_writes(&mut self) -> Result<()> {
        self.index_writes.clear();
        for index in self.pending.iter() {
            self.index_writes.push(self.objects.write_index(index, self.sealing)?);
        }
        Ok(())
    }

    /// Waits for the index objects (starting them first unless `prepare_flush` did), then
    /// publishes them all in one batch. A failure in a data set that is gone (or another
    /// creation of it) is [`Error::Wiped`]: its fields went with it.
    fn flush<O: Objects<Dataset = D>>(&mut self, objects: &O) -> Result<()> {
        if self.pending.is_empty() {
            return Ok(());
        }
        let published = self.publish_pending();
        let wiped = match &published {
            Ok(published) => !published,
            Err(_) => !self.still_there(objects)?,
        };
        if wiped {
            self.wiped = true;
            self.pending.clear();
            return Err(Error::Wiped { dataset: self.dataset.to_string() });
        }
        published?;
        self.pending.clear();
        Ok(())
    }

    /// Writes the index objects and appends their records; false if the record's creation is
    /// gone.
    fn publish_pending(&mut self) -> Result<bool> {
        if self.index_writes.is_empty() {
            self.start_index_writes()?;
        }
        let mut records = Vec::new();
        for (write, index) in std::mem::take(&mut self.index_writes).into_iter().zip(self.pending.iter()) {
            records.push(index_record(&write.finish()?, index));
        }
        // Unless a wipe marked the creation: it removes the record with this batch.
        self.objects.append_unless(&self.identity, &wipe_mark(&self.identity), &encode_batch(&records, self.sealing))
    }

    /// Whether the creation of the data set this writer writes to is still there, and no wipe
    /// of it began.
    fn still_there<O: Objects<Dataset = D>>(&self, objects: &O) -> Result<bool> {
        let Some(place) = objects.dataset(&self.dataset, false)? else { return Ok(false) };
        let mark = wipe_mark(&self.identity);
        let Some(values) = place.get(&[IDENTITY, &mark])? else { return Ok(false) };
        let same = values.iter().any(|(name, value)| name == IDENTITY && *value == self.identity);
        Ok(same && !values.iter().any(|(name, _)| *name == mark))
    }
}

impl<O: Objects> CatalogueWriter for ObjectCatalogueWriter<O> {
    fn archive(&mut self, dataset: &Key, schema_text: &str, collocation: &Key, element: &Key, location: FieldLocation) -> Result<()> {
        let writer = self.dataset_writer(dataset, schema_text)?;
        // Index objects started by prepare_flush would lack this entry.
        writer.index_writes.clear();
        writer.pending.insert(collocation, element, location);
        Ok(())
    }

    /// Starts the index objects while the store waits for its writes: a flush then waits for
    /// both at once, and publishes.
    fn prepare_flush(&mut self) -> Result<Vec<Commit>> {
        for writer in self.writers.iter_mut().filter(|w| !w.pending.is_empty()) {
            writer.start_index_writes()?;
        }
        Ok(Vec::new())
    }

    fn flush(&mut self, _embedded: &[Key]) -> Result<()> {
        for writer in self.writers.iter_mut() {
            writer.flush(self.objects.as_ref())?;
        }
        Ok(())
    }

    fn discard(&mut self) {
        for writer in self.writers.iter_mut() {
            writer.pending.clear();
            writer.index_writes.clear();
        }
    }

    fn create(&mut self, dataset: &Key, schema_text: &str) -> Result<()> {
        self.dataset_writer(dataset, schema_text).map(drop)
    }
}

impl<O: Objects> Catalogue for ObjectCatalogue<O> {
    fn writer(&self) -> Result<Box<dyn CatalogueWriter>> {
        Ok(Box::new(ObjectCatalogueWriter { objects: self.objects.clone(), writers: RecentList::default() }))
    }

    fn datasets(&self) -> Result<Vec<Key>> {
        let mut keys = self
            .objects
            .listed()?
            .iter()
            .map(|k| {
                Key::parse(k).map_err(|e| Error::corrupt_because("data set list", self.objects.describe_list(), "an entry is no key", e))
            })
            .collect::<Result<Vec<_>>>()?;
        keys.sort();
        Ok(keys)
    }

    fn open(&self, dataset: &Key) -> Result<Option<Box<dyn DatasetView>>> {
        let Some(place) = self.objects.dataset(dataset, false)? else { return Ok(None) };
        let Some(values) = place.get(&[FORMAT, KEY, SCHEMA, IDENTITY, CHECKSUM])? else { return Ok(None) };
        let value = |name: &str| values.iter().find(|(k, _)| k == name).map(|(_, v)| v.clone());
        let (Some(schema), Some(identity)) = (value(SCHEMA), value(IDENTITY)) else { return Ok(None) };
        let Some(format) = check_record(&values, dataset, &place.describe())? else { return Ok(None) };
        let schema_text = String::from_utf8(schema)
            .map_err(|e| Error::corrupt_because("data set record", place.describe(), "its schema is not UTF-8", e))?;
        let view = ObjectView::<O> {
            objects: self.objects.clone(),
            dataset: dataset.clone(),
            place,
            schema_text,
            identity,
            format,
            position: 0,
            replay: LogReplay::default(),
            loaded: HashMap::new(),
        };
        Ok(Some(Box::new(view)))
    }

    /// Marks the record's creation as being wiped ([`wipe_mark`]), then [`finish_wipe`]:
    /// reads the log, unlists the data set, removes its record and index objects. The mark
    /// comes first so that no flush lands in the creation unnoticed after the wipe read its
    /// log, and no writer takes the creation for the data set once it is unlisted.
    fn wipe_dataset(&self, dataset: &Key) -> Result<()> {
        let place = self.objects.dataset(dataset, false)?;
        let marked = place.as_deref().map(mark_for_wipe).transpose()?.flatten();
        finish_wipe(self.objects.as_ref(), dataset, place.as_deref(), marked.as_deref())
    }

    fn locks(&self, dataset: &Key) -> Result<BTreeSet<ControlAction>> {
        let Some(place) = self.objects.dataset(dataset, false)? else { return Ok(BTreeSet::new()) };
        let names: Vec<String> = ControlAction::ALL.iter().map(|a| lock_name(*a)).collect();
        let set = place.get(&names.iter().map(String::as_str).collect::<Vec<_>>())?.unwrap_or_default();
        Ok(ControlAction::ALL.into_iter().filter(|a| set.iter().any(|(k, _)| *k == lock_name(*a))).collect())
    }

    fn set_lock(&self, dataset: &Key, action: ControlAction, locked: bool) -> Result<()> {
        let missing = || Error::new(ErrorKind::NotFound, format!("no data set {dataset} to lock or unlock"));
        let place = self.objects.dataset(dataset, false)?.ok_or_else(missing)?;
        place.get(&[IDENTITY])?.ok_or_else(missing)?;
        place.set(&lock_name(action), locked.then_some(b"".as_slice()))
    }

    fn describe(&self, dataset: &Key) -> String {
        self.objects.describe(dataset)
    }
}

/// Marks the creation in `place` as being wiped; its identity, or `None` if there is no record
/// (or one without identity, which no writer takes). A record that changed as it was marked
/// (removed, or another creation: a wipe racing this one) is looked at again.
fn mark_for_wipe<D: DatasetObjects>(place: &D) -> Result<Option<Vec<u8>>> {
    let identity_of = || Ok::<_, Error>(place.get(&[IDENTITY])?.and_then(|values| values.into_iter().next()).map(|(_, v)| v));
    let mut identity = identity_of()?;
    for _ in 0..3 {
        let Some(marked) = identity else { return Ok(None) };
        match place.set(&wipe_mark(&marked), Some(WIPING)) {
            Ok(()) => return Ok(Some(marked)),
            Err(e) => {
                identity = identity_of()?;
                if identity.as_ref() == Some(&marked) {
                    return Err(e);
                }
            }
        }
    }
    Err(Error::new(ErrorKind::Conflict, format!("{}: the data set kept being created again while it was wiped", place.describe())))
}

/// The rest of a wipe after its mark on the creation `marked` (`None`: there was no record):
/// reads the log (whole: no flush lands in a marked creation unnoticed) for the index objects
/// it names, unlists the data set, then removes its record and those index objects
/// ([`Objects::remove`]). Not every object of its place: a data set created again while the
/// wipe runs writes others there, which must stay. So a wipe cut short or a flush that failed
/// leave index objects no log names, which stay. A log of another creation means the marked
/// one is gone already (a writer finished this wipe) and is left alone; one made after the
/// unlisting is listed again.
fn finish_wipe<O: Objects>(objects: &O, dataset: &Key, place: Option<&O::Dataset>, marked: Option<&[u8]>) -> Result<()> {
    let mut replay = LogReplay::default();
    if let Some(read) = place.map(|p| p.read_log(0)).transpose()?.flatten() {
        if marked.is_some_and(|m| m != read.identity.as_slice()) {
            return Ok(());
        }
        for (_, batch) in &read.batches {
            // An undecodable record names no object this wipe could find.
            for record in decode_batch(batch).unwrap_or_default() {
                let _ = replay.apply(record);
            }
        }
    }
    let ids: Vec<String> = replay.all_ids().into_iter().map(str::to_string).collect();
    objects.set_listed(dataset, false)?;
    let pause = WIPE_PAUSE.read().unwrap_or_else(|p| p.into_inner()).clone();
    if let Some(pause) = pause {
        pause(dataset);
    }
    objects.remove(dataset, place, &ids)?;
    // A creation made after the marked one was removed, and listed before this wipe unlisted
    // the data set (a writer that finished a wipe racing this one): listed again.
    let Some(now) = objects.dataset(dataset, false)? else { return Ok(()) };
    let Some(identity) = now.get(&[IDENTITY])?.and_then(|values| values.into_iter().next()).map(|(_, v)| v) else { return Ok(()) };
    if Some(identity.as_slice()) != marked && now.get(&[&wipe_mark(&identity)])?.is_some_and(|marks| marks.is_empty()) {
        objects.set_listed(dataset, true)?;
    }
    Ok(())
}

/// A reader's view of one data set: the log read so far, and the index objects loaded.
struct ObjectView<O: Objects> {
    objects: Arc<O>,
    dataset: Key,
    place: Arc<O::Dataset>,
    schema_text: String,
    identity: Vec<u8>,
    /// The format version of the creation `identity` names.
    format: u32,
    /// Where the log was read to.
    position: u64,
    replay: LogReplay,
    /// Loaded index objects: entries sorted by element values.
    loaded: HashMap<String, Arc<IndexEntries>>,
}

impl<O: Objects> ObjectView<O> {
    /// Opens the data set afresh (after a read found it gone, another creation of it, or a
    /// handle that no longer works: a destroyed DAOS container), and reads its log: from
    /// where this view is if it is the same creation, else from the start. `None`: no data set.
    fn reopen(&mut self) -> Result<Option<LogRead>> {
        let Some(place) = self.objects.dataset(&self.dataset, false)? else { return Ok(None) };
        self.place = place;
        let Some(read) = self.place.read_log(self.position)? else { return Ok(None) };
        if read.identity == self.identity {
            return Ok(Some(read));
        }
        // Wiped and created again: the new log from its start.
        let Some(values) = self.place.get(&[FORMAT])? else { return Ok(None) };
        self.format = check_format(values.first().map(|(_, v)| v.as_slice()), &self.dataset, &self.place.describe())?;
        (self.identity, self.position, self.replay) = (read.identity, 0, LogReplay::default());
        self.loaded.clear();
        self.place.read_log(0)
    }

    /// Replays what a read brought. Batches are whole (appends are), so a batch that does
    /// not decode is damage, reported before any of its records is used.
    fn replay(&mut self, read: LogRead) -> Result<()> {
        for (position, batch) in &read.batches {
            let corrupt = |why: &str| Error::corrupt("log record", self.place.describe_position(*position), why);
            let records = decode_batch(batch).map_err(corrupt)?;
            for record in records {
                self.replay.apply(record).ok_or_else(|| corrupt("undecodable"))?;
            }
        }
        self.position = read.end;
        Ok(())
    }

    fn load(&mut self, index: &IndexInfo) -> Result<Arc<IndexEntries>> {
        self.load_all(&[index])?.pop().ok_or_else(|| Error::corrupt("index object", self.place.describe(), "not read"))
    }

    /// The entries of `indexes`, in their order: those not loaded yet read at once.
    fn load_all(&mut self, indexes: &[&IndexInfo]) -> Result<Vec<Arc<IndexEntries>>> {
        let mut missing: Vec<&str> = indexes.iter().map(|i| i.id.as_str()).filter(|id| !self.loaded.contains_key(*id)).collect();
        missing.sort_unstable();
        missing.dedup();
        let read = self.place.read_indexes(&missing)?;
        if read.len() != missing.len() {
            return Err(Error::corrupt("index objects", self.place.describe(), format!("{} read of {}", read.len(), missing.len())));
        }
        for (id, entries) in missing.iter().zip(read) {
            self.loaded.insert(id.to_string(), Arc::new(entries));
        }
        indexes
            .iter()
            .map(|i| {
                self.loaded
                    .get(&i.id)
                    .cloned()
                    .ok_or_else(|| Error::corrupt("index object", self.place.describe(), format!("{} not read", i.id)))
            })
            .collect()
    }

    /// What a compaction merges ([`runs`]): for each collocation and element keywords, runs of
    /// their indexes, newest first, as `indexes` is.
    fn compactable_runs(&mut self, indexes: &[Arc<IndexInfo>]) -> Result<Vec<Vec<Arc<IndexInfo>>>> {
        let mut groups: Vec<Vec<Arc<IndexInfo>>> = Vec::new();
        for index in indexes {
            let same =
                |g: &&mut Vec<Arc<IndexInfo>>| g[0].collocation == index.collocation && g[0].element_keywords == index.element_keywords;
            match groups.iter_mut().find(same) {
                Some(group) => group.push(index.clone()),
                None => groups.push(vec![index.clone()]),
            }
        }
        let mut runs = Vec::new();
        for group in groups.into_iter().filter(|g| g.len() > 1) {
            let entries = self.load_all(&group.iter().map(Arc::as_ref).collect::<Vec<_>>())?;
            let pairs: Vec<(&IndexInfo, &IndexEntries)> = group.iter().map(Arc::as_ref).zip(entries.iter().map(Arc::as_ref)).collect();
            runs.extend(runs::runs(&pairs).into_iter().map(|run| group[run].to_vec()));
        }
        Ok(runs)
    }

    /// One index holding the entries of `run`.
    fn merged(&mut self, run: &[Arc<IndexInfo>]) -> Result<PendingIndex> {
        let entries = self.load_all(&run.iter().map(Arc::as_ref).collect::<Vec<_>>())?;
        Ok(PendingIndex {
            collocation: Key::clone(&run[0].collocation),
            element_keywords: run[0].element_keywords.to_vec(),
            entries: entries.iter().flat_map(|e| e.iter().map(|(values, location)| (values.clone(), location.clone()))).collect(),
        })
    }
}

impl<O: Objects> DatasetView for ObjectView<O> {
    fn schema_text(&self) -> &str {
        &self.schema_text
    }

    fn indexes(&mut self) -> Result<Vec<Arc<IndexInfo>>> {
        let read = match self.place.read_log(self.position) {
            Ok(Some(read)) if read.identity == self.identity => Some(read),
            _ => self.reopen()?,
        };
        let Some(read) = read else {
            // Wiped: nothing is visible any more.
            self.replay = LogReplay::default();
            return Ok(Vec::new());
        };
        self.replay(read)?;
        Ok(self.replay.indexes())
    }

    fn prefetch(&mut self, indexes: &[&IndexInfo]) -> Result<()> {
        self.load_all(indexes).map(drop)
    }

    /// Writes one index object per run of [`ObjectView::compactable_runs`], one after
    /// another (each held in memory only while written), then appends one batch of compaction
    /// records; the replay decides what takes effect. Objects written for a data set wiped
    /// meanwhile stay unnamed, as a failed flush's do.
    fn compact(&mut self) -> Result<Compaction> {
        let indexes = self.indexes()?;
        let mut report = Compaction { indexes_before: indexes.len() as u64, ..Compaction::default() };
        if self.format < 2 {
            report.indexes_after = report.indexes_before;
            report.not_compacted = Some(format!("its objects are in format {}, from before compaction records", self.format));
            return Ok(report);
        }
        let mut records = Vec::new();
        for run in self.compactable_runs(&indexes)? {
            let merged = self.merged(&run)?;
            let id = self.place.write_index(&merged, sealing_of(self.format))?.finish()?;
            report.entries_written += merged.entries.len() as u64;
            records.push(compact_record(&id, &merged, run.iter().map(|i| i.id.as_str())));
        }
        if !records.is_empty() && !self.place.append(&self.identity, &encode_batch(&records, sealing_of(self.format)))? {
            return Err(Error::new(
                ErrorKind::Conflict,
                format!("{}: the data set was wiped meanwhile; nothing compacted", self.place.describe()),
            ));
        }
        report.indexes_written = records.len() as u64;
        report.indexes_after = self.indexes()?.len() as u64;
        Ok(report)
    }

    fn lookup(&mut self, index: &IndexInfo, element: &Key) -> Result<Option<FieldLocation>> {
        Ok(self.load(index)?.lookup(element))
    }

    fn entries(&mut self, index: &IndexInfo) -> Result<Vec<(Key, FieldLocation)>> {
        self.load(index)?.keyed(index)
    }

    /// Index objects stay, whatever `unused` says: readers of an earlier log position may
    /// still read them.
    fn mask(&mut self, indexes: &[&IndexInfo], _unused: Unused) -> Result<Vec<String>> {
        if indexes.is_empty() {
            return Ok(Vec::new());
        }
        self.append_record(mask_record(indexes.iter().map(|i| i.id.as_str())), "nothing to hide")?;
        Ok(Vec::new())
    }

    fn overlays(&mut self) -> Option<&mut dyn Overlays> {
        Some(self)
    }
}

impl<O: Objects> Overlays for ObjectView<O> {
    fn overlaid(&self) -> &[Key] {
        &self.replay.overlays
    }

    fn set_overlay(&mut self, source: &Key, shown: bool) -> Result<()> {
        self.append_record(overlay_record(source, shown), "nothing overlaid")?;
        // Read back: the overlays in effect include it.
        self.indexes().map(drop)
    }
}

impl<O: Objects> ObjectView<O> {
    /// Appends one record to this creation's log; `undone` says what a wipe meanwhile left
    /// undone.
    fn append_record(&mut self, record: Vec<u8>, undone: &str) -> Result<()> {
        let batch = encode_batch(&[record], sealing_of(self.format));
        if !self.place.append(&self.identity, &batch)? {
            return Err(Error::new(ErrorKind::Conflict, format!("{}: the data set was wiped meanwhile; {undone}", self.place.describe())));
        }
        Ok(())
    }
}
