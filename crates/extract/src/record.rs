//! A [`Packing`] as it is kept beside a store's data: a small binary record, versioned, read
//! back with every part checked (a record from storage is outside input), so that a store can
//! keep what an extraction needs and the first extraction of a field reads little too.
//!
//! Layout (integers big-endian): `FSPK`, version 1, kind (0 simple, 1 constant, 2 CCSDS, 3
//! decoded whole), bits per value, flags (bit 0: a bitmap), then points, coded values, the
//! reference value's bits, E, D, the data offset, the bitmap offset (0 without one) and the
//! message's length, 8 bytes each; for CCSDS then its flags, block size and RSI (4 bytes each),
//! its stream's length and RSI count (8 bytes each), each RSI's bit offset (8 bytes each), and
//! (from version 2) the count of entries inside RSIs (8 bytes) and each entry's block, bit
//! offset in its RSI and predicting sample (4 bytes each); for a packing decoded whole, its
//! name's length (2 bytes) and the name. Version 1 records are read too, but not those of
//! CCSDS fields: their values were not checked against ecCodes' (a scan learns them again).

use fieldstore_core::error::{Error, ErrorKind, Result};

use crate::ccsds::Entry;
use crate::{Ccsds, Packing, PackingKind};

const MAGIC: &[u8; 4] = b"FSPK";
const VERSION: u8 = 2;
/// The version before entries inside RSIs.
const VERSION_WITHOUT_ENTRIES: u8 = 1;
/// More RSIs than any field of up to 2^27 values has, even in RSIs of 8 values.
const MAX_RSIS: u64 = 1 << 24;

impl Packing {
    /// The packing as a record ([`Packing::decode`] reads it back).
    pub fn encode(&self) -> Vec<u8> {
        let mut out = MAGIC.to_vec();
        let kind = match &self.kind {
            PackingKind::Simple => 0,
            PackingKind::Constant => 1,
            PackingKind::Ccsds(_) => 2,
            PackingKind::Decoded(_) => 3,
        };
        out.extend([VERSION, kind, u8::try_from(self.bits).unwrap_or(u8::MAX), u8::from(self.bitmap_offset.is_some())]);
        for n in [self.points, self.coded, self.reference.to_bits()] {
            out.extend(n.to_be_bytes());
        }
        out.extend(self.binary_scale.to_be_bytes());
        out.extend(self.decimal_scale.to_be_bytes());
        for n in [self.data_offset, self.bitmap_offset.unwrap_or(0), self.length] {
            out.extend(n.to_be_bytes());
        }
        match &self.kind {
            PackingKind::Ccsds(ccsds) => {
                for n in [ccsds.flags, ccsds.block_size, ccsds.rsi] {
                    out.extend(n.to_be_bytes());
                }
                for n in [ccsds.length, ccsds.offsets.len() as u64].into_iter().chain(ccsds.offsets.iter().copied()) {
                    out.extend(n.to_be_bytes());
                }
                out.extend((ccsds.entries.len() as u64).to_be_bytes());
                for entry in &ccsds.entries {
                    for n in [entry.block, entry.bit, entry.last] {
                        out.extend(n.to_be_bytes());
                    }
                }
            }
            PackingKind::Decoded(name) => {
                let name = &name.as_bytes()[..name.len().min(u16::MAX as usize)];
                out.extend((name.len() as u16).to_be_bytes());
                out.extend(name);
            }
            PackingKind::Simple | PackingKind::Constant => {}
        }
        out
    }

    /// The length of [`Packing::encode`]'s record, without making it.
    pub fn encoded_len(&self) -> usize {
        72 + match &self.kind {
            PackingKind::Ccsds(ccsds) => 36 + 8 * ccsds.offsets.len() + 12 * ccsds.entries.len(),
            PackingKind::Decoded(name) => 2 + name.len().min(u16::MAX as usize),
            PackingKind::Simple | PackingKind::Constant => 0,
        }
    }

    /// A record read back: every part checked to fit the message it describes; an error of
    /// kind `Corrupt` naming the part otherwise.
    pub fn decode(record: &[u8]) -> Result<Packing> {
        let mut r = Reader { bytes: record, at: 0 };
        if r.take(4)? != MAGIC {
            return Err(corrupt("it does not start with FSPK".into()));
        }
        let [version, kind, bits, flags] = r.array::<4>()?;
        if version != VERSION && version != VERSION_WITHOUT_ENTRIES {
            return Err(corrupt(format!("version {version}: this build reads versions up to {VERSION}")));
        }
        let (points, coded, reference) = (r.u64()?, r.u64()?, f64::from_bits(r.u64()?));
        let (binary_scale, decimal_scale) = (r.u64()? as i64, r.u64()? as i64);
        let (data_offset, bitmap_offset, length) = (r.u64()?, r.u64()?, r.u64()?);
        let kind = match kind {
            0 => PackingKind::Simple,
            1 => PackingKind::Constant,
            2 => {
                let (flags, block_size, rsi) = (r.u32()?, r.u32()?, r.u32()?);
                let (stream, count) = (r.u64()?, r.u64()?);
                if count > MAX_RSIS || count.saturating_mul(8) > (record.len() - r.at) as u64 {
                    return Err(corrupt(format!("{count} RSIs in a record of {} bytes", record.len())));
                }
                let offsets = (0..count).map(|_| r.u64()).collect::<Result<Vec<_>>>()?;
                if version == VERSION_WITHOUT_ENTRIES {
                    return Err(corrupt("a CCSDS packing of version 1, whose values were not checked against ecCodes'".into()));
                }
                let entries = r.entries(record.len())?;
                PackingKind::Ccsds(Ccsds { flags, block_size, rsi, length: stream, values: coded, offsets, entries })
            }
            3 => {
                let n = u16::from_be_bytes(r.array::<2>()?) as usize;
                PackingKind::Decoded(String::from_utf8(r.take(n)?.to_vec()).map_err(|_| corrupt("a packing name not UTF-8".into()))?)
            }
            other => return Err(corrupt(format!("kind {other}"))),
        };
        if r.at != record.len() {
            return Err(corrupt(format!("{} bytes after its end", record.len() - r.at)));
        }
        let bitmap_offset = (flags & 1 == 1).then_some(bitmap_offset);
        let packing = Packing {
            kind,
            points,
            coded,
            bits: u32::from(bits),
            reference,
            binary_scale,
            decimal_scale,
            data_offset,
            bitmap_offset,
            length,
        };
        packing.check_record()?;
        Ok(packing)
    }
}

fn corrupt(what: String) -> Error {
    Error::new(ErrorKind::Corrupt, format!("a packing record: {what}"))
}

/// Reads a record front to back.
struct Reader<'r> {
    bytes: &'r [u8],
    at: usize,
}

impl Reader<'_> {
    fn take(&mut self, n: usize) -> Result<&[u8]> {
        let part = self.at.checked_add(n).and_then(|end| self.bytes.get(self.at..end));
        let part = part.ok_or_else(|| corrupt(format!("it ends at byte {} of {}", self.bytes.len(), self.at.saturating_add(n))))?;
        self.at += n;
        Ok(part)
    }

    fn array<const N: usize>(&mut self) -> Result<[u8; N]> {
        Ok(self.take(N)?.try_into().expect("N bytes taken"))
    }

    fn u64(&mut self) -> Result<u64> {
        Ok(u64::from_be_bytes(self.array()?))
    }

    fn u32(&mut self) -> Result<u32> {
        Ok(u32::from_be_bytes(self.array()?))
    }

    /// A CCSDS record's entries inside RSIs (their places checked by [`Ccsds::check`]).
    fn entries(&mut self, record_length: usize) -> Result<Vec<Entry>> {
        let count = self.u64()?;
        let bytes = count.checked_mul(12).filter(|n| *n <= (record_length - self.at) as u64);
        let bytes = bytes.ok_or_else(|| corrupt(format!("{count} entries in a record of {record_length} bytes")))?;
        let word = |b: &[u8]| u32::from_be_bytes([b[0], b[1], b[2], b[3]]);
        let entries = self.take(bytes as usize)?.chunks_exact(12);
        Ok(entries.map(|e| Entry { block: word(&e[0..4]), bit: word(&e[4..8]), last: word(&e[8..12]) }).collect())
    }
}
