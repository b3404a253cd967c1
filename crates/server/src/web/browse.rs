//! What is stored, for the page to narrow keyword by keyword: the fields a request names that
//! the caller may read, counted per value of every keyword, each keyword's values sent a page
//! at a time.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use axum::extract::{Query, State};
use axum::response::Response;
use serde::{Deserialize, Serialize};

use fieldstore_core::api::{FieldEntry, FieldStore, ListOptions, Permission, NOTHING_ALLOWED_MATCHED};
use fieldstore_core::{Error, ErrorKind, Key, Request, Result};

use crate::access::Identity;
use crate::routes::{admit, answer, blocking, bytes_answer, hide_beyond_access, Caller, Shared};

/// The values of a keyword sent at once when the page asks for no other number.
const PAGE: usize = 50;
/// The most values of a keyword sent at once.
const LARGEST_PAGE: usize = 1000;
/// Up to this many fields, the answer lists them (the page's table of fields to look at).
const LISTED: u64 = 200;

/// What the page asks of the catalogue (`GET /v1/web/browse`'s query).
#[derive(Debug, Default, Deserialize)]
pub struct BrowseQuery {
    /// What the user has chosen so far (empty: everything).
    #[serde(default)]
    pub request: String,
    /// Only this keyword's values (the next page of one).
    pub keyword: Option<String>,
    /// Where the page of values starts.
    #[serde(default)]
    pub offset: usize,
    /// How many values a page has ([`PAGE`]; at most [`LARGEST_PAGE`]).
    pub limit: Option<usize>,
}

/// The catalogue's answer.
#[derive(Debug, Serialize)]
pub struct Catalogue {
    /// The request, as fieldstore writes it.
    pub request: String,
    /// The fields it names that the caller may read.
    pub fields: u64,
    /// Their bytes.
    pub bytes: u64,
    /// The data sets they are in.
    pub datasets: u64,
    /// Each keyword of those fields: data set keywords first, then the collocation's, then
    /// the field's own, each level's in the order the catalogue first gives them.
    pub keywords: Vec<Choices>,
    /// The fields themselves, when there are at most [`LISTED`]: each one's key and bytes.
    pub listed: Vec<Listed>,
    /// Why nothing matched, when nothing did (to a caller who may read everything).
    pub explanation: Option<String>,
}

/// One keyword's values among the fields, a page of them.
#[derive(Debug, Serialize)]
pub struct Choices {
    /// The keyword.
    pub keyword: String,
    /// 0: a data set's keyword, 1: a collocation's, 2: a field's own (the schema's levels).
    pub level: u8,
    /// Whether the request names values of it.
    pub chosen: bool,
    /// How many values it has among the fields.
    pub total: usize,
    /// The place of the page's first value among them.
    pub offset: usize,
    /// The page: values in the keyword's order, each with its count of fields.
    pub values: Vec<Choice>,
}

/// A field of a short list.
#[derive(Debug, Serialize)]
pub struct Listed {
    /// Its full key, keyword and value pairs in the schema's order.
    pub key: Vec<(String, String)>,
    /// Its length.
    pub bytes: u64,
}

/// A value and how many fields have it.
#[derive(Debug, Serialize)]
pub struct Choice {
    /// The value.
    pub value: String,
    /// The fields that have it.
    pub fields: u64,
    /// What a user knows it by, where that is not the value: a parameter's short name.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
}

pub(crate) async fn browse(State(served): State<Shared>, caller: Caller, Query(query): Query<BrowseQuery>) -> Response {
    let admitted = match admit(&served, &caller).await {
        Ok(admitted) => admitted,
        Err(refused) => return *refused,
    };
    let identity = admitted.identity.and_then(|i| served.access.position(i));
    let explanations = admitted.identity.is_none_or(|i| i.reads_everything());
    let may_read = admitted.identity.is_none_or(|i| i.may(Permission::Read));
    let outcome = if may_read {
        let served = served.clone();
        blocking(move || {
            let identity = identity.and_then(|p| served.access.identity(p));
            let catalogue = catalogue(&served.fs, identity, &query)?;
            serde_json::to_vec(&catalogue).map_err(|e| Error::caused_by(ErrorKind::Io, "cannot encode the catalogue", e))
        })
        .await
        .map_err(|e| hide_beyond_access(explanations, e))
    } else {
        Err(Error::new(ErrorKind::Denied, format!("identity '{}' may read nothing", admitted.identity.map_or("", |i| i.name.as_str()))))
    };
    answer(&served, &admitted, "web-browse", 0, outcome.map(|body| bytes_answer("application/json", body)))
}

/// The catalogue of what `query` names that `identity` (none: anyone) may read.
pub fn catalogue(fs: &FieldStore, identity: Option<&Identity>, query: &BrowseQuery) -> Result<Catalogue> {
    let limit = query.limit.unwrap_or(PAGE);
    if limit == 0 || limit > LARGEST_PAGE {
        return Err(Error::new(ErrorKind::BadRequest, format!("limit={limit}: from 1 to {LARGEST_PAGE} values a page")));
    }
    let request = Request::parse(&query.request)?;
    // In the order the catalogue gives them: no sort of what is only counted.
    let matches = fs.list(&request, ListOptions { storage_order: true, ..ListOptions::default() })?;
    let explanation = matches.explanation.clone();
    let counts = Counts::of(&matches.fields, identity);
    let mut keywords = Vec::new();
    for (level, keyword, values) in &counts.keywords {
        if query.keyword.as_ref().is_some_and(|k| k != keyword) {
            continue;
        }
        let kind = fs.schema().type_of(&[], keyword);
        let mut values: Vec<(&str, u64)> = values.iter().map(|(v, n)| (*v, *n)).collect();
        values.sort_by(|a, b| kind.compare(a.0, b.0));
        let label = |value: &str| (keyword == "param").then(|| fieldstore_grib::param_short_name(value)).flatten();
        let page = values
            .iter()
            .skip(query.offset)
            .take(limit)
            .map(|(v, n)| Choice { value: v.to_string(), fields: *n, label: label(v) })
            .collect();
        let chosen = request.get(keyword).is_some();
        keywords.push(Choices { keyword: keyword.clone(), level: *level, chosen, total: values.len(), offset: query.offset, values: page });
    }
    if let Some(keyword) = &query.keyword {
        if keywords.is_empty() && counts.fields > 0 {
            return Err(Error::new(ErrorKind::NotFound, format!("no field the request names has keyword '{keyword}'")));
        }
    }
    let listed = if counts.fields <= LISTED && query.keyword.is_none() { listed(fs, &matches.fields, identity) } else { Vec::new() };
    // Why nothing matched names what is stored: said only to a caller who may read it all.
    let reads_everything = identity.is_none_or(Identity::reads_everything);
    let explanation = match (counts.fields, reads_everything) {
        (0, true) => explanation.or_else(|| Some("no field matched".into())),
        (0, false) => Some(NOTHING_ALLOWED_MATCHED.into()),
        _ => None,
    };
    Ok(Catalogue {
        request: request.to_string(),
        fields: counts.fields,
        bytes: counts.bytes,
        datasets: counts.datasets,
        keywords,
        listed,
        explanation,
    })
}

/// The fields `identity` may read, in the order of their keywords' values.
fn listed(fs: &FieldStore, fields: &[FieldEntry], identity: Option<&Identity>) -> Vec<Listed> {
    let mut listed: Vec<(Key, u64)> = fields
        .iter()
        .map(|f| (f.identifier(), f.location.length))
        .filter(|(key, _)| identity.is_none_or(|i| i.allows_key(Permission::Read, key)))
        .collect();
    listed.sort_by(|(a, _), (b, _)| {
        a.iter()
            .zip(b.iter())
            .map(|((k, x), (_, y))| fs.schema().type_of(&[], k).compare(x, y))
            .find(|o| o.is_ne())
            .unwrap_or(std::cmp::Ordering::Equal)
    });
    listed
        .into_iter()
        .map(|(key, bytes)| Listed { key: key.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect(), bytes })
        .collect()
}

/// Fields counted per keyword and value.
struct Counts<'f> {
    fields: u64,
    bytes: u64,
    datasets: u64,
    /// (level, keyword, value counts), in the order the keywords were first met per level.
    keywords: Vec<(u8, String, HashMap<&'f str, u64>)>,
}

impl<'f> Counts<'f> {
    /// Counts `fields`, leaving out those `identity` may not read. Fields come collocation
    /// by collocation, sharing their data set's and collocation's keys: those are counted
    /// (and permissions checked) once a run.
    fn of(fields: &'f [FieldEntry], identity: Option<&Identity>) -> Counts<'f> {
        let mut counts = Counts { fields: 0, bytes: 0, datasets: 0, keywords: Vec::new() };
        let mut places: HashMap<(u8, &'f str), usize> = HashMap::new();
        let mut datasets: HashSet<&'f Key> = HashSet::new();
        for run in fields.chunk_by(|a, b| Arc::ptr_eq(&a.dataset, &b.dataset) && Arc::ptr_eq(&a.collocation, &b.collocation)) {
            let first = &run[0];
            if identity.is_some_and(|i| !i.allows_key(Permission::Read, &first.identifier())) {
                continue;
            }
            datasets.insert(&first.dataset);
            counts.fields += run.len() as u64;
            counts.bytes += run.iter().map(|f| f.location.length).sum::<u64>();
            for (level, key) in [(0, &*first.dataset), (1, &*first.collocation)] {
                for (keyword, value) in key.iter().filter(|(_, v)| !v.is_empty()) {
                    *counts.values(&mut places, level, keyword).entry(value).or_default() += run.len() as u64;
                }
            }
            for field in run {
                // An optional keyword a field has not is an empty value: not a choice.
                for (keyword, value) in field.element.iter().filter(|(_, v)| !v.is_empty()) {
                    *counts.values(&mut places, 2, keyword).entry(value).or_default() += 1;
                }
            }
        }
        counts.datasets = datasets.len() as u64;
        counts.keywords.sort_by_key(|(level, _, _)| *level);
        counts
    }

    /// The value counts of `keyword` at `level`, made when first met.
    fn values(&mut self, places: &mut HashMap<(u8, &'f str), usize>, level: u8, keyword: &'f str) -> &mut HashMap<&'f str, u64> {
        let place = *places.entry((level, keyword)).or_insert_with(|| {
            self.keywords.push((level, keyword.to_string(), HashMap::new()));
            self.keywords.len() - 1
        });
        &mut self.keywords[place].2
    }
}
