//! Copying the fields requests name from one store to another (FDB5's `fdb-copy`), between
//! any two configs: FDB5's databases read in place into fieldstore on POSIX, S3, RADOS or
//! DAOS, or any backend into any other.
//!
//! - **Streamed**: fields are read and archived a batch at a time ([`CopyOptions::batch_bytes`]),
//!   the target flushed after each, so memory holds one batch's read-ahead, not the copy.
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

use fieldstore_core::checksum::crc32c;
use fieldstore_core::error::ErrorKind;
use fieldstore_core::{Error, FieldEntry, FieldStore, Key, ListOptions, Request, Result};
use fieldstore_grib as grib;
use serde::Serialize;

/// How a copy is made.
#[derive(Clone, Debug)]
pub struct CopyOptions {
    /// Keys set in each GRIB message through ecCodes before it is archived.
    pub modifiers: Vec<(String, String)>,
    /// Copy in the order the fields lie in the source's files (FDB5's `--sort`), not the
    /// listing's.
    pub sort_by_location: bool,
    /// Bytes of fields read, archived and flushed together: what an interruption may lose.
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
        let crc = field.location.crc32c.filter(|_| options.modifiers.is_empty());
        crc.is_some_and(|crc| held.get(&field.identifier()) == Some(&(field.location.length, Some(crc))))
    });
    report.already_there = there.len() as u64;
    done.done = there.iter().map(|f| f.location.length).sum();
    progress(done);
    let mut copied = Vec::new();
    for batch in batches(to_copy, options.batch_bytes) {
        copied.extend(copy_batch(source, target, batch, options, &held, &mut report, &mut done, progress)?);
        target.flush()?;
    }
    report.verified = verify(target, &target_requests, &copied, options.read_back)?;
    report.read_back = if options.read_back { report.verified } else { 0 };
    Ok(report)
}

/// The fields the requests name in the source, each once (requests may overlap).
fn source_fields(source: &FieldStore, requests: &[Request]) -> Result<Vec<FieldEntry>> {
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

/// Fields in batches of about `bytes` (a field larger is a batch of its own).
fn batches(fields: Vec<FieldEntry>, bytes: u64) -> impl Iterator<Item = Vec<FieldEntry>> {
    let mut fields = fields.into_iter().peekable();
    std::iter::from_fn(move || {
        let mut batch = Vec::new();
        let mut size = 0u64;
        while let Some(field) = fields.next_if(|f| batch.is_empty() || size.saturating_add(f.location.length) <= bytes) {
            size = size.saturating_add(field.location.length);
            batch.push(field);
        }
        (!batch.is_empty()).then_some(batch)
    })
}

/// A message's MARS keys as the target lists the field's identifier: the schema's keywords
/// in its order, canonical values, absent ones left out.
fn stored_identifier(target: &FieldStore, keys: &Key) -> Result<Key> {
    let split = target.schema().split(keys)?;
    let all = Key::join(&[&split.dataset, &split.collocation, &split.element]);
    Ok(Key::from_pairs(all.iter().filter(|(_, v)| !v.is_empty())))
}

/// Reads one batch from the source and archives what the target does not hold already
/// (not flushed).
#[allow(clippy::too_many_arguments)]
fn copy_batch(
    source: &FieldStore,
    target: &FieldStore,
    batch: Vec<FieldEntry>,
    options: &CopyOptions,
    held: &HashMap<Key, (u64, Option<u32>)>,
    report: &mut CopyReport,
    done: &mut CopyProgress,
    progress: &mut dyn FnMut(CopyProgress),
) -> Result<Vec<Copied>> {
    let mut reader = source.read_fields(batch)?;
    let mut copied = Vec::new();
    while let Some((field, bytes)) = reader.next_field()? {
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
        done.done += field.location.length;
        if held.get(&identifier) == Some(&(length, Some(crc))) {
            report.already_there += 1;
        } else {
            target.archive(&identifier, bytes)?;
            report.copied += 1;
            report.bytes_copied += length;
            copied.push(Copied { identifier, length, crc32c: crc });
        }
        progress(*done);
    }
    Ok(copied)
}

/// Lists the target again: every field copied must be there, newest under its identifier,
/// with the length and checksum of the bytes given to it; with `read_back`, each is then read
/// (every byte checked against that checksum). Returns how many were checked.
fn verify(target: &FieldStore, requests: &[Request], copied: &[Copied], read_back: bool) -> Result<u64> {
    if copied.is_empty() {
        return Ok(0);
    }
    let mut held = HashMap::new();
    for request in requests {
        for field in target.list(request, ListOptions::default())?.fields {
            held.insert(field.identifier(), field);
        }
    }
    let mut to_read = Vec::with_capacity(if read_back { copied.len() } else { 0 });
    for c in copied {
        let found = held.get(&c.identifier).map(|f| (f.location.length, f.location.crc32c));
        if found != Some((c.length, Some(c.crc32c))) {
            let what = match found {
                None => "is not in the target".to_string(),
                Some((length, Some(crc))) => format!("is in the target with {length} bytes and checksum {crc:08x}"),
                Some((length, None)) => format!("is in the target with {length} bytes and no checksum"),
            };
            let reason = format!("{what}; {} bytes with checksum {:08x} were copied", c.length, c.crc32c);
            return Err(Error::corrupt("copied field", c.identifier.to_string(), reason));
        }
        if read_back {
            to_read.extend(held.remove(&c.identifier));
        }
    }
    let mut reader = target.read_fields(to_read)?;
    while reader.next_field()?.is_some() {}
    Ok(copied.len() as u64)
}
