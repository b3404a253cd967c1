//! Turns fuzz input into records that pass their checksums, so that the decoders behind the
//! checksums are fuzzed too.

/// Whether the input asks to be read as framed payloads (its first byte is odd), and the rest.
pub fn wants_frames(data: &[u8]) -> Option<(bool, &[u8])> {
    let (&mode, rest) = data.split_first()?;
    Some((mode & 1 == 1, rest))
}

/// The payloads listed in `data`, each as `kind u8 | length u16 | payload` (a length past the
/// end takes what is left).
pub fn payloads(mut data: &[u8]) -> Vec<(u8, &[u8])> {
    let mut out = Vec::new();
    while let [kind, a, b, rest @ ..] = data {
        let length = usize::from(u16::from_le_bytes([*a, *b])).min(rest.len());
        let (payload, tail) = rest.split_at(length);
        out.push((*kind, payload));
        data = tail;
    }
    out
}

/// The payloads listed in `data`, each wrapped in a valid frame with `magic`, concatenated.
pub fn frames(magic: &[u8; 4], data: &[u8]) -> Vec<u8> {
    payloads(data).into_iter().flat_map(|(kind, payload)| fieldstore_core::codec::frame(magic, kind, payload)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn payloads_are_split_by_their_lengths_and_cut_at_the_end() {
        let data = [7, 2, 0, b'a', b'b', 9, 5, 0, b'c'];
        assert_eq!(payloads(&data), vec![(7, &b"ab"[..]), (9, &b"c"[..])]);
        assert_eq!(wants_frames(&[1, 2]), Some((true, &[2u8][..])));
        assert_eq!(wants_frames(&[2]), Some((false, &[][..])));
        assert_eq!(wants_frames(&[]), None);
    }
}
