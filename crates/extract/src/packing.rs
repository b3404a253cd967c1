//! How a field's values are packed: what an extraction needs to find the bytes of a grid point
//! and unpack it, read once from the whole message through ecCodes (at archive or scan time),
//! so that extractions need only the bytes of the points they ask for.

use fieldstore_core::error::{Error, ErrorKind, Result};
use fieldstore_grib::simple::Scale;
use fieldstore_grib::Handle;

use crate::Ccsds;

/// How the values are read.
#[derive(Clone, Debug, PartialEq)]
pub enum PackingKind {
    /// Simple packing (`grid_simple`, GRIB 1 and 2): fixed-width integers, read where they lie.
    Simple,
    /// CCSDS (`grid_ccsds`): its RSIs decoded where they hold the points asked.
    Ccsds(Ccsds),
    /// Every value the reference value (0 bits per value): nothing to read but the bitmap.
    Constant,
    /// Any other packing (ecCodes' `packingType` named): the field is decoded whole by ecCodes.
    Decoded(String),
}

/// A field's packing, as an extraction reads it. Offsets count from the message's first byte.
#[derive(Clone, Debug, PartialEq)]
pub struct Packing {
    /// How the values are read.
    pub kind: PackingKind,
    /// Grid points (`numberOfDataPoints`): the ranges extracted index these.
    pub points: u64,
    /// Values packed (`numberOfCodedValues`): the points the bitmap, if any, marks present.
    pub coded: u64,
    /// Bits per packed value (`bitsPerValue`).
    pub bits: u32,
    /// R, E and D of `((X * 2^E) + R) * 10^-D`.
    pub reference: f64,
    /// E.
    pub binary_scale: i64,
    /// D.
    pub decimal_scale: i64,
    /// Where the packed values start (`offsetBeforeData`).
    pub data_offset: u64,
    /// Where the bitmap's first bit is (`offsetBeforeBitmap`), if the field has one.
    pub bitmap_offset: Option<u64>,
    /// The message's length (`totalLength`).
    pub length: u64,
}

impl Packing {
    /// The packing of one GRIB message, read by ecCodes.
    pub fn of(message: &[u8]) -> Result<Packing> {
        let handle = Handle::from_message(message)
            .ok_or_else(|| Error::Grib { context: "field".into(), message: "ecCodes cannot read it".into() })?;
        let unsigned = |key: &str| {
            let value = handle.get_long(key)?;
            u64::try_from(value).map_err(|_| Error::Grib { context: key.into(), message: format!("{value} is negative") })
        };
        let packing_type = handle.get_string("packingType")?;
        let bits = u32::try_from(unsigned("bitsPerValue")?).unwrap_or(u32::MAX);
        let bitmap = handle.get_long("bitmapPresent").unwrap_or(0) != 0;
        // A bitmap defined elsewhere (predefined, or a previous message's) is not in these
        // bytes: ecCodes decodes such a field.
        let own_bitmap = !bitmap || own_bitmap(&handle)?;
        let kind = match packing_type.as_str() {
            _ if !own_bitmap => PackingKind::Decoded(format!("{packing_type} with a bitmap defined elsewhere")),
            "grid_simple" | "grid_ccsds" if bits == 0 => PackingKind::Constant,
            "grid_simple" if bits <= 32 => PackingKind::Simple,
            _ => PackingKind::Decoded(packing_type),
        };
        let mut packing = Packing {
            kind,
            points: unsigned("numberOfDataPoints")?,
            coded: unsigned("numberOfCodedValues")?,
            bits,
            reference: handle.get_double("referenceValue")?,
            binary_scale: handle.get_long("binaryScaleFactor")?,
            decimal_scale: handle.get_long("decimalScaleFactor")?,
            data_offset: unsigned("offsetBeforeData")?,
            bitmap_offset: if bitmap { Some(bitmap_offset(&handle)?) } else { None },
            length: unsigned("totalLength")?,
        };
        packing.check()?;
        if packing.kind == PackingKind::Decoded("grid_ccsds".into()) && (1..=32).contains(&bits) {
            if let Some(ccsds) = ccsds(&handle, message, &packing)? {
                packing.kind = PackingKind::Ccsds(ccsds);
                // A stream only a hand could make (a sample wider than its bits) is left to
                // ecCodes rather than kept in a record that would be refused.
                if packing.check_record().is_err() {
                    packing.kind = PackingKind::Decoded("grid_ccsds".into());
                }
            }
        }
        Ok(packing)
    }

    /// [`Packing::check`], and that a packing read natively is one this build reads as it
    /// says (simple or CCSDS of 1 to 32 bits, CCSDS with allowed sizes and its RSIs in order
    /// inside its stream): what a record read back, or a packing built by hand, is checked for.
    pub fn check_record(&self) -> Result<()> {
        let corrupt = |what: String| Err(Error::new(ErrorKind::Corrupt, format!("a packing record: {what}")));
        match &self.kind {
            PackingKind::Simple | PackingKind::Ccsds(_) if !(1..=32).contains(&self.bits) => {
                return corrupt(format!("{} bits per value", self.bits))
            }
            PackingKind::Ccsds(ccsds) if !ccsds.sizes_allowed() => {
                return corrupt(format!("blocks of {} values, RSIs of {} blocks", ccsds.block_size, ccsds.rsi));
            }
            PackingKind::Ccsds(ccsds)
                if ccsds.offsets.len() as u64 != self.coded.div_ceil(u64::from(ccsds.rsi) * u64::from(ccsds.block_size)) =>
            {
                return corrupt(format!("{} RSIs for {} values", ccsds.offsets.len(), self.coded));
            }
            PackingKind::Ccsds(ccsds)
                if ccsds.offsets.windows(2).any(|w| w[0] >= w[1])
                    || ccsds.offsets.last().is_some_and(|last| *last >= ccsds.length.saturating_mul(8)) =>
            {
                return corrupt("RSI offsets out of order or beyond the stream".into());
            }
            PackingKind::Ccsds(ccsds) if ccsds.values != self.coded => {
                return corrupt(format!("{} values, {} coded", ccsds.values, self.coded));
            }
            PackingKind::Ccsds(ccsds) => ccsds.check(self.bits).or_else(corrupt)?,
            _ => {}
        }
        self.check()
    }

    /// Refuses a description whose parts do not fit in its message.
    fn check(&self) -> Result<()> {
        let corrupt = |what: String| Err(Error::new(ErrorKind::Corrupt, format!("a GRIB field's packing: {what}")));
        // GRIB codes E and D in 16 bits; ecCodes makes their powers by repeated products.
        if self.binary_scale.unsigned_abs() > 32_767 || self.decimal_scale.unsigned_abs() > 32_767 {
            return corrupt(format!("scale factors E={} D={} beyond GRIB's 16 bits", self.binary_scale, self.decimal_scale));
        }
        if !self.reference.is_finite() {
            return corrupt(format!("reference value {}", self.reference));
        }
        if self.coded > self.points {
            return corrupt(format!("{} values for {} points", self.coded, self.points));
        }
        if self.data_offset > self.length {
            return corrupt(format!("its data at byte {} of its {} bytes", self.data_offset, self.length));
        }
        if self.kind == PackingKind::Simple {
            let packed = self.coded.checked_mul(u64::from(self.bits)).map(|bits| bits.div_ceil(8));
            if packed.and_then(|bytes| bytes.checked_add(self.data_offset)).is_none_or(|end| end > self.length) {
                return corrupt(format!(
                    "{} values of {} bits from byte {} overrun its {} bytes",
                    self.coded, self.bits, self.data_offset, self.length
                ));
            }
        }
        if let PackingKind::Ccsds(ccsds) = &self.kind {
            if self.data_offset.checked_add(ccsds.length).is_none_or(|end| end > self.length) {
                return corrupt(format!(
                    "a CCSDS stream of {} bytes from byte {} overruns its {} bytes",
                    ccsds.length, self.data_offset, self.length
                ));
            }
        }
        if let Some(at) = self.bitmap_offset {
            if at.checked_add(self.points.div_ceil(8)).is_none_or(|end| end > self.length) {
                return corrupt(format!("a bitmap of {} points from byte {at} overruns its {} bytes", self.points, self.length));
            }
        }
        let native = !matches!(self.kind, PackingKind::Decoded(_));
        if native && self.bitmap_offset.is_none() && self.coded != self.points {
            return corrupt(format!("{} values for {} points without a bitmap", self.coded, self.points));
        }
        Ok(())
    }
}

/// Where a message's bitmap bits start: GRIB 1 names it (`offsetBeforeBitmap`); in GRIB 2 they
/// follow section 6's length, number and bitmap indicator (6 bytes).
fn bitmap_offset(handle: &Handle<'_>) -> Result<u64> {
    let at = match handle.get_long("edition")? {
        1 => handle.get_long("offsetBeforeBitmap")?,
        _ => handle.get_long("offsetSection6")?.saturating_add(6),
    };
    u64::try_from(at).map_err(|_| Error::Grib { context: "bitmap".into(), message: format!("at {at}") })
}

/// A CCSDS field's coding with where decoding may start ([`Ccsds::of`]), if this crate's
/// decoder gives every value as ecCodes decodes it; else `None` (ecCodes decodes the field).
fn ccsds(handle: &Handle<'_>, message: &[u8], packing: &Packing) -> Result<Option<Ccsds>> {
    let number = |key: &str| handle.get_long(key).map(|v| u32::try_from(v).unwrap_or(u32::MAX));
    let (flags, block_size, rsi) = (number("ccsdsFlags")?, number("ccsdsBlockSize")?, number("ccsdsRsi")?);
    let length = u64::try_from(handle.get_long("section7Length")?.saturating_sub(5)).unwrap_or(0);
    let stream = usize::try_from(packing.data_offset)
        .ok()
        .zip(usize::try_from(length).ok())
        .and_then(|(at, length)| message.get(at..at.checked_add(length)?));
    let Some(stream) = stream else {
        return Err(Error::new(ErrorKind::Corrupt, format!("a CCSDS stream of {length} bytes overruns its message")));
    };
    let Some((ccsds, integers)) = Ccsds::of(stream, packing.coded, packing.bits, flags, block_size, rsi) else {
        return Ok(None);
    };
    Ok(as_ecodes_decodes(handle, message, packing, &integers)?.then_some(ccsds))
}

/// Whether the packed `integers`, scaled, are the values ecCodes decodes at the points the
/// bitmap marks present, bit for bit.
fn as_ecodes_decodes(handle: &Handle<'_>, message: &[u8], packing: &Packing, integers: &[u32]) -> Result<bool> {
    let mut values = vec![0.0; handle.get_size("values")?];
    handle.get_double_array("values", &mut values)?;
    let bitmap = match packing.bitmap_offset {
        Some(at) => message.get(at as usize..).unwrap_or_default(),
        None => &[],
    };
    let present = |point: usize| packing.bitmap_offset.is_none() || crate::extract::marked(bitmap, point as u64);
    let scale = Scale::new(packing.reference, packing.binary_scale, packing.decimal_scale);
    let mut packed = integers.iter();
    for (point, value) in values.iter().enumerate() {
        if present(point) && packed.next().is_none_or(|x| scale.value(u64::from(*x)).to_bits() != value.to_bits()) {
            return Ok(false);
        }
    }
    Ok(packed.next().is_none())
}

/// Whether a message's bitmap is in its own bytes: GRIB 2's indicator 0, GRIB 1's table
/// reference 0 (else a predefined bitmap, or GRIB 2's 254, a previous message's).
fn own_bitmap(handle: &Handle<'_>) -> Result<bool> {
    Ok(match handle.get_long("edition")? {
        1 => handle.get_long("tableReference")? == 0,
        _ => handle.get_long("bitMapIndicator")? == 0,
    })
}
