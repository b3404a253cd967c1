//! fieldstore: the library applications link. It opens the configured catalogue and store
//! through the factories of the backends this build has ([`BACKENDS`]: POSIX always, RADOS,
//! DAOS and S3 with the cargo features `rados`, `daos` and `s3`), and adds GRIB archiving on top of the
//! core API.
//!
//! ```no_run
//! let config = fieldstore::Config::resolve(None)?;        // --config, $FIELDSTORE_CONFIG or the default
//! let fs = fieldstore::open(&config)?;
//! let grib = std::fs::read("fields.grib").unwrap();
//! fieldstore::archive_grib(&fs, &grib, "fields.grib", |_| {})?;
//! fs.flush()?;
//! # Ok::<(), fieldstore::Error>(())
//! ```
//!
//! What it re-exports, and nothing more: the API's modules ([`api`], [`config`], [`error`],
//! [`key`], [`request`], [`schema`], [`types`], [`checksum`]), with the names most programs use
//! at the top ([`FieldStore`], [`Config`], [`Key`], [`Request`], [`ListOptions`], [`Error`]);
//! the backend interface ([`backend`], [`factory`]) for catalogues and stores of one's own; and
//! the crates of the backends and formats of this build ([`posix`], [`grib`], [`objects`], and
//! `rados`, `daos`, `s3` with their features).

use std::path::PathBuf;

// The API, module by module: each is the reference for what it holds (the backend traits
// for code that opens a catalogue or store of its own; factories for backends of its own).
pub use fieldstore_core::{api, backend, checksum, config, error, factory, key, request, schema, types};

// What most programs name: the handle and what its calls take and give.
pub use fieldstore_core::api::{
    Archiver, CompactReport, DataReader, FieldEntry, FieldStore, ListOptions, PurgeReport, StatsReport, WhereReport, WipeReport,
};
pub use fieldstore_core::backend::{Catalogue, ControlAction, FieldLocation, Store};
pub use fieldstore_core::{Config, Error, ErrorKind, Key, Report, Request, Result, Schema};

// The backends of this build, and the formats fieldstore reads and writes.
#[cfg(feature = "daos")]
pub use fieldstore_daos as daos;
pub use fieldstore_grib as grib;
pub use fieldstore_objects as objects;
pub use fieldstore_posix as posix;
#[cfg(feature = "rados")]
pub use fieldstore_rados as rados;
#[cfg(feature = "s3")]
pub use fieldstore_s3 as s3;

mod grib_input;

pub use grib_input::{archive_grib, prepare_grib, GribField, GribOptions};

use fieldstore_core::factory::{Factory, Section};

/// The backends this build has, by their `type:` name: POSIX always, RADOS, DAOS and S3 (each
/// a catalogue and a store) with their cargo features (all on by default).
pub const BACKENDS: &[&Factory] = &[
    &fieldstore_posix::FACTORY,
    #[cfg(feature = "rados")]
    &fieldstore_rados::FACTORY,
    #[cfg(feature = "daos")]
    &fieldstore_daos::FACTORY,
    #[cfg(feature = "s3")]
    &fieldstore_s3::FACTORY,
];

/// Opens the catalogue and store a config names, with its schema.
pub fn open(config: &Config) -> Result<FieldStore> {
    grib::install_param_resolver();
    let schema = config.load_schema()?;
    let catalogue = factory::open_catalogue(BACKENDS, &Section { name: "catalogue", config: &config.catalogue, source: &config.source })?;
    let store = factory::open_store(BACKENDS, &Section { name: "store", config: &config.store, source: &config.source })?;
    Ok(FieldStore::new(schema, catalogue, store))
}

/// How to reach the pools [`open_object_pool`] names.
pub struct ObjectPoolOptions {
    /// The `ceph.conf` of `rados:` pools (librados' defaults without one).
    pub ceph_conf: Option<PathBuf>,
    /// The Ceph user of `rados:` pools, without `client.`.
    pub ceph_user: String,
    /// The libdaos of `daos:` pools; without one, `$FIELDSTORE_DAOS_LIBRARY` or DAOS' own.
    pub daos_library: Option<String>,
    /// The object class of `daos:` pools' key-values and arrays.
    pub daos_class: String,
}

impl Default for ObjectPoolOptions {
    fn default() -> Self {
        ObjectPoolOptions { ceph_conf: None, ceph_user: "admin".into(), daos_library: None, daos_class: "OC_S1".into() }
    }
}

/// The object pool the field-io and ior benchmarks run on, named by `spec`:
/// - `rados:POOL` or `rados:POOL/PREFIX`: a pool of the Ceph cluster (PREFIX starts every
///   container's namespace);
/// - `daos:POOL` or `daos:POOL/PREFIX`: a DAOS pool (container labels start with PREFIX,
///   default `fieldio`);
/// - `s3:BUCKET` or `s3:BUCKET/PREFIX`: an S3 bucket (containers are folders under PREFIX),
///   at `$AWS_ENDPOINT_URL` (AWS without it) with the `AWS_*` credentials;
/// - anything else: a directory (the POSIX form).
pub fn open_object_pool(spec: &str, options: &ObjectPoolOptions) -> Result<Box<dyn objects::Pool>> {
    if let Some(rest) = spec.strip_prefix("rados:") {
        return rados_object_pool(rest, options);
    }
    if let Some(rest) = spec.strip_prefix("daos:") {
        return daos_object_pool(rest, options);
    }
    if let Some(rest) = spec.strip_prefix("s3:") {
        return s3_object_pool(rest);
    }
    Ok(Box::new(objects::posix::PosixPool::new(spec)?))
}

#[cfg(feature = "rados")]
fn rados_object_pool(spec: &str, options: &ObjectPoolOptions) -> Result<Box<dyn objects::Pool>> {
    let (pool, prefix) = spec.split_once('/').unwrap_or((spec, ""));
    let cluster = rados::ClusterConfig { ceph_conf: options.ceph_conf.clone(), user: options.ceph_user.clone(), ..Default::default() };
    Ok(Box::new(rados::objects::RadosPool::new(rados::Cluster::connect(&cluster)?, pool, prefix)?))
}

#[cfg(feature = "daos")]
fn daos_object_pool(spec: &str, options: &ObjectPoolOptions) -> Result<Box<dyn objects::Pool>> {
    let (pool, prefix) = spec.split_once('/').unwrap_or((spec, "fieldio"));
    let class = daos::object_class(&options.daos_class)?;
    let library = options.daos_library.clone().unwrap_or_else(daos::default_library);
    let config = daos::PoolConfig { library, pool: pool.into(), system: None };
    Ok(Box::new(daos::objects::DaosPool::new(daos::Pool::connect(&config)?, prefix, class)?))
}

#[cfg(feature = "s3")]
fn s3_object_pool(spec: &str) -> Result<Box<dyn objects::Pool>> {
    let (bucket, prefix) = spec.split_once('/').unwrap_or((spec, ""));
    let client = s3::client::S3Client::connect(&s3::config::S3Config::from_environment(bucket, prefix), bucket, "s3 pool")?;
    Ok(Box::new(s3::objects::S3Pool::new(client)))
}

#[cfg(not(feature = "s3"))]
fn s3_object_pool(_: &str) -> Result<Box<dyn objects::Pool>> {
    Err(not_built("s3"))
}

#[cfg(not(feature = "rados"))]
fn rados_object_pool(_: &str, _: &ObjectPoolOptions) -> Result<Box<dyn objects::Pool>> {
    Err(not_built("rados"))
}

#[cfg(not(feature = "daos"))]
fn daos_object_pool(_: &str, _: &ObjectPoolOptions) -> Result<Box<dyn objects::Pool>> {
    Err(not_built("daos"))
}

#[cfg(not(all(feature = "rados", feature = "daos", feature = "s3")))]
fn not_built(backend: &str) -> Error {
    Error::new(
        error::ErrorKind::Unsupported,
        format!("{backend}: this build of fieldstore has no {backend} backend (cargo feature '{backend}')"),
    )
}
