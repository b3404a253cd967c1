//! The librados C functions fieldstore uses, declared from `rados/librados.h` (Ceph 16,
//! Pacific) and resolved at run time from `librados.so.2`, so that fieldstore builds and runs
//! where Ceph is not installed and fails with one clear error only when RADOS is configured.

use std::ffi::{c_char, c_int, c_void};
use std::sync::{Arc, OnceLock};

use fieldstore_core::error::{Error, ErrorKind, Result};

/// `rados_t`: a cluster handle.
pub type RadosT = *mut c_void;
/// `rados_ioctx_t`: an I/O context (one pool, one namespace).
pub type IoCtxT = *mut c_void;
/// `rados_write_op_t`: a compound write applied atomically to one object.
pub type WriteOpT = *mut c_void;
/// `rados_read_op_t`: a compound read of one object.
pub type ReadOpT = *mut c_void;
/// `rados_omap_iter_t`: the key/value pairs an omap read returned.
pub type OmapIterT = *mut c_void;
/// `rados_list_ctx_t`: a listing of a pool's objects.
pub type ListCtxT = *mut c_void;
/// `rados_completion_t`: the state of an asynchronous operation.
pub type CompletionT = *mut c_void;
/// `rados_callback_t`: called when an asynchronous operation completes (fieldstore passes
/// none and waits instead).
pub type CallbackT = Option<unsafe extern "C" fn(CompletionT, *mut c_void)>;

/// `LIBRADOS_CREATE_EXCLUSIVE`: creating an existing object fails with `EEXIST`.
pub const CREATE_EXCLUSIVE: c_int = 1;
/// `LIBRADOS_OPERATION_FULL_TRY`: on a full cluster or pool, fail (`ENOSPC`, `EDQUOT`)
/// instead of waiting for space.
pub const OPERATION_FULL_TRY: c_int = 64;
/// `LIBRADOS_OPERATION_FULL_FORCE`: allowed on a full cluster or pool (for deletions, which
/// free space).
pub const OPERATION_FULL_FORCE: c_int = 128;
/// `LIBRADOS_CMPXATTR_OP_EQ`: an omap comparison that holds when the values are equal.
pub const COMPARE_EQUAL: u8 = 1;

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
    pub read: unsafe extern "C" fn(IoCtxT, *const c_char, *mut c_char, usize, u64) -> c_int,
    pub stat: unsafe extern "C" fn(IoCtxT, *const c_char, *mut u64, *mut libc::time_t) -> c_int,
    pub write: unsafe extern "C" fn(IoCtxT, *const c_char, *const c_char, usize, u64) -> c_int,
    pub create_write_op: unsafe extern "C" fn() -> WriteOpT,
    pub release_write_op: unsafe extern "C" fn(WriteOpT),
    pub write_op_create: unsafe extern "C" fn(WriteOpT, c_int, *const c_char),
    pub write_op_write_full: unsafe extern "C" fn(WriteOpT, *const c_char, usize),
    pub write_op_append: unsafe extern "C" fn(WriteOpT, *const c_char, usize),
    pub write_op_remove: unsafe extern "C" fn(WriteOpT),
    pub write_op_assert_exists: unsafe extern "C" fn(WriteOpT),
    pub write_op_omap_set2: unsafe extern "C" fn(WriteOpT, *const *const c_char, *const *const c_char, *const usize, *const usize, usize),
    pub write_op_omap_rm_keys2: unsafe extern "C" fn(WriteOpT, *const *const c_char, *const usize, usize),
    pub write_op_omap_cmp2: unsafe extern "C" fn(WriteOpT, *const c_char, u8, *const c_char, usize, usize, *mut c_int),
    pub write_op_operate: unsafe extern "C" fn(WriteOpT, IoCtxT, *const c_char, *mut libc::time_t, c_int) -> c_int,
    pub aio_write_op_operate: unsafe extern "C" fn(WriteOpT, IoCtxT, CompletionT, *const c_char, *mut libc::time_t, c_int) -> c_int,
    pub aio_read: unsafe extern "C" fn(IoCtxT, *const c_char, CompletionT, *mut c_char, usize, u64) -> c_int,
    pub aio_create_completion2: unsafe extern "C" fn(*mut c_void, CallbackT, *mut CompletionT) -> c_int,
    pub aio_wait_for_complete: unsafe extern "C" fn(CompletionT) -> c_int,
    pub aio_get_return_value: unsafe extern "C" fn(CompletionT) -> c_int,
    pub aio_release: unsafe extern "C" fn(CompletionT),
    pub create_read_op: unsafe extern "C" fn() -> ReadOpT,
    pub release_read_op: unsafe extern "C" fn(ReadOpT),
    pub read_op_omap_get_vals2: unsafe extern "C" fn(ReadOpT, *const c_char, *const c_char, u64, *mut OmapIterT, *mut u8, *mut c_int),
    pub read_op_omap_get_vals_by_keys2:
        unsafe extern "C" fn(ReadOpT, *const *const c_char, usize, *const usize, *mut OmapIterT, *mut c_int),
    pub read_op_operate: unsafe extern "C" fn(ReadOpT, IoCtxT, *const c_char, c_int) -> c_int,
    pub read_op_read: unsafe extern "C" fn(ReadOpT, u64, usize, *mut c_char, *mut usize, *mut c_int),
    pub omap_get_next2: unsafe extern "C" fn(OmapIterT, *mut *mut c_char, *mut *mut c_char, *mut usize, *mut usize) -> c_int,
    pub omap_get_end: unsafe extern "C" fn(OmapIterT),
    pub nobjects_list_open: unsafe extern "C" fn(IoCtxT, *mut ListCtxT) -> c_int,
    pub nobjects_list_next2: unsafe extern "C" fn(
        ListCtxT,
        *mut *const c_char,
        *mut *const c_char,
        *mut *const c_char,
        *mut usize,
        *mut usize,
        *mut usize,
    ) -> c_int,
    pub nobjects_list_close: unsafe extern "C" fn(ListCtxT),
    /// Keeps the symbols above valid.
    _library: libloading::Library,
}

static LIBRADOS: OnceLock<std::result::Result<Librados, Arc<Error>>> = OnceLock::new();

/// librados, loaded on first use (a failure to load it is the answer of every call after).
pub fn librados() -> Result<&'static Librados> {
    LIBRADOS.get_or_init(|| load().map_err(Arc::new)).as_ref().map_err(|e| Error::Shared(e.clone()))
}

fn load() -> Result<Librados> {
    // SAFETY: loading librados runs its initialisers, which only set up its own state.
    let library = unsafe { libloading::Library::new(LIBRARY) }.map_err(|e| {
        let message = format!("RADOS is configured but {LIBRARY} cannot be loaded (install Ceph's client library, Debian: librados2)");
        Error::caused_by(ErrorKind::Unavailable, message, e)
    })?;
    macro_rules! symbol {
        ($name:literal) => {
            // SAFETY: the declared type matches the C prototype in rados/librados.h.
            *unsafe { library.get(concat!($name, "\0").as_bytes()) }.map_err(|e| Error::caused_by(ErrorKind::Unavailable, LIBRARY, e))?
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
        read: symbol!("rados_read"),
        stat: symbol!("rados_stat"),
        write: symbol!("rados_write"),
        create_write_op: symbol!("rados_create_write_op"),
        release_write_op: symbol!("rados_release_write_op"),
        write_op_create: symbol!("rados_write_op_create"),
        write_op_write_full: symbol!("rados_write_op_write_full"),
        write_op_append: symbol!("rados_write_op_append"),
        write_op_remove: symbol!("rados_write_op_remove"),
        write_op_assert_exists: symbol!("rados_write_op_assert_exists"),
        write_op_omap_set2: symbol!("rados_write_op_omap_set2"),
        write_op_omap_rm_keys2: symbol!("rados_write_op_omap_rm_keys2"),
        write_op_omap_cmp2: symbol!("rados_write_op_omap_cmp2"),
        write_op_operate: symbol!("rados_write_op_operate"),
        aio_write_op_operate: symbol!("rados_aio_write_op_operate"),
        aio_read: symbol!("rados_aio_read"),
        aio_create_completion2: symbol!("rados_aio_create_completion2"),
        aio_wait_for_complete: symbol!("rados_aio_wait_for_complete"),
        aio_get_return_value: symbol!("rados_aio_get_return_value"),
        aio_release: symbol!("rados_aio_release"),
        create_read_op: symbol!("rados_create_read_op"),
        release_read_op: symbol!("rados_release_read_op"),
        read_op_omap_get_vals2: symbol!("rados_read_op_omap_get_vals2"),
        read_op_omap_get_vals_by_keys2: symbol!("rados_read_op_omap_get_vals_by_keys2"),
        read_op_operate: symbol!("rados_read_op_operate"),
        read_op_read: symbol!("rados_read_op_read"),
        omap_get_next2: symbol!("rados_omap_get_next2"),
        omap_get_end: symbol!("rados_omap_get_end"),
        nobjects_list_open: symbol!("rados_nobjects_list_open"),
        nobjects_list_next2: symbol!("rados_nobjects_list_next2"),
        nobjects_list_close: symbol!("rados_nobjects_list_close"),
        _library: library,
    })
}
