//! `fdb-purge`, as FDB5 5.25's: a dry run unless `--doit`; per request, the index report
//! (each visible index, newest first, `Index TocIndex(path=FILE,offset=N)` with its fields,
//! duplicates and reachable fields), the data and index files the purge removes, and with
//! `--doit` what it removed; `--porcelain`, those files alone. fieldstore's own data sets only:
//! FDB5's databases, read in place, are never purged by fieldstore.

use std::collections::BTreeSet;
use std::io::Write;

use fieldstore::api::IndexPurge;
use fieldstore::{ErrorKind, FieldStore, PurgeReport};

use super::options::{CommandLine, Opt, Value, VISIT, VISIT_LAST};
use super::text::{big_num, bytes};
use super::{Failure, ToolRequests};

const OPTIONS: &[Opt] = &[
    Opt { name: "doit", value: Value::Switch, help: "Delete the files (data and indexes)" },
    Opt { name: "porcelain", value: Value::Switch, help: "List only the deleted files" },
    Opt { name: "threads", value: Value::Integer, help: "Number of threads to use for index reading (default 8)" },
];

/// Runs `fdb-purge` with `args` (the program name left out).
pub fn run(args: &[String]) -> Result<(), Failure> {
    let options: &[&[Opt]] = &[VISIT, OPTIONS, VISIT_LAST];
    let line = CommandLine::parse(args, options).map_err(|e| Failure::usage(e, "fdb-purge", options))?;
    let (doit, porcelain) = (line.has("doit"), line.has("porcelain"));
    let tool = ToolRequests::open(&line, "class,expver,stream,date,time")?;
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    for (request, header) in tool.requests_as("retrieve")? {
        let report = match tool.store.purge(&request, doit) {
            Err(e) if e.kind() == ErrorKind::NotFound && line.has("ignore-no-data") => continue,
            Err(e) if e.kind() == ErrorKind::NotFound => {
                return Err(Failure::User(format!("No FDB entries found for: {request} ({e})")));
            }
            other => other?,
        };
        let files = Removed::of(&tool.store, &report)?;
        if porcelain {
            for path in files.data.iter().chain(&files.indexes) {
                writeln!(out, "{path}")?;
            }
            continue;
        }
        write!(out, "Purging for request\n{header}\n\nIndex Report:\n")?;
        for index in &report.indexes {
            writeln!(out, "    Index {}", index_name(index))?;
            out.write_all(index_lines(index).as_bytes())?;
        }
        let sections: [(&str, &[String]); 5] = [
            ("Unreferenced owned data files", &files.data),
            ("Unreferenced adopted data files", &[]),
            ("Auxiliary files to be deleted", &[]),
            ("Auxiliary files to be kept", &[]),
            ("Index files to be deleted", &files.indexes),
        ];
        for (title, paths) in sections {
            writeln!(out, "\n{title}:")?;
            if paths.is_empty() {
                writeln!(out, "    - NONE -")?;
            }
            for path in paths {
                writeln!(out, "    {path}")?;
            }
        }
        if doit {
            writeln!(out)?;
            for index in report.indexes.iter().filter(|i| i.masked) {
                writeln!(out, "Removing: {}", index_name(index))?;
            }
            for path in files.data.iter().chain(&files.indexes) {
                writeln!(out, "Unlinking: {path}")?;
            }
        } else {
            writeln!(out, "\n\nRerun command with --doit flag to delete unused files\n")?;
        }
    }
    out.flush()?;
    Ok(())
}

/// The files a purge removes (or would), as absolute paths: data files, then index files.
struct Removed {
    data: Vec<String>,
    indexes: Vec<String>,
}

impl Removed {
    fn of(fs: &FieldStore, report: &PurgeReport) -> Result<Removed, Failure> {
        let data = report.removed.iter().map(|uri| fs.absolute_uri(uri)).collect::<fieldstore::Result<Vec<_>>>()?;
        // The files of the indexes hidden that no index kept uses (once done, as removed).
        let kept: BTreeSet<&str> =
            report.indexes.iter().filter(|i| !i.masked).filter_map(|i| i.place.as_ref()).map(|(p, _)| p.as_str()).collect();
        let mut indexes: Vec<String> = report
            .indexes
            .iter()
            .filter(|i| i.masked)
            .filter_map(|i| i.place.as_ref())
            .map(|(path, _)| path.clone())
            .filter(|path| !kept.contains(path.as_str()))
            .collect();
        indexes.sort();
        indexes.dedup();
        Ok(Removed { data, indexes })
    }
}

/// An index as FDB5 names one: `TocIndex(path=FILE,offset=N)`, or the catalogue's identity of it.
fn index_name(index: &IndexPurge) -> String {
    match &index.place {
        Some((path, offset)) => format!("TocIndex(path={path},offset={offset})"),
        None => index.id.clone(),
    }
}

/// An index's counts as FDB5's purge prints them (a count of 0 left out).
fn index_lines(index: &IndexPurge) -> String {
    let line = |title: &str, n: u64, size: bool| match (n, size) {
        (0, _) => String::new(),
        (n, false) => format!("          {title:<32}: {}\n", big_num(n)),
        (n, true) => format!("          {title:<32}: {} ({})\n", big_num(n), bytes(n)),
    };
    let fields = index.live.saturating_add(index.superseded);
    [
        line("Fields", fields, false),
        line("Size of fields", index.live_bytes.saturating_add(index.superseded_bytes), true),
        line("Duplicated fields", index.superseded, false),
        line("Size of duplicates", index.superseded_bytes, true),
        line("Reacheable fields", index.live, false),
        line("Reachable size", index.live_bytes, true),
    ]
    .concat()
}
