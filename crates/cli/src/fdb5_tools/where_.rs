//! `fdb-where` and `fdb-status`, as FDB5 5.25's: where each data set a request names is (its
//! directory, one line each), and with `fdb-status` its locks (`  retrieve: LOCKED`). Naming no
//! data set is an error (exit 1) unless `--ignore-no-data`.

use std::io::Write;

use std::collections::BTreeSet;

use fieldstore::{ControlAction, ErrorKind, FieldStore, Key, Request};

use super::options::{CommandLine, Opt, Value, VISIT, VISIT_LAST};
use super::{Failure, ToolRequests};

const WHERE: &[Opt] = &[Opt { name: "porcelain", value: Value::Switch, help: "Streamlined output for input into other tools" }];

/// The order FDB5 prints a data set's locks in.
const LOCKS: [ControlAction; 4] = [ControlAction::Retrieve, ControlAction::Archive, ControlAction::List, ControlAction::Wipe];

/// Runs `fdb-where` with `args` (the program name left out).
pub fn run_where(args: &[String]) -> Result<(), Failure> {
    let options: &[&[Opt]] = &[VISIT, WHERE, VISIT_LAST];
    let line = CommandLine::parse(args, options).map_err(|e| Failure::usage(e, "fdb-where", options))?;
    let tool = ToolRequests::open(&line, "class,expver")?;
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    for (request, _) in tool.requests()? {
        for place in found(line.has("ignore-no-data"), &request, || tool.store.where_is(&request))? {
            if place.locations.is_empty() {
                writeln!(out, "{}", place.catalogue)?;
            }
            for location in &place.locations {
                writeln!(out, "{location}")?;
            }
        }
    }
    out.flush()?;
    Ok(())
}

/// Runs `fdb-status` with `args` (the program name left out).
pub fn run_status(args: &[String]) -> Result<(), Failure> {
    let options: &[&[Opt]] = &[VISIT, VISIT_LAST];
    let line = CommandLine::parse(args, options).map_err(|e| Failure::usage(e, "fdb-status", options))?;
    let tool = ToolRequests::open(&line, "class,expver")?;
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    for (request, _) in tool.requests()? {
        for (dataset, locks) in found(line.has("ignore-no-data"), &request, || tool.store.control(&request, &[], None))? {
            print_status(&mut out, &tool.store, &dataset, &locks)?;
        }
    }
    out.flush()?;
    Ok(())
}

/// A data set as `fdb-status` prints it: its key, where it is, and its locks.
pub fn print_status(out: &mut impl Write, fs: &FieldStore, dataset: &Key, locks: &BTreeSet<ControlAction>) -> Result<(), Failure> {
    writeln!(out, "Database: {{{}}}", dataset.display_non_empty())?;
    for location in fs.dataset_where(dataset.clone()).locations {
        writeln!(out, "  location: {location}")?;
    }
    for action in LOCKS.iter().filter(|a| locks.contains(a)) {
        writeln!(out, "  {}: LOCKED", action.name())?;
    }
    Ok(())
}

/// What `answer` finds for `request`; finding no data set is FDB5's error, or nothing with
/// `--ignore-no-data`.
fn found<T>(ignore_no_data: bool, request: &Request, answer: impl FnOnce() -> fieldstore::Result<Vec<T>>) -> Result<Vec<T>, Failure> {
    match answer() {
        Err(e) if e.kind() == ErrorKind::NotFound && ignore_no_data => Ok(Vec::new()),
        Err(e) if e.kind() == ErrorKind::NotFound => Err(Failure::User(format!("No FDB entries found for: {request} ({e})"))),
        other => Ok(other?),
    }
}
