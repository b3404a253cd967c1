//! The libdaos functions fieldstore calls, declared from DAOS' public headers and resolved at
//! run time, so fieldstore builds and runs without DAOS and fails with one clear error only
//! when DAOS is configured. Where a header maps a name to a versioned symbol
//! (`#define daos_cont_open daos_cont_open2`), the versioned symbol is resolved.

use std::ffi::{c_char, c_int, c_void};
use std::sync::Mutex;

use fieldstore_core::error::{Error, ErrorKind, Result};
use fieldstore_daos_sys::*;

/// The library loaded when a configuration names none (the soname of DAOS 2.x's client).
pub const DEFAULT_LIBRARY: &str = "libdaos.so.2";

type Event = *mut c_void;
type H = daos_handle_t;

/// Resolved entry points. Field names are the C names without the `daos_` prefix.
pub struct Libdaos {
    /// The file it was loaded from.
    pub path: String,
    pub init: unsafe extern "C" fn() -> c_int,
    pub pool_connect: unsafe extern "C" fn(*const c_char, *const c_char, u32, *mut H, *mut c_void, Event) -> c_int,
    pub pool_disconnect: unsafe extern "C" fn(H, Event) -> c_int,
    pub cont_create_with_label: unsafe extern "C" fn(H, *const c_char, *mut c_void, *mut [u8; 16], Event) -> c_int,
    pub cont_open: unsafe extern "C" fn(H, *const c_char, u32, *mut H, *mut c_void, Event) -> c_int,
    pub cont_close: unsafe extern "C" fn(H, Event) -> c_int,
    pub cont_destroy: unsafe extern "C" fn(H, *const c_char, c_int, Event) -> c_int,
    pub cont_alloc_oids: unsafe extern "C" fn(H, u64, *mut u64, Event) -> c_int,
    pub obj_generate_oid: unsafe extern "C" fn(H, *mut daos_obj_id_t, u32, daos_oclass_id_t, u16, u32) -> c_int,
    pub kv_open: unsafe extern "C" fn(H, daos_obj_id_t, u32, *mut H, Event) -> c_int,
    pub kv_close: unsafe extern "C" fn(H, Event) -> c_int,
    pub kv_destroy: unsafe extern "C" fn(H, H, Event) -> c_int,
    pub kv_put: unsafe extern "C" fn(H, H, u64, *const c_char, u64, *const c_void, Event) -> c_int,
    pub kv_get: unsafe extern "C" fn(H, H, u64, *const c_char, *mut u64, *mut c_void, Event) -> c_int,
    pub kv_remove: unsafe extern "C" fn(H, H, u64, *const c_char, Event) -> c_int,
    pub kv_list: unsafe extern "C" fn(H, H, *mut u32, *mut daos_key_desc_t, *mut d_sg_list_t, *mut daos_anchor_t, Event) -> c_int,
    pub array_create: unsafe extern "C" fn(H, daos_obj_id_t, H, u64, u64, *mut H, Event) -> c_int,
    pub array_open: unsafe extern "C" fn(H, daos_obj_id_t, H, u32, *mut u64, *mut u64, *mut H, Event) -> c_int,
    pub array_open_with_attr: unsafe extern "C" fn(H, daos_obj_id_t, H, u32, u64, u64, *mut H, Event) -> c_int,
    pub array_close: unsafe extern "C" fn(H, Event) -> c_int,
    pub array_read: unsafe extern "C" fn(H, H, *mut daos_array_iod_t, *mut d_sg_list_t, Event) -> c_int,
    pub array_write: unsafe extern "C" fn(H, H, *mut daos_array_iod_t, *mut d_sg_list_t, Event) -> c_int,
    pub array_get_size: unsafe extern "C" fn(H, H, *mut u64, Event) -> c_int,
    pub array_destroy: unsafe extern "C" fn(H, H, Event) -> c_int,
    /// Keeps the symbols above valid.
    _library: libloading::Library,
}

/// The library this process loaded (one per process: DAOS' client state is global).
static LOADED: Mutex<Option<&'static Libdaos>> = Mutex::new(None);

/// Loads libdaos from `path` and initialises it, once per process; later calls must name
/// the same library.
pub fn libdaos(path: &str) -> Result<&'static Libdaos> {
    let mut loaded = LOADED.lock().unwrap();
    if let Some(library) = *loaded {
        if library.path != path {
            return Err(Error::new(
                ErrorKind::Unsupported,
                format!("DAOS: this process already uses {}, so it cannot also load {path}", library.path),
            ));
        }
        return Ok(library);
    }
    let library: &'static Libdaos = Box::leak(Box::new(load(path)?));
    // SAFETY: `init` is `daos_init`, which takes no arguments; it runs under `LOADED`'s lock, before any other libdaos
    // call of this process (again only after a failure, which libdaos allows: it counts its initialisations).
    let rc = unsafe { (library.init)() };
    if rc != 0 {
        return Err(crate::daos_error(rc, &format!("daos_init ({path}): is the DAOS agent running and this client configured?")));
    }
    *loaded = Some(library);
    Ok(library)
}

fn load(path: &str) -> Result<Libdaos> {
    // SAFETY: loading libdaos (or its emulation) runs its initialisers, which only set up its own state; the library
    // is never unloaded while its functions may be called (the `Libdaos` owning it is leaked).
    let library = unsafe { libloading::Library::new(path) }.map_err(|e| {
        let message =
            format!("DAOS is configured but {path} cannot be loaded (install DAOS' client library or set `library:` in the configuration)");
        Error::caused_by(ErrorKind::Unavailable, message, e)
    })?;
    macro_rules! symbol {
        ($name:literal) => {
            // SAFETY: the declared type matches the C prototype in DAOS' headers, and the `Libdaos` built here owns
            // `library`, so the function pointer copied out stays valid as long as it does.
            *unsafe { library.get(concat!($name, "\0").as_bytes()) }.map_err(|e| Error::caused_by(ErrorKind::Unavailable, path, e))?
        };
    }
    Ok(Libdaos {
        path: path.to_string(),
        init: symbol!("daos_init"),
        pool_connect: symbol!("daos_pool_connect2"),
        pool_disconnect: symbol!("daos_pool_disconnect"),
        cont_create_with_label: symbol!("daos_cont_create_with_label"),
        cont_open: symbol!("daos_cont_open2"),
        cont_close: symbol!("daos_cont_close"),
        cont_destroy: symbol!("daos_cont_destroy2"),
        cont_alloc_oids: symbol!("daos_cont_alloc_oids"),
        obj_generate_oid: symbol!("daos_obj_generate_oid2"),
        kv_open: symbol!("daos_kv_open"),
        kv_close: symbol!("daos_kv_close"),
        kv_destroy: symbol!("daos_kv_destroy"),
        kv_put: symbol!("daos_kv_put"),
        kv_get: symbol!("daos_kv_get"),
        kv_remove: symbol!("daos_kv_remove"),
        kv_list: symbol!("daos_kv_list"),
        array_create: symbol!("daos_array_create"),
        array_open: symbol!("daos_array_open"),
        array_open_with_attr: symbol!("daos_array_open_with_attr"),
        array_close: symbol!("daos_array_close"),
        array_read: symbol!("daos_array_read"),
        array_write: symbol!("daos_array_write"),
        array_get_size: symbol!("daos_array_get_size"),
        array_destroy: symbol!("daos_array_destroy"),
        _library: library,
    })
}
