//! The reports of `bench analyze` and `bench sweep`: offline HTML pages of tables and figures
//! (drawn by `fieldstore-figures`), and the same figures as PNG files for papers.
//!
//! Two kinds: the report of some event logs (one run: its phases' metrics, bandwidths, time
//! per operation and timeline), and the report of a study (one or more sweep directories: the
//! studies' figures over their configurations, and a timeline of one run of each sweep).

pub mod figures;
pub mod timeline;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use fieldstore::error::IoContext;
use fieldstore::{Error, ErrorKind, Result};
pub use fieldstore_figures::page::Page;
use fieldstore_figures::page::{Section, Table};
use fieldstore_figures::{Axis, Bars, Figure, Panel, Plot, Value};

use crate::analyze::{IoEvent, Overlap, PhaseMetrics, MIB};
pub use crate::study::Selection;
use crate::study::{Row, Run, Study, Sweep};

/// The report of one run's event logs.
pub fn log_page(title: &str, phases: &[PhaseMetrics], events: &[IoEvent], overlap: Option<&Overlap>) -> Page {
    let mut columns: Vec<String> = PhaseMetrics::COLUMNS.iter().map(|c| c.to_string()).collect();
    columns.push("mean s per process".into());
    let rows = phases
        .iter()
        .map(|p| {
            let ops: Vec<String> = p.breakdown.iter().map(|(op, s)| format!("{op} {s:.3}")).collect();
            let mut cells = p.cells().to_vec();
            cells.push(ops.join(", "));
            cells
        })
        .collect();
    let mut text = Vec::new();
    if let Some(o) = overlap {
        text.push(format!("Write and read at once: po_0 {:.2} %, po_f {:.2} %.", o.po_0, o.po_f));
    }
    text.extend(
        phases.iter().filter_map(|p| synchronous_above_global(&p.phase, p.synchronous_bandwidth, p.global_timing_bandwidth, p.idle)),
    );
    let figures =
        vec![phase_bandwidths(phases), phase_breakdown(phases), timeline::timeline("timeline", "I/O timeline", events, phases, overlap)];
    Page {
        title: title.into(),
        intro: vec![METRICS.into()],
        sections: vec![Section {
            heading: "Metrics per phase".into(),
            text,
            table: Some(Table { columns, rows, flagged: Vec::new() }),
            figures,
        }],
    }
}

/// Where the report's metrics are defined.
const METRICS: &str = "The metrics (global timing and synchronous bandwidth, off_0, off_f, po_0, po_f) are defined in fieldstore's docs/benchmarks.md, section Metrics.";

/// Why a phase's synchronous bandwidth exceeds its global timing one, if it does: the time
/// no iteration was under way (`idle`, % of the phase), or else iterations of uneven speed.
pub fn synchronous_above_global(what: &str, synchronous: f64, global: f64, idle: f64) -> Option<String> {
    if !(synchronous > global && global > 0.0) {
        return None;
    }
    let above = format!(
        "{what}: synchronous bandwidth {:.1} MiB/s is {:.2}x global timing ({:.1} MiB/s)",
        synchronous / MIB,
        synchronous / global,
        global / MIB
    );
    // Idle time alone would raise synchronous by 1 / (1 - idle); uneven iterations do the rest.
    // Idle time is named the cause when it accounts for at least half the ratio (in logs).
    let from_idle = 100.0 / (100.0 - idle.min(99.9));
    Some(if from_idle >= (synchronous / global).sqrt() {
        format!("{above}: for {idle:.0} % of the phase no iteration was under way (time between iterations, which global timing counts and synchronous does not).")
    } else {
        let idle = if idle < 0.5 {
            "no time passed between iterations".to_string()
        } else {
            format!("{idle:.0} % of the phase between iterations explains less")
        };
        format!("{above}: its iterations ran at uneven speeds, and the mean of their rates exceeds the rate over all of them ({idle}).")
    })
}

/// Global timing and synchronous bandwidth of each phase, as bars.
fn phase_bandwidths(phases: &[PhaseMetrics]) -> Figure {
    let categories: Vec<String> = phases.iter().map(|p| p.phase.clone()).collect();
    let bars = |name: &str, f: fn(&PhaseMetrics) -> f64| Bars {
        name: name.into(),
        values: phases.iter().map(|p| Some(Value { value: f(p) / MIB, error: 0.0 })).collect(),
    };
    Figure {
        id: "bandwidth".into(),
        title: "Bandwidth per phase".into(),
        note: "Global timing: all bytes over the phase's first-to-last I/O time. Synchronous: the mean over iterations of each iteration's bytes over its parallel wall-clock time.".into(),
        panels: vec![Panel {
            title: String::new(),
            x: Axis::linear("phase"),
            y: Axis::linear("bandwidth (MiB/s)"),
            plot: Plot::Bars {
                categories,
                series: vec![bars("global timing", |p| p.global_timing_bandwidth), bars("synchronous", |p| p.synchronous_bandwidth)],
            },
        }],
    }
}

/// Mean time per process in each operation, a stacked bar per phase.
fn phase_breakdown(phases: &[PhaseMetrics]) -> Figure {
    let ops: BTreeSet<&String> = phases.iter().flat_map(|p| p.breakdown.keys()).collect();
    let layers = ops
        .into_iter()
        .map(|op| Bars {
            name: op.clone(),
            values: phases.iter().map(|p| p.breakdown.get(op).map(|&value| Value { value, error: 0.0 })).collect(),
        })
        .collect();
    Figure {
        id: "breakdown".into(),
        title: "Time per operation".into(),
        note: "Mean seconds each process spent in each operation.".into(),
        panels: vec![Panel {
            title: String::new(),
            x: Axis::linear("phase"),
            y: Axis::linear("mean time per process (s)"),
            plot: Plot::Stacked { categories: phases.iter().map(|p| p.phase.clone()).collect(), layers, total_errors: Vec::new() },
        }],
    }
}

/// The run of a sweep whose timeline the report shows: a contention run if there is one,
/// else one with the most processes; the largest size; the first repetition.
pub fn representative_run(sweep: &Sweep) -> Option<&Run> {
    sweep.runs.iter().max_by_key(|r| (r.config.pattern == "B", r.config.procs, r.config.size, std::cmp::Reverse(r.config.rep)))
}

/// What a sweep was, in a sentence.
fn describe(sweep: &Sweep) -> String {
    let m = &sweep.manifest;
    let daos = if m.backend == "daos" {
        " DAOS runs here use fieldstore's libdaos emulation unless run on a DAOS system: they show that the benchmark works, not how fast DAOS is."
    } else {
        ""
    };
    format!(
        "{}: {} on {}, {} server node(s), {} objects or fields per process, {} repetition(s) per configuration, fieldstore {} ({}).{daos}",
        m.label,
        m.benchmark,
        m.backend,
        m.servers,
        m.counts.iter().map(|c| c.to_string()).collect::<Vec<_>>().join(" / "),
        m.reps,
        m.version,
        sweep.dir.display()
    )
}

/// The report of a study: its sweeps, the table of rows, the figures, the timelines.
pub fn study_page(title: &str, study: &Study, rows: &[Row]) -> Result<Page> {
    let mut timelines = Vec::new();
    for (i, sweep) in study.sweeps.iter().enumerate() {
        if let Some(run) = representative_run(sweep) {
            let title = format!("{}: {}", sweep.manifest.label, run.config.name());
            timelines.push(timeline::timeline(&format!("timeline-{i}"), &title, &run.events()?, &run.phases, run.overlap.as_ref()));
        }
    }
    let mut intro: Vec<String> = study.sweeps.iter().map(describe).collect();
    intro.push(METRICS.into());
    Ok(Page {
        title: title.into(),
        intro,
        sections: vec![
            Section { heading: "Figures".into(), figures: figures::study_figures(rows), ..Section::default() },
            Section {
                heading: "Timelines".into(),
                text: vec!["One run of each sweep: a write+read contention run if it had one, else one with the most processes.".into()],
                figures: timelines,
                ..Section::default()
            },
            Section { heading: "All configurations".into(), text: rows_notes(rows), table: Some(rows_table(rows)), ..Section::default() },
        ],
    })
}

/// The spread of repetitions above which a result is not yet one to conclude from (the
/// studies repeated runs until theirs was below it), % of the mean.
pub const MOST_SPREAD: f64 = 5.0;

/// Whether a row's bandwidth varied between repetitions by more than [`MOST_SPREAD`].
fn too_spread(row: &Row) -> bool {
    row.spread_percent().is_some_and(|p| p > MOST_SPREAD)
}

/// The rows' table, the spreads above [`MOST_SPREAD`] flagged.
fn rows_table(rows: &[Row]) -> Table {
    let spread = Row::columns().iter().position(|c| *c == crate::study::SPREAD_COLUMN).expect("the spread is a column");
    Table {
        columns: Row::columns().iter().map(|c| c.to_string()).collect(),
        rows: rows.iter().map(Row::cells).collect(),
        flagged: rows.iter().enumerate().filter(|(_, r)| too_spread(r)).map(|(i, _)| (i, spread)).collect(),
    }
}

/// What the table's reader must know first: how many rows are too spread to conclude from,
/// and why a synchronous bandwidth exceeds the global one where it does.
fn rows_notes(rows: &[Row]) -> Vec<String> {
    let mut notes = Vec::new();
    let spread = rows.iter().filter(|r| too_spread(r)).count();
    if spread > 0 {
        notes.push(format!(
            "{spread} of {} rows vary by more than {MOST_SPREAD} % between repetitions (highlighted): repeat them until the spread is below {MOST_SPREAD} % before drawing conclusions from them.",
            rows.len()
        ));
    }
    notes.extend(rows.iter().filter_map(|r| synchronous_above_global(&r.name(), r.synchronous_mean, r.bandwidth_mean, r.idle)));
    notes
}

/// Every figure of a page, in order.
pub fn page_figures(page: &Page) -> Vec<&Figure> {
    fieldstore_figures::page::figures(page)
}

/// Writes each figure of the page as `DIR/ID.png`; returns the files.
pub fn write_pngs(page: &Page, dir: &Path) -> Result<Vec<PathBuf>> {
    std::fs::create_dir_all(dir).ctx("creating", dir)?;
    let mut files = Vec::new();
    // The page's colours: a name reads the same in every PNG, as on the page.
    let colours = fieldstore_figures::draw::Colours::of(&page_figures(page));
    for figure in page_figures(page) {
        let path = dir.join(format!("{}.png", figure.id));
        fieldstore_figures::draw::png(figure, &path, &colours)
            .map_err(|e| Error::caused_by(ErrorKind::Io, format!("writing {}", path.display()), e))?;
        files.push(path);
    }
    Ok(files)
}

/// The page as HTML.
pub fn html(page: &Page) -> Result<String> {
    fieldstore_figures::page::html(page).map_err(|e| Error::caused_by(ErrorKind::Io, "making the HTML report", e))
}

/// Loads the sweep directories, keeps what `selection` selects, and builds their report.
pub fn study_report(dirs: &[PathBuf], selection: Selection) -> Result<(Study, Vec<Row>, Page)> {
    let study = Study::load(dirs)?.select(selection)?;
    let rows = study.rows();
    let labels: Vec<&str> = study.sweeps.iter().map(|s| s.manifest.label.as_str()).collect();
    let page = study_page(&format!("fieldstore benchmark study: {}", labels.join(", ")), &study, &rows)?;
    Ok((study, rows, page))
}
