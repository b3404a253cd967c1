//! The HDF5 C functions `bench ior --api hdf5` uses, declared from HDF5's public headers (the
//! same from 1.10 to 1.14) and resolved at run time, as librados and libdaos are: a library
//! linked at build time is loaded by every `fieldstore` process, and libhdf5 brings some
//! thirty libraries of its own (libcurl, GnuTLS, Kerberos, ...), which made every command start
//! about 2.5 times slower (docs/performance.md, "A command's start"). Only `--api hdf5` loads it.
//!
//! Every call goes through [`Locked`], one thread at a time: a library named by
//! `FIELDSTORE_HDF5_LIBRARY` may be built without thread safety (Debian's is built with it).

use std::ffi::{c_char, c_int, c_uint, c_void, CStr, CString};
use std::marker::PhantomData;
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};

use fieldstore::{Error, ErrorKind, Result};

/// `hid_t`: an identifier of an open HDF5 object (64 bits since HDF5 1.10).
type Id = i64;
type Status = c_int;
type Tristate = c_int;

/// `H5P_DEFAULT`, `H5S_ALL`, `H5E_DEFAULT`: the default property list, the whole dataspace,
/// the calling thread's error stack.
const DEFAULT: Id = 0;
/// `H5F_ACC_RDONLY` and `H5F_ACC_TRUNC`.
const READ_ONLY: c_uint = 0x0000;
const TRUNCATE: c_uint = 0x0002;
/// `H5D_ALLOC_TIME_EARLY`: a dataset's space is allocated when it is made.
const ALLOC_TIME_EARLY: c_int = 1;
/// `H5E_WALK_DOWNWARD`: from the API function to the most specific error.
const WALK_DOWNWARD: c_int = 1;

/// `H5E_error2_t`: an element of the error stack.
#[repr(C)]
struct ErrorRecord {
    class: Id,
    major: Id,
    minor: Id,
    line: c_uint,
    function: *const c_char,
    file: *const c_char,
    description: *const c_char,
}

type Walk = unsafe extern "C" fn(c_uint, *const ErrorRecord, *mut c_void) -> Status;
/// `H5E_auto2_t`: what prints an error stack as it is made (none here: errors carry it).
type AutoPrint = Option<unsafe extern "C" fn(Id, *mut c_void) -> Status>;

/// Resolved entry points, named as in C without the `H5` prefix.
struct Functions {
    open: unsafe extern "C" fn() -> Status,
    get_libversion: unsafe extern "C" fn(*mut c_uint, *mut c_uint, *mut c_uint) -> Status,
    eset_auto2: unsafe extern "C" fn(Id, AutoPrint, *mut c_void) -> Status,
    ewalk2: unsafe extern "C" fn(Id, c_int, Walk, *mut c_void) -> Status,
    eclear2: unsafe extern "C" fn(Id) -> Status,
    fcreate: unsafe extern "C" fn(*const c_char, c_uint, Id, Id) -> Id,
    fopen: unsafe extern "C" fn(*const c_char, c_uint, Id) -> Id,
    fclose: unsafe extern "C" fn(Id) -> Status,
    pcreate: unsafe extern "C" fn(Id) -> Id,
    pset_alloc_time: unsafe extern "C" fn(Id, c_int) -> Status,
    pclose: unsafe extern "C" fn(Id) -> Status,
    screate_simple: unsafe extern "C" fn(c_int, *const u64, *const u64) -> Id,
    sget_simple_extent_npoints: unsafe extern "C" fn(Id) -> i64,
    sclose: unsafe extern "C" fn(Id) -> Status,
    dcreate2: unsafe extern "C" fn(Id, *const c_char, Id, Id, Id, Id, Id) -> Id,
    dopen2: unsafe extern "C" fn(Id, *const c_char, Id) -> Id,
    dget_space: unsafe extern "C" fn(Id) -> Id,
    dwrite: unsafe extern "C" fn(Id, Id, Id, Id, Id, *const c_void) -> Status,
    dread: unsafe extern "C" fn(Id, Id, Id, Id, Id, *mut c_void) -> Status,
    dclose: unsafe extern "C" fn(Id) -> Status,
    lexists: unsafe extern "C" fn(Id, *const c_char, Id) -> Tristate,
}

/// libhdf5, loaded and opened, with the identifiers its macros name.
struct Hdf5 {
    f: Functions,
    /// `H5T_NATIVE_LLONG`: IOR's element, in memory and in the file.
    native_llong: Id,
    /// `H5P_DATASET_CREATE`: the class of a dataset's creation properties.
    dataset_create: Id,
    /// Keeps the functions above valid.
    _library: libloading::Library,
}

/// The variable naming a library to load instead of the usual names.
pub const LIBRARY_VARIABLE: &str = "FIELDSTORE_HDF5_LIBRARY";

/// The shared libraries tried in turn: Debian's serial HDF5 (1.10 in Debian 12, 1.14 in 13),
/// then the names other builds give it, then the development packages' links.
const LIBRARIES: [&str; 7] = [
    "libhdf5_serial.so.103",
    "libhdf5_serial.so.310",
    "libhdf5.so.310",
    "libhdf5.so.320",
    "libhdf5.so.103",
    "libhdf5_serial.so",
    "libhdf5.so",
];

static HDF5: OnceLock<std::result::Result<Hdf5, Arc<Error>>> = OnceLock::new();
static ONE_CALLER: Mutex<()> = Mutex::new(());

/// libhdf5 held by one thread, which makes every call through it and the objects it opens;
/// neither it nor they can go to another thread.
pub struct Locked {
    hdf5: &'static Hdf5,
    _guard: MutexGuard<'static, ()>,
    _this_thread: PhantomData<*const ()>,
}

/// libhdf5 (loaded on first use; a failure to load it is the answer of every call after), for
/// this thread alone until the guard is dropped.
pub fn lock() -> Result<Locked> {
    let hdf5 = HDF5.get_or_init(|| load().map_err(Arc::new)).as_ref().map_err(|e| Error::Shared(e.clone()))?;
    // A caller that panicked left no HDF5 call half made: each call is one C call.
    let guard = ONE_CALLER.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    // Each thread has an error stack of its own, printed as it is made unless told not to:
    // errors here carry it instead.
    // SAFETY: no function, no data.
    if unsafe { (hdf5.f.eset_auto2)(DEFAULT, None, std::ptr::null_mut()) } < 0 {
        return Err(Error::new(ErrorKind::Unavailable, "HDF5's H5Eset_auto2 failed"));
    }
    Ok(Locked { hdf5, _guard: guard, _this_thread: PhantomData })
}

/// The first of the library names that loads and opens.
fn load() -> Result<Hdf5> {
    let names: Vec<std::ffi::OsString> = match std::env::var_os(LIBRARY_VARIABLE) {
        Some(path) => vec![path],
        None => LIBRARIES.iter().map(Into::into).collect(),
    };
    let mut last = None;
    for name in &names {
        // SAFETY: loading libhdf5 runs its initialisers, which only set up its own state.
        let opened = match unsafe { libloading::Library::new(name) } {
            Ok(library) => open(library, &name.to_string_lossy()),
            Err(e) => Err(Error::caused_by(ErrorKind::Unavailable, name.to_string_lossy(), e)),
        };
        match opened {
            Ok(hdf5) => return Ok(hdf5),
            Err(e) => last = Some(e),
        }
    }
    let tried = names.iter().map(|n| n.to_string_lossy()).collect::<Vec<_>>().join(", ");
    let message = format!(
        "--api hdf5 needs HDF5's C library, 1.10 or later, and none could be loaded (tried {tried}): install it (Debian: hdf5-tools \
         brings it) or name it in {LIBRARY_VARIABLE}"
    );
    Err(match last {
        Some(e) => Error::caused_by(ErrorKind::Unavailable, message, e),
        None => Error::new(ErrorKind::Unavailable, message),
    })
}

/// Resolves the functions of a loaded `library` (`name`), opens it and reads the identifiers.
fn open(library: libloading::Library, name: &str) -> Result<Hdf5> {
    macro_rules! symbol {
        ($c:literal) => {
            // SAFETY: the declared type matches the C prototype in HDF5's public headers.
            *unsafe { library.get(concat!($c, "\0").as_bytes()) }.map_err(|e| Error::caused_by(ErrorKind::Unavailable, name, e))?
        };
    }
    let f = Functions {
        open: symbol!("H5open"),
        get_libversion: symbol!("H5get_libversion"),
        eset_auto2: symbol!("H5Eset_auto2"),
        ewalk2: symbol!("H5Ewalk2"),
        eclear2: symbol!("H5Eclear2"),
        fcreate: symbol!("H5Fcreate"),
        fopen: symbol!("H5Fopen"),
        fclose: symbol!("H5Fclose"),
        pcreate: symbol!("H5Pcreate"),
        pset_alloc_time: symbol!("H5Pset_alloc_time"),
        pclose: symbol!("H5Pclose"),
        screate_simple: symbol!("H5Screate_simple"),
        sget_simple_extent_npoints: symbol!("H5Sget_simple_extent_npoints"),
        sclose: symbol!("H5Sclose"),
        dcreate2: symbol!("H5Dcreate2"),
        dopen2: symbol!("H5Dopen2"),
        dget_space: symbol!("H5Dget_space"),
        dwrite: symbol!("H5Dwrite"),
        dread: symbol!("H5Dread"),
        dclose: symbol!("H5Dclose"),
        lexists: symbol!("H5Lexists"),
    };
    let unusable = |what: String| Error::new(ErrorKind::Unavailable, format!("{name}: {what}"));
    let mut version = (0, 0, 0);
    // SAFETY: H5get_libversion writes three unsigned integers.
    if unsafe { (f.get_libversion)(&mut version.0, &mut version.1, &mut version.2) } < 0 {
        return Err(unusable("H5get_libversion failed".into()));
    }
    if version < (1, 10, 0) {
        return Err(unusable(format!("HDF5 {}.{}.{}: 1.10 or later is needed (64-bit identifiers)", version.0, version.1, version.2)));
    }
    // SAFETY: H5open takes nothing.
    if unsafe { (f.open)() } < 0 {
        return Err(unusable("H5open failed".into()));
    }
    let variable = |c: &[u8]| -> Result<Id> {
        // SAFETY: the symbol is an `hid_t` variable, set by H5open above.
        let address = unsafe { library.get::<*const Id>(c) }.map_err(|e| Error::caused_by(ErrorKind::Unavailable, name, e))?;
        // SAFETY: as above; the library stays loaded while this runs.
        Ok(unsafe { **address })
    };
    let native_llong = variable(b"H5T_NATIVE_LLONG_g\0")?;
    let dataset_create = variable(b"H5P_CLS_DATASET_CREATE_ID_g\0")?;
    Ok(Hdf5 { f, native_llong, dataset_create, _library: library })
}

/// HDF5's error stack of a failed call, from the API function to the most specific error.
#[derive(Debug)]
struct ErrorStack(Vec<String>);

impl std::fmt::Display for ErrorStack {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.0.is_empty() {
            return f.write_str("HDF5 recorded no error");
        }
        f.write_str(&self.0.join("; "))
    }
}

impl std::error::Error for ErrorStack {}

/// What an HDF5 object is, to close it with its own function.
#[derive(Clone, Copy)]
enum Kind {
    File,
    Dataset,
    Space,
    Properties,
}

/// An open HDF5 object, closed when dropped (an error at closing a file is [`Object::close`]'s).
pub struct Object<'h> {
    hdf5: &'h Locked,
    id: Id,
    kind: Kind,
}

impl Object<'_> {
    /// Closes it, answering HDF5's error (a file's close writes its metadata).
    pub fn close(self) -> Result<()> {
        let this = std::mem::ManuallyDrop::new(self);
        this.hdf5.status(this.hdf5.close(this.kind, this.id), "closing")
    }
}

impl Drop for Object<'_> {
    fn drop(&mut self) {
        // An error path's close: the error that led here is the one reported.
        let _ = self.hdf5.close(self.kind, self.id);
    }
}

impl Locked {
    fn close(&self, kind: Kind, id: Id) -> Status {
        let f = &self.hdf5.f;
        let close = match kind {
            Kind::File => f.fclose,
            Kind::Dataset => f.dclose,
            Kind::Space => f.sclose,
            Kind::Properties => f.pclose,
        };
        // SAFETY: `id` is an open object of `kind`, closed once.
        unsafe { close(id) }
    }

    /// The failure of a call made while `doing`: HDF5's error stack (then cleared) as its cause.
    fn failed(&self, doing: &str) -> Error {
        unsafe extern "C" fn record(_: c_uint, error: *const ErrorRecord, lines: *mut c_void) -> Status {
            // SAFETY: HDF5 passes a valid record whose strings live during the call; `lines`
            // is the vector below.
            let (error, lines) = unsafe { (&*error, &mut *(lines as *mut Vec<String>)) };
            // SAFETY: a string of the record, NUL-terminated, or null.
            let text = |s: *const c_char| if s.is_null() { "?".into() } else { unsafe { CStr::from_ptr(s) }.to_string_lossy() };
            lines.push(format!("{}(): {}", text(error.function), text(error.description)));
            0
        }
        let mut lines: Vec<String> = Vec::new();
        // SAFETY: `record` matches H5E_walk2_t and only pushes onto `lines`.
        unsafe {
            (self.hdf5.f.ewalk2)(DEFAULT, WALK_DOWNWARD, record, (&mut lines as *mut Vec<String>).cast());
            (self.hdf5.f.eclear2)(DEFAULT);
        }
        Error::caused_by(ErrorKind::Io, doing, ErrorStack(lines))
    }

    /// `status` of a call made while `doing`: below 0 is HDF5's error.
    fn status(&self, status: Status, doing: &str) -> Result<()> {
        if status < 0 {
            return Err(self.failed(doing));
        }
        Ok(())
    }

    fn object(&self, id: Id, kind: Kind, doing: &str) -> Result<Object<'_>> {
        if id < 0 {
            return Err(self.failed(doing));
        }
        Ok(Object { hdf5: self, id, kind })
    }

    /// Creates (or empties) the file at `path` (`H5Fcreate` with `H5F_ACC_TRUNC`).
    pub fn create_file(&self, path: &str) -> Result<Object<'_>> {
        let c = c_string(path)?;
        // SAFETY: a NUL-terminated path and default property lists.
        self.object(unsafe { (self.hdf5.f.fcreate)(c.as_ptr(), TRUNCATE, DEFAULT, DEFAULT) }, Kind::File, "creating")
    }

    /// Opens the file at `path` to read.
    pub fn open_file(&self, path: &str) -> Result<Object<'_>> {
        let c = c_string(path)?;
        // SAFETY: a NUL-terminated path and the default access properties.
        self.object(unsafe { (self.hdf5.f.fopen)(c.as_ptr(), READ_ONLY, DEFAULT) }, Kind::File, "opening")
    }

    /// Dataset-creation properties allocating a dataset's space when it is made (object times
    /// are recorded: HDF5's default).
    pub fn early_allocation(&self) -> Result<Object<'_>> {
        let f = &self.hdf5.f;
        // SAFETY: `dataset_create` is the dataset-creation class H5open set.
        let properties = self.object(unsafe { (f.pcreate)(self.hdf5.dataset_create) }, Kind::Properties, "making properties")?;
        // SAFETY: an open dataset-creation property list.
        self.status(unsafe { (f.pset_alloc_time)(properties.id, ALLOC_TIME_EARLY) }, "setting the allocation time")?;
        Ok(properties)
    }

    /// Creates dataset `name` in `file`, one dimension of `values.len()` of IOR's elements
    /// (`H5T_NATIVE_LLONG`, fixed size) with `properties`, and writes `values` into it whole.
    pub fn write_dataset(&self, file: &Object, name: &str, properties: &Object, values: &[i64]) -> Result<()> {
        let (f, element) = (&self.hdf5.f, self.hdf5.native_llong);
        let c = c_string(name)?;
        let dims = [values.len() as u64];
        // SAFETY: one dimension, its size and maximum in `dims`.
        let space = self.object(unsafe { (f.screate_simple)(1, dims.as_ptr(), dims.as_ptr()) }, Kind::Space, "making a dataspace")?;
        // SAFETY: open file, dataspace and property list; a NUL-terminated name.
        let id = unsafe { (f.dcreate2)(file.id, c.as_ptr(), element, space.id, DEFAULT, properties.id, DEFAULT) };
        let dataset = self.object(id, Kind::Dataset, "creating the dataset")?;
        // SAFETY: the dataset was made of `values.len()` elements, which `values` holds.
        let status = unsafe { (f.dwrite)(dataset.id, element, DEFAULT, DEFAULT, DEFAULT, values.as_ptr().cast()) };
        self.status(status, "writing")?;
        dataset.close()
    }

    /// Reads dataset `name` of `file` whole into `values`; a dataset of another length is
    /// refused (`Corrupt`) before anything is read.
    pub fn read_dataset(&self, file: &Object, name: &str, values: &mut [i64]) -> Result<()> {
        let (f, element) = (&self.hdf5.f, self.hdf5.native_llong);
        let c = c_string(name)?;
        // SAFETY: an open file and a NUL-terminated name.
        let dataset = self.object(unsafe { (f.dopen2)(file.id, c.as_ptr(), DEFAULT) }, Kind::Dataset, "opening the dataset")?;
        // SAFETY: an open dataset; its dataspace is closed by the guard.
        let space = self.object(unsafe { (f.dget_space)(dataset.id) }, Kind::Space, "reading the dataspace")?;
        // SAFETY: an open dataspace.
        let held = unsafe { (f.sget_simple_extent_npoints)(space.id) };
        if held < 0 {
            return Err(self.failed("reading the dataspace"));
        }
        if held != values.len() as i64 {
            return Err(Error::new(ErrorKind::Corrupt, format!("holds {held} values of 8 bytes, a transfer {}", values.len())));
        }
        // SAFETY: `values` has room for the dataset's elements, as IOR's `long long`s.
        let status = unsafe { (f.dread)(dataset.id, element, DEFAULT, DEFAULT, DEFAULT, values.as_mut_ptr().cast()) };
        self.status(status, "reading")?;
        dataset.close()
    }

    /// Whether `file` has a link `name` at its root.
    pub fn exists(&self, file: &Object, name: &str) -> Result<bool> {
        let c = c_string(name)?;
        // SAFETY: an open file and a NUL-terminated name.
        let answer = unsafe { (self.hdf5.f.lexists)(file.id, c.as_ptr(), DEFAULT) };
        self.status(answer, "looking the dataset up")?;
        Ok(answer > 0)
    }
}

fn c_string(s: &str) -> Result<CString> {
    CString::new(s).map_err(|_| Error::new(ErrorKind::BadRequest, format!("{s:?}: a NUL byte in an HDF5 name")))
}
