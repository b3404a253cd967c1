//! Copying the fields requests name from one store to another (FDB5's `fdb-copy`), between
//! any two configs: FDB5's databases read in place into fieldstore on POSIX, S3, RADOS or
//! DAOS, or any backend into any other.
//!
//! - **Streamed**: one thread reads the fields, a chunk of whole fields at a time, while
//!   another archives them, flushing the target after every [`CopyOptions::batch_bytes`]:
//!   memory holds a few chunks, not the copy.
//! - **Resumable**: the target is listed first; a field it already holds with the same length
//!   and checksum is not copied again, so a copy interrupted (at most one batch not flushed)
//!   and run again copies only what is missing.
//! - **Verified**: every byte read from a fieldstore store is checked against its field's
//!   checksum as it is read (FDB5 records none: its fields' checksums are computed as read);
//!   after the copy, the target is listed again and every field copied must be there with the
//!   checksum of the bytes given to it. With [`CopyOptions::read_back`], the copied fields are
//!   also read back from the target, each byte checked.
//! - **Modifiers** (`--modifiers expver=0042`) set keys in each GRIB message through ecCodes,
//!   as `fdb-copy` does; the copy's identifier is then read from the modified message.

use std::collections::{BTreeSet, HashMap, HashSet};
use std::ops::Range;
use std::sync::{mpsc, Arc};

use fieldstore_core::checksum::crc32c;
use fieldstore_core::error::ErrorKind;
use fieldstore_core::{Error, FieldEntry, FieldStore, Key, ListOptions, Request, Result};
use fieldstore_grib as grib;
use serde::Serialize;

/// Listings in the catalogue's order: a copy takes every field, and reads them in that order
/// (close to where they lie), unless sorted by location.
const STORAGE_ORDER: ListOptions = ListOptions { depth: 3, include_superseded: false, in_request_order: false, storage_order: true };

/// Bytes of whole fields the reading thread hands over at a time (a larger field alone).
const CHUNK_BYTES: u64 = 2 << 20;
/// Chunks read ahead of the archiving.
const CHUNKS_AHEAD: usize = 2;

/// How a copy is made.
#[derive(Clone, Debug)]
pub struct CopyOptions {
    /// Keys set in each GRIB message through ecCodes before it is archived.
    pub modifiers: Vec<(String, String)>,
    /// Copy in the order the fields lie in the source's files (FDB5's `--sort`), not the
    /// listing's.
    pub sort_by_location: bool,
    /// Bytes of fields archived between flushes of the target: what an interruption may lose.
    pub batch_bytes: u64,
    /// Also read every copied field back from the target, checking its checksum.
    pub read_back: bool,
}

impl Default for CopyOptions {
    fn default() -> Self {
        CopyOptions { modifiers: Vec::new(), sort_by_location: false, batch_bytes: 256 << 20, read_back: false }
    }
}

/// What a copy did.
#[derive(Clone, Debug, Default, Serialize)]
pub struct CopyReport {
    /// Fields the requests name in the source.
    pub fields: u64,
    /// Their bytes.
    pub bytes: u64,
    /// Fields archived into the target.
    pub copied: u64,
    /// Bytes archived into the target.
    pub bytes_copied: u64,
    /// Fields the target held already, with the same length and checksum: not copied again.
    pub already_there: u64,
    /// Fields whose place and checksum in the target were checked after the copy.
    pub verified: u64,
    /// Fields read back from the target (with [`CopyOptions::read_back`]).
    pub read_back: u64,
}

/// What the copy has done so far, for a progress bar: bytes of the source's fields dealt with
/// (copied or found already there) out of `total`.
#[derive(Clone, Copy, Debug)]
pub struct CopyProgress {
    /// Bytes dealt with.
    pub done: u64,
    /// Bytes the requests name.
    pub total: u64,
}

/// A field copied: its identifier as archived into the target, length and checksum.
struct Copied {
    identifier: Key,
    length: u64,
    crc32c: u32,
}

/// What the target holds: length and checksum by identity.
type Holdings = HashMap<Key, (u64, Option<u32>)>;

/// Copies the fields `requests` name in `source` into `target` (see the module's docs).
pub fn copy(
    source: &FieldStore,
    target: &FieldStore,
    requests: &[Request],
    options: &CopyOptions,
    progress: &mut dyn FnMut(CopyProgress),
) -> Result<CopyReport> {
    let mut fields = source_fields(source, requests)?;
    if options.sort_by_location {
        fields.sort_by(|a, b| (&a.location.uri, a.location.offset).cmp(&(&b.location.uri, b.location.offset)));
    }
    let target_requests: Vec<Request> = requests.iter().map(|r| target_request(target, r, &options.modifiers)).collect();
    let held = target_holdings(target, &target_requests)?;
    let mut report =
        CopyReport { fields: fields.len() as u64, bytes: fields.iter().map(|f| f.location.length).sum(), ..CopyReport::default() };
    let mut done = CopyProgress { done: 0, total: report.bytes };
    // Without modifiers, a field the source records a checksum for is known to be there
    // already without reading it.
    let (there, to_copy): (Vec<FieldEntry>, Vec<FieldEntry>) = fields.into_iter().partition(|field| {
        let crc = field.location.crc32c.filter(|_| options.modifiers.is_empty() && field.archived_in.is_none() && !held.is_empty());
        crc.is_some_and(|crc| held.get(&identity(entries_of(field))) == Some(&(field.location.length, Some(crc))))
    });
    report.already_there = there.len() as u64;
    done.done = there.iter().map(|f| f.location.length).sum();
    progress(done);
    let (copied, datasets) = copy_fields(source, target, to_copy, options, &held, &mut report, &mut done, progress)?;
    report.verified = verify(target, &datasets, &copied, options.read_back)?;
    report.read_back = if options.read_back { report.verified } else { 0 };
    Ok(report)
}

/// The fields the requests name in the source, each once (requests may overlap). A request
/// that names none is an error saying why (as for retrieve, and FDB5's tools).
fn source_fields(source: &FieldStore, requests: &[Request]) -> Result<Vec<FieldEntry>> {
    let mut fields = Vec::new();
    let mut seen = HashSet::new();
    for request in requests {
        let matches = source.list(request, STORAGE_ORDER)?;
        if matches.fields.is_empty() {
            let why = matches.explanation.unwrap_or_else(|| "no field".to_string());
            return Err(Error::new(ErrorKind::NotFound, format!("nothing matched {request} in the source: {why}")));
        }
        if requests.len() == 1 {
            return Ok(matches.fields);
        }
        fields.extend(matches.fields.into_iter().filter(|field| seen.insert(field.identifier())));
    }
    Ok(fields)
}

/// A request as it names the copies in the target: the modifiers' values set for the
/// keywords the target's schema has. A modifier of another ecCodes key that changes a MARS
/// key (`paramId` for `param`) is not followed: the target's copies are then not found before
/// the copy, and are copied again.
fn target_request(target: &FieldStore, request: &Request, modifiers: &[(String, String)]) -> Request {
    let keywords = target.schema().keywords();
    let mut request = request.clone();
    for (key, value) in modifiers.iter().filter(|(k, _)| keywords.contains(k.as_str())) {
        request.set(key, vec![value.clone()]);
    }
    request
}

/// What the target holds of what the requests name. A target not yet made holds nothing.
fn target_holdings(target: &FieldStore, requests: &[Request]) -> Result<Holdings> {
    let mut held = HashMap::new();
    match target.check_exists() {
        Err(e) if e.kind() == ErrorKind::NotFound => return Ok(held),
        checked => checked?,
    }
    for request in requests {
        for field in target.list(request, STORAGE_ORDER)?.fields {
            held.insert(identity(entries_of(&field)), (field.location.length, field.location.crc32c));
        }
    }
    Ok(held)
}

/// A field's identity: its identifier's keyword-value pairs (absent optional keywords left
/// out) sorted by keyword, so that two schemas ordering keywords differently agree on it.
fn identity<'a>(entries: impl Iterator<Item = (&'a str, &'a str)>) -> Key {
    let pairs = sorted_pairs(entries);
    let mut key = Key::with_capacity(pairs.len(), pairs.iter().map(|(k, v)| k.len() + v.len()).sum());
    for (keyword, value) in pairs {
        key.push(keyword, value);
    }
    key
}

/// An identifier's pairs with a value, sorted by keyword: its identity, without a key built.
fn sorted_pairs<'a>(entries: impl Iterator<Item = (&'a str, &'a str)>) -> Vec<(&'a str, &'a str)> {
    let mut pairs: Vec<(&str, &str)> = entries.filter(|(_, v)| !v.is_empty()).collect();
    pairs.sort_unstable();
    pairs
}

/// A listed field's identifier, entry by entry (absent optional keywords left out).
fn entries_of(field: &FieldEntry) -> impl Iterator<Item = (&str, &str)> + Clone {
    field.dataset.iter().chain(field.collocation.iter()).chain(field.element.iter()).filter(|(_, v)| !v.is_empty())
}

/// The identifier a message's MARS keys give in the target, and its data set there.
fn target_identifier(target: &FieldStore, keys: &Key) -> Result<(Key, Key)> {
    let split = target.schema().split(keys)?;
    Ok((Key::join_non_empty(&[&split.dataset, &split.collocation, &split.element]), (*split.dataset).clone()))
}

/// Reads `fields` from the source on a thread of their own, a chunk of whole fields at a
/// time straight into a buffer, while this thread archives the chunk before (on two cores
/// the copy takes about as long as the slower half); the target is flushed after every
/// [`CopyOptions::batch_bytes`] archived, and at the end.
#[allow(clippy::too_many_arguments)]
fn copy_fields(
    source: &FieldStore,
    target: &FieldStore,
    fields: Vec<FieldEntry>,
    options: &CopyOptions,
    held: &Holdings,
    report: &mut CopyReport,
    done: &mut CopyProgress,
    progress: &mut dyn FnMut(CopyProgress),
) -> Result<(Vec<Copied>, BTreeSet<Key>)> {
    let chunks = whole_field_chunks(&fields, CHUNK_BYTES);
    let mut sizes = Vec::with_capacity(chunks.len());
    for chunk in &chunks {
        let bytes = fields[chunk.clone()].iter().fold(0u64, |sum, f| sum.saturating_add(f.location.length));
        sizes.push(usize::try_from(bytes).map_err(|_| too_large(&fields[chunk.start], bytes))?);
    }
    let mut reader = source.read_fields(fields.clone())?;
    let mut archived = Archived::default();
    std::thread::scope(|scope| {
        // Made here, so that an early return drops the receiver and the reading thread stops.
        let (filled, filled_rx) = mpsc::sync_channel::<Result<(Vec<u8>, usize)>>(CHUNKS_AHEAD);
        let (spare, spare_rx) = mpsc::channel::<Vec<u8>>();
        let first_fields: Vec<String> = chunks.iter().map(|c| fields[c.start].identifier().to_string()).collect();
        scope.spawn(move || {
            for (size, first) in sizes.into_iter().zip(first_fields) {
                let mut buffer = spare_rx.try_recv().unwrap_or_default();
                let read = match room(&mut buffer, size, &first) {
                    Err(e) => Err(e),
                    Ok(()) => match reader.read_to_fill(&mut buffer[..size]) {
                        Ok(n) if n == size => Ok((buffer, size)),
                        Ok(n) => Err(Error::new(ErrorKind::Corrupt, format!("the source's fields ended {} bytes early", size - n))),
                        Err(e) => Err(e),
                    },
                };
                let failed = read.is_err();
                if filled.send(read).is_err() || failed {
                    return;
                }
            }
        });
        let mut copied = Vec::new();
        let mut unflushed = 0u64;
        for chunk in chunks {
            let (buffer, size) = filled_rx.recv().map_err(|_| Error::new(ErrorKind::Io, "the thread reading the source ended"))??;
            let mut at = 0;
            for field in &fields[chunk] {
                let bytes = &buffer[at..at + field.location.length as usize];
                at += bytes.len();
                if let Some(c) = copy_field(target, field, bytes, options, held, &mut archived)? {
                    report.copied += 1;
                    report.bytes_copied += c.length;
                    unflushed += c.length;
                    copied.push(c);
                } else {
                    report.already_there += 1;
                }
                done.done += field.location.length;
                progress(*done);
                if unflushed >= options.batch_bytes {
                    target.flush()?;
                    unflushed = 0;
                }
            }
            debug_assert_eq!(at, size);
            // The reading thread may have ended: the buffer is then dropped.
            let _ = spare.send(buffer);
        }
        target.flush()?;
        Ok((copied, archived.datasets))
    })
}

/// Makes `buffer` hold at least `size` bytes, or says that it cannot (a length read from a
/// damaged catalogue must not end the process).
fn room(buffer: &mut Vec<u8>, size: usize, first: &str) -> Result<()> {
    if buffer.len() < size {
        buffer.try_reserve_exact(size - buffer.len()).map_err(|_| {
            Error::new(
                ErrorKind::Unsupported,
                format!("field {first} and those after it, {size} bytes, cannot be held in memory to be copied"),
            )
        })?;
        buffer.resize(size, 0);
    }
    Ok(())
}

fn too_large(field: &FieldEntry, bytes: u64) -> Error {
    Error::new(ErrorKind::Unsupported, format!("field {} ({bytes} bytes) cannot be held in memory to be copied", field.identifier()))
}

/// What the copy has archived into the target so far.
#[derive(Default)]
struct Archived {
    /// The target's data sets it archived into (listed again to verify the copies).
    datasets: BTreeSet<Key>,
    /// The source's data sets seen, by the address of their shared keys.
    seen_datasets: HashSet<usize>,
    /// With modifiers: the source field each identity archived came from (two made one by the
    /// modifiers are refused).
    sources: HashMap<Key, Key>,
}

/// Consecutive fields in chunks of at most `bytes` (a field larger is a chunk of its own).
fn whole_field_chunks(fields: &[FieldEntry], bytes: u64) -> Vec<Range<usize>> {
    let mut chunks = Vec::new();
    let (mut start, mut size) = (0, 0u64);
    for (i, field) in fields.iter().enumerate() {
        if i > start && size.saturating_add(field.location.length) > bytes {
            chunks.push(start..i);
            (start, size) = (i, 0);
        }
        size = size.saturating_add(field.location.length);
    }
    if start < fields.len() {
        chunks.push(start..fields.len());
    }
    chunks
}

/// Archives one field read from the source (modified first, with modifiers) unless the
/// target holds it already with the same length and checksum; returns what was archived.
fn copy_field(
    target: &FieldStore,
    field: &FieldEntry,
    bytes: &[u8],
    options: &CopyOptions,
    held: &Holdings,
    archived: &mut Archived,
) -> Result<Option<Copied>> {
    let modified;
    let (identifier, dataset, bytes) = if options.modifiers.is_empty() {
        let identifier = field.identifier();
        // Its data set in the target, once per data set of the source (listed to verify
        // even where none of its fields needs copying).
        if archived.seen_datasets.insert(Arc::as_ptr(&field.dataset) as usize) {
            archived.datasets.insert(target_identifier(target, &identifier)?.1);
        }
        (identifier, None, bytes)
    } else {
        let culprit =
            |e: Error| Error::caused_by(ErrorKind::BadRequest, format!("setting the modifiers in field {}", field.identifier()), e);
        modified = grib::modify(bytes, &options.modifiers).map_err(culprit)?;
        let keys = grib::mars_keys(&modified).map_err(culprit)?;
        let (identifier, dataset) = target_identifier(target, &keys).map_err(culprit)?;
        (identifier, Some(dataset), modified.as_slice())
    };
    if !options.modifiers.is_empty() {
        if let Some(earlier) = archived.sources.insert(identity(identifier.iter()), field.identifier()) {
            return Err(Error::new(
                ErrorKind::BadRequest,
                format!(
                    "the modifiers make fields {earlier} and {} one field, {identifier}: the copy would keep only one",
                    field.identifier()
                ),
            ));
        }
    }
    // The source's checksum was checked as the bytes were read; FDB5 records none; a field
    // read through an overlay had its keys set after that check.
    let crc = match field.location.crc32c {
        Some(crc) if options.modifiers.is_empty() && field.archived_in.is_none() => crc,
        _ => crc32c(bytes),
    };
    let length = bytes.len() as u64;
    if !held.is_empty() && held.get(&identity(identifier.iter())) == Some(&(length, Some(crc))) {
        return Ok(None);
    }
    target.archive(&identifier, bytes)?;
    if let Some(dataset) = dataset.filter(|d| !archived.datasets.contains(d)) {
        archived.datasets.insert(dataset);
    }
    Ok(Some(Copied { identifier, length, crc32c: crc }))
}

/// Lists the target's data sets the copy archived into: every field copied must be there,
/// newest under its identity, with the length and checksum of the bytes given to it; with
/// `read_back`, each is then read (every byte checked against that checksum). Returns how
/// many were checked.
fn verify(target: &FieldStore, datasets: &BTreeSet<Key>, copied: &[Copied], read_back: bool) -> Result<u64> {
    if copied.is_empty() {
        return Ok(0);
    }
    let mut listed = Vec::new();
    for dataset in datasets {
        let mut request = Request::default();
        for (keyword, value) in dataset.iter().filter(|(_, v)| !v.is_empty()) {
            request.set(keyword, vec![value.to_string()]);
        }
        listed.extend(target.list(&request, STORAGE_ORDER)?.fields);
    }
    // By a hash of each identity: no key is built per field listed.
    let mut by_hash = HashMap::with_capacity(listed.len());
    for (i, field) in listed.iter().enumerate() {
        by_hash.insert(identity_hash(entries_of(field)), i);
    }
    let find = |c: &Copied| {
        let same = |i: &usize| {
            let theirs = entries_of(&listed[*i]);
            // In the same order (one schema's) they are compared as they are.
            theirs.clone().eq(c.identifier.iter()) || sorted_pairs(theirs) == sorted_pairs(c.identifier.iter())
        };
        // Two identities with one hash: the other is found by looking at all.
        by_hash.get(&identity_hash(c.identifier.iter())).copied().filter(same).or_else(|| (0..listed.len()).find(same))
    };
    let mut to_read = Vec::with_capacity(if read_back { copied.len() } else { 0 });
    for c in copied {
        let found = find(c).map(|i| &listed[i]);
        let place = found.map(|f| (f.location.length, f.location.crc32c));
        if place != Some((c.length, Some(c.crc32c))) {
            let what = match place {
                None => "is not in the target".to_string(),
                Some((length, Some(crc))) => format!("is in the target with {length} bytes and checksum {crc:08x}"),
                Some((length, None)) => format!("is in the target with {length} bytes and no checksum"),
            };
            let reason = format!("{what}; {} bytes with checksum {:08x} were copied", c.length, c.crc32c);
            return Err(Error::corrupt("copied field", c.identifier.to_string(), reason));
        }
        if read_back {
            to_read.extend(found.cloned());
        }
    }
    let mut reader = target.read_fields(to_read)?;
    while reader.next_field()?.is_some() {}
    Ok(copied.len() as u64)
}

/// A hash of an identity from an identifier's entries in any keyword order: the sum of its
/// pairs' hashes (nothing sorted, nothing allocated).
fn identity_hash<'a>(entries: impl Iterator<Item = (&'a str, &'a str)>) -> u64 {
    use std::hash::{Hash, Hasher};
    entries.filter(|(_, v)| !v.is_empty()).fold(0u64, |sum, pair| {
        let mut hasher = std::collections::hash_map::DefaultHasher::new();
        pair.hash(&mut hasher);
        sum.wrapping_add(hasher.finish())
    })
}
