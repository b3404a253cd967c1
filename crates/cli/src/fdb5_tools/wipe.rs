//! `fdb-wipe`, as FDB5 5.25's: a dry run unless `--doit`; per data set, the files its wipe
//! removes, by FDB5's kinds (catalogue, control, index and data URIs, as absolute paths),
//! under `[Database: DIR, FDB Owner: USER]`; with `--doit`, `Unlinking: PATH` for each, then
//! `rmdir: DIR`; `--porcelain`, the blocks alone. fieldstore's own data sets only: FDB5's
//! databases, read in place, are never wiped by fieldstore.

use std::collections::BTreeMap;
use std::io::Write;
use std::os::unix::fs::MetadataExt;

use fieldstore::{ErrorKind, FieldStore, ListOptions, Request, WipeReport};

use super::options::{CommandLine, Opt, Value, VISIT, VISIT_LAST};
use super::{Failure, ToolRequests};

const OPTIONS: &[Opt] = &[
    Opt { name: "doit", value: Value::Switch, help: "Delete the files (data and indexes)" },
    Opt { name: "porcelain", value: Value::Switch, help: "List only the deleted files" },
    Opt { name: "unsafe-wipe-all", value: Value::Switch, help: "Wipe all (unowned) contents of an unclean database" },
];

/// A data set's directory before its wipe: its key, its path and its owner's name.
struct Place {
    dataset: fieldstore::Key,
    dir: String,
    owner: String,
}

pub fn run(args: &[String]) -> Result<(), Failure> {
    let options: &[&[Opt]] = &[VISIT, OPTIONS, VISIT_LAST];
    let line = CommandLine::parse(args, options).map_err(|e| Failure::usage(e, "fdb-wipe", options))?;
    if line.has("unsafe-wipe-all") {
        return Err(Failure::unsupported(
            "--unsafe-wipe-all: fieldstore's wipe removes a data set's directory whole, files it does not know of included",
        ));
    }
    let (doit, porcelain) = (line.has("doit"), line.has("porcelain"));
    let tool = ToolRequests::open(&line, "class,expver,stream,date,time")?;
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    for (request, header) in tool.requests_as("retrieve")? {
        if !porcelain {
            write!(out, "Wiping for request\n{header}\n")?;
        }
        let places = places(&tool.store, &request)?;
        let report = match tool.store.wipe(&request, doit) {
            Err(e) if e.kind() == ErrorKind::NotFound && line.has("ignore-no-data") => continue,
            Err(e) if e.kind() == ErrorKind::NotFound => {
                return Err(Failure::User(format!("No FDB entries found matching the provided request: {request} ({e})")));
            }
            other => other?,
        };
        print_report(&mut out, &tool.store, &report, &places, doit && !porcelain)?;
        if !doit && !porcelain {
            writeln!(out, "\nRerun command with --doit flag to delete unused files\n")?;
        }
    }
    out.flush()?;
    Ok(())
}

/// Where each data set the request names is, by its directory's name, before anything goes.
fn places(fs: &FieldStore, request: &Request) -> Result<BTreeMap<String, Place>, Failure> {
    let mut places = BTreeMap::new();
    for dataset in fs.list(request, ListOptions { depth: 1, ..ListOptions::default() })?.datasets {
        for place in fs.where_is(&Request::parse(&dataset.to_string())?)? {
            for dir in place.locations {
                let name = dir.rsplit('/').next().unwrap_or_default().to_string();
                let owner = std::fs::metadata(&dir).map(|m| user_name(m.uid())).unwrap_or_default();
                places.insert(name, Place { dataset: dataset.clone(), dir, owner });
            }
        }
    }
    Ok(places)
}

/// The report by data set, each file with its absolute path, FDB5's sections in FDB5's order;
/// with `unlinking`, first the `Unlinking:` and `rmdir:` lines of what went.
fn print_report(
    out: &mut impl Write,
    fs: &FieldStore,
    report: &WipeReport,
    places: &BTreeMap<String, Place>,
    unlinking: bool,
) -> Result<(), Failure> {
    let sections = [
        ("Catalogue", &report.catalogue_files),
        ("Control", &report.control_files),
        ("Index", &report.catalogue_removed),
        ("Data", &report.removed),
    ];
    // `DIR/FILE` names by data set directory, made absolute.
    let mut by_dir: BTreeMap<&str, Vec<Vec<String>>> = BTreeMap::new();
    for (i, (_, names)) in sections.iter().enumerate() {
        for name in names.iter() {
            let (dir, file) = name.split_once('/').unwrap_or(("", name));
            let path = match places.get(dir) {
                Some(place) => format!("{}/{file}", place.dir),
                None => fs.absolute_uri(name)?,
            };
            by_dir.entry(dir).or_insert_with(|| vec![Vec::new(); sections.len()])[i].push(path);
        }
    }
    for files in by_dir.values_mut() {
        files.iter_mut().for_each(|f| f.sort());
    }
    if unlinking {
        for (dir, files) in &by_dir {
            for i in [3, 0, 2, 1] {
                for path in &files[i] {
                    writeln!(out, "Unlinking: {path}")?;
                }
            }
            // A data set wiped whole goes with its directory.
            if let Some(place) = places.get(*dir).filter(|p| report.datasets.contains(&p.dataset)) {
                writeln!(out, "rmdir: {}", place.dir)?;
            }
        }
    }
    for (dir, files) in &by_dir {
        let owner = places.get(*dir).map_or("", |p| p.owner.as_str());
        writeln!(out, "[Database: {dir}, FDB Owner: {owner}]")?;
        for (i, (kind, _)) in sections.iter().enumerate() {
            // Control files only where there are some, as FDB5 prints them.
            if files[i].is_empty() && *kind == "Control" {
                continue;
            }
            writeln!(out, "{kind} URIs to delete:")?;
            for path in &files[i] {
                writeln!(out, "    {path}")?;
            }
            writeln!(out)?;
        }
    }
    Ok(())
}

/// The name of the user `uid`, else the number.
fn user_name(uid: u32) -> String {
    // SAFETY: getpwuid returns null or a pointer to a static record, read at once and not kept;
    // its name is a NUL-terminated string.
    unsafe {
        let record = libc::getpwuid(uid);
        if record.is_null() || (*record).pw_name.is_null() {
            return uid.to_string();
        }
        std::ffi::CStr::from_ptr((*record).pw_name).to_string_lossy().into_owned()
    }
}
