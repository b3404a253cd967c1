//! Decoding fields into numbers, through ecCodes: a message's values into a caller's buffer
//! (missing points as NaN), and its grid's geometry. The array interfaces of the Python package
//! (docs/arrays-design.md) decode many fields at once, each on a thread of its own.

use fieldstore_core::error::{Error, Result};

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

/// How many values `message` decodes to.
pub fn value_count(message: &[u8]) -> Result<usize> {
    handle(message)?.get_size("values")
}

/// Decodes `message`'s values into `out`, which must hold exactly as many; points the bitmap
/// marks missing are NaN.
pub fn decode_values(message: &[u8], out: &mut [f64]) -> Result<()> {
    let h = handle(message)?;
    h.get_double_array("values", out)?;
    if h.get_long("bitmapPresent").unwrap_or(0) != 0 {
        // ecCodes gives missing points its `missingValue`; a packed value equal to it cannot be
        // told apart (cfgrib reads them the same way).
        let missing = h.get_double("missingValue")?;
        out.iter_mut().filter(|v| **v == missing).for_each(|v| *v = f64::NAN);
    }
    Ok(())
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
        let columns = usize::try_from(h.get_long("Ni")?).ok().filter(|n| *n > 0 && points % n == 0).ok_or_else(|| Error::Grib {
            context: "grid".into(),
            message: format!("Ni does not divide the field's {points} values into rows"),
        })?;
        // Taken from every point's coordinates, so the order is the values' whatever the
        // scanning mode.
        drop(h);
        let (all_latitudes, all_longitudes) = coordinates(message)?;
        latitudes = all_latitudes.iter().step_by(columns).copied().collect();
        longitudes = all_longitudes[..columns].to_vec();
    }
    Ok(Geometry { grid_type, points, identity, latitudes, longitudes })
}

/// Every point's latitude and longitude, in the order of the values (any grid ecCodes can
/// iterate).
pub fn coordinates(message: &[u8]) -> Result<(Vec<f64>, Vec<f64>)> {
    let h = handle(message)?;
    let points = h.get_size("values")?;
    let (mut latitudes, mut longitudes) = (vec![0.0; points], vec![0.0; points]);
    h.get_double_array("latitudes", &mut latitudes)?;
    h.get_double_array("longitudes", &mut longitudes)?;
    Ok((latitudes, longitudes))
}

/// The text values of `keys` in `message`, `None` for those it has not.
pub fn text_keys(message: &[u8], keys: &[String]) -> Result<Vec<Option<String>>> {
    let h = handle(message)?;
    let values = keys.iter().map(|k| h.get_string(k).ok()).collect();
    // Keys it has not are answers here, not errors to report later.
    crate::take_errors();
    Ok(values)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_and_a_regular_grid_decode_as_ecodes_has_them() {
        let message = crate::sample_message("regular_ll_sfc_grib2", &[]).unwrap();
        let g = geometry(&message).unwrap();
        assert_eq!(g.grid_type, "regular_ll");
        assert_eq!(g.latitudes.len() * g.longitudes.len(), g.points);
        // North to south, west to east, as the sample scans.
        assert_eq!((g.latitudes.len(), g.longitudes.len()), (31, 16));
        assert!(g.latitudes[0] == 60.0 && g.latitudes[30] == 0.0 && g.longitudes[0] < g.longitudes[1], "{g:?}");
        let mut values = vec![0.0; value_count(&message).unwrap()];
        decode_values(&message, &mut values).unwrap();
        let (lats, lons) = coordinates(&message).unwrap();
        assert_eq!((lats[0], lons[1]), (g.latitudes[0], g.longitudes[1]));
        let mut short = vec![0.0; values.len() - 1];
        assert!(decode_values(&message, &mut short).is_err(), "a buffer of the wrong size is refused");
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
