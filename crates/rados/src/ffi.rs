//! The librados C functions fieldstore uses, declared from `rados/librados.h` (Ceph 16,
//! Pacific) and resolved at run time from `librados.so.2`, so that fieldstore builds and runs
//! where Ceph is not installed and fails with one clear error only when RADOS is configured.

use std::ffi::{c_char, c_int, c_void};
use std::sync::OnceLock;

use fieldstore_core::error::{Error, Result};

/// `rados_t`: a cluster handle.
pub type RadosT = *mut c_void;
/// `rados_ioctx_t`: an I/O context (one pool, one namespace).
pub type IoCtxT = *mut c_void;

/// The shared library's name (the soname of Debian's `librados2`).
pub const LIBRARY: &str = "librados.so.2";

/// Resolved entry points. Field names are the C names without the `rados_` prefix.
pub struct Librados {
    pub create2: unsafe extern "C" fn(*mut RadosT, *const c_char, *const c_char, u64) -> c_int,
    pub conf_read_file: unsafe extern "C" fn(RadosT, *const c_char) -> c_int,
    pub conf_set: unsafe extern "C" fn(RadosT, *const c_char, *const c_char) -> c_int,
    pub connect: unsafe extern "C" fn(RadosT) -> c_int,
    pub shutdown: unsafe extern "C" fn(RadosT),
    pub ioctx_create: unsafe extern "C" fn(RadosT, *const c_char, *mut IoCtxT) -> c_int,
    pub ioctx_destroy: unsafe extern "C" fn(IoCtxT),
    pub ioctx_set_namespace: unsafe extern "C" fn(IoCtxT, *const c_char),
    pub write_full: unsafe extern "C" fn(IoCtxT, *const c_char, *const c_char, usize) -> c_int,
    pub read: unsafe extern "C" fn(IoCtxT, *const c_char, *mut c_char, usize, u64) -> c_int,
    pub remove: unsafe extern "C" fn(IoCtxT, *const c_char) -> c_int,
    pub stat: unsafe extern "C" fn(IoCtxT, *const c_char, *mut u64, *mut libc::time_t) -> c_int,
    /// Keeps the symbols above valid.
    _library: libloading::Library,
}

static LIBRADOS: OnceLock<std::result::Result<Librados, String>> = OnceLock::new();

/// librados, loaded on first use.
pub fn librados() -> Result<&'static Librados> {
    LIBRADOS.get_or_init(load).as_ref().map_err(|e| Error::Invalid(e.clone()))
}

fn load() -> std::result::Result<Librados, String> {
    // SAFETY: loading librados runs its initialisers, which only set up its own state.
    let library = unsafe { libloading::Library::new(LIBRARY) }.map_err(|e| {
        format!("RADOS is configured but {LIBRARY} cannot be loaded ({e}); install Ceph's client library (Debian: librados2)")
    })?;
    macro_rules! symbol {
        ($name:literal) => {
            // SAFETY: the declared type matches the C prototype in rados/librados.h.
            *unsafe { library.get(concat!($name, "\0").as_bytes()) }.map_err(|e| format!("{LIBRARY}: {e}"))?
        };
    }
    Ok(Librados {
        create2: symbol!("rados_create2"),
        conf_read_file: symbol!("rados_conf_read_file"),
        conf_set: symbol!("rados_conf_set"),
        connect: symbol!("rados_connect"),
        shutdown: symbol!("rados_shutdown"),
        ioctx_create: symbol!("rados_ioctx_create"),
        ioctx_destroy: symbol!("rados_ioctx_destroy"),
        ioctx_set_namespace: symbol!("rados_ioctx_set_namespace"),
        write_full: symbol!("rados_write_full"),
        read: symbol!("rados_read"),
        remove: symbol!("rados_remove"),
        stat: symbol!("rados_stat"),
        _library: library,
    })
}
