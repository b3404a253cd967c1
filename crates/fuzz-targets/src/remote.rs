//! Targets for what a server of `fieldstore serve` decodes from clients (archive bodies,
//! calls and extractions), and what a client decodes from a server (a resolve's answer, an
//! extraction's).

use fieldstore_core::api::{decode_matches, encode_matches, FieldEntry, Matches, Operation};
use fieldstore_core::Request;
use fieldstore_extract::remote::{decode_answer, encode_answer, ExtractCall};
use fieldstore_extract::Range;
use fieldstore_remote::protocol::{encode_end, encode_field, Bytes, FieldFrames, Frame};

/// The archive body decoder, fed in pieces of the size the first byte says: what it decodes,
/// encoded again, is the body's prefix it consumed; it never holds more than one frame, and
/// the bytes it declares for the frame being received are within a frame's.
pub fn archive_frames(data: &[u8]) {
    let Some((&piece, body)) = data.split_first() else { return };
    let mut frames = FieldFrames::new(1 << 16);
    let mut encoded = Vec::new();
    'pieces: for chunk in body.chunks(usize::from(piece.max(1))) {
        frames.push(Bytes::copy_from_slice(chunk));
        loop {
            match frames.next_frame() {
                Ok(Some(Frame::Field(identifier, bytes))) => {
                    assert!(bytes.len() <= 1 << 16, "a field longer than the limit");
                    encode_field(&identifier, &bytes, &mut encoded).expect("a decoded field encodes");
                }
                Ok(Some(Frame::End)) => encode_end(&mut encoded),
                Ok(None) => break,
                Err(_) => break 'pieces,
            }
        }
        assert!(frames.pending() <= chunk.len() + (1 << 16) + 64 * 1024 + 13, "the decoder holds more than a frame");
        // What a server holds for the frame being received: never less than what came of it,
        // never more than a whole frame may be.
        let held = frames.frame_bytes();
        assert!(held >= frames.pending() && held <= frames.pending().max((1 << 16) + 64 * 1024 + 13), "frame_bytes {held}");
    }
    // Keys print canonically, which may differ from their text in the body: compare lengths
    // only where the identifiers printed as they came.
    assert!(encoded.len() <= body.len() || encoded.len() <= body.len() * 2, "decoded more than was sent");
}

/// A call's JSON: one that parses needs some permission for each of its needs, the same
/// after a round trip. An extraction's call that parses has its requests read or refused.
pub fn remote_call(data: &[u8]) {
    if let Ok(call) = serde_json::from_slice::<ExtractCall>(data) {
        let _ = call.parsed();
    }
    let Ok(operation) = serde_json::from_slice::<Operation>(data) else { return };
    let needs: Vec<_> = operation.needs().iter().map(|need| need.any_of.to_vec()).collect();
    assert!(!needs.is_empty() && needs.iter().all(|any_of| !any_of.is_empty()), "a call needs some permission");
    let again: Operation =
        serde_json::from_slice(&serde_json::to_vec(&operation).expect("a call encodes")).expect("an encoded call parses");
    let again: Vec<_> = again.needs().iter().map(|need| need.any_of.to_vec()).collect();
    assert_eq!(again, needs, "a call needs the same after a round trip");
}

/// A resolve's answer from a server, as a client reads it: one that decodes encodes again
/// (as a server would) and decodes to the same fields, data sets and explanations.
pub fn remote_answer(data: &[u8]) {
    let Ok(matches) = decode_matches(data, "fuzz") else { return };
    let before = described(&matches);
    let encoded = encode_matches(matches, &|_| {}).expect("a decoded answer encodes");
    let again = decode_matches(&encoded, "fuzz").expect("an encoded answer decodes");
    assert_eq!(described(&again), before, "an answer is read the same after a round trip");
}

/// Everything a client takes from an answer, as text to compare.
fn described(matches: &Matches) -> Vec<String> {
    let field = |f: &FieldEntry| {
        let archived_in = f.archived_in.as_ref().map(|k| k.to_string());
        format!("{} | {} | {} | {:?} | {} | {archived_in:?}", f.dataset, f.collocation, f.element, f.location, f.superseded)
    };
    let mut described: Vec<String> = matches.fields.iter().map(field).collect();
    described.extend(matches.datasets.iter().map(|d| format!("dataset {d}")));
    described.extend(matches.collocations.iter().map(|(d, c)| format!("collocation {d} {c}")));
    described.push(format!("{:?} {:?}", matches.explanation, matches.not_found));
    described
}

/// The call [`extract_answer`]'s answers answer: two requests, with 3 and 1 points a field.
pub fn extraction_call() -> Vec<(Request, Vec<Range>)> {
    let request = |text: &str| Request::parse(text).expect("a request");
    vec![(request("class=od,param=1/2"), vec![Range::new(0, 2), Range::new(5, 6)]), (request("class=od,param=3"), vec![Range::new(1, 2)])]
}

/// An extraction's answer from a server, as a client reads it: one that decodes has a value
/// and a mask per point of the call's ranges, and encodes again (as a server would) to the
/// same bytes of values.
pub fn extract_answer(data: &[u8]) {
    let call = extraction_call();
    let Ok(answers) = decode_answer(&call, data) else { return };
    for ((_, ranges), fields) in call.iter().zip(&answers) {
        for field in fields {
            let lengths: Vec<u64> = ranges.iter().map(Range::len).collect();
            assert_eq!(field.extraction.values.iter().map(|v| v.len() as u64).collect::<Vec<_>>(), lengths, "a value per point");
            assert_eq!(field.extraction.masks.iter().map(|m| m.len() as u64).collect::<Vec<_>>(), lengths, "a mask per point");
        }
    }
    let bits = |answers: &[Vec<fieldstore_extract::FieldExtraction>]| -> Vec<u64> {
        answers.iter().flatten().flat_map(|f| f.extraction.values.iter().flatten().map(|v| v.to_bits())).collect()
    };
    let before = bits(&answers);
    let again = decode_answer(&call, &encode_answer(answers).expect("a decoded answer encodes")).expect("an encoded answer decodes");
    assert_eq!(bits(&again), before, "an answer's values are read the same after a round trip");
}
