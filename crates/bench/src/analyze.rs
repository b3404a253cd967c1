//! The metrics defined in docs/benchmarks.md ("Metrics"), computed from per-I/O events that every benchmark
//! process logs (one JSON object per line). All times are microseconds since the epoch, so
//! logs from many processes and nodes can be merged.

use std::collections::BTreeMap;

use fieldstore::error::IoContext;
use fieldstore::{Error, ErrorKind, Result};
use serde::{Deserialize, Serialize};

/// Bytes in a MiB: bandwidths are reported in MiB/s.
pub const MIB: f64 = 1048576.0;

/// One I/O of one process, as logged.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct IoEvent {
    /// The node the process ran on.
    pub node: String,
    /// The process's rank.
    pub process: u32,
    /// `write`, `read`, `list`, ...
    pub phase: String,
    /// The operation: `archive`, `flush`, `retrieve`, ...
    pub op: String,
    /// The process's iteration (a step, for hammer).
    pub iteration: u32,
    /// Bytes written or read (0 for operations that move none).
    pub bytes: u64,
    /// When the I/O started, microseconds since the epoch.
    pub io_start: u64,
    /// When it ended, microseconds since the epoch.
    pub io_end: u64,
}

/// The metrics of one phase.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct PhaseMetrics {
    /// The phase's name (`write`, `read`, `list`, ...).
    pub phase: String,
    /// How many processes logged events in it.
    pub processes: usize,
    /// How many distinct iterations it had.
    pub iterations: usize,
    /// Bytes moved by all its I/Os.
    pub bytes: u64,
    /// t_end(last I/O) - t_start(first I/O), seconds.
    pub wall_seconds: f64,
    /// Sum of all sizes over the wall-clock time, bytes per second.
    pub global_timing_bandwidth: f64,
    /// Mean over iterations of (bytes of the iteration / its parallel wall-clock time).
    pub synchronous_bandwidth: f64,
    /// Time outside every iteration's span (no iteration under way), % of the wall-clock
    /// time: counted by global timing, not by synchronous bandwidth.
    pub idle: f64,
    /// Spread of the first I/O's start across processes, % of the wall-clock time.
    pub off_0: f64,
    /// Spread of the last I/O's end across processes, % of the wall-clock time.
    pub off_f: f64,
    /// Mean seconds per operation kind, per process.
    pub breakdown: BTreeMap<String, f64>,
    /// The first I/O's start, microseconds since the epoch.
    pub start_us: u64,
    /// The last I/O's end.
    pub end_us: u64,
    /// The last process's first start (off_0 spans from `start_us` to it).
    pub last_first_start_us: u64,
    /// The first process's last end (off_f spans from it to `end_us`).
    pub first_last_end_us: u64,
}

impl PhaseMetrics {
    /// Column names of [`PhaseMetrics::cells`].
    pub const COLUMNS: [&'static str; 9] =
        ["phase", "processes", "iterations", "bytes", "wall s", "global timing MiB/s", "synchronous MiB/s", "off_0 %", "off_f %"];

    /// The metrics as table cells, formatted once for every report.
    pub fn cells(&self) -> [String; 9] {
        let mib = |b: f64| format!("{:.1}", b / MIB);
        [
            self.phase.clone(),
            self.processes.to_string(),
            self.iterations.to_string(),
            self.bytes.to_string(),
            format!("{:.3}", self.wall_seconds),
            mib(self.global_timing_bandwidth),
            mib(self.synchronous_bandwidth),
            format!("{:.2}", self.off_0),
            format!("{:.2}", self.off_f),
        ]
    }
}

/// Offsets between two phases that ran at the same time (pattern B), % of their joint
/// wall-clock time.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Overlap {
    /// The gap between the two phases' first starts.
    pub po_0: f64,
    /// The gap between the two phases' last ends.
    pub po_f: f64,
}

fn percent(part: u64, whole: u64) -> f64 {
    if whole == 0 {
        0.0
    } else {
        100.0 * part as f64 / whole as f64
    }
}

/// Computes the metrics of every phase present in `events`.
pub fn phases(events: &[IoEvent]) -> Vec<PhaseMetrics> {
    let mut by_phase: BTreeMap<&str, Vec<&IoEvent>> = BTreeMap::new();
    for e in events {
        by_phase.entry(&e.phase).or_default().push(e);
    }
    by_phase.into_iter().map(|(phase, events)| phase_metrics(phase, &events)).collect()
}

fn phase_metrics(phase: &str, events: &[&IoEvent]) -> PhaseMetrics {
    let start = events.iter().map(|e| e.io_start).min().unwrap_or(0);
    let end = events.iter().map(|e| e.io_end).max().unwrap_or(0);
    let wall = end.saturating_sub(start);
    let bytes = events.iter().fold(0u64, |sum, e| sum.saturating_add(e.bytes));

    // Per iteration: its bytes and its parallel wall-clock time.
    let mut iterations: BTreeMap<u32, (u64, u64, u64)> = BTreeMap::new();
    for e in events {
        let it = iterations.entry(e.iteration).or_insert((0, u64::MAX, 0));
        it.0 = it.0.saturating_add(e.bytes);
        it.1 = it.1.min(e.io_start);
        it.2 = it.2.max(e.io_end);
    }
    let rates: Vec<f64> = iterations.values().filter(|(_, s, e)| e > s).map(|(b, s, e)| *b as f64 / ((e - s) as f64 / 1e6)).collect();
    let synchronous_bandwidth = if rates.is_empty() { 0.0 } else { rates.iter().sum::<f64>() / rates.len() as f64 };
    let spans: Vec<(u64, u64)> = iterations.values().map(|&(_, s, e)| (s, e)).collect();

    // Per process: its first start and its last end.
    let mut processes: BTreeMap<(&str, u32), (u64, u64)> = BTreeMap::new();
    for e in events {
        let p = processes.entry((&e.node, e.process)).or_insert((u64::MAX, 0));
        p.0 = p.0.min(e.io_start);
        p.1 = p.1.max(e.io_end);
    }
    let last_first_start = processes.values().map(|p| p.0).max().unwrap_or(start);
    let first_last_end = processes.values().map(|p| p.1).min().unwrap_or(end);

    let mut breakdown: BTreeMap<String, f64> = BTreeMap::new();
    for e in events {
        *breakdown.entry(e.op.clone()).or_default() += e.io_end.saturating_sub(e.io_start) as f64 / 1e6;
    }
    for v in breakdown.values_mut() {
        *v /= processes.len().max(1) as f64;
    }

    PhaseMetrics {
        phase: phase.to_string(),
        processes: processes.len(),
        iterations: iterations.len(),
        bytes,
        wall_seconds: wall as f64 / 1e6,
        global_timing_bandwidth: if wall == 0 { 0.0 } else { bytes as f64 / (wall as f64 / 1e6) },
        synchronous_bandwidth,
        idle: percent(wall.saturating_sub(covered(spans)), wall),
        off_0: percent(last_first_start.saturating_sub(start), wall),
        off_f: percent(end.saturating_sub(first_last_end), wall),
        breakdown,
        start_us: start,
        end_us: end,
        last_first_start_us: last_first_start,
        first_last_end_us: first_last_end,
    }
}

/// Microseconds covered by at least one of `spans` (start, end).
fn covered(mut spans: Vec<(u64, u64)>) -> u64 {
    spans.sort_unstable();
    let mut total = 0;
    let mut reached = 0;
    for (start, end) in spans {
        let from = start.max(reached);
        total += end.saturating_sub(from);
        reached = reached.max(end);
    }
    total
}

/// po_0 and po_f of a write phase and a read phase that ran at the same time; `None` when
/// either is missing or they never overlapped (a write run, then a read run: offsets between
/// them would only measure the pause between the runs).
pub fn overlap(events: &[IoEvent], write: &str, read: &str) -> Option<Overlap> {
    let span = |phase: &str| {
        let mut it = events.iter().filter(|e| e.phase == phase);
        let first = it.next()?;
        Some(it.fold((first.io_start, first.io_end), |(s, e), x| (s.min(x.io_start), e.max(x.io_end))))
    };
    let (w, r) = (span(write)?, span(read)?);
    if w.0 >= r.1 || r.0 >= w.1 {
        return None;
    }
    let wall = w.1.max(r.1).saturating_sub(w.0.min(r.0));
    Some(Overlap { po_0: percent(w.0.abs_diff(r.0), wall), po_f: percent(w.1.abs_diff(r.1), wall) })
}

/// Mean and sample standard deviation of repeated measurements.
pub fn mean_and_spread(values: &[f64]) -> (f64, f64) {
    if values.is_empty() {
        return (f64::NAN, f64::NAN);
    }
    let mean = values.iter().sum::<f64>() / values.len() as f64;
    if values.len() < 2 {
        return (mean, 0.0);
    }
    let var = values.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (values.len() - 1) as f64;
    (mean, var.sqrt())
}

/// The events of logs written by `bench ... --log` (any number of processes and runs); an
/// error names the file and line that is not an event.
pub fn read_logs(paths: &[std::path::PathBuf]) -> Result<Vec<IoEvent>> {
    let mut events = Vec::new();
    for path in paths {
        let text = std::fs::read_to_string(path).ctx("reading", path)?;
        for (n, line) in text.lines().enumerate().filter(|(_, l)| !l.trim().is_empty()) {
            let at = || format!("{}:{}", path.display(), n + 1);
            let event: IoEvent =
                serde_json::from_str(line).map_err(|e| Error::caused_by(ErrorKind::Corrupt, format!("{}: not an event", at()), e))?;
            if event.io_end < event.io_start {
                let message = format!("{}: the event ends ({}) before it starts ({})", at(), event.io_end, event.io_start);
                return Err(Error::new(ErrorKind::Corrupt, message));
            }
            events.push(event);
        }
    }
    Ok(events)
}

/// The phases' metrics as a Markdown table, each phase's time per operation, and the overlap.
pub fn markdown(phases: &[PhaseMetrics], overlap: Option<&Overlap>) -> String {
    let mut md = format!("| {} |\n|{}\n", PhaseMetrics::COLUMNS.join(" | "), "---|".repeat(PhaseMetrics::COLUMNS.len()));
    for p in phases {
        md.push_str(&format!("| {} |\n", p.cells().join(" | ")));
    }
    for p in phases {
        let ops: Vec<String> = p.breakdown.iter().map(|(op, s)| format!("{op} {s:.3} s")).collect();
        md.push_str(&format!("{}: mean per process: {}\n", p.phase, ops.join(", ")));
    }
    if let Some(o) = overlap {
        md.push_str(&format!("write/read overlap: po_0 {:.2} %, po_f {:.2} %\n", o.po_0, o.po_f));
    }
    md
}

#[cfg(test)]
mod tests {
    use super::*;

    fn io(process: u32, phase: &str, iteration: u32, bytes: u64, start: u64, end: u64) -> IoEvent {
        IoEvent { node: "n1".into(), process, phase: phase.into(), op: "archive".into(), iteration, bytes, io_start: start, io_end: end }
    }

    /// Two processes, two iterations of 1 MB each per process; times in microseconds.
    ///   iteration 0: p0 [0, 1_000_000], p1 [100_000, 1_100_000]  -> 2 MB over 1.1 s
    ///   iteration 1: p0 [1_000_000, 2_000_000], p1 [1_100_000, 2_300_000] -> 2 MB over 1.3 s
    fn two_by_two() -> Vec<IoEvent> {
        vec![
            io(0, "write", 0, 1_000_000, 0, 1_000_000),
            io(1, "write", 0, 1_000_000, 100_000, 1_100_000),
            io(0, "write", 1, 1_000_000, 1_000_000, 2_000_000),
            io(1, "write", 1, 1_000_000, 1_100_000, 2_300_000),
        ]
    }

    #[test]
    fn bandwidths_and_offsets_have_their_known_values() {
        let m = &phases(&two_by_two())[0];
        assert_eq!((m.processes, m.iterations, m.bytes), (2, 2, 4_000_000));
        assert!((m.wall_seconds - 2.3).abs() < 1e-9);
        assert!((m.global_timing_bandwidth - 4e6 / 2.3).abs() < 1e-6);
        let expected_sync = (2e6 / 1.1 + 2e6 / 1.3) / 2.0;
        assert!((m.synchronous_bandwidth - expected_sync).abs() < 1e-6, "{}", m.synchronous_bandwidth);
        // off_0: last first start (100 ms) - first start (0) over 2.3 s.
        assert!((m.off_0 - 100.0 * 0.1 / 2.3).abs() < 1e-9);
        // off_f: last end (2.3 s) - first last end (2.0 s) over 2.3 s.
        assert!((m.off_f - 100.0 * 0.3 / 2.3).abs() < 1e-9);
        // The iterations' spans [0, 1.1] and [1.0, 2.3] leave no time idle.
        assert_eq!(m.idle, 0.0);
        // Each process spent 2.0 (p0) and 2.2 (p1) seconds archiving: 2.1 on average.
        assert!((m.breakdown["archive"] - 2.1).abs() < 1e-9);
    }

    #[test]
    fn time_between_iterations_raises_synchronous_above_global_timing() {
        // One process, two 1 MB iterations of 1 s each, 2 s apart: 2 MB in 4 s globally,
        // 1 MB/s in each iteration; half the phase had no iteration under way.
        let events = [io(0, "write", 0, 1_000_000, 0, 1_000_000), io(0, "write", 1, 1_000_000, 3_000_000, 4_000_000)];
        let m = &phases(&events)[0];
        assert!((m.global_timing_bandwidth - 5e5).abs() < 1e-6 && (m.synchronous_bandwidth - 1e6).abs() < 1e-6);
        assert!((m.idle - 50.0).abs() < 1e-9, "{}", m.idle);
    }

    #[test]
    fn pattern_b_overlap_offsets() {
        let mut events = two_by_two();
        events.push(io(2, "read", 0, 500, 200_000, 900_000));
        events.push(io(2, "read", 1, 500, 900_000, 2_000_000));
        let o = overlap(&events, "write", "read").unwrap();
        assert!((o.po_0 - 100.0 * 0.2 / 2.3).abs() < 1e-9);
        assert!((o.po_f - 100.0 * 0.3 / 2.3).abs() < 1e-9);
        assert!(overlap(&events, "write", "list").is_none());
        let read_after_write = [io(0, "write", 0, 500, 0, 1_000), io(1, "read", 0, 500, 1_000, 2_000)];
        assert_eq!(overlap(&read_after_write, "write", "read"), None, "phases one after another never overlapped");
        assert_eq!(phases(&events).iter().map(|p| p.phase.as_str()).collect::<Vec<_>>(), ["read", "write"]);
    }

    #[test]
    fn the_metrics_are_defined_in_the_repositorys_own_docs() {
        let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../..");
        let docs = std::fs::read_to_string(format!("{root}/docs/benchmarks.md")).unwrap();
        let section = docs.split("\n## Metrics\n").nth(1).expect("docs/benchmarks.md has a section Metrics");
        let section = section.split("\n## ").next().unwrap();
        for metric in ["global timing bandwidth", "synchronous bandwidth", "off_0", "off_f", "po_0", "po_f", "time per operation", "spread"]
        {
            assert!(section.contains(&format!("\n| {metric} | ")), "Metrics defines {metric} in its table");
        }
        assert!(section.contains("Synchronous above global timing"), "Metrics explains a synchronous bandwidth above global timing");
        // The definitions used to be in a file outside the repository.
        for file in ["docs/benchmarks.md", "crates/bench/src/analyze.rs", "crates/bench/src/lib.rs", "crates/bench/src/report/timeline.rs"]
        {
            let text = std::fs::read_to_string(format!("{root}/{file}")).unwrap();
            assert!(!text.contains(&["BENCHMARKS", ".md"].concat()), "{file} refers to a file outside the repository");
        }
    }

    #[test]
    fn repetitions_give_mean_and_spread() {
        let (mean, spread) = mean_and_spread(&[1.0, 2.0, 3.0]);
        assert_eq!((mean, spread), (2.0, 1.0));
        assert_eq!(mean_and_spread(&[5.0]), (5.0, 0.0));
        assert!(mean_and_spread(&[]).0.is_nan());
    }
}
