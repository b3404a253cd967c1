//! CCSDS packing (`grid_ccsds`, GRIB 2 template 5.42) read natively: the packed integers are
//! coded in Reference Sample Intervals (RSIs) of `rsi x block_size` values, each decodable on
//! its own from its first bit. Where each RSI starts is found once per field: the field's
//! stream is decoded whole and coded again with ECMWF's `tensogram-szip`; only if that gives
//! the field's very bytes are the RSIs' offsets kept (else the field is decoded whole by
//! ecCodes). An extraction then reads and decodes only the RSIs holding its points.

use fieldstore_core::error::{Error, ErrorKind, Result};
use tensogram_szip::{aec_compress, aec_decompress, AecParams, AEC_DATA_3BYTE, AEC_DATA_MSB};

/// A CCSDS field's coding, and where each of its RSIs starts.
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
}

impl Ccsds {
    /// Whether the block size and RSI are ones CCSDS allows (blocks of 8, 16, 32 or 64
    /// values, RSIs of at most 4,096 blocks): an RSI is then at most 262,144 values, which
    /// bounds what decoding one costs.
    pub fn sizes_allowed(&self) -> bool {
        matches!(self.block_size, 8 | 16 | 32 | 64) && (1..=4096).contains(&self.rsi)
    }

    /// The coding of `stream` (`coded` values of `bits` bits), with its RSIs' offsets, if they
    /// can be found: the values are decoded whole, coded again (`tensogram-szip`) for where
    /// its RSIs start, and each RSI of `stream` decoded from there must give its values (the
    /// coder may choose otherwise between options of one length). `None` if not: ecCodes
    /// decodes the field then.
    pub fn of(stream: &[u8], coded: u64, bits: u32, flags: u32, block_size: u32, rsi: u32) -> Option<Ccsds> {
        let mut ccsds = Ccsds { flags, block_size, rsi, length: stream.len() as u64, values: coded, offsets: Vec::new() };
        if !ccsds.sizes_allowed() || coded > MAX_VALUES {
            return None;
        }
        let params = ccsds.params(bits);
        let size = usize::try_from(coded).ok()?.checked_mul(width(bits))?;
        let samples = aec_decompress(stream, size, &params).ok()?;
        let (coded_again, offsets) = aec_compress(&samples, &params).ok()?;
        ccsds.offsets = offsets;
        let per_rsi = usize::try_from(ccsds.per_rsi()).ok()?.checked_mul(width(bits))?;
        let expected = samples.chunks(per_rsi.max(1));
        if ccsds.offsets.len() != expected.len() {
            return None;
        }
        // Coded again into the very bytes (ecCodes' libaec and tensogram-szip choose alike):
        // the RSIs start where the offsets say. Else each RSI must decode from its offset.
        let same_bytes = coded_again == stream;
        let every_rsi_found = same_bytes
            || expected.enumerate().all(|(i, want)| ccsds.decode_rsi(stream, 0, i, want.len(), &params).is_ok_and(|got| got == want));
        every_rsi_found.then_some(ccsds)
    }

    /// The `size` bytes of samples of RSI `rsi`, from `bytes`, the stream's bytes from byte
    /// `at` on: its bits moved to start a byte, decoded as a stream of its own (each RSI
    /// starts afresh, its reference sample first).
    fn decode_rsi(&self, bytes: &[u8], at: u64, rsi: usize, size: usize, params: &AecParams) -> Result<Vec<u8>> {
        let start = self.offsets.get(rsi).ok_or_else(|| self.corrupt(rsi, "beyond the RSIs found"))?;
        let bit = start.checked_sub(at * 8).ok_or_else(|| self.corrupt(rsi, "before the bytes read"))?;
        // The RSI's bytes as `span` reads them, counted from `at`.
        let end = self.rsi_end(rsi).saturating_sub(at);
        let rsi_bytes = bytes.get((bit / 8) as usize..(end as usize).min(bytes.len())).unwrap_or_default();
        aec_decompress(&shifted(rsi_bytes, (bit % 8) as u32), size, params)
            .map_err(|e| Error::caused_by(ErrorKind::Corrupt, format!("a CCSDS field's RSI {rsi}"), e))
    }

    /// The parameters of the samples as this module lays them out: big-endian, in as few
    /// bytes as hold them (the stream itself does not depend on the layout).
    fn params(&self, bits: u32) -> AecParams {
        AecParams { bits_per_sample: bits, block_size: self.block_size, rsi: self.rsi, flags: self.flags | AEC_DATA_3BYTE | AEC_DATA_MSB }
    }

    /// Values per RSI.
    fn per_rsi(&self) -> u64 {
        u64::from(self.rsi) * u64::from(self.block_size)
    }

    /// The bytes of the stream from `data_offset` that packed values `first..first + count`
    /// need: from their first RSI's start to their last one's end.
    pub fn span(&self, data_offset: u64, first: u64, count: u64) -> (u64, u64) {
        let (from, to) = self.rsis(first, count);
        let start = self.offsets.get(from).map_or(self.length, |bit| bit / 8);
        (data_offset + start, data_offset + self.rsi_end(to))
    }

    /// Where the bytes read for RSI `rsi` end in the stream: a few bytes past its last (its
    /// decoder may look ahead), at most the stream's end.
    fn rsi_end(&self, rsi: usize) -> u64 {
        self.offsets.get(rsi + 1).map_or(self.length, |bit| (bit.div_ceil(8) + LOOK_AHEAD).min(self.length))
    }

    /// The RSIs holding packed values `first..first + count` (count above 0).
    fn rsis(&self, first: u64, count: u64) -> (usize, usize) {
        let per = self.per_rsi().max(1);
        ((first / per) as usize, ((first + count - 1) / per) as usize)
    }

    /// Packed values `first..first + count` as integers, from `bytes`, the stream's bytes
    /// from byte `at` on (a [`Ccsds::span`] read).
    pub fn unpack(&self, bits: u32, bytes: &[u8], at: u64, first: u64, count: u64) -> Result<Vec<u64>> {
        let params = self.params(bits);
        let width = width(bits);
        let per = self.per_rsi();
        let (from, to) = self.rsis(first, count);
        let mut integers = Vec::with_capacity(count as usize);
        for rsi in from..=to {
            let rsi_first = rsi as u64 * per;
            let (lo, hi) = (first.max(rsi_first), (first + count).min(rsi_first + per));
            // Decoded up to the last value wanted, not to the RSI's end: a value depends only
            // on those before it in its RSI.
            let size = usize::try_from(hi.min(self.values).saturating_sub(rsi_first))
                .ok()
                .and_then(|n| n.checked_mul(width))
                .ok_or_else(|| self.corrupt(rsi, "too large"))?;
            let samples = self.decode_rsi(bytes, at, rsi, size, &params)?;
            let wanted = samples
                .get(((lo - rsi_first) as usize) * width..((hi - rsi_first) as usize) * width)
                .ok_or_else(|| self.corrupt(rsi, "shorter than its values"))?;
            integers.extend(wanted.chunks_exact(width).map(|s| s.iter().fold(0u64, |x, b| (x << 8) | u64::from(*b))));
        }
        Ok(integers)
    }

    fn corrupt(&self, rsi: usize, what: &str) -> Error {
        Error::new(ErrorKind::Corrupt, format!("a CCSDS field's RSI {rsi}: {what}"))
    }
}

/// The most values a CCSDS field may have to be read natively (its stream is decoded whole
/// once): 2^27, twenty times a 6.6-million-point O1280 field.
const MAX_VALUES: u64 = 1 << 27;

/// Bytes read beyond an RSI's last: the decoder may look ahead.
const LOOK_AHEAD: u64 = 8;

/// `bytes` moved left by `shift` bits (0 to 7).
fn shifted(bytes: &[u8], shift: u32) -> Vec<u8> {
    if shift == 0 {
        return bytes.to_vec();
    }
    let next = bytes.iter().skip(1).copied().chain(std::iter::once(0));
    bytes.iter().zip(next).map(|(b, n)| (b << shift) | (n >> (8 - shift))).collect()
}

/// Bytes per sample as `tensogram-szip` lays them out (17 to 24 bits in 3).
fn width(bits: u32) -> usize {
    bits.div_ceil(8).max(1) as usize
}
