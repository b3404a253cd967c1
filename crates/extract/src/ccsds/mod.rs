//! CCSDS packing (`grid_ccsds`, GRIB 2 template 5.42) read natively. The packed integers are
//! coded in Reference Sample Intervals (RSIs) of `rsi x block_size` values, each decodable on
//! its own from its first bit, and inside an RSI in codes of one block or more. A field's
//! stream is decoded whole once ([`Ccsds::of`], by this crate's decoder, [`coded`]) to find
//! where each RSI starts and, every [`ENTRY_SAMPLES`] values, an entry: where a code starts
//! and the sample before it. A point is then read by decoding from the entry before it to its
//! code's end: a few hundred values, not its RSI's thousands. The caller checks the decoded
//! values against ecCodes' before keeping any of it ([`crate::Packing::of`]).

mod coded;

use fieldstore_core::error::{Error, ErrorKind, Result};

use coded::Coding;

/// A CCSDS field's coding, and where decoding may start in its stream.
#[derive(Clone, Debug, PartialEq)]
pub struct Ccsds {
    /// libaec's flags, as the message gives them (`ccsdsFlags`).
    pub flags: u32,
    /// Values per coding block (`ccsdsBlockSize`).
    pub block_size: u32,
    /// Blocks per RSI (`ccsdsRsi`).
    pub rsi: u32,
    /// The coded stream's length in bytes (section 7's data).
    pub length: u64,
    /// Values coded.
    pub values: u64,
    /// The bit offset of each RSI in the stream.
    pub offsets: Vec<u64>,
    /// Where decoding may start inside RSIs, in stream order.
    pub entries: Vec<Entry>,
}

/// A point inside an RSI where decoding may start: a code's first bit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Entry {
    /// The block the code starts, counted from the stream's first.
    pub block: u32,
    /// Its first bit, counted from its RSI's first.
    pub bit: u32,
    /// The sample before it (the predictor of preprocessed samples).
    pub last: u32,
}

/// Values between entries: decoding a point costs at most about this many (or a zero-block
/// run), at 12 bytes kept per entry (about 1.1% of a field of 16 bits per value).
pub const ENTRY_SAMPLES: u32 = 512;

/// The most values a CCSDS field may have to be read natively (its stream is decoded whole
/// once, and checked against ecCodes' values): 2^25, five times a 6.6-million-point O1280
/// field.
const MAX_VALUES: u64 = 1 << 25;

/// Where one decoding starts: a bit of the stream, the RSI and its block there, the sample
/// before.
struct Start {
    bit: u64,
    rsi: usize,
    block: usize,
    last: u32,
}

impl Ccsds {
    /// Whether the block size and RSI are ones CCSDS allows ([`coded::sizes_allowed`]).
    pub fn sizes_allowed(&self) -> bool {
        coded::sizes_allowed(self.block_size, self.rsi)
    }

    /// The coding of `stream` (`coded` values of `bits` bits) with where decoding may start,
    /// and every value decoded (for the caller to check against ecCodes'); `None` if this
    /// decoder does not read it (signed samples, sizes CCSDS does not allow, a stream it
    /// cannot decode, more than [`MAX_VALUES`]): ecCodes decodes the field then.
    pub fn of(stream: &[u8], coded: u64, bits: u32, flags: u32, block_size: u32, rsi: u32) -> Option<(Ccsds, Vec<u32>)> {
        let coding = Coding::new(bits, flags, block_size, rsi).filter(|_| coded <= MAX_VALUES)?;
        let every = (ENTRY_SAMPLES / block_size).max(1) as usize;
        let (samples, offsets, entries) = coding.walk(stream, usize::try_from(coded).ok()?, every).ok()?;
        let length = stream.len() as u64;
        let ccsds = Ccsds { flags, block_size, rsi, length, values: coded, offsets, entries };
        Some((ccsds, samples))
    }

    /// Refuses what a record read back cannot hold: entries out of order (by block, and by
    /// bit within an RSI), at an RSI's start, outside their RSI or the stream, or predicting
    /// from a sample wider than `bits`.
    pub fn check(&self, bits: u32) -> std::result::Result<(), String> {
        let total_blocks = self.values.div_ceil(u64::from(self.block_size).max(1));
        let rsi_blocks = u64::from(self.rsi).max(1);
        let xmax = coded::max_sample(bits);
        let mut previous: Option<&Entry> = None;
        for entry in &self.entries {
            let rsi = (u64::from(entry.block) / rsi_blocks) as usize;
            let inside = self.offsets.get(rsi).is_some_and(|start| start.saturating_add(u64::from(entry.bit)) < self.rsi_end_bit(rsi));
            let in_order =
                previous.is_none_or(|p| p.block < entry.block && (u64::from(p.block) / rsi_blocks != rsi as u64 || p.bit < entry.bit));
            let at_start = u64::from(entry.block).is_multiple_of(rsi_blocks) || entry.bit == 0;
            if !in_order || at_start || u64::from(entry.block) >= total_blocks || !inside || entry.last > xmax {
                return Err(format!("an entry at block {} (bit {} of its RSI) out of place", entry.block, entry.bit));
            }
            previous = Some(entry);
        }
        Ok(())
    }

    /// The bytes of the stream from `data_offset` that packed values `first..first + count`
    /// need (count above 0): from the start before the first to the end of the last one's code.
    pub fn span(&self, data_offset: u64, first: u64, count: u64) -> (u64, u64) {
        let start = self.start(first).map_or(self.length, |s| s.bit / 8);
        // Never before its start, whatever a record holds (its entries are checked in order).
        let end = self.code_end(first + count - 1).div_ceil(8).max(start);
        (data_offset + start, data_offset + end)
    }

    /// Packed values `first..first + count` as integers, from `bytes`, the stream's bytes
    /// from byte `at` on (a [`Ccsds::span`] read).
    pub fn unpack(&self, bits: u32, bytes: &[u8], at: u64, first: u64, count: u64) -> Result<Vec<u64>> {
        let coding = Coding::new(bits, self.flags, self.block_size, self.rsi).ok_or_else(|| self.corrupt(0, "a coding not read"))?;
        let per = coding.per_rsi() as u64;
        let end = first + count;
        let mut integers = Vec::with_capacity(count as usize);
        let mut next = first;
        while next < end {
            let start = self.start(next).ok_or_else(|| self.corrupt(0, "a value beyond its RSIs"))?;
            let rsi_first = start.rsi as u64 * per;
            let until = end.min(rsi_first + per).min(self.values);
            let bit = start.bit.checked_sub(at * 8).ok_or_else(|| self.corrupt(start.rsi, "before the bytes read"))?;
            let samples = coding
                .decode(bytes, bit, start.block, start.last, (until - rsi_first) as usize)
                .map_err(|e| self.corrupt(start.rsi, e.0))?;
            let from = rsi_first + (start.block * self.block_size as usize) as u64;
            let wanted = samples.get((next - from) as usize..(until - from) as usize).ok_or_else(|| self.corrupt(start.rsi, "short"))?;
            integers.extend(wanted.iter().map(|s| u64::from(*s)));
            next = until;
        }
        Ok(integers)
    }

    /// Where decoding value `value` starts: the last entry at or before its block in its
    /// RSI, else its RSI's start.
    fn start(&self, value: u64) -> Option<Start> {
        let (rsi, after) = self.place(value);
        let rsi_start = *self.offsets.get(rsi)?;
        let entry = after.checked_sub(1).map(|i| self.entries[i]).filter(|e| self.rsi_of(e) == rsi);
        Some(match entry {
            Some(e) => {
                Start { bit: rsi_start + u64::from(e.bit), rsi, block: (u64::from(e.block) % u64::from(self.rsi)) as usize, last: e.last }
            }
            None => Start { bit: rsi_start, rsi, block: 0, last: 0 },
        })
    }

    /// A bit at or after the end of the code holding value `value`: the next start after its
    /// block (an entry or the next RSI), else the stream's end.
    fn code_end(&self, value: u64) -> u64 {
        let (rsi, after) = self.place(value);
        match self.entries.get(after).filter(|e| self.rsi_of(e) == rsi) {
            Some(e) => self.offsets.get(rsi).map_or(self.length.saturating_mul(8), |start| start + u64::from(e.bit)),
            None => self.rsi_end_bit(rsi),
        }
    }

    /// The RSI of value `value`, and how many entries start at or before its block.
    fn place(&self, value: u64) -> (usize, usize) {
        let block = value / u64::from(self.block_size);
        let rsi = usize::try_from(block / u64::from(self.rsi)).unwrap_or(usize::MAX);
        (rsi, self.entries.partition_point(|e| u64::from(e.block) <= block))
    }

    /// The RSI an entry lies in.
    fn rsi_of(&self, entry: &Entry) -> usize {
        (u64::from(entry.block) / u64::from(self.rsi)) as usize
    }

    /// Where RSI `rsi` ends: the next one's start, or the stream's end.
    fn rsi_end_bit(&self, rsi: usize) -> u64 {
        self.offsets.get(rsi.saturating_add(1)).copied().unwrap_or(self.length.saturating_mul(8))
    }

    fn corrupt(&self, rsi: usize, what: &str) -> Error {
        Error::new(ErrorKind::Corrupt, format!("a CCSDS field's RSI {rsi}: {what}"))
    }
}
