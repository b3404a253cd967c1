//! `fdb-reindex`, as FDB5 5.25's: the fields the requests name in the store of
//! `--source-config` indexed again in the catalogue of `--sink-config`, over their data where
//! it lies ([`fieldstore::reindex`]); nothing printed, and a request naming nothing is no
//! error (FDB5's). The sink's store must read the source's data, which is checked first.

use std::path::Path;

use fieldstore::{Config, Request};

use super::options::{usage, CommandLine, Opt, Synopsis, Value, VISIT, VISIT_LAST};
use super::{Failure, ToolRequests};

const OPTIONS: &[Opt] = &[
    Opt { name: "porcelain", value: Value::Switch, help: "Streamlined and stable output. Useful as input for other tools or scripts." },
    Opt { name: "source-config", value: Value::Text, help: "Required: FDB configuration filename. This FDB will be listed" },
    Opt { name: "sink-config", value: Value::Text, help: "Required: FDB configuration filename. Indexes will be written to this FDB." },
];

/// Runs `fdb-reindex` with `args` (the program name left out).
pub fn run(args: &[String]) -> Result<(), Failure> {
    // FDB5's takes no --config: the two configs are named.
    let options: &[&[Opt]] = &[VISIT, OPTIONS, &VISIT_LAST[..1]];
    let line = CommandLine::parse(args, options).map_err(|e| Failure::Usage(e, usage("fdb-reindex", &Synopsis::Inspect, options)))?;
    let (Some(source), Some(sink)) = (line.value("source-config"), line.value("sink-config")) else {
        return Err(Failure::user("Both source_config and sink_config must be specified"));
    };
    let source = fieldstore::open(&Config::resolve(Some(Path::new(source)))?)?;
    let sink = fieldstore::open(&Config::resolve(Some(Path::new(sink)))?)?;
    let tool = ToolRequests::open_on(source, &line, "class,expver")?;
    let requests: Vec<Request> = tool.requests()?.into_iter().map(|(r, _)| r).collect();
    fieldstore::reindex(&tool.store, &sink, &requests, true, &mut |_, _| {})?;
    Ok(())
}
