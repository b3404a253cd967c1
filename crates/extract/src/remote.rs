//! Extraction through a server (`type: remote`): a client's [`crate::Extractor`] sends its
//! requests and ranges to the server's [`EXTRACT`] endpoint, whose own extractor reads the
//! points next to the data (with the packings its store keeps, and those it learnt for any
//! client) and answers only the values; and a scan to [`SCAN`], which the server's extractor
//! makes on its store. Both sides use this module, so each has one definition of the calls and
//! their answers (docs/remote.md).
//!
//! The call is JSON ([`ExtractCall`]). The answer is binary: `FSXA`, the length of a JSON
//! header (u64, little-endian) and the header ([`AnswerHeader`]: each request's fields, their
//! bytes read), then every value (f64, little-endian) of every field in order, each field's
//! ranges in the call's order, then a byte per value: 1 where the point has a value, 0 where
//! the bitmap marks it missing.

use serde::{Deserialize, Serialize};

use fieldstore_core::api::FieldEntry;
use fieldstore_core::error::{Error, ErrorKind, Result};
use fieldstore_core::Request;

use crate::{Extraction, FieldExtraction, Range};

/// Extracts the ranges of a list of requests ([`ExtractCall`], POST).
pub const EXTRACT: &str = "/v1/extract";

/// Keeps the packings of the fields of a request ([`ScanCall`], POST): answers
/// [`crate::KeptPackings`] as JSON.
pub const SCAN: &str = "/v1/scan";

/// The first bytes of an answer.
const MAGIC: &[u8; 4] = b"FSXA";

/// The longest header an answer may have (a field's entry is about 300 bytes of JSON).
const LARGEST_HEADER: u64 = 1 << 30;

/// What a client asks: requests, each with its ranges of grid points.
#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExtractCall {
    /// The requests, in the order the answer follows.
    pub requests: Vec<RequestRanges>,
}

/// One request of a call and its ranges.
#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RequestRanges {
    /// The request's text (parsed again by the server).
    pub request: String,
    /// `[start, end)` pairs.
    pub ranges: Vec<[u64; 2]>,
}

impl ExtractCall {
    /// The call of `requests`.
    pub fn of(requests: &[(Request, Vec<Range>)]) -> Self {
        let requests = requests
            .iter()
            .map(|(request, ranges)| RequestRanges {
                request: request.to_string(),
                ranges: ranges.iter().map(|r| [r.start, r.end]).collect(),
            })
            .collect();
        ExtractCall { requests }
    }

    /// The requests parsed, each with its ranges; the first that cannot be read names itself.
    pub fn parsed(&self) -> Result<Vec<(Request, Vec<Range>)>> {
        let parse = |(at, one): (usize, &RequestRanges)| {
            let request = Request::parse(&one.request)
                .map_err(|e| Error::caused_by(e.kind(), format!("request {} of the call ({})", at + 1, one.request), e))?;
            Ok((request, one.ranges.iter().map(|[start, end]| Range::new(*start, *end)).collect()))
        };
        self.requests.iter().enumerate().map(parse).collect()
    }
}

/// What a client asks to be scanned ([`crate::Extractor::keep_packings`]).
#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScanCall {
    /// The request's text (parsed again by the server).
    pub request: String,
}

/// What a scan's answer says it did.
pub fn decode_scanned(answer: &[u8]) -> Result<crate::KeptPackings> {
    serde_json::from_slice(answer).map_err(|e| Error::caused_by(ErrorKind::Corrupt, "a scan's answer", e))
}

/// What an answer says of its fields, before their values.
#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AnswerHeader {
    /// Per request, its fields in the order it names values.
    pub requests: Vec<Vec<FieldHeader>>,
}

/// One field of an answer.
#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FieldHeader {
    /// The field (its location as the server gave it: readable by this client only).
    pub field: FieldEntry,
    /// The bytes the server read for it ([`Extraction::bytes_read`]).
    pub bytes_read: u64,
    /// Whether the server decoded it whole ([`Extraction::decoded_whole`]).
    pub decoded_whole: bool,
}

/// The points of every field of `answers`: the answer's values.
pub fn points(answers: &[Vec<FieldExtraction>]) -> u64 {
    answers.iter().flatten().flat_map(|field| &field.extraction.values).map(|values| values.len() as u64).sum()
}

/// The bytes of an answer holding `points` values, besides its header.
pub fn value_bytes(points: u64) -> u64 {
    points.saturating_mul(9)
}

/// The answer to a call: `answers` (each request's fields) encoded.
pub fn encode_answer(answers: Vec<Vec<FieldExtraction>>) -> Result<Vec<u8>> {
    let mut values = Vec::new();
    let mut masks = Vec::new();
    let mut header = AnswerHeader { requests: Vec::with_capacity(answers.len()) };
    for fields in answers {
        let mut headers = Vec::with_capacity(fields.len());
        for FieldExtraction { field, extraction } in fields {
            values.extend(extraction.values.iter().flatten().flat_map(|v| v.to_le_bytes()));
            masks.extend(extraction.masks.iter().flatten().map(|present| u8::from(*present)));
            headers.push(FieldHeader { field, bytes_read: extraction.bytes_read, decoded_whole: extraction.decoded_whole });
        }
        header.requests.push(headers);
    }
    let header = serde_json::to_vec(&header).map_err(|e| Error::caused_by(ErrorKind::Io, "cannot encode an extraction's answer", e))?;
    let mut answer = Vec::with_capacity(12 + header.len() + values.len() + masks.len());
    answer.extend_from_slice(MAGIC);
    answer.extend_from_slice(&(header.len() as u64).to_le_bytes());
    answer.extend_from_slice(&header);
    answer.extend_from_slice(&values);
    answer.extend_from_slice(&masks);
    Ok(answer)
}

/// The extractions an answer to `call` holds, checked to be the call's: a request's fields,
/// each with a value and a mask byte per point of the request's ranges.
pub fn decode_answer(call: &[(Request, Vec<Range>)], answer: &[u8]) -> Result<Vec<Vec<FieldExtraction>>> {
    let corrupt = |what: String| Error::new(ErrorKind::Corrupt, format!("an extraction's answer {what}"));
    if answer.len() < 12 || &answer[..4] != MAGIC {
        return Err(corrupt("does not begin as one".into()));
    }
    let header_length = u64::from_le_bytes(answer[4..12].try_into().expect("8 bytes"));
    let header_end = usize::try_from(header_length)
        .ok()
        .filter(|_| header_length <= LARGEST_HEADER)
        .and_then(|length| length.checked_add(12))
        .filter(|end| *end <= answer.len())
        .ok_or_else(|| corrupt(format!("has a header of {header_length} bytes in {}", answer.len())))?;
    let header: AnswerHeader = serde_json::from_slice(&answer[12..header_end])
        .map_err(|e| Error::caused_by(ErrorKind::Corrupt, "an extraction's answer's header", e))?;
    if header.requests.len() != call.len() {
        return Err(corrupt(format!("answers {} requests of {}", header.requests.len(), call.len())));
    }
    let points = call
        .iter()
        .zip(&header.requests)
        .map(|((_, ranges), fields)| Range::points(ranges).saturating_mul(fields.len() as u64))
        .fold(0, u64::saturating_add);
    let body = &answer[header_end..];
    if value_bytes(points) != body.len() as u64 {
        return Err(corrupt(format!("holds {} bytes of values where {points} points take {}", body.len(), value_bytes(points))));
    }
    // Now within the answer's length: the points fit in memory.
    let (mut values, mut masks) = body.split_at(points as usize * 8);
    let mut answers = Vec::with_capacity(call.len());
    for ((_, ranges), fields) in call.iter().zip(header.requests) {
        let mut extracted = Vec::with_capacity(fields.len());
        for FieldHeader { field, bytes_read, decoded_whole } in fields {
            let mut extraction = Extraction { bytes_read, decoded_whole, ..Extraction::default() };
            for range in ranges {
                let (these, rest) = values.split_at(range.len() as usize * 8);
                extraction.values.push(these.chunks_exact(8).map(|b| f64::from_le_bytes(b.try_into().expect("8 bytes"))).collect());
                values = rest;
                let (these, rest) = masks.split_at(range.len() as usize);
                extraction.masks.push(these.iter().map(|b| *b != 0).collect());
                masks = rest;
            }
            extracted.push(FieldExtraction { field, extraction });
        }
        answers.push(extracted);
    }
    Ok(answers)
}

#[cfg(test)]
mod tests {
    use super::*;
    use fieldstore_core::{FieldLocation, Key};
    use std::sync::Arc;

    fn field(param: &str, values: Vec<Vec<f64>>) -> FieldExtraction {
        let entry = FieldEntry {
            dataset: Arc::new(Key::parse("class=od,expver=0001").unwrap()),
            collocation: Arc::new(Key::parse("type=fc").unwrap()),
            element: Key::parse(&format!("param={param}")).unwrap(),
            location: FieldLocation { uri: "posix:/a/b.data#signature".into(), offset: 7, length: 1000, crc32c: Some(3) },
            superseded: false,
            archived_in: None,
        };
        let masks = values.iter().map(|v| v.iter().map(|x| !x.is_nan()).collect()).collect();
        FieldExtraction { field: entry, extraction: Extraction { values, masks, bytes_read: 42, decoded_whole: param == "2" } }
    }

    #[test]
    fn an_answer_is_read_back_as_it_was_made_and_a_damaged_one_is_refused() {
        let call = vec![
            (Request::parse("class=od,param=1/2").unwrap(), vec![Range::new(0, 2), Range::new(5, 6)]),
            (Request::parse("class=od,param=3").unwrap(), vec![Range::new(1, 2)]),
        ];
        let answers = vec![
            vec![field("1", vec![vec![1.5, f64::NAN], vec![-0.0]]), field("2", vec![vec![3.0, 4.0], vec![f64::MAX]])],
            vec![field("3", vec![vec![7.25]])],
        ];
        let encoded = encode_answer(answers.clone()).unwrap();
        let decoded = decode_answer(&call, &encoded).unwrap();
        assert_eq!(points(&decoded), 7);
        for (made, read) in answers.iter().flatten().zip(decoded.iter().flatten()) {
            assert_eq!(made.field.identifier(), read.field.identifier());
            assert_eq!(made.field.location, read.field.location);
            let bits = |e: &Extraction| e.values.iter().flatten().map(|v| v.to_bits()).collect::<Vec<_>>();
            assert_eq!(bits(&made.extraction), bits(&read.extraction), "bit for bit, NaN and -0 included");
            assert_eq!((&made.extraction.masks, made.extraction.bytes_read), (&read.extraction.masks, read.extraction.bytes_read));
            assert_eq!(made.extraction.decoded_whole, read.extraction.decoded_whole);
        }
        for broken in [&encoded[..encoded.len() - 1], &encoded[..11], b"FSXB........"] {
            assert_eq!(decode_answer(&call, broken).unwrap_err().kind(), ErrorKind::Corrupt);
        }
        let mut long_header = encoded.clone();
        long_header[4..12].copy_from_slice(&u64::MAX.to_le_bytes());
        assert!(decode_answer(&call, &long_header).unwrap_err().to_string().contains("header of"));
        // An answer of another call: more points asked than it holds.
        let other = vec![call[0].clone(), (call[1].0.clone(), vec![Range::new(0, 3)])];
        assert!(decode_answer(&other, &encoded).unwrap_err().to_string().contains("points take"));
        assert!(decode_answer(&call[..1], &encoded).unwrap_err().to_string().contains("answers 2 requests of 1"));
    }

    #[test]
    fn a_call_travels_as_json_and_names_its_request_that_cannot_be_read() {
        let requests = vec![(Request::parse("class=od,param=1").unwrap(), vec![Range::new(3, 9)])];
        let call: ExtractCall = serde_json::from_slice(&serde_json::to_vec(&ExtractCall::of(&requests)).unwrap()).unwrap();
        let parsed = call.parsed().unwrap();
        assert_eq!((parsed[0].0.to_string(), &parsed[0].1), (requests[0].0.to_string(), &requests[0].1));
        let bad = ExtractCall {
            requests: vec![call.requests.into_iter().next().unwrap(), RequestRanges { request: "class=od,=x".into(), ranges: vec![] }],
        };
        let error = bad.parsed().unwrap_err();
        assert!(error.to_string().contains("request 2 of the call (class=od,=x)"), "{error}");
        assert!(serde_json::from_str::<ExtractCall>(r#"{"requests":[],"other":1}"#).is_err(), "unknown fields refused");
    }
}
