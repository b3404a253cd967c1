//! `fdb-write`, `fdb-read` and `fdb-url` (`fdb-read` with `--uri`), as FDB5 5.25's: `fdb-write [options] FILE...` archives every
//! GRIB message of each file (`Processing FILE` for each), then flushes; `fdb-read REQUESTS
//! TARGET` (or `--extract GRIB TARGET`: the request made of the messages' keys) prints each
//! request expanded, writes what it names into TARGET, and prints FDB5's rate lines.

use std::io::Write;
use std::path::Path;
use std::time::Instant;

use fieldstore::{Config, FieldStore, GribOptions, Request};

use super::options::{usage, CommandLine, Opt, Synopsis, Value};
use super::text::{bytes, in_mars_order};
use super::{expanded, Failure};

const WRITE: &[Opt] = &[
    Opt {
        name: "include-filter",
        value: Value::Text,
        help: "List of comma separated key-values of what to include from the input data, e.g --include-filter=stream=enfo,date=10102017",
    },
    Opt {
        name: "exclude-filter",
        value: Value::Text,
        help: "List of comma separated key-values of what to exclude from the input data, e.g --exclude-filter=time=0000",
    },
    Opt {
        name: "modifiers",
        value: Value::Text,
        help: "List of comma separated key-values of modifiers to each message int input data, e.g --modifiers=packingType=grib_ccsds,expver=0042",
    },
    Opt {
        name: "archivers",
        value: Value::Integer,
        help: "Number of archivers (default is 1). Input files are distributed among the user-specified archivers. For testing purposes only!",
    },
    Opt { name: "statistics", value: Value::Switch, help: "Report timing statistics" },
    Opt { name: "verbose", value: Value::Switch, help: "Print verbose output" },
    Opt { name: "config", value: Value::Text, help: "FDB configuration filename" },
];

const WRITE_SYNOPSIS: &str = "Usage: fdb-write [--filter-include=...] [--filter-exclude=...] <path1> [path2] ...\n";

const READ_SYNOPSIS: &str = "Usage: fdb-read request.mars target.grib\n       fdb-read --raw request.mars target.grib\n       \
                             fdb-read --extract source.grib target.grib\n";

const READ: &[Opt] = &[
    Opt { name: "extract", value: Value::Switch, help: "Extract request from a GRIB file" },
    Opt { name: "raw", value: Value::Switch, help: "Uses the raw request, without expansion" },
    Opt { name: "statistics", value: Value::Switch, help: "Report timing statistics" },
    Opt { name: "config", value: Value::Text, help: "FDB configuration filename" },
];

const URL_SYNOPSIS: &str = "Usage: fdb-url request.mars target.grib\n       fdb-url --raw request.mars target.grib\n       \
                            fdb-url --uri request.mars target.grib\n       fdb-url --extract source.grib target.grib\n";

/// `fdb-url`'s `--uri`, before `fdb-read`'s options.
const URL: &[Opt] = &[Opt { name: "uri", value: Value::Switch, help: "Inspect -> URI -> Read" }];

/// The store `--config` or the environment names.
fn store(line: &CommandLine) -> Result<FieldStore, Failure> {
    Ok(fieldstore::open(&Config::resolve(line.value("config").map(Path::new))?)?)
}

/// Runs `fdb-write` with `args` (the program name left out).
pub fn run_write(args: &[String]) -> Result<(), Failure> {
    let options: &[&[Opt]] = &[WRITE];
    let refused = |e| Failure::Usage(e, usage("fdb-write", &Synopsis::Lines(WRITE_SYNOPSIS), options));
    let line = CommandLine::parse(args, options).map_err(refused)?;
    let fs = store(&line)?;
    let grib = GribOptions {
        modifiers: line.value("modifiers").map(GribOptions::parse_modifiers).transpose()?.unwrap_or_default(),
        include: line.value("include-filter").map(Request::parse).transpose()?,
        exclude: line.value("exclude-filter").map(Request::parse).transpose()?,
    };
    let mut out = std::io::stdout().lock();
    let archived = (|| -> Result<(), Failure> {
        for path in &line.requests {
            writeln!(out, "Processing {path}")?;
            let data = super::read_input(path)?;
            for field in fieldstore::prepare_grib(&fs, &data, path, &grib, &|_| {})? {
                if line.has("verbose") {
                    writeln!(out, "Archiving {{{}}}", field.identifier.display_non_empty())?;
                }
                fs.archive(&field.identifier, &field.bytes)?;
            }
        }
        Ok(())
    })();
    // What was archived before a failure is kept, as FDB5 keeps it (its handle flushes as it
    // closes).
    fs.flush()?;
    archived
}

/// Runs `fdb-read` with `args` (the program name left out).
pub fn run_read(args: &[String]) -> Result<(), Failure> {
    read("fdb-read", READ_SYNOPSIS, &[READ], args)
}

/// Runs `fdb-url` with `args` (the program name left out): `fdb-read` under another name, whose
/// `--uri` (find each field's location, then read it) is how fieldstore always reads.
pub fn run_url(args: &[String]) -> Result<(), Failure> {
    read("fdb-url", URL_SYNOPSIS, &[URL, READ], args)
}

/// `fdb-read` or `fdb-url` (`tool`), with its synopsis and options.
fn read(tool: &str, synopsis: &'static str, options: &[&[Opt]], args: &[String]) -> Result<(), Failure> {
    let refused = |e| Failure::Usage(e, usage(tool, &Synopsis::Lines(synopsis), options));
    let miscounted = |given: usize| format!("{tool}: invalid argument count: expected 2, got: {given}.");
    let line = CommandLine::parse(args, options).map_err(|e| {
        // eckit reads the whole command line before it refuses it: a wrong count is said too.
        match args.iter().filter(|a| !a.starts_with("--")).count() {
            2 => refused(e),
            given => refused(format!("{e}\n{}", miscounted(given))),
        }
    })?;
    let [source, target] = line.requests.as_slice() else {
        return Err(refused(miscounted(line.requests.len())));
    };
    let fs = store(&line)?;
    let requests = if line.has("extract") { extracted(&fs, source)? } else { request_file(source)? };
    let started = Instant::now();
    let mut out = std::io::stdout().lock();
    let mut file = std::io::BufWriter::new(std::fs::File::create(target).map_err(Failure::io)?);
    let mut total = 0u64;
    for request in &requests {
        let pairs = expanded(&fs, request, line.has("raw"));
        // As FDB5 prints them: extracted ones in keyword order, raw ones as given.
        let pairs = if line.has("extract") || line.has("raw") { pairs } else { in_mars_order(pairs) };
        let text: Vec<String> = pairs.iter().map(|(k, v)| format!("{k}={v}")).collect();
        writeln!(out, "retrieve,{}", text.join(","))?;
        match fs.retrieve(request) {
            Ok((mut reader, _)) => total += std::io::copy(&mut reader, &mut file)?,
            // Nothing there: an empty target, as FDB5 writes.
            Err(e) if e.kind() == fieldstore::ErrorKind::NotFound => {}
            Err(e) => return Err(e.into()),
        }
    }
    file.flush()?;
    let seconds = started.elapsed().as_secs_f64();
    let rate = if seconds > 0.0 { (total as f64 / seconds) as u64 } else { 0 };
    writeln!(out, "Read  rate: {} per second", bytes(rate))?;
    writeln!(out, "Write rate: {} per second", bytes(rate))?;
    writeln!(out, "Save into: {seconds} second elapsed, {} second cpu", super::text::cpu_seconds())?;
    Ok(())
}

/// The requests of a MARS request file.
fn request_file(path: &str) -> Result<Vec<Request>, Failure> {
    let text = String::from_utf8(super::read_input(path)?)
        .map_err(|e| Failure::Store(anyhow::Error::new(e).context(format!("reading {path}"))))?;
    Ok(Request::parse_many(&text)?)
}

/// A request per message of a GRIB file (`--extract`): its keys, in keyword order.
fn extracted(fs: &FieldStore, path: &str) -> Result<Vec<Request>, Failure> {
    let data = super::read_input(path)?;
    let mut requests = Vec::new();
    for field in fieldstore::prepare_grib(fs, &data, path, &GribOptions::default(), &|_| {})? {
        let mut pairs: Vec<(&str, &str)> = field.identifier.iter().filter(|(_, v)| !v.is_empty()).collect();
        pairs.sort();
        let text: Vec<String> = pairs.iter().map(|(k, v)| format!("{k}={v}")).collect();
        requests.push(Request::parse(&format!("retrieve,{}", text.join(",")))?);
    }
    Ok(requests)
}
