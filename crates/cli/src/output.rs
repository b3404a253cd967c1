//! Printing: FDB5's text formats by default, `--json` and `--porcelain` for scripts, and
//! progress bars on standard error when standard output is a terminal.

use std::collections::{BTreeMap, BTreeSet};
use std::io::{IsTerminal, Write};

use fieldstore::api::Matches;
use fieldstore::{CompactReport, Config, ControlAction, Key, PurgeReport, StatsReport, WhereReport, WipeReport};
use indicatif::{ProgressBar, ProgressStyle};
use serde::Serialize;

#[derive(Clone, Copy)]
pub struct ListStyle {
    pub location: bool,
    /// FDB5's lines and nothing else (no marks of fieldstore's own).
    pub porcelain: bool,
    /// `k=v,...` lines.
    pub flat: bool,
    pub json: bool,
}

/// How much the tool says on standard error besides errors.
#[derive(Clone, Copy, PartialEq, PartialOrd)]
pub enum Verbosity {
    Quiet = 0,
    Normal = 1,
    Verbose = 2,
}

static VERBOSITY: std::sync::atomic::AtomicU8 = std::sync::atomic::AtomicU8::new(Verbosity::Normal as u8);

pub fn set_verbosity(v: Verbosity) {
    VERBOSITY.store(v as u8, std::sync::atomic::Ordering::Relaxed);
}

/// Whether lines of this level are shown.
pub fn shown(level: Verbosity) -> bool {
    VERBOSITY.load(std::sync::atomic::Ordering::Relaxed) >= level as u8
}

/// A progress bar of bytes on standard error while it is a terminal (hidden otherwise, and
/// for no work), with sizes and rates as people read them and the time left.
pub fn progress(total: u64, what: &str) -> ProgressBar {
    bar(total, what, "{msg} [{bar:40}] {binary_bytes}/{binary_total_bytes} ({binary_bytes_per_sec}, {eta} left)")
}

/// A progress bar of things counted (fields) on standard error while it is a terminal
/// (hidden otherwise, and for no work), with the time left.
pub fn count_progress(total: u64, what: &str) -> ProgressBar {
    bar(total, what, "{msg} [{bar:40}] {human_pos}/{human_len} ({per_sec}, {eta} left)")
}

/// A progress bar drawn with `template` on standard error while it is a terminal.
fn bar(total: u64, what: &str, template: &str) -> ProgressBar {
    if !std::io::stderr().is_terminal() || total == 0 || !shown(Verbosity::Normal) {
        return ProgressBar::hidden();
    }
    let bar = ProgressBar::new(total);
    bar.set_style(ProgressStyle::with_template(template).expect("a valid template").progress_chars("=> "));
    bar.set_message(what.to_string());
    bar
}

/// What `fieldstore scan` kept, for people or (`--json`) programs.
pub fn print_kept_packings(request: &fieldstore::Request, kept: &fieldstore::extract::KeptPackings, json: bool) -> anyhow::Result<()> {
    if json {
        let mut value = serde_json::to_value(kept)?;
        value["request"] = request.to_string().into();
        outln!("{}", serde_json::to_string_pretty(&value)?);
    } else {
        outln!(
            "{request}: {} fields; {} packings kept already, {} learnt (reading {}) and kept in {} side objects",
            kept.fields,
            kept.already_kept,
            kept.learnt,
            indicatif::HumanBytes(kept.bytes_read),
            kept.side_objects
        );
    }
    Ok(())
}

/// A spinner on standard error while it is a terminal, for work of unknown length.
pub fn spinner(what: &str) -> ProgressBar {
    if !std::io::stderr().is_terminal() || !shown(Verbosity::Normal) {
        return ProgressBar::hidden();
    }
    let spinner = ProgressBar::new_spinner().with_message(what.to_string());
    spinner.enable_steady_tick(std::time::Duration::from_millis(100));
    spinner
}

fn braces(key: &Key) -> String {
    format!("{{{}}}", key.non_empty())
}

pub fn print_list(m: &Matches, depth: u8, style: ListStyle) -> anyhow::Result<()> {
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    if style.json {
        // Written straight from the matches: a JSON tree of a million fields took gigabytes.
        #[derive(Serialize)]
        struct Collocation<'a> {
            dataset: &'a Key,
            collocation: &'a Key,
        }
        match depth {
            1 => serde_json::to_writer_pretty(&mut out, &m.datasets)?,
            2 => {
                let pairs: Vec<Collocation> =
                    m.collocations.iter().map(|(dataset, collocation)| Collocation { dataset, collocation }).collect();
                serde_json::to_writer_pretty(&mut out, &pairs)?
            }
            _ => serde_json::to_writer_pretty(&mut out, &m.fields)?,
        }
        writeln!(out)?;
        return Ok(out.flush()?);
    }
    let line = |keys: &[&Key]| if style.flat { Key::join(keys).display_non_empty() } else { keys.iter().map(|k| braces(k)).collect() };
    match depth {
        1 => {
            for d in &m.datasets {
                writeln!(out, "{}", line(&[d]))?;
            }
        }
        2 => {
            for (d, c) in &m.collocations {
                writeln!(out, "{}", line(&[d, c]))?;
            }
        }
        _ => {
            // A data set's and collocation's fields come together: the text of the two keys
            // they share is made once per run of them, and each line written where it goes.
            let mut shared: Option<(&Key, &Key, String)> = None;
            for f in &m.fields {
                let (dataset, collocation) = (&*f.dataset, &*f.collocation);
                let prefix = match &shared {
                    Some((d, c, prefix)) if std::ptr::eq(*d, dataset) && std::ptr::eq(*c, collocation) => prefix,
                    _ => &shared.insert((dataset, collocation, line(&[dataset, collocation]))).2,
                };
                let element = f.element.non_empty();
                if !style.flat {
                    write!(out, "{prefix}{{{element}}}")?;
                } else if prefix.is_empty() || element.is_empty() {
                    write!(out, "{prefix}{element}")?;
                } else {
                    write!(out, "{prefix},{element}")?;
                }
                if style.location {
                    write!(out, " {} offset={} length={}", f.location.uri, f.location.offset, f.location.length)?;
                }
                if f.superseded && !style.porcelain {
                    write!(out, " (superseded)")?;
                }
                writeln!(out)?;
            }
        }
    }
    Ok(out.flush()?)
}

pub fn print_axes(axes: &BTreeMap<String, Vec<String>>, json: bool) -> anyhow::Result<()> {
    if json {
        outln!("{}", serde_json::to_string_pretty(axes)?);
    } else {
        for (k, v) in axes {
            outln!("{k}: {}", v.join(", "));
        }
    }
    Ok(())
}

pub fn print_json_or<T: Serialize + ?Sized>(value: &T, json: bool, text: fn(&T) -> String) -> anyhow::Result<()> {
    if json {
        outln!("{}", serde_json::to_string_pretty(value)?);
    } else {
        out!("{}", text(value));
    }
    Ok(())
}

/// A progress bar per data set, each replaced by the next data set's as it begins.
#[derive(Default)]
pub struct DatasetBar(Option<(fieldstore::Key, ProgressBar)>);

impl DatasetBar {
    /// Shows `done` of `total` bytes of `dataset`.
    pub fn show(&mut self, dataset: &fieldstore::Key, done: u64, total: u64) {
        if self.0.as_ref().is_none_or(|(d, _)| d != dataset) {
            self.finish();
            self.0 = Some((dataset.clone(), progress(total, &format!("moving {dataset}"))));
        }
        if let Some((_, bar)) = &self.0 {
            bar.set_position(done);
        }
    }

    /// Clears the bar shown.
    pub fn finish(&mut self) {
        if let Some((_, bar)) = self.0.take() {
            bar.finish_and_clear();
        }
    }
}

/// A report as JSON, with the seconds its command took beside its fields.
fn print_json_timed<T: Serialize>(report: &T, seconds: f64) -> anyhow::Result<()> {
    #[derive(Serialize)]
    struct Timed<'a, T> {
        #[serde(flatten)]
        report: &'a T,
        seconds: f64,
    }
    outln!("{}", serde_json::to_string_pretty(&Timed { report, seconds })?);
    Ok(())
}

/// What an archive kept beside its fields (`extract: {keep_packings: true}`), if anything.
pub fn note_kept_beside(kept: &fieldstore::api::KeptBeside) {
    if kept.fields > 0 {
        note!("kept the packings of {} field(s) beside them, for extraction", kept.fields);
    }
    if kept.not_kept > 0 {
        let why = kept.first_reason.as_deref().unwrap_or("no reason given");
        note!("the packings of {} field(s) were not kept ({why}): extraction learns them from the whole fields", kept.not_kept);
    }
}

/// A copy's summary: what was named, copied, found already there and checked, and how fast.
pub fn print_copy(report: &fieldstore::CopyReport, seconds: f64, json: bool) -> anyhow::Result<()> {
    if json {
        return print_json_timed(report, seconds);
    }
    let rate = if seconds > 0.0 { human_bytes((report.bytes_copied as f64 / seconds) as u64) } else { "-".to_string() };
    let read_back = if report.read_back > 0 { format!(", {} read back", report.read_back) } else { String::new() };
    note!(
        "copied {} of {} fields ({}) in {seconds:.2} s ({rate}/s); {} already in the target; {} verified{read_back}",
        report.copied,
        report.fields,
        human_bytes(report.bytes_copied),
        report.already_there,
        report.verified
    );
    Ok(())
}

/// What a reindex indexed, and where.
pub fn reindex_text(report: &fieldstore::ReindexReport) -> String {
    let datasets: Vec<String> = report.datasets.iter().map(braces).collect();
    let into = if datasets.is_empty() { String::new() } else { format!(" into {}", datasets.join(", ")) };
    let locked = if datasets.is_empty() { "" } else { "; locked for wipe there: the data is the source's" };
    format!("indexed {} fields ({}, not copied){into}{locked}\n", report.fields, human_bytes(report.bytes))
}

/// A move's summary: each data set's directories before and after, and what was copied.
pub fn print_move(report: &fieldstore::MoveReport, seconds: f64, json: bool) -> anyhow::Result<()> {
    if json {
        return print_json_timed(report, seconds);
    }
    for m in &report.datasets {
        for leftover in &m.leftovers_removed {
            note!("removed {}, left by a move of {} that was stopped", leftover.display(), m.dataset);
        }
        for kept in &m.leftovers_kept {
            note!("kept {}: the source of a move of {} that was stopped (kept as that move or its root asked)", kept.display(), m.dataset);
        }
        if m.already_there {
            note!("{} is in {} already", m.dataset, m.to.display());
            continue;
        }
        let kept = m.kept.as_ref().map(|k| format!("; the source kept as {}", k.display())).unwrap_or_default();
        note!("moved {} from {} to {}: {} files, {}{kept}", m.dataset, m.from.display(), m.to.display(), m.files, human_bytes(m.bytes));
    }
    let moved: Vec<&fieldstore::DatasetMove> = report.datasets.iter().filter(|m| !m.already_there).collect();
    let bytes = moved.iter().map(|m| m.bytes).sum::<u64>();
    note!("moved {} data set(s), {} in {seconds:.2} s", moved.len(), human_bytes(bytes));
    Ok(())
}

/// A move to another store's summary: each data set's fields moved, found there already and checked.
pub fn print_store_move(report: &fieldstore::StoreMoveReport, seconds: f64, json: bool) -> anyhow::Result<()> {
    if json {
        return print_json_timed(report, seconds);
    }
    for m in &report.datasets {
        let c = &m.copy;
        note!(
            "moved {}: {} fields ({}), {} of them in the target already, every one checked there; wiped from the source",
            m.dataset,
            c.fields,
            human_bytes(c.bytes),
            c.already_there
        );
    }
    let bytes = report.datasets.iter().map(|m| m.copy.bytes).sum::<u64>();
    note!("moved {} data set(s), {} in {seconds:.2} s", report.datasets.len(), human_bytes(bytes));
    Ok(())
}

pub fn stats_text(s: &StatsReport) -> String {
    let mut text = format!(
        "data sets: {}\nindexes: {}\nfields: {}\nbytes: {}\nsuperseded fields: {}\nsuperseded bytes: {}\ndata files/objects: {}\n",
        s.datasets,
        s.indexes,
        s.fields,
        human_bytes(s.bytes),
        s.superseded_fields,
        human_bytes(s.superseded_bytes),
        s.data_objects
    );
    // What the catalogue says of its own files, each line only where it says it (FDB5's DB
    // statistics; an object store's catalogue may know counts but not sizes).
    if let Some(c) = &s.catalogue {
        let lines = [
            ("TOC/log records", c.records, None),
            ("TOC/log size", None, c.record_bytes),
            ("schema size", None, c.schema_bytes),
            ("index files/objects", c.index_files, c.index_bytes),
            ("owned data files", c.data_files, c.data_bytes),
        ];
        for (label, count, bytes) in lines {
            let value = match (count, bytes) {
                (Some(n), Some(b)) => format!("{n} ({})", human_bytes(b)),
                (Some(n), None) => n.to_string(),
                (None, Some(b)) => human_bytes(b),
                (None, None) => continue,
            };
            text += &format!("{label}: {value}\n");
        }
    }
    text
}

pub fn where_text(w: &[WhereReport]) -> String {
    w.iter().map(|r| format!("{}\n  catalogue: {}\n  store: {}\n", braces(&r.dataset), r.catalogue, r.store)).collect()
}

pub fn print_wipe(r: &WipeReport, json: bool) -> anyhow::Result<()> {
    print_json_or(r, json, |r| {
        let verb = if r.done { "wiped" } else { "would wipe (dry run; add --doit)" };
        let mut s = String::new();
        for d in &r.datasets {
            s.push_str(&format!("{verb} data set {}\n", braces(d)));
        }
        for (d, c) in &r.collocations {
            s.push_str(&format!("{verb} collocation {}{}\n", braces(d), braces(c)));
        }
        for u in r.removed.iter().chain(&r.catalogue_removed).chain(&r.catalogue_files).chain(&r.control_files) {
            s.push_str(&format!("  {} {u}\n", if r.done { "removed" } else { "would remove" }));
        }
        s.push_str(&in_use_text(&r.in_use));
        s
    })
}

/// What a comparison found: the fields on one side only, the fields that differ and how,
/// then the verdict.
pub fn compare_text(r: &fieldstore::CompareReport) -> String {
    let key = |k: &fieldstore::MarsKey| k.iter().map(|(k, v)| format!("{k}={v}")).collect::<Vec<_>>().join(",");
    let mut s = format!("reference: {} fields; other: {} fields\n", r.reference_fields, r.test_fields);
    for k in &r.only_in_reference {
        s.push_str(&format!("only in the reference: {{{}}}\n", key(k)));
    }
    for k in &r.only_in_test {
        s.push_str(&format!("only in the other: {{{}}}\n", key(k)));
    }
    for m in &r.mismatches {
        s.push_str(&format!("differs: {{{}}}\n", key(&m.key)));
        for d in &m.differences {
            let shown = |v: &Option<String>| v.clone().unwrap_or_else(|| "(none)".into());
            s.push_str(&format!("  {}: {} != {}\n", d.key, shown(&d.reference), shown(&d.test)));
        }
    }
    s.push_str(if r.same() { "same\n" } else { "different\n" });
    s
}

/// Each data set, where its catalogue is, and its visible indexes (newest first) with their
/// places, fields and axes, and entries if dumped.
pub fn dump_text(dumps: &[fieldstore::DatasetDump]) -> String {
    let mut s = String::new();
    for d in dumps {
        s.push_str(&format!("{} ({})\n", braces(&d.dataset), d.catalogue));
        for source in &d.overlaid {
            s.push_str(&format!("  overlaid: {} (its fields shown as this data set's, after its own)\n", braces(source)));
        }
        for index in &d.indexes {
            let place = index.place.as_ref().map(|(file, offset)| format!(", {file} at {offset}")).unwrap_or_default();
            s.push_str(&format!("  index {} {}: {} fields{place}\n", index.id, braces(&index.collocation), index.fields));
            let axes: Vec<String> = index.axes.iter().map(|(k, v)| format!("{k}={}", v.join("/"))).collect();
            s.push_str(&format!("    axes: {}\n", axes.join(" ")));
            for (element, location) in index.entries.iter().flatten() {
                s.push_str(&format!("    {} {} {} {}\n", braces(element), location.uri, location.offset, location.length));
            }
        }
    }
    s
}

/// What an overlay did, and what the target shows now.
pub fn overlay_text(r: &fieldstore::api::OverlayReport) -> String {
    let made = if r.target_created { " (made for it)" } else { "" };
    let mut s = match r.shown {
        true => format!("data set {} is shown as part of {}{made}\n", braces(&r.source), braces(&r.target)),
        false => format!("data set {} is no longer shown as part of {}\n", braces(&r.source), braces(&r.target)),
    };
    let overlaid: Vec<String> = r.overlaid.iter().map(braces).collect();
    let now = if overlaid.is_empty() { "none".to_string() } else { overlaid.join(", ") };
    s.push_str(&format!("overlaid onto {} now: {now}\n", braces(&r.target)));
    s
}

/// Each data set hidden (or that would be), with its indexes and fields.
pub fn hide_text(reports: &[fieldstore::HideReport]) -> String {
    let mut s = String::new();
    for r in reports {
        let verb = if r.done { "hid" } else { "would hide (dry run; add --doit)" };
        s.push_str(&format!("{verb} data set {}: {} fields in {} indexes, kept on disk\n", braces(&r.dataset), r.fields, r.indexes));
    }
    s
}

pub fn print_purge(r: &PurgeReport, json: bool) -> anyhow::Result<()> {
    print_json_or(r, json, |r| {
        let (verb, freed, dry) = if r.done { ("purged", "freed", "") } else { ("would purge", "would free", " (dry run; add --doit)") };
        let index_files = if r.done { format!(", {} index files removed", r.catalogue_removed.len()) } else { String::new() };
        let mut text = format!(
            "{verb} {} of {} superseded fields{dry}: no longer listed or counted ({} indexes hidden{index_files})",
            r.fields_hidden, r.superseded_fields, r.indexes_masked
        );
        if r.fields_kept > 0 {
            text +=
                &format!("; {} stay (they share an index with live fields: `list --full` shows them, `stats` counts them)", r.fields_kept);
        }
        text += &format!(
            "\n{freed} {} of {} superseded bytes: {} data files/objects removed",
            human_bytes(r.bytes_freed),
            human_bytes(r.superseded_bytes),
            r.removed.len()
        );
        if r.unreclaimable_bytes > 0 {
            text += &format!(
                "; {} stay on disk (in files that also hold live fields, or left to live writers)",
                human_bytes(r.unreclaimable_bytes)
            );
        }
        text + "\n" + &in_use_text(&r.in_use)
    })
}

/// One line per data set: its indexes before and after, and what was written.
pub fn compact_text(r: &CompactReport) -> String {
    r.datasets
        .iter()
        .map(|d| {
            let (dataset, c) = (&d.dataset, &d.compaction);
            let done = match (&c.not_compacted, c.indexes_written) {
                (Some(why), _) => format!("not compacted: {why}"),
                (None, 0) => "nothing to merge".to_string(),
                (None, n) => format!("{n} compacted indexes written ({} entries)", c.entries_written),
            };
            format!("{{{dataset}}}: {} -> {} indexes, {done}\n", c.indexes_before, c.indexes_after)
        })
        .collect()
}

/// A byte count as people read it (exact counts are in `--json`).
pub fn human_bytes(bytes: u64) -> String {
    indicatif::BinaryBytes(bytes).to_string()
}

/// The files a wipe or purge left to the live writers still appending to them.
fn in_use_text(in_use: &[String]) -> String {
    in_use.iter().map(|u| format!("  left {u}: a live writer still appends to it (it stays: no later purge finds it yet)\n")).collect()
}

pub fn print_status(states: &[(Key, BTreeSet<ControlAction>)], json: bool) -> anyhow::Result<()> {
    if json {
        let v: Vec<_> = states.iter().map(|(k, l)| serde_json::json!({"dataset": k, "locked": l})).collect();
        outln!("{}", serde_json::to_string_pretty(&v)?);
        return Ok(());
    }
    for (k, locks) in states {
        let names: Vec<&str> = locks.iter().map(|a| a.name()).collect();
        outln!("{} locked: {}", braces(k), if names.is_empty() { "none".to_string() } else { names.join(",") });
    }
    Ok(())
}

pub fn print_info(config: &Config, datasets: usize, json: bool) -> anyhow::Result<()> {
    let schema = config.schema.as_ref().map(|p| p.display().to_string()).unwrap_or_else(|| "fieldstore default schema".into());
    let option_text = |b: &fieldstore::config::BackendConfig| serde_json::to_value(b.shown_options()).unwrap_or_default();
    let info = serde_json::json!({
        "version": env!("CARGO_PKG_VERSION"),
        "config": config.source,
        "schema": schema,
        "catalogue": {"type": config.catalogue.kind, "options": option_text(&config.catalogue)},
        "store": {"type": config.store.kind, "options": option_text(&config.store)},
        "read_also": config.read_also.iter().map(|b| serde_json::json!({"type": b.kind, "options": option_text(b)})).collect::<Vec<_>>(),
        "backends": fieldstore::BACKENDS.iter().map(|f| f.name).collect::<Vec<_>>(),
        "datasets": datasets,
    });
    if json {
        outln!("{}", serde_json::to_string_pretty(&info)?);
    } else {
        let read_also: String = config.read_also.iter().map(|b| format!("read also: {} {}\n", b.kind, option_text(b))).collect();
        outln!(
            "fieldstore {}\nconfig: {}\nschema: {schema}\ncatalogue: {} {}\nstore: {} {}\n{read_also}data sets: {datasets}{}",
            info["version"].as_str().unwrap_or(""),
            config.source,
            config.catalogue.kind,
            info["catalogue"]["options"],
            config.store.kind,
            info["store"]["options"],
            if datasets == 0 { " (the store is empty)" } else { "" }
        );
    }
    Ok(())
}

/// How `extract` prints.
pub enum ExtractStyle {
    /// Per field its identifier, then per range its values (`missing` where missing).
    Text,
    /// One JSON array of every field's extraction (null where missing).
    Json,
    /// One line per point: field, point, value (empty where missing).
    Csv,
}

/// The extractions of one `extract` command, printed as they come (JSON closes at the end).
pub struct Extracted {
    style: ExtractStyle,
    fields: usize,
}

impl Extracted {
    pub fn new(style: ExtractStyle) -> Self {
        Extracted { style, fields: 0 }
    }

    /// Prints one request's extractions.
    pub fn print(
        &mut self,
        extracted: &[fieldstore::extract::FieldExtraction],
        ranges: &[fieldstore::extract::Range],
    ) -> anyhow::Result<()> {
        let mut out = std::io::stdout().lock();
        for field in extracted {
            let identifier = field.field.identifier().to_string();
            let got = &field.extraction;
            match self.style {
                ExtractStyle::Text => {
                    writeln!(out, "{{{identifier}}}")?;
                    for (range, values) in ranges.iter().zip(&got.values) {
                        let shown: Vec<String> = values.iter().map(|v| if v.is_nan() { "missing".into() } else { v.to_string() }).collect();
                        writeln!(out, "  {}-{}: {}", range.start, range.end, shown.join(" "))?;
                    }
                }
                ExtractStyle::Csv => {
                    if self.fields == 0 {
                        writeln!(out, "field,point,value")?;
                    }
                    for (range, values) in ranges.iter().zip(&got.values) {
                        for (point, v) in (range.start..range.end).zip(values) {
                            let value = if v.is_nan() { String::new() } else { v.to_string() };
                            writeln!(out, "\"{identifier}\",{point},{value}")?;
                        }
                    }
                }
                ExtractStyle::Json => {
                    let values: Vec<Vec<Option<f64>>> =
                        got.values.iter().map(|vs| vs.iter().map(|v| (!v.is_nan()).then_some(*v)).collect()).collect();
                    let record = serde_json::json!({
                        "field": identifier,
                        "ranges": ranges.iter().map(|r| [r.start, r.end]).collect::<Vec<_>>(),
                        "values": values,
                        "bytes_read": got.bytes_read,
                        "decoded_whole": got.decoded_whole,
                    });
                    write!(out, "{}{}", if self.fields == 0 { "[\n" } else { ",\n" }, serde_json::to_string(&record)?)?;
                }
            }
            self.fields += 1;
        }
        Ok(())
    }

    /// Ends the output (JSON's closing bracket, an empty array if nothing was printed).
    pub fn finish(self) -> anyhow::Result<()> {
        if let ExtractStyle::Json = self.style {
            println!("{}]", if self.fields == 0 { "[" } else { "\n" });
        }
        Ok(())
    }
}
