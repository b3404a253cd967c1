//! `fdb-stats`, as FDB5 5.25's: for the data sets a request names, their fields (all entries,
//! duplicates, reachable ones) and what their catalogues keep (TOC records and sizes, schema,
//! index and data files), with `--details` a block per data set, then the summary; or
//! `--json`, the totals under FDB5's names.

use std::io::Write;

use fieldstore::{ListOptions, StatsReport};
use serde::Serialize;

use super::options::{CommandLine, Opt, Value, VISIT, VISIT_LAST};
use super::text::{big_num, bytes};
use super::{Failure, ToolRequests};

const OPTIONS: &[Opt] = &[
    Opt { name: "details", value: Value::Switch, help: "Print report for each database visited" },
    Opt { name: "json", value: Value::Switch, help: "Output the statistics in JSON form" },
    Opt { name: "threads", value: Value::Integer, help: "Number of threads to use for index reading (default 8)" },
];

/// The totals, under FDB5's JSON names (data files outside a database's directory, FDB5's
/// "adopted" ones, are none: fieldstore's stores keep a data set's files in its place).
#[derive(Default, Serialize)]
#[serde(rename_all = "camelCase")]
struct Totals {
    fields: u64,
    fields_size: u64,
    duplicates: u64,
    duplicates_size: u64,
    reachable: u64,
    reachable_size: u64,
    databases: u64,
    toc_records: u64,
    toc_size: u64,
    schema_size: u64,
    owned_data_files: u64,
    owned_data_size: u64,
    adopted_data_files: u64,
    adopted_data_size: u64,
    index_files: u64,
    index_size: u64,
    total_owned_size: u64,
    total_size: u64,
}

impl Totals {
    fn of(report: &StatsReport) -> Totals {
        let usage = report.catalogue.clone().unwrap_or_default();
        let (toc, schema, index, data) = (
            usage.record_bytes.unwrap_or(0),
            usage.schema_bytes.unwrap_or(0),
            usage.index_bytes.unwrap_or(0),
            usage.data_bytes.unwrap_or(0),
        );
        let owned = data.saturating_add(index).saturating_add(toc).saturating_add(schema);
        Totals {
            fields: report.fields.saturating_add(report.superseded_fields),
            fields_size: report.bytes.saturating_add(report.superseded_bytes),
            duplicates: report.superseded_fields,
            duplicates_size: report.superseded_bytes,
            reachable: report.fields,
            reachable_size: report.bytes,
            databases: report.datasets,
            toc_records: usage.records.unwrap_or(0),
            toc_size: toc,
            schema_size: schema,
            owned_data_files: usage.data_files.unwrap_or(0),
            owned_data_size: data,
            index_files: usage.index_files.unwrap_or(0),
            index_size: index,
            total_owned_size: owned,
            total_size: owned,
            ..Totals::default()
        }
    }

    fn add(&mut self, other: &Totals) {
        let sums = [
            (&mut self.fields, other.fields),
            (&mut self.fields_size, other.fields_size),
            (&mut self.duplicates, other.duplicates),
            (&mut self.duplicates_size, other.duplicates_size),
            (&mut self.reachable, other.reachable),
            (&mut self.reachable_size, other.reachable_size),
            (&mut self.databases, other.databases),
            (&mut self.toc_records, other.toc_records),
            (&mut self.toc_size, other.toc_size),
            (&mut self.schema_size, other.schema_size),
            (&mut self.owned_data_files, other.owned_data_files),
            (&mut self.owned_data_size, other.owned_data_size),
            (&mut self.index_files, other.index_files),
            (&mut self.index_size, other.index_size),
            (&mut self.total_owned_size, other.total_owned_size),
            (&mut self.total_size, other.total_size),
        ];
        for (total, value) in sums {
            *total = total.saturating_add(value);
        }
    }

    /// FDB5's lines: index statistics, then the databases' (a count of 0 is not printed).
    fn lines(&self) -> String {
        let lines = [
            count("Fields", self.fields),
            size("Size of fields", self.fields_size),
            count("Duplicated fields", self.duplicates),
            size("Size of duplicates", self.duplicates_size),
            count("Reacheable fields", self.reachable),
            size("Reachable size", self.reachable_size),
            count("Databases", self.databases),
            count("TOC records", self.toc_records),
            size("Size of TOC files", self.toc_size),
            size("Size of schemas files", self.schema_size),
            count("TOC records", self.toc_records),
            count("Owned data files", self.owned_data_files),
            size("Size of owned data files", self.owned_data_size),
            count("Index files", self.index_files),
            size("Size of index files", self.index_size),
            size("Size of TOC files", self.toc_size),
            size("Total owned size", self.total_owned_size),
            size("Total size", self.total_size),
        ];
        lines.concat()
    }
}

/// A line of FDB5's statistics: the title, `: ` aligned as FDB5 aligns it, the count; none
/// for 0, as FDB5 leaves such lines out.
fn count(title: &str, n: u64) -> String {
    if n == 0 {
        return String::new();
    }
    format!("{title:<32}: {}\n", big_num(n))
}

/// A size's line: the count of bytes, then the size in units; none for 0.
fn size(title: &str, n: u64) -> String {
    if n == 0 {
        return String::new();
    }
    format!("{title:<32}: {} ({})\n", big_num(n), bytes(n))
}

/// Runs `fdb-stats` with `args` (the program name left out).
pub fn run(args: &[String]) -> Result<(), Failure> {
    let options: &[&[Opt]] = &[VISIT, OPTIONS, VISIT_LAST];
    let line = CommandLine::parse(args, options).map_err(|e| Failure::usage(e, "fdb-stats", options))?;
    let tool = ToolRequests::open(&line, "class,expver")?;
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    let mut summary = Totals::default();
    let mut details = Vec::new();
    let mut nothing = Vec::new();
    for (request, _) in tool.requests()? {
        let listed = tool.store.list(&request, ListOptions { depth: 1, ..ListOptions::default() })?;
        if let Some(why) = listed.explanation {
            nothing.push(format!("{request} ({why})"));
        }
        for dataset in listed.datasets {
            let totals = Totals::of(&tool.store.dataset_stats(&dataset)?);
            summary.add(&totals);
            if line.has("details") {
                details.push(totals);
            }
        }
    }
    // Counted over every request, as FDB5 counts: no data set at all is the error.
    if summary.databases == 0 && !nothing.is_empty() && !line.has("ignore-no-data") {
        return Err(Failure::User(format!("No FDB entries found for: {}", nothing.join("; "))));
    }
    if summary.databases == 0 {
        // Nothing visited (`--ignore-no-data`): no summary, as FDB5.
    } else if line.has("json") {
        /// `--details` adds each database's totals before the summary's.
        #[derive(Serialize)]
        struct Report<'a> {
            #[serde(skip_serializing_if = "<[Totals]>::is_empty")]
            details: &'a [Totals],
            #[serde(flatten)]
            summary: &'a Totals,
        }
        serde_json::to_writer(&mut out, &Report { details: &details, summary: &summary }).map_err(|e| Failure::io(e.into()))?;
        writeln!(out)?;
    } else {
        for totals in &details {
            write!(out, "\n{}\n", totals.lines())?;
        }
        write!(out, "\nSummary:\n========\n\n{}{}\n", count("Number of databases", summary.databases), summary.lines())?;
    }
    out.flush()?;
    Ok(())
}
