//! Text as FDB5's tools print it: requests in MARS's keyword order, counts with thousands
//! separators (eckit's `BigNum`) and sizes in units of 1024 (eckit's `Bytes`).

/// MARS's keywords in the order MARS and FDB5 print a request's (metkit's axis order);
/// others follow, in the order given.
const MARS_ORDER: &[&str] = &[
    "class",
    "country",
    "type",
    "stream",
    "levtype",
    "origin",
    "product",
    "section",
    "method",
    "system",
    "date",
    "refdate",
    "hdate",
    "offsetdate",
    "time",
    "offsettime",
    "anoffset",
    "reference",
    "dataset",
    "step",
    "fcmonth",
    "fcperiod",
    "leadtime",
    "opttime",
    "expver",
    "domain",
    "diagnostic",
    "iteration",
    "quantile",
    "number",
    "levelist",
    "latitude",
    "longitude",
    "range",
    "param",
    "chem",
    "wavelength",
    "timespan",
    "stattype",
    "ident",
    "obstype",
    "instrument",
    "frequency",
    "direction",
    "channel",
    "obsgroup",
    "reportype",
    "activity",
    "experiment",
    "generation",
    "model",
    "realization",
    "resolution",
    "year",
    "month",
    "bcmodel",
    "icmodel",
    "grib",
];

/// `pairs` (keyword, values) in MARS's order.
pub fn in_mars_order(mut pairs: Vec<(String, String)>) -> Vec<(String, String)> {
    let rank = |k: &str| MARS_ORDER.iter().position(|m| *m == k).unwrap_or(MARS_ORDER.len());
    pairs.sort_by_key(|(k, _)| rank(k));
    pairs
}

/// A count with thousands separators: `1,568`.
pub fn big_num(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// The CPU time this process has used so far, in seconds (user and system), as eckit's timers
/// print it; 0 where the system does not say.
pub fn cpu_seconds() -> f64 {
    let mut usage = std::mem::MaybeUninit::<libc::rusage>::zeroed();
    // SAFETY: getrusage fills the struct it is given, which lives until it returns.
    if unsafe { libc::getrusage(libc::RUSAGE_SELF, usage.as_mut_ptr()) } != 0 {
        return 0.0;
    }
    // SAFETY: filled by the successful call above.
    let usage = unsafe { usage.assume_init() };
    let seconds = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    seconds(usage.ru_utime) + seconds(usage.ru_stime)
}

/// A size as eckit prints one: divided by 1024 while at least 1024, with up to six significant
/// digits, then its unit: `0 bytes`, `1 byte`, `1.53125 Kbytes`.
pub fn bytes(n: u64) -> String {
    const UNITS: [&str; 9] = ["", "K", "M", "G", "T", "P", "E", "Z", "Y"];
    let mut value = n as f64;
    let mut unit = 0;
    while value >= 1024.0 && unit < UNITS.len() - 1 {
        value /= 1024.0;
        unit += 1;
    }
    let plural = if value == 1.0 { "" } else { "s" };
    format!("{} {}byte{plural}", six_significant(value), UNITS[unit])
}

/// A number as C++ streams print a double by default: six significant digits, no trailing
/// zeros (the values here are below 1024, never in exponent form).
fn six_significant(value: f64) -> String {
    if value == 0.0 {
        return "0".into();
    }
    let magnitude = value.abs().log10().floor() as i32;
    let decimals = (5 - magnitude).max(0) as usize;
    let text = format!("{value:.decimals$}");
    if text.contains('.') {
        text.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        text
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_and_sizes_read_as_eckit_prints_them() {
        assert_eq!([big_num(0), big_num(999), big_num(1568), big_num(1234567)], ["0", "999", "1,568", "1,234,567"]);
        assert_eq!(bytes(0), "0 bytes");
        assert_eq!(bytes(1), "1 byte");
        assert_eq!(bytes(1568), "1.53125 Kbytes");
        assert_eq!(bytes(1024), "1 Kbyte");
        assert_eq!(bytes(1 << 30), "1 Gbyte");
        assert_eq!(bytes(1_000_000), "976.562 Kbytes");
    }

    #[test]
    fn keywords_come_in_mars_order_and_others_after() {
        let pairs = ["param", "zzz", "expver", "class", "step"].map(|k| (k.to_string(), String::new())).to_vec();
        let order: Vec<String> = in_mars_order(pairs).into_iter().map(|(k, _)| k).collect();
        assert_eq!(order, ["class", "step", "expver", "param", "zzz"]);
    }
}
