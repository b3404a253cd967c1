//! GRIB support through the system ecCodes library: splitting streams into messages
//! ([`scan`]), reading a message's MARS identifier ([`mars_keys`]), setting keys in a message
//! ([`modify`]), resolving parameter names
//! with ecCodes' own definitions ([`install_param_resolver`]), building test fields from
//! ecCodes' samples ([`sample_message`]), and decoding values and grids ([`decode`]).

pub mod decode;
mod ffi;
mod handle;
mod scan;
pub mod simple;

use std::collections::HashMap;
use std::sync::Mutex;

use fieldstore_core::api::FieldRewriter;
use fieldstore_core::error::{Error, ErrorKind, Result};
use fieldstore_core::types::{format_step_minutes, set_param_resolver, ParamResolver};
use fieldstore_core::Key;

pub use handle::{take_errors, Handle};
pub use scan::{scan, MessageSpan};

/// The message with these keys set through ecCodes (FDB5's `fdb-write --modifiers`): each
/// as a string, which ecCodes converts to the key's own type (`expver=0042`, `step=12`,
/// `packingType=grib_ccsds`). The error names the key ecCodes refused.
pub fn modify(message: &[u8], modifiers: &[(String, String)]) -> Result<Vec<u8>> {
    let mut handle = Handle::from_message_copy(message)?;
    for (key, value) in modifiers {
        if let Err(as_string) = handle.set_string(key, value) {
            // Some keys take only numbers.
            match value.parse::<i64>() {
                Ok(number) => handle.set_long(key, number).map_err(|_| as_string)?,
                Err(_) => return Err(as_string),
            }
        }
    }
    handle.message()
}

/// ecCodes' [`FieldRewriter`]: the keys of a GRIB message read through an overlay set in place
/// (FDB5 sets them likewise as it reads); bytes that are no GRIB message stay as they are.
pub struct GribKeysRewriter;

impl FieldRewriter for GribKeysRewriter {
    fn rewrite(&self, message: &mut [u8], keys: &[(&str, &str)]) -> Result<()> {
        if !message.starts_with(b"GRIB") || keys.is_empty() {
            return Ok(());
        }
        let modifiers: Vec<(String, String)> = keys.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
        let rewritten = modify(message, &modifiers)?;
        if rewritten.len() != message.len() {
            return Err(Error::new(
                ErrorKind::Unsupported,
                format!(
                    "its message would be {} bytes with those keys, {} as stored: a field read through an overlay keeps its length",
                    rewritten.len(),
                    message.len()
                ),
            ));
        }
        message.copy_from_slice(&rewritten);
        Ok(())
    }
}

/// The MARS identifier of one GRIB message, from ecCodes' `mars` namespace. `param` is the
/// parameter id (`paramId`), so GRIB1 `130.128` and GRIB2 `130` agree; `step` is the end of
/// the forecast's time range in the unit the message gives (see [`step_minutes`]); ecCodes'
/// internal keys (`_leg_number`, ...) are not MARS keywords and are left out.
pub fn mars_keys(message: &[u8]) -> Result<Key> {
    take_errors();
    let mut handle = Handle::from_message(message).ok_or_else(|| Error::Grib {
        context: "message".into(),
        message: format!("ecCodes cannot decode it ({})", take_errors().join("; ")),
    })?;
    let names: Vec<String> = handle.namespace_keys("mars").into_iter().filter(|name| !name.starts_with('_')).collect();
    if names.is_empty() {
        return Err(Error::Grib {
            context: "message".into(),
            message: "no MARS keys (not an ECMWF-style GRIB? set them with grib_set)".into(),
        });
    }
    let mut values = Vec::with_capacity(names.len());
    for name in &names {
        values.push(match name.as_str() {
            "param" => handle.get_long("paramId")?.to_string(),
            "step" => String::new(), // read last: it changes how ecCodes presents times
            _ => handle.get_string(name)?,
        });
    }
    if let Some(i) = names.iter().position(|n| n == "step") {
        values[i] = format_step_minutes(step_minutes(&mut handle)?);
    }
    let mut key = Key::new();
    for (name, value) in names.into_iter().zip(values) {
        if !value.is_empty() && key.get(&name).is_none() {
            key.push(name, value);
        }
    }
    // ecCodes logs an error and goes on where it cannot read a definition: the keys it then
    // returns may lack one (an ensemble member without `number` would replace another).
    let logged = take_errors();
    if !logged.is_empty() {
        return Err(Error::Grib { context: "message".into(), message: format!("ecCodes reported: {}", logged.join("; ")) });
    }
    Ok(key)
}

/// The step of a message in minutes: the end of its time range (MARS names an accumulation
/// over 0-24 h by step 24), read in minutes whatever unit the message uses. ecCodes' `step`
/// key is given in the message's own unit, which older ecCodes versions (2.28) do not name:
/// a 30-minute step reads `30`, as a 30-hour one does; asking for minutes is exact in all.
/// `stepUnits` is a transient key in ecCodes' definitions (GRIB1 and GRIB2, 2.28 to 2.50):
/// setting it changes how the handle presents times, never the message's bytes, so this is
/// safe on a handle over bytes it does not own.
pub fn step_minutes(handle: &mut Handle<'_>) -> Result<i64> {
    const MINUTES: i64 = 0;
    handle.set_long("stepUnits", MINUTES)?;
    handle.get_long("endStep")
}

/// Builds a GRIB message from an ecCodes sample, setting keys in the given order. Integer
/// values without leading zeros are set as integers, everything else as strings.
pub fn sample_message(sample: &str, keys: &[(&str, &str)]) -> Result<Vec<u8>> {
    let mut h = Handle::from_sample(sample)?;
    for (k, v) in keys {
        let integer = v.parse::<i64>().ok().filter(|_| !(v.len() > 1 && v.starts_with('0')));
        match integer {
            Some(i) => h.set_long(k, i)?,
            None => h.set_string(k, v)?,
        }
    }
    h.message()
}

/// The message with a smoothly varying field of values packed at `bits_per_value` (sample
/// fields are constant, which packs to almost nothing): realistic sizes for tests and
/// benchmarks.
pub fn fill_values(message: &[u8], bits_per_value: i64) -> Result<Vec<u8>> {
    let mut h = Handle::from_message_copy(message)?;
    let n = h.get_long("numberOfValues")? as usize;
    let values: Vec<f64> = (0..n).map(|i| 250.0 + 30.0 * ((i as f64) * 0.001).sin() + (i % 97) as f64 * 0.01).collect();
    h.set_long("bitsPerValue", bits_per_value)?;
    h.set_double_array("values", &values)?;
    h.message()
}

/// Parameter names resolved by ecCodes, as metkit resolves them: a sample with ECMWF as its
/// centre is given the `shortName` and asked for its `paramId`; GRIB1 first (its tables name
/// accumulated and extreme fields, `tp`, `mx2t`, which a plain GRIB2 product cannot hold),
/// then GRIB2 (for parameters only it has). Results are cached.
struct EccodesParams {
    cache: Mutex<HashMap<String, Option<i64>>>,
}

impl EccodesParams {
    fn resolve(name: &str) -> Option<i64> {
        // ecCodes' short names are ASCII; other bytes crash some ecCodes versions' lookups.
        if name.is_empty() || name.len() > 64 || !name.bytes().all(|b| b.is_ascii_alphanumeric() || b"_-.+".contains(&b)) {
            return None;
        }
        in_ecmwf_samples(|h| {
            h.set_string("shortName", name).ok()?;
            let id = h.get_long("paramId").ok()?;
            // ecCodes falls back to "unknown" shortNames; only accept an exact round trip.
            (h.get_string("shortName").ok()? == name).then_some(id)
        })
    }
}

impl ParamResolver for EccodesParams {
    fn param_id(&self, name: &str) -> Option<i64> {
        let mut cache = self.cache.lock().unwrap_or_else(|p| p.into_inner());
        *cache.entry(name.to_string()).or_insert_with(|| Self::resolve(name))
    }
}

/// Lets requests name parameters (`param=t/2t`) as ecCodes does.
pub fn install_param_resolver() {
    set_param_resolver(Box::new(EccodesParams { cache: Mutex::new(HashMap::new()) }));
}

/// The short name ecCodes gives a parameter id (`130` -> `t`, `167` -> `2t`), as
/// [`in_ecmwf_samples`] finds it; `None` for a value that is no id ecCodes knows. Answers are
/// cached.
pub fn param_short_name(id: &str) -> Option<String> {
    static NAMES: Mutex<Option<HashMap<i64, Option<String>>>> = Mutex::new(None);
    let id: i64 = id.parse().ok().filter(|id| *id > 0)?;
    let mut names = NAMES.lock().unwrap_or_else(|p| p.into_inner());
    let names = names.get_or_insert_with(HashMap::new);
    names
        .entry(id)
        .or_insert_with(|| {
            in_ecmwf_samples(|h| {
                h.set_long("paramId", id).ok()?;
                h.get_string("shortName").ok().filter(|name| name != "unknown" && !name.is_empty())
            })
        })
        .clone()
}

/// What `ask` finds in ecCodes' GRIB 1 sample with ECMWF as its centre, else in its GRIB 2
/// sample (GRIB 1's tables name accumulated and extreme fields that a plain GRIB 2 product
/// cannot hold; some parameters only GRIB 2 has). What one edition does not know ecCodes logs:
/// not anyone's error, so the log is emptied.
fn in_ecmwf_samples<T>(ask: impl Fn(&mut Handle<'static>) -> Option<T>) -> Option<T> {
    let in_sample = |sample: &str| {
        let mut h = Handle::from_sample(sample).ok()?;
        h.set_long("centre", 98).ok()?;
        ask(&mut h)
    };
    let found = in_sample("GRIB1").or_else(|| in_sample("GRIB2"));
    take_errors();
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parameter_ids_are_named_as_ecodes_names_them() {
        assert_eq!(param_short_name("130").as_deref(), Some("t"));
        assert_eq!(param_short_name("167").as_deref(), Some("2t"));
        assert_eq!(param_short_name("228").as_deref(), Some("tp"));
        assert_eq!(param_short_name("999999"), None);
        assert_eq!(param_short_name("t"), None);
        assert_eq!(param_short_name("-1"), None);
    }

    fn ecmwf(sample: &str, extra: &[(&str, &str)]) -> Vec<u8> {
        let mut keys = vec![
            ("centre", "98"),
            ("setLocalDefinition", "1"),
            ("localDefinitionNumber", "1"),
            ("class", "od"),
            ("stream", "oper"),
            ("type", "fc"),
            ("expver", "0001"),
            ("date", "20231201"),
            ("time", "1200"),
        ];
        keys.extend_from_slice(extra);
        sample_message(sample, &keys).unwrap()
    }

    #[test]
    fn steps_are_read_in_the_unit_the_message_gives() {
        let sfc = |extra: &[(&str, &str)]| {
            let mut keys = vec![("levtype", "sfc")];
            keys.extend_from_slice(extra);
            mars_keys(&ecmwf("regular_ll_sfc_grib2", &keys)).unwrap().get("step").map(String::from)
        };
        // ecCodes 2.28 reads both of the first two as "30".
        assert_eq!(sfc(&[("paramId", "167"), ("step", "30")]).as_deref(), Some("30"));
        assert_eq!(sfc(&[("paramId", "167"), ("stepUnits", "m"), ("step", "30")]).as_deref(), Some("30m"));
        assert_eq!(sfc(&[("paramId", "167"), ("stepUnits", "m"), ("step", "90")]).as_deref(), Some("1h30m"));
        assert_eq!(sfc(&[("paramId", "167"), ("indicatorOfUnitOfTimeRange", "2"), ("forecastTime", "2")]).as_deref(), Some("48"));
        let accumulated = [("productDefinitionTemplateNumber", "8"), ("paramId", "228"), ("stepType", "accum")];
        assert_eq!(sfc(&[accumulated.as_slice(), &[("stepRange", "0-24")]].concat()).as_deref(), Some("24"));
        // ecCodes 2.28 reads this one as step 0, with an error on standard error.
        assert_eq!(sfc(&[accumulated.as_slice(), &[("stepUnits", "m"), ("stepRange", "0-45")]].concat()).as_deref(), Some("45m"));
        assert!(take_errors().is_empty());
    }

    #[test]
    fn wave_spectra_have_no_internal_keys() {
        let keys = [("centre", "98"), ("setLocalDefinition", "1"), ("localDefinitionNumber", "13"), ("class", "od"), ("stream", "wave")];
        let more = [
            ("type", "fc"),
            ("expver", "0001"),
            ("levtype", "sfc"),
            ("step", "6"),
            ("paramId", "140251"),
            ("frequency", "3"),
            ("direction", "2"),
        ];
        let spectrum = sample_message("regular_ll_sfc_grib1", &[keys.as_slice(), &more].concat()).unwrap();
        let keys = mars_keys(&spectrum).unwrap();
        assert!(keys.keywords().all(|k| !k.starts_with('_')), "{keys}");
        assert_eq!((keys.get("param"), keys.get("frequency"), keys.get("direction")), (Some("140251"), Some("3"), Some("2")));
    }

    #[test]
    fn mars_keys_of_grib1_and_grib2_agree_on_param_ids() {
        let g1 = ecmwf("GRIB1", &[("step", "12"), ("levtype", "pl"), ("level", "500"), ("paramId", "130")]);
        let g2 = ecmwf("GRIB2", &[("step", "12"), ("levtype", "pl"), ("level", "500"), ("paramId", "130")]);
        for msg in [&g1, &g2] {
            let k = mars_keys(msg).unwrap();
            assert_eq!(k.get("param"), Some("130"), "{k}");
            assert_eq!(k.get("levelist"), Some("500"));
            assert_eq!(k.get("class"), Some("od"));
            assert_eq!(k.get("expver"), Some("0001"));
        }
    }

    #[test]
    fn scanning_finds_messages_and_names_damage() {
        let a = ecmwf("GRIB2", &[("step", "0"), ("levtype", "sfc"), ("paramId", "167")]);
        let b = ecmwf("GRIB1", &[("step", "6"), ("levtype", "sfc"), ("paramId", "167")]);
        let mut both = a.clone();
        both.extend_from_slice(&b);
        let spans = scan(&both, "t").unwrap();
        assert_eq!(spans.len(), 2);
        assert_eq!((spans[1].offset, spans[1].length, spans[1].edition), (a.len(), b.len(), 1));
        let err = scan(&both[..both.len() - 3], "t").unwrap_err().to_string();
        assert!(err.contains("message 2") && err.contains("truncated"), "{err}");
        let mut junk = both.clone();
        junk.extend_from_slice(b"garbage");
        assert!(scan(&junk, "t").unwrap_err().to_string().contains("not a GRIB message"));
        let mut no_end = a.clone();
        let n = no_end.len();
        no_end[n - 1] = b'X';
        assert!(scan(&no_end, "t").unwrap_err().to_string().contains("7777"));
    }

    #[test]
    fn grib1_messages_over_8_mib_are_found_whole() {
        let small = ecmwf("reduced_gg_pl_1280_grib1", &[("step", "0"), ("levtype", "sfc"), ("paramId", "167")]);
        let large = fill_values(&small, 16).unwrap();
        assert!(large.len() > 8 << 20, "{} bytes", large.len());
        assert_ne!(large[4] & 0x80, 0, "ecCodes used the large-message length encoding");
        let mut two = large.clone();
        two.extend_from_slice(&small);
        let spans = scan(&two, "t").unwrap();
        assert_eq!(spans.iter().map(|s| s.length).collect::<Vec<_>>(), [large.len(), small.len()]);
        assert_eq!(mars_keys(&large).unwrap().get("param"), Some("167"));
        assert!(scan(&large[..large.len() - 100], "t").unwrap_err().to_string().contains("truncated"));
    }

    #[test]
    fn parameter_names_resolve_through_eccodes() {
        install_param_resolver();
        let r = EccodesParams { cache: Mutex::new(HashMap::new()) };
        assert_eq!(r.param_id("t"), Some(130));
        assert_eq!(r.param_id("2t"), Some(167));
        assert_eq!(r.param_id("no_such_param_name"), None);
        assert_eq!(r.param_id("é"), None, "not passed to ecCodes, which crashed on it");
        for (name, id) in [("tp", 228), ("lsp", 142), ("10fg", 49), ("mx2t", 201), ("cp", 143), ("swh", 140229), ("2dfd", 140251)] {
            assert_eq!(r.param_id(name), Some(id), "{name}");
        }
        assert!(take_errors().is_empty(), "ecCodes' messages about names it does not know are not kept");
    }
}
