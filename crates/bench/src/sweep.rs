//! `bench sweep`: a benchmark over a grid of process counts, sizes, field-io modes, access
//! patterns, index sharing and object classes, with repetitions. Each configuration's runs are
//! this program's own benchmark commands (`--procs P --log`); their logs stay in the sweep
//! directory (layout in [`crate::study`]) for `bench analyze` to compare with other sweeps,
//! and the sweep's own report is written beside them.

use std::path::{Path, PathBuf};

use fieldstore::error::IoContext;
use fieldstore::{Error, ErrorKind, Result};

use crate::fieldio::Mode;
use crate::ior::Api;
use crate::launch::LAUNCHED;
use crate::report;
use crate::roles::Pattern;
use crate::study::{Manifest, Row, RunConfig, FORMAT};

/// The data set a sweep's hammer runs write (and wipe after each run) in `--config`'s store,
/// apart from anything else there.
pub const HAMMER_CLASS: &str = "rd";
/// Its experiment version.
pub const HAMMER_EXPVER: &str = "swp1";
/// Parameters per step of a sweep's hammer runs: a count of N fields is N / 10 steps.
const HAMMER_PARAMS: usize = 10;

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

/// Whose forecast index field-io's processes write to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Index {
    /// One forecast index per process.
    PerProcess,
    /// One forecast index shared by every process (contention on one key-value).
    Shared,
}

impl Index {
    fn name(self) -> &'static str {
        match self {
            Index::PerProcess => "per-process",
            Index::Shared => "shared",
        }
    }
}

/// A sweep's grid and where it runs.
pub struct Sweep {
    /// The benchmark run at each point of the grid.
    pub benchmark: Benchmark,
    /// ior's interface: the pool's own, or HDF5 files.
    pub api: Api,
    /// Process counts.
    pub procs: Vec<u32>,
    /// Object or field sizes in bytes.
    pub sizes: Vec<usize>,
    /// field-io's modes (the other benchmarks have none).
    pub modes: Vec<Mode>,
    /// Access patterns.
    pub patterns: Vec<Pattern>,
    /// field-io's index sharing.
    pub indexes: Vec<Index>,
    /// DAOS object classes (a `daos:` pool only); empty: the pool's default.
    pub classes: Vec<String>,
    /// Objects or fields per process: one for every size, or one per size (in `sizes`' order),
    /// so that small and large sizes both run long enough to measure.
    pub counts: Vec<usize>,
    /// Repetitions of each configuration.
    pub reps: usize,
    /// The object pool of ior and field-io (default: a directory in each run's directory);
    /// each run gets a place of its own in it.
    pub pool: Option<String>,
    /// hammer's config (default: a POSIX store in each run's directory).
    pub config: Option<PathBuf>,
    /// The sweep's name in comparisons (default: benchmark on backend).
    pub label: Option<String>,
    /// Server nodes of the storage cluster, for scalability figures.
    pub servers: u32,
    /// Where the runs, the summaries and the report go.
    pub out: PathBuf,
}

/// The grid's configurations: one per combination, in order.
fn configurations(s: &Sweep) -> Vec<RunConfig> {
    let modes: Vec<String> =
        if s.benchmark == Benchmark::FieldIo { s.modes.iter().map(|m| m.name().into()).collect() } else { vec![String::new()] };
    let indexes: Vec<String> =
        if s.benchmark == Benchmark::FieldIo { s.indexes.iter().map(|i| i.name().into()).collect() } else { vec![String::new()] };
    let classes: Vec<String> = if s.classes.is_empty() { vec![String::new()] } else { s.classes.clone() };
    let mut grid = Vec::new();
    for &procs in &s.procs {
        for (i, &size) in s.sizes.iter().enumerate() {
            let count = if s.counts.len() == s.sizes.len() { s.counts[i] } else { s.counts[0] };
            // hammer writes whole steps: the count it really runs.
            let count = if s.benchmark == Benchmark::Hammer { (count / HAMMER_PARAMS).max(1) * HAMMER_PARAMS } else { count };
            for mode in &modes {
                for pattern in &s.patterns {
                    for index in &indexes {
                        for class in &classes {
                            let pattern = if *pattern == Pattern::B { "B" } else { "A" }.to_string();
                            let (mode, index, class) = (mode.clone(), index.clone(), class.clone());
                            grid.push(RunConfig { procs, size, count, mode, pattern, index, class, rep: 0 });
                        }
                    }
                }
            }
        }
    }
    grid
}

impl Sweep {
    /// Refuses a grid the benchmarks cannot run, naming the part.
    fn check(&self) -> Result<()> {
        self.check_grid()?;
        self.check_places()
    }

    fn check_grid(&self) -> Result<()> {
        let b = self.benchmark.name();
        if self.procs.is_empty() || self.sizes.is_empty() || self.patterns.is_empty() {
            return refused("a sweep needs at least one process count, size and pattern");
        }
        if self.counts.is_empty() || (self.counts.len() != 1 && self.counts.len() != self.sizes.len()) || self.counts.contains(&0) {
            return refused(format!(
                "--count {:?}: one count (at least 1) for every size, or one per size ({} sizes)",
                self.counts,
                self.sizes.len()
            ));
        }
        if let Some(p) = self.procs.iter().find(|&&p| p == 0) {
            return refused(format!("--procs {p}: a run needs at least one process"));
        }
        // A value twice would run one configuration twice into one run directory.
        for (option, values) in [("--procs", strings(&self.procs)), ("--sizes", strings(&self.sizes)), ("--classes", self.classes.clone())]
        {
            if let Some(twice) = values.iter().enumerate().find(|(i, v)| values[..*i].contains(v)).map(|(_, v)| v) {
                return refused(format!("{option}: {twice} is given twice"));
            }
        }
        if let Some(class) =
            self.classes.iter().find(|c| c.is_empty() || !c.chars().all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_'))
        {
            return refused(format!("--classes: {class:?} is not a DAOS object class name (such as OC_S1, OC_RP_2G1)"));
        }
        if self.servers == 0 {
            return refused("--servers 0: the storage measured has at least one server node");
        }
        if self.patterns.contains(&Pattern::B) {
            if self.benchmark == Benchmark::Ior {
                return refused("--patterns B: ior has no write+read contention pattern (use field-io or hammer)");
            }
            if let Some(p) = self.procs.iter().find(|&&p| p < 2 || !p.is_multiple_of(2)) {
                return refused(format!("--procs {p} with --patterns B: half the processes write and half read, so counts must be even"));
            }
        }
        if self.api != Api::Pool && self.benchmark != Benchmark::Ior {
            return refused(format!("--api {} is ior's; {b} runs on the pool's own interface", self.api.name()));
        }
        for &transfer in &self.sizes {
            crate::ior::Ior { segments: 1, transfer, every_byte: false }.check(self.api)?;
        }
        if self.benchmark != Benchmark::FieldIo && self.indexes.contains(&Index::Shared) {
            return refused(format!("--index shared is field-io's (its forecast index); {b} has none"));
        }
        Ok(())
    }

    fn check_places(&self) -> Result<()> {
        let b = self.benchmark.name();
        if let Some(label) = self.label.as_deref().filter(|l| l.is_empty() || l.contains([',', '/', '='])) {
            return refused(format!(
                "--label {label:?}: a label is selected by value (--select sweep=LABEL), so it needs a character and none of , / ="
            ));
        }
        let pool_type = self.pool.as_deref().map(fieldstore::factory::pool_type);
        if !self.classes.is_empty() && pool_type.is_none_or(|(kind, _)| kind != "daos") {
            return refused("--classes needs a daos: --pool (object classes are DAOS's)");
        }
        if let Some(prefix) = pool_type.filter(|(kind, _)| *kind == "daos").and_then(|(_, name)| name.split_once('/')).map(|p| p.1) {
            // A run's label is PREFIX_ and 16 hex digits, at most 48 characters of DAOS's set.
            if prefix.len() > 31 || !prefix.chars().all(|c| c.is_ascii_alphanumeric() || ".:_".contains(c)) {
                return refused(format!("--pool daos:POOL/{prefix}: the prefix must be at most 31 letters, digits, '.', '_' or ':'"));
            }
        }
        if let (Api::Hdf5, Some(pool)) = (self.api, &self.pool) {
            crate::ior::hdf5_directory(pool)?;
        }
        if self.benchmark == Benchmark::Hammer && self.pool.is_some() {
            return refused("--pool is ior's and field-io's; hammer runs on the store of --config");
        }
        if self.benchmark != Benchmark::Hammer && self.config.is_some() {
            return refused(format!("--config is hammer's; {b} runs on --pool"));
        }
        Ok(())
    }

    /// The backend the runs use, for the report.
    fn backend(&self) -> Result<String> {
        if let Some(pool) = &self.pool {
            return Ok(fieldstore::factory::pool_type(pool).0.to_string());
        }
        match &self.config {
            None => Ok("posix".into()),
            Some(path) => {
                let config = fieldstore::Config::from_file(path)?;
                Ok(if config.catalogue.kind == config.store.kind {
                    config.store.kind
                } else {
                    format!("{}+{}", config.catalogue.kind, config.store.kind)
                })
            }
        }
    }

    /// The benchmark's name in the results: its command's, and `ior-hdf5` for ior through HDF5.
    fn benchmark_name(&self) -> String {
        match self.api {
            Api::Hdf5 => format!("{}-hdf5", self.benchmark.name()),
            Api::Pool => self.benchmark.name().into(),
        }
    }

    fn manifest(&self) -> Result<Manifest> {
        let backend = self.backend()?;
        let benchmark = self.benchmark_name();
        Ok(Manifest {
            format: FORMAT,
            label: self.label.clone().unwrap_or_else(|| format!("{benchmark} on {backend}")),
            benchmark,
            backend,
            servers: self.servers,
            counts: self.counts.clone(),
            reps: self.reps.max(1),
            version: version(),
            started_us: crate::clock::micros_since_epoch(),
        })
    }

    /// Runs the grid with `program` (this one), writes `sweep.json`, the runs, `summary.md`,
    /// `summary.json` and `summary.html` under `out`; returns the rows and the Markdown table.
    pub fn run(&self, program: &Path) -> Result<(Vec<Row>, String)> {
        self.check()?;
        let runs = self.out.join("runs");
        // A sweep directory holds one sweep: runs of an earlier one would mix into this one's.
        // Only an earlier sweep's runs are removed, never a directory of something else.
        if runs.exists() {
            if !self.out.join("sweep.json").is_file() {
                let message = format!("{}: not a sweep directory (no sweep.json): choose a new --out", self.out.display());
                return Err(Error::new(ErrorKind::BadRequest, message));
            }
            std::fs::remove_dir_all(&runs).ctx("removing", &runs)?;
        }
        std::fs::create_dir_all(&runs).ctx("creating", &runs)?;
        let write = |name: &str, text: &str| std::fs::write(self.out.join(name), text).ctx("writing", self.out.join(name));
        write("sweep.json", &json(&self.manifest()?)?)?;
        for config in configurations(self) {
            for rep in 0..self.reps.max(1) {
                self.repetition(program, &RunConfig { rep, ..config.clone() })?;
            }
        }
        let (_, rows, page) = report::study_report(std::slice::from_ref(&self.out), report::Selection::default())?;
        let md = crate::study::markdown(&rows);
        write("summary.md", &md)?;
        write("summary.json", &json(&rows)?)?;
        write("summary.html", &report::html(&page)?)?;
        Ok((rows, md))
    }

    /// One repetition of one configuration, in `runs/NAME/`.
    fn repetition(&self, program: &Path, config: &RunConfig) -> Result<()> {
        let name = config.name();
        let dir = self.out.join("runs").join(&name);
        // New, so that no earlier run's events (logs are appended to) mix into this one's.
        std::fs::create_dir(&dir).ctx("creating", &dir)?;
        std::fs::write(dir.join("run.json"), json(config)?).ctx("writing", dir.join("run.json"))?;
        let place = Place { dir: &dir, name: &name, config };
        let steps: Vec<Step> = match config.pattern.as_str() {
            "B" => vec![Step::Prewrite, Step::Contention],
            _ => vec![Step::Write, Step::Read],
        };
        for step in steps {
            let out = self
                .command(program, &place, step)
                .output()
                .map_err(|e| Error::caused_by(ErrorKind::Unavailable, program.display().to_string(), e))?;
            if !out.status.success() {
                let stderr = String::from_utf8_lossy(&out.stderr);
                return Err(Error::new(
                    ErrorKind::Io,
                    format!("{} failed in {} ({step:?}): {stderr}", self.benchmark_name(), dir.display()),
                ));
            }
        }
        self.remove_data(&place).map_err(|e| Error::caused_by(e.kind(), format!("removing the data of {}", dir.display()), e))
    }

    /// Removes what a repetition wrote: its data are not needed once logged, and on a server
    /// (Ceph's memory stores, an S3 bucket) a sweep's runs would pile up.
    fn remove_data(&self, place: &Place) -> Result<()> {
        let _ = std::fs::remove_dir_all(place.dir.join("store"));
        let _ = std::fs::remove_dir_all(place.dir.join("pool"));
        if let Some(config) = &self.config {
            let fs = fieldstore::open(&fieldstore::Config::from_file(config)?)?;
            let dataset = fieldstore::Request::parse(&crate::hammer::dataset(HAMMER_CLASS, HAMMER_EXPVER))?;
            fs.wipe(&dataset, true)?;
        }
        if self.benchmark != Benchmark::Hammer && self.pool.is_some() {
            let spec = self.run_pool(place);
            if self.api == Api::Hdf5 {
                return crate::ior::Ior::remove_hdf5(&crate::ior::hdf5_directory(&spec)?);
            }
            let pool = fieldstore::open_object_pool(&spec, &fieldstore::ObjectPoolOptions::default())?;
            match self.benchmark {
                Benchmark::Ior => crate::ior::Ior::remove(&*pool),
                _ => crate::fieldio::FieldIoBench::remove(&*pool, place.config.procs),
            }?;
        }
        Ok(())
    }

    /// The pool of one run: a place of its own in `--pool`, or a directory in the run's.
    fn run_pool(&self, place: &Place) -> String {
        let name = place.name;
        match self.pool.as_deref() {
            None => place.dir.join("pool").display().to_string(),
            Some(spec) => match fieldstore::factory::pool_type(spec) {
                (kind @ ("rados" | "daos" | "s3"), rest) => {
                    let (pool, prefix) = rest.split_once('/').unwrap_or((rest, ""));
                    // DAOS labels take at most 48 letters, digits, '.', '_' and ':'.
                    let (prefix, separator, name) = match kind {
                        "daos" => {
                            (if prefix.is_empty() { "fieldio" } else { prefix }, "_", crate::fieldio::md5_hex(name)[..16].to_string())
                        }
                        "s3" => (prefix, "/", name.to_string()),
                        _ => (prefix, "-", name.to_string()),
                    };
                    let prefix = if prefix.is_empty() { String::new() } else { format!("{prefix}{separator}") };
                    format!("{kind}:{pool}/{prefix}{name}")
                }
                _ => Path::new(spec).join(name).display().to_string(),
            },
        }
    }

    /// One step of a run as a command of `program`.
    fn command(&self, program: &Path, place: &Place, step: Step) -> std::process::Command {
        let config = place.config;
        let mut c = std::process::Command::new(program);
        c.env("FIELDSTORE_ROOT", place.dir.join("store")).env_remove(LAUNCHED);
        match &self.config {
            Some(path) => c.arg("--config").arg(path),
            None => c.env_remove("FIELDSTORE_CONFIG"),
        };
        c.args(["bench", self.benchmark.name()]);
        let (count, size) = (config.count.to_string(), config.size.to_string());
        match self.benchmark {
            Benchmark::Ior => c.args(["--pool", &self.run_pool(place), "-s", &count, "-t", &size, "--api", self.api.name()]),
            Benchmark::FieldIo => {
                c.args(["--pool", &self.run_pool(place), "--mode", &config.mode, "--iterations", &count, "--size", &size]);
                if config.index == "shared" {
                    c.arg("--shared");
                }
                &mut c
            }
            Benchmark::Hammer => {
                let steps = (config.count / HAMMER_PARAMS).max(1).to_string();
                let dataset = ["--class", HAMMER_CLASS, "--expver", HAMMER_EXPVER];
                c.args(["--nsteps", &steps, "--nlevels", "1", "--nparams", &HAMMER_PARAMS.to_string(), "--field-size", &size]).args(dataset)
            }
        };
        if !config.class.is_empty() {
            c.args(["--daos-class", &config.class]);
        }
        let mut procs = config.procs;
        let mut log = "events.jsonl";
        match step {
            Step::Write => {}
            Step::Read if self.benchmark == Benchmark::Hammer => {
                c.arg("--read");
            }
            Step::Read => {
                // Each process reads another's data (IOR's -C), to defeat caches.
                c.arg("--read");
                if procs > 1 {
                    c.arg("--reorder");
                }
            }
            Step::Prewrite => {
                log = "prewrite.jsonl";
                // hammer's readers read the members its writers' first half wrote.
                if self.benchmark == Benchmark::Hammer {
                    procs /= 2;
                }
            }
            Step::Contention => {
                c.args(["--pattern", "B"]);
            }
        }
        c.args(["--procs", &procs.to_string(), "--log", &place.dir.join(log).display().to_string(), "--json"]);
        c
    }
}

/// Where one run happens.
struct Place<'a> {
    dir: &'a Path,
    name: &'a str,
    config: &'a RunConfig,
}

/// The steps of a run: A writes then reads; B pre-populates, then writes and reads at once.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Step {
    Write,
    Read,
    Prewrite,
    Contention,
}

/// An error for a grid or a place the benchmarks cannot run (named in `message`).
fn refused(message: impl Into<String>) -> Result<()> {
    Err(Error::new(ErrorKind::BadRequest, message))
}

fn strings<T: ToString>(values: &[T]) -> Vec<String> {
    values.iter().map(T::to_string).collect()
}

/// `value` as pretty JSON, for the files a sweep writes.
fn json(value: &impl serde::Serialize) -> Result<String> {
    serde_json::to_string_pretty(value).map_err(|e| Error::caused_by(ErrorKind::Io, "writing JSON", e))
}

/// fieldstore's version, and the commit when run from a git checkout.
fn version() -> String {
    let commit = std::process::Command::new("git")
        .args(["rev-parse", "--short", "HEAD"])
        .stderr(std::process::Stdio::null())
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string());
    match commit {
        Some(c) if !c.is_empty() => format!("{} {c}", env!("CARGO_PKG_VERSION")),
        _ => env!("CARGO_PKG_VERSION").into(),
    }
}
