//! `fdb-hide`, as FDB5 5.25's: the data sets one request names whole (every keyword of the
//! data set level given, lists expanded) each have their fields hidden, nothing removed
//! ([`fieldstore::FieldStore::hide`]); a dry run unless `--doit`. A data set not there stops
//! the tool (FDB5's "Database not found"). FDB5's own databases, read in place, are refused:
//! fieldstore never changes them.

use std::io::Write;

use fieldstore::{FieldStore, Request};

use super::options::{usage, CommandLine, Opt, Synopsis, Value};
use super::root::dataset_key_named;
use super::{configured_store, Failure};

const OPTIONS: &[Opt] = &[
    Opt { name: "doit", value: Value::Switch, help: "Do the actual change" },
    Opt { name: "config", value: Value::Text, help: "FDB configuration filename" },
];

const SYNOPSIS: &str = "\nUsage: fdb-hide [options] [DB request]\n\n\n";

/// Runs `fdb-hide` with `args` (the program name left out).
pub fn run(args: &[String]) -> Result<(), Failure> {
    let options: &[&[Opt]] = &[OPTIONS];
    let line = CommandLine::parse(args, options)
        .map_err(|e| Failure::Usage(e, usage("fdb-hide", &Synopsis::Lines("Usage: fdb-hide [options] [DB request]\n\n\n"), options)))?;
    let [request] = line.requests.as_slice() else {
        // FDB5 prints its synopsis alone, and succeeds.
        print!("{SYNOPSIS}");
        return Ok(());
    };
    let store = configured_store(&line)?;
    let key = dataset_key_named(&store, &Request::parse(request)?)?;
    let mut out = std::io::stdout().lock();
    for dataset in each_combination(&key) {
        hide(&store, &dataset, line.has("doit"), &mut out)?;
    }
    Ok(())
}

/// Hides data set `dataset` (`k=v` pairs, one value each), or says it would.
fn hide(store: &FieldStore, dataset: &str, doit: bool, out: &mut impl Write) -> Result<(), Failure> {
    let request = Request::parse(dataset)?;
    let not_found = || Failure::User(format!("Database not found: {{{dataset}}}\n"));
    let places = match store.where_is(&request) {
        Ok(places) => places,
        Err(e) if e.kind() == fieldstore::ErrorKind::NotFound => return Err(not_found()),
        Err(e) => return Err(e.into()),
    };
    // That data set exactly (one with more keywords given is another).
    let place = places.iter().find(|p| p.dataset.display_non_empty() == dataset).ok_or_else(not_found)?;
    let shown = place.locations.first().cloned().unwrap_or_else(|| place.catalogue.clone());
    writeln!(out, "Hide contents of DB: TocCatalogueReader({shown})")?;
    out.flush()?;
    if doit {
        // That data set alone: a request also matches data sets with more keywords given.
        store.hide_datasets(std::slice::from_ref(&place.dataset), true)?;
    } else {
        writeln!(out, "Run with --doit to make changes")?;
    }
    Ok(())
}

/// Every combination of one value per keyword of `pairs` (`k=v1/v2`), in FDB5's order: the
/// first keyword's values outermost.
fn each_combination(pairs: &[String]) -> Vec<String> {
    let mut keys = vec![String::new()];
    for pair in pairs {
        let (keyword, values) = pair.split_once('=').unwrap_or((pair, ""));
        keys = keys
            .iter()
            .flat_map(|key| {
                values.split('/').map(move |v| if key.is_empty() { format!("{keyword}={v}") } else { format!("{key},{keyword}={v}") })
            })
            .collect();
    }
    keys
}

#[cfg(test)]
mod tests {
    #[test]
    fn each_combination_takes_one_value_per_keyword_first_keyword_outermost() {
        let pairs = ["class=od".to_string(), "date=1/2".to_string(), "time=0/12".to_string()];
        assert_eq!(
            super::each_combination(&pairs),
            ["class=od,date=1,time=0", "class=od,date=1,time=12", "class=od,date=2,time=0", "class=od,date=2,time=12"]
        );
    }
}
