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
//! PREFIX/DATASET/lock/ACTION               empty: the action is locked
//! PREFIX/DATASET/index/NAME                an index: its entries, created once
//! ```
//!
//! CREATION is the MD5 of the record's identity, so each creation of a data set has a log of
//! its own: a wipe removes the record first, then the old creation's log and the index objects
//! it named, and nothing a new creation writes meanwhile; then the locks (as FDB5's wipe takes
//! a data set's lock files with its directory). SLOT is a
//! 20-digit number: of racing writers exactly one creates a slot, the others take the next,
//! found by a LIST after their last; a writer only ever creates the slot after one it saw
//! exists, so the log has no gaps, and LIST (strongly consistent on S3) gives it in order.
//!
//! A reader refreshes with one LIST of the data set's prefix after the slot it read to: it
//! gives the new slots and, sorting after them, the record with its entity tag, which tells
//! whether the data set is still the same creation (a new creation's record is another
//! object, with another tag); only when it is not is the record read again. Locks are read
//! with one LIST too.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use object_store::path::Path;
use object_store::{ObjectStore, ObjectStoreExt, PutMode, PutOptions, PutPayload};

use fieldstore_core::codec::{frame, parse_frame, Decoder, Encoder, Frame};
use fieldstore_core::error::{Error, ErrorKind, Result};
use fieldstore_core::indexing::PendingIndex;
use fieldstore_core::unique::{unique_object_name, unique_suffix};
use fieldstore_core::Key;
use fieldstore_object_catalogue::index_log::{decode_entries, encode_entries, IndexEntries, Sealing};
use fieldstore_object_catalogue::{DatasetObjects, IndexWrite, LogRead, ObjectCatalogue, Objects, Values};

use crate::client::{Pending, S3Client};
use crate::layout::{Buckets, Place};

/// How long a flush keeps trying slots while other writers take them first.
const PUBLISH_PATIENCE: Duration = Duration::from_secs(60);
/// How many index objects a reader GETs at once.
const INDEX_READS_IN_FLIGHT: usize = 64;
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
    /// The last log slot this handle knows taken.
    slot: Mutex<u64>,
    /// The creation last read, by its record's entity tag.
    known: Mutex<Option<Creation>>,
}

/// A creation of a data set as a reader last found it.
#[derive(Clone)]
struct Creation {
    tag: String,
    identity: Vec<u8>,
    folder: String,
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
        Ok(place.map(|place| Arc::new(DatasetPrefix { place, slot: Mutex::new(0), known: Mutex::new(None) })))
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
            home.delete(path)
        }
    }

    /// The record first (from then on readers find no data set), then the old creation's log,
    /// the index objects its log named, and the locks.
    fn remove(&self, _dataset: &Key, objects: Option<&DatasetPrefix>, index_ids: &[String]) -> Result<()> {
        let Some(objects) = objects else { return Ok(()) };
        let client = objects.client();
        let record = objects.record()?;
        client.delete(objects.path(&["record"]))?;
        if let Some((record, _)) = record {
            let folder = creation(&record.identity);
            let slots = client.list(objects.path(&["log", &folder]), None)?;
            client.delete_all(slots.iter().map(|slot| objects.path(&["log", &folder, slot])).collect())?;
        }
        client.delete_all(index_ids.iter().map(|id| objects.path(&["index", id])).collect())?;
        let locks = client.list(objects.path(&["lock"]), None)?;
        client.delete_all(locks.iter().map(|action| objects.path(&["lock", action])).collect())
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

    /// The client of the data set's bucket.
    fn client(&self) -> &S3Client {
        &self.place.client
    }

    fn log_path(&self, creation: &str, slot: u64) -> Path {
        self.path(&["log", creation, &format!("{slot:020}")])
    }

    /// Creates the object unless it exists: whether this call created it.
    fn start_create(&self, path: Path, bytes: Vec<u8>) -> Result<Pending<bool>> {
        let store = self.client().store().clone();
        let options = PutOptions { mode: PutMode::Create, ..PutOptions::default() };
        self.client().spawn(async move {
            match store.put_opts(&path, PutPayload::from(bytes), options).await {
                Ok(_) => Ok(true),
                Err(object_store::Error::AlreadyExists { .. }) => Ok(false),
                Err(e) => Err(e),
            }
        })
    }

    /// The record and its entity tag; `None` if there is none (never created, or wiped).
    fn record(&self) -> Result<Option<(Record, Option<String>)>> {
        let path = self.path(&["record"]);
        let Some((data, tag)) = self.client().start_get(path.clone())?.wait()? else { return Ok(None) };
        let values = decode_record(&data).ok_or_else(|| Error::corrupt("data set record", path.to_string(), "undecodable"))?;
        let identity = values.iter().find(|(k, _)| k == "identity").map(|(_, v)| v.clone()).unwrap_or_default();
        Ok(Some((Record { identity, values }, tag)))
    }

    /// The locks set on the data set (`lock/ACTION`), by one LIST.
    fn locks(&self) -> Result<Vec<String>> {
        Ok(self.client().list(self.path(&["lock"]), None)?.into_iter().map(|action| format!("lock/{action}")).collect())
    }

    /// The new slots of the creation this handle read last, by one LIST of the data set's
    /// prefix after `position`: `None` unless the record listed there is still that creation's.
    fn quick_refresh(&self, position: u64) -> Result<Option<(Creation, Vec<u64>)>> {
        let Some(known) = self.known.lock().unwrap_or_else(|p| p.into_inner()).clone() else { return Ok(None) };
        let listed = self.client().list_meta(self.path(&[]), Some(self.log_path(&known.folder, position)))?;
        let record = self.path(&["record"]);
        if !listed.iter().any(|meta| meta.location == record && meta.e_tag.as_deref() == Some(known.tag.as_str())) {
            return Ok(None);
        }
        let folder = format!("{}/", self.path(&["log", &known.folder]));
        let slots = listed
            .iter()
            .filter_map(|meta| meta.location.as_ref().strip_prefix(folder.as_str()))
            .map(|slot| slot.parse::<u64>().map_err(|e| Error::corrupt_because("log object", format!("{folder}{slot}"), "not a slot", e)))
            .collect::<Result<Vec<_>>>()?;
        Ok(Some((known, slots)))
    }

    /// The batches of `slots` of the log of the creation `identity` (fetched at once), which
    /// must follow `position` without a gap.
    fn fetch_batches(&self, identity: Vec<u8>, folder: &str, position: u64, slots: Vec<u64>) -> Result<LogRead> {
        let gets = slots
            .iter()
            .map(|slot| {
                let (store, path) = (self.client().store().clone(), self.log_path(folder, *slot));
                self.client().spawn(async move { store.get(&path).await?.bytes().await })
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
        Ok(LogRead { identity, batches, end })
    }

    /// The slots after `after` of a creation's log, in order.
    fn slots_after(&self, creation: &str, after: u64) -> Result<Vec<u64>> {
        let folder = self.path(&["log", creation]);
        let names = self.client().list(folder, Some(self.log_path(creation, after)))?;
        names
            .iter()
            .map(|name| {
                name.parse::<u64>()
                    .map_err(|e| Error::corrupt_because("log object", self.path(&["log", creation, name]).to_string(), "not a slot", e))
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

    /// The record's values among `names`, and the locks among them (`lock/ACTION`); locks
    /// alone are one LIST, without the record.
    fn get(&self, names: &[&str]) -> Result<Option<Values>> {
        let (locks, values): (Vec<&str>, Vec<&str>) = names.iter().partition(|name| name.starts_with("lock/"));
        let mut found = Vec::new();
        if !values.is_empty() {
            let Some((record, _)) = self.record()? else { return Ok(None) };
            found.extend(record.values.into_iter().filter(|(k, _)| values.contains(&k.as_str())));
        }
        if !locks.is_empty() {
            found.extend(self.locks()?.into_iter().filter(|lock| locks.contains(&lock.as_str())).map(|lock| (lock, Vec::new())));
        }
        Ok(Some(found))
    }

    /// Only locks change after creation: an object each, `lock/ACTION`.
    fn set(&self, name: &str, value: Option<&[u8]>) -> Result<()> {
        let action = name.strip_prefix("lock/").ok_or_else(|| {
            Error::new(ErrorKind::Unsupported, format!("{}: record value {name} is set only at creation", self.describe()))
        })?;
        self.record()?.ok_or_else(|| Error::new(ErrorKind::NotFound, format!("{}: no data set", self.describe())))?;
        let path = self.path(&["lock", action]);
        let store = self.client().store().clone();
        match value {
            Some(value) => {
                let payload = PutPayload::from(value.to_vec());
                self.client().run(async move { store.put(&path, payload).await.map(drop) })
            }
            None => self.client().delete(path),
        }
    }

    /// Under the first free slot of the creation's log, if the record is that creation.
    fn append(&self, identity: &[u8], batch: &[u8]) -> Result<bool> {
        match self.record()? {
            Some((record, _)) if record.identity == identity => {}
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

    /// The creation's log objects after `position`, fetched at once: after one LIST when
    /// the record is still the creation this handle read last, else after reading the record.
    fn read_log(&self, position: u64) -> Result<Option<LogRead>> {
        if let Some((known, slots)) = self.quick_refresh(position)? {
            return self.fetch_batches(known.identity, &known.folder, position, slots).map(Some);
        }
        let Some((record, tag)) = self.record()? else {
            *self.known.lock().unwrap_or_else(|p| p.into_inner()) = None;
            return Ok(None);
        };
        let folder = creation(&record.identity);
        *self.known.lock().unwrap_or_else(|p| p.into_inner()) =
            tag.map(|tag| Creation { tag, identity: record.identity.clone(), folder: folder.clone() });
        let slots = self.slots_after(&folder, position)?;
        self.fetch_batches(record.identity, &folder, position, slots).map(Some)
    }

    fn write_index(&self, index: &PendingIndex, sealing: Sealing) -> Result<Box<dyn IndexWrite>> {
        let id = unique_object_name(&format!("index/{}", unique_suffix()));
        let create = self.start_create(self.path(&["index", &id]), encode_entries(index, sealing))?;
        Ok(Box::new(IndexObjectWrite { describe: self.path(&["index", &id]).to_string(), id, create }))
    }

    fn read_index(&self, id: &str) -> Result<IndexEntries> {
        self.read_indexes(&[id])?.pop().ok_or_else(|| Error::corrupt("index object", self.path(&["index", id]).to_string(), "not read"))
    }

    /// GETs in flight together, `INDEX_READS_IN_FLIGHT` at a time.
    fn read_indexes(&self, ids: &[&str]) -> Result<Vec<IndexEntries>> {
        let mut read = Vec::with_capacity(ids.len());
        for chunk in ids.chunks(INDEX_READS_IN_FLIGHT) {
            let paths: Vec<Path> = chunk.iter().map(|id| self.path(&["index", id])).collect();
            let gets = paths.iter().map(|path| self.client().start_get(path.clone())).collect::<Result<Vec<_>>>()?;
            for (path, get) in paths.iter().zip(gets) {
                let (data, _) = get.wait()?.ok_or_else(|| {
                    Error::corrupt("index object", path.to_string(), "missing (the data set was wiped while it was read?)")
                })?;
                read.push(decode_entries(&data).map_err(|why| Error::corrupt("index object", path.to_string(), why))?);
            }
        }
        Ok(read)
    }

    fn describe(&self) -> String {
        format!("s3 bucket {} object {}", self.client().bucket(), self.path(&["record"]))
    }

    fn describe_position(&self, slot: u64) -> String {
        format!("s3 bucket {} log slot {slot} of {}", self.client().bucket(), self.path(&["log"]))
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
