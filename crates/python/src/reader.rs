//! The reader `FieldStore.retrieve` returns: the retrieved fields as one stream of bytes
//! (`read`, `readinto`, `seek`), or field by field (iteration), over fieldstore's owned
//! `DataReader`. Reads release the GIL; `read` fills the returned `bytes` object in place and
//! `readinto` the caller's buffer (no copy through a buffer of the reader's own when the
//! buffer holds 1 MiB or more).

use std::mem::ManuallyDrop;
use std::sync::{Mutex, MutexGuard};

use fieldstore::DataReader;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::sync::MutexExt;
use pyo3::types::PyBytes;

use crate::errors::to_py;
use crate::process::Owner;
use crate::ListEntry;

/// What a reader holds between calls.
struct State {
    /// `None` once closed.
    reader: Option<DataReader>,
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
        Reader { state: ManuallyDrop::new(Mutex::new(State { reader: Some(reader), position: 0 })), total, owner: Owner::current() }
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
        let reader = open(&mut state.reader)?;
        let position = &mut state.position;
        PyBytes::new_with(py, length, |buffer| read_interruptibly(py, reader, buffer, position))
    }

    /// All the bytes that are left.
    fn readall<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyBytes>> {
        self.read(py, -1)
    }

    /// Fills `buffer` (any writable, C-contiguous buffer: `bytearray`, `memoryview`, a numpy
    /// array) with the next bytes, in place; returns how many (fewer only at the end).
    #[cfg(Py_3_11)]
    fn readinto(&self, py: Python<'_>, buffer: &Bound<'_, PyAny>) -> PyResult<usize> {
        let view = writable_bytes(buffer)?;
        if view.len_bytes() == 0 {
            // An empty buffer's pointer may be null: nothing to fill.
            return Ok(0);
        }
        // SAFETY: the buffer stays exported, so valid and not resized, until `view` is
        // released after the read; it is writable and C-contiguous (checked), so its bytes
        // are `len_bytes` contiguous bytes. Other Python threads may write into the same
        // memory meanwhile, as with `io.FileIO.readinto`: bytes, never memory safety.
        let target = unsafe { std::slice::from_raw_parts_mut(view.buf_ptr().cast::<u8>(), view.len_bytes()) };
        let mut state = self.state(py)?;
        let state = &mut *state;
        let left = usize::try_from(self.total - state.position).unwrap_or(usize::MAX);
        let target = &mut target[..left.min(view.len_bytes())];
        let reader = open(&mut state.reader)?;
        read_interruptibly(py, reader, target, &mut state.position)?;
        Ok(target.len())
    }

    /// Fills `buffer` (any writable buffer) with the next bytes; returns how many (fewer only
    /// at the end). Built for a Python before 3.11, whose stable ABI has no buffer protocol:
    /// the bytes pass through one `bytes` object.
    #[cfg(not(Py_3_11))]
    fn readinto(&self, py: Python<'_>, buffer: &Bound<'_, PyAny>) -> PyResult<usize> {
        let view = pyo3::types::PyMemoryView::from(buffer)?.call_method1("cast", ("B",))?;
        let data = self.read(py, i64::try_from(view.len()?).unwrap_or(i64::MAX))?;
        let length = data.len()?;
        view.set_item(pyo3::types::PySlice::new(py, 0, length.try_into()?, 1), data)?;
        Ok(length)
    }

    /// Moves to byte `offset` from the start (`whence` 0), the current position (1) or the end
    /// (2); returns the new position, at most the end. Costs at most a read of the field that
    /// holds it (a seek back starts again at that field).
    #[pyo3(signature = (offset, whence=0))]
    fn seek(&self, py: Python<'_>, offset: i64, whence: i32) -> PyResult<u64> {
        let mut state = self.state(py)?;
        let base = match whence {
            0 => 0,
            1 => state.position,
            2 => self.total,
            _ => return Err(PyValueError::new_err(format!("whence {whence}: not 0 (start), 1 (current) or 2 (end)"))),
        };
        let target = i64::try_from(base).ok().and_then(|base| base.checked_add(offset)).and_then(|target| u64::try_from(target).ok());
        let Some(target) = target else {
            return Err(PyValueError::new_err(format!("seek to {base} + {offset}: outside the stream of {} bytes", self.total)));
        };
        let state = &mut *state;
        let reader = open(&mut state.reader)?;
        state.position = py.detach(|| reader.seek(target)).map_err(to_py)?;
        Ok(state.position)
    }

    /// Whether `seek` works: always.
    fn seekable(&self) -> bool {
        true
    }

    /// Whether `read` works: always.
    fn readable(&self) -> bool {
        true
    }

    /// How many bytes were read so far (the stream position).
    fn tell(&self, py: Python<'_>) -> PyResult<u64> {
        let mut state = self.state(py)?;
        open(&mut state.reader)?;
        Ok(state.position)
    }

    /// The length of all the retrieved fields together, in bytes.
    fn size(&self) -> u64 {
        self.total
    }

    /// How many fields were retrieved.
    fn fields(&self, py: Python<'_>) -> PyResult<usize> {
        Ok(open(&mut self.state(py)?.reader)?.fields().len())
    }

    fn __iter__(slf: Bound<'_, Self>) -> Bound<'_, Self> {
        slf
    }

    /// The next field and its bytes, whole and checked; may follow `read` only at a field
    /// boundary.
    fn __next__<'py>(&self, py: Python<'py>) -> PyResult<Option<(ListEntry, Bound<'py, PyBytes>)>> {
        let mut state = self.state(py)?;
        let state = &mut *state;
        let reader = open(&mut state.reader)?;
        let Some((entry, bytes)) = py.detach(|| reader.next_field()).map_err(to_py)? else { return Ok(None) };
        let field = (ListEntry::field(entry.clone()), PyBytes::new(py, bytes));
        state.position += bytes.len() as u64;
        Ok(Some(field))
    }

    fn __enter__(slf: Bound<'_, Self>) -> Bound<'_, Self> {
        slf
    }

    /// Closes the reader.
    fn __exit__(
        &self,
        py: Python<'_>,
        _exc_type: Option<Bound<'_, PyAny>>,
        _exc: Option<Bound<'_, PyAny>>,
        _tb: Option<Bound<'_, PyAny>>,
    ) -> PyResult<bool> {
        self.close(py)?;
        Ok(false)
    }

    /// Closes the reader and frees its buffers (reads ahead); later reads raise `ValueError`.
    /// Closing again does nothing.
    fn close(&self, py: Python<'_>) -> PyResult<()> {
        let reader = self.state(py)?.reader.take();
        py.detach(|| drop(reader));
        Ok(())
    }

    /// Whether the reader was closed.
    #[getter]
    fn closed(&self, py: Python<'_>) -> PyResult<bool> {
        Ok(self.state(py)?.reader.is_none())
    }
}

/// The bytes read with the GIL released at a time: between them, a signal (Ctrl-C) is acted
/// on, so a long read behind a slow server is interrupted within one piece, not at its end.
/// As large as the blocks C and Rust callers read, so that Python's reads are split between
/// two threads as theirs are (from 8 MiB on).
const INTERRUPTIBLE_PIECE: usize = 16 << 20;

/// Fills `target` from `reader`, a piece at a time, advancing `position` by each piece read:
/// a signal handler that raises (`KeyboardInterrupt`) ends the read there, the bytes read
/// so far consumed, as an interrupted file read leaves them.
fn read_interruptibly(py: Python<'_>, reader: &mut DataReader, target: &mut [u8], position: &mut u64) -> PyResult<()> {
    for piece in target.chunks_mut(INTERRUPTIBLE_PIECE) {
        py.check_signals()?;
        let filled = py.detach(|| reader.read_to_fill(piece)).map_err(to_py)?;
        if filled < piece.len() {
            return Err(crate::errors::Error::new_err(format!("the stream ended {} bytes early", piece.len() - filled)));
        }
        *position += piece.len() as u64;
    }
    Ok(())
}

/// `buffer`'s bytes, writable and C-contiguous: through a byte view (`memoryview.cast("B")`)
/// when its items are not bytes (a numpy array of floats).
#[cfg(Py_3_11)]
pub fn writable_bytes(buffer: &Bound<'_, PyAny>) -> PyResult<pyo3::buffer::PyBuffer<u8>> {
    let view = match pyo3::buffer::PyBuffer::<u8>::get(buffer) {
        Ok(view) => view,
        Err(_) => pyo3::buffer::PyBuffer::<u8>::get(&pyo3::types::PyMemoryView::from(buffer)?.call_method1("cast", ("B",))?)?,
    };
    if view.readonly() || !view.is_c_contiguous() {
        return Err(pyo3::exceptions::PyTypeError::new_err("a writable, C-contiguous buffer is needed"));
    }
    Ok(view)
}

/// The reader, unless it was closed.
fn open(reader: &mut Option<DataReader>) -> PyResult<&mut DataReader> {
    reader.as_mut().ok_or_else(|| PyValueError::new_err("I/O operation on a closed reader"))
}
