//! `bench analyze` and `bench sweep` reports end to end: figures computed from hand-made
//! sweep directories whose answers are known, every report type rendered in headless
//! Chromium (the page's own check: each panel has its title, axis labels, ticks and marks),
//! PNG export, and clear errors for what is not a sweep.

use std::path::Path;
use std::process::{Command, Output};

use serde_json::{json, Value};

const BIN: &str = env!("CARGO_BIN_EXE_fieldstore");
const MIB: u64 = 1048576;
/// Where the hand-made runs start, microseconds since the epoch.
const T0: u64 = 1_700_000_000_000_000;

fn run(root: &Path, args: &[&str]) -> Output {
    Command::new(BIN).args(args).env("FIELDSTORE_ROOT", root).env_remove("FIELDSTORE_CONFIG").output().unwrap()
}

fn ok(root: &Path, args: &[&str]) -> String {
    let out = run(root, args);
    assert!(out.status.success(), "{args:?} failed: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn fails(root: &Path, args: &[&str]) -> String {
    let out = run(root, args);
    assert!(!out.status.success(), "{args:?} should fail");
    String::from_utf8_lossy(&out.stderr).into_owned()
}

fn event(process: u32, phase: &str, op: &str, iteration: u32, start_s: f64, end_s: f64) -> Value {
    let us = |s: f64| T0 + (s * 1e6).round() as u64;
    json!({"node": "n1", "process": process, "phase": phase, "op": op, "iteration": iteration, "bytes": MIB,
           "io_start": us(start_s), "io_end": us(end_s)})
}

/// Pattern A: every process writes two 1 MiB fields in `seconds` (half each), in lockstep,
/// then reads them back twice as fast, 10 s later.
fn pattern_a(procs: u32, seconds: f64) -> Vec<Value> {
    let mut events = Vec::new();
    for p in 0..procs {
        for i in 0..2 {
            let at = i as f64 * seconds / 2.0;
            events.push(event(p, "write", "array write", i, at, at + seconds / 2.0));
            events.push(event(p, "read", "array read", i, 10.0 + at / 2.0, 10.0 + (at + seconds / 2.0) / 2.0));
        }
    }
    events
}

/// Pattern B: process 0 writes two fields in [0, 1] s while process 1 reads two in [0.1, 1.1].
fn pattern_b() -> Vec<Value> {
    vec![
        event(0, "write", "array write", 0, 0.0, 0.5),
        event(0, "write", "array write", 1, 0.5, 1.0),
        event(1, "read", "array read", 0, 0.1, 0.6),
        event(1, "read", "array read", 1, 0.6, 1.1),
    ]
}

/// Writes a sweep directory as `bench sweep` does: sweep.json, and per run its run.json and
/// one event log per process.
fn write_sweep(dir: &Path, label: &str, servers: u32, runs: &[(u32, &str, usize, Vec<Value>)]) {
    let manifest = json!({"format": 1, "label": label, "benchmark": "field-io", "backend": "rados", "servers": servers,
                          "counts": [2], "reps": 2, "version": "test", "started_us": T0});
    std::fs::create_dir_all(dir).unwrap();
    std::fs::write(dir.join("sweep.json"), manifest.to_string()).unwrap();
    for (procs, pattern, rep, events) in runs {
        let config = json!({"procs": procs, "size": MIB, "count": 2, "mode": "full", "pattern": pattern, "index": "per-process", "class": "", "rep": rep});
        let run = dir.join("runs").join(format!("p{procs}-{pattern}-r{rep}"));
        std::fs::create_dir_all(&run).unwrap();
        std::fs::write(run.join("run.json"), config.to_string()).unwrap();
        for p in 0..*procs {
            let lines: Vec<String> = events.iter().filter(|e| e["process"] == p).map(Value::to_string).collect();
            std::fs::write(run.join(format!("events.jsonl.{p}")), lines.join("\n")).unwrap();
        }
    }
}

/// Two sweeps: one server node (pattern A at 1 and 2 processes, two repetitions of 1 s and
/// 2 s; pattern B at 2 processes), and two server nodes (pattern A, twice as fast).
fn hand_made_study(dir: &Path) -> (String, String) {
    let one = dir.join("one");
    let two = dir.join("two");
    let mut runs = Vec::new();
    for procs in [1, 2] {
        runs.push((procs, "A", 0, pattern_a(procs, 1.0)));
        runs.push((procs, "A", 1, pattern_a(procs, 2.0)));
    }
    runs.push((2, "B", 0, pattern_b()));
    write_sweep(&one, "one node", 1, &runs);
    let mut runs = Vec::new();
    for procs in [1, 2] {
        runs.push((procs, "A", 0, pattern_a(procs, 0.5)));
        runs.push((procs, "A", 1, pattern_a(procs, 1.0)));
    }
    write_sweep(&two, "two nodes", 2, &runs);
    (one.display().to_string(), two.display().to_string())
}

fn figure<'a>(figures: &'a Value, id: &str) -> &'a Value {
    figures.as_array().unwrap().iter().find(|f| f["id"] == id).unwrap_or_else(|| panic!("no figure {id}"))
}

fn panel<'a>(figure: &'a Value, title: &str) -> &'a Value {
    let panels = figure["panels"].as_array().unwrap();
    panels.iter().find(|p| p["title"] == title).unwrap_or_else(|| panic!("no panel {title} in {}", figure["id"]))
}

/// Checks the (x, y, error) of each point of a line, to 1e-9.
#[track_caller]
fn assert_line(panel: &Value, name: &str, expected: &[(f64, f64, f64)]) {
    let series = panel["plot"]["series"].as_array().unwrap();
    let s = series.iter().find(|s| s["name"] == name).unwrap_or_else(|| panic!("no line {name} in {series:?}"));
    let f = |v: &Value| v.as_f64().unwrap();
    let points: Vec<(f64, f64, f64)> = s["points"].as_array().unwrap().iter().map(|p| (f(&p["x"]), f(&p["y"]), f(&p["error"]))).collect();
    let close = |a: &(f64, f64, f64), b: &(f64, f64, f64)| (a.0 - b.0).abs() < 1e-9 && (a.1 - b.1).abs() < 1e-9 && (a.2 - b.2).abs() < 1e-9;
    assert!(
        points.len() == expected.len() && points.iter().zip(expected).all(|(a, b)| close(a, b)),
        "{name}: {points:?}, not {expected:?}"
    );
}

/// One standard deviation of two repetitions at x and 2x: x / sqrt(2).
const SD: f64 = std::f64::consts::FRAC_1_SQRT_2;

#[test]
fn figures_of_hand_made_sweeps_have_their_known_values() {
    let dir = tempfile::tempdir().unwrap();
    let (one, two) = hand_made_study(dir.path());
    let report: Value = serde_json::from_str(&ok(dir.path(), &["bench", "analyze", &one, &two, "--json"])).unwrap();
    let figures = &report["figures"];
    let ids: Vec<&str> = figures.as_array().unwrap().iter().map(|f| f["id"].as_str().unwrap()).collect();
    assert_eq!(ids, ["bandwidth-processes", "global-synchronous", "breakdown", "scalability", "timeline-0", "timeline-1"]);

    // 2 MiB per process in 1 s and 2 s: 2P and P MiB/s, mean 1.5P, sd P/sqrt(2).
    let write = panel(figure(figures, "bandwidth-processes"), "write, 1 MiB");
    assert_line(write, "1 server node, write then read (A)", &[(1.0, 1.5, SD), (2.0, 3.0, 2.0 * SD)]);
    assert_line(write, "2 server nodes, write then read (A)", &[(1.0, 3.0, 2.0 * SD), (2.0, 6.0, 4.0 * SD)]);
    assert_line(write, "1 server node, write+read at once (B)", &[(2.0, 2.0, 0.0)]);
    let read = panel(figure(figures, "bandwidth-processes"), "read, 1 MiB");
    assert_line(read, "1 server node, write then read (A)", &[(1.0, 3.0, 2.0 * SD), (2.0, 6.0, 4.0 * SD)]);
    // Pattern B's write+read: 2 MiB/s written plus 2 MiB/s read.
    let sum = panel(figure(figures, "bandwidth-processes"), "write+read, 1 MiB");
    assert_line(sum, "1 server node, write+read at once (B)", &[(2.0, 4.0, 0.0)]);

    // Lockstep iterations: synchronous bandwidth equals global timing, dashed, same colour.
    let sync = panel(figure(figures, "global-synchronous"), "write, 1 MiB");
    let name = "1 server node, write then read (A): synchronous";
    assert_line(sync, name, &[(1.0, 1.5, SD), (2.0, 3.0, 2.0 * SD)]);
    let series = sync["plot"]["series"].as_array().unwrap();
    let s = series.iter().find(|s| s["name"] == name).unwrap();
    assert_eq!((s["dashed"].as_bool(), s["group"].as_str()), (Some(true), Some("1 server node, write then read (A)")));

    // Each process spent 1 s and 2 s writing: 1.5 s on average.
    let breakdown = panel(figure(figures, "breakdown"), "write, 1 MiB");
    let categories = breakdown["plot"]["categories"].as_array().unwrap();
    let at = categories.iter().position(|c| c == "1 server node, write then read (A), 1 process").expect("a bar per configuration");
    assert_eq!(breakdown["plot"]["layers"][0]["name"], "array write");
    assert_eq!(breakdown["plot"]["layers"][0]["values"][at]["value"], 1.5);
    assert!((breakdown["plot"]["total_errors"][at].as_f64().unwrap() - SD).abs() < 1e-9, "1 s and 2 s: sd 1/sqrt(2)");
    assert_eq!(breakdown["y"]["label"], "mean time per process (s)");

    // The best over process counts at each cluster size, and the ideal from one node's best.
    let scale = panel(figure(figures, "scalability"), "write, 1 MiB");
    assert_line(scale, "write then read (A)", &[(1.0, 3.0, 2.0 * SD), (2.0, 6.0, 4.0 * SD)]);
    assert_line(scale, "ideal", &[(1.0, 3.0, 0.0), (2.0, 6.0, 0.0)]);

    // The first sweep's timeline is its contention run, offsets marked: po_0 = 0.1 s of 1.1 s.
    let timeline = &figure(figures, "timeline-0")["panels"][0]["plot"];
    let bands: Vec<&str> = timeline["bands"].as_array().unwrap().iter().map(|b| b["label"].as_str().unwrap()).collect();
    assert!(bands.contains(&"po_0 9.1 %") && bands.contains(&"po_f 9.1 %"), "{bands:?}");
    let b_row = report["rows"].as_array().unwrap().iter().find(|r| r["pattern"] == "B" && r["phase"] == "write").unwrap();
    assert!((b_row["po_0"].as_f64().unwrap() - 100.0 / 11.0).abs() < 1e-6);
}

/// Renders `page` in Chromium; checks the page's own check passed for `panels` panels and
/// nothing was logged as an error. False without Chromium (said).
fn renders(page: &Path, panels: usize, profile: &Path) -> bool {
    let Some((dom, log)) = fieldstore_testing::render_in_chromium(page, profile) else { return false };
    assert!(!log.contains("Uncaught"), "console error rendering {}:\n{log}", page.display());
    assert!(dom.contains(&format!("data-rendered=\"{panels}\"")), "the page's check did not pass for {panels} panels:\n{log}");
    true
}

/// Renders `page` in headless Chromium in a window `width` pixels wide and returns the DOM
/// after the page's own check ran (it throws when the page is wider than its window);
/// `None` without Chromium.
fn render_in_window(page: &Path, width: u32, profile: &Path) -> Option<String> {
    let chromium = fieldstore_testing::chromium()?;
    let out = Command::new(chromium)
        .args(["--headless", "--no-sandbox", "--disable-gpu", "--enable-logging=stderr", "--v=0", "--dump-dom"])
        .arg(format!("--window-size={width},900"))
        .arg(format!("--user-data-dir={}", profile.display()))
        .arg(format!("file://{}", page.display()))
        .output()
        .unwrap();
    let log = String::from_utf8_lossy(&out.stderr);
    assert!(!log.contains("Uncaught"), "console error rendering {} {width} px wide:\n{log}", page.display());
    Some(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// The fill of the legend's mark for `name` in figure `id` of an HTML report.
fn legend_colour(html: &str, id: &str, name: &str) -> String {
    let figure = html.split(&format!("<figure id=\"{id}\"")).nth(1).unwrap_or_else(|| panic!("no figure {id}"));
    let legend = figure.split("<div class=\"legend\">").nth(1).unwrap().split("</div>").next().unwrap();
    let at = legend.find(&format!(">\n{name}\n<")).unwrap_or_else(|| panic!("{name} not in the legend of {id}"));
    let mark = &legend[legend[..at].rfind("<rect").unwrap()..];
    mark.split("fill=\"").nth(1).unwrap().split('"').next().unwrap().to_string()
}

fn panel_count(figures: &Value) -> usize {
    figures.as_array().unwrap().iter().map(|f| f["panels"].as_array().unwrap().len()).sum()
}

/// A DAOS sweep over two sizes and two object classes at 2 processes, one repetition: each
/// process moves two objects of SIZE in 1 s (OC_S1) or 2 s (OC_RP_2G1).
fn classes_and_sizes(dir: &Path) -> String {
    let sweep = dir.join("classes");
    let manifest = json!({"format": 1, "label": "classes", "benchmark": "field-io", "backend": "daos", "servers": 1,
                          "counts": [2], "reps": 1, "version": "test", "started_us": T0});
    std::fs::create_dir_all(&sweep).unwrap();
    std::fs::write(sweep.join("sweep.json"), manifest.to_string()).unwrap();
    for size in [65536u64, MIB] {
        for (class, seconds) in [("OC_S1", 1.0), ("OC_RP_2G1", 2.0)] {
            let config = json!({"procs": 2, "size": size, "count": 2, "mode": "no-index", "pattern": "A", "index": "per-process", "class": class, "rep": 0});
            let run = sweep.join("runs").join(format!("s{size}-{class}"));
            std::fs::create_dir_all(&run).unwrap();
            std::fs::write(run.join("run.json"), config.to_string()).unwrap();
            for p in 0..2 {
                let lines: Vec<String> = pattern_a(2, seconds)
                    .into_iter()
                    .filter(|e| e["process"] == p)
                    .map(|mut e| {
                        e["bytes"] = json!(size);
                        e.to_string()
                    })
                    .collect();
                std::fs::write(run.join(format!("events.jsonl.{p}")), lines.join("\n")).unwrap();
            }
        }
    }
    sweep.display().to_string()
}

#[test]
fn size_and_class_figures_have_their_known_values_and_render() {
    let dir = tempfile::tempdir().unwrap();
    let sweep = classes_and_sizes(dir.path());
    let html = dir.path().join("classes.html");
    let report: Value =
        serde_json::from_str(&ok(dir.path(), &["bench", "analyze", &sweep, "--json", "--html", html.to_str().unwrap()])).unwrap();
    let figures = &report["figures"];
    // Two processes, two objects each, in 1 s: 4 objects a second (halved for OC_RP_2G1).
    let by_size = panel(figure(figures, "bandwidth-size"), "write, 2 processes");
    assert_eq!(by_size["x"]["scale"], "Log2");
    assert_line(by_size, "OC_S1", &[(65536.0, 0.25, 0.0), (1048576.0, 4.0, 0.0)]);
    assert_line(by_size, "OC_RP_2G1", &[(65536.0, 0.125, 0.0), (1048576.0, 2.0, 0.0)]);
    let classes = panel(figure(figures, "object-classes"), "write, 1 MiB, 2 processes");
    assert_eq!(classes["plot"]["categories"], json!(["OC_RP_2G1", "OC_S1"]), "in the order of the rows");
    assert_eq!(classes["plot"]["series"][0]["values"], json!([{"value": 2.0, "error": 0.0}, {"value": 4.0, "error": 0.0}]));
    renders(&html, panel_count(figures), &dir.path().join("chromium"));
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(page.contains("libdaos emulation"), "DAOS results say they come from the emulation");
}

#[test]
fn a_selection_keeps_only_the_configurations_and_phases_it_names() {
    let dir = tempfile::tempdir().unwrap();
    let (one, two) = hand_made_study(dir.path());
    let args = ["bench", "analyze", &one, &two, "--json", "--select", "pattern=A,phase=write,procs=1/2,class=-", "--title", "A only"];
    let report: Value = serde_json::from_str(&ok(dir.path(), &args)).unwrap();
    let rows = report["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 4, "two sweeps x two process counts, write only");
    assert!(rows.iter().all(|r| r["pattern"] == "A" && r["phase"] == "write"));
    let write = panel(figure(&report["figures"], "bandwidth-processes"), "write, 1 MiB");
    assert_line(write, "1 server node", &[(1.0, 1.5, SD), (2.0, 3.0, 2.0 * SD)]);
    let e = fails(dir.path(), &["bench", "analyze", &one, "--select", "colour=red"]);
    assert!(e.contains("unknown key \"colour\""), "{e}");
    let e = fails(dir.path(), &["bench", "analyze", &one, "--select", "procs=64"]);
    assert!(e.contains("no configuration of these sweeps matches"), "{e}");
}

#[test]
fn a_study_report_renders_every_figure_and_exports_pngs() {
    let dir = tempfile::tempdir().unwrap();
    let (one, two) = hand_made_study(dir.path());
    let html = dir.path().join("study.html");
    let png = dir.path().join("png");
    let out = ok(dir.path(), &["bench", "analyze", &one, &two, "--json", "--html", html.to_str().unwrap(), "--png", png.to_str().unwrap()]);
    let figures = serde_json::from_str::<Value>(&out).unwrap()["figures"].clone();
    for f in figures.as_array().unwrap() {
        let file = png.join(format!("{}.png", f["id"].as_str().unwrap()));
        assert_eq!(&std::fs::read(&file).unwrap()[1..4], b"PNG", "{}", file.display());
    }
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(!page.contains("<script src") && !page.contains("<link"), "the report opens offline");
    renders(&html, panel_count(&figures), &dir.path().join("chromium"));
}

/// Writes `events` as one process's event log.
fn write_log(path: &Path, events: &[Value]) -> String {
    std::fs::write(path, events.iter().map(Value::to_string).collect::<Vec<_>>().join("\n")).unwrap();
    path.display().to_string()
}

#[test]
fn a_write_run_then_a_read_run_has_no_overlap_offsets() {
    let dir = tempfile::tempdir().unwrap();
    let log = write_log(&dir.path().join("a.jsonl"), &pattern_a(2, 1.0));
    let report: Value = serde_json::from_str(&ok(dir.path(), &["bench", "analyze", &log, "--json"])).unwrap();
    assert_eq!(report["overlap"], Value::Null, "the reads began 9 s after the last write");
    assert!(!ok(dir.path(), &["bench", "analyze", &log]).contains("po_0"));
    let html = dir.path().join("a.html");
    ok(dir.path(), &["bench", "analyze", &log, "--html", html.to_str().unwrap()]);
    let page = std::fs::read_to_string(&html).unwrap();
    let valued = page.match_indices("po_0 ").any(|(i, _)| page[i + 5..].starts_with(|c: char| c.is_ascii_digit()));
    assert!(!valued && !page.contains("Write and read at once"), "no po_0 value, band or sentence");
    let b = write_log(&dir.path().join("b.jsonl"), &pattern_b());
    let report: Value = serde_json::from_str(&ok(dir.path(), &["bench", "analyze", &b, "--json"])).unwrap();
    assert!((report["overlap"]["po_0"].as_f64().unwrap() - 100.0 / 11.0).abs() < 1e-6, "writes and reads at once: {report}");
}

#[test]
fn a_runs_report_colours_each_operation_alike_titles_once_and_explains_synchronous_above_global() {
    let dir = tempfile::tempdir().unwrap();
    // One process: two 1 MiB writes of 1 s, 2 s apart (half the phase idle), then a read.
    let events = [
        event(0, "write", "array write", 0, 0.0, 1.0),
        event(0, "write", "array write", 1, 3.0, 4.0),
        event(0, "read", "array read", 0, 5.0, 6.0),
    ];
    let log = write_log(&dir.path().join("r.jsonl"), &events);
    let html = dir.path().join("r.html");
    ok(dir.path(), &["bench", "analyze", &log, "--html", html.to_str().unwrap()]);
    let page = std::fs::read_to_string(&html).unwrap();
    for op in ["array write", "array read"] {
        assert_eq!(legend_colour(&page, "breakdown", op), legend_colour(&page, "timeline", op), "{op} in both figures");
    }
    assert_ne!(legend_colour(&page, "timeline", "array write"), legend_colour(&page, "timeline", "array read"));
    assert_eq!(page.matches("I/O timeline").count(), 1, "the figure's title is not repeated over its one panel");
    assert!(page.contains("data-title=\"\""), "single panels carry no title of their own");
    assert!(
        page.contains(
            "write: synchronous bandwidth 1.0 MiB/s is 2.00x global timing (0.5 MiB/s): for 50 % of the phase no iteration was under way"
        ),
        "{page}"
    );
    assert!(page.contains("docs/benchmarks.md"), "the report says where its metrics are defined");
}

#[test]
fn a_study_report_fits_a_1400_px_window_drops_empty_columns_and_flags_wide_spreads() {
    let dir = tempfile::tempdir().unwrap();
    let (one, two) = hand_made_study(dir.path());
    let html = dir.path().join("study.html");
    let out = ok(dir.path(), &["bench", "analyze", &one, &two, "--json", "--html", html.to_str().unwrap()]);
    let report: Value = serde_json::from_str(&out).unwrap();
    let page = std::fs::read_to_string(&html).unwrap();
    let rows = report["rows"].as_array().unwrap();
    // No row has a DAOS object class: the column goes; every row has a phase: it stays.
    assert!(rows.iter().all(|r| r["class"] == "") && !page.contains("<th>class</th>") && page.contains("<th>phase</th>"));
    let too_spread = rows
        .iter()
        .filter(|r| r["reps"].as_u64() > Some(1) && r["bandwidth_spread"].as_f64().unwrap() > 0.05 * r["bandwidth_mean"].as_f64().unwrap())
        .count();
    assert!(too_spread > 0, "repetitions of 1 s and 2 s spread by 47 %");
    assert_eq!(page.matches("<td class=\"flag\">").count(), too_spread, "each spread above 5 % is flagged");
    assert!(page.contains(&format!("{too_spread} of {} rows vary by more than 5 %", rows.len())));
    let Some(dom) = render_in_window(&html, 1400, &dir.path().join("chromium")) else { return };
    assert!(dom.contains(&format!("data-rendered=\"{}\"", panel_count(&report["figures"]))), "the page's check passed at 1,400 px");
    let window: u32 = dom.split("data-window=\"").nth(1).and_then(|w| w.split('"').next()).unwrap().parse().unwrap();
    assert!((1350..=1400).contains(&window), "rendered 1,400 px wide, less a scroll bar: {window}");
    let narrow = render_in_window(&html, 1000, &dir.path().join("chromium")).unwrap();
    assert!(narrow.contains("data-rendered="), "panels wrap and shrink in a narrower window too");
}

#[test]
fn the_report_of_a_runs_logs_renders_in_a_browser() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("r.jsonl").display().to_string();
    for extra in [&[][..], &["--read"][..]] {
        let mut args = vec![
            "bench",
            "hammer",
            "--procs",
            "2",
            "--nsteps",
            "3",
            "--nlevels",
            "2",
            "--nparams",
            "3",
            "--field-size",
            "2048",
            "--log",
            &log,
        ];
        args.extend_from_slice(extra);
        ok(dir.path(), &args);
    }
    let html = dir.path().join("report.html");
    ok(dir.path(), &["bench", "analyze", &format!("{log}.0"), &format!("{log}.1"), "--html", html.to_str().unwrap()]);
    // Bandwidth per phase, time per operation, and the timeline: a panel each.
    if renders(&html, 3, &dir.path().join("chromium")) {
        let page = std::fs::read_to_string(&html).unwrap();
        assert!(page.contains("id=\"timeline\"") && page.contains("<strong>I/O timeline</strong>"));
    }
}

#[test]
fn sweeps_run_each_pattern_and_index_and_their_summaries_render() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("sweep").display().to_string();
    let args = [
        "bench",
        "sweep",
        "--benchmark",
        "field-io",
        "--procs",
        "2",
        "--sizes",
        "4096",
        "--modes",
        "full,no-index",
        "--patterns",
        "A,B",
        "--index",
        "per-process,shared",
        "--count",
        "4",
        "--reps",
        "2",
        "--out",
        &out,
    ];
    let table = ok(dir.path(), &args);
    // 2 modes x 2 indexes x (A: write, read; B: write, read, write+read).
    assert_eq!(table.lines().filter(|l| l.starts_with("| field-io on posix")).count(), 20, "{table}");
    let rows: Value = serde_json::from_str(&std::fs::read_to_string(format!("{out}/summary.json")).unwrap()).unwrap();
    assert!(rows.as_array().unwrap().iter().all(|r| r["reps"] == 2 && r["bandwidth_mean"].as_f64().unwrap() > 0.0));
    let figures = serde_json::from_str::<Value>(&ok(dir.path(), &["bench", "analyze", &out, "--json"])).unwrap()["figures"].clone();
    renders(&Path::new(&out).join("summary.html"), panel_count(&figures), &dir.path().join("chromium"));

    let hammer = dir.path().join("hammer").display().to_string();
    let args = [
        "bench",
        "sweep",
        "--benchmark",
        "hammer",
        "--procs",
        "2",
        "--sizes",
        "2048,4096",
        "--patterns",
        "B",
        "--count",
        "20,10",
        "--reps",
        "1",
        "--out",
        &hammer,
    ];
    let table = ok(dir.path(), &args);
    let phases: Vec<&str> = table.lines().skip(2).map(|l| l.split(" | ").nth(10).unwrap()).collect();
    assert_eq!(phases, ["write", "read", "write+read", "write", "read", "write+read"], "{table}");
    // A count per size: 20 fields (2 steps) at 2 KiB, 10 (1 step) at 4 KiB, per process.
    let runs = Path::new(&hammer).join("runs");
    let count = |name: &str| {
        serde_json::from_str::<Value>(&std::fs::read_to_string(runs.join(name).join("run.json")).unwrap()).unwrap()["count"].clone()
    };
    assert_eq!((count("p2-s2048-B-r0"), count("p2-s4096-B-r0")), (json!(20), json!(10)));
}

#[test]
fn what_is_not_a_sweep_is_refused_by_name() {
    let dir = tempfile::tempdir().unwrap();
    let (one, _) = hand_made_study(dir.path());
    let log = Path::new(&one).join("runs/p1-A-r0/events.jsonl.0").display().to_string();
    assert!(fails(dir.path(), &["bench", "analyze", &one, &log]).contains("events.jsonl.0: not a sweep directory"));
    let empty = dir.path().join("empty");
    std::fs::create_dir_all(&empty).unwrap();
    let e = fails(dir.path(), &["bench", "analyze", empty.to_str().unwrap()]);
    assert!(e.contains("empty/sweep.json") && e.contains("written by bench sweep"), "{e}");
    let copy = dir.path().join("copy");
    assert!(Command::new("cp").arg("-r").arg(&one).arg(&copy).status().unwrap().success());
    let e = fails(dir.path(), &["bench", "analyze", &one, copy.to_str().unwrap()]);
    assert!(e.contains("both labelled \"one node\"") && e.contains("--label"), "{e}");
    let out = dir.path().join("s").display().to_string();
    let e = fails(dir.path(), &["bench", "sweep", "--benchmark", "ior", "--patterns", "B", "--out", &out]);
    assert!(e.contains("ior has no write+read contention pattern"), "{e}");
    let e = fails(dir.path(), &["bench", "sweep", "--benchmark", "field-io", "--procs", "3", "--patterns", "B", "--out", &out]);
    assert!(e.contains("--procs 3 with --patterns B"), "{e}");
    let e = fails(dir.path(), &["bench", "sweep", "--benchmark", "hammer", "--index", "shared", "--out", &out]);
    assert!(e.contains("--index shared is field-io's"), "{e}");
    let e = fails(dir.path(), &["bench", "sweep", "--benchmark", "ior", "--sizes", "1024,4096", "--count", "8,4,2", "--out", &out]);
    assert!(e.contains("one per size (2 sizes)"), "{e}");
    for (args, error) in [
        (&["--procs", "2,2"][..], "--procs: 2 is given twice"),
        (&["--label", "a,b"][..], "--label \"a,b\""),
        (&["--servers", "0"][..], "--servers 0"),
        (&["--pool", "daos:p/a-b", "--classes", "OC_S1"][..], "--pool daos:POOL/a-b"),
        (&["--pool", "daos:p", "--classes", "../x"][..], "\"../x\" is not a DAOS object class"),
    ] {
        let mut all = vec!["bench", "sweep", "--benchmark", "ior", "--out", &out];
        all.extend_from_slice(args);
        let e = fails(dir.path(), &all);
        assert!(e.contains(error), "{args:?}: {e}");
    }
    let not_a_sweep = dir.path().join("not-a-sweep");
    std::fs::create_dir_all(not_a_sweep.join("runs/keep")).unwrap();
    let e = fails(dir.path(), &["bench", "sweep", "--benchmark", "ior", "--out", not_a_sweep.to_str().unwrap()]);
    assert!(e.contains("not a sweep directory (no sweep.json)") && not_a_sweep.join("runs/keep").exists(), "{e}");
    let e = fails(dir.path(), &["bench", "analyze", &one, &format!("{one}/")]);
    assert!(e.contains("given twice"), "{e}");
    let e = fails(dir.path(), &["bench", "sweep", "--benchmark", "ior", "--classes", "OC_S1", "--out", &out]);
    assert!(e.contains("--classes needs a daos: --pool"), "{e}");
    let e = fails(dir.path(), &["bench", "sweep", "--benchmark", "field-io", "--api", "hdf5", "--out", &out]);
    assert!(e.contains("--api hdf5 is ior's"), "{e}");
}

#[test]
fn an_hdf5_sweep_is_named_apart_from_ior_on_the_pool_and_removes_its_files() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("refused").display().to_string();
    let e = fails(dir.path(), &["bench", "sweep", "--benchmark", "ior", "--api", "hdf5", "--pool", "s3:bucket", "--out", &out]);
    assert!(e.contains("--pool must be a directory"), "{e}");
    let e = fails(dir.path(), &["bench", "sweep", "--benchmark", "ior", "--api", "hdf5", "--sizes", "1001", "--out", &out]);
    assert!(e.contains("-t 1001: with --api hdf5"), "{e}");
    let pool = dir.path().join("pool");
    for api in ["pool", "hdf5"] {
        let out = dir.path().join(format!("sweep-{api}")).display().to_string();
        let args =
            ["bench", "sweep", "--benchmark", "ior", "--api", api, "--procs", "1,2", "--sizes", "8192", "--count", "4", "--reps", "1"];
        let mut args = args.to_vec();
        args.extend_from_slice(&["--pool", pool.to_str().unwrap(), "--out", &out]);
        let table = ok(dir.path(), &args);
        let name = if api == "hdf5" { "ior-hdf5 on posix" } else { "ior on posix" };
        // 2 process counts x (write, read).
        assert_eq!(table.lines().filter(|l| l.starts_with(&format!("| {name} |"))).count(), 4, "{table}");
        let manifest: Value = serde_json::from_str(&std::fs::read_to_string(format!("{out}/sweep.json")).unwrap()).unwrap();
        assert_eq!(manifest["benchmark"], if api == "hdf5" { "ior-hdf5" } else { "ior" });
        let events = std::fs::read_to_string(format!("{out}/runs/p2-s8192-A-r0/events.jsonl.1")).unwrap();
        let ops: std::collections::BTreeSet<String> =
            events.lines().map(|l| serde_json::from_str::<Value>(l).unwrap()["op"].as_str().unwrap().into()).collect();
        let expected: &[&str] = if api == "hdf5" { &["close", "open", "transfer"] } else { &["open", "transfer"] };
        assert_eq!(ops.iter().map(String::as_str).collect::<Vec<_>>(), expected);
    }
    let left: Vec<_> =
        std::fs::read_dir(&pool).unwrap().flatten().flat_map(|run| std::fs::read_dir(run.path()).unwrap().flatten()).collect();
    assert!(left.is_empty(), "each run's data removed: {left:?}");
}
