//! Extracting ranges of grid points: the byte spans that hold them are worked out from the
//! field's [`Packing`], merged where close, read from a [`Source`], and unpacked.

use std::mem::MaybeUninit;

use fieldstore_core::error::{Error, ErrorKind, Result};
use fieldstore_grib::simple::{unpack_bits, Scale};

use crate::{Packing, PackingKind, Range};

/// Where a field's bytes are read from: `read(offset, length)` from the message's first byte.
pub trait Source {
    /// The `length` bytes at `offset`, all of them or an error.
    fn read(&mut self, offset: u64, length: usize) -> Result<Vec<u8>>;
    /// The gap between two spans below which one read of both costs less than two reads
    /// (the store's [`fieldstore_core::Store::merge_gap`]); a page by default.
    fn merge_gap(&self) -> u64 {
        fieldstore_core::backend::PAGE_GAP
    }
}

impl<F: FnMut(u64, usize) -> Result<Vec<u8>>> Source for F {
    fn read(&mut self, offset: u64, length: usize) -> Result<Vec<u8>> {
        self(offset, length)
    }
}

/// The values of the ranges asked for, in their order.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Extraction {
    /// Per range, a value per point: NaN where the bitmap marks the point missing.
    pub values: Vec<Vec<f64>>,
    /// Per range, whether each point has a value (the bitmap's bit).
    pub masks: Vec<Vec<bool>>,
    /// Bytes read from the source.
    pub bytes_read: u64,
    /// Whether the whole field was read and decoded by ecCodes (a packing not read natively).
    pub decoded_whole: bool,
}

/// Extracts `ranges` of the field `packing` describes, reading from `source`.
pub fn extract(packing: &Packing, ranges: &[Range], source: &mut dyn Source) -> Result<Extraction> {
    // A packing may be built by hand or read from storage: checked as a record is.
    packing.check_record()?;
    for range in ranges {
        range.check(packing.points)?;
    }
    let mut reads = Reads { source, bytes: 0 };
    let mut extraction = match &packing.kind {
        PackingKind::Decoded(_) => decoded_whole(packing, ranges, &mut reads)?,
        PackingKind::Simple | PackingKind::Ccsds(_) | PackingKind::Constant => natively(packing, ranges, &mut reads)?,
    };
    extraction.bytes_read = reads.bytes;
    Ok(extraction)
}

/// A source and the bytes read from it.
struct Reads<'s> {
    source: &'s mut dyn Source,
    bytes: u64,
}

impl Reads<'_> {
    fn read(&mut self, offset: u64, length: u64) -> Result<Vec<u8>> {
        let wanted = usize::try_from(length).map_err(|_| Error::new(ErrorKind::BadRequest, format!("a read of {length} bytes")))?;
        let bytes = self.source.read(offset, wanted)?;
        if bytes.len() != wanted {
            let message = format!("a read of {wanted} bytes at {offset} of a field gave {}", bytes.len());
            return Err(Error::new(ErrorKind::Corrupt, message));
        }
        self.bytes += length;
        Ok(bytes)
    }
}

/// A packing read natively: the bitmap's bytes up to the last point asked, then the packed
/// values of the points present.
fn natively(packing: &Packing, ranges: &[Range], reads: &mut Reads<'_>) -> Result<Extraction> {
    let last = ranges.iter().map(|r| r.end).max().unwrap_or(0);
    let bitmap = match packing.bitmap_offset {
        Some(at) => Some(reads.read(at, last.div_ceil(8))?),
        None => None,
    };
    let present = |point: u64| bitmap.as_ref().is_none_or(|b| marked(b, point));
    // The points present before each bitmap byte, once: ranges may be many.
    let before_byte: Vec<u64> = bitmap
        .iter()
        .flat_map(|b| b.iter().scan(0u64, |seen, byte| Some(std::mem::replace(seen, *seen + u64::from(byte.count_ones())))))
        .collect();
    // The packed index of a point: the points present before it.
    let packed_before = |point: u64| match &bitmap {
        None => point,
        Some(b) => {
            let (byte, part) = ((point / 8) as usize, (point % 8) as u32);
            let partial = if part == 0 { 0 } else { u64::from((b[byte] >> (8 - part)).count_ones()) };
            // A range's first point lies before the last point asked: its byte was read.
            before_byte[byte] + partial
        }
    };
    let mut extraction = Extraction::default();
    let mut wanted = Vec::new();
    for range in ranges {
        let mask: Vec<bool> = (range.start..range.end).map(present).collect();
        let first = packed_before(range.start);
        let count = mask.iter().filter(|p| **p).count() as u64;
        if first.checked_add(count).is_none_or(|end| end > packing.coded) {
            let message = format!("its bitmap marks more points present than its {} values", packing.coded);
            return Err(Error::new(ErrorKind::Corrupt, format!("a GRIB field: {message}")));
        }
        wanted.push((first, count));
        extraction.masks.push(mask);
    }
    let packed = match packing.kind {
        PackingKind::Constant => wanted.iter().map(|(_, count)| vec![packing.reference; *count as usize]).collect(),
        _ => packed_values(packing, &wanted, reads)?,
    };
    for (mask, packed) in extraction.masks.iter().zip(packed) {
        let mut packed = packed.into_iter();
        extraction.values.push(mask.iter().map(|p| if *p { packed.next().unwrap_or(f64::NAN) } else { f64::NAN }).collect());
    }
    Ok(extraction)
}

/// Whether a bitmap marks `point` present (bit `point`, most significant first); a point past
/// its bytes is not.
pub(crate) fn marked(bitmap: &[u8], point: u64) -> bool {
    usize::try_from(point / 8).ok().and_then(|byte| bitmap.get(byte)).is_some_and(|b| b & (0x80 >> (point % 8)) != 0)
}

/// The values of each run of packed values `(first, count)`, read in merged spans.
fn packed_values(packing: &Packing, wanted: &[(u64, u64)], reads: &mut Reads<'_>) -> Result<Vec<Vec<f64>>> {
    let bits = u64::from(packing.bits);
    // Each run's bytes, from the message's start (within the data: checked by Packing).
    let span = |(first, count): (u64, u64)| match &packing.kind {
        PackingKind::Ccsds(ccsds) => ccsds.span(packing.data_offset, first, count),
        _ => (packing.data_offset + first * bits / 8, packing.data_offset + ((first + count) * bits).div_ceil(8)),
    };
    let mut order: Vec<usize> = (0..wanted.len()).filter(|i| wanted[*i].1 > 0).collect();
    order.sort_by_key(|i| span(wanted[*i]).0);
    let gap = reads.source.merge_gap();
    let mut merged: Vec<(u64, u64)> = Vec::new();
    for i in &order {
        let (start, end) = span(wanted[*i]);
        match merged.last_mut() {
            Some(last) if start <= last.1.saturating_add(gap) => last.1 = last.1.max(end),
            _ => merged.push((start, end)),
        }
    }
    let read: Vec<(u64, Vec<u8>)> =
        merged.iter().map(|(start, end)| Ok((*start, reads.read(*start, end - start)?))).collect::<Result<_>>()?;
    let scale = Scale::new(packing.reference, packing.binary_scale, packing.decimal_scale);
    let mut values = Vec::with_capacity(wanted.len());
    for (first, count) in wanted.iter().copied() {
        if count == 0 {
            values.push(Vec::new());
            continue;
        }
        let (start, _) = span((first, count));
        let (at, bytes) = read.iter().rev().find(|(at, _)| *at <= start).expect("every run's span was read");
        let run = match &packing.kind {
            PackingKind::Ccsds(ccsds) => {
                let integers = ccsds.unpack(packing.bits, bytes, at - packing.data_offset, first, count)?;
                integers.into_iter().map(|x| scale.value(x)).collect()
            }
            _ => {
                let mut out = vec![MaybeUninit::<f64>::uninit(); count as usize];
                let skip = ((first * bits) % 8) as u32;
                unpack_bits(&bytes[(start - at) as usize..], skip, packing.bits, &mut out, |x| scale.value(x));
                // SAFETY: unpack_bits wrote every element.
                out.into_iter().map(|v| unsafe { v.assume_init() }).collect()
            }
        };
        values.push(run);
    }
    Ok(values)
}

/// A packing not read natively: the whole message, decoded by ecCodes.
fn decoded_whole(packing: &Packing, ranges: &[Range], reads: &mut Reads<'_>) -> Result<Extraction> {
    let message = reads.read(0, packing.length)?;
    // As many values as ecCodes finds in the message's own bytes, before any is held.
    let points = fieldstore_grib::decode::value_count(&message)?;
    if points as u64 != packing.points {
        let message = format!("a GRIB field of {points} values, described as {}", packing.points);
        return Err(Error::new(ErrorKind::Corrupt, message));
    }
    let mut all = vec![0.0f64; points];
    fieldstore_grib::decode::decode_values(&message, &mut all)?;
    let mut extraction = Extraction { decoded_whole: true, ..Extraction::default() };
    for range in ranges {
        let values = all[range.start as usize..range.end as usize].to_vec();
        extraction.masks.push(values.iter().map(|v| !v.is_nan()).collect());
        extraction.values.push(values);
    }
    Ok(extraction)
}
