//! `fdb-overlay`, as FDB5 5.25's: the source data set shown as part of the target, whose key
//! differs only in `--variable-keys` (`class,expver`), or with `--remove` no longer
//! ([`fieldstore::FieldStore::overlay`]); the target must not exist unless `--force`. Works on
//! every backend. Overlaying a source shown already changes nothing (FDB5 records it twice,
//! and then cannot remove it: docs/fdb5.md).

use fieldstore::api::OverlayOptions;
use fieldstore::Request;

use super::options::{usage, CommandLine, Opt, Synopsis, Value};
use super::root::one_dataset;
use super::{configured_store, Failure};

const OPTIONS: &[Opt] = &[
    Opt { name: "variable-keys", value: Value::List, help: "The keys that may vary between mounted DBs" },
    Opt { name: "remove", value: Value::Switch, help: "Remove a previously FDB overlay" },
    Opt { name: "force", value: Value::Switch, help: "Apply overlay even if target already exists" },
    Opt { name: "config", value: Value::Text, help: "FDB configuration filename" },
];

const SYNOPSIS: &str = "\nUsage: fdb-overlay [options] [source DB request] [target DB request]\n\n\n";
/// The synopsis as printed after a bad option, before the options.
const USAGE: &str = "\n\nUsage: fdb-overlay [options] [source DB request] [target DB request]\n\n\n\n";

/// Runs `fdb-overlay` with `args` (the program name left out).
pub fn run(args: &[String]) -> Result<(), Failure> {
    let options: &[&[Opt]] = &[OPTIONS];
    let line =
        CommandLine::parse(args, options).map_err(|e| Failure::Usage(e, usage("fdb-overlay", &Synopsis::Verbatim(USAGE), options)))?;
    let [source, target] = line.requests.as_slice() else {
        // FDB5 prints its synopsis alone, and succeeds.
        print!("{SYNOPSIS}");
        return Ok(());
    };
    let store = configured_store(&line)?;
    let source = one_dataset(&store, &Request::parse(source)?)?;
    let target = one_dataset(&store, &Request::parse(target)?)?;
    let mut options = OverlayOptions { remove: line.has("remove"), force: line.has("force"), ..OverlayOptions::default() };
    if let Some(keys) = line.value("variable-keys") {
        options.variable_keys = keys.split(',').filter(|k| !k.is_empty()).map(str::to_string).collect();
    }
    match options.remove {
        true => println!("Removing {{{source}}} from {{{target}}}"),
        false => println!("Applying {{{source}}} onto {{{target}}}"),
    }
    store.overlay(&source, &target, &options)?;
    Ok(())
}
