//! Simple packing's arithmetic, bit for bit as ecCodes does it: packed integers read from a
//! bit stream, and turned into values with the field's reference value and scale factors. The
//! whole-field decoder ([`crate::decode`]) and the extraction of a few points
//! (`fieldstore-extract`) share it, so that both give ecCodes' own values.

use std::mem::MaybeUninit;

/// A field's `((X * 2^E) + R) * 10^-D`, its powers made as ecCodes makes them.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Scale {
    reference: f64,
    binary: f64,
    decimal: f64,
}

impl Scale {
    /// The scale of a field of reference value `reference` (R), binary scale factor
    /// `binary_scale` (E) and decimal scale factor `decimal_scale` (D).
    pub fn new(reference: f64, binary_scale: i64, decimal_scale: i64) -> Self {
        Scale { reference, binary: power(binary_scale, 2.0), decimal: power(-decimal_scale, 10.0) }
    }

    /// The value of packed integer `x`.
    pub fn value(&self, x: u64) -> f64 {
        ((x as f64 * self.binary) + self.reference) * self.decimal
    }
}

/// `base` to the power `exponent` as ecCodes computes it: by repeated multiplication or
/// division (a `powi` would round differently).
fn power(exponent: i64, base: f64) -> f64 {
    match exponent {
        0 => 1.0,
        1 => base,
        e if e < 0 => (0..-e).fold(1.0, |acc, _| acc / base),
        e => (0..e).fold(1.0, |acc, _| acc * base),
    }
}

/// Unpacks `out.len()` big-endian unsigned integers of `bits` bits (1 to 32) from `data`,
/// starting `skip` bits (0 to 7) into its first byte, and writes `value(x)` of each into every
/// element of `out` (zeros past the end of `data`).
pub fn unpack_bits<T>(data: &[u8], skip: u32, bits: u32, out: &mut [MaybeUninit<T>], value: impl Fn(u64) -> T) {
    debug_assert!((1..=32).contains(&bits) && skip < 8);
    let mask = (1u64 << bits) - 1;
    let whole_bytes = skip == 0 && bits.is_multiple_of(8) && data.len() >= out.len() * (bits as usize / 8);
    match bits {
        8 if whole_bytes => out.iter_mut().zip(data).for_each(|(o, b)| {
            o.write(value(u64::from(*b)));
        }),
        16 if whole_bytes => out.iter_mut().zip(data.chunks_exact(2)).for_each(|(o, b)| {
            o.write(value(u64::from(u16::from_be_bytes([b[0], b[1]]))));
        }),
        _ => {
            // A window of up to 64 bits, refilled a byte at a time; the first byte's skipped
            // bits lie above the ones taken, which the mask leaves out.
            let (mut window, mut held, mut next) = (0u64, 0u32, 0usize);
            if skip > 0 {
                window = u64::from(data.first().copied().unwrap_or(0));
                (held, next) = (8 - skip, 1);
            }
            for o in out.iter_mut() {
                while held < bits {
                    window = (window << 8) | u64::from(data.get(next).copied().unwrap_or(0));
                    next += 1;
                    held += 8;
                }
                held -= bits;
                o.write(value((window >> held) & mask));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Packs `values` of `bits` bits after `skip` zero bits, big-endian.
    fn pack(values: &[u64], bits: u32, skip: u32) -> Vec<u8> {
        let mut stream: Vec<bool> = vec![false; skip as usize];
        for v in values {
            stream.extend((0..bits).rev().map(|b| (v >> b) & 1 == 1));
        }
        stream.chunks(8).map(|c| c.iter().enumerate().fold(0u8, |byte, (i, bit)| byte | (u8::from(*bit) << (7 - i)))).collect()
    }

    #[test]
    fn integers_come_back_from_any_bit_offset_and_width() {
        for bits in [1, 3, 8, 12, 16, 17, 24, 31, 32] {
            let values: Vec<u64> = (0..37u64).map(|i| (i * 2_654_435_761) & ((1u64 << bits) - 1)).collect();
            for skip in 0..8 {
                let data = pack(&values, bits, skip);
                let mut out = vec![MaybeUninit::<u64>::uninit(); values.len()];
                unpack_bits(&data, skip, bits, &mut out, |x| x);
                // SAFETY: unpack_bits writes every element of `out`.
                let got: Vec<u64> = out.iter().map(|o| unsafe { o.assume_init() }).collect();
                assert_eq!(got, values, "{bits} bits after {skip}");
            }
        }
    }

    #[test]
    fn powers_are_made_as_ecodes_makes_them() {
        assert_eq!(power(0, 10.0), 1.0);
        assert_eq!(power(3, 2.0), 8.0);
        assert_eq!(power(-2, 10.0).to_bits(), (1.0f64 / 10.0 / 10.0).to_bits());
        let scale = Scale::new(250.5, -3, 2);
        assert_eq!(scale.value(8).to_bits(), (((8.0f64 * (1.0 / 2.0 / 2.0 / 2.0)) + 250.5) * (1.0 / 10.0 / 10.0)).to_bits());
    }
}
