//! What travels between a client and `fieldstore serve` (docs/remote.md is the reference):
//! the paths, the archive stream's frames and the error body. Both sides use this module,
//! so each has one definition.
//!
//! An archive body is a sequence of frames: `F`, the identifier's length (u32, big-endian),
//! the identifier (`class=od,expver=0001,...`, UTF-8), the field's length (u64, big-endian)
//! and its bytes, once per field; then `E`, the end: the server flushes everything the body
//! carried, and answers only once that is durable and visible. A body that ends without `E`
//! (a client killed, a connection lost) is never flushed: nothing of it becomes visible.

/// The pieces [`FieldFrames::push`] takes (the `bytes` crate's).
pub use bytes::Bytes;
use bytes::{Buf, BytesMut};
use serde::{Deserialize, Serialize};

use fieldstore_core::{Error, ErrorKind, Key, Result};

/// Runs one [`fieldstore_core::api::Operation`] (a JSON body), answers its report as JSON.
pub const CALL: &str = "/v1/call";
/// Archives the fields of an archive body ([`FieldFrames`]), flushing at its end.
pub const ARCHIVE: &str = "/v1/archive";
/// Reads a byte range of a location the server gave (`uri`, `offset`, `length` in the query).
pub const READ: &str = "/v1/read";
/// The fields a request names, one JSON object per line (`request` in the query).
pub const LIST: &str = "/v1/list";
/// The bytes of the fields a request names, one after the other (`request` in the query).
pub const RETRIEVE: &str = "/v1/retrieve";
/// Answers 200 while the server serves.
pub const HEALTH: &str = "/health";
/// The server's counters, in Prometheus' text format.
pub const METRICS: &str = "/metrics";
/// The header naming an archiver's session: its archive requests reuse one archiver on the
/// server, whose flushes append to the same files.
pub const SESSION: &str = "fieldstore-session";
/// The media type of an archive body.
pub const FIELDS_TYPE: &str = "application/vnd.fieldstore.fields";

/// The longest identifier a frame may carry, in bytes.
pub const MAX_IDENTIFIER: u32 = 64 * 1024;

/// The longest a field frame's header may be: its tag, lengths and identifier.
pub const LARGEST_FRAME_HEADER: u64 = 1 + 4 + MAX_IDENTIFIER as u64 + 8;

/// A frame's tag: a field follows.
const FIELD: u8 = b'F';
/// A frame's tag: the end of the body, to be flushed.
const END: u8 = b'E';

/// The body of a failed call: its error's kind and its message (the whole chain, on one line).
#[derive(Debug, Serialize, Deserialize)]
pub struct ErrorBody {
    /// [`Error::kind`].
    pub kind: ErrorKind,
    /// [`Error::report`].
    pub message: String,
}

impl ErrorBody {
    /// The body of `error`.
    pub fn of(error: &Error) -> Self {
        ErrorBody { kind: error.kind(), message: error.report().to_string() }
    }
}

/// What an archive's answer says once the server has flushed.
#[derive(Debug, Default, Serialize, Deserialize)]
pub struct Archived {
    /// The fields flushed.
    pub fields: u64,
    /// Their bytes.
    pub bytes: u64,
}

/// Appends one field's frame to `out`.
pub fn encode_field(identifier: &Key, data: &[u8], out: &mut Vec<u8>) -> Result<()> {
    let identifier = identifier.to_string();
    let length = u32::try_from(identifier.len()).ok().filter(|n| *n <= MAX_IDENTIFIER);
    let Some(length) = length else {
        return Err(Error::new(
            ErrorKind::BadRequest,
            format!("identifier of {} bytes: at most {MAX_IDENTIFIER} travel", identifier.len()),
        ));
    };
    out.push(FIELD);
    out.extend_from_slice(&length.to_be_bytes());
    out.extend_from_slice(identifier.as_bytes());
    out.extend_from_slice(&(data.len() as u64).to_be_bytes());
    out.extend_from_slice(data);
    Ok(())
}

/// The end frame.
pub fn encode_end(out: &mut Vec<u8>) {
    out.push(END);
}

/// One decoded frame.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Frame {
    /// A field: its identifier and bytes (a view of the body's, not a copy).
    Field(Key, Bytes),
    /// The end: flush.
    End,
}

/// Decodes an archive body as it arrives, in pieces of any size: [`FieldFrames::push`] each
/// piece, then take the complete frames with [`FieldFrames::next_frame`]. It holds at most one
/// frame's bytes, and refuses a frame longer than its limit before reading it.
pub struct FieldFrames {
    /// The bytes received and not yet decoded; decoded frames are split off it, not copied.
    buffer: BytesMut,
    max_field: u64,
    ended: bool,
}

impl FieldFrames {
    /// A decoder refusing fields longer than `max_field` bytes.
    pub fn new(max_field: u64) -> Self {
        FieldFrames { buffer: BytesMut::new(), max_field, ended: false }
    }

    /// Adds the next bytes of the body: taken as they are (not copied) where nothing is
    /// pending and no one else holds them, as a connection's pieces of whole frames are.
    pub fn push(&mut self, piece: Bytes) {
        if !self.buffer.is_empty() {
            return self.buffer.extend_from_slice(&piece);
        }
        self.buffer = piece.try_into_mut().unwrap_or_else(|shared| BytesMut::from(&shared[..]));
    }

    /// Whether the end frame came.
    pub fn ended(&self) -> bool {
        self.ended
    }

    /// Bytes received and not yet decoded (a frame in part): the body must not end there.
    pub fn pending(&self) -> usize {
        self.buffer.len()
    }

    /// The next complete frame, if one is there; an error for a malformed one (the body is
    /// then to be refused whole).
    pub fn next_frame(&mut self) -> Result<Option<Frame>> {
        let Some(&tag) = self.buffer.first() else { return Ok(None) };
        if self.ended {
            return Err(bad("bytes after the end frame"));
        }
        match tag {
            END => {
                self.buffer.advance(1);
                self.ended = true;
                Ok(Some(Frame::End))
            }
            FIELD => self.next_field(),
            other => Err(bad(&format!("unknown frame tag {other:#04x}"))),
        }
    }

    /// The bytes the frame being received will hold when whole, as its header declares; what
    /// was received of it while its header is incomplete (or refused: the next frame says why).
    /// Called once every whole frame was taken: a server holds this much for the request.
    pub fn frame_bytes(&self) -> usize {
        let frame = &self.buffer[..];
        let declared = || -> Option<usize> {
            if *frame.first()? != FIELD {
                return None;
            }
            let key_length = u32::from_be_bytes(frame.get(1..5)?.try_into().ok()?);
            let key_end = 5 + usize::try_from(key_length.min(MAX_IDENTIFIER)).ok()?;
            let data_length = u64::from_be_bytes(frame.get(key_end..key_end + 8)?.try_into().ok()?);
            (data_length <= self.max_field).then(|| key_end + 8 + data_length as usize)
        };
        declared().unwrap_or(0).max(frame.len())
    }

    /// The identifier of the frame being received, once it has come whole (its bytes may
    /// still come): a server checks it before it makes room for them. Called once every whole
    /// frame was taken.
    pub fn frame_identifier(&self) -> Option<&str> {
        let frame = &self.buffer[..];
        if *frame.first()? != FIELD {
            return None;
        }
        let key_length = u32::from_be_bytes(frame.get(1..5)?.try_into().ok()?);
        let key_end = 5usize.checked_add(usize::try_from(key_length.min(MAX_IDENTIFIER)).ok()?)?;
        std::str::from_utf8(frame.get(5..key_end)?).ok()
    }

    fn next_field(&mut self) -> Result<Option<Frame>> {
        let frame = &self.buffer[..];
        let Some(key_length) = frame.get(1..5) else { return Ok(None) };
        let key_length = u32::from_be_bytes(key_length.try_into().expect("4 bytes"));
        if key_length > MAX_IDENTIFIER {
            return Err(bad(&format!("identifier of {key_length} bytes: at most {MAX_IDENTIFIER}")));
        }
        let key_end = 5 + key_length as usize;
        let Some(data_length) = frame.get(key_end..key_end + 8) else { return Ok(None) };
        let data_length = u64::from_be_bytes(data_length.try_into().expect("8 bytes"));
        if data_length > self.max_field {
            return Err(bad(&format!("field of {data_length} bytes: this server takes at most {}", self.max_field)));
        }
        // Within max_field, which fits memory: the frame is held whole before it is taken.
        let end = key_end + 8 + data_length as usize;
        if frame.len() < end {
            return Ok(None);
        }
        let text = std::str::from_utf8(&frame[5..key_end]).map_err(|_| bad("identifier is not UTF-8"))?;
        let identifier = Key::parse(text)?;
        let data = self.buffer.split_to(end).freeze().slice(key_end + 8..);
        Ok(Some(Frame::Field(identifier, data)))
    }
}

fn bad(what: &str) -> Error {
    Error::new(ErrorKind::BadRequest, format!("archive body: {what}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frames_decode_in_pieces_of_any_size() {
        let key = Key::parse("class=od,step=1").unwrap();
        let mut body = Vec::new();
        encode_field(&key, b"GRIB....7777", &mut body).unwrap();
        encode_field(&key, b"", &mut body).unwrap();
        encode_end(&mut body);
        for piece in [1, 3, 7, body.len()] {
            let mut frames = FieldFrames::new(1 << 20);
            let mut got = Vec::new();
            for chunk in body.chunks(piece) {
                frames.push(Bytes::copy_from_slice(chunk));
                while let Some(frame) = frames.next_frame().unwrap() {
                    got.push(frame);
                }
            }
            let fields = [Frame::Field(key.clone(), Bytes::from_static(b"GRIB....7777")), Frame::Field(key.clone(), Bytes::new())];
            assert_eq!(frames.frame_bytes(), 0, "all taken");
            assert_eq!(got, [&fields[..], &[Frame::End]].concat());
            assert!(frames.ended() && frames.pending() == 0);
        }
    }

    #[test]
    fn a_frame_s_size_is_known_from_its_header() {
        let key = Key::parse("class=od,step=1").unwrap();
        let mut body = Vec::new();
        encode_field(&key, &[7; 1000], &mut body).unwrap();
        let header = 1 + 4 + key.to_string().len() + 8;
        let mut frames = FieldFrames::new(1 << 20);
        frames.push(Bytes::copy_from_slice(&body[..header - 1]));
        assert_eq!(frames.frame_bytes(), header - 1, "the header incomplete: what came");
        assert_eq!(frames.frame_identifier(), Some("class=od,step=1"), "the identifier came before its length");
        frames.push(Bytes::copy_from_slice(&body[header - 1..header + 10]));
        assert_eq!(frames.frame_bytes(), header + 1000, "the whole frame, declared");
        assert!(frames.next_frame().unwrap().is_none());
    }

    #[test]
    fn malformed_frames_are_refused_before_their_bytes_arrive() {
        let mut frames = FieldFrames::new(100);
        frames.push(Bytes::from_static(&[FIELD, 0, 0, 0, 3, b'a', b'=', b'b', 0, 0, 0, 0, 0, 0, 0, 101]));
        assert!(frames.next_frame().unwrap_err().to_string().contains("at most 100"));
        let mut frames = FieldFrames::new(100);
        frames.push(Bytes::from_static(&[FIELD, 0xff, 0xff, 0xff, 0xff]));
        assert!(frames.next_frame().is_err());
        let mut frames = FieldFrames::new(100);
        frames.push(Bytes::from_static(b"X"));
        assert!(frames.next_frame().unwrap_err().to_string().contains("unknown frame tag"));
        let mut frames = FieldFrames::new(100);
        frames.push(Bytes::from_static(&[FIELD, 0, 0, 0, 1, b'a', 0, 0, 0, 0, 0, 0, 0, 0]));
        assert_eq!(frames.next_frame().unwrap_err().kind(), ErrorKind::BadRequest);
    }
}
