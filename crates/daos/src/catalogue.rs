//! The DAOS catalogue: the object-store catalogue (`fieldstore_object_catalogue`, which holds
//! the logic and its invariants) over key-values in a root container and one container per
//! dataset.
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
//! The record's values are inserted with `DAOS_COND_KEY_INSERT`, so the first creator's stay.
//! A flush's batch is inserted under the first free log slot, with `DAOS_COND_KEY_INSERT`: of
//! racing writers exactly one takes a slot, the others try the next. Slots are taken in
//! order and never freed, so the log has no gaps; positions in the log are slots. A wipe
//! destroys the data set's container, which takes every index KV with it.
//!
//! Unlike FDB5's DAOS catalogue, which puts each entry into an index KV at `archive()` (so
//! entries are visible before `flush()`, one by one), entries here become visible at
//! `flush()`, all of an index at once, as docs/consistency.md demands; and `list()` reads one
//! value per index instead of one per entry.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use fieldstore_core::error::{Error, ErrorKind, Result};
use fieldstore_core::indexing::PendingIndex;
use fieldstore_core::Key;
use fieldstore_daos_sys::daos_oclass_id_t;
use fieldstore_object_catalogue::index_log::{decode_entries, encode_entries, IndexEntries, Sealing};
use fieldstore_object_catalogue::{DatasetObjects, IndexWrite, IndexWritten, LogRead, ObjectCatalogue, Objects, Values};

use crate::naming::{check_root_label, dataset_label};
use crate::{oid_text, parse_oid, Container, KeyValue, ObjectType, Pool};

/// How long a flush keeps trying slots while other writers take them first.
const PUBLISH_PATIENCE: Duration = Duration::from_secs(60);
/// The one value of an index KV.
const ENTRIES: &str = "entries";

fn log_key(slot: u64) -> String {
    format!("log/{slot:020}")
}

/// Object classes and id batches.
#[derive(Clone, Copy)]
pub struct Layout {
    /// The object class of the root, dataset and index key-values.
    pub kv_class: daos_oclass_id_t,
    /// Object ids reserved at once for index key-values (one round trip per batch).
    pub oid_batch: u64,
}

/// The DAOS catalogue.
pub type DaosCatalogue = ObjectCatalogue<CatalogueContainers>;

/// A catalogue whose root container is labelled `root` (created if missing).
pub fn open(pool: Arc<Pool>, root: &str, layout: Layout) -> Result<DaosCatalogue> {
    check_root_label(root)?;
    pool.create_container(root)?;
    let container =
        pool.open_container(root)?.ok_or_else(|| Error::new(ErrorKind::NotFound, format!("DAOS root container '{root}' vanished")))?;
    let datasets = well_known_kv(&container, layout)?;
    Ok(ObjectCatalogue::new(CatalogueContainers { pool, root: root.into(), layout, datasets }))
}

/// The catalogue's containers: its root container's list, and a container per data set.
pub struct CatalogueContainers {
    pool: Arc<Pool>,
    root: String,
    layout: Layout,
    /// The root KV: the list of datasets.
    datasets: KeyValue,
}

/// One data set's container, and its KV holding the record and the log.
pub struct DatasetContainer {
    container: Arc<Container>,
    kv: KeyValue,
    layout: Layout,
    /// The last log slot this handle knows taken.
    slot: Mutex<u64>,
}

/// The well-known KV (OID 0.0) of a container.
fn well_known_kv(container: &Arc<Container>, layout: Layout) -> Result<KeyValue> {
    container.kv(container.object_id(0, 0, ObjectType::KeyValue, layout.kv_class)?)
}

impl CatalogueContainers {
    fn label(&self, dataset: &Key) -> String {
        dataset_label(&self.root, dataset)
    }
}

impl Objects for CatalogueContainers {
    type Dataset = DatasetContainer;

    fn dataset(&self, dataset: &Key, create: bool) -> Result<Option<Arc<DatasetContainer>>> {
        let label = self.label(dataset);
        if create {
            self.pool.create_container(&label)?;
        }
        let Some(container) = self.pool.open_container(&label)? else { return Ok(None) };
        let kv = well_known_kv(&container, self.layout)?;
        Ok(Some(Arc::new(DatasetContainer { container, kv, layout: self.layout, slot: Mutex::new(0) })))
    }

    fn listed(&self) -> Result<Vec<String>> {
        self.datasets.keys()
    }

    fn describe_list(&self) -> String {
        self.datasets.describe()
    }

    fn set_listed(&self, dataset: &Key, listed: bool) -> Result<()> {
        let key = dataset.to_string();
        if listed {
            self.datasets.put(&key, self.label(dataset).as_bytes())
        } else {
            self.datasets.remove(&key)
        }
    }

    /// Destroys the data set's container, which takes every index KV (and the store's arrays,
    /// if they share it): a later archive creates the data set afresh.
    fn remove(&self, dataset: &Key, _objects: Option<&DatasetContainer>, _index_ids: &[String]) -> Result<()> {
        self.pool.destroy_container(&self.label(dataset)).map(drop)
    }

    fn describe(&self, dataset: &Key) -> String {
        format!("daos pool {} container {}", self.pool.label(), self.label(dataset))
    }
}

impl DatasetObjects for DatasetContainer {
    /// Each value by a conditional insert: the first creator's stay, and a creator killed
    /// half-way leaves what the next one completes.
    fn create_record(&self, values: &[(&str, &[u8])]) -> Result<()> {
        for (name, value) in values {
            self.kv.insert(name, value)?;
        }
        Ok(())
    }

    /// The container is the data set: its KV holds whichever values are set.
    fn get(&self, names: &[&str]) -> Result<Option<Values>> {
        let mut found = Vec::new();
        for name in names {
            if let Some(value) = self.kv.get(name)? {
                found.push((name.to_string(), value));
            }
        }
        Ok(Some(found))
    }

    fn set(&self, name: &str, value: Option<&[u8]>) -> Result<()> {
        match value {
            Some(value) => self.kv.put(name, value),
            None => self.kv.remove(name),
        }
    }

    /// A container destroyed while this handle was open refuses the insert (an error): the
    /// identity is checked first only for a container created again under the same handle.
    fn append(&self, identity: &[u8], batch: &[u8]) -> Result<bool> {
        if self.kv.get("identity")?.as_deref() != Some(identity) {
            return Ok(false);
        }
        let mut slot = self.slot.lock().unwrap_or_else(|p| p.into_inner());
        let started = Instant::now();
        let mut attempts = 0u32;
        let mut next = *slot + 1;
        while !self.kv.insert(&log_key(next), batch)? {
            attempts += 1;
            if attempts == 1 {
                // Behind other writers: start from the last slot one of them took.
                let hint = self.kv.get("hint")?.and_then(|v| String::from_utf8_lossy(&v).parse::<u64>().ok()).unwrap_or(0);
                next = next.max(hint);
            }
            next += 1;
            if started.elapsed() > PUBLISH_PATIENCE {
                return Err(Error::new(
                    ErrorKind::Timeout,
                    format!(
                        "{}: could not publish after {attempts} attempts in {PUBLISH_PATIENCE:?}: other writers kept taking the log slots first",
                        self.kv.describe()
                    ),
                ));
            }
        }
        *slot = next;
        // Only a hint: a stale value costs a later writer a few attempts, never correctness.
        self.kv.put("hint", next.to_string().as_bytes())?;
        Ok(true)
    }

    fn read_log(&self, position: u64) -> Result<Option<LogRead>> {
        let Some(identity) = self.kv.get("identity")? else { return Ok(None) };
        let mut batches = Vec::new();
        let mut end = position;
        while let Some(batch) = self.kv.get(&log_key(end + 1))? {
            end += 1;
            batches.push((end, batch));
        }
        Ok(Some(LogRead { identity, batches, end }))
    }

    /// Written at once (DAOS has no asynchronous call here): one value in a KV of its own.
    fn write_index(&self, index: &PendingIndex, sealing: Sealing) -> Result<Box<dyn IndexWrite>> {
        let lo = self.container.next_oid(self.layout.oid_batch)?;
        let oid = self.container.object_id(lo, 0, ObjectType::KeyValue, self.layout.kv_class)?;
        let kv = self.container.kv(oid)?;
        if !kv.insert(ENTRIES, &encode_entries(index, sealing))? {
            return Err(Error::new(ErrorKind::AlreadyExists, format!("{}: a new index KV already holds entries", kv.describe())));
        }
        Ok(Box::new(IndexWritten(oid_text(oid))))
    }

    fn read_index(&self, id: &str) -> Result<IndexEntries> {
        let oid = parse_oid(id).ok_or_else(|| Error::corrupt("log record", self.kv.describe(), format!("index id {id:?}")))?;
        let kv = self.container.kv(oid)?;
        let value = kv
            .get(ENTRIES)?
            .ok_or_else(|| Error::corrupt("index KV", kv.describe(), "missing (the data set was wiped while it was read?)"))?;
        decode_entries(&value).map_err(|why| Error::corrupt("index KV", kv.describe(), why))
    }

    fn describe(&self) -> String {
        self.kv.describe()
    }

    fn describe_position(&self, slot: u64) -> String {
        format!("{} {}", self.kv.describe(), log_key(slot))
    }
}
