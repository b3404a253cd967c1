//! Extraction from a store's fields: a request's fields are resolved by the handle, each
//! field's [`Packing`] read once (from its whole message, the first time it is extracted
//! from) and kept, and each extraction then reads only the bytes its ranges need, at the
//! field's location in the store.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use fieldstore_core::api::{FieldEntry, ListOptions};
use fieldstore_core::error::{Error, ErrorKind, Result};
use fieldstore_core::{FieldLocation, FieldStore, Request};

use crate::{extract, Extraction, Packing, Range};

/// The largest field whose message is read whole to learn its packing (2 GiB).
const LARGEST_FIELD: usize = 1 << 31;

/// Packings an extractor keeps: about 100 MB at most (CCSDS records of the largest fields).
const KEPT_PACKINGS: usize = 100_000;

/// One field's extraction.
#[derive(Clone, Debug)]
pub struct FieldExtraction {
    /// The field: its keys and location.
    pub field: FieldEntry,
    /// Its values; `bytes_read` counts its whole message too where its packing was read.
    pub extraction: Extraction,
}

/// Extracts from the fields of a store, keeping each field's packing once read (shared by
/// every thread).
#[derive(Default)]
pub struct Extractor {
    packings: Mutex<HashMap<FieldLocation, Arc<Packing>>>,
}

impl Extractor {
    /// An extractor that knows no field's packing yet.
    pub fn new() -> Self {
        Extractor::default()
    }

    /// The `ranges` of every field `request` names in `fs`, in the order a listing gives them.
    /// A request that matches nothing is a `NotFound` error saying why.
    pub fn extract(&self, fs: &FieldStore, request: &Request, ranges: &[Range]) -> Result<Vec<FieldExtraction>> {
        let listed = fs.list(request, ListOptions::default())?;
        if let Some(why) = listed.explanation {
            return Err(Error::new(ErrorKind::NotFound, format!("nothing matched {request}: {why}")));
        }
        listed.fields.into_iter().map(|field| self.extract_field(fs, field, ranges)).collect()
    }

    /// The `ranges` of one stored field.
    pub fn extract_field(&self, fs: &FieldStore, field: FieldEntry, ranges: &[Range]) -> Result<FieldExtraction> {
        let location = &field.location;
        let (packing, packing_bytes) = self.packing(fs, location)?;
        let mut source = |offset: u64, length: usize| {
            if offset.checked_add(length as u64).is_none_or(|end| end > location.length) {
                return Err(Error::new(ErrorKind::Corrupt, format!("{} bytes at {offset} of a field of {}", length, location.length)));
            }
            let mut bytes = vec![0; length];
            fs.read_stored(&location.uri, location.offset + offset, &mut bytes)?;
            Ok(bytes)
        };
        let mut extraction = extract(&packing, ranges, &mut source)
            .map_err(|e| Error::caused_by(e.kind(), format!("extracting from {}", field.identifier()), e))?;
        extraction.bytes_read += packing_bytes;
        Ok(FieldExtraction { field, extraction })
    }

    /// The packing of the field at `location`, and the bytes read to learn it (0 if known).
    fn packing(&self, fs: &FieldStore, location: &FieldLocation) -> Result<(Arc<Packing>, u64)> {
        if let Some(known) = self.packings.lock().unwrap_or_else(|e| e.into_inner()).get(location) {
            return Ok((known.clone(), 0));
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
        let mut known = self.packings.lock().unwrap_or_else(|e| e.into_inner());
        // Bounded: a long-lived handle (Python's, C's) forgets all and learns again.
        if known.len() >= KEPT_PACKINGS {
            known.clear();
        }
        known.insert(location.clone(), packing.clone());
        Ok((packing, location.length))
    }
}
