//! `fdb-dump-index`, as FDB5 5.25's: for each FDB5 index file given, each `TOC_INDEX` record of
//! its database's TOC that names it: the record's header, the index's data files and axes,
//! then every entry of its B-tree (the fingerprint, the element's values joined by `:`, and
//! where the field is).

use std::io::Write;
use std::path::Path;
use std::sync::Arc;

use fieldstore::fdb5::btree::BTree;
use fieldstore::fdb5::toc::{read_records, IndexRecord, Record};

use super::dump_toc::{braces, record_header};
use super::options::{usage, CommandLine, Opt, Synopsis, Value};
use super::Failure;

const OPTIONS: &[Opt] = &[Opt { name: "config", value: Value::Text, help: "FDB configuration filename" }];

/// Runs `fdb-dump-index` with `args` (the program name left out).
pub fn run(args: &[String]) -> Result<(), Failure> {
    let options: &[&[Opt]] = &[OPTIONS];
    let synopsis = Synopsis::Verbatim("\n\nUsage: fdb-dump-index [path1] [path2] ...\n\n");
    let line = CommandLine::parse(args, options).map_err(|e| Failure::Usage(e, usage("fdb-dump-index", &synopsis, options)))?;
    let mut out = std::io::stdout().lock();
    for path in &line.requests {
        writeln!(out, "Dumping contents of index file {path}")?;
        out.flush()?;
        dump(Path::new(path), &mut out)?;
    }
    Ok(())
}

/// The records of `index`'s database naming it, each with its B-tree's entries.
fn dump(index: &Path, out: &mut impl Write) -> Result<(), Failure> {
    let dir = index.parent().unwrap_or(Path::new(""));
    let name = index.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    for placed in read_records(&dir.join("toc"))? {
        let Record::Index(record) = &placed.record else { continue };
        if Path::new(&record.file).file_name().map(|n| n.to_string_lossy()) != Some(name.as_str().into()) {
            continue;
        }
        writeln!(out, "{}", record_header(&placed))?;
        describe(record, &std::path::absolute(dir)?, out)?;
        let file = Arc::new(
            std::fs::File::open(index)
                .map_err(|e| Failure::Store(anyhow::Error::new(e).context(format!("Cannot open {}", index.display()))))?,
        );
        writeln!(out, "\n  Contents of index: ")?;
        for (fingerprint, field) in BTree::open(file, index, record.offset, &record.kind)?.entries()? {
            writeln!(
                out,
                "    Fingerprint: {fingerprint}, location: FieldRefLocation(pathid={},offset={},length={})",
                field.file, field.offset, field.length
            )?;
        }
    }
    Ok(())
}

/// The index's place, key, data files and axes, as FDB5's `TocIndex::dump` prints them.
fn describe(record: &IndexRecord, dir: &Path, out: &mut impl Write) -> std::io::Result<()> {
    writeln!(out, "  Path: {}, offset: {}, type: {}  Key: {}", record.file, record.offset, record.kind, braces(&record.key))?;
    files_and_axes(record, dir, out)
}

/// The index's data files (absolute, `dir` the database's) and axes, as FDB5 prints them.
pub(super) fn files_and_axes(record: &IndexRecord, dir: &Path, out: &mut impl Write) -> std::io::Result<()> {
    writeln!(out, "  Files:")?;
    for (id, file) in &record.data_files {
        // FDB5's stream keeps the left alignment its timestamp set.
        writeln!(out, "    {id:<4}=> URI[scheme=file,name={}]", dir.join(file).display())?;
    }
    writeln!(out, "  Axes:")?;
    for (keyword, values) in &record.axes {
        writeln!(out, "    {keyword}")?;
        for value in values {
            writeln!(out, "      {}", if value.is_empty() { "<empty>" } else { value })?;
        }
    }
    Ok(())
}
