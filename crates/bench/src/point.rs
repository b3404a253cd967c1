//! `bench point`: how long listing and retrieving what one request names takes: the first time
//! on a fresh handle (which reads the catalogue), then warm.

use std::io::Read;
use std::time::Instant;

use fieldstore::{Error, ErrorKind, FieldStore, ListOptions, Request, Result};
use serde::Serialize;

/// Milliseconds of one point query, cold and warm (the median of the warm repetitions).
#[derive(Clone, Debug, Serialize)]
pub struct PointTimes {
    /// The request, as text.
    pub request: String,
    /// Fields the request retrieved.
    pub fields: usize,
    /// The first list, on a fresh handle.
    pub list_cold_ms: f64,
    /// The first retrieve, on a fresh handle.
    pub retrieve_cold_ms: f64,
    /// The median of the later lists.
    pub list_warm_ms: f64,
    /// The median of the later retrieves.
    pub retrieve_warm_ms: f64,
}

/// Lists and retrieves `request` on `fs` once, then `reps` more times.
pub fn measure(fs: &FieldStore, request: &Request, reps: usize) -> Result<PointTimes> {
    let mut timings: Vec<(f64, f64)> = Vec::new();
    let mut fields = 0;
    for _ in 0..=reps {
        let t = Instant::now();
        let listed = fs.list(request, ListOptions::default())?;
        let list_ms = t.elapsed().as_secs_f64() * 1e3;
        if let Some(why) = listed.explanation {
            return Err(Error::new(ErrorKind::NotFound, format!("nothing matched {request}: {why}")));
        }
        let t = Instant::now();
        let (mut reader, _) = fs.retrieve(request)?;
        let mut bytes = Vec::new();
        reader.read_to_end(&mut bytes).map_err(|e| Error::caused_by(ErrorKind::Io, format!("retrieving {request}"), e))?;
        fields = reader.fields().len();
        timings.push((list_ms, t.elapsed().as_secs_f64() * 1e3));
    }
    let (cold, warm) = timings.split_first().expect("at least one run");
    let median = |f: fn(&(f64, f64)) -> f64| {
        let mut v: Vec<f64> = warm.iter().map(f).collect();
        v.sort_by(f64::total_cmp);
        v.get(v.len() / 2).copied().unwrap_or(f64::NAN)
    };
    Ok(PointTimes {
        request: request.to_string(),
        fields,
        list_cold_ms: cold.0,
        retrieve_cold_ms: cold.1,
        list_warm_ms: median(|t| t.0),
        retrieve_warm_ms: median(|t| t.1),
    })
}
