//! `fdb-lock` and `fdb-unlock`, as FDB5 5.25's: (un)lock `--list`, `--retrieve`, `--archive`,
//! `--wipe` on the data sets a request names (class, expver, stream, date and time at least),
//! then print each as `fdb-status` does. fieldstore's own data sets only: FDB5's databases,
//! read in place, are never written (their locks are FDB5's to set).

use std::io::Write;

use fieldstore::ControlAction;

use super::options::{CommandLine, Opt, Value, VISIT, VISIT_LAST};
use super::where_::print_status;
use super::{Failure, ToolRequests};

const LOCK: &[Opt] = &[
    Opt { name: "list", value: Value::Switch, help: "Lock matching databases for listing" },
    Opt { name: "retrieve", value: Value::Switch, help: "Lock matching databases for retrieval" },
    Opt { name: "archive", value: Value::Switch, help: "Lock matching databases for archival" },
    Opt { name: "wipe", value: Value::Switch, help: "Lock matching databases for wipe" },
];

const UNLOCK: &[Opt] = &[
    Opt { name: "list", value: Value::Switch, help: "Unlock matching databases for listing" },
    Opt { name: "retrieve", value: Value::Switch, help: "Unlock matching databases for retrieval" },
    Opt { name: "archive", value: Value::Switch, help: "Unlock matching databases for archival" },
    Opt { name: "wipe", value: Value::Switch, help: "Unlock matching databases for wipe" },
];

/// Runs `fdb-lock` with `args` (the program name left out).
pub fn run_lock(args: &[String]) -> Result<(), Failure> {
    run(args, "fdb-lock", LOCK, true)
}

/// Runs `fdb-unlock` with `args` (the program name left out).
pub fn run_unlock(args: &[String]) -> Result<(), Failure> {
    run(args, "fdb-unlock", UNLOCK, false)
}

fn run(args: &[String], tool: &str, actions: &[Opt], lock: bool) -> Result<(), Failure> {
    let options: &[&[Opt]] = &[VISIT, actions, VISIT_LAST];
    let line = CommandLine::parse(args, options).map_err(|e| Failure::usage(e, tool, options))?;
    let tool = ToolRequests::open(&line, "class,expver,stream,date,time")?;
    let chosen: Vec<ControlAction> = actions.iter().filter(|o| line.has(o.name)).filter_map(|o| ControlAction::from_name(o.name)).collect();
    if chosen.is_empty() {
        return Err(Failure::user("No identifier specified to (un)lock."));
    }
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    for (request, _) in tool.requests()? {
        for (dataset, locks) in tool.store.control(&request, &chosen, Some(lock))? {
            print_status(&mut out, &tool.store, &dataset, &locks)?;
        }
    }
    out.flush()?;
    Ok(())
}
