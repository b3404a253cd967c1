//! What the properties and the backends' own tests share: stores in a directory, payloads
//! that can be checked from their identifiers, requests, retrieves, and a GRIB corpus made
//! from ecCodes' samples.

use std::io::Read;
use std::path::Path;

use fieldstore::{Config, FieldStore, Key, Request};

/// A store (default schema) rooted at `root`.
pub fn open_at(root: &Path) -> FieldStore {
    let yaml =
        format!("catalogue: {{type: posix, root: {0}, create: true}}\nstore: {{type: posix, root: {0}, create: true}}\n", root.display());
    fieldstore::open(&Config::parse("test", &yaml).unwrap()).unwrap()
}

/// The store a config file describes, opened by this build's backends.
pub fn open_config(path: &Path) -> FieldStore {
    crate::open_config_with(path, fieldstore::BACKENDS)
}

/// Bytes derived from an identifier, so a reader can check what it got.
pub fn payload(identifier: &Key, size: usize) -> Vec<u8> {
    let text = format!("{identifier}|");
    text.as_bytes().iter().cycle().take(size.max(text.len())).copied().collect()
}

/// A request, parsed (it must be valid).
pub fn request(text: &str) -> Request {
    Request::parse(text).unwrap()
}

/// Retrieves a request's bytes, or the explanation of why nothing matched.
pub fn retrieve(fs: &FieldStore, text: &str) -> Result<Vec<u8>, String> {
    let (mut reader, why) = fs.retrieve(&request(text)).map_err(|e| e.report().to_string())?;
    if let Some(why) = why {
        return Err(why);
    }
    let mut out = Vec::new();
    reader.read_to_end(&mut out).map_err(|e| fieldstore::Report::of(&e).to_string())?;
    Ok(out)
}

fn ecmwf_keys<'a>(stream: &'a str, kind: &'a str, levtype: &'a str) -> Vec<(&'a str, &'a str)> {
    vec![
        ("centre", "98"),
        ("setLocalDefinition", "1"),
        ("localDefinitionNumber", "1"),
        ("class", "od"),
        ("stream", stream),
        ("type", kind),
        ("expver", "0001"),
        ("date", "20231201"),
        ("time", "1200"),
        ("levtype", levtype),
    ]
}

/// One GRIB corpus entry: a message and a description.
pub struct CorpusField {
    /// What the message is: its ecCodes template and the keys set on it.
    pub what: String,
    /// The GRIB message.
    pub bytes: Vec<u8>,
}

/// (template, stream, type, levtype, levels, params, ensemble numbers)
type CorpusCase =
    (&'static str, &'static str, &'static str, &'static str, &'static [&'static str], &'static [&'static str], &'static [&'static str]);

/// GRIB1 and GRIB2; sfc, pl and ml; deterministic and ensemble; several streams.
pub fn corpus() -> Vec<CorpusField> {
    let mut out = Vec::new();
    let cases: &[CorpusCase] = &[
        // template, stream, type, levtype, levels, params, numbers
        ("GRIB1", "oper", "fc", "pl", &["1000", "500", "850"], &["130", "131"], &[]),
        ("GRIB2", "oper", "an", "sfc", &[], &["167", "151"], &[]),
        ("reduced_gg_ml_grib2", "oper", "fc", "ml", &["1", "137"], &["133"], &[]),
        ("reduced_gg_ml_grib1", "scda", "fc", "ml", &["60"], &["130"], &[]),
        ("GRIB2", "enfo", "pf", "pl", &["500"], &["130"], &["1", "2", "10"]),
        ("GRIB1", "enfo", "pf", "sfc", &[], &["167"], &["3"]),
        ("gg_sfc_grib2", "wave", "fc", "sfc", &[], &["140229"], &[]),
    ];
    for (template, stream, kind, levtype, levels, params, numbers) in cases {
        let grib2 = !template.contains("grib1") && *template != "GRIB1";
        let levels: Vec<&str> = if levels.is_empty() { vec![""] } else { levels.to_vec() };
        let numbers: Vec<&str> = if numbers.is_empty() { vec![""] } else { numbers.to_vec() };
        for step in ["0", "6", "12"] {
            for level in &levels {
                for param in *params {
                    for number in &numbers {
                        let mut keys = ecmwf_keys(stream, kind, levtype);
                        keys.push(("step", step));
                        if !level.is_empty() {
                            keys.push(("level", level));
                        }
                        keys.push(("paramId", param));
                        if !number.is_empty() {
                            if grib2 {
                                keys.push(("productDefinitionTemplateNumber", "1"));
                            }
                            keys.push(("number", number));
                        }
                        let bytes =
                            fieldstore::grib::sample_message(template, &keys).unwrap_or_else(|e| panic!("{template} {keys:?}: {e}"));
                        out.push(CorpusField { what: format!("{template} {keys:?}"), bytes });
                    }
                }
            }
        }
    }
    out
}
