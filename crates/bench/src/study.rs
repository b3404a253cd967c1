//! A study: the runs of one or more sweep directories, analysed together so that backends,
//! cluster sizes or commits can be compared in one report.
//!
//! A sweep directory (written by `bench sweep`) holds `sweep.json` (what was swept, on what,
//! by which version) and `runs/NAME/` per configuration and repetition, each with `run.json`
//! (the configuration) and the event logs of its processes (`events.jsonl*`). Loading reads
//! every run's logs, computes its phases' metrics ([`crate::analyze`]), and aggregates the
//! repetitions of each configuration into [`Row`]s: mean and standard deviation of each
//! bandwidth, mean time per operation, mean offsets.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use fieldstore::error::IoContext;
use fieldstore::{Error, ErrorKind, Result};
use serde::{Deserialize, Serialize};

use crate::analyze::{self, mean_and_spread, IoEvent, PhaseMetrics};

/// The format of `sweep.json` this version writes and reads.
pub const FORMAT: u32 = 1;
/// The phase of a write+read contention run that sums its write and read bandwidths.
pub const SUM_PHASE: &str = "write+read";

/// What a sweep ran, on what (`sweep.json`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Manifest {
    /// [`FORMAT`].
    pub format: u32,
    /// The sweep's name in comparisons (`--label`).
    pub label: String,
    /// `ior`, `ior-hdf5` (ior through HDF5), `field-io` or `hammer`.
    pub benchmark: String,
    /// `posix`, `rados`, `s3`, `daos` (`daos` here is the emulation unless run on DAOS).
    pub backend: String,
    /// Server nodes of the storage cluster (`--servers`), for scalability figures.
    pub servers: u32,
    /// Objects or fields per process: one for every size, or one per size.
    pub counts: Vec<usize>,
    /// Repetitions per configuration.
    pub reps: usize,
    /// fieldstore's version and, when run from a git checkout, its commit.
    pub version: String,
    /// When the sweep started, microseconds since the epoch.
    pub started_us: u64,
}

/// One configuration of a sweep and its repetition (`run.json`).
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct RunConfig {
    /// Processes at once.
    pub procs: u32,
    /// Object or field size, bytes.
    pub size: usize,
    /// Objects or fields per process.
    pub count: usize,
    /// field-io's mode; empty for the other benchmarks.
    pub mode: String,
    /// `A` (write, then read) or `B` (write and read at once).
    pub pattern: String,
    /// field-io's forecast index: `per-process` or `shared`; empty for the others.
    pub index: String,
    /// DAOS object class; empty where the pool has none.
    pub class: String,
    /// Which repetition (from 0).
    pub rep: usize,
}

impl RunConfig {
    /// The run's directory name: its configuration, readable, unique in its sweep.
    pub fn name(&self) -> String {
        let mut name = format!("p{}-s{}", self.procs, self.size);
        for part in [&self.mode, &self.pattern, &self.index, &self.class] {
            if !part.is_empty() {
                name.push('-');
                name.push_str(part);
            }
        }
        format!("{name}-r{}", self.rep)
    }
}

/// One analysed run.
#[derive(Clone, Debug)]
pub struct Run {
    /// Its configuration.
    pub config: RunConfig,
    /// Its directory.
    pub dir: PathBuf,
    /// Each phase's metrics.
    pub phases: Vec<PhaseMetrics>,
    /// po_0 and po_f when it wrote and read at once.
    pub overlap: Option<analyze::Overlap>,
}

/// A loaded sweep directory.
#[derive(Clone, Debug)]
pub struct Sweep {
    /// Its directory.
    pub dir: PathBuf,
    /// Its `sweep.json`.
    pub manifest: Manifest,
    /// Its runs, in configuration order.
    pub runs: Vec<Run>,
}

/// A configuration and phase of a sweep, over its repetitions.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Row {
    /// The sweep's label.
    pub sweep: String,
    /// The benchmark.
    pub benchmark: String,
    /// The backend.
    pub backend: String,
    /// Server nodes.
    pub servers: u32,
    /// Processes.
    pub procs: u32,
    /// Object or field size, bytes.
    pub size: usize,
    /// field-io's mode, or empty.
    pub mode: String,
    /// `A` or `B`.
    pub pattern: String,
    /// field-io's index sharing, or empty.
    pub index: String,
    /// The object class, or empty.
    pub class: String,
    /// `write`, `read`, `write+read` (pattern B's sum), `list`, ...
    pub phase: String,
    /// Repetitions measured.
    pub reps: usize,
    /// Global timing bandwidth, bytes per second: mean over repetitions.
    pub bandwidth_mean: f64,
    /// Its sample standard deviation.
    pub bandwidth_spread: f64,
    /// Synchronous bandwidth, bytes per second: mean over repetitions.
    pub synchronous_mean: f64,
    /// Its sample standard deviation.
    pub synchronous_spread: f64,
    /// Mean time outside every iteration's span, % of the phase's wall-clock time.
    pub idle: f64,
    /// Mean seconds per process in each operation.
    pub breakdown: BTreeMap<String, f64>,
    /// Standard deviation over repetitions of the seconds per process in all operations.
    pub breakdown_spread: f64,
    /// Mean off_0, % of the phase's wall-clock time.
    pub off_0: f64,
    /// Mean off_f, %.
    pub off_f: f64,
    /// Mean po_0 (pattern B), %.
    pub po_0: Option<f64>,
    /// Mean po_f (pattern B), %.
    pub po_f: Option<f64>,
}

/// Reads a JSON file, naming it in any error.
fn read_json<T: for<'de> Deserialize<'de>>(path: &Path) -> Result<T> {
    let text = std::fs::read_to_string(path).ctx("reading", path)?;
    serde_json::from_str(&text)
        .map_err(|e| Error::caused_by(ErrorKind::Corrupt, format!("{}: not what bench sweep writes", path.display()), e))
}

/// The event logs of a run directory (`events.jsonl` and its `.RANK` siblings), sorted.
pub fn run_logs(dir: &Path) -> Result<Vec<PathBuf>> {
    let mut logs = Vec::new();
    for entry in std::fs::read_dir(dir).ctx("reading", dir)? {
        let path = entry.ctx("reading", dir)?.path();
        if path.file_name().is_some_and(|n| n.to_string_lossy().starts_with("events.jsonl")) {
            logs.push(path);
        }
    }
    logs.sort();
    Ok(logs)
}

impl Run {
    /// Analyses the run in `dir`.
    pub fn load(dir: &Path) -> Result<Run> {
        let config: RunConfig = read_json(&dir.join("run.json"))?;
        let events = Run::events_in(dir)?;
        Ok(Run { config, dir: dir.to_path_buf(), phases: analyze::phases(&events), overlap: analyze::overlap(&events, "write", "read") })
    }

    /// The events of every process of the run in `dir`.
    pub fn events_in(dir: &Path) -> Result<Vec<IoEvent>> {
        let events = analyze::read_logs(&run_logs(dir)?)?;
        if events.is_empty() {
            return Err(Error::new(ErrorKind::NotFound, format!("{}: the run logged no events", dir.display())));
        }
        Ok(events)
    }

    /// The run's events (read again: a study keeps only metrics in memory).
    pub fn events(&self) -> Result<Vec<IoEvent>> {
        Run::events_in(&self.dir)
    }
}

impl Sweep {
    /// Loads and analyses the sweep directory `dir`.
    pub fn load(dir: &Path) -> Result<Sweep> {
        let manifest: Manifest = read_json(&dir.join("sweep.json")).map_err(|e| {
            Error::caused_by(e.kind(), format!("{}: a sweep directory holds sweep.json, written by bench sweep", dir.display()), e)
        })?;
        if manifest.format != FORMAT {
            let message = format!("{}: format {} (this version reads {FORMAT})", dir.join("sweep.json").display(), manifest.format);
            return Err(Error::new(ErrorKind::Unsupported, message));
        }
        let runs_dir = dir.join("runs");
        let mut runs = Vec::new();
        for entry in std::fs::read_dir(&runs_dir).ctx("reading", &runs_dir)? {
            let path = entry.ctx("reading", &runs_dir)?.path();
            if path.join("run.json").is_file() {
                runs.push(Run::load(&path)?);
            }
        }
        if runs.is_empty() {
            return Err(Error::new(ErrorKind::NotFound, format!("{}: no runs", runs_dir.display())));
        }
        runs.sort_by(|a, b| a.config.cmp(&b.config));
        Ok(Sweep { dir: dir.to_path_buf(), manifest, runs })
    }

    /// Its configurations' rows, a row per phase, in configuration order.
    pub fn rows(&self) -> Vec<Row> {
        let mut configurations: BTreeMap<RunConfig, Vec<&Run>> = BTreeMap::new();
        for run in &self.runs {
            configurations.entry(RunConfig { rep: 0, ..run.config.clone() }).or_default().push(run);
        }
        configurations.iter().flat_map(|(config, runs)| self.configuration_rows(config, runs)).collect()
    }

    fn configuration_rows(&self, config: &RunConfig, runs: &[&Run]) -> Vec<Row> {
        let mut phases: Vec<String> = runs.iter().flat_map(|r| r.phases.iter().map(|p| p.phase.clone())).collect();
        phases.sort_by_key(|p| phase_order(p));
        phases.dedup();
        let mut rows: Vec<Row> = phases.iter().map(|phase| self.phase_row(config, runs, phase)).collect();
        if config.pattern == "B" {
            rows.extend(self.sum_row(config, runs));
        }
        rows
    }

    fn row(&self, config: &RunConfig, phase: &str) -> Row {
        Row {
            sweep: self.manifest.label.clone(),
            benchmark: self.manifest.benchmark.clone(),
            backend: self.manifest.backend.clone(),
            servers: self.manifest.servers,
            procs: config.procs,
            size: config.size,
            mode: config.mode.clone(),
            pattern: config.pattern.clone(),
            index: config.index.clone(),
            class: config.class.clone(),
            phase: phase.into(),
            reps: 0,
            bandwidth_mean: f64::NAN,
            bandwidth_spread: f64::NAN,
            synchronous_mean: f64::NAN,
            synchronous_spread: f64::NAN,
            idle: f64::NAN,
            breakdown: BTreeMap::new(),
            breakdown_spread: f64::NAN,
            off_0: f64::NAN,
            off_f: f64::NAN,
            po_0: None,
            po_f: None,
        }
    }

    fn phase_row(&self, config: &RunConfig, runs: &[&Run], phase: &str) -> Row {
        let metrics: Vec<&PhaseMetrics> = runs.iter().filter_map(|r| r.phases.iter().find(|p| p.phase == phase)).collect();
        let of = |f: fn(&PhaseMetrics) -> f64| metrics.iter().map(|m| f(m)).collect::<Vec<f64>>();
        let (bandwidth_mean, bandwidth_spread) = mean_and_spread(&of(|m| m.global_timing_bandwidth));
        let (synchronous_mean, synchronous_spread) = mean_and_spread(&of(|m| m.synchronous_bandwidth));
        let mut breakdown: BTreeMap<String, f64> = BTreeMap::new();
        for m in &metrics {
            for (op, seconds) in &m.breakdown {
                *breakdown.entry(op.clone()).or_default() += seconds / metrics.len() as f64;
            }
        }
        let overlaps: Vec<&analyze::Overlap> = runs.iter().filter_map(|r| r.overlap.as_ref()).collect();
        let overlap_mean = |f: fn(&analyze::Overlap) -> f64| {
            (config.pattern == "B" && !overlaps.is_empty()).then(|| mean_and_spread(&overlaps.iter().map(|o| f(o)).collect::<Vec<_>>()).0)
        };
        Row {
            reps: metrics.len(),
            bandwidth_mean,
            bandwidth_spread,
            synchronous_mean,
            synchronous_spread,
            idle: mean_and_spread(&of(|m| m.idle)).0,
            breakdown,
            breakdown_spread: mean_and_spread(&of(|m| m.breakdown.values().sum())).1,
            off_0: mean_and_spread(&of(|m| m.off_0)).0,
            off_f: mean_and_spread(&of(|m| m.off_f)).0,
            po_0: overlap_mean(|o| o.po_0),
            po_f: overlap_mean(|o| o.po_f),
            ..self.row(config, phase)
        }
    }

    /// Pattern B's write+read row: the sum of each repetition's write and read bandwidths.
    fn sum_row(&self, config: &RunConfig, runs: &[&Run]) -> Option<Row> {
        let bandwidth = |run: &Run, phase: &str| run.phases.iter().find(|p| p.phase == phase).map(|p| p.global_timing_bandwidth);
        let sums: Vec<f64> = runs.iter().filter_map(|r| Some(bandwidth(r, "write")? + bandwidth(r, "read")?)).collect();
        if sums.is_empty() {
            return None;
        }
        let (bandwidth_mean, bandwidth_spread) = mean_and_spread(&sums);
        Some(Row { reps: sums.len(), bandwidth_mean, bandwidth_spread, ..self.row(config, SUM_PHASE) })
    }
}

/// Phases in reading order: write, read, their sum, then the rest by name.
pub fn phase_order(phase: &str) -> (usize, String) {
    let rank = ["write", "read", SUM_PHASE].iter().position(|p| *p == phase).unwrap_or(3);
    (rank, phase.to_string())
}

/// Several sweeps, analysed together.
#[derive(Clone, Debug)]
pub struct Study {
    /// The sweeps, in the order given.
    pub sweeps: Vec<Sweep>,
    /// The configurations and phases kept.
    pub selection: Selection,
}

/// What a report keeps: `KEY=VALUE[/VALUE...]` pairs, comma-separated, as in a MARS request
/// (`pattern=A,index=per-process,procs=2/4`); a configuration and phase is kept when every
/// pair holds. `-` stands for no value (`mode=full/-`: field-io's full mode, and the
/// benchmarks without modes). Empty: everything.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Selection(Vec<(String, Vec<String>)>);

/// What tells rows apart, in table order: the keys a selection names, the first columns of
/// every table, the values of [`Row::value`].
pub const DIMENSIONS: [&str; 11] =
    ["sweep", "benchmark", "backend", "servers", "procs", "size", "mode", "pattern", "index", "class", "phase"];

/// The column of the global timing bandwidth's spread over repetitions.
pub const SPREAD_COLUMN: &str = "± sd (% of mean)";

/// The measured columns of every table, after the [`DIMENSIONS`].
const MEASURES: [&str; 8] = ["reps", "global timing MiB/s", SPREAD_COLUMN, "synchronous MiB/s", "off_0 %", "off_f %", "po_0 %", "po_f %"];

impl Selection {
    /// Parses `--select`; an error names the pair that is not `KEY=VALUE[/VALUE...]` or the
    /// key that is not one of the [`DIMENSIONS`].
    pub fn parse(text: &str) -> Result<Selection> {
        let refused = |message: String| Err(Error::new(ErrorKind::BadRequest, message));
        let mut pairs = Vec::new();
        for pair in text.split(',').filter(|p| !p.trim().is_empty()) {
            let Some((key, values)) = pair.split_once('=') else {
                return refused(format!("--select: {pair:?} is not KEY=VALUE[/VALUE...]"));
            };
            let key = key.trim();
            if !DIMENSIONS.contains(&key) {
                return refused(format!("--select: unknown key {key:?} (one of {})", DIMENSIONS.join(", ")));
            }
            let values: Vec<&str> = values.split('/').map(str::trim).collect();
            if values.iter().any(|v| v.is_empty()) {
                return refused(format!("--select: {pair:?} has an empty value (- stands for none)"));
            }
            let values = values.into_iter().map(|v| if v == "-" { String::new() } else { v.to_string() }).collect();
            pairs.push((key.to_string(), values));
        }
        Ok(Selection(pairs))
    }

    /// Whether `row` is kept; `phase` false ignores the phase (for a whole run).
    pub fn keeps(&self, row: &Row, phase: bool) -> bool {
        self.0.iter().filter(|(key, _)| phase || key != "phase").all(|(key, values)| values.contains(&row.value(key)))
    }
}

impl Row {
    /// The value of one of the [`DIMENSIONS`], as written in a selection and a table (empty
    /// for any other key).
    pub fn value(&self, key: &str) -> String {
        match key {
            "sweep" => self.sweep.clone(),
            "benchmark" => self.benchmark.clone(),
            "backend" => self.backend.clone(),
            "servers" => self.servers.to_string(),
            "procs" => self.procs.to_string(),
            "size" => self.size.to_string(),
            "mode" => self.mode.clone(),
            "pattern" => self.pattern.clone(),
            "index" => self.index.clone(),
            "class" => self.class.clone(),
            "phase" => self.phase.clone(),
            _ => String::new(),
        }
    }
}

impl Study {
    /// Loads every sweep directory; their labels must differ (they name the sweeps in figures).
    pub fn load(dirs: &[PathBuf]) -> Result<Study> {
        let mut unique: Vec<PathBuf> = Vec::new();
        for dir in dirs {
            let canonical = dir.canonicalize().ctx("reading", dir)?;
            if unique.contains(&canonical) {
                return Err(Error::new(ErrorKind::BadRequest, format!("{}: given twice", dir.display())));
            }
            unique.push(canonical);
        }
        let sweeps = dirs.iter().map(|d| Sweep::load(d)).collect::<Result<Vec<_>, _>>()?;
        for (i, s) in sweeps.iter().enumerate() {
            if let Some(other) = sweeps[..i].iter().find(|o| o.manifest.label == s.manifest.label) {
                let message = format!(
                    "{} and {} are both labelled {:?}: give each sweep its own --label",
                    other.dir.display(),
                    s.dir.display(),
                    s.manifest.label
                );
                return Err(Error::new(ErrorKind::BadRequest, message));
            }
        }
        Ok(Study { sweeps, selection: Selection::default() })
    }

    /// The study with only the runs `selection` keeps (and, in its rows, only the phases it
    /// keeps); sweeps left without runs are dropped. An error when nothing is left.
    pub fn select(mut self, selection: Selection) -> Result<Study> {
        for sweep in &mut self.sweeps {
            let runs = std::mem::take(&mut sweep.runs);
            sweep.runs = runs.into_iter().filter(|r| selection.keeps(&sweep.row(&r.config, ""), false)).collect();
        }
        self.sweeps.retain(|s| !s.runs.is_empty());
        self.selection = selection;
        if self.sweeps.is_empty() || self.rows().is_empty() {
            return Err(Error::new(ErrorKind::NotFound, "--select: no configuration of these sweeps matches"));
        }
        Ok(self)
    }

    /// Every sweep's rows the selection keeps.
    pub fn rows(&self) -> Vec<Row> {
        self.sweeps.iter().flat_map(Sweep::rows).filter(|r| self.selection.keeps(r, true)).collect()
    }
}

impl Row {
    /// Column names of [`Row::cells`]: the dimensions, then what was measured.
    pub fn columns() -> Vec<&'static str> {
        DIMENSIONS.iter().chain(MEASURES.iter()).copied().collect()
    }

    /// The global timing bandwidth's standard deviation over repetitions, % of its mean;
    /// `None` where there was one repetition or nothing was measured.
    pub fn spread_percent(&self) -> Option<f64> {
        let percent = 100.0 * self.bandwidth_spread / self.bandwidth_mean;
        (self.reps > 1 && percent.is_finite()).then_some(percent)
    }

    /// The row's configuration and phase in words, its dimensions' values that it has.
    pub fn name(&self) -> String {
        let size = fieldstore_figures::Format::Bytes.label(self.size as f64);
        let procs = format!("{} processes", self.procs);
        let parts = [&self.sweep, &procs, &size, &self.mode, &self.pattern, &self.index, &self.class, &self.phase];
        parts.iter().filter(|p| !p.is_empty()).map(|p| p.as_str()).collect::<Vec<_>>().join(", ")
    }

    /// The row as table cells (bandwidths in MiB/s, `-` where a value does not apply),
    /// formatted once for every report.
    pub fn cells(&self) -> Vec<String> {
        let mib = |b: f64| if b.is_finite() { format!("{:.1}", b / analyze::MIB) } else { "-".into() };
        let spread = match self.spread_percent() {
            Some(p) => format!("{} ({p:.1} %)", mib(self.bandwidth_spread)),
            None => mib(self.bandwidth_spread),
        };
        let percent = |p: Option<f64>| p.filter(|p| p.is_finite()).map_or("-".into(), |p| format!("{p:.2}"));
        let mut cells: Vec<String> = DIMENSIONS.iter().map(|d| self.value(d)).collect();
        cells.extend([
            self.reps.to_string(),
            mib(self.bandwidth_mean),
            spread,
            mib(self.synchronous_mean),
            percent(Some(self.off_0)),
            percent(Some(self.off_f)),
            percent(self.po_0),
            percent(self.po_f),
        ]);
        cells
    }
}

/// The rows as a Markdown table.
pub fn markdown(rows: &[Row]) -> String {
    let columns = Row::columns();
    let mut md = format!("| {} |\n|{}\n", columns.join(" | "), "---|".repeat(columns.len()));
    for r in rows {
        md.push_str(&format!("| {} |\n", r.cells().join(" | ")));
    }
    md
}
