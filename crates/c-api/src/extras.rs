//! fieldstore's additions to FDB5's C API (`fieldstore_c.h`), each named `fieldstore_`:
//! its version, why a request matched nothing, the axes (values stored per keyword), stats,
//! locking and unlocking actions on data sets, and where data sets live.

use std::ffi::{c_char, c_int, CString};

use fieldstore::ControlAction;

use crate::ffi::{self, CError, CResult, ITERATION_COMPLETE, SUCCESS};
use crate::handle::Handle;
use crate::list::ListIterator;
use crate::reader::DataReader;
use crate::request::Request;

/// fieldstore's version (`fdb_version` gives the FDB5 API version implemented).
#[no_mangle]
pub extern "C" fn fieldstore_version() -> *const c_char {
    const VERSION: &str = concat!(env!("CARGO_PKG_VERSION"), "\0");
    VERSION.as_ptr().cast()
}

/// Writes `why` (NULL when something matched) to `out`.
///
/// # Safety
/// `out` NULL or writable.
unsafe fn put_why(out: *mut *const c_char, why: Option<&CString>) -> CResult {
    // SAFETY: as the caller guarantees.
    unsafe { ffi::put(out, "why", why.map_or(std::ptr::null(), |w| w.as_ptr())) }.map(|()| SUCCESS)
}

/// Why the listing matched nothing, per data set and index (NULL when something matched);
/// valid as long as the iterator.
///
/// # Safety
/// `it` NULL or a live list iterator; `why` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn fieldstore_listiterator_explanation(it: *mut ListIterator, why: *mut *const c_char) -> c_int {
    ffi::call(|| {
        // SAFETY: as the caller guarantees.
        let it = unsafe { ffi::object(it, "it")? };
        // SAFETY: as the caller guarantees.
        unsafe { put_why(why, it.explanation.as_ref()) }
    })
}

/// Why the retrieve matched nothing (NULL when something matched); valid until the reader
/// retrieves again or is deleted.
///
/// # Safety
/// `dr` NULL or a live data reader; `why` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn fieldstore_datareader_explanation(dr: *mut DataReader, why: *mut *const c_char) -> c_int {
    ffi::call(|| {
        // SAFETY: as the caller guarantees.
        let retrieved = unsafe { ffi::object(dr, "dr")? }.retrieved()?;
        // SAFETY: as the caller guarantees.
        unsafe { put_why(why, retrieved.explanation.as_ref()) }
    })
}

/// `fieldstore_axes_t`: the values stored per keyword, keyword by keyword.
pub struct Axes {
    axes: Vec<(CString, Vec<CString>, Vec<*const c_char>)>,
    next: usize,
}

/// The values stored for each keyword among what a request names (NULL: everything).
///
/// # Safety
/// `fdb` NULL or a live handle; `req` NULL or a live request; `axes` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn fieldstore_axes(fdb: *mut Handle, req: *const Request, axes: *mut *mut Axes) -> c_int {
    ffi::call(|| {
        // SAFETY: as the caller guarantees.
        let (handle, request) = unsafe { (ffi::shared(fdb, "fdb")?, request_or_all(req)?) };
        let (found, _) = handle.store.axes(&request)?;
        let axes_out = found
            .into_iter()
            .map(|(keyword, values)| {
                let values: Vec<CString> = values.iter().map(|v| ffi::c_string(v)).collect();
                let pointers = values.iter().map(|v| v.as_ptr()).collect();
                (ffi::c_string(&keyword), values, pointers)
            })
            .collect();
        // SAFETY: as the caller guarantees.
        unsafe { ffi::hand_out(axes, "axes", Axes { axes: axes_out, next: 0 }) }
    })
}

/// The next keyword and its `*count` values (an array of strings, valid as long as the
/// axes); `FDB_ITERATION_COMPLETE` after the last keyword.
///
/// # Safety
/// `axes` NULL or live axes; the outputs NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn fieldstore_axes_next(
    axes: *mut Axes,
    keyword: *mut *const c_char,
    values: *mut *const *const c_char,
    count: *mut usize,
) -> c_int {
    ffi::call(|| {
        // SAFETY: as the caller guarantees.
        let axes = unsafe { ffi::object(axes, "axes")? };
        if keyword.is_null() || values.is_null() || count.is_null() {
            return Err(ffi::null(if keyword.is_null() {
                "keyword"
            } else if values.is_null() {
                "values"
            } else {
                "count"
            }));
        }
        let Some((k, _, pointers)) = axes.axes.get(axes.next) else { return Ok(ITERATION_COMPLETE) };
        axes.next += 1;
        // SAFETY: each non-NULL (checked) and writable, as the caller guarantees.
        unsafe {
            keyword.write(k.as_ptr());
            values.write(pointers.as_ptr());
            count.write(pointers.len());
        }
        Ok(SUCCESS)
    })
}

/// Deletes axes.
///
/// # Safety
/// `axes` NULL or live axes, used no more.
#[no_mangle]
pub unsafe extern "C" fn fieldstore_delete_axes(axes: *mut Axes) -> c_int {
    // SAFETY: as the caller guarantees.
    ffi::call(|| unsafe { ffi::delete(axes, "axes") })
}

/// `fieldstore_stats_t`: counts of what a request names.
#[repr(C)]
#[derive(Debug, Default, Clone, Copy)]
pub struct Stats {
    /// Data sets.
    pub datasets: u64,
    /// Visible indexes in them.
    pub indexes: u64,
    /// Live fields (not replaced by a newer archive of their key).
    pub fields: u64,
    /// Their bytes.
    pub bytes: u64,
    /// Fields replaced by a newer archive of their key, which a purge may reclaim.
    pub superseded_fields: u64,
    /// Their bytes.
    pub superseded_bytes: u64,
    /// Files or objects holding live fields.
    pub data_objects: u64,
}

/// Counts what a request names (NULL: everything).
///
/// # Safety
/// `fdb` NULL or a live handle; `req` NULL or a live request; `stats` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn fieldstore_stats(fdb: *mut Handle, req: *const Request, stats: *mut Stats) -> c_int {
    ffi::call(|| {
        // SAFETY: as the caller guarantees.
        let (handle, request) = unsafe { (ffi::shared(fdb, "fdb")?, request_or_all(req)?) };
        let r = handle.store.stats(&request)?;
        let out = Stats {
            datasets: r.datasets,
            indexes: r.indexes,
            fields: r.fields,
            bytes: r.bytes,
            superseded_fields: r.superseded_fields,
            superseded_bytes: r.superseded_bytes,
            data_objects: r.data_objects,
        };
        // SAFETY: as the caller guarantees.
        unsafe { ffi::put(stats, "stats", out) }.map(|()| SUCCESS)
    })
}

/// Locks (`lock` true) or unlocks actions (`archive`, `retrieve`, `list`, `wipe`) on the
/// data sets a request names; it must name FDB5's minimum keys, as for `fdb_wipe`.
///
/// # Safety
/// `fdb` NULL or a live handle; `req` NULL or a live request; `actions` NULL or `count` strings.
unsafe fn control(fdb: *mut Handle, req: *const Request, actions: *const *const c_char, count: c_int, lock: bool) -> CResult {
    // SAFETY: as the caller guarantees.
    let (handle, req) = unsafe { (ffi::shared(fdb, "fdb")?, ffi::shared(req, "req")?) };
    if actions.is_null() {
        return Err(ffi::null("actions"));
    }
    let mut chosen = Vec::new();
    for i in 0..usize::try_from(count).unwrap_or(0) {
        // SAFETY: `actions` holds `count` strings, as the caller guarantees.
        let name = unsafe { ffi::text(*actions.add(i), &format!("actions[{i}]"))? };
        let action = ControlAction::from_name(&name)
            .ok_or_else(|| CError(format!("action '{name}' is none of {}", ControlAction::ALL.map(ControlAction::name).join(", "))))?;
        chosen.push(action);
    }
    let request = crate::admin::changing_request(req, "locking")?;
    handle.store.control(&request, &chosen, Some(lock))?;
    Ok(SUCCESS)
}

/// Locks actions on the data sets a request names.
///
/// # Safety
/// See [`control`].
#[no_mangle]
pub unsafe extern "C" fn fieldstore_lock(fdb: *mut Handle, req: *const Request, actions: *const *const c_char, count: c_int) -> c_int {
    // SAFETY: as the caller guarantees.
    ffi::call(|| unsafe { control(fdb, req, actions, count, true) })
}

/// Unlocks actions on the data sets a request names.
///
/// # Safety
/// See [`control`].
#[no_mangle]
pub unsafe extern "C" fn fieldstore_unlock(fdb: *mut Handle, req: *const Request, actions: *const *const c_char, count: c_int) -> c_int {
    // SAFETY: as the caller guarantees.
    ffi::call(|| unsafe { control(fdb, req, actions, count, false) })
}

/// `fieldstore_where_t`: data sets and where their catalogue and bytes live.
pub struct Where {
    places: Vec<[CString; 3]>,
    next: usize,
}

/// Where the data sets a request names live.
///
/// # Safety
/// `fdb` NULL or a live handle; `req` NULL or a live request; `it` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn fieldstore_where(fdb: *mut Handle, req: *const Request, it: *mut *mut Where) -> c_int {
    ffi::call(|| {
        // SAFETY: as the caller guarantees.
        let (handle, request) = unsafe { (ffi::shared(fdb, "fdb")?, request_or_all(req)?) };
        let places = handle
            .store
            .where_is(&request)?
            .into_iter()
            .map(|w| [ffi::c_string(&w.dataset.to_string()), ffi::c_string(&w.catalogue), ffi::c_string(&w.store)])
            .collect();
        // SAFETY: as the caller guarantees.
        unsafe { ffi::hand_out(it, "it", Where { places, next: 0 }) }
    })
}

/// The next data set's key, and where its catalogue and its bytes are (strings valid as
/// long as the iterator); `FDB_ITERATION_COMPLETE` after the last.
///
/// # Safety
/// `it` NULL or a live iterator; the outputs NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn fieldstore_where_next(
    it: *mut Where,
    dataset: *mut *const c_char,
    catalogue: *mut *const c_char,
    store: *mut *const c_char,
) -> c_int {
    ffi::call(|| {
        // SAFETY: as the caller guarantees.
        let it = unsafe { ffi::object(it, "it")? };
        for (ptr, name) in [(dataset.is_null(), "dataset"), (catalogue.is_null(), "catalogue"), (store.is_null(), "store")] {
            if ptr {
                return Err(ffi::null(name));
            }
        }
        let Some([d, c, s]) = it.places.get(it.next) else { return Ok(ITERATION_COMPLETE) };
        it.next += 1;
        // SAFETY: each non-NULL (checked) and writable, as the caller guarantees.
        unsafe {
            dataset.write(d.as_ptr());
            catalogue.write(c.as_ptr());
            store.write(s.as_ptr());
        }
        Ok(SUCCESS)
    })
}

/// Deletes a where iterator.
///
/// # Safety
/// `it` NULL or a live iterator, used no more.
#[no_mangle]
pub unsafe extern "C" fn fieldstore_delete_where(it: *mut Where) -> c_int {
    // SAFETY: as the caller guarantees.
    ffi::call(|| unsafe { ffi::delete(it, "it") })
}

/// The request, or one naming everything for NULL.
///
/// # Safety
/// `req` NULL or a live request.
unsafe fn request_or_all(req: *const Request) -> Result<fieldstore::Request, CError> {
    // SAFETY: as the caller guarantees.
    match unsafe { req.as_ref() } {
        Some(req) => req.to_request(),
        None => Ok(fieldstore::Request::default()),
    }
}
