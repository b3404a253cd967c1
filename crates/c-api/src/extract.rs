//! `fieldstore_extract`: grid points of the fields a request names, reading only the bytes that
//! hold them (`fieldstore-extract`; gribjump's job), handed out field by field.

use std::ffi::{c_char, c_int, CString};

use fieldstore::extract::Range;

use crate::ffi::{self, CError, ITERATION_COMPLETE, SUCCESS};
use crate::handle::Handle;
use crate::request::Request;

/// `fieldstore_extraction_t`: each field's key, values and bytes read.
pub struct Extraction {
    fields: Vec<(CString, Vec<f64>, u64)>,
    next: usize,
}

/// Extracts `count` ranges of grid points (`ranges`: `2 * count` numbers, each range's start
/// then its end, excluded) from every field `req` names.
///
/// # Safety
/// `fdb` NULL or a live handle; `req` NULL or a live request; `ranges` NULL or `2 * count`
/// readable numbers; `it` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn fieldstore_extract(
    fdb: *mut Handle,
    req: *const Request,
    ranges: *const usize,
    count: usize,
    it: *mut *mut Extraction,
) -> c_int {
    ffi::call(|| {
        // SAFETY: as the caller guarantees.
        let handle = unsafe { ffi::shared(fdb, "fdb")? };
        // SAFETY: as the caller guarantees.
        let request = unsafe { ffi::shared(req, "req")? }.to_request()?;
        if ranges.is_null() {
            return Err(ffi::null("ranges"));
        }
        let numbers = count
            .checked_mul(2)
            .filter(|n| n.checked_mul(std::mem::size_of::<usize>()).is_some_and(|bytes| bytes <= isize::MAX as usize))
            .ok_or_else(|| CError(format!("{count} ranges: too many")))?;
        // SAFETY: non-NULL (checked) with `2 * count` readable numbers, as the caller guarantees.
        let numbers = unsafe { std::slice::from_raw_parts(ranges, numbers) };
        let ranges: Vec<Range> = numbers.chunks_exact(2).map(|r| Range::new(r[0] as u64, r[1] as u64)).collect();
        let extracted = handle.extractor.extract(&handle.store, &request, &ranges)?;
        let fields = extracted
            .into_iter()
            .map(|field| {
                let values = field.extraction.values.into_iter().flatten().collect();
                (ffi::c_string(&field.field.identifier().to_string()), values, field.extraction.bytes_read)
            })
            .collect();
        // SAFETY: as the caller guarantees.
        unsafe { ffi::hand_out(it, "it", Extraction { fields, next: 0 }) }
    })
}

/// The next field: its key (`k=v,...`), its values (the ranges' points in turn, NaN where
/// missing) and their number, and the bytes read for it; valid as long as the iterator.
/// `FDB_ITERATION_COMPLETE` after the last.
///
/// # Safety
/// `it` NULL or a live iterator; the outputs NULL or writable (`bytes_read` may be NULL).
#[no_mangle]
pub unsafe extern "C" fn fieldstore_extraction_next(
    it: *mut Extraction,
    key: *mut *const c_char,
    values: *mut *const f64,
    count: *mut usize,
    bytes_read: *mut u64,
) -> c_int {
    ffi::call(|| {
        // SAFETY: as the caller guarantees.
        let it = unsafe { ffi::object(it, "it")? };
        if key.is_null() || values.is_null() || count.is_null() {
            return Err(ffi::null(if key.is_null() {
                "key"
            } else if values.is_null() {
                "values"
            } else {
                "count"
            }));
        }
        let Some((k, v, read)) = it.fields.get(it.next) else { return Ok(ITERATION_COMPLETE) };
        it.next += 1;
        // SAFETY: each non-NULL (checked, `bytes_read` where given) and writable, as the caller guarantees.
        unsafe {
            key.write(k.as_ptr());
            values.write(v.as_ptr());
            count.write(v.len());
            if !bytes_read.is_null() {
                bytes_read.write(*read);
            }
        }
        Ok(SUCCESS)
    })
}

/// Deletes an extraction's iterator.
///
/// # Safety
/// `it` NULL or a live iterator, not used after.
#[no_mangle]
pub unsafe extern "C" fn fieldstore_delete_extraction(it: *mut Extraction) -> c_int {
    // SAFETY: as the caller guarantees.
    ffi::call(|| unsafe { ffi::delete(it, "it") })
}
