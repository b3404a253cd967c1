//! Extraction of grid points from GRIB fields without moving whole fields (gribjump's job,
//! issue 45): a field's packing is described once ([`Packing`], read through ecCodes), and an
//! extraction of ranges of grid points ([`extract`]) reads only the bytes that hold them (and
//! the bitmap before them), merged where close, and unpacks them bit for bit as ecCodes does.
//! Packings read natively: simple packing (GRIB 1 and 2, with or without a bitmap), CCSDS
//! (GRIB 2) and constant fields; every other packing is decoded whole by ecCodes, correctly,
//! and the result says so.

mod at_archive;
mod ccsds;
mod extract;
mod fields;
pub mod kept;
mod packing;
mod ranges;
mod record;
pub mod remote;

pub use at_archive::KeepPackings;
pub use ccsds::{Ccsds, Entry};
pub use extract::{extract, Extraction, Source};
pub use fields::{Extractor, FieldExtraction, KeptPackings, Planned, REMOTE_BATCH};
pub use packing::{Packing, PackingKind};
pub use ranges::Range;
