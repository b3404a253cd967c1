//! Every extracted value against ecCodes' own decoding of the whole field: GRIB 1 and 2,
//! regular and reduced grids, widths from constant to 24 bits, with and without a bitmap,
//! ranges at the edges and at random; and only the bytes needed read.

use fieldstore_extract::{extract, Packing, PackingKind, Range};
use fieldstore_grib::Handle;

mod common;
use common::{packed_field, MISSING};

/// A field of `sample` packed at `bits` bits per value, every `missing_every`-th point missing
/// (none with 0), its values varying smoothly, as ecCodes encodes it.
fn field(sample: &str, bits: i64, missing_every: usize) -> Vec<u8> {
    packed_field(sample, "grid_simple", bits, missing_every)
}

/// ecCodes' values of the whole message (missing points as NaN).
fn ecodes_values(message: &[u8]) -> Vec<f64> {
    let h = Handle::from_message(message).unwrap();
    let mut values = vec![0.0; h.get_size("values").unwrap()];
    h.get_double_array("values", &mut values).unwrap();
    let bitmap = h.get_long("bitmapPresent").unwrap_or(0) != 0;
    values.into_iter().map(|v| if bitmap && v == MISSING { f64::NAN } else { v }).collect()
}

/// Ranges at the edges, single points, and pseudo-random ones.
fn ranges(points: u64) -> Vec<Range> {
    let mut ranges =
        vec![Range::new(0, 1), Range::new(points - 1, points), Range::new(0, points.min(70)), Range::new(points / 2, points / 2 + 1)];
    let mut x = 12345u64;
    for _ in 0..20 {
        x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        let start = (x >> 33) % points;
        let len = 1 + (x >> 17) % 40;
        ranges.push(Range::new(start, (start + len).min(points)));
    }
    ranges
}

fn check(sample: &str, bits: i64, missing_every: usize) -> (Packing, u64) {
    check_packed(sample, "grid_simple", bits, missing_every)
}

/// Extracts ranges of a field of `sample` in `packing_type` and checks every value against
/// ecCodes'; the packing and the bytes read.
fn check_packed(sample: &str, packing_type: &str, bits: i64, missing_every: usize) -> (Packing, u64) {
    let message = packed_field(sample, packing_type, bits, missing_every);
    let packing = Packing::of(&message).unwrap();
    let expected = ecodes_values(&message);
    assert_eq!(expected.len() as u64, packing.points, "{sample}");
    let ranges = ranges(packing.points);
    let mut source = |offset: u64, length: usize| Ok(message[offset as usize..offset as usize + length].to_vec());
    let got = extract(&packing, &ranges, &mut source).unwrap();
    for (i, range) in ranges.iter().enumerate() {
        for (j, point) in (range.start..range.end).enumerate() {
            let (want, value) = (expected[point as usize], got.values[i][j]);
            let context = format!("{sample} {packing_type}, {bits} bits, missing every {missing_every}: point {point}");
            assert_eq!(got.masks[i][j], !want.is_nan(), "{context}: mask");
            assert!(want.to_bits() == value.to_bits() || (want.is_nan() && value.is_nan()), "{context}: {value} against ecCodes' {want}");
        }
    }
    (packing, got.bytes_read)
}

#[test]
fn simple_packing_is_read_as_ecodes_reads_it() {
    for sample in ["regular_ll_sfc_grib1", "regular_ll_sfc_grib2", "reduced_gg_pl_32_grib1", "reduced_gg_pl_32_grib2"] {
        for bits in [1, 7, 12, 16, 24] {
            for missing_every in [0, 7] {
                let (packing, _) = check(sample, bits, missing_every);
                assert_eq!(packing.kind, PackingKind::Simple, "{sample}");
                assert_eq!(packing.bitmap_offset.is_some(), missing_every > 0, "{sample}");
            }
        }
    }
}

#[test]
fn constant_fields_need_no_values_read() {
    for sample in ["regular_ll_sfc_grib1", "regular_ll_sfc_grib2"] {
        let (packing, bytes) = check(sample, 0, 0);
        assert_eq!((packing.kind, bytes), (PackingKind::Constant, 0), "{sample}");
    }
}

#[test]
fn a_few_points_read_a_few_bytes() {
    let message = field("reduced_gg_pl_320_grib2", 16, 0);
    let packing = Packing::of(&message).unwrap();
    let mut source = |offset: u64, length: usize| Ok(message[offset as usize..offset as usize + length].to_vec());
    let points = [Range::new(10, 11), Range::new(200_000, 200_002), Range::new(packing.points - 1, packing.points)];
    let got = extract(&packing, &points, &mut source).unwrap();
    assert!(got.bytes_read <= 3 * 4, "{} bytes read for 4 values", got.bytes_read);
    let expected = ecodes_values(&message);
    assert_eq!(got.values[1], expected[200_000..200_002]);
}

#[test]
fn ccsds_is_read_as_ecodes_reads_it_from_the_rsis_holding_the_points() {
    for sample in ["regular_ll_sfc_grib2", "reduced_gg_pl_32_grib2", "reduced_gg_pl_320_grib2"] {
        for bits in [8, 12, 16, 24] {
            for missing_every in [0, 7] {
                let (packing, _) = check_packed(sample, "grid_ccsds", bits, missing_every);
                assert!(matches!(packing.kind, PackingKind::Ccsds(_)), "{sample}, {bits} bits: read natively");
            }
        }
    }
}

/// A CCSDS field of `sample` holding `values` at `bits` bits per value, coded in blocks of
/// `block` values and RSIs of `rsi` blocks with libaec's `flags`, as ecCodes encodes it.
fn ccsds_field(sample: &str, values: &[f64], bits: i64, block: i64, rsi: i64, flags: i64) -> Vec<u8> {
    let mut h = Handle::from_message_copy(&fieldstore_grib::sample_message(sample, &[]).unwrap()).unwrap();
    h.set_long("bitsPerValue", bits).unwrap();
    h.set_string("packingType", "grid_ccsds").unwrap();
    for (key, value) in [("ccsdsBlockSize", block), ("ccsdsRsi", rsi), ("ccsdsFlags", flags)] {
        h.set_long(key, value).unwrap();
    }
    h.set_double_array("values", values).unwrap();
    h.message().unwrap()
}

/// Values whose CCSDS coding takes every option: smooth stretches (split-sample blocks),
/// constant ones (runs of zero blocks, to the end of segments too), tiny steps (Second
/// Extension blocks, at RSIs' starts too) and noise (raw blocks).
fn every_coding_option(points: usize) -> Vec<f64> {
    let mut x = 7u64;
    (0..points)
        .map(|i| {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            let noise = (x >> 40) as f64 / (1u64 << 24) as f64;
            match (i / 700) % 4 {
                0 => 250.0 + 30.0 * (i as f64 * 0.01).sin(),
                1 => 260.0,
                2 => 260.0 + if x >> 62 == 0 { 0.05 } else { 0.0 },
                _ => 200.0 + 100.0 * noise,
            }
        })
        .collect()
}

#[test]
fn ccsds_codings_of_every_kind_give_every_point_as_ecodes_decodes_it() {
    let sample = "reduced_gg_pl_32_grib2";
    let points = Handle::from_message(&fieldstore_grib::sample_message(sample, &[]).unwrap()).unwrap().get_size("values").unwrap();
    let values = every_coding_option(points);
    // Preprocessed (14) or not (6); 32: RSIs padded to bytes; 16: the restricted options
    // (of samples of up to 4 bits; refused for 5 to 8).
    let codings = [(8, 4, 14), (8, 64, 6), (16, 32, 14), (32, 128, 14), (32, 128, 30), (32, 128, 46), (64, 4096, 14), (64, 7, 6)];
    for (block, rsi, flags) in codings {
        for bits in [3, 8, 12, 16, 20, 24, 32] {
            if flags & 16 != 0 && (5..=8).contains(&bits) {
                continue;
            }
            let message = ccsds_field(sample, &values, bits, block, rsi, flags);
            let packing = Packing::of(&message).unwrap();
            let context = format!("blocks of {block}, RSIs of {rsi}, flags {flags}, {bits} bits");
            // ecCodes 2.x codes RSIs padded to bytes but does not read them back as coded:
            // whatever it decodes is the answer, natively or not.
            if flags & 32 == 0 {
                assert!(matches!(packing.kind, PackingKind::Ccsds(_)), "{context}: read natively");
            }
            let expected = ecodes_values(&message);
            let every_point: Vec<Range> = (0..points as u64).map(|p| Range::new(p, p + 1)).collect();
            let mut source = |offset: u64, length: usize| Ok(message[offset as usize..offset as usize + length].to_vec());
            let got = extract(&packing, &every_point, &mut source).unwrap();
            let whole = extract(&packing, &[Range::new(0, points as u64)], &mut source).unwrap();
            for (point, want) in expected.iter().enumerate() {
                let want = want.to_bits();
                assert_eq!(got.values[point][0].to_bits(), want, "{context}: point {point}");
                assert_eq!(whole.values[0][point].to_bits(), want, "{context}: point {point} of all");
            }
        }
    }
}

#[test]
fn a_few_points_of_a_ccsds_field_read_only_their_rsis() {
    let message = packed_field("reduced_gg_pl_320_grib2", "grid_ccsds", 16, 0);
    let packing = Packing::of(&message).unwrap();
    let PackingKind::Ccsds(ccsds) = &packing.kind else { panic!("read natively") };
    let largest_rsi = ccsds.offsets.windows(2).map(|w| (w[1] - w[0]).div_ceil(8)).max().unwrap();
    let mut source = |offset: u64, length: usize| Ok(message[offset as usize..offset as usize + length].to_vec());
    let points = [Range::new(10, 11), Range::new(200_000, 200_002), Range::new(packing.points - 1, packing.points)];
    let got = extract(&packing, &points, &mut source).unwrap();
    assert!(got.bytes_read <= 3 * (largest_rsi + 10), "{} bytes read, RSIs of at most {largest_rsi}", got.bytes_read);
    assert!(got.bytes_read < ccsds.length / 20, "{} of {} bytes", got.bytes_read, ccsds.length);
    assert_eq!(got.values[1], ecodes_values(&message)[200_000..200_002]);
}

#[test]
fn other_packings_are_decoded_whole_by_ecodes() {
    let message = packed_field("regular_ll_sfc_grib2", "grid_complex", 16, 0);
    let packing = Packing::of(&message).unwrap();
    assert_eq!(packing.kind, PackingKind::Decoded("grid_complex".into()));
    let mut source = |offset: u64, length: usize| Ok(message[offset as usize..offset as usize + length].to_vec());
    let got = extract(&packing, &[Range::new(5, 9)], &mut source).unwrap();
    assert!(got.decoded_whole && got.bytes_read == message.len() as u64);
    assert_eq!(got.values[0], ecodes_values(&message)[5..9]);
}

/// A bitmap defined elsewhere (GRIB 1's predefined ones; GRIB 2's indicator 254, a previous
/// message's) is not in the field's bytes: ecCodes decodes such a field, and an extraction
/// gives each point as it decodes it. Where ecCodes decodes fewer values than the grid has
/// points (254 in a message of one field: no bitmap to place them), the extraction is refused
/// as corrupt, never points misplaced.
#[test]
fn fields_whose_bitmap_is_defined_elsewhere_are_decoded_by_ecodes() {
    let elsewhere = |sample: &str, key: &str, value: i64| {
        let mut handle = Handle::from_message_copy(&packed_field(sample, "grid_simple", 16, 7)).unwrap();
        handle.set_long(key, value).unwrap();
        let message = handle.message().unwrap();
        let packing = Packing::of(&message).unwrap();
        assert!(matches!(&packing.kind, PackingKind::Decoded(why) if why.contains("defined elsewhere")), "{sample}: {:?}", packing.kind);
        let mut source = |offset: u64, length: usize| Ok(message[offset as usize..offset as usize + length].to_vec());
        (extract(&packing, &[Range::new(0, 10)], &mut source), ecodes_values(&message), packing.points)
    };
    let (got, expected, _) = elsewhere("regular_ll_sfc_grib1", "tableReference", 5);
    let got = got.unwrap();
    assert!(got.decoded_whole);
    assert!(got.values[0].iter().zip(&expected[..10]).all(|(v, w)| v.to_bits() == w.to_bits() || (v.is_nan() && w.is_nan())));
    assert!(got.values[0].iter().any(|v| v.is_nan()), "the predefined bitmap's missing points");
    let (got, expected, points) = elsewhere("regular_ll_sfc_grib2", "bitMapIndicator", 254);
    assert!((expected.len() as u64) < points, "ecCodes decodes only the coded values");
    let refused = got.unwrap_err();
    assert_eq!(refused.kind(), fieldstore_core::ErrorKind::Corrupt, "{refused}");
}

#[test]
fn ranges_out_of_the_field_are_refused_naming_them() {
    let message = field("regular_ll_sfc_grib2", 16, 0);
    let packing = Packing::of(&message).unwrap();
    let mut source = |_: u64, _: usize| -> fieldstore_core::Result<Vec<u8>> { panic!("nothing is read for a bad range") };
    for (range, words) in [(Range::new(5, 5), "start < end"), (Range::new(0, packing.points + 1), "beyond")] {
        let refused = extract(&packing, &[range], &mut source).unwrap_err();
        assert!(refused.to_string().contains(words), "{refused}");
        assert_eq!(refused.kind(), fieldstore_core::ErrorKind::BadRequest);
    }
}
