//! `fdb-patch`, as FDB5 5.25's: every field the requests name archived again under a new
//! `--class` and/or `--expver` (each message's keys set through ecCodes), into the same store,
//! as `fieldstore copy --modifiers` does (verified); then FDB5's summary. Nothing named is an
//! error unless `--ignore-no-data`.

use std::io::Write;

use fieldstore::CopyOptions;

use super::options::{CommandLine, Opt, Value, VISIT, VISIT_LAST};
use super::text::{bytes, cpu_seconds};
use super::{Failure, ToolRequests};

const OPTIONS: &[Opt] =
    &[Opt { name: "expver", value: Value::Text, help: "Set the expver" }, Opt { name: "class", value: Value::Text, help: "Set the class" }];

/// Runs `fdb-patch` with `args` (the program name left out).
pub fn run(args: &[String]) -> Result<(), Failure> {
    let options: &[&[Opt]] = &[VISIT, OPTIONS, VISIT_LAST];
    let line = CommandLine::parse(args, options).map_err(|e| Failure::usage(e, "fdb-patch", options))?;
    if line.requests.is_empty() && !line.has("all") {
        return Err(Failure::usage("fdb-patch: invalid argument count: expected at least 1, got: 0".into(), "fdb-patch", options));
    }
    // FDB5's order: expver first, padded to four digits as FDB5 pads it.
    let mut modifiers = Vec::new();
    if let Some(expver) = line.value("expver") {
        modifiers.push(("expver".to_string(), format!("{expver:0>4}")));
    }
    if let Some(class) = line.value("class") {
        modifiers.push(("class".to_string(), class.to_string()));
    }
    if modifiers.is_empty() {
        return Err(Failure::Usage("Please provide either --expver or --class".into(), String::new()));
    }
    let started = std::time::Instant::now();
    let tool = ToolRequests::open(&line, "class,expver,stream,date,time")?;
    let requests: Vec<fieldstore::Request> = tool.requests()?.into_iter().map(|(r, _)| r).collect();
    let copy = CopyOptions { modifiers: modifiers.clone(), ..CopyOptions::default() };
    let report = match fieldstore::copy(&tool.store, &tool.store, &requests, &copy, &mut |_| {}) {
        Err(e) if e.kind() == fieldstore::ErrorKind::NotFound && line.has("ignore-no-data") => fieldstore::CopyReport::default(),
        other => other?,
    };
    let seconds = started.elapsed().as_secs_f64();
    let key: Vec<String> = modifiers.iter().map(|(k, v)| format!("{k}={v}")).collect();
    let fields = if report.fields == 1 { "1 field".to_string() } else { format!("{} fields", report.fields) };
    let mut out = std::io::stdout().lock();
    writeln!(out, "\nSummary\n=======\n\n{fields} ({}) copied to {{{}}}", bytes(report.bytes), key.join(","))?;
    let rate = |n: f64| if seconds > 0.0 { n / seconds } else { 0.0 };
    writeln!(out, "Rates: {} per second, {} fields/s", bytes(rate(report.bytes as f64) as u64), rate(report.fields as f64))?;
    writeln!(out, "fdb-patch: {seconds} second elapsed, {} second cpu", cpu_seconds())?;
    Ok(())
}
