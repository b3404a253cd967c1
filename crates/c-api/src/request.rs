//! Keys, requests and split keys as `fdb_c.h` has them: a key is keyword=value pairs (a
//! keyword added again replaces its value); a request is keywords with lists of values, each
//! value split on `/` as FDB5 splits it (`0/to/12/by/6` is five values, read as a range);
//! a split key is a listed element's keys, level by level, copied out of the listing.

use std::ffi::{c_char, c_int, CString};
use std::sync::OnceLock;

use fieldstore::{Request as CoreRequest, Schema};

use crate::ffi::{self, CError, ITERATION_COMPLETE, SUCCESS};

/// `fdb_key_t`: fieldstore's key itself, so archiving converts nothing.
#[derive(Debug)]
pub struct Key {
    /// The pairs, in the order added.
    pub key: fieldstore::Key,
    /// A bit per keyword added (by a hash of it): a keyword whose bit is clear is new, and is
    /// appended without comparing it with every keyword before it (a key is built a keyword
    /// at a time for every field archived).
    seen: u64,
}

impl Default for Key {
    fn default() -> Self {
        // Room for a full MARS key: built field after field, it then grows no more.
        Key { key: fieldstore::Key::with_capacity(16, 160), seen: 0 }
    }
}

impl Key {
    /// Sets `keyword` to `value`, replacing a value it had.
    pub fn add(&mut self, keyword: &str, value: &str) {
        let bit = 1u64 << (keyword.bytes().fold(keyword.len() as u32, |h, b| h.wrapping_mul(31).wrapping_add(u32::from(b))) % 64);
        if self.seen & bit == 0 {
            self.key.push(keyword, value);
        } else {
            self.key.set(keyword, value);
        }
        self.seen |= bit;
    }
}

/// `fdb_request_t`.
#[derive(Debug, Default)]
pub struct Request {
    entries: Vec<(String, Vec<String>)>,
}

impl Request {
    /// Sets `keyword` to `values`, each split on `/` (empty pieces dropped), replacing what
    /// it had (FDB5's `fdb_request_add`).
    pub fn add(&mut self, keyword: String, values: Vec<String>) {
        // Keywords are read without regard to case (`STEP` is `step`), so one replaces the other.
        let keyword = keyword.to_ascii_lowercase();
        let tokens: Vec<String> = values.iter().flat_map(|v| v.split('/')).filter(|t| !t.is_empty()).map(str::to_string).collect();
        match self.entries.iter_mut().find(|(k, _)| *k == keyword) {
            Some(entry) => entry.1 = tokens,
            None => self.entries.push((keyword, tokens)),
        }
    }

    /// The values of `keyword`, as added or expanded; an error naming it if absent.
    pub fn get(&self, keyword: &str) -> Result<&[String], CError> {
        self.entries
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(keyword))
            .map(|(_, v)| v.as_slice())
            .ok_or_else(|| CError(format!("no keyword '{keyword}' in request {self}")))
    }

    /// The request as fieldstore reads it (ranges and names resolved when matched, by the
    /// schema's types).
    pub fn to_request(&self) -> Result<CoreRequest, CError> {
        let mut request = CoreRequest::default();
        for (keyword, values) in &self.entries {
            request.set_tokens(keyword, values)?;
        }
        Ok(request)
    }

    /// Expands ranges and writes every value as the default schema's types write it
    /// (`expver=1` -> `0001`, `param=t` -> `130`, `step=0/to/12/by/6` -> `0`, `6`, `12`), as
    /// FDB5's `fdb_expand_request` does through MARS' language; no keyword is added. A
    /// keyword the default schema does not know is refused, naming it. Unchanged on error.
    pub fn expand(&mut self) -> Result<(), CError> {
        let schema = default_schema();
        let known = schema.keywords();
        let request = self.to_request()?;
        let mut expanded = Vec::with_capacity(self.entries.len());
        for (keyword, _) in &self.entries {
            let lower = keyword.to_ascii_lowercase();
            if !known.contains(lower.as_str()) {
                return Err(CError(format!("cannot expand request {self}: no schema rule knows keyword '{keyword}'")));
            }
            let values = request
                .values(&lower, schema.type_of(&[], &lower))
                .map_err(|e| CError(format!("cannot expand request {self}: {}", e.report())))?;
            expanded.push((keyword.clone(), values.unwrap_or_default()));
        }
        self.entries = expanded;
        Ok(())
    }
}

impl std::fmt::Display for Request {
    /// As FDB5 prints a request in messages: `retrieve,class=od,step=0/6`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "retrieve")?;
        for (keyword, values) in &self.entries {
            write!(f, ",{keyword}={}", values.join("/"))?;
        }
        Ok(())
    }
}

/// The schema whose types `fdb_expand_request` writes values with (it has no handle), with
/// ecCodes' parameter names loaded (as a handle loads them) for `param=t`.
fn default_schema() -> &'static Schema {
    static SCHEMA: OnceLock<Schema> = OnceLock::new();
    SCHEMA.get_or_init(|| {
        fieldstore::grib::install_param_resolver();
        Schema::default_schema()
    })
}

/// `fdb_split_key_t`: a listed element's keys, level by level (data set, collocation,
/// element), each level's keywords in alphabetical order as FDB5 gives them, copied from the
/// listing so they stay valid whatever the iterator does next.
#[derive(Debug, Default)]
pub struct SplitKey {
    pairs: Vec<(CString, CString, usize)>,
    next: usize,
    attached: bool,
}

impl SplitKey {
    /// Holds `levels`' keys, and starts over.
    pub fn attach(&mut self, levels: &[&fieldstore::Key]) {
        self.pairs.clear();
        for (level, key) in levels.iter().enumerate() {
            let mut pairs: Vec<(&str, &str)> = key.iter().collect();
            pairs.sort();
            self.pairs.extend(pairs.into_iter().map(|(k, v)| (ffi::c_string(k), ffi::c_string(v), level)));
        }
        (self.next, self.attached) = (0, true);
    }

    /// The next keyword, value and level; `ITERATION_COMPLETE` after the last (and after).
    fn next(&mut self) -> Result<Option<(*const c_char, *const c_char, usize)>, CError> {
        if !self.attached {
            return Err(CError("the split key holds no element's keys: fill it with fdb_listiterator_splitkey first".into()));
        }
        let Some((k, v, level)) = self.pairs.get(self.next) else { return Ok(None) };
        self.next += 1;
        Ok(Some((k.as_ptr(), v.as_ptr(), *level)))
    }
}

/// Creates a key.
///
/// # Safety
/// `key` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn fdb_new_key(key: *mut *mut Key) -> c_int {
    // SAFETY: as the caller guarantees.
    ffi::call(|| unsafe { ffi::hand_out(key, "key", Key::default()) })
}

/// Sets a keyword's value in a key (replacing one it had).
///
/// # Safety
/// `key` is NULL or a live key; `param` and `value` NULL or NUL-terminated strings.
#[no_mangle]
pub unsafe extern "C" fn fdb_key_add(key: *mut Key, param: *const c_char, value: *const c_char) -> c_int {
    ffi::call(|| {
        // SAFETY: as the caller guarantees.
        let (key, param, value) =
            unsafe { (ffi::object(key, "key")?, ffi::borrowed_text(param, "param")?, ffi::borrowed_text(value, "value")?) };
        key.add(param, value);
        Ok(SUCCESS)
    })
}

/// Deletes a key.
///
/// # Safety
/// `key` is NULL or a live key, used no more.
#[no_mangle]
pub unsafe extern "C" fn fdb_delete_key(key: *mut Key) -> c_int {
    // SAFETY: as the caller guarantees.
    ffi::call(|| unsafe { ffi::delete(key, "key") })
}

/// Creates a request.
///
/// # Safety
/// `req` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn fdb_new_request(req: *mut *mut Request) -> c_int {
    // SAFETY: as the caller guarantees.
    ffi::call(|| unsafe { ffi::hand_out(req, "req", Request::default()) })
}

/// Sets a keyword's values in a request (each split on `/`), replacing those it had.
///
/// # Safety
/// `req` is NULL or a live request; `param` NULL or a string; `values` NULL or
/// `numValues` strings.
#[no_mangle]
pub unsafe extern "C" fn fdb_request_add(
    req: *mut Request,
    param: *const c_char,
    // `const char* values[]` as FDB5 declares it (only read).
    values: *mut *const c_char,
    num_values: c_int,
) -> c_int {
    ffi::call(|| {
        // SAFETY: as the caller guarantees.
        let (req, param) = unsafe { (ffi::object(req, "req")?, ffi::text(param, "param")?) };
        if values.is_null() {
            return Err(ffi::null("values"));
        }
        let count = usize::try_from(num_values).unwrap_or(0);
        let mut list = Vec::with_capacity(count);
        for i in 0..count {
            // SAFETY: `values` holds `numValues` pointers, as the caller guarantees.
            let value = unsafe { *values.add(i) };
            // SAFETY: each NULL or a string, as the caller guarantees.
            list.push(unsafe { ffi::text(value, &format!("values[{i}]"))? });
        }
        req.add(param, list);
        Ok(SUCCESS)
    })
}

/// A keyword's values in a request: `*values` an array of `*numValues` strings, the array
/// and each string allocated with `malloc` for the caller to `free`.
///
/// # Safety
/// `req` is NULL or a live request; `param` NULL or a string; `values` and `numValues` NULL
/// or writable.
#[no_mangle]
pub unsafe extern "C" fn fdb_request_get(
    req: *mut Request,
    param: *const c_char,
    values: *mut *mut *mut c_char,
    num_values: *mut usize,
) -> c_int {
    ffi::call(|| {
        // SAFETY: as the caller guarantees.
        let (req, param) = unsafe { (ffi::object(req, "req")?, ffi::text(param, "param")?) };
        if values.is_null() || num_values.is_null() {
            return Err(ffi::null(if values.is_null() { "values" } else { "numValues" }));
        }
        let found = req.get(&param)?;
        let array = malloc_strings(found)?;
        // SAFETY: both non-NULL and writable, as the caller guarantees.
        unsafe {
            values.write(array);
            num_values.write(found.len());
        }
        Ok(SUCCESS)
    })
}

/// `strings` as a `malloc`ed array of `malloc`ed C strings (one element at least, so it is
/// never NULL).
fn malloc_strings(strings: &[String]) -> Result<*mut *mut c_char, CError> {
    let out_of_memory = || CError("out of memory for the request's values".into());
    let bytes = std::mem::size_of::<*mut c_char>().checked_mul(strings.len().max(1)).ok_or_else(out_of_memory)?;
    // SAFETY: malloc of a non-zero size; checked for NULL below.
    let array = unsafe { libc::malloc(bytes) }.cast::<*mut c_char>();
    if array.is_null() {
        return Err(out_of_memory());
    }
    for (i, s) in strings.iter().enumerate() {
        let c = ffi::c_string(s);
        // SAFETY: strdup copies a NUL-terminated string into malloc'ed memory.
        let copy = unsafe { libc::strdup(c.as_ptr()) };
        if copy.is_null() {
            // SAFETY: the strings copied so far and the array were malloc'ed here.
            unsafe {
                (0..i).for_each(|j| libc::free((*array.add(j)).cast()));
                libc::free(array.cast());
            }
            return Err(out_of_memory());
        }
        // SAFETY: `i` < the array's length.
        unsafe { array.add(i).write(copy) };
    }
    Ok(array)
}

/// Expands a request's ranges and writes its values canonically (see [`Request::expand`]).
///
/// # Safety
/// `req` is NULL or a live request.
#[no_mangle]
pub unsafe extern "C" fn fdb_expand_request(req: *mut Request) -> c_int {
    ffi::call(|| {
        // SAFETY: as the caller guarantees.
        unsafe { ffi::object(req, "req")? }.expand()?;
        Ok(SUCCESS)
    })
}

/// Deletes a request.
///
/// # Safety
/// `req` is NULL or a live request, used no more.
#[no_mangle]
pub unsafe extern "C" fn fdb_delete_request(req: *mut Request) -> c_int {
    // SAFETY: as the caller guarantees.
    ffi::call(|| unsafe { ffi::delete(req, "req") })
}

/// Creates a split key.
///
/// # Safety
/// `key` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn fdb_new_splitkey(key: *mut *mut SplitKey) -> c_int {
    // SAFETY: as the caller guarantees.
    ffi::call(|| unsafe { ffi::hand_out(key, "key", SplitKey::default()) })
}

/// The next keyword and value of a split key, and their level (0 the data set's, 1 the
/// collocation's, 2 the element's; `level` may be NULL); `FDB_ITERATION_COMPLETE` after the
/// last. The strings are valid until the split key is filled again or deleted.
///
/// # Safety
/// `it` is NULL or a live split key; `key`, `value` NULL or writable; `level` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn fdb_splitkey_next_metadata(
    it: *mut SplitKey,
    key: *mut *const c_char,
    value: *mut *const c_char,
    level: *mut usize,
) -> c_int {
    ffi::call(|| {
        // SAFETY: as the caller guarantees.
        let it = unsafe { ffi::object(it, "it")? };
        if key.is_null() || value.is_null() {
            return Err(ffi::null(if key.is_null() { "key" } else { "value" }));
        }
        let Some((k, v, l)) = it.next()? else { return Ok(ITERATION_COMPLETE) };
        // SAFETY: non-NULL and writable (`level` when not NULL), as the caller guarantees.
        unsafe {
            key.write(k);
            value.write(v);
            if !level.is_null() {
                level.write(l);
            }
        }
        Ok(SUCCESS)
    })
}

/// Deletes a split key.
///
/// # Safety
/// `key` is NULL or a live split key, used no more.
#[no_mangle]
pub unsafe extern "C" fn fdb_delete_splitkey(key: *mut SplitKey) -> c_int {
    // SAFETY: as the caller guarantees.
    ffi::call(|| unsafe { ffi::delete(key, "key") })
}
