//! Python exceptions, one per [`ErrorKind`], all subclasses of `fieldstore.Error`, so callers
//! catch what they can act on (`except fieldstore.NotFound`) and the rest at once.

use fieldstore::error::ErrorKind;
use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyDict, PyTuple, PyType};
use pyo3::{create_exception, PyErr};

create_exception!(
    fieldstore,
    Error,
    PyRuntimeError,
    "Any fieldstore error (a `RuntimeError`, as pyfdb raises); each kind below is a subclass."
);
create_exception!(fieldstore, BadConfig, Error, "A configuration is malformed or names an unknown backend or option.");
create_exception!(fieldstore, NotFound, Error, "Nothing matched, or a store, data set, file or object is not there.");
create_exception!(fieldstore, NothingMatched, NotFound, "A request matched no field; the message says why, index by index.");
create_exception!(fieldstore, AlreadyExists, Error, "Something to be created exists already.");
create_exception!(fieldstore, Locked, Error, "The action is locked on the data set (see `control`).");
create_exception!(fieldstore, Corrupt, Error, "Stored data failed a check: a checksum, a frame, a length.");
create_exception!(fieldstore, StorageError, Error, "The operating system or the storage failed an operation.");
create_exception!(fieldstore, Timeout, Error, "A backend did not answer in time.");
create_exception!(fieldstore, Unavailable, Error, "A backend cannot be reached or its library cannot be loaded.");
create_exception!(fieldstore, Unsupported, Error, "The operation or format is not supported by this backend or version.");
create_exception!(fieldstore, Conflict, Error, "A concurrent change got in the way (e.g. a wipe during a flush).");
create_exception!(fieldstore, Denied, Error, "A server does not know the caller, or does not let it do this.");

/// `BadRequest`: a request, key or value is malformed or names an unknown keyword. A
/// `fieldstore.Error` and a `ValueError` (a bad argument, as Python's own functions raise), so
/// made at import as `class BadRequest(Error, ValueError)`: `create_exception!` takes one base.
static BAD_REQUEST: PyOnceLock<Py<PyType>> = PyOnceLock::new();

fn bad_request_type(py: Python<'_>) -> PyResult<&Bound<'_, PyType>> {
    let class = BAD_REQUEST.get_or_try_init(py, || {
        let bases = PyTuple::new(py, [py.get_type::<Error>(), py.get_type::<PyValueError>()])?;
        let namespace = PyDict::new(py);
        namespace.set_item("__module__", "fieldstore")?;
        namespace.set_item("__doc__", "A request, key or value is malformed or names an unknown keyword (also a ValueError).")?;
        let class = py.get_type::<PyType>().call1(("BadRequest", bases, namespace))?;
        Ok::<_, PyErr>(class.cast_into::<PyType>()?.unbind())
    })?;
    Ok(class.bind(py))
}

/// A `BadRequest` with `message`.
pub fn bad_request(message: impl Into<String>) -> PyErr {
    let message = message.into();
    Python::attach(|py| match bad_request_type(py) {
        Ok(class) => PyErr::from_type(class.clone(), message),
        Err(e) => e,
    })
}

/// The Python exception of a fieldstore error, with its message.
pub fn to_py(error: fieldstore::Error) -> PyErr {
    let message = error.report().to_string();
    match error.kind() {
        ErrorKind::BadRequest => bad_request(message),
        ErrorKind::BadConfig => BadConfig::new_err(message),
        ErrorKind::NotFound => NotFound::new_err(message),
        ErrorKind::AlreadyExists => AlreadyExists::new_err(message),
        ErrorKind::Locked => Locked::new_err(message),
        ErrorKind::Corrupt => Corrupt::new_err(message),
        ErrorKind::Io => StorageError::new_err(message),
        ErrorKind::Timeout => Timeout::new_err(message),
        ErrorKind::Unavailable => Unavailable::new_err(message),
        ErrorKind::Unsupported => Unsupported::new_err(message),
        ErrorKind::Conflict => Conflict::new_err(message),
        ErrorKind::Denied => Denied::new_err(message),
        // A kind this binding does not know yet is a storage error until it has a class.
        _ => StorageError::new_err(message),
    }
}

/// Adds the exceptions to the module.
pub fn register(module: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = module.py();
    module.add("Error", py.get_type::<Error>())?;
    module.add("BadRequest", bad_request_type(py)?)?;
    module.add("BadConfig", py.get_type::<BadConfig>())?;
    module.add("NotFound", py.get_type::<NotFound>())?;
    module.add("NothingMatched", py.get_type::<NothingMatched>())?;
    module.add("AlreadyExists", py.get_type::<AlreadyExists>())?;
    module.add("Locked", py.get_type::<Locked>())?;
    module.add("Corrupt", py.get_type::<Corrupt>())?;
    module.add("StorageError", py.get_type::<StorageError>())?;
    module.add("Timeout", py.get_type::<Timeout>())?;
    module.add("Unavailable", py.get_type::<Unavailable>())?;
    module.add("Unsupported", py.get_type::<Unsupported>())?;
    module.add("Conflict", py.get_type::<Conflict>())?;
    module.add("Denied", py.get_type::<Denied>())?;
    Ok(())
}
