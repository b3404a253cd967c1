//! The RADOS catalogue: omaps in the catalogue pool, one namespace per dataset.
//!
//! ```text
//! namespace <prefix>              fieldstore.datasets   omap: dataset key -> ""  (the datasets)
//! namespace <prefix><dataset key> dataset               omap: key, schema, identity,
//!                                                       lock/<action> -> ""
//!                                                       data: the log, one record batch
//!                                                       per flush (index_log::encode_batch)
//!                                 <md5>                 an index: omap element values -> location
//! ```
//!
//! Invariants (the consistency argument of docs/rados.md):
//! - An index object is written whole, by one exclusive create, before any record names it;
//!   it never changes afterwards, so readers cache it forever.
//! - The log only grows, by appends. A flush appends all its records in one atomic operation
//!   guarded by the dataset's identity; the OSD applies the appends of concurrent writers one
//!   after the other, so no writer ever retries, and a reader that has read the log up to
//!   byte N only ever needs the bytes after N, which end at a record's end.
//! - Records are never changed; hiding indexes (purge, partial wipe) appends a mask record.
//! - `identity` is unique per creation of the dataset: a reader that finds another one knows
//!   the dataset was wiped and created again, and starts over.
//! - Wipe removes the dataset object before anything else: a dataset is either whole or
//!   absent, never a log naming removed index objects.

use std::collections::{BTreeSet, HashMap};
use std::sync::Arc;

use fieldstore_core::error::{Error, ErrorKind, Result};
use fieldstore_core::index_log::{
    decode_location, encode_batch, encode_location, index_record, mask_record, split_batch, IndexEntries, LogReplay,
};
use fieldstore_core::indexing::PendingIndexes;
use fieldstore_core::recent::RecentList;
use fieldstore_core::unique::unique_suffix;
use fieldstore_core::{Catalogue, CatalogueWriter, Commit, ControlAction, DatasetView, FieldLocation, IndexInfo, Key};

use crate::aio::PendingWrite;
use crate::naming::{check_prefix, dataset_namespace, unique_object_name};
use crate::{Cluster, IoCtx, Namespaces, Outcome, WriteOp};

/// The object listing the datasets, in the namespace named by the instance's prefix.
const DATASETS: &str = "fieldstore.datasets";
/// Each dataset's own object.
const DATASET: &str = "dataset";
/// The omap key that counted log records before the log was the dataset object's data; a
/// dataset object holding it was written by an earlier fieldstore.
const EARLIER_LOG_COUNTER: &str = "seq";
/// How much of the log a reader asks for in its first read operation of a request; each
/// further one (a log that grew by more) asks for twice as much as the one before.
const FIRST_LOG_READ: usize = 64 << 10;

fn lock_key(action: ControlAction) -> String {
    format!("lock/{}", action.name())
}

/// The catalogue's shared side: listing, views, locks, wipes.
pub struct RadosCatalogue {
    place: Arc<Place>,
}

/// One writer: the datasets it archives into.
pub struct RadosCatalogueWriter {
    place: Arc<Place>,
    writers: RecentList<DatasetWriter>,
}

/// Where a catalogue instance lives: a pool, and the prefix of its namespaces.
struct Place {
    namespaces: Namespaces,
    /// Starts every namespace of this instance; its dataset list is in namespace `prefix`.
    prefix: String,
}

/// What this handle archived into one dataset since its last flush.
struct DatasetWriter {
    dataset: Key,
    io: Arc<IoCtx>,
    pending: PendingIndexes,
    /// The index objects of `pending`, in its order, sent by `prepare_flush` while the
    /// store's last writes were still in flight; empty if not sent (yet).
    index_writes: Vec<(String, PendingWrite)>,
    /// The dataset's identity when this writer found or created it: a flush publishes only
    /// into that creation of the dataset.
    identity: String,
    /// A flush found the dataset wiped: the next archive creates it again.
    wiped: bool,
}

impl RadosCatalogue {
    /// A catalogue in `pool` whose namespaces start with `prefix`; fails now if the pool does
    /// not exist.
    pub fn new(cluster: Arc<Cluster>, pool: &str, prefix: &str) -> Result<Self> {
        check_prefix(prefix)?;
        Ok(RadosCatalogue { place: Arc::new(Place { namespaces: Namespaces::new(cluster, pool)?, prefix: prefix.into() }) })
    }

    fn dataset_context(&self, dataset: &Key) -> Result<Arc<IoCtx>> {
        self.place.dataset_context(dataset)
    }
}

impl RadosCatalogueWriter {
    fn dataset_writer(&mut self, dataset: &Key, schema_text: &str) -> Result<&mut DatasetWriter> {
        let i = match self.writers.find(|w| w.dataset == *dataset) {
            Some(i) if self.writers[i].wiped => {
                let identity = self.place.create_dataset(&self.writers[i].io, dataset, schema_text)?;
                let writer = &mut self.writers[i];
                (writer.identity, writer.wiped) = (identity, false);
                i
            }
            Some(i) => i,
            None => {
                let io = self.place.dataset_context(dataset)?;
                let identity = self.place.create_dataset(&io, dataset, schema_text)?;
                self.writers.push(DatasetWriter {
                    dataset: dataset.clone(),
                    io,
                    pending: PendingIndexes::default(),
                    index_writes: Vec::new(),
                    identity,
                    wiped: false,
                })
            }
        };
        Ok(&mut self.writers[i])
    }
}

impl Place {
    fn dataset_context(&self, dataset: &Key) -> Result<Arc<IoCtx>> {
        self.namespaces.get(&dataset_namespace(&self.prefix, dataset))
    }

    /// Creates the dataset object (racing creators: one wins, the others find it), lists
    /// the dataset, and returns its identity.
    fn create_dataset(&self, io: &IoCtx, dataset: &Key, schema_text: &str) -> Result<String> {
        let key = dataset.to_string();
        let mut identity = unique_suffix();
        let create = WriteOp::new()
            .create_exclusive()
            .set("key", key.as_bytes())
            .set("schema", schema_text.as_bytes())
            .set("identity", identity.as_bytes());
        if io.apply(DATASET, &create)? == Outcome::Exists {
            let stored = io.omap_get(DATASET, &["identity", "key"])?.unwrap_or_default();
            let value = |name: &str| stored.iter().find(|(k, _)| k == name).map(|(_, v)| v.as_slice());
            match (value("key"), value("identity")) {
                (Some(k), Some(found)) if k == key.as_bytes() => identity = String::from_utf8_lossy(found).into_owned(),
                _ => return Err(Error::corrupt("dataset object", io.describe(DATASET), format!("it does not hold data set {dataset}"))),
            }
        }
        self.namespaces.get(&self.prefix)?.apply(DATASETS, &WriteOp::new().set(&key, b""))?;
        Ok(identity)
    }
}

/// Appends `records` to the log of the dataset creation `identity`, in one atomic operation;
/// false if that creation is gone (wiped, and maybe created again: nothing was appended).
/// Concurrent appends are ordered by the OSD: nothing to retry.
fn publish(io: &IoCtx, identity: &str, records: &[Vec<u8>]) -> Result<bool> {
    let batch = encode_batch(records);
    let append = WriteOp::new().compare_equal("identity", identity.as_bytes()).append(&batch);
    // Anything but Applied: another identity (created again) or no dataset object.
    Ok(io.apply(DATASET, &append)? == Outcome::Applied)
}

/// The dataset's identity and its log from byte `from` to the end, or `None` if there is no
/// dataset. The first part comes with the identity in one operation: one round trip for a
/// reader that polls. A log read in several parts whose identity changed in between (wiped
/// and created again) is returned as the new identity with nothing read.
fn read_log(io: &IoCtx, from: u64) -> Result<Option<(Vec<u8>, Vec<u8>)>> {
    let mut log = Vec::new();
    let mut first_identity = None;
    let mut asked = FIRST_LOG_READ;
    loop {
        let start = log.len();
        log.resize(start + asked, 0);
        let Some((pairs, read)) = io.omap_get_and_read(DATASET, &["identity"], from + start as u64, &mut log[start..])? else {
            return Ok(None);
        };
        log.truncate(start + read);
        let identity = pairs.into_iter().next().map(|(_, v)| v).unwrap_or_default();
        match &first_identity {
            Some(first) if *first != identity => return Ok(Some((identity, Vec::new()))),
            Some(_) => {}
            None => first_identity = Some(identity),
        }
        if read < asked {
            return Ok(first_identity.map(|identity| (identity, log)));
        }
        asked *= 2;
    }
}

impl DatasetWriter {
    /// Sends one new index object per pending index, each by one exclusive create. They are
    /// invisible until `flush` publishes records naming them, so they may be written while
    /// the store's last writes are in flight; unpublished ones are unreferenced objects (as
    /// are the fields of a discarded flush), which a wipe of the dataset removes.
    fn start_index_writes(&mut self) -> Result<()> {
        self.index_writes.clear();
        for index in self.pending.iter() {
            let name = unique_object_name(&format!("index/{}", unique_suffix()));
            let values: Vec<Vec<u8>> = index.entries.values().map(encode_location).collect();
            let pairs = index.entries.keys().map(String::as_str).zip(values.iter().map(Vec::as_slice));
            let write = self.io.prepare(&name, &WriteOp::new().create_exclusive().set_all(pairs))?.submit()?;
            self.index_writes.push((name, write));
        }
        Ok(())
    }

    /// Waits for the index objects (sending them first unless `prepare_flush` did), then
    /// publishes them all.
    fn flush(&mut self) -> Result<()> {
        if self.pending.is_empty() {
            return Ok(());
        }
        if self.index_writes.is_empty() {
            self.start_index_writes()?;
        }
        let mut records = Vec::new();
        for ((name, write), index) in std::mem::take(&mut self.index_writes).into_iter().zip(self.pending.iter()) {
            if write.wait()? != Outcome::Applied {
                return Err(Error::new(
                    ErrorKind::AlreadyExists,
                    format!("{}: a new index object already exists", self.io.describe(&name)),
                ));
            }
            records.push(index_record(&name, index));
        }
        let published = publish(&self.io, &self.identity, &records)?;
        let lost: usize = self.pending.iter().map(|index| index.entries.len()).sum();
        self.pending.clear();
        if !published {
            self.wiped = true;
            return Err(Error::new(
                ErrorKind::Conflict,
                format!(
                    "{}: the data set was wiped while this handle wrote to it: nothing was published, and the {lost} field(s) \
                 archived into it since the last flush were lost with it",
                    self.io.describe(DATASET)
                ),
            ));
        }
        Ok(())
    }
}

impl CatalogueWriter for RadosCatalogueWriter {
    fn archive(&mut self, dataset: &Key, schema_text: &str, collocation: &Key, element: &Key, location: FieldLocation) -> Result<()> {
        let writer = self.dataset_writer(dataset, schema_text)?;
        // Index objects sent by prepare_flush would lack this entry.
        writer.index_writes.clear();
        writer.pending.insert(collocation, element, location);
        Ok(())
    }

    /// Sends the index objects while the store waits for its writes: a flush then waits for
    /// both at once, and publishes.
    fn prepare_flush(&mut self) -> Result<Vec<Commit>> {
        for writer in &mut self.writers {
            if !writer.pending.is_empty() {
                writer.start_index_writes()?;
            }
        }
        Ok(Vec::new())
    }

    fn flush(&mut self, _embedded: &[Key]) -> Result<()> {
        for writer in &mut self.writers {
            writer.flush()?;
        }
        Ok(())
    }

    fn discard(&mut self) {
        for writer in &mut self.writers {
            writer.pending.clear();
            writer.index_writes.clear();
        }
    }
}

impl Catalogue for RadosCatalogue {
    fn writer(&self) -> Result<Box<dyn CatalogueWriter>> {
        Ok(Box::new(RadosCatalogueWriter { place: self.place.clone(), writers: RecentList::default() }))
    }

    fn datasets(&self) -> Result<Vec<Key>> {
        let io = self.place.namespaces.get(&self.place.prefix)?;
        let pairs = io.omap_scan(DATASETS, "", "")?.unwrap_or_default();
        let mut keys = pairs
            .into_iter()
            .map(|(k, _)| Key::parse(&k).map_err(|e| Error::corrupt("dataset list", io.describe(DATASETS), e.to_string())))
            .collect::<Result<Vec<_>>>()?;
        keys.sort();
        Ok(keys)
    }

    fn open(&self, dataset: &Key) -> Result<Option<Box<dyn DatasetView>>> {
        let io = self.dataset_context(dataset)?;
        let Some(pairs) = io.omap_get(DATASET, &["schema", "identity", EARLIER_LOG_COUNTER])? else { return Ok(None) };
        let value = |name: &str| pairs.iter().find(|(k, _)| k == name).map(|(_, v)| String::from_utf8_lossy(v).into_owned());
        if value(EARLIER_LOG_COUNTER).is_some() {
            return Err(Error::corrupt(
                "dataset object",
                io.describe(DATASET),
                "written by an earlier fieldstore, whose log was omap keys: wipe the data set and archive it again",
            ));
        }
        let (Some(schema_text), Some(identity)) = (value("schema"), value("identity")) else { return Ok(None) };
        Ok(Some(Box::new(RadosView::new(io, schema_text, identity))))
    }

    /// Reads the log, unlists the data set, removes the data set object (its log: readers
    /// see no data set from then on, never a log that names index objects already removed),
    /// then the index objects that log names. Not every object in the namespace: a data set
    /// created again while the wipe runs writes other objects there, which must stay. So a
    /// wipe cut short, a flush that failed, or a flush published between the log's reading
    /// and the removal leave index objects no log names, which stay.
    fn wipe_dataset(&self, dataset: &Key) -> Result<()> {
        let io = self.dataset_context(dataset)?;
        let mut replay = LogReplay::default();
        if let Some((_, log)) = read_log(&io, 0)? {
            let mut rest = &log[..];
            while let Some((records, after)) = split_batch(rest) {
                for record in records {
                    // An undecodable record names no object this wipe could find.
                    let _ = replay.apply(record);
                }
                rest = after;
            }
        }
        self.place.namespaces.get(&self.place.prefix)?.apply(DATASETS, &WriteOp::new().remove(&dataset.to_string()))?;
        io.remove(DATASET)?;
        for id in replay.all_ids() {
            io.remove(id)?;
        }
        Ok(())
    }

    fn locks(&self, dataset: &Key) -> Result<BTreeSet<ControlAction>> {
        let pairs = self.dataset_context(dataset)?.omap_scan(DATASET, "", "lock/")?.unwrap_or_default();
        Ok(pairs.iter().filter_map(|(k, _)| ControlAction::from_name(&k["lock/".len()..])).collect())
    }

    fn set_lock(&self, dataset: &Key, action: ControlAction, locked: bool) -> Result<()> {
        let io = self.dataset_context(dataset)?;
        if io.size(DATASET)?.is_none() {
            return Err(Error::new(ErrorKind::NotFound, format!("no data set {dataset} to lock or unlock")));
        }
        let key = lock_key(action);
        let op = if locked { WriteOp::new().set(&key, b"") } else { WriteOp::new().remove(&key) };
        io.apply(DATASET, &op)?;
        Ok(())
    }

    fn describe(&self, dataset: &Key) -> String {
        format!("rados pool {} namespace {}", self.place.namespaces.pool(), dataset_namespace(&self.place.prefix, dataset))
    }
}

/// A reader's view of one dataset: the log read so far, and the index objects loaded.
struct RadosView {
    io: Arc<IoCtx>,
    schema_text: String,
    identity: String,
    /// How much of the log was read (a record's end).
    read_to: u64,
    replay: LogReplay,
    /// Loaded index objects: entries sorted by element values.
    loaded: HashMap<String, Arc<IndexEntries>>,
}

impl RadosView {
    fn new(io: Arc<IoCtx>, schema_text: String, identity: String) -> Self {
        RadosView { io, schema_text, identity, read_to: 0, replay: LogReplay::default(), loaded: HashMap::new() }
    }

    fn load(&mut self, index: &IndexInfo) -> Result<Arc<IndexEntries>> {
        if let Some(entries) = self.loaded.get(&index.id) {
            return Ok(entries.clone());
        }
        let pairs = self.io.omap_scan(&index.id, "", "")?.ok_or_else(|| {
            Error::corrupt("index object", self.io.describe(&index.id), "missing (the data set was wiped while it was read?)")
        })?;
        let entries = pairs
            .into_iter()
            .map(|(k, v)| {
                let location = decode_location(&v)
                    .ok_or_else(|| Error::corrupt("index entry", format!("{} {k}", self.io.describe(&index.id)), "undecodable"))?;
                Ok((k, location))
            })
            .collect::<Result<Vec<_>>>()?;
        let entries = Arc::new(IndexEntries::from_sorted(entries));
        self.loaded.insert(index.id.clone(), entries.clone());
        Ok(entries)
    }
}

impl DatasetView for RadosView {
    fn schema_text(&self) -> &str {
        &self.schema_text
    }

    fn indexes(&mut self) -> Result<Vec<Arc<IndexInfo>>> {
        let Some((identity, log)) = read_log(&self.io, self.read_to)? else {
            // Wiped: nothing is visible any more.
            self.replay = LogReplay::default();
            return Ok(Vec::new());
        };
        if identity != self.identity.as_bytes() {
            // Wiped and created again: read the new log from its start.
            let identity = String::from_utf8_lossy(&identity).into_owned();
            *self = RadosView::new(self.io.clone(), std::mem::take(&mut self.schema_text), identity);
            return self.indexes();
        }
        // Appends are whole, so what was read to the log's end ends at a batch's end: the
        // whole stretch is split first, so a log cut short is reported before any record in it.
        let at = |position: u64| format!("{} at byte {position}", self.io.describe(DATASET));
        let (mut batches, mut rest) = (Vec::new(), &log[..]);
        while !rest.is_empty() {
            let position = self.read_to + (log.len() - rest.len()) as u64;
            let (records, after) = split_batch(rest).ok_or_else(|| Error::corrupt("log record", at(position), "cut short"))?;
            batches.push((records, (rest.len() - after.len()) as u64));
            rest = after;
        }
        for (records, length) in batches {
            for record in records {
                self.replay.apply(record).ok_or_else(|| Error::corrupt("log record", at(self.read_to), "undecodable"))?;
            }
            self.read_to += length;
        }
        Ok(self.replay.indexes())
    }

    fn lookup(&mut self, index: &IndexInfo, element: &Key) -> Result<Option<FieldLocation>> {
        Ok(self.load(index)?.lookup(element))
    }

    fn entries(&mut self, index: &IndexInfo) -> Result<Vec<(Key, FieldLocation)>> {
        self.load(index)?.keyed(index)
    }

    /// Index objects stay: readers of an older log position may still read them.
    fn mask(&mut self, indexes: &[&IndexInfo]) -> Result<Vec<String>> {
        if indexes.is_empty() {
            return Ok(Vec::new());
        }
        if !publish(&self.io, &self.identity, &[mask_record(indexes.iter().map(|i| i.id.as_str()))])? {
            return Err(Error::new(
                ErrorKind::Conflict,
                format!("{}: the data set was wiped meanwhile; nothing to hide", self.io.describe(DATASET)),
            ));
        }
        Ok(Vec::new())
    }
}
