//! The baselines fieldstore's S3 figures are measured against, with the same client library
//! (`object_store`), the same endpoint and object sizes (docs/performance.md, "S3"):
//!
//! - a raw loop of PUTs, then GETs, of `objects` objects of `size` bytes, `in_flight` requests
//!   at a time: what `bench hammer` is held to; its GETs of a range of each object are what an
//!   extraction's reads are held to;
//! - a listing of a data set's fields with no catalogue: a LIST of its field objects and a
//!   HEAD of each (the size and date a catalogue would give), `in_flight` at a time: what
//!   `list` through the S3 catalogue is held to.

use std::time::Instant;

use bytes::Bytes;
use futures::{StreamExt, TryStreamExt};
use object_store::path::Path;
use object_store::{ObjectStore, ObjectStoreExt, PutPayload};

use fieldstore_core::error::{Error, ErrorKind, Result};
use fieldstore_core::unique::unique_suffix;

use crate::client::S3Client;
use crate::layout::Place;

/// What the raw loop measured.
#[derive(Clone, Copy, Debug)]
pub struct RawTimes {
    /// Seconds for every PUT.
    pub put_seconds: f64,
    /// Seconds for every GET.
    pub get_seconds: f64,
}

/// PUTs `objects` objects of `size` bytes under a folder of the run's own, `in_flight` at a
/// time, then GETs them all (or `range` of each) the same way, each checked for its length,
/// then removes them.
pub fn put_get_loop(
    client: &S3Client,
    objects: usize,
    size: usize,
    in_flight: usize,
    range: Option<std::ops::Range<u64>>,
) -> Result<RawTimes> {
    if objects == 0 || in_flight == 0 {
        return Err(Error::new(ErrorKind::BadRequest, "the raw loop needs at least one object and one request in flight"));
    }
    if let Some(r) = range.as_ref().filter(|r| r.is_empty() || r.end > size as u64) {
        let message = format!("the raw loop's range {}-{} is not within an object of {size} bytes", r.start, r.end);
        return Err(Error::new(ErrorKind::BadRequest, message));
    }
    let folder = client.path(&["raw-loop", &unique_suffix()]);
    let paths: Vec<Path> = (0..objects).map(|i| folder.clone().join(format!("{i:08}"))).collect();
    let payload = Bytes::from(vec![0x5a; size]);
    let store = client.store().clone();

    let (puts, started) = (paths.clone(), Instant::now());
    let put_store = store.clone();
    client.run(async move {
        futures::stream::iter(puts)
            .map(|path| {
                let (store, payload) = (put_store.clone(), PutPayload::from(payload.clone()));
                async move { store.put(&path, payload).await }
            })
            .buffer_unordered(in_flight)
            .try_for_each(|_| async { Ok(()) })
            .await
    })?;
    let put_seconds = started.elapsed().as_secs_f64();

    let (gets, started) = (paths.clone(), Instant::now());
    let get_store = store.clone();
    let expected = range.as_ref().map_or(size, |r| (r.end - r.start) as usize);
    let lengths = client.run(async move {
        futures::stream::iter(gets)
            .map(|path| {
                let (store, range) = (get_store.clone(), range.clone());
                async move {
                    match range {
                        Some(range) => store.get_range(&path, range).await.map(|b| b.len()),
                        None => store.get(&path).await?.bytes().await.map(|b| b.len()),
                    }
                }
            })
            .buffer_unordered(in_flight)
            .try_collect::<Vec<usize>>()
            .await
    })?;
    let get_seconds = started.elapsed().as_secs_f64();
    if let Some(short) = lengths.iter().find(|l| **l != expected) {
        return Err(Error::new(ErrorKind::Corrupt, format!("the raw loop read {short} bytes of the {expected} asked")));
    }
    remove(client, paths, in_flight)?;
    Ok(RawTimes { put_seconds, get_seconds })
}

/// Lists a data set's field objects (the store's `fields/` in the data set's place) and HEADs
/// each, `in_flight` at a time: how many there are, and the seconds it took.
pub fn list_and_head(place: &Place, in_flight: usize) -> Result<(usize, f64)> {
    let (client, folder) = (&place.client, place.path(&["fields"]));
    let store = client.store().clone();
    let started = Instant::now();
    let count = client.run(async move {
        let listed: Vec<Path> = store.list(Some(&folder)).map_ok(|meta| meta.location).try_collect().await?;
        futures::stream::iter(listed)
            .map(|path| {
                let store = store.clone();
                async move { store.head(&path).await }
            })
            .buffer_unordered(in_flight.max(1))
            .try_collect::<Vec<_>>()
            .await
            .map(|heads| heads.len())
    })?;
    Ok((count, started.elapsed().as_secs_f64()))
}

/// Deletes `paths`, `in_flight` at a time.
fn remove(client: &S3Client, paths: Vec<Path>, in_flight: usize) -> Result<()> {
    let store = client.store().clone();
    client.run(async move {
        futures::stream::iter(paths)
            .map(|path| {
                let store = store.clone();
                async move { store.delete(&path).await }
            })
            .buffer_unordered(in_flight)
            .try_for_each(|_| async { Ok(()) })
            .await
    })
}
