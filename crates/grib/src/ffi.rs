//! The few ecCodes C functions fieldstore uses, declared from ecCodes' public `eccodes.h`.

use std::os::raw::{c_char, c_int, c_long, c_ulong, c_void};

#[repr(C)]
pub struct CodesHandle {
    _private: [u8; 0],
}

#[repr(C)]
pub struct CodesKeysIterator {
    _private: [u8; 0],
}

#[repr(C)]
pub struct CodesContext {
    _private: [u8; 0],
}

/// `codes_log_proc`: receives each message ecCodes would print, with its level.
pub type CodesLogProc = extern "C" fn(c: *const CodesContext, level: c_int, message: *const c_char);

/// `GRIB_LOG_ERROR` and `GRIB_LOG_FATAL`: the levels of messages that report a failure.
pub const LOG_ERROR: c_int = 2;
pub const LOG_FATAL: c_int = 3;

/// `CODES_KEYS_ITERATOR_ALL_KEYS`
pub const KEYS_ITERATOR_ALL_KEYS: c_ulong = 0;
/// `CODES_KEYS_ITERATOR_SKIP_COMPUTED | CODES_KEYS_ITERATOR_SKIP_DUPLICATES |
/// CODES_KEYS_ITERATOR_SKIP_FUNCTION`: the keys a message codes, each once (`grib_compare`'s).
pub const KEYS_ITERATOR_CODED_ONCE: c_ulong = (1 << 4) | (1 << 5) | (1 << 6);

extern "C" {
    pub fn codes_handle_new_from_message(c: *mut CodesContext, data: *const c_void, len: usize) -> *mut CodesHandle;
    pub fn codes_handle_new_from_message_copy(c: *mut CodesContext, data: *const c_void, len: usize) -> *mut CodesHandle;
    pub fn codes_grib_handle_new_from_samples(c: *mut CodesContext, sample: *const c_char) -> *mut CodesHandle;
    pub fn codes_handle_delete(h: *mut CodesHandle) -> c_int;
    pub fn codes_get_long(h: *const CodesHandle, key: *const c_char, value: *mut c_long) -> c_int;
    pub fn codes_get_string(h: *const CodesHandle, key: *const c_char, out: *mut c_char, len: *mut usize) -> c_int;
    pub fn codes_set_long(h: *mut CodesHandle, key: *const c_char, value: c_long) -> c_int;
    pub fn codes_set_string(h: *mut CodesHandle, key: *const c_char, value: *const c_char, len: *mut usize) -> c_int;
    pub fn codes_get_size(h: *const CodesHandle, key: *const c_char, size: *mut usize) -> c_int;
    pub fn codes_get_double(h: *const CodesHandle, key: *const c_char, value: *mut f64) -> c_int;
    pub fn codes_get_double_array(h: *const CodesHandle, key: *const c_char, values: *mut f64, len: *mut usize) -> c_int;
    pub fn codes_set_double_array(h: *mut CodesHandle, key: *const c_char, values: *const f64, len: usize) -> c_int;
    pub fn codes_get_message(h: *const CodesHandle, message: *mut *const c_void, len: *mut usize) -> c_int;
    pub fn codes_keys_iterator_new(h: *mut CodesHandle, flags: c_ulong, namespace: *const c_char) -> *mut CodesKeysIterator;
    pub fn codes_keys_iterator_next(it: *mut CodesKeysIterator) -> c_int;
    pub fn codes_keys_iterator_get_name(it: *const CodesKeysIterator) -> *const c_char;
    pub fn codes_keys_iterator_delete(it: *mut CodesKeysIterator) -> c_int;
    pub fn codes_get_error_message(code: c_int) -> *const c_char;
    pub fn codes_context_get_default() -> *mut CodesContext;
    pub fn codes_context_set_logging_proc(c: *mut CodesContext, log: CodesLogProc);
}
