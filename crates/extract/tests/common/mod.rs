//! Test fields made through ecCodes, shared by the extraction tests.

use fieldstore_grib::Handle;

/// The value ecCodes gives a missing point.
pub const MISSING: f64 = 9999.0;

/// A field of `sample` in packing `packing_type` at `bits` bits per value, every
/// `missing_every`-th point missing (none with 0), its values varying smoothly, as ecCodes
/// encodes it.
pub fn packed_field(sample: &str, packing_type: &str, bits: i64, missing_every: usize) -> Vec<u8> {
    let mut h = Handle::from_message_copy(&fieldstore_grib::sample_message(sample, &[]).unwrap()).unwrap();
    let n = h.get_long("numberOfDataPoints").unwrap() as usize;
    let values: Vec<f64> = (0..n)
        .map(|i| {
            if missing_every > 0 && i % missing_every == 3 {
                MISSING
            } else {
                250.0 + 30.0 * (i as f64 * 0.01).sin() + (i % 13) as f64 * 0.37
            }
        })
        .collect();
    if missing_every > 0 {
        h.set_long("bitmapPresent", 1).unwrap();
    }
    if bits > 0 {
        h.set_long("bitsPerValue", bits).unwrap();
        h.set_double_array("values", &values).unwrap();
    }
    h.set_string("packingType", packing_type).unwrap();
    h.message().unwrap()
}
