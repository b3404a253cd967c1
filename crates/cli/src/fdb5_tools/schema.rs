//! `fdb-schema`, as FDB5 5.25's: each schema file given, or the configured schema, printed as
//! FDB5 prints a schema ([`fieldstore::Schema::fdb5_text`]).

use std::io::Write;
use std::path::Path;

use fieldstore::{Config, Schema};

use super::options::{usage, CommandLine, Opt, Synopsis, Value};
use super::Failure;

const OPTIONS: &[Opt] = &[Opt { name: "config", value: Value::Text, help: "FDB configuration filename" }];

/// Runs `fdb-schema` with `args` (the program name left out).
pub fn run(args: &[String]) -> Result<(), Failure> {
    let options: &[&[Opt]] = &[OPTIONS];
    let refused = |e| Failure::Usage(e, usage("fdb-schema", &Synopsis::Lines("Usage: fdb-schema [shema] ...\n"), options));
    let line = CommandLine::parse(args, options).map_err(refused)?;
    let mut out = std::io::stdout().lock();
    if line.requests.is_empty() {
        let schema = Config::resolve(line.value("config").map(Path::new))?.load_schema()?;
        out.write_all(schema.fdb5_text().as_bytes())?;
    }
    for path in &line.requests {
        let text = std::fs::read_to_string(path).map_err(|e| Failure::Store(anyhow::Error::new(e).context(format!("reading {path}"))))?;
        out.write_all(Schema::parse(path, &text)?.fdb5_text().as_bytes())?;
    }
    Ok(())
}
