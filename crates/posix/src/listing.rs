//! Directory listings where a directory that does not exist (not yet, or no longer: wiped)
//! simply has no entries.

use std::ffi::OsString;
use std::path::Path;

use fieldstore_core::error::{IoContext, Result};

/// The names of the entries of `dir`; none if it does not exist. `action` names the listing
/// in errors ("read dataset directory").
pub fn names(dir: &Path, action: &'static str) -> Result<Vec<OsString>> {
    let entries = match std::fs::read_dir(dir) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        other => other.ctx(action, dir)?,
    };
    entries.map(|entry| entry.map(|e| e.file_name()).ctx(action, dir)).collect()
}
