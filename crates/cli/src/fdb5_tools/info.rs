//! `fdb-info`, as FDB5 5.25's: the version of FDB5's interface fieldstore implements, FDB5's
//! home, the schema and config files in use, and whether the Lustre API is built in (never:
//! fieldstore sets Lustre layouts through the file system, docs/config.md). One item per
//! call, the first of that order asked for, or all of them, labelled, with `--all`.

use std::path::{Path, PathBuf};

use fieldstore::Config;

use super::options::{usage, CommandLine, Opt, Synopsis, Value};
use super::Failure;

/// The FDB5 version whose interfaces fieldstore implements (the C API's `fdb_version` too).
const FDB5_VERSION: &str = "5.25.0";

const OPTIONS: &[Opt] = &[
    Opt { name: "all", value: Value::Switch, help: "Print all information" },
    Opt { name: "version", value: Value::Switch, help: "Print the version of the FDB being used" },
    Opt { name: "home", value: Value::Switch, help: "Print the location of the FDB configuration files" },
    Opt { name: "schema", value: Value::Switch, help: "Print the location of the FDB schema file" },
    Opt { name: "config-file", value: Value::Switch, help: "Print the location of the FDB configuration file if being used" },
    Opt { name: "lustre-api", value: Value::Switch, help: "Indicate if the Lustre API is supported or disabled in this build" },
    Opt { name: "config", value: Value::Text, help: "FDB configuration filename" },
];

const SYNOPSIS: &str = "Usage: fdb-info [options]\n\n\nExamples:\n=========\n\nfdb-info --all\nfdb-info --version\nfdb-info --home\n\
                        fdb-info --schema\nfdb-info --config-file\nfdb-info --lustre-api\n\n";

/// Runs `fdb-info` with `args` (the program name left out).
pub fn run(args: &[String]) -> Result<(), Failure> {
    let options: &[&[Opt]] = &[OPTIONS];
    let line = CommandLine::parse(args, options).map_err(|e| Failure::Usage(e, usage("fdb-info", &Synopsis::Lines(SYNOPSIS), options)))?;
    let all = line.has("all");
    let label = |name: &str| if all { format!("{name}: ") } else { String::new() };
    if all || line.has("version") {
        println!("{}{FDB5_VERSION}", label("Version"));
        if !all {
            return Ok(());
        }
    }
    if all || line.has("home") {
        println!("{}{}/", label("Home"), home().display());
        if !all {
            return Ok(());
        }
    }
    let config = Config::resolve(line.value("config").map(Path::new))?;
    let items: [(&str, &str, String); 3] = [
        ("schema", "Schema", config.schema.as_ref().map_or("(fieldstore's default schema, built in)".into(), |s| s.display().to_string())),
        ("config-file", "Config", config.file.as_ref().map_or(String::new(), |f| f.display().to_string())),
        ("lustre-api", "Lustre-API", "disabled".into()),
    ];
    for (option, name, value) in items {
        if all || line.has(option) {
            println!("{}{value}", label(name));
            if !all {
                return Ok(());
            }
        }
    }
    Ok(())
}

/// FDB5's home: `$FDB_HOME`, else the installation the program is in (the directory above
/// its `bin`), as FDB5's `~fdb`.
fn home() -> PathBuf {
    if let Some(home) = std::env::var_os(fieldstore::config::FDB_HOME_ENV).filter(|h| !h.is_empty()) {
        return PathBuf::from(home).components().collect();
    }
    let program = std::env::current_exe().unwrap_or_default();
    program.parent().and_then(Path::parent).map(Path::to_path_buf).unwrap_or_default()
}
