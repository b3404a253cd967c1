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
//! they land between the changes made before and after them.

use std::ffi::{c_int, c_void, CString};
use std::sync::{Mutex, MutexGuard};

use libc::{size_t, ssize_t};

struct Files {
    ops: c_int,
    blobs: c_int,
    blob_size: u64,
}

static FILES: Mutex<Option<Files>> = Mutex::new(None);

/// Holds the recorder while a change is made and recorded, so that the order of the lines is
/// the order of the changes, whatever threads make them.
pub struct Recording(MutexGuard<'static, Option<Files>>);

/// The recorder, if recording is asked for.
pub fn start(dir: Option<&CString>) -> Option<Recording> {
    let dir = dir?;
    let mut files = FILES.lock().unwrap_or_else(|p| p.into_inner());
    if files.is_none() {
        let open = |name: &str| {
            let path = CString::new([dir.as_bytes(), b"/", name.as_bytes()].concat()).ok()?;
            let fd = unsafe { libc::open(path.as_ptr(), libc::O_WRONLY | libc::O_APPEND | libc::O_CREAT | libc::O_CLOEXEC, 0o644) };
            (fd >= 0).then_some(fd)
        };
        let (ops, blobs) = (open("ops")?, open("blobs")?);
        let blob_size = unsafe { libc::lseek(blobs, 0, libc::SEEK_END) }.max(0) as u64;
        *files = Some(Files { ops, blobs, blob_size });
    }
    Some(Recording(files))
}

impl Recording {
    /// Records `data` written at `offset` of `path`.
    pub fn write(&mut self, path: &[u8], offset: u64, data: &[u8]) {
        let Some(files) = self.0.as_mut() else { return };
        let at = files.blob_size;
        write_all(files.blobs, data);
        files.blob_size += data.len() as u64;
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
        let n = unsafe { real_write(fd, data.as_ptr().cast(), data.len()) };
        if n <= 0 {
            return;
        }
        data = &data[n as usize..];
    }
}
