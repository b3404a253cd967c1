//! Keyword types of FDB5's schema language. A type turns the many ways a user or a GRIB
//! message can spell a value into one canonical spelling (`time=12` -> `1200`, `param=130.128`
//! -> `130`), orders values (numerically for steps, levels, numbers), and expands MARS ranges
//! (`0/to/24/by/6`).

use std::borrow::Cow;
use std::cmp::Ordering;
use std::sync::OnceLock;

use crate::error::{Error, Result};

/// Upper bound on the values one `a/to/b/by/c` range may expand to.
pub const MAX_RANGE_VALUES: usize = 100_000;

/// The keyword types FDB5 schema files may name.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum KeywordType {
    /// Any text, lowercased (`OPER` -> `oper`).
    Default,
    /// A date, written `YYYYMMDD` (from `2023-12-01`, `2023335`, or `-1` for yesterday).
    Date,
    /// A time of day, written `HHMM` (`12` -> `1200`, `12:30` -> `1230`).
    Time,
    /// A step or step range, in hours or with units (`12`, `0-6`, `1h30m`), ordered by its end.
    Step,
    /// `Param`: a parameter id; names and `value.table` forms resolve to the id.
    Param,
    /// `ParamID`: FDB5's strict variant of `Param`; canonicalised identically here.
    ParamId,
    /// An experiment version, lowercased and zero-padded to four characters (`1` -> `0001`).
    Expver,
    /// A whole number, without a plus sign or leading zeros (`013` -> `13`).
    Integer,
    /// A number; a whole one loses its fraction (`500.0` -> `500`).
    Double,
    /// A grid, its `/` separators written `+` as FDB5 writes them (`1/2` -> `1+2`).
    Grid,
    /// A keyword whose value is dropped: it always canonicalises to the empty string.
    Ignore,
    /// The year of a date (`20231201` -> `2023`).
    Year,
    /// The month number of a date, not padded (`20230301` -> `3`).
    Month,
    /// The year and month of a date as `YYYYMM` (`20231201` -> `202312`).
    YearMonth,
    /// The month of a date as two digits (`20230301` -> `03`).
    MonthOfDate,
    /// A day of the year as `MMDD`, from a date or `mon-D` (`nov-5` -> `1105`).
    ClimateDaily,
    /// A month number, from a date, a number or a name (`nov` -> `11`).
    ClimateMonthly,
    /// The value's first three characters (`oper` -> `ope`).
    First3,
    /// Text, lowercased (as `Default`).
    Lowercase,
}

impl KeywordType {
    /// Looks a type up by its schema name (`Date`, `ClimateMonthly`, ...).
    pub fn from_name(name: &str) -> Option<Self> {
        use KeywordType::*;
        Some(match name {
            "Default" => Default,
            "Date" => Date,
            "Time" => Time,
            "Step" => Step,
            "Param" => Param,
            "ParamID" => ParamId,
            "Expver" => Expver,
            "Integer" => Integer,
            "Double" => Double,
            "Grid" => Grid,
            "Ignore" => Ignore,
            "Year" => Year,
            "Month" => Month,
            "YearMonth" => YearMonth,
            "MonthOfDate" => MonthOfDate,
            "ClimateDaily" => ClimateDaily,
            "ClimateMonthly" | "ClimateMonth" => ClimateMonthly,
            "First3" => First3,
            "Lowercase" => Lowercase,
            _ => return None,
        })
    }

    /// The type's schema name, as FDB5 prints it (`from_name`'s inverse).
    pub fn name(self) -> &'static str {
        use KeywordType::*;
        match self {
            Default => "Default",
            Date => "Date",
            Time => "Time",
            Step => "Step",
            Param => "Param",
            ParamId => "ParamID",
            Expver => "Expver",
            Integer => "Integer",
            Double => "Double",
            Grid => "Grid",
            Ignore => "Ignore",
            Year => "Year",
            Month => "Month",
            YearMonth => "YearMonth",
            MonthOfDate => "MonthOfDate",
            ClimateDaily => "ClimateDaily",
            ClimateMonthly => "ClimateMonthly",
            First3 => "First3",
            Lowercase => "Lowercase",
        }
    }

    /// The names accepted by [`KeywordType::from_name`], for error messages.
    pub fn known_names() -> &'static str {
        "Default, Date, Time, Step, Param, ParamID, Expver, Integer, Double, Grid, Ignore, Year, Month, \
         YearMonth, MonthOfDate, ClimateDaily, ClimateMonthly, First3, Lowercase"
    }

    /// A value as a request asks for it: its [`canonical`](Self::canonical) spelling, but a
    /// parameter name ecCodes does not know asks for itself in lower case, which no field has
    /// (fields are stored by parameter id): `param=xyz/130` asks for 130, and `param=xyz` is
    /// said to be off the axis by name, as FDB5 lists nothing for it.
    pub fn canonical_asked(self, keyword: &str, value: &str) -> Result<String> {
        match self.canonical(keyword, value) {
            Err(Error::BadValue { .. }) if matches!(self, KeywordType::Param | KeywordType::ParamId) && PARAM_RESOLVER.get().is_some() => {
                Ok(value.trim().to_ascii_lowercase())
            }
            canonical => canonical,
        }
    }

    /// The canonical spelling of `value` for `keyword`. Empty values (absent optional
    /// keywords) stay empty.
    pub fn canonical(self, keyword: &str, value: &str) -> Result<String> {
        let value = value.trim();
        if value.is_empty() {
            return Ok(String::new());
        }
        let bad = |reason: &str| Error::bad_value(keyword, value, reason.to_string());
        use KeywordType::*;
        Ok(match self {
            // MARS values are case-insensitive (`class=OD` is `od`), as metkit reads them.
            Default | Lowercase => value.to_ascii_lowercase(),
            Date => parse_date(value).map_err(|r| bad(&r))?.to_yyyymmdd(),
            Time => canonical_time(value).map_err(|r| bad(&r))?,
            Step => StepValue::parse(value).map_err(|r| bad(&r))?.to_string(),
            Param | ParamId => canonical_param(keyword, value)?,
            Expver => format!("{:0>4}", value.to_ascii_lowercase()),
            Integer => value.parse::<i64>().map_err(|_| bad("not an integer"))?.to_string(),
            Double => canonical_double(value).ok_or_else(|| bad("not a number"))?,
            Grid => value.replace('/', "+"),
            Ignore => String::new(),
            Year => parse_date(value).map_err(|r| bad(&r))?.year.to_string(),
            Month => parse_date(value).map_err(|r| bad(&r))?.month.to_string(),
            YearMonth => {
                let d = parse_date(value).map_err(|r| bad(&r))?;
                (i64::from(d.year) * 100 + i64::from(d.month)).to_string()
            }
            MonthOfDate => format!("{:02}", parse_date(value).map_err(|r| bad(&r))?.month),
            ClimateDaily => format!("{:04}", climate_day(value).map_err(|r| bad(&r))?),
            ClimateMonthly => climate_month(value).map_err(|r| bad(&r))?.to_string(),
            First3 => value.chars().take(3).collect(),
        })
    }

    /// [`KeywordType::canonical`] without a copy when `value` is already canonical (as it
    /// nearly always is: splitting then builds no string per value).
    pub fn canonical_cow<'v>(self, keyword: &str, value: &'v str) -> Result<Cow<'v, str>> {
        if self.is_canonical(value) {
            Ok(Cow::Borrowed(value))
        } else {
            self.canonical(keyword, value).map(Cow::Owned)
        }
    }

    /// Whether `canonical` would return `value` unchanged: exact for the forms it accepts,
    /// false (so `canonical` decides) for any other.
    fn is_canonical(self, value: &str) -> bool {
        use KeywordType::*;
        if value.is_empty() || value.trim().len() != value.len() {
            return false;
        }
        match self {
            Default | Lowercase => !value.bytes().any(|b| b.is_ascii_uppercase()),
            Expver => value.chars().count() >= 4 && !value.bytes().any(|b| b.is_ascii_uppercase()),
            Grid => !value.contains('/'),
            Integer | Param | ParamId | Double => is_plain_integer(value, 15),
            Step => !value.starts_with('-') && is_plain_integer(value, 9),
            Time => {
                let b = value.as_bytes();
                b.len() == 4 && b.iter().all(u8::is_ascii_digit) && &value[..2] <= "23" && &value[2..] <= "59"
            }
            _ => false,
        }
    }

    /// Orders two canonical values: numerically where the type is numeric.
    pub fn compare(self, a: &str, b: &str) -> Ordering {
        self.sort_key(a).cmp(&self.sort_key(b)).then_with(|| a.cmp(b))
    }

    /// A value's place in this type's order, computed once so that sorting many values does
    /// not parse them again at every comparison.
    pub fn sort_key(self, value: &str) -> SortKey {
        use KeywordType::*;
        match self {
            Step => match StepValue::parse(value) {
                Ok(s) => SortKey::Step(s.end_minutes, s.start_minutes),
                Err(_) => SortKey::Text(value.into()),
            },
            Integer | Double | Param | ParamId | Default | Expver | Time | Date => match value.parse::<f64>() {
                Ok(v) if !v.is_nan() => SortKey::Number(v),
                _ => SortKey::Text(value.into()),
            },
            _ => SortKey::Text(value.into()),
        }
    }

    /// Expands `from/to/to/by/by` (the user's spellings) into canonical values, in the
    /// order written: `24/to/0/by/12` counts down (the sign of `by` is not needed). Without
    /// `by`, steps go by 12 hours and times by 6 hours (as in MARS), anything else by 1.
    pub fn expand_range(self, keyword: &str, from: &str, to: &str, by: Option<&str>) -> Result<Vec<String>> {
        let bad = |v: &str, reason: &str| Error::bad_value(keyword, v, reason.to_string());
        let whole = |v: &str| v.trim().parse::<i64>().map_err(|_| bad(v, "ranges need integer bounds for this keyword"));
        let by_whole = || by.map_or(Ok(1), whole);
        let span = format!("{from}/to/{to}");
        use KeywordType::*;
        match self {
            // Types read from a date (a climate month, a year): the range is one of dates, or
            // of months (`oct/to/dec`), as MARS expands `date` before any schema type reads it.
            ClimateMonthly | ClimateDaily | Year | Month | YearMonth | MonthOfDate => {
                let expanded = match Date.expand_range(keyword, from, to, by) {
                    Ok(dates) => dates,
                    Err(date_error) => month_range(from, to, by_whole()?).ok_or(date_error)?,
                };
                let mut values: Vec<String> = Vec::new();
                for value in expanded {
                    let canonical = self.canonical(keyword, &value)?;
                    if !values.contains(&canonical) {
                        values.push(canonical);
                    }
                }
                Ok(values)
            }
            Date => {
                let days = |v: &str| parse_date(v).map(CivilDate::days).map_err(|r| bad(v, &r));
                let values = counted(keyword, &span, days(from)?, days(to)?, by_whole()?)?;
                Ok(values.map(|d| CivilDate::from_days(d).to_yyyymmdd()).collect())
            }
            Time => {
                let minutes = |v: &str| -> Result<i64> {
                    let t = canonical_time(v).map_err(|r| bad(v, &r))?;
                    Ok(i64::from(t[..2].parse::<u8>().unwrap_or(0)) * 60 + i64::from(t[2..].parse::<u8>().unwrap_or(0)))
                };
                let step = by.map_or(Ok(360), |b| parse_step_minutes(b).map_err(|r| bad(b, &r)))?;
                let values = counted(keyword, &span, minutes(from)?, minutes(to)?, step)?;
                Ok(values.map(|m| format!("{:02}{:02}", m / 60, m % 60)).collect())
            }
            Step => {
                let minutes = |v: &str| parse_step_minutes(v).map_err(|r| bad(v, &r));
                let step = by.map_or(Ok(720), minutes)?;
                Ok(counted(keyword, &span, minutes(from)?, minutes(to)?, step)?.map(format_step_minutes).collect())
            }
            Double => {
                let number = |v: &str| match v.trim().parse::<f64>() {
                    Ok(x) if x.is_finite() => Ok(x),
                    _ => Err(bad(v, "not a finite number")),
                };
                let (a, b, step) = (number(from)?, number(to)?, by.map_or(Ok(1.0), number)?.abs());
                if step == 0.0 {
                    return Err(bad("0", "'by' must not be zero"));
                }
                // Counted, not accumulated: 0.1/to/0.3/by/0.1 is three values.
                let n = ((b - a).abs() / step + 1e-9).floor() + 1.0;
                if n > MAX_RANGE_VALUES as f64 {
                    return Err(bad(&span, &format!("range must expand to at most {MAX_RANGE_VALUES} values")));
                }
                let direction = if b < a { -1.0 } else { 1.0 };
                let value = |i: f64| {
                    let x = a + direction * step * i;
                    // Rounded to 9 decimals, so that 3 x 0.1 is written 0.3.
                    let rounded = (x * 1e9).round() / 1e9;
                    canonical_double(&rounded.to_string()).unwrap_or_else(|| x.to_string())
                };
                Ok((0..n as usize).map(|i| value(i as f64)).collect())
            }
            _ => counted(keyword, &span, whole(from)?, whole(to)?, by_whole()?)?.map(|v| self.canonical(keyword, &v.to_string())).collect(),
        }
    }
}

/// `a`, `a ± by`, ... up to `b`, towards `b` whatever the sign of `by`; at most
/// [`MAX_RANGE_VALUES`] values.
fn counted(keyword: &str, span: &str, a: i64, b: i64, by: i64) -> Result<impl Iterator<Item = i64>> {
    let too_many = || Error::bad_value(keyword, span, format!("range must expand to at most {MAX_RANGE_VALUES} values"));
    let by = by.checked_abs().filter(|&b| b != 0).ok_or_else(|| Error::bad_value(keyword, "0", "'by' must not be zero".to_string()))?;
    let distance = b.checked_sub(a).and_then(i64::checked_abs).ok_or_else(too_many)?;
    let count = distance / by + 1;
    if count > MAX_RANGE_VALUES as i64 {
        return Err(too_many());
    }
    let direction = if b < a { -by } else { by };
    // No overflow: |i * direction| <= distance.
    Ok((0..count).map(move |i| a + i * direction))
}

/// A value's place in its type's order: steps by (end, start), numbers numerically, then
/// anything else as text.
#[derive(Clone, Debug, PartialEq)]
pub enum SortKey {
    /// A step: its end, then its start, in minutes.
    Step(i64, i64),
    /// A number, ordered by `f64::total_cmp`.
    Number(f64),
    /// Anything else, ordered as text; sorts after steps and numbers.
    Text(Box<str>),
}

impl SortKey {
    fn rank(&self) -> u8 {
        match self {
            SortKey::Step(..) => 0,
            SortKey::Number(_) => 1,
            SortKey::Text(_) => 2,
        }
    }
}

impl Eq for SortKey {}

impl Ord for SortKey {
    fn cmp(&self, other: &Self) -> Ordering {
        match (self, other) {
            (SortKey::Step(a, b), SortKey::Step(c, d)) => (a, b).cmp(&(c, d)),
            (SortKey::Number(x), SortKey::Number(y)) => x.total_cmp(y),
            (SortKey::Text(x), SortKey::Text(y)) => x.cmp(y),
            _ => self.rank().cmp(&other.rank()),
        }
    }
}

impl PartialOrd for SortKey {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

/// An integer as Rust prints it (`-12`, `0`, `7`; not `+7`, `007`, `-0`), of at most
/// `digits` digits (so it converts to i64 and f64 exactly).
fn is_plain_integer(value: &str, digits: usize) -> bool {
    let unsigned = value.strip_prefix('-').unwrap_or(value);
    let b = unsigned.as_bytes();
    !b.is_empty()
        && b.len() <= digits
        && b.iter().all(u8::is_ascii_digit)
        && (b[0] != b'0' || (b.len() == 1 && unsigned.len() == value.len()))
}

fn canonical_double(value: &str) -> Option<String> {
    let v: f64 = value.trim().parse().ok()?;
    if !v.is_finite() {
        return None;
    }
    if v.fract() == 0.0 && v.abs() < 1e15 {
        Some((v as i64).to_string())
    } else {
        Some(v.to_string())
    }
}

// ---------------------------------------------------------------------------------------------
// Parameters

/// Resolves parameter names (`t`, `2t`) to parameter ids. fieldstore's GRIB crate installs one
/// backed by ecCodes' own definitions; without it only numeric forms are understood.
pub trait ParamResolver: Send + Sync {
    /// The parameter id for a short name, or `None` if the name is unknown.
    fn param_id(&self, name: &str) -> Option<i64>;
}

static PARAM_RESOLVER: OnceLock<Box<dyn ParamResolver>> = OnceLock::new();

/// Installs the process-wide parameter-name resolver (first call wins).
pub fn set_param_resolver(resolver: Box<dyn ParamResolver>) {
    let _ = PARAM_RESOLVER.set(resolver);
}

/// `130` -> `130`; `130.128` -> `130` (table 128 is ECMWF's default table); `167.228` ->
/// `228167` (ECMWF's `table * 1000 + value` rule); names through the installed resolver.
fn canonical_param(keyword: &str, value: &str) -> Result<String> {
    if let Ok(id) = value.parse::<i64>() {
        return Ok(id.to_string());
    }
    if let Some((v, t)) = value.split_once('.') {
        if let (Ok(v), Ok(t)) = (v.parse::<i64>(), t.parse::<i64>()) {
            let id = if t == 128 || t == 0 { v } else { t * 1000 + v };
            return Ok(id.to_string());
        }
    }
    match PARAM_RESOLVER.get().and_then(|r| r.param_id(&value.to_ascii_lowercase())) {
        Some(id) => Ok(id.to_string()),
        None if PARAM_RESOLVER.get().is_none() => {
            Err(Error::bad_value(keyword, value, "parameter names need ecCodes (not loaded); use a parameter id"))
        }
        None => Err(Error::bad_value(keyword, value, "unknown parameter name in ecCodes' definitions")),
    }
}

// ---------------------------------------------------------------------------------------------
// Steps

/// A step or step range in minutes (`12` = 12 h, `0-6`, `30m`, `1h30m`, `1d`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StepValue {
    /// Where the range starts, in minutes; equal to the end for a single step.
    pub start_minutes: i64,
    /// Where the range ends (the step itself, when not a range), in minutes.
    pub end_minutes: i64,
}

/// Steps beyond this many minutes (about 190,000 years) are refused, so that every step
/// arithmetic stays far from overflow.
const MAX_STEP_MINUTES: i64 = 100_000_000_000;

/// One step in minutes, as MARS writes it: a number of hours (`12`, `1.5`), or numbers with
/// units `d`, `h`, `m`, `s` one after another (`30m`, `1h30m`, `2d`, `1440m`).
pub fn parse_step_minutes(text: &str) -> std::result::Result<i64, String> {
    let t = text.trim();
    let bad = || format!("'{t}' is not a step (use hours, or units: 30m, 1h30m, 2d)");
    let (negative, body) = match t.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, t),
    };
    if body.is_empty() {
        return Err(bad());
    }
    let seconds: f64 = if body.bytes().all(|b| b.is_ascii_digit() || b == b'.') {
        body.parse::<f64>().map_err(|_| bad())? * 3600.0
    } else {
        let mut total = 0.0;
        let mut rest = body;
        while !rest.is_empty() {
            let digits = rest.find(|c: char| !(c.is_ascii_digit() || c == '.')).ok_or_else(bad)?;
            let number: f64 = rest[..digits].parse().map_err(|_| bad())?;
            let unit = rest[digits..].chars().next().ok_or_else(bad)?;
            total += number
                * match unit {
                    'd' | 'D' => 86_400.0,
                    'h' | 'H' => 3_600.0,
                    'm' | 'M' => 60.0,
                    's' | 'S' => 1.0,
                    _ => return Err(bad()),
                };
            rest = &rest[digits + unit.len_utf8()..];
        }
        total
    };
    if !seconds.is_finite() || seconds > MAX_STEP_MINUTES as f64 * 60.0 {
        return Err(format!("'{t}' is beyond the largest step ({} hours)", MAX_STEP_MINUTES / 60));
    }
    // Decimal hours are not exact in binary (1.1 h is 3960.0000000000005 s): whole seconds.
    let whole_seconds = seconds.round();
    if (seconds - whole_seconds).abs() > 1e-6 || whole_seconds % 60.0 != 0.0 {
        return Err(format!("'{t}' is not a whole number of minutes"));
    }
    let minutes = (whole_seconds / 60.0) as i64;
    Ok(if negative { -minutes } else { minutes })
}

/// A step in minutes as FDB5 writes it: whole hours as a number (`30`), otherwise hours and
/// minutes (`30m`, `1h30m`).
pub fn format_step_minutes(minutes: i64) -> String {
    let sign = if minutes < 0 { "-" } else { "" };
    let (hours, rest) = (minutes.unsigned_abs() / 60, minutes.unsigned_abs() % 60);
    match (hours, rest) {
        (h, 0) => format!("{sign}{h}"),
        (0, m) => format!("{sign}{m}m"),
        (h, m) => format!("{sign}{h}h{m}m"),
    }
}

impl StepValue {
    /// Parses a step (`12`, `30m`) or a range of two (`0-6`); a leading `-` is a negative step.
    pub fn parse(text: &str) -> std::result::Result<Self, String> {
        // A leading '-' is a negative step, not a range separator.
        let from = usize::from(text.starts_with('-'));
        let split = text[from..].find('-').map(|i| i + from);
        let (start, end) = match split {
            Some(i) => (parse_step_minutes(&text[..i])?, parse_step_minutes(&text[i + 1..])?),
            None => {
                let m = parse_step_minutes(text)?;
                (m, m)
            }
        };
        if start > end {
            return Err(format!("step range {text} ends before it starts"));
        }
        Ok(StepValue { start_minutes: start, end_minutes: end })
    }
}

impl std::fmt::Display for StepValue {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.start_minutes == self.end_minutes {
            f.write_str(&format_step_minutes(self.end_minutes))
        } else {
            write!(f, "{}-{}", format_step_minutes(self.start_minutes), format_step_minutes(self.end_minutes))
        }
    }
}

impl Ord for StepValue {
    fn cmp(&self, other: &Self) -> Ordering {
        (self.end_minutes, self.start_minutes).cmp(&(other.end_minutes, other.start_minutes))
    }
}

impl PartialOrd for StepValue {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

// ---------------------------------------------------------------------------------------------
// Dates and times

/// A proleptic Gregorian calendar date.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CivilDate {
    /// The year (astronomical numbering: 0 is 1 BC).
    pub year: i32,
    /// The month, 1 to 12.
    pub month: u32,
    /// The day of the month, from 1.
    pub day: u32,
}

impl CivilDate {
    /// The date as `YYYYMMDD`, the canonical MARS spelling (`20231201`).
    pub fn to_yyyymmdd(self) -> String {
        format!("{:04}{:02}{:02}", self.year, self.month, self.day)
    }

    /// Days since 1970-01-01 (Howard Hinnant's `days_from_civil`).
    pub fn days(self) -> i64 {
        let y = self.year as i64 - if self.month <= 2 { 1 } else { 0 };
        let era = y.div_euclid(400);
        let yoe = y - era * 400;
        let m = self.month as i64;
        let doy = (153 * (if m > 2 { m - 3 } else { m + 9 }) + 2) / 5 + self.day as i64 - 1;
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
        era * 146_097 + doe - 719_468
    }

    /// The date `z` days after 1970-01-01 (before it when negative); the inverse of [`CivilDate::days`].
    pub fn from_days(z: i64) -> Self {
        let z = z + 719_468;
        let era = z.div_euclid(146_097);
        let doe = z - era * 146_097;
        let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
        let mp = (5 * doy + 2) / 153;
        let day = (doy - (153 * mp + 2) / 5 + 1) as u32;
        let month = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
        let year = (yoe + era * 400 + if month <= 2 { 1 } else { 0 }) as i32;
        CivilDate { year, month, day }
    }

    fn checked(year: i32, month: u32, day: u32) -> std::result::Result<Self, String> {
        let d = CivilDate { year, month, day };
        if !(1..=12).contains(&month) || day == 0 || CivilDate::from_days(d.days()) != d {
            return Err(format!("{year:04}-{month:02}-{day:02} is not a calendar date"));
        }
        Ok(d)
    }
}

/// Parses MARS dates: `20231201`, `2023-12-01`, `2023001` (year and day of year), and `0`/`-N`
/// (today, N days ago, in UTC).
pub fn parse_date(text: &str) -> std::result::Result<CivilDate, String> {
    let t = text.trim();
    if let Ok(n) = t.parse::<i64>() {
        if n <= 0 {
            // Relative days reach back to year 1 at most: beyond, the arithmetic would wrap.
            if n < -700_000 {
                return Err(format!("'{t}' days ago is before year 1"));
            }
            let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_err(|e| e.to_string())?;
            return Ok(CivilDate::from_days(now.as_secs() as i64 / 86_400 + n));
        }
        if t.len() == 8 {
            return CivilDate::checked((n / 10_000) as i32, (n / 100 % 100) as u32, (n % 100) as u32);
        }
        if t.len() == 7 {
            let (year, doy) = ((n / 1000) as i32, n % 1000);
            let jan1 = CivilDate::checked(year, 1, 1)?.days();
            let d = CivilDate::from_days(jan1 + doy - 1);
            if doy < 1 || d.year != year {
                return Err(format!("{t} has no day {doy} in its year"));
            }
            return Ok(d);
        }
    }
    let parts: Vec<&str> = t.split('-').collect();
    if parts.len() == 3 {
        if let (Ok(y), Ok(m), Ok(d)) = (parts[0].parse(), parts[1].parse(), parts[2].parse()) {
            return CivilDate::checked(y, m, d);
        }
    }
    Err(format!("'{t}' is not a date (use YYYYMMDD, YYYY-MM-DD, or 0/-N for relative days)"))
}

/// `12` -> `1200`, `6` -> `0600`, `12:30` -> `1230`, `123000` -> `1230`.
fn canonical_time(text: &str) -> std::result::Result<String, String> {
    let err = || format!("'{text}' is not a time (use HH, HHMM or HH:MM)");
    let (h, m, s) = if let Some((h, rest)) = text.split_once(':') {
        let (m, s) = rest.split_once(':').unwrap_or((rest, "0"));
        (h, m, s)
    } else if text.chars().all(|c| c.is_ascii_digit()) {
        match text.len() {
            1 | 2 => (text, "0", "0"),
            3 | 4 => {
                let padded = &text[..text.len() - 2];
                (padded, &text[text.len() - 2..], "0")
            }
            6 => (&text[..2], &text[2..4], &text[4..]),
            _ => return Err(err()),
        }
    } else {
        return Err(err());
    };
    let (h, m, s): (u32, u32, u32) = (h.parse().map_err(|_| err())?, m.parse().map_err(|_| err())?, s.parse().map_err(|_| err())?);
    if h > 23 || m > 59 || s > 59 {
        return Err(err());
    }
    if s != 0 {
        return Err(format!("'{text}': times with seconds are not supported"));
    }
    Ok(format!("{h:02}{m:02}"))
}

const MONTHS: [&str; 12] = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"];

/// A month from its name or its three-letter abbreviation (`november`, `nov`).
fn month_from_name(name: &str) -> Option<u32> {
    let name = name.to_ascii_lowercase();
    let abbreviation = name.get(..3)?;
    let full = ["january", "february", "march", "april", "may", "june", "july", "august", "september", "october", "november", "december"];
    MONTHS.iter().position(|m| *m == abbreviation).filter(|&i| name.len() == 3 || full[i] == name).map(|i| i as u32 + 1)
}

/// ClimateDaily: month * 100 + day, from a date or `mon-D`.
fn climate_day(value: &str) -> std::result::Result<u32, String> {
    if value.starts_with(|c: char| c.is_ascii_digit()) {
        let d = parse_date(value)?;
        return Ok(d.month * 100 + d.day);
    }
    let (m, d) = value.split_once('-').ok_or_else(|| format!("'{value}' is not mon-D"))?;
    let month = month_from_name(m).ok_or_else(|| format!("'{m}' is not a month"))?;
    let day: u32 = d.parse().map_err(|_| format!("'{d}' is not a day"))?;
    Ok(month * 100 + day)
}

/// `oct/to/dec`, `1/to/12/by/3`: the month numbers from one month to another, either way.
fn month_range(from: &str, to: &str, by: i64) -> Option<Vec<String>> {
    let month = |v: &str| month_from_name(v).or_else(|| v.parse::<u32>().ok().filter(|m| (1..=12).contains(m)));
    let (a, b) = (i64::from(month(from.trim())?), i64::from(month(to.trim())?));
    Some(counted("date", "", a, b, by).ok()?.map(|m| m.to_string()).collect())
}

/// ClimateMonthly: the month number, from a date, a month number or a month name.
fn climate_month(value: &str) -> std::result::Result<u32, String> {
    if let Some(month) = month_from_name(value) {
        return Ok(month);
    }
    match value.parse::<u32>() {
        Ok(n) if (1..=12).contains(&n) => Ok(n),
        _ => parse_date(value).map(|d| d.month).map_err(|_| format!("'{value}' is not a month or a date")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_taken_as_canonical_are_what_canonical_returns() {
        let types = KeywordType::known_names().split(',').map(|name| KeywordType::from_name(name.trim()).unwrap());
        let values = [
            "0",
            "7",
            "12",
            "-12",
            "-0",
            "007",
            "+7",
            "1.5",
            "1e3",
            "130",
            "130.128",
            "2t",
            "T",
            "t",
            "0001",
            "1",
            "abcd",
            "x1",
            "1200",
            "0000",
            "2359",
            "2400",
            "1260",
            "12:00",
            "20231201",
            "2023-12-01",
            "0-6",
            "30m",
            "6h",
            "O1280",
            "1/2",
            "1+2",
            " 12",
            "12 ",
            "999999999999999",
            "9999999999999999",
            "-999999999999999",
            "oper",
            "OPER",
            "é",
        ];
        let mut borrowed = 0;
        for ty in types {
            for value in values {
                let copy = ty.canonical_cow("k", value);
                if let Ok(Cow::Borrowed(_)) = copy {
                    borrowed += 1;
                    assert_eq!(ty.canonical("k", value).unwrap(), value, "{ty:?} {value:?}");
                }
                assert_eq!(copy.map(Cow::into_owned).ok(), ty.canonical("k", value).ok(), "{ty:?} {value:?}");
            }
        }
        assert!(borrowed > 100, "the fast path is taken for the common forms ({borrowed})");
    }
    use KeywordType::*;

    fn c(t: KeywordType, v: &str) -> String {
        t.canonical("k", v).unwrap()
    }

    #[test]
    fn canonical_forms() {
        assert_eq!(c(Time, "12"), "1200");
        assert_eq!(c(Time, "0"), "0000");
        assert_eq!(c(Time, "6"), "0600");
        assert_eq!(c(Time, "12:30"), "1230");
        assert_eq!(c(Time, "1200"), "1200");
        assert_eq!(c(Date, "2023-12-01"), "20231201");
        assert_eq!(c(Date, "2024060"), "20240229");
        assert_eq!(c(Expver, "1"), "0001");
        assert_eq!(c(Expver, "x1ab"), "x1ab");
        assert_eq!(c(Expver, "ABCD"), "abcd");
        assert_eq!(c(Default, "OPER"), "oper");
        assert_eq!(c(Integer, "013"), "13");
        assert_eq!(c(Double, "500.0"), "500");
        assert_eq!(c(Double, "0.5"), "0.5");
        assert_eq!(c(Step, "12"), "12");
        assert_eq!(c(Step, "12h"), "12");
        assert_eq!(c(Step, "0-6"), "0-6");
        assert_eq!(c(Step, "6-6"), "6");
        assert_eq!(c(Step, "30m"), "30m");
        assert_eq!(c(Param, "130.128"), "130");
        assert_eq!(c(Param, "167.228"), "228167");
        assert_eq!(c(Grid, "1.5/1.5"), "1.5+1.5");
        assert_eq!(c(Ignore, "anything"), "");
        assert_eq!(c(ClimateMonthly, "20100401"), "4");
        assert_eq!(c(ClimateMonthly, "may"), "5");
        assert_eq!(c(ClimateMonthly, "November"), "11");
        assert_eq!(c(ClimateMonthly, "2023-12-01"), "12");
        assert!(ClimateMonthly.canonical("date", "novem").is_err());
        assert_eq!(c(ClimateDaily, "20100401"), "0401");
        assert_eq!(c(ClimateDaily, "feb-3"), "0203");
        assert_eq!(c(MonthOfDate, "20100401"), "04");
        assert_eq!(c(YearMonth, "20100401"), "201004");
        assert_eq!(c(Year, "20100401"), "2010");
        assert_eq!(c(Month, "20100401"), "4");
        assert_eq!(c(First3, "abcdef"), "abc");
        assert_eq!(c(Lowercase, "ABC"), "abc");
    }

    #[test]
    fn bad_values_are_named() {
        for (t, v) in [
            (Date, "20230230"),
            (Date, "yesterday"),
            (Date, "-9223372036854775808"),
            (Time, "25"),
            (Integer, "1.5"),
            (Step, "6-0"),
            (Double, "x"),
            (Double, "nan"),
        ] {
            let err = t.canonical("kw", v).unwrap_err().to_string();
            assert!(err.contains("kw") && err.contains(v), "{err}");
        }
    }

    #[test]
    fn numeric_order_not_lexicographic() {
        let mut steps = vec!["12", "6", "0-6", "120", "0", "30m"];
        steps.sort_by(|a, b| Step.compare(a, b));
        assert_eq!(steps, ["0", "30m", "0-6", "6", "12", "120"]);
        let mut levels = vec!["1000", "50", "500", "0.5"];
        levels.sort_by(|a, b| Double.compare(a, b));
        assert_eq!(levels, ["0.5", "50", "500", "1000"]);
    }

    #[test]
    fn ranges_expand_by_type() {
        assert_eq!(Step.expand_range("step", "0", "24", Some("6")).unwrap(), ["0", "6", "12", "18", "24"]);
        assert_eq!(Date.expand_range("date", "20240227", "20240301", None).unwrap(), ["20240227", "20240228", "20240229", "20240301"]);
        assert_eq!(Time.expand_range("time", "0", "18", Some("6")).unwrap(), ["0000", "0600", "1200", "1800"]);
        assert_eq!(Double.expand_range("levelist", "100", "300", Some("100")).unwrap(), ["100", "200", "300"]);
        assert_eq!(Integer.expand_range("number", "3", "1", Some("-1")).unwrap(), ["3", "2", "1"]);
        assert!(Integer.expand_range("number", "0", "10000000", None).is_err());
        assert!(Integer.expand_range("number", "0", "1", Some("0")).is_err());
    }

    #[test]
    fn steps_carry_their_units_and_print_as_fdb5() {
        for (written, canonical) in [
            ("30", "30"),
            ("30h", "30"),
            ("30m", "30m"),
            ("0h30m", "30m"),
            ("90m", "1h30m"),
            ("1h30m", "1h30m"),
            ("1.5", "1h30m"),
            ("1.1", "1h6m"),
            ("0.55", "33m"),
            ("1d", "24"),
            ("2D", "48"),
            ("1440m", "24"),
            ("0-24h", "0-24"),
            ("0m-90m", "0-1h30m"),
        ] {
            assert_eq!(c(Step, written), canonical, "{written}");
        }
        for bad in ["1x", "h", "30s", "1.0001", "4611686018427387904", "nan"] {
            assert!(Step.canonical("step", bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn ranges_count_in_their_units_and_either_direction() {
        let r = |t: KeywordType, a: &str, b: &str, by: Option<&str>| t.expand_range("k", a, b, by).unwrap();
        assert_eq!(r(Step, "0", "24", None), ["0", "12", "24"]);
        assert_eq!(r(Step, "24", "0", Some("12")), ["24", "12", "0"]);
        assert_eq!(r(Step, "24", "0", Some("-12")), ["24", "12", "0"]);
        assert_eq!(r(Step, "0", "2d", Some("1d")), ["0", "24", "48"]);
        assert_eq!(r(Step, "0", "90m", Some("30m")), ["0", "30m", "1", "1h30m"]);
        assert_eq!(r(Time, "0", "18", None), ["0000", "0600", "1200", "1800"]);
        assert_eq!(r(Date, "20231203", "20231201", None), ["20231203", "20231202", "20231201"]);
        assert_eq!(r(Double, "0.1", "0.3", Some("0.1")), ["0.1", "0.2", "0.3"]);
        assert_eq!(r(Double, "0.3", "0.1", Some("-0.1")), ["0.3", "0.2", "0.1"]);
        assert_eq!(r(Integer, "3", "1", None), ["3", "2", "1"]);
        assert_eq!(r(ClimateMonthly, "20231130", "20231201", None), ["11", "12"]);
        assert_eq!(r(ClimateMonthly, "oct", "dec", None), ["10", "11", "12"]);
        assert_eq!(r(ClimateMonthly, "1", "12", Some("3")), ["1", "4", "7", "10"]);
        assert!(Date.expand_range("k", "oct", "dec", None).is_err());
        for (t, a, b, by) in [
            (Integer, "-1", "9223372036854775807", Some("-1")),
            (Time, "0", "12", Some("4611686018427387904")),
            (Double, "nan", "1", None),
            (Double, "inf", "inf", None),
            (Double, "1", "2", Some("inf")),
            (Double, "1", "nan", None),
            (Step, "0", "4611686018427387904", None),
        ] {
            assert!(t.expand_range("k", a, b, by).is_err(), "{a}/to/{b}/by/{by:?}");
        }
    }

    #[test]
    fn civil_date_round_trips() {
        for days in [-800_000, -1, 0, 1, 19_000, 2_000_000] {
            assert_eq!(CivilDate::from_days(days).days(), days);
        }
        assert_eq!(CivilDate::from_days(0).to_yyyymmdd(), "19700101");
    }
}
