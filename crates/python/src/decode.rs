//! Decoding fields into numbers for the array interfaces (`fieldstore.arrays`): GRIB messages
//! in memory, or listed fields read from the store (no `bytes` object for their messages), on
//! as many threads as there are cores, the GIL released, into one `bytes` object of
//! little-endian floats (what a Zarr chunk holds, and what `numpy.frombuffer` views without a
//! copy) or into a caller's array.

use std::mem::MaybeUninit;
use std::ops::Range;
use std::sync::Mutex;

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::pybacked::PyBackedBytes;
use pyo3::types::{PyBytes, PyDict};

use fieldstore::error::ErrorKind;
use fieldstore::grib::decode::{self, Sample};
use fieldstore::{DataReader, Error, FieldEntry, FieldStore};

use crate::errors::to_py;

/// The element types a decode gives.
#[derive(Clone, Copy)]
enum Float {
    F32,
    F64,
}

impl Float {
    fn parse(name: &str) -> PyResult<Self> {
        match name {
            "float32" | "f4" | "<f4" => Ok(Float::F32),
            "float64" | "f8" | "<f8" => Ok(Float::F64),
            other => Err(PyValueError::new_err(format!("dtype '{other}': decode gives float32 or float64"))),
        }
    }

    fn size(self) -> usize {
        match self {
            Float::F32 => 4,
            Float::F64 => 8,
        }
    }
}

/// The values of every message, in order, as one `bytes` of `dtype` (`float32` or `float64`,
/// little endian): each message's values in its grid's order, missing points NaN. Every
/// message must have `points` values.
#[pyfunction]
#[pyo3(signature = (messages, points, dtype="float64"))]
pub fn decode_values<'py>(py: Python<'py>, messages: Vec<PyBackedBytes>, points: usize, dtype: &str) -> PyResult<Bound<'py, PyBytes>> {
    let messages: Vec<&[u8]> = messages.iter().map(|m| &m[..]).collect();
    decode_to_bytes(py, Fields::Messages(&messages), points, dtype)
}

/// The values of listed fields (`entries`, depth 3), read from `store` where the listing
/// found them and decoded: what [`decode_values`] gives for their messages, without the
/// messages' `bytes` objects (each thread reads its share with a reader of its own).
pub fn decode_stored<'py>(
    py: Python<'py>,
    store: &FieldStore,
    entries: &[FieldEntry],
    points: usize,
    dtype: &str,
) -> PyResult<Bound<'py, PyBytes>> {
    decode_to_bytes(py, Fields::Stored(store, entries), points, dtype)
}

/// Decodes `fields` into a new `bytes` of `points` values of `dtype` each.
fn decode_to_bytes<'py>(py: Python<'py>, fields: Fields<'_>, points: usize, dtype: &str) -> PyResult<Bound<'py, PyBytes>> {
    let float = Float::parse(dtype)?;
    if points == 0 {
        return Err(PyValueError::new_err("points: a field has at least one value"));
    }
    let field_bytes =
        points.checked_mul(float.size()).ok_or_else(|| PyValueError::new_err(format!("{points} points do not fit in memory")))?;
    let total = field_bytes.checked_mul(fields.len()).ok_or_else(|| PyValueError::new_err("the decoded fields do not fit in memory"))?;
    bytes_written_by(py, total, |out| {
        py.detach(|| decode_all(&fields, out, field_bytes, float)).map_err(|(index, e)| field_error(index, e))
    })
}

/// A new `bytes` of `len` bytes, all written by `init`, which must write every one when it
/// returns `Ok`: not zero-filled first (pyo3's `PyBytes::new_with` is), which for decoded
/// fields would be another pass over memory as long as the decode's.
fn bytes_written_by<'py>(
    py: Python<'py>,
    len: usize,
    init: impl FnOnce(&mut [MaybeUninit<u8>]) -> PyResult<()>,
) -> PyResult<Bound<'py, PyBytes>> {
    let size = pyo3::ffi::Py_ssize_t::try_from(len).map_err(|_| PyValueError::new_err(format!("{len} bytes do not fit in memory")))?;
    // SAFETY: `PyBytes_FromStringAndSize(NULL, size)` makes a `bytes` of `size` bytes not yet
    // written, whose buffer `PyBytes_AsString` gives; the object is owned here (dropped on an
    // error) and handed out only after `init` wrote every byte.
    unsafe {
        let object = pyo3::ffi::PyBytes_FromStringAndSize(std::ptr::null(), size);
        let bytes = Bound::from_owned_ptr_or_err(py, object)?.cast_into_unchecked::<PyBytes>();
        let buffer = pyo3::ffi::PyBytes_AsString(object).cast::<MaybeUninit<u8>>();
        init(std::slice::from_raw_parts_mut(buffer, len))?;
        Ok(bytes)
    }
}

/// Decodes every message into `out`, a writable C-contiguous buffer of `len(messages)` fields of
/// `points` values of `dtype` each (a numpy array of that shape), in place: no `bytes` on the
/// way. (Built for a Python before 3.11, whose stable ABI has no buffer protocol, the module
/// has `decode_values` only.)
#[cfg(Py_3_11)]
#[pyfunction]
#[pyo3(signature = (messages, out, dtype="float64"))]
pub fn decode_into(py: Python<'_>, messages: Vec<PyBackedBytes>, out: &Bound<'_, PyAny>, dtype: &str) -> PyResult<()> {
    let messages: Vec<&[u8]> = messages.iter().map(|m| &m[..]).collect();
    decode_to_buffer(py, Fields::Messages(&messages), out, dtype)
}

/// [`decode_stored`] into `out`, as [`decode_into`] decodes messages.
#[cfg(Py_3_11)]
pub fn decode_stored_into(py: Python<'_>, store: &FieldStore, entries: &[FieldEntry], out: &Bound<'_, PyAny>, dtype: &str) -> PyResult<()> {
    decode_to_buffer(py, Fields::Stored(store, entries), out, dtype)
}

/// Decodes `fields` into `out`, a writable C-contiguous buffer of as many fields of `dtype`.
#[cfg(Py_3_11)]
fn decode_to_buffer(py: Python<'_>, fields: Fields<'_>, out: &Bound<'_, PyAny>, dtype: &str) -> PyResult<()> {
    let float = Float::parse(dtype)?;
    let view = crate::reader::writable_bytes(out)?;
    if fields.len() == 0 {
        return Ok(());
    }
    let total = view.len_bytes();
    if total == 0 || total % fields.len() != 0 || (total / fields.len()) % float.size() != 0 {
        return Err(PyValueError::new_err(format!("a buffer of {total} bytes does not hold {} fields of {dtype}", fields.len())));
    }
    // SAFETY: the buffer stays exported, so valid and not resized, until `view` is released
    // after the decode; it is writable and C-contiguous (checked), `len_bytes` long. Other
    // Python threads may write into the same memory meanwhile: bytes, never memory safety.
    let target = unsafe { std::slice::from_raw_parts_mut(view.buf_ptr().cast::<MaybeUninit<u8>>(), total) };
    let field_bytes = total / fields.len();
    py.detach(|| decode_all(&fields, target, field_bytes, float)).map_err(|(index, e)| field_error(index, e))
}

/// The fields a decode reads: messages in memory, or listed fields in a store.
enum Fields<'a> {
    Messages(&'a [&'a [u8]]),
    Stored(&'a FieldStore, &'a [FieldEntry]),
}

impl Fields<'_> {
    fn len(&self) -> usize {
        match self {
            Fields::Messages(messages) => messages.len(),
            Fields::Stored(_, entries) => entries.len(),
        }
    }
}

/// Decodes every field into `out`, `field_bytes` each, contiguous shares on up to as many
/// threads as cores; the first error with the index of its field.
fn decode_all(fields: &Fields<'_>, out: &mut [MaybeUninit<u8>], field_bytes: usize, float: Float) -> Result<(), (usize, Error)> {
    let count = fields.len();
    if count == 0 {
        return Ok(());
    }
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get()).min(count);
    if threads == 1 {
        // One field (a Zarr chunk): a thread would cost more than it saves.
        return decode_share(fields, 0..count, out, field_bytes, float);
    }
    let per_thread = count.div_ceil(threads);
    std::thread::scope(|scope| {
        let work: Vec<_> = out
            .chunks_mut(per_thread * field_bytes)
            .enumerate()
            .map(|(part, out)| {
                let share = part * per_thread..(part * per_thread + per_thread).min(count);
                scope.spawn(move || decode_share(fields, share, out, field_bytes, float))
            })
            .collect();
        work.into_iter()
            .map(|w| w.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic)))
            .collect::<Result<Vec<()>, _>>()
            .map(drop)
    })
}

/// One thread's share of the fields, `share`, decoded into `out`.
fn decode_share(
    fields: &Fields<'_>,
    share: Range<usize>,
    out: &mut [MaybeUninit<u8>],
    field_bytes: usize,
    float: Float,
) -> Result<(), (usize, Error)> {
    let first = share.start;
    let mut slots = out.chunks_mut(field_bytes).enumerate().map(|(i, slot)| (first + i, slot));
    match fields {
        Fields::Messages(messages) => {
            slots.zip(&messages[share]).try_for_each(|((i, slot), message)| decode_one(message, slot, float).map_err(|e| (i, e)))
        }
        Fields::Stored(store, entries) => {
            let entries = &entries[share];
            let mut reader = store.read_fields(entries.to_vec()).map_err(|e| (first, e))?.with_buffer(spare_buffer());
            let decoded = slots.try_for_each(|(i, slot)| {
                let (_, message) = reader.next_field().and_then(|f| f.ok_or_else(|| ended(&entries[i - first]))).map_err(|e| (i, e))?;
                decode_one(message, slot, float).map_err(|e| (i, e))
            });
            keep_buffer(reader);
            decoded
        }
    }
}

fn ended(entry: &FieldEntry) -> Error {
    Error::new(ErrorKind::Corrupt, format!("field {}: the reader ended before it", entry.identifier()))
}

/// Decodes one message into `out`, its values' bytes, as `float`: every byte written when
/// it returns `Ok`.
fn decode_one(message: &[u8], out: &mut [MaybeUninit<u8>], float: Float) -> fieldstore::Result<()> {
    match float {
        Float::F32 => decode_as::<f32>(message, out),
        Float::F64 => decode_as::<f64>(message, out),
    }
}

/// Decodes `message` straight into `out` where it is aligned for `T` (a `bytes` object's or
/// numpy's buffer is), else through a buffer of its own.
fn decode_as<T: LittleEndian>(message: &[u8], out: &mut [MaybeUninit<u8>]) -> fieldstore::Result<()> {
    // SAFETY: `align_to_mut` only reinterprets the aligned middle of `out`, which this thread
    // alone borrows, as elements not yet written either.
    let (head, values, tail) = unsafe { out.align_to_mut::<MaybeUninit<T>>() };
    if head.is_empty() && tail.is_empty() && cfg!(target_endian = "little") {
        return decode::decode_values_uninit(message, values);
    }
    let mut values = vec![T::from_f64(0.0); out.len() / std::mem::size_of::<T>()];
    decode::decode_values(message, &mut values)?;
    for (o, v) in out.chunks_exact_mut(std::mem::size_of::<T>()).zip(values) {
        o.iter_mut().zip(v.to_le()).for_each(|(o, b)| {
            o.write(b);
        });
    }
    Ok(())
}

/// A decoded value's bytes in a Zarr chunk: little endian.
trait LittleEndian: Sample {
    type Bytes: IntoIterator<Item = u8>;
    fn to_le(self) -> Self::Bytes;
}

impl LittleEndian for f32 {
    type Bytes = [u8; 4];
    fn to_le(self) -> [u8; 4] {
        self.to_le_bytes()
    }
}

impl LittleEndian for f64 {
    type Bytes = [u8; 8];
    fn to_le(self) -> [u8; 8] {
        self.to_le_bytes()
    }
}

/// Staging buffers of readers done, for the next ([`DataReader::with_buffer`]): a Zarr chunk
/// or a dask task reads a field or a few with a reader of its own, and fresh memory for each
/// costs more (page faults) than the read. At most [`SPARE_BUFFERS_KEPT`] are kept, none larger
/// than [`SPARE_BUFFER_LARGEST`].
static SPARE_BUFFERS: Mutex<Vec<Vec<u8>>> = Mutex::new(Vec::new());
const SPARE_BUFFERS_KEPT: usize = 8;
const SPARE_BUFFER_LARGEST: usize = 16 << 20;

fn spare_buffer() -> Vec<u8> {
    SPARE_BUFFERS.lock().map(|mut spare| spare.pop()).ok().flatten().unwrap_or_default()
}

fn keep_buffer(reader: DataReader) {
    let buffer = reader.into_buffer();
    if let Ok(mut spare) = SPARE_BUFFERS.lock() {
        if spare.len() < SPARE_BUFFERS_KEPT && buffer.capacity() <= SPARE_BUFFER_LARGEST {
            spare.push(buffer);
        }
    }
}

fn field_error(index: usize, error: Error) -> PyErr {
    to_py(Error::caused_by(error.kind(), format!("message {index}"), error))
}

/// A message's grid: `grid_type`, `points`, `identity` (fields with the same one share their
/// grid) and, for grids of rows and columns, `latitudes` and `longitudes` (the rows' and the
/// columns', in the order of the values); else empty lists.
#[pyfunction]
pub fn grid<'py>(py: Python<'py>, message: PyBackedBytes) -> PyResult<Bound<'py, PyDict>> {
    let g = py.detach(|| decode::geometry(&message)).map_err(to_py)?;
    let out = PyDict::new(py);
    out.set_item("grid_type", g.grid_type)?;
    out.set_item("points", g.points)?;
    out.set_item("identity", g.identity)?;
    out.set_item("latitudes", g.latitudes)?;
    out.set_item("longitudes", g.longitudes)?;
    Ok(out)
}

/// Every point's latitude and longitude, in the order of the values, as two `bytes` of
/// little-endian `float64`.
#[pyfunction]
pub fn coordinates<'py>(py: Python<'py>, message: PyBackedBytes) -> PyResult<(Bound<'py, PyBytes>, Bound<'py, PyBytes>)> {
    let (latitudes, longitudes) = py.detach(|| decode::coordinates(&message)).map_err(to_py)?;
    let bytes = |values: &[f64]| {
        PyBytes::new_with(py, values.len() * 8, |out| {
            out.chunks_exact_mut(8).zip(values).for_each(|(o, v)| o.copy_from_slice(&v.to_le_bytes()));
            Ok(())
        })
    };
    Ok((bytes(&latitudes)?, bytes(&longitudes)?))
}

/// The text values of `keys` in a message (`shortName`, `units`, ...), None for keys it has not.
#[pyfunction]
pub fn message_keys<'py>(py: Python<'py>, message: PyBackedBytes, keys: Vec<String>) -> PyResult<Bound<'py, PyDict>> {
    let values = py.detach(|| decode::text_keys(&message, &keys)).map_err(to_py)?;
    let out = PyDict::new(py);
    for (key, value) in keys.iter().zip(values) {
        out.set_item(key, value)?;
    }
    Ok(out)
}
