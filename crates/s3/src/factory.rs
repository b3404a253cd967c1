//! The backend's [`FACTORY`]: the S3 catalogue and store a config names, opened
//! from their sections ([`crate::config`]). Only the crate root uses it, so no module the
//! backends are made of depends on it.

use fieldstore_core::error::Result;
use fieldstore_core::factory::{Factory, Section};
use fieldstore_core::{Catalogue, Store};

use crate::config::{S3CatalogueConfig, S3StoreConfig};
use crate::layout::Buckets;
use crate::store::S3Store;

/// The S3 catalogue and store, for the facade's list of backends.
pub const FACTORY: Factory = Factory { name: "s3", catalogue: Some(open_catalogue), store: Some(open_store) };

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
