//! Recording every change the wrapped calls make under the watched directory, for the tests'
//! crash-state simulator (crates/fieldstore/tests/power_loss.rs), which rebuilds from it the
//! states a power loss could leave. With `FIELDSTORE_RECORD=DIR`, each change appends a line
//! to `DIR/ops`, fields separated by tabs, in the order the changes were made:
//!
//! ```text
//! write   PATH  OFFSET  LENGTH  BLOB-OFFSET   LENGTH bytes written at OFFSET (they are in DIR/blobs)
//! sync    PATH                                fsync or fdatasync of a file or directory
//! create  PATH                                a new file (open with O_CREAT)
//! mkdir   PATH
//! rename  OLD   NEW
//! link    OLD   NEW                           OLD may be `/dir/#INODE (deleted)` (O_TMPFILE)
//! unlink  PATH
//! rmdir   PATH
//! ```
//!
//! A program under test may append its own lines to `DIR/ops` (marks of what it has done);
//! they land between the changes made before and after them. Several processes may record
//! into one log: each change is made and recorded under an exclusive `flock` of `DIR/ops`, so
//! the lines of all of them are in the order of their changes too.

use std::ffi::{c_int, c_void, CString};
use std::sync::{Mutex, MutexGuard};

use libc::{size_t, ssize_t};

struct Files {
    ops: c_int,
    blobs: c_int,
}

static FILES: Mutex<Option<Files>> = Mutex::new(None);

/// Holds the recorder, and the log's lock, while a change is made and recorded, so that the
/// order of the lines is the order of the changes, whatever threads and processes make them.
pub struct Recording(MutexGuard<'static, Option<Files>>);

impl Drop for Recording {
    fn drop(&mut self) {
        if let Some(files) = self.0.as_ref() {
            // SAFETY: `ops` is a descriptor this module opened and never closes; flock takes no pointers.
            unsafe { libc::flock(files.ops, libc::LOCK_UN) };
        }
    }
}

/// The recorder, if recording is asked for.
pub fn start(dir: Option<&CString>) -> Option<Recording> {
    let dir = dir?;
    let mut files = FILES.lock().unwrap_or_else(|p| p.into_inner());
    if files.is_none() {
        let open = |name: &str| {
            let path = CString::new([dir.as_bytes(), b"/", name.as_bytes()].concat()).ok()?;
            // SAFETY: `path` is a NUL-terminated string that lives across the call.
            let fd = unsafe { libc::open(path.as_ptr(), libc::O_WRONLY | libc::O_APPEND | libc::O_CREAT | libc::O_CLOEXEC, 0o644) };
            (fd >= 0).then_some(fd)
        };
        let (ops, blobs) = (open("ops")?, open("blobs")?);
        *files = Some(Files { ops, blobs });
    }
    let ops = files.as_ref()?.ops;
    // SAFETY: a descriptor this module opened; the lock is released when the Recording drops.
    while unsafe { libc::flock(ops, libc::LOCK_EX) } != 0 {
        if std::io::Error::last_os_error().raw_os_error() != Some(libc::EINTR) {
            return None;
        }
    }
    Some(Recording(files))
}

impl Recording {
    /// Records `data` written at `offset` of `path`.
    pub fn write(&mut self, path: &[u8], offset: u64, data: &[u8]) {
        let Some(files) = self.0.as_mut() else { return };
        // The blobs' end, which other processes move too (under the same lock).
        // SAFETY: `blobs` is a descriptor this module opened and never closes; lseek takes no pointers.
        let at = unsafe { libc::lseek(files.blobs, 0, libc::SEEK_END) }.max(0) as u64;
        write_all(files.blobs, data);
        let line = [b"write\t", path, format!("\t{offset}\t{}\t{at}\n", data.len()).as_bytes()].concat();
        write_all(files.ops, &line);
    }

    /// Records a change named by one or two paths.
    pub fn change(&mut self, op: &str, path: &[u8], other: Option<&[u8]>) {
        let Some(files) = self.0.as_mut() else { return };
        let mut line = [op.as_bytes(), b"\t", path].concat();
        if let Some(other) = other {
            line.extend_from_slice(b"\t");
            line.extend_from_slice(other);
        }
        line.push(b'\n');
        write_all(files.ops, &line);
    }
}

fn write_all(fd: c_int, mut data: &[u8]) {
    let real_write = crate::real!("write": unsafe extern "C" fn(c_int, *const c_void, size_t) -> ssize_t);
    while !data.is_empty() {
        // SAFETY: `data` is readable for its length; `real_write` is the C library's write.
        let n = unsafe { real_write(fd, data.as_ptr().cast(), data.len()) };
        if n <= 0 {
            return;
        }
        data = &data[n as usize..];
    }
}
