//! Comparing two stores, or two parts of one, field by field (FDB5's `fdb-compare`): first the
//! MARS keys each holds, then, where both hold the same fields, their GRIB headers and, with
//! [`CompareScope::All`], their values within a tolerance. The first store is the reference,
//! the second the test. Where the two requests give a keyword different values (comparing
//! `expver=abcd` with `expver=1234` of one store), the test's value stands for the
//! reference's.

use std::collections::BTreeMap;
use std::io::Read;

use serde::Serialize;

use crate::{FieldEntry, FieldStore, ListOptions, Request, Result};

/// How much of each field is compared.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum CompareScope {
    /// The MARS keys only: which fields each holds.
    #[default]
    Mars,
    /// Also the GRIB headers of the fields both hold.
    HeaderOnly,
    /// Also their values.
    All,
}

/// How two GRIB messages are compared.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum GribComparison {
    /// Key by key through ecCodes (the keys the messages code, computed ones left out), and
    /// values as numbers within the tolerance.
    #[default]
    GribKeys,
    /// Byte for byte, section by section: the header sections, and with [`CompareScope::All`]
    /// the data section; the first that differs is named (`section N`).
    BitIdentical,
}

/// What a comparison compares.
#[derive(Clone, Debug)]
pub struct CompareOptions {
    /// How much of each field.
    pub scope: CompareScope,
    /// How messages are compared.
    pub comparison: GribComparison,
    /// Two values differ where `|a - b| > tolerance × max(|a|, |b|, 1)`.
    pub tolerance: f64,
    /// Fields whose key has any of these `keyword=value` pairs are left out of both sides.
    pub ignore_fields: Vec<(String, String)>,
    /// Only these GRIB keys are compared (all if empty).
    pub select_keys: Vec<String>,
    /// These GRIB keys are not compared.
    pub ignore_keys: Vec<String>,
}

impl Default for CompareOptions {
    fn default() -> Self {
        CompareOptions {
            scope: CompareScope::default(),
            comparison: GribComparison::default(),
            tolerance: 10.0 * f64::EPSILON,
            ignore_fields: Vec::new(),
            select_keys: Vec::new(),
            ignore_keys: Vec::new(),
        }
    }
}

/// A field's MARS key: every keyword with a value, sorted.
pub type MarsKey = BTreeMap<String, String>;

/// What a comparison found.
#[derive(Debug, Default, Serialize)]
pub struct CompareReport {
    /// Fields the first request names in the reference, and the second in the test.
    pub reference_fields: u64,
    /// See `reference_fields`.
    pub test_fields: u64,
    /// Keywords the two requests give different values: (reference's, test's).
    pub request_differences: BTreeMap<String, (String, String)>,
    /// Fields only the reference holds.
    pub only_in_reference: Vec<MarsKey>,
    /// Fields only the test holds (under its own keys, matched under the reference's values
    /// of `request_differences`).
    pub only_in_test: Vec<MarsKey>,
    /// Fields whose messages were compared (none unless both sides hold the same fields).
    pub compared: u64,
    /// Those that differ, and how.
    pub mismatches: Vec<FieldMismatch>,
}

impl CompareReport {
    /// Whether the two sides hold the same fields, the same as far as compared.
    pub fn same(&self) -> bool {
        self.only_in_reference.is_empty() && self.only_in_test.is_empty() && self.mismatches.is_empty()
    }
}

/// One field both sides hold, whose messages differ.
#[derive(Debug, Serialize)]
pub struct FieldMismatch {
    /// Its MARS key (the reference's).
    pub key: MarsKey,
    /// Each difference: a GRIB key, `values`, or `bytes`.
    pub differences: Vec<KeyDifference>,
}

/// A GRIB key whose value differs between the two messages (`None`: the message lacks it).
#[derive(Debug, Serialize)]
pub struct KeyDifference {
    /// The key.
    pub key: String,
    /// The reference's value.
    pub reference: Option<String>,
    /// The test's value.
    pub test: Option<String>,
}

/// Compares what `request1` names in `reference` with what `request2` names in `test`.
pub fn compare(
    reference: &FieldStore,
    test: &FieldStore,
    request1: &Request,
    request2: &Request,
    options: &CompareOptions,
) -> Result<CompareReport> {
    let mut report = CompareReport { request_differences: request_differences(request1, request2), ..CompareReport::default() };
    let reference_fields = fields_by_key(reference, request1, options, &BTreeMap::new())?;
    let test_fields = fields_by_key(test, request2, options, &report.request_differences)?;
    report.reference_fields = reference_fields.len() as u64;
    report.test_fields = test_fields.len() as u64;
    report.only_in_reference = reference_fields.keys().filter(|k| !test_fields.contains_key(*k)).cloned().collect();
    report.only_in_test = test_fields.iter().filter(|(k, _)| !reference_fields.contains_key(*k)).map(|(_, (own, _))| own.clone()).collect();
    // As FDB5: messages are compared once both sides hold the same fields.
    if options.scope == CompareScope::Mars || !report.only_in_reference.is_empty() || !report.only_in_test.is_empty() {
        return Ok(report);
    }
    for (key, (_, reference_field)) in &reference_fields {
        let Some((_, test_field)) = test_fields.get(key) else { continue };
        let (a, b) = (bytes_of(reference, reference_field)?, bytes_of(test, test_field)?);
        report.compared += 1;
        let differences = match options.comparison {
            GribComparison::BitIdentical => bit_differences(&a, &b, options.scope)?,
            GribComparison::GribKeys => key_differences(&a, &b, options)?,
        };
        if !differences.is_empty() {
            report.mismatches.push(FieldMismatch { key: key.clone(), differences });
        }
    }
    Ok(report)
}

/// `request` with its values as `fs` stores them (`expver=1` as `0001`, `param=t` as `130`),
/// by the types of its schema; a value its type refuses stays as given (the listing says why).
pub fn canonical(fs: &FieldStore, request: &Request) -> Result<Request> {
    let types = fs.schema().global_types();
    let mut pairs = Vec::new();
    for keyword in request.keywords() {
        let ty = types.iter().find(|(k, _)| k == keyword).map_or(crate::types::KeywordType::Default, |(_, t)| *t);
        let given = request.get(keyword).map(ToString::to_string).unwrap_or_default();
        let values = match request.values(keyword, ty) {
            Ok(Some(values)) => values.join("/"),
            _ => given,
        };
        pairs.push(format!("{keyword}={values}"));
    }
    Request::parse(&pairs.join(","))
}

/// The keywords both requests give one value each, and different ones.
fn request_differences(request1: &Request, request2: &Request) -> BTreeMap<String, (String, String)> {
    let mut out = BTreeMap::new();
    for keyword in request1.keywords() {
        let (Some(a), Some(b)) = (request1.get(keyword), request2.get(keyword)) else { continue };
        let (a, b) = (a.to_string(), b.to_string());
        if a != b && !a.contains('/') && !b.contains('/') {
            out.insert(keyword.to_string(), (a, b));
        }
    }
    out
}

/// The fields `request` names, with their own keys, by the key they are matched under (the
/// test's values of `differences` replaced by the reference's); the fields `ignore_fields`
/// names left out.
fn fields_by_key(
    fs: &FieldStore,
    request: &Request,
    options: &CompareOptions,
    differences: &BTreeMap<String, (String, String)>,
) -> Result<BTreeMap<MarsKey, (MarsKey, FieldEntry)>> {
    let listed = fs.list(request, ListOptions { depth: 3, ..ListOptions::default() })?;
    let mut out = BTreeMap::new();
    for field in listed.fields {
        let mut key: MarsKey = [&*field.dataset, &*field.collocation, &field.element]
            .iter()
            .flat_map(|k| k.iter())
            .filter(|(_, v)| !v.is_empty())
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        if options.ignore_fields.iter().any(|(k, v)| key.get(k) == Some(v)) {
            continue;
        }
        let own = key.clone();
        for (keyword, (reference, test)) in differences {
            if let Some(value) = key.get_mut(keyword).filter(|v| *v == test) {
                *value = reference.clone();
            }
        }
        out.insert(key, (own, field));
    }
    Ok(out)
}

fn bytes_of(fs: &FieldStore, field: &FieldEntry) -> Result<Vec<u8>> {
    let mut bytes = Vec::new();
    fs.read_fields(vec![field.clone()])?.read_to_end(&mut bytes).map_err(|e| crate::Error::io("read field", &*field.location.uri, e))?;
    Ok(bytes)
}

/// Byte for byte, section by section (ecCodes' `md5SectionN`): the first section that differs,
/// as `section N` (`data section N` for the data), among the header sections, and with scope
/// `All` the data section too. ecCodes has no digest of GRIB 2's local section (2): it is
/// compared key by key only.
fn bit_differences(a: &[u8], b: &[u8], scope: CompareScope) -> Result<Vec<KeyDifference>> {
    let edition =
        |m: &[u8]| -> Result<Option<String>> { Ok(crate::grib::decode::text_keys(m, &["editionNumber".to_string()])?.pop().flatten()) };
    // The data section is the last: 4 in GRIB 1, 7 in GRIB 2.
    let data_section = if edition(a)?.as_deref() == Some("1") { 4 } else { 7 };
    let last = if scope == CompareScope::All { data_section } else { data_section - 1 };
    let digests: Vec<String> = (1..=last).map(|i| format!("md5Section{i}")).collect();
    let (da, db) = (crate::grib::decode::text_keys(a, &digests)?, crate::grib::decode::text_keys(b, &digests)?);
    let first = da.into_iter().zip(db).enumerate().find(|(_, (x, y))| x != y);
    let name = |section: usize| if section == data_section { format!("data section {section}") } else { format!("section {section}") };
    Ok(first.map(|(i, (reference, test))| KeyDifference { key: name(i + 1), reference, test }).into_iter().collect())
}

/// Key by key: the coded keys of either message (selected, not ignored), then (scope `All`)
/// the values within the tolerance.
fn key_differences(a: &[u8], b: &[u8], options: &CompareOptions) -> Result<Vec<KeyDifference>> {
    let (ka, kb): (BTreeMap<String, String>, BTreeMap<String, String>) =
        (crate::grib::decode::coded_key_values(a)?.into_iter().collect(), crate::grib::decode::coded_key_values(b)?.into_iter().collect());
    let compared = |k: &String| (options.select_keys.is_empty() || options.select_keys.contains(k)) && !options.ignore_keys.contains(k);
    let mut keys: Vec<&String> = ka.keys().chain(kb.keys()).filter(|k| compared(k)).collect();
    keys.sort();
    keys.dedup();
    let mut out: Vec<KeyDifference> = keys
        .into_iter()
        .filter(|k| ka.get(*k) != kb.get(*k))
        .map(|k| KeyDifference { key: k.clone(), reference: ka.get(k).cloned(), test: kb.get(k).cloned() })
        .collect();
    if options.scope == CompareScope::All {
        out.extend(value_difference(a, b, options.tolerance)?);
    }
    Ok(out)
}

/// The first value beyond the tolerance, or a different number of values.
fn value_difference(a: &[u8], b: &[u8], tolerance: f64) -> Result<Option<KeyDifference>> {
    let values = |m: &[u8]| -> Result<Vec<f64>> {
        let mut out = vec![0.0; crate::grib::decode::value_count(m)?];
        crate::grib::decode::decode_values(m, &mut out)?;
        Ok(out)
    };
    let (va, vb) = (values(a)?, values(b)?);
    if va.len() != vb.len() {
        let count = |v: &[f64]| Some(format!("{} values", v.len()));
        return Ok(Some(KeyDifference { key: "values".into(), reference: count(&va), test: count(&vb) }));
    }
    let beyond = |(x, y): &(&f64, &f64)| differs(**x, **y, tolerance);
    Ok(va.iter().zip(&vb).enumerate().find(|(_, pair)| beyond(pair)).map(|(i, (x, y))| KeyDifference {
        key: format!("values[{i}]"),
        reference: Some(x.to_string()),
        test: Some(y.to_string()),
    }))
}

/// Whether two values differ beyond `tolerance` (relative, at least absolute): a point
/// missing (NaN) on one side only differs, infinities differ unless equal.
fn differs(x: f64, y: f64, tolerance: f64) -> bool {
    match (x.is_nan(), y.is_nan()) {
        (true, true) => false,
        (false, false) if x == y => false,
        (false, false) if x.is_infinite() || y.is_infinite() => true,
        (false, false) => (x - y).abs() > tolerance * x.abs().max(y.abs()).max(1.0),
        _ => true,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests_differ_where_both_give_one_value_each() {
        let differences = request_differences(
            &Request::parse("class=od,expver=0001,date=1").unwrap(),
            &Request::parse("class=od,expver=0002,date=1/2").unwrap(),
        );
        assert_eq!(differences, BTreeMap::from([("expver".to_string(), ("0001".to_string(), "0002".to_string()))]));
    }

    #[test]
    fn values_differ_beyond_the_tolerance_or_where_one_side_misses_them() {
        assert!(!differs(1.0, 1.0 + 1e-16, 10.0 * f64::EPSILON));
        assert!(differs(1.0, 1.001, 1e-6));
        assert!(!differs(1000.0, 1000.0005, 1e-6), "relative to the larger value");
        assert!(differs(f64::NAN, 1.0, 1.0) && differs(1.0, f64::NAN, 1.0) && !differs(f64::NAN, f64::NAN, 0.0));
        assert!(differs(f64::INFINITY, 1.0, 1.0) && !differs(f64::INFINITY, f64::INFINITY, 0.0));
    }
}
