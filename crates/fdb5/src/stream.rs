//! The values of eckit's `Stream` serialisation, as FDB5's TOC records hold them: each a tag
//! byte and a big-endian body. Integers are 4 bytes whatever their C++ type (eckit writes a
//! `long` or `size_t` in 32 bits); strings are a 4-byte length and their bytes.

use std::fmt;

/// Tags of the values a TOC record holds.
const START_OBJECT: u8 = 0x01;
const END_OBJECT: u8 = 0x02;
const INT: u8 = 0x05;
const UNSIGNED_INT: u8 = 0x06;
const LONG: u8 = 0x09;
const UNSIGNED_LONG: u8 = 0x0a;
const STRING: u8 = 0x0f;

/// Why a payload cannot be decoded, and where in it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DecodeError {
    /// The offset in the payload of the value that failed.
    pub at: usize,
    /// What was expected or found.
    pub reason: String,
}

impl fmt::Display for DecodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} at payload byte {}", self.reason, self.at)
    }
}

impl std::error::Error for DecodeError {}

/// Decoding result.
pub type Decoded<T> = Result<T, DecodeError>;

/// Reads values one after another from a record's payload.
pub struct StreamReader<'a> {
    bytes: &'a [u8],
    position: usize,
}

impl<'a> StreamReader<'a> {
    /// A reader at the start of `bytes`.
    pub fn new(bytes: &'a [u8]) -> Self {
        StreamReader { bytes, position: 0 }
    }

    /// Where the next value starts.
    pub fn position(&self) -> usize {
        self.position
    }

    fn fail<T>(&self, at: usize, reason: impl Into<String>) -> Decoded<T> {
        Err(DecodeError { at, reason: reason.into() })
    }

    fn take(&mut self, n: usize) -> Decoded<&'a [u8]> {
        let start = self.position;
        match start.checked_add(n).filter(|end| *end <= self.bytes.len()) {
            Some(end) => {
                self.position = end;
                Ok(&self.bytes[start..end])
            }
            None => self.fail(start, format!("{n} bytes wanted, {} left", self.bytes.len() - start)),
        }
    }

    fn tag(&mut self, wanted: &[u8], what: &str) -> Decoded<u8> {
        let at = self.position;
        let tag = self.take(1)?[0];
        if wanted.contains(&tag) {
            Ok(tag)
        } else {
            self.fail(at, format!("{what} expected, tag 0x{tag:02x} found"))
        }
    }

    fn be32(&mut self) -> Decoded<[u8; 4]> {
        Ok(self.take(4)?.try_into().expect("4 bytes taken"))
    }

    /// An `int` or `bool` (tag 0x05, or 0x06 unsigned).
    pub fn int(&mut self) -> Decoded<i64> {
        let tag = self.tag(&[INT, UNSIGNED_INT], "an int")?;
        let bytes = self.be32()?;
        Ok(if tag == INT { i32::from_be_bytes(bytes).into() } else { u32::from_be_bytes(bytes).into() })
    }

    /// A `long` (tag 0x09: signed 32 bits).
    pub fn long(&mut self) -> Decoded<i64> {
        self.tag(&[LONG], "a long")?;
        Ok(i32::from_be_bytes(self.be32()?).into())
    }

    /// An `unsigned long` (tag 0x0a: 32 bits), e.g. a count.
    pub fn ulong(&mut self) -> Decoded<u64> {
        self.tag(&[UNSIGNED_LONG], "an unsigned long")?;
        Ok(u32::from_be_bytes(self.be32()?).into())
    }

    /// A count of items that follow, each at least `min_item_bytes` long: refused where the
    /// payload cannot hold that many (a damaged count never allocates beyond the record).
    pub fn count(&mut self, min_item_bytes: usize) -> Decoded<usize> {
        let at = self.position;
        let n = self.ulong()?;
        let left = (self.bytes.len() - self.position) as u64;
        if n.saturating_mul(min_item_bytes as u64) > left {
            return self.fail(at, format!("a count of {n} items, more than the {left} bytes left can hold"));
        }
        Ok(n as usize)
    }

    /// A string (tag 0x0f), which must be UTF-8.
    pub fn string(&mut self) -> Decoded<String> {
        self.tag(&[STRING], "a string")?;
        let at = self.position;
        let len = u32::from_be_bytes(self.be32()?) as usize;
        let bytes = self.take(len)?;
        match std::str::from_utf8(bytes) {
            Ok(s) => Ok(s.to_string()),
            Err(_) => self.fail(at, "a string that is not UTF-8"),
        }
    }

    /// The start of an object (tag 0x01).
    pub fn start_object(&mut self) -> Decoded<()> {
        self.tag(&[START_OBJECT], "the start of an object").map(drop)
    }

    /// Whether the object ends here (tag 0x02, consumed) rather than another field following.
    pub fn end_of_object(&mut self) -> Decoded<bool> {
        match self.bytes.get(self.position) {
            Some(&END_OBJECT) => {
                self.position += 1;
                Ok(true)
            }
            Some(_) => Ok(false),
            None => self.fail(self.position, "the end of an object expected, the payload ended"),
        }
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// Writes values as eckit does, for tests of the decoders.
    #[derive(Default)]
    pub struct StreamWriter(pub Vec<u8>);

    impl StreamWriter {
        pub fn string(&mut self, s: &str) -> &mut Self {
            self.0.push(STRING);
            self.0.extend_from_slice(&(s.len() as u32).to_be_bytes());
            self.0.extend_from_slice(s.as_bytes());
            self
        }
        pub fn ulong(&mut self, n: u32) -> &mut Self {
            self.0.push(UNSIGNED_LONG);
            self.0.extend_from_slice(&n.to_be_bytes());
            self
        }
        pub fn long(&mut self, n: i32) -> &mut Self {
            self.0.push(LONG);
            self.0.extend_from_slice(&n.to_be_bytes());
            self
        }
        pub fn int(&mut self, n: i32) -> &mut Self {
            self.0.push(INT);
            self.0.extend_from_slice(&n.to_be_bytes());
            self
        }
        pub fn byte(&mut self, b: u8) -> &mut Self {
            self.0.push(b);
            self
        }
    }

    #[test]
    fn values_decode_as_eckit_writes_them() {
        let mut w = StreamWriter::default();
        w.string("class").ulong(3).long(-2).int(1).byte(START_OBJECT).byte(END_OBJECT);
        let mut r = StreamReader::new(&w.0);
        assert_eq!(r.string().unwrap(), "class");
        assert_eq!(r.ulong().unwrap(), 3);
        assert_eq!(r.long().unwrap(), -2);
        assert_eq!(r.int().unwrap(), 1);
        r.start_object().unwrap();
        assert!(r.end_of_object().unwrap());
        assert!(r.end_of_object().is_err(), "nothing left");
    }

    #[test]
    fn damage_is_refused_with_its_place() {
        let mut w = StreamWriter::default();
        w.string("abc");
        let cut = &w.0[..w.0.len() - 1];
        let error = StreamReader::new(cut).string().unwrap_err();
        assert_eq!(error.at, 5, "{error}");
        assert!(StreamReader::new(&w.0).ulong().unwrap_err().reason.contains("tag 0x0f"));
        // A count larger than what the payload holds.
        let mut w = StreamWriter::default();
        w.ulong(1_000_000).string("x");
        let error = StreamReader::new(&w.0).count(5).unwrap_err();
        assert!(error.reason.contains("count of 1000000"), "{error}");
        let mut w = StreamWriter::default();
        w.byte(STRING).0.extend_from_slice(&[0, 0, 0, 2, 0xff, 0xfe]);
        assert!(StreamReader::new(&w.0).string().unwrap_err().reason.contains("UTF-8"));
    }
}
