//! Decoding fields into numbers, through ecCodes: a message's values into a caller's buffer
//! (missing points as NaN), and its grid's geometry. The array interfaces of the Python package
//! (docs/arrays-design.md) decode many fields at once, each on a thread of its own.

use std::mem::MaybeUninit;

use fieldstore_core::error::{Error, Result};

use crate::simple::{unpack_bits, Scale};
use crate::Handle;

/// A field's grid, as the array interfaces need it: its shape and coordinates.
#[derive(Clone, Debug, PartialEq)]
pub struct Geometry {
    /// ecCodes' `gridType` (`regular_ll`, `reduced_gg`, `regular_gg`, `sh`, ...).
    pub grid_type: String,
    /// How many values a field of this grid has.
    pub points: usize,
    /// ecCodes' `md5GridSection`: fields with the same one share their geometry.
    pub identity: String,
    /// For grids of rows and columns (`regular_ll`, `regular_gg`): the latitudes of the rows and
    /// the longitudes of the columns, in the order of the values; otherwise empty.
    pub latitudes: Vec<f64>,
    /// See `latitudes`.
    pub longitudes: Vec<f64>,
}

/// Grid types whose values form rows of one latitude and columns of one longitude.
const REGULAR: &[&str] = &["regular_ll", "regular_gg"];

fn handle(message: &[u8]) -> Result<Handle<'_>> {
    Handle::from_message(message).ok_or_else(|| Error::Grib { context: "field".into(), message: "ecCodes cannot decode it".into() })
}

/// The numbers values decode into: ecCodes' doubles, or floats rounded from them (as
/// `numpy.astype` rounds).
pub trait Sample: Copy + Send + Sync + 'static {
    /// `value` as this type.
    fn from_f64(value: f64) -> Self;
}

impl Sample for f64 {
    fn from_f64(value: f64) -> Self {
        value
    }
}

impl Sample for f32 {
    fn from_f64(value: f64) -> Self {
        value as f32
    }
}

/// Decodes `message`'s values into `out`, which must hold exactly as many; points the bitmap
/// marks missing are NaN. GRIB 2 simple packing without a bitmap, the common case, is read from
/// the message's own sections and unpacked here ([`SimplePacking`], identical to ecCodes, without
/// the cost of an ecCodes handle); every other packing by ecCodes.
pub fn decode_values<T: Sample>(message: &[u8], out: &mut [T]) -> Result<()> {
    // SAFETY: `MaybeUninit<T>` has `T`'s layout, and only `T`s are written through it.
    let out = unsafe { &mut *(std::ptr::from_mut(out) as *mut [MaybeUninit<T>]) };
    decode_values_uninit(message, out)
}

/// [`decode_values`] into memory not yet written (a new Python object's buffer, which
/// zero-filling first would cost a pass as long as the decode): when it returns `Ok`, every
/// element of `out` holds a value.
pub fn decode_values_uninit<T: Sample>(message: &[u8], out: &mut [MaybeUninit<T>]) -> Result<()> {
    if let Some((simple, count)) = SimplePacking::of(message) {
        check_count(count, out.len())?;
        return simple.unpack(message, out);
    }
    let h = handle(message)?;
    check_count(h.get_size("values")?, out.len())?;
    let missing = (h.get_long("bitmapPresent").unwrap_or(0) != 0).then(|| h.get_double("missingValue")).transpose()?;
    let mut doubles = vec![0.0; out.len()];
    h.get_double_array("values", &mut doubles)?;
    // ecCodes gives missing points its `missingValue`; a packed value equal to it cannot be
    // told apart (cfgrib reads them the same way).
    for (o, v) in out.iter_mut().zip(doubles) {
        o.write(T::from_f64(if Some(v) == missing { f64::NAN } else { v }));
    }
    Ok(())
}

fn check_count(count: usize, expected: usize) -> Result<()> {
    if count != expected {
        return Err(Error::Grib { context: "field".into(), message: format!("{count} values, where {expected} were expected") });
    }
    Ok(())
}

/// The parameters of a GRIB 2 field in simple packing without a bitmap.
struct SimplePacking {
    reference: f64,
    binary_scale: i64,
    decimal_scale: i64,
    bits: u32,
    /// Where the packed values start in the message.
    offset: usize,
    /// Where section 7, which holds them, ends.
    end: usize,
}

impl SimplePacking {
    /// The parameters and value count of a GRIB 2 message holding one field in simple packing
    /// (data representation template 5.0) without a bitmap, read from its sections (WMO's
    /// GRIB 2 layout: section 5 holds R as an IEEE float, E and D as sign-and-magnitude
    /// integers, the bits per value; section 6 the bitmap indicator, 255 for none; section 7
    /// the packed values); `None` for anything else, which ecCodes decodes.
    fn of(message: &[u8]) -> Option<(SimplePacking, usize)> {
        if message.get(..4)? != b"GRIB" || *message.get(7)? != 2 {
            return None;
        }
        let (mut section5, mut bitmap, mut data, mut points) = (None, None, None, None);
        let mut at = 16usize;
        while message.get(at..at + 4)? != b"7777" {
            let length = usize::try_from(u32::from_be_bytes(message.get(at..at + 4)?.try_into().ok()?)).ok()?;
            let section = message.get(at..at.checked_add(length)?)?;
            match *section.get(4)? {
                // Several fields in one message: ecCodes' `values` is the first one's; left to it.
                3 if points.is_some() => return None,
                3 => points = Some(u32::from_be_bytes(section.get(6..10)?.try_into().ok()?)),
                5 if section5.is_some() => return None,
                5 => section5 = Some(section),
                6 => bitmap = Some(*section.get(5)?),
                7 => data = Some((at + 5, at + length)),
                _ => {}
            }
            at = at.checked_add(length.max(5))?;
        }
        let (section5, (offset, end)) = (section5?, data?);
        let values = u32::from_be_bytes(section5.get(5..9)?.try_into().ok()?);
        let template = u16::from_be_bytes(section5.get(9..11)?.try_into().ok()?);
        if template != 0 || bitmap? != 255 || Some(values) != points {
            return None;
        }
        let signed = |b: &[u8]| {
            let raw = i64::from(u16::from_be_bytes([b[0], b[1]]));
            if raw & 0x8000 != 0 {
                -(raw & 0x7fff)
            } else {
                raw
            }
        };
        let simple = SimplePacking {
            reference: f64::from(f32::from_be_bytes(section5.get(11..15)?.try_into().ok()?)),
            binary_scale: signed(section5.get(15..17)?),
            decimal_scale: signed(section5.get(17..19)?),
            bits: u32::from(*section5.get(19)?),
            offset,
            end,
        };
        (simple.bits <= 32).then_some((simple, usize::try_from(values).ok()?))
    }

    /// Fills `out`: ecCodes' `((X * 2^E) + R) * 10^-D` in doubles, its powers made as it makes
    /// them (repeated products), so every value is bit for bit ecCodes' own.
    fn unpack<T: Sample>(&self, message: &[u8], out: &mut [MaybeUninit<T>]) -> Result<()> {
        if self.bits == 0 {
            out.iter_mut().for_each(|o| {
                o.write(T::from_f64(self.reference));
            });
            return Ok(());
        }
        let packed_bytes = (out.len() as u64 * u64::from(self.bits)).div_ceil(8);
        // Within section 7, as ecCodes checks: never the bytes of the sections after it.
        let data = usize::try_from(packed_bytes)
            .ok()
            .and_then(|n| self.offset.checked_add(n))
            .filter(|end| *end <= self.end)
            .and_then(|end| message.get(self.offset..end));
        let Some(data) = data else {
            return Err(Error::Grib {
                context: "field".into(),
                message: format!("its data section is shorter than {} values of {} bits", out.len(), self.bits),
            });
        };
        let scale = Scale::new(self.reference, self.binary_scale, self.decimal_scale);
        unpack_bits(data, 0, self.bits, out, |x| T::from_f64(scale.value(x)));
        Ok(())
    }
}

/// The grid `message` is on.
pub fn geometry(message: &[u8]) -> Result<Geometry> {
    let h = handle(message)?;
    let grid_type = h.get_string("gridType")?;
    let points = h.get_size("values")?;
    let identity = h.get_string("md5GridSection")?;
    let (mut latitudes, mut longitudes) = (Vec::new(), Vec::new());
    if REGULAR.contains(&grid_type.as_str()) {
        // Rows of longitudes, unless `jPointsAreConsecutive`: then values run down columns.
        if h.get_long("jPointsAreConsecutive").unwrap_or(0) != 0 {
            return Err(Error::Grib {
                context: "grid".into(),
                message: "values in columns (jPointsAreConsecutive) are not supported".into(),
            });
        }
        let columns = usize::try_from(h.get_long("Ni")?).ok().filter(|n| *n > 0 && points > 0 && points % n == 0).ok_or_else(|| {
            Error::Grib { context: "grid".into(), message: format!("Ni does not divide the field's {points} values into rows") }
        })?;
        // Taken from every point's coordinates, so the order is the values' whatever the
        // scanning mode.
        let (all_latitudes, all_longitudes) = point_coordinates(&h)?;
        latitudes = all_latitudes.iter().step_by(columns).copied().collect();
        longitudes = all_longitudes[..columns].to_vec();
    }
    Ok(Geometry { grid_type, points, identity, latitudes, longitudes })
}

/// Every point's latitude and longitude, in the order of the values (any grid ecCodes can
/// iterate).
pub fn coordinates(message: &[u8]) -> Result<(Vec<f64>, Vec<f64>)> {
    point_coordinates(&handle(message)?)
}

fn point_coordinates(h: &Handle<'_>) -> Result<(Vec<f64>, Vec<f64>)> {
    let points = h.get_size("values")?;
    let (mut latitudes, mut longitudes) = (vec![0.0; points], vec![0.0; points]);
    h.get_double_array("latitudes", &mut latitudes)?;
    h.get_double_array("longitudes", &mut longitudes)?;
    Ok((latitudes, longitudes))
}

/// How many values `message` decodes to (ecCodes' size of `values`).
pub fn value_count(message: &[u8]) -> Result<usize> {
    handle(message)?.get_size("values")
}

/// The keys `message` codes and their values as text (those ecCodes gives as one text),
/// each once, computed ones left out: what a comparison of two messages' headers compares.
/// The data values (`values` and the other arrays) are not among them.
pub fn coded_key_values(message: &[u8]) -> Result<Vec<(String, String)>> {
    let h = handle(message)?;
    let values = h.coded_keys().into_iter().filter_map(|k| h.get_string(&k).ok().map(|v| (k, v))).collect();
    // Array keys refuse a text value: not header keys, not errors to report later.
    crate::take_errors();
    Ok(values)
}

/// The text values of `keys` in `message`, `None` for those it has not.
pub fn text_keys(message: &[u8], keys: &[String]) -> Result<Vec<Option<String>>> {
    let h = handle(message)?;
    // A name ecCodes cannot take is the caller's error, not a key the message lacks.
    for key in keys {
        crate::handle::c_key(key)?;
    }
    let values = keys.iter().map(|k| h.get_string(k).ok()).collect();
    // Keys it has not are answers here, not errors to report later.
    crate::take_errors();
    Ok(values)
}

#[cfg(test)]
mod tests {
    use super::*;
    use fieldstore_core::error::ErrorKind;

    /// `message`'s values through ecCodes alone: what [`decode_values`] is checked against.
    fn decode_values_with_ecodes(message: &[u8], out: &mut [f64]) -> Result<()> {
        handle(message)?.get_double_array("values", out)
    }

    #[test]
    fn key_names_outside_ecodes_alphabet_are_refused_by_name() {
        let message = crate::sample_message("regular_ll_sfc_grib2", &[]).unwrap();
        let got = text_keys(&message, &["shortName".into(), "noSuchKey".into()]).unwrap();
        assert_eq!(got, [Some("t".to_string()), None]);
        for bad in ["é", "shortNamé", "a\0b", ""] {
            let err = text_keys(&message, &["shortName".into(), bad.into()]).unwrap_err();
            assert_eq!(err.kind(), ErrorKind::BadRequest, "{err}");
            assert!(err.to_string().contains(&format!("{bad:?}")), "{err}");
        }
    }

    #[test]
    fn values_and_a_regular_grid_decode_as_ecodes_has_them() {
        let message = crate::sample_message("regular_ll_sfc_grib2", &[]).unwrap();
        let g = geometry(&message).unwrap();
        assert_eq!(g.grid_type, "regular_ll");
        assert_eq!(g.latitudes.len() * g.longitudes.len(), g.points);
        // North to south, west to east, as the sample scans.
        assert_eq!((g.latitudes.len(), g.longitudes.len()), (31, 16));
        assert!(g.latitudes[0] == 60.0 && g.latitudes[30] == 0.0 && g.longitudes[0] < g.longitudes[1], "{g:?}");
        let mut values = vec![0.0f64; value_count(&message).unwrap()];
        decode_values(&message, &mut values).unwrap();
        let (lats, lons) = coordinates(&message).unwrap();
        assert_eq!((lats[0], lons[1]), (g.latitudes[0], g.longitudes[1]));
        let mut short = vec![0.0f64; values.len() - 1];
        assert!(decode_values(&message, &mut short).is_err(), "a buffer of the wrong size is refused");
    }

    #[test]
    fn simple_packing_unpacked_here_is_ecodes_bit_for_bit() {
        let sample = crate::sample_message("regular_ll_pl_grib2", &[]).unwrap();
        for bits in [1, 2, 3, 5, 7, 8, 9, 12, 13, 16, 17, 20, 24, 25, 31, 32] {
            let message = crate::fill_values(&sample, bits).unwrap();
            assert!(SimplePacking::of(&message).is_some(), "{bits} bits: unpacked here");
            let n = value_count(&message).unwrap();
            let (mut ours, mut theirs) = (vec![0.0f64; n], vec![0.0; n]);
            decode_values(&message, &mut ours).unwrap();
            decode_values_with_ecodes(&message, &mut theirs).unwrap();
            let same = ours.iter().zip(&theirs).all(|(a, b)| a.to_bits() == b.to_bits());
            assert!(same, "{bits} bits: {:?} against ecCodes' {:?}", &ours[..4], &theirs[..4]);
            let mut floats = vec![0.0f32; n];
            decode_values(&message, &mut floats).unwrap();
            assert!(
                floats.iter().zip(&theirs).all(|(a, b)| a.to_bits() == (*b as f32).to_bits()),
                "{bits} bits: floats are ecCodes' doubles rounded"
            );
        }
        // A constant field (no bits): the reference value everywhere, as ecCodes gives it.
        let constant = crate::sample_message("regular_ll_pl_grib2", &[]).unwrap();
        let n = value_count(&constant).unwrap();
        let (mut ours, mut theirs) = (vec![1.0f64; n], vec![0.0; n]);
        decode_values(&constant, &mut ours).unwrap();
        decode_values_with_ecodes(&constant, &mut theirs).unwrap();
        assert_eq!(ours, theirs);
        // A data section cut short is an error, not a read past the message.
        let message = crate::fill_values(&sample, 16).unwrap();
        let mut out = vec![0.0f64; n];
        let err = decode_values(&message[..message.len() - 100], &mut out);
        assert!(err.is_err());
    }

    #[test]
    fn a_reduced_grid_has_no_rows_and_columns() {
        let message = crate::sample_message("reduced_gg_pl_32_grib2", &[]).unwrap();
        let g = geometry(&message).unwrap();
        assert_eq!(g.grid_type, "reduced_gg");
        assert!(g.latitudes.is_empty() && g.points > 0);
        assert_eq!(coordinates(&message).unwrap().0.len(), g.points);
    }
}
