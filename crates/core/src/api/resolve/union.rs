//! Many one-field requests resolved as their union. gribjump's callers name one field per
//! request: the same keywords, one value each, most of them shared (a thousand steps of one
//! parameter). Resolving each alone reads the request's values, plans every collocation and
//! explains nothing found, a thousand times over; their union, one request of the distinct
//! values, is resolved once and each of its fields is given to the requests whose values it
//! carries (1,000 one-field requests: 15-18 ms alone, 2-3 ms as their union;
//! `examples/extract_each.rs` of the `fieldstore` crate, without ranges).
//!
//! Each answer is the one resolving the request alone gives, as the conformance property
//! `many_requests_resolved_at_once_answer_as_each_alone` checks. The union asks for every
//! value a request asks, so it chooses every index the request would (and more): a request's
//! fields are the union's fields that carry its values, in the union's order (the same
//! order: the request's own keywords have one value each, so only the others order its
//! fields, as they do alone), and its data sets are those where it would have chosen an
//! index. What the union cannot vouch for is left to resolving alone: requests that match no
//! field (their explanation is their own), and every request when the union met a value it
//! could not read, a keyword no schema names, a keyword read with two types (each type may
//! spell a value otherwise, which a request's values not found would show), or an index or
//! data set it could not read.

use std::collections::HashMap;

use super::{sorted_positions, Resolution, Unreadable};
use crate::api::{ControlAction, FieldEntry, FieldStore, ListOptions, Matches};
use crate::backend::IndexInfo;
use crate::error::Result;
use crate::key::Key;
use crate::request::{Request, ValueItem, Values};
use crate::types::KeywordType;

/// The union may name at most this many times more combinations of values than there are
/// requests: steps crossed with parameters that were never asked together cost lookups of
/// fields no request wants (a lookup costs a fraction of resolving a request alone).
const MAX_WIDENING: usize = 8;

/// The answers of the requests that the union of all of them answers as each alone would
/// (`None`: resolve that one alone). All `None` when the requests are not one-field requests
/// of the same keywords, or when the union cannot vouch for any answer.
pub(super) fn answers(
    fs: &FieldStore,
    requests: &[&Request],
    options: ListOptions,
    action: Option<ControlAction>,
) -> Result<Vec<Option<Matches>>> {
    let mut answers: Vec<Option<Matches>> = requests.iter().map(|_| None).collect();
    // Only fields are given out: data sets and collocations alone (depth 1 and 2) are cheap,
    // and in the catalogue's order a union's scan of an index and a request's lookups in it
    // give fields otherwise.
    if options.depth < 3 || options.storage_order {
        return Ok(answers);
    }
    let Some(named) = OneValueEach::of(requests) else { return Ok(answers) };
    let union_request = named.union();
    let mut resolutions = [Resolution::new(fs, &union_request, options, action)];
    // The union reads indexes no request alone would (values never asked together): one that
    // cannot be read fails the union, even where the handle skips such, and is left to the
    // requests alone, which may not meet it at all.
    if fs.resolve_all(&mut resolutions, Unreadable::Fails).is_err() {
        return Ok(answers);
    }
    let [mut union] = resolutions;
    if !union.unknown_keywords.is_empty() || !union.asked.reads_every_value_one_way() {
        return Ok(answers);
    }
    let fields = std::mem::take(&mut union.matches.fields);
    let sorted = sorted_positions(&union.groups, &union.field_order);
    let Some(chosen) = Chosen::of(&union, &named.keywords) else { return Ok(answers) };
    let canonical = chosen.canonical_values(&named);
    let per_request = chosen.give_out(fields, sorted, &named, &canonical);
    for (q, (answer, fields)) in answers.iter_mut().zip(per_request).enumerate() {
        if fields.is_empty() {
            continue;
        }
        let datasets = union
            .matches
            .datasets
            .iter()
            .filter(|d| fields.iter().any(|f| *f.dataset == **d) || chosen.would_choose_in(q, d, &named, &canonical));
        *answer = Some(Matches { datasets: datasets.cloned().collect(), fields, ..Matches::default() });
    }
    Ok(answers)
}

/// The keywords every request names, in order, and each request's value of each, as written.
struct OneValueEach<'q> {
    keywords: Vec<&'q str>,
    /// Per keyword, its distinct values in the order first written.
    distinct: Vec<Vec<&'q str>>,
    /// Per request, per keyword, its value's place in `distinct`.
    values: Vec<Vec<usize>>,
}

impl<'q> OneValueEach<'q> {
    /// `None` unless there are several requests, each names the keywords of the first in the
    /// same order with one single value each (no range, no `all`, no empty value), and the
    /// union's combinations stay within [`MAX_WIDENING`] times the requests.
    fn of(requests: &[&'q Request]) -> Option<Self> {
        let (first, rest) = requests.split_first()?;
        if rest.is_empty() {
            return None;
        }
        let keywords: Vec<&str> = first.keywords().collect();
        let mut places: Vec<HashMap<&str, usize>> = vec![HashMap::new(); keywords.len()];
        let mut named = OneValueEach { distinct: vec![Vec::new(); keywords.len()], values: Vec::with_capacity(requests.len()), keywords };
        for request in requests {
            if request.keywords().count() != named.keywords.len() {
                return None;
            }
            let mut own = Vec::with_capacity(named.keywords.len());
            for (k, (keyword, expected)) in request.keywords().zip(&named.keywords).enumerate() {
                let value = match request.get(keyword) {
                    Some(Values::List(items)) if keyword == *expected => match items.as_slice() {
                        [ValueItem::Single(value)] if !value.trim().is_empty() => value.as_str(),
                        _ => return None,
                    },
                    _ => return None,
                };
                // Most keywords name the previous request's value again: no hashing then.
                let previous = named.values.last().map(|values: &Vec<usize>| values[k]);
                let place = match previous.filter(|&p| named.distinct[k][p] == value) {
                    Some(place) => place,
                    None => *places[k].entry(value).or_insert_with(|| {
                        named.distinct[k].push(value);
                        named.distinct[k].len() - 1
                    }),
                };
                own.push(place);
            }
            named.values.push(own);
        }
        let combinations = named.distinct.iter().try_fold(1usize, |n, values| n.checked_mul(values.len()))?;
        (combinations <= requests.len().saturating_mul(MAX_WIDENING)).then_some(named)
    }

    /// One request of every value of every keyword.
    fn union(&self) -> Request {
        let mut union = Request::default();
        for (keyword, values) in self.keywords.iter().zip(&self.distinct) {
            union.set(keyword, values.iter().map(|v| v.to_string()).collect());
        }
        union
    }
}

/// Where a key holds a named keyword's value.
#[derive(Clone, Copy)]
enum Part {
    Dataset,
    Collocation,
    Element,
}

/// The requests' values as one list of the named keywords' types reads them.
struct Read {
    /// Per keyword, per distinct value written, its canonical spelling (`None`: the type
    /// cannot read it).
    values: Vec<Vec<Option<String>>>,
    /// The keywords with more than one value read: the others have the same in every field
    /// the union found (the only value it asked).
    varying: Vec<usize>,
}

impl Read {
    /// Request `q`'s value of keyword `k`.
    fn value(&self, named: &OneValueEach<'_>, q: usize, k: usize) -> Option<&str> {
        self.values[k][named.values[q][k]].as_deref()
    }

    /// Whether each of request `q`'s values could be read.
    fn reads_all(&self, named: &OneValueEach<'_>, q: usize) -> bool {
        (0..self.values.len()).all(|k| self.value(named, q, k).is_some())
    }
}

/// Per list of the named keywords' types (as [`Chosen::types`]), the requests' values read.
type Canonical = Vec<Read>;

/// The indexes the union chose (depth 3), in order: each one's data set, the part holding
/// each named keyword and its type there, and which of the union's fields it gave.
struct Chosen<'u> {
    /// The named keywords.
    keywords: &'u [&'u str],
    indexes: Vec<(&'u Key, &'u IndexInfo)>,
    /// Per index, per named keyword.
    parts: Vec<Vec<Part>>,
    /// Per index, its types of the named keywords, as a position in `types`.
    types_of: Vec<usize>,
    /// The distinct lists of the named keywords' types.
    types: Vec<Vec<KeywordType>>,
    /// Per field of the union (in the order found), its index.
    index_of_field: Vec<usize>,
}

impl<'u> Chosen<'u> {
    /// `None` when a chosen index's keys lack a named keyword (the union cannot say what
    /// such a request matches there).
    fn of(union: &'u Resolution<'_>, keywords: &'u [&'u str]) -> Option<Self> {
        let mut chosen = Chosen {
            keywords,
            indexes: Vec::new(),
            parts: Vec::new(),
            types_of: Vec::new(),
            types: Vec::new(),
            index_of_field: Vec::new(),
        };
        for ((dataset, index, _), plan) in union.matches.indexes.iter().zip(&union.chosen) {
            let (dataset_len, collocation_len) = (dataset.len(), index.collocation.len());
            let mut parts = Vec::with_capacity(keywords.len());
            let mut types = Vec::with_capacity(keywords.len());
            for keyword in keywords {
                let (part, at) = if let Some(at) = dataset.keywords().position(|k| k == *keyword) {
                    (Part::Dataset, at)
                } else if let Some(at) = index.collocation.keywords().position(|k| k == *keyword) {
                    (Part::Collocation, dataset_len + at)
                } else {
                    let at = index.element_keywords.iter().position(|k| k == keyword)?;
                    (Part::Element, dataset_len + collocation_len + at)
                };
                parts.push(part);
                types.push(*plan.types.get(at)?);
            }
            let at = match chosen.types.iter().position(|t| *t == types) {
                Some(at) => at,
                None => {
                    chosen.types.push(types);
                    chosen.types.len() - 1
                }
            };
            let c = chosen.indexes.len();
            chosen.index_of_field.resize(plan.fields_end, c);
            chosen.indexes.push((dataset, index));
            chosen.parts.push(parts);
            chosen.types_of.push(at);
        }
        Some(chosen)
    }

    /// The requests' values as each list of types reads them, each distinct value once.
    fn canonical_values(&self, named: &OneValueEach<'_>) -> Canonical {
        self.types
            .iter()
            .map(|types| {
                let values: Vec<Vec<Option<String>>> = named
                    .distinct
                    .iter()
                    .zip(types.iter().zip(&named.keywords))
                    .map(|(distinct, (ty, keyword))| distinct.iter().map(|v| ty.canonical_asked(keyword, v).ok()).collect())
                    .collect();
                let varying = (0..values.len())
                    .filter(|&k| {
                        let mut read = values[k].iter().flatten();
                        read.next().is_some_and(|first| read.any(|v| v != first))
                    })
                    .collect();
                Read { values, varying }
            })
            .collect()
    }

    /// Gives each request the union's fields (at their `sorted` positions) that carry its
    /// values, in that order.
    fn give_out(
        &self,
        fields: Vec<FieldEntry>,
        sorted: Vec<usize>,
        named: &OneValueEach<'_>,
        canonical: &Canonical,
    ) -> Vec<Vec<FieldEntry>> {
        let requests = named.values.len();
        // Per list of types: the requests by their values of the varying keywords.
        let by_values: Vec<HashMap<Vec<&str>, Vec<usize>>> = canonical
            .iter()
            .map(|read| {
                let mut by_values: HashMap<Vec<&str>, Vec<usize>> = HashMap::with_capacity(requests);
                for q in (0..requests).filter(|&q| read.reads_all(named, q)) {
                    let values = read.varying.iter().map(|&k| read.value(named, q, k).unwrap_or_default());
                    by_values.entry(values.collect()).or_default().push(q);
                }
                by_values
            })
            .collect();
        let mut per_request: Vec<Vec<FieldEntry>> = (0..requests).map(|_| Vec::new()).collect();
        let mut fields: Vec<Option<FieldEntry>> = fields.into_iter().map(Some).collect();
        for p in sorted {
            let c = self.index_of_field[p];
            let Some(field) = fields[p].take() else { continue };
            let read = &canonical[self.types_of[c]];
            let values = read.varying.iter().map(|&k| self.parts[c][k].value_in(&field, self.keywords[k]));
            let Some(values) = values.collect::<Option<Vec<&str>>>() else { continue };
            let Some(asking) = by_values[self.types_of[c]].get(&values) else { continue };
            if let Some((last, others)) = asking.split_last() {
                for q in others {
                    per_request[*q].push(field.clone());
                }
                per_request[*last].push(field);
            }
        }
        per_request
    }

    /// Whether request `q`, alone, would have chosen an index of `dataset`: its values are
    /// the keys' and on the axes (it would then name the data set, though none of its fields
    /// is there).
    fn would_choose_in(&self, q: usize, dataset: &Key, named: &OneValueEach<'_>, canonical: &Canonical) -> bool {
        (0..self.indexes.len()).filter(|&c| self.indexes[c].0 == dataset).any(|c| {
            let (read, index) = (&canonical[self.types_of[c]], self.indexes[c].1);
            self.parts[c].iter().zip(self.keywords).enumerate().all(|(k, (part, keyword))| {
                let Some(value) = read.value(named, q, k) else { return false };
                match part {
                    Part::Dataset => dataset.get(keyword) == Some(value),
                    Part::Collocation => index.collocation.get(keyword) == Some(value),
                    Part::Element => index.axes.get(*keyword).is_none_or(|axis| axis.contains(value)),
                }
            })
        })
    }
}

impl Part {
    /// A field's value of `keyword`, held in this part of its identifier.
    fn value_in<'f>(self, field: &'f FieldEntry, keyword: &str) -> Option<&'f str> {
        match self {
            Part::Dataset => field.dataset.get(keyword),
            Part::Collocation => field.collocation.get(keyword),
            Part::Element => field.element.get(keyword),
        }
    }
}

#[cfg(test)]
mod tests {
    use std::collections::{BTreeMap, BTreeSet};
    use std::sync::Arc;

    use super::*;
    use crate::axis::AxisValues;
    use crate::backend::{Catalogue, CatalogueWriter, DatasetView, FieldLocation, Store, StoreWriter, Unused};
    use crate::error::Error;
    use crate::schema::Schema;

    /// Data sets of one index each (collocation `type=fc,levtype=sfc`, elements step and
    /// param, the default schema's optional keywords empty), held in memory: what a
    /// resolution reads, nothing else.
    #[derive(Clone, Default)]
    struct Memory {
        datasets: BTreeMap<Key, (Arc<IndexInfo>, Entries)>,
        /// Data sets whose index cannot be read.
        broken: BTreeSet<Key>,
    }

    type Entries = Vec<(Key, FieldLocation)>;

    impl Memory {
        fn with(mut self, date: &str, fields: &[(&str, &str)]) -> Self {
            let dataset = dataset_of(date);
            let element_keywords = ["step", "levelist", "param", "frequency", "direction"];
            let entries: Entries = fields
                .iter()
                .enumerate()
                .map(|(i, (step, param))| {
                    let location = FieldLocation { uri: format!("{date}.data").into(), offset: i as u64, length: 1, crc32c: None };
                    (Key::from_pairs(element_keywords.iter().zip([*step, "", *param, "", ""])), location)
                })
                .collect();
            let mut axes = BTreeMap::new();
            for (i, keyword) in element_keywords.iter().enumerate() {
                axes.insert(
                    (*keyword).into(),
                    AxisValues::new(entries.iter().map(|(element, _)| element.values().nth(i).unwrap_or_default())),
                );
            }
            let index = IndexInfo {
                id: date.into(),
                collocation: Arc::new(Key::from_pairs([("type", "fc"), ("levtype", "sfc"), ("anoffset", "")])),
                element_keywords: element_keywords.iter().map(|k| k.to_string()).collect::<Vec<_>>().into(),
                axes,
                fields: entries.len() as u64,
            };
            self.datasets.insert(dataset, (Arc::new(index), entries));
            self
        }

        /// As `with`, the index unreadable.
        fn with_broken(mut self, date: &str, fields: &[(&str, &str)]) -> Self {
            self = self.with(date, fields);
            self.broken.insert(dataset_of(date));
            self
        }

        fn open(self) -> FieldStore {
            FieldStore::new(Schema::default_schema(), Box::new(self), Box::new(NoStore))
        }
    }

    /// The key of the test's data set of `date`.
    fn dataset_of(date: &str) -> Key {
        Key::parse(&format!("class=od,expver=0001,stream=oper,date={date},time=1200,domain=g")).unwrap()
    }

    struct MemoryView {
        broken: bool,
        schema: String,
        index: Arc<IndexInfo>,
        entries: Entries,
    }

    impl Catalogue for Memory {
        fn writer(&self) -> Result<Box<dyn CatalogueWriter>> {
            Err(unsupported("writing to the test's memory"))
        }
        fn datasets(&self) -> Result<Vec<Key>> {
            Ok(self.datasets.keys().cloned().collect())
        }
        fn open(&self, dataset: &Key) -> Result<Option<Box<dyn DatasetView>>> {
            let schema = Schema::default_schema().text().to_string();
            Ok(self.datasets.get(dataset).map(|(index, entries)| {
                let broken = self.broken.contains(dataset);
                Box::new(MemoryView { broken, schema, index: index.clone(), entries: entries.clone() }) as Box<dyn DatasetView>
            }))
        }
        fn wipe_dataset(&self, _: &Key) -> Result<()> {
            Err(unsupported("wiping the test's memory"))
        }
        fn locks(&self, _: &Key) -> Result<BTreeSet<ControlAction>> {
            Ok(BTreeSet::new())
        }
        fn set_lock(&self, _: &Key, _: ControlAction, _: bool) -> Result<()> {
            Err(unsupported("locking the test's memory"))
        }
        fn describe(&self, dataset: &Key) -> String {
            format!("memory {dataset}")
        }
    }

    impl DatasetView for MemoryView {
        fn schema_text(&self) -> &str {
            &self.schema
        }
        fn indexes(&mut self) -> Result<Vec<Arc<IndexInfo>>> {
            Ok(vec![self.index.clone()])
        }
        fn lookup(&mut self, _: &IndexInfo, element: &Key) -> Result<Option<FieldLocation>> {
            self.readable()?;
            Ok(self.entries.iter().find(|(k, _)| k == element).map(|(_, l)| l.clone()))
        }
        fn entries(&mut self, _: &IndexInfo) -> Result<Vec<(Key, FieldLocation)>> {
            self.readable()?;
            Ok(self.entries.clone())
        }
        fn mask(&mut self, _: &[&IndexInfo], _: Unused) -> Result<Vec<String>> {
            Err(unsupported("masking in the test's memory"))
        }
    }

    impl MemoryView {
        fn readable(&self) -> Result<()> {
            match self.broken {
                true => Err(Error::new(crate::error::ErrorKind::Corrupt, "a damaged index")),
                false => Ok(()),
            }
        }
    }

    fn unsupported(what: &str) -> Error {
        Error::new(crate::error::ErrorKind::Unsupported, what)
    }

    struct NoStore;

    impl Store for NoStore {
        fn writer(&self) -> Result<Box<dyn StoreWriter>> {
            Err(unsupported("the test stores no bytes"))
        }
        fn read(&self, uri: &str, _: u64, _: &mut [u8]) -> Result<()> {
            Err(unsupported(&format!("the test stores no bytes ({uri})")))
        }
        fn remove(&self, uri: &str) -> Result<bool> {
            Err(unsupported(&format!("the test stores no bytes ({uri})")))
        }
        fn wipe_dataset(&self, _: &Key) -> Result<()> {
            Err(unsupported("the test stores no bytes"))
        }
        fn describe(&self, dataset: &Key) -> String {
            format!("no store for {dataset}")
        }
    }

    const IN_REQUEST_ORDER: ListOptions = ListOptions { depth: 3, include_superseded: false, in_request_order: true, storage_order: false };

    fn parsed(texts: &[String]) -> Vec<Request> {
        texts.iter().map(|t| Request::parse(t).unwrap()).collect()
    }

    /// What an answer says: its fields (identifier and location), data sets, reason and
    /// values not found.
    fn said(m: &Matches) -> (Vec<String>, Vec<Key>, Option<String>, Vec<String>) {
        let fields = m.fields.iter().map(|f| format!("{} at {}:{}", f.identifier(), f.location.uri, f.location.offset)).collect();
        (fields, m.datasets.clone(), m.explanation.clone(), m.not_found.clone())
    }

    /// The union's answers, checked equal to resolving each alone; which requests it answered.
    fn answered_as_alone(fs: &FieldStore, texts: &[String]) -> Vec<bool> {
        let requests = parsed(texts);
        let refs: Vec<&Request> = requests.iter().collect();
        let together = answers(fs, &refs, IN_REQUEST_ORDER, Some(ControlAction::Retrieve)).unwrap();
        for ((text, request), answer) in texts.iter().zip(&requests).zip(&together) {
            let alone = fs.resolve(request, IN_REQUEST_ORDER, Some(ControlAction::Retrieve)).unwrap();
            if let Some(answer) = answer {
                assert_eq!(said(answer), said(&alone), "{text}");
            }
        }
        // And through resolve_each, the union's answers and the others' together.
        for (text, (each, request)) in
            texts.iter().zip(fs.resolve_each(&requests, IN_REQUEST_ORDER, Some(ControlAction::Retrieve)).unwrap().iter().zip(&requests))
        {
            let alone = fs.resolve(request, IN_REQUEST_ORDER, Some(ControlAction::Retrieve)).unwrap();
            assert_eq!(said(each.as_ref().unwrap()), said(&alone), "{text} (resolve_each)");
        }
        together.iter().map(Option::is_some).collect()
    }

    fn stored() -> Memory {
        Memory::default()
            .with("20231201", &[("0", "167"), ("6", "167"), ("12", "167"), ("0", "130"), ("6", "130")])
            .with("20231202", &[("0", "167"), ("6", "167"), ("6", "130")])
            // Step 0 and parameter 130 on its axes, never together.
            .with("20231203", &[("0", "167"), ("6", "130")])
    }

    #[test]
    fn one_field_requests_are_answered_by_their_union_as_alone() {
        let fs = stored().open();
        let full = |date: &str, step: &str, param: &str| {
            format!("class=od,expver=0001,stream=oper,date={date},time=1200,type=fc,levtype=sfc,step={step},param={param}")
        };
        // Every field, one spelled otherwise (step 06), one asked twice, and
        // one never stored (left to resolving alone, which explains it).
        let mut texts = vec![full("20231201", "06", "167"), full("20231201", "0", "130"), full("20231201", "0", "130")];
        for (date, step, param) in
            [("20231201", "12", "167"), ("20231202", "6", "130"), ("20231203", "0", "167"), ("20231202", "12", "130")]
        {
            texts.push(full(date, step, param));
        }
        assert_eq!(answered_as_alone(&fs, &texts), [true, true, true, true, true, true, false]);

        // Without a date: a request's fields in several data sets, and data sets named for an
        // index that holds its values on the axes but no field of them (20231202 and 20231203
        // for step 0, parameter 130).
        let texts: Vec<String> = ["0/130", "6/167", "0/167", "12/167", "12/130"]
            .iter()
            .map(|sp| {
                let (step, param) = sp.split_once('/').unwrap();
                format!("class=od,expver=0001,stream=oper,time=1200,type=fc,levtype=sfc,step={step},param={param}")
            })
            .collect();
        assert_eq!(answered_as_alone(&fs, &texts), [true, true, true, true, false]);
        let requests = parsed(&texts);
        let alone = fs.resolve(&requests[0], IN_REQUEST_ORDER, None).unwrap();
        assert_eq!((alone.fields.len(), alone.datasets.len()), (1, 3), "the case checked: a data set without the request's fields");
    }

    /// The union reads indexes no request alone reads (of values never asked together): one
    /// that cannot be read fails no request, and leaves no note of a data set left out.
    #[test]
    fn an_index_only_the_union_would_read_fails_no_request() {
        // Step 6 with parameter 130 only: on neither request's axes, on the union's.
        let memory = stored().with_broken("20231209", &[("6", "130")]);
        let texts: Vec<String> = ["6/167", "0/130"]
            .iter()
            .map(|sp| {
                let (step, param) = sp.split_once('/').unwrap();
                format!("class=od,expver=0001,stream=oper,time=1200,type=fc,levtype=sfc,step={step},param={param}")
            })
            .collect();
        assert_eq!(answered_as_alone(&memory.clone().open(), &texts), [false, false]);
        let skipping = memory.open().skipping_unreadable();
        let requests = parsed(&texts);
        for (each, request) in skipping.resolve_each(&requests, IN_REQUEST_ORDER, None).unwrap().iter().zip(&requests) {
            let alone = skipping.resolve(request, IN_REQUEST_ORDER, None).unwrap();
            assert_eq!(said(each.as_ref().unwrap()), said(&alone));
        }
        assert_eq!(skipping.take_skipped(), Vec::<String>::new(), "no data set left out: no request alone reads it");
    }

    #[test]
    fn requests_unlike_each_other_or_crossing_into_many_combinations_are_resolved_alone() {
        let fs = stored().open();
        let base = "class=od,expver=0001,stream=oper,date=20231201,time=1200,type=fc,levtype=sfc";
        let unlike = [
            // Keywords in another order, one more or one fewer, a range, a list, `all`, an empty
            // value, one request.
            vec![format!("{base},step=0,param=167"), format!("{base},param=167,step=6")],
            vec![format!("{base},step=0,param=167"), format!("{base},step=6,param=167,levelist=500")],
            vec![format!("{base},step=0,param=167"), format!("{base},step=6")],
            vec![format!("{base},step=0,param=167"), format!("{base},step=0/to/6/by/6,param=167")],
            vec![format!("{base},step=0,param=167"), format!("{base},step=0/6,param=167")],
            vec![format!("{base},step=0,param=167"), format!("{base},step=all,param=167")],
            vec![format!("{base},step=0,param=167"), format!("{base},step=,param=167")],
            vec![format!("{base},step=0,param=167")],
            // A keyword no schema names: an error of each, alone.
            vec![format!("{base},step=0,param=167,stpe=1"), format!("{base},step=6,param=167,stpe=1")],
        ];
        for texts in unlike {
            let requests = parsed(&texts);
            let refs: Vec<&Request> = requests.iter().collect();
            let together = answers(&fs, &refs, IN_REQUEST_ORDER, None).unwrap();
            assert!(together.iter().all(Option::is_none), "{texts:?}");
        }
        // Ten steps, each with its own parameter: a union of 100 combinations for 10 requests.
        let crossing: Vec<String> = (0..10).map(|i| format!("{base},step={i},param={}", 100 + i)).collect();
        assert!(OneValueEach::of(&parsed(&crossing).iter().collect::<Vec<_>>()).is_none());
        let within: Vec<String> = (0..10).map(|i| format!("{base},step={i},param={}", 100 + i % 8)).collect();
        assert!(OneValueEach::of(&parsed(&within).iter().collect::<Vec<_>>()).is_some());
    }
}
