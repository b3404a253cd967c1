//! The S3 catalogue: the object-store catalogue (`fieldstore_object_catalogue`, which holds
//! the logic and its invariants) over plain objects and conditional PUTs, so that an S3
//! endpoint alone is enough.
//!
//! ```text
//! PREFIX/datasets/DATASET                  empty: the list of data sets
//! PREFIX/DATASET/record                    key, schema, identity, format: one object, created
//!                                          once (If-None-Match: *), never changed
//! PREFIX/DATASET/log/CREATION/SLOT         a batch of records, one per flush or mask, created
//!                                          (If-None-Match: *) under the first free slot
//! PREFIX/DATASET/lock/CREATION/ACTION      empty: the action is locked
//! PREFIX/DATASET/index/NAME                an index: its entries, created once
//! ```
//!
//! CREATION is the MD5 of the record's identity, so everything of one creation of a data set
//! (its log, its locks) is apart from the next creation's: a wipe removes the record first,
//! then what the old creation named, and nothing a new creation writes meanwhile. SLOT is a
//! 20-digit number: of racing writers exactly one creates a slot, the others take the next,
//! found by a LIST after their last; a writer only ever creates the slot after one it saw
//! exists, so the log has no gaps, and LIST (strongly consistent on S3) gives it in order.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use bytes::Bytes;
use object_store::path::Path;
use object_store::{ObjectStore, ObjectStoreExt, PutMode, PutOptions, PutPayload};

use fieldstore_core::codec::{frame, parse_frame, Decoder, Encoder, Frame};
use fieldstore_core::error::{Error, ErrorKind, Result};
use fieldstore_core::index_log::{decode_entries, encode_entries, IndexEntries};
use fieldstore_core::indexing::PendingIndex;
use fieldstore_core::unique::{unique_object_name, unique_suffix};
use fieldstore_core::Key;
use fieldstore_object_catalogue::{DatasetObjects, IndexWrite, LogRead, ObjectCatalogue, Objects, Values};

use crate::client::{Pending, S3Client};
use crate::layout::{Buckets, Place};

/// How long a flush keeps trying slots while other writers take them first.
const PUBLISH_PATIENCE: Duration = Duration::from_secs(60);
/// The magic of a record object's frame.
const RECORD_MAGIC: &[u8; 4] = b"FSR1";

/// The S3 catalogue.
pub type S3Catalogue = ObjectCatalogue<CatalogueBucket>;

/// A catalogue in a section's buckets.
pub fn open(buckets: Buckets) -> S3Catalogue {
    ObjectCatalogue::new(CatalogueBucket { buckets })
}

/// The catalogue's objects in its buckets.
pub struct CatalogueBucket {
    buckets: Buckets,
}

/// One data set's objects.
pub struct DatasetPrefix {
    place: Place,
    client: S3Client,
    /// The last log slot this handle knows taken.
    slot: Mutex<u64>,
}

impl CatalogueBucket {
    fn list_entry(&self, dataset: &Key) -> Path {
        self.buckets.home().path(&["datasets", &dataset.to_string()])
    }
}

impl Objects for CatalogueBucket {
    type Dataset = DatasetPrefix;

    /// A prefix needs no creation (a bucket per data set does); whether a data set is there
    /// is its record's business.
    fn dataset(&self, dataset: &Key, create: bool) -> Result<Option<Arc<DatasetPrefix>>> {
        let place = self.buckets.place(dataset, create)?;
        Ok(place.map(|place| Arc::new(DatasetPrefix { client: place.client.clone(), place, slot: Mutex::new(0) })))
    }

    fn listed(&self) -> Result<Vec<String>> {
        let home = self.buckets.home();
        home.list(home.path(&["datasets"]), None)
    }

    fn describe_list(&self) -> String {
        let home = self.buckets.home();
        format!("s3 bucket {} prefix {}/", home.bucket(), home.path(&["datasets"]))
    }

    fn set_listed(&self, dataset: &Key, listed: bool) -> Result<()> {
        let home = self.buckets.home();
        let (store, path) = (home.store().clone(), self.list_entry(dataset));
        if listed {
            home.run(async move { store.put(&path, PutPayload::new()).await.map(drop) })
        } else {
            home.run(async move { store.delete(&path).await })
        }
    }

    /// The record first (from then on readers find no data set), then the old creation's log
    /// and locks, then the index objects its log named.
    fn remove(&self, _dataset: &Key, objects: Option<&DatasetPrefix>, index_ids: &[String]) -> Result<()> {
        let Some(objects) = objects else { return Ok(()) };
        let record = objects.record()?;
        objects.delete(objects.path(&["record"]))?;
        if let Some(record) = record {
            let creation = creation(&record.identity);
            for folder in ["log", "lock"] {
                for name in objects.client.list(objects.path(&[folder, &creation]), None)? {
                    objects.delete(objects.path(&[folder, &creation, &name]))?;
                }
            }
        }
        for id in index_ids {
            objects.delete(objects.path(&["index", id]))?;
        }
        Ok(())
    }

    fn describe(&self, dataset: &Key) -> String {
        self.buckets.describe(dataset)
    }
}

/// A data set's record: the values it was created with.
struct Record {
    identity: Vec<u8>,
    values: Values,
}

/// The folder of one creation of a data set: the MD5 of its identity.
fn creation(identity: &[u8]) -> String {
    unique_object_name(&String::from_utf8_lossy(identity))
}

fn encode_record(values: &[(&str, &[u8])]) -> Vec<u8> {
    let mut e = Encoder::new();
    e.u32(values.len() as u32);
    for (name, value) in values {
        e.str(name);
        e.u32(value.len() as u32);
        e.buf.extend_from_slice(value);
    }
    frame(RECORD_MAGIC, 1, &e.buf)
}

fn decode_record(data: &[u8]) -> Option<Values> {
    let Frame::Valid { payload, size, .. } = parse_frame(RECORD_MAGIC, data) else { return None };
    if size != data.len() {
        return None;
    }
    let mut d = Decoder::new(payload);
    let count = d.u32()?;
    let mut values = Vec::new();
    for _ in 0..count {
        let name = d.str()?.to_string();
        let length = usize::try_from(d.u32()?).ok()?;
        values.push((name, d.bytes(length)?.to_vec()));
    }
    d.finished().then_some(values)
}

impl DatasetPrefix {
    fn path(&self, parts: &[&str]) -> Path {
        self.place.path(parts)
    }

    fn log_path(&self, creation: &str, slot: u64) -> Path {
        self.path(&["log", creation, &format!("{slot:020}")])
    }

    /// The object's bytes; `None` if there is none.
    fn get_object(&self, path: Path) -> Result<Option<Bytes>> {
        let store = self.client.store().clone();
        self.client.run(async move {
            match store.get(&path).await {
                Ok(got) => got.bytes().await.map(Some),
                Err(object_store::Error::NotFound { .. }) => Ok(None),
                Err(e) => Err(e),
            }
        })
    }

    /// Creates the object unless it exists: whether this call created it.
    fn start_create(&self, path: Path, bytes: Vec<u8>) -> Result<Pending<bool>> {
        let store = self.client.store().clone();
        let options = PutOptions { mode: PutMode::Create, ..PutOptions::default() };
        self.client.spawn(async move {
            match store.put_opts(&path, PutPayload::from(bytes), options).await {
                Ok(_) => Ok(true),
                Err(object_store::Error::AlreadyExists { .. }) => Ok(false),
                Err(e) => Err(e),
            }
        })
    }

    fn delete(&self, path: Path) -> Result<()> {
        let store = self.client.store().clone();
        self.client.run(async move { store.delete(&path).await })
    }

    /// The record; `None` if there is none (never created, or wiped).
    fn record(&self) -> Result<Option<Record>> {
        let path = self.path(&["record"]);
        let Some(data) = self.get_object(path.clone())? else { return Ok(None) };
        let values = decode_record(&data).ok_or_else(|| Error::corrupt("data set record", path.to_string(), "undecodable"))?;
        let identity = values.iter().find(|(k, _)| k == "identity").map(|(_, v)| v.clone()).unwrap_or_default();
        Ok(Some(Record { identity, values }))
    }

    /// The slots after `after` of a creation's log, in order.
    fn slots_after(&self, creation: &str, after: u64) -> Result<Vec<u64>> {
        let folder = self.path(&["log", creation]);
        let names = self.client.list(folder, Some(self.log_path(creation, after)))?;
        names
            .iter()
            .map(|name| {
                name.parse::<u64>().map_err(|_| Error::corrupt("log object", self.path(&["log", creation, name]).to_string(), "not a slot"))
            })
            .collect()
    }
}

impl DatasetObjects for DatasetPrefix {
    /// One object, created once: of racing creators one wins, and a creator killed half-way
    /// created nothing.
    fn create_record(&self, values: &[(&str, &[u8])]) -> Result<()> {
        self.start_create(self.path(&["record"]), encode_record(values))?.wait().map(drop)
    }

    /// The record's values among `names`, and the locks among them (`lock/ACTION`) of its
    /// creation.
    fn get(&self, names: &[&str]) -> Result<Option<Values>> {
        let Some(record) = self.record()? else { return Ok(None) };
        let creation = creation(&record.identity);
        let mut found = Vec::new();
        let mut locks = Vec::new();
        for name in names {
            match record.values.iter().find(|(k, _)| k == name) {
                Some(value) => found.push(value.clone()),
                None => {
                    if let Some(action) = name.strip_prefix("lock/") {
                        let store = self.client.store().clone();
                        let path = self.path(&["lock", &creation, action]);
                        let get = self.client.spawn(async move {
                            match store.head(&path).await {
                                Ok(_) => Ok(true),
                                Err(object_store::Error::NotFound { .. }) => Ok(false),
                                Err(e) => Err(e),
                            }
                        })?;
                        locks.push((name.to_string(), get));
                    }
                }
            }
        }
        for (name, get) in locks {
            if get.wait()? {
                found.push((name, Vec::new()));
            }
        }
        Ok(Some(found))
    }

    /// Only locks change after creation: an object of the record's creation each.
    fn set(&self, name: &str, value: Option<&[u8]>) -> Result<()> {
        let action = name.strip_prefix("lock/").ok_or_else(|| {
            Error::new(ErrorKind::Unsupported, format!("{}: record value {name} is set only at creation", self.describe()))
        })?;
        let record = self.record()?.ok_or_else(|| Error::new(ErrorKind::NotFound, format!("{}: no data set", self.describe())))?;
        let path = self.path(&["lock", &creation(&record.identity), action]);
        let store = self.client.store().clone();
        match value {
            Some(value) => {
                let payload = PutPayload::from(value.to_vec());
                self.client.run(async move { store.put(&path, payload).await.map(drop) })
            }
            None => self.delete(path),
        }
    }

    /// Under the first free slot of the creation's log, if the record is that creation.
    fn append(&self, identity: &[u8], batch: &[u8]) -> Result<bool> {
        match self.record()? {
            Some(record) if record.identity == identity => {}
            _ => return Ok(false),
        }
        let creation = creation(identity);
        let mut slot = self.slot.lock().unwrap_or_else(|p| p.into_inner());
        let started = Instant::now();
        let mut attempts = 0u32;
        let mut next = *slot + 1;
        while !self.start_create(self.log_path(&creation, next), batch.to_vec())?.wait()? {
            attempts += 1;
            // Behind other writers: after the last slot one of them took.
            next = self.slots_after(&creation, next)?.last().map_or(next, |last| *last) + 1;
            if started.elapsed() > PUBLISH_PATIENCE {
                return Err(Error::new(
                    ErrorKind::Timeout,
                    format!(
                        "{}: could not publish after {attempts} attempts in {PUBLISH_PATIENCE:?}: other writers kept taking the log slots first",
                        self.describe()
                    ),
                ));
            }
        }
        *slot = next;
        Ok(true)
    }

    /// The record, then the creation's log objects after `position`, fetched at once.
    fn read_log(&self, position: u64) -> Result<Option<LogRead>> {
        let Some(record) = self.record()? else { return Ok(None) };
        let creation = creation(&record.identity);
        let slots = self.slots_after(&creation, position)?;
        let gets = slots
            .iter()
            .map(|slot| {
                let (store, path) = (self.client.store().clone(), self.log_path(&creation, *slot));
                self.client.spawn(async move { store.get(&path).await?.bytes().await })
            })
            .collect::<Result<Vec<_>>>()?;
        let mut batches = Vec::with_capacity(slots.len());
        let mut end = position;
        for (slot, get) in slots.into_iter().zip(gets) {
            if slot != end + 1 {
                return Err(Error::corrupt("log", self.describe_position(end + 1), format!("missing (the next is slot {slot})")));
            }
            batches.push((slot, get.wait()?.to_vec()));
            end = slot;
        }
        Ok(Some(LogRead { identity: record.identity, batches, end }))
    }

    fn write_index(&self, index: &PendingIndex) -> Result<Box<dyn IndexWrite>> {
        let id = unique_object_name(&format!("index/{}", unique_suffix()));
        let create = self.start_create(self.path(&["index", &id]), encode_entries(index))?;
        Ok(Box::new(IndexObjectWrite { describe: self.path(&["index", &id]).to_string(), id, create }))
    }

    fn read_index(&self, id: &str) -> Result<IndexEntries> {
        let path = self.path(&["index", id]);
        let data = self
            .get_object(path.clone())?
            .ok_or_else(|| Error::corrupt("index object", path.to_string(), "missing (the data set was wiped while it was read?)"))?;
        decode_entries(&data).ok_or_else(|| Error::corrupt("index object", path.to_string(), "undecodable"))
    }

    fn describe(&self) -> String {
        format!("s3 bucket {} object {}", self.client.bucket(), self.path(&["record"]))
    }

    fn describe_position(&self, slot: u64) -> String {
        format!("s3 bucket {} log slot {slot} of {}", self.client.bucket(), self.path(&["log"]))
    }
}

/// An index object's create, in flight.
struct IndexObjectWrite {
    id: String,
    describe: String,
    create: Pending<bool>,
}

impl IndexWrite for IndexObjectWrite {
    fn finish(self: Box<Self>) -> Result<String> {
        if !self.create.wait()? {
            return Err(Error::new(ErrorKind::AlreadyExists, format!("{}: a new index object already exists", self.describe)));
        }
        Ok(self.id)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_round_trip_and_damage_is_refused() {
        let values: [(&str, &[u8]); 3] = [("format", b"1"), ("schema", b"[ a [ b ] ]\n"), ("identity", b"")];
        let data = encode_record(&values);
        let decoded = decode_record(&data).unwrap();
        assert_eq!(decoded, values.iter().map(|(k, v)| (k.to_string(), v.to_vec())).collect::<Vec<_>>());
        assert!(decode_record(&data[..data.len() - 1]).is_none());
        let mut flipped = data.clone();
        *flipped.last_mut().unwrap() ^= 1;
        assert!(decode_record(&flipped).is_none());
    }
}
