//! `fdb-hammer`, FDB5 5.25's benchmark under its name: its options and its summary lines
//! (`Fields written: ...`), running the same workload as `fieldstore bench hammer` (one
//! process; the GRIB template's keys set per field with ecCodes): write, flushing every step,
//! or with `--read` read it back, or with `--list` list it. FDB5's own crashes at start on
//! this project's machines, so the output cannot be compared with it (docs/fdb5.md); what
//! needs several nodes (`--itt`, `--nodes`, `--ppn`, the TCP barrier) is refused: `fieldstore
//! bench hammer --procs N --itt` runs the operational pattern.

use std::io::Write;

use fieldstore_bench::launch::Place;
use fieldstore_bench::roles::{Pattern, Role};
use fieldstore_bench::{Check, Hammer, Payload, Phase};

use super::options::{usage, CommandLine, Opt, Synopsis, Value};
use super::Failure;

const OPTIONS: &[Opt] = &[
    Opt { name: "expver", value: Value::Text, help: "Reset expver on data" },
    Opt { name: "class", value: Value::Text, help: "Reset class on data" },
    Opt { name: "step", value: Value::Integer, help: "The first step number to use" },
    Opt { name: "number", value: Value::Integer, help: "The first ensemble number to use" },
    Opt { name: "level", value: Value::Integer, help: "The first level number to use" },
    Opt { name: "nsteps", value: Value::Integer, help: "Number of steps" },
    Opt { name: "nensembles", value: Value::Integer, help: "Number of ensemble members" },
    Opt { name: "nlevels", value: Value::Integer, help: "Number of levels" },
    Opt { name: "nparams", value: Value::Integer, help: "Number of parameters" },
    Opt { name: "levels", value: Value::Text, help: "Comma-separated list of level numbers to use" },
    Opt { name: "verbose", value: Value::Switch, help: "Print verbose output" },
    Opt { name: "read", value: Value::Switch, help: "Read rather than write the data" },
    Opt { name: "list", value: Value::Switch, help: "List rather than write the data" },
    Opt { name: "disable-subtocs", value: Value::Switch, help: "Disable use of subtocs" },
    Opt { name: "md-check", value: Value::Switch, help: "Calculate a metadata checksum on every field write and check it on read" },
    Opt {
        name: "full-check",
        value: Value::Switch,
        help: "Insert metadata and data checksums on every field write and check them on read",
    },
    Opt { name: "no-randomise-data", value: Value::Switch, help: "Disable randomisation of field data written" },
    Opt { name: "itt", value: Value::Switch, help: "Run the benchmark in ITT mode" },
    Opt { name: "config", value: Value::Text, help: "FDB configuration filename" },
];

/// FDB5's options this tool refuses, with why.
const REFUSED: &[(&str, &str)] = &[
    ("itt", "the operational (ITT) mode runs several processes: fieldstore bench hammer --itt --procs N"),
    ("md-check", "stamping digests into a GRIB template's data is not done here: fieldstore bench hammer --md-check (synthetic payload)"),
    (
        "full-check",
        "stamping checksums into a GRIB template's data is not done here: fieldstore bench hammer --full-check (synthetic payload)",
    ),
];

const SYNOPSIS: &str = "\nUsage: fdb-hammer [--read] [--list] [--no-randomise-data] [--md-check|--full-check] --expver=<expver> \
                        --class=<class> --nparams=<nparams> [--nlevels=<nlevels> [--level=<level>]]|[--levels=<level1,level2,...>] \
                        [--nensembles=<nensembles>] [--number=<number>] --nsteps=<nsteps> [--step=<step>] <grib_path>\n";

/// Runs `fdb-hammer` with `args` (the program name left out).
pub fn run(args: &[String]) -> Result<(), Failure> {
    let options: &[&[Opt]] = &[OPTIONS];
    let line =
        CommandLine::parse(args, options).map_err(|e| Failure::Usage(e, usage("fdb-hammer", &Synopsis::Verbatim(SYNOPSIS), options)))?;
    if let Some((name, why)) = REFUSED.iter().find(|(name, _)| line.has(name)) {
        return Err(Failure::Unsupported(format!("--{name}: {why}")));
    }
    let hammer = workload(&line)?;
    let place = Place { rank: 0, size: 1, node: "localhost".into() };
    let role = Role::of_halves(&place, Pattern::A, false, line.has("read"))?;
    let hammer = hammer.share(role)?;
    let phase = match (line.has("read"), line.has("list")) {
        (true, _) => hammer.read(&super::configured_store(&line)?)?,
        (false, true) => hammer.list(&super::configured_store(&line)?)?,
        // A root not there is made only as the config says (archive names it otherwise).
        (false, false) => {
            hammer.write(&fieldstore::open(&fieldstore::Config::resolve(line.value("config").map(std::path::Path::new))?)?)?
        }
    };
    let mut out = std::io::stdout().lock();
    out.write_all(summary(&phase).as_bytes())?;
    Ok(())
}

/// The workload the options describe; FDB5's errors for what it requires.
fn workload(line: &CommandLine) -> Result<Hammer, Failure> {
    let required = ["expver", "class", "nsteps", "nparams"];
    if required.iter().any(|name| line.value(name).is_none()) {
        return Err(Failure::user("--expver, --class, --nsteps and --nparams are required arguments"));
    }
    if line.value("nlevels").is_none() && line.value("levels").is_none() {
        return Err(Failure::user("--nlevels is a required argument unless --itt is specified"));
    }
    let [template] = line.requests.as_slice() else {
        return Err(Failure::user("give one GRIB file, the template of every field written (<grib_path>)"));
    };
    // Bounded as bench hammer's are, before they size a loop or a sum.
    let count = |name: &str, default: usize| -> Result<usize, Failure> {
        match line.value(name) {
            None => Ok(default),
            Some(text) => crate::bench::count(text).map_err(|e| Failure::User(format!("--{name}={text}: {}", fieldstore::Report::of(&e)))),
        }
    };
    let levels: Option<Vec<String>> = line.value("levels").map(|l| l.split(',').map(str::to_string).collect());
    let (class, expver) = (line.value("class").unwrap_or_default(), line.value("expver").unwrap_or_default());
    let payload = Payload::from_template(std::path::Path::new(template), class, expver)?;
    let field_bytes = match &payload {
        Payload::Grib(message) => message.len(),
        Payload::Synthetic(bytes) => bytes.len(),
    };
    let nlevels = levels.as_ref().map_or(count("nlevels", 0), |l| Ok(l.len()))?;
    crate::bench::workload_bytes(&[count("nsteps", 0)?, nlevels, count("nparams", 0)?, count("nensembles", 1)?], field_bytes)?;
    Ok(Hammer {
        class: class.to_string(),
        expver: expver.to_string(),
        nsteps: count("nsteps", 0)?,
        step: count("step", 0)?,
        nlevels,
        level: count("level", 1)?,
        levels,
        nparams: count("nparams", 0)?,
        params: None,
        nensembles: count("nensembles", 1)?,
        number: count("number", 1)?,
        payload,
        check: Check::None,
        itt: None,
    })
}

/// FDB5's summary of a phase: counts, durations, rates and the first and last I/O's times.
fn summary(phase: &Phase) -> String {
    let seconds = phase.seconds.max(f64::MIN_POSITIVE);
    let rates = format!(
        "Total rate: {} bytes / s\nTotal rate: {} MB / s\n",
        phase.bytes as f64 / seconds,
        phase.bytes as f64 / (seconds * (1u64 << 20) as f64)
    );
    let stamp = |us: u64| format!("{}.{:06}", us / 1_000_000, us % 1_000_000);
    let stamps = format!("Timestamp before first IO: {}\nTimestamp after last IO: {}\n", stamp(phase.first_io_us), stamp(phase.last_io_us));
    let spent = |kind: &str| phase.breakdown.get(kind).copied().unwrap_or_default();
    match phase.mode {
        "list" => format!("fdb-hammer - Fields listed: {}\nfdb-hammer - List duration: {}\n", phase.fields, phase.seconds),
        "read" => format!(
            "Data read duration: {}\nFields read: {}\nBytes read: {}\nTotal duration: {}\n{rates}{stamps}",
            spent("retrieve"),
            phase.fields,
            phase.bytes,
            phase.seconds
        ),
        _ => format!(
            "Fields written: {}\nBytes written: {}\nTotal duration: {}\nGRIB duration: {}\nWriting duration: {}\n{rates}{stamps}",
            phase.fields,
            phase.bytes,
            phase.seconds,
            spent("grib"),
            phase.seconds - spent("grib")
        ),
    }
}
