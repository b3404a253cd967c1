//! Directory listings where a directory that does not exist (not yet, or no longer: wiped)
//! simply has no entries, and whether a path still names a file opened there.

use std::ffi::OsString;
use std::fs::File;
use std::os::unix::fs::MetadataExt;
use std::path::Path;

use fieldstore_core::error::{Error, IoContext, Result};

/// The names of the entries of `dir`; none if it does not exist. `action` names the listing
/// in errors ("read dataset directory").
pub fn names(dir: &Path, action: &'static str) -> Result<Vec<OsString>> {
    let entries = match std::fs::read_dir(dir) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        other => other.ctx(action, dir)?,
    };
    entries.map(|entry| entry.map(|e| e.file_name()).ctx(action, dir)).collect()
}

/// Whether `path` still names the file `file` was opened as (a wipe renames a data set's
/// directory away: files opened in it are then elsewhere, or gone).
pub fn still_at(file: &File, path: &Path) -> Result<bool> {
    let ours = file.metadata().ctx("stat", path)?;
    Ok(match std::fs::metadata(path) {
        Ok(there) => (there.dev(), there.ino()) == (ours.dev(), ours.ino()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => false,
        Err(e) => return Err(Error::io("stat", path, e)),
    })
}
