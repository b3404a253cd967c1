//! `fdb-axes`, as FDB5 5.25's: the values stored for each keyword of what a request names,
//! down to `--level` (1: data sets, 2: collocations, 3: fields), as `IndexAxis[axis={k=(a,b)}]`
//! or `--json`; each keyword's values in text order, as FDB5 keeps them. As FDB5's, the axes
//! are those of the data sets, collocations and whole indexes the request names: an index
//! with a field the request names gives every value it holds, and a data set the request
//! names is counted even where none of its fields match.

use std::collections::{BTreeMap, BTreeSet};
use std::io::Write;

use fieldstore::{Key, ListOptions};

use super::options::{CommandLine, Opt, Value, VISIT, VISIT_LAST};
use super::{Failure, ToolRequests};

const OPTIONS: &[Opt] = &[
    Opt { name: "level", value: Value::Integer, help: "Specify how many levels of the keys should be should be explored" },
    Opt { name: "json", value: Value::Switch, help: "Output available fields in JSON form" },
];

/// Runs `fdb-axes` with `args` (the program name left out).
pub fn run(args: &[String]) -> Result<(), Failure> {
    let options: &[&[Opt]] = &[VISIT, OPTIONS, VISIT_LAST];
    let line = CommandLine::parse(args, options).map_err(|e| Failure::usage(e, "fdb-axes", options))?;
    let level = match line.value("level").map(str::parse::<u8>) {
        None => 3,
        Some(Ok(level @ 1..=3)) => level,
        Some(_) => return Err(Failure::user("--level must be 1, 2 or 3")),
    };
    let tool = ToolRequests::open(&line, "class,expver")?;
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    for (request, _) in tool.requests()? {
        let mut axes: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
        let mut add = |key: &Key| {
            for (k, v) in key.iter().filter(|(_, v)| !v.is_empty()) {
                axes.entry(k.to_string()).or_default().insert(v.to_string());
            }
        };
        let listed = |depth| tool.store.list(&request, ListOptions { depth, ..ListOptions::default() });
        listed(1)?.datasets.iter().for_each(&mut add);
        if level >= 2 {
            listed(2)?.collocations.iter().for_each(|(d, c)| {
                add(d);
                add(c);
            });
        }
        if level == 3 {
            for (keyword, values) in tool.store.index_axes(&request)?.0 {
                axes.entry(keyword).or_default().extend(values.into_iter().filter(|v| !v.is_empty()));
            }
        }
        if line.has("json") {
            serde_json::to_writer(&mut out, &axes).map_err(|e| Failure::io(e.into()))?;
            writeln!(out)?;
        } else {
            let axes: Vec<String> =
                axes.iter().map(|(k, v)| format!("{k}=({})", v.iter().cloned().collect::<Vec<_>>().join(","))).collect();
            writeln!(out, "IndexAxis[axis={{{}}}]", axes.join(","))?;
        }
    }
    out.flush()?;
    Ok(())
}
