//! Side-by-side runs: FDB5 (through `../shared/peer/fdb5-peer.sh`, its C API) and fieldstore
//! on the same workload (same keys, same schema, one flush per step) on the same file system,
//! plus `dd` to that file system as the storage's own limit.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

use fieldstore::error::IoContext;
use fieldstore::{Config, Error, ErrorKind, ListOptions, Request, Result};
use serde::Serialize;

use crate::hammer::{Hammer, Payload};
use crate::payload::{synthetic, Check};
use crate::serving::Served;

/// The schema the FDB5 peer script uses; fieldstore is given the same one.
pub const PEER_SCHEMA: &str = "param: Param; step: Step; date: Date; levelist: Double; expver: Expver; time: Time; number: Integer;\n\
[ class, expver, stream, date, time, domain? [ type, levtype [ step, number?, levelist?, param ]]]\n";

/// The explicit-key workload of the peer: steps 0.., levels 10, 20, ..., params 1.., one
/// ensemble member.
#[derive(Clone, Copy, Debug, Serialize)]
pub struct Workload {
    /// Steps, each flushed once.
    pub nsteps: usize,
    /// Levels per step.
    pub nlevels: usize,
    /// Parameters per level.
    pub nparams: usize,
    /// Bytes per field.
    pub field_size: usize,
    /// The ensemble member (`number`) of the fields when one process writes them.
    pub member: usize,
}

impl Workload {
    /// Fields per process: steps x levels x parameters.
    pub fn fields(&self) -> usize {
        self.nsteps * self.nlevels * self.nparams
    }

    fn hammer(&self) -> Hammer {
        Hammer {
            class: "od".into(),
            expver: "0001".into(),
            nsteps: self.nsteps,
            step: 0,
            nlevels: self.nlevels,
            level: 0,
            levels: Some((1..=self.nlevels).map(|l| (l * 10).to_string()).collect()),
            nparams: self.nparams,
            params: None,
            nensembles: 1,
            number: self.member,
            payload: Payload::Synthetic(synthetic(self.field_size)),
            check: Check::None,
            itt: None,
        }
    }
}

/// What a worker process of a comparison does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// Archive the workload, then list and retrieve it with the same handle.
    Write,
    /// Only list and retrieve what a previous process archived: a reader that starts cold, as
    /// post-processing does (the peer's `read` mode).
    Read,
}

/// Seconds per phase of one run.
#[derive(Clone, Copy, Debug, Default, Serialize)]
pub struct Timings {
    /// Archiving and flushing every field.
    pub archive: f64,
    /// Listing them.
    pub list: f64,
    /// Retrieving them.
    pub retrieve: f64,
}

/// Runs worker processes at once (one per ensemble member), each printing the peer's
/// `phase fields bytes seconds` lines. The phases that move the workload's bytes (archive,
/// retrieve) last, for the group, from the first process's start of them to the last one's
/// end, so that the group's bytes over that time are its aggregate bandwidth, as `dd`'s many
/// processes are timed; each process's phases are placed back from the moment it exited
/// (they run in the order archive, list, retrieve, and a worker exits after its retrieve).
/// The slowest process's own time is not the group's where processes start apart: FDB5's
/// peer starts through a shell and Python, and on 2 cores its processes' retrieves began up
/// to 130 ms apart, the first reading alone meanwhile. A list, a millisecond against such
/// gaps, is the slowest process's list (its latency under the others' load).
pub fn run_group(commands: Vec<Command>, w: &Workload, mode: Mode) -> Result<Timings> {
    let started = Instant::now();
    let children: Vec<_> = commands
        .into_iter()
        .map(|mut c| {
            c.stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .map_err(|e| Error::caused_by(ErrorKind::Unavailable, "starting a worker", e))
        })
        .collect::<Result<_>>()?;
    // One waiter per worker, so that each one's exit is seen when it happens.
    let waiters: Vec<_> = children
        .into_iter()
        .map(|child| std::thread::spawn(move || child.wait_with_output().map(|out| (out, started.elapsed().as_secs_f64()))))
        .collect();
    let mut windows = Vec::new();
    for waiter in waiters {
        let (out, exited) = waiter
            .join()
            .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
            .map_err(|e| Error::caused_by(ErrorKind::Io, "waiting for a worker", e))?;
        if !out.status.success() {
            return Err(Error::new(ErrorKind::Io, format!("a worker failed: {}", String::from_utf8_lossy(&out.stderr))));
        }
        windows.push(PhaseWindows::back_from(exited, parse_phases(&String::from_utf8_lossy(&out.stdout), w.fields(), mode)?));
    }
    Ok(PhaseWindows::span(&windows))
}

/// When one worker's phases ran, in seconds from the group's start: (start, end) each.
struct PhaseWindows {
    archive: (f64, f64),
    list: (f64, f64),
    retrieve: (f64, f64),
}

impl PhaseWindows {
    /// The phases of a worker that exited at `exited`, each ending where the next starts.
    fn back_from(exited: f64, t: Timings) -> PhaseWindows {
        let retrieve = (exited - t.retrieve, exited);
        let list = (retrieve.0 - t.list, retrieve.0);
        PhaseWindows { archive: (list.0 - t.archive, list.0), list, retrieve }
    }

    /// Archive and retrieve from the first worker's start of them to the last one's end; the
    /// slowest worker's list.
    fn span(windows: &[PhaseWindows]) -> Timings {
        let span = |phase: fn(&PhaseWindows) -> (f64, f64)| {
            let first = windows.iter().map(|w| phase(w).0).fold(f64::INFINITY, f64::min);
            let last = windows.iter().map(|w| phase(w).1).fold(f64::NEG_INFINITY, f64::max);
            last - first
        };
        let archive = if windows.iter().all(|w| w.archive.0 == w.archive.1) { 0.0 } else { span(|w| w.archive) };
        let list = windows.iter().map(|w| w.list.1 - w.list.0).fold(0.0, f64::max);
        Timings { archive, list, retrieve: span(|w| w.retrieve) }
    }
}

/// Parses `archive|list|retrieve FIELDS BYTES SECONDS` lines (no archive line in
/// [`Mode::Read`]).
pub fn parse_phases(stdout: &str, expected_fields: usize, mode: Mode) -> Result<Timings> {
    let mut t = Timings::default();
    for line in stdout.lines() {
        let parts: Vec<&str> = line.split_whitespace().collect();
        let (Some(phase), Some(seconds)) = (parts.first(), parts.get(3).and_then(|s| s.parse::<f64>().ok())) else { continue };
        let fields: usize = parts.get(1).and_then(|s| s.parse().ok()).unwrap_or(0);
        if fields != expected_fields {
            return Err(Error::new(ErrorKind::Corrupt, format!("{phase}: {fields} fields, expected {expected_fields}")));
        }
        match *phase {
            "archive" => t.archive = seconds,
            "list" => t.list = seconds,
            "retrieve" => t.retrieve = seconds,
            _ => {}
        }
    }
    if (mode == Mode::Write && t.archive == 0.0) || t.retrieve == 0.0 {
        return Err(Error::new(ErrorKind::Corrupt, format!("incomplete worker output: {stdout:?}")));
    }
    Ok(t)
}

/// The FDB5 peer for one member. With `private_home`, the peer runs in a venv of its own
/// that links to the installed one: the peer script rewrites its schema and config files on
/// every start, and concurrent peers sharing them can read a half-written schema.
pub fn fdb5_command(peer_script: &Path, root: &Path, w: &Workload, member: usize, private_home: bool, mode: Mode) -> Result<Command> {
    let mut c = Command::new("bash");
    c.arg(peer_script).arg(root).args([w.nsteps, w.nlevels, w.nparams, w.field_size, member].map(|v| v.to_string()));
    if mode == Mode::Read {
        c.arg("read");
    }
    if private_home {
        c.env("FDB5_PEER_VENV", peer_venv_for(member)?);
    }
    Ok(c)
}

/// Where the peer script installs FDB5 and builds its harness.
fn shared_peer_venv() -> PathBuf {
    let home = std::env::var_os("HOME").map(PathBuf::from).unwrap_or_default();
    std::env::var_os("FDB5_PEER_VENV").map(PathBuf::from).unwrap_or_else(|| home.join(".cache/fdb5-peer"))
}

/// A venv for one concurrent peer: links to the shared install, with its own `fdb-home`.
fn peer_venv_for(member: usize) -> Result<PathBuf> {
    let shared = shared_peer_venv();
    if !shared.join("bin/python").exists() || !shared.join("fdb5_keybench").exists() {
        let message = format!("run one single-process compare first: it installs FDB5 into {}", shared.display());
        return Err(Error::new(ErrorKind::Unavailable, message));
    }
    let own = shared.with_file_name(format!("fdb5-peer-member-{member}"));
    std::fs::create_dir_all(&own).ctx("creating", &own)?;
    for entry in ["bin", "lib", "lib64", "include", "pyvenv.cfg", "fdb5_keybench"] {
        let link = own.join(entry);
        if shared.join(entry).exists() && std::fs::symlink_metadata(&link).is_err() {
            std::os::unix::fs::symlink(shared.join(entry), &link).ctx("linking", &link)?;
        }
    }
    Ok(own)
}

/// Runs the peer's workload for `w.member` through fieldstore with a config (see
/// [`peer_config`]), as the peer does: with one handle, archive with one flush per step
/// (not in [`Mode::Read`]), then list the member and retrieve everything in one request.
pub fn run_fieldstore(config: &Path, w: &Workload, mode: Mode) -> Result<Timings> {
    let config = Config::from_file(config)?;
    let reader = fieldstore::open(&config)?;
    let archive = match mode {
        Mode::Write => w.hammer().write(&reader)?.seconds,
        Mode::Read => 0.0,
    };

    // The peer lists as `fdb_list(..., duplicates=false, 3)` asks FDB5 5.25 to: every entry,
    // those replaced by newer archives too (there are none here).
    let base = "class=od,expver=0001,stream=enfo,date=20231201,time=1200,domain=g,type=pf,levtype=pl";
    let t = Instant::now();
    let options = ListOptions { include_superseded: true, ..ListOptions::default() };
    let listed = reader.list(&Request::parse(&format!("{base},number={}", w.member))?, options)?;
    // As the peer's harness does: walk the listing, sum the lengths, free it, all timed.
    let (count, bytes) = (listed.fields.len(), listed.fields.iter().map(|f| f.location.length).sum::<u64>());
    drop(listed);
    let list = t.elapsed().as_secs_f64();
    if count != w.fields() || bytes != (w.fields() * w.field_size) as u64 {
        return Err(Error::new(ErrorKind::NotFound, format!("fieldstore list: {count} fields of {bytes} bytes, expected {}", w.fields())));
    }
    let join = |n: usize, f: &dyn Fn(usize) -> String| (0..n).map(f).collect::<Vec<_>>().join("/");
    let request = format!(
        "{base},number={},step={},levelist={},param={}",
        w.member,
        join(w.nsteps, &|s| s.to_string()),
        join(w.nlevels, &|l| ((l + 1) * 10).to_string()),
        join(w.nparams, &|p| (p + 1).to_string())
    );
    let t = Instant::now();
    let (mut data_reader, _) = reader.retrieve(&Request::parse(&request)?)?;
    // Read in 16 MiB blocks, each filled before the next, as the peer's `fdb_datareader_read`
    // fills its buffer (a loop of single reads into the block's start would keep rewriting
    // the same cache-warm bytes).
    let mut block = vec![0u8; READ_BLOCK];
    let mut total = 0u64;
    loop {
        match data_reader.read_to_fill(&mut block)? {
            0 => break,
            n => total += n as u64,
        }
    }
    let retrieve = t.elapsed().as_secs_f64();
    if total != (w.fields() * w.field_size) as u64 {
        let message = format!("fieldstore retrieve: {total} bytes, expected {}", w.fields() * w.field_size);
        return Err(Error::new(ErrorKind::NotFound, message));
    }
    Ok(Timings { archive, list, retrieve })
}

/// The fewest bytes the loopback floor is measured over (fewer are too quick to time well).
const LOOPBACK_FLOOR_BYTES: usize = 256 << 20;

/// The block a retrieve fills, as the peer's harness does, and the `dd` read floor's.
const READ_BLOCK: usize = 16 << 20;

/// `dd` of `bytes` in 1 MiB blocks to a file in `dir`, with `fdatasync`: bytes per second.
pub fn dd_write(dir: &Path, bytes: usize) -> Result<f64> {
    let file: PathBuf = dir.join("dd.bench");
    let count = bytes.div_ceil(1 << 20).max(1);
    let t = Instant::now();
    let written = run_dd(&[
        "if=/dev/zero".into(),
        format!("of={}", file.display()),
        "bs=1M".into(),
        format!("count={count}"),
        "conv=fdatasync".into(),
    ]);
    let seconds = t.elapsed().as_secs_f64();
    let _ = std::fs::remove_file(&file);
    written?;
    Ok((count << 20) as f64 / seconds)
}

/// `procs` `dd` processes at once, each writing a file of its own in `dir` in `steps` blocks of
/// `step_bytes`, each block synced (`oflag=dsync`) as a writer flushes each step: all their
/// bytes over the time from the first start to the last exit, the best of `reps`. The floor of
/// an archive by as many writers with a flush per step (on tmpfs, where syncs cost nothing,
/// the page cache's copy).
pub fn dd_write_synced(dir: &Path, procs: usize, step_bytes: usize, steps: usize, reps: usize) -> Result<f64> {
    let files: Vec<PathBuf> = (0..procs.max(1)).map(|i| dir.join(format!("dd-write-{i}.bench"))).collect();
    let writers: Vec<Vec<String>> = files
        .iter()
        .map(|file| {
            let (of, bs, count) = (format!("of={}", file.display()), format!("bs={step_bytes}"), format!("count={steps}"));
            vec!["if=/dev/zero".into(), of, bs, count, "oflag=dsync".into()]
        })
        .collect();
    let mut best = f64::INFINITY;
    let mut run = || -> Result<()> {
        for _ in 0..reps.max(1) {
            best = best.min(dd_at_once(&writers, "writing", dir)?);
            for file in &files {
                let _ = std::fs::remove_file(file);
            }
        }
        Ok(())
    };
    let ran = run();
    for file in &files {
        let _ = std::fs::remove_file(file);
    }
    ran.map(|()| (files.len() * step_bytes * steps) as f64 / best)
}

/// `procs` `dd` processes at once, each reading a file of `bytes_per_process` in `dir` in
/// blocks of [`READ_BLOCK`], the block both systems' readers fill: all their bytes over the
/// time from the first start to the last exit, the best of `reps`. The files are written just
/// before, so they are in the page cache as the fields a retrieve reads after their archive
/// are: the floor of a retrieve by as many processes, each starting anew (docs/performance.md).
/// (`dd` in 1 MiB blocks keeps rewriting one buffer that stays in the core's cache, 1.25x
/// faster on 2 cores here than any reader that keeps what it reads.)
pub fn dd_read(dir: &Path, procs: usize, bytes_per_process: usize, reps: usize) -> Result<f64> {
    let count = bytes_per_process.div_ceil(1 << 20).max(1);
    let files: Vec<PathBuf> = (0..procs.max(1)).map(|i| dir.join(format!("dd-read-{i}.bench"))).collect();
    let timed = || -> Result<f64> {
        for file in &files {
            run_dd(&["if=/dev/zero".into(), format!("of={}", file.display()), "bs=1M".into(), format!("count={count}")])?;
        }
        let block = format!("bs={}", READ_BLOCK);
        let readers: Vec<Vec<String>> =
            files.iter().map(|file| vec![format!("if={}", file.display()), "of=/dev/null".into(), block.clone()]).collect();
        let mut best = f64::INFINITY;
        for _ in 0..reps.max(1) {
            best = best.min(dd_at_once(&readers, "reading", dir)?);
        }
        Ok((files.len() * (count << 20)) as f64 / best)
    };
    let rate = timed();
    for file in &files {
        let _ = std::fs::remove_file(file);
    }
    rate
}

/// Runs a `dd` with each of `args` at once (`doing` in `dir`): the seconds from the first
/// start to the last exit.
fn dd_at_once(args: &[Vec<String>], doing: &str, dir: &Path) -> Result<f64> {
    let t = Instant::now();
    let children: Vec<std::process::Child> = args
        .iter()
        .map(|a| dd_command(a).spawn())
        .collect::<std::io::Result<_>>()
        .map_err(|e| Error::caused_by(ErrorKind::Unavailable, "dd", e))?;
    for mut child in children {
        let status = child.wait().map_err(|e| Error::caused_by(ErrorKind::Unavailable, "dd", e))?;
        if !status.success() {
            return Err(Error::new(ErrorKind::Io, format!("dd {doing} in {} failed", dir.display())));
        }
    }
    Ok(t.elapsed().as_secs_f64())
}

/// A `dd` with `args`, its report to standard error left out.
fn dd_command(args: &[String]) -> Command {
    let mut dd = Command::new("dd");
    dd.args(args).stderr(Stdio::null());
    dd
}

/// Runs a `dd` with `args` to its end.
fn run_dd(args: &[String]) -> Result<()> {
    let status = dd_command(args).status().map_err(|e| Error::caused_by(ErrorKind::Unavailable, "dd", e))?;
    match status.success() {
        true => Ok(()),
        false => Err(Error::new(ErrorKind::Io, format!("dd {} failed", args.join(" ")))),
    }
}

/// Writes a GRIB file of the workload's fields (GRIB2, ensemble member `member`, pressure
/// levels 100, 200, ..., ten real parameters cycled) made with ecCodes.
pub fn write_grib_workload(path: &Path, w: &Workload) -> Result<usize> {
    const PARAMS: [&str; 10] = ["129", "130", "131", "132", "133", "135", "138", "155", "157", "60"];
    let mut out = Vec::new();
    let member = w.member.to_string();
    for step in 0..w.nsteps {
        for level in 1..=w.nlevels {
            for p in 0..w.nparams {
                let (step, level) = (step.to_string(), (level * 100).to_string());
                let keys = [
                    ("centre", "98"),
                    ("setLocalDefinition", "1"),
                    ("localDefinitionNumber", "1"),
                    ("class", "od"),
                    ("stream", "enfo"),
                    ("type", "pf"),
                    ("expver", "0001"),
                    ("date", "20231201"),
                    ("time", "1200"),
                    ("levtype", "pl"),
                    ("step", &step),
                    ("level", &level),
                    ("paramId", PARAMS[p % PARAMS.len()]),
                    ("productDefinitionTemplateNumber", "1"),
                    ("number", &member),
                ];
                out.extend_from_slice(&fieldstore::grib::sample_message("GRIB2", &keys)?);
            }
        }
    }
    std::fs::write(path, &out).ctx("writing", path)?;
    Ok(out.len())
}

/// Seconds taken by a command (a whole process, start-up included), which must succeed.
pub fn time_command(program: &Path, args: &[&std::ffi::OsStr]) -> Result<f64> {
    let t = Instant::now();
    let out = Command::new(program)
        .args(args)
        .output()
        .map_err(|e| Error::caused_by(ErrorKind::Unavailable, program.display().to_string(), e))?;
    if !out.status.success() {
        return Err(Error::new(ErrorKind::Io, format!("{} failed: {}", program.display(), String::from_utf8_lossy(&out.stderr))));
    }
    Ok(t.elapsed().as_secs_f64())
}

/// Removes a run's directory, then waits until the file system has settled (`syncfs`: the
/// deletion and any write-back durable), so that the next run, of either system, does not pay
/// for the last one's clean-up: on a disk mounted with `discard`, the first journal commit after
/// a large deletion also trims the freed blocks, a fixed cost that weighs most on the faster run.
pub fn clear(dir: &Path) {
    let _ = std::fs::remove_dir_all(dir);
    if let Some(parent) = dir.parent().and_then(|p| std::fs::File::open(p).ok()) {
        // SAFETY: a valid descriptor; syncfs only writes back the file system's dirty state.
        unsafe { libc::syncfs(std::os::fd::AsRawFd::as_raw_fd(&parent)) };
    }
}

/// How fieldstore's POSIX catalogue makes flushes durable in a comparison (see
/// docs/posix-layout.md).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum Commit {
    /// `embedded` on a local file system, else `ordered`.
    Auto,
    /// One device flush per flush, the records embedded in the data's sync.
    Embedded,
    /// FDB5's order: data, index segments, TOC.
    Ordered,
}

impl Commit {
    /// Its name in a config.
    pub fn name(self) -> &'static str {
        match self {
            Commit::Auto => "auto",
            Commit::Embedded => "embedded",
            Commit::Ordered => "ordered",
        }
    }
}

/// A config for fieldstore at `root` with the peer's schema, its POSIX catalogue committing in
/// mode `commit`.
pub fn peer_config(root: &Path, commit: Commit) -> Result<PathBuf> {
    let commit = commit.name();
    std::fs::create_dir_all(root).ctx("creating", root)?;
    let schema = root.join("schema");
    std::fs::write(&schema, PEER_SCHEMA).ctx("writing", &schema)?;
    let config = root.join("config.yaml");
    let data = root.join("data");
    std::fs::write(
        &config,
        format!(
            "schema: {}\ncatalogue: {{type: posix, root: {1}, create: true, commit: {commit}}}\nstore: {{type: posix, root: {1}, create: true}}\n",
            schema.display(),
            data.display()
        ),
    )
    .ctx("writing", &config)?;
    Ok(config)
}

/// FDB5's tools, run directly (not through scripts/fdb5-tool.sh, whose start, a Python
/// interpreter finding them, would be timed too).
pub struct Fdb5Tools {
    bin: PathBuf,
    /// The `LD_LIBRARY_PATH` its programs need.
    pub library_path: String,
}

impl Fdb5Tools {
    /// The tools of the FDB5 that scripts/fdb5-install.sh (beside `tool_script`) installs.
    pub fn find(tool_script: &Path) -> Result<Fdb5Tools> {
        let install = tool_script.with_file_name("fdb5-install.sh");
        let out = Command::new("bash")
            .arg(&install)
            .output()
            .map_err(|e| Error::caused_by(ErrorKind::Unavailable, install.display().to_string(), e))?;
        if !out.status.success() {
            return Err(Error::new(
                ErrorKind::Unavailable,
                format!("{} failed: {}", install.display(), String::from_utf8_lossy(&out.stderr)),
            ));
        }
        let packages = PathBuf::from(String::from_utf8_lossy(&out.stdout).trim());
        let libraries: Vec<String> = ["fdb5lib", "metkitlib", "eckitlib", "eccodeslib"]
            .iter()
            .map(|p| packages.join(p).join("lib64").display().to_string())
            .collect();
        Ok(Fdb5Tools { bin: packages.join("fdb5lib/bin"), library_path: libraries.join(":") })
    }

    /// A command running FDB5's `tool`, its libraries found.
    pub fn command(&self, tool: &str) -> Command {
        let mut command = Command::new(self.bin.join(tool));
        command.env("LD_LIBRARY_PATH", &self.library_path);
        command
    }
}

/// FDB5's config for its databases under `root`, with the peer's schema, written in `dir` as `name`.
fn fdb5_config(dir: &Path, root: &Path, name: &str) -> Result<PathBuf> {
    let schema = dir.join("fdb5-copy.schema");
    std::fs::write(&schema, PEER_SCHEMA).ctx("writing", &schema)?;
    let config = dir.join(name);
    let text = format!(
        "type: local\nengine: toc\nschema: {}\nspaces:\n- handler: Default\n  regex: \".*\"\n  roots:\n  - path: {}\n",
        schema.display(),
        root.display()
    );
    std::fs::write(&config, text).ctx("writing", &config)?;
    Ok(config)
}

/// Bytes in MiB.
fn mib(bytes: f64) -> f64 {
    bytes / 1048576.0
}

/// The smallest and largest of some seconds.
fn best_and_worst(seconds: &[f64]) -> (f64, f64) {
    (seconds.iter().cloned().fold(f64::INFINITY, f64::min), seconds.iter().cloned().fold(0.0, f64::max))
}

/// A config for fieldstore reading the FDB5 databases under `fdb5_root` in place, with the
/// peer's schema, written in `dir` (outside FDB5's root).
pub fn in_place_config(dir: &Path, fdb5_root: &Path) -> Result<PathBuf> {
    let schema = dir.join("in-place.schema");
    std::fs::write(&schema, PEER_SCHEMA).ctx("writing", &schema)?;
    let config = dir.join("in-place.yaml");
    let place = format!("{{type: fdb5, roots: [{}]}}", fdb5_root.display());
    std::fs::write(&config, format!("schema: {}\ncatalogue: {place}\nstore: {place}\n", schema.display())).ctx("writing", &config)?;
    Ok(config)
}

/// The systems a comparison runs.
#[derive(Clone, Copy, Debug, PartialEq)]
enum System {
    /// FDB5 through the peer script (its C API).
    Fdb5,
    /// fieldstore through its Rust API (`bench explicit-keys`).
    Rust,
    /// fieldstore through its C API: FDB5's harness relinked.
    C,
    /// fieldstore through its Rust API, reading FDB5's databases in place (read mode only).
    InPlace,
}

impl System {
    /// The directory name of its store.
    fn name(self) -> &'static str {
        match self {
            System::Fdb5 => "fdb5",
            System::Rust => "fieldstore",
            System::C => "fieldstore-c",
            System::InPlace => "fdb5",
        }
    }
}

/// A side-by-side comparison: the same workload through FDB5 and fieldstore, alternately.
pub struct Comparison {
    /// Directory on the file system to measure (emptied first).
    pub root: PathBuf,
    /// The FDB5 peer script.
    pub peer: PathBuf,
    /// What each process writes and reads.
    pub workload: Workload,
    /// Repetitions (the best of each is reported, with the worst).
    pub reps: usize,
    /// Processes of each system running at once (ensemble members 1..=N, one dataset).
    pub procs: usize,
    /// How fieldstore's catalogue makes flushes durable.
    pub commit: Commit,
    /// The FDB5 tool runner, for the GRIB comparison.
    pub fdb5_tool: PathBuf,
    /// FDB5's own harness (`fdb5_keybench.c`) built against fieldstore's C API, run as a third
    /// system: what the C layer costs (scripts/c-bench.sh builds it).
    pub c_harness: Option<PathBuf>,
    /// Also read what FDB5 wrote with fieldstore, in place (`fdb5` databases beside nothing of
    /// its own), new processes as FDB5's readers are: the phases `... of FDB5's data, in place`.
    pub in_place: bool,
    /// Also copy what was written into another store, new processes: `fieldstore copy` of
    /// fieldstore's data (and, with `in_place`, of FDB5's databases), [`CopyComparison`]; with
    /// GRIB, FDB5's `fdb-copy` too, [`GribCopyComparison`]. One process only.
    pub copy: bool,
    /// Each system through its servers on loopback ([`crate::serving`]): FDB5's `fdb-server`
    /// (catalogue and store) and `fieldstore serve`, started for each repetition.
    pub remote: bool,
}

/// What `fieldstore copy` of the written data into a new store took, new processes, best and
/// worst seconds from its stores open to the copy verified (as fieldstore's other processes
/// time their phases), against fieldstore's own retrieve and archive done apart.
#[derive(Clone, Debug, Serialize)]
pub struct CopyComparison {
    /// `fieldstore copy --all` of fieldstore's data into another store, flushing once per step
    /// of the workload's bytes, as its writers do.
    pub fieldstore_copy: (f64, f64),
    /// `fieldstore copy --all` of FDB5's databases, read in place, into fieldstore.
    pub fieldstore_copy_of_fdb5: Option<(f64, f64)>,
    /// fieldstore's best retrieve (a new process) plus its best archive+flush: the copy's two
    /// halves done apart.
    pub apart_seconds: f64,
    /// `apart_seconds` over fieldstore's best copy: the copy's bandwidth as a share of the
    /// halves' (at least 0.8 is the target).
    pub bandwidth_share: f64,
}

/// FDB5's `fdb-copy` against `fieldstore copy` of the same GRIB messages, each of its own
/// system's store into a new one, whole new processes, best and worst seconds.
#[derive(Clone, Debug, Serialize)]
pub struct GribCopyComparison {
    /// `fdb-copy --from-list --all`.
    pub fdb_copy: (f64, f64),
    /// `fieldstore copy --all`.
    pub fieldstore_copy: (f64, f64),
    /// `fieldstore copy --all` of FDB5's databases, read in place, into fieldstore.
    pub fieldstore_copy_of_fdb5: (f64, f64),
    /// `fdb-copy`'s best seconds over `fieldstore copy`'s.
    pub speedup: f64,
}

/// One phase of a comparison: each system's best and worst seconds.
#[derive(Clone, Debug, Serialize)]
pub struct PhaseComparison {
    /// `archive+flush`, `list` or `retrieve` (by the writer's handle), or `list, new process`
    /// or `retrieve, new process` (a reader process started after the writer ended).
    pub phase: &'static str,
    /// FDB5's best seconds.
    pub fdb5_seconds: f64,
    /// FDB5's worst seconds.
    pub fdb5_worst: f64,
    /// fieldstore's best seconds.
    pub fieldstore_seconds: f64,
    /// fieldstore's worst seconds.
    pub fieldstore_worst: f64,
    /// FDB5's best seconds over fieldstore's.
    pub speedup: f64,
    /// fieldstore through its C API (FDB5's harness relinked): best and worst seconds.
    pub fieldstore_c: Option<(f64, f64)>,
}

/// What [`Comparison::run`] measured.
#[derive(Clone, Debug, Serialize)]
pub struct ComparisonReport {
    /// What each process wrote and read.
    pub workload: Workload,
    /// Processes of each system running at once.
    pub procs: usize,
    /// The directory measured.
    pub root: PathBuf,
    /// Repetitions.
    pub reps: usize,
    /// Each phase's timings: archive+flush, list, retrieve.
    pub phases: Vec<PhaseComparison>,
    /// `dd` with 1 MiB blocks and `fdatasync` of as many bytes, to the same file system.
    pub dd_write_bytes_per_second: f64,
    /// As many `dd` writers as the run's processes, each syncing every step's bytes
    /// ([`dd_write_synced`]): the floor of the archive.
    pub dd_synced_write_bytes_per_second: f64,
    /// As many `dd` processes as fieldstore's, each reading as many bytes as one of them in
    /// 16 MiB blocks from the same file system's page cache ([`dd_read`]).
    pub dd_read_bytes_per_second: f64,
    /// All processes' bytes over fieldstore's best archive+flush time.
    pub fieldstore_archive_bytes_per_second: f64,
    /// All processes' bytes over FDB5's best archive+flush time.
    pub fdb5_archive_bytes_per_second: f64,
    /// The copies (with [`Comparison::copy`]).
    pub copy: Option<CopyComparison>,
    /// Whether each system ran through its servers on loopback ([`Comparison::remote`]).
    pub remote: bool,
    /// With `remote`: what one loopback TCP connection carries a second, the best of 3, the
    /// floor of every remote transfer ([`crate::serving::loopback_floor`]).
    pub loopback_bytes_per_second: Option<f64>,
}

/// What [`Comparison::run_grib`] measured.
#[derive(Clone, Debug, Serialize)]
pub struct GribComparison {
    /// The fields the GRIB file holds.
    pub workload: Workload,
    /// The GRIB file's size.
    pub grib_bytes: usize,
    /// `fdb-write`'s best seconds.
    pub fdb_write_seconds: f64,
    /// `fieldstore archive`'s best seconds.
    pub fieldstore_archive_seconds: f64,
    /// `fdb-write`'s best seconds over `fieldstore archive`'s.
    pub speedup: f64,
    /// Repetitions.
    pub reps: usize,
    #[serde(skip)]
    root: PathBuf,
    /// The copies (with [`Comparison::copy`]).
    pub copy: Option<GribCopyComparison>,
}

/// Picks one phase's seconds out of a run's timings.
type PhaseTime = fn(&Timings) -> f64;

/// One phase's runs of each system, to compare.
struct PhaseRuns<'r> {
    phase: &'static str,
    fdb5: &'r [Timings],
    ours: &'r [Timings],
    /// fieldstore's C API's, if it ran.
    c: Option<Vec<Timings>>,
    get: PhaseTime,
}

/// Best and worst of repeated timings, per phase.
fn spread(runs: &[Timings], get: PhaseTime) -> (f64, f64) {
    best_and_worst(&runs.iter().map(get).collect::<Vec<f64>>())
}

impl Comparison {
    /// Runs FDB5 (the peer, its C API) and fieldstore (`program bench explicit-keys`, one
    /// process per member) in turn, alternating who goes first, then `dd` on the same file
    /// system.
    pub fn run(&self, program: &Path) -> Result<ComparisonReport> {
        let w = &self.workload;
        let procs = self.procs.max(1);
        let systems: Vec<System> = [System::Fdb5, System::Rust].into_iter().chain(self.c_harness.as_ref().map(|_| System::C)).collect();
        // Per system: the writer's timings and a new reader process's.
        let mut runs: Vec<Vec<Timings>> = vec![Vec::new(); systems.len()];
        let mut new_readers: Vec<Vec<Timings>> = vec![Vec::new(); systems.len()];
        // fieldstore's new readers of FDB5's databases, in place.
        let mut in_place: Vec<Timings> = Vec::new();
        if self.copy && procs > 1 {
            return Err(Error::new(ErrorKind::BadRequest, "the copy is measured with one process (--procs 1)"));
        }
        if self.remote && (self.copy || self.in_place) {
            return Err(Error::new(ErrorKind::BadRequest, "a remote comparison neither copies nor reads in place"));
        }
        // FDB5's tools, for its servers.
        let fdb5_servers = match self.remote {
            true => Some(self.remote_peer()?),
            false => None,
        };
        // fieldstore's copies of its own data and of FDB5's.
        let (mut copies, mut copies_of_fdb5) = (Vec::new(), Vec::new());
        for rep in 0..self.reps.max(1) {
            // Rotate who goes first, so none always meets a warmer cache.
            for turn in 0..systems.len() {
                let at = (rep + turn) % systems.len();
                let dir = self.root.join(systems[at].name());
                clear(&dir);
                let served = match &fdb5_servers {
                    Some(tools) => Some(self.serve(systems[at], tools, program, &dir)?),
                    None => None,
                };
                runs[at].push(self.run_system(systems[at], program, &dir, Mode::Write, served.as_ref())?);
                new_readers[at].push(self.run_system(systems[at], program, &dir, Mode::Read, served.as_ref())?);
                drop(served);
                if self.in_place && systems[at] == System::Fdb5 {
                    in_place.push(self.run_system(System::InPlace, program, &dir, Mode::Read, None)?);
                }
                // A flush per step, as the writers flush.
                let step = Some(w.nlevels * w.nparams * w.field_size);
                match systems[at] {
                    System::Fdb5 if self.copy && self.in_place => {
                        copies_of_fdb5.push(self.time_copy(program, &in_place_config(&self.root, &dir)?, w.fields(), step)?.1)
                    }
                    System::Rust if self.copy => {
                        copies.push(self.time_copy(program, &peer_config(&dir, self.commit)?, w.fields(), step)?.1)
                    }
                    _ => {}
                }
                clear(&dir);
            }
        }
        let (fdb5, ours) = (&runs[0], &runs[1]);
        let total_bytes = w.fields() * w.field_size * procs;
        let dd = dd_write(&self.root, total_bytes)?;
        let step_bytes = w.nlevels * w.nparams * w.field_size;
        let dd_synced = dd_write_synced(&self.root, procs, step_bytes, w.nsteps, self.reps)?;
        let dd_read = dd_read(&self.root, procs, w.fields() * w.field_size, self.reps)?;
        let loopback = match self.remote {
            true => {
                let floors = (0..3).map(|_| crate::serving::loopback_floor(total_bytes.max(LOOPBACK_FLOOR_BYTES)));
                Some(floors.collect::<Result<Vec<f64>>>()?.into_iter().fold(0.0, f64::max))
            }
            false => None,
        };
        let list: PhaseTime = |t| t.list;
        let retrieve: PhaseTime = |t| t.retrieve;
        let c_runs = |runs: &[Vec<Timings>]| runs.get(2).cloned();
        let pair = |phase, fdb5, ours, c, get| PhaseRuns { phase, fdb5, ours, c, get };
        let mut named = vec![
            pair("archive+flush", &runs[0], &runs[1], c_runs(&runs), |t| t.archive),
            pair("list", &runs[0], &runs[1], c_runs(&runs), list),
            pair("retrieve", &runs[0], &runs[1], c_runs(&runs), retrieve),
            pair("list, new process", &new_readers[0], &new_readers[1], c_runs(&new_readers), list),
            pair("retrieve, new process", &new_readers[0], &new_readers[1], c_runs(&new_readers), retrieve),
        ];
        if self.in_place {
            named.push(pair("list, new process, of FDB5's data in place", &new_readers[0], &in_place, None, list));
            named.push(pair("retrieve, new process, of FDB5's data in place", &new_readers[0], &in_place, None, retrieve));
        }
        let phases = named
            .into_iter()
            .map(|p| {
                let ((fdb5_seconds, fdb5_worst), (fieldstore_seconds, fieldstore_worst)) = (spread(p.fdb5, p.get), spread(p.ours, p.get));
                PhaseComparison {
                    phase: p.phase,
                    fdb5_seconds,
                    fdb5_worst,
                    fieldstore_seconds,
                    fieldstore_worst,
                    speedup: fdb5_seconds / fieldstore_seconds,
                    fieldstore_c: p.c.map(|c| spread(&c, p.get)),
                }
            })
            .collect();
        Ok(ComparisonReport {
            workload: *w,
            procs: self.procs,
            root: self.root.clone(),
            reps: self.reps,
            phases,
            dd_write_bytes_per_second: dd,
            dd_synced_write_bytes_per_second: dd_synced,
            dd_read_bytes_per_second: dd_read,
            remote: self.remote,
            loopback_bytes_per_second: loopback,
            fieldstore_archive_bytes_per_second: total_bytes as f64 / spread(ours, |t| t.archive).0,
            fdb5_archive_bytes_per_second: total_bytes as f64 / spread(fdb5, |t| t.archive).0,
            copy: self.copy.then(|| {
                let apart_seconds = spread(&new_readers[1], retrieve).0 + spread(ours, |t| t.archive).0;
                let fieldstore_copy = best_and_worst(&copies);
                CopyComparison {
                    fieldstore_copy,
                    fieldstore_copy_of_fdb5: self.in_place.then(|| best_and_worst(&copies_of_fdb5)),
                    apart_seconds,
                    bandwidth_share: apart_seconds / fieldstore_copy.0,
                }
            }),
        })
    }

    /// `fieldstore copy --all` from the store `source` names into a new store, a new process:
    /// the whole process's seconds, and those it reports, from its stores open to the copy
    /// verified (as the phases of fieldstore's other processes are timed).
    fn time_copy(&self, program: &Path, source: &Path, fields: usize, batch_bytes: Option<usize>) -> Result<(f64, f64)> {
        let target = self.root.join("copy-target");
        clear(&target);
        let config = peer_config(&target, self.commit)?;
        let started = Instant::now();
        let mut command = Command::new(program);
        command.arg("--config").arg(source).args(["copy", "--all", "--json", "--target"]).arg(&config);
        if let Some(bytes) = batch_bytes {
            command.args(["--batch-bytes", &bytes.to_string()]);
        }
        let out = command.output().map_err(|e| Error::caused_by(ErrorKind::Unavailable, program.display().to_string(), e))?;
        let whole = started.elapsed().as_secs_f64();
        if !out.status.success() {
            return Err(Error::new(ErrorKind::Io, format!("fieldstore copy failed: {}", String::from_utf8_lossy(&out.stderr))));
        }
        let summary: serde_json::Value = serde_json::from_slice(&out.stdout)
            .map_err(|e| Error::caused_by(ErrorKind::Corrupt, "the summary fieldstore copy printed", e))?;
        clear(&target);
        if summary["copied"].as_u64() != Some(fields as u64) || summary["verified"].as_u64() != Some(fields as u64) {
            return Err(Error::new(
                ErrorKind::Corrupt,
                format!("fieldstore copy should have copied and verified {fields} fields: {summary}"),
            ));
        }
        let reported = summary["seconds"]
            .as_f64()
            .ok_or_else(|| Error::new(ErrorKind::Corrupt, format!("no seconds in fieldstore copy's summary {summary}")))?;
        Ok((whole, reported))
    }

    /// FDB5's `fdb-copy` of the databases under `source` into a new root, a new process.
    fn time_fdb_copy(&self, tools: &Fdb5Tools, source: &Path, fields: usize) -> Result<f64> {
        let target = self.root.join("fdb5-copy-target");
        clear(&target);
        std::fs::create_dir_all(&target).ctx("creating", &target)?;
        let configs = [(source, "fdb5-copy-source.yaml"), (&target, "fdb5-copy-target.yaml")];
        let [from, to] = configs.map(|(root, name)| fdb5_config(&self.root, root, name));
        let (from, to) = (from?, to?);
        let mut command = tools.command("fdb-copy");
        command.arg(format!("--source={}", from.display())).arg(format!("--target={}", to.display()));
        command.args(["--from-list", "--all", "--minimum-keys="]);
        let t = Instant::now();
        let out = command.output().map_err(|e| Error::caused_by(ErrorKind::Unavailable, "fdb-copy", e))?;
        if !out.status.success() {
            return Err(Error::new(ErrorKind::Io, format!("fdb-copy failed: {}", String::from_utf8_lossy(&out.stderr))));
        }
        let seconds = t.elapsed().as_secs_f64();
        // What fdb-copy copied, as fdb-list sees it.
        let mut list = tools.command("fdb-list");
        list.arg(format!("--config={}", to.display())).args(["--all", "--minimum-keys=", "--porcelain"]);
        let listed = list.output().map_err(|e| Error::caused_by(ErrorKind::Unavailable, "fdb-list", e))?;
        let copied = String::from_utf8_lossy(&listed.stdout).lines().filter(|l| l.starts_with('{')).count();
        if copied != fields {
            return Err(Error::new(ErrorKind::Corrupt, format!("fdb-copy should have copied {fields} fields; fdb-list lists {copied}")));
        }
        clear(&target);
        Ok(seconds)
    }

    /// FDB5's tools, its harness built by the peer script (a remote comparison runs it
    /// directly, against a remote config).
    fn remote_peer(&self) -> Result<Fdb5Tools> {
        let tools = Fdb5Tools::find(&self.fdb5_tool)?;
        let scratch = self.root.join("peer-install");
        let tiny = Workload { nsteps: 1, nlevels: 1, nparams: 1, field_size: 1024, member: 1 };
        let out = fdb5_command(&self.peer, &scratch, &tiny, 1, false, Mode::Write)?
            .output()
            .map_err(|e| Error::caused_by(ErrorKind::Unavailable, self.peer.display().to_string(), e))?;
        clear(&scratch);
        if !out.status.success() {
            return Err(Error::new(ErrorKind::Unavailable, format!("the FDB5 peer failed: {}", String::from_utf8_lossy(&out.stderr))));
        }
        Ok(tools)
    }

    /// The servers `system` runs through in a remote comparison, its data under `dir`.
    fn serve(&self, system: System, tools: &Fdb5Tools, program: &Path, dir: &Path) -> Result<Served> {
        match system {
            System::Fdb5 => Served::fdb5(tools, dir),
            _ => Served::fieldstore(program, &peer_config(dir, self.commit)?, &dir.join("serve")),
        }
    }

    /// The process running `system`'s share of the workload for ensemble member `member`,
    /// through `served` where the comparison is remote.
    fn command(&self, system: System, program: &Path, dir: &Path, member: usize, mode: Mode, served: Option<&Served>) -> Result<Command> {
        let w = &self.workload;
        let procs = self.procs.max(1);
        Ok(match system {
            System::Fdb5 if served.is_some() => {
                let mut c = Command::new(shared_peer_venv().join("fdb5_keybench"));
                c.args([w.nsteps, w.nlevels, w.nparams, w.field_size, member].map(|v| v.to_string()));
                if mode == Mode::Read {
                    c.arg("read");
                }
                c.envs(served.into_iter().flat_map(|s| s.client_env.iter().cloned()));
                c
            }
            System::Fdb5 => fdb5_command(&self.peer, dir, w, member, procs > 1, mode)?,
            System::Rust | System::InPlace => {
                let config = match (system, served) {
                    (System::InPlace, _) => in_place_config(&self.root, dir)?,
                    (_, Some(served)) => served.client_config.clone(),
                    _ => peer_config(dir, self.commit)?,
                };
                let mut c = Command::new(program);
                c.arg("--config").arg(config).args(["bench", "explicit-keys"]);
                c.args(["--nsteps", &w.nsteps.to_string(), "--nlevels", &w.nlevels.to_string(), "--nparams", &w.nparams.to_string()]);
                c.args(["--field-size", &w.field_size.to_string(), "--member", &member.to_string()]);
                if mode == Mode::Read {
                    c.arg("--read");
                }
                c
            }
            System::C => {
                // The harness opens its handle as FDB5 programs do (`fdb_new_handle`): the
                // environment names the config.
                let mut c = Command::new(self.c_harness.as_ref().ok_or_else(|| Error::new(ErrorKind::BadRequest, "no C harness"))?);
                c.args([w.nsteps, w.nlevels, w.nparams, w.field_size, member].map(|v| v.to_string()));
                if mode == Mode::Read {
                    c.arg("read");
                }
                match served {
                    Some(served) => c.envs(served.client_env.iter().cloned()),
                    None => c.env("FIELDSTORE_CONFIG", peer_config(dir, self.commit)?),
                };
                c
            }
        })
    }

    /// One process per member running `system` in `mode` on `dir`, all at once.
    fn run_system(&self, system: System, program: &Path, dir: &Path, mode: Mode, served: Option<&Served>) -> Result<Timings> {
        let commands = (1..=self.procs.max(1)).map(|m| self.command(system, program, dir, m, mode, served)).collect::<Result<_>>()?;
        run_group(commands, &self.workload, mode)
    }

    /// `fdb-write` against `program archive` on one GRIB file of the workload, both as whole
    /// processes; the best of the repetitions.
    pub fn run_grib(&self, program: &Path) -> Result<GribComparison> {
        std::fs::create_dir_all(&self.root).ctx("creating", &self.root)?;
        let file = self.root.join("workload.grib");
        let grib_bytes = write_grib_workload(&file, &self.workload)?;
        let (mut fdb5, mut ours) = (Vec::new(), Vec::new());
        let fdb5_tools = if self.copy { Some(Fdb5Tools::find(&self.fdb5_tool)?) } else { None };
        // fdb-copy, fieldstore copy, and fieldstore copy of FDB5's databases.
        let mut copies: [Vec<f64>; 3] = Default::default();
        for _ in 0..self.reps.max(1) {
            let (fdb5_root, our_root) = (self.root.join("fdb5"), self.root.join("fieldstore"));
            clear(&fdb5_root);
            clear(&our_root);
            fdb5.push(time_command(&self.fdb5_tool, &[fdb5_root.as_os_str(), "fdb-write".as_ref(), file.as_os_str()])?);
            let config = peer_config(&our_root, self.commit)?;
            ours.push(time_command(program, &["--config".as_ref(), config.as_os_str(), "archive".as_ref(), file.as_os_str()])?);
            if let Some(tools) = &fdb5_tools {
                let fields = self.workload.fields();
                copies[0].push(self.time_fdb_copy(tools, &fdb5_root, fields)?);
                // Whole processes, as fdb-copy is timed.
                copies[1].push(self.time_copy(program, &config, fields, None)?.0);
                copies[2].push(self.time_copy(program, &in_place_config(&self.root, &fdb5_root)?, fields, None)?.0);
            }
        }
        let best = |v: &[f64]| v.iter().cloned().fold(f64::INFINITY, f64::min);
        let (f, o) = (best(&fdb5), best(&ours));
        let copy = fdb5_tools.map(|_| GribCopyComparison {
            fdb_copy: best_and_worst(&copies[0]),
            fieldstore_copy: best_and_worst(&copies[1]),
            fieldstore_copy_of_fdb5: best_and_worst(&copies[2]),
            speedup: best(&copies[0]) / best(&copies[1]),
        });
        Ok(GribComparison {
            workload: self.workload,
            grib_bytes,
            fdb_write_seconds: f,
            fieldstore_archive_seconds: o,
            speedup: f / o,
            reps: self.reps,
            root: self.root.clone(),
            copy,
        })
    }
}

impl ComparisonReport {
    /// The report as a heading line, a Markdown table and the bandwidth line.
    pub fn markdown(&self) -> String {
        let w = &self.workload;
        let mut md = format!(
            "{} processes x {} fields x {} bytes, one flush per step ({} steps), best of {} on {}{}\n",
            self.procs,
            w.fields(),
            w.field_size,
            w.nsteps,
            self.reps,
            self.root.display(),
            if self.remote { ", each system through its servers on loopback (FDB5's fdb-server, fieldstore serve)" } else { "" }
        );
        let with_c = self.phases.iter().any(|p| p.fieldstore_c.is_some());
        md.push_str("| phase | FDB5 s (worst) | fieldstore s (worst) | speed-up |");
        md.push_str(if with_c {
            " fieldstore's C API s (worst) | its speed-up | C API over Rust API |\n|---|---|---|---|---|---|---|\n"
        } else {
            "\n|---|---|---|---|\n"
        });
        for p in &self.phases {
            md.push_str(&format!(
                "| {} | {:.4} ({:.4}) | {:.4} ({:.4}) | {:.2}x |",
                p.phase, p.fdb5_seconds, p.fdb5_worst, p.fieldstore_seconds, p.fieldstore_worst, p.speedup
            ));
            if let Some((best, worst)) = p.fieldstore_c {
                md.push_str(&format!(" {best:.4} ({worst:.4}) | {:.2}x | {:.2} |", p.fdb5_seconds / best, best / p.fieldstore_seconds));
            }
            md.push('\n');
        }
        md.push_str(&format!(
            "archive+flush bandwidth: fieldstore {:.0} MiB/s, FDB5 {:.0} MiB/s; dd 1 MiB blocks + fdatasync: {:.0} MiB/s (fieldstore at {:.0}% of dd)\n",
            mib(self.fieldstore_archive_bytes_per_second),
            mib(self.fdb5_archive_bytes_per_second),
            mib(self.dd_write_bytes_per_second),
            100.0 * self.fieldstore_archive_bytes_per_second / self.dd_write_bytes_per_second
        ));
        md.push_str(&format!(
            "dd, {} writers at once, each syncing every step's bytes: {:.0} MiB/s (fieldstore at {:.0}% of it)\n",
            self.procs.max(1),
            mib(self.dd_synced_write_bytes_per_second),
            100.0 * self.fieldstore_archive_bytes_per_second / self.dd_synced_write_bytes_per_second
        ));
        let total_bytes = (self.workload.fields() * self.workload.field_size * self.procs.max(1)) as f64;
        let rate = |phase: &str| {
            self.phases
                .iter()
                .find(|p| p.phase == phase)
                .map_or((0.0, 0.0), |p| (total_bytes / p.fieldstore_seconds, total_bytes / p.fdb5_seconds))
        };
        let ((ours, fdb5), (ours_new, fdb5_new)) = (rate("retrieve"), rate("retrieve, new process"));
        md.push_str(&format!(
            "retrieve bandwidth: fieldstore {:.0} MiB/s (a new process {:.0}), FDB5 {:.0} MiB/s ({:.0}); dd 16 MiB blocks, {} at once: {:.0} MiB/s (fieldstore's new process at {:.0}% of dd)\n",
            mib(ours),
            mib(ours_new),
            mib(fdb5),
            mib(fdb5_new),
            self.procs.max(1),
            mib(self.dd_read_bytes_per_second),
            100.0 * ours_new / self.dd_read_bytes_per_second
        ));
        if let Some(c) = &self.copy {
            md.push_str(&c.markdown(total_bytes));
        }
        if let Some(floor) = self.loopback_bytes_per_second {
            md.push_str(&format!(
                "one loopback connection: {:.0} MiB/s (the floor of a remote transfer; fieldstore's retrieve at {:.0}% of it)\n",
                mib(floor),
                100.0 * ours / floor
            ));
        }
        md
    }
}

impl CopyComparison {
    /// The copies' table and the copy's share of its halves' bandwidth, for `bytes` copied.
    fn markdown(&self, bytes: f64) -> String {
        let row = |what: &str, (best, worst): (f64, f64)| format!("| {what} | {best:.4} ({worst:.4}) | {:.0} |\n", mib(bytes / best));
        let mut md = String::from("| copy, new process (the seconds it reports) | seconds (worst) | MiB/s |\n|---|---|---|\n");
        md.push_str(&row("fieldstore copy", self.fieldstore_copy));
        if let Some(of_fdb5) = self.fieldstore_copy_of_fdb5 {
            md.push_str(&row("fieldstore copy of FDB5's databases in place", of_fdb5));
        }
        md.push_str(&format!(
            "fieldstore's copy at {:.0}% of the bandwidth of its retrieve (new process) and archive+flush done apart ({:.4} s)\n",
            100.0 * self.bandwidth_share,
            self.apart_seconds
        ));
        md
    }
}

impl GribComparison {
    /// The report as a heading line and a Markdown table.
    pub fn markdown(&self) -> String {
        let (fields, f, o) = (self.workload.fields() as f64, self.fdb_write_seconds, self.fieldstore_archive_seconds);
        let mut md = format!(
            "GRIB file of {} messages ({} bytes), best of {} on {}\n| tool | seconds | fields/s |\n|---|---|---|\n| fdb-write | {f:.3} | {:.0} |\n| fieldstore archive | {o:.3} | {:.0} |\nspeed-up: {:.2}x\n",
            self.workload.fields(),
            self.grib_bytes,
            self.reps,
            self.root.display(),
            fields / f,
            fields / o,
            self.speedup
        );
        if let Some(c) = &self.copy {
            let row = |what: &str, (best, worst): (f64, f64)| format!("| {what} | {best:.4} ({worst:.4}) | {:.0} |\n", fields / best);
            md.push_str("| copy, whole new process | seconds (worst) | fields/s |\n|---|---|---|\n");
            md.push_str(&row("FDB5 fdb-copy", c.fdb_copy));
            md.push_str(&row("fieldstore copy", c.fieldstore_copy));
            md.push_str(&row("fieldstore copy of FDB5's databases in place", c.fieldstore_copy_of_fdb5));
            md.push_str(&format!("copy speed-up over fdb-copy: {:.2}x\n", c.speedup));
        }
        md
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_groups_archive_and_retrieve_run_from_the_first_workers_start_to_the_last_ones_end() {
        // The first worker retrieved from 0.5 s to 1.0 s; the second started its retrieve
        // later (0.9 s) and ended at 1.2 s: the group read for 0.7 s, longer than either.
        let windows = [
            PhaseWindows::back_from(1.0, Timings { archive: 0.25, list: 0.25, retrieve: 0.5 }),
            PhaseWindows::back_from(1.2, Timings { archive: 0.1, list: 0.05, retrieve: 0.3 }),
        ];
        let t = PhaseWindows::span(&windows);
        let near = |a: f64, b: f64| (a - b).abs() < 1e-9;
        assert!(near(t.retrieve, 0.7) && near(t.archive, 0.85), "{t:?}");
        assert!(near(t.list, 0.25), "the slowest worker's list: {t:?}");
        // Readers archive nothing.
        let readers = [PhaseWindows::back_from(1.0, Timings { archive: 0.0, list: 0.1, retrieve: 0.5 })];
        assert_eq!(PhaseWindows::span(&readers).archive, 0.0);
    }

    #[test]
    fn dd_read_reads_a_file_per_process_and_leaves_none() {
        let dir = tempfile::tempdir().unwrap();
        let rate = dd_read(dir.path(), 3, 2 << 20, 2).unwrap();
        assert!(rate.is_finite() && rate > 0.0, "{rate}");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0, "the files dd read are removed");
        let missing = dd_read(&dir.path().join("missing"), 2, 1 << 20, 1).unwrap_err();
        assert_eq!(missing.kind(), ErrorKind::Io, "{}", missing.report());
    }

    #[test]
    fn dd_write_synced_writes_a_file_per_writer_and_leaves_none() {
        let dir = tempfile::tempdir().unwrap();
        let rate = dd_write_synced(dir.path(), 3, 64 << 10, 4, 2).unwrap();
        assert!(rate.is_finite() && rate > 0.0, "{rate}");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0, "the files dd wrote are removed");
        let missing = dd_write_synced(&dir.path().join("missing"), 2, 4096, 1, 1).unwrap_err();
        assert_eq!(missing.kind(), ErrorKind::Io, "{}", missing.report());
    }
}
