//! The `fdb5` backend type: FDB5's databases under `roots`, read in place as a catalogue and
//! a store that refuse every write.
//!
//! ```yaml
//! catalogue: {type: fdb5, roots: [/data/fdb]}
//! store: {type: fdb5, roots: [/data/fdb]}
//! ```

use std::path::PathBuf;

use fieldstore_core::factory::{Factory, Section};
use fieldstore_core::{Catalogue, Result, Store};
use serde::Deserialize;

use crate::catalogue::Fdb5Catalogue;
use crate::store::Fdb5Store;

/// An `fdb5` section: FDB5's roots (catalogue roots and, where FDB5 keeps its data apart,
/// store roots: data files are read only under one of them).
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Fdb5Config {
    /// The directories FDB5's databases are in.
    pub roots: Vec<PathBuf>,
}

/// The `fdb5` type's constructors.
pub const FACTORY: Factory = Factory { name: "fdb5", catalogue: Some(open_catalogue), store: Some(open_store), object_pool: None };

/// The section's roots, a relative one taken from the working directory (as FDB5 does).
fn roots(section: &Section<'_>) -> Result<Vec<PathBuf>> {
    let config: Fdb5Config = section.typed()?;
    if config.roots.is_empty() {
        return Err(section.error(format!("{}.roots: FDB5's roots are one or more directories", section.name)));
    }
    let here = std::env::current_dir().map_err(|e| section.error_because("the working directory, for FDB5's relative roots", e))?;
    Ok(config.roots.into_iter().map(|root| here.join(root)).collect())
}

fn open_catalogue(section: &Section<'_>) -> Result<Box<dyn Catalogue>> {
    Ok(Box::new(Fdb5Catalogue::new(roots(section)?)))
}

fn open_store(section: &Section<'_>) -> Result<Box<dyn Store>> {
    Ok(Box::new(Fdb5Store::new(roots(section)?)))
}
