//! `fdb-wipe`, as FDB5 5.25's: a dry run unless `--doit`; per data set, the files its wipe
//! removes, by FDB5's kinds (catalogue, control, index and data URIs, as absolute paths),
//! under `[Database: DIR, FDB Owner: USER]`; with `--doit`, `Unlinking: PATH` for each, then
//! `rmdir: DIR`; `--porcelain`, the blocks alone. fieldstore's own data sets only: FDB5's
//! databases, read in place, are never wiped by fieldstore.

use std::collections::BTreeMap;
use std::io::Write;
use std::os::unix::fs::MetadataExt;

use fieldstore::{ErrorKind, FieldStore, WipeReport};

use super::options::{CommandLine, Opt, Value, VISIT, VISIT_LAST};
use super::{Failure, ToolRequests};

const OPTIONS: &[Opt] = &[
    Opt { name: "doit", value: Value::Switch, help: "Delete the files (data and indexes)" },
    Opt { name: "porcelain", value: Value::Switch, help: "List only the deleted files" },
    Opt { name: "unsafe-wipe-all", value: Value::Switch, help: "Wipe all (unowned) contents of an unclean database" },
];

/// Runs `fdb-wipe` with `args` (the program name left out).
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
        // What the wipe takes, with its directories' owners, learnt before anything goes.
        let planned = match tool.store.wipe(&request, false) {
            Err(e) if e.kind() == ErrorKind::NotFound && line.has("ignore-no-data") => continue,
            Err(e) if e.kind() == ErrorKind::NotFound => {
                return Err(Failure::User(format!("No FDB entries found matching the provided request: {request} ({e})")));
            }
            other => other?,
        };
        let mut blocks = Blocks::of(&tool.store, &planned)?;
        if doit {
            let done = tool.store.wipe(&request, true)?;
            blocks = Blocks { owners: blocks.owners, ..Blocks::of(&tool.store, &done)? };
            if !porcelain {
                blocks.print_unlinking(&mut out, &done)?;
            }
        }
        blocks.print(&mut out)?;
    }
    if !doit && !porcelain {
        writeln!(out, "\nRerun command with --doit flag to delete unused files\n")?;
    }
    out.flush()?;
    Ok(())
}

/// FDB5's kinds of files, in the order its report lists them.
const KINDS: [&str; 4] = ["Catalogue", "Control", "Index", "Data"];

/// A wipe's files by data set directory (`DIR` of their `DIR/FILE` names), each kind's as
/// absolute paths, sorted; and each directory's path and owner.
struct Blocks {
    files: BTreeMap<String, [Vec<String>; 4]>,
    owners: BTreeMap<String, (String, String)>,
}

impl Blocks {
    fn of(fs: &FieldStore, report: &WipeReport) -> Result<Blocks, Failure> {
        let kinds = [&report.catalogue_files, &report.control_files, &report.catalogue_removed, &report.removed];
        let mut files: BTreeMap<String, [Vec<String>; 4]> = BTreeMap::new();
        let mut owners = BTreeMap::new();
        for (i, names) in kinds.iter().enumerate() {
            for name in names.iter() {
                let dir = name.split_once('/').map_or("", |(dir, _)| dir).to_string();
                let path = fs.absolute_uri(name)?;
                if let Some(parent) = std::path::Path::new(&path).parent() {
                    let owner = std::fs::metadata(parent).map(|m| user_name(m.uid())).unwrap_or_default();
                    owners.entry(dir.clone()).or_insert_with(|| (parent.display().to_string(), owner));
                }
                files.entry(dir).or_default()[i].push(path);
            }
        }
        for kinds in files.values_mut() {
            kinds.iter_mut().for_each(|paths| paths.sort());
        }
        Ok(Blocks { files, owners })
    }

    /// `Unlinking: PATH` for each file gone (data, catalogue, index, control), then `rmdir:
    /// DIR` for each data set wiped whole (its catalogue's own files gone with it).
    fn print_unlinking(&self, out: &mut impl Write, done: &WipeReport) -> std::io::Result<()> {
        for (dir, kinds) in &self.files {
            for i in [3, 0, 2, 1] {
                for path in &kinds[i] {
                    writeln!(out, "Unlinking: {path}")?;
                }
            }
            if let (false, Some((path, _))) = (kinds[0].is_empty() || done.datasets.is_empty(), self.owners.get(dir)) {
                writeln!(out, "rmdir: {path}")?;
            }
        }
        Ok(())
    }

    /// `[Database: DIR, FDB Owner: USER]` and each kind's files (control files only where
    /// there are some, as FDB5 prints them).
    fn print(&self, out: &mut impl Write) -> std::io::Result<()> {
        for (dir, kinds) in &self.files {
            let owner = self.owners.get(dir).map_or("", |(_, owner)| owner.as_str());
            writeln!(out, "[Database: {dir}, FDB Owner: {owner}]")?;
            for (kind, paths) in KINDS.iter().zip(kinds) {
                if paths.is_empty() && *kind == "Control" {
                    continue;
                }
                writeln!(out, "{kind} URIs to delete:")?;
                for path in paths {
                    writeln!(out, "    {path}")?;
                }
                writeln!(out)?;
            }
        }
        Ok(())
    }
}

/// The name of the user `uid`, else the number.
fn user_name(uid: u32) -> String {
    // SAFETY: getpwuid returns null or a pointer to a static record, read at once and not kept
    // (the tool runs on one thread); its name is a NUL-terminated string.
    unsafe {
        let record = libc::getpwuid(uid);
        if record.is_null() || (*record).pw_name.is_null() {
            return uid.to_string();
        }
        std::ffi::CStr::from_ptr((*record).pw_name).to_string_lossy().into_owned()
    }
}
