//! Files a live writer still appends to. A writer keeps a shared `flock` on each data and
//! index file it creates for as long as it has the file open (the kernel drops the lock when
//! the process ends, however it ends). Purge and wipe remove a file only under an exclusive
//! lock taken without waiting, so they never remove a file that a writer may yet name in a
//! record it publishes (a purge decides from records read before that writer's next flush).
//! A file left this way stays once its writer has closed it: no later purge finds it yet
//! (the masked indexes that named it are no longer read), which is to be done.
//!
//! On a file system without `flock` (some Lustre mounts) every file counts as unused, as
//! before: there, purge must not run while writers archive into the same data sets (as FDB5
//! requires everywhere).

use std::fs::File;
use std::os::fd::AsRawFd;
use std::path::Path;

/// What became of a file asked to be removed.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Removal {
    Removed,
    /// It was not there.
    Missing,
    /// A live writer holds it: left in place.
    InUse,
}

/// Marks a file just created for appending as held by its writer while open.
pub fn hold(file: &File) {
    // Best effort: where flock is not supported the file is merely unprotected.
    // SAFETY: `file` is borrowed for the call, so its descriptor is open; flock takes no pointers.
    let _ = unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_SH | libc::LOCK_NB) };
}

/// Removes `path` unless a live writer holds it.
pub fn remove_unless_held(path: &Path) -> std::io::Result<Removal> {
    let file = match File::open(path) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Removal::Missing),
        other => other?,
    };
    // SAFETY: `file` is owned by this frame, so its descriptor is open; flock takes no pointers.
    if unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) } != 0 {
        let error = std::io::Error::last_os_error();
        if error.raw_os_error() == Some(libc::EWOULDBLOCK) {
            return Ok(Removal::InUse);
        }
    }
    match std::fs::remove_file(path) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Removal::Missing),
        other => other.map(|()| Removal::Removed),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_held_file_is_left_until_its_writer_closes_it() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f.data");
        let writer = File::create(&path).unwrap();
        hold(&writer);
        assert_eq!(remove_unless_held(&path).unwrap(), Removal::InUse);
        assert!(path.exists());
        drop(writer);
        assert_eq!(remove_unless_held(&path).unwrap(), Removal::Removed);
        assert_eq!(remove_unless_held(&path).unwrap(), Removal::Missing);
    }
}
