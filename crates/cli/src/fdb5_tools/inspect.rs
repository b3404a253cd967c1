//! `fdb-inspect`, as FDB5 5.25's: the number of requests, and of the fields they name whole
//! (a field counts where the request gives every keyword of its key, as a retrieve needs, and
//! its data set is not locked for retrieve).
//! `--output`, which also prints each field's location and timestamp, is refused by name:
//! fieldstore's indexes keep no time per field (`fdb-list --timestamp` likewise; `fdb-list
//! --location` prints the locations).

use std::io::Write;

use fieldstore::{ControlAction, FieldEntry, Key, ListOptions, Request};

use super::options::{inspect_first, usage, CommandLine, Opt, Synopsis, Value, VISIT_LAST};
use super::{Failure, ToolRequests};

/// `fdb-inspect`'s own options, between the inspecting tools' first and last ones.
const OPTIONS: &[Opt] = &[
    Opt { name: "output", value: Value::Switch, help: "Print the output of the inspection" },
    Opt { name: "parallel", value: Value::Ordinal, help: "Number of parallel tasks to run" },
];

/// Runs `fdb-inspect` with `args` (the program name left out).
pub fn run(args: &[String]) -> Result<(), Failure> {
    let options: &[&[Opt]] = &[inspect_first(), OPTIONS, VISIT_LAST];
    let line = CommandLine::parse(args, options).map_err(|e| Failure::Usage(e, usage("fdb-inspect", &Synopsis::Inspect, options)))?;
    if line.has("output") {
        return Err(Failure::unsupported("--output: FDB5 prints each field's timestamp, which fieldstore's indexes do not keep"));
    }
    let tool = ToolRequests::open(&line, "")?;
    let mut out = std::io::stdout().lock();
    writeln!(out, "Number of requests: {}", tool.requests.len())?;
    let mut elements = 0;
    for (request, _) in tool.requests()? {
        let everything = ListOptions { depth: 3, ..ListOptions::default() };
        let fields = tool.store.list(&request, everything)?.fields;
        // A data set locked for retrieve has no field to inspect (FDB5's inspect retrieves).
        let locked: Vec<Key> = match tool.store.control(&request, &[], None) {
            Ok(states) => states.into_iter().filter(|(_, locks)| locks.contains(&ControlAction::Retrieve)).map(|(d, _)| d).collect(),
            Err(e) if e.kind() == fieldstore::ErrorKind::NotFound => Vec::new(),
            Err(e) => return Err(e.into()),
        };
        elements += fields.iter().filter(|f| named_whole(&request, f) && !locked.contains(&f.dataset)).count();
    }
    writeln!(out, "Number of elements: {elements}")?;
    Ok(())
}

/// Whether `request` gives every keyword of the field's key (its empty optional ones aside).
fn named_whole(request: &Request, field: &FieldEntry) -> bool {
    [&*field.dataset, &*field.collocation, &field.element]
        .iter()
        .flat_map(|k| k.iter())
        .all(|(k, v)| v.is_empty() || request.get(k).is_some())
}
