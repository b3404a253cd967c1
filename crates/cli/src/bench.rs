//! `fieldstore bench ...`: the benchmark suite's command line.

use std::path::PathBuf;

use anyhow::{bail, Context};
use clap::{Args, Subcommand};
use fieldstore::ErrorKind;
use fieldstore_bench::compare::{self, Comparison, Workload};
use fieldstore_bench::fieldio::Mode;
use fieldstore_bench::ior::Api;
use fieldstore_bench::launch::{Barrier, Place, LAUNCHED};
use fieldstore_bench::roles::{Pattern, Role};
use fieldstore_bench::sweep::{Benchmark, Index, Sweep};
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
    /// Many clients of one store at once (a server's load test): listing, retrieving and
    /// archiving for a bounded time, every byte checked, latencies as percentiles
    Load(LoadArgs),
    /// The FDB5 peer's explicit-key workload for one member, through fieldstore, printing the
    /// peer's `phase fields bytes seconds` lines (what `compare` runs in each process)
    ExplicitKeys(ExplicitKeysArgs),
    /// The S3 baselines on the config's S3 store: a raw PUT/GET loop with the same client, or
    /// (--list) a LIST and HEADs of a data set's field objects
    S3Raw(S3RawArgs),
}

#[derive(Args)]
pub struct S3RawArgs {
    /// Objects to PUT, then GET
    #[arg(long, value_parser = shown(count), default_value_t = 1000)]
    objects: usize,
    /// Bytes per object
    #[arg(long, value_parser = shown(field_bytes), default_value_t = 1048576)]
    size: usize,
    /// Requests in flight
    #[arg(long, value_parser = shown(count), default_value_t = 1)]
    in_flight: usize,
    /// GET only these bytes of each object, START-END (end excluded): an extraction's reads
    #[arg(long, value_parser = shown(byte_range))]
    range: Option<std::ops::Range<u64>>,
    /// Instead: list this data set's field objects (its key, e.g. class=od,expver=0001,...)
    /// and HEAD each
    #[arg(long)]
    list: Option<String>,
    #[arg(long)]
    json: bool,
}

#[derive(Args)]
pub struct LoadArgs {
    /// Clients at once, each a thread with its own handle (its own connections to a server)
    #[arg(long, value_parser = shown(count), default_value_t = 200)]
    clients: usize,
    /// How many of the clients archive (default: a tenth); the others list and retrieve
    #[arg(long)]
    archivers: Option<usize>,
    /// Seconds the clients work
    #[arg(long, default_value_t = 10.0)]
    seconds: f64,
    /// Bytes per field
    #[arg(long, value_parser = shown(field_bytes), default_value_t = 4096)]
    field_size: usize,
    /// Levels of the step the readers read (10 parameters each)
    #[arg(long, value_parser = shown(count), default_value_t = 10)]
    levels: usize,
    /// Fields an archiver writes per flush
    #[arg(long, value_parser = shown(count), default_value_t = 10)]
    batch: usize,
    /// Seconds from the start of an archiver's round to its next (each flush adds an index
    /// that later lists of the data set read)
    #[arg(long, default_value_t = 0.1)]
    interval: f64,
    #[arg(long)]
    json: bool,
}

#[derive(Args)]
pub struct PointArgs {
    /// The request, e.g. class=od,...,step=500,levelist=3,param=7
    request: String,
    /// Warm repetitions
    #[arg(long, value_parser = shown(count), default_value_t = 20)]
    reps: usize,
    #[arg(long)]
    json: bool,
}

#[derive(Args)]
pub struct ExplicitKeysArgs {
    #[arg(long, value_parser = shown(count))]
    nsteps: usize,
    #[arg(long, value_parser = shown(count))]
    nlevels: usize,
    #[arg(long, value_parser = shown(count))]
    nparams: usize,
    #[arg(long, value_parser = shown(field_bytes))]
    field_size: usize,
    #[arg(long, default_value_t = 1)]
    member: usize,
    /// Only list and retrieve what an earlier run archived (a reader process of its own)
    #[arg(long)]
    read: bool,
}

#[derive(Args)]
pub struct HammerArgs {
    #[arg(long, value_parser = shown(count), default_value_t = 10)]
    nsteps: usize,
    #[arg(long, value_parser = shown(count), default_value_t = 10)]
    nparams: usize,
    #[arg(long, value_parser = shown(count), default_value_t = 10)]
    nlevels: usize,
    /// Ensemble members written by this process
    #[arg(long, value_parser = shown(count), default_value_t = 1)]
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
    #[arg(long, value_parser = shown(field_bytes), default_value_t = 1 << 20)]
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
    /// Pattern B (write+read contention), after a write run of half the processes: the first
    /// half of the ranks write the steps after those while the second half read them back,
    /// each following the writer of the first half it pairs with
    #[arg(long, value_enum, default_value = "A")]
    pattern: Pattern,
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
    #[arg(long, value_parser = shown(processes), default_value_t = 1)]
    procs: u32,
    /// How processes line up before the phase: file:DIR, tcp:HOST:PORT or
    /// deadline:MICROSECONDS (default with --procs: a file barrier in a temporary directory)
    #[arg(long)]
    barrier: Option<String>,
}

#[derive(Args)]
pub struct SweepArgs {
    #[arg(long, value_enum, default_value = "ior")]
    benchmark: Benchmark,
    /// ior's interface: the pool's own, or hdf5: an HDF5 file per process (as `bench ior
    /// --api hdf5`; the sweep's benchmark is then named ior-hdf5)
    #[arg(long, value_enum, default_value = "pool")]
    api: Api,
    /// Process counts, comma-separated
    #[arg(long, value_parser = shown(processes), default_value = "1,2,4", value_delimiter = ',')]
    procs: Vec<u32>,
    /// Object / field sizes in bytes, comma-separated
    #[arg(long, value_parser = shown(field_bytes), default_value = "65536,1048576", value_delimiter = ',')]
    sizes: Vec<usize>,
    /// field-io modes, comma-separated
    #[arg(long, value_enum, default_value = "full", value_delimiter = ',')]
    modes: Vec<Mode>,
    /// Access patterns, comma-separated: A (write, then read another's) and B (pre-populate,
    /// then half write while half read)
    #[arg(long, value_enum, default_value = "A", value_delimiter = ',')]
    patterns: Vec<Pattern>,
    /// field-io's forecast index, comma-separated: per-process and/or shared (contention)
    #[arg(long, value_enum, default_value = "per-process", value_delimiter = ',')]
    index: Vec<Index>,
    /// DAOS object classes, comma-separated (a daos: --pool only), e.g. OC_S1,OC_RP_2G1,OC_EC_2P1G1
    #[arg(long, value_delimiter = ',')]
    classes: Vec<String>,
    /// Objects or fields per process: one for every size, or one per size, comma-separated in
    /// --sizes' order (small sizes need more to run long enough to measure)
    #[arg(long, value_parser = shown(count), default_value = "64", value_delimiter = ',')]
    count: Vec<usize>,
    #[arg(long, value_parser = shown(count), default_value_t = 3)]
    reps: usize,
    /// ior's and field-io's pool, as for those benchmarks (each run gets a place of its own
    /// in it); default: a directory in each run's
    #[arg(long)]
    pool: Option<String>,
    /// The sweep's name in reports comparing sweeps (default: BENCHMARK on BACKEND)
    #[arg(long)]
    label: Option<String>,
    /// Server nodes of the storage system measured, for scalability figures across sweeps
    #[arg(long, default_value_t = 1)]
    servers: u32,
    /// Where the runs' logs, the summary (summary.md, summary.json, summary.html) and the
    /// data go; `bench analyze` reads it
    #[arg(long)]
    out: PathBuf,
}

#[derive(Args)]
pub struct FieldIoArgs {
    #[arg(long, value_enum, default_value = "full")]
    mode: Mode,
    /// Object size in bytes
    #[arg(long, value_parser = shown(field_bytes), default_value_t = 1 << 20)]
    size: usize,
    /// Fields per process
    #[arg(long, value_parser = shown(count), default_value_t = 100)]
    iterations: usize,
    /// One forecast index shared by all processes (contention) instead of one each
    #[arg(long)]
    shared: bool,
    /// Pattern A: write (default) or, with --read, read back. Pattern B: even ranks write new
    /// fields while odd ranks read the previous rank's pre-populated ones (run pattern A's write
    /// first)
    #[arg(long, value_enum, default_value = "A")]
    pattern: Pattern,
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
    /// The pool: a directory, rados:POOL[/PREFIX] for a Ceph pool (PREFIX starts each container's namespace), daos:POOL[/PREFIX] for a DAOS pool (PREFIX starts each container's label; default fieldio), or s3:BUCKET[/PREFIX] for an S3 bucket at $AWS_ENDPOINT_URL (default: objects/ under $FIELDSTORE_ROOT)
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

#[derive(Args)]
pub struct IorArgs {
    /// Segments per process (IOR's -s)
    #[arg(long, value_parser = shown(count), short = 's', default_value_t = 100)]
    segments: usize,
    /// Bytes per transfer and per block (IOR's -t and -b)
    #[arg(long, value_parser = shown(field_bytes), short = 't', default_value_t = 1 << 20)]
    transfer: usize,
    /// The interface (IOR's -a): the pool's own, or hdf5: an HDF5 file per process in a
    /// directory --pool, a dataset per segment, as IOR's -a HDF5 -F
    #[arg(long, value_enum, default_value = "pool")]
    api: Api,
    /// With --read: compare every byte read with what was written (IOR's -R), not one value
    /// of each 4 KiB page
    #[arg(long)]
    check: bool,
    #[command(flatten)]
    objects: ObjectRunArgs,
}

#[derive(Args)]
pub struct AnalyzeArgs {
    /// Event logs written by a benchmark's --log (any number of processes of one run), or
    /// sweep directories written by `bench sweep` (several are compared in one report)
    #[arg(required = true)]
    paths: Vec<PathBuf>,
    #[arg(long)]
    json: bool,
    /// Also write an HTML report with the figures (offline: one file)
    #[arg(long, value_name = "FILE")]
    html: Option<PathBuf>,
    /// Also write each figure as DIR/ID.png, for papers
    #[arg(long, value_name = "DIR")]
    png: Option<PathBuf>,
    /// Of sweep directories, only the configurations and phases with these values, as in a
    /// request: KEY=VALUE[/VALUE...],... over sweep, benchmark, backend, servers, procs, size,
    /// mode, pattern, index, class, phase (e.g. pattern=A,index=per-process; - for none:
    /// mode=full/- keeps field-io's full mode and the benchmarks without modes)
    #[arg(long, value_name = "REQUEST")]
    select: Option<String>,
    /// The report's title (default: the sweeps' labels, or the logs' names)
    #[arg(long)]
    title: Option<String>,
}

#[derive(Args)]
pub struct CompareArgs {
    /// Directory on the file system to measure (emptied first)
    #[arg(long)]
    root: PathBuf,
    /// The FDB5 peer script
    #[arg(long, default_value = "../shared/peer/fdb5-peer.sh")]
    peer: PathBuf,
    #[arg(long, value_parser = shown(count), default_value_t = 100)]
    nsteps: usize,
    #[arg(long, value_parser = shown(count), default_value_t = 10)]
    nlevels: usize,
    #[arg(long, value_parser = shown(count), default_value_t = 10)]
    nparams: usize,
    #[arg(long, value_parser = shown(field_bytes), default_value_t = 4096)]
    field_size: usize,
    /// Repetitions (the best of each is reported, with the spread)
    #[arg(long, value_parser = shown(count), default_value_t = 3)]
    reps: usize,
    /// Processes of each system running at once (ensemble members 1..=N, one dataset)
    #[arg(long, value_parser = shown(count), default_value_t = 1)]
    procs: usize,
    /// Compare archiving a GRIB file (keys decoded by ecCodes) with FDB5's fdb-write instead
    #[arg(long)]
    grib: bool,
    /// How fieldstore's POSIX catalogue makes flushes durable (see docs/posix-layout.md)
    #[arg(long, value_enum, default_value = "auto")]
    commit: compare::Commit,
    /// FDB5 tool runner for --grib
    #[arg(long, default_value = "scripts/fdb5-tool.sh")]
    fdb5_tool: PathBuf,
    /// FDB5's harness (`fdb5_keybench.c`) built against fieldstore's C API, run as a third
    /// system (scripts/c-bench.sh builds it)
    #[arg(long)]
    c_harness: Option<PathBuf>,
    /// Also read what FDB5 wrote with fieldstore, in place (new processes reading FDB5's
    /// databases through `type: fdb5`), against FDB5's own new readers
    #[arg(long)]
    in_place: bool,
    /// Also copy what each system wrote into another store of its own (FDB5's fdb-copy,
    /// fieldstore copy; with --in-place also fieldstore copy of FDB5's databases), new
    /// processes, against fieldstore's retrieve and archive done apart (one process)
    #[arg(long)]
    copy: bool,
    /// Run each system through its servers on loopback: FDB5's fdb-server (a catalogue and a
    /// store server) and `fieldstore serve`, started for each repetition
    #[arg(long)]
    remote: bool,
    #[arg(long)]
    json: bool,
}

/// The largest field or object a benchmark makes (each is held in memory at once).
const MAX_FIELD_BYTES: usize = 1 << 30;
/// The largest count a benchmark argument takes.
const MAX_COUNT: usize = 1_000_000;

/// An argument parser as clap takes it: clap prints an error's own message only, so it is
/// given the whole chain (the number parser's error after the argument's).
fn shown<T: Clone + Send + Sync + 'static>(
    parse: fn(&str) -> fieldstore::Result<T>,
) -> impl Fn(&str) -> Result<T, String> + Clone + Send + Sync + 'static {
    move |text| parse(text).map_err(|e| e.report().to_string())
}

/// An argument that is not a number: what it should be, and the parser's error.
fn not_a_number(text: &str, what: &str, cause: std::num::ParseIntError) -> fieldstore::Error {
    fieldstore::Error::caused_by(ErrorKind::BadRequest, format!("{text:?} is not {what}"), cause)
}

/// A number argument out of its bounds.
fn out_of_bounds(message: String) -> fieldstore::Error {
    fieldstore::Error::new(ErrorKind::BadRequest, message)
}

/// A byte size argument, bounded before it sizes an allocation.
fn field_bytes(text: &str) -> fieldstore::Result<usize> {
    let bytes: usize = text.parse().map_err(|e| not_a_number(text, "a number of bytes", e))?;
    match bytes <= MAX_FIELD_BYTES {
        true => Ok(bytes),
        false => Err(out_of_bounds(format!("{bytes} bytes is more than the {MAX_FIELD_BYTES} (1 GiB) a benchmark's field may hold"))),
    }
}

/// A range of bytes, `START-END` (end excluded), not empty.
fn byte_range(text: &str) -> fieldstore::Result<std::ops::Range<u64>> {
    let (start, end) = text.split_once('-').ok_or_else(|| out_of_bounds(format!("{text:?} is not a range of bytes START-END")))?;
    let start: u64 = start.parse().map_err(|e| not_a_number(start, "a byte offset", e))?;
    let end: u64 = end.parse().map_err(|e| not_a_number(end, "a byte offset", e))?;
    match start < end {
        true => Ok(start..end),
        false => Err(out_of_bounds(format!("{text}: the range holds no byte (its end is excluded)"))),
    }
}

/// The most processes a benchmark starts on one machine.
const MAX_PROCESSES: u32 = 4096;

/// A number of processes, at least 1 and bounded before any is started.
fn processes(text: &str) -> fieldstore::Result<u32> {
    let n: u32 = text.parse().map_err(|e| not_a_number(text, "a number of processes", e))?;
    match n {
        1..=MAX_PROCESSES => Ok(n),
        _ => Err(out_of_bounds(format!("{n} processes: a benchmark starts 1 to {MAX_PROCESSES} on one machine"))),
    }
}

/// A count argument, bounded before it sizes a loop or an allocation.
pub(crate) fn count(text: &str) -> fieldstore::Result<usize> {
    let n: usize = text.parse().map_err(|e| not_a_number(text, "a count", e))?;
    match n <= MAX_COUNT {
        true => Ok(n),
        false => Err(out_of_bounds(format!("{n} is more than the {MAX_COUNT} a benchmark counts to"))),
    }
}

/// The bytes of `counts` multiplied, fields of `field_size` bytes each, or an error where they
/// would not fit in 64 bits.
pub(crate) fn workload_bytes(counts: &[usize], field_size: usize) -> anyhow::Result<u64> {
    let total = counts.iter().chain([&field_size]).try_fold(1u64, |acc, &n| acc.checked_mul(n as u64));
    total.with_context(|| {
        format!(
            "a workload of {} fields of {field_size} bytes is more than 2^64 bytes",
            counts.iter().map(usize::to_string).collect::<Vec<_>>().join(" x ")
        )
    })
}

pub fn run(command: &BenchCommand, config: Option<&std::path::Path>) -> anyhow::Result<()> {
    match command {
        BenchCommand::Hammer(a) => hammer(a, config),
        BenchCommand::Compare(a) => compare(a),
        BenchCommand::ExplicitKeys(a) => explicit_keys(a, config),
        BenchCommand::Point(a) => point(a, config),
        BenchCommand::Load(a) => load(a, config),
        BenchCommand::S3Raw(a) => s3_raw(a, config),
        BenchCommand::Analyze(a) => analyze(a),
        BenchCommand::Ior(a) => ior(a),
        BenchCommand::FieldIo(a) => field_io(a),
        BenchCommand::Sweep(a) => sweep(a, config),
    }
}

/// Starts `a.procs` copies of this command as ranks 0..N-1 behind a barrier, and prints each
/// rank's phase and the aggregate.
fn launch(a: &RunArgs) -> anyhow::Result<()> {
    let scratch = tempfile_dir()?;
    let args: Vec<String> = std::env::args().skip(1).collect();
    let launched = fieldstore_bench::launch::launch_ranks(a.procs, a.barrier.as_deref(), &args, &scratch);
    let _ = std::fs::remove_dir_all(&scratch);
    let launched = launched?;
    if a.json {
        for p in &launched.phases {
            outln!("{p}");
        }
    }
    for g in &launched.aggregates {
        if a.json {
            outln!("{}", serde_json::to_string(g)?);
        } else {
            outln!(
                "{} processes, {}: {} fields, {} bytes in {:.3} s (first to last I/O): {:.0} fields/s, {:.1} MiB/s",
                g.procs,
                g.mode,
                g.fields,
                g.bytes,
                g.seconds,
                g.fields as f64 / g.seconds,
                g.bytes as f64 / g.seconds / 1048576.0
            );
        }
    }
    Ok(())
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
    if let Some(file) = &run.log {
        phase.append_events(&place.event_log(file), &place)?;
    }
    print_phase(&phase, run.json)
}

/// Waits at the run's barrier, if any.
fn line_up(run: &RunArgs, place: &Place) -> anyhow::Result<()> {
    if let Some(spec) = &run.barrier {
        Barrier::parse(spec)?.wait(place)?;
    }
    Ok(())
}

/// Runs the grid (fieldstore_bench::sweep) with this program and prints its summary.
fn sweep(a: &SweepArgs, config: Option<&std::path::Path>) -> anyhow::Result<()> {
    let sweep = Sweep {
        benchmark: a.benchmark,
        api: a.api,
        procs: a.procs.clone(),
        sizes: a.sizes.clone(),
        modes: a.modes.clone(),
        patterns: a.patterns.clone(),
        indexes: a.index.clone(),
        classes: a.classes.clone(),
        counts: a.count.clone(),
        reps: a.reps,
        pool: a.pool.clone(),
        config: config.map(std::path::Path::to_path_buf),
        label: a.label.clone(),
        servers: a.servers,
        out: a.out.clone(),
    };
    let (_, md) = sweep.run(&std::env::current_exe()?)?;
    out!("{md}");
    Ok(())
}

/// `--pool`, or `objects/` under the default root.
fn pool_spec(o: &ObjectRunArgs) -> String {
    o.pool.clone().unwrap_or_else(|| fieldstore::config::default_root().join("objects").display().to_string())
}

/// The object pool of `--pool`, or `objects/` under the default root.
fn object_pool(o: &ObjectRunArgs) -> anyhow::Result<Box<dyn fieldstore::objects::Pool>> {
    let spec = pool_spec(o);
    let options = fieldstore::ObjectPoolOptions {
        ceph_conf: o.ceph_conf.clone(),
        ceph_user: o.ceph_user.clone(),
        daos_library: o.daos_library.clone(),
        daos_class: o.daos_class.clone(),
    };
    Ok(fieldstore::open_object_pool(&spec, &options)?)
}

fn field_io(a: &FieldIoArgs) -> anyhow::Result<()> {
    use fieldstore_bench::fieldio::FieldIoBench;
    let o = &a.objects;
    let pool = object_pool(o)?;
    let bench = FieldIoBench { mode: a.mode, size: a.size, iterations: a.iterations, shared_forecast: a.shared, first_field: 0 };
    run_phase(&o.run, |place| {
        line_up(&o.run, place)?;
        Ok(bench.run(&*pool, Role::of_pairs(place, a.pattern, o.read, o.reorder), place.rank)?)
    })
}

fn ior(a: &IorArgs) -> anyhow::Result<()> {
    let o = &a.objects;
    let ior = fieldstore_bench::ior::Ior { segments: a.segments, transfer: a.transfer, every_byte: a.check };
    ior.check(a.api)?;
    if a.check && !o.read {
        bail!("--check compares what a read reads: it goes with --read");
    }
    let role = |place: &Place| Role::of_pairs(place, Pattern::A, o.read, o.reorder);
    match a.api {
        Api::Pool => {
            let pool = object_pool(o)?;
            run_phase(&o.run, |place| {
                line_up(&o.run, place)?;
                Ok(ior.run(&*pool, role(place))?)
            })
        }
        Api::Hdf5 => {
            let dir = fieldstore_bench::ior::hdf5_directory(&pool_spec(o))?;
            run_phase(&o.run, |place| {
                line_up(&o.run, place)?;
                Ok(ior.run_hdf5(&dir, role(place))?)
            })
        }
    }
}

fn hammer(a: &HammerArgs, config: Option<&std::path::Path>) -> anyhow::Result<()> {
    run_phase(&a.run, |place| hammer_phase(a, config, place))
}

fn hammer_phase(a: &HammerArgs, config: Option<&std::path::Path>, place: &Place) -> anyhow::Result<Phase> {
    let check = if a.full_check {
        Check::Full
    } else if a.md_check {
        Check::Metadata
    } else {
        Check::None
    };
    workload_bytes(&[a.nsteps, a.nlevels, a.nparams, a.nensembles], a.field_size)?;
    let payload = match &a.template {
        Some(_) if check != Check::None => {
            bail!("--md-check and --full-check need a synthetic payload (--field-size), not a GRIB template")
        }
        Some(path) => Payload::from_template(path, &a.class, &a.expver)?,
        None => Payload::Synthetic(fieldstore_bench::payload::synthetic(a.field_size)),
    };
    // The first rank's members and steps: `share` gives this process's.
    let first = Hammer {
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
        number: a.number,
        payload,
        check,
        itt: a.itt.then_some(fieldstore_bench::Itt { step_seconds: a.step_seconds, timeout_seconds: a.poll_timeout }),
    };
    let role = Role::of_halves(place, a.pattern, a.itt, a.read)?;
    let h = first.share(role)?;
    let fs = fieldstore::open(&fieldstore::Config::resolve(config)?)?;
    line_up(&a.run, place)?;
    Ok(if role.reads {
        h.read(&fs)?
    } else if a.list {
        h.list(&fs)?
    } else {
        h.write(&fs)?
    })
}

/// Analyses event logs (one run) or sweep directories (a study) and prints or writes the
/// report.
fn analyze(a: &AnalyzeArgs) -> anyhow::Result<()> {
    let directories = a.paths.iter().filter(|p| p.is_dir()).count();
    if directories == 0 {
        if a.select.is_some() {
            bail!("--select chooses among the configurations of sweep directories, not event logs");
        }
        return analyze_logs(a);
    }
    if let Some(file) = a.paths.iter().find(|p| !p.is_dir()) {
        bail!("{}: not a sweep directory; give either event logs or sweep directories, not both", file.display());
    }
    let selection = fieldstore_bench::report::Selection::parse(a.select.as_deref().unwrap_or(""))?;
    let (_, rows, mut page) = fieldstore_bench::report::study_report(&a.paths, selection)?;
    if let Some(title) = &a.title {
        page.title = title.clone();
    }
    write_report(a, &page)?;
    if a.json {
        let figures = fieldstore_bench::report::page_figures(&page);
        outln!("{}", serde_json::to_string_pretty(&serde_json::json!({"rows": rows, "figures": figures}))?);
    } else {
        out!("{}", fieldstore_bench::study::markdown(&rows));
    }
    Ok(())
}

/// The report of one run's event logs.
fn analyze_logs(a: &AnalyzeArgs) -> anyhow::Result<()> {
    use fieldstore_bench::analyze;
    let events = analyze::read_logs(&a.paths)?;
    let phases = analyze::phases(&events);
    let overlap = analyze::overlap(&events, "write", "read");
    if a.html.is_some() || a.png.is_some() {
        let names: Vec<String> = a.paths.iter().map(|p| p.display().to_string()).collect();
        let title = a.title.clone().unwrap_or_else(|| format!("fieldstore benchmark: {}", names.join(", ")));
        write_report(a, &fieldstore_bench::report::log_page(&title, &phases, &events, overlap.as_ref()))?;
    }
    if a.json {
        outln!("{}", serde_json::to_string_pretty(&serde_json::json!({"phases": phases, "overlap": overlap}))?);
    } else {
        out!("{}", analyze::markdown(&phases, overlap.as_ref()));
    }
    Ok(())
}

/// Writes the page as HTML (`--html`) and its figures as PNG (`--png`).
fn write_report(a: &AnalyzeArgs, page: &fieldstore_bench::report::Page) -> anyhow::Result<()> {
    use fieldstore_bench::report;
    if let Some(path) = &a.html {
        let html = report::html(page)?;
        std::fs::write(path, html).with_context(|| format!("writing {}", path.display()))?;
    }
    if let Some(dir) = &a.png {
        let files = report::write_pngs(page, dir)?;
        note!("{} figure(s) written to {}", files.len(), dir.display());
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

/// Milliseconds to list and to retrieve a request: the first on a fresh handle (which reads
/// the catalogue), then the median of warm repetitions.
fn point(a: &PointArgs, config: Option<&std::path::Path>) -> anyhow::Result<()> {
    let request = fieldstore::Request::parse(&a.request)?;
    let fs = fieldstore::open(&fieldstore::Config::resolve(config)?)?;
    let t = fieldstore_bench::point::measure(&fs, &request, a.reps)?;
    if a.json {
        outln!("{}", serde_json::to_string_pretty(&t)?);
    } else {
        outln!(
            "{} field(s): list {:.3} ms cold, {:.3} ms warm; retrieve {:.3} ms cold, {:.3} ms warm",
            t.fields,
            t.list_cold_ms,
            t.list_warm_ms,
            t.retrieve_cold_ms,
            t.retrieve_warm_ms
        );
    }
    Ok(())
}

fn load(a: &LoadArgs, config: Option<&std::path::Path>) -> anyhow::Result<()> {
    for (name, seconds) in [("--seconds", a.seconds), ("--interval", a.interval)] {
        if !(seconds.is_finite() && (0.0..=86_400.0).contains(&seconds)) {
            bail!("{name} {seconds}: not a number of seconds from 0 to a day");
        }
    }
    let load = fieldstore_bench::load::Load {
        clients: a.clients,
        archivers: a.archivers.unwrap_or(a.clients / 10),
        duration: std::time::Duration::from_secs_f64(a.seconds),
        field_bytes: a.field_size,
        levels: a.levels,
        batch: a.batch,
        interval: std::time::Duration::from_secs_f64(a.interval),
    };
    let r = fieldstore_bench::load::run(&fieldstore::Config::resolve(config)?, &load)?;
    if a.json {
        outln!("{}", serde_json::to_string_pretty(&r)?);
    } else {
        outln!("{} clients ({} archiving) for {:.1} s, fields of {} bytes", r.clients, r.archivers, r.seconds, r.field_bytes);
        for (name, l) in [("list", &r.list), ("point retrieve", &r.point_retrieve), ("archive+flush", &r.archive_flush)] {
            outln!("{name:>15}: {:>7} done, p50 {:8.3} ms, p99 {:8.3} ms, max {:8.3} ms", l.count, l.p50_ms, l.p99_ms, l.max_ms);
        }
        outln!(
            "{} fields flushed, {} read back and checked; {} bytes retrieved and checked",
            r.fields_flushed,
            r.fields_checked,
            r.bytes_read
        );
        for error in &r.first_errors {
            outln!("error: {error}");
        }
    }
    if r.errors > 0 {
        bail!("{} operations failed", r.errors);
    }
    Ok(())
}

fn s3_raw(a: &S3RawArgs, config: Option<&std::path::Path>) -> anyhow::Result<()> {
    let config = fieldstore::Config::resolve(config)?;
    if let Some(dataset) = &a.list {
        let dataset = fieldstore::Key::parse(dataset)?;
        let (objects, seconds) = fieldstore_bench::s3::list_and_head(&config, &dataset, a.in_flight)?;
        if a.json {
            outln!("{}", serde_json::json!({"phase": "list+head", "objects": objects, "seconds": seconds, "in_flight": a.in_flight}));
        } else {
            outln!("list+head: {objects} objects in {seconds:.4} s ({} in flight)", a.in_flight);
        }
        return Ok(());
    }
    let t = fieldstore_bench::s3::put_get_loop(&config, a.objects, a.size, a.in_flight, a.range.clone())?;
    let got = a.range.as_ref().map_or(a.size, |r| (r.end - r.start) as usize);
    for (phase, seconds, size) in [("put", t.put_seconds, a.size), ("get", t.get_seconds, got)] {
        let bytes = (a.objects * size) as f64;
        if a.json {
            outln!(
                "{}",
                serde_json::json!({"phase": phase, "objects": a.objects, "bytes": size, "in_flight": a.in_flight, "seconds": seconds})
            );
        } else {
            let what = match (phase, &a.range) {
                ("get", Some(_)) => format!("ranges of {size} bytes of objects of {} bytes", a.size),
                _ => format!("objects of {size} bytes"),
            };
            outln!("{phase}: {} {what} in {seconds:.4} s: {:.1} MiB/s ({} in flight)", a.objects, bytes / seconds / 1048576.0, a.in_flight);
        }
    }
    Ok(())
}

fn explicit_keys(a: &ExplicitKeysArgs, config: Option<&std::path::Path>) -> anyhow::Result<()> {
    workload_bytes(&[a.nsteps, a.nlevels, a.nparams], a.field_size)?;
    let w = Workload { nsteps: a.nsteps, nlevels: a.nlevels, nparams: a.nparams, field_size: a.field_size, member: a.member };
    let config = config.context("bench explicit-keys needs --config (see bench compare)")?;
    let mode = if a.read { compare::Mode::Read } else { compare::Mode::Write };
    let t = compare::run_fieldstore(config, &w, mode)?;
    let (n, bytes) = (w.fields(), w.fields() * w.field_size);
    if mode == compare::Mode::Write {
        outln!("archive {n} {bytes} {:.6}", t.archive);
    }
    outln!("list {n} {bytes} {:.6}\nretrieve {n} {bytes} {:.6}", t.list, t.retrieve);
    Ok(())
}

fn compare(a: &CompareArgs) -> anyhow::Result<()> {
    workload_bytes(&[a.nsteps, a.nlevels, a.nparams, a.procs], a.field_size)?;
    let comparison = Comparison {
        root: a.root.clone(),
        peer: a.peer.clone(),
        workload: Workload { nsteps: a.nsteps, nlevels: a.nlevels, nparams: a.nparams, field_size: a.field_size, member: 1 },
        reps: a.reps,
        procs: a.procs,
        commit: a.commit,
        fdb5_tool: a.fdb5_tool.clone(),
        c_harness: a.c_harness.clone(),
        in_place: a.in_place,
        copy: a.copy,
        remote: a.remote,
    };
    let me = std::env::current_exe()?;
    let (json, md) = if a.grib {
        let report = comparison.run_grib(&me)?;
        (serde_json::to_string_pretty(&report)?, report.markdown())
    } else {
        let report = comparison.run(&me)?;
        (serde_json::to_string_pretty(&report)?, report.markdown())
    };
    if a.json {
        outln!("{json}");
    } else {
        out!("{md}");
    }
    Ok(())
}
