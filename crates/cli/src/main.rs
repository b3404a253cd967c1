//! `fieldstore`: archive, retrieve, list and administer weather fields. Argument parsing and
//! printing only; all work is done by the `fieldstore` library.

/// Writes a line to standard output; a write that fails (`/dev/full`) fails the command.
macro_rules! outln {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        writeln!(std::io::stdout(), $($arg)*).map_err(|e| anyhow::anyhow!("writing to standard output: {e}"))?
    }};
}

/// Writes to standard output, as [`outln`] without the line end.
macro_rules! out {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        write!(std::io::stdout(), $($arg)*).map_err(|e| anyhow::anyhow!("writing to standard output: {e}"))?
    }};
}

/// Writes a line to standard error; one that cannot be written (a full disk) is lost, never
/// an error (the work it reports is done). A closed pipe ends the process, as it ends any tool.
macro_rules! note {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stderr(), $($arg)*);
    }};
}

mod bench;
mod output;
mod sample;

use std::io::{IsTerminal, Read, Write};
use std::path::{Path, PathBuf};

use anyhow::{bail, Context};
use clap::{Args, Parser, Subcommand};
use fieldstore::{Config, ControlAction, FieldStore, Key, ListOptions, Request};

#[derive(Parser)]
#[command(name = "fieldstore", version, about = "A store for weather and climate fields with FDB5's semantics")]
struct Cli {
    /// Config file (YAML); default: $FIELDSTORE_CONFIG, else a POSIX store under $FIELDSTORE_ROOT
    #[arg(long, global = true, value_name = "FILE")]
    config: Option<PathBuf>,
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Archive GRIB files (keys read from each message), or raw bytes with --key; then flush
    Archive {
        /// GRIB files, or - for standard input
        #[arg(required = true)]
        files: Vec<String>,
        /// Archive FILE's bytes as one field with this identifier (k=v,k=v,...)
        #[arg(long, value_name = "KEY")]
        key: Option<String>,
    },
    /// Retrieve the fields a MARS request names, in the order it names values (as FDB5)
    Retrieve {
        #[command(flatten)]
        request: RequestArgs,
        /// Output file, or - for standard output
        #[arg(short, long, value_name = "OUT")]
        output: String,
    },
    /// List stored fields as {dataset}{collocation}{element}
    List {
        #[command(flatten)]
        request: RequestArgs,
        /// 1: data sets, 2: collocations, 3: fields
        #[arg(long, default_value_t = 3, value_parser = clap::value_parser!(u8).range(1..=3))]
        depth: u8,
        /// Also show fields superseded by a newer archive of the same identifier
        #[arg(long)]
        full: bool,
        /// Show each field's location (file or object, offset, length)
        #[arg(long)]
        location: bool,
        /// FDB5's porcelain lines: {dataset}{collocation}{element} and nothing else, for scripts
        #[arg(long, conflicts_with_all = ["json", "flat"])]
        porcelain: bool,
        /// One k=v,k=v,... line per field (the whole identifier, as a request would name it)
        #[arg(long, conflicts_with = "json")]
        flat: bool,
        #[arg(long)]
        json: bool,
    },
    /// The values stored for each keyword among what a request names
    Axes(QueryArgs),
    /// Remove data sets or collocations (dry run unless --doit)
    Wipe(RemovalArgs),
    /// Reclaim fields superseded by newer archives (dry run unless --doit)
    Purge(RemovalArgs),
    /// Lock actions on the data sets a request names
    Lock(ControlArgs),
    /// Unlock actions on the data sets a request names
    Unlock(ControlArgs),
    /// Show the locks of the data sets a request names
    Status(QueryArgs),
    /// Counts of fields, bytes, indexes and superseded duplicates
    Stats(QueryArgs),
    /// Where the data sets a request names are stored
    Where(QueryArgs),
    /// Check or show a schema (default: the configured one)
    Schema {
        /// Check this schema file and summarise it
        #[arg(long, value_name = "FILE")]
        check: Option<PathBuf>,
        /// Split an identifier with the schema and show its three keys
        #[arg(long, value_name = "KEY")]
        split: Option<String>,
    },
    /// Show the configuration, schema and backends in use
    Info {
        #[arg(long)]
        json: bool,
    },
    /// Write GRIB fields made from ecCodes' samples (for trying fieldstore out and for tests)
    Sample(Box<sample::SampleArgs>),
    /// Benchmarks: hammer, field-io, ior, analyze, sweep, and side-by-side comparison with FDB5
    #[command(subcommand)]
    Bench(bench::BenchCommand),
}

#[derive(Args)]
struct RequestArgs {
    /// MARS request, e.g. class=od,expver=0001,step=0/to/12/by/6 (keywords left out range over what is stored)
    #[arg(value_name = "REQUEST")]
    request: Option<String>,
    /// Read requests from a file (several requests allowed)
    #[arg(long, value_name = "FILE", conflicts_with = "request")]
    request_file: Option<PathBuf>,
}

/// A request and the choice of JSON output.
#[derive(Args)]
struct QueryArgs {
    #[command(flatten)]
    request: RequestArgs,
    /// Print JSON
    #[arg(long)]
    json: bool,
}

/// A request naming what to remove, and whether to really remove it.
#[derive(Args)]
struct RemovalArgs {
    #[command(flatten)]
    query: QueryArgs,
    /// Remove for real (without it, only show what would be removed)
    #[arg(long)]
    doit: bool,
}

#[derive(Args)]
struct ControlArgs {
    #[command(flatten)]
    request: RequestArgs,
    /// Actions to (un)lock: archive, retrieve, list, wipe (default: all)
    #[arg(long = "action", value_name = "ACTION")]
    actions: Vec<String>,
}

impl RequestArgs {
    fn requests(&self) -> anyhow::Result<Vec<Request>> {
        match (&self.request, &self.request_file) {
            (Some(r), _) => Ok(vec![Request::parse(r)?]),
            (None, Some(f)) => {
                let text = std::fs::read_to_string(f).with_context(|| format!("reading request file {}", f.display()))?;
                let all = Request::parse_many(&text)?;
                if all.is_empty() {
                    bail!("request file {} holds no request", f.display());
                }
                Ok(all)
            }
            (None, None) => Ok(vec![Request::default()]),
        }
    }
}

/// glibc returns freed memory at the top of the heap to the system once it exceeds a
/// threshold it adjusts as it goes; a writer that frees and reallocates each step's index
/// then pays page faults at every flush (1,000,000 fields: the last 10,000 archived 24%
/// slower than the first; with this, within 3%). Keeping up to 256 MiB of freed heap costs
/// nothing until it is used.
///
/// Setting the trim threshold also stops glibc raising its mmap threshold as large blocks are
/// freed, so every buffer of a field of 128 KiB or more (librados copies each one it sends)
/// would be a fresh mapping, faulted in page by page: RADOS writes of 1 MiB fields ran at a
/// third of the speed. Blocks up to 32 MiB (glibc's largest threshold) come from the heap.
fn keep_freed_heap() {
    // SAFETY: mallopt only tunes the allocator; called before any thread starts.
    unsafe {
        libc::mallopt(libc::M_TRIM_THRESHOLD, 256 << 20);
        libc::mallopt(libc::M_MMAP_THRESHOLD, 32 << 20);
    }
}

/// Ends the process with a clear message when a mapped file shrinks under it (SIGBUS): an
/// input truncated while it is archived, or a data file truncated under a reader. Nothing
/// archived since the last flush was published, so nothing stored is lost; the data files
/// keep unreferenced bytes, as after a crash.
extern "C" fn mapped_file_truncated(_: libc::c_int) {
    const MESSAGE: &[u8] = b"fieldstore: error: a file shrank while it was read through a mapping (an input truncated while it \
was archived, or a data file truncated while it was read); nothing archived by this command since its last flush was made \
visible\n";
    // SAFETY: write(2) and _exit(2) are async-signal-safe; MESSAGE is static.
    unsafe {
        libc::write(2, MESSAGE.as_ptr().cast(), MESSAGE.len());
        libc::_exit(1);
    }
}

fn main() {
    // A closed pipe ends the process quietly, as it ends any other tool (`schema | head -1`);
    // Rust's runtime ignores SIGPIPE, which made every print after it panic.
    // SAFETY: restoring a signal's default disposition, and setting a handler that only
    // calls async-signal-safe functions, before any thread starts.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
        libc::signal(libc::SIGBUS, mapped_file_truncated as *const () as libc::sighandler_t);
    }
    keep_freed_heap();
    let cli = Cli::parse();
    if let Err(e) = run(cli) {
        let _ = std::io::stdout().flush();
        note!("fieldstore: error: {e:#}");
        std::process::exit(1);
    }
}

fn open(cli_config: Option<&Path>) -> anyhow::Result<FieldStore> {
    let config = Config::resolve(cli_config)?;
    Ok(fieldstore::open(&config)?)
}

fn run(cli: Cli) -> anyhow::Result<()> {
    let config = cli.config.as_deref();
    match cli.command {
        Command::Archive { files, key } => archive(&mut open(config)?, &files, key.as_deref()),
        Command::Retrieve { request, output } => retrieve(&mut open(config)?, &request.requests()?, &output),
        Command::List { request, depth, full, location, porcelain, flat, json } => {
            let fs = &mut open(config)?;
            let style = output::ListStyle { location, porcelain, flat, json };
            for r in request.requests()? {
                let matches = fs.list(&r, ListOptions { depth, include_superseded: full, ..ListOptions::default() })?;
                output::print_list(&matches, depth, style).context("writing the list to standard output")?;
                if let Some(why) = &matches.explanation {
                    note!("fieldstore: nothing matched {r}: {why}");
                }
            }
            Ok(())
        }
        Command::Axes(q) => for_each_request(config, &q.request, |fs, r| {
            let (axes, why) = fs.axes(r)?;
            output::print_axes(&axes, q.json)?;
            if let Some(why) = why {
                note!("fieldstore: nothing matched {r}: {why}");
            }
            Ok(())
        }),
        Command::Wipe(w) => for_each_request(config, &w.query.request, |fs, r| output::print_wipe(&fs.wipe(r, w.doit)?, w.query.json)),
        Command::Purge(p) => for_each_request(config, &p.query.request, |fs, r| output::print_purge(&fs.purge(r, p.doit)?, p.query.json)),
        Command::Lock(c) => control(&mut open(config)?, &c, Some(true), false),
        Command::Unlock(c) => control(&mut open(config)?, &c, Some(false), false),
        Command::Status(q) => control(&mut open(config)?, &ControlArgs { request: q.request, actions: Vec::new() }, None, q.json),
        Command::Stats(q) => for_each_request(config, &q.request, |fs, r| output::print_json_or(&fs.stats(r)?, q.json, output::stats_text)),
        Command::Where(q) => {
            for_each_request(config, &q.request, |fs, r| output::print_json_or(fs.where_is(r)?.as_slice(), q.json, output::where_text))
        }
        Command::Schema { check, split } => schema(config, check.as_deref(), split.as_deref()),
        Command::Info { json } => {
            let config = Config::resolve(config)?;
            output::print_info(&config, json)
        }
        Command::Sample(args) => sample::run(&args),
        Command::Bench(b) => bench::run(&b, config),
    }
}

/// Opens the store and runs `each` for every request given.
fn for_each_request(
    config: Option<&Path>,
    args: &RequestArgs,
    mut each: impl FnMut(&mut FieldStore, &Request) -> anyhow::Result<()>,
) -> anyhow::Result<()> {
    let fs = &mut open(config)?;
    for r in args.requests()? {
        each(fs, &r)?;
    }
    Ok(())
}

/// An input's bytes: standard input read into memory, files mapped (GRIB files can be larger
/// than memory).
enum Input {
    Read(Vec<u8>),
    Mapped(memmap2::Mmap),
}

impl std::ops::Deref for Input {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        match self {
            Input::Read(v) => v,
            Input::Mapped(m) => m,
        }
    }
}

fn read_input(f: &str) -> anyhow::Result<Input> {
    if f == "-" {
        let mut data = Vec::new();
        std::io::stdin().read_to_end(&mut data).context("reading standard input")?;
        return Ok(Input::Read(data));
    }
    let mut file = std::fs::File::open(f).with_context(|| format!("opening {f}"))?;
    let metadata = file.metadata().with_context(|| format!("reading {f}"))?;
    if metadata.is_dir() {
        bail!("{f} is a directory, not a GRIB file");
    }
    // Pipes and FIFOs have no size to map: read them (`archive <(cat f.grib)`). A device
    // could be endless (`/dev/zero`).
    use std::os::unix::fs::FileTypeExt;
    if metadata.file_type().is_char_device() || metadata.file_type().is_block_device() {
        bail!("{f} is a device, not a GRIB file");
    }
    if !metadata.is_file() || metadata.len() == 0 {
        let mut data = Vec::new();
        file.read_to_end(&mut data).with_context(|| format!("reading {f}"))?;
        return Ok(Input::Read(data));
    }
    // SAFETY: the map is read-only; a file truncated by someone else while it is archived
    // faults (SIGBUS), which `mapped_file_truncated` turns into a clear error.
    let map = unsafe { memmap2::Mmap::map(&file) }.with_context(|| format!("mapping {f}"))?;
    Ok(Input::Mapped(map))
}

fn archive(fs: &mut FieldStore, files: &[String], key: Option<&str>) -> anyhow::Result<()> {
    if let Some(key) = key {
        let [file] = files else { bail!("--key archives exactly one FILE") };
        fs.archive(&Key::parse(key)?, &read_input(file)?)?;
        fs.flush()?;
        note!("archived 1 field from {file}");
        return Ok(());
    }
    let inputs: Vec<(String, Input)> = files.iter().map(|f| Ok((f.clone(), read_input(f)?))).collect::<anyhow::Result<_>>()?;
    // Every message of every input is checked before anything is archived.
    let mut prepared = Vec::new();
    for (name, data) in &inputs {
        prepared.push(fieldstore::prepare_grib(fs, data, if name == "-" { "<stdin>" } else { name })?);
    }
    let total: usize = prepared.iter().map(Vec::len).sum();
    let progress = output::progress(total as u64, "archiving");
    for field in prepared.iter().flatten() {
        fs.archive(&field.identifier, field.bytes)?;
        progress.inc(1);
    }
    fs.flush()?;
    progress.finish_and_clear();
    let bytes = fs.archive_stats().bytes_archived;
    note!("archived {total} fields ({bytes} bytes) from {} input(s)", inputs.len());
    Ok(())
}

fn retrieve(fs: &mut FieldStore, requests: &[Request], output: &str) -> anyhow::Result<()> {
    let mut out: Box<dyn Write> = if output == "-" {
        Box::new(std::io::BufWriter::new(std::io::stdout().lock()))
    } else {
        Box::new(std::io::BufWriter::new(std::fs::File::create(output).with_context(|| format!("creating {output}"))?))
    };
    let (mut fields, mut bytes) = (0usize, 0u64);
    for r in requests {
        let (mut reader, why) = fs.retrieve(r)?;
        if let Some(why) = why {
            bail!("nothing matched {r}: {why}");
        }
        let progress = output::progress(reader.total_bytes(), "retrieving");
        fields += reader.fields().len();
        bytes += reader.total_bytes();
        std::io::copy(&mut progress.wrap_read(&mut reader), &mut out).context("retrieving")?;
        progress.finish_and_clear();
    }
    out.flush().context("writing output")?;
    if output != "-" || !std::io::stdout().is_terminal() {
        note!("retrieved {fields} fields ({bytes} bytes)");
    }
    Ok(())
}

fn control(fs: &mut FieldStore, args: &ControlArgs, lock: Option<bool>, json: bool) -> anyhow::Result<()> {
    let actions: Vec<ControlAction> = if args.actions.is_empty() {
        ControlAction::ALL.to_vec()
    } else {
        args.actions
            .iter()
            .map(|a| ControlAction::from_name(a).with_context(|| format!("unknown action '{a}' (use archive, retrieve, list or wipe)")))
            .collect::<anyhow::Result<_>>()?
    };
    for r in args.request.requests()? {
        let states = fs.control(&r, &actions, lock)?;
        if states.is_empty() {
            bail!("no data set matches {r}");
        }
        output::print_status(&states, json)?;
    }
    Ok(())
}

fn schema(config: Option<&Path>, check: Option<&Path>, split: Option<&str>) -> anyhow::Result<()> {
    let schema = match check {
        Some(path) => {
            let text = std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
            fieldstore::Schema::parse(&path.display().to_string(), &text)?
        }
        None => Config::resolve(config)?.load_schema()?,
    };
    fieldstore::grib::install_param_resolver();
    if let Some(split) = split {
        let s = schema.split(&Key::parse(split)?)?;
        outln!("{{{}}}{{{}}}{{{}}}", s.dataset, s.collocation, s.element);
        return Ok(());
    }
    if check.is_some() {
        let paths = schema.paths().count();
        outln!(
            "{}: ok: {} dataset rules, {paths} rule paths, {} typed keywords, {} keywords",
            schema.source_name,
            schema.rules().len(),
            schema.global_types().len(),
            schema.keywords().len()
        );
    } else {
        out!("{}", schema.text());
    }
    Ok(())
}
