//! `fdb_wipe` and `fdb_purge` and their iterators: the work (a dry run unless `doit`) is done
//! at the first `next`, as FDB5 does it, and the report handed out line by line, one element
//! per line as FDB5's are (with `porcelain`, only the paths removed, or that would be).
//! Unlike FDB5's C API, a wipe or purge needs the tools' minimum keys (class, expver, stream,
//! date, time), as fieldstore's CLI and FDB5's own tools do: `class=od` alone never wipes every
//! `od` data set.

use std::ffi::{c_char, c_int, CString};

use fieldstore::api::MINIMUM_KEYS_TO_CHANGE;
use fieldstore::error::ErrorKind;
use fieldstore::{FieldStore, PurgeReport, WipeReport};

use crate::ffi::{self, CError, CResult, ITERATION_COMPLETE, SUCCESS};
use crate::handle::Handle;
use crate::request::Request;

/// The work of a wipe or purge, done at the iterator's first `next`: the report's lines.
type Work = Box<dyn FnOnce() -> Result<Vec<String>, CError> + Send>;

/// A wipe's or purge's report: its lines.
pub struct Lines {
    /// The work, until the first `next` does it.
    work: Option<Work>,
    lines: std::vec::IntoIter<String>,
    /// The error the work ended in, which every later `next` returns again (as FDB5's does).
    failed: Option<String>,
}

/// One line of a report.
pub struct Line {
    text: CString,
}

/// `fdb_wipe_iterator_t`: a wipe's report (a type of its own, as in FDB5's header).
pub struct WipeIterator(Lines);
/// `fdb_purge_iterator_t`: a purge's report.
pub struct PurgeIterator(Lines);
/// `fdb_wipe_element_t`: one line of a wipe's report.
pub struct WipeElement(Line);
/// `fdb_purge_element_t`: one line of a purge's report.
pub struct PurgeElement(Line);

/// The iterator types of reports: a wipe's, a purge's.
trait Report: From<Lines> {
    /// The report's element type.
    type Element: From<Line> + AsRef<Line>;
    fn lines(&mut self) -> &mut Lines;
}

/// Makes each iterator type a [`Report`] of its element type.
macro_rules! reports {
    ($($iterator:ident of $element:ident),*) => {$(
        impl Report for $iterator {
            type Element = $element;
            fn lines(&mut self) -> &mut Lines {
                &mut self.0
            }
        }
        impl From<Lines> for $iterator {
            fn from(lines: Lines) -> Self {
                $iterator(lines)
            }
        }
        impl From<Line> for $element {
            fn from(line: Line) -> Self {
                $element(line)
            }
        }
        impl AsRef<Line> for $element {
            fn as_ref(&self) -> &Line {
                &self.0
            }
        }
    )*};
}

reports!(WipeIterator of WipeElement, PurgeIterator of PurgeElement);

/// The lines of a wipe's report (`removed` its data files' URIs as other programs open them).
fn wipe_lines(report: &WipeReport, removed: &[String], porcelain: bool) -> Vec<String> {
    if porcelain {
        return removed.iter().chain(&report.catalogue_removed).cloned().collect();
    }
    let verb = if report.done { "removed" } else { "to remove (dry run)" };
    let mut lines = Vec::new();
    lines.extend(report.datasets.iter().map(|d| format!("[Database: {d}] {verb}: the whole data set")));
    lines.extend(report.collocations.iter().map(|(d, c)| format!("[Database: {d}] {verb}: the indexes of {c}")));
    section(&mut lines, "Data URIs to delete:", removed);
    section(&mut lines, "Index URIs to delete:", &report.catalogue_removed);
    section(&mut lines, "Data URIs kept (a writer still appends to them):", &report.in_use);
    lines
}

/// The lines of a purge's report (`removed` as for [`wipe_lines`]).
fn purge_lines(report: &PurgeReport, removed: &[String], porcelain: bool) -> Vec<String> {
    if porcelain {
        return removed.iter().chain(&report.catalogue_removed).cloned().collect();
    }
    let mut lines = vec![
        format!("Superseded fields: {} ({} bytes)", report.superseded_fields, report.superseded_bytes),
        format!("Indexes {}: {}", if report.done { "hidden" } else { "to hide (dry run)" }, report.indexes_masked),
        format!("Bytes {}: {}", if report.done { "freed" } else { "to free (dry run)" }, report.bytes_freed),
        format!("Superseded bytes kept (in files that hold live fields): {}", report.unreclaimable_bytes),
    ];
    section(&mut lines, "Data URIs to delete:", removed);
    section(&mut lines, "Index URIs to delete:", &report.catalogue_removed);
    section(&mut lines, "Data URIs kept (a writer still appends to them):", &report.in_use);
    lines
}

/// Data files' URIs as other programs open them (a POSIX path).
fn absolute(store: &FieldStore, uris: &[String]) -> Result<Vec<String>, CError> {
    uris.iter().map(|u| store.absolute_uri(u).map_err(CError::from)).collect()
}

/// A heading and its paths, indented, when there are any.
fn section(lines: &mut Vec<String>, heading: &str, paths: &[String]) {
    if !paths.is_empty() {
        lines.push(heading.to_string());
        lines.extend(paths.iter().map(|p| format!("    {p}")));
    }
}

/// A request that changes data sets (`what`: wipe, purge, locking), which must name the
/// tools' minimum keys (class, expver, stream, date, time).
pub(crate) fn changing_request(req: &Request, what: &str) -> Result<fieldstore::Request, CError> {
    let request = req.to_request()?;
    if let Some(missing) = MINIMUM_KEYS_TO_CHANGE.iter().find(|k| request.get(k).is_none()) {
        return Err(CError(format!("{what} needs '{missing}' in the request {req} (it must name {})", MINIMUM_KEYS_TO_CHANGE.join(", "))));
    }
    Ok(request)
}

/// Hands out an iterator whose first `next` runs `run` (a wipe or purge, `what`) on the
/// handle's store with the request, which must name the minimum keys: its report's lines, none
/// when nothing matched.
///
/// # Safety
/// `fdb` NULL or a live handle; `req` NULL or a live request; `it` NULL or writable.
unsafe fn start<I: Report, R>(fdb: *mut Handle, req: *mut Request, it: *mut *mut I, what: &str, run: R) -> CResult
where
    R: FnOnce(&FieldStore, &fieldstore::Request) -> fieldstore::Result<Result<Vec<String>, CError>> + Send + 'static,
{
    // SAFETY: as the caller guarantees.
    let (handle, req) = unsafe { (ffi::shared(fdb, "fdb")?, ffi::shared(req, "req")?) };
    let (store, request) = (handle.store.clone(), changing_request(req, what)?);
    let work: Work = Box::new(move || match run(&store, &request) {
        Ok(lines) => lines,
        Err(e) if e.kind() == ErrorKind::NotFound => Ok(Vec::new()),
        Err(e) => Err(e.into()),
    });
    // SAFETY: as the caller guarantees.
    unsafe { ffi::hand_out(it, "it", I::from(Lines { work: Some(work), lines: Vec::new().into_iter(), failed: None })) }
}

/// The next line as a new element (to delete), an empty one after the last, as FDB5 does.
///
/// # Safety
/// `it` NULL or live lines; `element` NULL or writable.
unsafe fn next_line<I: Report>(it: *mut I, element: *mut *mut I::Element) -> CResult {
    // SAFETY: as the caller guarantees.
    let it = unsafe { ffi::object(it, "it")? }.lines();
    if element.is_null() {
        return Err(ffi::null("element"));
    }
    if let Some(work) = it.work.take() {
        match work() {
            Ok(lines) => it.lines = lines.into_iter(),
            Err(CError(message)) => it.failed = Some(message),
        }
    }
    if let Some(message) = &it.failed {
        return Err(CError(message.clone()));
    }
    let (line, code) = match it.lines.next() {
        Some(line) => (line, SUCCESS),
        None => (String::new(), ITERATION_COMPLETE),
    };
    // SAFETY: non-NULL and writable, as the caller guarantees.
    unsafe { ffi::hand_out(element, "element", I::Element::from(Line { text: ffi::c_string(&line) }))? };
    Ok(code)
}

/// A line's text, valid until the element is deleted.
///
/// # Safety
/// `element` NULL or a live element; `str` NULL or writable.
unsafe fn line_text<E: AsRef<Line>>(element: *mut E, str: *mut *const c_char) -> CResult {
    // SAFETY: as the caller guarantees.
    let element: &Line = unsafe { ffi::shared(element, "element")? }.as_ref();
    // SAFETY: as the caller guarantees.
    unsafe { ffi::put(str, "str", element.text.as_ptr()) }.map(|()| SUCCESS)
}

/// Deletes an iterator (NULL too, as FDB5 allows).
///
/// # Safety
/// `it` NULL or live lines, used no more.
unsafe fn delete_lines<I: Report>(it: *mut I) -> CResult {
    if it.is_null() {
        return Ok(SUCCESS);
    }
    // SAFETY: as the caller guarantees.
    unsafe { ffi::delete(it, "it") }
}

/// Wipes what a request names (a dry run unless `doit`), at the iterator's first `next`:
/// whole data sets, or the indexes of the collocations it names. `unsafeWipeAll` is accepted
/// and has no use (fieldstore's wipe removes only what its catalogue and store know). Nothing
/// matching gives no element.
///
/// # Safety
/// `fdb` NULL or a live handle; `req` NULL or a live request; `it` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn fdb_wipe(
    fdb: *mut Handle,
    req: *mut Request,
    doit: bool,
    porcelain: bool,
    _unsafe_wipe_all: bool,
    it: *mut *mut WipeIterator,
) -> c_int {
    // SAFETY: as the caller guarantees.
    ffi::call(|| unsafe {
        start(fdb, req, it, "wipe", move |store, request| {
            store.wipe(request, doit).map(|report| Ok(wipe_lines(&report, &absolute(store, &report.removed)?, porcelain)))
        })
    })
}

/// The wipe report's next line; `FDB_ITERATION_COMPLETE` (with an empty element) after the last.
///
/// # Safety
/// `it` NULL or a live wipe iterator; `element` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn fdb_wipe_iterator_next(it: *mut WipeIterator, element: *mut *mut WipeElement) -> c_int {
    // SAFETY: as the caller guarantees.
    ffi::call(|| unsafe { next_line(it, element) })
}

/// Deletes a wipe iterator.
///
/// # Safety
/// `it` NULL or a live wipe iterator, used no more.
#[no_mangle]
pub unsafe extern "C" fn fdb_delete_wipe_iterator(it: *mut WipeIterator) -> c_int {
    // SAFETY: as the caller guarantees.
    ffi::call(|| unsafe { delete_lines(it) })
}

/// Deletes a wipe element.
///
/// # Safety
/// `element` NULL or a live wipe element, used no more.
#[no_mangle]
pub unsafe extern "C" fn fdb_delete_wipe_element(element: *mut WipeElement) -> c_int {
    // SAFETY: as the caller guarantees.
    ffi::call(|| unsafe { ffi::delete(element, "element") })
}

/// A wipe element's text.
///
/// # Safety
/// `element` NULL or a live wipe element; `str` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn fdb_wipe_element_string(element: *mut WipeElement, str: *mut *const c_char) -> c_int {
    // SAFETY: as the caller guarantees.
    ffi::call(|| unsafe { line_text(element, str) })
}

/// Reclaims fields replaced by newer archives of the same keys among what a request names (a
/// dry run unless `doit`), at the iterator's first `next`. Nothing matching gives no element.
///
/// # Safety
/// `fdb` NULL or a live handle; `req` NULL or a live request; `it` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn fdb_purge(fdb: *mut Handle, req: *mut Request, doit: bool, porcelain: bool, it: *mut *mut PurgeIterator) -> c_int {
    // SAFETY: as the caller guarantees.
    ffi::call(|| unsafe {
        start(fdb, req, it, "purge", move |store, request| {
            store.purge(request, doit).map(|report| Ok(purge_lines(&report, &absolute(store, &report.removed)?, porcelain)))
        })
    })
}

/// The purge report's next line; `FDB_ITERATION_COMPLETE` (with an empty element) after the last.
///
/// # Safety
/// `it` NULL or a live purge iterator; `element` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn fdb_purge_iterator_next(it: *mut PurgeIterator, element: *mut *mut PurgeElement) -> c_int {
    // SAFETY: as the caller guarantees.
    ffi::call(|| unsafe { next_line(it, element) })
}

/// Deletes a purge iterator.
///
/// # Safety
/// `it` NULL or a live purge iterator, used no more.
#[no_mangle]
pub unsafe extern "C" fn fdb_delete_purge_iterator(it: *mut PurgeIterator) -> c_int {
    // SAFETY: as the caller guarantees.
    ffi::call(|| unsafe { delete_lines(it) })
}

/// Deletes a purge element.
///
/// # Safety
/// `element` NULL or a live purge element, used no more.
#[no_mangle]
pub unsafe extern "C" fn fdb_delete_purge_element(element: *mut PurgeElement) -> c_int {
    // SAFETY: as the caller guarantees.
    ffi::call(|| unsafe { ffi::delete(element, "element") })
}

/// A purge element's text.
///
/// # Safety
/// `element` NULL or a live purge element; `str` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn fdb_purge_element_string(element: *mut PurgeElement, str: *mut *const c_char) -> c_int {
    // SAFETY: as the caller guarantees.
    ffi::call(|| unsafe { line_text(element, str) })
}
