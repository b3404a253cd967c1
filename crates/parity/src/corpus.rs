//! The differential test's corpus: GRIB messages shaped like ECMWF's operational data, made
//! with ecCodes from its own samples (nothing large is committed). It covers what real data
//! sends through FDB5's schema: streams oper, scda, enfo, waef, wave, mmsf, mnth, moda; level
//! types sfc, pl, ml, pt, pv; GRIB1 and GRIB2; steps in minutes, hours and days and step
//! ranges; 2-D wave spectra; 50 ensemble members; 137 model levels; upper-case values; a few
//! 5 MiB fields; and, in a second batch, replacements (GRIB1 fields replaced by GRIB2 ones).

use std::path::{Path, PathBuf};

use anyhow::Context;
use fieldstore_grib::{fill_values, sample_message};

/// One message to make: an ecCodes sample and the keys to set on it, in order.
#[derive(Clone, Debug)]
pub struct FieldSpec {
    /// The ecCodes sample to start from.
    pub template: &'static str,
    /// The ecCodes keys to set and their values, in the order they are set.
    pub keys: Vec<(&'static str, String)>,
    /// Fill with varying values at this many bits per value (samples are constant fields).
    pub fill_bits: Option<i64>,
}

/// Messages archived together (one archive call and one flush each, in order).
#[derive(Clone, Debug)]
pub struct Batch {
    /// Names the batch's GRIB file (`NN-NAME.grib`).
    pub name: &'static str,
    /// The messages, in the order they are archived.
    pub fields: Vec<FieldSpec>,
}

/// The identifying keys every ECMWF field sets first: the local section, then MARS keys.
fn ecmwf(template: &'static str, local_definition: u32, keys: &[(&'static str, &str)]) -> FieldSpec {
    let mut all: Vec<(&'static str, String)> =
        vec![("centre", "98".into()), ("setLocalDefinition", "1".into()), ("localDefinitionNumber", local_definition.to_string())];
    all.extend(keys.iter().map(|(k, v)| (*k, v.to_string())));
    FieldSpec { template, keys: all, fill_bits: None }
}

/// `from/to/by` as strings.
fn range(from: i64, to: i64, by: i64) -> Vec<String> {
    (from..=to).step_by(by as usize).map(|v| v.to_string()).collect()
}

/// Deterministic forecast base keys of one data set.
struct Base {
    stream: &'static str,
    kind: &'static str,
    expver: &'static str,
    date: &'static str,
    time: &'static str,
}

impl Base {
    fn keys(&self) -> Vec<(&'static str, &str)> {
        vec![
            ("class", "od"),
            ("stream", self.stream),
            ("type", self.kind),
            ("expver", self.expver),
            ("date", self.date),
            ("time", self.time),
        ]
    }
}

const OPER: Base = Base { stream: "oper", kind: "fc", expver: "0001", date: "20231201", time: "1200" };

/// Pressure-level forecasts, GRIB2: several data sets, levels given top-down and bottom-up.
fn oper_pressure_levels(out: &mut Vec<FieldSpec>) {
    for (date, time) in [("20231201", "0"), ("20231201", "1200"), ("20231202", "0")] {
        let base = Base { date, time, ..OPER };
        for step in range(0, 24, 6).into_iter().chain(["48".to_string()]) {
            for level in ["1000", "850", "500", "250", "50"] {
                for param in ["130", "131", "157"] {
                    let mut keys = base.keys();
                    keys.extend([("step", step.as_str()), ("levtype", "pl"), ("level", level), ("paramId", param)]);
                    out.push(ecmwf("regular_ll_pl_grib2", 1, &keys));
                }
            }
        }
    }
}

/// Surface forecasts, GRIB1 (some replaced by GRIB2 later), 0 to 48 h every 6 h.
fn oper_surface_grib1(out: &mut Vec<FieldSpec>) {
    for step in range(0, 48, 6) {
        for param in ["167", "151", "165", "166"] {
            let mut keys = OPER.keys();
            keys.extend([("step", step.as_str()), ("levtype", "sfc"), ("paramId", param)]);
            out.push(ecmwf("regular_ll_sfc_grib1", 1, &keys));
        }
    }
}

/// Surface fields with steps in minutes and days and accumulated / extreme fields over step
/// ranges (GRIB2 says the unit of each).
fn oper_steps_with_units(out: &mut Vec<FieldSpec>) {
    let base = Base { time: "0", ..OPER };
    let sfc = |extra: &[(&'static str, &str)]| {
        let mut keys = base.keys();
        keys.push(("levtype", "sfc"));
        keys.extend_from_slice(extra);
        ecmwf("regular_ll_sfc_grib2", 1, &keys)
    };
    // 30 h, 30 min and 90 min: three different steps.
    out.push(sfc(&[("paramId", "167"), ("step", "30")]));
    for minutes in ["15", "30", "60", "90", "150"] {
        out.push(sfc(&[("paramId", "167"), ("stepUnits", "m"), ("step", minutes)]));
    }
    // 1 and 2 days, in days.
    for days in ["1", "2"] {
        out.push(sfc(&[("paramId", "167"), ("indicatorOfUnitOfTimeRange", "2"), ("forecastTime", days)]));
    }
    // Accumulations (GRIB2, a statistical product template) and extremes (GRIB1) over step
    // ranges: MARS names them by their end step.
    for (param, kind) in [("228", "accum"), ("142", "accum")] {
        for end in ["6", "12", "24"] {
            let range = format!("0-{end}");
            out.push(sfc(&[("productDefinitionTemplateNumber", "8"), ("paramId", param), ("stepType", kind), ("stepRange", &range)]));
        }
    }
    out.push(sfc(&[
        ("productDefinitionTemplateNumber", "8"),
        ("paramId", "228"),
        ("stepType", "accum"),
        ("stepUnits", "m"),
        ("stepRange", "0-45"),
    ]));
    for (param, kind) in [("49", "max"), ("201", "max"), ("202", "min")] {
        for end in ["6", "12", "24"] {
            let range = format!("0-{end}");
            let mut keys = base.keys();
            keys.extend([("levtype", "sfc"), ("paramId", param), ("stepType", kind), ("stepRange", &range)]);
            out.push(ecmwf("regular_ll_sfc_grib1", 1, &keys));
        }
    }
}

/// 137 model levels of two parameters.
fn oper_model_levels(out: &mut Vec<FieldSpec>) {
    let base = Base { time: "0", ..OPER };
    for level in range(1, 137, 1) {
        for param in ["130", "133"] {
            let mut keys = base.keys();
            keys.extend([("step", "0"), ("levtype", "ml"), ("level", level.as_str()), ("paramId", param)]);
            out.push(ecmwf("reduced_gg_ml_grib2", 1, &keys));
        }
    }
}

/// Analyses on potential-temperature and potential-vorticity levels.
fn oper_pt_pv(out: &mut Vec<FieldSpec>) {
    let base = Base { kind: "an", time: "0", ..OPER };
    for (levtype, levels, params) in [("pt", &["320", "330", "350"][..], &["60", "131"][..]), ("pv", &["2000"][..], &["3", "54"][..])] {
        for level in levels {
            for param in params {
                let mut keys = base.keys();
                keys.extend([("step", "0"), ("levtype", levtype), ("level", level), ("paramId", param)]);
                out.push(ecmwf("regular_ll_pl_grib1", 1, &keys));
            }
        }
    }
}

/// The short-cutoff stream.
fn scda(out: &mut Vec<FieldSpec>) {
    let base = Base { stream: "scda", time: "600", ..OPER };
    for step in range(0, 12, 3) {
        let mut keys = base.keys();
        keys.extend([("step", step.as_str()), ("levtype", "sfc"), ("paramId", "167")]);
        out.push(ecmwf("regular_ll_sfc_grib1", 1, &keys));
    }
}

/// The ensemble: 50 perturbed members and the control, surface and pressure levels, GRIB2.
fn enfo(out: &mut Vec<FieldSpec>) {
    let pf = Base { stream: "enfo", kind: "pf", time: "0", ..OPER };
    for number in range(1, 50, 1) {
        for step in ["0", "6", "12"] {
            let mut keys = pf.keys();
            keys.extend([("step", step), ("levtype", "sfc"), ("paramId", "167"), ("productDefinitionTemplateNumber", "1")]);
            keys.push(("number", number.as_str()));
            out.push(ecmwf("regular_ll_sfc_grib2", 1, &keys));
        }
    }
    for number in range(1, 10, 1) {
        for level in ["850", "500"] {
            let mut keys = pf.keys();
            keys.extend([("step", "12"), ("levtype", "pl"), ("level", level), ("paramId", "130")]);
            keys.extend([("productDefinitionTemplateNumber", "1"), ("number", number.as_str())]);
            out.push(ecmwf("regular_ll_pl_grib2", 1, &keys));
        }
    }
    let cf = Base { kind: "cf", ..pf };
    for step in ["0", "6", "12"] {
        let mut keys = cf.keys();
        keys.extend([("step", step), ("levtype", "sfc"), ("paramId", "167"), ("productDefinitionTemplateNumber", "1"), ("number", "0")]);
        out.push(ecmwf("regular_ll_sfc_grib2", 1, &keys));
    }
}

/// Wave forecasts, the wave ensemble, and 2-D wave spectra (GRIB1, ECMWF local definition
/// 13: frequency and direction).
fn waves(out: &mut Vec<FieldSpec>) {
    let wave = Base { stream: "wave", time: "0", ..OPER };
    for step in ["0", "6", "12"] {
        for param in ["140229", "140232"] {
            let mut keys = wave.keys();
            keys.extend([("step", step), ("levtype", "sfc"), ("paramId", param)]);
            out.push(ecmwf("regular_ll_sfc_grib1", 1, &keys));
        }
        for frequency in ["1", "2", "3"] {
            for direction in ["1", "2", "3", "4"] {
                let mut keys = wave.keys();
                keys.extend([("step", step), ("levtype", "sfc"), ("paramId", "140251")]);
                keys.extend([("frequency", frequency), ("direction", direction)]);
                out.push(ecmwf("regular_ll_sfc_grib1", 13, &keys));
            }
        }
    }
    let waef = Base { stream: "waef", kind: "pf", time: "0", ..OPER };
    for number in range(1, 10, 1) {
        for step in ["0", "6"] {
            let mut keys = waef.keys();
            keys.extend([("step", step), ("levtype", "sfc"), ("paramId", "140229"), ("number", number.as_str())]);
            out.push(ecmwf("regular_ll_sfc_grib1", 1, &keys));
        }
    }
}

/// Seasonal forecasts (mmsf, GRIB1 local definition 16: system, method, number) and monthly
/// means and climate (mnth with dates read as months, moda).
fn monthly_and_seasonal(out: &mut Vec<FieldSpec>) {
    let mmsf = Base { stream: "mmsf", time: "0", date: "20231101", ..OPER };
    for number in range(0, 4, 1) {
        for step in ["744", "1464"] {
            let mut keys = mmsf.keys();
            keys.extend([("step", step), ("levtype", "sfc"), ("paramId", "167"), ("number", number.as_str())]);
            keys.extend([("system", "5"), ("method", "1")]);
            out.push(ecmwf("regular_ll_sfc_grib1", 16, &keys));
        }
    }
    for (kind, date) in [("cl", "20231101"), ("cl", "20231201"), ("an", "20231101")] {
        let mnth = Base { stream: "mnth", kind, date, time: "0", ..OPER };
        for param in ["167", "151"] {
            let mut keys = mnth.keys();
            keys.extend([("levtype", "sfc"), ("paramId", param)]);
            out.push(ecmwf("regular_ll_sfc_grib1", 1, &keys));
        }
    }
    let moda = Base { stream: "moda", kind: "an", date: "20231101", time: "0", ..OPER };
    for param in ["167", "151"] {
        let mut keys = moda.keys();
        keys.extend([("levtype", "sfc"), ("paramId", param)]);
        out.push(ecmwf("regular_ll_sfc_grib1", 1, &keys));
    }
}

/// An experiment whose version is written in upper case in the GRIB.
fn upper_case_expver(out: &mut Vec<FieldSpec>) {
    let base = Base { expver: "ABCD", time: "0", ..OPER };
    for step in ["0", "6"] {
        let mut keys = base.keys();
        keys.extend([("step", step), ("levtype", "sfc"), ("paramId", "167")]);
        out.push(ecmwf("regular_ll_sfc_grib2", 1, &keys));
    }
}

/// Three fields of about 5 MiB (O640-like reduced Gaussian grid, 24 bits per value).
fn large_fields(out: &mut Vec<FieldSpec>) {
    let base = Base { date: "20231203", time: "0", ..OPER };
    for step in ["0", "6", "12"] {
        let mut keys = base.keys();
        keys.extend([("step", step), ("levtype", "sfc"), ("paramId", "167")]);
        let mut spec = ecmwf("reduced_gg_pl_640_grib2", 1, &keys);
        spec.fill_bits = Some(24);
        out.push(spec);
    }
}

/// The second batch: pressure-level fields archived again with other values, a whole
/// collocation replaced, and GRIB1 surface fields replaced by GRIB2 ones.
fn replacements(out: &mut Vec<FieldSpec>) {
    for step in ["0", "6"] {
        for level in ["1000", "500"] {
            let mut keys = OPER.keys();
            keys.extend([("step", step), ("levtype", "pl"), ("level", level), ("paramId", "130")]);
            let mut spec = ecmwf("regular_ll_pl_grib2", 1, &keys);
            spec.fill_bits = Some(12);
            out.push(spec);
        }
    }
    // Every field of one collocation (potential vorticity), so purge can reclaim its files.
    let analysis = Base { kind: "an", time: "0", ..OPER };
    for param in ["3", "54"] {
        let mut keys = analysis.keys();
        keys.extend([("step", "0"), ("levtype", "pv"), ("level", "2000"), ("paramId", param)]);
        let mut spec = ecmwf("regular_ll_pl_grib1", 1, &keys);
        spec.fill_bits = Some(12);
        out.push(spec);
    }
    for step in ["0", "6", "12"] {
        for param in ["167", "151"] {
            let mut keys = OPER.keys();
            keys.extend([("step", step), ("levtype", "sfc"), ("paramId", param)]);
            out.push(ecmwf("regular_ll_sfc_grib2", 1, &keys));
        }
    }
}

/// The corpus, batch by batch.
pub fn batches() -> Vec<Batch> {
    let mut first = Vec::new();
    for add in [
        oper_pressure_levels,
        oper_surface_grib1,
        oper_steps_with_units,
        oper_model_levels,
        oper_pt_pv,
        scda,
        enfo,
        waves,
        monthly_and_seasonal,
        upper_case_expver,
        large_fields,
    ] {
        add(&mut first);
    }
    let mut second = Vec::new();
    replacements(&mut second);
    vec![Batch { name: "first", fields: first }, Batch { name: "replacements", fields: second }]
}

impl FieldSpec {
    /// The encoded message.
    pub fn encode(&self) -> anyhow::Result<Vec<u8>> {
        let keys: Vec<(&str, &str)> = self.keys.iter().map(|(k, v)| (*k, v.as_str())).collect();
        let message = sample_message(self.template, &keys).with_context(|| format!("making {self}"))?;
        match self.fill_bits {
            Some(bits) => fill_values(&message, bits).with_context(|| format!("filling {self}")),
            None => Ok(message),
        }
    }
}

impl std::fmt::Display for FieldSpec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let keys: Vec<String> = self.keys.iter().map(|(k, v)| format!("{k}={v}")).collect();
        write!(f, "{} with {}", self.template, keys.join(","))
    }
}

/// Writes each batch to `DIR/NN-name.grib` and returns the files in archive order.
pub fn write(dir: &Path) -> anyhow::Result<Vec<PathBuf>> {
    let mut files = Vec::new();
    for (i, batch) in batches().iter().enumerate() {
        let mut bytes = Vec::new();
        for spec in &batch.fields {
            bytes.extend(spec.encode()?);
        }
        let path = dir.join(format!("{:02}-{}.grib", i + 1, batch.name));
        std::fs::write(&path, bytes).with_context(|| format!("writing {}", path.display()))?;
        files.push(path);
    }
    Ok(files)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_corpus_covers_what_the_issue_names() {
        let all: Vec<FieldSpec> = batches().into_iter().flat_map(|b| b.fields).collect();
        let has = |k: &str, v: &str| all.iter().filter(|f| f.keys.iter().any(|(kk, vv)| *kk == k && vv == v)).count();
        assert_eq!(has("levtype", "ml"), 274);
        assert!(has("number", "50") >= 1, "50 members");
        assert!(has("localDefinitionNumber", "13") >= 12, "2-D wave spectra");
        assert!(has("stepUnits", "m") >= 4 && has("indicatorOfUnitOfTimeRange", "2") >= 2);
        for stream in ["oper", "scda", "enfo", "waef", "wave", "mmsf", "mnth", "moda"] {
            assert!(has("stream", stream) > 0, "{stream}");
        }
        for levtype in ["sfc", "pl", "ml", "pt", "pv"] {
            assert!(has("levtype", levtype) > 0, "{levtype}");
        }
        assert!(all.iter().any(|f| f.template.contains("grib1")) && all.iter().any(|f| f.template.contains("grib2")));
    }
}
