//! The paths the wrapped calls act on, as absolute paths, and whether they are under the
//! directory the tests watch.

use std::ffi::{c_char, c_int, CStr};

/// The path an open descriptor names (`/dir/#INODE (deleted)` for a file not yet linked).
pub fn of_fd(fd: c_int) -> Vec<u8> {
    let link = format!("/proc/self/fd/{fd}\0");
    let mut buf = [0u8; 4096];
    // SAFETY: `link` is NUL-terminated and `buf` is writable for its length.
    let n = unsafe { libc::readlink(link.as_ptr().cast(), buf.as_mut_ptr().cast(), buf.len()) };
    if n < 0 {
        return Vec::new();
    }
    buf[..n as usize].to_vec()
}

/// The absolute form of a path argument, relative to `dirfd` (or the working directory when it
/// is `AT_FDCWD`). An empty path names `dirfd` itself (`AT_EMPTY_PATH`).
pub fn at(dirfd: c_int, path: *const c_char) -> Vec<u8> {
    if path.is_null() {
        return Vec::new();
    }
    // SAFETY: `path` is not null, and every caller passes the path argument of a wrapped call,
    // which that call's contract makes a NUL-terminated string live for the call.
    let bytes = unsafe { CStr::from_ptr(path) }.to_bytes();
    // A path through /proc/self/fd names the open file (how `linkat` gives a name to an
    // O_TMPFILE file).
    if let Some(fd) = bytes.strip_prefix(b"/proc/self/fd/").and_then(|n| std::str::from_utf8(n).ok()?.parse().ok()) {
        return of_fd(fd);
    }
    if bytes.starts_with(b"/") {
        return bytes.to_vec();
    }
    let base = if dirfd == libc::AT_FDCWD { working_directory() } else { of_fd(dirfd) };
    if bytes.is_empty() {
        return base;
    }
    [&base[..], b"/", bytes].concat()
}

fn working_directory() -> Vec<u8> {
    let mut cwd = [0u8; 4096];
    // SAFETY: `cwd` is writable for its length, which getcwd is told.
    if unsafe { libc::getcwd(cwd.as_mut_ptr().cast(), cwd.len()) }.is_null() {
        return Vec::new();
    }
    let end = cwd.iter().position(|b| *b == 0).unwrap_or(0);
    cwd[..end].to_vec()
}

/// Whether `path` is `root` or under it.
pub fn under(path: &[u8], root: &[u8]) -> bool {
    path.starts_with(root) && matches!(path.get(root.len()), None | Some(b'/'))
}
