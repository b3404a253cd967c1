//! Packings kept beside a store's data: many fields' [`Packing`] records in one side object
//! of their data set ([`fieldstore_core::backend::SideObjects`]), written by `fieldstore scan`
//! (and by archives that keep packings), read by every extractor before it reads a field
//! whole to learn its packing.
//!
//! Layout (integers big-endian), version 2: `FSPI`, the version, the count of entries (4
//! bytes), then the directory: per entry its field's location (the URI's length in 2 bytes and
//! the URI, offset and length in 8 bytes each, a byte saying whether a CRC-32C follows and the
//! CRC-32C in 4 bytes), its packing record's length (4 bytes) and the record's CRC-32C (4
//! bytes); then the CRC-32C of everything before it (4 bytes); last the records
//! ([`Packing::encode`]), one after another in the directory's order. A reader checks the
//! directory whole and each record when it first needs it: a data set's side objects hold
//! the records of all its fields (a CCSDS field's is kilobytes) and an extraction needs a few,
//! so where the store lends a side object mapped (POSIX) only the directory's and those
//! records' pages are read. Version 1 (still read) had each record after its location and
//! one CRC-32C of the whole at the end.
//!
//! An entry applies to a field only where the field's whole location (its CRC-32C included)
//! is the entry's, so a side object that is stale (its fields purged), of another time or
//! damaged costs an extractor time, never a wrong value.

use std::sync::Arc;

use fieldstore_core::backend::SideObjects;
use fieldstore_core::checksum::crc32c;
use fieldstore_core::error::{Error, ErrorKind, Result};
use fieldstore_core::unique::{unique_object_name, unique_suffix};
use fieldstore_core::{FieldLocation, Key};

use crate::Packing;

/// A field's location and its packing, as a side object keeps them.
pub type KeptEntry = (FieldLocation, Arc<Packing>);

const MAGIC: &[u8; 4] = b"FSPI";
/// The version written.
const VERSION: u8 = 2;
/// The version before: each record after its location, one CRC-32C of the whole.
const VERSION_1: u8 = 1;

/// A side object's bytes, read or mapped ([`SideObjects::map_side_object`]), shared by the
/// records not decoded yet.
pub type SideObjectBytes = Arc<dyn AsRef<[u8]> + Send + Sync>;

/// Fields' packings as one side object.
pub fn encode_kept(entries: &[KeptEntry]) -> Vec<u8> {
    let entries = &entries[..entries.len().min(u32::MAX as usize)];
    let records: Vec<Vec<u8>> = entries.iter().map(|(_, packing)| packing.encode()).collect();
    let mut out = MAGIC.to_vec();
    out.push(VERSION);
    out.extend(u32::try_from(entries.len()).unwrap_or(u32::MAX).to_be_bytes());
    for ((location, _), record) in entries.iter().zip(&records) {
        let uri = location.uri.as_bytes();
        out.extend(u16::try_from(uri.len()).unwrap_or(u16::MAX).to_be_bytes());
        out.extend(&uri[..uri.len().min(u16::MAX as usize)]);
        out.extend(location.offset.to_be_bytes());
        out.extend(location.length.to_be_bytes());
        out.push(u8::from(location.crc32c.is_some()));
        out.extend(location.crc32c.unwrap_or(0).to_be_bytes());
        out.extend(u32::try_from(record.len()).unwrap_or(u32::MAX).to_be_bytes());
        out.extend(crc32c(record).to_be_bytes());
    }
    let check = crc32c(&out);
    out.extend(check.to_be_bytes());
    for record in records {
        out.extend(record);
    }
    out
}

/// Writes `entries` (one of [`kept_parts`]) as a new side object of `dataset`.
pub fn put_kept(side: &dyn SideObjects, dataset: &Key, entries: &[KeptEntry]) -> Result<()> {
    side.put_side_object(dataset, &unique_object_name(&unique_suffix()), &encode_kept(entries))
}

/// `entries` in consecutive parts whose side objects hold at most `bytes` each (at least one
/// entry each, however large).
pub fn kept_parts(entries: &[KeptEntry], bytes: usize) -> Vec<&[KeptEntry]> {
    let mut parts = Vec::new();
    let (mut start, mut filled) = (0, 0);
    for (i, (location, packing)) in entries.iter().enumerate() {
        // An entry: its URI's length (2), offset and length (16), the CRC's flag and CRC (5),
        // the record's length and CRC (8), then the URI and the record.
        let size = 31 + location.uri.len() + packing.encoded_len();
        if i > start && filled + size > bytes {
            parts.push(&entries[start..i]);
            (start, filled) = (i, 0);
        }
        filled += size;
    }
    if start < entries.len() {
        parts.push(&entries[start..]);
    }
    parts
}

/// The entries of a side object [`encode_kept`] wrote, every part checked: an error of kind
/// `Corrupt` naming the part otherwise.
pub fn decode_kept(bytes: &[u8]) -> Result<Vec<KeptEntry>> {
    let corrupt = |entry: usize, e: Error| Error::new(ErrorKind::Corrupt, format!("kept packings: entry {entry}: {e}"));
    let records = records_kept(Arc::new(bytes.to_vec()))?;
    records
        .into_iter()
        .enumerate()
        .map(|(i, (location, record))| Ok((location, Arc::new(record.packing().map_err(|e| corrupt(i, e))?))))
        .collect()
}

/// A field's location and its packing record, not decoded yet.
pub type KeptRecordEntry = (FieldLocation, KeptRecord);

/// A packing record inside a side object, checked and decoded when its field is first read:
/// an extractor reads every side object of a data set, and most of their records (CCSDS ones
/// are kilobytes) may be of fields it is not asked for.
#[derive(Clone)]
pub struct KeptRecord {
    object: SideObjectBytes,
    at: std::ops::Range<usize>,
    /// The record's CRC-32C (version 2; version 1's records were checked with the whole).
    crc32c: Option<u32>,
    /// The field's length, which the packing must describe.
    length: u64,
}

impl KeptRecord {
    /// The packing, checked as [`Packing::decode`] checks a record, for a field of the length
    /// its entry gives.
    pub fn packing(&self) -> Result<Packing> {
        let record = &(*self.object).as_ref()[self.at.clone()];
        if self.crc32c.is_some_and(|expected| crc32c(record) != expected) {
            return Err(Error::new(ErrorKind::Corrupt, "a packing record does not match its CRC-32C (damaged)"));
        }
        let packing = Packing::decode(record)?;
        if packing.length != self.length {
            return Err(Error::new(ErrorKind::Corrupt, format!("a packing of {} bytes for a field of {}", packing.length, self.length)));
        }
        Ok(packing)
    }

    /// The record's length in bytes.
    pub fn bytes(&self) -> usize {
        self.at.len()
    }
}

/// The entries of a side object [`encode_kept`] wrote (or version 1), their locations checked
/// and their packing records left to check and decode ([`KeptRecord::packing`]); an error of
/// kind `Corrupt` naming the part otherwise.
pub fn records_kept(object: SideObjectBytes) -> Result<Vec<KeptRecordEntry>> {
    let bytes = (*object).as_ref();
    match (bytes.get(..4) == Some(&MAGIC[..]), bytes.get(4)) {
        (true, Some(&VERSION)) => records_kept_2(&object),
        (true, Some(&VERSION_1)) => records_kept_1(&object),
        _ => Err(corrupt(format!("not a side object of packings of version 1 or 2 ({} bytes)", bytes.len()))),
    }
}

fn corrupt(why: String) -> Error {
    Error::new(ErrorKind::Corrupt, format!("kept packings: {why}"))
}

/// Version 2: the directory checked whole, the records where it says.
fn records_kept_2(object: &SideObjectBytes) -> Result<Vec<KeptRecordEntry>> {
    let bytes = (**object).as_ref();
    let mut reader = Reader { bytes, at: 5, uri: None };
    let count = reader.u32()?;
    // Each entry of the directory takes at least 31 bytes: the count cannot ask for more
    // than the bytes hold.
    if count as usize > bytes.len() / 31 {
        return Err(corrupt(format!("{count} entries in {} bytes", bytes.len())));
    }
    let mut directory = Vec::with_capacity(count as usize);
    for entry in 0..count {
        let read = reader.location().and_then(|location| Ok((location, reader.u32()? as usize, reader.u32()?)));
        directory.push(read.map_err(|e| corrupt(format!("entry {entry}: {e}")))?);
    }
    let end = reader.at;
    if reader.take(4).map_err(|e| corrupt(format!("the directory's CRC-32C: {e}")))? != crc32c(&bytes[..end]).to_be_bytes() {
        return Err(corrupt("the directory does not match its CRC-32C (damaged or torn)".into()));
    }
    let mut entries = Vec::with_capacity(directory.len());
    for (entry, (location, record_length, record_crc)) in directory.into_iter().enumerate() {
        let at = reader.take_range(record_length).map_err(|e| corrupt(format!("entry {entry}'s record: {e}")))?;
        let length = location.length;
        entries.push((location, KeptRecord { object: object.clone(), at, crc32c: Some(record_crc), length }));
    }
    if reader.at != bytes.len() {
        return Err(corrupt(format!("{} bytes after the last record", bytes.len() - reader.at)));
    }
    Ok(entries)
}

/// Version 1: the whole checked, each record after its location.
fn records_kept_1(object: &SideObjectBytes) -> Result<Vec<KeptRecordEntry>> {
    let bytes = (**object).as_ref();
    let (body, check) = bytes
        .split_at_checked(bytes.len().saturating_sub(4))
        .filter(|(b, _)| b.len() >= 9)
        .ok_or_else(|| corrupt(format!("{} bytes, too short", bytes.len())))?;
    if crc32c(body).to_be_bytes() != check {
        return Err(corrupt("their CRC-32C does not match (damaged or torn)".into()));
    }
    let mut reader = Reader { bytes: body, at: 5, uri: None };
    let count = reader.u32()?;
    // Each entry takes at least 31 bytes: the count cannot ask for more than the bytes hold.
    if count as usize > body.len() / 31 {
        return Err(corrupt(format!("{count} entries in {} bytes", body.len())));
    }
    let mut entries = Vec::with_capacity(count as usize);
    for entry in 0..count {
        let read = reader.location().and_then(|location| {
            let record_length = reader.u32()? as usize;
            Ok((location, reader.take_range(record_length)?))
        });
        let (location, at) = read.map_err(|e| corrupt(format!("entry {entry}: {e}")))?;
        let length = location.length;
        entries.push((location, KeptRecord { object: object.clone(), at, crc32c: None, length }));
    }
    if reader.at != body.len() {
        return Err(corrupt(format!("{} bytes after the last entry", body.len() - reader.at)));
    }
    Ok(entries)
}

/// The bytes of a side object, read in order.
struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
    /// The last URI read: most entries share their data file's, which is then shared too.
    uri: Option<Arc<str>>,
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8]> {
        let range = self.take_range(n)?;
        Ok(&self.bytes[range])
    }

    /// The place of the next `n` bytes, passed over.
    fn take_range(&mut self, n: usize) -> Result<std::ops::Range<usize>> {
        let end = self.at.checked_add(n).filter(|end| *end <= self.bytes.len());
        let end = end.ok_or_else(|| Error::new(ErrorKind::Corrupt, format!("{n} bytes wanted at {}, past the end", self.at)))?;
        let taken = self.at..end;
        self.at = end;
        Ok(taken)
    }

    fn u32(&mut self) -> Result<u32> {
        Ok(u32::from_be_bytes(self.take(4)?.try_into().unwrap_or_default()))
    }

    fn u64(&mut self) -> Result<u64> {
        Ok(u64::from_be_bytes(self.take(8)?.try_into().unwrap_or_default()))
    }

    /// An entry's location.
    fn location(&mut self) -> Result<FieldLocation> {
        let uri_length = u16::from_be_bytes(self.take(2)?.try_into().unwrap_or_default());
        let uri = std::str::from_utf8(self.take(uri_length.into())?)
            .map_err(|e| Error::caused_by(ErrorKind::Corrupt, "its location is not UTF-8", e))?;
        let uri: Arc<str> = match &self.uri {
            Some(last) if **last == *uri => last.clone(),
            _ => uri.into(),
        };
        self.uri = Some(uri.clone());
        let (offset, length) = (self.u64()?, self.u64()?);
        let has_crc = self.take(1)?[0] != 0;
        let crc = self.u32()?;
        Ok(FieldLocation { uri, offset, length, crc32c: has_crc.then_some(crc) })
    }
}
