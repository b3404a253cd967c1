//! fieldstore: the library applications link. It opens the configured catalogue and store,
//! and the benchmarks' object pools, through the factories of the backends this build has
//! ([`BACKENDS`]: POSIX always, RADOS, DAOS and S3 with the cargo features `rados`, `daos` and
//! `s3`), and adds GRIB archiving on top of the core API.
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
//! the crates of the backends and formats of this build ([`posix`], [`fdb5`], [`grib`], [`objects`], and
//! `rados`, `daos`, `s3` with their features).

use std::path::PathBuf;

// The API, module by module: each is the reference for what it holds (the backend traits
// for code that opens a catalogue or store of its own; factories for backends of its own).
pub use fieldstore_core::{api, backend, checksum, config, error, factory, key, request, schema, types, union, unique};

// What most programs name: the handle and what its calls take and give.
pub use fieldstore_core::api::{
    Archiver, CompactReport, DataReader, DatasetDump, FieldEntry, FieldStore, HideReport, IndexDump, ListOptions, PurgeReport, StatsReport,
    WhereReport, WipeReport,
};
pub use fieldstore_core::backend::{Catalogue, ControlAction, FieldLocation, Store};
pub use fieldstore_core::{Config, Error, ErrorKind, Key, Report, Request, Result, Schema};

// The backends of this build, and the formats fieldstore reads and writes.
#[cfg(feature = "daos")]
pub use fieldstore_daos as daos;
pub use fieldstore_extract as extract;
pub use fieldstore_fdb5 as fdb5;
pub use fieldstore_grib as grib;
pub use fieldstore_objects as objects;
pub use fieldstore_posix as posix;
#[cfg(feature = "rados")]
pub use fieldstore_rados as rados;
pub use fieldstore_remote as remote;
#[cfg(feature = "s3")]
pub use fieldstore_s3 as s3;

mod compare;
mod copy;
mod grib_input;
mod moving;
mod reindex;

pub use compare::{canonical, compare, CompareOptions, CompareReport, CompareScope, FieldMismatch, GribComparison, KeyDifference, MarsKey};
pub use copy::{copy, CopyOptions, CopyProgress, CopyReport};
pub use grib_input::{archive_grib, prepare_grib, GribField, GribOptions};
pub use moving::{move_datasets, move_to_store, DatasetMove, DatasetTransfer, MoveOptions, MoveProgress, MoveReport, StoreMoveReport};
pub use reindex::{reindex, ReindexReport};

use fieldstore_core::factory::{Factory, PoolSection, Section};

/// The backends this build has, by their `type:` name: POSIX always, FDB5's databases read in
/// place (`fdb5`) always, a server's (`remote`, `fieldstore serve`) always, RADOS, DAOS and S3 (each a catalogue, a store and an object pool)
/// with their cargo features (all on by default).
pub const BACKENDS: &[&Factory] = &[
    &fieldstore_posix::FACTORY,
    &fieldstore_fdb5::FACTORY,
    &fieldstore_remote::FACTORY,
    #[cfg(feature = "rados")]
    &fieldstore_rados::FACTORY,
    #[cfg(feature = "daos")]
    &fieldstore_daos::FACTORY,
    #[cfg(feature = "s3")]
    &fieldstore_s3::FACTORY,
];

/// Opens the catalogue and store a config names, with its schema.
pub fn open(config: &Config) -> Result<FieldStore> {
    open_with(config, BACKENDS)
}

/// Opens the catalogue and store a config names, with its schema, through `backends`
/// instead of this build's (a backend of one's own, its conformance tests).
pub fn open_with(config: &Config, backends: &[&Factory]) -> Result<FieldStore> {
    grib::install_param_resolver();
    let catalogue = factory::open_catalogue(backends, &Section { name: "catalogue", config: &config.catalogue, source: &config.source })?;
    let store = factory::open_store(backends, &Section { name: "store", config: &config.store, source: &config.source })?;
    // Fields read through an overlay carry the target's keys, as FDB5 returns them.
    let rewriter = std::sync::Arc::new(grib::GribKeysRewriter);
    if let Some(remote) = catalogue.remote() {
        check_remote_pairing(config)?;
        if config.extract.keep_packings {
            return Err(Error::new(
                ErrorKind::BadRequest,
                format!("{}: extract.keep_packings is the server's to set (in the config it serves), not a remote client's", config.source),
            ));
        }
        // Identifiers split as the server splits them: with its schema.
        let text: String = api::call(remote, api::Operation::Schema)?;
        let schema = Schema::parse(&format!("the schema of server {}", remote.endpoint()), &text)?;
        return Ok(FieldStore::new(schema, catalogue, store).with_field_rewriter(rewriter));
    }
    let schema = config.load_schema()?;
    let fs = if config.read_also.is_empty() {
        FieldStore::new(schema, catalogue, store)
    } else {
        let (mut catalogues, mut stores) = (Vec::new(), Vec::new());
        for section in &config.read_also {
            let section = Section { name: "read_also", config: section, source: &config.source };
            catalogues.push(factory::open_catalogue(backends, &section)?);
            stores.push(factory::open_store(backends, &section)?);
        }
        let catalogue = Box::new(union::UnionCatalogue::new(catalogue, catalogues));
        FieldStore::new(schema, catalogue, Box::new(union::UnionStore::new(store, stores)))
    };
    let fs = fs.with_field_rewriter(rewriter);
    // Packings kept as fields are archived: extraction reads only its points without a scan.
    Ok(if config.extract.keep_packings { fs.with_archive_hooks(std::sync::Arc::new(extract::KeepPackings)) } else { fs })
}

/// A remote catalogue's fields are the server's: its store must be the same server's, and
/// nothing is read beside it (the server's own config says what it reads beside).
fn check_remote_pairing(config: &Config) -> Result<()> {
    let same_server = config.store.kind == "remote" && config.store.options.get("endpoint") == config.catalogue.options.get("endpoint");
    if !same_server {
        return Err(Error::config(
            &config.source,
            "a remote catalogue needs the same server's store: store: {type: remote} with the same endpoint",
        ));
    }
    if config.schema.is_some() || !config.read_also.is_empty() {
        return Err(Error::config(
            &config.source,
            "a remote config takes its schema and what is read beside from the server: no schema or read_also here",
        ));
    }
    Ok(())
}

/// How to reach the pools [`open_object_pool`] names: the options of every backend's pools,
/// as the command line gives them; each backend takes its own.
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

impl ObjectPoolOptions {
    /// The options by key, for the backends' typed options ([`PoolSection::typed`]).
    fn keys(&self) -> serde_yaml::Mapping {
        let mut keys = serde_yaml::Mapping::new();
        let mut set = |key: &str, value: String| keys.insert(key.into(), value.into());
        if let Some(conf) = &self.ceph_conf {
            set("ceph_conf", conf.display().to_string());
        }
        set("ceph_user", self.ceph_user.clone());
        if let Some(library) = &self.daos_library {
            set("daos_library", library.clone());
        }
        set("daos_class", self.daos_class.clone());
        keys
    }
}

/// The object pool the field-io and ior benchmarks run on, named by `spec`, opened by the
/// factory of its type ([`BACKENDS`]):
/// - `rados:POOL` or `rados:POOL/PREFIX`: a pool of the Ceph cluster (PREFIX starts every
///   container's namespace);
/// - `daos:POOL` or `daos:POOL/PREFIX`: a DAOS pool (container labels start with PREFIX,
///   default `fieldio`);
/// - `s3:BUCKET` or `s3:BUCKET/PREFIX`: an S3 bucket (containers are folders under PREFIX),
///   at `$AWS_ENDPOINT_URL` (AWS without it) with the `AWS_*` credentials;
/// - a directory (the POSIX form) otherwise.
pub fn open_object_pool(spec: &str, options: &ObjectPoolOptions) -> Result<Box<dyn objects::Pool>> {
    let keys = options.keys();
    factory::open_object_pool(BACKENDS, &PoolSection::new(spec, &keys))
}
