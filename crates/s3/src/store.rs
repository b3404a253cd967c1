//! The S3 store: one object per archived field, `PREFIX/DATASET/fields/NAME` in the bucket
//! (`PREFIX/fields/NAME` in a data set's own bucket), NAME the MD5 of a unique string, so
//! writers on any number of nodes never collide and no object is ever written twice. Or, with
//! `pack: true`, one object per writer, collocation and flush, `.../packs/NAME`, holding the
//! fields one after another (a new one once the next field would take it past [`PACK_BYTES`]):
//! one PUT for many small fields. A writer holds up to [`PACK_BYTES`] per collocation it
//! archives into between two flushes, and its PUTs in flight.
//!
//! Writes are PUTs within a bounded window: `archive` starts the field's PUT (a copy of its
//! bytes goes with it; packed, it adds them to its pack, whose PUT starts at the flush or once
//! full) and waits only when `writes_in_flight` are in flight; `flush` waits for all of them,
//! so every flushed field's object exists, whole, before the catalogue publishes it (S3 reads
//! after a successful PUT see the object). Reads are GETs, up to `reads_in_flight` at once in a
//! retrieve (`Store::read_ahead`): of a field's whole object, or of the range of a pack the
//! core merged from adjacent fields. Locations are `s3://BUCKET/KEY`, offset 0 in a field's
//! own object.

use std::collections::HashMap;
use std::sync::Arc;

use bytes::Bytes;
use object_store::path::Path;
use object_store::{ObjectStoreExt, PutPayload};

use fieldstore_core::backend::SideObjects;
use fieldstore_core::error::{Error, ErrorKind, Result};
use fieldstore_core::recent::RecentList;
use fieldstore_core::unique::{is_object_name, unique_object_name, unique_suffix};
use fieldstore_core::window::{InFlight, PendingWrite, WriteWindow};
use fieldstore_core::{FieldLocation, Key, StartedRead, Store, StoreWriter};

use crate::client::{Pending, S3Client};
use crate::layout::{Buckets, Place};

/// The store's shared side: reads and removals.
pub struct S3Store {
    buckets: Arc<Buckets>,
    limits: InFlight,
    /// Whether writers pack each collocation's fields of a flush into one object.
    pack: bool,
}

/// The size at which a pack is PUT and another begun.
pub const PACK_BYTES: usize = 16 << 20;

/// The objects of a field ([`FIELDS`]) or of a pack of fields ([`PACKS`]).
const FIELDS: &str = "fields";
const PACKS: &str = "packs";

/// A writer's pack for one collocation of one data set (as FDB5's data files are): the fields
/// archived since its last PUT.
struct Pack {
    dataset: Key,
    collocation: Key,
    place: Place,
    /// The object's name (unique).
    name: String,
    data: Vec<u8>,
    /// Fields in `data` (some may be empty: a pack of empty fields is still PUT).
    fields: usize,
}

impl Pack {
    /// The pack's object.
    fn path(&self) -> Path {
        self.place.path(&[PACKS, &self.name])
    }
}

/// One writer: its object names and its PUTs in flight.
pub struct S3StoreWriter {
    buckets: Arc<Buckets>,
    /// Unique to this writer: its object names are unique across writers, processes and hosts.
    writer: String,
    written: u64,
    /// The places of the data sets this writer archived into (found once each: a bucket per
    /// data set is checked, or created, then).
    places: RecentList<(Key, Place)>,
    /// Whether fields go into packs (`pack: true`).
    packing: bool,
    /// Packs being filled.
    packs: RecentList<Pack>,
    /// PUTs started and not yet waited for.
    in_flight: WriteWindow<Pending<object_store::PutResult>>,
}

impl S3Store {
    /// The buckets its data sets are in.
    pub(crate) fn buckets(&self) -> &Buckets {
        &self.buckets
    }

    /// A store in a section's buckets, with up to `limits` (each at least 1) requests in
    /// flight.
    /// `pack`: writers pack each collocation's fields of a flush into one object.
    pub fn new(buckets: Buckets, limits: InFlight, pack: bool) -> Self {
        S3Store { buckets: Arc::new(buckets), limits: InFlight::new(Some(limits.writes), Some(limits.reads)), pack }
    }

    /// The bucket's client and the object of a location this store wrote; anything else is
    /// refused.
    fn parse(&self, uri: &str) -> Result<(S3Client, Path)> {
        let refusal = |why: &str| format!("refusing location {uri:?}: {why}");
        let refuse = |why: &str| Error::new(ErrorKind::Corrupt, refusal(why));
        let rest = uri.strip_prefix("s3://").ok_or_else(|| refuse("not an S3 location"))?;
        let (bucket, key) = rest.split_once('/').ok_or_else(|| refuse("no object name"))?;
        let client = self.buckets.bucket(bucket)?.ok_or_else(|| refuse(&format!("bucket '{bucket}' is not one of this store's")))?;
        let path = Path::parse(key).map_err(|e| Error::caused_by(ErrorKind::Corrupt, refusal("not an object path"), e))?;
        // Each segment as its text: `object_store` escapes some characters of a data set's
        // key (`~` as `%7E`), and `client.path` escapes what it is given.
        let parts = path
            .parts()
            .map(|part| percent_encoding::percent_decode_str(part.as_ref()).decode_utf8().map(String::from))
            .collect::<std::result::Result<Vec<_>, _>>()
            .map_err(|e| Error::caused_by(ErrorKind::Corrupt, refusal("an object name segment is not UTF-8"), e))?;
        let expected = match parts.as_slice() {
            // Only this instance's objects: under its prefix, in a data set's place.
            [.., dataset, folder, name] if self.buckets.shares_buckets() && is_store_object(folder, name) => {
                client.path(&[dataset, folder, name])
            }
            [.., folder, name] if !self.buckets.shares_buckets() && is_store_object(folder, name) => client.path(&[folder, name]),
            _ => return Err(refuse("not an object name this store makes")),
        };
        if expected != path {
            return Err(refuse("not under this store's prefix"));
        }
        Ok((client, path))
    }
}

/// Whether `folder/name` is an object name this store makes.
fn is_store_object(folder: &str, name: &str) -> bool {
    (folder == FIELDS || folder == PACKS) && is_object_name(name)
}

impl S3StoreWriter {
    /// A new unique object name.
    fn new_name(&mut self, kind: &str, collocation: &Key) -> String {
        self.written += 1;
        unique_object_name(&format!("{kind}/{collocation}/{}/{}", self.writer, self.written))
    }

    /// Starts the PUT of an object's bytes, within the window.
    fn start_put(&mut self, place: &Place, path: Path, payload: PutPayload) -> Result<()> {
        self.in_flight.make_room()?;
        let store = place.client.store().clone();
        self.in_flight.push(place.client.spawn(async move { store.put(&path, payload).await })?);
        Ok(())
    }

    /// Adds a field to the writer's pack for `collocation` of `dataset` (starting its PUT first if the field
    /// would make it larger than [`PACK_BYTES`]); the field's location in it.
    fn pack(&mut self, dataset: &Key, collocation: &Key, data: &[u8]) -> Result<FieldLocation> {
        let i = match self.packs.find(|p| p.collocation == *collocation && p.dataset == *dataset) {
            Some(i) => i,
            None => {
                let (place, name) = (self.place(dataset)?, self.new_name("pack", collocation));
                self.packs.push(Pack {
                    dataset: dataset.clone(),
                    collocation: collocation.clone(),
                    place,
                    name,
                    data: Vec::new(),
                    fields: 0,
                })
            }
        };
        let filled = self.packs[i].data.len();
        if filled > 0 && filled.saturating_add(data.len()) > PACK_BYTES {
            self.roll_over(i, collocation)?;
        }
        let pack = &mut self.packs[i];
        let offset = pack.data.len() as u64;
        pack.data.extend_from_slice(data);
        pack.fields += 1;
        let uri = format!("s3://{}/{}", pack.place.client.bucket(), pack.path());
        let location = FieldLocation { uri: uri.into(), offset, length: data.len() as u64, crc32c: None };
        // A field of PACK_BYTES or more fills a pack alone: its PUT starts now.
        if self.packs[i].data.len() >= PACK_BYTES {
            self.roll_over(i, collocation)?;
        }
        Ok(location)
    }

    /// Starts the PUT of pack `i`'s bytes; it goes on empty, as a new object.
    fn roll_over(&mut self, i: usize, collocation: &Key) -> Result<()> {
        let next = self.new_name("pack", collocation);
        let pack = &mut self.packs[i];
        let (place, path, data) = (pack.place.clone(), pack.path(), std::mem::take(&mut pack.data));
        (pack.name, pack.fields) = (next, 0);
        self.start_put(&place, path, PutPayload::from(data))
    }

    /// Where `dataset`'s objects go.
    fn place(&mut self, dataset: &Key) -> Result<Place> {
        if let Some(i) = self.places.find(|(key, _)| key == dataset) {
            return Ok(self.places[i].1.clone());
        }
        let place = self
            .buckets
            .place(dataset, true)?
            .ok_or_else(|| Error::new(ErrorKind::NotFound, format!("{}: vanished", self.buckets.describe(dataset))))?;
        self.places.push((dataset.clone(), place.clone()));
        Ok(place)
    }
}

impl StoreWriter for S3StoreWriter {
    fn archive(&mut self, dataset: &Key, collocation: &Key, data: &[u8]) -> Result<FieldLocation> {
        if self.packing {
            return self.pack(dataset, collocation, data);
        }
        let name = self.new_name("field", collocation);
        let place = self.place(dataset)?;
        let path = place.path(&[FIELDS, &name]);
        let uri = format!("s3://{}/{path}", place.client.bucket());
        // The PUT outlives the call: the field's one copy (StoreWriter::archive says why the
        // store, not core, makes it).
        self.start_put(&place, path, PutPayload::from(Bytes::copy_from_slice(data)))?;
        Ok(FieldLocation { uri: uri.into(), offset: 0, length: data.len() as u64, crc32c: None })
    }

    /// Starts the PUT of every pack holding fields, then waits for every PUT in flight; the
    /// first failure is the answer, after all of them ended.
    fn flush(&mut self) -> Result<()> {
        // Every pack goes: a long-lived writer keeps none of the data sets it left.
        let mut packs = std::mem::take(&mut self.packs);
        for pack in packs.iter_mut().filter(|pack| pack.fields > 0) {
            let path = pack.path();
            self.start_put(&pack.place, path, PutPayload::from(std::mem::take(&mut pack.data)))?;
        }
        self.in_flight.wait_all()
    }

    /// Forgets the PUTs in flight (they finish on their own) and the packs' bytes: objects of
    /// discarded fields stay unreferenced; later names differ anyway.
    fn discard(&mut self) {
        self.packs.clear();
        self.in_flight.forget();
    }
}

impl Store for S3Store {
    fn writer(&self) -> Result<Box<dyn StoreWriter>> {
        Ok(Box::new(S3StoreWriter {
            buckets: self.buckets.clone(),
            writer: unique_suffix(),
            written: 0,
            places: RecentList::default(),
            packing: self.pack,
            packs: RecentList::default(),
            in_flight: WriteWindow::new(self.limits.writes),
        }))
    }

    fn read(&self, uri: &str, offset: u64, buf: &mut [u8]) -> Result<()> {
        if buf.is_empty() {
            return Ok(());
        }
        let bytes = self.start_get(uri, offset, buf.len())?.wait()?;
        check_length(uri, bytes.len(), buf.len())?;
        buf.copy_from_slice(&bytes);
        Ok(())
    }

    fn read_ahead(&self) -> usize {
        self.limits.reads - 1
    }

    /// A GET costs as much as moving about half a megabyte: on the test RGW (loopback, 8 in
    /// flight) 10,000 GETs of a few bytes took 7.5 s, while 1,000 fields of 1 MiB came 1.3 s
    /// slower than from POSIX (scripts/extract-bench.sh, docs/performance.md "Extraction").
    fn merge_gap(&self) -> u64 {
        512 << 10
    }

    fn start_read(&self, uri: &str, offset: u64, length: usize, buffer: Vec<u8>) -> Result<Box<dyn StartedRead>> {
        Ok(Box::new(StartedGet { get: self.start_get(uri, offset, length)?, uri: uri.to_string(), length, buffer }))
    }

    /// Field objects are written whole and never appended to, so none is ever in use; a
    /// missing one is no error (S3 answers a DELETE of a missing key with success).
    fn remove(&self, uri: &str) -> Result<bool> {
        let (client, path) = self.parse(uri)?;
        client.delete(path)?;
        Ok(true)
    }

    /// Bulk deletes (S3's DeleteObjects, up to 1,000 objects a request), per bucket.
    fn remove_all(&self, uris: &[String]) -> Result<Vec<bool>> {
        let mut by_bucket: HashMap<String, (S3Client, Vec<Path>)> = HashMap::new();
        for uri in uris {
            let (client, path) = self.parse(uri)?;
            by_bucket.entry(client.bucket().to_string()).or_insert_with(|| (client, Vec::new())).1.push(path);
        }
        for (client, paths) in by_bucket.into_values() {
            client.delete_all(paths)?;
        }
        Ok(vec![true; uris.len()])
    }

    /// Nothing beyond the field objects, which the wipe removed by name: removing every
    /// object under the data set's prefix would remove those of a data set archived again
    /// meanwhile. (Objects of writes no index names, from a writer that failed, stay; so does
    /// a data set's bucket, which a writer may be using again.) Its side objects go too,
    /// where they can: they only save readers time.
    fn wipe_dataset(&self, dataset: &Key) -> Result<()> {
        // After the data set is gone, best effort: a side object left behind applies to no
        // field it does not name (its entries name locations and CRCs), and costs its bytes.
        let _ = crate::side::remove_side_objects(self, dataset);
        Ok(())
    }

    fn describe(&self, dataset: &Key) -> String {
        self.buckets.describe(dataset)
    }

    fn side_objects(&self) -> Option<&dyn SideObjects> {
        Some(self)
    }
}

impl S3Store {
    /// Starts a GET of `length` bytes of `uri` at `offset`: of the whole object of a field
    /// (which a retrieve reads whole; servers answer a plain GET faster than a ranged one: RGW
    /// by a tenth for 64 KiB), else a ranged GET (of a pack).
    fn start_get(&self, uri: &str, offset: u64, length: usize) -> Result<Pending<Bytes>> {
        let (client, path) = self.parse(uri)?;
        let end = offset
            .checked_add(length as u64)
            .ok_or_else(|| Error::new(ErrorKind::Corrupt, format!("{uri}: offset {offset} + length {length} overflows")))?;
        let store = client.store().clone();
        if length == 0 {
            // No request: S3 has no empty range (a pack's empty field, an empty tail of a read).
            return client.spawn(async { Ok(Bytes::new()) });
        }
        let own_object = path.parts().nth_back(1).is_some_and(|folder| folder.as_ref() == FIELDS);
        if offset == 0 && own_object {
            return client.spawn(async move { store.get(&path).await?.bytes().await.map(|whole| whole.slice(..whole.len().min(length))) });
        }
        client.spawn(async move { store.get_range(&path, offset..end).await })
    }
}

/// A short answer means the object is shorter than its location says: damaged or replaced.
fn check_length(uri: &str, got: usize, wanted: usize) -> Result<()> {
    if got != wanted {
        return Err(Error::corrupt("field object", uri, format!("{got} bytes where the catalogue says {wanted}")));
    }
    Ok(())
}

/// A GET in flight ([`Store::start_read`]).
struct StartedGet {
    get: Pending<Bytes>,
    uri: String,
    length: usize,
    /// A buffer given back by an earlier read, filled with the answer.
    buffer: Vec<u8>,
}

impl StartedRead for StartedGet {
    fn finish(self: Box<Self>) -> Result<Vec<u8>> {
        let StartedGet { get, uri, length, buffer } = *self;
        let bytes = get.wait()?;
        check_length(&uri, bytes.len(), length)?;
        // The client's buffer itself when it owns it alone (no copy); else a copy into the
        // one given back.
        match bytes.try_into_mut() {
            Ok(unique) => Ok(Vec::from(unique)),
            Err(shared) => {
                let mut buffer = buffer;
                buffer.clear();
                buffer.extend_from_slice(&shared);
                Ok(buffer)
            }
        }
    }

    fn is_done(&mut self) -> bool {
        self.get.is_done()
    }
}

impl<T> PendingWrite for Pending<T> {
    fn wait(self) -> Result<()> {
        Pending::wait(self).map(|_| ())
    }
}
