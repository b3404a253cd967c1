//! fieldstore: the library applications link. It wires the configured catalogue and store
//! backends into a [`FieldStore`] and adds GRIB archiving on top of the core API.
//!
//! ```no_run
//! let config = fieldstore::Config::resolve(None)?;        // --config, $FIELDSTORE_CONFIG or the default
//! let fs = fieldstore::open(&config)?;
//! let grib = std::fs::read("fields.grib").unwrap();
//! fieldstore::archive_grib(&fs, &grib, "fields.grib", |_| {})?;
//! fs.flush()?;
//! # Ok::<(), fieldstore::Error>(())
//! ```

use std::path::PathBuf;

pub use fieldstore_core::api;
pub use fieldstore_core::api::{DataReader, PurgeReport, StatsReport, WhereReport, WipeReport};
pub use fieldstore_core::*;
pub use fieldstore_daos as daos;
pub use fieldstore_grib as grib;
pub use fieldstore_objects as objects;
pub use fieldstore_rados as rados;

mod grib_input;

pub use grib_input::{archive_grib, prepare_grib, GribField, GribOptions};

use fieldstore_core::config::BackendConfig;
use fieldstore_posix::{CommitMode, PosixCatalogue, PosixStore};

/// Catalogue and store types this build knows.
pub const BACKENDS: &[&str] = &["posix", "rados", "daos"];

/// Opens the catalogue and store a config names, with its schema.
pub fn open(config: &Config) -> Result<FieldStore> {
    grib::install_param_resolver();
    let schema = config.load_schema()?;
    let catalogue = open_catalogue(&config.catalogue, &config.source)?;
    let store = open_store(&config.store, &config.source)?;
    Ok(FieldStore::new(schema, catalogue, store))
}

fn posix_root(section: &str, backend: &BackendConfig, source: &str) -> Result<PathBuf> {
    backend.only_keys(section, &["root"], source)?;
    Ok(PathBuf::from(backend.string(section, "root", source)?))
}

/// A `type: posix` catalogue section: `root`, and `commit` (`auto`, the default, `embedded`
/// or `ordered`: how a flush is made durable, see `PosixCatalogue`).
fn posix_catalogue(backend: &BackendConfig, source: &str) -> Result<PosixCatalogue> {
    backend.only_keys("catalogue", &["root", "commit"], source)?;
    let root = PathBuf::from(backend.string("catalogue", "root", source)?);
    let commit = backend.optional_string("catalogue", "commit", source)?.unwrap_or_else(|| "auto".into());
    let mode = CommitMode::parse(&commit, &root).ok_or_else(|| Error::Config {
        source_name: source.into(),
        message: format!("catalogue.commit '{commit}' is not known (known: auto, embedded, ordered)"),
    })?;
    Ok(PosixCatalogue::with_commit_mode(root, mode))
}

/// The keys of every `type: rados` section.
const RADOS_KEYS: &[&str] = &["pool", "namespace_prefix", "ceph_conf", "user", "timeout_seconds"];

/// The cluster, pool and namespace prefix of a `type: rados` section (whose keys
/// [`BackendConfig::only_keys`] has checked).
fn rados_pool(section: &str, backend: &BackendConfig, source: &str) -> Result<(std::sync::Arc<rados::Cluster>, String, String)> {
    let pool = backend.string(section, "pool", source)?;
    let prefix = backend.optional_string(section, "namespace_prefix", source)?.unwrap_or_default();
    let defaults = rados::ClusterConfig::default();
    let cluster = rados::ClusterConfig {
        ceph_conf: backend.optional_string(section, "ceph_conf", source)?.map(PathBuf::from),
        user: backend.optional_string(section, "user", source)?.unwrap_or(defaults.user),
        timeout_seconds: backend.optional_u32(section, "timeout_seconds", source)?.unwrap_or(defaults.timeout_seconds),
    };
    Ok((rados::Cluster::connect(&cluster)?, pool, prefix))
}

/// The libdaos to load when a configuration names none: `$FIELDSTORE_DAOS_LIBRARY`, else
/// DAOS' own client library.
pub fn default_daos_library() -> String {
    std::env::var("FIELDSTORE_DAOS_LIBRARY").unwrap_or_else(|_| daos::DEFAULT_LIBRARY.into())
}

/// What a `type: daos` section names: the pool, the root container label, and its object
/// classes and id batch size.
struct DaosSection {
    pool: std::sync::Arc<daos::Pool>,
    root: String,
    kv_class: u32,
    array_class: u32,
    oid_batch: u64,
}

fn daos_section(section: &str, backend: &BackendConfig, source: &str) -> Result<DaosSection> {
    backend.only_keys(section, &["pool", "root_container", "library", "system", "kv_class", "array_class", "oid_batch"], source)?;
    let class = |key: &str| -> Result<u32> {
        let name = backend.optional_string(section, key, source)?.unwrap_or_else(|| "OC_S1".into());
        daos::object_class(&name).map_err(|e| Error::Config { source_name: source.into(), message: format!("{section}.{key}: {e}") })
    };
    let (kv_class, array_class) = (class("kv_class")?, class("array_class")?);
    let pool = daos::PoolConfig {
        library: backend.optional_string(section, "library", source)?.unwrap_or_else(default_daos_library),
        pool: backend.string(section, "pool", source)?,
        system: backend.optional_string(section, "system", source)?,
    };
    Ok(DaosSection {
        pool: daos::Pool::connect(&pool)?,
        root: backend.optional_string(section, "root_container", source)?.unwrap_or_else(|| "fieldstore".into()),
        kv_class,
        array_class,
        oid_batch: u64::from(backend.optional_u32(section, "oid_batch", source)?.unwrap_or(8192)),
    })
}

fn unknown_type(section: &str, backend: &BackendConfig, source: &str) -> Error {
    Error::Config {
        source_name: source.into(),
        message: format!("{section}.type '{}' is not known (known: {})", backend.kind, BACKENDS.join(", ")),
    }
}

fn open_catalogue(backend: &BackendConfig, source: &str) -> Result<Box<dyn Catalogue>> {
    match backend.kind.as_str() {
        "posix" => Ok(Box::new(posix_catalogue(backend, source)?)),
        "rados" => {
            backend.only_keys("catalogue", RADOS_KEYS, source)?;
            let (cluster, pool, prefix) = rados_pool("catalogue", backend, source)?;
            Ok(Box::new(rados::catalogue::RadosCatalogue::new(cluster, &pool, &prefix)?))
        }
        "daos" => {
            let d = daos_section("catalogue", backend, source)?;
            let layout = daos::catalogue::Layout { kv_class: d.kv_class, oid_batch: d.oid_batch };
            Ok(Box::new(daos::catalogue::DaosCatalogue::new(d.pool, &d.root, layout)?))
        }
        _ => Err(unknown_type("catalogue", backend, source)),
    }
}

fn open_store(backend: &BackendConfig, source: &str) -> Result<Box<dyn Store>> {
    match backend.kind.as_str() {
        "posix" => Ok(Box::new(PosixStore::new(posix_root("store", backend, source)?))),
        "rados" => {
            backend.only_keys("store", &[RADOS_KEYS, &["writes_in_flight", "reads_in_flight"]].concat(), source)?;
            let defaults = rados::store::InFlight::default();
            let limit = |key: &str, default: usize| -> Result<usize> {
                Ok(backend.optional_u32("store", key, source)?.map_or(default, |n| n as usize))
            };
            let limits = rados::store::InFlight {
                writes: limit("writes_in_flight", defaults.writes)?,
                reads: limit("reads_in_flight", defaults.reads)?,
            };
            let (cluster, pool, prefix) = rados_pool("store", backend, source)?;
            Ok(Box::new(rados::store::RadosStore::new(cluster, &pool, &prefix, limits)?))
        }
        "daos" => {
            let d = daos_section("store", backend, source)?;
            Ok(Box::new(daos::store::DaosStore::new(d.pool, &d.root, d.array_class, d.oid_batch)?))
        }
        _ => Err(unknown_type("store", backend, source)),
    }
}

/// How to reach the pools [`open_object_pool`] names.
pub struct ObjectPoolOptions {
    /// The Ceph cluster of `rados:` pools.
    pub ceph: rados::ClusterConfig,
    /// The libdaos of `daos:` pools.
    pub daos_library: String,
    /// The object class of `daos:` pools' key-values and arrays.
    pub daos_class: String,
}

impl Default for ObjectPoolOptions {
    fn default() -> Self {
        ObjectPoolOptions { ceph: rados::ClusterConfig::default(), daos_library: default_daos_library(), daos_class: "OC_S1".into() }
    }
}

/// The object pool the field-io and ior benchmarks run on, named by `spec`:
/// - `rados:POOL` or `rados:POOL/PREFIX`: a pool of the Ceph cluster (PREFIX starts every
///   container's namespace);
/// - `daos:POOL` or `daos:POOL/PREFIX`: a DAOS pool (container labels start with PREFIX,
///   default `fieldio`);
/// - anything else: a directory (the POSIX form).
pub fn open_object_pool(spec: &str, options: &ObjectPoolOptions) -> Result<Box<dyn objects::Pool>> {
    if let Some(rest) = spec.strip_prefix("rados:") {
        let (pool, prefix) = rest.split_once('/').unwrap_or((rest, ""));
        return Ok(Box::new(rados::objects::RadosPool::new(rados::Cluster::connect(&options.ceph)?, pool, prefix)?));
    }
    if let Some(rest) = spec.strip_prefix("daos:") {
        let (pool, prefix) = rest.split_once('/').unwrap_or((rest, "fieldio"));
        let class = daos::object_class(&options.daos_class)?;
        let config = daos::PoolConfig { library: options.daos_library.clone(), pool: pool.into(), system: None };
        return Ok(Box::new(daos::objects::DaosPool::new(daos::Pool::connect(&config)?, prefix, class)?));
    }
    Ok(Box::new(objects::posix::PosixPool::new(spec)?))
}
