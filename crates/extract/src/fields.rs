//! Extraction from a store's fields: a request's fields are resolved by the handle, each
//! field's [`Packing`] found once (in what its data set keeps beside its data, else in its
//! whole message) and kept, and each extraction then reads only the bytes its ranges need, at
//! the field's location in the store.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use fieldstore_core::api::{FieldEntry, ListOptions, Matches, Remote};
use fieldstore_core::error::{Error, ErrorKind, Result};
use fieldstore_core::parallel::in_parallel;
use fieldstore_core::{ControlAction, FieldLocation, FieldStore, Key, Request};

use crate::kept::{kept_parts, put_kept, records_kept, KeptEntry, KeptRecord, KeptRecordEntry};
use crate::remote::{decode_answer, decode_scanned, ExtractCall, ScanCall, EXTRACT, SCAN};
use crate::{extract, Extraction, Packing, Range, Source};

/// The largest field whose message is read whole to learn its packing (2 GiB).
const LARGEST_FIELD: usize = 1 << 31;

/// Packings an extractor keeps, in bytes of their records: a long-lived handle (Python's or
/// C's) forgets all and learns again past it.
const KEPT_PACKING_BYTES: usize = 256 << 20;

/// Fields read at once by [`Extractor::extract_each`], at least (more where the store keeps more
/// reads in flight, [`FieldStore::reads_in_flight`]), and side objects read at once: enough to
/// keep an object store's requests overlapping, few enough to cost little where reads are local.
pub const IN_FLIGHT: usize = 8;

/// The most fields [`Extractor::extract_each`] reads at once, whatever the store keeps in
/// flight: a thread each, each holding a field's bytes where it reads one whole.
const MOST_IN_FLIGHT: usize = 64;

/// The most bytes of packings one side object holds (CCSDS records of large fields are
/// kilobytes each: a count would not bound it).
pub(crate) const SIDE_OBJECT_BYTES: usize = 4 << 20;

/// Requests an extraction through a server sends in one call: their answer (10 points of
/// each field of 1,000 one-field requests) is under 200 KB, and several calls overlap.
pub const REMOTE_BATCH: usize = 1000;

/// Calls of an extraction through a server in flight at once.
const REMOTE_CALLS: usize = 4;

/// Requests resolved, with their fields ([`Extractor::plan_each`]).
pub struct Planned<'r> {
    requests: &'r [(Request, Vec<Range>)],
    /// Each request's fields, in the order it names values.
    fields: Vec<Vec<FieldEntry>>,
}

impl Planned<'_> {
    /// The fields, of all the requests.
    pub fn fields(&self) -> usize {
        self.fields.iter().map(Vec::len).sum()
    }

    /// The points an extraction of these fields answers (a value and a mask each).
    pub fn points(&self) -> u64 {
        let fields = self.fields.iter().map(Vec::len);
        self.requests
            .iter()
            .zip(fields)
            .map(|((_, ranges), fields)| Range::points(ranges).saturating_mul(fields as u64))
            .fold(0, u64::saturating_add)
    }
}

/// One field's extraction.
#[derive(Clone, Debug)]
pub struct FieldExtraction {
    /// The field: its keys and location.
    pub field: FieldEntry,
    /// Its values; `bytes_read` counts its whole message too where its packing was read.
    pub extraction: Extraction,
}

/// What keeping a request's packings did ([`Extractor::keep_packings`]).
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct KeptPackings {
    /// The fields the request names.
    pub fields: usize,
    /// Of them, those whose packing was kept already.
    pub already_kept: usize,
    /// Those whose packing was learnt from their whole message, and kept.
    pub learnt: usize,
    /// The bytes read to learn them.
    pub bytes_read: u64,
    /// The side objects written (one per data set with packings learnt).
    pub side_objects: usize,
}

/// Extracts from the fields of a store, keeping each field's packing once read (shared by
/// every thread). A field's packing comes from what its data set keeps beside its data
/// ([`crate::kept`], read once per data set), else from its whole message.
#[derive(Default)]
pub struct Extractor {
    known: Mutex<Known>,
    /// Held while a data set's side objects are read: the threads that need them at once wait
    /// for one reader rather than each reading them all.
    reading_kept: Mutex<()>,
}

/// The packings an extractor knows.
#[derive(Default)]
struct Known {
    packings: HashMap<FieldLocation, Arc<Packing>>,
    /// Packings read from side objects and not decoded yet (most are never asked for).
    records: HashMap<FieldLocation, KeptRecord>,
    /// The bytes of the records of `packings` and `records`.
    held: usize,
    /// The locations whose packings are kept beside the data (read from side objects, or
    /// written by this extractor), as opposed to learnt and held in memory only.
    kept: HashSet<FieldLocation>,
    /// The data sets whose kept packings were read into `packings`: the side objects read,
    /// and when their names were listed.
    datasets_read: HashMap<Key, SideObjectsRead>,
}

/// A data set's side objects an extractor read.
struct SideObjectsRead {
    names: HashSet<String>,
    listed: Instant,
}

/// How long a listing of a data set's side objects answers for a field it has no packing for:
/// after that the side objects written since (a writer keeping packings at each flush) are
/// read, at most one listing per data set in this time.
const LISTING_KEPT_FOR: Duration = Duration::from_secs(1);

impl Known {
    /// What is known of `field`'s packing: `Some(packing)` if it is known, `Some(None)` if
    /// its data set's kept packings were read lately and hold none for it, `None` if they
    /// were not. A record kept but damaged counts as none: the field's message is read
    /// instead.
    fn answer(&mut self, field: &FieldEntry) -> Option<Option<Arc<Packing>>> {
        if let Some(record) = self.records.remove(&field.location) {
            match record.packing() {
                Ok(packing) => _ = self.packings.insert(field.location.clone(), Arc::new(packing)),
                // Learnt again from the message, and kept again by a scan.
                Err(_) => _ = self.kept.remove(&field.location),
            }
        }
        match self.packings.get(&field.location) {
            Some(packing) => Some(Some(packing.clone())),
            None => self.datasets_read.get(home(field)).is_some_and(|read| read.listed.elapsed() < LISTING_KEPT_FOR).then_some(None),
        }
    }

    /// Makes room for `bytes` more of records (bounded: a long-lived handle forgets all and
    /// learns again).
    fn make_room(&mut self, bytes: usize) {
        self.held = self.held.saturating_add(bytes);
        if self.held > KEPT_PACKING_BYTES {
            self.packings.clear();
            self.records.clear();
            self.kept.clear();
            self.datasets_read.clear();
            self.held = bytes;
        }
    }
}

impl Extractor {
    /// An extractor that knows no field's packing yet.
    pub fn new() -> Self {
        Extractor::default()
    }

    /// The `ranges` of every field `request` names in `fs`, in the order it names values.
    /// A request that matches nothing is a `NotFound` error saying why. Through a server, the
    /// server extracts ([`crate::remote`]).
    pub fn extract(&self, fs: &FieldStore, request: &Request, ranges: &[Range]) -> Result<Vec<FieldExtraction>> {
        if fs.remote().is_some() {
            let mut answers = self.extract_each(fs, &[(request.clone(), ranges.to_vec())])?;
            return Ok(answers.pop().unwrap_or_default());
        }
        self.fields(fs, request)?.into_iter().map(|field| self.extract_field(fs, field, ranges)).collect()
    }

    /// The `ranges` of one stored field.
    pub fn extract_field(&self, fs: &FieldStore, field: FieldEntry, ranges: &[Range]) -> Result<FieldExtraction> {
        let location = &field.location;
        let (packing, packing_bytes) = self.packing(fs, &field)?;
        let mut source = StoredField { fs, location };
        let mut extraction = extract(&packing, ranges, &mut source)
            .map_err(|e| Error::caused_by(e.kind(), format!("extracting from {}", field.identifier()), e))?;
        extraction.bytes_read += packing_bytes;
        Ok(FieldExtraction { field, extraction })
    }

    /// The extractions of several requests, each with its ranges, in the requests' order (a
    /// request's fields in the order it names values): the requests resolved in one pass over
    /// the catalogue ([`Extractor::plan_each`]), then their fields read several at once
    /// ([`Extractor::extract_planned`]). Through a server, the server extracts
    /// ([`crate::remote`]), [`REMOTE_BATCH`] requests a call, a few calls at once. The answer
    /// to an error: the first request that could not be resolved, else the first field, in
    /// the requests' order, that could not be read.
    pub fn extract_each(&self, fs: &FieldStore, requests: &[(Request, Vec<Range>)]) -> Result<Vec<Vec<FieldExtraction>>> {
        if let Some(server) = fs.remote() {
            return extract_through(server, requests);
        }
        let planned = self.plan_each(fs, requests)?;
        self.extract_planned(fs, &planned)
    }

    /// The fields of several requests, each with its ranges, resolved in one pass over the
    /// catalogue ([`FieldStore::resolve_each`]), to be read by [`Extractor::extract_planned`]
    /// (a server sizes its answer in between). The error of the first request, in their order,
    /// that could not be resolved.
    pub fn plan_each<'r>(&self, fs: &FieldStore, requests: &'r [(Request, Vec<Range>)]) -> Result<Planned<'r>> {
        let resolved = fs.resolve_each(requests.iter().map(|(request, _)| request), IN_REQUEST_ORDER, Some(ControlAction::Retrieve))?;
        let fields = requests.iter().zip(resolved).map(|((request, _), matches)| fields_of(request, matches?)).collect::<Result<_>>()?;
        Ok(Planned { requests, fields })
    }

    /// The extractions of planned requests ([`Extractor::plan_each`]): up to [`IN_FLIGHT`]
    /// fields read at once (or the store's reads in flight, if more, up to [`MOST_IN_FLIGHT`]),
    /// so that stores answering many reads in parallel (S3, RADOS) are kept busy.
    pub fn extract_planned(&self, fs: &FieldStore, planned: &Planned<'_>) -> Result<Vec<Vec<FieldExtraction>>> {
        let jobs: Vec<(usize, &FieldEntry)> =
            planned.fields.iter().enumerate().flat_map(|(i, fields)| fields.iter().map(move |f| (i, f))).collect();
        let in_flight = IN_FLIGHT.max(fs.reads_in_flight()).min(MOST_IN_FLIGHT);
        let mut extracted =
            in_parallel(in_flight, jobs.len(), |j| self.extract_field(fs, jobs[j].1.clone(), &planned.requests[jobs[j].0].1)).into_iter();
        let mut answers = Vec::with_capacity(planned.fields.len());
        for fields in &planned.fields {
            answers.push(extracted.by_ref().take(fields.len()).collect::<Result<Vec<_>>>()?);
        }
        Ok(answers)
    }

    /// Keeps the packing of every field `request` names beside its data set's data (`fieldstore
    /// scan`, gribjump-scan's job): each one not kept yet is learnt from its whole message, and
    /// each data set's new ones go into one new side object. `progress(done, total)` follows
    /// the fields. Through a server, the server keeps them ([`crate::remote`]; progress is then
    /// told once, at the end).
    pub fn keep_packings(&self, fs: &FieldStore, request: &Request, progress: &mut dyn FnMut(usize, usize)) -> Result<KeptPackings> {
        if let Some(server) = fs.remote() {
            let call = serde_json::to_vec(&ScanCall { request: request.to_string() })
                .map_err(|e| Error::caused_by(ErrorKind::BadRequest, "cannot encode a scan", e))?;
            let kept = decode_scanned(&server.post_repeatable(SCAN, call)?)?;
            progress(kept.fields, kept.fields);
            return Ok(kept);
        }
        let side = fs.side_objects()?;
        let fields = self.fields(fs, request)?;
        let mut kept = KeptPackings { fields: fields.len(), ..KeptPackings::default() };
        let mut learnt: HashMap<Key, Vec<KeptEntry>> = HashMap::new();
        progress(0, fields.len());
        let mut done = 0;
        // Learnt on up to IN_FLIGHT threads (a CCSDS field's RSIs cost tens of milliseconds to
        // find), a batch at a time for the progress.
        for batch in fields.chunks(IN_FLIGHT * 8) {
            let packings = in_parallel(IN_FLIGHT, batch.len(), |i| self.packing(fs, &batch[i]));
            for (field, answer) in batch.iter().zip(packings) {
                let (packing, bytes_read) = answer?;
                // Learnt by an earlier extraction of this extractor is not kept: it is written too.
                if self.known().kept.contains(&field.location) {
                    kept.already_kept += 1;
                } else {
                    kept.learnt += 1;
                    kept.bytes_read += bytes_read;
                    learnt.entry(home(field).clone()).or_default().push((field.location.clone(), packing));
                }
            }
            done += batch.len();
            progress(done, fields.len());
        }
        for (dataset, entries) in learnt {
            for part in kept_parts(&entries, SIDE_OBJECT_BYTES) {
                put_kept(side, &dataset, part)?;
                kept.side_objects += 1;
                let mut known = self.known();
                known.kept.extend(part.iter().map(|(location, _)| location.clone()));
            }
        }
        Ok(kept)
    }

    /// The fields `request` names, in the order it names values (as a retrieve gives them,
    /// and gribjump); `NotFound` saying why where none. Reading points is retrieving: data
    /// sets locked against it are left out.
    fn fields(&self, fs: &FieldStore, request: &Request) -> Result<Vec<FieldEntry>> {
        fields_of(request, fs.resolve(request, IN_REQUEST_ORDER, Some(ControlAction::Retrieve))?)
    }

    /// The packing of `field`, and the bytes read to learn it (0 if known or kept).
    fn packing(&self, fs: &FieldStore, field: &FieldEntry) -> Result<(Arc<Packing>, u64)> {
        let location = &field.location;
        if let Some(known) = self.known_packing(fs, field)? {
            return Ok((known, 0));
        }
        // The length may come from a server's answer: bounded before anything is held.
        let length = usize::try_from(location.length).ok().filter(|n| *n <= LARGEST_FIELD).ok_or_else(|| {
            Error::new(ErrorKind::Corrupt, format!("a field of {} bytes: at most {LARGEST_FIELD} are read whole", location.length))
        })?;
        let mut message = vec![0; length];
        fs.read_stored(&location.uri, location.offset, &mut message)?;
        if let Some(expected) = location.crc32c.filter(|crc| *crc != fieldstore_core::checksum::crc32c(&message)) {
            let message = format!("the field at {} offset {} does not match its CRC-32C {expected:08x}", location.uri, location.offset);
            return Err(Error::new(ErrorKind::Corrupt, message));
        }
        let packing = Arc::new(Packing::of(&message)?);
        let mut known = self.known();
        known.make_room(held_bytes(location, packing.encoded_len()));
        known.packings.insert(location.clone(), packing.clone());
        Ok((packing, location.length))
    }

    /// The packing of `field` if known, its data set's kept packings read first if they were
    /// not yet.
    fn known_packing(&self, fs: &FieldStore, field: &FieldEntry) -> Result<Option<Arc<Packing>>> {
        if let Some(answer) = self.known().answer(field) {
            return Ok(answer);
        }
        let _reading = self.reading_kept.lock().unwrap_or_else(|e| e.into_inner());
        // Read meanwhile by the thread this one waited for.
        if let Some(answer) = self.known().answer(field) {
            return Ok(answer);
        }
        let dataset = home(field);
        let already = self.known().datasets_read.remove(dataset).map(|read| read.names).unwrap_or_default();
        let (kept, names) = read_kept(fs, dataset, already)?;
        let mut known = self.known();
        known.make_room(kept.iter().map(|(location, record)| held_bytes(location, record.bytes())).sum());
        known.kept.extend(kept.iter().map(|(location, _)| location.clone()));
        known.records.extend(kept);
        known.datasets_read.insert(dataset.clone(), SideObjectsRead { names, listed: Instant::now() });
        Ok(known.answer(field).flatten())
    }

    fn known(&self) -> std::sync::MutexGuard<'_, Known> {
        self.known.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// The extractions of `requests`, made by `server` ([`crate::remote`]): [`REMOTE_BATCH`] a
/// call, [`REMOTE_CALLS`] calls at once; the first error in the requests' order.
fn extract_through(server: &dyn Remote, requests: &[(Request, Vec<Range>)]) -> Result<Vec<Vec<FieldExtraction>>> {
    let batches: Vec<&[(Request, Vec<Range>)]> = requests.chunks(REMOTE_BATCH).collect();
    let answered = in_parallel(REMOTE_CALLS, batches.len(), |b| {
        let call = serde_json::to_vec(&ExtractCall::of(batches[b]))
            .map_err(|e| Error::caused_by(ErrorKind::BadRequest, "cannot encode an extraction", e))?;
        decode_answer(batches[b], &server.post_repeatable(EXTRACT, call)?)
    });
    answered.into_iter().collect::<Result<Vec<_>>>().map(|batches| batches.into_iter().flatten().collect())
}

/// Fields in the order a request names values.
const IN_REQUEST_ORDER: ListOptions = ListOptions { depth: 3, include_superseded: false, in_request_order: true, storage_order: false };

/// The fields a request matched; `NotFound` saying why where none.
fn fields_of(request: &Request, matches: Matches) -> Result<Vec<FieldEntry>> {
    if let Some(why) = matches.explanation {
        return Err(Error::new(ErrorKind::NotFound, format!("nothing matched {request}: {why}")));
    }
    Ok(matches.fields)
}

/// A stored field's bytes, read where the store keeps them.
struct StoredField<'a> {
    fs: &'a FieldStore,
    location: &'a FieldLocation,
}

impl Source for StoredField<'_> {
    fn read(&mut self, offset: u64, length: usize) -> Result<Vec<u8>> {
        let location = self.location;
        if offset.checked_add(length as u64).is_none_or(|end| end > location.length) {
            return Err(Error::new(ErrorKind::Corrupt, format!("{} bytes at {offset} of a field of {}", length, location.length)));
        }
        let mut bytes = vec![0; length];
        self.fs.read_stored(&location.uri, location.offset + offset, &mut bytes)?;
        Ok(bytes)
    }

    fn merge_gap(&self) -> u64 {
        self.fs.merge_gap()
    }
}

/// What knowing a field's packing holds: its record, its location (twice: the packing's key
/// and among those kept) and the maps' entries.
fn held_bytes(location: &FieldLocation, record: usize) -> usize {
    record + 2 * (location.uri.len() + std::mem::size_of::<FieldLocation>()) + 128
}

/// The data set a field's bytes were archived into, which keeps its packing.
fn home(field: &FieldEntry) -> &Key {
    field.archived_in.as_deref().unwrap_or(&field.dataset)
}

/// The packings a data set keeps in side objects other than those `already` read, and the
/// names of all it has; none where the store keeps no side objects. A side object that is
/// damaged (or of a later version) is passed over: it costs time, not values.
fn read_kept(fs: &FieldStore, dataset: &Key, already: HashSet<String>) -> Result<(Vec<KeptRecordEntry>, HashSet<String>)> {
    let side = match fs.side_objects() {
        Err(e) if e.kind() == ErrorKind::Unsupported => return Ok((Vec::new(), already)),
        other => other?,
    };
    let mut names = already;
    let new: Vec<String> = side.side_object_names(dataset)?.into_iter().filter(|name| names.insert(name.clone())).collect();
    // Read at once: a data set may keep several (one per scan, or per flush of a writer).
    let read = in_parallel(IN_FLIGHT, new.len(), |i| match side.map_side_object(dataset, &new[i]) {
        Ok(Some(bytes)) => Ok(records_kept(Arc::from(bytes)).unwrap_or_default()),
        // Gone meanwhile, or refused as damaged by the store itself (too large).
        Ok(None) => Ok(Vec::new()),
        Err(e) if matches!(e.kind(), ErrorKind::Corrupt | ErrorKind::NotFound) => Ok(Vec::new()),
        Err(e) => Err(e),
    });
    let kept = read.into_iter().collect::<Result<Vec<_>>>()?.into_iter().flatten().collect();
    Ok((kept, names))
}
