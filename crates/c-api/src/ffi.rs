//! What every function of the C API shares: the return codes, the last error message (per
//! thread) and the failure handler (per process), and the checks of pointer arguments. Each
//! exported function runs its body through [`call`], which catches errors and panics alike.

use std::cell::RefCell;
use std::ffi::{c_char, c_int, c_void, CStr, CString};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Mutex;

/// `FDB_SUCCESS`.
pub const SUCCESS: c_int = 0;
/// `FDB_ERROR_GENERAL_EXCEPTION`: an error, whose message `fdb_error_string` gives.
pub const GENERAL_EXCEPTION: c_int = 1;
/// `FDB_ERROR_UNKNOWN_EXCEPTION`: a bug caught at the boundary (a panic).
pub const UNKNOWN_EXCEPTION: c_int = 2;
/// `FDB_ITERATION_COMPLETE`: an iterator is at its end (no error: no message, no handler).
pub const ITERATION_COMPLETE: c_int = 3;

/// An error to report to C: its message.
#[derive(Debug)]
pub struct CError(pub String);

impl From<fieldstore::Error> for CError {
    fn from(e: fieldstore::Error) -> Self {
        CError(e.report().to_string())
    }
}

/// What a function body returns: a code (`SUCCESS` or `ITERATION_COMPLETE`), or an error.
pub type CResult = Result<c_int, CError>;

thread_local! {
    /// The last error's message in this thread, as `fdb_error_string` returns it (FDB5 keeps
    /// one for the whole process, which another thread's error overwrites).
    static LAST_ERROR: RefCell<CString> = RefCell::new(CString::default());
}

/// The failure handler and its context, as C gave them.
#[derive(Clone, Copy)]
struct Handler {
    function: unsafe extern "C" fn(*mut c_void, c_int),
    context: *mut c_void,
}

// SAFETY: the context is C's, handed back untouched to C's handler in whichever thread an
// error happens, as FDB5 does; what it points to is the caller's to make thread-safe.
unsafe impl Send for Handler {}

static HANDLER: Mutex<Option<Handler>> = Mutex::new(None);

/// Runs an exported function's body: its code, or, on an error or a panic, the error code
/// after setting the message and calling the failure handler.
pub fn call(body: impl FnOnce() -> CResult) -> c_int {
    match catch_unwind(AssertUnwindSafe(body)) {
        Ok(Ok(code)) => code,
        Ok(Err(CError(message))) => fail(GENERAL_EXCEPTION, message),
        Err(panic) => {
            let what = panic.downcast_ref::<&str>().map(|s| s.to_string()).or_else(|| panic.downcast_ref::<String>().cloned());
            fail(UNKNOWN_EXCEPTION, format!("internal error in fieldstore's C API (a bug, please report it): {}", what.unwrap_or_default()))
        }
    }
}

/// Records `message` as this thread's last error, then calls the failure handler with `code`.
fn fail(code: c_int, message: String) -> c_int {
    // A message cannot hold a NUL: any is shown as a space.
    let message = CString::new(message.replace('\0', " ")).unwrap_or_default();
    // (A thread being torn down keeps no message.)
    let _ = LAST_ERROR.try_with(|last| *last.borrow_mut() = message);
    let handler = *HANDLER.lock().unwrap_or_else(|p| p.into_inner());
    if let Some(Handler { function, context }) = handler {
        // SAFETY: C registered `function` for this call, with this context.
        unsafe { function(context, code) };
    }
    code
}

/// The message `fdb_error_string` returns for `code`: valid until the next error in this
/// thread (the static texts for ever).
pub fn error_string(code: c_int) -> *const c_char {
    match code {
        SUCCESS => c"Success".as_ptr(),
        ITERATION_COMPLETE => c"Iteration complete".as_ptr(),
        GENERAL_EXCEPTION | UNKNOWN_EXCEPTION => LAST_ERROR.try_with(|last| last.borrow().as_ptr()).unwrap_or(c"".as_ptr()),
        _ => c"<unknown>".as_ptr(),
    }
}

/// Sets (or, with no function, removes) the failure handler.
pub fn set_handler(function: Option<unsafe extern "C" fn(*mut c_void, c_int)>, context: *mut c_void) {
    *HANDLER.lock().unwrap_or_else(|p| p.into_inner()) = function.map(|function| Handler { function, context });
}

/// The error for a NULL argument, naming it.
pub fn null(name: &str) -> CError {
    CError(format!("argument '{name}' is NULL"))
}

/// The object a pointer argument points to.
///
/// # Safety
/// `ptr` is NULL or points to a live `T` that nothing else uses meanwhile (an object this
/// library made and has not deleted, used from one thread at a time).
pub unsafe fn object<'a, T>(ptr: *mut T, name: &str) -> Result<&'a mut T, CError> {
    // SAFETY: as the caller guarantees.
    unsafe { ptr.as_mut() }.ok_or_else(|| null(name))
}

/// A shared object (a handle, used from many threads at once).
///
/// # Safety
/// `ptr` is NULL or points to a live `T` this library made and has not deleted.
pub unsafe fn shared<'a, T>(ptr: *const T, name: &str) -> Result<&'a T, CError> {
    // SAFETY: as the caller guarantees.
    unsafe { ptr.as_ref() }.ok_or_else(|| null(name))
}

/// A C string argument as UTF-8 text.
///
/// # Safety
/// `ptr` is NULL or points to a NUL-terminated string.
pub unsafe fn text(ptr: *const c_char, name: &str) -> Result<String, CError> {
    // SAFETY: as the caller guarantees.
    unsafe { borrowed_text(ptr, name) }.map(str::to_string)
}

/// A C string argument as UTF-8 text, borrowed for the call (no copy).
///
/// # Safety
/// `ptr` is NULL or points to a NUL-terminated string that outlives the use of the result.
pub unsafe fn borrowed_text<'a>(ptr: *const c_char, name: &str) -> Result<&'a str, CError> {
    if ptr.is_null() {
        return Err(null(name));
    }
    // SAFETY: non-NULL and NUL-terminated, as the caller guarantees.
    let bytes = unsafe { CStr::from_ptr(ptr) }.to_bytes();
    if bytes.is_ascii() {
        // SAFETY: ASCII is UTF-8 (the common case, keywords and values: checked in one pass).
        return Ok(unsafe { std::str::from_utf8_unchecked(bytes) });
    }
    std::str::from_utf8(bytes).map_err(|_| CError(format!("argument '{name}' is not UTF-8 text: {}", String::from_utf8_lossy(bytes))))
}

/// Writes `value` where an output argument points.
///
/// # Safety
/// `ptr` is NULL or points to writable memory for a `T`.
pub unsafe fn put<T>(ptr: *mut T, name: &str, value: T) -> Result<(), CError> {
    if ptr.is_null() {
        return Err(null(name));
    }
    // SAFETY: non-NULL and writable, as the caller guarantees.
    unsafe { ptr.write(value) };
    Ok(())
}

/// Hands a new object to C through an output argument.
///
/// # Safety
/// `out` is NULL or points to writable memory for a pointer.
pub unsafe fn hand_out<T>(out: *mut *mut T, name: &str, value: T) -> CResult {
    if out.is_null() {
        return Err(null(name));
    }
    // SAFETY: non-NULL and writable, as the caller guarantees.
    unsafe { out.write(Box::into_raw(Box::new(value))) };
    Ok(SUCCESS)
}

/// Takes back and drops an object this library handed out.
///
/// # Safety
/// `ptr` is NULL or an object of type `T` this library handed out and has not deleted; C
/// uses it no more.
pub unsafe fn delete<T>(ptr: *mut T, name: &str) -> CResult {
    if ptr.is_null() {
        return Err(null(name));
    }
    // SAFETY: made by `Box::into_raw` in `hand_out`, deleted once, as the caller guarantees.
    drop(unsafe { Box::from_raw(ptr) });
    Ok(SUCCESS)
}

/// A string for C, valid as long as it is kept: text with a NUL shown as a space.
pub fn c_string(text: &str) -> CString {
    CString::new(text.replace('\0', " ")).unwrap_or_default()
}
