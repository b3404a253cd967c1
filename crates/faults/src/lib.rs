//! A fault injector for fieldstore's tests, loaded into a command with `LD_PRELOAD`. It wraps
//! the C library's calls that change files (writes, syncs, renames and links, unlinks) and,
//! for calls on files under one directory, counts them by class and fails one:
//!
//! - `FIELDSTORE_FAULT_ROOT=DIR`: only calls on paths under `DIR` count (others pass through);
//! - `FIELDSTORE_FAULT=CLASS:N:KIND`: the `N`th call (from 1) of `CLASS` (`write`, `sync`,
//!   `rename`, `unlink`) fails with `KIND`: `enospc` or `eio` (the call is not made), or
//!   `short` (a write writes half its bytes and says so, as a full disk or a signal may make
//!   it); without it nothing fails;
//! - `FIELDSTORE_FAULT_LOG=FILE`: each counted call appends `CLASS N PATH` to `FILE`, and the
//!   failed one `FAILED CLASS N PATH`: a run without a fault tells a test how many calls of
//!   each class a command makes, so that it can fail each in turn.
//!
//! The wrappers call the real functions through `dlsym(RTLD_NEXT)` and use nothing of the
//! standard library that writes (which would call them again). Rust's standard library calls
//! these same C functions, so they see every file change fieldstore makes.
//!
//! Safety: each wrapper has the contract of the C function it replaces, and passes its
//! arguments on unchanged (a short write passes a shorter count).
#![allow(clippy::missing_safety_doc)]

use std::ffi::{c_char, c_int, c_uint, c_void, CStr, CString};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::OnceLock;

use libc::{off64_t, size_t, ssize_t};

/// A class of calls counted together.
#[derive(Clone, Copy, PartialEq, Debug)]
enum Class {
    Write,
    Sync,
    Rename,
    Unlink,
}

const CLASSES: [Class; 4] = [Class::Write, Class::Sync, Class::Rename, Class::Unlink];

impl Class {
    fn name(self) -> &'static str {
        match self {
            Class::Write => "write",
            Class::Sync => "sync",
            Class::Rename => "rename",
            Class::Unlink => "unlink",
        }
    }
}

#[derive(Clone, Copy, PartialEq, Debug)]
enum Kind {
    NoSpace,
    Io,
    Short,
}

/// What the environment asked for, read once.
struct Settings {
    root: Option<Vec<u8>>,
    fault: Option<(Class, u64, Kind)>,
    log: Option<CString>,
}

fn settings() -> &'static Settings {
    static SETTINGS: OnceLock<Settings> = OnceLock::new();
    SETTINGS.get_or_init(|| {
        let var = |name: &str| std::env::var_os(name).map(std::os::unix::ffi::OsStringExt::into_vec);
        Settings {
            root: var("FIELDSTORE_FAULT_ROOT"),
            fault: var("FIELDSTORE_FAULT").and_then(|v| parse_fault(&String::from_utf8_lossy(&v))),
            log: var("FIELDSTORE_FAULT_LOG").and_then(|v| CString::new(v).ok()),
        }
    })
}

fn parse_fault(text: &str) -> Option<(Class, u64, Kind)> {
    let mut parts = text.split(':');
    let name = parts.next()?;
    let class = CLASSES.into_iter().find(|c| c.name() == name)?;
    let n = parts.next()?.parse().ok()?;
    let kind = match parts.next()? {
        "enospc" => Kind::NoSpace,
        "eio" => Kind::Io,
        "short" if class == Class::Write => Kind::Short,
        _ => return None,
    };
    Some((class, n, kind))
}

static COUNTS: [AtomicU64; 4] = [AtomicU64::new(0), AtomicU64::new(0), AtomicU64::new(0), AtomicU64::new(0)];

/// Looks up the next definition of a C function (the C library's).
macro_rules! real {
    ($name:literal: $ty:ty) => {{
        static REAL: OnceLock<usize> = OnceLock::new();
        let address = *REAL.get_or_init(|| unsafe { libc::dlsym(libc::RTLD_NEXT, concat!($name, "\0").as_ptr().cast()) as usize });
        assert!(address != 0, concat!("fieldstore-faults: no ", $name, " to wrap"));
        unsafe { std::mem::transmute::<usize, $ty>(address) }
    }};
}

/// The path an open descriptor names (for the root filter and the log).
fn fd_path(fd: c_int) -> Vec<u8> {
    let link = format!("/proc/self/fd/{fd}\0");
    let mut buf = [0u8; 4096];
    let n = unsafe { libc::readlink(link.as_ptr().cast(), buf.as_mut_ptr().cast(), buf.len()) };
    if n < 0 {
        return Vec::new();
    }
    buf[..n as usize].to_vec()
}

/// The absolute form of a path argument (relative ones are taken from the working directory).
fn arg_path(path: *const c_char) -> Vec<u8> {
    if path.is_null() {
        return Vec::new();
    }
    let bytes = unsafe { CStr::from_ptr(path) }.to_bytes();
    if bytes.starts_with(b"/") {
        return bytes.to_vec();
    }
    let mut cwd = [0u8; 4096];
    if unsafe { libc::getcwd(cwd.as_mut_ptr().cast(), cwd.len()) }.is_null() {
        return bytes.to_vec();
    }
    let end = cwd.iter().position(|b| *b == 0).unwrap_or(0);
    [&cwd[..end], b"/", bytes].concat()
}

/// Counts a call of `class` on `path`; the fault to inject, if this is the one.
fn count(class: Class, path: &[u8]) -> Option<Kind> {
    let settings = settings();
    let root = settings.root.as_deref()?;
    if !(path.starts_with(root) && matches!(path.get(root.len()), None | Some(b'/'))) {
        return None;
    }
    let n = COUNTS[class as usize].fetch_add(1, Ordering::SeqCst) + 1;
    let fault = settings.fault.filter(|(c, at, _)| *c == class && *at == n).map(|(_, _, kind)| kind);
    log(if fault.is_some() { "FAILED " } else { "" }, class, n, path);
    fault
}

/// Appends a line to the log (opened each time: a command may fork or close descriptors).
fn log(prefix: &str, class: Class, n: u64, path: &[u8]) {
    let Some(file) = &settings().log else { return };
    let line = [prefix.as_bytes(), class.name().as_bytes(), format!(" {n} ").as_bytes(), path, b"\n"].concat();
    let real_write = real!("write": unsafe extern "C" fn(c_int, *const c_void, size_t) -> ssize_t);
    unsafe {
        let fd = libc::open(file.as_ptr(), libc::O_WRONLY | libc::O_APPEND | libc::O_CREAT | libc::O_CLOEXEC, 0o644);
        if fd >= 0 {
            real_write(fd, line.as_ptr().cast(), line.len());
            libc::close(fd);
        }
    }
}

/// Sets `errno` for a failed call and returns -1.
fn fail(kind: Kind) -> c_int {
    let errno = if kind == Kind::NoSpace { libc::ENOSPC } else { libc::EIO };
    unsafe { *libc::__errno_location() = errno };
    -1
}

/// The byte count a short write makes of `count`.
fn shortened(count: size_t) -> size_t {
    (count / 2).max(count.min(1))
}

#[no_mangle]
pub unsafe extern "C" fn write(fd: c_int, buf: *const c_void, count: size_t) -> ssize_t {
    let real = real!("write": unsafe extern "C" fn(c_int, *const c_void, size_t) -> ssize_t);
    match count_fd(Class::Write, fd) {
        Some(Kind::Short) => real(fd, buf, shortened(count)),
        Some(kind) => fail(kind) as ssize_t,
        None => real(fd, buf, count),
    }
}

#[no_mangle]
pub unsafe extern "C" fn pwrite64(fd: c_int, buf: *const c_void, count: size_t, offset: off64_t) -> ssize_t {
    let real = real!("pwrite64": unsafe extern "C" fn(c_int, *const c_void, size_t, off64_t) -> ssize_t);
    match count_fd(Class::Write, fd) {
        Some(Kind::Short) => real(fd, buf, shortened(count), offset),
        Some(kind) => fail(kind) as ssize_t,
        None => real(fd, buf, count, offset),
    }
}

#[no_mangle]
pub unsafe extern "C" fn writev(fd: c_int, iov: *const libc::iovec, iovcnt: c_int) -> ssize_t {
    let real = real!("writev": unsafe extern "C" fn(c_int, *const libc::iovec, c_int) -> ssize_t);
    match count_fd(Class::Write, fd) {
        // A short vectored write: the first buffer's half.
        Some(Kind::Short) if iovcnt > 0 => {
            let first = &*iov;
            let real_write = real!("write": unsafe extern "C" fn(c_int, *const c_void, size_t) -> ssize_t);
            real_write(fd, first.iov_base, shortened(first.iov_len))
        }
        Some(kind) if kind != Kind::Short => fail(kind) as ssize_t,
        _ => real(fd, iov, iovcnt),
    }
}

/// Counts a call on a descriptor.
fn count_fd(class: Class, fd: c_int) -> Option<Kind> {
    settings().root.as_ref()?;
    count(class, &fd_path(fd))
}

#[no_mangle]
pub unsafe extern "C" fn fsync(fd: c_int) -> c_int {
    let real = real!("fsync": unsafe extern "C" fn(c_int) -> c_int);
    count_fd(Class::Sync, fd).map_or_else(|| real(fd), fail)
}

#[no_mangle]
pub unsafe extern "C" fn fdatasync(fd: c_int) -> c_int {
    let real = real!("fdatasync": unsafe extern "C" fn(c_int) -> c_int);
    count_fd(Class::Sync, fd).map_or_else(|| real(fd), fail)
}

/// Counts a call naming a path (relative to `dirfd` when it is not `AT_FDCWD`).
fn count_at(class: Class, dirfd: c_int, path: *const c_char) -> Option<Kind> {
    settings().root.as_ref()?;
    let relative = !path.is_null() && unsafe { *path } != b'/' as c_char;
    let full = if dirfd != libc::AT_FDCWD && relative {
        [fd_path(dirfd), b"/".to_vec(), unsafe { CStr::from_ptr(path) }.to_bytes().to_vec()].concat()
    } else {
        arg_path(path)
    };
    count(class, &full)
}

#[no_mangle]
pub unsafe extern "C" fn rename(old: *const c_char, new: *const c_char) -> c_int {
    let real = real!("rename": unsafe extern "C" fn(*const c_char, *const c_char) -> c_int);
    count_at(Class::Rename, libc::AT_FDCWD, new).map_or_else(|| real(old, new), fail)
}

#[no_mangle]
pub unsafe extern "C" fn renameat(olddir: c_int, old: *const c_char, newdir: c_int, new: *const c_char) -> c_int {
    let real = real!("renameat": unsafe extern "C" fn(c_int, *const c_char, c_int, *const c_char) -> c_int);
    count_at(Class::Rename, newdir, new).map_or_else(|| real(olddir, old, newdir, new), fail)
}

#[no_mangle]
pub unsafe extern "C" fn renameat2(olddir: c_int, old: *const c_char, newdir: c_int, new: *const c_char, flags: c_uint) -> c_int {
    let real = real!("renameat2": unsafe extern "C" fn(c_int, *const c_char, c_int, *const c_char, c_uint) -> c_int);
    count_at(Class::Rename, newdir, new).map_or_else(|| real(olddir, old, newdir, new, flags), fail)
}

#[no_mangle]
pub unsafe extern "C" fn link(old: *const c_char, new: *const c_char) -> c_int {
    let real = real!("link": unsafe extern "C" fn(*const c_char, *const c_char) -> c_int);
    count_at(Class::Rename, libc::AT_FDCWD, new).map_or_else(|| real(old, new), fail)
}

#[no_mangle]
pub unsafe extern "C" fn linkat(olddir: c_int, old: *const c_char, newdir: c_int, new: *const c_char, flags: c_int) -> c_int {
    let real = real!("linkat": unsafe extern "C" fn(c_int, *const c_char, c_int, *const c_char, c_int) -> c_int);
    count_at(Class::Rename, newdir, new).map_or_else(|| real(olddir, old, newdir, new, flags), fail)
}

#[no_mangle]
pub unsafe extern "C" fn unlink(path: *const c_char) -> c_int {
    let real = real!("unlink": unsafe extern "C" fn(*const c_char) -> c_int);
    count_at(Class::Unlink, libc::AT_FDCWD, path).map_or_else(|| real(path), fail)
}

#[no_mangle]
pub unsafe extern "C" fn unlinkat(dir: c_int, path: *const c_char, flags: c_int) -> c_int {
    let real = real!("unlinkat": unsafe extern "C" fn(c_int, *const c_char, c_int) -> c_int);
    count_at(Class::Unlink, dir, path).map_or_else(|| real(dir, path, flags), fail)
}

#[no_mangle]
pub unsafe extern "C" fn rmdir(path: *const c_char) -> c_int {
    let real = real!("rmdir": unsafe extern "C" fn(*const c_char) -> c_int);
    count_at(Class::Unlink, libc::AT_FDCWD, path).map_or_else(|| real(path), fail)
}
