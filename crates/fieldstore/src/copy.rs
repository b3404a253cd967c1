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

use std::collections::{HashMap, HashSet};
use std::ops::Range;
use std::sync::mpsc;

use fieldstore_core::checksum::crc32c;
use fieldstore_core::error::ErrorKind;
use fieldstore_core::{Error, FieldEntry, FieldStore, Key, ListOptions, Request, Result};
use fieldstore_grib as grib;
use serde::Serialize;

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

/// A field copied: its identifier in the target, length and checksum.
struct Copied {
    identifier: Key,
    length: u64,
    crc32c: u32,
}

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
        let crc = field.location.crc32c.filter(|_| options.modifiers.is_empty() && !held.is_empty());
        crc.is_some_and(|crc| held.get(&field.identifier()) == Some(&(field.location.length, Some(crc))))
    });
    report.already_there = there.len() as u64;
    done.done = there.iter().map(|f| f.location.length).sum();
    progress(done);
    let copied = copy_fields(source, target, to_copy, options, &held, &mut report, &mut done, progress)?;
    report.verified = verify(target, &target_requests, &copied, options.read_back)?;
    report.read_back = if options.read_back { report.verified } else { 0 };
    Ok(report)
}

/// The fields the requests name in the source, each once (requests may overlap).
fn source_fields(source: &FieldStore, requests: &[Request]) -> Result<Vec<FieldEntry>> {
    if let [request] = requests {
        return Ok(source.list(request, ListOptions::default())?.fields);
    }
    let mut seen = HashSet::new();
    let mut fields = Vec::new();
    for request in requests {
        for field in source.list(request, ListOptions::default())?.fields {
            if seen.insert(field.identifier()) {
                fields.push(field);
            }
        }
    }
    Ok(fields)
}

/// A request as it names the copies in the target: the modifiers' values set for the
/// keywords the target's schema has (others, such as `packingType`, change no identifier).
fn target_request(target: &FieldStore, request: &Request, modifiers: &[(String, String)]) -> Request {
    let keywords = target.schema().keywords();
    let mut request = request.clone();
    for (key, value) in modifiers.iter().filter(|(k, _)| keywords.contains(k.as_str())) {
        request.set(key, vec![value.clone()]);
    }
    request
}

/// What the target holds of what the requests name: length and checksum by identifier. A
/// target not yet made holds nothing.
fn target_holdings(target: &FieldStore, requests: &[Request]) -> Result<HashMap<Key, (u64, Option<u32>)>> {
    let mut held = HashMap::new();
    if target.check_exists().is_err() {
        return Ok(held);
    }
    for request in requests {
        for field in target.list(request, ListOptions::default())?.fields {
            held.insert(field.identifier(), (field.location.length, field.location.crc32c));
        }
    }
    Ok(held)
}

/// A message's MARS keys as the target lists the field's identifier: the schema's keywords
/// in its order, canonical values, absent ones left out.
fn stored_identifier(target: &FieldStore, keys: &Key) -> Result<Key> {
    let split = target.schema().split(keys)?;
    Ok(Key::join_non_empty(&[&split.dataset, &split.collocation, &split.element]))
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
    held: &HashMap<Key, (u64, Option<u32>)>,
    report: &mut CopyReport,
    done: &mut CopyProgress,
    progress: &mut dyn FnMut(CopyProgress),
) -> Result<Vec<Copied>> {
    let chunks = whole_field_chunks(&fields, CHUNK_BYTES);
    let mut reader = source.read_fields(fields.clone())?;
    std::thread::scope(|scope| {
        // Made here, so that an early return drops the receiver and the reading thread stops.
        let (filled, filled_rx) = mpsc::sync_channel::<Result<(Vec<u8>, usize)>>(CHUNKS_AHEAD);
        let (spare, spare_rx) = mpsc::channel::<Vec<u8>>();
        let sizes: Vec<usize> = chunks.iter().map(|chunk| fields[chunk.clone()].iter().map(|f| f.location.length as usize).sum()).collect();
        scope.spawn(move || {
            for size in sizes {
                let mut buffer = spare_rx.try_recv().unwrap_or_default();
                if buffer.len() < size {
                    buffer.resize(size, 0);
                }
                let read = match reader.read_to_fill(&mut buffer[..size]) {
                    Ok(n) if n == size => Ok((buffer, size)),
                    Ok(n) => Err(Error::new(ErrorKind::Corrupt, format!("the source's fields ended {} bytes early", size - n))),
                    Err(e) => Err(e),
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
                if let Some(c) = copy_field(target, field, bytes, options, held)? {
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
        Ok(copied)
    })
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
    held: &HashMap<Key, (u64, Option<u32>)>,
) -> Result<Option<Copied>> {
    let modified;
    let (identifier, bytes) = if options.modifiers.is_empty() {
        (field.identifier(), bytes)
    } else {
        let culprit =
            |e: Error| Error::caused_by(ErrorKind::BadRequest, format!("setting the modifiers in field {}", field.identifier()), e);
        modified = grib::modify(bytes, &options.modifiers).map_err(culprit)?;
        let keys = grib::mars_keys(&modified).map_err(culprit)?;
        (stored_identifier(target, &keys).map_err(culprit)?, modified.as_slice())
    };
    // The source's checksum was checked as the bytes were read; FDB5 records none.
    let crc = match field.location.crc32c {
        Some(crc) if options.modifiers.is_empty() => crc,
        _ => crc32c(bytes),
    };
    let length = bytes.len() as u64;
    if !held.is_empty() && held.get(&identifier) == Some(&(length, Some(crc))) {
        return Ok(None);
    }
    target.archive(&identifier, bytes)?;
    Ok(Some(Copied { identifier, length, crc32c: crc }))
}

/// Lists the target again: every field copied must be there, newest under its identifier,
/// with the length and checksum of the bytes given to it; with `read_back`, each is then read
/// (every byte checked against that checksum). Returns how many were checked.
fn verify(target: &FieldStore, requests: &[Request], copied: &[Copied], read_back: bool) -> Result<u64> {
    if copied.is_empty() {
        return Ok(0);
    }
    let mut listed = Vec::new();
    for request in requests {
        listed.extend(target.list(request, ListOptions::default())?.fields);
    }
    // By a hash of each identifier, not the identifier itself: no key is built per field.
    let mut by_hash = HashMap::with_capacity(listed.len());
    for (i, field) in listed.iter().enumerate() {
        by_hash.insert(identifier_hash(entries_of(field)), i);
    }
    let find = |c: &Copied| {
        let same = |i: &usize| entries_of(&listed[*i]).eq(c.identifier.iter());
        // Two identifiers with one hash: the other is found by looking at all.
        by_hash.get(&identifier_hash(c.identifier.iter())).copied().filter(same).or_else(|| (0..listed.len()).find(same))
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

/// A listed field's identifier, entry by entry (absent optional keywords left out).
fn entries_of(field: &FieldEntry) -> impl Iterator<Item = (&str, &str)> {
    field.dataset.iter().chain(field.collocation.iter()).chain(field.element.iter()).filter(|(_, v)| !v.is_empty())
}

/// A hash of an identifier given entry by entry.
fn identifier_hash<'a>(entries: impl Iterator<Item = (&'a str, &'a str)>) -> u64 {
    use std::hash::Hasher;
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    for (keyword, value) in entries {
        hasher.write(keyword.as_bytes());
        hasher.write_u8(b'=');
        hasher.write(value.as_bytes());
        hasher.write_u8(b',');
    }
    hasher.finish()
}
