//! Fault injection and change recording for fieldstore's tests, loaded into a command with
//! `LD_PRELOAD`. It wraps the C library's calls that change files (writes, syncs, renames and
//! links, unlinks, mkdir) and acts on those under one directory:
//!
//! - `FIELDSTORE_FAULT_ROOT=DIR`: only calls on paths under `DIR` count (others pass through);
//! - `FIELDSTORE_FAULT=CLASS:N:KIND`: the `N`th call (from 1) of `CLASS` (`write`, `sync`,
//!   `rename`, `unlink`) fails with `KIND`: `enospc` or `eio` (the call is not made), or
//!   `short` (a write writes half its bytes and says so, as a full disk or a signal may make
//!   it); without it nothing fails;
//! - `FIELDSTORE_FAULT_LOG=FILE`: each counted call appends `CLASS N PATH` to `FILE`, and the
//!   failed one `FAILED CLASS N PATH`: a run without a fault tells a test how many calls of
//!   each class a command makes, so that it can fail each in turn;
//! - `FIELDSTORE_RECORD=DIR`: every change made is recorded, with the bytes written, for the
//!   crash-state simulator ([`record`]).
//!
//! The wrappers call the real functions through `dlsym(RTLD_NEXT)` and use nothing of the
//! standard library that writes (which would call them again). Rust's standard library calls
//! these same C functions, so they see every file change fieldstore makes.
//!
//! Safety: each wrapper has the contract of the C function it replaces, and passes its
//! arguments on unchanged (a short write passes a shorter count).
#![allow(clippy::missing_safety_doc)]

mod paths;
pub mod record;

use std::ffi::{c_char, c_int, c_uint, c_void, CString};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::OnceLock;

use libc::{mode_t, off64_t, size_t, ssize_t};

use record::Recording;

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
    /// The process is killed before the call.
    Kill,
    /// The process stops before the call, which is made once it is continued.
    Stop,
}

/// What the environment asked for, read once.
struct Settings {
    root: Option<Vec<u8>>,
    fault: Option<(Class, u64, Kind)>,
    log: Option<CString>,
    record: Option<CString>,
}

fn settings() -> &'static Settings {
    static SETTINGS: OnceLock<Settings> = OnceLock::new();
    SETTINGS.get_or_init(|| {
        let var = |name: &str| std::env::var_os(name).map(std::os::unix::ffi::OsStringExt::into_vec);
        Settings {
            root: var("FIELDSTORE_FAULT_ROOT"),
            fault: var("FIELDSTORE_FAULT").and_then(|v| parse_fault(&String::from_utf8_lossy(&v))),
            log: var("FIELDSTORE_FAULT_LOG").and_then(|v| CString::new(v).ok()),
            record: var("FIELDSTORE_RECORD").and_then(|v| CString::new(v).ok()),
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
        "kill" => Kind::Kill,
        "stop" => Kind::Stop,
        _ => return None,
    };
    Some((class, n, kind))
}

static COUNTS: [AtomicU64; 4] = [AtomicU64::new(0), AtomicU64::new(0), AtomicU64::new(0), AtomicU64::new(0)];

/// Looks up the next definition of a C function (the C library's).
#[macro_export]
#[doc(hidden)]
macro_rules! real {
    ($name:literal: $ty:ty) => {{
        static REAL: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
        let address = *REAL.get_or_init(|| {
            // SAFETY: dlsym is given RTLD_NEXT and a NUL-terminated symbol name; it only looks the name up.
            unsafe { libc::dlsym(libc::RTLD_NEXT, concat!($name, "\0").as_ptr().cast()) as usize }
        });
        assert!(address != 0, concat!("fieldstore-faults: no ", $name, " to wrap"));
        // SAFETY: `address` is the non-null address of the C library's function `$name`, whose C
        // signature the caller gives as `$ty`; a usize and a function pointer have the same size.
        unsafe { std::mem::transmute::<usize, $ty>(address) }
    }};
}

/// A call under the watched directory: the fault to inject into it, if it is the one, and
/// the recorder, held until the change is recorded.
struct Watched {
    fault: Option<Kind>,
    recording: Option<Recording>,
}

/// Looks at a call of `class` on `path` (and, for renames and links, `other`).
fn watch(class: Class, path: &[u8], other: Option<&[u8]>) -> Option<Watched> {
    let settings = settings();
    let root = settings.root.as_deref()?;
    if !(paths::under(path, root) || other.is_some_and(|o| paths::under(o, root))) {
        return None;
    }
    let n = COUNTS[class as usize].fetch_add(1, Ordering::SeqCst) + 1;
    let fault = settings.fault.filter(|(c, at, _)| *c == class && *at == n).map(|(_, _, kind)| kind);
    log(if fault.is_some() { "FAILED " } else { "" }, class, n, path);
    let signal = match fault {
        Some(Kind::Kill) => Some(libc::SIGKILL),
        Some(Kind::Stop) => Some(libc::SIGSTOP),
        _ => None,
    };
    if let Some(signal) = signal {
        // SAFETY: raise takes no pointers; SIGKILL ends the process, SIGSTOP returns once it
        // is continued, and the call is then made as if nothing had been asked.
        unsafe { libc::raise(signal) };
        return Some(Watched { fault: None, recording: record::start(settings.record.as_ref()) });
    }
    Some(Watched { fault, recording: record::start(settings.record.as_ref()) })
}

/// Appends a line to the log (opened each time: a command may fork or close descriptors).
fn log(prefix: &str, class: Class, n: u64, path: &[u8]) {
    let Some(file) = &settings().log else { return };
    let line = [prefix.as_bytes(), class.name().as_bytes(), format!(" {n} ").as_bytes(), path, b"\n"].concat();
    let real_write = real!("write": unsafe extern "C" fn(c_int, *const c_void, size_t) -> ssize_t);
    // SAFETY: `file` is a NUL-terminated path; `line` is readable for its length; the
    // descriptor is this function's own, written only while open and closed once.
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
    // SAFETY: __errno_location returns a valid pointer to this thread's errno.
    unsafe { *libc::__errno_location() = errno };
    -1
}

/// The byte count a short write makes of `count`.
fn shortened(count: size_t) -> size_t {
    (count / 2).max(count.min(1))
}

/// A write of `count` bytes from `buf` to `fd` (at `offset`, or at the descriptor's position),
/// made by `real` with the count it is given.
unsafe fn watched_write(fd: c_int, buf: *const u8, count: size_t, offset: Option<off64_t>, real: impl Fn(size_t) -> ssize_t) -> ssize_t {
    let Some(mut watched) = watch(Class::Write, &paths::of_fd(fd), None) else { return real(count) };
    let n = match watched.fault {
        Some(Kind::Short) => real(shortened(count)),
        Some(kind) => return fail(kind) as ssize_t,
        None => real(count),
    };
    if let (Some(recording), true) = (watched.recording.as_mut(), n > 0) {
        // Without an offset the write went to the descriptor's position (the end, with
        // O_APPEND), which it has moved past what it wrote.
        // SAFETY: lseek takes no pointers; on a bad descriptor it returns -1.
        let at = offset.unwrap_or_else(|| unsafe { libc::lseek(fd, 0, libc::SEEK_CUR) } - n as off64_t);
        // SAFETY: `buf` is readable for `count` bytes (this function's contract, write(2)'s),
        // and the real write wrote `n` of them, at most `count`.
        recording.write(&paths::of_fd(fd), at as u64, unsafe { std::slice::from_raw_parts(buf, n as usize) });
    }
    n
}

/// `write(2)`: counted as a write under the watched directory, failed or shortened if it is
/// the one, and recorded.
#[no_mangle]
pub unsafe extern "C" fn write(fd: c_int, buf: *const c_void, count: size_t) -> ssize_t {
    let real = real!("write": unsafe extern "C" fn(c_int, *const c_void, size_t) -> ssize_t);
    // SAFETY: write(2)'s contract, this function's: `buf` is readable for `count` bytes; the
    // real write is given the same arguments, with a count no larger.
    unsafe { watched_write(fd, buf.cast(), count, None, |n| real(fd, buf, n)) }
}

/// `pwrite64(2)`: counted as a write under the watched directory, failed or shortened if it
/// is the one, and recorded.
#[no_mangle]
pub unsafe extern "C" fn pwrite64(fd: c_int, buf: *const c_void, count: size_t, offset: off64_t) -> ssize_t {
    let real = real!("pwrite64": unsafe extern "C" fn(c_int, *const c_void, size_t, off64_t) -> ssize_t);
    // SAFETY: pwrite64(2)'s contract, this function's: `buf` is readable for `count` bytes;
    // the real pwrite64 is given the same arguments, with a count no larger.
    unsafe { watched_write(fd, buf.cast(), count, Some(offset), |n| real(fd, buf, n, offset)) }
}

/// A vectored write is made as one write of its buffers joined (the same bytes, in one call).
#[no_mangle]
pub unsafe extern "C" fn writev(fd: c_int, iov: *const libc::iovec, iovcnt: c_int) -> ssize_t {
    let real = real!("writev": unsafe extern "C" fn(c_int, *const libc::iovec, c_int) -> ssize_t);
    if settings().root.is_none() || iovcnt <= 0 {
        // SAFETY: the caller's arguments, passed on unchanged under writev(2)'s contract.
        return unsafe { real(fd, iov, iovcnt) };
    }
    // SAFETY: writev(2)'s contract, this function's: `iov` points to `iovcnt` (> 0) iovecs.
    let slices = unsafe { std::slice::from_raw_parts(iov, iovcnt as usize) };
    let joined: Vec<u8> = slices
        .iter()
        .filter(|v| v.iov_len > 0) // an empty buffer may have a null base
        // SAFETY: writev(2)'s contract: each non-empty iovec's base is readable for its length.
        .flat_map(|v| unsafe { std::slice::from_raw_parts(v.iov_base as *const u8, v.iov_len) })
        .copied()
        .collect();
    // SAFETY: `joined` is readable for its length and lives across the call.
    unsafe { write(fd, joined.as_ptr().cast(), joined.len()) }
}

/// A sync of a file or directory.
unsafe fn watched_sync(fd: c_int, real: impl Fn() -> c_int) -> c_int {
    let path = paths::of_fd(fd);
    let Some(mut watched) = watch(Class::Sync, &path, None) else { return real() };
    if let Some(kind) = watched.fault {
        return fail(kind);
    }
    let result = real();
    if let (Some(recording), 0) = (watched.recording.as_mut(), result) {
        recording.change("sync", &path, None);
    }
    result
}

/// `fsync(2)`: counted as a sync under the watched directory, failed if it is the one, and
/// recorded.
#[no_mangle]
pub unsafe extern "C" fn fsync(fd: c_int) -> c_int {
    let real = real!("fsync": unsafe extern "C" fn(c_int) -> c_int);
    // SAFETY: the real fsync is given the caller's descriptor unchanged; it takes no pointers.
    unsafe { watched_sync(fd, || real(fd)) }
}

/// `fdatasync(2)`: counted as a sync under the watched directory, failed if it is the one, and
/// recorded.
#[no_mangle]
pub unsafe extern "C" fn fdatasync(fd: c_int) -> c_int {
    let real = real!("fdatasync": unsafe extern "C" fn(c_int) -> c_int);
    // SAFETY: the real fdatasync is given the caller's descriptor unchanged; it takes no pointers.
    unsafe { watched_sync(fd, || real(fd)) }
}

/// A change of directory entries: `op` on `path` (and `other`, the new name of a rename or
/// link), counted as `class`.
unsafe fn watched_change(class: Class, op: &str, path: Vec<u8>, other: Option<Vec<u8>>, real: impl Fn() -> c_int) -> c_int {
    // Renames and links are counted and named by the name they make.
    let named = other.as_deref().unwrap_or(&path);
    let Some(mut watched) = watch(class, named, other.as_ref().map(|_| &path[..])) else { return real() };
    if let Some(kind) = watched.fault {
        return fail(kind);
    }
    let result = real();
    if let (Some(recording), 0) = (watched.recording.as_mut(), result) {
        recording.change(op, &path, other.as_deref());
    }
    result
}

/// `rename(2)`: counted as a rename under the watched directory, failed if it is the one,
/// and recorded.
#[no_mangle]
pub unsafe extern "C" fn rename(old: *const c_char, new: *const c_char) -> c_int {
    let real = real!("rename": unsafe extern "C" fn(*const c_char, *const c_char) -> c_int);
    let (from, to) = (paths::at(libc::AT_FDCWD, old), paths::at(libc::AT_FDCWD, new));
    // SAFETY: the real rename is given the caller's arguments unchanged, under rename(2)'s contract
    // (NUL-terminated paths).
    unsafe { watched_change(Class::Rename, "rename", from, Some(to), || real(old, new)) }
}

/// `renameat(2)`: counted as a rename under the watched directory, failed if it is the one,
/// and recorded.
#[no_mangle]
pub unsafe extern "C" fn renameat(olddir: c_int, old: *const c_char, newdir: c_int, new: *const c_char) -> c_int {
    let real = real!("renameat": unsafe extern "C" fn(c_int, *const c_char, c_int, *const c_char) -> c_int);
    let (from, to) = (paths::at(olddir, old), paths::at(newdir, new));
    // SAFETY: the real renameat is given the caller's arguments unchanged, under renameat(2)'s contract
    // (NUL-terminated paths).
    unsafe { watched_change(Class::Rename, "rename", from, Some(to), || real(olddir, old, newdir, new)) }
}

/// `renameat2(2)`: counted as a rename under the watched directory, failed if it is the one,
/// and recorded.
#[no_mangle]
pub unsafe extern "C" fn renameat2(olddir: c_int, old: *const c_char, newdir: c_int, new: *const c_char, flags: c_uint) -> c_int {
    let real = real!("renameat2": unsafe extern "C" fn(c_int, *const c_char, c_int, *const c_char, c_uint) -> c_int);
    let (from, to) = (paths::at(olddir, old), paths::at(newdir, new));
    // SAFETY: the real renameat2 is given the caller's arguments unchanged, under renameat2(2)'s contract
    // (NUL-terminated paths).
    unsafe { watched_change(Class::Rename, "rename", from, Some(to), || real(olddir, old, newdir, new, flags)) }
}

/// `link(2)`: counted as a rename under the watched directory, failed if it is the one, and
/// recorded.
#[no_mangle]
pub unsafe extern "C" fn link(old: *const c_char, new: *const c_char) -> c_int {
    let real = real!("link": unsafe extern "C" fn(*const c_char, *const c_char) -> c_int);
    let (from, to) = (paths::at(libc::AT_FDCWD, old), paths::at(libc::AT_FDCWD, new));
    // SAFETY: the real link is given the caller's arguments unchanged, under link(2)'s contract
    // (NUL-terminated paths).
    unsafe { watched_change(Class::Rename, "link", from, Some(to), || real(old, new)) }
}

/// `linkat(2)`: counted as a rename under the watched directory, failed if it is the one,
/// and recorded.
#[no_mangle]
pub unsafe extern "C" fn linkat(olddir: c_int, old: *const c_char, newdir: c_int, new: *const c_char, flags: c_int) -> c_int {
    let real = real!("linkat": unsafe extern "C" fn(c_int, *const c_char, c_int, *const c_char, c_int) -> c_int);
    let (from, to) = (paths::at(olddir, old), paths::at(newdir, new));
    // SAFETY: the real linkat is given the caller's arguments unchanged, under linkat(2)'s contract
    // (NUL-terminated paths).
    unsafe { watched_change(Class::Rename, "link", from, Some(to), || real(olddir, old, newdir, new, flags)) }
}

/// `unlink(2)`: counted as an unlink under the watched directory, failed if it is the one,
/// and recorded.
#[no_mangle]
pub unsafe extern "C" fn unlink(path: *const c_char) -> c_int {
    let real = real!("unlink": unsafe extern "C" fn(*const c_char) -> c_int);
    // SAFETY: the real unlink is given the caller's arguments unchanged, under unlink(2)'s contract
    // (NUL-terminated path).
    unsafe { watched_change(Class::Unlink, "unlink", paths::at(libc::AT_FDCWD, path), None, || real(path)) }
}

/// `unlinkat(2)` (an unlink or, with `AT_REMOVEDIR`, a rmdir): counted as an unlink under
/// the watched directory, failed if it is the one, and recorded.
#[no_mangle]
pub unsafe extern "C" fn unlinkat(dir: c_int, path: *const c_char, flags: c_int) -> c_int {
    let real = real!("unlinkat": unsafe extern "C" fn(c_int, *const c_char, c_int) -> c_int);
    let op = if flags & libc::AT_REMOVEDIR != 0 { "rmdir" } else { "unlink" };
    // SAFETY: the real unlinkat is given the caller's arguments unchanged, under unlinkat(2)'s contract
    // (NUL-terminated path).
    unsafe { watched_change(Class::Unlink, op, paths::at(dir, path), None, || real(dir, path, flags)) }
}

/// `rmdir(2)`: counted as an unlink under the watched directory, failed if it is the one,
/// and recorded.
#[no_mangle]
pub unsafe extern "C" fn rmdir(path: *const c_char) -> c_int {
    let real = real!("rmdir": unsafe extern "C" fn(*const c_char) -> c_int);
    // SAFETY: the real rmdir is given the caller's arguments unchanged, under rmdir(2)'s contract
    // (NUL-terminated path).
    unsafe { watched_change(Class::Unlink, "rmdir", paths::at(libc::AT_FDCWD, path), None, || real(path)) }
}

/// File creation is recorded, never failed (it is no class of its own). `open64` is what
/// Rust's standard library calls; C declares it variadic, but the third argument (the mode,
/// passed whenever `O_CREAT` is) is read from the same register either way on x86-64 and
/// AArch64 Linux.
#[no_mangle]
pub unsafe extern "C" fn open64(path: *const c_char, flags: c_int, mode: mode_t) -> c_int {
    let real = real!("open64": unsafe extern "C" fn(*const c_char, c_int, mode_t) -> c_int);
    if flags & libc::O_CREAT == 0 || settings().record.is_none() {
        // SAFETY: the real open64 is given the caller's arguments unchanged, under open(2)'s contract.
        return unsafe { real(path, flags, mode) };
    }
    make_new("create", paths::at(libc::AT_FDCWD, path), || {
        // SAFETY: `path` is NUL-terminated (open(2)'s contract, this function's); access only reads it.
        let existed = unsafe { libc::access(path, libc::F_OK) } == 0;
        // SAFETY: the real open64 is given the caller's arguments unchanged, under open(2)'s contract.
        let fd = unsafe { real(path, flags, mode) };
        (fd, fd >= 0 && !existed)
    })
}

/// Directory creation is recorded, never failed (it is no class of its own).
#[no_mangle]
pub unsafe extern "C" fn mkdir(path: *const c_char, mode: mode_t) -> c_int {
    let real = real!("mkdir": unsafe extern "C" fn(*const c_char, mode_t) -> c_int);
    make_new("mkdir", paths::at(libc::AT_FDCWD, path), || {
        // SAFETY: the real mkdir is given the caller's arguments unchanged, under mkdir(2)'s
        // contract (a NUL-terminated path).
        let result = unsafe { real(path, mode) };
        (result, result == 0)
    })
}

/// `mkdirat(2)`: recorded like [`mkdir`], never failed.
#[no_mangle]
pub unsafe extern "C" fn mkdirat(dir: c_int, path: *const c_char, mode: mode_t) -> c_int {
    let real = real!("mkdirat": unsafe extern "C" fn(c_int, *const c_char, mode_t) -> c_int);
    make_new("mkdir", paths::at(dir, path), || {
        // SAFETY: the real mkdirat is given the caller's arguments unchanged, under mkdirat(2)'s
        // contract (a NUL-terminated path).
        let result = unsafe { real(dir, path, mode) };
        (result, result == 0)
    })
}

/// Makes a new file or directory (`op`: `create` or `mkdir`) at `path` with `make`, which
/// returns the call's result and whether it made something new; records it when it is under
/// the watched root. The recorder's lock is held across the call, as for every other change:
/// else another process could make and log a change inside the new directory first, and the
/// log would name a directory before it exists.
fn make_new(op: &str, path: Vec<u8>, make: impl FnOnce() -> (c_int, bool)) -> c_int {
    let settings = settings();
    let watched = settings.root.as_deref().is_some_and(|root| paths::under(&path, root));
    let mut recording = if watched { record::start(settings.record.as_ref()) } else { None };
    let (result, made) = make();
    if let (Some(recording), true) = (recording.as_mut(), made) {
        recording.change(op, &path, None);
    }
    result
}
