//! `fdb-dump-toc`, as FDB5 5.25's: each record of each FDB5 TOC file given, one per line, with
//! who wrote it and when (its header), then what it says; `--structure` adds where it is in the
//! file. `--walk` (sub-TOCs read in place of their records) is refused: fieldstore never writes
//! sub-TOCs, and FDB5 writes them only with `useSubToc`.

use std::io::Write;
use std::path::Path;

use fieldstore::fdb5::toc::{read_records, Fdb5Key, Placed, Record, Written};

use super::options::{usage, CommandLine, Opt, Synopsis, Value};
use super::Failure;

const OPTIONS: &[Opt] = &[
    Opt { name: "walk", value: Value::Switch, help: "Walk subtocs rather than show simple entries" },
    Opt { name: "structure", value: Value::Switch, help: "Add toc record lengths and offsets to output" },
];

/// Runs `fdb-dump-toc` with `args` (the program name left out).
pub fn run(args: &[String]) -> Result<(), Failure> {
    let options: &[&[Opt]] = &[OPTIONS];
    let synopsis = Synopsis::Verbatim("\n\nUsage: fdb-dump-toc [path1] [path2] ...\n\n");
    // FDB5's tool reads files, no config: `fieldstore --config FILE fdb-dump-toc` passes one on.
    let args: Vec<String> = args.iter().filter(|a| !a.starts_with("--config=")).cloned().collect();
    let line = CommandLine::parse(&args, options).map_err(|e| Failure::Usage(e, usage("fdb-dump-toc", &synopsis, options)))?;
    if line.has("walk") {
        return Err(Failure::unsupported("--walk: sub-TOCs are listed as their records, not read in place"));
    }
    let mut out = std::io::stdout().lock();
    for path in &line.requests {
        let toc = Path::new(path);
        let records = read_records(toc)?;
        let absolute = toc.canonicalize().map_err(|e| Failure::Store(anyhow::Error::new(e).context(format!("Cannot open {path}"))))?;
        for placed in records {
            let mut text = record_line(&placed);
            if line.has("structure") {
                text.push_str(&format!(", toc-offset: {}, length: {}, toc-path: {}", placed.at, placed.size, absolute.display()));
            }
            writeln!(out, "{text}")?;
        }
    }
    Ok(())
}

/// A record's tag and header as FDB5's `TocRecord::dump` prints them: `TOC_INDEX WHEN,
/// version:N, fdb: N, uid: USER, pid N, host: HOST`.
pub(super) fn record_header(placed: &Placed) -> String {
    let tag = match placed.record {
        Record::Init { .. } => "TOC_INIT ",
        Record::Index(_) => "TOC_INDEX",
        Record::Clear { .. } => "TOC_CLEAR",
        Record::SubToc { .. } => "TOC_SUB_TOC",
    };
    format!("{tag} {}, version:{}{}", timestamp(&placed.written), placed.version, writer(&placed.written))
}

/// One record as FDB5's `TocHandler::dump` prints it on one line.
pub(super) fn record_line(placed: &Placed) -> String {
    let what = match &placed.record {
        Record::Init { key, sub_toc } => format!("  key: {}, sub-toc: {}", braces(key), if *sub_toc { "yes" } else { "no" }),
        Record::Index(index) => {
            format!("  path: {}, offset: {}, type: {}  Key: {}", index.file, index.offset, index.kind, braces(&index.key))
        }
        Record::Clear { path, offset } => format!("  path: {path}, offset: {offset}"),
        Record::SubToc { path } => format!("  path: {path}"),
    };
    record_header(placed) + &what
}

/// `, fdb: N, uid: USER, pid N, host: HOST`, as FDB5 pads them (left-aligned: its stream
/// keeps the alignment the timestamp set).
fn writer(w: &Written) -> String {
    format!(", fdb: {}, uid: {:<4}, pid {:<5}, host: {}", w.fdb_version, user_name(w.uid), w.pid, w.host)
}

/// `YYYY-MM-DD HH:MM:SS.UUUUUU` in local time, the microseconds as FDB5 prints them (the
/// digits of `usec / 1e6` after `0.`, six significant, padded with zeros on the right).
fn timestamp(w: &Written) -> String {
    let seconds = w.seconds as libc::time_t;
    let mut tm = std::mem::MaybeUninit::<libc::tm>::zeroed();
    // SAFETY: localtime_r fills tm from seconds; both live across the call.
    let tm = unsafe {
        if libc::localtime_r(&seconds, tm.as_mut_ptr()).is_null() {
            return w.seconds.to_string();
        }
        tm.assume_init()
    };
    let fraction = significant6(w.microseconds as f64 / 1e6);
    let digits = fraction.get(2..).unwrap_or_default();
    format!(
        "{:04}-{:02}-{:02} {:02}:{:02}:{:02}.{digits:0<6}",
        i64::from(tm.tm_year) + 1900,
        tm.tm_mon + 1,
        tm.tm_mday,
        tm.tm_hour,
        tm.tm_min,
        tm.tm_sec
    )
}

/// `value` (0 to 1) as C++'s default stream prints it: six significant digits, trailing zeros
/// dropped.
fn significant6(value: f64) -> String {
    if value == 0.0 {
        return "0".into();
    }
    let decimals = (5 - value.abs().log10().floor() as i32).max(0) as usize;
    let text = format!("{value:.decimals$}");
    if text.contains('.') {
        text.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        text
    }
}

/// The user's name, else the uid.
fn user_name(uid: u32) -> String {
    let mut buffer = vec![0u8; 4096];
    let mut entry = std::mem::MaybeUninit::<libc::passwd>::zeroed();
    let mut found: *mut libc::passwd = std::ptr::null_mut();
    // SAFETY: getpwuid_r writes into entry and buffer, both alive and sized as passed.
    let rc = unsafe { libc::getpwuid_r(uid, entry.as_mut_ptr(), buffer.as_mut_ptr().cast(), buffer.len(), &mut found) };
    if rc != 0 || found.is_null() {
        return uid.to_string();
    }
    // SAFETY: found points at entry, filled; pw_name points into buffer, NUL-terminated.
    unsafe { std::ffi::CStr::from_ptr((*found).pw_name) }.to_string_lossy().into_owned()
}

/// A key as FDB5 prints one: `{k=v,...}`, empty values left out.
pub(super) fn braces(key: &Fdb5Key) -> String {
    let pairs: Vec<String> = key.iter().filter(|(_, v)| !v.is_empty()).map(|(k, v)| format!("{k}={v}")).collect();
    format!("{{{}}}", pairs.join(","))
}

#[cfg(test)]
mod tests {
    use super::significant6;

    #[test]
    fn fractions_print_as_cpp_streams_print_them() {
        assert_eq!(significant6(0.895112), "0.895112");
        assert_eq!(significant6(0.89511), "0.89511");
        assert_eq!(significant6(0.0123456), "0.0123456");
        assert_eq!(significant6(0.5), "0.5");
        assert_eq!(significant6(0.0), "0");
    }
}
