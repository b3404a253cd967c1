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
