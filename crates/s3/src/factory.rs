//! The backend's [`FACTORY`]: the S3 catalogue, store and object pool a config names, opened
//! from their sections ([`crate::config`]). Only the crate root uses it, so no module the
//! backends are made of depends on it.

use fieldstore_core::error::Result;
use fieldstore_core::factory::{Factory, PoolSection, Section};
use fieldstore_core::objects::Pool;
use fieldstore_core::{Catalogue, Store};

use crate::client::S3Client;
use crate::config::{S3CatalogueConfig, S3Config, S3StoreConfig};
use crate::layout::Buckets;
use crate::objects::S3Pool;
use crate::store::S3Store;

/// The S3 catalogue, store and object pool, for the facade's list of backends.
pub const FACTORY: Factory =
    Factory { name: "s3", catalogue: Some(open_catalogue), store: Some(open_store), object_pool: Some(open_object_pool) };

fn open_catalogue(section: &Section<'_>) -> Result<Box<dyn Catalogue>> {
    let config = S3CatalogueConfig::from_section(section)?;
    let buckets = Buckets::connect(&config.s3, section.name)?;
    buckets.home().check_conditional_put()?;
    Ok(Box::new(crate::catalogue::open(buckets)))
}

fn open_store(section: &Section<'_>) -> Result<Box<dyn Store>> {
    let config = S3StoreConfig::from_section(section)?;
    Ok(Box::new(S3Store::new(Buckets::connect(&config.s3, section.name)?, config.in_flight, config.pack)))
}

/// The pool `s3:BUCKET[/PREFIX]` names (containers are folders under PREFIX), at
/// `$AWS_ENDPOINT_URL` (AWS without it) with the `AWS_*` credentials; it takes no options.
fn open_object_pool(pool: &PoolSection<'_>) -> Result<Box<dyn Pool>> {
    let (bucket, prefix) = pool.pool_and_prefix();
    let client = S3Client::connect(&S3Config::from_environment(bucket, prefix.unwrap_or("")), bucket, "s3 pool")?;
    Ok(Box::new(S3Pool::new(client)))
}
