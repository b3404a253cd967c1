//! A safe wrapper over an ecCodes handle, and ecCodes' messages kept off the user's
//! standard error: they are collected per thread ([`take_errors`]) for the caller to report.

use std::cell::RefCell;
use std::ffi::{CStr, CString};
use std::marker::PhantomData;
use std::os::raw::c_long;
use std::ptr;

use fieldstore_core::error::{Error, ErrorKind, Result};

use crate::ffi;

/// An ecCodes handle; `'a` is the lifetime of the message bytes it reads (not copied).
pub struct Handle<'a> {
    ptr: *mut ffi::CodesHandle,
    _data: PhantomData<&'a [u8]>,
}

thread_local! {
    /// The error messages ecCodes logged on this thread since the last [`take_errors`].
    static ERRORS: RefCell<Vec<String>> = const { RefCell::new(Vec::new()) };
}

extern "C" fn collect(_: *const ffi::CodesContext, level: std::os::raw::c_int, message: *const std::os::raw::c_char) {
    if level != ffi::LOG_ERROR && level != ffi::LOG_FATAL || message.is_null() {
        return;
    }
    // SAFETY: ecCodes passes a NUL-terminated message, valid for this call.
    let text = unsafe { CStr::from_ptr(message) }.to_string_lossy().trim().to_string();
    // A panic must not unwind into C: a poisoned or re-entered cell only loses the message.
    let _ = ERRORS.try_with(|e| e.try_borrow_mut().map(|mut e| e.push(text)));
}

/// Routes ecCodes' messages to [`collect`] instead of standard error (once per process).
fn quiet() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    // SAFETY: the default context lives as long as the process; the procedure is a plain fn.
    ONCE.call_once(|| unsafe { ffi::codes_context_set_logging_proc(ffi::codes_context_get_default(), collect) });
}

/// The error messages ecCodes logged on this thread since the last call, oldest first.
pub fn take_errors() -> Vec<String> {
    quiet();
    ERRORS.with(|e| std::mem::take(&mut *e.borrow_mut()))
}

/// An error for a failed ecCodes call: its code's text and what ecCodes logged meanwhile.
fn failure(context: String, code: i32) -> Error {
    // SAFETY: ecCodes returns a static string for any code.
    let mut message = unsafe { CStr::from_ptr(ffi::codes_get_error_message(code)) }.to_string_lossy().into_owned();
    let logged = take_errors();
    if !logged.is_empty() {
        message = format!("{message} ({})", logged.join("; "));
    }
    Error::Grib { context, message }
}

/// Longest key name passed to ecCodes (its own names are far shorter).
const MAX_KEY_NAME: usize = 255;

/// `key` as ecCodes takes it, or an error naming it: ecCodes reads past or crashes on names
/// outside ASCII (`shortNamé`), so only its own alphabet is passed (letters, digits, `_`, `.`,
/// `:` and `-`, as in `mars.param` or `shortName:s`).
pub(crate) fn c_key(key: &str) -> Result<CString> {
    let allowed = |c: char| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | ':' | '-');
    if key.is_empty() || key.len() > MAX_KEY_NAME || !key.chars().all(allowed) {
        return Err(Error::new(
            ErrorKind::BadRequest,
            format!("ecCodes key {key:?}: not a key name (1 to {MAX_KEY_NAME} ASCII letters, digits, '_', '.', ':' or '-')"),
        ));
    }
    Ok(CString::new(key).expect("checked: ASCII without NUL"))
}

/// `value` as ecCodes takes a text value, or an error naming `key`: printable ASCII only.
fn c_text(key: &str, value: &str) -> Result<CString> {
    if !value.chars().all(|c| c.is_ascii_graphic() || c == ' ') {
        return Err(Error::new(ErrorKind::BadRequest, format!("setting {key}={value:?}: a GRIB text value is printable ASCII")));
    }
    Ok(CString::new(value).expect("checked: ASCII without NUL"))
}

/// The fewest bytes a GRIB message has: section 0 (8 bytes in GRIB 1, 16 in GRIB 2) and `7777`.
const SMALLEST_MESSAGE: usize = 12;

/// Whether `data` can be one GRIB message, from `GRIB` to `7777`: what ecCodes is given.
fn could_be_message(data: &[u8]) -> bool {
    data.len() >= SMALLEST_MESSAGE && data.starts_with(b"GRIB") && data.ends_with(b"7777")
}

impl<'a> Handle<'a> {
    /// A handle over one whole GRIB message; `None` for anything else. Bytes that cannot be
    /// one (too short, not from `GRIB` to `7777`) never reach ecCodes, which reads an empty
    /// buffer's first bytes regardless (a crash found by the `packing_record` fuzz target).
    pub fn from_message(data: &'a [u8]) -> Option<Handle<'a>> {
        if !could_be_message(data) {
            return None;
        }
        quiet();
        // SAFETY: data outlives the handle ('a); ecCodes only reads it.
        let ptr = unsafe { ffi::codes_handle_new_from_message(ptr::null_mut(), data.as_ptr().cast(), data.len()) };
        (!ptr.is_null()).then_some(Handle { ptr, _data: PhantomData })
    }

    /// The integer value of `key`.
    pub fn get_long(&self, key: &str) -> Result<i64> {
        let mut v: c_long = 0;
        // SAFETY: valid handle and NUL-terminated key.
        let rc = unsafe { ffi::codes_get_long(self.ptr, c_key(key)?.as_ptr(), &mut v) };
        if rc != 0 {
            return Err(failure(format!("key '{key}'"), rc));
        }
        Ok(v as i64)
    }

    /// The floating-point value of `key`.
    pub fn get_double(&self, key: &str) -> Result<f64> {
        let mut v = 0.0;
        // SAFETY: valid handle and NUL-terminated key.
        let rc = unsafe { ffi::codes_get_double(self.ptr, c_key(key)?.as_ptr(), &mut v) };
        if rc != 0 {
            return Err(failure(format!("key '{key}'"), rc));
        }
        Ok(v)
    }

    /// How many values the array key `key` has.
    pub fn get_size(&self, key: &str) -> Result<usize> {
        let mut n = 0usize;
        // SAFETY: valid handle and NUL-terminated key.
        let rc = unsafe { ffi::codes_get_size(self.ptr, c_key(key)?.as_ptr(), &mut n) };
        if rc != 0 {
            return Err(failure(format!("key '{key}'"), rc));
        }
        Ok(n)
    }

    /// Fills `out` with the array key `key` (e.g. `values`), which must have exactly as many
    /// values.
    pub fn get_double_array(&self, key: &str, out: &mut [f64]) -> Result<()> {
        let mut len = out.len();
        // SAFETY: out is writable for len values; ecCodes writes at most len and says how many.
        let rc = unsafe { ffi::codes_get_double_array(self.ptr, c_key(key)?.as_ptr(), out.as_mut_ptr(), &mut len) };
        if rc != 0 {
            return Err(failure(format!("key '{key}' ({} values)", out.len()), rc));
        }
        if len != out.len() {
            return Err(Error::Grib { context: format!("key '{key}'"), message: format!("{len} values, {} expected", out.len()) });
        }
        Ok(())
    }

    /// The text value of `key`.
    pub fn get_string(&self, key: &str) -> Result<String> {
        let mut buf = vec![0u8; 1024];
        let mut len = buf.len();
        // SAFETY: buf is writable for len bytes; ecCodes writes a NUL-terminated string.
        let rc = unsafe { ffi::codes_get_string(self.ptr, c_key(key)?.as_ptr(), buf.as_mut_ptr().cast(), &mut len) };
        if rc != 0 {
            return Err(failure(format!("key '{key}'"), rc));
        }
        let end = buf.iter().position(|&b| b == 0).unwrap_or(len.min(buf.len()));
        Ok(String::from_utf8_lossy(&buf[..end]).into_owned())
    }

    /// Sets `key` to an integer.
    pub fn set_long(&mut self, key: &str, value: i64) -> Result<()> {
        // SAFETY: valid handle and key.
        let rc = unsafe { ffi::codes_set_long(self.ptr, c_key(key)?.as_ptr(), value as c_long) };
        if rc != 0 {
            return Err(failure(format!("setting {key}={value}"), rc));
        }
        Ok(())
    }

    /// Sets `key` to a text value.
    pub fn set_string(&mut self, key: &str, value: &str) -> Result<()> {
        let v = c_text(key, value)?;
        let mut len = value.len();
        // SAFETY: valid handle, key and value.
        let rc = unsafe { ffi::codes_set_string(self.ptr, c_key(key)?.as_ptr(), v.as_ptr(), &mut len) };
        if rc != 0 {
            return Err(failure(format!("setting {key}={value}"), rc));
        }
        Ok(())
    }

    /// Sets the array key `key` (e.g. `values`) to a copy of `values`.
    pub fn set_double_array(&mut self, key: &str, values: &[f64]) -> Result<()> {
        // SAFETY: valid handle; values is readable for its length; ecCodes copies them.
        let rc = unsafe { ffi::codes_set_double_array(self.ptr, c_key(key)?.as_ptr(), values.as_ptr(), values.len()) };
        if rc != 0 {
            return Err(failure(format!("setting {key} ({} values)", values.len()), rc));
        }
        Ok(())
    }

    /// The names of the keys in an ecCodes namespace (e.g. `mars`).
    pub fn namespace_keys(&self, namespace: &str) -> Vec<String> {
        self.keys(namespace, ffi::KEYS_ITERATOR_ALL_KEYS)
    }

    /// The names of the keys the message codes, each once, computed ones left out (the keys
    /// `grib_compare` compares).
    pub fn coded_keys(&self) -> Vec<String> {
        self.keys("", ffi::KEYS_ITERATOR_CODED_ONCE)
    }

    /// The keys of `namespace` (all of them for `""`) that `flags` keep.
    fn keys(&self, namespace: &str, flags: std::os::raw::c_ulong) -> Vec<String> {
        // ecCodes' "every namespace" is no name at all.
        let name = match namespace {
            "" => None,
            name => match c_key(name) {
                Ok(name) => Some(name),
                Err(_) => return Vec::new(),
            },
        };
        let ns = name.as_ref().map_or(ptr::null(), |n| n.as_ptr());
        // SAFETY: valid handle; the iterator is deleted below; ns is null or lives to the end.
        let it = unsafe { ffi::codes_keys_iterator_new(self.ptr, flags, ns) };
        if it.is_null() {
            return Vec::new();
        }
        let mut out = Vec::new();
        // SAFETY: it is a live iterator until deleted.
        unsafe {
            while ffi::codes_keys_iterator_next(it) != 0 {
                out.push(CStr::from_ptr(ffi::codes_keys_iterator_get_name(it)).to_string_lossy().into_owned());
            }
            ffi::codes_keys_iterator_delete(it);
        }
        out
    }

    /// The encoded message.
    pub fn message(&self) -> Result<Vec<u8>> {
        let mut p: *const std::os::raw::c_void = ptr::null();
        let mut len = 0usize;
        // SAFETY: ecCodes points p at its own buffer of len bytes, valid while the handle lives.
        let rc = unsafe { ffi::codes_get_message(self.ptr, &mut p, &mut len) };
        if rc != 0 || p.is_null() {
            return Err(failure("encoding message".into(), rc));
        }
        // SAFETY: see above; copied before the handle can change.
        Ok(unsafe { std::slice::from_raw_parts(p.cast::<u8>(), len) }.to_vec())
    }
}

impl Handle<'static> {
    /// A handle over a copy of one whole GRIB message (its keys may then be set).
    pub fn from_message_copy(data: &[u8]) -> Result<Handle<'static>> {
        if !could_be_message(data) {
            return Err(Error::Grib { context: "template".into(), message: "ecCodes cannot decode it".into() });
        }
        quiet();
        // SAFETY: ecCodes copies the bytes before returning.
        let ptr = unsafe { ffi::codes_handle_new_from_message_copy(ptr::null_mut(), data.as_ptr().cast(), data.len()) };
        if ptr.is_null() {
            return Err(Error::Grib { context: "template".into(), message: "ecCodes cannot decode it".into() });
        }
        Ok(Handle { ptr, _data: PhantomData })
    }

    /// A new handle from one of ecCodes' GRIB samples (e.g. `GRIB2`, `reduced_gg_pl_32_grib1`).
    pub fn from_sample(name: &str) -> Result<Handle<'static>> {
        quiet();
        let n = c_key(name)?;
        // SAFETY: NUL-terminated sample name; ecCodes owns the new handle's memory.
        let ptr = unsafe { ffi::codes_grib_handle_new_from_samples(ptr::null_mut(), n.as_ptr()) };
        if ptr.is_null() {
            return Err(Error::Grib { context: format!("sample '{name}'"), message: "not found in ecCodes' samples".into() });
        }
        Ok(Handle { ptr, _data: PhantomData })
    }
}

impl Drop for Handle<'_> {
    fn drop(&mut self) {
        // SAFETY: ptr came from ecCodes and is deleted once.
        unsafe { ffi::codes_handle_delete(self.ptr) };
    }
}
