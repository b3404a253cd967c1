//! `fdb_retrieve` and the data reader: the fields a request names, in the order it names
//! values (only the newest of a key), as one stream to open, read in pieces of any size,
//! seek, skip and tell in. A request naming nothing stored gives an empty stream, as in
//! FDB5; `fieldstore_datareader_explanation` says why.

use std::ffi::{c_int, c_long, c_void, CString};

use crate::ffi::{self, CError, SUCCESS};
use crate::handle::Handle;
use crate::request::Request;

/// `fdb_datareader_t`: empty until `fdb_retrieve` fills it.
#[derive(Default)]
pub struct DataReader {
    retrieved: Option<Retrieved>,
}

/// What a retrieve put into a reader.
pub(crate) struct Retrieved {
    reader: fieldstore::DataReader,
    size: u64,
    position: u64,
    open: bool,
    /// Why nothing matched, when nothing did.
    pub(crate) explanation: Option<CString>,
}

impl DataReader {
    /// The retrieve's stream; an error before any retrieve.
    pub(crate) fn retrieved(&mut self) -> Result<&mut Retrieved, CError> {
        self.retrieved.as_mut().ok_or_else(|| CError("the data reader holds no retrieve: call fdb_retrieve first".into()))
    }
}

impl Retrieved {
    /// Moves to `position`, which must be within the stream (its end included).
    fn seek(&mut self, position: i128) -> Result<(), CError> {
        let size = self.size;
        let Some(to) = u64::try_from(position).ok().filter(|p| *p <= size) else {
            return Err(CError(format!("position {position} is outside the retrieved data (0 to {size} bytes)")));
        };
        self.reader.seek(to)?;
        self.position = to;
        Ok(())
    }

    /// Fills `out` as far as the stream goes, straight from storage; the bytes read.
    fn read(&mut self, out: &mut [u8]) -> Result<usize, CError> {
        let filled = self.reader.read_to_fill(out)?;
        self.position += filled as u64;
        Ok(filled)
    }
}

/// A `long` for C, or an error naming what does not fit.
fn long(value: u64, what: &str) -> Result<c_long, CError> {
    c_long::try_from(value).map_err(|_| CError(format!("{what} of {value} bytes does not fit a long")))
}

/// Creates an empty data reader.
///
/// # Safety
/// `dr` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn fdb_new_datareader(dr: *mut *mut DataReader) -> c_int {
    // SAFETY: as the caller guarantees.
    ffi::call(|| unsafe { ffi::hand_out(dr, "dr", DataReader::default()) })
}

/// Retrieves what a request names into a data reader (replacing what it held). Nothing
/// matching is no error: the stream is empty.
///
/// # Safety
/// `fdb` NULL or a live handle; `req` NULL or a live request; `dr` NULL or a live reader.
#[no_mangle]
pub unsafe extern "C" fn fdb_retrieve(fdb: *mut Handle, req: *mut Request, dr: *mut DataReader) -> c_int {
    ffi::call(|| {
        // SAFETY: as the caller guarantees.
        let (handle, req, dr) = unsafe { (ffi::shared(fdb, "fdb")?, ffi::shared(req, "req")?, ffi::object(dr, "dr")?) };
        let (reader, why) = handle.store.retrieve(&req.to_request()?)?;
        let size = reader.total_bytes();
        dr.retrieved = Some(Retrieved { reader, size, position: 0, open: false, explanation: why.as_deref().map(ffi::c_string) });
        Ok(SUCCESS)
    })
}

/// Opens the retrieved stream at its start; its size in `*size` (NULL: not wanted).
///
/// # Safety
/// `dr` NULL or a live reader; `size` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn fdb_datareader_open(dr: *mut DataReader, size: *mut c_long) -> c_int {
    ffi::call(|| {
        // SAFETY: as the caller guarantees.
        let retrieved = unsafe { ffi::object(dr, "dr")? }.retrieved()?;
        if retrieved.position != 0 {
            retrieved.seek(0)?;
        }
        retrieved.open = true;
        if !size.is_null() {
            // SAFETY: non-NULL and writable, as the caller guarantees.
            unsafe { size.write(long(retrieved.size, "a stream")?) };
        }
        Ok(SUCCESS)
    })
}

/// Closes the stream (it may be opened again).
///
/// # Safety
/// `dr` NULL or a live reader.
#[no_mangle]
pub unsafe extern "C" fn fdb_datareader_close(dr: *mut DataReader) -> c_int {
    ffi::call(|| {
        // SAFETY: as the caller guarantees.
        unsafe { ffi::object(dr, "dr")? }.retrieved()?.open = false;
        Ok(SUCCESS)
    })
}

/// The position in the stream.
///
/// # Safety
/// `dr` NULL or a live reader; `pos` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn fdb_datareader_tell(dr: *mut DataReader, pos: *mut c_long) -> c_int {
    ffi::call(|| {
        // SAFETY: as the caller guarantees.
        let retrieved = unsafe { ffi::object(dr, "dr")? }.retrieved()?;
        // SAFETY: as the caller guarantees.
        unsafe { ffi::put(pos, "pos", long(retrieved.position, "a position")?) }.map(|()| SUCCESS)
    })
}

/// Moves to byte `pos` of the stream (0 to its size).
///
/// # Safety
/// `dr` NULL or a live reader.
#[no_mangle]
pub unsafe extern "C" fn fdb_datareader_seek(dr: *mut DataReader, pos: c_long) -> c_int {
    ffi::call(|| {
        // SAFETY: as the caller guarantees.
        unsafe { ffi::object(dr, "dr")? }.retrieved()?.seek(i128::from(pos))?;
        Ok(SUCCESS)
    })
}

/// Moves `count` bytes on (back, if negative), within the stream.
///
/// # Safety
/// `dr` NULL or a live reader.
#[no_mangle]
pub unsafe extern "C" fn fdb_datareader_skip(dr: *mut DataReader, count: c_long) -> c_int {
    ffi::call(|| {
        // SAFETY: as the caller guarantees.
        let retrieved = unsafe { ffi::object(dr, "dr")? }.retrieved()?;
        retrieved.seek(i128::from(retrieved.position) + i128::from(count))?;
        Ok(SUCCESS)
    })
}

/// The stream's size in bytes.
///
/// # Safety
/// `dr` NULL or a live reader; `size` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn fdb_datareader_size(dr: *mut DataReader, size: *mut c_long) -> c_int {
    ffi::call(|| {
        // SAFETY: as the caller guarantees.
        let retrieved = unsafe { ffi::object(dr, "dr")? }.retrieved()?;
        // SAFETY: as the caller guarantees.
        unsafe { ffi::put(size, "size", long(retrieved.size, "a stream")?) }.map(|()| SUCCESS)
    })
}

/// Reads up to `count` bytes into `buf` (as many as the stream still holds); `*read` says
/// how many: 0 at the end, and before the stream is opened (as in FDB5). Every field is
/// checked against its checksum as it is read.
///
/// # Safety
/// `dr` NULL or a live reader; `buf` NULL or `count` writable bytes; `read` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn fdb_datareader_read(dr: *mut DataReader, buf: *mut c_void, count: c_long, read: *mut c_long) -> c_int {
    ffi::call(|| {
        // SAFETY: as the caller guarantees.
        let retrieved = unsafe { ffi::object(dr, "dr")? }.retrieved()?;
        if buf.is_null() || read.is_null() {
            return Err(ffi::null(if buf.is_null() { "buf" } else { "read" }));
        }
        let count = usize::try_from(count).map_err(|_| CError(format!("count {count} is negative")))?;
        let n = if retrieved.open && count > 0 {
            // SAFETY: `buf` holds `count` writable bytes, as the caller guarantees. (They are
            // lent as initialised bytes, as every reader into a C caller's buffer lends them:
            // the bytes are only written, never read.)
            let out = unsafe { std::slice::from_raw_parts_mut(buf.cast::<u8>(), count) };
            retrieved.read(out)?
        } else {
            0
        };
        // SAFETY: non-NULL and writable, as the caller guarantees.
        unsafe { read.write(long(n as u64, "a read")?) };
        Ok(SUCCESS)
    })
}

/// Deletes a data reader.
///
/// # Safety
/// `dr` NULL or a live reader, used no more.
#[no_mangle]
pub unsafe extern "C" fn fdb_delete_datareader(dr: *mut DataReader) -> c_int {
    // SAFETY: as the caller guarantees.
    ffi::call(|| unsafe { ffi::delete(dr, "dr") })
}
