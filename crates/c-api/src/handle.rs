//! `fdb_handle_t` and the functions on it that write: opening a handle (the CLI's config
//! resolution, or YAML in fieldstore's or FDB5's format), archive (explicit keys, or GRIB
//! with the keys read from the messages), flush; and the library-wide functions
//! (initialise, versions, error strings, failure handler).

use std::ffi::{c_char, c_int, c_void};
use std::sync::Arc;

use fieldstore::{Config, FieldStore, GribOptions};

use crate::ffi::{self, CError, SUCCESS};
use crate::request::{Key, Request};

/// `fdb_handle_t`: one handle on a store, usable from many threads at once.
pub struct Handle {
    /// The store (shared with the wipe and purge iterators, which do their work when first
    /// read, as FDB5's do).
    pub store: Arc<FieldStore>,
    /// Keeps each field's packing once learnt, for the next extraction.
    pub extractor: fieldstore::extract::Extractor,
}

/// The version of FDB5's C API this library implements, which `fdb_version` gives (programs
/// check it for features); fieldstore's own is `fieldstore_version`.
pub const FDB5_API_VERSION: &std::ffi::CStr = c"5.25.0";

/// Initialises the library: nothing to do (FDB5 needs it before a handle is made; calling it
/// is harmless here, any number of times).
#[no_mangle]
pub extern "C" fn fdb_initialise() -> c_int {
    ffi::SUCCESS
}

/// The version of FDB5's C API implemented (`5.25.0`).
///
/// # Safety
/// `version` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn fdb_version(version: *mut *const c_char) -> c_int {
    // SAFETY: as the caller guarantees.
    ffi::call(|| unsafe { ffi::put(version, "version", FDB5_API_VERSION.as_ptr()) }.map(|()| SUCCESS))
}

/// The commit of fieldstore this library was built from (40 hexadecimal digits; zeros when
/// built outside a git checkout).
///
/// # Safety
/// `sha1` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn fdb_vcs_version(sha1: *mut *const c_char) -> c_int {
    const COMMIT: &str = concat!(env!("FIELDSTORE_COMMIT"), "\0");
    // SAFETY: as the caller guarantees; COMMIT ends in its NUL.
    ffi::call(|| unsafe { ffi::put(sha1, "sha1", COMMIT.as_ptr().cast()) }.map(|()| SUCCESS))
}

/// The message for a return code: `Success`, `Iteration complete`, this thread's last error
/// (for `FDB_ERROR_GENERAL_EXCEPTION` and `FDB_ERROR_UNKNOWN_EXCEPTION`, valid until its next
/// error), or `<unknown>`.
#[no_mangle]
pub extern "C" fn fdb_error_string(err: c_int) -> *const c_char {
    ffi::error_string(err)
}

/// Sets the function called with `context` and the code on every error (NULL: none). The
/// handler is called across the boundary: it must return (not throw nor `longjmp`).
#[no_mangle]
pub extern "C" fn fdb_set_failure_handler(handler: Option<unsafe extern "C" fn(*mut c_void, c_int)>, context: *mut c_void) -> c_int {
    ffi::set_handler(handler, context);
    SUCCESS
}

/// Opens a handle on the store the environment names, as the CLI resolves it
/// (`$FIELDSTORE_CONFIG`, `$FIELDSTORE_ROOT`, FDB5's `$FDB_CONFIG`/`$FDB5_CONFIG`,
/// `$FDB_CONFIG_FILE`/`$FDB5_CONFIG_FILE`, `$FDB_HOME`, else the default POSIX store).
///
/// # Safety
/// `fdb` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn fdb_new_handle(fdb: *mut *mut Handle) -> c_int {
    ffi::call(|| {
        let store = fieldstore::open(&Config::resolve(None)?)?;
        // SAFETY: as the caller guarantees.
        unsafe { ffi::hand_out(fdb, "fdb", Handle { store: Arc::new(store), extractor: Default::default() }) }
    })
}

/// Opens a handle on the store a YAML configuration describes (fieldstore's format or
/// FDB5's); `user_config` is YAML too (FDB5's user settings, which mean nothing here: it is
/// checked and set aside).
///
/// # Safety
/// `fdb` is NULL or writable; the configs NULL or strings.
#[no_mangle]
pub unsafe extern "C" fn fdb_new_handle_from_yaml(
    fdb: *mut *mut Handle,
    system_config: *const c_char,
    user_config: *const c_char,
) -> c_int {
    ffi::call(|| {
        // SAFETY: as the caller guarantees.
        let (system, user) = unsafe { (ffi::text(system_config, "system_config")?, ffi::text(user_config, "user_config")?) };
        match serde_yaml::from_str::<serde_yaml::Value>(&user) {
            Ok(serde_yaml::Value::Null | serde_yaml::Value::Mapping(_)) => {}
            _ => return Err(CError(format!("user_config is no YAML mapping: {user}"))),
        }
        let store = fieldstore::open(&Config::parse("system_config given to fdb_new_handle_from_yaml", &system)?)?;
        // SAFETY: as the caller guarantees.
        unsafe { ffi::hand_out(fdb, "fdb", Handle { store: Arc::new(store), extractor: Default::default() }) }
    })
}

/// Archives `length` bytes under a key (visible to readers after a flush). The bytes are not
/// read: they are stored as given.
///
/// # Safety
/// `fdb` NULL or a live handle; `key` NULL or a live key; `data` NULL or `length` readable bytes.
#[no_mangle]
pub unsafe extern "C" fn fdb_archive(fdb: *mut Handle, key: *mut Key, data: *const c_char, length: usize) -> c_int {
    ffi::call(|| {
        // SAFETY: as the caller guarantees.
        let (handle, key, data) = unsafe { (ffi::shared(fdb, "fdb")?, ffi::shared(key, "key")?, bytes(data, length)?) };
        handle.store.archive(&key.key, data)?;
        Ok(SUCCESS)
    })
}

/// Archives every GRIB message in `length` bytes under the keys read from them. With a
/// request, every message must be one the request names and every field it names must be
/// there: checked before anything is archived (FDB5 archives the messages before the one it
/// refuses).
///
/// # Safety
/// `fdb` NULL or a live handle; `req` NULL or a live request; `data` NULL or `length`
/// readable bytes.
#[no_mangle]
pub unsafe extern "C" fn fdb_archive_multiple(fdb: *mut Handle, req: *mut Request, data: *const c_char, length: usize) -> c_int {
    ffi::call(|| {
        // SAFETY: as the caller guarantees.
        let (handle, data) = unsafe { (ffi::shared(fdb, "fdb")?, bytes(data, length)?) };
        let fields = fieldstore::prepare_grib(&handle.store, data, "data given to fdb_archive_multiple", &GribOptions::default(), &|_| {})?;
        // SAFETY: as the caller guarantees.
        if let Some(req) = unsafe { req.as_ref() } {
            check_against_request(&handle.store, req, fields.iter().map(|f| &f.identifier))?;
        }
        for field in &fields {
            handle.store.archive(&field.identifier, &field.bytes)?;
        }
        Ok(SUCCESS)
    })
}

/// Refuses fields a request does not name, and a request naming fields not there (FDB5's
/// hypercube check of `fdb_archive_multiple`), before anything is archived.
fn check_against_request<'k>(
    store: &FieldStore,
    req: &Request,
    identifiers: impl Iterator<Item = &'k fieldstore::Key>,
) -> Result<(), CError> {
    let request = req.to_request()?;
    let schema = store.schema();
    let mut axes = Vec::new();
    for keyword in request.keywords() {
        if let Some(values) = request.values(keyword, schema.type_of(&[], keyword))? {
            axes.push((keyword.to_string(), values));
        }
    }
    let mut found = std::collections::BTreeSet::new();
    for (i, identifier) in identifiers.enumerate() {
        let mut place = Vec::with_capacity(axes.len());
        for (keyword, values) in &axes {
            match identifier.get(keyword).and_then(|v| values.iter().position(|x| x == v)) {
                Some(at) => place.push(at),
                None => {
                    return Err(CError(format!(
                        "fdb_archive_multiple: message {} ({identifier}) is not one request {req} names: nothing archived",
                        i + 1
                    )))
                }
            }
        }
        found.insert(place);
    }
    let named = axes.iter().try_fold(1usize, |n, (_, values)| n.checked_mul(values.len())).unwrap_or(usize::MAX);
    if found.len() < named {
        return Err(CError(format!(
            "fdb_archive_multiple: request {req} names {named} fields, the data holds {}: nothing archived",
            found.len()
        )));
    }
    Ok(())
}

/// Makes everything archived through the handle durable and visible to readers.
///
/// # Safety
/// `fdb` NULL or a live handle.
#[no_mangle]
pub unsafe extern "C" fn fdb_flush(fdb: *mut Handle) -> c_int {
    ffi::call(|| {
        // SAFETY: as the caller guarantees.
        unsafe { ffi::shared(fdb, "fdb")? }.store.flush()?;
        Ok(SUCCESS)
    })
}

/// Flushes and deletes a handle (as FDB5 does); deleted even when the flush fails, whose
/// error is returned.
///
/// # Safety
/// `fdb` NULL or a live handle, used by no thread any more.
#[no_mangle]
pub unsafe extern "C" fn fdb_delete_handle(fdb: *mut Handle) -> c_int {
    ffi::call(|| {
        // SAFETY: as the caller guarantees.
        let flushed = unsafe { ffi::shared(fdb, "fdb")? }.store.flush();
        // SAFETY: as the caller guarantees.
        unsafe { ffi::delete(fdb, "fdb")? };
        flushed?;
        Ok(SUCCESS)
    })
}

/// `length` bytes at `data` (NULL refused, whatever the length).
///
/// # Safety
/// `data` is NULL or points to `length` readable bytes.
unsafe fn bytes<'a>(data: *const c_char, length: usize) -> Result<&'a [u8], CError> {
    if data.is_null() {
        return Err(ffi::null("data"));
    }
    if isize::try_from(length).is_err() {
        return Err(CError(format!("length {length} is larger than any buffer")));
    }
    // SAFETY: non-NULL and `length` (at most isize::MAX) readable bytes, as the caller guarantees.
    Ok(unsafe { std::slice::from_raw_parts(data.cast::<u8>(), length) })
}
