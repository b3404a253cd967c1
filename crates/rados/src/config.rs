//! The `type: rados` sections of a config, and the backend's [`FACTORY`].
//!
//! ```yaml
//! catalogue: { type: rados, pool: fieldstore-index, namespace_prefix: run1- }
//! store:     { type: rados, pool: fieldstore-data, ceph_conf: /etc/ceph/ceph.conf, writes_in_flight: 8 }
//! ```

use std::num::{NonZeroU32, NonZeroUsize};
use std::path::PathBuf;
use std::sync::Arc;

use serde::Deserialize;

use fieldstore_core::error::Result;
use fieldstore_core::factory::{Factory, PoolSection, Section};
use fieldstore_core::objects::Pool;
use fieldstore_core::{Catalogue, Store};

use crate::objects::RadosPool;
use crate::store::RadosStore;
use crate::{Cluster, ClusterConfig};
use fieldstore_core::window::InFlight;

/// A RADOS catalogue's or store's section.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RadosConfig {
    /// The pool (it must exist).
    pub pool: String,
    /// Starts every namespace, so several instances can share a pool.
    #[serde(default)]
    pub namespace_prefix: String,
    /// A `ceph.conf`; librados' defaults without one.
    #[serde(default)]
    pub ceph_conf: Option<PathBuf>,
    /// The client's user name without `client.`.
    #[serde(default = "default_user")]
    pub user: String,
    /// Limit for connecting and for each monitor or OSD operation.
    #[serde(default = "default_timeout")]
    pub timeout_seconds: NonZeroU32,
    /// Writes a store writer keeps in flight (stores only).
    #[serde(default)]
    pub writes_in_flight: Option<NonZeroUsize>,
    /// Objects a retrieve keeps in flight (stores only).
    #[serde(default)]
    pub reads_in_flight: Option<NonZeroUsize>,
}

fn default_user() -> String {
    ClusterConfig::default().user
}

fn default_timeout() -> NonZeroU32 {
    NonZeroU32::new(ClusterConfig::default().timeout_seconds).expect("the default timeout is not 0")
}

/// The options of a `rados:POOL[/PREFIX]` object pool (PREFIX starts every container's
/// namespace).
#[derive(Debug, Deserialize)]
struct RadosPoolOptions {
    /// A `ceph.conf`; librados' defaults without one.
    #[serde(default)]
    ceph_conf: Option<PathBuf>,
    /// The client's user name without `client.`.
    #[serde(default = "default_user")]
    ceph_user: String,
}

/// The RADOS catalogue, store and object pool, for the facade's list of backends.
pub const FACTORY: Factory =
    Factory { name: "rados", catalogue: Some(open_catalogue), store: Some(open_store), object_pool: Some(open_object_pool) };

fn open_catalogue(section: &Section<'_>) -> Result<Box<dyn Catalogue>> {
    let config: RadosConfig = section.typed()?;
    fieldstore_core::window::refuse_in_catalogue(
        section,
        "rados",
        config.writes_in_flight.map(NonZeroUsize::get),
        config.reads_in_flight.map(NonZeroUsize::get),
    )?;
    let cluster = connect(section, &config)?;
    Ok(Box::new(crate::catalogue::open(cluster, &config.pool, &config.namespace_prefix)?))
}

fn open_store(section: &Section<'_>) -> Result<Box<dyn Store>> {
    let config: RadosConfig = section.typed()?;
    let limits = InFlight::new(config.writes_in_flight.map(NonZeroUsize::get), config.reads_in_flight.map(NonZeroUsize::get));
    let cluster = connect(section, &config)?;
    Ok(Box::new(RadosStore::new(cluster, &config.pool, &config.namespace_prefix, limits)?))
}

fn open_object_pool(pool: &PoolSection<'_>) -> Result<Box<dyn Pool>> {
    let options: RadosPoolOptions = pool.typed()?;
    let (name, prefix) = pool.pool_and_prefix();
    let cluster = ClusterConfig { ceph_conf: options.ceph_conf, user: options.ceph_user, ..Default::default() };
    Ok(Box::new(RadosPool::new(Cluster::connect(&cluster)?, name, prefix.unwrap_or(""))?))
}

fn connect(section: &Section<'_>, config: &RadosConfig) -> Result<Arc<Cluster>> {
    if config.pool.is_empty() {
        return Err(section.error(format!("{}.pool (type 'rados') must not be empty", section.name)));
    }
    Cluster::connect(&ClusterConfig {
        ceph_conf: config.ceph_conf.clone(),
        user: config.user.clone(),
        timeout_seconds: config.timeout_seconds.get(),
    })
}
