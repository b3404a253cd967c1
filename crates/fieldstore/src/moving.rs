//! Moving whole data sets (FDB5's `fdb-move`):
//!
//! - [`move_datasets`]: to another root of the configuration, between the roots of a POSIX
//!   catalogue's spaces: each data set's directory (with the data files of a store sharing its
//!   roots) copied, switched to and removed as [`fieldstore_posix::moving`] describes. Readers
//!   see every field once, all along; writers, wipes and purges of a data set are refused
//!   while it moves; a move killed at any instant leaves each data set whole in one root, and
//!   run again finishes it.
//! - [`move_to_store`]: to another configuration's store, of any backend: each data set locked
//!   for archiving, copied ([`crate::copy`]) with one flush at its end, so the target's readers
//!   see none of it and then all of it, every field checked there, then wiped from the source,
//!   whose readers see all of it until then. Killed before that flush, the data set is in the
//!   source alone; after it, in both until the move is run again (it then finds every field in
//!   the target and wipes the source).

use serde::Serialize;

use fieldstore_core::error::ErrorKind;
use fieldstore_core::factory::Section;
use fieldstore_core::{Config, ControlAction, Error, FieldStore, Key, ListOptions, Request, Result};

use crate::copy::{copy, CopyOptions, CopyProgress, CopyReport};
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
    let datasets = datasets_named(fs, requests)?;
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

/// Every data set `requests` name in `fs`, each once, in order; each request must name the
/// minimum keys, and something.
fn datasets_named(fs: &FieldStore, requests: &[Request]) -> Result<Vec<Key>> {
    let mut datasets: Vec<Key> = Vec::new();
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
        for dataset in matches.datasets {
            if !datasets.contains(&dataset) {
                datasets.push(dataset);
            }
        }
    }
    Ok(datasets)
}

/// What a move to another store did, data set by data set.
#[derive(Clone, Debug, Default, Serialize)]
pub struct StoreMoveReport {
    /// Each data set moved, in the order moved.
    pub datasets: Vec<DatasetTransfer>,
}

/// One data set moved to another store: its copy, then its wipe from the source.
#[derive(Clone, Debug, Serialize)]
pub struct DatasetTransfer {
    /// The data set's key.
    pub dataset: String,
    /// Its fields' copy into the target (all of its fields, each checked there).
    pub copy: CopyReport,
}

/// Moves every data set `requests` name from `source` into `target`, another configuration's
/// store of any backend, one after another (see the module's docs); `progress` hears of each
/// data set's bytes dealt with. Superseded fields are not moved (as after a purge). Stops at
/// the first data set it cannot move (those moved stay moved).
pub fn move_to_store(
    source: &FieldStore,
    target: &FieldStore,
    requests: &[Request],
    progress: &mut dyn FnMut(&Key, CopyProgress),
) -> Result<StoreMoveReport> {
    let mut report = StoreMoveReport::default();
    for dataset in datasets_named(source, requests)? {
        let request = Request::parse(&dataset.to_string())?;
        let locked_before =
            source.control(&request, &[ControlAction::Archive], None)?.iter().any(|(_, l)| l.contains(&ControlAction::Archive));
        // FDB5's databases read in place refuse this: nothing of theirs is copied to be kept twice.
        source.control(&request, &[ControlAction::Archive], Some(true))?;
        let copied = copy_whole(source, target, &dataset, &request, progress);
        let copied = match copied {
            Ok(copied) => copied,
            Err(e) => {
                if !locked_before {
                    let _ = source.control(&request, &[ControlAction::Archive], Some(false));
                }
                return Err(e);
            }
        };
        source.wipe(&request, true).map_err(|e| {
            let why = format!("data set {dataset} is in the target now, but was not wiped from the source: run the move again");
            Error::caused_by(e.kind(), why, e)
        })?;
        report.datasets.push(DatasetTransfer { dataset: dataset.to_string(), copy: copied });
    }
    Ok(report)
}

/// Copies every field of `dataset` into `target`, flushed once at the end and read back; an
/// error unless every field is then there with its checksum.
fn copy_whole(
    source: &FieldStore,
    target: &FieldStore,
    dataset: &Key,
    request: &Request,
    progress: &mut dyn FnMut(&Key, CopyProgress),
) -> Result<CopyReport> {
    let options = CopyOptions { batch_bytes: u64::MAX, read_back: true, ..CopyOptions::default() };
    let copied = copy(source, target, std::slice::from_ref(request), &options, &mut |p| progress(dataset, p))?;
    let whole = copied.copied.checked_add(copied.already_there) == Some(copied.fields) && copied.verified == copied.copied;
    if !whole {
        return Err(Error::new(
            ErrorKind::Corrupt,
            format!(
                "data set {dataset}: of {} fields, {} copied and {} found in the target, {} checked there: the source is kept",
                copied.fields, copied.copied, copied.already_there, copied.verified
            ),
        ));
    }
    Ok(copied)
}
