//! Moving whole data sets to another root of the configuration (FDB5's `fdb-move`): between
//! the roots of a POSIX catalogue's spaces, each data set's directory (with the data files of
//! a store sharing its roots) copied, switched to and removed as [`fieldstore_posix::moving`]
//! describes. Readers see every field once, all along; writers, wipes and purges of a data set
//! are refused while it moves; a move killed at any instant leaves each data set whole in one
//! root, and run again finishes it.

use serde::Serialize;

use fieldstore_core::error::ErrorKind;
use fieldstore_core::factory::Section;
use fieldstore_core::{Config, Error, FieldStore, Key, ListOptions, Request, Result};
use fieldstore_posix::config::{catalogue_placement, store_placement};
use fieldstore_posix::naming::dataset_dir_name;

pub use fieldstore_posix::moving::{DatasetMove, MoveOptions, MoveProgress};

/// The keywords every request of a move must name, so that none moves the whole store.
const MINIMUM_KEYS: [&str; 2] = ["class", "expver"];

/// What a move did, data set by data set.
#[derive(Clone, Debug, Default, Serialize)]
pub struct MoveReport {
    /// Each data set moved (or found there already), in the order moved.
    pub datasets: Vec<DatasetMove>,
}

/// Moves every data set of `config` that `requests` name (read through `fs`, opened from
/// `config`) to the root `options.destination`, one after another; `progress` hears of each
/// data set's bytes copied. Stops at the first data set it cannot move (those moved stay
/// moved).
pub fn move_datasets(
    config: &Config,
    fs: &FieldStore,
    requests: &[Request],
    options: &MoveOptions,
    progress: &(dyn Fn(&Key, MoveProgress) + Sync),
) -> Result<MoveReport> {
    let catalogue = Section { name: "catalogue", config: &config.catalogue, source: &config.source };
    if catalogue.config.kind != "posix" {
        return Err(Error::new(
            ErrorKind::Unsupported,
            format!(
                "move takes data sets to another root of a POSIX catalogue (FDB5's fdb-move); this catalogue is of type '{}': \
                 copy them (fieldstore copy --target) and wipe them",
                catalogue.config.kind
            ),
        ));
    }
    let placement = catalogue_placement(&catalogue)?;
    let store = Section { name: "store", config: &config.store, source: &config.source };
    if store.config.kind == "posix" {
        let store_placement = store_placement(&store)?;
        let (mut ours, mut theirs) = (placement.roots(), store_placement.roots());
        ours.sort();
        theirs.sort();
        if ours != theirs {
            return Err(store.error(
                "move moves data set directories, which hold the catalogue and the data of a store with the same roots: \
                 this store's roots are not the catalogue's",
            ));
        }
    }
    let mut datasets = Vec::new();
    for request in requests {
        if let Some(missing) = MINIMUM_KEYS.iter().find(|k| request.get(k).is_none()) {
            return Err(Error::new(
                ErrorKind::BadRequest,
                format!("move needs '{missing}' in the request {request} (it must name at least {})", MINIMUM_KEYS.join(", ")),
            ));
        }
        let matches = fs.list(request, ListOptions { depth: 1, ..ListOptions::default() })?;
        if let Some(why) = matches.explanation {
            return Err(Error::new(ErrorKind::NotFound, format!("nothing to move for {request}: {why}")));
        }
        datasets.extend(matches.datasets.into_iter().filter(|d| !datasets.contains(d)).collect::<Vec<_>>());
    }
    let mut report = MoveReport::default();
    for dataset in &datasets {
        if placement.existing(dataset, &dataset_dir_name(dataset)?)?.is_none() {
            return Err(Error::new(
                ErrorKind::Unsupported,
                format!("data set {dataset} is FDB5's, read in place: fieldstore never changes FDB5's databases (fdb-move moves them)"),
            ));
        }
        let moved = fieldstore_posix::moving::move_dataset(&placement, dataset, options, &|p| progress(dataset, p))?;
        report.datasets.push(moved);
    }
    Ok(report)
}
