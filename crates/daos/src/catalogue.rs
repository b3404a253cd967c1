//! The DAOS catalogue: key-values in a root container and one container per dataset.
//!
//! ```text
//! container <root>             root KV (OID 0.0): dataset key -> dataset container label
//! container <root>-<dataset>   dataset KV (OID 0.0): key, schema, identity,
//!                                log/<slot, 20 digits> -> a batch of records,
//!                                lock/<action> -> "", hint -> the last slot taken
//!                              index KVs (reserved OIDs): entries -> the index, encoded
//!                              field arrays of the DAOS store, when it shares the pool
//! ```
//!
//! Invariants (the consistency argument of docs/daos.md):
//! - An index KV is written whole (one value) before any record names it and never changes
//!   afterwards, so readers cache it forever.
//! - A flush publishes all its records as one value inserted under the first free log slot
//!   with `DAOS_COND_KEY_INSERT`: of racing writers exactly one takes a slot, the others try
//!   the next. Slots are taken in order and never freed, so the log has no gaps and a reader
//!   that has read slots up to N only ever needs those after N.
//! - Records are never changed; hiding indexes (purge, partial wipe) appends a mask record.
//! - `identity` is unique per creation of the dataset: a reader that finds another one knows
//!   the dataset was wiped and created again, and starts over.
//!
//! Unlike FDB5's DAOS catalogue, which puts each entry into an index KV at `archive()` (so
//! entries are visible before `flush()`, one by one), entries here become visible at
//! `flush()`, all of an index at once, as SYSTEM.md section 3 demands; and `list()` reads one
//! value per index instead of one per entry.

use std::collections::{BTreeSet, HashMap};
use std::sync::Arc;
use std::time::{Duration, Instant};

use fieldstore_core::error::{Error, ErrorKind, Result};
use fieldstore_core::index_log::{
    decode_batch, decode_entries, encode_batch, encode_entries, index_record, mask_record, IndexEntries, LogReplay,
};
use fieldstore_core::indexing::PendingIndexes;
use fieldstore_core::recent::RecentList;
use fieldstore_core::unique::unique_suffix;
use fieldstore_core::{Catalogue, CatalogueWriter, ControlAction, DatasetView, FieldLocation, IndexInfo, Key};
use fieldstore_daos_sys::daos_oclass_id_t;

use crate::naming::{check_root_label, dataset_label};
use crate::{oid_text, parse_oid, Container, KeyValue, ObjectType, Pool};

/// How long a flush keeps trying slots while other writers take them first.
const PUBLISH_PATIENCE: Duration = Duration::from_secs(60);
/// The one value of an index KV.
const ENTRIES: &str = "entries";

fn log_key(slot: u64) -> String {
    format!("log/{slot:020}")
}

fn lock_key(action: ControlAction) -> String {
    format!("lock/{}", action.name())
}

/// Object classes and id batches.
#[derive(Clone, Copy)]
pub struct Layout {
    pub kv_class: daos_oclass_id_t,
    pub oid_batch: u64,
}

/// The catalogue's shared side: listing, views, locks, wipes.
pub struct DaosCatalogue {
    place: Arc<Place>,
}

/// One writer: the datasets it archives into.
pub struct DaosCatalogueWriter {
    place: Arc<Place>,
    writers: RecentList<DatasetWriter>,
}

/// Where a catalogue lives: its pool, root container and object classes.
struct Place {
    pool: Arc<Pool>,
    root: String,
    layout: Layout,
    /// The root KV: the list of datasets.
    datasets: KeyValue,
}

/// The well-known KV (OID 0.0) of a container.
fn well_known_kv(container: &Arc<Container>, layout: Layout) -> Result<KeyValue> {
    container.kv(container.object_id(0, 0, ObjectType::KeyValue, layout.kv_class)?)
}

impl DaosCatalogue {
    /// A catalogue whose root container is labelled `root` (created if missing).
    pub fn new(pool: Arc<Pool>, root: &str, layout: Layout) -> Result<Self> {
        check_root_label(root)?;
        pool.create_container(root)?;
        let container =
            pool.open_container(root)?.ok_or_else(|| Error::new(ErrorKind::NotFound, format!("DAOS root container '{root}' vanished")))?;
        let datasets = well_known_kv(&container, layout)?;
        Ok(DaosCatalogue { place: Arc::new(Place { pool, root: root.into(), layout, datasets }) })
    }
}

impl DaosCatalogueWriter {
    fn dataset_writer(&mut self, dataset: &Key, schema_text: &str) -> Result<&mut DatasetWriter> {
        let i = match self.writers.find(|w| w.dataset == *dataset) {
            Some(i) => i,
            None => {
                let writer = self.place.create_dataset(dataset, schema_text)?;
                self.writers.push(writer)
            }
        };
        Ok(&mut self.writers[i])
    }
}

impl Place {
    /// Creates the dataset's container and entries, or joins them. Every step is idempotent
    /// (conditional inserts: the first value stays), so racing creators, and a creator killed
    /// half-way, leave one complete dataset.
    fn create_dataset(&self, dataset: &Key, schema_text: &str) -> Result<DatasetWriter> {
        let label = dataset_label(&self.root, dataset);
        self.pool.create_container(&label)?;
        let container = self
            .pool
            .open_container(&label)?
            .ok_or_else(|| Error::new(ErrorKind::NotFound, format!("DAOS container '{label}' vanished")))?;
        let kv = well_known_kv(&container, self.layout)?;
        let key = dataset.to_string();
        if !kv.insert("key", key.as_bytes())? && kv.get("key")?.as_deref() != Some(key.as_bytes()) {
            return Err(Error::corrupt("dataset container", kv.describe(), format!("it does not hold data set {dataset}")));
        }
        kv.insert("schema", schema_text.as_bytes())?;
        kv.insert("identity", unique_suffix().as_bytes())?;
        let identity = kv.get("identity")?.unwrap_or_default();
        self.datasets.put(&key, label.as_bytes())?;
        Ok(DatasetWriter {
            dataset: dataset.clone(),
            label,
            container,
            kv,
            layout: self.layout,
            identity,
            pending: PendingIndexes::default(),
            slot: 0,
            wiped: false,
        })
    }

    fn label(&self, dataset: &Key) -> String {
        dataset_label(&self.root, dataset)
    }

    fn dataset_kv(&self, dataset: &Key) -> Result<Option<KeyValue>> {
        let Some(container) = self.pool.open_container(&self.label(dataset))? else { return Ok(None) };
        Ok(Some(well_known_kv(&container, self.layout)?))
    }
}

/// Inserts `batch` under the first free log slot after `slot` (updated to the slot taken).
fn publish(kv: &KeyValue, batch: &[u8], slot: &mut u64) -> Result<()> {
    let started = Instant::now();
    let mut attempts = 0u32;
    let mut next = *slot + 1;
    while !kv.insert(&log_key(next), batch)? {
        attempts += 1;
        if attempts == 1 {
            // Behind other writers: start from the last slot one of them took.
            let hint = kv.get("hint")?.and_then(|v| String::from_utf8_lossy(&v).parse::<u64>().ok()).unwrap_or(0);
            next = next.max(hint);
        }
        next += 1;
        if started.elapsed() > PUBLISH_PATIENCE {
            return Err(Error::new(
                ErrorKind::Timeout,
                format!(
                "{}: could not publish after {attempts} attempts in {PUBLISH_PATIENCE:?}: other writers kept taking the log slots first",
                kv.describe()
            ),
            ));
        }
    }
    *slot = next;
    // Only a hint: a stale value costs a later writer a few attempts, never correctness.
    kv.put("hint", next.to_string().as_bytes())
}

/// What this handle archived into one dataset since its last flush.
struct DatasetWriter {
    dataset: Key,
    label: String,
    container: Arc<Container>,
    kv: KeyValue,
    layout: Layout,
    /// The dataset's identity when this writer found or created it.
    identity: Vec<u8>,
    pending: PendingIndexes,
    /// The last log slot this writer knows taken.
    slot: u64,
    /// A flush found the dataset wiped: the writer is dropped at the next discard, so the
    /// next archive creates the dataset again.
    wiped: bool,
}

impl DatasetWriter {
    /// Publishes the pending indexes. A failure in a container that was wiped meanwhile (it
    /// is gone, or another creation of the dataset has it) is [`Error::Wiped`]: the fields
    /// went with it.
    fn flush(&mut self, pool: &Arc<Pool>) -> Result<()> {
        if self.pending.is_empty() {
            return Ok(());
        }
        let Err(e) = self.publish_pending() else { return Ok(()) };
        let still_there = match pool.open_container(&self.label) {
            Ok(Some(container)) => well_known_kv(&container, self.layout)?.get("identity")?.is_some_and(|i| i == self.identity),
            Ok(None) => false,
            Err(_) => return Err(e),
        };
        if still_there {
            return Err(e);
        }
        self.wiped = true;
        Err(Error::Wiped { dataset: self.dataset.to_string() })
    }

    /// Writes one index KV per pending index, then publishes them all in one record batch.
    fn publish_pending(&mut self) -> Result<()> {
        let mut records = Vec::new();
        for index in self.pending.iter() {
            let lo = self.container.next_oid(self.layout.oid_batch)?;
            let oid = self.container.object_id(lo, 0, ObjectType::KeyValue, self.layout.kv_class)?;
            let kv = self.container.kv(oid)?;
            if !kv.insert(ENTRIES, &encode_entries(index))? {
                return Err(Error::new(ErrorKind::AlreadyExists, format!("{}: a new index KV already holds entries", kv.describe())));
            }
            records.push(index_record(&oid_text(oid), index));
        }
        publish(&self.kv, &encode_batch(&records), &mut self.slot)?;
        self.pending.clear();
        Ok(())
    }
}

impl CatalogueWriter for DaosCatalogueWriter {
    fn archive(&mut self, dataset: &Key, schema_text: &str, collocation: &Key, element: &Key, location: FieldLocation) -> Result<()> {
        self.dataset_writer(dataset, schema_text)?.pending.insert(collocation, element, location);
        Ok(())
    }

    fn flush(&mut self, _embedded: &[Key]) -> Result<()> {
        for writer in self.writers.iter_mut() {
            writer.flush(&self.place.pool)?;
        }
        Ok(())
    }

    /// Forgets the pending entries, and the writers of data sets found wiped: the next
    /// archive into one creates it again.
    fn discard(&mut self) {
        for writer in self.writers.iter_mut() {
            writer.pending.clear();
        }
        self.writers.retain(|w| !w.wiped);
    }
}

impl Catalogue for DaosCatalogue {
    fn writer(&self) -> Result<Box<dyn CatalogueWriter>> {
        Ok(Box::new(DaosCatalogueWriter { place: self.place.clone(), writers: RecentList::default() }))
    }

    fn datasets(&self) -> Result<Vec<Key>> {
        let mut keys = self
            .place
            .datasets
            .keys()?
            .into_iter()
            .map(|k| Key::parse(&k).map_err(|e| Error::corrupt("dataset list", self.place.datasets.describe(), e.to_string())))
            .collect::<Result<Vec<_>>>()?;
        keys.sort();
        Ok(keys)
    }

    fn open(&self, dataset: &Key) -> Result<Option<Box<dyn DatasetView>>> {
        let mut view = DaosView {
            pool: self.place.pool.clone(),
            label: self.place.label(dataset),
            layout: self.place.layout,
            open: None,
            schema_text: String::new(),
            identity: Vec::new(),
            slot: 0,
            replay: LogReplay::default(),
            loaded: HashMap::new(),
        };
        if !view.attach()? {
            return Ok(None);
        }
        Ok(Some(Box::new(view)))
    }

    /// Unlists the dataset first (so it is not found half-removed), then destroys its
    /// container, which takes every index KV (and the store's arrays, if they share it).
    fn wipe_dataset(&self, dataset: &Key) -> Result<()> {
        self.place.datasets.remove(&dataset.to_string())?;
        // Its container goes: a writer's next flush into it fails as wiped, and its next
        // archive creates the dataset afresh.
        self.place.pool.destroy_container(&self.place.label(dataset))?;
        Ok(())
    }

    fn locks(&self, dataset: &Key) -> Result<BTreeSet<ControlAction>> {
        let Some(kv) = self.place.dataset_kv(dataset)? else { return Ok(BTreeSet::new()) };
        let mut locked = BTreeSet::new();
        for action in ControlAction::ALL {
            if kv.get(&lock_key(action))?.is_some() {
                locked.insert(action);
            }
        }
        Ok(locked)
    }

    fn set_lock(&self, dataset: &Key, action: ControlAction, locked: bool) -> Result<()> {
        let kv = self
            .place
            .dataset_kv(dataset)?
            .ok_or_else(|| Error::new(ErrorKind::NotFound, format!("no data set {dataset} to lock or unlock")))?;
        if locked {
            kv.put(&lock_key(action), b"")
        } else {
            kv.remove(&lock_key(action))
        }
    }

    fn describe(&self, dataset: &Key) -> String {
        format!("daos pool {} container {}", self.place.pool.label(), self.place.label(dataset))
    }
}

/// A reader's view of one dataset: the log read so far, and the index KVs loaded.
struct DaosView {
    pool: Arc<Pool>,
    label: String,
    layout: Layout,
    /// The dataset's container and KV while it exists.
    open: Option<(Arc<Container>, KeyValue)>,
    schema_text: String,
    identity: Vec<u8>,
    /// The last log slot read.
    slot: u64,
    replay: LogReplay,
    loaded: HashMap<String, Arc<IndexEntries>>,
}

impl DaosView {
    /// Opens the dataset's container afresh; false if there is no complete dataset. A new
    /// identity (wiped and created again) starts the log over.
    fn attach(&mut self) -> Result<bool> {
        self.open = None;
        let Some(container) = self.pool.open_container(&self.label)? else { return Ok(false) };
        let kv = well_known_kv(&container, self.layout)?;
        let (Some(schema), Some(identity)) = (kv.get("schema")?, kv.get("identity")?) else { return Ok(false) };
        if identity != self.identity {
            (self.identity, self.slot, self.replay) = (identity, 0, LogReplay::default());
            self.loaded.clear();
        }
        self.schema_text = String::from_utf8_lossy(&schema).into_owned();
        self.open = Some((container, kv));
        Ok(true)
    }

    /// The dataset KV: the one this view knew if the dataset still exists as it was, else
    /// the new one's; `None` if there is none.
    fn current(&mut self) -> Result<Option<&KeyValue>> {
        let same = match &self.open {
            Some((_, kv)) => kv.get("identity").ok().flatten().is_some_and(|i| i == self.identity),
            None => false,
        };
        if !same && !self.attach()? {
            return Ok(None);
        }
        Ok(self.open.as_ref().map(|(_, kv)| kv))
    }

    fn wiped(&self) -> Error {
        Error::new(ErrorKind::Conflict, format!("DAOS container '{}' was wiped while it was read", self.label))
    }

    fn load(&mut self, index: &IndexInfo) -> Result<Arc<IndexEntries>> {
        if let Some(entries) = self.loaded.get(&index.id) {
            return Ok(entries.clone());
        }
        let (container, _) = self.open.as_ref().ok_or_else(|| self.wiped())?;
        let oid = parse_oid(&index.id).ok_or_else(|| Error::corrupt("log record", &self.label, format!("index id {:?}", index.id)))?;
        let kv = container.kv(oid)?;
        let value = kv
            .get(ENTRIES)?
            .ok_or_else(|| Error::corrupt("index KV", kv.describe(), "missing (the data set was wiped while it was read?)"))?;
        let entries = Arc::new(decode_entries(&value).ok_or_else(|| Error::corrupt("index KV", kv.describe(), "undecodable"))?);
        self.loaded.insert(index.id.clone(), entries.clone());
        Ok(entries)
    }
}

impl DatasetView for DaosView {
    fn schema_text(&self) -> &str {
        &self.schema_text
    }

    fn indexes(&mut self) -> Result<Vec<Arc<IndexInfo>>> {
        if self.current()?.is_none() {
            // Wiped: nothing is visible any more.
            self.replay = LogReplay::default();
            return Ok(Vec::new());
        }
        // After `current`: attaching to a dataset created again restarts the log.
        let (slot, kv) = (self.slot, &self.open.as_ref().expect("attached").1);
        let mut batches = Vec::new();
        while let Some(batch) = kv.get(&log_key(slot + batches.len() as u64 + 1))? {
            batches.push(batch);
        }
        let describe = kv.describe();
        for batch in batches {
            self.slot += 1;
            let corrupt = || Error::corrupt("log record", format!("{describe} {}", log_key(self.slot)), "undecodable");
            for record in decode_batch(&batch).ok_or_else(corrupt)? {
                self.replay.apply(record).ok_or_else(corrupt)?;
            }
        }
        Ok(self.replay.indexes())
    }

    fn lookup(&mut self, index: &IndexInfo, element: &Key) -> Result<Option<FieldLocation>> {
        Ok(self.load(index)?.lookup(element))
    }

    fn entries(&mut self, index: &IndexInfo) -> Result<Vec<(Key, FieldLocation)>> {
        self.load(index)?.keyed(index)
    }

    /// Index key-values stay: readers of an older log position may still read them.
    fn mask(&mut self, indexes: &[&IndexInfo]) -> Result<Vec<String>> {
        if indexes.is_empty() {
            return Ok(Vec::new());
        }
        if self.current()?.is_none() {
            return Err(self.wiped());
        }
        // After `current`: attaching to a dataset created again restarts the log.
        let (mut slot, kv) = (self.slot, &self.open.as_ref().expect("attached").1);
        publish(kv, &encode_batch(&[mask_record(indexes.iter().map(|i| i.id.as_str()))]), &mut slot)?;
        Ok(Vec::new())
    }
}
