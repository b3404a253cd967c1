//! fieldstore on DAOS: libdaos loaded at run time ([`ffi`]), safe handles for its pools,
//! containers, key-values and arrays (this module), and on them the DAOS catalogue
//! ([`catalogue`]), store ([`store`]) and the field-io object API ([`objects`]).
//!
//! Every call is blocking and persistent when it returns, as DAOS promises; handles close
//! when dropped. Without a DAOS system the tests use `fieldstore-daos-emulation`, a libdaos
//! emulation on a file system, through the same loading path.

pub mod catalogue;
pub mod config;
mod ffi;

/// The libdaos a configuration without `library:` loads, and the backend's factory (see [`config`]).
pub use config::{default_library, FACTORY};
pub use ffi::DEFAULT_LIBRARY;
pub mod naming;
pub mod objects;
mod side;
pub mod store;

use std::collections::HashMap;
use std::ffi::{c_void, CString};
use std::sync::{Arc, Mutex};

use fieldstore_core::error::{Error, ErrorKind, Result};
use fieldstore_daos_sys::errno::{
    describe, DER_EXIST, DER_INVAL, DER_KEY2BIG, DER_NONEXIST, DER_NOSYS, DER_REC2BIG, DER_TIMEDOUT, DER_UNREACH,
};
use fieldstore_daos_sys::*;

use ffi::Libdaos;

/// An error from libdaos: what was done, and DAOS' name and text for the code.
pub fn daos_error(rc: i32, what: &str) -> Error {
    let (name, text) = describe(rc);
    let kind = match -rc.abs() {
        rc if rc == -DER_NONEXIST => ErrorKind::NotFound,
        rc if rc == -DER_EXIST => ErrorKind::AlreadyExists,
        rc if rc == -DER_TIMEDOUT => ErrorKind::Timeout,
        rc if rc == -DER_UNREACH => ErrorKind::Unavailable,
        rc if rc == -DER_INVAL || rc == -DER_KEY2BIG || rc == -DER_REC2BIG => ErrorKind::BadRequest,
        rc if rc == -DER_NOSYS => ErrorKind::Unsupported,
        _ => ErrorKind::Io,
    };
    Error::new(kind, format!("DAOS {what}: {name} ({rc}): {text}"))
}

fn check(rc: i32, what: impl FnOnce() -> String) -> Result<()> {
    if rc == 0 {
        Ok(())
    } else {
        Err(daos_error(rc, &what()))
    }
}

/// A C string for libdaos; names with NUL bytes are refused.
fn c_string(kind: &str, text: &str) -> Result<CString> {
    CString::new(text).map_err(|_| Error::new(ErrorKind::BadRequest, format!("DAOS {kind} {text:?} contains a NUL byte")))
}

/// Where to find a DAOS pool.
#[derive(Clone, Debug)]
pub struct PoolConfig {
    /// The libdaos file to load.
    pub library: String,
    /// The pool's label or UUID.
    pub pool: String,
    /// The DAOS system name (`None`: the agent's default).
    pub system: Option<String>,
}

/// The open containers of one pool by label, for handles that use many. A container that
/// was destroyed (and perhaps created again) while open is opened again when a call on it
/// fails.
pub struct Containers {
    pool: Arc<Pool>,
    open: Mutex<HashMap<String, Arc<Container>>>,
}

impl Containers {
    /// The containers of `pool`, none open yet.
    pub fn new(pool: Arc<Pool>) -> Self {
        Containers { pool, open: Mutex::new(HashMap::new()) }
    }

    /// The pool the containers are in.
    pub fn pool(&self) -> &Arc<Pool> {
        &self.pool
    }

    /// The container labelled `label`, created first if `create`; `None` if there is none.
    pub fn get(&self, label: &str, create: bool) -> Result<Option<Arc<Container>>> {
        if let Some(container) = self.open.lock().unwrap().get(label) {
            return Ok(Some(container.clone()));
        }
        if create {
            self.pool.create_container(label)?;
        }
        let Some(container) = self.pool.open_container(label)? else { return Ok(None) };
        self.open.lock().unwrap().insert(label.into(), container.clone());
        Ok(Some(container))
    }

    /// Drops the open handle of `label` (its container was destroyed): the next call opens the container again.
    pub fn forget(&self, label: &str) {
        self.open.lock().unwrap().remove(label);
    }

    /// Runs `action` on the container; if it fails on a handle opened earlier, once more on
    /// a fresh one (the container may have been destroyed and created again). `None` if
    /// there is no container.
    pub fn with<T>(&self, label: &str, create: bool, mut action: impl FnMut(&Arc<Container>) -> Result<T>) -> Result<Option<T>> {
        let cached = self.open.lock().unwrap().contains_key(label);
        let Some(container) = self.get(label, create)? else { return Ok(None) };
        match action(&container) {
            Err(_) if cached => {
                self.forget(label);
                let Some(container) = self.get(label, create)? else { return Ok(None) };
                action(&container).map(Some)
            }
            result => result.map(Some),
        }
    }
}

/// A connection to a pool.
pub struct Pool {
    lib: &'static Libdaos,
    handle: daos_handle_t,
    label: String,
}

// SAFETY: a `Pool` is a pool handle (a plain cookie), its label, and the `&'static Libdaos` it calls through (function
// pointers into a library that is never unloaded). libdaos' client is thread-safe and its handles are not tied to the
// thread that made them, so the pool may be used, and disconnected on drop, from any thread.
unsafe impl Send for Pool {}
// SAFETY: `&Pool` only reads the handle and passes it to libdaos, whose calls may run concurrently on one handle.
unsafe impl Sync for Pool {}

impl Pool {
    /// Loads the configured libdaos (once per process) and connects to the pool, read-write.
    pub fn connect(config: &PoolConfig) -> Result<Arc<Pool>> {
        let lib = ffi::libdaos(&config.library)?;
        let label = c_string("pool", &config.pool)?;
        let system = config.system.as_deref().map(|s| c_string("system", s)).transpose()?;
        let mut handle = daos_handle_t::default();
        let system_ptr = system.as_ref().map_or(std::ptr::null(), |s| s.as_ptr());
        // SAFETY: `label` and `system` (or null: the default system) are C strings alive until after the call,
        // `handle` a writable `daos_handle_t`; no info and no event, so the call blocks and keeps no pointer.
        let rc =
            unsafe { (lib.pool_connect)(label.as_ptr(), system_ptr, DAOS_COO_RW, &mut handle, std::ptr::null_mut(), std::ptr::null_mut()) };
        check(rc, || format!("connecting to pool '{}'", config.pool))?;
        Ok(Arc::new(Pool { lib, handle, label: config.pool.clone() }))
    }

    /// The pool's label or UUID, as configured (in messages and locations).
    pub fn label(&self) -> &str {
        &self.label
    }

    /// Creates a labelled container; false if one with that label exists (racing creators:
    /// exactly one gets true).
    pub fn create_container(&self, label: &str) -> Result<bool> {
        let name = c_string("container", label)?;
        // SAFETY: `self.handle` is connected until `self` drops; `name` is a C string alive until after the call;
        // properties and UUID are optional (null); no event, so the call blocks and keeps no pointer.
        let rc = unsafe {
            (self.lib.cont_create_with_label)(self.handle, name.as_ptr(), std::ptr::null_mut(), std::ptr::null_mut(), std::ptr::null_mut())
        };
        if rc == -DER_EXIST {
            return Ok(false);
        }
        check(rc, || format!("creating container '{label}' in pool '{}'", self.label))?;
        Ok(true)
    }

    /// Opens a container by label; `None` if there is none.
    pub fn open_container(self: &Arc<Self>, label: &str) -> Result<Option<Arc<Container>>> {
        let name = c_string("container", label)?;
        let mut handle = daos_handle_t::default();
        // SAFETY: `self.handle` is connected until `self` drops; `name` is a C string alive until after the call,
        // `handle` a writable `daos_handle_t`; no info and no event, so the call blocks and keeps no pointer.
        let rc = unsafe {
            (self.lib.cont_open)(self.handle, name.as_ptr(), DAOS_COO_RW, &mut handle, std::ptr::null_mut(), std::ptr::null_mut())
        };
        if rc == -DER_NONEXIST {
            return Ok(None);
        }
        check(rc, || format!("opening container '{label}' in pool '{}'", self.label))?;
        Ok(Some(Arc::new(Container { pool: self.clone(), handle, label: label.into(), reserved: Mutex::new(0..0) })))
    }

    /// Destroys a container and everything in it, even while others have it open; false if
    /// there was none.
    pub fn destroy_container(&self, label: &str) -> Result<bool> {
        let name = c_string("container", label)?;
        // SAFETY: `self.handle` is connected until `self` drops; `name` is a C string alive until after the call; no
        // event, so the call blocks and keeps no pointer.
        let rc = unsafe { (self.lib.cont_destroy)(self.handle, name.as_ptr(), 1, std::ptr::null_mut()) };
        if rc == -DER_NONEXIST {
            return Ok(false);
        }
        check(rc, || format!("destroying container '{label}' in pool '{}'", self.label))?;
        Ok(true)
    }
}

impl Drop for Pool {
    fn drop(&mut self) {
        // SAFETY: the handle is connected and, in `drop`, used by nothing else: every `Container` on it holds an
        // `Arc<Pool>`, so all are closed already. No event: the call blocks.
        unsafe { (self.lib.pool_disconnect)(self.handle, std::ptr::null_mut()) };
    }
}

/// An open container.
pub struct Container {
    pool: Arc<Pool>,
    handle: daos_handle_t,
    label: String,
    /// Object ids reserved by this handle and not used yet.
    reserved: Mutex<std::ops::Range<u64>>,
}

// SAFETY: a `Container` is a container handle (a plain cookie), its label, the `Arc<Pool>` it was opened in and a
// `Mutex`; libdaos' client is thread-safe and its handles are not tied to a thread, so the container may be used, and
// closed on drop, from any thread.
unsafe impl Send for Container {}
// SAFETY: `&Container` only reads the handle and passes it to libdaos, whose calls may run concurrently on one handle;
// the reserved ids are behind a `Mutex`.
unsafe impl Sync for Container {}

/// The kinds of object fieldstore makes.
#[derive(Clone, Copy)]
pub enum ObjectType {
    /// A key-value object (`DAOS_OT_KV_HASHED`).
    KeyValue,
    /// An array whose cell and chunk sizes the opener supplies (`DAOS_OT_ARRAY_BYTE`).
    ByteArray,
    /// An array that stores its own cell and chunk sizes (`DAOS_OT_ARRAY`).
    Array,
}

impl Container {
    /// The pool the container is in (kept connected while the container is open).
    pub fn pool(&self) -> &Arc<Pool> {
        &self.pool
    }

    /// The label the container was opened by.
    pub fn label(&self) -> &str {
        &self.label
    }

    fn lib(&self) -> &'static Libdaos {
        self.pool.lib
    }

    /// For error messages: pool and container.
    pub fn describe(&self) -> String {
        format!("pool '{}' container '{}'", self.pool.label, self.label)
    }

    /// Reserves `count` object ids unique in this container; returns the first of them.
    pub fn alloc_oids(&self, count: u64) -> Result<u64> {
        let mut first = 0;
        // SAFETY: `self.handle` is open until `self` drops; `first` is a writable `u64`; no event, so the call blocks
        // and keeps no pointer.
        let rc = unsafe { (self.lib().cont_alloc_oids)(self.handle, count, &mut first, std::ptr::null_mut()) };
        check(rc, || format!("allocating {count} object ids in {}", self.describe()))?;
        Ok(first)
    }

    /// An object id no one else uses, from a batch of `batch` reserved at once (one round
    /// trip per batch).
    pub fn next_oid(&self, batch: u64) -> Result<u64> {
        let mut reserved = self.reserved.lock().unwrap();
        if reserved.is_empty() {
            let first = self.alloc_oids(batch)?;
            *reserved = first..first + batch;
        }
        let oid = reserved.start;
        reserved.start += 1;
        Ok(oid)
    }

    /// The full id of an object from its 96 user bits, its type and object class.
    pub fn object_id(&self, lo: u64, hi: u32, kind: ObjectType, class: daos_oclass_id_t) -> Result<daos_obj_id_t> {
        let mut oid = daos_obj_id_t { lo, hi: u64::from(hi) };
        let otype = match kind {
            ObjectType::KeyValue => DAOS_OT_KV_HASHED,
            ObjectType::ByteArray => DAOS_OT_ARRAY_BYTE,
            ObjectType::Array => DAOS_OT_ARRAY,
        };
        // SAFETY: `self.handle` is open until `self` drops; `oid` is a `daos_obj_id_t` readable and writable during the
        // call, which is local (no event) and keeps no pointer.
        let rc = unsafe { (self.lib().obj_generate_oid)(self.handle, &mut oid, otype, class, 0, 0) };
        check(rc, || format!("generating an object id in {}", self.describe()))?;
        Ok(oid)
    }

    /// Opens the key-value object `oid` read-write (DAOS makes it with its first put).
    pub fn kv(self: &Arc<Self>, oid: daos_obj_id_t) -> Result<KeyValue> {
        let mut handle = daos_handle_t::default();
        // SAFETY: `self.handle` is open until `self` drops; `handle` is a writable `daos_handle_t`; no event, so the
        // call blocks and keeps no pointer.
        let rc = unsafe { (self.lib().kv_open)(self.handle, oid, DAOS_OO_RW, &mut handle, std::ptr::null_mut()) };
        check(rc, || format!("opening key-value {} in {}", oid_text(oid), self.describe()))?;
        Ok(KeyValue { container: self.clone(), handle, oid })
    }

    /// Opens a byte array (`ObjectType::ByteArray`) without asking the servers anything.
    pub fn byte_array(self: &Arc<Self>, oid: daos_obj_id_t) -> Result<Array> {
        let mut handle = daos_handle_t::default();
        // SAFETY: `self.handle` is open until `self` drops; `handle` is a writable `daos_handle_t`; no transaction and
        // no event, so the call blocks and keeps no pointer.
        let rc = unsafe {
            (self.lib().array_open_with_attr)(self.handle, oid, DAOS_TX_NONE, DAOS_OO_RW, 1, ARRAY_CHUNK, &mut handle, std::ptr::null_mut())
        };
        check(rc, || format!("opening array {} in {}", oid_text(oid), self.describe()))?;
        Ok(Array { container: self.clone(), handle, oid })
    }

    /// Creates an array (`ObjectType::Array`) of bytes; `None` if it exists.
    pub fn create_array(self: &Arc<Self>, oid: daos_obj_id_t) -> Result<Option<Array>> {
        let mut handle = daos_handle_t::default();
        // SAFETY: `self.handle` is open until `self` drops; `handle` is a writable `daos_handle_t`; no transaction and
        // no event, so the call blocks and keeps no pointer.
        let rc = unsafe { (self.lib().array_create)(self.handle, oid, DAOS_TX_NONE, 1, ARRAY_CHUNK, &mut handle, std::ptr::null_mut()) };
        if rc == -DER_EXIST {
            return Ok(None);
        }
        check(rc, || format!("creating array {} in {}", oid_text(oid), self.describe()))?;
        Ok(Some(Array { container: self.clone(), handle, oid }))
    }

    /// Opens an array (`ObjectType::Array`) created before; `None` if there is none.
    pub fn open_array(self: &Arc<Self>, oid: daos_obj_id_t) -> Result<Option<Array>> {
        let (mut handle, mut cell, mut chunk) = (daos_handle_t::default(), 0, 0);
        // SAFETY: `self.handle` is open until `self` drops; `cell` and `chunk` are writable `u64`s, `handle` a writable
        // `daos_handle_t`; no transaction and no event, so the call blocks and keeps no pointer.
        let rc = unsafe {
            (self.lib().array_open)(self.handle, oid, DAOS_TX_NONE, DAOS_OO_RW, &mut cell, &mut chunk, &mut handle, std::ptr::null_mut())
        };
        if rc == -DER_NONEXIST {
            return Ok(None);
        }
        check(rc, || format!("opening array {} in {}", oid_text(oid), self.describe()))?;
        if cell != 1 {
            let array = Array { container: self.clone(), handle, oid };
            return Err(Error::new(ErrorKind::Corrupt, format!("{}: its cells are {cell} bytes, not 1", array.describe())));
        }
        Ok(Some(Array { container: self.clone(), handle, oid }))
    }
}

impl Drop for Container {
    fn drop(&mut self) {
        // SAFETY: the handle is open and, in `drop`, used by nothing else: every `KeyValue` and `Array` on it holds an
        // `Arc<Container>`, so all are closed already. The pool (`self.pool`) is still connected. No event: it blocks.
        unsafe { (self.lib().cont_close)(self.handle, std::ptr::null_mut()) };
    }
}

/// Bytes per array chunk (DAOS spreads chunks over targets in sharded classes): 1 MiB, the
/// size FDB5 uses.
const ARRAY_CHUNK: u64 = 1 << 20;

/// An object id as text: `hi.lo` in hex.
pub fn oid_text(oid: daos_obj_id_t) -> String {
    format!("{:016x}.{:016x}", oid.hi, oid.lo)
}

/// The object id in [`oid_text`]'s form; `None` for any other text.
pub fn parse_oid(text: &str) -> Option<daos_obj_id_t> {
    let (hi, lo) = text.split_once('.')?;
    if hi.len() != 16 || lo.len() != 16 {
        return None;
    }
    Some(daos_obj_id_t { hi: u64::from_str_radix(hi, 16).ok()?, lo: u64::from_str_radix(lo, 16).ok()? })
}

/// An open key-value object.
pub struct KeyValue {
    container: Arc<Container>,
    handle: daos_handle_t,
    oid: daos_obj_id_t,
}

// SAFETY: a `KeyValue` is an object handle (a plain cookie), its id and the `Arc<Container>` it was opened in;
// libdaos' client is thread-safe and its handles are not tied to a thread, so the object may be used, and closed on
// drop, from any thread.
unsafe impl Send for KeyValue {}
// SAFETY: `&KeyValue` only reads the handle and passes it to libdaos, whose calls may run concurrently on one handle.
unsafe impl Sync for KeyValue {}

/// How many bytes a first `get` offers before asking for the value's size.
const GET_GUESS: usize = 4096;

impl KeyValue {
    fn lib(&self) -> &'static Libdaos {
        self.container.lib()
    }

    /// For error messages: pool, container and object id.
    pub fn describe(&self) -> String {
        format!("{} key-value {}", self.container.describe(), oid_text(self.oid))
    }

    fn put_with(&self, key: &str, value: &[u8], flags: u64) -> Result<i32> {
        let name = c_string("key", key)?;
        // SAFETY: `self.handle` is open until `self` drops; `name` is a C string and `value` holds `value.len()`
        // readable bytes, both alive until after the call; no event, so the call blocks and keeps no pointer.
        Ok(unsafe {
            (self.lib().kv_put)(
                self.handle,
                DAOS_TX_NONE,
                flags,
                name.as_ptr(),
                value.len() as u64,
                value.as_ptr().cast::<c_void>(),
                std::ptr::null_mut(),
            )
        })
    }

    /// Sets a key's value, replacing any.
    pub fn put(&self, key: &str, value: &[u8]) -> Result<()> {
        let rc = self.put_with(key, value, 0)?;
        check(rc, || format!("putting {key:?} into {}", self.describe()))
    }

    /// Sets a key's value only if the key has none; false if it had one (atomic: of racing
    /// inserters exactly one gets true).
    pub fn insert(&self, key: &str, value: &[u8]) -> Result<bool> {
        let rc = self.put_with(key, value, DAOS_COND_KEY_INSERT)?;
        if rc == -DER_EXIST {
            return Ok(false);
        }
        check(rc, || format!("inserting {key:?} into {}", self.describe()))?;
        Ok(true)
    }

    /// A key's value; `None` if the key has none.
    pub fn get(&self, key: &str) -> Result<Option<Vec<u8>>> {
        let name = c_string("key", key)?;
        let mut buf = vec![0u8; GET_GUESS];
        loop {
            let mut size = buf.len() as u64;
            // SAFETY: `self.handle` is open until `self` drops; `name` is a C string alive until after the call, `size`
            // a writable `u64`, and `buf` holds `size` writable bytes; no event, so the call blocks and keeps no pointer.
            let rc = unsafe {
                (self.lib().kv_get)(
                    self.handle,
                    DAOS_TX_NONE,
                    DAOS_COND_KEY_GET,
                    name.as_ptr(),
                    &mut size,
                    buf.as_mut_ptr().cast::<c_void>(),
                    std::ptr::null_mut(),
                )
            };
            match rc {
                0 => {
                    buf.truncate(size as usize);
                    return Ok(Some(buf));
                }
                rc if rc == -DER_NONEXIST => return Ok(None),
                rc if rc == -DER_REC2BIG => buf.resize(self.value_size(&name, key)?.max(buf.len() * 2), 0),
                rc => return Err(daos_error(rc, &format!("getting {key:?} from {}", self.describe()))),
            }
        }
    }

    fn value_size(&self, name: &CString, key: &str) -> Result<usize> {
        let mut size = 0u64;
        // SAFETY: `self.handle` is open until `self` drops; `name` is a C string alive until after the call, `size` a
        // writable `u64`; a null buffer asks for the size only; no event, so the call blocks and keeps no pointer.
        let rc = unsafe {
            (self.lib().kv_get)(self.handle, DAOS_TX_NONE, 0, name.as_ptr(), &mut size, std::ptr::null_mut(), std::ptr::null_mut())
        };
        check(rc, || format!("getting the size of {key:?} in {}", self.describe()))?;
        Ok(size as usize)
    }

    /// Removes a key (no error if it has no value).
    pub fn remove(&self, key: &str) -> Result<()> {
        let name = c_string("key", key)?;
        // SAFETY: `self.handle` is open until `self` drops; `name` is a C string alive until after the call; no event,
        // so the call blocks and keeps no pointer.
        let rc = unsafe { (self.lib().kv_remove)(self.handle, DAOS_TX_NONE, 0, name.as_ptr(), std::ptr::null_mut()) };
        check(rc, || format!("removing {key:?} from {}", self.describe()))
    }

    /// Every key, in DAOS' order (by hash, not sorted).
    pub fn keys(&self) -> Result<Vec<String>> {
        const BATCH: usize = 256;
        let (mut keys, mut anchor, mut room) = (Vec::new(), daos_anchor_t::default(), vec![0u8; 64 * 1024]);
        let mut descriptors = [daos_key_desc_t::default(); BATCH];
        while !anchor.is_eof() {
            let mut count = BATCH as u32;
            let mut iov = d_iov_t { iov_buf: room.as_mut_ptr().cast::<c_void>(), iov_buf_len: room.len(), iov_len: 0 };
            let mut sgl = d_sg_list_t { sg_nr: 1, sg_nr_out: 0, sg_iovs: &mut iov };
            // SAFETY: `self.handle` is open until `self` drops; `descriptors` has `count` writable entries; `sgl` points
            // to one `iov` describing `room` (`room.len()` writable bytes); `count` and `anchor` are writable; all live
            // past the call, which has no event, so it blocks and keeps no pointer.
            let rc = unsafe {
                (self.lib().kv_list)(
                    self.handle,
                    DAOS_TX_NONE,
                    &mut count,
                    descriptors.as_mut_ptr(),
                    &mut sgl,
                    &mut anchor,
                    std::ptr::null_mut(),
                )
            };
            if rc == -DER_KEY2BIG {
                // One key is longer than the buffer: make room and ask again.
                room.resize((descriptors[0].kd_key_len as usize).max(room.len() * 2), 0);
                continue;
            }
            check(rc, || format!("listing {}", self.describe()))?;
            let mut at = 0;
            for descriptor in &descriptors[..count as usize] {
                let end = at + descriptor.kd_key_len as usize;
                let key = room
                    .get(at..end)
                    .ok_or_else(|| Error::new(ErrorKind::Io, format!("DAOS listing {}: key lengths exceed the buffer", self.describe())))?;
                keys.push(String::from_utf8_lossy(key).into_owned());
                at = end;
            }
        }
        Ok(keys)
    }

    /// Removes the object and all its pairs.
    pub fn destroy(self) -> Result<()> {
        // SAFETY: `self.handle` is open until `self` drops, after this call; no transaction and no event, so the call
        // blocks.
        let rc = unsafe { (self.lib().kv_destroy)(self.handle, DAOS_TX_NONE, std::ptr::null_mut()) };
        check(rc, || format!("destroying {}", self.describe()))
    }
}

impl Drop for KeyValue {
    fn drop(&mut self) {
        // SAFETY: the handle is open and, in `drop`, used by nothing else; its container is still open
        // (`self.container`). No event: the call blocks.
        unsafe { (self.lib().kv_close)(self.handle, std::ptr::null_mut()) };
    }
}

/// An open array of bytes.
pub struct Array {
    container: Arc<Container>,
    handle: daos_handle_t,
    oid: daos_obj_id_t,
}

// SAFETY: an `Array` is an object handle (a plain cookie), its id and the `Arc<Container>` it was opened in; libdaos'
// client is thread-safe and its handles are not tied to a thread, so the array may be used, and closed on drop, from
// any thread.
unsafe impl Send for Array {}
// SAFETY: `&Array` only reads the handle and passes it to libdaos, whose calls may run concurrently on one handle.
unsafe impl Sync for Array {}

impl Array {
    fn lib(&self) -> &'static Libdaos {
        self.container.lib()
    }

    /// For error messages: pool, container and object id.
    pub fn describe(&self) -> String {
        format!("{} array {}", self.container.describe(), oid_text(self.oid))
    }

    /// One range, one buffer: the I/O descriptor and scatter/gather list of a read or write.
    fn io(&self, offset: u64, buf: *mut u8, length: usize, write: bool) -> Result<u64> {
        let mut range = daos_range_t { rg_idx: offset, rg_len: length as u64 };
        let mut iod = daos_array_iod_t { arr_nr: 1, arr_rgs: &mut range, arr_nr_short_read: 0, arr_nr_read: 0 };
        let mut iov = d_iov_t { iov_buf: buf.cast::<c_void>(), iov_buf_len: length, iov_len: length };
        let mut sgl = d_sg_list_t { sg_nr: 1, sg_nr_out: 0, sg_iovs: &mut iov };
        let call = if write { self.lib().array_write } else { self.lib().array_read };
        // SAFETY: `self.handle` is open until `self` drops; `iod` (one `range`) and `sgl` (one `iov` of `length` bytes at
        // `buf`) are locals alive past the call; `buf` is the caller's slice, alive (and, for a read, writable) until
        // `io` returns, and a write only reads it. No event, so the call blocks and keeps no pointer.
        let rc = unsafe { call(self.handle, DAOS_TX_NONE, &mut iod, &mut sgl, std::ptr::null_mut()) };
        let verb = if write { "writing" } else { "reading" };
        check(rc, || format!("{verb} {length} bytes at {offset} of {}", self.describe()))?;
        Ok(iod.arr_nr_short_read)
    }

    /// Writes `data` at byte `offset` (the array grows to hold it).
    pub fn write(&self, offset: u64, data: &[u8]) -> Result<()> {
        self.io(offset, data.as_ptr().cast_mut(), data.len(), true).map(drop)
    }

    /// Fills `buf` from `offset`, every byte of it (a hole reads as zeros); an array shorter
    /// than that is an error.
    pub fn read(&self, offset: u64, buf: &mut [u8]) -> Result<()> {
        if self.io(offset, buf.as_mut_ptr(), buf.len(), false)? == 0 {
            return Ok(());
        }
        // DAOS may report a short read where there is a hole: only the size can tell.
        let size = self.size()?;
        if offset.checked_add(buf.len() as u64).is_none_or(|end| end > size) {
            return Err(Error::new(
                ErrorKind::Corrupt,
                format!("{}: reading {} bytes at {offset}, but it holds {size}", self.describe(), buf.len()),
            ));
        }
        // A hole leaves its part of `buf` as it was, wherever it lies: read again into zeros
        // (a buffer used again must not keep an earlier read's bytes).
        buf.fill(0);
        self.io(offset, buf.as_mut_ptr(), buf.len(), false).map(drop)
    }

    /// The array's size in bytes: one past the last byte written.
    pub fn size(&self) -> Result<u64> {
        let mut size = 0;
        // SAFETY: `self.handle` is open until `self` drops; `size` is a writable `u64`; no transaction and no event, so
        // the call blocks and keeps no pointer.
        let rc = unsafe { (self.lib().array_get_size)(self.handle, DAOS_TX_NONE, &mut size, std::ptr::null_mut()) };
        check(rc, || format!("getting the size of {}", self.describe()))?;
        Ok(size)
    }

    /// Removes the array and its bytes.
    pub fn destroy(self) -> Result<()> {
        // SAFETY: `self.handle` is open until `self` drops, after this call; no transaction and no event, so the call
        // blocks.
        let rc = unsafe { (self.lib().array_destroy)(self.handle, DAOS_TX_NONE, std::ptr::null_mut()) };
        check(rc, || format!("destroying {}", self.describe()))
    }
}

impl Drop for Array {
    fn drop(&mut self) {
        // SAFETY: the handle is open and, in `drop`, used by nothing else; its container is still open
        // (`self.container`). No event: the call blocks.
        unsafe { (self.lib().array_close)(self.handle, std::ptr::null_mut()) };
    }
}

/// An object class by its DAOS name (`OC_S1`, ...).
pub fn object_class(name: &str) -> Result<daos_oclass_id_t> {
    OBJECT_CLASSES.iter().find(|(n, _)| *n == name).map(|(_, id)| *id).ok_or_else(|| {
        let known: Vec<&str> = OBJECT_CLASSES.iter().map(|(n, _)| *n).collect();
        Error::new(ErrorKind::BadConfig, format!("unknown DAOS object class '{name}' (known: {})", known.join(", ")))
    })
}
