//! FDB5's tools under their own names: the `fieldstore` binary run as `fdb-list` (a link of
//! that name beside it) or as `fieldstore fdb-list ...` takes FDB5 5.25's options and prints
//! FDB5's output, for the scripts and cron jobs written against FDB5's tools. fieldstore's own
//! commands keep their defaults; these keep FDB5's, and `crates/cli/tests/fdb5_tools.rs` runs
//! each command line on FDB5's tools and on these and compares what they print.

mod axes;
mod compare;
mod dump;
mod dump_index;
mod dump_toc;
mod hammer;
mod hide;
mod info;
mod inspect;
mod list;
mod lock;
mod options;
mod overlay;
mod patch;
mod purge;
mod reindex;
mod root;
mod schema;
mod stats;
mod text;
mod transfer;
mod where_;
mod which;
mod wipe;
mod write_read;

use std::ffi::{OsStr, OsString};
use std::path::Path;

use fieldstore::{Config, FieldStore, Request};

use options::{usage, CommandLine, Opt, Synopsis};

/// A tool's run: its arguments, the program name left out.
type Tool = fn(&[String]) -> Result<(), Failure>;

/// The tools here, by FDB5's name.
const TOOLS: &[(&str, Tool)] = &[
    ("fdb-axes", axes::run),
    ("fdb-compare", compare::run),
    ("fdb-copy", transfer::run_copy),
    ("fdb-dump", dump::run),
    ("fdb-dump-index", dump_index::run),
    ("fdb-dump-toc", dump_toc::run),
    ("fdb-hammer", hammer::run),
    ("fdb-hide", hide::run),
    ("fdb-info", info::run),
    ("fdb-inspect", inspect::run),
    ("fdb-list", list::run),
    ("fdb-lock", lock::run_lock),
    ("fdb-move", transfer::run_move),
    ("fdb-overlay", overlay::run),
    ("fdb-patch", patch::run),
    ("fdb-purge", purge::run),
    ("fdb-read", write_read::run_read),
    ("fdb-reindex", reindex::run),
    ("fdb-root", root::run),
    ("fdb-schema", schema::run),
    ("fdb-stats", stats::run),
    ("fdb-status", where_::run_status),
    ("fdb-unlock", lock::run_unlock),
    ("fdb-url", write_read::run_url),
    ("fdb-where", where_::run_where),
    ("fdb-which", which::run),
    ("fdb-wipe", wipe::run),
    ("fdb-write", write_read::run_write),
];

/// The names of the tools here.
pub fn names() -> impl Iterator<Item = &'static str> {
    TOOLS.iter().map(|(name, _)| *name)
}

/// The FDB5 tool a command line runs, and the tool's arguments: the program run under a
/// tool's name (`fdb-list`, `/usr/bin/fdb-list`: a link to `fieldstore`), or `fieldstore
/// [--config FILE] [-q|-v] fdb-list ...` (`--config` passed on as the tool's).
pub fn invoked(args: Vec<OsString>) -> Option<(String, Vec<String>)> {
    let text = |a: &OsString| a.to_string_lossy().into_owned();
    if let Some(tool) = args.first().and_then(|a| tool_named(a)) {
        return Some((tool, args[1..].iter().map(text).collect()));
    }
    let mut passed = Vec::new();
    let mut rest = args.iter().skip(1);
    while let Some(arg) = rest.next() {
        match arg.to_str() {
            Some("--config") => passed.push(format!("--config={}", text(rest.next()?))),
            Some(a) if a.starts_with("--config=") => passed.push(a.to_string()),
            Some("-q" | "--quiet" | "-v" | "--verbose") => {}
            _ => {
                let tool = tool_named(arg)?;
                passed.extend(rest.map(text));
                return Some((tool, passed));
            }
        }
    }
    None
}

/// The FDB5 tool a program name or argument names (`fdb-list`, `/usr/bin/fdb-list`).
fn tool_named(name: &OsStr) -> Option<String> {
    let name = Path::new(name).file_name()?.to_str()?;
    name.starts_with("fdb-").then(|| name.to_string())
}

/// Runs FDB5's tool `tool` with `args` (the program name left out); its exit code, FDB5's:
/// 0, or 1 after an error (printed as FDB5 prints it, with fieldstore's explanation).
pub fn run(tool: &str, args: &[String]) -> i32 {
    let Some((_, run)) = TOOLS.iter().find(|(name, _)| *name == tool) else {
        let names: Vec<&str> = names().collect();
        eprintln!(
            "fieldstore: {tool} is not one of FDB5's tools fieldstore runs under its own name: {} (its own commands do the rest: \
             fieldstore --help)",
            names.join(", ")
        );
        return 1;
    };
    match run(args) {
        Ok(()) => 0,
        Err(failure) => {
            failure.print();
            1
        }
    }
}

/// Why a tool stopped.
pub enum Failure {
    /// A command line FDB5 refuses: the message and the tool's usage, on standard output as
    /// FDB5 prints them.
    Usage(String, String),
    /// A request or combination of options FDB5 refuses (its `UserError`).
    User(String),
    /// What FDB5's tool does and this one does not.
    Unsupported(String),
    /// An error of the store or of the output.
    Store(anyhow::Error),
}

impl Failure {
    fn usage(message: String, tool: &str, options: &[&[Opt]]) -> Failure {
        Failure::Usage(message, usage(tool, &Synopsis::Visit, options))
    }

    fn user(message: &str) -> Failure {
        Failure::User(message.to_string())
    }

    fn unsupported(message: &str) -> Failure {
        Failure::Unsupported(message.to_string())
    }

    fn io(e: std::io::Error) -> Failure {
        Failure::Store(e.into())
    }

    fn print(&self) {
        match self {
            Failure::Usage(message, usage) => println!("{message}{usage}"),
            Failure::User(message) => eprintln!("Exception: UserError: {message}"),
            Failure::Unsupported(message) => eprintln!("fieldstore: not supported: {message}"),
            Failure::Store(e) => eprintln!("fieldstore: error: {}", report(e)),
        }
    }
}

/// An error with its causes, as fieldstore prints them.
fn report(e: &anyhow::Error) -> String {
    match e.downcast_ref::<fieldstore::Error>() {
        Some(e) => fieldstore::Report::of(e).to_string(),
        None => format!("{e:#}"),
    }
}

impl From<fieldstore::Error> for Failure {
    fn from(e: fieldstore::Error) -> Failure {
        Failure::Store(e.into())
    }
}

impl From<std::io::Error> for Failure {
    fn from(e: std::io::Error) -> Failure {
        Failure::io(e)
    }
}

/// A file's bytes; the error names the file.
fn read_input(path: &str) -> Result<Vec<u8>, Failure> {
    std::fs::read(path).map_err(|e| Failure::Store(anyhow::Error::new(e).context(format!("Cannot open {path}"))))
}

impl From<anyhow::Error> for Failure {
    fn from(e: anyhow::Error) -> Failure {
        Failure::Store(e)
    }
}

/// A request's keywords and their values as FDB5 prints them: expanded by their types
/// (`expver=1` as `0001`, `step=0/to/12/by/6` as `0/6/12`, `param=t` as `130`), unless `raw`,
/// in the request's order. A value its type refuses is printed as given: the request's
/// reading reports it.
fn expanded(fs: &FieldStore, request: &Request, raw: bool) -> Vec<(String, String)> {
    let types = fs.schema().global_types();
    let mut pairs = Vec::new();
    for keyword in request.keywords() {
        let given = request.get(keyword).map(ToString::to_string).unwrap_or_default();
        let ty = types.iter().find(|(k, _)| k == keyword).map_or(fieldstore::types::KeywordType::Default, |(_, t)| *t);
        let values = match (raw, request.values(keyword, ty)) {
            (false, Ok(Some(values))) => values.join("/"),
            _ => given,
        };
        pairs.push((keyword.to_string(), values));
    }
    pairs
}

/// The store of the config of `--config` or of the environment, which must be there.
fn configured_store(line: &CommandLine) -> Result<FieldStore, Failure> {
    let store = fieldstore::open(&Config::resolve(line.value("config").map(Path::new))?)?;
    store.check_exists()?;
    Ok(store)
}

/// A visiting tool's store and requests (FDB5's `FDBVisitTool`): the config of `--config` or
/// of the environment, and the requests given, each naming the minimum keys, or `--all`.
struct ToolRequests {
    store: FieldStore,
    requests: Vec<Request>,
    /// `--raw`: requests printed as given.
    raw: bool,
}

/// The data sets `--ignore-errors` left out, said on standard error as FDB5 warns.
impl Drop for ToolRequests {
    fn drop(&mut self) {
        for skipped in self.store.take_skipped() {
            eprintln!("Warning: {skipped}");
        }
    }
}

impl ToolRequests {
    fn open(line: &CommandLine, default_minimum: &str) -> Result<ToolRequests, Failure> {
        let config = Config::resolve(line.value("config").map(Path::new))?;
        ToolRequests::open_on(fieldstore::open(&config)?, line, default_minimum)
    }

    /// [`ToolRequests::open`] on a store already open. With `--ignore-errors`, a data set that
    /// cannot be read is left out with a warning (when the tool ends) instead of failing it.
    fn open_on(store: FieldStore, line: &CommandLine, default_minimum: &str) -> Result<ToolRequests, Failure> {
        let store = if line.has("ignore-errors") { store.skipping_unreadable() } else { store };
        let minimum: Vec<&str> = line.value("minimum-keys").unwrap_or(default_minimum).split(',').filter(|k| !k.is_empty()).collect();
        if line.has("all") && !minimum.is_empty() {
            return Err(Failure::user("--all option (advanced for debugging) can only be used with no minimum keys"));
        }
        if line.has("all") && !line.requests.is_empty() {
            // FDB5 prints its usage (exit 1 too).
            return Err(Failure::user("--all and requests are not compatible: give one or the other"));
        }
        store.check_exists()?;
        let mut requests = Vec::new();
        if line.has("all") {
            requests.push(Request::parse("list")?);
        }
        for text in &line.requests {
            let request = Request::parse(text)?;
            if let Some(missing) = minimum.iter().find(|k| request.get(k).is_none()) {
                return Err(Failure::User(format!("Please provide a value for '{missing}'")));
            }
            requests.push(request);
        }
        Ok(ToolRequests { store, requests, raw: line.has("raw") })
    }

    /// Each request, as the store reads it, with its header: FDB5's print of the request
    /// (`list,`, then each keyword on a line of its own, in MARS's order, its values expanded
    /// unless `--raw`).
    fn requests(&self) -> Result<Vec<(Request, String)>, Failure> {
        self.requests_as("list")
    }

    /// [`ToolRequests::requests`], the header with the verb FDB5's tool prints (`retrieve`
    /// for wipe and purge).
    fn requests_as(&self, verb: &str) -> Result<Vec<(Request, String)>, Failure> {
        let keywords = self.store.schema().keywords();
        let mut out = Vec::new();
        for request in &self.requests {
            let request = request.for_fields(|k| keywords.contains(k))?.request;
            let pairs = expanded(&self.store, &request, self.raw);
            let lines: Vec<String> = text::in_mars_order(pairs).into_iter().map(|(k, v)| format!("\t{k}={v}")).collect();
            // `--all` (a request naming nothing) prints as FDB5 prints it.
            let header = if lines.is_empty() { " -- ALL --".to_string() } else { format!("{verb},\n{}\n\n", lines.join(",\n")) };
            out.push((request, header));
        }
        Ok(out)
    }
}
