//! Packing records: what is kept reads back the same, and a damaged record is refused, never
//! a panic or a wrong description.

use fieldstore_extract::{Packing, PackingKind};

mod common;
use common::packed_field;

fn packings() -> Vec<Packing> {
    [
        ("regular_ll_sfc_grib1", "grid_simple", 12, true),
        ("regular_ll_sfc_grib2", "grid_simple", 0, false),
        ("reduced_gg_pl_320_grib2", "grid_ccsds", 16, false),
        ("regular_ll_sfc_grib2", "grid_ccsds", 24, true),
        ("regular_ll_sfc_grib2", "grid_complex", 16, false),
    ]
    .into_iter()
    .map(|(sample, packing, bits, bitmap)| Packing::of(&packed_field(sample, packing, bits, if bitmap { 5 } else { 0 })).unwrap())
    .collect()
}

#[test]
fn every_kind_of_packing_reads_back_the_same() {
    let packings = packings();
    let kinds: Vec<&str> = packings
        .iter()
        .map(|p| match p.kind {
            PackingKind::Simple => "simple",
            PackingKind::Constant => "constant",
            PackingKind::Ccsds(_) => "ccsds",
            PackingKind::Decoded(_) => "decoded",
        })
        .collect();
    assert_eq!(kinds, ["simple", "constant", "ccsds", "ccsds", "decoded"]);
    for packing in packings {
        assert_eq!(packing.encoded_len(), packing.encode().len());
        assert_eq!(Packing::decode(&packing.encode()).unwrap(), packing);
    }
}

#[test]
fn a_damaged_record_is_refused_or_still_describes_a_message_it_fits() {
    for packing in packings() {
        let record = packing.encode();
        for end in 0..record.len() {
            let refused = Packing::decode(&record[..end]).unwrap_err();
            assert_eq!(refused.kind(), fieldstore_core::ErrorKind::Corrupt, "{refused}");
        }
        let longer = [record.clone(), vec![0]].concat();
        assert!(Packing::decode(&longer).is_err());
        // Every byte flipped in turn: refused, or a description whose parts fit its message.
        for at in 0..record.len() {
            let mut damaged = record.clone();
            damaged[at] ^= 0x5a;
            if let Ok(read) = Packing::decode(&damaged) {
                assert!(read.data_offset <= read.length && read.bitmap_offset.is_none_or(|b| b <= read.length), "byte {at}");
            }
        }
    }
}

#[test]
fn ccsds_entries_out_of_place_are_refused_and_version_1_ccsds_records_too() {
    let packing = Packing::of(&packed_field("reduced_gg_pl_320_grib2", "grid_ccsds", 16, 0)).unwrap();
    let PackingKind::Ccsds(ccsds) = &packing.kind else { panic!("read natively") };
    assert!(ccsds.entries.len() > 2, "entries inside RSIs");
    let with = |entries: Vec<fieldstore_extract::Entry>| {
        let mut changed = ccsds.clone();
        changed.entries = entries;
        Packing { kind: PackingKind::Ccsds(changed), ..packing.clone() }.encode()
    };
    let (a, b) = (ccsds.entries[0], ccsds.entries[1]);
    let rsi_start = fieldstore_extract::Entry { block: 0, ..a };
    let cases = [
        ("bits out of order", vec![fieldstore_extract::Entry { bit: b.bit, ..a }, fieldstore_extract::Entry { bit: a.bit, ..b }]),
        ("blocks out of order", vec![b, a]),
        ("at an RSI's start", vec![rsi_start, b]),
        ("a predictor wider than the bits", vec![fieldstore_extract::Entry { last: 1 << 16, ..a }]),
    ];
    for (what, entries) in cases {
        let refused = Packing::decode(&with(entries)).unwrap_err();
        assert_eq!(refused.kind(), fieldstore_core::ErrorKind::Corrupt, "{what}: {refused}");
    }
    // A record of version 1 (no entries, its values never checked against ecCodes').
    let mut old = with(Vec::new());
    old[4] = 1;
    old.truncate(old.len() - 8);
    let refused = Packing::decode(&old).unwrap_err();
    assert!(refused.to_string().contains("version 1"), "{refused}");
}

#[test]
fn kept_packings_round_trip_and_any_damage_is_refused() {
    use fieldstore_core::FieldLocation;
    use fieldstore_extract::kept::{decode_kept, encode_kept};
    use std::sync::Arc;
    let packing = Arc::new(Packing::of(&packed_field("regular_ll_sfc_grib2", "grid_simple", 12, 0)).unwrap());
    let entries: Vec<(FieldLocation, Arc<Packing>)> = [(Some(7), 0), (None, 4096)]
        .into_iter()
        .map(|(crc32c, offset)| {
            let location = FieldLocation { uri: "od:0001/an.x.data".into(), offset, length: packing.length, crc32c };
            (location, packing.clone())
        })
        .collect();
    let bytes = encode_kept(&entries);
    let back = decode_kept(&bytes).unwrap();
    assert_eq!(back.len(), 2);
    for ((a, p), (b, q)) in entries.iter().zip(&back) {
        assert_eq!((a, p.encode()), (b, q.encode()));
    }
    for cut in [0, 4, 9, bytes.len() / 2, bytes.len() - 1] {
        assert_eq!(decode_kept(&bytes[..cut]).unwrap_err().kind(), fieldstore_core::ErrorKind::Corrupt, "cut at {cut}");
    }
    for at in [0, 5, 20, bytes.len() - 10] {
        let mut flipped = bytes.clone();
        flipped[at] ^= 0x10;
        assert_eq!(decode_kept(&flipped).unwrap_err().kind(), fieldstore_core::ErrorKind::Corrupt, "flipped at {at}");
    }
}

/// A damaged record of a version 2 side object is refused when it is asked for, its
/// neighbours still read; version 1 side objects (each record after its location, one CRC-32C
/// of the whole) still read, whole.
#[test]
fn kept_records_are_checked_each_when_asked_and_version_1_side_objects_still_read() {
    use fieldstore_core::checksum::crc32c;
    use fieldstore_core::FieldLocation;
    use fieldstore_extract::kept::{decode_kept, encode_kept, records_kept};
    use std::sync::Arc;
    let entries: Vec<(FieldLocation, Arc<Packing>)> = packings()
        .into_iter()
        .enumerate()
        .map(|(i, packing)| {
            let location =
                FieldLocation { uri: "od:0001/an.x.data".into(), offset: 4096 * i as u64, length: packing.length, crc32c: Some(9) };
            (location, Arc::new(packing))
        })
        .collect();
    assert!(entries.len() >= 3);
    let mut bytes = encode_kept(&entries);
    let last = entries.last().unwrap().1.encode();
    let at = bytes.len() - last.len() / 2;
    bytes[at] ^= 0x01;
    let records = records_kept(Arc::new(bytes.clone())).expect("the directory is whole");
    assert_eq!(records.len(), entries.len());
    for ((location, record), (expected, packing)) in records.iter().zip(&entries).take(entries.len() - 1) {
        assert_eq!((location, record.packing().unwrap().encode()), (expected, packing.encode()));
    }
    let damaged = records.last().unwrap().1.packing().unwrap_err();
    assert_eq!(damaged.kind(), fieldstore_core::ErrorKind::Corrupt, "{damaged}");
    assert!(decode_kept(&bytes).is_err(), "read whole, a damaged record fails it");

    let mut version_1 = b"FSPI\x01".to_vec();
    version_1.extend(u32::try_from(entries.len()).unwrap().to_be_bytes());
    for (location, packing) in &entries {
        version_1.extend(u16::try_from(location.uri.len()).unwrap().to_be_bytes());
        version_1.extend(location.uri.as_bytes());
        version_1.extend(location.offset.to_be_bytes());
        version_1.extend(location.length.to_be_bytes());
        version_1.push(1);
        version_1.extend(location.crc32c.unwrap().to_be_bytes());
        let record = packing.encode();
        version_1.extend(u32::try_from(record.len()).unwrap().to_be_bytes());
        version_1.extend(record);
    }
    version_1.extend(crc32c(&version_1).to_be_bytes());
    let back = decode_kept(&version_1).unwrap();
    assert!(back.iter().zip(&entries).all(|((a, p), (b, q))| a == b && p.encode() == q.encode()), "version 1 reads back");
    let flipped_at = version_1.len() - 10;
    version_1[flipped_at] ^= 0x01;
    assert!(records_kept(Arc::new(version_1)).is_err(), "a damaged version 1 side object is refused whole");
}

#[test]
fn kept_parts_hold_at_most_their_bytes_of_entries_and_keep_every_one_in_order() {
    use fieldstore_core::FieldLocation;
    use fieldstore_extract::kept::{encode_kept, kept_parts};
    use std::sync::Arc;
    let entries: Vec<(FieldLocation, Arc<Packing>)> = packings()
        .into_iter()
        .cycle()
        .take(40)
        .enumerate()
        .map(|(i, packing)| {
            let location = FieldLocation { uri: format!("od:0001/an.{i}.data").into(), offset: 0, length: packing.length, crc32c: Some(1) };
            (location, Arc::new(packing))
        })
        .collect();
    for bytes in [1, 500, 2_000, 1 << 20] {
        let parts = kept_parts(&entries, bytes);
        assert_eq!(parts.concat().len(), entries.len(), "every entry, once");
        assert!(parts.iter().flat_map(|p| p.iter()).zip(&entries).all(|(a, b)| a.0 == b.0), "in order");
        for part in &parts {
            // A side object: 9 bytes before its entries, a CRC-32C after them.
            let entries_bytes = encode_kept(part).len() - 13;
            assert!(part.len() == 1 || entries_bytes <= bytes, "{entries_bytes} bytes of entries in a part of {bytes}");
        }
    }
}
