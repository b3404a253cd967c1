//! Targets for bytes read back: GRIB streams given to `archive`, and every record fieldstore
//! writes to disk or to objects, read as a reader after a crash or damage would meet them.

use std::cell::RefCell;
use std::path::PathBuf;

use fieldstore_object_catalogue::index_log::{decode_entries, decode_entry, decode_location, split_batch, LogReplay, Sealing};
use fieldstore_posix::embedded;
use fieldstore_posix::toc::{self, Segment, TocReader, INDEX_MAGIC, TOC_MAGIC};

use crate::framing::{frames, payloads, wants_frames};

/// GRIB message splitting: the messages found lie inside the input, in order, without overlap,
/// each from its `GRIB` to its `7777`.
pub fn grib_scan(data: &[u8]) {
    let Ok(spans) = fieldstore_grib::scan(data, "fuzz") else { return };
    let mut end = 0;
    for span in spans {
        assert!(span.offset >= end, "message at {} overlaps the one before", span.offset);
        let message = &data[span.offset..span.offset + span.length];
        assert!(message.starts_with(b"GRIB") && message.ends_with(b"7777") && matches!(span.edition, 1 | 2));
        end = span.offset + span.length;
    }
}

thread_local! {
    /// One directory per fuzzing process, its files rewritten for each input.
    static SCRATCH: RefCell<Option<tempfile::TempDir>> = const { RefCell::new(None) };
}

/// `name` in the scratch directory, holding `contents`.
fn scratch_file(name: &str, contents: &[u8]) -> PathBuf {
    SCRATCH.with_borrow_mut(|dir| {
        let dir = dir.get_or_insert_with(|| tempfile::tempdir().expect("a temporary directory"));
        let path = dir.path().join(name);
        std::fs::write(&path, contents).expect("scratch file written");
        path
    })
}

/// The input as raw bytes, or as payloads framed with `magic`.
fn record_bytes(magic: &[u8; 4], data: &[u8]) -> Option<Vec<u8>> {
    let (framed, rest) = wants_frames(data)?;
    Some(if framed { frames(magic, rest) } else { rest.to_vec() })
}

/// A TOC as a reader meets it: whole, then again after more was appended. Whatever it makes
/// visible has an index segment it can name.
pub fn toc(data: &[u8]) {
    let Some(bytes) = record_bytes(TOC_MAGIC, data) else { return };
    let half = bytes.len() / 2;
    let path = scratch_file("toc", &bytes[..half]);
    let mut reader = TocReader::new(path.clone());
    if reader.refresh().is_err() {
        return;
    }
    std::fs::write(&path, &bytes).expect("scratch file written");
    if reader.refresh().is_ok() {
        let dir = path.parent().expect("a scratch directory");
        for index in reader.visible() {
            let source = reader.source(&index.id);
            assert!(source.is_some(), "visible index {} has no segment", index.id);
            if let Some(toc::SegmentSource::File(place)) = source {
                let _ = Segment::load(dir, place);
            }
        }
    }
}

/// Index segments as the POSIX catalogue reads them from index files, then looks fields up.
pub fn index_segment(data: &[u8]) {
    let Some(bytes) = record_bytes(INDEX_MAGIC, data) else { return };
    let Ok(segment) = Segment::from_frame(&bytes) else { return };
    let entries: Vec<String> = segment.entries().map(|(values, _)| values.to_string()).collect();
    for values in &entries {
        assert!(segment.lookup(values).is_some(), "entry {values} cannot be looked up");
    }
}

/// Commits embedded in a data file, found searching backwards from its end, and the index
/// records and segments they carry.
pub fn embedded_commits(data: &[u8]) {
    let Some((framed, rest)) = wants_frames(data) else { return };
    let bytes = if framed { commits_around(rest) } else { rest.to_vec() };
    let Ok(commits) = embedded::read_all(&scratch_file("data", &bytes)) else { return };
    for commit in &commits {
        for (record, segment) in toc::decode_commit(commit).into_iter().flat_map(|(_, parts)| parts) {
            let _ = toc::record_place(record);
            let _ = Segment::from_frame(segment);
        }
    }
}

/// Payloads as field bytes (even kinds) and valid commits (odd kinds) of a data file named
/// `data`, each commit linked to the one before.
fn commits_around(data: &[u8]) -> Vec<u8> {
    let mut file = Vec::new();
    let mut previous_end = 0;
    for (kind, payload) in payloads(data) {
        if kind & 1 == 0 {
            file.extend_from_slice(payload);
        } else {
            file.extend(embedded::encode("data", file.len() as u64, previous_end, payload));
            previous_end = file.len() as u64;
        }
    }
    file
}

/// The log of the RADOS and DAOS catalogues: batches of records appended one after another,
/// replayed as a reader does, and the index objects' entries.
pub fn object_log(data: &[u8]) {
    let Some((framed, rest)) = wants_frames(data) else { return };
    if framed {
        let records: Vec<Vec<u8>> = payloads(rest).into_iter().map(|(kind, p)| [&[kind % 4][..], p].concat()).collect();
        for sealing in [Sealing::Plain, Sealing::Checksummed] {
            replay(&fieldstore_object_catalogue::index_log::encode_batch(&records, sealing));
        }
    } else {
        replay(rest);
        if let Ok(entries) = decode_entries(rest) {
            let _ = entries.lookup(&fieldstore_core::Key::new());
        }
        let _ = decode_location(rest);
        let _ = decode_entry("1", rest);
    }
}

fn replay(mut log: &[u8]) {
    let mut replay = LogReplay::default();
    while let Ok((records, rest)) = split_batch(log) {
        assert!(rest.len() < log.len(), "a batch that consumes nothing would loop");
        for record in records {
            let _ = replay.apply(record);
        }
        log = rest;
    }
    let visible: Vec<String> = replay.indexes().iter().map(|i| i.id.clone()).collect();
    let named = replay.all_ids();
    assert!(visible.iter().all(|id| named.contains(id.as_str())), "a visible index is not among those a wipe removes");
}

/// A field's packing record as kept beside a store's data (`fieldstore-extract`): one that
/// reads back describes the same after a round trip, and an extraction over a message of its
/// length (zeros) fails or answers, never panics or reads outside it.
pub fn packing_record(data: &[u8]) {
    use fieldstore_extract::{extract, Packing, Range};
    let Ok(packing) = Packing::decode(data) else { return };
    assert_eq!(Packing::decode(&packing.encode()).expect("an encoded record reads back"), packing, "a round trip");
    if packing.length > 1 << 20 || packing.points == 0 {
        return;
    }
    let message = vec![0u8; packing.length as usize];
    let mut source = |offset: u64, length: usize| {
        let end = offset.checked_add(length as u64).filter(|end| *end <= packing.length).expect("a read inside the message");
        Ok(message[offset as usize..end as usize].to_vec())
    };
    let last = packing.points;
    let ranges = [Range::new(0, 1.min(last)), Range::new(last / 2, (last / 2 + 3).min(last)), Range::new(last - 1, last)];
    if let Ok(got) = extract(&packing, &ranges, &mut source) {
        assert_eq!(got.values.len(), ranges.len());
        assert!(got.values.iter().zip(&ranges).all(|(v, r)| v.len() as u64 == r.len()), "a value per point");
    }
}

/// A side object of kept packings ([`fieldstore_extract::kept`]), read raw (first byte 0 modulo
/// 3), or closed by the target with the CRC-32C the fuzzer cannot forge: version 1 (1 modulo
/// 3: the rest is the entries, the whole's CRC-32C follows) or version 2 (2 modulo 3: the
/// rest's first 2 bytes say how many of the others are the count and directory, whose CRC-32C
/// goes after them, before the records): what decodes encodes again to entries that decode
/// the same.
pub fn kept_packings(data: &[u8]) {
    use fieldstore_core::checksum::crc32c;
    use fieldstore_extract::kept::{decode_kept, encode_kept};
    let Some((&how, rest)) = data.split_first() else { return };
    let input = match how % 3 {
        0 => rest.to_vec(),
        1 => {
            let mut closed = b"FSPI\x01".to_vec();
            closed.extend(rest);
            closed.extend(crc32c(&closed).to_be_bytes());
            closed
        }
        _ => {
            let Some((length, rest)) = rest.split_first_chunk::<2>() else { return };
            let (directory, records) = rest.split_at(usize::from(u16::from_be_bytes(*length)).min(rest.len()));
            let mut closed = b"FSPI\x02".to_vec();
            closed.extend(directory);
            closed.extend(crc32c(&closed).to_be_bytes());
            closed.extend(records);
            closed
        }
    };
    let Ok(entries) = decode_kept(&input) else { return };
    let again = decode_kept(&encode_kept(&entries)).expect("encoded entries read back");
    assert_eq!(again.len(), entries.len(), "a round trip keeps every entry");
    for ((location, packing), (location_again, packing_again)) in entries.iter().zip(&again) {
        assert_eq!((location, packing.encode()), (location_again, packing_again.encode()), "a round trip");
    }
}

/// A CCSDS stream (`grid_ccsds`'s data) read by fieldstore's decoder: the first 6 bytes choose
/// the coding (bits per value, block size, RSI, libaec's flags: preprocessing, the restricted
/// options, padded RSIs) and the count of values, the rest is the stream. Where the decoder
/// reads it whole ([`fieldstore_extract::Ccsds::of`]), every value (up to 2,000 of them, and
/// runs across RSIs) decodes again to the same from the entry before it, reading only the bytes
/// `span` says.
pub fn ccsds_stream(data: &[u8]) {
    use fieldstore_extract::Ccsds;
    let Some((&[b0, b1, b2, b3, b4, b5], stream)) = data.split_first_chunk::<6>() else { return };
    let bits = 1 + u32::from(b0) % 32;
    let block = [8, 16, 32, 64][usize::from(b1 % 4)];
    let rsi = 1 + u32::from(b2) % 64;
    let flags = u32::from(b3) & (8 | 16 | 32);
    let values = 1 + u64::from(u16::from_be_bytes([b4, b5])) % 20_000;
    let Some((ccsds, samples)) = Ccsds::of(stream, values, bits, flags, block, rsi) else { return };
    assert_eq!(samples.len() as u64, values, "a value per coded value");
    let step = (values / 2_000).max(1) as usize;
    let runs = (0..values).step_by(step).map(|first| (first, 1)).chain([(0, values), (values / 3, values - values / 3)]);
    for (first, count) in runs {
        let (start, end) = ccsds.span(0, first, count);
        assert!(start <= end && end <= stream.len() as u64, "a span inside the stream: {start}..{end} of {}", stream.len());
        let again = ccsds.unpack(bits, &stream[start as usize..end as usize], start, first, count).expect("decodes again from its entry");
        let want: Vec<u64> = samples[first as usize..(first + count) as usize].iter().map(|s| u64::from(*s)).collect();
        assert_eq!(again, want, "values {first}..{} decoded from their entry", first + count);
    }
}
