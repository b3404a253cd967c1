//! `fdb_list` and its iterator: the data sets (depth 1), collocations (2) or fields (3) a
//! request names, each with its keys for a split key and, for fields, where the bytes are.

use std::collections::HashMap;
use std::ffi::{c_char, c_int, CString};
use std::sync::Arc;

use fieldstore::{FieldEntry, Key, ListOptions, Request as CoreRequest};

use crate::ffi::{self, CError, ITERATION_COMPLETE, SUCCESS};
use crate::handle::Handle;
use crate::request::{Request, SplitKey};

/// `fdb_listiterator_t`: a listing, read element by element.
pub struct ListIterator {
    elements: Elements,
    /// The element `fdb_listiterator_next` moved to last (none before the first call).
    current: Option<usize>,
    /// Why nothing matched, when nothing did.
    pub(crate) explanation: Option<CString>,
}

/// What a listing holds, by depth.
enum Elements {
    Datasets(Vec<Key>),
    Collocations(Vec<(Key, Key)>),
    /// The fields, and the file or object of each as other programs open it (an index into
    /// `uris`: fields share a few).
    Fields {
        fields: Vec<FieldEntry>,
        uri_of: Vec<u32>,
        uris: Vec<CString>,
    },
}

impl Elements {
    fn len(&self) -> usize {
        match self {
            Elements::Datasets(d) => d.len(),
            Elements::Collocations(c) => c.len(),
            Elements::Fields { fields, .. } => fields.len(),
        }
    }
}

impl ListIterator {
    /// The element moved to, or an error when there is none.
    fn element(&self) -> Result<usize, CError> {
        match self.current {
            Some(i) if i < self.elements.len() => Ok(i),
            Some(_) => Err(CError("the list iterator is past its last element".into())),
            None => Err(CError("the list iterator is before its first element: call fdb_listiterator_next first".into())),
        }
    }

    /// The current element's keys, level by level.
    fn levels(&self) -> Result<Vec<&Key>, CError> {
        let i = self.element()?;
        Ok(match &self.elements {
            Elements::Datasets(d) => vec![&d[i]],
            Elements::Collocations(c) => vec![&c[i].0, &c[i].1],
            Elements::Fields { fields, .. } => vec![&fields[i].dataset, &fields[i].collocation, &fields[i].element],
        })
    }
}

/// Lists what `req` names (NULL: everything) to `depth` (1 data sets, 2 collocations, 3
/// fields; any other value 3). `duplicates` true leaves out fields a newer archive of the
/// same key replaced, false lists them too: what FDB5 5.25 does, whose header says the
/// opposite (its bool is its `deduplicate` argument; pyfdb passes `not include_masked`).
///
/// # Safety
/// `fdb` NULL or a live handle; `req` NULL or a live request; `it` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn fdb_list(
    fdb: *mut Handle,
    req: *const Request,
    it: *mut *mut ListIterator,
    duplicates: bool,
    depth: c_int,
) -> c_int {
    ffi::call(|| {
        // SAFETY: as the caller guarantees.
        let handle = unsafe { ffi::shared(fdb, "fdb")? };
        if it.is_null() {
            return Err(ffi::null("it"));
        }
        // SAFETY: as the caller guarantees.
        let request = match unsafe { req.as_ref() } {
            Some(req) => req.to_request()?,
            None => CoreRequest::default(),
        };
        let depth = u8::try_from(depth).ok().filter(|d| (1..=3).contains(d)).unwrap_or(3);
        let options = ListOptions { depth, include_superseded: !duplicates, ..ListOptions::default() };
        let matches = handle.store.list(&request, options)?;
        let explanation = matches.explanation.as_deref().map(ffi::c_string);
        let elements = match depth {
            1 => Elements::Datasets(matches.datasets),
            2 => Elements::Collocations(matches.collocations),
            _ => {
                let (uri_of, uris) = absolute_uris(&handle.store, &matches.fields)?;
                Elements::Fields { fields: matches.fields, uri_of, uris }
            }
        };
        let iterator = ListIterator { elements, current: None, explanation };
        // SAFETY: as the caller guarantees.
        unsafe { ffi::hand_out(it, "it", iterator) }
    })
}

/// The files or objects of `fields` as other programs open them (POSIX paths), each once,
/// and for each field the index of its own.
fn absolute_uris(store: &fieldstore::FieldStore, fields: &[FieldEntry]) -> Result<(Vec<u32>, Vec<CString>), CError> {
    let mut known: HashMap<&str, u32> = HashMap::new();
    let (mut uri_of, mut uris) = (Vec::with_capacity(fields.len()), Vec::new());
    let mut last: Option<(&Arc<str>, u32)> = None;
    for field in fields {
        let uri = &field.location.uri;
        // Fields of one file are mostly listed together: the previous one's URI first.
        let index = match last {
            Some((previous, index)) if Arc::ptr_eq(previous, uri) => index,
            _ => match known.get(&**uri) {
                Some(index) => *index,
                None => {
                    let index = u32::try_from(uris.len()).map_err(|_| CError("more files than a listing can name".into()))?;
                    uris.push(ffi::c_string(&store.absolute_uri(uri)?));
                    known.insert(uri, index);
                    index
                }
            },
        };
        last = Some((uri, index));
        uri_of.push(index);
    }
    Ok((uri_of, uris))
}

/// Moves to the next element; `FDB_ITERATION_COMPLETE` after the last (and after).
///
/// # Safety
/// `it` NULL or a live list iterator.
#[no_mangle]
pub unsafe extern "C" fn fdb_listiterator_next(it: *mut ListIterator) -> c_int {
    ffi::call(|| {
        // SAFETY: as the caller guarantees.
        let it = unsafe { ffi::object(it, "it")? };
        let next = it.current.map_or(0, |i| (i + 1).min(it.elements.len()));
        it.current = Some(next);
        Ok(if next < it.elements.len() { SUCCESS } else { ITERATION_COMPLETE })
    })
}

/// Where the current field's bytes are: the file's path (POSIX; an object's URI elsewhere),
/// valid as long as the iterator; the offset and length in it. An error for data
/// sets and collocations (depth 1 and 2), which have no bytes.
///
/// # Safety
/// `it` NULL or a live list iterator; the outputs NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn fdb_listiterator_attrs(it: *mut ListIterator, uri: *mut *const c_char, off: *mut usize, len: *mut usize) -> c_int {
    ffi::call(|| {
        // SAFETY: as the caller guarantees.
        let it = unsafe { ffi::object(it, "it")? };
        for (ptr, name) in [(uri.is_null(), "uri"), (off.is_null(), "off"), (len.is_null(), "len")] {
            if ptr {
                return Err(ffi::null(name));
            }
        }
        let i = it.element()?;
        let Elements::Fields { fields, uri_of, uris } = &it.elements else {
            return Err(CError("a data set or collocation (list depth 1 or 2) has no location: list to depth 3".into()));
        };
        let (location, absolute) = (&fields[i].location, &uris[uri_of[i] as usize]);
        let offset = usize::try_from(location.offset).map_err(|_| CError(format!("offset {} does not fit a size_t", location.offset)))?;
        let length = usize::try_from(location.length).map_err(|_| CError(format!("length {} does not fit a size_t", location.length)))?;
        // SAFETY: each non-NULL (checked) and writable, as the caller guarantees; the URI
        // lives as long as the iterator.
        unsafe {
            uri.write(absolute.as_ptr());
            off.write(offset);
            len.write(length);
        }
        Ok(SUCCESS)
    })
}

/// Fills a split key with the current element's keys (copied: the split key stays valid
/// whatever the iterator does next).
///
/// # Safety
/// `it` NULL or a live list iterator; `key` NULL or a live split key.
#[no_mangle]
pub unsafe extern "C" fn fdb_listiterator_splitkey(it: *mut ListIterator, key: *mut SplitKey) -> c_int {
    ffi::call(|| {
        // SAFETY: as the caller guarantees.
        let (it, key) = unsafe { (ffi::object(it, "it")?, ffi::object(key, "key")?) };
        key.attach(&it.levels()?);
        Ok(SUCCESS)
    })
}

/// Deletes a list iterator.
///
/// # Safety
/// `it` NULL or a live list iterator, used no more.
#[no_mangle]
pub unsafe extern "C" fn fdb_delete_listiterator(it: *mut ListIterator) -> c_int {
    // SAFETY: as the caller guarantees.
    ffi::call(|| unsafe { ffi::delete(it, "it") })
}
