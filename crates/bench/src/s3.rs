//! The S3 baselines (`fieldstore_s3::raw`) on the S3 store a config names: what `bench s3-raw`
//! runs beside `bench hammer` and `list` (scripts/s3-bench.sh).

use fieldstore::factory::Section;
use fieldstore::s3::config::S3Config;
use fieldstore::s3::layout::Buckets;
use fieldstore::s3::raw::{self, RawTimes};
use fieldstore::{Config, Error, ErrorKind, Key, Result};

/// The buckets of the config's store, which must be of type `s3`.
pub fn store_buckets(config: &Config) -> Result<Buckets> {
    let s3_type = fieldstore::s3::FACTORY.name;
    if config.store.kind != s3_type {
        return Err(Error::new(
            ErrorKind::BadConfig,
            format!("{}: the store is of type '{}'; the S3 baselines need a store of type '{s3_type}'", config.source, config.store.kind),
        ));
    }
    let section = Section { name: "store", config: &config.store, source: &config.source };
    let s3: S3Config = section.typed()?;
    Buckets::connect(&s3, "store")
}

/// The raw PUT/GET loop on the config's S3 store (in the bucket of its data set list).
pub fn put_get_loop(
    config: &Config,
    objects: usize,
    size: usize,
    in_flight: usize,
    range: Option<std::ops::Range<u64>>,
) -> Result<RawTimes> {
    raw::put_get_loop(store_buckets(config)?.home(), objects, size, in_flight, range)
}

/// A LIST of a data set's field objects and a HEAD of each, on the config's S3 store: how
/// many, in how many seconds.
pub fn list_and_head(config: &Config, dataset: &Key, in_flight: usize) -> Result<(usize, f64)> {
    let buckets = store_buckets(config)?;
    let place =
        buckets.place(dataset, false)?.ok_or_else(|| Error::new(ErrorKind::NotFound, format!("no bucket for data set {dataset}")))?;
    raw::list_and_head(&place, in_flight)
}
