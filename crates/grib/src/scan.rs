//! Splits a byte stream into GRIB messages without decoding them: `GRIB`, the edition byte,
//! the total length (GRIB1: 3 bytes at offset 4, with ECMWF's encoding of messages over 8 MiB;
//! GRIB2: 8 bytes at offset 8), and the `7777` end marker. Anything else is an error naming its offset: fieldstore never skips bytes it
//! does not understand, so nothing is archived partially without notice.

use fieldstore_core::error::{Error, Result};

/// One message's place in the stream.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct MessageSpan {
    /// Where the message's `GRIB` starts in the stream.
    pub offset: usize,
    /// The message's total length in bytes, up to and including `7777`.
    pub length: usize,
    /// The GRIB edition: 1 or 2.
    pub edition: u8,
}

fn u24(bytes: &[u8], at: usize) -> Result<usize, String> {
    match bytes.get(at..at + 3) {
        Some(b) => Ok(u32::from_be_bytes([0, b[0], b[1], b[2]]) as usize),
        None => Err(format!("truncated: the header ends before byte {}", at + 3)),
    }
}

/// A GRIB1 message's length. Over 8 MiB, ECMWF sets the top bit of the 3-byte length and, when
/// section 4 declares a length under 120, the real length is (length without the bit) x 120
/// - section 4's length + 4 (the rule ecCodes applies when it reads GRIB1).
fn grib1_length(message: &[u8]) -> Result<usize, String> {
    let length = u24(message, 4)?;
    if length & 0x80_0000 == 0 {
        return Ok(length);
    }
    let section1 = u24(message, 8)?;
    let flags = *message.get(8 + 7).ok_or("truncated: section 1 ends early")?;
    let mut at = 8 + section1;
    if flags & 0x80 != 0 {
        at += u24(message, at)?; // section 2 (grid description)
    }
    if flags & 0x40 != 0 {
        at += u24(message, at)?; // section 3 (bitmap)
    }
    let section4 = u24(message, at)?;
    if section4 >= 120 {
        return Ok(length);
    }
    let units = length & 0x7f_ffff;
    (units * 120 + 4)
        .checked_sub(section4)
        .ok_or_else(|| format!("corrupt: a long message of {units} x 120 bytes is shorter than its section 4 ({section4} bytes)"))
}

/// Finds every message in `data`. `source` names the input in errors.
pub fn scan(data: &[u8], source: &str) -> Result<Vec<MessageSpan>> {
    let mut spans = Vec::new();
    let mut pos = 0;
    while pos < data.len() {
        let rest = &data[pos..];
        if rest.iter().all(|&b| b == 0 || b == b'\n') {
            break; // padding after the last message
        }
        let err = |message: String| Error::Grib { context: format!("{source}, message {} at byte {pos}", spans.len() + 1), message };
        if !rest.starts_with(b"GRIB") {
            return Err(err("not a GRIB message (no 'GRIB' marker here)".into()));
        }
        if rest.len() < 16 {
            return Err(err(format!("truncated: only {} bytes left", rest.len())));
        }
        let edition = rest[7];
        let length = match edition {
            1 => grib1_length(rest).map_err(err)?,
            2 => u64::from_be_bytes(rest[8..16].try_into().unwrap()) as usize,
            e => return Err(err(format!("unsupported GRIB edition {e}"))),
        };
        if length < 16 {
            return Err(err(format!("declared length {length} is too small")));
        }
        if rest.len() < length {
            return Err(err(format!("truncated: declares {length} bytes but only {} are there", rest.len())));
        }
        if &rest[length - 4..length] != b"7777" {
            return Err(err(format!("corrupt: no '7777' end marker at byte {}", pos + length - 4)));
        }
        spans.push(MessageSpan { offset: pos, length, edition });
        pos += length;
    }
    Ok(spans)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_long_grib1_message_shorter_than_its_section_4_is_an_error_not_an_overflow() {
        // Found by the grib_scan fuzz target: 0 units of 120 bytes, less than section 4's 24.
        let mut message = b"GRIB\x80\x00\x00\x01\x00\x00\x08\x00\x00\x00\x00\x00".to_vec();
        message.extend_from_slice(&[0, 0, 24]);
        message.resize(40, 0);
        let error = scan(&message, "f.grib").unwrap_err().to_string();
        assert!(error.contains("shorter than its section 4 (24 bytes)"), "{error}");
    }
}
