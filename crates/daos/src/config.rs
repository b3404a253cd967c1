//! The `type: daos` sections of a config, and the backend's [`FACTORY`].
//!
//! ```yaml
//! catalogue: { type: daos, pool: fieldstore, root_container: fieldstore, kv_class: OC_S1 }
//! store:     { type: daos, pool: fieldstore, array_class: OC_S1, oid_batch: 8192 }
//! ```

use std::num::NonZeroU32;

use serde::Deserialize;

use fieldstore_core::error::Result;
use fieldstore_core::factory::{Factory, PoolSection, Section};
use fieldstore_core::{Catalogue, Store};

use crate::catalogue::Layout;
use crate::objects::DaosPool;
use crate::store::DaosStore;
use crate::{object_class, Pool, PoolConfig};

/// A DAOS catalogue's or store's section.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DaosConfig {
    /// The pool's label or UUID.
    pub pool: String,
    /// The catalogue's root container's label; every data set container's starts with it.
    #[serde(default = "default_root_container")]
    pub root_container: String,
    /// The libdaos to load ([`default_library`] without one).
    #[serde(default)]
    pub library: Option<String>,
    /// The DAOS system name (the agent's default without one).
    #[serde(default)]
    pub system: Option<String>,
    /// The object class of the catalogue's key-values.
    #[serde(default = "default_class")]
    pub kv_class: String,
    /// The object class of the store's arrays.
    #[serde(default = "default_class")]
    pub array_class: String,
    /// Object ids reserved at once (one round trip per batch).
    #[serde(default = "default_oid_batch")]
    pub oid_batch: NonZeroU32,
}

fn default_root_container() -> String {
    "fieldstore".into()
}

fn default_class() -> String {
    "OC_S1".into()
}

fn default_oid_batch() -> NonZeroU32 {
    NonZeroU32::new(8192).expect("not 0")
}

/// The libdaos to load when a configuration names none: `$FIELDSTORE_DAOS_LIBRARY`, else
/// DAOS' own client library.
pub fn default_library() -> String {
    std::env::var("FIELDSTORE_DAOS_LIBRARY").unwrap_or_else(|_| crate::DEFAULT_LIBRARY.into())
}

/// The options of a `daos:POOL[/PREFIX]` object pool (container labels start with PREFIX,
/// default `fieldio`).
#[derive(Debug, Deserialize)]
struct DaosPoolOptions {
    /// The libdaos to load ([`default_library`] without one).
    #[serde(default)]
    daos_library: Option<String>,
    /// The object class of the pool's key-values and arrays.
    #[serde(default = "default_class")]
    daos_class: String,
}

/// The DAOS catalogue, store and object pool, for the facade's list of backends.
pub const FACTORY: Factory =
    Factory { name: "daos", catalogue: Some(open_catalogue), store: Some(open_store), object_pool: Some(open_object_pool) };

fn open_catalogue(section: &Section<'_>) -> Result<Box<dyn Catalogue>> {
    let config: DaosConfig = section.typed()?;
    let layout = Layout { kv_class: class(section, "kv_class", &config.kv_class)?, oid_batch: u64::from(config.oid_batch.get()) };
    Ok(Box::new(crate::catalogue::open(connect(section, &config)?, &config.root_container, layout)?))
}

fn open_store(section: &Section<'_>) -> Result<Box<dyn Store>> {
    let config: DaosConfig = section.typed()?;
    let class = class(section, "array_class", &config.array_class)?;
    Ok(Box::new(DaosStore::new(connect(section, &config)?, &config.root_container, class, u64::from(config.oid_batch.get()))?))
}

fn open_object_pool(pool: &PoolSection<'_>) -> Result<Box<dyn fieldstore_core::objects::Pool>> {
    let options: DaosPoolOptions = pool.typed()?;
    let (name, prefix) = pool.pool_and_prefix();
    let class = object_class(&options.daos_class)?;
    let library = options.daos_library.unwrap_or_else(default_library);
    let config = PoolConfig { library, pool: name.into(), system: None };
    Ok(Box::new(DaosPool::new(Pool::connect(&config)?, prefix.unwrap_or("fieldio"), class)?))
}

fn class(section: &Section<'_>, key: &str, name: &str) -> Result<u32> {
    object_class(name).map_err(|e| section.error_because(format!("{}.{key} (type 'daos')", section.name), e))
}

fn connect(section: &Section<'_>, config: &DaosConfig) -> Result<std::sync::Arc<Pool>> {
    if config.pool.is_empty() {
        return Err(section.error(format!("{}.pool (type 'daos') must not be empty", section.name)));
    }
    let library = config.library.clone().unwrap_or_else(default_library);
    Pool::connect(&PoolConfig { library, pool: config.pool.clone(), system: config.system.clone() })
}
