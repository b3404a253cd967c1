//! Administration: list, axes, wipe, purge, control (locks), stats and where.

use std::collections::{BTreeMap, BTreeSet, HashSet};

use serde::{Deserialize, Serialize};

use super::remote::{call, AxesAnswer};
use super::{FieldStore, ListOptions, Matches, Operation};
use crate::backend::{CatalogueUsage, Compaction, ControlAction, IndexInfo, Unused};
use crate::error::{Error, ErrorKind, Result};
use crate::key::Key;
use crate::request::Request;

/// Keyword -> the values stored for it, in numeric order.
pub type Axes = BTreeMap<String, Vec<String>>;

/// Keywords a wipe request must name, as FDB5's default minimum keys.
pub const WIPE_MINIMUM_KEYS: [&str; 2] = ["class", "expver"];

/// Keywords the tools and bindings require of a request that changes data sets (wipe, purge,
/// lock), as FDB5's tools do by default: a slip never reaches every data set of an experiment.
pub const MINIMUM_KEYS_TO_CHANGE: [&str; 5] = ["class", "expver", "stream", "date", "time"];

/// What a wipe removed, or would remove when not done.
#[derive(Debug, Default, Serialize, Deserialize)]
pub struct WipeReport {
    /// Whether anything was removed: false for a dry run, which only reports.
    pub done: bool,
    /// Datasets removed whole.
    pub datasets: Vec<Key>,
    /// (dataset, collocation) pairs whose indexes were hidden.
    pub collocations: Vec<(Key, Key)>,
    /// Store objects or files removed (or that would be).
    pub removed: Vec<String>,
    /// Catalogue index files or objects removed (or that would be): those of the data sets
    /// removed whole, where the catalogue names its files ([`crate::backend::CatalogueFiles`]),
    /// and those of a collocation's wipe that no visible index uses any more (known once done).
    pub catalogue_removed: Vec<String>,
    /// The catalogue's other files or objects of the data sets removed whole (or that would
    /// be): key, schema, table of contents or log (FDB5's catalogue URIs). Empty where the
    /// catalogue does not name its files.
    pub catalogue_files: Vec<String>,
    /// Their locks removed with them (or that would be; FDB5's control URIs).
    pub control_files: Vec<String>,
    /// Store files left in place because a live writer still appends to them (known once
    /// done; they stay: no later purge finds them yet).
    pub in_use: Vec<String>,
}

/// What a purge reclaimed, or would reclaim when not done.
#[derive(Debug, Default, Serialize, Deserialize)]
pub struct PurgeReport {
    /// Whether anything was removed: false for a dry run, which only reports.
    pub done: bool,
    /// The superseded fields found (what `stats` counted before the purge).
    pub superseded_fields: u64,
    /// The length of those fields, in bytes.
    pub superseded_bytes: u64,
    /// Of those, the fields no longer listed (even with `--full`) nor counted: every field of
    /// their index was superseded, so the index was hidden (or would be).
    pub fields_hidden: u64,
    /// The others: they share an index with live fields, which stays, so `list --full` still
    /// shows them and `stats` still counts them.
    pub fields_kept: u64,
    /// Indexes hidden (or that would be) because every entry of theirs is superseded.
    pub indexes_masked: u64,
    /// Store objects or files removed (or that would be).
    pub removed: Vec<String>,
    /// The superseded bytes in them: freed (or that would be).
    pub bytes_freed: u64,
    /// Catalogue files (index files) removed with the hidden indexes (known once done).
    pub catalogue_removed: Vec<String>,
    /// Superseded bytes that stay on disk: in files that also hold live fields, or left to
    /// a live writer.
    pub unreclaimable_bytes: u64,
    /// Store files left in place because a live writer still appends to them (known once
    /// done; they stay: no later purge finds them yet).
    pub in_use: Vec<String>,
    /// Each visible index of the data sets purged, newest first, with its counts.
    pub indexes: Vec<IndexPurge>,
}

/// One data set's catalogue as readers see it ([`FieldStore::dump`]): where it is kept and
/// its visible indexes, newest first.
#[derive(Debug, Serialize, Deserialize)]
pub struct DatasetDump {
    /// The data set.
    pub dataset: Key,
    /// Where its catalogue lives, as the catalogue describes it.
    pub catalogue: String,
    /// Its visible indexes, newest first.
    pub indexes: Vec<IndexDump>,
    /// The data sets overlaid onto it ([`FieldStore::overlay`]), oldest first.
    pub overlaid: Vec<Key>,
}

/// One visible index of a data set ([`DatasetDump::indexes`]).
#[derive(Debug, Serialize, Deserialize)]
pub struct IndexDump {
    /// The catalogue's identity of it.
    pub id: String,
    /// Its collocation key.
    pub collocation: Key,
    /// Its file and offset there, where the catalogue says.
    pub place: Option<(String, u64)>,
    /// Its entries, superseded ones included.
    pub fields: u64,
    /// The values present per element keyword.
    pub axes: BTreeMap<String, Vec<String>>,
    /// Each entry (its element key and location), when asked for.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub entries: Option<Vec<(Key, crate::backend::FieldLocation)>>,
}

/// What a hide did, or would do, to one data set ([`FieldStore::hide`]).
#[derive(Debug, Serialize, Deserialize)]
pub struct HideReport {
    /// Whether the fields were hidden: false for a dry run, which only reports.
    pub done: bool,
    /// The data set.
    pub dataset: Key,
    /// Its indexes hidden (or that would be).
    pub indexes: u64,
    /// The fields they hold, superseded ones included.
    pub fields: u64,
}

/// One index of a purged data set ([`PurgeReport::indexes`]).
#[derive(Debug, Serialize, Deserialize)]
pub struct IndexPurge {
    /// Its data set.
    pub dataset: Key,
    /// The catalogue's identity of it.
    pub id: String,
    /// Its file's path and offset there, where the catalogue says ([`crate::backend::DatasetView::index_place`]).
    pub place: Option<(String, u64)>,
    /// Its fields not superseded by a newer index, and their bytes.
    pub live: u64,
    /// Their bytes.
    pub live_bytes: u64,
    /// Its fields a newer index supersedes.
    pub superseded: u64,
    /// Their bytes.
    pub superseded_bytes: u64,
    /// Hidden by the purge (or to be): every field of it is superseded.
    pub masked: bool,
}

/// What a compaction did ([`FieldStore::compact`]), per data set.
#[derive(Debug, Default, Serialize, Deserialize)]
pub struct CompactReport {
    /// Each data set compacted, with what was done there.
    pub datasets: Vec<DatasetCompaction>,
}

/// What a compaction did in one data set.
#[derive(Debug, Serialize, Deserialize)]
pub struct DatasetCompaction {
    /// The data set.
    pub dataset: Key,
    /// What was done there.
    #[serde(flatten)]
    pub compaction: Compaction,
}

/// Counts of what a request names ([`FieldStore::stats`]).
#[derive(Debug, Default, Serialize, Deserialize)]
pub struct StatsReport {
    /// Datasets the request names.
    pub datasets: u64,
    /// Visible indexes in those datasets.
    pub indexes: u64,
    /// Live fields: those not hidden by a newer archive of the same identifier.
    pub fields: u64,
    /// The length of the live fields, in bytes.
    pub bytes: u64,
    /// Fields hidden by a newer archive of the same identifier, which a purge may reclaim.
    pub superseded_fields: u64,
    /// The length of the superseded fields, in bytes.
    pub superseded_bytes: u64,
    /// Store files or objects holding live fields.
    pub data_objects: u64,
    /// What the catalogue says about its own files or objects (FDB5's DB statistics), summed
    /// over the data sets; `None` where it says nothing ([`crate::backend::CatalogueFiles`]).
    pub catalogue: Option<CatalogueUsage>,
}

/// Where one dataset lives ([`FieldStore::where_is`]).
#[derive(Debug, Serialize, Deserialize)]
pub struct WhereReport {
    /// The dataset's key.
    pub dataset: Key,
    /// Where its catalogue lives, as the catalogue describes it for humans.
    pub catalogue: String,
    /// Where its bytes live, as the store describes it for humans.
    pub store: String,
    /// Where its catalogue is, as other programs name it (a directory), where the catalogue
    /// says ([`crate::backend::Catalogue::locations`]).
    pub locations: Vec<String>,
}

/// One index's entries split into live and superseded ones, newest index first.
struct IndexUse {
    info: std::sync::Arc<IndexInfo>,
    live: u64,
    live_bytes: u64,
    uris: BTreeSet<String>,
    superseded: Vec<(String, u64)>,
}

impl FieldStore {
    /// Lists what a request names (FDB5's `list`).
    pub fn list(&self, request: &Request, options: ListOptions) -> Result<Matches> {
        self.resolve(request, options, Some(ControlAction::List))
    }

    /// The values present for each keyword among what a request names, in numeric order.
    pub fn axes(&self, request: &Request) -> Result<(Axes, Option<String>)> {
        self.axes_of(request, false)
    }

    /// The values of each keyword in the indexes a request names, whole: an index the
    /// request names gives all its values, those the request leaves out too (FDB5's
    /// `fdb-axes`, whose axes are its indexes'), in numeric order.
    pub fn index_axes(&self, request: &Request) -> Result<(Axes, Option<String>)> {
        self.axes_of(request, true)
    }

    /// [`FieldStore::axes`], or with `whole_indexes` [`FieldStore::index_axes`].
    pub(super) fn axes_of(&self, request: &Request, whole_indexes: bool) -> Result<(Axes, Option<String>)> {
        if let Some(remote) = self.remote() {
            return call::<AxesAnswer>(remote, Operation::Axes { request: request.to_string(), whole_indexes });
        }
        let matches = self.resolve(request, ListOptions { depth: 2, ..ListOptions::default() }, Some(ControlAction::List))?;
        let mut axes: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
        for (dataset, coll) in &matches.collocations {
            for (k, v) in dataset.iter().chain(coll.iter()) {
                axes.entry(k.to_string()).or_default().insert(v.to_string());
            }
        }
        for (_, index, constraints) in &matches.indexes {
            for (kw, c) in index.element_keywords.iter().zip(constraints.iter()) {
                let values = index
                    .axes
                    .get(kw.as_str())
                    .into_iter()
                    .flat_map(|a| a.iter())
                    .filter(|v| whole_indexes || c.as_ref().is_none_or(|c| c.iter().any(|x| x == v)));
                axes.entry(kw.clone()).or_default().extend(values.map(String::from));
            }
        }
        let sorted = axes
            .into_iter()
            .map(|(k, values)| {
                let ty = self.schema().type_of(&[], &k);
                let mut v: Vec<String> = values.into_iter().filter(|v| !v.is_empty()).collect();
                v.sort_by(|a, b| ty.compare(a, b));
                (k, v)
            })
            .filter(|(_, v)| !v.is_empty())
            .collect();
        Ok((sorted, matches.explanation))
    }

    /// Removes whole datasets, or the collocations a request names (FDB5's `wipe`). Nothing
    /// is removed unless `doit`.
    pub fn wipe(&self, request: &Request, doit: bool) -> Result<WipeReport> {
        if let Some(remote) = self.remote() {
            // As below: what this handle archived goes first, and its archiver is made anew.
            if doit {
                self.flush()?;
            }
            let report = call(remote, Operation::Wipe { request: request.to_string(), doit });
            if doit {
                *super::lock(&self.archiver) = None;
            }
            return report;
        }
        naming_minimum_keys(request, "wipe")?;
        let by_dataset = self.resolve(request, ListOptions { depth: 1, ..ListOptions::default() }, Some(ControlAction::Wipe))?;
        if let Some(why) = by_dataset.explanation {
            return Err(Error::new(ErrorKind::NotFound, format!("nothing to wipe: {why}")));
        }
        if doit {
            // What this handle archived is stored first, so the wipe removes it too; its
            // archiver is then made anew, so the handle's next archives into a wiped data set
            // create it again instead of writing into files the wipe removed.
            self.flush()?;
        }
        let report = self.wipe_datasets(request, by_dataset.datasets, doit);
        if doit {
            *super::lock(&self.archiver) = None;
        }
        report
    }

    /// The wipe of `datasets`, which `request` named.
    fn wipe_datasets(&self, request: &Request, datasets: Vec<Key>, doit: bool) -> Result<WipeReport> {
        let mut report = WipeReport { done: doit, ..Default::default() };
        let mut by_collocation: Option<Vec<(Key, Key)>> = None;
        for dataset in datasets {
            let schema = self.schema_of(&dataset)?;
            let dataset_keywords: HashSet<&str> = dataset.keywords().collect();
            let below: Vec<&str> = request.keywords().filter(|k| !dataset_keywords.contains(k)).collect();
            if below.is_empty() {
                // What the data set's indexes name now: a data set archived again after the
                // wipe takes effect has other files, which must stay.
                let uris = self.dataset_uris(&dataset)?;
                // The catalogue's own files, named before they go (fdb-wipe names them too); a
                // writer's index file created between this and the wipe goes unnamed.
                if let Some(files) = self.catalogue().own_files() {
                    let files = files.files(&dataset)?;
                    report.catalogue_files.extend(files.catalogue);
                    report.control_files.extend(files.control);
                    report.catalogue_removed.extend(files.indexes);
                }
                if doit {
                    // Catalogue first: the dataset disappears for readers at once, then its bytes go.
                    self.catalogue().wipe_dataset(&dataset)?;
                    let (removed, in_use) = self.remove_from_store(uris)?;
                    report.removed.extend(removed);
                    report.in_use.extend(in_use);
                    self.store().wipe_dataset(&dataset)?;
                } else {
                    // A dry run lists what it would remove, as fdb-wipe does.
                    report.removed.extend(uris);
                }
                report.datasets.push(dataset);
                continue;
            }
            let element_keywords: HashSet<String> =
                schema.paths().flat_map(|p| p.levels[2].key_keywords().map(String::from).collect::<Vec<_>>()).collect();
            if let Some(k) = below.iter().find(|k| element_keywords.contains(**k)) {
                return Err(Error::new(
                    ErrorKind::BadRequest,
                    format!(
                        "wipe removes data sets or collocations; element keyword '{k}' cannot be wiped (use archive to replace fields)"
                    ),
                ));
            }
            if by_collocation.is_none() {
                let options = ListOptions { depth: 2, ..ListOptions::default() };
                let matches = self.resolve(request, options, Some(ControlAction::Wipe))?;
                if let Some(why) = matches.explanation {
                    // No collocation is there (any more): said, not a silent success.
                    return Err(Error::new(ErrorKind::NotFound, format!("nothing to wipe: {why}")));
                }
                by_collocation = Some(matches.collocations);
            }
            let targets: BTreeSet<&Key> = by_collocation.iter().flatten().filter(|(d, _)| *d == dataset).map(|(_, c)| c).collect();
            self.wipe_collocations(&dataset, targets, doit, &mut report)?;
        }
        Ok(report)
    }

    /// Every store object or file a dataset's indexes name.
    fn dataset_uris(&self, dataset: &Key) -> Result<BTreeSet<String>> {
        let Some(mut view) = self.catalogue().open(dataset)? else { return Ok(BTreeSet::new()) };
        let mut uris = BTreeSet::new();
        for index in view.indexes()? {
            uris.extend(view.entries(&index)?.into_iter().map(|(_, l)| l.uri.to_string()));
        }
        Ok(uris)
    }

    /// Hides a dataset's indexes of the given collocations and removes store objects only
    /// they use.
    fn wipe_collocations(&self, dataset: &Key, targets: BTreeSet<&Key>, doit: bool, report: &mut WipeReport) -> Result<()> {
        let Some(mut view) = self.catalogue().open(dataset)? else { return Ok(()) };
        let indexes = view.indexes()?;
        // A collocation shown through an overlay only is another data set's to wipe.
        let targets: BTreeSet<&Key> = targets.into_iter().filter(|c| indexes.iter().any(|i| *i.collocation == **c)).collect();
        if targets.is_empty() {
            return Err(Error::new(
                ErrorKind::NotFound,
                format!("nothing to wipe: data set {dataset} holds none of the collocations named (those listed are shown through an overlay: wipe them in the overlaid data set)"),
            ));
        }
        let (doomed, kept): (Vec<&IndexInfo>, Vec<&IndexInfo>) =
            indexes.iter().map(|i| i.as_ref()).partition(|i| targets.contains(&*i.collocation));
        let mut kept_uris = BTreeSet::new();
        for index in kept {
            kept_uris.extend(view.entries(index)?.into_iter().map(|(_, l)| l.uri.to_string()));
        }
        let mut doomed_uris = BTreeSet::new();
        for index in &doomed {
            doomed_uris.extend(view.entries(index)?.into_iter().map(|(_, l)| l.uri.to_string()));
        }
        let removable: Vec<String> = doomed_uris.difference(&kept_uris).cloned().collect();
        report.collocations.extend(targets.into_iter().map(|c| (dataset.clone(), c.clone())));
        if doit {
            report.catalogue_removed.extend(view.mask(&doomed, Unused::Remove)?);
            let (removed, in_use) = self.remove_from_store(removable)?;
            report.removed.extend(removed);
            report.in_use.extend(in_use);
        } else {
            report.removed.extend(removable);
        }
        Ok(())
    }

    /// Removes store objects or files; returns those removed and those left in place because
    /// a live writer still appends to them.
    fn remove_from_store(&self, uris: impl IntoIterator<Item = String>) -> Result<(Vec<String>, Vec<String>)> {
        let uris: Vec<String> = uris.into_iter().collect();
        let done = self.store().remove_all(&uris)?;
        let (mut removed, mut in_use) = (Vec::new(), Vec::new());
        for (uri, removed_it) in uris.into_iter().zip(done) {
            if removed_it {
                removed.push(uri);
            } else {
                in_use.push(uri);
            }
        }
        Ok((removed, in_use))
    }

    /// Reclaims superseded fields (FDB5's `purge`): indexes with no live entry are hidden and
    /// store objects used only by hidden indexes are removed, but for files a live writer
    /// still appends to (they stay; reclaiming them later is to be done). FDB5 requires that no writer archives
    /// into the data sets purged; fieldstore keeps what they archive (on POSIX, where file
    /// systems support `flock`).
    pub fn purge(&self, request: &Request, doit: bool) -> Result<PurgeReport> {
        if let Some(remote) = self.remote() {
            return call(remote, Operation::Purge { request: request.to_string(), doit });
        }
        let datasets = self.resolve(request, ListOptions { depth: 1, ..ListOptions::default() }, Some(ControlAction::Wipe))?;
        if let Some(why) = datasets.explanation {
            return Err(Error::new(ErrorKind::NotFound, format!("nothing to purge: {why}")));
        }
        let mut report = PurgeReport { done: doit, ..Default::default() };
        for dataset in datasets.datasets {
            let Some(mut view) = self.catalogue().open(&dataset)? else { continue };
            let usage = index_usage(view.as_mut())?;
            // What any entry of an index that stays names: a superseded field there stays listed
            // (`list --full`), so its bytes stay too (FDB5's rule; with an object per field,
            // removing them left entries whose bytes were gone).
            let live_uris: BTreeSet<&String> =
                usage.iter().filter(|u| u.live > 0).flat_map(|u| u.uris.iter().chain(u.superseded.iter().map(|(uri, _)| uri))).collect();
            let dead: Vec<&IndexUse> = usage.iter().filter(|u| u.live == 0).collect();
            // Files holding superseded fields only, with the bytes of those fields.
            let mut removable: BTreeMap<String, u64> = BTreeMap::new();
            for u in &usage {
                for (uri, bytes) in &u.superseded {
                    report.superseded_fields += 1;
                    report.superseded_bytes += bytes;
                    if !live_uris.contains(uri) {
                        *removable.entry(uri.clone()).or_default() += bytes;
                    }
                }
            }
            report.indexes.extend(usage.iter().map(|u| IndexPurge {
                dataset: dataset.clone(),
                id: u.info.id.clone(),
                place: view.index_place(&u.info),
                live: u.live,
                live_bytes: u.live_bytes,
                superseded: u.superseded.len() as u64,
                superseded_bytes: u.superseded.iter().map(|(_, b)| b).sum(),
                masked: u.live == 0,
            }));
            report.fields_hidden += dead.iter().map(|u| u.superseded.len() as u64).sum::<u64>();
            report.indexes_masked += dead.len() as u64;
            let removed = if doit {
                report.catalogue_removed.extend(view.mask(&dead.iter().map(|u| u.info.as_ref()).collect::<Vec<_>>(), Unused::Remove)?);
                let (removed, in_use) = self.remove_from_store(removable.keys().cloned())?;
                report.in_use.extend(in_use);
                removed
            } else {
                removable.keys().cloned().collect()
            };
            report.bytes_freed += removed.iter().map(|uri| removable[uri]).sum::<u64>();
            report.removed.extend(removed);
        }
        report.fields_kept = report.superseded_fields - report.fields_hidden;
        report.unreclaimable_bytes = report.superseded_bytes - report.bytes_freed;
        Ok(report)
    }

    /// Merges the indexes of the data sets a request names into fewer, larger ones, changing
    /// nothing any reader sees (docs/consistency.md, "Compaction"): a new reader then reads
    /// fewer index objects. A data set locked for archiving is left as it is.
    pub fn compact(&self, request: &Request) -> Result<CompactReport> {
        if let Some(remote) = self.remote() {
            return call(remote, Operation::Compact { request: request.to_string() });
        }
        let datasets = self.resolve(request, ListOptions { depth: 1, ..ListOptions::default() }, Some(ControlAction::Archive))?;
        if let Some(why) = datasets.explanation {
            return Err(Error::new(ErrorKind::NotFound, format!("nothing to compact: {why}")));
        }
        let mut report = CompactReport::default();
        for dataset in datasets.datasets {
            let Some(mut view) = self.catalogue().open(&dataset)? else { continue };
            report.datasets.push(DatasetCompaction { compaction: view.compact()?, dataset });
        }
        Ok(report)
    }

    /// The catalogues of the data sets a request names as readers see them, on every backend
    /// (`fieldstore dump`): each data set's visible indexes, newest first, with their places,
    /// field counts and axes, and with `entries` every entry's element key and location.
    pub fn dump(&self, request: &Request, entries: bool) -> Result<Vec<DatasetDump>> {
        if let Some(remote) = self.remote() {
            return call(remote, Operation::Dump { request: request.to_string(), entries });
        }
        let mut dumps = Vec::new();
        for dataset in self.all_datasets_matching(request)? {
            let Some(mut view) = self.catalogue().open(&dataset)? else { continue };
            let mut indexes = Vec::new();
            for index in view.indexes()? {
                let axes = index.axes.iter().map(|(k, v)| (k.to_string(), v.iter().map(str::to_string).collect())).collect();
                let listed = if entries { Some(view.entries(&index)?) } else { None };
                let place = view.index_place(&index);
                indexes.push(IndexDump {
                    id: index.id.clone(),
                    collocation: (*index.collocation).clone(),
                    place,
                    fields: index.fields,
                    axes,
                    entries: listed,
                });
            }
            let overlaid = view.overlays().map(|o| o.overlaid().to_vec()).unwrap_or_default();
            dumps.push(DatasetDump { catalogue: self.catalogue().describe(&dataset), dataset, indexes, overlaid });
        }
        Ok(dumps)
    }

    /// Hides every field of the data sets a request names from readers, removing nothing
    /// (FDB5's `fdb-hide`): [`FieldStore::hide_datasets`] of those the request names, which
    /// must give `class` and `expver` at least, as a wipe's; data sets locked for wipe, or in
    /// a root that takes no wipes, are not changed (said why when none is left).
    pub fn hide(&self, request: &Request, doit: bool) -> Result<Vec<HideReport>> {
        if let Some(remote) = self.remote() {
            return call(remote, Operation::Hide { request: request.to_string(), doit });
        }
        naming_minimum_keys(request, "hide")?;
        let matches = self.resolve(request, ListOptions { depth: 1, ..ListOptions::default() }, Some(ControlAction::Wipe))?;
        if let Some(why) = matches.explanation {
            return Err(Error::new(ErrorKind::NotFound, format!("nothing to hide: {why}")));
        }
        self.hide_datasets(&matches.datasets, doit)
    }

    /// Hides every field of each of `datasets`: its indexes are masked by one record, which
    /// readers see whole or not at all. Fields archived afterwards are visible as usual; the
    /// hidden ones stay where they are until the data set is wiped. Nothing is hidden unless
    /// `doit`. Data sets are hidden one by one, as FDB5's: one that cannot be changed (read in
    /// place from FDB5, which fieldstore never changes) stops the hide, those before it hidden.
    pub fn hide_datasets(&self, datasets: &[Key], doit: bool) -> Result<Vec<HideReport>> {
        if let Some(remote) = self.remote() {
            return call(remote, Operation::HideDatasets { datasets: datasets.to_vec(), doit });
        }
        if doit {
            // What this handle archived is stored first: it is hidden too, as FDB5's is.
            self.flush()?;
        }
        let mut reports = Vec::new();
        for dataset in datasets {
            let Some(mut view) = self.catalogue().open(dataset)? else {
                return Err(Error::new(ErrorKind::NotFound, format!("data set {dataset} is not there: nothing to hide")));
            };
            let indexes = view.indexes()?;
            if doit {
                view.mask(&indexes.iter().map(|i| i.as_ref()).collect::<Vec<_>>(), Unused::Keep)?;
            }
            let fields = indexes.iter().map(|i| i.fields).sum();
            reports.push(HideReport { done: doit, dataset: dataset.clone(), indexes: indexes.len() as u64, fields });
        }
        Ok(reports)
    }

    /// Locks or unlocks actions on the datasets a request names; returns their lock state.
    pub fn control(&self, request: &Request, actions: &[ControlAction], lock: Option<bool>) -> Result<Vec<(Key, BTreeSet<ControlAction>)>> {
        if let Some(remote) = self.remote() {
            return call(remote, Operation::Control { request: request.to_string(), actions: actions.to_vec(), lock });
        }
        let datasets = self.all_datasets_matching(request)?;
        let mut out = Vec::new();
        for dataset in datasets {
            if let Some(lock) = lock {
                for action in actions {
                    self.catalogue().set_lock(&dataset, *action, lock)?;
                }
            }
            let locks = self.catalogue().locks(&dataset)?;
            out.push((dataset, locks));
        }
        Ok(out)
    }

    /// Counts of what a request names: fields, bytes, superseded duplicates, indexes.
    pub fn stats(&self, request: &Request) -> Result<StatsReport> {
        if let Some(remote) = self.remote() {
            return call(remote, Operation::Stats { request: request.to_string() });
        }
        let datasets = self.resolve(request, ListOptions { depth: 1, ..ListOptions::default() }, Some(ControlAction::List))?;
        let mut report = StatsReport::default();
        for dataset in datasets.datasets {
            self.add_dataset_stats(&dataset, &mut report)?;
        }
        Ok(report)
    }

    /// [`FieldStore::stats`] of one data set (none if it is not there any more).
    pub fn dataset_stats(&self, dataset: &Key) -> Result<StatsReport> {
        if let Some(remote) = self.remote() {
            return call(remote, Operation::DatasetStats { dataset: dataset.clone() });
        }
        let mut report = StatsReport::default();
        self.add_dataset_stats(dataset, &mut report)?;
        Ok(report)
    }

    /// Adds a data set's counts to `report`.
    fn add_dataset_stats(&self, dataset: &Key, report: &mut StatsReport) -> Result<()> {
        let Some(mut view) = self.catalogue().open(dataset)? else { return Ok(()) };
        report.datasets += 1;
        let usage = index_usage(view.as_mut())?;
        let mut uris = BTreeSet::new();
        for u in &usage {
            report.indexes += 1;
            report.fields += u.live;
            report.bytes += u.live_bytes;
            report.superseded_fields += u.superseded.len() as u64;
            report.superseded_bytes += u.superseded.iter().map(|(_, b)| b).sum::<u64>();
            uris.extend(u.uris.iter().cloned());
        }
        report.data_objects += uris.len() as u64;
        if let Some(usage) = self.catalogue().own_files().map(|f| f.usage(dataset)).transpose()?.flatten() {
            match &mut report.catalogue {
                Some(total) => total.add(&usage),
                None => report.catalogue = Some(usage),
            }
        }
        Ok(())
    }

    /// Where each named dataset's catalogue and bytes live.
    pub fn where_is(&self, request: &Request) -> Result<Vec<WhereReport>> {
        if let Some(remote) = self.remote() {
            return call(remote, Operation::Where { request: request.to_string() });
        }
        Ok(self.all_datasets_matching(request)?.into_iter().map(|d| self.dataset_where(d)).collect())
    }

    /// Where one data set's catalogue and bytes live (nothing is resolved: a tool that found
    /// the data set already asks this once per data set).
    pub fn dataset_where(&self, dataset: Key) -> WhereReport {
        if let Some(remote) = self.remote() {
            // As a place that cannot be named: the description says the error.
            return call(remote, Operation::DatasetWhere { dataset: dataset.clone() }).unwrap_or_else(|e| {
                let unknown = format!("unknown ({})", e.report());
                WhereReport { catalogue: unknown.clone(), store: unknown, locations: Vec::new(), dataset }
            });
        }
        // A place that cannot be named is said by the description, as an error.
        let locations = self.catalogue().locations(&dataset).unwrap_or_default();
        WhereReport { catalogue: self.catalogue().describe(&dataset), store: self.store().describe(&dataset), locations, dataset }
    }

    /// Datasets a request names, locked or not (for control and where); none is an error
    /// that says why.
    fn all_datasets_matching(&self, request: &Request) -> Result<Vec<Key>> {
        let matches = self.resolve(request, ListOptions { depth: 1, ..ListOptions::default() }, None)?;
        match matches.explanation {
            Some(why) => Err(Error::new(ErrorKind::NotFound, format!("no data set matches {request}: {why}"))),
            None => Ok(matches.datasets),
        }
    }

    fn schema_of(&self, dataset: &Key) -> Result<std::sync::Arc<crate::schema::Schema>> {
        let text = self
            .catalogue()
            .schema_text(dataset)?
            .ok_or_else(|| Error::new(ErrorKind::Conflict, format!("data set {dataset} vanished")))?;
        self.parse_schema(&text, dataset)
    }
}

/// An error unless `request` names the keys a wipe or hide (`verb`) needs ([`WIPE_MINIMUM_KEYS`]).
fn naming_minimum_keys(request: &Request, verb: &str) -> Result<()> {
    match WIPE_MINIMUM_KEYS.iter().find(|k| request.get(k).is_none()) {
        Some(missing) => Err(Error::new(
            ErrorKind::BadRequest,
            format!("{verb} needs '{missing}' in the request (it must name at least {})", WIPE_MINIMUM_KEYS.join(", ")),
        )),
        None => Ok(()),
    }
}

/// Walks a dataset's indexes newest first and splits each one's entries into live and
/// superseded.
fn index_usage(view: &mut dyn crate::backend::DatasetView) -> Result<Vec<IndexUse>> {
    let mut seen: HashSet<(Key, Key)> = HashSet::new();
    let mut out = Vec::new();
    for info in view.indexes()? {
        let mut u = IndexUse { info, live: 0, live_bytes: 0, uris: BTreeSet::new(), superseded: Vec::new() };
        for (element, location) in view.entries(&u.info)? {
            if seen.insert((Key::clone(&u.info.collocation), element)) {
                u.live += 1;
                u.live_bytes += location.length;
                u.uris.insert(location.uri.to_string());
            } else {
                u.superseded.push((location.uri.to_string(), location.length));
            }
        }
        out.push(u);
    }
    Ok(out)
}
