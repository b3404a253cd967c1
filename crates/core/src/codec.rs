//! Binary encoding shared by catalogues (the POSIX TOC and index files, RADOS omap values): length-prefixed little-endian fields,
//! and self-delimiting, checksummed frames.
//!
//! A frame is `magic(4) | payload length u32 | CRC-32C u32 of kind+payload | kind u8 | payload`.
//! A reader that finds a bad frame (torn by a crash, or corrupted) can resynchronise on the
//! next magic: the CRC makes a false match vanishingly unlikely.

use crate::checksum;

/// Frame header size: magic, length, CRC, kind.
pub const HEADER: usize = 13;

/// Writes fields, little-endian, into a growing buffer; [`Decoder`] reads them back.
pub struct Encoder {
    /// The bytes written so far.
    pub buf: Vec<u8>,
}

impl Default for Encoder {
    fn default() -> Self {
        Encoder::new()
    }
}

impl Encoder {
    /// An empty encoder (with room for a small record).
    pub fn new() -> Self {
        Encoder { buf: Vec::with_capacity(256) }
    }

    /// Appends `v` as 4 little-endian bytes.
    pub fn u32(&mut self, v: u32) {
        self.buf.extend_from_slice(&v.to_le_bytes());
    }

    /// Appends `v` as 8 little-endian bytes.
    pub fn u64(&mut self, v: u64) {
        self.buf.extend_from_slice(&v.to_le_bytes());
    }

    /// Appends a string: its length in bytes as a u32, then its UTF-8 bytes.
    pub fn str(&mut self, s: &str) {
        self.u32(s.len() as u32);
        self.buf.extend_from_slice(s.as_bytes());
    }

    /// An axis as its values concatenated, then the count and the end of each value.
    pub fn axis_values(&mut self, axis: &crate::AxisValues) {
        let (buffer, ends) = axis.parts();
        self.str(buffer);
        self.u32(ends.len() as u32);
        for end in ends {
            self.u32(*end);
        }
    }

    /// Appends a string list: the count as a u32, then each string as [`Encoder::str`] writes it.
    pub fn strs<'a>(&mut self, items: impl ExactSizeIterator<Item = &'a str>) {
        self.u32(items.len() as u32);
        for s in items {
            self.str(s);
        }
    }
}

/// Reads fields back; every read is bounds-checked and fails with `None` on short input.
pub struct Decoder<'a> {
    data: &'a [u8],
    pos: usize,
}

impl<'a> Decoder<'a> {
    /// A decoder reading `data` from its start.
    pub fn new(data: &'a [u8]) -> Self {
        Decoder { data, pos: 0 }
    }

    /// The next `n` bytes.
    pub fn bytes(&mut self, n: usize) -> Option<&'a [u8]> {
        self.take(n)
    }

    fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        let end = self.pos.checked_add(n)?;
        let s = self.data.get(self.pos..end)?;
        self.pos = end;
        Some(s)
    }

    /// The next u32, from 4 little-endian bytes.
    pub fn u32(&mut self) -> Option<u32> {
        Some(u32::from_le_bytes(self.take(4)?.try_into().ok()?))
    }

    /// The next u64, from 8 little-endian bytes.
    pub fn u64(&mut self) -> Option<u64> {
        Some(u64::from_le_bytes(self.take(8)?.try_into().ok()?))
    }

    /// The next string, as [`Encoder::str`] writes it; `None` also if it is not UTF-8.
    pub fn str(&mut self) -> Option<&'a str> {
        let n = self.u32()? as usize;
        std::str::from_utf8(self.take(n)?).ok()
    }

    /// The next string list, as [`Encoder::strs`] writes it, copied out of the input.
    pub fn strs(&mut self) -> Option<Vec<String>> {
        let n = self.u32()? as usize;
        let mut out = Vec::with_capacity(n.min(1 << 16));
        for _ in 0..n {
            out.push(self.str()?.to_string());
        }
        Some(out)
    }

    /// An axis in its stored form (see [`Encoder::axis_values`]): no work per value.
    pub fn axis_values(&mut self) -> Option<crate::AxisValues> {
        let buffer = self.str()?;
        let n = self.u32()? as usize;
        let ends = self.take(n.checked_mul(4)?)?.chunks_exact(4).map(|c| u32::from_le_bytes(c.try_into().unwrap())).collect();
        crate::AxisValues::from_parts(buffer, ends)
    }

    /// A string list as slices of the input (no allocation per string).
    pub fn str_slices(&mut self) -> Option<Vec<&'a str>> {
        let n = self.u32()? as usize;
        let mut out = Vec::with_capacity(n.min(1 << 16));
        for _ in 0..n {
            out.push(self.str()?);
        }
        Some(out)
    }

    /// The bytes not read yet, all of them (the decoder is then finished).
    pub fn rest(&mut self) -> &'a [u8] {
        let rest = &self.data[self.pos..];
        self.pos = self.data.len();
        rest
    }

    /// Whether every byte of the input has been read.
    pub fn finished(&self) -> bool {
        self.pos == self.data.len()
    }
}

/// Wraps a payload in a frame.
pub fn frame(magic: &[u8; 4], kind: u8, payload: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(HEADER + payload.len());
    out.extend_from_slice(magic);
    out.extend_from_slice(&(payload.len() as u32).to_le_bytes());
    let crc = checksum::crc32c_append(checksum::crc32c(&[kind]), payload);
    out.extend_from_slice(&crc.to_le_bytes());
    out.push(kind);
    out.extend_from_slice(payload);
    out
}

/// What is at the start of `data`.
#[derive(Debug, PartialEq)]
pub enum Frame<'a> {
    /// A valid frame and its total size.
    Valid {
        /// What the payload is, as its writer numbers record kinds.
        kind: u8,
        /// The payload, checked against the frame's CRC.
        payload: &'a [u8],
        /// The whole frame's length in bytes, header included: where the next frame starts.
        size: usize,
    },
    /// Not enough bytes yet for a whole frame (a tail still being written, or torn).
    Incomplete,
    /// Bad magic or checksum: skip ahead to the next magic.
    Bad,
}

/// Reads the frame at the start of `data`, which must open with `magic`.
pub fn parse_frame<'a>(magic: &[u8; 4], data: &'a [u8]) -> Frame<'a> {
    if data.len() < HEADER {
        return if magic.starts_with(&data[..data.len().min(4)]) { Frame::Incomplete } else { Frame::Bad };
    }
    if &data[..4] != magic {
        return Frame::Bad;
    }
    let len = u32::from_le_bytes(data[4..8].try_into().unwrap()) as usize;
    let crc = u32::from_le_bytes(data[8..12].try_into().unwrap());
    let kind = data[12];
    let Some(payload) = data.get(HEADER..HEADER + len) else { return Frame::Incomplete };
    if checksum::crc32c_append(checksum::crc32c(&[kind]), payload) != crc {
        return Frame::Bad;
    }
    Frame::Valid { kind, payload, size: HEADER + len }
}

/// The offset of the next possible frame start after position 0.
pub fn next_magic(magic: &[u8; 4], data: &[u8]) -> Option<usize> {
    data.windows(4).skip(1).position(|w| w == magic).map(|p| p + 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    const M: &[u8; 4] = b"TEST";

    #[test]
    fn frames_round_trip_and_detect_damage() {
        let f = frame(M, 7, b"hello");
        assert_eq!(parse_frame(M, &f), Frame::Valid { kind: 7, payload: b"hello", size: f.len() });
        assert_eq!(parse_frame(M, &f[..f.len() - 1]), Frame::Incomplete);
        assert_eq!(parse_frame(M, &f[..3]), Frame::Incomplete);
        let mut bad = f.clone();
        *bad.last_mut().unwrap() ^= 1;
        assert_eq!(parse_frame(M, &bad), Frame::Bad);
        let mut two = f[..8].to_vec();
        two.extend_from_slice(&f);
        assert_eq!(next_magic(M, &two), Some(8));
    }

    #[test]
    fn decoder_refuses_short_input() {
        let mut e = Encoder::new();
        e.str("abc");
        e.u64(9);
        let mut d = Decoder::new(&e.buf);
        assert_eq!(d.str(), Some("abc"));
        assert_eq!(d.u64(), Some(9));
        assert!(d.finished());
        let mut short = Decoder::new(&e.buf[..5]);
        assert_eq!(short.str(), None);
    }
}
