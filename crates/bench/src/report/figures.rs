//! The studies' figures, built from a study's rows ([`crate::study::Row`]): bandwidth against
//! processes, global timing against synchronous bandwidth, bandwidth against size, the time
//! breakdown per operation, object classes, and scalability against server nodes with the
//! ideal line. Each figure has a panel per phase and size (or process count), and a series per
//! variant: whatever else tells the rows apart (sweep, benchmark, backend, mode, pattern, ...).
//! A figure whose question the rows cannot answer (one process count, one size, ...) is left
//! out.

use std::collections::{BTreeMap, BTreeSet};

use fieldstore_figures::{Axis, Bars, Figure, Format, Panel, Plot, Point, Series, Value};

use crate::analyze::MIB;
use crate::study::{phase_order, Row, SUM_PHASE};

/// Most categories of a breakdown before it keeps only the largest process count.
const MOST_CATEGORIES: usize = 12;

/// What tells rows apart.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Dim {
    Sweep,
    Benchmark,
    Backend,
    Servers,
    Procs,
    Size,
    Mode,
    Pattern,
    Index,
    Class,
}

/// The dimensions a series' name can draw on, in the order they are named.
const VARIANT_DIMS: [Dim; 10] =
    [Dim::Sweep, Dim::Benchmark, Dim::Backend, Dim::Servers, Dim::Mode, Dim::Pattern, Dim::Index, Dim::Class, Dim::Procs, Dim::Size];

impl Dim {
    /// The row's value of this dimension, as it reads in a legend or a title.
    fn text(self, r: &Row) -> String {
        match self {
            Dim::Sweep => r.sweep.clone(),
            Dim::Benchmark => r.benchmark.clone(),
            Dim::Backend => r.backend.clone(),
            Dim::Servers if r.servers == 1 => "1 server node".into(),
            Dim::Servers => format!("{} server nodes", r.servers),
            Dim::Procs if r.procs == 1 => "1 process".into(),
            Dim::Procs => format!("{} processes", r.procs),
            Dim::Size => Format::Bytes.label(r.size as f64),
            Dim::Mode => r.mode.clone(),
            Dim::Pattern => match r.pattern.as_str() {
                "B" => "write+read at once (B)".into(),
                _ => "write then read (A)".into(),
            },
            Dim::Index => match r.index.as_str() {
                "" => String::new(),
                index => format!("{index} index"),
            },
            Dim::Class => r.class.clone(),
        }
    }

    /// The row's value along a numeric axis.
    fn number(self, r: &Row) -> f64 {
        match self {
            Dim::Servers => r.servers as f64,
            Dim::Procs => r.procs as f64,
            Dim::Size => r.size as f64,
            _ => f64::NAN,
        }
    }
}

fn distinct(rows: &[&Row], dim: Dim) -> usize {
    rows.iter().map(|r| dim.text(r)).collect::<BTreeSet<_>>().len()
}

/// Names the variants of some rows from the dimensions that vary among them, leaving out the
/// figure's own (its axes and panels) and, of those that only tell sweeps apart (the label,
/// the server nodes, the benchmark, the backend, in that order), each that the rest already
/// tell apart without.
struct Variants {
    dims: Vec<Dim>,
}

/// Dimensions dropped from names when the others tell the variants apart, first to last.
const REDUNDANT_FIRST: [Dim; 4] = [Dim::Sweep, Dim::Servers, Dim::Benchmark, Dim::Backend];

impl Variants {
    fn new(rows: &[&Row], own: &[Dim]) -> Variants {
        let mut v = Variants { dims: VARIANT_DIMS.iter().copied().filter(|d| !own.contains(d) && distinct(rows, *d) > 1).collect() };
        let count = |v: &Variants| rows.iter().map(|r| v.name(r)).collect::<BTreeSet<_>>().len();
        let all = count(&v);
        for dim in REDUNDANT_FIRST {
            let fewer = Variants { dims: v.dims.iter().copied().filter(|d| *d != dim).collect() };
            let named = rows.iter().all(|r| !fewer.name(r).is_empty());
            if fewer.dims.len() < v.dims.len() && named && count(&fewer) == all {
                v = fewer;
            }
        }
        v
    }

    /// The row's variant name; empty when there is one variant.
    fn name(&self, r: &Row) -> String {
        self.dims.iter().map(|d| d.text(r)).filter(|t| !t.is_empty()).collect::<Vec<_>>().join(", ")
    }

    /// The name, or `alone` when there is one variant.
    fn name_or(&self, r: &Row, alone: &str) -> String {
        let name = self.name(r);
        if name.is_empty() {
            alone.into()
        } else {
            name
        }
    }
}

/// Where a panel goes: its phase in reading order, then the values of its dimensions.
type PanelOrder = ((usize, String), Vec<u64>);

/// Rows grouped into panels: by phase (reading order), then by the values of `dims`.
fn panels<'r>(rows: &[&'r Row], dims: &[Dim]) -> Vec<(String, Vec<&'r Row>)> {
    let mut groups: BTreeMap<PanelOrder, (String, Vec<&Row>)> = BTreeMap::new();
    for r in rows {
        let order: Vec<u64> = dims.iter().map(|d| d.number(r) as u64).collect();
        let mut title = vec![r.phase.clone()];
        title.extend(dims.iter().map(|d| d.text(r)));
        groups.entry((phase_order(&r.phase), order)).or_insert_with(|| (title.join(", "), Vec::new())).1.push(r);
    }
    groups.into_values().collect()
}

/// Lines of `y` against the numeric dimension `x`, a line per variant name.
fn lines(rows: &[&Row], x: Dim, name: impl Fn(&Row) -> String, y: impl Fn(&Row) -> (f64, f64)) -> Vec<Series> {
    let mut series: Vec<Series> = Vec::new();
    for r in rows {
        let (mean, spread) = y(r);
        if !mean.is_finite() {
            continue;
        }
        let point = Point { x: x.number(r), y: mean / MIB, error: if spread.is_finite() { spread / MIB } else { 0.0 } };
        let name = name(r);
        match series.iter_mut().find(|s| s.name == name) {
            Some(s) => s.points.push(point),
            None => series.push(Series { name, group: None, dashed: false, points: vec![point] }),
        }
    }
    for s in &mut series {
        s.points.sort_by(|a, b| a.x.total_cmp(&b.x));
    }
    series
}

fn global(r: &Row) -> (f64, f64) {
    (r.bandwidth_mean, r.bandwidth_spread)
}

fn bandwidth_axis() -> Axis {
    Axis::linear("global timing bandwidth (MiB/s)")
}

const SPREAD_NOTE: &str = "Points are means over the repetitions, error bars one standard deviation either side.";

/// Every figure the rows can answer, in the studies' order.
pub fn study_figures(rows: &[Row]) -> Vec<Figure> {
    let rows: Vec<&Row> = rows.iter().collect();
    [against_processes, global_and_synchronous, against_size, breakdown, object_classes, scalability]
        .iter()
        .filter_map(|figure| figure(&rows))
        .collect()
}

/// Bandwidth against processes, a panel per phase and size.
fn against_processes(rows: &[&Row]) -> Option<Figure> {
    let note = format!("Global timing bandwidth (all bytes over the phase's first-to-last I/O time). {SPREAD_NOTE} Pattern B's write+read is the sum of its write and read bandwidths.");
    let figure = Figure { id: "bandwidth-processes".into(), title: "Bandwidth against processes".into(), note, panels: Vec::new() };
    bandwidth_against(rows, Dim::Procs, Axis::count("processes"), Dim::Size, figure)
}

/// Bandwidth against object or field size, a panel per phase and process count.
fn against_size(rows: &[&Row]) -> Option<Figure> {
    let note = format!("Sizes on a logarithmic axis. {SPREAD_NOTE}");
    let figure = Figure { id: "bandwidth-size".into(), title: "Bandwidth against object or field size".into(), note, panels: Vec::new() };
    bandwidth_against(rows, Dim::Size, Axis::bytes("object or field size"), Dim::Procs, figure)
}

/// `figure` with bandwidth against `x` (which must take two values or more), a panel per
/// phase and value of `per_panel`, a line per variant.
fn bandwidth_against(rows: &[&Row], x: Dim, axis: Axis, per_panel: Dim, figure: Figure) -> Option<Figure> {
    if distinct(rows, x) < 2 {
        return None;
    }
    let variants = Variants::new(rows, &[Dim::Procs, Dim::Size]);
    let panels = panels(rows, &[per_panel])
        .into_iter()
        .map(|(title, rows)| Panel {
            title,
            x: axis.clone(),
            y: bandwidth_axis(),
            plot: Plot::Lines { series: lines(&rows, x, |r| variants.name_or(r, "global timing"), global) },
        })
        .collect();
    Some(Figure { panels, ..figure })
}

/// Global timing and synchronous bandwidth side by side, a panel per phase and size.
fn global_and_synchronous(rows: &[&Row]) -> Option<Figure> {
    let rows: Vec<&Row> = rows.iter().copied().filter(|r| r.phase != SUM_PHASE && r.synchronous_mean.is_finite()).collect();
    if rows.is_empty() {
        return None;
    }
    let variants = Variants::new(&rows, &[Dim::Procs, Dim::Size]);
    let named = |r: &Row, what: &str| match variants.name(r).as_str() {
        "" => what.to_string(),
        name => format!("{name}: {what}"),
    };
    // A variant's two bandwidths share its colour: solid and dashed.
    let grouped = |series: Vec<Series>, dashed: bool| {
        series.into_iter().map(move |s| Series { group: Some(s.name.rsplit_once(": ").map_or("", |n| n.0).to_string()), dashed, ..s })
    };
    let panels = panels(&rows, &[Dim::Size])
        .into_iter()
        .map(|(title, rows)| {
            let global = lines(&rows, Dim::Procs, |r| named(r, "global timing"), global);
            let synchronous = lines(&rows, Dim::Procs, |r| named(r, "synchronous"), |r| (r.synchronous_mean, r.synchronous_spread));
            let series = grouped(global, false).chain(grouped(synchronous, true)).collect();
            Panel { title, x: Axis::count("processes"), y: Axis::linear("bandwidth (MiB/s)"), plot: Plot::Lines { series } }
        })
        .collect();
    Some(Figure {
        id: "global-synchronous".into(),
        title: "Global timing against synchronous bandwidth".into(),
        note: format!("Solid: global timing bandwidth; dashed: synchronous bandwidth (the mean over iterations of each iteration's bytes over its parallel wall-clock time, what IOR reports). When processes drift apart, each iteration's span stretches from the first process's start to the last one's end, so runs without synchronisation between iterations score lower synchronously. {SPREAD_NOTE}"),
        panels,
    })
}

/// Rows at the largest process count among them.
fn at_most_processes<'r>(rows: &[&'r Row]) -> Vec<&'r Row> {
    let most = rows.iter().map(|r| r.procs).max().unwrap_or(0);
    rows.iter().copied().filter(|r| r.procs == most).collect()
}

/// Categories of `rows` named by `name`, in first-appearance order, and each row's category.
fn categories(rows: &[&Row], name: impl Fn(&Row) -> String) -> (Vec<String>, Vec<usize>) {
    let mut names: Vec<String> = Vec::new();
    let mut of_row = Vec::new();
    for r in rows {
        let n = name(r);
        let i = names.iter().position(|c| *c == n).unwrap_or_else(|| {
            names.push(n);
            names.len() - 1
        });
        of_row.push(i);
    }
    (names, of_row)
}

/// Mean time per process in each operation, stacked, a bar per variant and process count.
fn breakdown(rows: &[&Row]) -> Option<Figure> {
    let mut rows: Vec<&Row> = rows.iter().copied().filter(|r| !r.breakdown.is_empty()).collect();
    if rows.is_empty() {
        return None;
    }
    let per_panel = panels(&rows, &[Dim::Size]).iter().map(|(_, r)| r.len()).max().unwrap_or(0);
    let mut note = String::from("Mean time each process spent in each operation (the phase's I/O time split by operation), one bar per configuration; contention shows as longer bars of the same operations. Error bars: one standard deviation of the total over the repetitions.");
    if per_panel > MOST_CATEGORIES {
        rows = at_most_processes(&rows);
        note.push_str(" Only the largest process count is shown.");
    }
    let variants = Variants::new(&rows, &[Dim::Size]);
    let (unit, scale) = time_unit(rows.iter().map(|r| r.breakdown.values().sum::<f64>()).fold(0.0, f64::max));
    let panels = panels(&rows, &[Dim::Size])
        .into_iter()
        .map(|(title, rows)| {
            let (categories, of_row) = categories(&rows, |r| variants.name_or(r, "run"));
            let ops: BTreeSet<&String> = rows.iter().flat_map(|r| r.breakdown.keys()).collect();
            let layers = ops
                .into_iter()
                .map(|op| {
                    let mut values = vec![None; categories.len()];
                    for (r, &c) in rows.iter().zip(&of_row) {
                        values[c] = r.breakdown.get(op).map(|&value| Value { value: value * scale, error: 0.0 });
                    }
                    Bars { name: op.clone(), values }
                })
                .collect();
            let mut total_errors = vec![0.0; categories.len()];
            for (r, &c) in rows.iter().zip(&of_row) {
                total_errors[c] = r.breakdown_spread * scale;
            }
            let y = Axis::linear(&format!("mean time per process ({unit})"));
            Panel { title, x: Axis::linear("configuration"), y, plot: Plot::Stacked { categories, layers, total_errors } }
        })
        .collect();
    Some(Figure { id: "breakdown".into(), title: "Time per operation (profiling)".into(), note, panels })
}

/// The unit to show times of at most `longest` seconds in, and the factor from seconds.
pub fn time_unit(longest: f64) -> (&'static str, f64) {
    if longest < 1.0 {
        ("ms", 1e3)
    } else {
        ("s", 1.0)
    }
}

/// Grouped bars of object classes at the largest process count.
fn object_classes(rows: &[&Row]) -> Option<Figure> {
    // Only sweeps that set classes answer this; others in the study ran with the pool's own.
    let rows: Vec<&Row> = rows.iter().copied().filter(|r| !r.class.is_empty()).collect();
    if distinct(&rows, Dim::Class) < 2 {
        return None;
    }
    let rows = at_most_processes(&rows);
    let variants = Variants::new(&rows, &[Dim::Class, Dim::Size, Dim::Procs]);
    let panels = panels(&rows, &[Dim::Size, Dim::Procs])
        .into_iter()
        .map(|(title, rows)| {
            let (categories, of_row) = categories(&rows, |r| r.class.clone());
            let mut series: Vec<Bars> = Vec::new();
            for (r, &c) in rows.iter().zip(&of_row) {
                let name = variants.name_or(r, "global timing");
                let i = series.iter().position(|s| s.name == name).unwrap_or_else(|| {
                    series.push(Bars { name, values: vec![None; categories.len()] });
                    series.len() - 1
                });
                let error = if r.bandwidth_spread.is_finite() { r.bandwidth_spread / MIB } else { 0.0 };
                series[i].values[c] = Some(Value { value: r.bandwidth_mean / MIB, error });
            }
            Panel { title, x: Axis::linear("object class"), y: bandwidth_axis(), plot: Plot::Bars { categories, series } }
        })
        .collect();
    Some(Figure {
        id: "object-classes".into(),
        title: "Bandwidth by object class (replication, erasure coding, sharding)".into(),
        note: format!("At the largest process count. Bars are means, error bars one standard deviation. {SPREAD_NOTE}"),
        panels,
    })
}

/// Bandwidth against server nodes: each variant's best over process counts, with the ideal.
fn scalability(rows: &[&Row]) -> Option<Figure> {
    if distinct(rows, Dim::Servers) < 2 {
        return None;
    }
    // Each cluster size is a sweep of its own: sweeps of one variant make one line, unless
    // two sweeps of one variant measured one cluster size (then the sweeps name the lines).
    let mut variants = Variants::new(rows, &[Dim::Sweep, Dim::Servers, Dim::Procs, Dim::Size]);
    let mut sweeps: BTreeMap<(String, u32), BTreeSet<&str>> = BTreeMap::new();
    for r in rows {
        sweeps.entry((variants.name(r), r.servers)).or_default().insert(&r.sweep);
    }
    if sweeps.values().any(|s| s.len() > 1) {
        variants = Variants::new(rows, &[Dim::Servers, Dim::Procs, Dim::Size]);
    }
    let mut notes = BTreeSet::new();
    let panels = panels(rows, &[Dim::Size])
        .into_iter()
        .map(|(title, rows)| {
            let best = best_over_processes(&rows, &variants);
            let mut series = lines(&best, Dim::Servers, |r| variants.name_or(r, "best over processes"), global);
            let backends: BTreeSet<&str> = rows.iter().map(|r| r.backend.as_str()).collect();
            for backend in &backends {
                let of_backend: Vec<&Row> = rows.iter().copied().filter(|r| r.backend == *backend).collect();
                let name = if backends.len() == 1 { "ideal".to_string() } else { format!("ideal, {backend}") };
                if let Some((ideal, note)) = ideal_line(&of_backend, name) {
                    series.push(ideal);
                    notes.insert(note);
                }
            }
            Panel { title, x: Axis::count("server nodes"), y: bandwidth_axis(), plot: Plot::Lines { series } }
        })
        .collect();
    Some(Figure {
        id: "scalability".into(),
        title: "Scalability against server nodes".into(),
        note: format!(
            "Each point is a variant's highest mean bandwidth over the process counts run at that cluster size. {} {SPREAD_NOTE}",
            notes.into_iter().collect::<Vec<_>>().join(" ")
        ),
        panels,
    })
}

/// Each variant's row of highest mean bandwidth at each server count.
fn best_over_processes<'r>(rows: &[&'r Row], variants: &Variants) -> Vec<&'r Row> {
    let mut best: BTreeMap<(String, u32), &Row> = BTreeMap::new();
    for r in rows {
        let slot = best.entry((variants.name(r), r.servers)).or_insert(r);
        if r.bandwidth_mean > slot.bandwidth_mean {
            *slot = r;
        }
    }
    best.into_values().collect()
}

/// The ideal of one backend's rows: server nodes times the measured limit of one, taken from
/// IOR's best per node at the smallest cluster when IOR ran, else from the best of any
/// benchmark there.
fn ideal_line(rows: &[&Row], name: String) -> Option<(Series, String)> {
    let ior: Vec<&Row> = rows.iter().copied().filter(|r| r.benchmark == "ior").collect();
    let (basis, source) = if ior.is_empty() { (rows.to_vec(), "the best run") } else { (ior, "IOR (the bulk limit)") };
    let smallest = basis.iter().map(|r| r.servers).min().filter(|&n| n > 0)?;
    let per_node = basis.iter().filter(|r| r.servers == smallest).map(|r| r.bandwidth_mean).fold(f64::NAN, f64::max) / smallest as f64;
    if !per_node.is_finite() {
        return None;
    }
    let servers: BTreeSet<u32> = rows.iter().map(|r| r.servers).collect();
    let points = servers.iter().map(|&n| Point { x: n as f64, y: per_node * n as f64 / MIB, error: 0.0 }).collect();
    let note = format!(
        "Ideal (dashed, per backend): server nodes times the bandwidth of one, measured as {source} at {smallest} server node(s) divided by {smallest}."
    );
    Some((Series { name, group: None, dashed: true, points }, note))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(sweep: &str, procs: u32, size: usize, mode: &str, phase: &str, mean: f64) -> Row {
        Row {
            sweep: sweep.into(),
            benchmark: "field-io".into(),
            backend: "posix".into(),
            servers: 1,
            procs,
            size,
            mode: mode.into(),
            pattern: "A".into(),
            index: "per-process".into(),
            class: String::new(),
            phase: phase.into(),
            reps: 3,
            bandwidth_mean: mean * MIB,
            bandwidth_spread: 0.1 * mean * MIB,
            synchronous_mean: 2.0 * mean * MIB,
            synchronous_spread: 0.0,
            idle: 0.0,
            breakdown: [("array write".to_string(), 1.0), ("kv put".to_string(), 0.5)].into(),
            breakdown_spread: 0.0,
            off_0: 1.0,
            off_f: 2.0,
            po_0: None,
            po_f: None,
        }
    }

    #[test]
    fn series_are_named_by_what_varies_and_panels_by_phase_and_size() {
        let mut rows = Vec::new();
        for mode in ["full", "no-index"] {
            for procs in [1, 2] {
                for phase in ["read", "write"] {
                    rows.push(row("s", procs, 1048576, mode, phase, procs as f64 * 10.0));
                }
            }
        }
        let figures = study_figures(&rows);
        let ids: Vec<&str> = figures.iter().map(|f| f.id.as_str()).collect();
        assert_eq!(ids, ["bandwidth-processes", "global-synchronous", "breakdown"], "one size, one class, one cluster size");
        let f = &figures[0];
        let titles: Vec<&str> = f.panels.iter().map(|p| p.title.as_str()).collect();
        assert_eq!(titles, ["write, 1 MiB", "read, 1 MiB"]);
        let Plot::Lines { series } = &f.panels[0].plot else { panic!() };
        let names: Vec<&str> = series.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names, ["full", "no-index"]);
        assert_eq!(series[0].points, [Point { x: 1.0, y: 10.0, error: 1.0 }, Point { x: 2.0, y: 20.0, error: 2.0 }]);
    }

    #[test]
    fn object_classes_compare_only_the_rows_that_set_one() {
        let mut rows = vec![row("plain", 2, 1048576, "full", "write", 5.0)];
        for (class, mean) in [("OC_S1", 10.0), ("OC_RP_2G1", 6.0)] {
            rows.push(Row { class: class.into(), ..row("classes", 2, 1048576, "no-index", "write", mean) });
        }
        let f = study_figures(&rows).into_iter().find(|f| f.id == "object-classes").expect("two classes");
        let Plot::Bars { categories, series } = &f.panels[0].plot else { panic!() };
        assert_eq!(categories, &["OC_S1", "OC_RP_2G1"]);
        assert_eq!(series.len(), 1, "{series:?}");
        assert_eq!(series[0].values.iter().map(|v| v.unwrap().value).collect::<Vec<_>>(), [10.0, 6.0]);
    }

    #[test]
    fn the_sweep_label_names_series_only_when_nothing_else_does() {
        let rows = [row("before", 1, 4096, "full", "write", 1.0), row("after", 1, 4096, "full", "write", 2.0)];
        let refs: Vec<&Row> = rows.iter().collect();
        let v = Variants::new(&refs, &[Dim::Procs]);
        assert_eq!((v.name(&rows[0]), v.name(&rows[1])), ("before".to_string(), "after".to_string()));
        let mut other = rows.clone();
        other[1].backend = "rados".into();
        other[1].servers = 2;
        let refs: Vec<&Row> = other.iter().collect();
        let v = Variants::new(&refs, &[Dim::Procs]);
        assert_eq!((v.name(&other[0]), v.name(&other[1])), ("posix".to_string(), "rados".to_string()));
    }

    #[test]
    fn scalability_takes_the_best_over_processes_and_the_ideal_from_ior() {
        let mut rows = Vec::new();
        for (servers, procs, mean) in [(1, 1, 50.0), (1, 2, 80.0), (2, 1, 90.0), (2, 2, 150.0)] {
            rows.push(Row { servers, ..row("fio", procs, 1048576, "full", "write", mean) });
        }
        rows.push(Row { servers: 1, benchmark: "ior".into(), ..row("ior", 2, 1048576, "", "write", 100.0) });
        rows.push(Row { servers: 2, benchmark: "ior".into(), ..row("ior", 2, 1048576, "", "write", 190.0) });
        let f = study_figures(&rows).into_iter().find(|f| f.id == "scalability").expect("two cluster sizes");
        let Plot::Lines { series } = &f.panels[0].plot else { panic!() };
        let by_name = |n: &str| series.iter().find(|s| s.name == n).unwrap_or_else(|| panic!("{n} in {series:?}"));
        let ys = |n: &str| by_name(n).points.iter().map(|p| (p.x, p.y)).collect::<Vec<_>>();
        assert_eq!(ys("field-io, full"), [(1.0, 80.0), (2.0, 150.0)]);
        assert_eq!(ys("ideal"), [(1.0, 100.0), (2.0, 200.0)], "IOR's 100 MiB/s on one node, times nodes");
        assert!(by_name("ideal").dashed && f.note.contains("IOR"));
    }
}
