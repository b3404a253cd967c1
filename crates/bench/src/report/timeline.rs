//! The timeline of one run: a row per process, a span per I/O (I/Os too short to see merge
//! into spans, so a row never has more marks than the plot can show), and the offsets of
//! docs/benchmarks.md ("Metrics") marked as shaded bands: off_0 (from the first start to the last
//! process's first start) and off_f (from the first process's last end to the last end) per
//! phase, and po_0 / po_f between the write and read phases of a contention run.

use std::collections::BTreeMap;

use fieldstore_figures::{Axis, Band, Figure, Panel, Plot, Span};

use crate::analyze::{IoEvent, Overlap, PhaseMetrics};
use crate::study::phase_order;

/// Most spans drawn per process; shorter I/Os merge.
pub const MAX_SPANS_PER_PROCESS: usize = 2000;

/// The timeline figure of `events` (one run, any phases), with the offsets of its `phases`
/// and `overlap` as already analysed.
pub fn timeline(id: &str, title: &str, events: &[IoEvent], phases: &[PhaseMetrics], overlap: Option<&Overlap>) -> Figure {
    let start = events.iter().map(|e| e.io_start).min().unwrap_or(0);
    let end = events.iter().map(|e| e.io_end).max().unwrap_or(start).max(start.saturating_add(1));
    let (unit, scale) = super::figures::time_unit((end - start) as f64 / 1e6);
    let seconds = |us: u64| us.saturating_sub(start) as f64 / 1e6 * scale;
    let mut rows: BTreeMap<(&str, u32), Vec<&IoEvent>> = BTreeMap::new();
    for e in events {
        rows.entry((&e.node, e.process)).or_default().push(e);
    }
    let resolution = (end - start) / MAX_SPANS_PER_PROCESS as u64;
    let mut spans = Vec::new();
    for (row, events) in rows.values_mut().enumerate() {
        events.sort_by_key(|e| e.io_start);
        spans.extend(merged(events, resolution).into_iter().map(|m| Span {
            row,
            kind: m.kind,
            start: seconds(m.start),
            end: seconds(m.end),
            count: m.count,
        }));
    }
    let bands = offsets(phases, overlap).into_iter().map(|(label, s, e)| Band { label, start: seconds(s), end: seconds(e) }).collect();
    let names = rows.keys().map(|(node, process)| format!("{node}:{process}")).collect();
    Figure {
        id: id.into(),
        title: title.into(),
        note: "Each I/O of each process along the run's wall-clock time (I/Os closer than the plot can show are merged into one span); shaded: the offsets, as % of the phase's wall-clock time. off_0 and po_0 should stay small (the studies saw 0-2 %) or the processes did not really run in parallel.".into(),
        panels: vec![Panel {
            title: String::new(),
            x: Axis::linear(&format!("time since the first I/O ({unit})")),
            y: Axis::linear("process (node:rank)"),
            plot: Plot::Timeline { rows: names, spans, bands },
        }],
    }
}

/// A span of I/Os of one operation of one process.
struct Merged {
    /// The operation: its colour and legend entry, as in the time per operation (the
    /// offsets' bands say which phase is where).
    kind: String,
    start: u64,
    end: u64,
    count: usize,
}

/// The I/Os of one process (sorted by start), merged per phase and operation while the gaps
/// between them are below `resolution` microseconds and a span stays short: at most about
/// `MAX_SPANS_PER_PROCESS` spans per operation, however the operations interleave.
fn merged(events: &[&IoEvent], resolution: u64) -> Vec<Merged> {
    // Spans merge within a phase only: a read never extends a write's span.
    let mut open: BTreeMap<(&str, &str), Merged> = BTreeMap::new();
    let mut out: Vec<Merged> = Vec::new();
    for e in events {
        let key = (e.phase.as_str(), e.op.as_str());
        match open.get_mut(&key) {
            Some(m)
                if e.io_start <= m.end.saturating_add(resolution)
                    && e.io_end.saturating_sub(m.start) <= resolution.max(1).saturating_mul(4) =>
            {
                m.end = m.end.max(e.io_end);
                m.count += 1;
            }
            _ => {
                let span = Merged { kind: e.op.clone(), start: e.io_start, end: e.io_end, count: 1 };
                out.extend(open.insert(key, span));
            }
        }
    }
    out.extend(open.into_values());
    out.sort_by_key(|m| m.start);
    out
}

/// The offsets as labelled intervals (microseconds): off_0 and off_f per phase, po_0 and po_f
/// when the run wrote and read at once (its write and read phases overlap in time).
fn offsets(phases: &[PhaseMetrics], overlap: Option<&Overlap>) -> Vec<(String, u64, u64)> {
    let mut phases: Vec<&PhaseMetrics> = phases.iter().collect();
    phases.sort_by_key(|p| phase_order(&p.phase));
    let mut bands = Vec::new();
    for p in phases.iter().copied() {
        bands.push((format!("{} off_0 {:.1} %", p.phase, p.off_0), p.start_us, p.last_first_start_us));
        bands.push((format!("{} off_f {:.1} %", p.phase, p.off_f), p.first_last_end_us, p.end_us));
    }
    let phase = |name: &str| phases.iter().find(|p| p.phase == name);
    if let (Some(w), Some(r)) = (phase("write"), phase("read")) {
        let at_once = w.start_us < r.end_us && r.start_us < w.end_us;
        if let Some(o) = overlap.filter(|_| at_once) {
            bands.push((format!("po_0 {:.1} %", o.po_0), w.start_us.min(r.start_us), w.start_us.max(r.start_us)));
            bands.push((format!("po_f {:.1} %", o.po_f), w.end_us.min(r.end_us), w.end_us.max(r.end_us)));
        }
    }
    bands
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analyze;

    /// The timeline of `events`, analysed here.
    fn timeline_of(events: &[IoEvent]) -> Figure {
        timeline("t", "run", events, &analyze::phases(events), analyze::overlap(events, "write", "read").as_ref())
    }

    fn event(process: u32, phase: &str, start: u64, end: u64) -> IoEvent {
        IoEvent { node: "n".into(), process, phase: phase.into(), op: "io".into(), iteration: 0, bytes: 1, io_start: start, io_end: end }
    }

    #[test]
    fn offsets_mark_where_processes_start_and_end_apart() {
        // write: p0 [1.0 s, 2.0 s], p1 [1.1 s, 2.3 s]; read: p2 [1.2 s, 2.0 s].
        let events =
            [event(0, "write", 1_000_000, 2_000_000), event(1, "write", 1_100_000, 2_300_000), event(2, "read", 1_200_000, 2_000_000)];
        let f = timeline_of(&events);
        let Plot::Timeline { rows, spans, bands } = &f.panels[0].plot else { panic!() };
        assert_eq!(rows, &["n:0", "n:1", "n:2"]);
        assert_eq!(spans.len(), 3);
        let band = |prefix: &str| bands.iter().find(|b| b.label.starts_with(prefix)).map(|b| (b.start, b.end)).unwrap();
        let close = |(a, b): (f64, f64), (c, d): (f64, f64)| (a - c).abs() < 1e-9 && (b - d).abs() < 1e-9;
        // Seconds since the first I/O (at 1.0 s): the run is longer than a second.
        assert!(close(band("write off_0"), (0.0, 0.1)));
        assert!(close(band("write off_f"), (1.0, 1.3)));
        assert!(close(band("po_0"), (0.0, 0.2)) && close(band("po_f"), (1.0, 1.3)));
        assert_eq!(f.panels[0].x.label, "time since the first I/O (s)");
        assert!(spans.iter().all(|s| s.kind == "io"), "spans are named by their operation, as in the time per operation");
        assert_eq!((f.title.as_str(), f.panels[0].title.as_str()), ("run", ""), "the figure's title is not repeated over its panel");
        assert!(bands.iter().any(|b| b.label == "write off_0 7.7 %"), "{bands:?}");
        let short = [event(0, "write", 0, 500), event(1, "write", 100, 400)];
        assert_eq!(timeline_of(&short).panels[0].x.label, "time since the first I/O (ms)");
        let one_after_another = [event(0, "write", 0, 1_000_000), event(1, "read", 2_000_000, 3_000_000)];
        let Plot::Timeline { bands, .. } = &timeline_of(&one_after_another).panels[0].plot else { panic!() };
        assert!(!bands.iter().any(|b| b.label.starts_with("po_")), "no overlap offsets for phases one after another");
    }

    #[test]
    fn a_long_run_merges_into_a_bounded_number_of_spans() {
        // Two processes, each alternating three operations (as field-io's index, open and
        // transfer do), 50,000 I/Os in all.
        let events: Vec<IoEvent> = (0..50_000u64)
            .map(|i| IoEvent {
                op: ["index", "open", "transfer"][(i / 2 % 3) as usize].into(),
                ..event((i % 2) as u32, "write", 1_000 + i * 10, 1_005 + i * 10)
            })
            .collect();
        let f = timeline_of(&events);
        let marks = f.panels[0].plot.marks();
        assert!((6..=2 * 3 * MAX_SPANS_PER_PROCESS).contains(&marks), "{marks} spans for 50,000 I/Os");
    }
}
