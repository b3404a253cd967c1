//! `fdb-dump`, as FDB5 5.25's: for each FDB5 database the requests name, every record of its
//! TOC with its header, an index's data files and axes too (`--simple`: one line per record,
//! as `fdb-dump-toc`). Nothing named is an error unless `--ignore-no-data`. fieldstore's own
//! data sets keep another log: they are passed over, said on standard error.

use std::io::Write;
use std::path::Path;

use fieldstore::fdb5::toc::{read_key, read_records, Record};

use super::dump_index::files_and_axes;
use super::dump_toc::{braces, record_header, record_line};
use super::options::{inspect_first, usage, CommandLine, Opt, Synopsis, Value, VISIT_LAST};
use super::{Failure, ToolRequests};

/// `fdb-dump`'s own option, between the inspecting tools' first and last ones.
const OPTIONS: &[Opt] = &[Opt { name: "simple", value: Value::Switch, help: "Dump one (simpler) record per line" }];

/// Runs `fdb-dump` with `args` (the program name left out).
pub fn run(args: &[String]) -> Result<(), Failure> {
    let options: &[&[Opt]] = &[inspect_first(), OPTIONS, VISIT_LAST];
    let line = CommandLine::parse(args, options).map_err(|e| Failure::Usage(e, usage("fdb-dump", &Synopsis::Inspect, options)))?;
    let tool = ToolRequests::open(&line, "")?;
    let mut out = std::io::stdout().lock();
    for (request, _) in tool.requests()? {
        let places = match tool.store.where_is(&request) {
            Ok(places) => places,
            Err(e) if e.kind() == fieldstore::ErrorKind::NotFound && line.has("ignore-no-data") => continue,
            Err(e) if e.kind() == fieldstore::ErrorKind::NotFound => {
                return Err(Failure::User(format!("No FDB entries found for: {}", request)));
            }
            Err(e) => return Err(e.into()),
        };
        for place in places {
            let fdb5: Vec<&String> =
                place.locations.iter().filter(|dir| matches!(read_key(&Path::new(dir).join("toc")), Ok(Some(_)))).collect();
            if fdb5.is_empty() {
                eprintln!("fieldstore: {} is fieldstore's own data set, not an FDB5 database: `fieldstore where` shows it", place.dataset);
            }
            for dir in fdb5 {
                dump(Path::new(dir), line.has("simple"), &mut out)?;
            }
        }
    }
    Ok(())
}

/// A database's TOC, record by record.
fn dump(dir: &Path, simple: bool, out: &mut impl Write) -> Result<(), Failure> {
    for placed in read_records(&dir.join("toc"))? {
        if simple {
            writeln!(out, "{}", record_line(&placed))?;
            continue;
        }
        writeln!(out, "{}", record_header(&placed))?;
        match &placed.record {
            Record::Init { key, sub_toc } => writeln!(out, "  key: {}, sub-toc: {}", braces(key), if *sub_toc { "yes" } else { "no" })?,
            Record::Index(index) => {
                writeln!(out, "  path: {}, offset: {}, type: {}", index.file, index.offset, index.kind)?;
                writeln!(out, "  Key: {}", braces(&index.key))?;
                files_and_axes(index, &std::path::absolute(dir)?, out)?;
            }
            Record::Clear { path, offset } => write!(out, "  path: {path}, offset: {offset}")?,
            Record::SubToc { path } => write!(out, "  path: {path}")?,
        }
        writeln!(out)?;
    }
    Ok(())
}
