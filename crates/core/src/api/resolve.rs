//! Resolving a MARS request against what is stored. Keywords a request leaves out range over
//! what is stored; every dataset is read with its own schema; indexes whose axis summaries
//! cannot match are skipped unread; fully specified requests become point lookups. When
//! nothing matches, [`Why`] says which part of the request did not.

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use super::FieldStore;
use crate::axis::AxisValues;
use crate::backend::{ControlAction, DatasetView, FieldLocation, IndexInfo};
use crate::error::{Error, Result};
use crate::key::Key;
use crate::request::Request;
use crate::schema::{Rule, RulePath, Schema};
use crate::types::{KeywordType, SortKey};

mod union;

/// Reasons shown per kind when nothing matched.
const SHOWN_REASONS: usize = 5;

/// Up to this many value combinations are looked up one by one; beyond, the index is scanned.
const MAX_POINT_LOOKUPS: usize = 4096;

/// How deep `list` goes, whether it shows superseded fields, and in which order.
#[derive(Clone, Copy, Debug, Serialize, Deserialize)]
pub struct ListOptions {
    /// 1: datasets; 2: datasets and collocations; 3: fields.
    pub depth: u8,
    /// Also return fields hidden by a newer archive of the same identifier.
    pub include_superseded: bool,
    /// Order fields as the request names values (FDB5's and MARS' retrieve order: keywords
    /// nested as the schema nests them, each keyword's values in the order written), and by
    /// each keyword's type where the request names none. Otherwise by type only.
    pub in_request_order: bool,
    /// Leave the fields in the order the catalogue gives them (index by index, newest index
    /// first), unsorted, and skip finding the values asked that no field has: for tools that
    /// take every field anyway (`copy` reads them in that order, close to where they lie).
    pub storage_order: bool,
}

impl Default for ListOptions {
    fn default() -> Self {
        ListOptions { depth: 3, include_superseded: false, in_request_order: false, storage_order: false }
    }
}

/// A value's place in the order fields are given: its position among the values the
/// request names for its keyword, or its place in its type's order.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum OrderKey {
    Asked(usize),
    Typed(SortKey),
}

impl OrderKey {
    /// A value's key: its place among the values asked, if the request names it there.
    fn new(asked_at: Option<usize>, value: &str, ty: KeywordType) -> OrderKey {
        match asked_at {
            Some(position) => OrderKey::Asked(position),
            None => OrderKey::Typed(ty.sort_key(value)),
        }
    }
}

/// The values a request names for one keyword, by their place in the request: computed
/// once per keyword, so ordering a field costs a lookup per keyword whatever the list's length.
type AskedOrder = HashMap<String, usize>;

fn asked_order(values: &[String]) -> AskedOrder {
    let mut order = AskedOrder::with_capacity(values.len());
    for (i, v) in values.iter().enumerate() {
        order.entry(v.clone()).or_insert(i);
    }
    order
}

/// One stored field.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct FieldEntry {
    /// Shared by every field of the dataset.
    pub dataset: Arc<Key>,
    /// Shared by every field of the collocation.
    pub collocation: Arc<Key>,
    /// The field's own values: the element key.
    pub element: Key,
    /// Where the field's bytes are.
    pub location: FieldLocation,
    /// Hidden by a newer field with the same identifier (only with `include_superseded`).
    pub superseded: bool,
    /// The data set the field was archived into, where that is another than `dataset`: one
    /// overlaid onto it ([`FieldStore::overlay`]). Its message carries that data set's keys,
    /// which a retrieve sets to `dataset`'s ([`crate::api::FieldRewriter`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub archived_in: Option<Arc<Key>>,
}

impl FieldEntry {
    /// The full identifier (absent optional keywords left out).
    pub fn identifier(&self) -> Key {
        Key::join_non_empty(&[&self.dataset, &self.collocation, &self.element])
    }
}

/// What a request matched, at the depth asked for.
#[derive(Debug, Default, Serialize, Deserialize)]
pub struct Matches {
    /// The datasets with something matching, at every depth.
    pub datasets: Vec<Key>,
    /// The matching (dataset, collocation) pairs; only at depth 2.
    pub collocations: Vec<(Key, Key)>,
    /// The matching fields, in the order [`ListOptions`] asks for; only at depth 3.
    pub fields: Vec<FieldEntry>,
    /// Summaries of the matching indexes (depth 2 and 3), with the element values asked.
    #[serde(skip)]
    pub(crate) indexes: Vec<(Key, Arc<IndexInfo>, Arc<Constraints>)>,
    /// Why nothing matched, when nothing did.
    pub explanation: Option<String>,
    /// Values the request names that no matched field has, as `keyword=v1/v2` (depth 3, when
    /// some fields matched): a retrieve that found part of what it names says what it did not.
    pub not_found: Vec<String>,
}

/// A listing's fields, owned, in order (datasets and collocations stay in `Matches`):
/// `for field in fs.list(&request, options)? { ... }`.
impl IntoIterator for Matches {
    type Item = FieldEntry;
    type IntoIter = std::vec::IntoIter<FieldEntry>;

    fn into_iter(self) -> Self::IntoIter {
        self.fields.into_iter()
    }
}

/// The state of one resolution, shared by the per-dataset steps.
struct Resolution<'r> {
    request: &'r Request,
    options: ListOptions,
    action: Option<ControlAction>,
    asked: Asked<'r>,
    why: Why,
    matches: Matches,
    /// Matched fields by (dataset, collocation), in the order first met.
    groups: Vec<Group>,
    group_ids: HashMap<(Key, Key), usize>,
    /// Per field: its group and the sort keys of its element values.
    field_order: FieldOrder,
    /// The request's keywords that no schema met so far names (the configured one's, each
    /// resolved data set's): those left at the end are typos.
    unknown_keywords: Vec<&'r str>,
    /// Per index of `matches.indexes` whose entries were read (depth 3), what a union of
    /// requests needs to give its fields out ([`union`]).
    chosen: Vec<ChosenPlan>,
}

/// An index whose entries a resolution read: the types of its keys' keywords (data set,
/// collocation, element), and the end of its fields in `Matches::fields` as found.
struct ChosenPlan {
    types: Arc<Vec<KeywordType>>,
    fields_end: usize,
}

/// The fields of one (dataset, collocation) pair, and what is needed to find superseded ones.
struct Group {
    dataset: Arc<Key>,
    collocation: Arc<Key>,
    sort_key: Vec<OrderKey>,
    /// The axes of the indexes met so far: an index whose axes miss them on some keyword
    /// cannot hold an element met before, so its entries need no check.
    axes: MetAxes,
    /// Element keys met, built only once an index could overlap earlier ones.
    seen: Option<HashSet<Key>>,
    /// Positions of this group's fields in `Matches::fields`.
    fields: Vec<usize>,
}

/// The axes of a group's indexes met so far: none; the first index's own, shared (a request
/// of one field in an index of thousands copies nothing); their union, from a second on.
enum MetAxes {
    None,
    One(Arc<IndexInfo>),
    Union(HashMap<String, HashSet<String>>),
}

impl Group {
    /// Whether every element keyword of `index` has a value already met.
    fn may_overlap(&self, index: &IndexInfo) -> bool {
        match &self.axes {
            MetAxes::None => false,
            MetAxes::One(first) => {
                index.axes.iter().all(|(k, values)| first.axes.get(k).is_some_and(|met| values.iter().any(|v| met.contains(v))))
            }
            MetAxes::Union(met) => {
                index.axes.iter().all(|(k, values)| met.get(&**k).is_some_and(|met| values.iter().any(|v| met.contains(v))))
            }
        }
    }

    fn add_axes(&mut self, index: &Arc<IndexInfo>) {
        let mut union = match std::mem::replace(&mut self.axes, MetAxes::None) {
            MetAxes::None => {
                self.axes = MetAxes::One(index.clone());
                return;
            }
            MetAxes::One(first) => {
                let mut union = HashMap::new();
                add_to_union(&mut union, &first);
                union
            }
            MetAxes::Union(union) => union,
        };
        add_to_union(&mut union, index);
        self.axes = MetAxes::Union(union);
    }
}

/// Adds the values of `index`'s axes to `union`.
fn add_to_union(union: &mut HashMap<String, HashSet<String>>, index: &IndexInfo) {
    for (k, values) in &index.axes {
        union.entry(k.to_string()).or_default().extend(values.iter().map(String::from));
    }
}

/// What a resolution does with a data set it cannot read.
#[derive(Clone, Copy, Debug)]
enum Unreadable {
    /// Leaves it out, noted, where the handle skips such ([`FieldStore::skipping_unreadable`]);
    /// else fails.
    AsTheHandleSays,
    /// Fails (a union of requests, which the requests alone may not need to read).
    Fails,
}

impl FieldStore {
    /// Finds what a request names. Datasets locked for `action` are left out (with a
    /// reason); `None` ignores locks (for `control` itself and `where`).
    pub fn resolve(&self, request: &Request, options: ListOptions, action: Option<ControlAction>) -> Result<Matches> {
        if let Some(remote) = self.remote() {
            return super::remote::resolve(remote, request, options, action);
        }
        let mut resolutions = [Resolution::new(self, request, options, action)];
        self.resolve_all(&mut resolutions, Unreadable::AsTheHandleSays)?;
        let [resolution] = resolutions;
        resolution.finish()
    }

    /// Finds what each request names, as [`FieldStore::resolve`] does, in one pass over the
    /// catalogue: its data sets listed once, and each data set's locks, index list and
    /// schema rules read once for all the requests (a list of one-field requests, as
    /// gribjump's callers give, costs a lookup per request, not a walk of the catalogue).
    /// Per request its answer, or the error of a request that cannot be read (an unknown
    /// keyword); the error of the catalogue itself fails them all. Through a server, up to 8
    /// requests are sent at once. One-field requests of the same keywords (gribjump's) are
    /// resolved as their union, once ([`union`]). The answers' fields, data sets, reasons and
    /// values not found are those of resolving alone; their indexes (read by wipe and purge,
    /// which resolve alone) may be left out.
    pub fn resolve_each<'r>(
        &self,
        requests: impl IntoIterator<Item = &'r Request>,
        options: ListOptions,
        action: Option<ControlAction>,
    ) -> Result<Vec<Result<Matches>>> {
        if let Some(remote) = self.remote() {
            let requests: Vec<&Request> = requests.into_iter().collect();
            return Ok(crate::parallel::in_parallel(8, requests.len(), |i| super::remote::resolve(remote, requests[i], options, action)));
        }
        let requests: Vec<&Request> = requests.into_iter().collect();
        let together = union::answers(self, &requests, options, action)?;
        let alone = requests.iter().zip(&together).filter(|(_, answer)| answer.is_none());
        let mut resolutions: Vec<_> = alone.map(|(request, _)| Resolution::new(self, request, options, action)).collect();
        if !resolutions.is_empty() {
            self.resolve_all(&mut resolutions, Unreadable::AsTheHandleSays)?;
        }
        let mut alone = resolutions.into_iter().map(Resolution::finish);
        Ok(together.into_iter().filter_map(|answer| answer.map(Ok).or_else(|| alone.next())).collect())
    }

    /// Matches every data set for each resolution (all of one action); a data set that cannot
    /// be read is left out or fails them as `unreadable` says.
    fn resolve_all(&self, resolutions: &mut [Resolution<'_>], unreadable: Unreadable) -> Result<()> {
        let datasets = self.catalogue().datasets()?;
        self.keep_views_of(&datasets);
        if datasets.is_empty() {
            resolutions.iter_mut().for_each(|r| r.why.add(0, "the store holds no data sets yet".into()));
        }
        for dataset in &datasets {
            self.resolve_dataset_for_all(resolutions, dataset, unreadable)?;
        }
        Ok(())
    }

    /// Matches one data set, and those overlaid onto it, for each resolution.
    fn resolve_dataset_for_all(&self, resolutions: &mut [Resolution<'_>], dataset: &Key, unreadable: Unreadable) -> Result<()> {
        let Some(action) = resolutions.first().map(|r| r.action) else { return Ok(()) };
        // Views are kept between calls: each one reads only what was flushed since.
        let view = match self.view(dataset) {
            Ok(Some(view)) => view,
            Ok(None) => return Ok(()),
            // A data set that cannot be opened (found in two roots, damaged) fails the
            // requests that may name it, not the others.
            Err(e) => {
                // Each request asks (which also notes the values its types read), as alone.
                let mut named = false;
                for r in resolutions.iter_mut() {
                    named |= self.may_name(&mut r.asked, dataset)?;
                }
                return if named { self.skip_unreadable(dataset, e, unreadable) } else { Ok(()) };
            }
        };
        let locked = self.locked_for(dataset, action)?;
        // Those that looked at the data set's fields, which look at its overlays' too.
        let mut looked = vec![false; resolutions.len()];
        let overlaid = {
            // One reader at a time refreshes and reads a view; readers of other data sets go on.
            let mut view = super::lock(&view);
            let schema = self.parse_schema(view.schema_text(), dataset)?;
            let mut read = DatasetRead::new(dataset, &schema, locked, None);
            for (r, looked) in resolutions.iter_mut().zip(&mut looked) {
                let matched_before = r.matches.sizes();
                match resolve_dataset(r, &mut read, view.as_mut()) {
                    Ok(answer) => *looked = answer,
                    // Failed before it added anything (its indexes could not be read): it may
                    // be skipped; after, the request fails.
                    Err(e) if r.matches.sizes() == matched_before => self.skip_unreadable(dataset, e, unreadable)?,
                    Err(e) => return Err(e),
                }
            }
            match looked.contains(&true) {
                true => view.overlays().map(|o| o.overlaid().to_vec()).unwrap_or_default(),
                false => Vec::new(),
            }
        };
        let those_that_looked = resolutions.iter_mut().zip(looked).filter_map(|(r, looked)| looked.then_some(r));
        self.resolve_overlaid(&mut those_that_looked.collect::<Vec<_>>(), dataset, locked, &overlaid)
    }
}

impl<'r> Resolution<'r> {
    fn new(fs: &FieldStore, request: &'r Request, options: ListOptions, action: Option<ControlAction>) -> Self {
        Resolution {
            request,
            options,
            action,
            asked: Asked { request, cache: HashMap::new(), unreadable: BTreeMap::new(), readable: HashSet::new() },
            why: Why::default(),
            matches: Matches::default(),
            groups: Vec::new(),
            group_ids: HashMap::new(),
            field_order: FieldOrder::default(),
            unknown_keywords: request.keywords().filter(|k| !fs.schema().names_keyword(k)).collect(),
            chosen: Vec::new(),
        }
    }

    /// What the request matched, in order, or the error of a request that cannot be read.
    fn finish(mut self) -> Result<Matches> {
        if let Some(unknown) = self.unknown_keywords.first() {
            // A typo must not widen a request (`purge clas=rd` is no `purge`): it is an error,
            // as in FDB5.
            return Err(Error::RequestSyntax {
                context: self.request.to_string(),
                message: format!("unknown keyword '{unknown}': no schema rule uses it"),
            });
        }
        if let Some(error) = self.asked.unreadable_by_every_type() {
            return Err(error);
        }
        for reason in self.asked.unreadable_reasons().collect::<Vec<_>>() {
            // Below a lock (5) or a value off an axis (4): where a data set could read the value,
            // why it did not match says more.
            self.why.add(3, reason);
        }
        let options = self.options;
        let mut matches = self.matches;
        if !options.storage_order {
            sort_fields(&mut matches.fields, &self.groups, &self.field_order);
        }
        // A list of fields (and a retrieve) that found none says why, even where data sets
        // and indexes matched: every value asked may be stored, but never together.
        if options.depth >= 3 && !matches.fields.is_empty() && !options.storage_order {
            matches.not_found = self.asked.not_found_in(&matches.fields);
        }
        if matches.datasets.is_empty() || (options.depth >= 3 && matches.fields.is_empty()) {
            matches.explanation = Some(self.why.explain());
        }
        Ok(matches)
    }
}

impl Matches {
    /// How much was matched: grows with every match.
    fn sizes(&self) -> (usize, usize, usize, usize) {
        (self.datasets.len(), self.collocations.len(), self.indexes.len(), self.fields.len())
    }
}

impl FieldStore {
    /// `error`, unless this handle skips data sets that cannot be read
    /// ([`FieldStore::skipping_unreadable`]) and `unreadable` lets it: then it is noted for
    /// [`FieldStore::take_skipped`].
    fn skip_unreadable(&self, dataset: &Key, error: Error, unreadable: Unreadable) -> Result<()> {
        if !self.skip_unreadable || matches!(unreadable, Unreadable::Fails) {
            return Err(error);
        }
        let note = format!("data set {dataset} left out: {}", error.report());
        let mut skipped = super::lock(&self.skipped);
        // A tool resolving again (or request by request) says it once.
        if !skipped.contains(&note) {
            skipped.push(note);
        }
        Ok(())
    }

    /// Whether `dataset` is locked for `action` (never for none).
    fn locked_for(&self, dataset: &Key, action: Option<ControlAction>) -> Result<bool> {
        match action {
            Some(action) => Ok(self.catalogue().locks(dataset)?.contains(&action)),
            None => Ok(false),
        }
    }

    /// Matches the fields of the data sets overlaid onto `dataset` (newest overlay first) as
    /// fields of `dataset`, after its own, which therefore hide theirs (`dataset`'s own were
    /// looked at: its key matched). One level: their own
    /// overlays are not followed, so overlays never loop. Each view is locked alone, after
    /// `dataset`'s was released: overlays naming each other cannot deadlock two readers.
    fn resolve_overlaid(&self, resolutions: &mut [&mut Resolution<'_>], dataset: &Key, locked: bool, overlaid: &[Key]) -> Result<()> {
        let Some(action) = resolutions.first().map(|r| r.action) else { return Ok(()) };
        for source in overlaid.iter().rev() {
            // An overlaid data set wiped (or not yet made again) shows nothing.
            let Some(view) = self.view(source)? else { continue };
            let locked = locked || self.locked_for(source, action)?;
            let mut view = super::lock(&view);
            let schema = self.parse_schema(view.schema_text(), source)?;
            let archived_in = Arc::new(source.clone());
            let mut read = DatasetRead::new(dataset, &schema, locked, Some(&archived_in));
            for r in resolutions.iter_mut() {
                resolve_dataset(r, &mut read, view.as_mut())?;
            }
        }
        Ok(())
    }

    /// Whether the request may name `dataset`, judged by the handle's schema (for a data set
    /// whose own cannot be read).
    fn may_name(&self, asked: &mut Asked<'_>, dataset: &Key) -> Result<bool> {
        let schema = self.schema();
        let Some(first) = schema.paths_for(dataset, None).into_iter().next() else { return Ok(true) };
        Ok(asked.first_mismatch(dataset, schema, &first.levels[..1])?.is_none())
    }
}

/// A data set as the requests of one resolve read it: what does not depend on the request,
/// found once for all of them.
struct DatasetRead<'a> {
    /// The data set the fields are matched as.
    dataset: &'a Key,
    /// The schema of the view's data set.
    schema: &'a Schema,
    locked: bool,
    /// The data set overlaid onto `dataset` whose view is read, if it is not `dataset`'s own.
    archived_in: Option<&'a Arc<Key>>,
    /// The schema's rule paths that could have made the view's data set key.
    paths: Vec<RulePath<'a>>,
    /// The first of `paths` that could have made each collocation key met.
    collocation_paths: HashMap<Key, Option<RulePath<'a>>>,
    /// The view's indexes, once read.
    indexes: Option<Vec<Arc<IndexInfo>>>,
}

impl<'a> DatasetRead<'a> {
    fn new(dataset: &'a Key, schema: &'a Schema, locked: bool, archived_in: Option<&'a Arc<Key>>) -> Self {
        let paths = schema.paths_for(dataset, None);
        DatasetRead { dataset, schema, locked, archived_in, paths, collocation_paths: HashMap::new(), indexes: None }
    }

    /// The view's indexes, read (refreshed) once.
    fn indexes(&mut self, view: &mut dyn DatasetView) -> Result<Vec<Arc<IndexInfo>>> {
        if self.indexes.is_none() {
            self.indexes = Some(view.indexes()?);
        }
        Ok(self.indexes.clone().unwrap_or_default())
    }

    /// The rule path that made `collocation` (the first that could have).
    fn collocation_path(&mut self, collocation: &Key) -> Option<RulePath<'a>> {
        let schema = self.schema;
        let paths = &self.paths;
        *self.collocation_paths.entry(collocation.clone()).or_insert_with(|| {
            paths.iter().find(|p| p.levels[1].accepts_stored(collocation, |k| schema.type_of(&p.levels[..2], k))).copied()
        })
    }
}

/// Matches one dataset: its key, then each index's collocation key, axes and entries; the
/// view is `dataset`'s, or with `archived_in` that of a data set overlaid onto it. Whether
/// its fields were looked at (its key matched, no lock, below depth 1): only then are those
/// of data sets overlaid onto it.
fn resolve_dataset(r: &mut Resolution<'_>, read: &mut DatasetRead<'_>, view: &mut dyn DatasetView) -> Result<bool> {
    let (dataset, schema, locked, archived_in) = (read.dataset, read.schema, read.locked, read.archived_in);
    r.unknown_keywords.retain(|k| !schema.names_keyword(k));
    let Some(first) = read.paths.first().copied() else {
        r.why.add(1, format!("data set {dataset} matches no rule of its own schema"));
        return Ok(false);
    };
    if let Some(m) = r.asked.first_mismatch(dataset, schema, &first.levels[..1])? {
        let matching = r.asked.matching_keywords(dataset, schema, &first.levels[..1])?;
        r.why.dataset_met(dataset, Some(matching));
        r.why.dataset_mismatch(m);
        return Ok(false);
    }
    r.why.dataset_met(dataset, None);
    if locked {
        let action = r.action.map_or("", ControlAction::name);
        r.why.add(5, format!("data set {dataset} is locked for {action}"));
        return Ok(false);
    }
    if r.options.depth <= 1 {
        push_once(&mut r.matches.datasets, dataset);
        return Ok(false);
    }
    let before = (r.matches.collocations.len(), r.matches.fields.len(), r.matches.indexes.len());
    // Indexes of one collocation key share everything but their axes: plan each key once.
    let mut plans: HashMap<Key, PlansByKeywords> = HashMap::new();
    // The indexes whose entries to read, with their plans.
    let mut chosen = Vec::new();
    for index in read.indexes(view)? {
        let known = plans.get(&*index.collocation).and_then(|v| v.iter().find(|(k, _)| **k == *index.element_keywords));
        let plan = match known {
            Some((_, plan)) => plan.clone(),
            None => {
                let plan = match read.collocation_path(&index.collocation) {
                    Some(path) => plan_collocation(r, dataset, schema, path, &index)?,
                    None => None,
                };
                plans.entry(Key::clone(&index.collocation)).or_default().push((index.element_keywords.to_vec(), plan.clone()));
                plan
            }
        };
        let Some(plan) = plan else { continue };
        if let Some(i) = off_axis(&index, &plan.constraints) {
            let kw = &index.element_keywords[i];
            // Values no type could read (an unknown parameter name) are named as written.
            let asked = match plan.constraints[i].as_deref().unwrap_or_default() {
                [] => vec![r.asked.written(kw)],
                asked => asked.to_vec(),
            };
            r.why.off_axis(
                kw,
                &asked,
                || format!("{{{dataset}}}{{{}}}", index.collocation.display_non_empty()),
                &index.axes[kw.as_str()],
                plan.types[dataset.len() + index.collocation.len() + i],
            );
            continue;
        }
        if r.options.depth == 2 {
            let pair = (dataset.clone(), Key::clone(&index.collocation));
            if !r.matches.collocations.contains(&pair) {
                r.matches.collocations.push(pair);
            }
            r.matches.indexes.push((dataset.clone(), index, plan.constraints));
            continue;
        }
        chosen.push((index, plan));
    }
    // The indexes to read, read at once where the catalogue can (an object store's requests).
    view.prefetch(&chosen.iter().map(|(index, _)| index.as_ref()).collect::<Vec<_>>())?;
    for (index, Plan { constraints, types, order }) in chosen {
        let group = r.group(dataset, &index.collocation, &types)?;
        let entries = matching_entries(view, &index, &constraints)?;
        if entries.is_empty() {
            r.why.note(4, || describe_no_combination(dataset, &index, &constraints));
        }
        let element_types = &types[dataset.len() + index.collocation.len()..];
        let g = &mut r.groups[group];
        if g.seen.is_none() && g.may_overlap(&index) {
            g.seen = Some(g.fields.iter().map(|&i| r.matches.fields[i].element.clone()).collect());
        }
        g.add_axes(&index);
        // Grown once per index, before the loop's small allocations rather than between them:
        // a list of 10,000 fields, 100 indexes, took 17% less time (examples/list_all.rs).
        if !r.options.storage_order {
            r.field_order.start_run(entries.len(), element_types.len());
        }
        r.matches.fields.reserve(entries.len());
        g.fields.reserve(entries.len());
        for (element, location) in entries {
            let superseded = match &mut g.seen {
                Some(seen) => !seen.insert(element.clone()),
                None => false,
            };
            if superseded && !r.options.include_superseded {
                continue;
            }
            if !r.options.storage_order {
                let asked_at = |i: usize, v: &str| order.get(i).and_then(Option::as_ref).and_then(|o| o.get(v).copied());
                let keys = element.values().zip(element_types).enumerate().map(|(i, (v, t))| OrderKey::new(asked_at(i, v), v, *t));
                r.field_order.push(group, keys);
            }
            g.fields.push(r.matches.fields.len());
            r.matches.fields.push(FieldEntry {
                dataset: g.dataset.clone(),
                collocation: g.collocation.clone(),
                element,
                location,
                superseded,
                archived_in: archived_in.cloned(),
            });
        }
        r.matches.indexes.push((dataset.clone(), index, constraints));
        r.chosen.push(ChosenPlan { types, fields_end: r.matches.fields.len() });
    }
    if (r.matches.collocations.len(), r.matches.fields.len(), r.matches.indexes.len()) != before {
        push_once(&mut r.matches.datasets, dataset);
    }
    Ok(true)
}

/// Adds `dataset` unless it was the last added: a data set and those overlaid onto it are
/// matched one after another, under its key.
fn push_once(datasets: &mut Vec<Key>, dataset: &Key) {
    if datasets.last() != Some(dataset) {
        datasets.push(dataset.clone());
    }
}

/// Per element keyword, the canonical values a request asks for (`None`: any value).
pub(crate) type Constraints = Vec<Option<Vec<String>>>;

/// The plans of one collocation key, by element keyword list.
type PlansByKeywords = Vec<(Vec<String>, Option<Plan>)>;

/// What every index of one (collocation key, element keywords) pair needs: the asked
/// element values and the types of all keys. `None` when such indexes cannot match.
#[derive(Clone)]
struct Plan {
    constraints: Arc<Constraints>,
    types: Arc<Vec<KeywordType>>,
    /// Per element keyword, the places of its asked values (retrieve only; empty for list).
    order: Arc<Vec<Option<AskedOrder>>>,
}

fn plan_collocation(r: &mut Resolution<'_>, dataset: &Key, schema: &Schema, path: RulePath<'_>, index: &IndexInfo) -> Result<Option<Plan>> {
    let unused = |k: &&str| !path.levels.iter().any(|rule| rule.names(k)) && !r.request.asks_only_absence(k);
    if let Some(kw) = r.request.keywords().find(unused) {
        r.why.note(3, || {
            format!(
                "keyword '{kw}' is not used by the schema rule (line {}) of {{{dataset}}}{{{}}}",
                path.levels[1].line,
                index.collocation.display_non_empty()
            )
        });
        return Ok(None);
    }
    if let Some(m) = r.asked.first_mismatch(&index.collocation, schema, &path.levels[..2])? {
        r.why.note(2, || {
            format!("{}={} is not stored in data set {{{dataset}}} (it has {}={})", m.keyword, m.asked.join("/"), m.keyword, m.stored)
        });
        return Ok(None);
    }
    let constraints = r.asked.element_constraints(index, schema, &path)?;
    let types: Vec<KeywordType> = dataset
        .keywords()
        .map(|k| schema.type_of(&path.levels[..1], k))
        .chain(index.collocation.keywords().map(|k| schema.type_of(&path.levels[..2], k)))
        .chain(index.element_keywords.iter().map(|k| schema.type_of(&path.levels, k)))
        .collect();
    // Only retrieve orders by the request (list orders by type).
    let order = if r.options.in_request_order { constraints.iter().map(|c| c.as_deref().map(asked_order)).collect() } else { Vec::new() };
    Ok(Some(Plan { constraints: Arc::new(constraints), types: Arc::new(types), order: Arc::new(order) }))
}

impl Resolution<'_> {
    /// The group of a (dataset, collocation) pair, created on first use.
    fn group(&mut self, dataset: &Key, collocation: &Key, types: &[KeywordType]) -> Result<usize> {
        let id = (dataset.clone(), collocation.clone());
        if let Some(&g) = self.group_ids.get(&id) {
            return Ok(g);
        }
        let mut sort_key = Vec::with_capacity(dataset.len() + collocation.len());
        for ((k, v), t) in dataset.iter().chain(collocation.iter()).zip(types) {
            let asked = if self.options.in_request_order { self.asked.values(k, *t)? } else { None };
            // Once per group: a search is as cheap as a map.
            sort_key.push(OrderKey::new(asked.and_then(|a| a.iter().position(|x| x == v)), v, *t));
        }
        self.groups.push(Group {
            dataset: Arc::new(dataset.clone()),
            collocation: Arc::new(collocation.clone()),
            sort_key,
            axes: MetAxes::None,
            seen: None,
            fields: Vec::new(),
        });
        self.group_ids.insert(id, self.groups.len() - 1);
        Ok(self.groups.len() - 1)
    }
}

/// Per field met, its group and the order keys of its element values: the keys of every
/// field in one vector, so that a list of many fields allocates them once, and a comparison
/// reads them from one place. Fields are met index by index: each index's fields are a run.
#[derive(Default)]
struct FieldOrder {
    /// Per field: its group, and where its keys start in `keys` (they end where the next
    /// field's start).
    fields: Vec<(usize, usize)>,
    keys: Vec<OrderKey>,
    /// Where each index's fields start in `fields`.
    runs: Vec<usize>,
}

impl FieldOrder {
    /// Starts the run of an index's fields: up to `fields` of them, with `keys_each` keys.
    fn start_run(&mut self, fields: usize, keys_each: usize) {
        self.runs.push(self.fields.len());
        self.fields.reserve(fields);
        self.keys.reserve(fields.saturating_mul(keys_each));
    }

    fn push(&mut self, group: usize, keys: impl Iterator<Item = OrderKey>) {
        self.fields.push((group, self.keys.len()));
        self.keys.extend(keys);
    }

    fn keys(&self, field: usize) -> &[OrderKey] {
        let end = self.fields.get(field + 1).map_or(self.keys.len(), |&(_, start)| start);
        &self.keys[self.fields[field].1..end]
    }

    /// The runs of fields, as ranges of positions covering every field (any pushed before a
    /// run was started are one), empty ones left out.
    fn runs(&self) -> impl Iterator<Item = std::ops::Range<usize>> + '_ {
        let starts = std::iter::once(0).chain(self.runs.iter().copied());
        let ends = self.runs.iter().copied().chain([self.fields.len()]);
        starts.zip(ends).filter(|(start, end)| start < end).map(|(start, end)| start..end)
    }
}

/// Orders fields by their order keys (numerically by each keyword's type where the request
/// does not set the order): groups by their dataset and collocation values, fields within by
/// their element values, with keys computed once per field. The sort is stable, so the
/// newest stays first among equals.
fn sort_fields(fields: &mut [FieldEntry], groups: &[Group], order: &FieldOrder) {
    // Sorting positions, then moving each field once, is cheaper than sorting the fields.
    permute(fields, sorted_positions(groups, order));
}

/// The fields' positions in the order of [`sort_fields`].
fn sorted_positions(groups: &[Group], order: &FieldOrder) -> Vec<usize> {
    let mut by_group: Vec<usize> = (0..groups.len()).collect();
    by_group.sort_by(|&a, &b| groups[a].sort_key.cmp(&groups[b].sort_key));
    let mut rank = vec![0; groups.len()];
    for (r, g) in by_group.into_iter().enumerate() {
        rank[g] = r;
    }
    let compare = |a: usize, b: usize| rank[order.fields[a].0].cmp(&rank[order.fields[b].0]).then_with(|| order.keys(a).cmp(order.keys(b)));
    // Each index's run sorted alone, then the runs by their first fields: where no two
    // indexes' fields interleave (an index per step, the usual layout), that is the order,
    // found with far fewer comparisons than sorting all fields at once. Runs that interleave
    // or share a key are sorted together after all, which their order inside each run, kept
    // stable, does not change.
    let mut sorted: Vec<usize> = (0..order.fields.len()).collect();
    let mut runs: Vec<std::ops::Range<usize>> = order.runs().collect();
    for run in &runs {
        sorted[run.clone()].sort_by(|&a, &b| compare(a, b));
    }
    runs.sort_by(|x, y| compare(sorted[x.start], sorted[y.start]));
    let apart = runs.windows(2).all(|pair| compare(sorted[pair[0].end - 1], sorted[pair[1].start]).is_lt());
    if !apart {
        sorted.sort_by(|&a, &b| compare(a, b));
        return sorted;
    }
    let mut joined = Vec::with_capacity(sorted.len());
    for run in runs {
        joined.extend_from_slice(&sorted[run]);
    }
    joined
}

/// Reorders `items` so that position i holds what was at `order[i]` (a permutation), moving
/// each item once.
fn permute<T>(items: &mut [T], mut order: Vec<usize>) {
    // If order[i] was already filled, the swap that filled it moved its item to where
    // order[] then points, and so on.
    for i in 0..order.len() {
        let mut from = order[i];
        while from < i {
            from = order[from];
        }
        order[i] = from;
        items.swap(i, from);
    }
}

/// The entries of one index that satisfy the element constraints: point lookups when the
/// combinations of asked values on the index's axes are few (a keyword not asked ranges over
/// the index's values of it: an optional keyword the request leaves out, most often with the
/// one value ""), a scan otherwise. (An index holds one flush: asking ten steps of an index
/// that holds one would otherwise look up ten times the combinations it can have; and a
/// compacted index holds many: a point query must not scan it.)
fn matching_entries(
    view: &mut dyn DatasetView,
    index: &IndexInfo,
    constraints: &[Option<Vec<String>>],
) -> Result<Vec<(Key, FieldLocation)>> {
    let on_axes: Option<Vec<Vec<&str>>> = index
        .element_keywords
        .iter()
        .zip(constraints)
        .map(|(kw, asked)| {
            let axis = index.axes.get(kw.as_str());
            match asked {
                Some(asked) => Some(asked.iter().map(String::as_str).filter(|v| axis.is_none_or(|axis| axis.contains(v))).collect()),
                None => axis.map(|axis| axis.iter().collect()),
            }
        })
        .collect();
    let product = on_axes.as_ref().map(|lists| lists.iter().fold(1usize, |acc, l| acc.saturating_mul(l.len())));
    // Asking every value an index has (a request that lists all steps, levels and params)
    // matches all its entries: one scan is cheaper than a lookup per entry.
    let asks_all = on_axes.as_ref().is_some_and(|lists| {
        lists
            .iter()
            .zip(index.element_keywords.iter())
            .all(|(on_axis, kw)| index.axes.get(kw.as_str()).is_some_and(|axis| covers(on_axis, axis)))
    });
    match (on_axes, product) {
        (Some(lists), Some(n)) if n <= MAX_POINT_LOOKUPS && (n as u64) <= index.fields && !asks_all => {
            let mut out = Vec::new();
            for combo in cartesian(&lists) {
                let element = Key::from_pairs(index.element_keywords.iter().map(String::as_str).zip(combo));
                if let Some(location) = view.lookup(index, &element)? {
                    out.push((element, location));
                }
            }
            Ok(out)
        }
        _ if asks_all => view.entries(index),
        _ => Ok(view
            .entries(index)?
            .into_iter()
            .filter(|(element, _)| element.values().zip(constraints).all(|(v, c)| c.as_ref().is_none_or(|c| c.iter().any(|x| x == v))))
            .collect()),
    }
}

/// Whether `on_axis`, values of `axis`, holds every value of it.
fn covers(on_axis: &[&str], axis: &crate::axis::AxisValues) -> bool {
    if on_axis.len() < axis.len() {
        return false;
    }
    let mut distinct = on_axis.to_vec();
    distinct.sort_unstable();
    distinct.dedup();
    distinct.len() == axis.len()
}

/// Every combination of one value from each list, the last list varying fastest.
fn cartesian<'a>(lists: &[Vec<&'a str>]) -> Vec<Vec<&'a str>> {
    let mut out: Vec<Vec<&str>> = vec![Vec::new()];
    for list in lists {
        out = out.iter().flat_map(|prefix| list.iter().map(move |v| prefix.iter().copied().chain([*v]).collect())).collect();
    }
    out
}

/// The position of the first constrained element keyword with none of its asked values on
/// the index's axis.
fn off_axis(index: &IndexInfo, constraints: &[Option<Vec<String>>]) -> Option<usize> {
    index.element_keywords.iter().zip(constraints).position(|(kw, c)| match (c, index.axes.get(kw.as_str())) {
        (Some(asked), Some(axis)) => !asked.iter().any(|v| axis.contains(v)),
        _ => false,
    })
}

/// Values shown of an axis that does not hold what was asked.
const SHOWN_AXIS_VALUES: usize = 12;

fn describe_off_axis(kw: &str, asked: &str, place: &str, stored: &BTreeSet<String>, ty: KeywordType) -> String {
    if stored.iter().all(|s| s.is_empty()) {
        return format!("{kw}={asked}: no field of {place} has a {kw}");
    }
    let mut sorted: Vec<&str> = stored.iter().map(String::as_str).collect();
    sorted.sort_by(|a, b| ty.compare(a, b));
    let more = if sorted.len() > SHOWN_AXIS_VALUES { ", ..." } else { "" };
    let shown = sorted.into_iter().take(SHOWN_AXIS_VALUES).collect::<Vec<_>>().join(",");
    format!("{kw}={asked} is not on the axis (stored: {shown}{more}) in {place}")
}

/// Why an index whose axes hold each asked value has no entry of their combinations.
fn describe_no_combination(dataset: &Key, index: &IndexInfo, constraints: &[Option<Vec<String>>]) -> String {
    let asked: Vec<String> = index
        .element_keywords
        .iter()
        .zip(constraints)
        .filter_map(|(kw, c)| c.as_ref().map(|values| format!("{kw}={}", values.join("/"))))
        .collect();
    let place = format!("{{{dataset}}}{{{}}}", index.collocation.display_non_empty());
    format!("no field of {place} has {} (each value is stored, but not together)", asked.join(","))
}

/// A request's canonical values per keyword and type, computed once.
struct Asked<'r> {
    request: &'r Request,
    cache: HashMap<(String, KeywordType), Option<Arc<Vec<String>>>>,
    /// Per keyword, the first value some data set's type could not read (those data sets are
    /// left out), and why.
    unreadable: BTreeMap<String, (String, String)>,
    /// The keywords some data set's type read.
    readable: HashSet<String>,
}

struct Mismatch {
    keyword: String,
    stored: String,
    asked: Vec<String>,
    /// The keywords before it whose stored values the request asks for, with those values.
    matched: Key,
}

impl Asked<'_> {
    fn values(&mut self, keyword: &str, ty: KeywordType) -> Result<Option<Arc<Vec<String>>>> {
        let cache_key = (keyword.to_string(), ty);
        if let Some(v) = self.cache.get(&cache_key) {
            return Ok(v.clone());
        }
        let v = match self.request.values(keyword, ty) {
            Ok(values) => {
                self.readable.insert(keyword.to_string());
                values.map(Arc::new)
            }
            // A value one data set's type cannot read asks for nothing there, not for an
            // error: another data set's type may read it (`date=nov` names a climate month).
            Err(Error::BadValue { value, reason, .. }) => {
                self.unreadable.entry(keyword.to_string()).or_insert((value, reason));
                Some(Arc::new(Vec::new()))
            }
            Err(e) => return Err(e),
        };
        self.cache.insert(cache_key, v.clone());
        Ok(v)
    }

    /// The error of a value that no data set's type could read (`date=20231301`,
    /// `number=1/to/3/by/0`), as FDB5 refuses it: a request that cannot be read is no request
    /// that matched nothing.
    fn unreadable_by_every_type(&self) -> Option<Error> {
        self.unreadable
            .iter()
            .find(|(kw, _)| !self.readable.contains(*kw))
            .map(|(kw, (value, reason))| Error::bad_value(kw, value, reason.clone()))
    }

    /// Whether every value was read, each keyword's by one type: then a request of one value
    /// per keyword asks one spelling of each, which every field it matches has.
    fn reads_every_value_one_way(&self) -> bool {
        let mut keywords: Vec<&str> = self.cache.keys().map(|(k, _)| k.as_str()).collect();
        let read = keywords.len();
        keywords.sort_unstable();
        keywords.dedup();
        self.unreadable.is_empty() && keywords.len() == read
    }

    /// The reasons some data sets were left out: values their types could not read.
    fn unreadable_reasons(&self) -> impl Iterator<Item = String> + '_ {
        self.unreadable.iter().map(|(kw, (value, reason))| Error::bad_value(kw, value, reason.clone()).to_string())
    }

    /// Per keyword the request names values of, those no field of `fields` has, as
    /// `keyword=v1/v2`, in the request's order.
    fn not_found_in(&self, fields: &[FieldEntry]) -> Vec<String> {
        let mut out = Vec::new();
        for keyword in self.request.keywords() {
            // The values asked under each type the keyword was read with, once each.
            let mut asked: Vec<&str> = Vec::new();
            for ((k, _), values) in &self.cache {
                for value in values.iter().filter(|_| k == keyword).flat_map(|v| v.iter()) {
                    if !asked.contains(&value.as_str()) {
                        asked.push(value);
                    }
                }
            }
            // Each field crosses its value off; usually all are crossed off within the first
            // fields, so a retrieve of many fields does not look at every one of them.
            let mut missing: HashSet<&str> = asked.iter().copied().collect();
            for field in fields {
                if missing.is_empty() {
                    break;
                }
                let value = field.element.get(keyword).or_else(|| field.collocation.get(keyword)).or_else(|| field.dataset.get(keyword));
                if let Some(value) = value {
                    missing.remove(value);
                }
            }
            let missing: Vec<&str> = asked.into_iter().filter(|v| missing.contains(v)).collect();
            if !missing.is_empty() {
                out.push(format!("{keyword}={}", missing.join("/")));
            }
        }
        out
    }

    /// The values asked for `keyword` as the request writes them (for a reason whose values
    /// could not be read).
    fn written(&self, keyword: &str) -> String {
        self.request.get(keyword).map(ToString::to_string).unwrap_or_default()
    }

    /// The first keyword of a stored key whose value the request does not ask for.
    fn first_mismatch(&mut self, key: &Key, schema: &Schema, rules: &[&Rule]) -> Result<Option<Mismatch>> {
        let mut matched = Key::new();
        for (k, v) in key.iter() {
            if let Some(asked) = self.values(k, schema.type_of(rules, k))? {
                if !asked.iter().any(|a| a == v) {
                    return Ok(Some(Mismatch { keyword: k.to_string(), stored: v.to_string(), asked: asked.to_vec(), matched }));
                }
                matched.push(k, v);
            }
        }
        Ok(None)
    }

    /// The keywords of a stored key whose values the request asks for.
    fn matching_keywords(&mut self, key: &Key, schema: &Schema, rules: &[&Rule]) -> Result<BTreeSet<String>> {
        let mut matching = BTreeSet::new();
        for (k, v) in key.iter() {
            if self.values(k, schema.type_of(rules, k))?.is_some_and(|asked| asked.iter().any(|a| a == v)) {
                matching.insert(k.to_string());
            }
        }
        Ok(matching)
    }

    /// Per element keyword, the asked values (`None` = any).
    fn element_constraints(&mut self, index: &IndexInfo, schema: &Schema, path: &RulePath<'_>) -> Result<Constraints> {
        index.element_keywords.iter().map(|k| Ok(self.values(k, schema.type_of(&path.levels, k))?.map(|v| v.to_vec()))).collect()
    }
}

/// Reasons why parts of the store did not match, ranked by how far matching got.
#[derive(Default)]
struct Why {
    reasons: BTreeMap<u8, Vec<String>>,
    /// Asked values off an index's axis, by keyword, asked values and collocation, with the
    /// values stored: one reason per collocation, however many indexes it has.
    off_axis: BTreeMap<(String, String, String), (KeywordType, BTreeSet<String>)>,
    /// Dataset-level mismatches: (the asked values matched before the keyword, keyword) ->
    /// (asked values, stored values seen).
    dataset: BTreeMap<(Key, String), (Vec<String>, BTreeSet<String>)>,
    /// Every data set met, with the keywords whose values the request asks for: a mismatch
    /// of one data set says nothing of the store where another data set holds the value.
    datasets_met: Vec<(Key, Option<BTreeSet<String>>)>,
}

impl Why {
    fn add(&mut self, rank: u8, reason: String) {
        self.note(rank, || reason);
    }

    /// Records a reason, building its text only while fewer than [`SHOWN_REASONS`] are
    /// kept for its rank: pruning thousands of indexes must not format thousands of strings.
    fn note(&mut self, rank: u8, reason: impl FnOnce() -> String) {
        let list = self.reasons.entry(rank).or_default();
        if list.len() > SHOWN_REASONS {
            return;
        }
        let reason = reason();
        if !list.contains(&reason) {
            list.push(reason);
        }
    }

    /// Notes that an index's axis of `kw` holds none of the values asked (`place` names its
    /// collocation).
    fn off_axis(&mut self, kw: &str, asked: &[String], place: impl FnOnce() -> String, axis: &AxisValues, ty: KeywordType) {
        let key = (kw.to_string(), asked.join("/"), place());
        if self.off_axis.len() > SHOWN_REASONS && !self.off_axis.contains_key(&key) {
            return;
        }
        let (_, stored) = self.off_axis.entry(key).or_insert_with(|| (ty, BTreeSet::new()));
        for value in axis.iter() {
            if stored.len() > SHOWN_AXIS_VALUES {
                break;
            }
            stored.insert(value.to_string());
        }
    }

    fn dataset_mismatch(&mut self, m: Mismatch) {
        if m.asked.is_empty() {
            return; // a value the data set's type cannot read: said as such
        }
        let entry = self.dataset.entry((m.matched, m.keyword)).or_insert_with(|| (m.asked, BTreeSet::new()));
        entry.1.insert(m.stored);
    }

    /// Notes a data set met, with the keywords of its key whose values the request asks for
    /// (`None`: every one the request names, as the data set matched).
    fn dataset_met(&mut self, dataset: &Key, matching: Option<BTreeSet<String>>) {
        self.datasets_met.push((dataset.clone(), matching));
    }

    /// Whether some data set met has the values of `matched` and an asked value of `keyword`.
    fn some_dataset_has(&self, matched: &Key, keyword: &str) -> bool {
        self.datasets_met.iter().any(|(key, matching)| {
            let asked = match matching {
                Some(matching) => matching.contains(keyword),
                None => key.get(keyword).is_some(),
            };
            asked && matched.iter().all(|(k, v)| key.get(k) == Some(v))
        })
    }

    fn explain(mut self) -> String {
        for ((matched, kw), (asked, stored)) in std::mem::take(&mut self.dataset) {
            // Each data set names its first keyword off the request; only where no data set
            // at all holds the asked value (after the same matched values) is that the reason.
            if self.some_dataset_has(&matched, &kw) {
                continue;
            }
            let stored: Vec<&str> = stored.iter().take(12).map(String::as_str).collect();
            let (asked, stored) = (asked.join("/"), stored.join("/"));
            self.add(
                1,
                match matched.is_empty() {
                    true => format!("no data set has {kw}={asked} (stored data sets have {kw}={stored})"),
                    false => format!("no data set of {matched} has {kw}={asked} (they have {kw}={stored})"),
                },
            );
        }
        for ((kw, asked, place), (ty, stored)) in std::mem::take(&mut self.off_axis) {
            self.add(4, describe_off_axis(&kw, &asked, &place, &stored, ty));
        }
        match self.reasons.into_iter().next_back() {
            Some((_, reasons)) => {
                let shown: Vec<String> = reasons.iter().take(SHOWN_REASONS).cloned().collect();
                let more = if reasons.len() > SHOWN_REASONS { " (and more)".to_string() } else { String::new() };
                // One reason a line when there are several.
                match shown.as_slice() {
                    [one] => format!("{one}{more}"),
                    _ => format!("for these reasons:\n  {}{more}", shown.join("\n  ")),
                }
            }
            None => "nothing is stored that matches".into(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A group of no keys, for ordering tests.
    fn group() -> Group {
        let empty = Arc::new(Key::default());
        Group { dataset: empty.clone(), collocation: empty, sort_key: Vec::new(), axes: MetAxes::None, seen: None, fields: Vec::new() }
    }

    /// The order keys of a field of `step` and `param` (as numbers).
    fn step_param(step: &str, param: &str) -> impl Iterator<Item = OrderKey> {
        [OrderKey::new(None, step, KeywordType::Step), OrderKey::new(None, param, KeywordType::Param)].into_iter()
    }

    /// Runs of fields of one group, each field its step and param.
    fn field_order(runs: &[&[(&str, &str)]]) -> FieldOrder {
        let mut order = FieldOrder::default();
        for run in runs {
            order.start_run(run.len(), 2);
            for (step, param) in *run {
                order.push(0, step_param(step, param));
            }
        }
        order
    }

    /// What a stable sort of every field at once gives.
    fn sorted_at_once(order: &FieldOrder) -> Vec<usize> {
        let mut all: Vec<usize> = (0..order.fields.len()).collect();
        all.sort_by(|&a, &b| order.keys(a).cmp(order.keys(b)));
        all
    }

    #[test]
    fn runs_sorted_alone_give_the_order_of_sorting_every_field_at_once() {
        let groups = [group()];
        // Newest index first, an index per step, each in text order: runs apart.
        let apart: &[&[(&str, &str)]] =
            &[&[("12", "1"), ("12", "10"), ("12", "2")], &[("6", "1"), ("6", "10"), ("6", "2")], &[], &[("0", "2")]];
        // Steps shared by indexes: runs interleave.
        let interleaved: &[&[(&str, &str)]] = &[&[("6", "2"), ("0", "10")], &[("6", "1"), ("0", "3")]];
        // A field archived again: equal keys in two runs, the newest (first met) stays first.
        // The older run ends on the newer's first key: joining them would put the older first.
        let superseded: &[&[(&str, &str)]] = &[&[("6", "2")], &[("0", "1"), ("6", "2")]];
        for runs in [apart, interleaved, superseded] {
            let order = field_order(runs);
            assert_eq!(sorted_positions(&groups, &order), sorted_at_once(&order), "{runs:?}");
        }
        assert_eq!(sorted_positions(&groups, &field_order(apart)), [6, 3, 5, 4, 0, 2, 1]);
        assert_eq!(sorted_positions(&groups, &field_order(superseded)), [1, 0, 2]);
        // Fields pushed before any run was started are a run of their own.
        let mut early = field_order(&[]);
        early.push(0, step_param("6", "1"));
        early.start_run(1, 2);
        early.push(0, step_param("0", "1"));
        assert_eq!(sorted_positions(&groups, &early), [1, 0]);
    }

    /// One index of `entries` over keywords step and param, with axes of their values (none
    /// for param when `param_axis` is false); counts point lookups and scans.
    struct OneIndex {
        index: IndexInfo,
        entries: Vec<(Key, FieldLocation)>,
        lookups: usize,
        scans: usize,
    }

    impl OneIndex {
        fn new(entries: &[(&str, &str)], param_axis: bool) -> Self {
            let mut axes = BTreeMap::new();
            axes.insert("step".into(), AxisValues::new(entries.iter().map(|e| e.0)));
            if param_axis {
                axes.insert("param".into(), AxisValues::new(entries.iter().map(|e| e.1)));
            }
            let entries: Vec<(Key, FieldLocation)> = entries
                .iter()
                .enumerate()
                .map(|(i, (step, param))| {
                    let location = FieldLocation { uri: "f".into(), offset: i as u64, length: 1, crc32c: None };
                    (Key::from_pairs([("step", step), ("param", param)]), location)
                })
                .collect();
            let index = IndexInfo {
                id: "i".into(),
                collocation: Arc::new(Key::new()),
                element_keywords: vec!["step".to_string(), "param".to_string()].into(),
                axes,
                fields: entries.len() as u64,
            };
            OneIndex { index, entries, lookups: 0, scans: 0 }
        }
    }

    impl DatasetView for OneIndex {
        fn schema_text(&self) -> &str {
            ""
        }
        fn indexes(&mut self) -> Result<Vec<Arc<IndexInfo>>> {
            unreachable!()
        }
        fn lookup(&mut self, _: &IndexInfo, element: &Key) -> Result<Option<FieldLocation>> {
            self.lookups += 1;
            Ok(self.entries.iter().find(|(k, _)| k == element).map(|(_, l)| l.clone()))
        }
        fn entries(&mut self, _: &IndexInfo) -> Result<Vec<(Key, FieldLocation)>> {
            self.scans += 1;
            Ok(self.entries.clone())
        }
        fn mask(&mut self, _: &[&IndexInfo], _: crate::backend::Unused) -> Result<Vec<String>> {
            unreachable!()
        }
    }

    fn asked(values: impl IntoIterator<Item = impl ToString>) -> Option<Vec<String>> {
        Some(values.into_iter().map(|v| v.to_string()).collect())
    }

    fn found(view: &mut OneIndex, constraints: &[Option<Vec<String>>]) -> Vec<String> {
        let index = view.index.clone();
        let entries = matching_entries(view, &index, constraints).unwrap();
        entries.iter().map(|(k, _)| k.to_string()).collect()
    }

    #[test]
    fn point_lookups_try_only_asked_values_on_the_index_axes() {
        // An index of one flush: one step of ten asked, two params of three asked.
        let mut view = OneIndex::new(&[("3", "1"), ("3", "2"), ("3", "9")], true);
        let got = found(&mut view, &[asked(0..10), asked([1, 2, 5])]);
        assert_eq!(got, ["step=3,param=1", "step=3,param=2"]);
        assert_eq!((view.lookups, view.scans), (2, 0));

        // Without an axis for a keyword, every asked value of it is tried.
        let mut view = OneIndex::new(&[("3", "1"), ("3", "2"), ("3", "7")], false);
        assert_eq!(found(&mut view, &[asked(0..10), asked([1, 2, 5])]), ["step=3,param=1", "step=3,param=2"]);
        assert_eq!((view.lookups, view.scans), (3, 0));

        // Asked combinations beyond the lookup limit, few of them on the axes (and not all the
        // index has): still lookups.
        let mut view = OneIndex::new(&[("3", "1"), ("4", "1"), ("99999", "1")], true);
        let got = found(&mut view, &[asked(0..MAX_POINT_LOOKUPS), asked(0..10)]);
        assert_eq!(got, ["step=3,param=1", "step=4,param=1"]);
        assert_eq!((view.lookups, view.scans), (2, 0));

        // A keyword not asked ranges over the index's values of it (an optional keyword a
        // request leaves out has one, ""): lookups, not a scan of a large compacted index.
        let mut view = OneIndex::new(&[("3", "1"), ("3", "2"), ("4", "1")], true);
        assert_eq!(found(&mut view, &[asked([3]), None]), ["step=3,param=1", "step=3,param=2"]);
        assert_eq!((view.lookups, view.scans), (2, 0));

        // More combinations than the index has entries: one scan.
        let mut view = OneIndex::new(&[("3", "1"), ("4", "2"), ("5", "3")], true);
        assert_eq!(found(&mut view, &[asked([3, 4]), asked([1, 2])]), ["step=3,param=1", "step=4,param=2"]);
        assert_eq!((view.lookups, view.scans), (0, 1));

        // An unconstrained keyword with many values, or too many combinations on the axes: one scan.
        let steps: Vec<String> = (0..MAX_POINT_LOOKUPS + 1).map(|s| s.to_string()).collect();
        let many: Vec<(&str, &str)> = steps.iter().map(|s| (s.as_str(), "1")).collect();
        for constraints in [vec![None, asked([1])], vec![asked(&steps), asked([1])]] {
            let mut view = OneIndex::new(&many, true);
            assert_eq!(found(&mut view, &constraints).len(), MAX_POINT_LOOKUPS + 1);
            assert_eq!((view.lookups, view.scans), (0, 1));
        }
    }

    #[test]
    fn asking_every_value_an_index_has_scans_it_once_and_never_widens() {
        // Every step and param the index has (and more): one scan, no filtering.
        let mut view = OneIndex::new(&[("3", "1"), ("3", "2"), ("6", "1")], true);
        assert_eq!(found(&mut view, &[asked([0, 3, 6]), asked([2, 1])]), ["step=3,param=1", "step=3,param=2", "step=6,param=1"]);
        assert_eq!((view.lookups, view.scans), (0, 1));
        // A value asked twice is one value: param=1/1 does not cover params 1 and 2.
        let mut view = OneIndex::new(&[("3", "1"), ("3", "2")], true);
        let got = found(&mut view, &[asked([3]), asked([1, 1])]);
        assert!(got.iter().all(|k| k == "step=3,param=1") && !got.is_empty(), "{got:?}");
        assert_eq!(view.scans, 0);
    }

    #[test]
    fn permute_moves_every_item_to_its_place() {
        let n = 1000;
        // A scrambled permutation with long cycles and fixed points.
        let order: Vec<usize> = (0..n).map(|i| (i * 7919 + 13) % n).collect();
        let mut items: Vec<usize> = (0..n).map(|i| i * 10).collect();
        permute(&mut items, order.clone());
        assert_eq!(items, order.iter().map(|&o| o * 10).collect::<Vec<_>>());
    }
}
