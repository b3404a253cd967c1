//! `bench sweep`: a benchmark over a grid of process counts, sizes and modes, with
//! repetitions; each configuration's write and read runs are this program's own benchmark
//! commands (`--procs P --log`), and their event logs are analysed into one row per phase.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::analyze::{self, mean_and_spread, IoEvent};
use crate::fieldio::Mode;
use crate::launch::LAUNCHED;
use crate::report::{sweep_html, SweepRow};

/// The benchmarks a sweep can run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Benchmark {
    /// IOR's easy case: one array per process, written and read back.
    Ior,
    /// Field I/O on the object API.
    FieldIo,
    /// The fdb-hammer workload on fieldstore.
    Hammer,
}

impl Benchmark {
    /// Its command name (`fieldstore bench NAME`).
    pub fn name(self) -> &'static str {
        match self {
            Benchmark::Ior => "ior",
            Benchmark::FieldIo => "field-io",
            Benchmark::Hammer => "hammer",
        }
    }
}

/// A sweep's grid.
pub struct Sweep {
    /// The benchmark run at each point of the grid.
    pub benchmark: Benchmark,
    /// Process counts.
    pub procs: Vec<u32>,
    /// Object or field sizes in bytes.
    pub sizes: Vec<usize>,
    /// field-io's modes (the other benchmarks have none).
    pub modes: Vec<Mode>,
    /// Objects or fields per process.
    pub count: usize,
    /// Repetitions of each configuration.
    pub reps: usize,
    /// Where the logs, the summaries and the data go.
    pub out: PathBuf,
}

impl Sweep {
    /// Runs the grid with `program` (this one) and writes `summary.md`, `summary.json` and
    /// `summary.html` under `out`; returns the rows and the Markdown table.
    pub fn run(&self, program: &Path) -> Result<(Vec<SweepRow>, String), String> {
        let io = |what: &str, e: std::io::Error| format!("{what}: {e}");
        std::fs::create_dir_all(&self.out).map_err(|e| io(&self.out.display().to_string(), e))?;
        let modes: Vec<Option<Mode>> =
            if self.benchmark == Benchmark::FieldIo { self.modes.iter().copied().map(Some).collect() } else { vec![None] };
        let mut rows = Vec::new();
        for &procs in &self.procs {
            for &size in &self.sizes {
                for &mode in &modes {
                    rows.extend(self.configuration(program, procs, size, mode)?);
                }
            }
        }
        let md = markdown(self.benchmark, &rows);
        let write = |name: &str, text: &str| std::fs::write(self.out.join(name), text).map_err(|e| io(name, e));
        write("summary.md", &md)?;
        write("summary.json", &serde_json::to_string_pretty(&rows).map_err(|e| e.to_string())?)?;
        write("summary.html", &sweep_html(&format!("fieldstore bench sweep: {}", self.benchmark.name()), &rows))?;
        Ok((rows, md))
    }

    /// The repetitions of one configuration: a row per phase.
    fn configuration(&self, program: &Path, procs: u32, size: usize, mode: Option<Mode>) -> Result<Vec<SweepRow>, String> {
        let mode_name = mode.map_or("", Mode::name);
        // phase -> (global timing, synchronous) per repetition
        let mut per_phase: BTreeMap<String, Vec<(f64, f64)>> = BTreeMap::new();
        for rep in 0..self.reps.max(1) {
            let run_dir = self.out.join(format!("p{procs}-s{size}{}{mode_name}-r{rep}", if mode.is_some() { "-" } else { "" }));
            let _ = std::fs::remove_dir_all(&run_dir);
            std::fs::create_dir_all(&run_dir).map_err(|e| format!("{}: {e}", run_dir.display()))?;
            let log = run_dir.join("events.jsonl");
            for read in [false, true] {
                let mut command = self.command(program, &run_dir, procs, size, mode, &log);
                if read {
                    command.arg("--read");
                }
                let out = command.output().map_err(|e| format!("{}: {e}", program.display()))?;
                if !out.status.success() {
                    return Err(format!(
                        "{} failed for {procs} processes, {size} bytes {mode_name}: {}",
                        self.benchmark.name(),
                        String::from_utf8_lossy(&out.stderr)
                    ));
                }
            }
            for p in analyze::phases(&read_run_logs(&run_dir)?) {
                per_phase.entry(p.phase.clone()).or_default().push((p.global_timing_bandwidth, p.synchronous_bandwidth));
            }
            // The data of a repetition is not needed once analysed.
            let _ = std::fs::remove_dir_all(run_dir.join("store"));
            let _ = std::fs::remove_dir_all(run_dir.join("pool"));
        }
        Ok(per_phase
            .into_iter()
            .map(|(phase, values)| {
                let (bandwidth_mean, bandwidth_spread) = mean_and_spread(&values.iter().map(|v| v.0).collect::<Vec<_>>());
                let (synchronous_mean, _) = mean_and_spread(&values.iter().map(|v| v.1).collect::<Vec<_>>());
                SweepRow {
                    procs,
                    size,
                    mode: mode_name.into(),
                    phase,
                    reps: values.len(),
                    bandwidth_mean,
                    bandwidth_spread,
                    synchronous_mean,
                }
            })
            .collect())
    }

    /// One run of the benchmark as a command of `program`.
    fn command(&self, program: &Path, run_dir: &Path, procs: u32, size: usize, mode: Option<Mode>, log: &Path) -> std::process::Command {
        let mut c = std::process::Command::new(program);
        c.env("FIELDSTORE_ROOT", run_dir.join("store")).env_remove(LAUNCHED).args(["bench", self.benchmark.name()]);
        let (count, size) = (self.count.to_string(), size.to_string());
        let pool = run_dir.join("pool").display().to_string();
        match self.benchmark {
            Benchmark::Ior => c.args(["--pool", &pool, "-s", &count, "-t", &size]),
            Benchmark::FieldIo => {
                c.args(["--pool", &pool, "--mode", mode.map_or("full", Mode::name), "--iterations", &count, "--size", &size])
            }
            Benchmark::Hammer => {
                c.args(["--nsteps", &(self.count / 10).max(1).to_string(), "--nlevels", "1", "--nparams", "10", "--field-size", &size])
            }
        };
        c.args(["--procs", &procs.to_string(), "--log", &log.display().to_string(), "--json"]);
        c
    }
}

/// The events of every process of one run (`events.jsonl*` in its directory).
fn read_run_logs(run_dir: &Path) -> Result<Vec<IoEvent>, String> {
    let mut logs = Vec::new();
    for entry in std::fs::read_dir(run_dir).map_err(|e| format!("{}: {e}", run_dir.display()))? {
        let path = entry.map_err(|e| e.to_string())?.path();
        if path.file_name().is_some_and(|n| n.to_string_lossy().starts_with("events.jsonl")) {
            logs.push(path);
        }
    }
    analyze::read_logs(&logs)
}

/// The sweep's rows as a Markdown table.
pub fn markdown(benchmark: Benchmark, rows: &[SweepRow]) -> String {
    let mut md = String::from(
        "| benchmark | procs | size | mode | phase | reps | global timing MiB/s | ± (sd) | synchronous MiB/s |\n|---|---|---|---|---|---|---|---|---|\n",
    );
    for r in rows {
        md.push_str(&format!(
            "| {} | {} | {} | {} | {} | {} | {:.1} | {:.1} | {:.1} |\n",
            benchmark.name(),
            r.procs,
            r.size,
            r.mode,
            r.phase,
            r.reps,
            r.bandwidth_mean / 1048576.0,
            r.bandwidth_spread / 1048576.0,
            r.synchronous_mean / 1048576.0
        ));
    }
    md
}
