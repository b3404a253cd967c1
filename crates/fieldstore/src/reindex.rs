//! Reindexing (FDB5's `fdb-reindex`): the fields requests name in one store indexed again in
//! another's catalogue, over their data where it lies: no byte of a field is copied. The sink
//! then lists and retrieves them as its own; its store must read the source's data (the same
//! POSIX root, bucket or pool), which is checked, file by file, before anything is indexed.
//! A new catalogue over existing data: another catalogue backend, a catalogue lost or
//! damaged, or a catalogue on faster storage.
//!
//! The sink's data sets then name the source's data, which they do not own: the reindex locks
//! them for wipe (which purge and hide honour too), so that no wipe or purge of the sink removes
//! the source's files, fields of the source not reindexed among them. Unlock them only to
//! remove that data from both.

use std::collections::BTreeSet;

use fieldstore_core::error::ErrorKind;
use fieldstore_core::{ControlAction, Error, FieldEntry, FieldStore, Key, ListOptions, Request, Result};
use serde::Serialize;

/// What a reindex did.
#[derive(Clone, Debug, Default, Serialize)]
pub struct ReindexReport {
    /// Fields indexed in the sink.
    pub fields: u64,
    /// Their bytes, where they were (not copied).
    pub bytes: u64,
    /// The sink's data sets that index them, each locked for wipe.
    pub datasets: Vec<Key>,
}

/// Indexes the fields `requests` name in `source` (the newest of each identifier, FDB5's
/// rule) in `sink`'s catalogue, at the locations the source lists. Fields
/// the source shows through an overlay are refused (their messages carry another data set's
/// keys): reindex the overlaid data set. `progress` is told the fields done of the total.
/// Before anything is indexed, the first field of each file or object the fields lie in is
/// read through the sink's store (checksum checked where the source has one); after, the
/// sink's data sets are locked for wipe: their data is the source's. A request naming nothing is an error
/// unless `ignore_no_data`.
pub fn reindex(
    source: &FieldStore,
    sink: &FieldStore,
    requests: &[Request],
    ignore_no_data: bool,
    progress: &mut dyn FnMut(u64, u64),
) -> Result<ReindexReport> {
    let fields = listed(source, requests, ignore_no_data)?;
    let total = fields.len() as u64;
    if let Some(overlaid) = fields.iter().find(|f| f.archived_in.is_some()) {
        let from = overlaid.archived_in.as_deref().map(ToString::to_string).unwrap_or_default();
        return Err(Error::new(
            ErrorKind::BadRequest,
            format!("field {} is shown through an overlay of data set {{{from}}}: reindex that data set itself", overlaid.identifier()),
        ));
    }
    if fields.is_empty() {
        return Ok(ReindexReport::default());
    }
    check_sink_reads(sink, &fields)?;
    let mut archiver = sink.archiver()?;
    let mut report = ReindexReport::default();
    let mut datasets = BTreeSet::new();
    for (done, field) in fields.into_iter().enumerate() {
        datasets.insert(archiver.reindex(&field.identifier(), field.location.clone())?);
        report.fields += 1;
        report.bytes += field.location.length;
        progress(done as u64 + 1, total);
    }
    archiver.flush()?;
    for dataset in &datasets {
        // The sink owns none of the data it now indexes.
        sink.control(&Request::parse(&dataset.to_string())?, &[ControlAction::Wipe], Some(true))?;
    }
    report.datasets = datasets.into_iter().collect();
    Ok(report)
}

/// The fields the requests name in `source`, each identifier once; none is an error unless
/// `ignore_no_data`.
fn listed(source: &FieldStore, requests: &[Request], ignore_no_data: bool) -> Result<Vec<FieldEntry>> {
    let mut fields = Vec::new();
    let mut seen = BTreeSet::new();
    for request in requests {
        let matches = source.list(request, ListOptions::default())?;
        if matches.fields.is_empty() && !ignore_no_data {
            let why = matches.explanation.unwrap_or_else(|| "no field".to_string());
            return Err(Error::new(ErrorKind::NotFound, format!("nothing matched {request} in the source: {why}")));
        }
        fields.extend(matches.fields.into_iter().filter(|field| seen.insert(field.identifier())));
    }
    Ok(fields)
}

/// Reads the first field of each file or object through the sink's store, checking the
/// checksum the source recorded where it recorded one (FDB5 records none): the sink must serve
/// what it will index (one field per file; with an object per field, every field).
fn check_sink_reads(sink: &FieldStore, fields: &[FieldEntry]) -> Result<()> {
    let mut uris = BTreeSet::new();
    let firsts: Vec<FieldEntry> = fields.iter().filter(|f| uris.insert(f.location.uri.clone())).cloned().collect();
    let mut reader = sink.read_fields(firsts)?;
    loop {
        match reader.next_field() {
            Ok(Some(_)) => {}
            Ok(None) => return Ok(()),
            Err(e) => {
                return Err(Error::caused_by(
                    e.kind(),
                    "the sink's store cannot read the source's fields: a reindex indexes data where it is, so the sink's store must \
                     read the source's (the same root, bucket or pool); nothing was indexed",
                    e,
                ))
            }
        }
    }
}
