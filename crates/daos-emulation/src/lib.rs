//! **An emulation of libdaos, not DAOS.** A shared library (`libdaos.so`) exporting the C
//! functions fieldstore's DAOS backends call, implemented on a local file system so those
//! backends can be tested where DAOS cannot be installed, through the same `dlopen` path a
//! real libdaos takes. It reproduces DAOS' semantics that fieldstore relies on (labels unique
//! per pool, conditional key insertion, listing with anchors, arrays written at offsets,
//! everything visible once a call returns), safely across processes; it has none of DAOS'
//! performance, so no DAOS figure is ever measured on it.
//!
//! Layout under `$DAOS_EMULATION_ROOT` (read by `daos_init`):
//!
//! ```text
//! <pool label>/                      a pool (made by the tests, as an admin makes a pool)
//!   labels/<container label>         the container's UUID; created by link(2), so atomically
//!   containers/<uuid>/oids           next OID for daos_cont_alloc_oids (under flock)
//!   containers/<uuid>/<hi>.<lo>/     an object: KV pairs as files, or an array
//!       <hex of key> | ~<md5 of key>   one KV pair: u32 key length, key, value
//!       attr, data                     an array's cell and chunk size, and its bytes
//! ```
//!
//! Only blocking calls (no events) without transactions are supported; anything else
//! returns `-DER_NOSYS`.
#![allow(non_camel_case_types, clippy::missing_safety_doc)]

mod handles;
mod objects;

use std::ffi::{c_char, c_int, CStr};
use std::path::PathBuf;
use std::sync::Mutex;

use fieldstore_daos_sys::errno::*;
use fieldstore_daos_sys::*;

use handles::{Handle, HANDLES};

/// The emulation root, set by `daos_init`.
static ROOT: Mutex<Option<PathBuf>> = Mutex::new(None);

/// A call's result: `Err` holds a positive DAOS error number.
type Rc = Result<(), i32>;

fn rc(result: Rc) -> c_int {
    match result {
        Ok(()) => 0,
        Err(e) => -e,
    }
}

/// Maps a file system error to the nearest DAOS error.
fn io_error(e: std::io::Error) -> i32 {
    match e.kind() {
        std::io::ErrorKind::NotFound => DER_NONEXIST,
        std::io::ErrorKind::AlreadyExists => DER_EXIST,
        std::io::ErrorKind::PermissionDenied => DER_NO_PERM,
        _ if e.raw_os_error() == Some(libc::ENOSPC) => DER_NOSPACE,
        _ => DER_IO,
    }
}

/// A string argument as UTF-8; `DER_INVAL` if it is null or not UTF-8.
///
/// # Safety
///
/// `s` is null or a NUL-terminated string that stays valid and unchanged for `'a`.
unsafe fn text<'a>(s: *const c_char) -> Result<&'a str, i32> {
    if s.is_null() {
        return Err(DER_INVAL);
    }
    // SAFETY: `s` is not null, and the caller guarantees it is a NUL-terminated string valid for `'a`.
    unsafe { CStr::from_ptr(s) }.to_str().map_err(|_| DER_INVAL)
}

/// Runs a call's body: only blocking calls (no event) outside transactions are emulated.
fn call(ev: *mut libc::c_void, th: daos_handle_t, body: impl FnOnce() -> Rc) -> c_int {
    if !ev.is_null() || th != DAOS_TX_NONE {
        return -DER_NOSYS;
    }
    rc(body())
}

/// `daos_init`: takes the emulation root from `$DAOS_EMULATION_ROOT` (`-DER_INVAL` when it is not set).
#[no_mangle]
pub extern "C" fn daos_init() -> c_int {
    let Some(root) = std::env::var_os("DAOS_EMULATION_ROOT") else { return -DER_INVAL };
    *ROOT.lock().unwrap() = Some(PathBuf::from(root));
    0
}

/// `daos_fini`: nothing to release; always 0.
#[no_mangle]
pub extern "C" fn daos_fini() -> c_int {
    0
}

/// `daos_pool_connect2`: connects to the pool directory `<root>/<pool label>` (`-DER_NONEXIST` without one);
/// the system name, flags and info are ignored.
#[no_mangle]
pub unsafe extern "C" fn daos_pool_connect2(
    pool: *const c_char,
    _sys: *const c_char,
    _flags: u32,
    poh: *mut daos_handle_t,
    _info: *mut libc::c_void,
    ev: *mut libc::c_void,
) -> c_int {
    call(ev, DAOS_TX_NONE, || {
        let root = ROOT.lock().unwrap().clone().ok_or(DER_UNREACH)?;
        // SAFETY: libdaos' contract: `pool` is the pool's label or UUID, a NUL-terminated string valid for the call
        // (a null one is refused by `text`).
        let label = unsafe { text(pool) }?;
        if !label_is_valid(label) {
            return Err(DER_INVAL);
        }
        let dir = root.join(label);
        if !dir.is_dir() {
            return Err(DER_NONEXIST);
        }
        // SAFETY: libdaos' contract: `poh` points to a `daos_handle_t` the caller lets this call write.
        unsafe { *poh = HANDLES.insert(Handle::Pool { dir }) };
        Ok(())
    })
}

/// `daos_pool_disconnect`: forgets the pool handle (`-DER_NO_HDL` if it is not open).
#[no_mangle]
pub extern "C" fn daos_pool_disconnect(poh: daos_handle_t, _ev: *mut libc::c_void) -> c_int {
    rc(HANDLES.remove(poh))
}

/// `daos_cont_create_with_label`: creates a container with a new UUID and claims its label atomically
/// (`-DER_EXIST` if the label is taken); properties are ignored, the UUID is returned if `uuid` is not null.
#[no_mangle]
pub unsafe extern "C" fn daos_cont_create_with_label(
    poh: daos_handle_t,
    label: *const c_char,
    _prop: *mut libc::c_void,
    uuid: *mut [u8; 16],
    ev: *mut libc::c_void,
) -> c_int {
    call(ev, DAOS_TX_NONE, || {
        // SAFETY: libdaos' contract: `label` is a NUL-terminated string valid for the call (a null one is refused by
        // `text`).
        let label = unsafe { text(label) }?;
        if !label_is_valid(label) {
            return Err(DER_INVAL);
        }
        let id = objects::create_container(&HANDLES.pool_dir(poh)?, label)?;
        if !uuid.is_null() {
            // SAFETY: libdaos' contract: a non-null `uuid` points to a `uuid_t` (16 bytes) the caller lets this call
            // write.
            unsafe { *uuid = id };
        }
        Ok(())
    })
}

/// `daos_cont_open2`: opens a container by label or UUID (`-DER_NONEXIST` if there is none); flags and info are
/// ignored.
#[no_mangle]
pub unsafe extern "C" fn daos_cont_open2(
    poh: daos_handle_t,
    cont: *const c_char,
    _flags: u32,
    coh: *mut daos_handle_t,
    _info: *mut libc::c_void,
    ev: *mut libc::c_void,
) -> c_int {
    call(ev, DAOS_TX_NONE, || {
        // SAFETY: libdaos' contract: `cont` is a NUL-terminated label or UUID valid for the call (a null one is
        // refused by `text`).
        let dir = objects::container_dir(&HANDLES.pool_dir(poh)?, unsafe { text(cont) }?)?;
        // SAFETY: libdaos' contract: `coh` points to a `daos_handle_t` the caller lets this call write.
        unsafe { *coh = HANDLES.insert(Handle::Container { dir }) };
        Ok(())
    })
}

/// `daos_cont_close`: forgets the container handle (`-DER_NO_HDL` if it is not open).
#[no_mangle]
pub extern "C" fn daos_cont_close(coh: daos_handle_t, _ev: *mut libc::c_void) -> c_int {
    rc(HANDLES.remove(coh))
}

/// `daos_cont_destroy2`: removes a container's label, then its objects, even while it is open (always forced);
/// `-DER_NONEXIST` if there is none.
#[no_mangle]
pub unsafe extern "C" fn daos_cont_destroy2(poh: daos_handle_t, cont: *const c_char, _force: c_int, ev: *mut libc::c_void) -> c_int {
    // SAFETY: libdaos' contract: `cont` is a NUL-terminated label or UUID valid for the call (a null one is refused
    // by `text`).
    call(ev, DAOS_TX_NONE, || objects::destroy_container(&HANDLES.pool_dir(poh)?, unsafe { text(cont) }?))
}

/// `daos_cont_alloc_oids`: reserves `num_oids` object ids unique in the container, across processes; the first
/// goes to `*oid`.
#[no_mangle]
pub unsafe extern "C" fn daos_cont_alloc_oids(coh: daos_handle_t, num_oids: u64, oid: *mut u64, ev: *mut libc::c_void) -> c_int {
    call(ev, DAOS_TX_NONE, || {
        // SAFETY: libdaos' contract: `oid` points to a `uint64_t` the caller lets this call write.
        unsafe { *oid = objects::alloc_oids(&HANDLES.container_dir(coh)?, num_oids)? };
        Ok(())
    })
}

/// `daos_obj_generate_oid2`: sets the type and the class's redundancy in the high 32 bits of `*oid`, keeping the
/// user's 96 bits (class 0 counts as `OR_RP_1`); hints are ignored.
#[no_mangle]
pub unsafe extern "C" fn daos_obj_generate_oid2(
    coh: daos_handle_t,
    oid: *mut daos_obj_id_t,
    otype: u32,
    cid: daos_oclass_id_t,
    _hints: u16,
    _args: u32,
) -> c_int {
    rc((|| {
        HANDLES.container_dir(coh)?;
        let redundancy = if cid == 0 { 1 } else { u64::from(cid >> OC_REDUN_SHIFT) };
        // SAFETY: libdaos' contract: `oid` points to a `daos_obj_id_t` the caller lets this call read and write, used
        // by nothing else during the call.
        let id = unsafe { &mut *oid };
        id.hi = (u64::from(otype) << OID_FMT_TYPE_SHIFT) | (redundancy << OID_FMT_CLASS_SHIFT) | (id.hi & 0xffff_ffff);
        Ok(())
    })())
}

/// `daos_kv_open`: opens a key-value object (its directory appears with the first put); the mode is ignored.
#[no_mangle]
pub unsafe extern "C" fn daos_kv_open(
    coh: daos_handle_t,
    oid: daos_obj_id_t,
    _mode: u32,
    oh: *mut daos_handle_t,
    ev: *mut libc::c_void,
) -> c_int {
    call(ev, DAOS_TX_NONE, || {
        let dir = objects::object_dir(&HANDLES.container_dir(coh)?, oid);
        // SAFETY: libdaos' contract: `oh` points to a `daos_handle_t` the caller lets this call write.
        unsafe { *oh = HANDLES.insert(Handle::KeyValue { dir }) };
        Ok(())
    })
}

/// `daos_kv_close`: forgets the key-value handle (`-DER_NO_HDL` if it is not open).
#[no_mangle]
pub extern "C" fn daos_kv_close(oh: daos_handle_t, _ev: *mut libc::c_void) -> c_int {
    rc(HANDLES.remove(oh))
}

/// `daos_kv_destroy`: removes the object and all its pairs; the handle stays open.
#[no_mangle]
pub extern "C" fn daos_kv_destroy(oh: daos_handle_t, th: daos_handle_t, ev: *mut libc::c_void) -> c_int {
    call(ev, th, || objects::remove_object(&HANDLES.kv_dir(oh)?))
}

/// `daos_kv_put`: sets a key's value atomically; honours `DAOS_COND_KEY_INSERT` (`-DER_EXIST` if the key has a
/// value) and `DAOS_COND_KEY_UPDATE` (`-DER_NONEXIST` if it has none).
#[no_mangle]
pub unsafe extern "C" fn daos_kv_put(
    oh: daos_handle_t,
    th: daos_handle_t,
    flags: u64,
    key: *const c_char,
    size: u64,
    buf: *const libc::c_void,
    ev: *mut libc::c_void,
) -> c_int {
    call(ev, th, || {
        let value = if size == 0 {
            &[][..]
        } else {
            // SAFETY: libdaos' contract: `buf` points to `size` readable bytes (the value), unchanged during the call.
            unsafe { std::slice::from_raw_parts(buf.cast::<u8>(), size as usize) }
        };
        // SAFETY: libdaos' contract: `key` is a NUL-terminated string valid for the call.
        objects::kv_put(&HANDLES.kv_dir(oh)?, unsafe { CStr::from_ptr(key) }.to_bytes(), value, flags)
    })
}

/// `daos_kv_get`: copies a key's value into `buf` and its size to `*size`; only the size if `buf` is null,
/// `-DER_REC2BIG` if `*size` is too small. A key without a value has size 0 (`-DER_NONEXIST` with `DAOS_COND_KEY_GET`).
#[no_mangle]
pub unsafe extern "C" fn daos_kv_get(
    oh: daos_handle_t,
    th: daos_handle_t,
    flags: u64,
    key: *const c_char,
    size: *mut u64,
    buf: *mut libc::c_void,
    ev: *mut libc::c_void,
) -> c_int {
    call(ev, th, || {
        // SAFETY: libdaos' contract: `key` is a NUL-terminated string valid for the call.
        let Some(value) = objects::kv_get(&HANDLES.kv_dir(oh)?, unsafe { CStr::from_ptr(key) }.to_bytes())? else {
            if flags & DAOS_COND_KEY_GET != 0 {
                return Err(DER_NONEXIST);
            }
            // SAFETY: libdaos' contract: `size` points to a `daos_size_t` the caller lets this call read and write.
            unsafe { *size = 0 };
            return Ok(());
        };
        // SAFETY: as above, `size` is valid for reads and writes during the call.
        let room = unsafe { *size };
        // SAFETY: as above.
        unsafe { *size = value.len() as u64 };
        if buf.is_null() {
            return Ok(());
        }
        if room < value.len() as u64 {
            return Err(DER_REC2BIG);
        }
        // SAFETY: libdaos' contract: a non-null `buf` holds `room` (the caller's `*size`) writable bytes, and
        // `value.len() <= room`; `value` is this function's own vector, so the two do not overlap.
        unsafe { std::ptr::copy_nonoverlapping(value.as_ptr(), buf.cast::<u8>(), value.len()) };
        Ok(())
    })
}

/// `daos_kv_remove`: removes a key's value; with `DAOS_COND_KEY_REMOVE`, `-DER_NONEXIST` if it has none.
#[no_mangle]
pub unsafe extern "C" fn daos_kv_remove(
    oh: daos_handle_t,
    th: daos_handle_t,
    flags: u64,
    key: *const c_char,
    ev: *mut libc::c_void,
) -> c_int {
    call(ev, th, || {
        // SAFETY: libdaos' contract: `key` is a NUL-terminated string valid for the call.
        let removed = objects::kv_remove(&HANDLES.kv_dir(oh)?, unsafe { CStr::from_ptr(key) }.to_bytes())?;
        if !removed && flags & DAOS_COND_KEY_REMOVE != 0 {
            return Err(DER_NONEXIST);
        }
        Ok(())
    })
}

/// `daos_kv_list`: lists up to `*nr` keys after the anchor's into the one buffer of `sgl`, in file-name order;
/// `-DER_KEY2BIG` with the length in `kds[0]` when the next key does not fit alone. Only one-buffer lists are emulated.
#[no_mangle]
pub unsafe extern "C" fn daos_kv_list(
    oh: daos_handle_t,
    th: daos_handle_t,
    nr: *mut u32,
    kds: *mut daos_key_desc_t,
    sgl: *mut d_sg_list_t,
    anchor: *mut daos_anchor_t,
    ev: *mut libc::c_void,
) -> c_int {
    call(ev, th, || {
        // SAFETY: libdaos' contract: `sgl` points to a scatter/gather list the caller lets this call read and write
        // (`sg_nr_out`, `iov_len`), used by nothing else during the call.
        let sgl = unsafe { &mut *sgl };
        if sgl.sg_nr != 1 {
            return Err(DER_NOSYS);
        }
        // SAFETY: libdaos' contract: `sg_iovs` points to `sg_nr` (here 1) `d_iov_t`s, writable and distinct from
        // `*sgl`.
        let iov = unsafe { &mut *sgl.sg_iovs };
        // SAFETY: libdaos' contract: `iov_buf` points to `iov_buf_len` writable bytes, distinct from every other
        // argument and used by nothing else during the call.
        let room = unsafe { std::slice::from_raw_parts_mut(iov.iov_buf.cast::<u8>(), iov.iov_buf_len) };
        // SAFETY: libdaos' contract: `nr` points to a `uint32_t` and `kds` to `*nr` writable key descriptors,
        // distinct from the other arguments.
        let kds = unsafe { std::slice::from_raw_parts_mut(kds, *nr as usize) };
        // SAFETY: libdaos' contract: `anchor` points to the caller's anchor, read and written by this call only.
        let (count, used) = objects::kv_list(&HANDLES.kv_dir(oh)?, kds, room, unsafe { &mut *anchor })?;
        // SAFETY: `nr` is valid for writes (see above).
        unsafe { *nr = count as u32 };
        iov.iov_len = used;
        sgl.sg_nr_out = 1;
        Ok(())
    })
}

/// `daos_array_create`: creates an array with its cell and chunk sizes (`-DER_EXIST` if the object exists) and
/// opens it.
#[no_mangle]
pub unsafe extern "C" fn daos_array_create(
    coh: daos_handle_t,
    oid: daos_obj_id_t,
    th: daos_handle_t,
    cell_size: u64,
    chunk_size: u64,
    oh: *mut daos_handle_t,
    ev: *mut libc::c_void,
) -> c_int {
    call(ev, th, || {
        let dir = objects::object_dir(&HANDLES.container_dir(coh)?, oid);
        objects::create_array(&dir, cell_size, chunk_size)?;
        // SAFETY: libdaos' contract: `oh` points to a `daos_handle_t` the caller lets this call write.
        unsafe { *oh = HANDLES.insert(Handle::Array { dir, cell_size }) };
        Ok(())
    })
}

/// `daos_array_open`: opens an array created by `daos_array_create` and returns its cell and chunk sizes
/// (`-DER_NONEXIST` if there is none); the mode is ignored.
#[no_mangle]
pub unsafe extern "C" fn daos_array_open(
    coh: daos_handle_t,
    oid: daos_obj_id_t,
    th: daos_handle_t,
    _mode: u32,
    cell_size: *mut u64,
    chunk_size: *mut u64,
    oh: *mut daos_handle_t,
    ev: *mut libc::c_void,
) -> c_int {
    call(ev, th, || {
        let dir = objects::object_dir(&HANDLES.container_dir(coh)?, oid);
        let (cell, chunk) = objects::array_attributes(&dir)?;
        // SAFETY: libdaos' contract: `cell_size` and `chunk_size` point to `daos_size_t`s the caller lets this call
        // write.
        unsafe { (*cell_size, *chunk_size) = (cell, chunk) };
        // SAFETY: libdaos' contract: `oh` points to a `daos_handle_t` the caller lets this call write.
        unsafe { *oh = HANDLES.insert(Handle::Array { dir, cell_size: cell }) };
        Ok(())
    })
}

/// `daos_array_open_with_attr`: opens an array whose cell size the caller supplies (`-DER_INVAL` if 0), without
/// looking at the object; the mode and chunk size are ignored.
#[no_mangle]
pub unsafe extern "C" fn daos_array_open_with_attr(
    coh: daos_handle_t,
    oid: daos_obj_id_t,
    th: daos_handle_t,
    _mode: u32,
    cell_size: u64,
    _chunk_size: u64,
    oh: *mut daos_handle_t,
    ev: *mut libc::c_void,
) -> c_int {
    call(ev, th, || {
        if cell_size == 0 {
            return Err(DER_INVAL);
        }
        let dir = objects::object_dir(&HANDLES.container_dir(coh)?, oid);
        // SAFETY: libdaos' contract: `oh` points to a `daos_handle_t` the caller lets this call write.
        unsafe { *oh = HANDLES.insert(Handle::Array { dir, cell_size }) };
        Ok(())
    })
}

/// `daos_array_close`: forgets the array handle (`-DER_NO_HDL` if it is not open).
#[no_mangle]
pub extern "C" fn daos_array_close(oh: daos_handle_t, _ev: *mut libc::c_void) -> c_int {
    rc(HANDLES.remove(oh))
}

/// The byte ranges of an array I/O descriptor.
///
/// # Safety
///
/// Unless `iod.arr_nr` is 0, `iod.arr_rgs` points to `iod.arr_nr` ranges, valid and unchanged during the call.
unsafe fn byte_ranges(iod: &daos_array_iod_t, cell_size: u64) -> Vec<(u64, usize)> {
    let ranges = if iod.arr_nr == 0 {
        &[][..]
    } else {
        // SAFETY: `arr_nr` is not 0, and the caller guarantees `arr_rgs` points to `arr_nr` valid ranges.
        unsafe { std::slice::from_raw_parts(iod.arr_rgs, iod.arr_nr as usize) }
    };
    ranges.iter().map(|r| (r.rg_idx * cell_size, (r.rg_len * cell_size) as usize)).collect()
}

/// The buffers of a scatter/gather list, `iov_len` bytes each.
///
/// # Safety
///
/// Unless `sgl.sg_nr` is 0, `sgl.sg_iovs` points to `sgl.sg_nr` `d_iov_t`s, each pointing to `iov_len` bytes that
/// are writable, distinct from each other and used by nothing else for `'a`.
unsafe fn buffers<'a>(sgl: &d_sg_list_t) -> Vec<&'a mut [u8]> {
    let iovs = if sgl.sg_nr == 0 {
        &[][..]
    } else {
        // SAFETY: `sg_nr` is not 0, and the caller guarantees `sg_iovs` points to `sg_nr` valid `d_iov_t`s.
        unsafe { std::slice::from_raw_parts(sgl.sg_iovs, sgl.sg_nr as usize) }
    };
    iovs.iter()
        .map(|v| {
            // SAFETY: the caller guarantees each `iov_buf` holds `iov_len` bytes, exclusively this slice's for `'a`.
            unsafe { std::slice::from_raw_parts_mut(v.iov_buf.cast::<u8>(), v.iov_len) }
        })
        .collect()
}

/// `daos_array_write`: writes the buffers of `sgl` to the ranges of `iod` (whose lengths must add up to theirs).
#[no_mangle]
pub unsafe extern "C" fn daos_array_write(
    oh: daos_handle_t,
    th: daos_handle_t,
    iod: *mut daos_array_iod_t,
    sgl: *mut d_sg_list_t,
    ev: *mut libc::c_void,
) -> c_int {
    call(ev, th, || {
        let (dir, cell_size) = HANDLES.array(oh)?;
        // SAFETY: libdaos' contract: `sgl` points to a list of `sg_nr` buffers of `iov_len` bytes each, valid during the
        // call. A write lends them for reading only, yet `buffers` makes `&mut` slices: they are only read (copied) here.
        let data: Vec<u8> = unsafe { buffers(&*sgl) }.concat();
        // SAFETY: libdaos' contract: `iod` points to a descriptor of `arr_nr` ranges, valid during the call.
        objects::array_write(&dir, &unsafe { byte_ranges(&*iod, cell_size) }, &data)
    })
}

/// `daos_array_read`: fills the buffers of `sgl` from the ranges of `iod`; bytes past the end read as zeros and
/// are counted in `arr_nr_short_read`.
#[no_mangle]
pub unsafe extern "C" fn daos_array_read(
    oh: daos_handle_t,
    th: daos_handle_t,
    iod: *mut daos_array_iod_t,
    sgl: *mut d_sg_list_t,
    ev: *mut libc::c_void,
) -> c_int {
    call(ev, th, || {
        let (dir, cell_size) = HANDLES.array(oh)?;
        // SAFETY: libdaos' contract: `iod` points to a descriptor the caller lets this call read and write
        // (`arr_nr_read`, `arr_nr_short_read`), used by nothing else during the call.
        let iod = unsafe { &mut *iod };
        // SAFETY: libdaos' contract: `arr_rgs` points to `arr_nr` ranges, valid during the call.
        let ranges = unsafe { byte_ranges(iod, cell_size) };
        let wanted: usize = ranges.iter().map(|r| r.1).sum();
        let mut data = vec![0u8; wanted];
        let read = objects::array_read(&dir, &ranges, &mut data)?;
        iod.arr_nr_read = read as u64 / cell_size;
        iod.arr_nr_short_read = ((wanted - read) as u64).div_ceil(cell_size);
        let mut rest = &data[..];
        // SAFETY: libdaos' contract: `sgl` points to a list of `sg_nr` buffers of `iov_len` writable bytes each,
        // distinct and used by nothing else during the call.
        for buffer in unsafe { buffers(&*sgl) } {
            let n = buffer.len().min(rest.len());
            buffer[..n].copy_from_slice(&rest[..n]);
            rest = &rest[n..];
        }
        Ok(())
    })
}

/// `daos_array_get_size`: the array's size in cells (0 if it was never written).
#[no_mangle]
pub unsafe extern "C" fn daos_array_get_size(oh: daos_handle_t, th: daos_handle_t, size: *mut u64, ev: *mut libc::c_void) -> c_int {
    call(ev, th, || {
        let (dir, cell_size) = HANDLES.array(oh)?;
        // SAFETY: libdaos' contract: `size` points to a `daos_size_t` the caller lets this call write.
        unsafe { *size = objects::array_bytes(&dir)? / cell_size };
        Ok(())
    })
}

/// `daos_array_destroy`: removes the array and its bytes; the handle stays open.
#[no_mangle]
pub extern "C" fn daos_array_destroy(oh: daos_handle_t, th: daos_handle_t, ev: *mut libc::c_void) -> c_int {
    call(ev, th, || objects::remove_object(&HANDLES.array(oh)?.0))
}
