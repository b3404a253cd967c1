//! `fdb-copy` and `fdb-move`, as FDB5 5.25's: `fdb-copy --source CONFIG --target CONFIG`
//! copies what request files name (each printed expanded), or with `--from-list` what list
//! requests name, as `fieldstore copy` does (streamed, resumable, verified); `fdb-move
//! --dest ROOT` moves data sets to another root as `fieldstore move` does, printing nothing.

use std::path::Path;

use fieldstore::{Config, CopyOptions, MoveOptions, Request};

use super::options::{CommandLine, Opt, Value, VISIT, VISIT_LAST};
use super::text::in_mars_order;
use super::{expanded, Failure, ToolRequests};

const COPY: &[Opt] = &[
    Opt { name: "verbose", value: Value::Switch, help: "Print verbose output" },
    Opt { name: "sort", value: Value::Switch, help: "Sort fields according to location on input storage" },
    Opt { name: "target", value: Value::Path, help: "Configuration of FDB to write to" },
    Opt { name: "source", value: Value::Path, help: "Configuration of FDB to read from" },
    Opt { name: "from-list", value: Value::Switch, help: "Interpret argument(s) as fdb-list partial requests, rather than request files" },
    Opt {
        name: "modifiers",
        value: Value::Text,
        help: "List of comma separated key-values of modifiers to each message in input data. The modifier keys must also be present in the supplied request. Example: --modifiers=expver=0042,date=20190603",
    },
];

const MOVE: &[Opt] = &[
    Opt { name: "dest", value: Value::Text, help: "Destination root" },
    Opt { name: "keep", value: Value::Switch, help: "Keep source DB" },
    Opt { name: "delay", value: Value::Integer, help: "Delay in seconds before deleting source (default: 0)" },
    Opt { name: "transport", value: Value::Text, help: "distributed data move (MPI based)" },
    Opt { name: "threads", value: Value::Integer, help: "Number of concurrent threads for data move (default: 1)" },
];

/// Runs `fdb-copy` with `args` (the program name left out).
pub fn run_copy(args: &[String]) -> Result<(), Failure> {
    let options: &[&[Opt]] = &[VISIT, COPY, VISIT_LAST];
    let line = CommandLine::parse(args, options).map_err(|e| Failure::usage(e, "fdb-copy", options))?;
    let Some(target) = line.value("target") else { return Err(Failure::user("Missing --target option")) };
    let source = fieldstore::open(&Config::resolve(line.value("source").or(line.value("config")).map(Path::new))?)?;
    let tool;
    let (source, requests) = if line.has("from-list") {
        tool = ToolRequests::open_on(source, &line, "class,expver")?;
        let requests: Vec<Request> = tool.requests()?.into_iter().map(|(r, _)| r).collect();
        (&tool.store, requests)
    } else {
        let mut requests = Vec::new();
        for path in &line.requests {
            let text = String::from_utf8_lossy(&super::read_input(path)?).into_owned();
            for request in Request::parse_many(&text)? {
                let pairs: Vec<String> =
                    in_mars_order(expanded(&source, &request, line.has("raw"))).iter().map(|(k, v)| format!("{k}={v}")).collect();
                println!("retrieve,{}", pairs.join(","));
                requests.push(request);
            }
        }
        (&source, requests)
    };
    let copy = CopyOptions {
        modifiers: line.value("modifiers").map(fieldstore::GribOptions::parse_modifiers).transpose()?.unwrap_or_default(),
        sort_by_location: line.has("sort"),
        ..CopyOptions::default()
    };
    let target = fieldstore::open(&Config::from_file(Path::new(target))?)?;
    match fieldstore::copy(source, &target, &requests, &copy, &mut |_| {}) {
        Err(e) if e.kind() == fieldstore::ErrorKind::NotFound && line.has("ignore-no-data") => Ok(()),
        other => other.map(drop).map_err(Failure::from),
    }
}

/// Runs `fdb-move` with `args` (the program name left out).
pub fn run_move(args: &[String]) -> Result<(), Failure> {
    let options: &[&[Opt]] = &[VISIT, MOVE, VISIT_LAST];
    let line = CommandLine::parse(args, options).map_err(|e| Failure::usage(e, "fdb-move", options))?;
    if line.value("transport").is_some() {
        return Err(Failure::unsupported("--transport: fieldstore moves with one process (FDB5's MPI transport is not supported)"));
    }
    let Some(dest) = line.value("dest") else { return Err(Failure::user("Missing --dest option")) };
    let number = |name: &str, default: u64| match line.value(name).map(str::parse::<u64>) {
        None => Ok(default),
        Some(Ok(n)) => Ok(n),
        Some(Err(_)) => Err(Failure::User(format!("--{name} takes a whole number"))),
    };
    let options = MoveOptions {
        destination: dest.into(),
        keep: line.has("keep"),
        delay: std::time::Duration::from_secs(number("delay", 0)?),
        threads: usize::try_from(number("threads", 1)?.clamp(1, 256)).unwrap_or(1),
    };
    let config = Config::resolve(line.value("config").map(Path::new))?;
    let tool = ToolRequests::open_on(fieldstore::open(&config)?, &line, "class,expver,stream,date,time")?;
    let requests: Vec<Request> = tool.requests()?.into_iter().map(|(r, _)| r).collect();
    fieldstore::move_datasets(&config, &tool.store, &requests, &options, &|_, _| {})?;
    Ok(())
}
