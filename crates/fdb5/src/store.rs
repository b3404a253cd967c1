//! FDB5's data files read in place: a field's location is its data file's absolute path,
//! which must lie under one of FDB5's roots. Nothing is written or removed.

use std::collections::HashMap;
use std::fs::File;
use std::os::unix::fs::FileExt;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use fieldstore_core::error::{Error, ErrorKind, IoContext, Result};
use fieldstore_core::{Key, Store, StoreWriter};

use crate::config::allowed_dirs;
use crate::database::within;

/// Open data files kept per store handle.
const MAX_OPEN_FILES: usize = 256;

/// The store side of FDB5's databases.
pub struct Fdb5Store {
    roots: Vec<PathBuf>,
    files: Mutex<HashMap<String, Arc<File>>>,
}

impl Fdb5Store {
    /// A store reading data files under `roots`.
    pub fn new(roots: Vec<PathBuf>) -> Self {
        Fdb5Store { roots: allowed_dirs(&roots), files: Mutex::new(HashMap::new()) }
    }

    fn file(&self, uri: &str) -> Result<Arc<File>> {
        let mut files = self.files.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(file) = files.get(uri) {
            return Ok(file.clone());
        }
        let path = within(&self.roots, uri)?;
        let file = Arc::new(File::open(&path).ctx("open FDB5 data file", &path)?);
        if files.len() >= MAX_OPEN_FILES {
            files.clear();
        }
        files.insert(uri.to_string(), file.clone());
        Ok(file)
    }
}

/// The refusal of every change to FDB5's databases.
pub fn read_only(what: &str) -> Error {
    Error::new(
        ErrorKind::Unsupported,
        format!("{what}: FDB5's databases are read in place, never changed by fieldstore (archive into fieldstore's own store; wipe with FDB5's tools)"),
    )
}

impl Store for Fdb5Store {
    fn writer(&self) -> Result<Box<dyn StoreWriter>> {
        Err(read_only("archive"))
    }

    fn read(&self, uri: &str, offset: u64, buf: &mut [u8]) -> Result<()> {
        self.file(uri)?.read_exact_at(buf, offset).map_err(|e| {
            let what = format!("{} bytes at offset {offset} cannot be read", buf.len());
            Error::corrupt_because("FDB5 data file", uri, what, e)
        })
    }

    fn remove(&self, uri: &str) -> Result<bool> {
        Err(read_only(&format!("removing {uri}")))
    }

    fn wipe_dataset(&self, dataset: &Key) -> Result<()> {
        Err(read_only(&format!("wiping {dataset}")))
    }

    fn describe(&self, dataset: &Key) -> String {
        format!("FDB5 data files of {dataset}, read in place")
    }

    /// Its URIs are absolute paths under its roots, which no store of fieldstore's makes.
    fn claims_uri(&self, uri: &str) -> bool {
        within(&self.roots, uri).is_ok()
    }
}
