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

/// Creates `dir` and whichever of its ancestors are missing, each made durable in its parent (a
/// directory's sync makes its entries durable, not its own name), so that a power loss cannot
/// take away a root or data set directory once anything in it was synced.
pub fn create_dir_durably(dir: &Path) -> Result<()> {
    let missing: Vec<&Path> = dir.ancestors().take_while(|d| !d.as_os_str().is_empty() && !d.exists()).collect();
    for new in missing.into_iter().rev() {
        match std::fs::create_dir(new) {
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
            other => other.ctx("create directory", new)?,
        }
        // A relative path's first component is in the working directory.
        let parent = new.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
        File::open(parent).and_then(|d| d.sync_all()).ctx("sync directory", parent)?;
    }
    Ok(())
}

/// Makes the entries of `dir` durable (names created, renamed or removed in it).
pub fn sync_dir(dir: &Path) -> Result<()> {
    File::open(dir).and_then(|d| d.sync_all()).ctx("sync directory", dir)
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
