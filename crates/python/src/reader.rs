//! The reader `FieldStore.retrieve` returns: the retrieved fields as one stream of bytes
//! (`read`), or field by field (iteration), over fieldstore's owned `DataReader`. Reads
//! release the GIL; `read` fills the returned `bytes` object in place (no copy through a
//! buffer of its own).

use std::io::Read;
use std::mem::ManuallyDrop;
use std::sync::{Mutex, MutexGuard};

use fieldstore::DataReader;
use pyo3::prelude::*;
use pyo3::sync::MutexExt;
use pyo3::types::PyBytes;

use crate::errors::{io_to_py, to_py};
use crate::process::Owner;
use crate::ListEntry;

/// What a reader holds between calls.
struct State {
    reader: DataReader,
    /// Bytes handed out so far.
    position: u64,
}

/// Retrieved fields: a file-like object (`read`, `readall`, `tell`, `size`), an iterator of
/// `(ListEntry, bytes)` pairs, one per field, and a context manager.
#[pyclass(module = "fieldstore._native", frozen)]
pub struct Reader {
    /// Taken only by `Drop`, which drops it with the GIL released.
    state: ManuallyDrop<Mutex<State>>,
    owner: Owner,
    /// The length of all the fields together.
    total: u64,
}

impl Reader {
    /// A reader handing out `reader`'s fields.
    pub fn new(reader: DataReader) -> Self {
        let total = reader.total_bytes();
        Reader { state: ManuallyDrop::new(Mutex::new(State { reader, position: 0 })), total, owner: Owner::current() }
    }

    /// The state, waited for detached from the interpreter: a thread holding it reads with the
    /// GIL released and takes the GIL again to finish, so a waiter must not hold the GIL. Also
    /// after a thread panicked holding it (a read is then an error, not a hang).
    fn state(&self, py: Python<'_>) -> PyResult<MutexGuard<'_, State>> {
        // First: in a child after fork() the lock may be held by a thread that is not there.
        self.owner.check("reader")?;
        Ok(self.state.lock_py_attached(py).unwrap_or_else(std::sync::PoisonError::into_inner))
    }
}

impl Drop for Reader {
    fn drop(&mut self) {
        // SAFETY: `state` is taken once, here, and never used after: the reader is being dropped.
        self.owner.release(unsafe { ManuallyDrop::take(&mut self.state) });
    }
}

#[pymethods]
impl Reader {
    /// Up to `size` bytes (all that are left when negative), as `bytes`; `b""` at the end.
    #[pyo3(signature = (size=-1))]
    fn read<'py>(&self, py: Python<'py>, size: i64) -> PyResult<Bound<'py, PyBytes>> {
        let mut state = self.state(py)?;
        let left = self.total - state.position;
        let wanted = u64::try_from(size).map_or(left, |size| size.min(left));
        let length = usize::try_from(wanted).map_err(|_| crate::errors::Error::new_err(format!("{wanted} bytes do not fit in memory")))?;
        let state = &mut *state;
        let bytes = PyBytes::new_with(py, length, |buffer| py.detach(|| state.reader.read_exact(buffer)).map_err(io_to_py))?;
        state.position += wanted;
        Ok(bytes)
    }

    /// All the bytes that are left.
    fn readall<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyBytes>> {
        self.read(py, -1)
    }

    /// How many bytes were read so far.
    fn tell(&self, py: Python<'_>) -> PyResult<u64> {
        Ok(self.state(py)?.position)
    }

    /// The length of all the retrieved fields together, in bytes.
    fn size(&self) -> u64 {
        self.total
    }

    /// How many fields were retrieved.
    fn fields(&self, py: Python<'_>) -> PyResult<usize> {
        Ok(self.state(py)?.reader.fields().len())
    }

    fn __iter__(slf: Bound<'_, Self>) -> Bound<'_, Self> {
        slf
    }

    /// The next field and its bytes, whole and checked; may follow `read` only at a field
    /// boundary.
    fn __next__<'py>(&self, py: Python<'py>) -> PyResult<Option<(ListEntry, Bound<'py, PyBytes>)>> {
        let mut state = self.state(py)?;
        let state = &mut *state;
        let Some((entry, bytes)) = py.detach(|| state.reader.next_field()).map_err(to_py)? else { return Ok(None) };
        let field = (ListEntry::field(entry.clone()), PyBytes::new(py, bytes));
        state.position += bytes.len() as u64;
        Ok(Some(field))
    }

    fn __enter__(slf: Bound<'_, Self>) -> Bound<'_, Self> {
        slf
    }

    fn __exit__(&self, _exc_type: Option<Bound<'_, PyAny>>, _exc: Option<Bound<'_, PyAny>>, _tb: Option<Bound<'_, PyAny>>) -> bool {
        false
    }
}
