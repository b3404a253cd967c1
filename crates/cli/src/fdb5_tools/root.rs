//! `fdb-root`, as FDB5 5.25's: for each request, the data set key it names (the keywords of
//! the first level of the first schema rule it satisfies, as the request gives them,
//! expanded), then, where that data set is stored, its catalogue. `--create` is refused:
//! fieldstore makes a data set with its first archive.

use std::io::Write;

use fieldstore::{FieldStore, Key, Request};

use super::options::{usage, CommandLine, Opt, Synopsis, Value};
use super::{expanded, Failure, ToolRequests};

const OPTIONS: &[Opt] = &[
    Opt { name: "create", value: Value::Switch, help: "If a DB does not exist for the provided key, create it" },
    Opt { name: "config", value: Value::Text, help: "FDB configuration filename" },
];

/// Runs `fdb-root` with `args` (the program name left out).
pub fn run(args: &[String]) -> Result<(), Failure> {
    let options: &[&[Opt]] = &[OPTIONS];
    let synopsis = Synopsis::Lines(
        "Usage: fdb-root [options] [request1] [request2] ...\n\n\nExamples:\n=========\n\nfdb-root \
         class=od,expver=0001,stream=oper,date=20160428,time=1200\n\n",
    );
    let line = CommandLine::parse(args, options).map_err(|e| Failure::Usage(e, usage("fdb-root", &synopsis, options)))?;
    if line.has("create") {
        return Err(Failure::unsupported("--create: fieldstore makes a data set with its first archive"));
    }
    let tool = ToolRequests::open(&line, "")?;
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    for (request, _) in tool.requests()? {
        let key = dataset_key_named(&tool.store, &request)?;
        writeln!(out, "{{{}}}", key.join(","))?;
        let places = match tool.store.where_is(&Request::parse(&key.join(","))?) {
            Ok(places) => places,
            Err(e) if e.kind() == fieldstore::ErrorKind::NotFound => Vec::new(),
            Err(e) => return Err(e.into()),
        };
        // The data set of exactly that key (one with more keywords given is another).
        for location in places.iter().filter(|p| p.dataset.display_non_empty() == key.join(",")).flat_map(|p| &p.locations) {
            writeln!(out, "TocCatalogueReader({location})")?;
        }
    }
    out.flush()?;
    Ok(())
}

/// The `k=v` pairs of the data set a request names ([`dataset_key`]), values expanded; FDB5's
/// error naming the first keyword missing.
pub(super) fn dataset_key_named(store: &FieldStore, request: &Request) -> Result<Vec<String>, Failure> {
    let pairs = expanded(store, request, false);
    let value = |keyword: &str| pairs.iter().find(|(k, _)| k == keyword).map(|(_, v)| v.as_str());
    match store.schema().dataset_level(value) {
        Ok(key) => Ok(key.into_iter().map(|(k, v)| format!("{k}={v}")).collect()),
        Err(missing) => {
            let given: Vec<String> = pairs.iter().map(|(k, v)| format!("{k}={v}")).collect();
            Err(Failure::User(format!("No parameter called '{missing}' in request read,{}", given.join(","))))
        }
    }
}

/// The one data set a request names, as FDB5's tools read a DB request: of a list of values,
/// the first.
pub(super) fn one_dataset(store: &FieldStore, request: &Request) -> Result<Key, Failure> {
    let pairs: Vec<String> = dataset_key_named(store, request)?
        .into_iter()
        .map(|pair| match pair.split_once('/') {
            Some((first, _)) => first.to_string(),
            None => pair,
        })
        .collect();
    Ok(Key::parse(&pairs.join(","))?)
}
