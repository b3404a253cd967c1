//! `fieldstore`: archive, retrieve, list and administer weather fields. Argument parsing and
//! printing only; all work is done by the `fieldstore` library.

/// Writes a line to standard output; a write that fails (`/dev/full`) fails the command.
macro_rules! outln {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        writeln!(std::io::stdout(), $($arg)*).map_err(|e| anyhow::Error::new(e).context("writing to standard output"))?
    }};
}

/// Writes to standard output, as [`outln`] without the line end.
macro_rules! out {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        write!(std::io::stdout(), $($arg)*).map_err(|e| anyhow::Error::new(e).context("writing to standard output"))?
    }};
}

/// Writes a line to standard error unless `--quiet`; one that cannot be written (a full disk)
/// is lost, never an error (the work it reports is done). A closed pipe ends the process, as
/// it ends any tool.
macro_rules! note {
    ($($arg:tt)*) => {{
        if crate::output::shown(crate::output::Verbosity::Normal) {
            use std::io::Write as _;
            let _ = writeln!(std::io::stderr(), $($arg)*);
        }
    }};
}

/// Writes a line to standard error with `--verbose` only, as [`note`] does.
macro_rules! detail {
    ($($arg:tt)*) => {{
        if crate::output::shown(crate::output::Verbosity::Verbose) {
            use std::io::Write as _;
            let _ = writeln!(std::io::stderr(), $($arg)*);
        }
    }};
}

mod bench;
mod fdb5_tools;
mod output;
mod sample;

use std::io::{IsTerminal, Read, Write};
use std::path::{Path, PathBuf};

use anyhow::{bail, Context};
use clap::{Args, CommandFactory, Parser, Subcommand};
use fieldstore::request::FieldRequest;
use fieldstore::{Config, ControlAction, FieldStore, Key, ListOptions, Request};

#[derive(Parser)]
#[command(name = "fieldstore", version, about = "A store for weather and climate fields with FDB5's semantics")]
struct Cli {
    /// Config file (YAML, fieldstore's or FDB5's); default: $FIELDSTORE_CONFIG, else FDB5's
    /// variables, else a POSIX store under $FIELDSTORE_ROOT
    #[arg(long, global = true, value_name = "FILE")]
    config: Option<PathBuf>,
    /// Print errors only: no notes, no progress
    #[arg(short, long, global = true, conflicts_with = "verbose")]
    quiet: bool,
    /// Also print what each step did and how long it took
    #[arg(short, long, global = true)]
    verbose: bool,
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Archive GRIB files (keys read from each message), or raw bytes with --key; then flush
    #[command(after_help = "Examples:\n  fieldstore archive fc.grib an.grib
  fieldstore archive --modifiers expver=0042 --include-filter param=t fc.grib
  fieldstore archive --key class=rd,expver=xyz1,stream=oper,date=20240101,time=0,type=an,levtype=sfc,step=0,param=167 raw.bin")]
    Archive {
        /// GRIB files, or - for standard input
        #[arg(required = true)]
        files: Vec<String>,
        /// Archive FILE's bytes, as they are, as one field with this identifier (k=v,k=v,...);
        /// refused for a file of several GRIB messages
        #[arg(long, value_name = "KEY", conflicts_with_all = ["modifiers", "include_filter", "exclude_filter"])]
        key: Option<String>,
        /// Set these keys in each message (through ecCodes) before reading its identifier, as
        /// FDB5's fdb-write --modifiers: e.g. expver=0042,packingType=grib_ccsds
        #[arg(long, value_name = "K=V,...")]
        modifiers: Option<String>,
        /// Archive only the messages that match this request (fdb-write --include-filter)
        #[arg(long, value_name = "REQUEST", visible_alias = "filter-include")]
        include_filter: Option<String>,
        /// Leave out the messages that match this request (fdb-write --exclude-filter)
        #[arg(long, value_name = "REQUEST", visible_alias = "filter-exclude")]
        exclude_filter: Option<String>,
    },
    /// Retrieve the fields a MARS request names, in the order it names values (as FDB5)
    #[command(after_help = "Examples:\n  fieldstore retrieve class=od,expver=0001,step=0/to/12/by/6,param=t -o t.grib
  fieldstore retrieve --request-file mars.req          # each request's target= names its output
  fieldstore retrieve class=od,expver=0001,number=1 -o - | grib_ls -")]
    Retrieve {
        #[command(flatten)]
        request: RequestArgs,
        /// Output file, or - for standard output; without it, each request's target= (MARS)
        #[arg(short, long, value_name = "OUT")]
        output: Option<String>,
    },
    /// List stored fields as {dataset}{collocation}{element}
    #[command(after_help = "Examples:\n  fieldstore list class=od,expver=0001,stream=enfo,step=6
  fieldstore list --all --depth 1                     # every data set
  fieldstore list --flat --location class=od,expver=0001,param=t")]
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
    /// Extract grid points from the fields a request names, reading only the bytes that hold them
    #[command(after_help = "Ranges are [start, end) grid points in the order of the field's values.\n\nExamples:
  fieldstore extract class=od,expver=0001,stream=oper,date=20231201,time=1200,type=fc,levtype=sfc,step=0/6,param=167 --ranges 0-10,5000-5001
  fieldstore extract --json ... --ranges 100-200
  fieldstore extract --csv ... --ranges 100-200 > points.csv")]
    Extract {
        #[command(flatten)]
        query: QueryArgs,
        /// Ranges of grid points, start-end (end excluded), comma-separated
        #[arg(long, value_delimiter = ',', required_unless_present_any = ["indices", "mask"], conflicts_with_all = ["indices", "mask"])]
        ranges: Vec<String>,
        /// A file of grid point indices (whitespace- or comma-separated), each extracted
        #[arg(long, value_name = "FILE", conflicts_with = "mask")]
        indices: Option<PathBuf>,
        /// A file of one 0 or 1 per grid point (whitespace and commas ignored): the 1s extracted
        #[arg(long, value_name = "FILE")]
        mask: Option<PathBuf>,
        /// Print CSV: one line per point (field, point, value; empty where missing)
        #[arg(long, conflicts_with = "json")]
        csv: bool,
    },
    /// Keep the packing of each field a request names beside its data, so that extractions read little (gribjump-scan's job)
    #[command(
        after_help = "Each field whose packing is not kept yet is read whole once; a data set's new packings go into one\nside object beside its data. Extractions then read only the bytes of the points they ask for.\n\nExamples:
  fieldstore scan class=od,expver=0001,stream=oper,date=20231201,time=1200
  fieldstore scan --json class=od,expver=0001,stream=enfo,date=20231201"
    )]
    Scan(QueryArgs),
    /// The values stored for each keyword among what a request names
    #[command(after_help = "Examples:\n  fieldstore axes class=od,expver=0001
  fieldstore axes --json class=od,expver=0001,stream=enfo")]
    Axes(QueryArgs),
    /// Remove data sets or collocations (dry run unless --doit)
    #[command(after_help = "Examples:\n  fieldstore wipe class=od,expver=0001,stream=oper,date=20231201,time=1200            # a dry run
  fieldstore wipe class=od,expver=0001,stream=oper,date=20231201,time=1200,type=pf --doit")]
    Wipe(RemovalArgs),
    /// Reclaim fields superseded by newer archives (dry run unless --doit)
    #[command(after_help = "Examples:\n  fieldstore purge class=od,expver=0001,stream=oper,date=20231201,time=1200
  fieldstore purge class=od,expver=0001,stream=oper,date=20231201,time=1200 --doit --json")]
    Purge(RemovalArgs),
    /// Compare the fields a request names with another store's (FDB5's fdb-compare): keys, headers, values
    #[command(after_help = "The configured store is the reference. Exit status 1 when they differ.
Examples:\n  fieldstore --config fdb5.yaml compare --against fieldstore.yaml class=od,expver=0001 --scope all
  fieldstore compare class=od,expver=abcd --against-request class=od,expver=1234 --json")]
    Compare {
        #[command(flatten)]
        query: QueryArgs,
        /// The other store's config (default: the configured store)
        #[arg(long, value_name = "FILE")]
        against: Option<PathBuf>,
        /// What to compare in the other store (default: the same request); a keyword given
        /// other values here is matched across the two
        #[arg(long, value_name = "REQUEST")]
        against_request: Option<String>,
        /// mars (the fields each holds), header-only (also their GRIB headers) or all (also their values)
        #[arg(long, default_value = "mars")]
        scope: String,
        /// Compare messages byte for byte, section by section, instead of key by key
        #[arg(long)]
        bit_identical: bool,
        /// Values differ where |a - b| > TOLERANCE x max(|a|, |b|, 1)
        #[arg(long, default_value_t = 10.0 * f64::EPSILON)]
        tolerance: f64,
    },
    /// The catalogue of the data sets a request names: each visible index, its place, fields and axes
    #[command(after_help = "FDB5's fdb-dump for every backend: the indexes as readers see them, newest first.
Examples:\n  fieldstore dump class=od,expver=0001,stream=oper,date=20231201,time=1200
  fieldstore dump class=od,expver=0001 --entries --json")]
    Dump {
        #[command(flatten)]
        query: QueryArgs,
        /// Also each entry: its element key and location
        #[arg(long)]
        entries: bool,
    },
    /// Hide every field of the data sets a request names, removing nothing (dry run unless --doit)
    #[command(after_help = "Readers see the data set's fields gone at once; fields archived afterwards are visible. The hidden
ones stay on disk until the data set is wiped (FDB5's fdb-hide).
Examples:\n  fieldstore hide class=od,expver=0001,stream=oper,date=20231201,time=1200            # a dry run
  fieldstore hide class=od,expver=0001,stream=oper,date=20231201,time=1200 --doit --json")]
    Hide(RemovalArgs),
    /// Show one data set's fields as another's, whose key differs in class or expver, copying nothing
    #[command(after_help = "FDB5's fdb-overlay, on every backend: readers of the target see the source's fields (archived
later too) under the target's key, after the target's own. The target is made unless it exists
(then --force); --remove stops showing the source. Wiping the target never touches the source.
Examples:\n  fieldstore overlay class=od,expver=0001,stream=oper,date=20231201,time=1200 class=rd,expver=abcd,stream=oper,date=20231201,time=1200
  fieldstore overlay --remove --json class=od,expver=0001,stream=oper,date=20231201,time=1200 class=rd,expver=abcd,stream=oper,date=20231201,time=1200")]
    Overlay {
        /// The data set shown: a request naming it whole (every keyword of its key)
        source: String,
        /// The data set it is shown as part of
        target: String,
        /// Stop showing the source as part of the target
        #[arg(long)]
        remove: bool,
        /// Overlay onto a target that exists already
        #[arg(long)]
        force: bool,
        /// The keywords whose values may differ between source and target
        #[arg(long, value_delimiter = ',', default_value = "class,expver")]
        variable_keys: Vec<String>,
        /// Print the result as JSON
        #[arg(long)]
        json: bool,
    },
    /// Merge the small indexes of the data sets a request names into larger ones (object stores)
    #[command(after_help = "Changes nothing any reader sees: a new reader then reads fewer index objects.
Examples:\n  fieldstore compact class=od,expver=0001
  fieldstore compact --all --json")]
    Compact(QueryArgs),
    /// Lock actions on the data sets a request names
    #[command(after_help = "Examples:\n  fieldstore lock class=od,expver=0001,stream=oper,date=20231201,time=1200 --action archive,wipe
  fieldstore lock --all --action wipe")]
    Lock(ControlArgs),
    /// Unlock actions on the data sets a request names
    #[command(after_help = "Examples:\n  fieldstore unlock class=od,expver=0001,stream=oper,date=20231201,time=1200
  fieldstore unlock class=od,expver=0001,stream=oper,date=20231201,time=1200 --action wipe")]
    Unlock(ControlArgs),
    /// Show the locks of the data sets a request names
    #[command(after_help = "Examples:\n  fieldstore status class=od,expver=0001
  fieldstore status --all --json")]
    Status(QueryArgs),
    /// Counts of fields, bytes, indexes and superseded duplicates
    #[command(after_help = "Examples:\n  fieldstore stats class=od,expver=0001
  fieldstore stats --all --json")]
    Stats(QueryArgs),
    /// Where the data sets a request names are stored
    #[command(after_help = "Examples:\n  fieldstore where class=od,expver=0001
  fieldstore where --all --json")]
    Where(QueryArgs),
    /// Copy the fields requests name from one config's store to another's (FDB5's fdb-copy): streamed, resumable, verified
    #[command(after_help = "A copy run again copies only what the target does not hold yet.
Examples:\n  fieldstore copy --source fdb5-config.yaml --target s3.yaml class=od,expver=0001,date=20231201
  fieldstore --config old.yaml copy --target new.yaml --modifiers expver=0042 class=rd,expver=0001 --json")]
    Copy {
        #[command(flatten)]
        request: RequestArgs,
        /// Config to copy from (FDB5's or fieldstore's; default: --config's, else the default store)
        #[arg(long, value_name = "FILE")]
        source: Option<PathBuf>,
        /// Config to copy into
        #[arg(long, value_name = "FILE")]
        target: PathBuf,
        /// Set these keys in each message (through ecCodes) before archiving it, as fdb-copy
        /// --modifiers: e.g. expver=0042
        #[arg(long, value_name = "K=V,...")]
        modifiers: Option<String>,
        /// Copy in the order the fields lie in the source's files (fdb-copy --sort)
        #[arg(long)]
        sort: bool,
        /// Also read every copied field back from the target, checking each byte
        #[arg(long)]
        read_back: bool,
        /// Bytes of fields read, archived and flushed together: at most what an interrupted
        /// copy has to do again
        #[arg(long, value_name = "BYTES", default_value_t = fieldstore::CopyOptions::default().batch_bytes, value_parser = clap::value_parser!(u64).range(1..))]
        batch_bytes: u64,
        /// fdb-copy's: read the arguments as list requests (fieldstore always does)
        #[arg(long, hide = true)]
        from_list: bool,
        /// Print the summary as JSON
        #[arg(long)]
        json: bool,
    },
    /// Index the fields requests name again in another config's catalogue, over their data where it lies (FDB5's fdb-reindex)
    #[command(after_help = "No byte of a field is copied: the sink lists and retrieves the fields from where they are, so its
store must read the source's data (the same root, bucket or pool; checked first, one field per
file or object). The sink's data sets are locked for wipe: the data is the source's. A new
catalogue over existing data: another catalogue backend, or one rebuilt.
Examples:\n  fieldstore --config posix.yaml reindex --sink rados-catalogue.yaml class=od,expver=0001
  fieldstore reindex --sink other.yaml class=od,expver=0001,date=20231201 --json")]
    Reindex {
        #[command(flatten)]
        request: RequestArgs,
        /// Config whose catalogue takes the new indexes (its store must read the source's data)
        #[arg(long, value_name = "FILE")]
        sink: PathBuf,
        /// A request naming nothing is no error
        #[arg(long)]
        ignore_no_data: bool,
        /// Print the summary as JSON
        #[arg(long)]
        json: bool,
    },
    /// Move whole data sets to another root (FDB5's fdb-move) or another config's store: read all along, writers refused meanwhile
    #[command(after_help = "--dest: readers find every field, once, throughout; archive, wipe and purge of a data set are refused while
it moves; a move killed at any instant leaves each data set whole in one root: run it again to finish it.
--target: each data set locked for archiving, copied with one flush (the target's readers see none of it, then all), every
field read back, then wiped from the source; killed, run it again to finish it.
Examples:\n  fieldstore --config fdb5-config.yaml move --dest /data/tier2 class=od,expver=0001,stream=oper,date=20231201,time=1200
  fieldstore move --dest /data/tier2 --keep --json class=rd,expver=xywz,stream=oper,date=20190603,time=0
  fieldstore move --target s3.yaml class=od,expver=0001,stream=oper,date=20231201")]
    Move {
        #[command(flatten)]
        request: RequestArgs,
        /// The root to move to: one of the roots of the data sets' space (fdb-move --dest)
        #[arg(long, value_name = "ROOT", required_unless_present = "target", conflicts_with = "target")]
        dest: Option<PathBuf>,
        /// Move into the store this config names instead (any backend)
        #[arg(long, value_name = "FILE", conflicts_with_all = ["keep", "delay", "threads"])]
        target: Option<PathBuf>,
        /// Keep each source, hidden in its root as .kept.DIR=..., instead of removing it
        #[arg(long)]
        keep: bool,
        /// Seconds between the switch and the removal of a source: readers that found it just
        /// before read it at least this long
        #[arg(long, value_name = "SECONDS", default_value_t = 0)]
        delay: u64,
        /// Files copied at once
        #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u16).range(1..=256))]
        threads: u16,
        /// fdb-move's MPI transport: not supported (one process moves)
        #[arg(long, hide = true)]
        transport: Option<String>,
        /// Print the summary as JSON
        #[arg(long)]
        json: bool,
    },
    /// Check or show a schema (default: the configured one)
    #[command(after_help = "Examples:\n  fieldstore schema --check /etc/fdb/schema
  fieldstore schema --split class=od,expver=1,stream=oper,date=20231201,time=0,type=fc,levtype=sfc,step=6,param=2t
  fieldstore schema > my.schema")]
    Schema {
        /// Check this schema file and summarise it
        #[arg(long, value_name = "FILE")]
        check: Option<PathBuf>,
        /// Split an identifier with the schema and show its three keys
        #[arg(long, value_name = "KEY")]
        split: Option<String>,
    },
    /// Check the configuration (schema, backends, the store there) and show it
    #[command(after_help = "Examples:\n  fieldstore info
  fieldstore --config ceph.yaml info --json
  FDB5_CONFIG_FILE=/etc/fdb/config.yaml fieldstore info")]
    Info {
        #[arg(long)]
        json: bool,
    },
    /// Make the configured roots that are not there (a configured root is never made by
    /// archive unless its section says create: true)
    #[command(after_help = "Examples:\n  fieldstore --config /etc/fieldstore.yaml init
  FDB5_CONFIG_FILE=/etc/fdb/config.yaml fieldstore init --json")]
    Init {
        #[arg(long)]
        json: bool,
    },
    /// Serve the configured store to remote clients (type: remote configs, curl): HTTP/2 and
    /// HTTP/1.1 over TLS, callers known by their tokens; runs until SIGTERM or SIGINT
    #[command(
        after_help = "Examples:\n  fieldstore --config store.yaml serve --listen 0.0.0.0:8443 --tls-certificate server.pem --tls-key server.key --access access.yaml
  fieldstore serve --listen 127.0.0.1:0    # loopback, no TLS, anyone: for trying it out

Prints `listening on ADDRESS` once it listens; logs JSON lines to standard error (FIELDSTORE_LOG=debug for more).
docs/remote.md: the protocol, the access file, deployment."
    )]
    Serve {
        /// Address to listen on (port 0: any free port)
        #[arg(long, default_value = "127.0.0.1:8443")]
        listen: std::net::SocketAddr,
        /// The server's TLS certificate chain (PEM)
        #[arg(long, requires = "tls_key")]
        tls_certificate: Option<PathBuf>,
        /// The private key of --tls-certificate (PEM)
        #[arg(long, requires = "tls_certificate")]
        tls_key: Option<PathBuf>,
        /// Only clients presenting a certificate this CA signed may connect (mutual TLS)
        #[arg(long, requires = "tls_certificate")]
        client_ca: Option<PathBuf>,
        /// Who may do what (YAML: identities, their tokens' SHA-256, patterns per permission);
        /// without one anyone may do anything, and the server listens on loopback only
        #[arg(long)]
        access: Option<PathBuf>,
        /// Listen beyond loopback even without TLS or without --access
        #[arg(long)]
        insecure_anywhere: bool,
        /// The longest field an archive may carry, in bytes
        #[arg(long, default_value_t = 1 << 30)]
        max_field: u64,
        /// How many requests each identity may have in flight at once (more wait for a place, 10 s at most, then 429)
        #[arg(long, default_value_t = 64)]
        max_in_flight: usize,
        /// The bytes the server may hold for fields being received and reads being sent, all
        /// requests together (more wait, 60 s at most); at least --max-field and 16 MiB
        #[arg(long, default_value_t = 4 << 30)]
        max_memory: u64,
        /// Log text lines instead of JSON lines
        #[arg(long)]
        text_logs: bool,
    },
    /// Make a new bearer token for a server's caller, and its identity for the access file
    #[command(after_help = "Examples:\n  fieldstore token --name operations")]
    Token {
        /// The identity's name, in the server's logs and errors
        #[arg(long)]
        name: String,
        #[arg(long)]
        json: bool,
    },
    /// Write GRIB fields made from ecCodes' samples (for trying fieldstore out and for tests)
    #[command(after_help = "Examples:\n  fieldstore sample --steps 0/to/24/by/6 --params t/u/v -o fc.grib
  fieldstore sample --stream enfo --type pf --numbers 1/to/10 -o ens.grib")]
    Sample(Box<sample::SampleArgs>),
    /// Benchmarks: hammer, field-io, ior, analyze, sweep, and side-by-side comparison with FDB5
    #[command(subcommand)]
    Bench(bench::BenchCommand),
    /// The names of FDB5's tools this binary runs as (for the links the install script makes)
    #[command(hide = true)]
    Fdb5Tools,
    /// Print shell completions (bash, zsh, fish, elvish, powershell) to standard output
    #[command(after_help = "Examples:\n  fieldstore completions bash > ~/.local/share/bash-completion/completions/fieldstore\n  \
fieldstore completions zsh > ~/.zfunc/_fieldstore\n  fieldstore completions fish > ~/.config/fish/completions/fieldstore.fish")]
    Completions { shell: clap_complete::Shell },
    /// Write man pages (fieldstore.1, fieldstore-list.1, ...) into a directory
    #[command(after_help = "Examples:\n  fieldstore man --out ~/.local/share/man/man1 && man fieldstore-list")]
    Man {
        #[arg(long, value_name = "DIR", default_value = ".")]
        out: PathBuf,
    },
}

#[derive(Args)]
struct RequestArgs {
    /// MARS request, e.g. class=od,expver=0001,step=0/to/12/by/6 (keywords left out range over what is stored)
    #[arg(value_name = "REQUEST")]
    request: Option<String>,
    /// Read requests from a file (several requests allowed)
    #[arg(long, value_name = "FILE", conflicts_with = "request")]
    request_file: Option<PathBuf>,
    /// Keywords every request must name, comma-separated, empty for none (default: FDB5's,
    /// class,expver; for wipe, purge, lock and unlock class,expver,stream,date,time)
    #[arg(long, value_name = "KEYS")]
    minimum_keys: Option<String>,
    /// Act on the whole store (no request, no minimum keys; not for wipe)
    #[arg(long, conflicts_with_all = ["request", "request_file"])]
    all: bool,
}

/// The keywords a request must name before a command acts on what it names, and whether
/// `--all` may stand for them (FDB5's tools' defaults).
#[derive(Clone, Copy)]
struct Minimum {
    keys: &'static [&'static str],
    all_accepted: bool,
}

/// ... before a command reads what a request names.
const MINIMUM_KEYS: Minimum = Minimum { keys: &["class", "expver"], all_accepted: true };
/// ... before a command hides or locks data sets.
const MINIMUM_KEYS_TO_CHANGE: Minimum = Minimum { keys: &fieldstore::api::MINIMUM_KEYS_TO_CHANGE, all_accepted: true };
/// ... before a wipe, which never acts on the whole store.
const MINIMUM_KEYS_TO_WIPE: Minimum = Minimum { all_accepted: false, ..MINIMUM_KEYS_TO_CHANGE };

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
    /// Actions to (un)lock: archive, retrieve, list, wipe; repeated or comma-separated (default: all)
    #[arg(long = "action", value_name = "ACTION")]
    actions: Vec<String>,
}

impl RequestArgs {
    /// The requests given, read as MARS reads them for this store (routing keywords set
    /// aside, and said so), each naming the minimum keys (`default_minimum` unless
    /// `--minimum-keys` says otherwise); with `--all`, one request for everything.
    fn requests(&self, fs: &FieldStore, default_minimum: Minimum) -> anyhow::Result<Vec<FieldRequest>> {
        if self.all {
            return Ok(vec![Request::default().for_fields(|_| true)?]);
        }
        let requests = match (&self.request, &self.request_file) {
            (Some(r), _) => vec![Request::parse(r)?],
            (None, Some(f)) => {
                let text = std::fs::read_to_string(f).with_context(|| format!("reading request file {}", f.display()))?;
                let all = Request::parse_many(&text)?;
                if all.is_empty() {
                    bail!("request file {} holds no request", f.display());
                }
                all
            }
            (None, None) => vec![Request::default()],
        };
        let minimum: Vec<&str> = match &self.minimum_keys {
            Some(keys) => keys.split(',').map(str::trim).filter(|k| !k.is_empty()).collect(),
            None => default_minimum.keys.to_vec(),
        };
        let keywords = fs.schema().keywords();
        let requests: Vec<FieldRequest> =
            requests.iter().map(|r| r.for_fields(|k| keywords.contains(k))).collect::<fieldstore::Result<_>>()?;
        for FieldRequest { request: r, ignored, .. } in &requests {
            if !ignored.is_empty() {
                note!("fieldstore: passed over {} in {r} (they select no field)", ignored.join(","));
            }
            let missing: Vec<&str> = minimum.iter().copied().filter(|k| r.get(k).is_none()).collect();
            if let Some(unknown) = r.keywords().find(|k| !missing.is_empty() && !keywords.contains(k)) {
                // `clas=od` is a typo before it is a request without a class.
                bail!("request {r}: unknown keyword '{unknown}': no schema rule uses it");
            }
            if !missing.is_empty() {
                let what = if r.is_empty() {
                    "no request was given".to_string()
                } else {
                    format!("the request {r} names no {}", missing.join(", "))
                };
                let or_all = if default_minimum.all_accepted { ", or give --all to act on the whole store" } else { "" };
                bail!("{what}: name a value for each of {} (the minimum keys; --minimum-keys changes them){or_all}", minimum.join(", "));
            }
        }
        Ok(requests)
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

/// Writes a man page for `fieldstore` and one for each subcommand (`fieldstore-list.1`, ...),
/// from the same definition as `--help`.
fn write_man_pages(dir: &Path) -> anyhow::Result<()> {
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    let command = Cli::command();
    let mut pages = vec![("fieldstore".to_string(), command.clone())];
    for sub in command.get_subcommands() {
        let name = format!("fieldstore-{}", sub.get_name());
        pages.push((name.clone(), sub.clone().name(name)));
    }
    for (name, page) in &pages {
        let path = dir.join(format!("{name}.1"));
        let mut bytes = Vec::new();
        clap_mangen::Man::new(page.clone()).render(&mut bytes).with_context(|| format!("rendering {name}.1"))?;
        std::fs::write(&path, bytes).with_context(|| format!("writing {}", path.display()))?;
    }
    note!("wrote {} man pages to {}", pages.len(), dir.display());
    Ok(())
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
    // One of FDB5's tools: run under its name (a link `fdb-list`), or `fieldstore fdb-list ...`.
    if let Some((tool, args)) = fdb5_tools::invoked(std::env::args_os().collect()) {
        std::process::exit(fdb5_tools::run(&tool, &args));
    }
    let cli = Cli::try_parse().unwrap_or_else(|e| {
        // --help and --version are no errors; a wrong argument exits 1, as any other error
        // does (FDB5's tools' convention), after clap's message and usage.
        let _ = e.print();
        std::process::exit(if e.use_stderr() { 1 } else { 0 });
    });
    if let Err(e) = run(cli) {
        let _ = std::io::stdout().flush();
        // Errors print whatever the verbosity; one that cannot be written is lost.
        let _ = writeln!(std::io::stderr(), "fieldstore: error: {}", fieldstore::Report::of(e.as_ref()));
        std::process::exit(1);
    }
}

fn open(cli_config: Option<&Path>) -> anyhow::Result<FieldStore> {
    let config = Config::resolve(cli_config)?;
    detail!("config: {}", config.source);
    Ok(fieldstore::open(&config)?)
}

/// Opens a store that must be there: every command but `archive` reads it, and a store that
/// is not there is most often a mistyped path, not an empty store.
fn open_existing(cli_config: Option<&Path>) -> anyhow::Result<FieldStore> {
    let fs = open(cli_config)?;
    fs.check_exists()?;
    Ok(fs)
}

fn run(cli: Cli) -> anyhow::Result<()> {
    output::set_verbosity(match (cli.quiet, cli.verbose) {
        (true, _) => output::Verbosity::Quiet,
        (_, true) => output::Verbosity::Verbose,
        _ => output::Verbosity::Normal,
    });
    let config = cli.config.as_deref();
    match cli.command {
        Command::Archive { files, key: Some(key), .. } => archive_raw(&open(config)?, &files, &key),
        Command::Archive { files, key: None, modifiers, include_filter, exclude_filter } => {
            let options = fieldstore::GribOptions {
                modifiers: modifiers.as_deref().map(fieldstore::GribOptions::parse_modifiers).transpose()?.unwrap_or_default(),
                include: include_filter.as_deref().map(Request::parse).transpose()?,
                exclude: exclude_filter.as_deref().map(Request::parse).transpose()?,
            };
            archive(&open(config)?, &files, &options)
        }
        Command::Retrieve { request, output } => {
            let fs = &open_existing(config)?;
            let requests = request.requests(fs, MINIMUM_KEYS)?;
            retrieve(fs, &requests, output.as_deref())
        }
        Command::List { request, depth, full, location, porcelain, flat, json } => {
            let fs = &open_existing(config)?;
            let style = output::ListStyle { location, porcelain, flat, json };
            for FieldRequest { request: r, .. } in request.requests(fs, MINIMUM_KEYS)? {
                let matches = fs.list(&r, ListOptions { depth, include_superseded: full, ..ListOptions::default() })?;
                output::print_list(&matches, depth, style).context("writing the list to standard output")?;
                if let Some(why) = &matches.explanation {
                    note!("fieldstore: nothing matched {r}: {why}");
                }
            }
            Ok(())
        }
        Command::Extract { query, ranges, indices, mask, csv } => {
            let ranges = extract_ranges(&ranges, indices.as_deref(), mask.as_deref())?;
            let extractor = fieldstore::extract::Extractor::new();
            let mut printed = output::Extracted::new(if csv {
                output::ExtractStyle::Csv
            } else if query.json {
                output::ExtractStyle::Json
            } else {
                output::ExtractStyle::Text
            });
            for_each_request(config, &query.request, MINIMUM_KEYS, |fs, r| printed.print(&extractor.extract(fs, r, &ranges)?, &ranges))?;
            printed.finish()
        }
        Command::Scan(q) => {
            let extractor = fieldstore::extract::Extractor::new();
            for_each_request(config, &q.request, MINIMUM_KEYS, |fs, r| {
                let mut bar = None;
                let kept = extractor.keep_packings(fs, r, &mut |done, total| {
                    bar.get_or_insert_with(|| output::count_progress(total as u64, "fields")).set_position(done as u64);
                })?;
                bar.inspect(|b| b.finish_and_clear());
                output::print_kept_packings(r, &kept, q.json)
            })
        }
        Command::Axes(q) => for_each_request(config, &q.request, MINIMUM_KEYS, |fs, r| {
            let (axes, why) = fs.axes(r)?;
            output::print_axes(&axes, q.json)?;
            if let Some(why) = why {
                note!("fieldstore: nothing matched {r}: {why}");
            }
            Ok(())
        }),
        Command::Wipe(w) if w.query.request.all => {
            bail!("wipe removes what a request names and takes no --all; to wipe every data set, name class=all,expver=all,stream=all,date=all,time=all")
        }
        Command::Wipe(w) => {
            for_each_request(config, &w.query.request, MINIMUM_KEYS_TO_WIPE, |fs, r| output::print_wipe(&fs.wipe(r, w.doit)?, w.query.json))
        }
        Command::Purge(p) => for_each_request(config, &p.query.request, MINIMUM_KEYS_TO_CHANGE, |fs, r| {
            output::print_purge(&fs.purge(r, p.doit)?, p.query.json)
        }),
        Command::Compare { query, against, against_request, scope, bit_identical, tolerance } => {
            let options = fieldstore::CompareOptions {
                scope: match scope.as_str() {
                    "mars" => fieldstore::CompareScope::Mars,
                    "header-only" => fieldstore::CompareScope::HeaderOnly,
                    "all" => fieldstore::CompareScope::All,
                    other => bail!("--scope {other}: give mars, header-only or all"),
                },
                comparison: if bit_identical { fieldstore::GribComparison::BitIdentical } else { fieldstore::GribComparison::GribKeys },
                tolerance: if tolerance.is_finite() && tolerance >= 0.0 {
                    tolerance
                } else {
                    bail!("--tolerance takes a number, 0 or more")
                },
                ..fieldstore::CompareOptions::default()
            };
            compare(config, &query, against.as_deref(), against_request.as_deref(), &options)
        }
        Command::Dump { query, entries } => for_each_request(config, &query.request, MINIMUM_KEYS, |fs, r| {
            output::print_json_or(fs.dump(r, entries)?.as_slice(), query.json, output::dump_text)
        }),
        Command::Hide(h) => for_each_request(config, &h.query.request, MINIMUM_KEYS_TO_CHANGE, |fs, r| {
            output::print_json_or(fs.hide(r, h.doit)?.as_slice(), h.query.json, output::hide_text)
        }),
        Command::Overlay { source, target, remove, force, variable_keys, json } => {
            let fs = open_existing(config)?;
            let named = |text: &str| fs.dataset_named(&Request::parse(text)?);
            let options = fieldstore::api::OverlayOptions { remove, force, variable_keys };
            output::print_json_or(&fs.overlay(&named(&source)?, &named(&target)?, &options)?, json, output::overlay_text)
        }
        Command::Compact(q) => {
            for_each_request(config, &q.request, MINIMUM_KEYS, |fs, r| output::print_json_or(&fs.compact(r)?, q.json, output::compact_text))
        }
        Command::Lock(c) => control(&open_existing(config)?, &c, Some(true), false),
        Command::Unlock(c) => control(&open_existing(config)?, &c, Some(false), false),
        Command::Status(q) => control(&open_existing(config)?, &ControlArgs { request: q.request, actions: Vec::new() }, None, q.json),
        Command::Stats(q) => {
            for_each_request(config, &q.request, MINIMUM_KEYS, |fs, r| output::print_json_or(&fs.stats(r)?, q.json, output::stats_text))
        }
        Command::Where(q) => for_each_request(config, &q.request, MINIMUM_KEYS, |fs, r| {
            output::print_json_or(fs.where_is(r)?.as_slice(), q.json, output::where_text)
        }),
        Command::Copy { request, source, target, modifiers, sort, read_back, batch_bytes, from_list: _, json } => {
            let source = open_existing(source.as_deref().or(config))?;
            let requests: Vec<Request> = request.requests(&source, MINIMUM_KEYS)?.into_iter().map(|r| r.request).collect();
            let options = fieldstore::CopyOptions {
                modifiers: modifiers.as_deref().map(fieldstore::GribOptions::parse_modifiers).transpose()?.unwrap_or_default(),
                sort_by_location: sort,
                read_back,
                batch_bytes,
            };
            copy(&source, &open(Some(&target))?, &requests, &options, json)
        }
        Command::Reindex { request, sink, ignore_no_data, json } => {
            let source = open_existing(config)?;
            let requests: Vec<Request> = request.requests(&source, MINIMUM_KEYS)?.into_iter().map(|r| r.request).collect();
            let sink = open(Some(&sink))?;
            let mut bar = None;
            let report = fieldstore::reindex(&source, &sink, &requests, ignore_no_data, &mut |done, total| {
                bar.get_or_insert_with(|| output::progress(total, "reindexing")).set_position(done);
            })?;
            if let Some(bar) = bar {
                bar.finish_and_clear();
            }
            output::print_json_or(&report, json, output::reindex_text)
        }
        Command::Move { transport: Some(transport), .. } => {
            bail!("--transport {transport}: fieldstore moves with one process (FDB5's MPI transport is not supported); leave it out")
        }
        Command::Move { request, target: Some(target), transport: None, json, .. } => move_to_store(config, &request, &target, json),
        Command::Move { request, dest: Some(dest), keep, delay, threads, transport: None, json, .. } => {
            let options =
                fieldstore::MoveOptions { destination: dest, keep, delay: std::time::Duration::from_secs(delay), threads: threads.into() };
            move_datasets(config, &request, &options, json)
        }
        Command::Move { .. } => bail!("move needs --dest ROOT or --target FILE"),
        Command::Schema { check, split } => schema(config, check.as_deref(), split.as_deref()),
        Command::Info { json } => {
            let config = Config::resolve(config)?;
            // Checked as a reader would use it: the schema read, the backends reached, the
            // store there.
            let everything = ListOptions { depth: 1, ..ListOptions::default() };
            let fs = fieldstore::open(&config)?;
            fs.check_exists()?;
            let datasets = fs.list(&Request::default(), everything)?.datasets.len();
            output::print_info(&config, datasets, json)
        }
        Command::Init { json } => {
            let made = open(config)?.create_roots()?;
            output::print_json_or(&made, json, |made| match made.as_slice() {
                [] => "every configured root is there: none made\n".into(),
                made => made.iter().map(|root| format!("made root {root}\n")).collect(),
            })
        }
        Command::Serve {
            listen,
            tls_certificate,
            tls_key,
            client_ca,
            access,
            insecure_anywhere,
            max_field,
            max_in_flight,
            max_memory,
            text_logs,
        } => {
            fieldstore_server::log_to_stderr(!text_logs);
            let tls = tls_certificate.zip(tls_key).map(|(certificate, key)| fieldstore_server::TlsFiles { certificate, key, client_ca });
            let access = access.as_deref().map(fieldstore_server::Access::load).transpose()?.unwrap_or(fieldstore_server::Access::Open);
            let limits = fieldstore_server::Limits { max_field, max_in_flight, max_memory };
            let options = fieldstore_server::ServeOptions { listen, tls, access, insecure_anywhere, limits };
            let fs = open(config)?;
            fieldstore_server::serve(fs, options, |address| {
                // Tests and scripts read the port from this line, at once.
                println!("listening on {address}");
                let _ = std::io::stdout().flush();
            })?;
            Ok(())
        }
        Command::Token { name, json } => {
            let token = fieldstore_server::new_token();
            let identity =
                serde_json::json!({"name": name, "token_sha256": fieldstore_server::token_hash(&token), "allow": {"read": ["*"]}});
            let both = serde_json::json!({"token": token, "identity": identity});
            output::print_json_or(&both, json, |both| {
                let (token, hash) = (&both["token"], &both["identity"]["token_sha256"]);
                let name = &both["identity"]["name"];
                format!(
                    "token (give it to the caller, keep it nowhere else): {}\nidentity for the access file (edit its patterns):\n  - name: {name}\n    token_sha256: {}\n    allow:\n      read: [\"*\"]\n",
                    token.as_str().unwrap_or_default(),
                    hash.as_str().unwrap_or_default()
                )
            })
        }
        Command::Sample(args) => sample::run(&args),
        Command::Bench(b) => bench::run(&b, config),
        Command::Fdb5Tools => {
            for name in fdb5_tools::names() {
                outln!("{name}");
            }
            Ok(())
        }
        Command::Completions { shell } => {
            let mut out = std::io::stdout().lock();
            clap_complete::generate(shell, &mut Cli::command(), "fieldstore", &mut out);
            out.flush().context("writing the completions")
        }
        Command::Man { out } => write_man_pages(&out),
    }
}

/// Opens the store and runs `each` for every request given.
/// The ranges `extract` was given: by `--ranges`, an indices file or a mask file.
fn extract_ranges(ranges: &[String], indices: Option<&Path>, mask: Option<&Path>) -> anyhow::Result<Vec<fieldstore::extract::Range>> {
    use fieldstore::extract::Range;
    let read = |path: &Path| std::fs::read_to_string(path).with_context(|| format!("cannot read {}", path.display()));
    let words =
        |text: &str| text.split(|c: char| c.is_whitespace() || c == ',').filter(|w| !w.is_empty()).map(String::from).collect::<Vec<_>>();
    let chosen = if let Some(path) = indices {
        let indices = words(&read(path)?)
            .iter()
            .map(|w| w.parse::<u64>().map_err(|_| anyhow::anyhow!("{}: '{w}' is not a grid point index", path.display())))
            .collect::<anyhow::Result<Vec<_>>>()?;
        Range::from_indices(&indices)
    } else if let Some(path) = mask {
        let marks = read(path)?.chars().filter(|c| !c.is_whitespace() && *c != ',').collect::<Vec<_>>();
        if let Some(bad) = marks.iter().find(|c| !matches!(c, '0' | '1')) {
            bail!("{}: '{bad}' is not 0 or 1 (one per grid point)", path.display());
        }
        Range::from_mask(&marks.iter().map(|c| *c == '1').collect::<Vec<_>>())
    } else {
        ranges.iter().map(|text| parse_range(text)).collect::<anyhow::Result<Vec<_>>>()?
    };
    if chosen.is_empty() {
        bail!("no grid point to extract: the indices or mask name none");
    }
    Ok(chosen)
}

/// A range of grid points as the command line gives it: `start-end`.
fn parse_range(text: &str) -> anyhow::Result<fieldstore::extract::Range> {
    let parsed = text.trim().split_once('-').and_then(|(start, end)| Some((start.trim().parse().ok()?, end.trim().parse().ok()?)));
    match parsed {
        Some((start, end)) => Ok(fieldstore::extract::Range::new(start, end)),
        None => bail!("--ranges: '{text}' is not start-end (grid points, end excluded, e.g. 0-10)"),
    }
}

fn for_each_request(
    config: Option<&Path>,
    args: &RequestArgs,
    minimum_keys: Minimum,
    mut each: impl FnMut(&FieldStore, &Request) -> anyhow::Result<()>,
) -> anyhow::Result<()> {
    let fs = &open_existing(config)?;
    for FieldRequest { request: r, .. } in args.requests(fs, minimum_keys)? {
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

/// `archive --key`: one file's bytes as one field. A file of several GRIB messages would be
/// stored, and retrieved, as one field under one key: refused.
fn archive_raw(fs: &FieldStore, files: &[String], key: &str) -> anyhow::Result<()> {
    let [file] = files else { bail!("--key archives exactly one FILE") };
    let data = read_input(file)?;
    if let Ok(messages) = fieldstore::grib::scan(&data, file) {
        if messages.len() > 1 {
            bail!(
                "{file} holds {} GRIB messages: --key would store them as one field under one key; archive {file} without --key \
                 to read each message's keys (--modifiers k=v,... sets some of them)",
                messages.len()
            );
        }
    }
    fs.archive(&Key::parse(key)?, &data)?;
    fs.flush()?;
    note!("archived 1 field from {file} ({} bytes, as they are)", data.len());
    Ok(())
}

fn archive(fs: &FieldStore, files: &[String], options: &fieldstore::GribOptions) -> anyhow::Result<()> {
    let inputs: Vec<(String, Input)> = files.iter().map(|f| Ok((f.clone(), read_input(f)?))).collect::<anyhow::Result<_>>()?;
    // Every message of every input is checked before anything is archived; reading the keys
    // (ecCodes) is most of the time an archive takes.
    let started = std::time::Instant::now();
    let reading = output::progress(inputs.iter().map(|(_, data)| data.len() as u64).sum(), "reading keys");
    let mut prepared = Vec::new();
    for (name, data) in &inputs {
        let source = if name == "-" { "<stdin>" } else { name };
        if data.is_empty() {
            // As fdb-write: an empty input is a mistake (a file not yet written, a pipe that failed).
            bail!("{source} is empty: it holds no GRIB message to archive");
        }
        prepared.push(fieldstore::prepare_grib(fs, data, source, options, &|n| reading.inc(n as u64))?);
    }
    reading.finish_and_clear();
    let total: usize = prepared.iter().map(Vec::len).sum();
    detail!("read the keys of {total} messages in {:.3} s", started.elapsed().as_secs_f64());
    let started = std::time::Instant::now();
    let field_bytes = prepared.iter().flatten().map(|f| f.bytes.len() as u64).sum();
    let archiving = output::progress(field_bytes, "archiving");
    for field in prepared.iter().flatten() {
        fs.archive(&field.identifier, &field.bytes)?;
        archiving.inc(field.bytes.len() as u64);
    }
    archiving.finish_and_clear();
    detail!("archived {total} fields in {:.3} s", started.elapsed().as_secs_f64());
    let started = std::time::Instant::now();
    let flushing = output::spinner("flushing");
    fs.flush()?;
    flushing.finish_and_clear();
    detail!("flushed in {:.3} s", started.elapsed().as_secs_f64());
    let stats = fs.archive_stats();
    note!("archived {total} fields ({}) from {} input(s)", output::human_bytes(stats.bytes_archived), inputs.len());
    output::note_kept_beside(&stats.kept_beside);
    Ok(())
}

/// `copy`: the copy with a progress bar, then its summary.
fn copy(
    source: &FieldStore,
    target: &FieldStore,
    requests: &[Request],
    options: &fieldstore::CopyOptions,
    json: bool,
) -> anyhow::Result<()> {
    let started = std::time::Instant::now();
    let mut bar = None;
    let report = fieldstore::copy(source, target, requests, options, &mut |p| {
        bar.get_or_insert_with(|| output::progress(p.total, "copying")).set_position(p.done);
    })?;
    if let Some(bar) = bar {
        bar.finish_and_clear();
    }
    output::print_copy(&report, started.elapsed().as_secs_f64(), json)
}

/// `compare`: the report, and exit status 1 when the two sides differ.
fn compare(
    config: Option<&Path>,
    query: &QueryArgs,
    against: Option<&Path>,
    against_request: Option<&str>,
    options: &fieldstore::CompareOptions,
) -> anyhow::Result<()> {
    let reference = open_existing(config)?;
    let test = match against {
        Some(file) => open_existing(Some(file))?,
        None => open_existing(config)?,
    };
    let request = match query.request.requests(&reference, MINIMUM_KEYS)?.as_slice() {
        [one] => one.request.clone(),
        many => bail!("compare takes one request ({} given)", many.len()),
    };
    let other = match against_request {
        Some(text) => Request::parse(text)?,
        None => request.clone(),
    };
    let report = fieldstore::compare(&reference, &test, &request, &other, options)?;
    output::print_json_or(&report, query.json, output::compare_text)?;
    if !report.same() {
        bail!("the two differ");
    }
    Ok(())
}

/// `move`: each data set moved with a progress bar, then the summary.
fn move_datasets(config: Option<&Path>, request: &RequestArgs, options: &fieldstore::MoveOptions, json: bool) -> anyhow::Result<()> {
    let resolved = Config::resolve(config)?;
    let fs = fieldstore::open(&resolved)?;
    fs.check_exists()?;
    let requests: Vec<Request> = request.requests(&fs, MINIMUM_KEYS_TO_CHANGE)?.into_iter().map(|r| r.request).collect();
    let started = std::time::Instant::now();
    // Files are copied by several threads.
    let bar = std::sync::Mutex::new(output::DatasetBar::default());
    let report = fieldstore::move_datasets(&resolved, &fs, &requests, options, &|dataset, p| {
        bar.lock().unwrap_or_else(|e| e.into_inner()).show(dataset, p.done, p.total);
    });
    bar.into_inner().unwrap_or_else(|e| e.into_inner()).finish();
    output::print_move(&report?, started.elapsed().as_secs_f64(), json)
}

/// `move --target`: each data set moved with a progress bar, then the summary.
fn move_to_store(config: Option<&Path>, request: &RequestArgs, target: &Path, json: bool) -> anyhow::Result<()> {
    let source = open_existing(config)?;
    let requests: Vec<Request> = request.requests(&source, MINIMUM_KEYS_TO_CHANGE)?.into_iter().map(|r| r.request).collect();
    let target = open(Some(target))?;
    let started = std::time::Instant::now();
    let mut bar = output::DatasetBar::default();
    let report = fieldstore::move_to_store(&source, &target, &requests, &mut |dataset, p| bar.show(dataset, p.done, p.total));
    bar.finish();
    output::print_store_move(&report?, started.elapsed().as_secs_f64(), json)
}

/// Where retrieved fields go: standard output, or a file written under a temporary name beside
/// it and renamed into place once complete, so a failed retrieve leaves no file behind (and
/// never a partial one in place of an earlier one).
/// A device or pipe (`/dev/stdout`, a FIFO) is written in place.
enum Sink {
    Stdout(std::io::BufWriter<std::io::StdoutLock<'static>>),
    Special(std::io::BufWriter<std::fs::File>),
    File { out: std::io::BufWriter<tempfile::NamedTempFile>, path: PathBuf },
}

impl Sink {
    fn open(output: &str) -> anyhow::Result<Sink> {
        if output == "-" {
            return Ok(Sink::Stdout(std::io::BufWriter::new(std::io::stdout().lock())));
        }
        let mut path = PathBuf::from(output);
        if let Ok(metadata) = std::fs::metadata(&path) {
            if !metadata.is_file() {
                let file = std::fs::OpenOptions::new().write(true).open(&path).with_context(|| format!("opening {output}"))?;
                return Ok(Sink::Special(std::io::BufWriter::new(file)));
            }
            // A link to a file: the file it names is replaced, not the link.
            path = std::fs::canonicalize(&path).with_context(|| format!("resolving {output}"))?;
        }
        let dir = path.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
        use std::os::unix::fs::PermissionsExt;
        let temporary = tempfile::Builder::new()
            .prefix(".fieldstore-retrieve-")
            .permissions(std::fs::Permissions::from_mode(0o666))
            .tempfile_in(dir)
            .with_context(|| format!("creating {output} (a temporary file in {})", dir.display()))?;
        Ok(Sink::File { out: std::io::BufWriter::new(temporary), path })
    }

    /// Writes out what is buffered and, for a file, gives it its name.
    fn finish(self) -> anyhow::Result<()> {
        match self {
            Sink::Stdout(mut out) => out.flush().context("writing to standard output"),
            Sink::Special(mut out) => out.flush().context("writing the output"),
            Sink::File { out, path } => {
                let temporary = out.into_inner().map_err(|e| e.into_error()).with_context(|| format!("writing {}", path.display()))?;
                temporary
                    .persist(&path)
                    .map_err(|e| e.error)
                    .with_context(|| format!("moving the output into place as {}", path.display()))?;
                Ok(())
            }
        }
    }
}

impl Write for Sink {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        match self {
            Sink::Stdout(out) => out.write(buf),
            Sink::Special(out) => out.write(buf),
            Sink::File { out, .. } => out.write(buf),
        }
    }

    fn flush(&mut self) -> std::io::Result<()> {
        match self {
            Sink::Stdout(out) => out.flush(),
            Sink::Special(out) => out.flush(),
            Sink::File { out, .. } => out.flush(),
        }
    }
}

/// Retrieves each request into `-o OUT`, or else into the file its `target=` names (MARS:
/// requests naming the same target write one after the other into it).
fn retrieve(fs: &FieldStore, requests: &[FieldRequest], output: Option<&str>) -> anyhow::Result<()> {
    let mut outputs: Vec<(String, Vec<&Request>)> = Vec::new();
    for FieldRequest { request, target, .. } in requests {
        let out = match (output, target) {
            (Some(out), _) => out,
            (None, Some(target)) => target,
            (None, None) => bail!("no output for {request}: give -o FILE (or - for standard output), or target=FILE in the request"),
        };
        match outputs.iter_mut().find(|(o, _)| o == out) {
            Some((_, group)) => group.push(request),
            None => outputs.push((out.to_string(), vec![request])),
        }
    }
    if output.is_some() && requests.iter().any(|r| r.target.is_some()) {
        note!("fieldstore: writing to {} as -o says; target= in the requests passed over", output.unwrap_or_default());
    }
    for (out, group) in outputs {
        retrieve_into(fs, &group, &out)?;
    }
    Ok(())
}

/// Retrieves requests into one output (`-` for standard output).
fn retrieve_into(fs: &FieldStore, requests: &[&Request], output: &str) -> anyhow::Result<()> {
    let started = std::time::Instant::now();
    let mut out = Sink::open(output)?;
    let (mut fields, mut bytes) = (0usize, 0u64);
    for r in requests {
        let (mut reader, why) = fs.retrieve(r)?;
        if let Some(why) = why {
            bail!("nothing matched {r}: {why}");
        }
        if !reader.not_found().is_empty() {
            // Found in part: retrieved, as FDB5 does, with what was not found said.
            note!("fieldstore: {r}: not found: {}", reader.not_found().join(","));
        }
        let progress = output::progress(reader.total_bytes(), "retrieving");
        fields += reader.fields().len();
        bytes += reader.total_bytes();
        reader.write_to(&mut progress.wrap_write(&mut out)).context("retrieving")?;
        progress.finish_and_clear();
    }
    out.finish()?;
    detail!("retrieved in {:.3} s", started.elapsed().as_secs_f64());
    if output != "-" || !std::io::stdout().is_terminal() {
        note!(
            "retrieved {fields} fields ({}){}",
            output::human_bytes(bytes),
            if output == "-" { String::new() } else { format!(" into {output}") }
        );
    }
    Ok(())
}

fn control(fs: &FieldStore, args: &ControlArgs, lock: Option<bool>, json: bool) -> anyhow::Result<()> {
    let actions: Vec<ControlAction> = if args.actions.is_empty() {
        ControlAction::ALL.to_vec()
    } else {
        // Repeated, or comma-separated as `status` prints them.
        args.actions
            .iter()
            .flat_map(|a| a.split(','))
            .map(|a| {
                ControlAction::from_name(a.trim()).with_context(|| format!("unknown action '{a}' (use archive, retrieve, list or wipe)"))
            })
            .collect::<anyhow::Result<_>>()?
    };
    // Status only reads: the minimum keys of reading.
    let minimum_keys = if lock.is_some() { MINIMUM_KEYS_TO_CHANGE } else { MINIMUM_KEYS };
    for FieldRequest { request: r, .. } in args.request.requests(fs, minimum_keys)? {
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
