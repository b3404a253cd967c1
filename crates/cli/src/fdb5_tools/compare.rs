//! `fdb-compare`, as FDB5 5.25's: the fields `--request1` names in the FDB of `--config1` (the
//! reference) against those `--request2` (else `--request1`) names in that of `--config2`
//! (else `--config1`): their MARS keys, then with `--scope=header-only` or `all` their GRIB
//! headers and values ([`fieldstore::compare`]). FDB5's log lines, summary and exit code
//! (1 when they differ). The order of the mismatch lines is the keys' (FDB5's follows its hash
//! tables).

use std::io::Write;
use std::path::Path;

use fieldstore::{CompareOptions, CompareScope, Config, FieldStore, GribComparison, MarsKey, Request};

use super::options::{usage, CommandLine, Opt, Synopsis, Value};
use super::Failure;

const OPTIONS: &[Opt] = &[
    Opt {
        name: "config1",
        value: Value::Text,
        help: "Path to a FDB config. If not passed, FDB5 specific environment variables like FDB5_CONFIG_FILE will be evaluated. If ``--config1`` is not provided, ``--request1`` must be provided.",
    },
    Opt {
        name: "config2",
        value: Value::Text,
        help: "Optional: Path to a second different FDB config. Default: Same as --config1 (if passed), otherwise FDB5 specific environment variables are evaluated.",
    },
    Opt {
        name: "request1",
        value: Value::Text,
        help: "Optional: Specialized mars keys to request data from FDB1 or both FDBse.g. ``--request1=\"class=rd,expver=1234\"``.Allows comparing different MARS subtrees if ``--request2`` is specified withdifferent arguments.",
    },
    Opt {
        name: "request2",
        value: Value::Text,
        help: "Optional: Specialized mars keys to request different data from the second FDB,e.g. ``--request2=\"class=od,expver=abcd\".``Allows comparing different MARS subtrees. Only valid if ``--request1` has ben specified.",
    },
    Opt {
        name: "scope",
        value: Value::Text,
        help: "[mars (default)|header-only|all] The FDBs can be compared in different scopes, 1) [mars] Mars Metadata only (default), 2) [header-only] includes Mars Key comparison and the comparison of the data headers (e.g. grib headers) 3) [all] includes Mars key and data header comparison but also the data sections up to a defined floating point tolerance.",
    },
    Opt {
        name: "grib-comparison-type",
        value: Value::Text,
        help: " [hash-keys|grib-keys(default)|bit-identical] Comparing two Grib messages can be done via either (grib-comparison-type=hash-keys) in a bit-identical way with hash-keys for each sections, via grib keys in the message (grib-comparison-type=grib-keys (default)) or by directly comparing bit-identical memory segments (grib-comparison-type=bit-identical).",
    },
    Opt { name: "fp-tolerance", value: Value::Real, help: "Floating point tolerance for comparison (default=10*EPSILON)." },
    Opt {
        name: "mars-keys-ignore",
        value: Value::Text,
        help: "Format: \"Key1=Value1,Key2=Value2,...KeyN=ValueN\" All Messages that contain any of the defined key value pairs will be omitted.",
    },
    Opt {
        name: "grib-keys-select",
        value: Value::Text,
        help: "Format: \"Key1,Key2,Key3...KeyN\" Only the specified grib keys will be compared (Only effective with grib-comparison-type=grib-keys).",
    },
    Opt {
        name: "grib-keys-ignore",
        value: Value::Text,
        help: "Format: \"Key1,Key2,Key3...KeyN\" The specified key words will be ignored (only effective with grib-comparison-type=grib-keys).",
    },
    Opt { name: "verbose", value: Value::Switch, help: "Print additional output, including a progress bar for grib message comparisons." },
];

const SYNOPSIS: &str = "\nFDB Comparison\n\nExamples:\n=========\nCompares two entire FDBs for equality. Using the `--scope=all` options, not only the \
headers but also the data is compared:\nfdb-compare --config1=<path/to/config1.yaml> --config2=<path/to/config2.yaml> --scope=all \n\nCompares a \
specific part (class=rd,expver=1234) of two different FDBs for equality:\nfdb-compare --config1=<path/to/config1.yaml> \
--config2=<path/to/config2.yaml> --request1=\"class=rd,expver=1234\" \n\nCompares different data versions within one FDB using ``--request1`` and \
``--request2``. In that case the only usable ``--grib-comparison-type`` is `grib-keys` (the default option):\nfdb-compare \
--config1=<path/to/config1.yaml> --request1=\"class=od,expver=abcd\" --request2=\"class=rd,expver=1234\"  \n\nCompares different data versions \
within the production FDB if executed on ATOS (the FDB5 config will be inferred from the environment):\nfdb-compare \
--request1=\"class=od,expver=abcd\" --request2=\"class=rd,expver=1234\" \n\n\n";

/// Runs `fdb-compare` with `args` (the program name left out).
pub fn run(args: &[String]) -> Result<(), Failure> {
    let options: &[&[Opt]] = &[OPTIONS];
    let line =
        CommandLine::parse(args, options).map_err(|e| Failure::Usage(e, usage("fdb-compare", &Synopsis::Verbatim(SYNOPSIS), options)))?;
    let (config1, config2) = (line.value("config1"), line.value("config2"));
    let (request1, request2) = (line.value("request1"), line.value("request2"));
    if config1.is_none() && request1.is_none() {
        return Err(Failure::user("If --config1 is not provided, --request1 must be provided"));
    }
    if request2.is_some() && request1.is_none() {
        return Err(Failure::user("--request2 is only valid with --request1"));
    }
    let compare = CompareOptions {
        scope: match line.value("scope").unwrap_or("mars") {
            "mars" => CompareScope::Mars,
            "header-only" => CompareScope::HeaderOnly,
            "all" => CompareScope::All,
            other => return Err(Failure::User(format!("Unknown scope '{other}': mars, header-only or all"))),
        },
        comparison: match line.value("grib-comparison-type").unwrap_or("grib-keys") {
            "grib-keys" => GribComparison::GribKeys,
            // Every section's digest the same is every byte the same.
            "bit-identical" | "hash-keys" => GribComparison::BitIdentical,
            other => return Err(Failure::User(format!("Unknown grib-comparison-type '{other}': hash-keys, grib-keys or bit-identical"))),
        },
        tolerance: match line.value("fp-tolerance").map(str::parse::<f64>) {
            None => 10.0 * f64::EPSILON,
            Some(Ok(t)) if t >= 0.0 && t.is_finite() => t,
            Some(_) => return Err(Failure::user("--fp-tolerance takes a number, 0 or more")),
        },
        ignore_fields: line.value("mars-keys-ignore").map(fieldstore::GribOptions::parse_modifiers).transpose()?.unwrap_or_default(),
        select_keys: names(line.value("grib-keys-select")),
        ignore_keys: names(line.value("grib-keys-ignore")),
    };
    let open = |config: Option<&str>| -> Result<FieldStore, Failure> { Ok(fieldstore::open(&Config::resolve(config.map(Path::new))?)?) };
    let reference = open(config1)?;
    let test = open(config2.or(config1))?;
    let request = |text: Option<&str>| Request::parse(text.unwrap_or(""));
    let (r1, r2) = (request(request1)?, request(request2.or(request1))?);
    let (r1, r2) = (fieldstore::canonical(&reference, &r1)?, fieldstore::canonical(&test, &r2)?);
    let report = fieldstore::compare(&reference, &test, &r1, &r2, &compare)?;
    print(&report, &r1, &r2, compare.scope)?;
    if report.same() {
        Ok(())
    } else {
        Err(Failure::User("FDBs differ from each other".into()))
    }
}

/// A comma-separated list of names.
fn names(text: Option<&str>) -> Vec<String> {
    text.into_iter().flat_map(|t| t.split(',')).map(str::trim).filter(|n| !n.is_empty()).map(String::from).collect()
}

/// FDB5's log lines, mismatches and summary.
fn print(report: &fieldstore::CompareReport, r1: &Request, r2: &Request, scope: CompareScope) -> std::io::Result<()> {
    let mut out = std::io::stdout().lock();
    for (request, fields) in [(r1, report.reference_fields), (r2, report.test_fields)] {
        writeln!(out, "[LOG] FDB request: FDBToolRequest({}) resulted in {fields} entries.", tool_request(request))?;
    }
    let differences: String = report.request_differences.iter().map(|(k, (a, b))| format!("{k}=({a}, {b}), ")).collect();
    writeln!(out, "{{{differences}}}\n[LOG] Checking MARS Keys")?;
    for key in &report.only_in_test {
        let pairs: String = key.iter().map(|(k, v)| format!("{k}={v} ")).collect();
        writeln!(out, "[MARS KEYS COMPARE] MISMATCH (Test->Reference): {pairs}")?;
    }
    for key in &report.only_in_reference {
        writeln!(out, "[MARS KEYS COMPARE] MISMATCH (Reference->Test): {}", braces(key))?;
    }
    if report.only_in_test.is_empty() && report.only_in_reference.is_empty() {
        writeln!(out, "[MARS KEYS COMPARE] SUCCESS")?;
    }
    if scope != CompareScope::Mars && report.only_in_test.is_empty() && report.only_in_reference.is_empty() {
        writeln!(out, "[GRIB COMPARISON LOG]Compare Grib messages")?;
    }
    for mismatch in &report.mismatches {
        for d in &mismatch.differences {
            let section =
                d.key.strip_prefix("data section ").map(|s| (s, "DATA")).or(d.key.strip_prefix("section ").map(|s| (s, "HEADER")));
            if let Some((section, part)) = section {
                // Bit-identical: FDB5 names the section, and whether it holds the data.
                writeln!(out, "[GRIB COMPARISON MISMATCH] Memory comparison failed in section {section}")?;
                writeln!(out, "[GRIB COMPARISON MISMATCH: BITEXACT: {part} ] {{Location,offset,length}} = {}", braces(&mismatch.key))?;
                continue;
            }
            let shown = |v: &Option<String>| v.clone().unwrap_or_else(|| "(none)".into());
            writeln!(out, "[GRIB COMPARISON MISMATCH] Key={}, FDB1 Value={}, FDB2 value:={}", d.key, shown(&d.reference), shown(&d.test))?;
        }
        writeln!(out, "[GRIB COMPARISON MISMATCH] Grib Comparison failed for MARS key {}", braces(&mismatch.key))?;
    }
    let verdict = if report.same() { "SUCCESS" } else { "FAILURE" };
    writeln!(out, "****************** SUMMARY ********************\n{verdict}\n")
}

/// A request as FDB5's `FDBToolRequest` prints it: ` -- ALL --`, or `retrieve,` and its
/// keywords sorted.
fn tool_request(request: &Request) -> String {
    let mut pairs: Vec<String> =
        request.keywords().map(|k| format!("{k}={}", request.get(k).map(ToString::to_string).unwrap_or_default())).collect();
    if pairs.is_empty() {
        return " -- ALL --".into();
    }
    pairs.sort();
    format!("retrieve,{}", pairs.join(","))
}

fn braces(key: &MarsKey) -> String {
    let pairs: Vec<String> = key.iter().map(|(k, v)| format!("{k}={v}")).collect();
    format!("{{{}}}", pairs.join(","))
}
