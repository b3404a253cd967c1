//! `fieldstore._native`: the Python package's native module, a thin leaf over fieldstore's
//! `Send + Sync` [`fieldstore::FieldStore`]. Every storage call releases the GIL, so one
//! handle serves many Python threads at once; results are owned Python objects. The
//! package's Python layer (`python/fieldstore`) turns dicts into requests and keys, and
//! reports into dicts.

mod decode;
mod errors;
mod process;
mod reader;

use std::mem::ManuallyDrop;
use std::path::PathBuf;
use std::sync::Arc;

use fieldstore::{Config, ControlAction, FieldEntry, FieldStore, Key, ListOptions, Request};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::pybacked::PyBackedBytes;
use pyo3::types::{PyBytes, PyDict, PyList};

use errors::to_py;
use process::Owner;
use reader::Reader;

/// A handle on a store: see the package's documentation (`docs/python.md`).
#[pyclass(module = "fieldstore._native", name = "FieldStore", frozen)]
struct Handle {
    /// Taken only by `Drop`, which drops it with the GIL released.
    store: ManuallyDrop<FieldStore>,
    /// The configuration it was opened with (a move places data sets by its roots).
    config: Config,
    owner: Owner,
    /// Keeps each field's packing once learnt, for the next extraction.
    extractor: fieldstore::extract::Extractor,
}

impl Drop for Handle {
    fn drop(&mut self) {
        // SAFETY: `store` is taken once, here, and never used after: the handle is being dropped.
        self.owner.release(unsafe { ManuallyDrop::take(&mut self.store) });
    }
}

#[pymethods]
impl Handle {
    /// Opens the store a configuration names: YAML text (`config_text`, fieldstore's or
    /// FDB5's format), a file (`config_path`), or neither (the CLI's resolution: `$FIELDSTORE_CONFIG`,
    /// FDB5's variables, else a POSIX store under `$FIELDSTORE_ROOT`).
    #[new]
    #[pyo3(signature = (config_text=None, config_path=None))]
    fn new(py: Python<'_>, config_text: Option<&str>, config_path: Option<PathBuf>) -> PyResult<Self> {
        let config = match (config_text, config_path) {
            (Some(text), _) => Config::parse("configuration given to FieldStore()", text),
            (None, Some(path)) => Config::from_file(&path),
            (None, None) => Config::resolve(None),
        }
        .map_err(to_py)?;
        let store = py.detach(|| fieldstore::open(&config)).map_err(to_py)?;
        Ok(Handle { store: ManuallyDrop::new(store), config, owner: Owner::current(), extractor: Default::default() })
    }

    /// Archives `data` under `key` (a MARS key, `class=od,expver=0001,...`), or, without a key,
    /// every GRIB message in `data` under the keys read from it. Returns the fields archived.
    /// Visible to readers after `flush()`.
    #[pyo3(signature = (data, key=None))]
    fn archive(&self, py: Python<'_>, data: PyBackedBytes, key: Option<&str>) -> PyResult<usize> {
        self.owner.check("FieldStore")?;
        let bytes: &[u8] = &data;
        match key {
            Some(key) => {
                let key = Key::parse(key).map_err(to_py)?;
                py.detach(|| self.store.archive(&key, bytes)).map_err(to_py)?;
                Ok(1)
            }
            None => py.detach(|| fieldstore::archive_grib(&self.store, bytes, "the data given to archive()", |_| {})).map_err(to_py),
        }
    }

    /// Makes everything archived through this handle durable and visible.
    fn flush(&self, py: Python<'_>) -> PyResult<()> {
        self.owner.check("FieldStore")?;
        py.detach(|| self.store.flush()).map_err(to_py)
    }

    /// A reader of the fields a request names, in the order it names values; raises
    /// `NothingMatched` (a `NotFound`) saying why when nothing matched.
    fn retrieve(&self, py: Python<'_>, request: &str) -> PyResult<Reader> {
        let request = self.request(request)?;
        let (reader, why) = py.detach(|| self.store.retrieve(&request)).map_err(to_py)?;
        if let Some(why) = why {
            return Err(errors::NothingMatched::new_err(format!("nothing matched {request}: {why}")));
        }
        Ok(Reader::new(reader))
    }

    /// What a request names, as entries of `depth` 1 (data sets), 2 (and collocations) or 3
    /// (fields, with their locations); superseded fields too when asked.
    #[pyo3(signature = (request, depth=3, include_superseded=false))]
    fn list<'py>(&self, py: Python<'py>, request: &str, depth: u8, include_superseded: bool) -> PyResult<Bound<'py, PyList>> {
        let request = self.request(request)?;
        if !(1..=3).contains(&depth) {
            return Err(errors::bad_request(format!("depth {depth}: list takes 1, 2 or 3")));
        }
        let options = ListOptions { depth, include_superseded, ..ListOptions::default() };
        let matches = py.detach(|| self.store.list(&request, options)).map_err(to_py)?;
        // Entries go straight into the list: no vector of them on the way (a tenth of the time
        // of a list of 10,000 fields).
        match depth {
            1 => PyList::new(py, matches.datasets.into_iter().map(|dataset| ListEntry::above_fields(dataset, None))),
            2 => PyList::new(
                py,
                matches.collocations.into_iter().map(|(dataset, collocation)| ListEntry::above_fields(dataset, Some(collocation))),
            ),
            _ => PyList::new(py, matches.fields.into_iter().map(ListEntry::field)),
        }
    }

    /// A reader of listed fields' bytes, in the order given, where the listing found them (a
    /// superseded field's too), not resolved again: adjacent fields are read together.
    fn read_entries(&self, py: Python<'_>, entries: Vec<Bound<'_, ListEntry>>) -> PyResult<Reader> {
        self.owner.check("FieldStore")?;
        let fields = field_entries(&entries)?;
        Ok(Reader::new(py.detach(|| self.store.read_fields(fields)).map_err(to_py)?))
    }

    /// Listed fields' values, read where the listing found them and decoded, as one `bytes`
    /// of `points` values of `dtype` per field (see `decode_values`).
    #[pyo3(signature = (entries, points, dtype="float64"))]
    fn decode_entries<'py>(
        &self,
        py: Python<'py>,
        entries: Vec<Bound<'_, ListEntry>>,
        points: usize,
        dtype: &str,
    ) -> PyResult<Bound<'py, PyBytes>> {
        self.owner.check("FieldStore")?;
        decode::decode_stored(py, &self.store, &field_entries(&entries)?, points, dtype)
    }

    /// Listed fields' values decoded into `out`, a writable C-contiguous buffer of as many
    /// fields (see `decode_into`).
    #[cfg(Py_3_11)]
    #[pyo3(signature = (entries, out, dtype="float64"))]
    fn decode_entries_into(&self, py: Python<'_>, entries: Vec<Bound<'_, ListEntry>>, out: &Bound<'_, PyAny>, dtype: &str) -> PyResult<()> {
        self.owner.check("FieldStore")?;
        decode::decode_stored_into(py, &self.store, &field_entries(&entries)?, out, dtype)
    }

    /// A location's URI as other programs open it: a POSIX store's absolute path.
    fn absolute_uri(&self, uri: &str) -> PyResult<String> {
        self.owner.check("FieldStore")?;
        self.store.absolute_uri(uri).map_err(to_py)
    }

    /// The values stored per keyword for what a request names.
    fn axes<'py>(&self, py: Python<'py>, request: &str) -> PyResult<Bound<'py, PyDict>> {
        let request = self.request(request)?;
        let (axes, _) = py.detach(|| self.store.axes(&request)).map_err(to_py)?;
        let out = PyDict::new(py);
        for (keyword, values) in axes {
            out.set_item(keyword, values)?;
        }
        Ok(out)
    }

    /// Wipes what a request names (a dry run unless `doit`); the report as JSON.
    #[pyo3(signature = (request, doit=false))]
    fn wipe(&self, py: Python<'_>, request: &str, doit: bool) -> PyResult<String> {
        let request = self.request(request)?;
        json(py.detach(|| self.store.wipe(&request, doit)).map_err(to_py)?)
    }

    /// Reclaims superseded fields of what a request names (a dry run unless `doit`); the
    /// report as JSON.
    #[pyo3(signature = (request, doit=false))]
    fn purge(&self, py: Python<'_>, request: &str, doit: bool) -> PyResult<String> {
        let request = self.request(request)?;
        json(py.detach(|| self.store.purge(&request, doit)).map_err(to_py)?)
    }

    /// Hides every field of the data sets a request names, removing nothing (a dry run unless
    /// `doit`); the reports as JSON.
    #[pyo3(signature = (request, doit=false))]
    fn hide(&self, py: Python<'_>, request: &str, doit: bool) -> PyResult<String> {
        let request = self.request(request)?;
        json(py.detach(|| self.store.hide(&request, doit)).map_err(to_py)?)
    }

    /// Shows the data set `source` names as part of the one `target` names (FDB5's
    /// fdb-overlay, [`fieldstore::FieldStore::overlay`]), or with `remove` no longer; the
    /// report as JSON.
    #[pyo3(signature = (source, target, remove=false, force=false, variable_keys=None))]
    fn overlay(
        &self,
        py: Python<'_>,
        source: &str,
        target: &str,
        remove: bool,
        force: bool,
        variable_keys: Option<Vec<String>>,
    ) -> PyResult<String> {
        let (source, target) = (self.request(source)?, self.request(target)?);
        let mut options = fieldstore::api::OverlayOptions { remove, force, ..Default::default() };
        if let Some(keys) = variable_keys {
            options.variable_keys = keys;
        }
        let overlay = || self.store.overlay(&self.store.dataset_named(&source)?, &self.store.dataset_named(&target)?, &options);
        json(py.detach(overlay).map_err(to_py)?)
    }

    /// Indexes the fields a request names again in the catalogue of `sink`, over their data
    /// where it lies (FDB5's fdb-reindex, [`fieldstore::reindex`]); the report as JSON.
    #[pyo3(signature = (sink, request, ignore_no_data=false))]
    fn reindex_into(&self, py: Python<'_>, sink: &Handle, request: &str, ignore_no_data: bool) -> PyResult<String> {
        sink.owner.check("FieldStore")?;
        let request = self.request(request)?;
        json(py.detach(|| fieldstore::reindex(&self.store, &sink.store, &[request], ignore_no_data, &mut |_, _| {})).map_err(to_py)?)
    }

    /// Copies the fields a request names into the store `target` opens (FDB5's fdb-copy:
    /// resumable and verified, [`fieldstore::copy`]); the report as JSON.
    #[pyo3(signature = (target, request, modifiers=None, sort_by_location=false, read_back=false, batch_bytes=None))]
    #[allow(clippy::too_many_arguments)] // Python's keyword arguments, one each
    fn copy_to(
        &self,
        py: Python<'_>,
        target: &Handle,
        request: &str,
        modifiers: Option<&str>,
        sort_by_location: bool,
        read_back: bool,
        batch_bytes: Option<u64>,
    ) -> PyResult<String> {
        target.owner.check("FieldStore")?;
        let request = self.request(request)?;
        let defaults = fieldstore::CopyOptions::default();
        let options = fieldstore::CopyOptions {
            modifiers: modifiers.map(fieldstore::GribOptions::parse_modifiers).transpose().map_err(to_py)?.unwrap_or_default(),
            sort_by_location,
            read_back,
            batch_bytes: batch_bytes.filter(|b| *b > 0).unwrap_or(defaults.batch_bytes),
        };
        json(py.detach(|| fieldstore::copy(&self.store, &target.store, &[request], &options, &mut |_| {})).map_err(to_py)?)
    }

    /// Moves the data sets a request names to another root of the configuration (FDB5's
    /// fdb-move, [`fieldstore::move_datasets`]); the report as JSON.
    #[pyo3(signature = (request, dest, keep=false, delay=0.0, threads=1))]
    fn move_to(&self, py: Python<'_>, request: &str, dest: PathBuf, keep: bool, delay: f64, threads: usize) -> PyResult<String> {
        self.owner.check("FieldStore")?;
        let request = self.request(request)?;
        let delay = std::time::Duration::try_from_secs_f64(delay)
            .map_err(|e| PyValueError::new_err(format!("delay={delay}: not a number of seconds ({e})")))?;
        let options = fieldstore::MoveOptions { destination: dest, keep, delay, threads: threads.clamp(1, 256) };
        json(py.detach(|| fieldstore::move_datasets(&self.config, &self.store, &[request], &options, &|_, _| {})).map_err(to_py)?)
    }

    /// Moves the data sets a request names into `target`, another store of any backend
    /// ([`fieldstore::move_to_store`]); the report as JSON.
    fn move_to_store(&self, py: Python<'_>, target: &Handle, request: &str) -> PyResult<String> {
        self.owner.check("FieldStore")?;
        target.owner.check("FieldStore")?;
        let request = self.request(request)?;
        json(py.detach(|| fieldstore::move_to_store(&self.store, &target.store, &[request], &mut |_, _| {})).map_err(to_py)?)
    }

    /// Merges the indexes of the data sets a request names into fewer, larger ones; the
    /// report as JSON.
    fn compact(&self, py: Python<'_>, request: &str) -> PyResult<String> {
        let request = self.request(request)?;
        json(py.detach(|| self.store.compact(&request)).map_err(to_py)?)
    }

    /// Locks (`lock=True`), unlocks (`False`) or only reports (`None`) `actions` (archive,
    /// retrieve, list, wipe; all when empty) on the data sets a request names; each data
    /// set's locked actions as JSON.
    #[pyo3(signature = (request, actions, lock=None))]
    fn control(&self, py: Python<'_>, request: &str, actions: Vec<String>, lock: Option<bool>) -> PyResult<String> {
        let request = self.request(request)?;
        let actions = actions
            .iter()
            .map(|a| {
                ControlAction::from_name(a)
                    .ok_or_else(|| errors::bad_request(format!("unknown action '{a}' (use archive, retrieve, list or wipe)")))
            })
            .collect::<PyResult<Vec<_>>>()?;
        let actions = if actions.is_empty() { ControlAction::ALL.to_vec() } else { actions };
        let states = py.detach(|| self.store.control(&request, &actions, lock)).map_err(to_py)?;
        let states: Vec<_> = states.into_iter().map(|(dataset, locked)| (dataset.to_string(), locked)).collect();
        json(states)
    }

    /// Counts of what a request names, as JSON.
    fn stats(&self, py: Python<'_>, request: &str) -> PyResult<String> {
        let request = self.request(request)?;
        json(py.detach(|| self.store.stats(&request)).map_err(to_py)?)
    }

    /// Where each data set a request names lives, as JSON.
    fn where_is(&self, py: Python<'_>, request: &str) -> PyResult<String> {
        let request = self.request(request)?;
        json(py.detach(|| self.store.where_is(&request)).map_err(to_py)?)
    }

    /// The grid points `ranges` (`[start, end)` each) of every field a request names, reading
    /// only the bytes that hold them: per field a tuple of its identifier (`k=v,...`), its
    /// values (float64 in native order, the ranges' points in turn, NaN where missing), one
    /// byte per point (1 where it has a value), the bytes read, and whether it was decoded
    /// whole (a packing not read natively).
    fn extract<'py>(&self, py: Python<'py>, request: &str, ranges: Vec<(u64, u64)>) -> PyResult<Bound<'py, PyList>> {
        let request = self.request(request)?;
        let extracted = py.detach(|| self.extractor.extract(&self.store, &request, &to_ranges(ranges))).map_err(to_py)?;
        extracted_list(py, extracted)
    }

    /// Keeps the packing of every field a request names beside its data (`fieldstore scan`):
    /// a JSON report of what it did.
    fn keep_packings(&self, py: Python<'_>, request: &str) -> PyResult<String> {
        let request = self.request(request)?;
        json(py.detach(|| self.extractor.keep_packings(&self.store, &request, &mut |_, _| {})).map_err(to_py)?)
    }

    /// [`Handle::extract`] of several requests, each with its ranges, read at once: per
    /// request, the list `extract` gives, in the requests' order.
    fn extract_each<'py>(&self, py: Python<'py>, requests: Vec<(String, Vec<(u64, u64)>)>) -> PyResult<Bound<'py, PyList>> {
        let requests =
            requests.into_iter().map(|(request, ranges)| Ok((self.request(&request)?, to_ranges(ranges)))).collect::<PyResult<Vec<_>>>()?;
        let extracted = py.detach(|| self.extractor.extract_each(&self.store, &requests)).map_err(to_py)?;
        PyList::new(py, extracted.into_iter().map(|fields| extracted_list(py, fields)).collect::<PyResult<Vec<_>>>()?)
    }
}

/// Ranges of grid points as Python gives them, `[start, end)` each.
fn to_ranges(ranges: Vec<(u64, u64)>) -> Vec<fieldstore::extract::Range> {
    ranges.into_iter().map(|(start, end)| fieldstore::extract::Range::new(start, end)).collect()
}

/// Extracted fields as Python takes them: per field its identifier, values, masks, bytes
/// read and whether it was decoded whole ([`Handle::extract`]).
fn extracted_list(py: Python<'_>, extracted: Vec<fieldstore::extract::FieldExtraction>) -> PyResult<Bound<'_, PyList>> {
    let fields = extracted.into_iter().map(|field| {
        let got = field.extraction;
        let values: Vec<u8> = got.values.iter().flatten().flat_map(|v| v.to_ne_bytes()).collect();
        let masks: Vec<u8> = got.masks.iter().flatten().map(|present| u8::from(*present)).collect();
        let identifier = field.field.identifier().to_string();
        (identifier, PyBytes::new(py, &values), PyBytes::new(py, &masks), got.bytes_read, got.decoded_whole)
    });
    PyList::new(py, fields)
}

impl Handle {
    /// A request's text parsed, once the calling process is checked to be the handle's.
    fn request(&self, text: &str) -> PyResult<Request> {
        self.owner.check("FieldStore")?;
        Request::parse(text).map_err(to_py)
    }
}

/// A report as JSON text (the Python layer turns it into dicts).
fn json(report: impl serde::Serialize) -> PyResult<String> {
    serde_json::to_string(&report).map_err(|e| errors::Error::new_err(format!("cannot encode a report: {e}")))
}

/// One entry of a listing: a data set (depth 1), a collocation (depth 2) or a field. Holds
/// the listing's own keys (shared, not copied) and makes dicts only when asked.
#[pyclass(module = "fieldstore._native", frozen)]
pub struct ListEntry {
    dataset: Arc<Key>,
    /// Depth 2 and 3.
    collocation: Option<Arc<Key>>,
    /// The field as listed (depth 3): its element key and location, for reading it where it is.
    field: Option<FieldEntry>,
}

/// The fields of listed entries; an entry above fields (depth 1 or 2) is refused.
fn field_entries(entries: &[Bound<'_, ListEntry>]) -> PyResult<Vec<FieldEntry>> {
    entries
        .iter()
        .map(|entry| entry.get().field.clone().ok_or_else(|| errors::bad_request("only a field (a listing of depth 3) has bytes to read")))
        .collect()
}

/// A key as a dict, in the schema's order.
fn dict<'py>(py: Python<'py>, keys: &[&Key], skip_empty: bool) -> PyResult<Bound<'py, PyDict>> {
    let out = PyDict::new(py);
    for (keyword, value) in keys.iter().flat_map(|key| key.iter()) {
        if !(skip_empty && value.is_empty()) {
            out.set_item(keyword, value)?;
        }
    }
    Ok(out)
}

#[pymethods]
impl ListEntry {
    /// The data set's key, as a dict.
    #[getter]
    fn dataset<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        dict(py, &[&self.dataset], false)
    }

    /// The collocation's key (depth 2 and 3), as a dict.
    #[getter]
    fn collocation<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyDict>>> {
        self.collocation.as_deref().map(|key| dict(py, &[key], false)).transpose()
    }

    /// The field's own key (depth 3), as a dict.
    #[getter]
    fn element<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyDict>>> {
        self.field.as_ref().map(|field| dict(py, &[&field.element], false)).transpose()
    }

    /// Where the field's bytes are: a path relative to the store's root or an object's name.
    #[getter]
    fn uri(&self) -> Option<String> {
        self.field.as_ref().map(|field| field.location.uri.to_string())
    }

    /// Where the field starts there, in bytes.
    #[getter]
    fn offset(&self) -> Option<u64> {
        self.field.as_ref().map(|field| field.location.offset)
    }

    /// The field's length in bytes.
    #[getter]
    fn length(&self) -> Option<u64> {
        self.field.as_ref().map(|field| field.location.length)
    }

    /// Hidden by a newer field with the same identifier (listed only when asked).
    #[getter]
    fn superseded(&self) -> bool {
        self.field.as_ref().is_some_and(|field| field.superseded)
    }

    /// The whole key (data set, collocation, element), as a dict without the absent optional
    /// keywords: what archive and retrieve take.
    fn key<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let keys: Vec<&Key> =
            [Some(&*self.dataset), self.collocation.as_deref(), self.field.as_ref().map(|f| &f.element)].into_iter().flatten().collect();
        dict(py, &keys, true)
    }

    fn __repr__(&self) -> String {
        let mut out = format!("{{{}}}", self.dataset);
        if let Some(collocation) = &self.collocation {
            out.push_str(&format!("{{{collocation}}}"));
        }
        if let Some(field) = &self.field {
            let location = &field.location;
            out.push_str(&format!("{{{}}} {} offset={} length={}", field.element, location.uri, location.offset, location.length));
            if field.superseded {
                out.push_str(" superseded");
            }
        }
        out
    }
}

impl ListEntry {
    fn above_fields(dataset: Key, collocation: Option<Key>) -> Self {
        ListEntry { dataset: Arc::new(dataset), collocation: collocation.map(Arc::new), field: None }
    }

    /// The entry of a listed or retrieved field.
    pub fn field(entry: FieldEntry) -> Self {
        ListEntry { dataset: entry.dataset.clone(), collocation: Some(entry.collocation.clone()), field: Some(entry) }
    }
}

/// The native module.
#[pymodule]
fn _native(module: &Bound<'_, PyModule>) -> PyResult<()> {
    module.add_class::<Handle>()?;
    module.add_class::<ListEntry>()?;
    module.add_class::<Reader>()?;
    module.add_function(wrap_pyfunction!(decode::decode_values, module)?)?;
    #[cfg(Py_3_11)]
    module.add_function(wrap_pyfunction!(decode::decode_into, module)?)?;
    module.add_function(wrap_pyfunction!(decode::grid, module)?)?;
    module.add_function(wrap_pyfunction!(decode::coordinates, module)?)?;
    module.add_function(wrap_pyfunction!(decode::message_keys, module)?)?;
    errors::register(module)?;
    module.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
