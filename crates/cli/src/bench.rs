//! `fieldstore bench ...`: the benchmark suite's command line.

use std::collections::BTreeMap;
use std::path::PathBuf;

use anyhow::{bail, Context};
use clap::{Args, Subcommand};
use fieldstore_bench::compare::{self, Timings, Workload};
use fieldstore_bench::launch::{Barrier, Place};
use fieldstore_bench::{Check, Hammer, Payload, Phase};

#[derive(Subcommand)]
pub enum BenchCommand {
    /// The fdb-hammer workload: write (flush per step), then optionally read and list
    Hammer(HammerArgs),
    /// FDB5 and fieldstore side by side on the same workload and file system, with dd
    Compare(CompareArgs),
    /// Field I/O (the DAOS proof of concept): write/read fields through indexes on the object API
    FieldIo(FieldIoArgs),
    /// IOR "easy": each process writes then reads one array of segments (file/object per process)
    Ior(IorArgs),
    /// Run a benchmark over a grid of process counts, sizes and modes, with repetitions
    Sweep(SweepArgs),
    /// Merge event logs and compute bandwidths, offsets and per-operation times per phase
    Analyze(AnalyzeArgs),
    /// Time listing and retrieving what one request names (a point query): on a fresh handle,
    /// then warm
    Point(PointArgs),
    /// The FDB5 peer's explicit-key workload for one member, through fieldstore, printing the
    /// peer's `phase fields bytes seconds` lines (what `compare` runs in each process)
    ExplicitKeys(ExplicitKeysArgs),
}

#[derive(Args)]
pub struct PointArgs {
    /// The request, e.g. class=od,...,step=500,levelist=3,param=7
    request: String,
    /// Warm repetitions
    #[arg(long, default_value_t = 20)]
    reps: usize,
    #[arg(long)]
    json: bool,
}

#[derive(Args)]
pub struct ExplicitKeysArgs {
    #[arg(long)]
    nsteps: usize,
    #[arg(long)]
    nlevels: usize,
    #[arg(long)]
    nparams: usize,
    #[arg(long)]
    field_size: usize,
    #[arg(long, default_value_t = 1)]
    member: usize,
}

#[derive(Args)]
pub struct HammerArgs {
    #[arg(long, default_value_t = 10)]
    nsteps: usize,
    #[arg(long, default_value_t = 10)]
    nparams: usize,
    #[arg(long, default_value_t = 10)]
    nlevels: usize,
    /// Ensemble members written by this process
    #[arg(long, default_value_t = 1)]
    nensembles: usize,
    /// First ensemble member
    #[arg(long, default_value_t = 1)]
    number: usize,
    /// First step
    #[arg(long, default_value_t = 0)]
    step: usize,
    /// First level
    #[arg(long, default_value_t = 1)]
    level: usize,
    /// Explicit levels, '/'-separated (overrides --level/--nlevels)
    #[arg(long)]
    levels: Option<String>,
    #[arg(long, default_value = "od")]
    class: String,
    #[arg(long, default_value = "0001")]
    expver: String,
    /// Synthetic payload size in bytes (without --template)
    #[arg(long, default_value_t = 1 << 20)]
    field_size: usize,
    /// A GRIB file whose first message is the template (keys set per field with ecCodes)
    #[arg(long)]
    template: Option<PathBuf>,
    /// Read back what the write phase would write (run after a write run)
    #[arg(long)]
    read: bool,
    /// List what the write phase would write
    #[arg(long)]
    list: bool,
    /// Stamp payloads with key digests and operation ids, and verify them on read
    #[arg(long)]
    md_check: bool,
    /// Also checksum every payload, and verify it on read
    #[arg(long)]
    full_check: bool,
    /// Operational mode: writers keep a step window, readers poll list() until a step is
    /// complete and read it while writers go on; with --procs, the first half of the ranks
    /// write and the second half read the same members
    #[arg(long)]
    itt: bool,
    /// Operational mode: seconds per step window
    #[arg(long, default_value_t = 1.0)]
    step_seconds: f64,
    /// Operational mode: longest a reader waits for one step
    #[arg(long, default_value_t = 120.0)]
    poll_timeout: f64,
    #[command(flatten)]
    run: RunArgs,
}

/// How a benchmark runs: processes, barrier, event log, output.
#[derive(Args)]
pub struct RunArgs {
    /// One JSON object per phase
    #[arg(long)]
    json: bool,
    /// Append every I/O of the run (JSON lines) to this file, for `bench analyze`; with
    /// several processes each writes FILE.RANK
    #[arg(long, value_name = "FILE")]
    log: Option<PathBuf>,
    /// Start this many processes on this machine (ranks 0..N-1); under srun or mpirun leave
    /// it out: ranks come from the launcher
    #[arg(long, default_value_t = 1)]
    procs: u32,
    /// How processes line up before the phase: file:DIR, tcp:HOST:PORT or
    /// deadline:MICROSECONDS (default with --procs: a file barrier in a temporary directory)
    #[arg(long)]
    barrier: Option<String>,
}

#[derive(Args)]
pub struct SweepArgs {
    /// ior, field-io or hammer
    #[arg(long, default_value = "ior")]
    benchmark: String,
    /// Process counts, comma-separated
    #[arg(long, default_value = "1,2,4", value_delimiter = ',')]
    procs: Vec<u32>,
    /// Object / field sizes in bytes, comma-separated
    #[arg(long, default_value = "65536,1048576", value_delimiter = ',')]
    sizes: Vec<usize>,
    /// field-io modes, comma-separated
    #[arg(long, default_value = "full", value_delimiter = ',')]
    modes: Vec<String>,
    /// Objects or fields per process
    #[arg(long, default_value_t = 64)]
    count: usize,
    #[arg(long, default_value_t = 3)]
    reps: usize,
    /// Where the logs, the summary (summary.md, summary.json, summary.html) and the data go
    #[arg(long)]
    out: PathBuf,
}

#[derive(Args)]
pub struct FieldIoArgs {
    /// full, no-containers or no-index
    #[arg(long, default_value = "full")]
    mode: String,
    /// Object size in bytes
    #[arg(long, default_value_t = 1 << 20)]
    size: usize,
    /// Fields per process
    #[arg(long, default_value_t = 100)]
    iterations: usize,
    /// One forecast index shared by all processes (contention) instead of one each
    #[arg(long)]
    shared: bool,
    /// Pattern A: write (default) or, with --read, read back. Pattern B: even ranks write new
    /// fields while odd ranks read the previous rank's pre-populated ones (run pattern A's write
    /// first)
    #[arg(long, default_value = "A")]
    pattern: String,
    #[command(flatten)]
    objects: ObjectRunArgs,
}

/// What the object-API benchmarks (field-io, ior) share.
#[derive(Args)]
pub struct ObjectRunArgs {
    /// Read back what a write run wrote
    #[arg(long)]
    read: bool,
    /// Read the next rank's data rather than one's own (IOR's -C), to defeat caches
    #[arg(long)]
    reorder: bool,
    /// The pool: a directory, rados:POOL[/PREFIX] for a Ceph pool (PREFIX starts each container's namespace), or daos:POOL[/PREFIX] for a DAOS pool (PREFIX starts each container's label; default fieldio) (default: objects/ under $FIELDSTORE_ROOT)
    #[arg(long)]
    pool: Option<String>,
    /// The ceph.conf of a rados: pool (default: librados' search, $CEPH_CONF first)
    #[arg(long, value_name = "FILE")]
    ceph_conf: Option<PathBuf>,
    /// The Ceph user of a rados: pool, without "client."
    #[arg(long, default_value = "admin")]
    ceph_user: String,
    /// The libdaos of a daos: pool (default: $FIELDSTORE_DAOS_LIBRARY, else libdaos.so.2)
    #[arg(long, value_name = "FILE")]
    daos_library: Option<String>,
    /// The object class of a daos: pool's key-values and arrays (OC_S1, OC_S2, OC_SX, OC_RP_2G1, OC_EC_2P1G1)
    #[arg(long, default_value = "OC_S1")]
    daos_class: String,
    #[command(flatten)]
    run: RunArgs,
}

impl ObjectRunArgs {
    /// Whose data a reading rank reads.
    fn owner(&self, place: &Place) -> u32 {
        if self.reorder {
            (place.rank + 1) % place.size
        } else {
            place.rank
        }
    }
}

#[derive(Args)]
pub struct IorArgs {
    /// Segments per process (IOR's -s)
    #[arg(long, short = 's', default_value_t = 100)]
    segments: usize,
    /// Bytes per transfer and per block (IOR's -t and -b)
    #[arg(long, short = 't', default_value_t = 1 << 20)]
    transfer: usize,
    #[command(flatten)]
    objects: ObjectRunArgs,
}

#[derive(Args)]
pub struct AnalyzeArgs {
    /// Event logs written by `bench hammer --log` (any number of processes and runs)
    #[arg(required = true)]
    logs: Vec<PathBuf>,
    #[arg(long)]
    json: bool,
    /// Also write an HTML report with plots (bandwidth per phase, per-process timelines)
    #[arg(long, value_name = "FILE")]
    html: Option<PathBuf>,
}

#[derive(Args)]
pub struct CompareArgs {
    /// Directory on the file system to measure (emptied first)
    #[arg(long)]
    root: PathBuf,
    /// The FDB5 peer script
    #[arg(long, default_value = "../shared/peer/fdb5-peer.sh")]
    peer: PathBuf,
    #[arg(long, default_value_t = 100)]
    nsteps: usize,
    #[arg(long, default_value_t = 10)]
    nlevels: usize,
    #[arg(long, default_value_t = 10)]
    nparams: usize,
    #[arg(long, default_value_t = 4096)]
    field_size: usize,
    /// Repetitions (the best of each is reported, with the spread)
    #[arg(long, default_value_t = 3)]
    reps: usize,
    /// Processes of each system running at once (ensemble members 1..=N, one dataset)
    #[arg(long, default_value_t = 1)]
    procs: usize,
    /// Compare archiving a GRIB file (keys decoded by ecCodes) with FDB5's fdb-write instead
    #[arg(long)]
    grib: bool,
    /// How fieldstore's POSIX catalogue makes flushes durable: auto, embedded or ordered
    /// (FDB5's order; see docs/posix-layout.md)
    #[arg(long, default_value = "auto")]
    commit: String,
    /// FDB5 tool runner for --grib
    #[arg(long, default_value = "scripts/fdb5-tool.sh")]
    fdb5_tool: PathBuf,
    #[arg(long)]
    json: bool,
}

pub fn run(command: &BenchCommand, config: Option<&std::path::Path>) -> anyhow::Result<()> {
    match command {
        BenchCommand::Hammer(a) => hammer(a, config),
        BenchCommand::Compare(a) => compare(a),
        BenchCommand::ExplicitKeys(a) => explicit_keys(a, config),
        BenchCommand::Point(a) => point(a, config),
        BenchCommand::Analyze(a) => analyze(a),
        BenchCommand::Ior(a) => ior(a),
        BenchCommand::FieldIo(a) => field_io(a),
        BenchCommand::Sweep(a) => sweep(a),
    }
}

/// Marks processes started by `--procs`, so they do not start processes themselves.
const LAUNCHED: &str = "FIELDSTORE_LAUNCHED";

/// Starts `a.procs` copies of this command as ranks 0..N-1 behind a barrier, and prints each
/// rank's phase and the aggregate.
fn launch(a: &RunArgs) -> anyhow::Result<()> {
    let scratch = tempfile_dir()?;
    let barrier = a.barrier.clone().unwrap_or_else(|| format!("file:{}", scratch.join("barrier").display()));
    let args: Vec<String> = std::env::args().skip(1).collect();
    let children: Vec<_> = (0..a.procs)
        .map(|rank| {
            let mut child_args = strip_option(&args, "--procs");
            child_args = strip_option(&child_args, "--barrier");
            child_args.retain(|arg| arg != "--json");
            child_args.extend(["--barrier".to_string(), barrier.clone(), "--json".to_string()]);
            std::process::Command::new(std::env::current_exe()?)
                .args(&child_args)
                .env(LAUNCHED, "1")
                .env("FIELDSTORE_RANK", rank.to_string())
                .env("FIELDSTORE_SIZE", a.procs.to_string())
                .stdout(std::process::Stdio::piped())
                .spawn()
                .context("starting a hammer process")
        })
        .collect::<anyhow::Result<_>>()?;
    // Every rank is waited for, failed or not: a rank left running after another failed
    // would go on writing while the caller cleans up.
    let outputs: Vec<_> = children.into_iter().map(|child| child.wait_with_output()).collect();
    let _ = std::fs::remove_dir_all(&scratch);
    let mut phases = Vec::new();
    let mut failed = Vec::new();
    for (rank, out) in outputs.into_iter().enumerate() {
        let out = out.with_context(|| format!("waiting for rank {rank}"))?;
        if !out.status.success() {
            failed.push(rank.to_string());
            continue;
        }
        phases.push(serde_json::from_slice::<serde_json::Value>(&out.stdout).with_context(|| format!("rank {rank}'s output"))?);
    }
    if !failed.is_empty() {
        bail!("{} of {} processes failed (rank {}; their errors are above)", failed.len(), a.procs, failed.join(", "));
    }
    if a.json {
        for p in &phases {
            outln!("{p}");
        }
    }
    // One aggregate per mode: pattern B runs writers and readers at once.
    let mut modes: Vec<&str> = phases.iter().filter_map(|p| p["mode"].as_str()).collect();
    modes.sort_unstable();
    modes.dedup();
    for mode in modes {
        let of_mode: Vec<&serde_json::Value> = phases.iter().filter(|p| p["mode"] == mode).collect();
        let sum = |k: &str| of_mode.iter().map(|p| p[k].as_u64().unwrap_or(0)).sum::<u64>();
        let first = of_mode.iter().filter_map(|p| p["first_io_us"].as_u64()).min().unwrap_or(0);
        let last = of_mode.iter().filter_map(|p| p["last_io_us"].as_u64()).max().unwrap_or(0);
        let seconds = last.saturating_sub(first) as f64 / 1e6;
        let (fields, bytes, procs) = (sum("fields"), sum("bytes"), of_mode.len());
        if a.json {
            outln!(
                "{}",
                serde_json::json!({"mode": mode, "procs": procs, "fields": fields, "bytes": bytes, "seconds": seconds, "first_io_us": first, "last_io_us": last})
            );
        } else {
            outln!(
                "{procs} processes, {mode}: {fields} fields, {bytes} bytes in {seconds:.3} s (first to last I/O): {:.0} fields/s, {:.1} MiB/s",
                fields as f64 / seconds,
                bytes as f64 / seconds / 1048576.0
            );
        }
    }
    Ok(())
}

/// `args` without `--name VALUE` / `--name=VALUE`.
fn strip_option(args: &[String], name: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut skip = false;
    for a in args {
        if skip {
            skip = false;
        } else if a == name {
            skip = true;
        } else if !a.starts_with(&format!("{name}=")) {
            out.push(a.clone());
        }
    }
    out
}

fn tempfile_dir() -> anyhow::Result<PathBuf> {
    let dir =
        std::env::temp_dir().join(format!("fieldstore-hammer-{}-{}", std::process::id(), fieldstore_bench::clock::micros_since_epoch()));
    std::fs::create_dir_all(&dir)?;
    Ok(dir)
}

/// Runs one phase in this process, or starts the processes of a `--procs` run.
fn run_phase(run: &RunArgs, phase: impl FnOnce(&Place) -> anyhow::Result<Phase>) -> anyhow::Result<()> {
    if run.procs > 1 && std::env::var_os(LAUNCHED).is_none() {
        return launch(run);
    }
    let place = Place::current();
    fieldstore_bench::hammer::keep_events(run.log.is_some());
    let phase = phase(&place)?;
    if let Some(path) = &run.log {
        let path = if place.size > 1 { PathBuf::from(format!("{}.{}", path.display(), place.rank)) } else { path.clone() };
        append_events(&path, &phase)?;
    }
    print_phase(&phase, run.json)
}

/// Waits at the run's barrier, if any.
fn line_up(run: &RunArgs, place: &Place) -> anyhow::Result<()> {
    if let Some(spec) = &run.barrier {
        Barrier::parse(spec).map_err(anyhow::Error::msg)?.wait(place).map_err(anyhow::Error::msg)?;
    }
    Ok(())
}

/// Runs the grid: for each configuration and repetition, a write run and a read run of the
/// benchmark (this program, `--procs P --log`), then analyzes the logs.
fn sweep(a: &SweepArgs) -> anyhow::Result<()> {
    use fieldstore_bench::analyze::{self, mean_and_spread, IoEvent};
    use fieldstore_bench::report::{sweep_html, SweepRow};
    if !["ior", "field-io", "hammer"].contains(&a.benchmark.as_str()) {
        bail!("--benchmark {:?}: use ior, field-io or hammer", a.benchmark);
    }
    let me = std::env::current_exe()?;
    let modes: Vec<String> = if a.benchmark == "field-io" { a.modes.clone() } else { vec![String::new()] };
    std::fs::create_dir_all(&a.out)?;
    let mut rows = Vec::new();
    for &procs in &a.procs {
        for &size in &a.sizes {
            for mode in &modes {
                // phase -> (global timing, synchronous) per repetition
                let mut per_phase: BTreeMap<String, Vec<(f64, f64)>> = BTreeMap::new();
                for rep in 0..a.reps.max(1) {
                    let run_dir = a.out.join(format!("p{procs}-s{size}{}{}-r{rep}", if mode.is_empty() { "" } else { "-" }, mode));
                    let _ = std::fs::remove_dir_all(&run_dir);
                    std::fs::create_dir_all(&run_dir)?;
                    let log = run_dir.join("events.jsonl");
                    for read in [false, true] {
                        let mut c = std::process::Command::new(&me);
                        c.env("FIELDSTORE_ROOT", run_dir.join("store")).env_remove(LAUNCHED).args(["bench", &a.benchmark]);
                        let count = a.count.to_string();
                        let size_text = size.to_string();
                        match a.benchmark.as_str() {
                            "ior" => c.args(["--pool", &run_dir.join("pool").display().to_string(), "-s", &count, "-t", &size_text]),
                            "field-io" => c.args([
                                "--pool",
                                &run_dir.join("pool").display().to_string(),
                                "--mode",
                                mode,
                                "--iterations",
                                &count,
                                "--size",
                                &size_text,
                            ]),
                            _ => c.args([
                                "--nsteps",
                                &(a.count / 10).max(1).to_string(),
                                "--nlevels",
                                "1",
                                "--nparams",
                                "10",
                                "--field-size",
                                &size_text,
                            ]),
                        };
                        c.args(["--procs", &procs.to_string(), "--log", &log.display().to_string(), "--json"]);
                        if read {
                            c.arg("--read");
                        }
                        let out = c.output()?;
                        if !out.status.success() {
                            bail!(
                                "{} failed for {procs} processes, {size} bytes {mode}: {}",
                                a.benchmark,
                                String::from_utf8_lossy(&out.stderr)
                            );
                        }
                    }
                    let mut events: Vec<IoEvent> = Vec::new();
                    for entry in std::fs::read_dir(&run_dir)? {
                        let path = entry?.path();
                        if path.file_name().is_some_and(|n| n.to_string_lossy().starts_with("events.jsonl")) {
                            for line in std::fs::read_to_string(&path)?.lines().filter(|l| !l.is_empty()) {
                                events.push(serde_json::from_str(line).with_context(|| format!("{}", path.display()))?);
                            }
                        }
                    }
                    for p in analyze::phases(&events) {
                        per_phase.entry(p.phase.clone()).or_default().push((p.global_timing_bandwidth, p.synchronous_bandwidth));
                    }
                    // The data of a repetition is not needed once analyzed.
                    let _ = std::fs::remove_dir_all(run_dir.join("store"));
                    let _ = std::fs::remove_dir_all(run_dir.join("pool"));
                }
                for (phase, values) in per_phase {
                    let (bandwidth_mean, bandwidth_spread) = mean_and_spread(&values.iter().map(|v| v.0).collect::<Vec<_>>());
                    let (synchronous_mean, _) = mean_and_spread(&values.iter().map(|v| v.1).collect::<Vec<_>>());
                    rows.push(SweepRow {
                        procs,
                        size,
                        mode: mode.clone(),
                        phase,
                        reps: values.len(),
                        bandwidth_mean,
                        bandwidth_spread,
                        synchronous_mean,
                    });
                }
            }
        }
    }
    let mut md = String::from("| benchmark | procs | size | mode | phase | reps | global timing MiB/s | ± (sd) | synchronous MiB/s |\n|---|---|---|---|---|---|---|---|---|\n");
    for r in &rows {
        md.push_str(&format!(
            "| {} | {} | {} | {} | {} | {} | {:.1} | {:.1} | {:.1} |\n",
            a.benchmark,
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
    std::fs::write(a.out.join("summary.md"), &md)?;
    std::fs::write(a.out.join("summary.json"), serde_json::to_string_pretty(&rows)?)?;
    std::fs::write(a.out.join("summary.html"), sweep_html(&format!("fieldstore bench sweep: {}", a.benchmark), &rows))?;
    out!("{md}");
    Ok(())
}

/// The object pool of `--pool`, or `objects/` under the default root.
fn object_pool(o: &ObjectRunArgs) -> anyhow::Result<Box<dyn fieldstore::objects::Pool>> {
    let default = || fieldstore::config::default_root().join("objects").display().to_string();
    let spec = o.pool.clone().unwrap_or_else(default);
    let options = fieldstore::ObjectPoolOptions {
        ceph_conf: o.ceph_conf.clone(),
        ceph_user: o.ceph_user.clone(),
        daos_library: o.daos_library.clone(),
        daos_class: o.daos_class.clone(),
    };
    Ok(fieldstore::open_object_pool(&spec, &options)?)
}

fn field_io(a: &FieldIoArgs) -> anyhow::Result<()> {
    use fieldstore_bench::fieldio::{FieldIoBench, Mode};
    let o = &a.objects;
    let pool = object_pool(o)?;
    let mode = Mode::parse(&a.mode).map_err(anyhow::Error::msg)?;
    let bench = FieldIoBench { mode, size: a.size, iterations: a.iterations, shared_forecast: a.shared, first_field: 0 };
    let pattern_b = match a.pattern.as_str() {
        "A" | "a" => false,
        "B" | "b" => true,
        other => bail!("--pattern {other:?}: use A or B"),
    };
    run_phase(&o.run, |place| {
        line_up(&o.run, place)?;
        Ok(match (pattern_b, o.read) {
            (true, _) if place.rank % 2 == 0 => FieldIoBench { first_field: a.iterations, ..bench.clone() }.write(&*pool, place.rank)?,
            (true, _) => bench.read(&*pool, place.rank - 1, place.rank)?,
            (false, false) => bench.write(&*pool, place.rank)?,
            (false, true) => bench.read(&*pool, o.owner(place), place.rank)?,
        })
    })
}

fn ior(a: &IorArgs) -> anyhow::Result<()> {
    let o = &a.objects;
    let pool = object_pool(o)?;
    let ior = fieldstore_bench::ior::Ior { segments: a.segments, transfer: a.transfer };
    run_phase(&o.run, |place| {
        line_up(&o.run, place)?;
        Ok(if o.read { ior.read(&*pool, o.owner(place))? } else { ior.write(&*pool, place.rank)? })
    })
}

fn hammer(a: &HammerArgs, config: Option<&std::path::Path>) -> anyhow::Result<()> {
    run_phase(&a.run, |place| hammer_phase(a, config, place))
}

/// The rank whose members a process handles: its own, or in an operational-mode run with
/// several processes, readers (the second half) take the writer of the first half they follow.
fn role_rank(a: &HammerArgs, place: &Place) -> u32 {
    if a.itt && place.size > 1 && place.rank >= place.size / 2 {
        place.rank - place.size / 2
    } else {
        place.rank
    }
}

fn hammer_phase(a: &HammerArgs, config: Option<&std::path::Path>, place: &Place) -> anyhow::Result<Phase> {
    let check = if a.full_check {
        Check::Full
    } else if a.md_check {
        Check::Metadata
    } else {
        Check::None
    };
    let payload = match &a.template {
        Some(path) => {
            let bytes = std::fs::read(path).with_context(|| format!("reading {}", path.display()))?;
            let spans = fieldstore::grib::scan(&bytes, &path.display().to_string())?;
            let Some(first) = spans.first() else { bail!("{} holds no GRIB message", path.display()) };
            if check != Check::None {
                bail!("--md-check and --full-check need a synthetic payload (--field-size), not a GRIB template");
            }
            Payload::Grib(bytes[first.offset..first.offset + first.length].to_vec())
        }
        None => Payload::Synthetic(fieldstore_bench::payload::synthetic(a.field_size)),
    };
    let h = Hammer {
        class: a.class.clone(),
        expver: a.expver.clone(),
        nsteps: a.nsteps,
        step: a.step,
        nlevels: a.nlevels,
        level: a.level,
        levels: a.levels.as_ref().map(|l| l.split('/').map(str::to_string).collect()),
        nparams: a.nparams,
        params: None,
        nensembles: a.nensembles,
        // Each rank writes its own ensemble members (in operational mode with several
        // processes, the second half of the ranks read the first half's members).
        number: a.number + role_rank(a, place) as usize * a.nensembles.max(1),
        payload,
        check,
        itt: a.itt.then_some(fieldstore_bench::Itt { step_seconds: a.step_seconds, timeout_seconds: a.poll_timeout }),
    };
    let fs = fieldstore::open(&fieldstore::Config::resolve(config)?)?;
    line_up(&a.run, place)?;
    let reads = a.read || (a.itt && place.size > 1 && place.rank >= place.size / 2);
    Ok(if reads {
        h.read(&fs)?
    } else if a.list {
        h.list(&fs)?
    } else {
        h.write(&fs)?
    })
}

/// Appends a phase's I/O events to a JSON-lines log.
fn append_events(path: &std::path::Path, phase: &Phase) -> anyhow::Result<()> {
    use std::io::Write;
    let place = fieldstore_bench::launch::Place::current();
    let file = std::fs::OpenOptions::new().create(true).append(true).open(path).with_context(|| format!("opening {}", path.display()))?;
    let mut out = std::io::BufWriter::new(file);
    for event in phase.io_events(&place.node, place.rank) {
        serde_json::to_writer(&mut out, &event)?;
        out.write_all(b"\n")?;
    }
    out.flush().with_context(|| format!("writing {}", path.display()))
}

/// Reads event logs and prints each phase's metrics.
fn analyze(a: &AnalyzeArgs) -> anyhow::Result<()> {
    use fieldstore_bench::analyze::{self, IoEvent};
    let mut events = Vec::new();
    for path in &a.logs {
        let text = std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
        for (n, line) in text.lines().enumerate().filter(|(_, l)| !l.trim().is_empty()) {
            let event: IoEvent = serde_json::from_str(line).with_context(|| format!("{}:{}: not an event", path.display(), n + 1))?;
            events.push(event);
        }
    }
    let phases = analyze::phases(&events);
    let overlap = analyze::overlap(&events, "write", "read");
    if let Some(path) = &a.html {
        let names: Vec<String> = a.logs.iter().map(|p| p.display().to_string()).collect();
        let title = format!("fieldstore benchmark: {}", names.join(", "));
        std::fs::write(path, fieldstore_bench::report::html(&title, &phases, &events, overlap.as_ref()))
            .with_context(|| format!("writing {}", path.display()))?;
    }
    if a.json {
        outln!("{}", serde_json::to_string_pretty(&serde_json::json!({"phases": phases, "overlap": overlap}))?);
        return Ok(());
    }
    outln!("| {} |", analyze::PhaseMetrics::COLUMNS.join(" | "));
    outln!("|{}", "---|".repeat(analyze::PhaseMetrics::COLUMNS.len()));
    for p in &phases {
        outln!("| {} |", p.cells().join(" | "));
    }
    for p in &phases {
        let ops: Vec<String> = p.breakdown.iter().map(|(op, s)| format!("{op} {s:.3} s")).collect();
        outln!("{}: mean per process: {}", p.phase, ops.join(", "));
    }
    if let Some(o) = overlap {
        outln!("write/read overlap: po_0 {:.2} %, po_f {:.2} %", o.po_0, o.po_f);
    }
    Ok(())
}

fn print_phase(p: &Phase, json: bool) -> anyhow::Result<()> {
    if json {
        outln!("{}", serde_json::to_string(p)?);
    } else {
        outln!(
            "{}: {} fields, {} bytes in {:.3} s: {:.0} fields/s, {:.1} MiB/s",
            p.mode,
            p.fields,
            p.bytes,
            p.seconds,
            p.fields_per_second(),
            p.bytes_per_second() / (1 << 20) as f64
        );
        for (k, v) in &p.breakdown {
            outln!("  {k}: {v:.3} s");
        }
        if let (Some(first), Some(last)) = (p.first_window_rate, p.last_window_rate) {
            outln!("  first 10,000 fields: {first:.0} fields/s; last 10,000: {last:.0} fields/s ({:+.1}%)", 100.0 * (last / first - 1.0));
        }
    }
    Ok(())
}

/// `fdb-write` against `fieldstore archive` on one GRIB file, both as whole processes.
fn compare_grib(a: &CompareArgs, w: &Workload) -> anyhow::Result<()> {
    std::fs::create_dir_all(&a.root)?;
    let file = a.root.join("workload.grib");
    let bytes = compare::write_grib_workload(&file, w).map_err(anyhow::Error::msg)?;
    let me = std::env::current_exe()?;
    let (mut fdb5, mut ours) = (Vec::new(), Vec::new());
    for _ in 0..a.reps.max(1) {
        let (fdb5_root, our_root) = (a.root.join("fdb5"), a.root.join("fieldstore"));
        compare::clear(&fdb5_root);
        compare::clear(&our_root);
        let args = [fdb5_root.as_os_str(), "fdb-write".as_ref(), file.as_os_str()];
        fdb5.push(compare::time_command(&a.fdb5_tool, &args).map_err(anyhow::Error::msg)?);
        let config = compare::peer_config(&our_root, &a.commit).map_err(anyhow::Error::msg)?;
        let args = ["--config".as_ref(), config.as_os_str(), "archive".as_ref(), file.as_os_str()];
        ours.push(compare::time_command(&me, &args).map_err(anyhow::Error::msg)?);
    }
    let best = |v: &[f64]| v.iter().cloned().fold(f64::INFINITY, f64::min);
    let (f, o) = (best(&fdb5), best(&ours));
    if a.json {
        let out = serde_json::json!({"workload": w, "grib_bytes": bytes, "fdb_write_seconds": f, "fieldstore_archive_seconds": o, "speedup": f / o, "reps": a.reps});
        outln!("{}", serde_json::to_string_pretty(&out)?);
    } else {
        outln!("GRIB file of {} messages ({bytes} bytes), best of {} on {}", w.fields(), a.reps, a.root.display());
        outln!("| tool | seconds | fields/s |\n|---|---|---|");
        outln!("| fdb-write | {f:.3} | {:.0} |", w.fields() as f64 / f);
        outln!("| fieldstore archive | {o:.3} | {:.0} |", w.fields() as f64 / o);
        outln!("speed-up: {:.2}x", f / o);
    }
    Ok(())
}

/// Picks one phase's seconds out of a run's timings.
type PhaseTime = fn(&Timings) -> f64;

/// Best and worst of repeated timings, per phase.
fn spread(runs: &[Timings], get: PhaseTime) -> (f64, f64) {
    let values: Vec<f64> = runs.iter().map(get).collect();
    (values.iter().cloned().fold(f64::INFINITY, f64::min), values.iter().cloned().fold(0.0, f64::max))
}

/// Milliseconds to list and to retrieve a request: the first on a fresh handle (which reads
/// the catalogue), then the median of warm repetitions.
fn point(a: &PointArgs, config: Option<&std::path::Path>) -> anyhow::Result<()> {
    use std::io::Read;
    use std::time::Instant;
    let request = fieldstore::Request::parse(&a.request)?;
    let config = fieldstore::Config::resolve(config)?;
    let mut timings: Vec<(f64, f64)> = Vec::new();
    let fs = fieldstore::open(&config)?;
    let mut fields = 0;
    for _ in 0..=a.reps {
        let t = Instant::now();
        let listed = fs.list(&request, fieldstore::ListOptions::default())?;
        let list_ms = t.elapsed().as_secs_f64() * 1e3;
        if let Some(why) = listed.explanation {
            bail!("nothing matched {}: {why}", a.request);
        }
        let t = Instant::now();
        let (mut reader, _) = fs.retrieve(&request)?;
        let mut bytes = Vec::new();
        reader.read_to_end(&mut bytes)?;
        fields = reader.fields().len();
        timings.push((list_ms, t.elapsed().as_secs_f64() * 1e3));
    }
    let (cold, warm) = timings.split_first().expect("at least one run");
    let median = |f: fn(&(f64, f64)) -> f64| {
        let mut v: Vec<f64> = warm.iter().map(f).collect();
        v.sort_by(f64::total_cmp);
        v.get(v.len() / 2).copied().unwrap_or(f64::NAN)
    };
    let (list_warm, retrieve_warm) = (median(|t| t.0), median(|t| t.1));
    if a.json {
        let out = serde_json::json!({"request": a.request, "fields": fields, "list_cold_ms": cold.0, "retrieve_cold_ms": cold.1, "list_warm_ms": list_warm, "retrieve_warm_ms": retrieve_warm});
        outln!("{}", serde_json::to_string_pretty(&out)?);
    } else {
        outln!(
            "{fields} field(s): list {:.3} ms cold, {list_warm:.3} ms warm; retrieve {:.3} ms cold, {retrieve_warm:.3} ms warm",
            cold.0,
            cold.1
        );
    }
    Ok(())
}

fn explicit_keys(a: &ExplicitKeysArgs, config: Option<&std::path::Path>) -> anyhow::Result<()> {
    let w = Workload { nsteps: a.nsteps, nlevels: a.nlevels, nparams: a.nparams, field_size: a.field_size, member: a.member };
    let config = config.context("bench explicit-keys needs --config (see bench compare)")?;
    let t = compare::run_fieldstore(config, &w).map_err(anyhow::Error::msg)?;
    let (n, bytes) = (w.fields(), w.fields() * w.field_size);
    outln!("archive {n} {bytes} {:.6}\nlist {n} {bytes} {:.6}\nretrieve {n} {bytes} {:.6}", t.archive, t.list, t.retrieve);
    Ok(())
}

fn compare(a: &CompareArgs) -> anyhow::Result<()> {
    let w = Workload { nsteps: a.nsteps, nlevels: a.nlevels, nparams: a.nparams, field_size: a.field_size, member: 1 };
    if a.grib {
        return compare_grib(a, &w);
    }
    let me = std::env::current_exe()?;
    let (mut fdb5, mut ours) = (Vec::new(), Vec::new());
    for rep in 0..a.reps.max(1) {
        // Alternate who goes first, so neither always meets a warmer cache.
        for fdb5_turn in [rep % 2 == 0, rep % 2 == 1] {
            let dir = a.root.join(if fdb5_turn { "fdb5" } else { "fieldstore" });
            compare::clear(&dir);
            if fdb5_turn {
                let members = 1..=a.procs.max(1);
                let commands = members.map(|m| compare::fdb5_command(&a.peer, &dir, &w, m, a.procs > 1)).collect::<Result<_, _>>();
                fdb5.push(compare::run_group(commands.map_err(anyhow::Error::msg)?, &w).map_err(anyhow::Error::msg)?);
            } else {
                let config = compare::peer_config(&dir, &a.commit).map_err(anyhow::Error::msg)?;
                let worker = |m: usize| {
                    let mut c = std::process::Command::new(&me);
                    c.arg("--config").arg(&config).args(["bench", "explicit-keys"]);
                    c.args(["--nsteps", &w.nsteps.to_string(), "--nlevels", &w.nlevels.to_string(), "--nparams", &w.nparams.to_string()]);
                    c.args(["--field-size", &w.field_size.to_string(), "--member", &m.to_string()]);
                    c
                };
                ours.push(compare::run_group((1..=a.procs.max(1)).map(worker).collect(), &w).map_err(anyhow::Error::msg)?);
            }
            compare::clear(&dir);
        }
    }
    let total_bytes = w.fields() * w.field_size * a.procs.max(1);
    let dd = compare::dd_write(&a.root, total_bytes).map_err(anyhow::Error::msg)?;
    let phases: [(&str, PhaseTime); 3] = [("archive+flush", |t| t.archive), ("list", |t| t.list), ("retrieve", |t| t.retrieve)];
    let rows: Vec<serde_json::Value> = phases
        .iter()
        .map(|(name, get)| {
            let (f_best, f_worst) = spread(&fdb5, *get);
            let (o_best, o_worst) = spread(&ours, *get);
            serde_json::json!({
                "phase": name, "fdb5_seconds": f_best, "fdb5_worst": f_worst,
                "fieldstore_seconds": o_best, "fieldstore_worst": o_worst, "speedup": f_best / o_best,
            })
        })
        .collect();
    let archive_bw = total_bytes as f64 / spread(&ours, |t| t.archive).0;
    let fdb5_bw = total_bytes as f64 / spread(&fdb5, |t| t.archive).0;
    if a.json {
        let out = serde_json::json!({
            "workload": w, "procs": a.procs, "root": a.root, "reps": a.reps, "phases": rows,
            "dd_write_bytes_per_second": dd, "fieldstore_archive_bytes_per_second": archive_bw, "fdb5_archive_bytes_per_second": fdb5_bw,
        });
        outln!("{}", serde_json::to_string_pretty(&out)?);
        return Ok(());
    }
    outln!(
        "{} processes x {} fields x {} bytes, one flush per step ({} steps), best of {} on {}",
        a.procs,
        w.fields(),
        w.field_size,
        w.nsteps,
        a.reps,
        a.root.display()
    );
    outln!("| phase | FDB5 s (worst) | fieldstore s (worst) | speed-up |");
    outln!("|---|---|---|---|");
    for r in &rows {
        outln!(
            "| {} | {:.4} ({:.4}) | {:.4} ({:.4}) | {:.2}x |",
            r["phase"].as_str().unwrap(),
            r["fdb5_seconds"].as_f64().unwrap(),
            r["fdb5_worst"].as_f64().unwrap(),
            r["fieldstore_seconds"].as_f64().unwrap(),
            r["fieldstore_worst"].as_f64().unwrap(),
            r["speedup"].as_f64().unwrap()
        );
    }
    let mib = |b: f64| b / 1048576.0;
    outln!(
        "archive+flush bandwidth: fieldstore {:.0} MiB/s, FDB5 {:.0} MiB/s; dd 1 MiB blocks + fdatasync: {:.0} MiB/s (fieldstore at {:.0}% of dd)",
        mib(archive_bw),
        mib(fdb5_bw),
        mib(dd),
        100.0 * archive_bw / dd
    );
    Ok(())
}
