//! Decoding fields into numbers for the array interfaces (`fieldstore.arrays`): many GRIB
//! messages at once through ecCodes, on as many threads as there are cores, the GIL released,
//! into one `bytes` object of little-endian floats (what a Zarr chunk holds, and what
//! `numpy.frombuffer` views without a copy).

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::pybacked::PyBackedBytes;
use pyo3::types::{PyBytes, PyDict};

use fieldstore::grib::decode;

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
    let float = Float::parse(dtype)?;
    if points == 0 {
        return Err(PyValueError::new_err("points: a field has at least one value"));
    }
    let field_bytes =
        points.checked_mul(float.size()).ok_or_else(|| PyValueError::new_err(format!("{points} points do not fit in memory")))?;
    let total = field_bytes.checked_mul(messages.len()).ok_or_else(|| PyValueError::new_err("the decoded fields do not fit in memory"))?;
    let messages: Vec<&[u8]> = messages.iter().map(|m| &m[..]).collect();
    PyBytes::new_with(py, total, |out| {
        py.detach(|| decode_all(&messages, out, field_bytes, float)).map_err(|(index, e)| field_error(index, e))
    })
}

/// Decodes every message into `out`, a writable C-contiguous buffer of `len(messages)` fields of
/// `points` values of `dtype` each (a numpy array of that shape), in place: no `bytes` on the
/// way. (Built for a Python before 3.11, whose stable ABI has no buffer protocol, the module
/// has `decode_values` only.)
#[cfg(Py_3_11)]
#[pyfunction]
#[pyo3(signature = (messages, out, dtype="float64"))]
pub fn decode_into(py: Python<'_>, messages: Vec<PyBackedBytes>, out: &Bound<'_, PyAny>, dtype: &str) -> PyResult<()> {
    let float = Float::parse(dtype)?;
    let view = crate::reader::writable_bytes(out)?;
    if messages.is_empty() {
        return Ok(());
    }
    let total = view.len_bytes();
    if total == 0 || total % messages.len() != 0 || (total / messages.len()) % float.size() != 0 {
        return Err(PyValueError::new_err(format!("a buffer of {total} bytes does not hold {} fields of {dtype}", messages.len())));
    }
    // SAFETY: the buffer stays exported, so valid and not resized, until `view` is released
    // after the decode; it is writable and C-contiguous (checked), `len_bytes` long. Other
    // Python threads may write into the same memory meanwhile: bytes, never memory safety.
    let target = unsafe { std::slice::from_raw_parts_mut(view.buf_ptr().cast::<u8>(), total) };
    let messages: Vec<&[u8]> = messages.iter().map(|m| &m[..]).collect();
    let field_bytes = total / messages.len();
    py.detach(|| decode_all(&messages, target, field_bytes, float)).map_err(|(index, e)| field_error(index, e))
}

/// Decodes `messages` into `out`, `field_bytes` each, on up to as many threads as cores; the
/// first error with the index of its message.
fn decode_all(messages: &[&[u8]], out: &mut [u8], field_bytes: usize, float: Float) -> Result<(), (usize, fieldstore::Error)> {
    if messages.is_empty() {
        return Ok(());
    }
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get()).min(messages.len());
    if threads == 1 {
        // One field (a Zarr chunk): a thread would cost more than it saves.
        return decode_part(messages, out, field_bytes, float);
    }
    let per_thread = messages.len().div_ceil(threads);
    std::thread::scope(|scope| {
        let work: Vec<_> = messages
            .chunks(per_thread)
            .zip(out.chunks_mut(per_thread * field_bytes))
            .enumerate()
            .map(|(part, (messages, out))| {
                scope.spawn(move || decode_part(messages, out, field_bytes, float).map_err(|(i, e)| (part * per_thread + i, e)))
            })
            .collect();
        work.into_iter()
            .map(|w| w.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic)))
            .collect::<Result<Vec<()>, _>>()
            .map(drop)
    })
}

/// One thread's share: each message decoded to `f64` (ecCodes' own precision), straight into
/// `out` where it is aligned for `f64`, else through a buffer of the thread's own; a message of
/// another size than `points` is an error.
fn decode_part(messages: &[&[u8]], out: &mut [u8], field_bytes: usize, float: Float) -> Result<(), (usize, fieldstore::Error)> {
    let points = field_bytes / float.size();
    let mut scratch = Vec::new();
    for (i, (message, out)) in messages.iter().zip(out.chunks_mut(field_bytes)).enumerate() {
        // SAFETY: every bit pattern is a valid f64; `align_to_mut` only reinterprets the
        // aligned middle of `out`, which this thread alone borrows.
        let (head, floats, tail) = unsafe { out.align_to_mut::<f64>() };
        match float {
            Float::F64 if head.is_empty() && tail.is_empty() && cfg!(target_endian = "little") => {
                decode::decode_values(message, floats).map_err(|e| (i, e))?;
            }
            Float::F64 => {
                scratch.resize(points, 0.0);
                decode::decode_values(message, &mut scratch).map_err(|e| (i, e))?;
                out.chunks_exact_mut(8).zip(&scratch).for_each(|(o, v)| o.copy_from_slice(&v.to_le_bytes()));
            }
            Float::F32 => {
                scratch.resize(points, 0.0);
                decode::decode_values(message, &mut scratch).map_err(|e| (i, e))?;
                out.chunks_exact_mut(4).zip(&scratch).for_each(|(o, v)| o.copy_from_slice(&(*v as f32).to_le_bytes()));
            }
        }
    }
    Ok(())
}

fn field_error(index: usize, error: fieldstore::Error) -> PyErr {
    to_py(fieldstore::Error::new(error.kind(), format!("message {index}: {error}")))
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
