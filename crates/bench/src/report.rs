//! The HTML report of `bench analyze --html`: one self-contained page (no scripts or styles
//! from elsewhere) with the metrics table, a bandwidth chart per phase and a per-process
//! timeline of operations, drawn as inline SVG. A small script checks on load that every plot
//! has marks, and records the count in `data-rendered` (the browser test reads it).

use std::collections::BTreeMap;
use std::fmt::Write;

use crate::analyze::{IoEvent, Overlap, PhaseMetrics};

const WIDTH: f64 = 900.0;
/// Most rectangles drawn per process in a timeline; shorter events merge into spans.
const MAX_MARKS_PER_PROCESS: usize = 2000;
const COLOURS: [&str; 6] = ["#3366cc", "#dc3912", "#ff9900", "#109618", "#990099", "#0099c6"];

fn escape(text: &str) -> String {
    text.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;")
}

/// The whole page.
pub fn html(title: &str, phases: &[PhaseMetrics], events: &[IoEvent], overlap: Option<&Overlap>) -> String {
    let mut page = String::new();
    let _ = write!(
        page,
        "<!DOCTYPE html><html><head><meta charset=\"utf-8\"><title>{t}</title>\
         <style>body{{font-family:sans-serif;margin:2em}}table{{border-collapse:collapse}}td,th{{border:1px solid #ccc;padding:4px 8px;text-align:right}}\
         svg{{border:1px solid #eee;margin:1em 0}}</style></head><body><h1>{t}</h1>",
        t = escape(title)
    );
    page.push_str(&metrics_table(phases, overlap));
    page.push_str("<h2>Bandwidth per phase</h2>");
    page.push_str(&bandwidth_chart(phases));
    for p in phases {
        let _ = write!(page, "<h2>Timeline: {}</h2>", escape(&p.phase));
        page.push_str(&timeline(&p.phase, events));
    }
    page.push_str(
        "<script>\n\
         const plots = document.querySelectorAll('svg.plot');\n\
         plots.forEach(p => { if (p.querySelectorAll('.mark').length === 0) throw new Error('empty plot: ' + p.id); });\n\
         document.body.dataset.rendered = String(plots.length);\n\
         </script></body></html>\n",
    );
    page
}

fn metrics_table(phases: &[PhaseMetrics], overlap: Option<&Overlap>) -> String {
    let mut t = String::from("<table><tr>");
    for c in PhaseMetrics::COLUMNS.iter().chain(["mean s per process"].iter()) {
        let _ = write!(t, "<th>{c}</th>");
    }
    t.push_str("</tr>");
    for p in phases {
        let ops: Vec<String> = p.breakdown.iter().map(|(op, s)| format!("{op} {s:.3}")).collect();
        t.push_str("<tr>");
        for cell in p.cells().iter().chain([ops.join(", ")].iter()) {
            let _ = write!(t, "<td>{}</td>", escape(cell));
        }
        t.push_str("</tr>");
    }
    t.push_str("</table>");
    if let Some(o) = overlap {
        let _ = write!(t, "<p>Write and read at once: po_0 {:.2} %, po_f {:.2} %</p>", o.po_0, o.po_f);
    }
    t
}

/// Bars of global timing and synchronous bandwidth per phase.
fn bandwidth_chart(phases: &[PhaseMetrics]) -> String {
    let height = 60.0 + 50.0 * phases.len() as f64;
    let top = phases.iter().map(|p| p.global_timing_bandwidth.max(p.synchronous_bandwidth)).fold(1.0, f64::max);
    let scale = (WIDTH - 250.0) / top;
    let mut svg =
        format!("<svg class=\"plot\" id=\"bandwidth\" width=\"{WIDTH}\" height=\"{height}\" xmlns=\"http://www.w3.org/2000/svg\">");
    for (i, p) in phases.iter().enumerate() {
        let y = 20.0 + 50.0 * i as f64;
        let _ = write!(svg, "<text x=\"5\" y=\"{}\">{}</text>", y + 20.0, escape(&p.phase));
        for (j, (label, value)) in
            [("global timing", p.global_timing_bandwidth), ("synchronous", p.synchronous_bandwidth)].iter().enumerate()
        {
            let yy = y + 20.0 * j as f64;
            let w = (value * scale).max(1.0);
            let _ = write!(
                svg,
                "<rect class=\"mark\" x=\"80\" y=\"{yy}\" width=\"{w:.1}\" height=\"16\" fill=\"{}\"><title>{label}: {:.1} MiB/s</title></rect>\
                 <text x=\"{:.1}\" y=\"{}\" font-size=\"12\">{label} {:.1} MiB/s</text>",
                COLOURS[j],
                value / 1048576.0,
                85.0 + w,
                yy + 13.0,
                value / 1048576.0
            );
        }
    }
    svg.push_str("</svg>");
    svg
}

/// One row per process: each operation as a rectangle along the phase's wall-clock time.
fn timeline(phase: &str, events: &[IoEvent]) -> String {
    let of_phase: Vec<&IoEvent> = events.iter().filter(|e| e.phase == phase).collect();
    let start = of_phase.iter().map(|e| e.io_start).min().unwrap_or(0);
    let end = of_phase.iter().map(|e| e.io_end).max().unwrap_or(start + 1).max(start + 1);
    let mut rows: BTreeMap<(&str, u32), Vec<&IoEvent>> = BTreeMap::new();
    for e in &of_phase {
        rows.entry((&e.node, e.process)).or_default().push(e);
    }
    let ops: Vec<&str> = {
        let mut o: Vec<&str> = of_phase.iter().map(|e| e.op.as_str()).collect();
        o.sort_unstable();
        o.dedup();
        o
    };
    let row_height = 18.0;
    let height = 40.0 + row_height * rows.len() as f64;
    let x_scale = (WIDTH - 120.0) / (end - start) as f64;
    let id = format!("timeline-{}", escape(phase));
    let mut svg = format!("<svg class=\"plot\" id=\"{id}\" width=\"{WIDTH}\" height=\"{height}\" xmlns=\"http://www.w3.org/2000/svg\">");
    for (i, ((node, process), row)) in rows.iter_mut().enumerate() {
        let y = 10.0 + row_height * i as f64;
        let _ = write!(svg, "<text x=\"2\" y=\"{}\" font-size=\"11\">{}:{process}</text>", y + 12.0, escape(node));
        row.sort_by_key(|e| e.io_start);
        for span in spans(row, (end - start) / MAX_MARKS_PER_PROCESS as u64) {
            let colour = COLOURS[ops.iter().position(|o| *o == span.op).unwrap_or(0) % COLOURS.len()];
            let x = 110.0 + (span.start - start) as f64 * x_scale;
            let w = ((span.end - span.start) as f64 * x_scale).max(0.5);
            let _ = write!(
                svg,
                "<rect class=\"mark\" x=\"{x:.2}\" y=\"{y}\" width=\"{w:.2}\" height=\"{}\" fill=\"{colour}\"><title>{} x{} {:.3} ms</title></rect>",
                row_height - 4.0,
                escape(span.op),
                span.count,
                (span.end - span.start) as f64 / 1e3
            );
        }
    }
    let mut x = 110.0;
    for (j, op) in ops.iter().enumerate() {
        let _ = write!(
            svg,
            "<rect x=\"{x}\" y=\"{}\" width=\"10\" height=\"10\" fill=\"{}\"/><text x=\"{}\" y=\"{}\" font-size=\"11\">{}</text>",
            height - 20.0,
            COLOURS[j % COLOURS.len()],
            x + 14.0,
            height - 11.0,
            escape(op)
        );
        x += 20.0 + 8.0 * op.len() as f64;
    }
    svg.push_str("</svg>");
    svg
}

/// Consecutive events of one operation, merged while the gaps between them are below
/// `resolution` microseconds (so a row never has more marks than the plot can show).
struct Span<'e> {
    op: &'e str,
    start: u64,
    end: u64,
    count: usize,
}

fn spans<'e>(events: &[&'e IoEvent], resolution: u64) -> Vec<Span<'e>> {
    let mut out: Vec<Span<'e>> = Vec::new();
    for e in events {
        match out.last_mut() {
            Some(s) if s.op == e.op && e.io_start <= s.end + resolution && e.io_end - s.start <= resolution.max(1) * 4 => {
                s.end = s.end.max(e.io_end);
                s.count += 1;
            }
            _ => out.push(Span { op: &e.op, start: e.io_start, end: e.io_end, count: 1 }),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analyze::phases;

    fn event(process: u32, op: &str, start: u64, end: u64) -> IoEvent {
        IoEvent {
            node: "n<1>".into(),
            process,
            phase: "write".into(),
            op: op.into(),
            iteration: 0,
            bytes: 100,
            io_start: start,
            io_end: end,
        }
    }

    #[test]
    fn the_page_holds_every_plot_escaped_and_bounded() {
        let mut events: Vec<IoEvent> = (0..50_000).map(|i| event(i % 2, "archive", 1_000 + i as u64 * 10, 1_005 + i as u64 * 10)).collect();
        events.push(event(0, "flush", 600_000, 700_000));
        let page = html("run <1>", &phases(&events), &events, None);
        assert!(page.contains("<title>run &lt;1&gt;</title>") && page.contains("n&lt;1&gt;:0"));
        assert_eq!(page.matches("class=\"plot\"").count(), 2);
        let marks = page.matches("class=\"mark\"").count();
        assert!((3..=2 * MAX_MARKS_PER_PROCESS + 10).contains(&marks), "{marks} marks for 50,001 events");
        assert!(page.contains(">flush</text>"), "legend");
    }
}

/// One cell of a sweep: a configuration, a phase, and its bandwidth over repetitions.
#[derive(Clone, Debug, serde::Serialize)]
pub struct SweepRow {
    /// Processes run at once.
    pub procs: u32,
    /// Object or field size in bytes.
    pub size: usize,
    /// The field-io mode; empty for the other benchmarks.
    pub mode: String,
    /// The phase (`write`, `read`, ...).
    pub phase: String,
    /// Repetitions measured.
    pub reps: usize,
    /// Global timing bandwidth, bytes per second: mean and standard deviation.
    pub bandwidth_mean: f64,
    /// Global timing bandwidth: its standard deviation over repetitions.
    pub bandwidth_spread: f64,
    /// Synchronous bandwidth, bytes per second: mean over repetitions.
    pub synchronous_mean: f64,
}

/// (processes, mean bandwidth, spread) of one line of the sweep chart.
type SweepPoint = (u32, f64, f64);

/// A page with a chart of bandwidth against processes: one line per (phase, size, mode).
pub fn sweep_html(title: &str, rows: &[SweepRow]) -> String {
    let mut lines: BTreeMap<(String, usize, String), Vec<SweepPoint>> = BTreeMap::new();
    for r in rows {
        lines.entry((r.phase.clone(), r.size, r.mode.clone())).or_default().push((r.procs, r.bandwidth_mean, r.bandwidth_spread));
    }
    let max_procs = rows.iter().map(|r| r.procs).max().unwrap_or(1).max(1) as f64;
    let top = rows.iter().map(|r| r.bandwidth_mean + r.bandwidth_spread).fold(1.0, f64::max);
    let (left, bottom, height) = (70.0, 40.0, 400.0);
    let (plot_w, plot_h) = (WIDTH - left - 260.0, height - bottom - 20.0);
    let x = |p: f64| left + p / max_procs * plot_w;
    let y = |b: f64| 20.0 + plot_h - b / top * plot_h;
    let mut svg = format!("<svg class=\"plot\" id=\"sweep\" width=\"{WIDTH}\" height=\"{height}\" xmlns=\"http://www.w3.org/2000/svg\">");
    let _ = write!(svg, "<line x1=\"{left}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"#888\"/>", y(0.0), x(max_procs), y(0.0));
    let _ = write!(svg, "<line x1=\"{left}\" y1=\"{}\" x2=\"{left}\" y2=\"20\" stroke=\"#888\"/>", y(0.0));
    let _ = write!(svg, "<text x=\"{}\" y=\"{}\" font-size=\"12\">processes</text>", x(max_procs) - 60.0, y(0.0) + 30.0);
    let _ = write!(svg, "<text x=\"2\" y=\"14\" font-size=\"12\">MiB/s (max {:.0})</text>", top / 1048576.0);
    for (i, ((phase, size, mode), mut points)) in lines.into_iter().enumerate() {
        points.sort_by_key(|p| p.0);
        let colour = COLOURS[i % COLOURS.len()];
        let path: Vec<String> = points.iter().map(|(p, b, _)| format!("{:.1},{:.1}", x(*p as f64), y(*b))).collect();
        let _ = write!(svg, "<polyline points=\"{}\" fill=\"none\" stroke=\"{colour}\" stroke-width=\"2\"/>", path.join(" "));
        for (p, b, s) in &points {
            let _ = write!(
                svg,
                "<circle class=\"mark\" cx=\"{:.1}\" cy=\"{:.1}\" r=\"4\" fill=\"{colour}\"><title>{} procs: {:.1} ± {:.1} MiB/s</title></circle>\
                 <line x1=\"{:.1}\" y1=\"{:.1}\" x2=\"{:.1}\" y2=\"{:.1}\" stroke=\"{colour}\"/>",
                x(*p as f64),
                y(*b),
                p,
                b / 1048576.0,
                s / 1048576.0,
                x(*p as f64),
                y(b - s),
                x(*p as f64),
                y(b + s)
            );
        }
        let label = format!("{} {} B{}", phase, size, if mode.is_empty() { String::new() } else { format!(" {mode}") });
        let _ = write!(
            svg,
            "<text x=\"{}\" y=\"{}\" font-size=\"12\" fill=\"{colour}\">{}</text>",
            WIDTH - 250.0,
            30.0 + 16.0 * i as f64,
            escape(&label)
        );
    }
    svg.push_str("</svg>");
    let mut table = String::from("<table><tr><th>procs</th><th>size</th><th>mode</th><th>phase</th><th>reps</th><th>global timing MiB/s</th><th>± (sd)</th><th>synchronous MiB/s</th></tr>");
    for r in rows {
        let _ = write!(
            table,
            "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{:.1}</td><td>{:.1}</td><td>{:.1}</td></tr>",
            r.procs,
            r.size,
            escape(&r.mode),
            escape(&r.phase),
            r.reps,
            r.bandwidth_mean / 1048576.0,
            r.bandwidth_spread / 1048576.0,
            r.synchronous_mean / 1048576.0
        );
    }
    table.push_str("</table>");
    format!(
        "<!DOCTYPE html><html><head><meta charset=\"utf-8\"><title>{t}</title><style>body{{font-family:sans-serif;margin:2em}}table{{border-collapse:collapse}}td,th{{border:1px solid #ccc;padding:4px 8px}}</style></head>\
         <body><h1>{t}</h1><h2>Bandwidth against processes</h2>{svg}{table}\
         <script>const plots = document.querySelectorAll('svg.plot'); plots.forEach(p => {{ if (p.querySelectorAll('.mark').length === 0) throw new Error('empty plot'); }}); document.body.dataset.rendered = String(plots.length);</script></body></html>\n",
        t = escape(title)
    )
}
