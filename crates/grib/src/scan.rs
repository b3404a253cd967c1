//! Splits a byte stream into GRIB messages without decoding them: `GRIB`, the edition byte,
//! the total length (GRIB1: 3 bytes at offset 4; GRIB2: 8 bytes at offset 8), and the `7777`
//! end marker. Anything else is an error naming its offset: fieldstore never skips bytes it
//! does not understand, so nothing is archived partially without notice.

use fieldstore_core::error::{Error, Result};

/// One message's place in the stream.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct MessageSpan {
    pub offset: usize,
    pub length: usize,
    pub edition: u8,
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
            1 => {
                let l = u32::from_be_bytes([0, rest[4], rest[5], rest[6]]) as usize;
                if l & 0x80_0000 != 0 {
                    return Err(err("GRIB1 messages larger than 8 MiB (ECMWF's large-message encoding) are not supported".into()));
                }
                l
            }
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
