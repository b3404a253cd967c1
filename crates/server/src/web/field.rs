//! One field for the page: its GRIB keys (through ecCodes), its values' statistics, where it
//! is stored; and its map ([`fieldstore_figures::map`]). The request must name exactly one
//! field the caller may read.

use axum::extract::{Query, State};
use axum::response::Response;
use serde::{Deserialize, Serialize};

use fieldstore_core::api::{FieldEntry, FieldStore, ListOptions, Permission};
use fieldstore_core::{Error, ErrorKind, Request, Result};
use fieldstore_figures::map::{map_png, MapField};
use fieldstore_grib::decode::{coordinates, decode_values, text_keys};

use crate::access::Identity;
use crate::memory::Held;
use crate::routes::{admit, answer, blocking, bytes_answer, hide_beyond_access, Caller, Shared};

/// The ecCodes keys the page shows, those a user checks first; a key a message has not is
/// left out.
const GRIB_KEYS: &[&str] = &[
    "edition",
    "centre",
    "shortName",
    "name",
    "paramId",
    "units",
    "dataDate",
    "dataTime",
    "stepRange",
    "typeOfLevel",
    "level",
    "gridType",
    "Ni",
    "Nj",
    "N",
    "numberOfValues",
    "numberOfMissing",
    "packingType",
    "bitsPerValue",
    "latitudeOfFirstGridPointInDegrees",
    "longitudeOfFirstGridPointInDegrees",
    "latitudeOfLastGridPointInDegrees",
    "longitudeOfLastGridPointInDegrees",
    "md5GridSection",
];

/// A map's size when the page asks for none.
const MAP_SIZE: (u32, u32) = (1000, 560);

/// Bytes a decoded point takes while a field is looked at: its value, latitude and longitude,
/// its copy among the values present, and its place in a map's rows.
const POINT_BYTES: u64 = 56;

#[derive(Deserialize)]
pub(crate) struct FieldQuery {
    request: String,
    width: Option<u32>,
    height: Option<u32>,
}

/// What the page shows of a field.
#[derive(Debug, Serialize)]
struct FieldFacts {
    /// The field's full key.
    identifier: String,
    /// Where it is stored: its store's URI, offset and length.
    location: Location,
    /// ecCodes' keys ([`GRIB_KEYS`]), as text.
    grib: Vec<(String, String)>,
    /// Its values', missing ones left out.
    statistics: Statistics,
}

#[derive(Debug, Serialize)]
struct Location {
    uri: String,
    offset: u64,
    length: u64,
}

#[derive(Debug, Serialize)]
struct Statistics {
    points: usize,
    missing: usize,
    min: Option<f64>,
    max: Option<f64>,
    mean: Option<f64>,
}

impl Statistics {
    fn of(values: &[f64]) -> Statistics {
        let present: Vec<f64> = values.iter().copied().filter(|v| v.is_finite()).collect();
        let n = present.len();
        let (min, max) = present.iter().fold((f64::INFINITY, f64::NEG_INFINITY), |(l, h), v| (l.min(*v), h.max(*v)));
        let some = |v: f64| (n > 0).then_some(v);
        Statistics {
            points: values.len(),
            missing: values.len() - n,
            min: some(min),
            max: some(max),
            mean: some(present.iter().sum::<f64>() / n.max(1) as f64),
        }
    }
}

pub(crate) async fn field(State(served): State<Shared>, caller: Caller, Query(query): Query<FieldQuery>) -> Response {
    look(served, caller, query, "web-field", 0, |fs, entry, message, points| {
        let values = decoded(message, points)?;
        let keys: Vec<String> = GRIB_KEYS.iter().map(|k| k.to_string()).collect();
        let grib = keys.iter().zip(text_keys(message, &keys)?).filter_map(|(k, v)| v.map(|v| (k.clone(), v))).collect();
        let location =
            Location { uri: fs.absolute_uri(&entry.location.uri)?, offset: entry.location.offset, length: entry.location.length };
        let facts = FieldFacts { identifier: entry.identifier().to_string(), location, grib, statistics: Statistics::of(&values) };
        let body = serde_json::to_vec(&facts).map_err(|e| Error::caused_by(ErrorKind::Io, "cannot encode a field's facts", e))?;
        Ok(("application/json", body))
    })
    .await
}

pub(crate) async fn map(State(served): State<Shared>, caller: Caller, Query(query): Query<FieldQuery>) -> Response {
    let size = (query.width.unwrap_or(MAP_SIZE.0), query.height.unwrap_or(MAP_SIZE.1));
    if let Err(message) = fieldstore_figures::map::check_size(size) {
        return crate::routes::failure(&Error::new(ErrorKind::BadRequest, message));
    }
    // The image's pixels, and its PNG at most as large.
    let image_bytes = u64::from(size.0) * u64::from(size.1) * 3 * 2;
    look(served, caller, query, "web-map", image_bytes, move |_, entry, message, points| {
        let values = decoded(message, points)?;
        let (latitudes, longitudes) = coordinates(message).map_err(|e| {
            Error::caused_by(
                ErrorKind::Unsupported,
                format!("field {} has no points to draw (a spectral field has none)", entry.identifier()),
                e,
            )
        })?;
        let names = text_keys(message, &["name", "units", "typeOfLevel", "level", "dataDate", "dataTime", "stepRange"].map(String::from))?;
        let text = |i: usize| names[i].clone().unwrap_or_default();
        let statistics = Statistics::of(&values);
        let title = format!("{} · {} {} · {} {:0>4} step {}", text(0), text(2), text(3), text(4), text(5), text(6));
        let number =
            |v: Option<f64>| v.map_or("-".to_string(), |v| format!("{v:.6}").trim_end_matches('0').trim_end_matches('.').to_string());
        let subtitle =
            format!("{} · min {} · max {} · mean {}", text(1), number(statistics.min), number(statistics.max), number(statistics.mean));
        let field = MapField { latitudes: &latitudes, longitudes: &longitudes, values: &values, title, subtitle };
        // The size was checked before: what is left is the field's (its grid), not the caller's.
        let png = map_png(&field, size)
            .map_err(|e| Error::caused_by(ErrorKind::Unsupported, format!("cannot draw field {}", entry.identifier()), e))?;
        Ok(("image/png", png))
    })
    .await
}

/// The field's `points` values, missing ones NaN.
fn decoded(message: &[u8], points: usize) -> Result<Vec<f64>> {
    let mut values = vec![0.0; points];
    decode_values(message, &mut values)?;
    Ok(values)
}

/// Admits the caller, finds the one field its request names, reads it within the memory
/// budget (with `more_bytes` for what `show` makes) and answers what `show` makes of it and
/// of its number of points.
async fn look(
    served: Shared,
    caller: Caller,
    query: FieldQuery,
    operation: &'static str,
    more_bytes: u64,
    show: impl FnOnce(&FieldStore, &FieldEntry, &[u8], usize) -> Result<(&'static str, Vec<u8>)> + Send + 'static,
) -> Response {
    let admitted = match admit(&served, &caller).await {
        Ok(admitted) => admitted,
        Err(refused) => return *refused,
    };
    let identity = admitted.identity.and_then(|i| served.access.position(i));
    let explanations = admitted.identity.is_none_or(|i| i.reads_everything());
    let outcome = blocking({
        let served = served.clone();
        move || {
            let identity = identity.and_then(|p| served.access.identity(p));
            let entry = one_field(&served.fs, identity, &query.request)?;
            let mut held = Held::none(&served.memory);
            held.set(entry.location.length)?;
            let mut reader = served.fs.read_fields(vec![entry.clone()])?;
            let Some((_, message)) = reader.next_field()? else {
                return Err(Error::new(ErrorKind::NotFound, format!("field {} is no longer stored", entry.identifier())));
            };
            // Its decoded points too, while they are drawn or counted.
            let points = fieldstore_grib::decode::value_count(message)?;
            held.set(entry.location.length.saturating_add((points as u64).saturating_mul(POINT_BYTES)).saturating_add(more_bytes))?;
            show(&served.fs, &entry, message, points)
        }
    })
    .await
    .map_err(|e| hide_beyond_access(explanations, e));
    answer(&served, &admitted, operation, 0, outcome.map(|(content_type, body)| bytes_answer(content_type, body)))
}

/// The one field `request` names that `identity` may read.
fn one_field(fs: &FieldStore, identity: Option<&Identity>, request: &str) -> Result<FieldEntry> {
    let parsed = Request::parse(request)?;
    let matches = fs.list(&parsed, ListOptions::default())?;
    let explanation = matches.explanation.clone();
    let mut fields: Vec<FieldEntry> = matches.fields;
    fields.retain(|f| identity.is_none_or(|i| i.allows_key(Permission::Read, &f.identifier())));
    match fields.len() {
        1 => Ok(fields.remove(0)),
        0 => Err(Error::new(ErrorKind::NotFound, explanation.unwrap_or_else(|| format!("no field '{request}' names may be read")))),
        n => {
            let varying: Vec<String> = varying_keywords(&fields);
            Err(Error::new(
                ErrorKind::BadRequest,
                format!("'{request}' names {n} fields, and a field is looked at alone: choose one value of {}", varying.join(", ")),
            ))
        }
    }
}

/// The keywords whose values differ among `fields`.
fn varying_keywords(fields: &[FieldEntry]) -> Vec<String> {
    let first = fields[0].identifier();
    let mut varying: Vec<String> = Vec::new();
    for field in &fields[1..] {
        let key = field.identifier();
        for (keyword, value) in key.iter() {
            if first.get(keyword) != Some(value) && !varying.iter().any(|k| k == keyword) {
                varying.push(keyword.to_string());
            }
        }
    }
    varying
}
