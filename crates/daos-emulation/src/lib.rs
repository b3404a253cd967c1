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

unsafe fn text<'a>(s: *const c_char) -> Result<&'a str, i32> {
    if s.is_null() {
        return Err(DER_INVAL);
    }
    CStr::from_ptr(s).to_str().map_err(|_| DER_INVAL)
}

/// Runs a call's body: only blocking calls (no event) outside transactions are emulated.
fn call(ev: *mut libc::c_void, th: daos_handle_t, body: impl FnOnce() -> Rc) -> c_int {
    if !ev.is_null() || th != DAOS_TX_NONE {
        return -DER_NOSYS;
    }
    rc(body())
}

#[no_mangle]
pub extern "C" fn daos_init() -> c_int {
    let Some(root) = std::env::var_os("DAOS_EMULATION_ROOT") else { return -DER_INVAL };
    *ROOT.lock().unwrap() = Some(PathBuf::from(root));
    0
}

#[no_mangle]
pub extern "C" fn daos_fini() -> c_int {
    0
}

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
        let label = text(pool)?;
        if !label_is_valid(label) {
            return Err(DER_INVAL);
        }
        let dir = root.join(label);
        if !dir.is_dir() {
            return Err(DER_NONEXIST);
        }
        *poh = HANDLES.insert(Handle::Pool { dir });
        Ok(())
    })
}

#[no_mangle]
pub extern "C" fn daos_pool_disconnect(poh: daos_handle_t, _ev: *mut libc::c_void) -> c_int {
    rc(HANDLES.remove(poh))
}

#[no_mangle]
pub unsafe extern "C" fn daos_cont_create_with_label(
    poh: daos_handle_t,
    label: *const c_char,
    _prop: *mut libc::c_void,
    uuid: *mut [u8; 16],
    ev: *mut libc::c_void,
) -> c_int {
    call(ev, DAOS_TX_NONE, || {
        let label = text(label)?;
        if !label_is_valid(label) {
            return Err(DER_INVAL);
        }
        let id = objects::create_container(&HANDLES.pool_dir(poh)?, label)?;
        if !uuid.is_null() {
            *uuid = id;
        }
        Ok(())
    })
}

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
        let dir = objects::container_dir(&HANDLES.pool_dir(poh)?, text(cont)?)?;
        *coh = HANDLES.insert(Handle::Container { dir });
        Ok(())
    })
}

#[no_mangle]
pub extern "C" fn daos_cont_close(coh: daos_handle_t, _ev: *mut libc::c_void) -> c_int {
    rc(HANDLES.remove(coh))
}

#[no_mangle]
pub unsafe extern "C" fn daos_cont_destroy2(poh: daos_handle_t, cont: *const c_char, _force: c_int, ev: *mut libc::c_void) -> c_int {
    call(ev, DAOS_TX_NONE, || objects::destroy_container(&HANDLES.pool_dir(poh)?, text(cont)?))
}

#[no_mangle]
pub unsafe extern "C" fn daos_cont_alloc_oids(coh: daos_handle_t, num_oids: u64, oid: *mut u64, ev: *mut libc::c_void) -> c_int {
    call(ev, DAOS_TX_NONE, || {
        *oid = objects::alloc_oids(&HANDLES.container_dir(coh)?, num_oids)?;
        Ok(())
    })
}

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
        let id = &mut *oid;
        id.hi = (u64::from(otype) << OID_FMT_TYPE_SHIFT) | (redundancy << OID_FMT_CLASS_SHIFT) | (id.hi & 0xffff_ffff);
        Ok(())
    })())
}

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
        *oh = HANDLES.insert(Handle::KeyValue { dir });
        Ok(())
    })
}

#[no_mangle]
pub extern "C" fn daos_kv_close(oh: daos_handle_t, _ev: *mut libc::c_void) -> c_int {
    rc(HANDLES.remove(oh))
}

#[no_mangle]
pub extern "C" fn daos_kv_destroy(oh: daos_handle_t, th: daos_handle_t, ev: *mut libc::c_void) -> c_int {
    call(ev, th, || objects::remove_object(&HANDLES.kv_dir(oh)?))
}

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
        let value = if size == 0 { &[][..] } else { std::slice::from_raw_parts(buf.cast::<u8>(), size as usize) };
        objects::kv_put(&HANDLES.kv_dir(oh)?, CStr::from_ptr(key).to_bytes(), value, flags)
    })
}

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
        let Some(value) = objects::kv_get(&HANDLES.kv_dir(oh)?, CStr::from_ptr(key).to_bytes())? else {
            if flags & DAOS_COND_KEY_GET != 0 {
                return Err(DER_NONEXIST);
            }
            *size = 0;
            return Ok(());
        };
        let room = *size;
        *size = value.len() as u64;
        if buf.is_null() {
            return Ok(());
        }
        if room < value.len() as u64 {
            return Err(DER_REC2BIG);
        }
        std::ptr::copy_nonoverlapping(value.as_ptr(), buf.cast::<u8>(), value.len());
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn daos_kv_remove(
    oh: daos_handle_t,
    th: daos_handle_t,
    flags: u64,
    key: *const c_char,
    ev: *mut libc::c_void,
) -> c_int {
    call(ev, th, || {
        let removed = objects::kv_remove(&HANDLES.kv_dir(oh)?, CStr::from_ptr(key).to_bytes())?;
        if !removed && flags & DAOS_COND_KEY_REMOVE != 0 {
            return Err(DER_NONEXIST);
        }
        Ok(())
    })
}

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
        let sgl = &mut *sgl;
        if sgl.sg_nr != 1 {
            return Err(DER_NOSYS);
        }
        let iov = &mut *sgl.sg_iovs;
        let room = std::slice::from_raw_parts_mut(iov.iov_buf.cast::<u8>(), iov.iov_buf_len);
        let kds = std::slice::from_raw_parts_mut(kds, *nr as usize);
        let (count, used) = objects::kv_list(&HANDLES.kv_dir(oh)?, kds, room, &mut *anchor)?;
        *nr = count as u32;
        iov.iov_len = used;
        sgl.sg_nr_out = 1;
        Ok(())
    })
}

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
        *oh = HANDLES.insert(Handle::Array { dir, cell_size });
        Ok(())
    })
}

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
        (*cell_size, *chunk_size) = (cell, chunk);
        *oh = HANDLES.insert(Handle::Array { dir, cell_size: cell });
        Ok(())
    })
}

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
        *oh = HANDLES.insert(Handle::Array { dir, cell_size });
        Ok(())
    })
}

#[no_mangle]
pub extern "C" fn daos_array_close(oh: daos_handle_t, _ev: *mut libc::c_void) -> c_int {
    rc(HANDLES.remove(oh))
}

/// The byte ranges of an array I/O descriptor.
unsafe fn byte_ranges(iod: &daos_array_iod_t, cell_size: u64) -> Vec<(u64, usize)> {
    let ranges = if iod.arr_nr == 0 { &[][..] } else { std::slice::from_raw_parts(iod.arr_rgs, iod.arr_nr as usize) };
    ranges.iter().map(|r| (r.rg_idx * cell_size, (r.rg_len * cell_size) as usize)).collect()
}

/// The buffers of a scatter/gather list, `iov_len` bytes each.
unsafe fn buffers<'a>(sgl: &d_sg_list_t) -> Vec<&'a mut [u8]> {
    let iovs = if sgl.sg_nr == 0 { &[][..] } else { std::slice::from_raw_parts(sgl.sg_iovs, sgl.sg_nr as usize) };
    iovs.iter().map(|v| std::slice::from_raw_parts_mut(v.iov_buf.cast::<u8>(), v.iov_len)).collect()
}

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
        let data: Vec<u8> = buffers(&*sgl).concat();
        objects::array_write(&dir, &byte_ranges(&*iod, cell_size), &data)
    })
}

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
        let iod = &mut *iod;
        let ranges = byte_ranges(iod, cell_size);
        let wanted: usize = ranges.iter().map(|r| r.1).sum();
        let mut data = vec![0u8; wanted];
        let read = objects::array_read(&dir, &ranges, &mut data)?;
        iod.arr_nr_read = read as u64 / cell_size;
        iod.arr_nr_short_read = ((wanted - read) as u64).div_ceil(cell_size);
        let mut rest = &data[..];
        for buffer in buffers(&*sgl) {
            let n = buffer.len().min(rest.len());
            buffer[..n].copy_from_slice(&rest[..n]);
            rest = &rest[n..];
        }
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn daos_array_get_size(oh: daos_handle_t, th: daos_handle_t, size: *mut u64, ev: *mut libc::c_void) -> c_int {
    call(ev, th, || {
        let (dir, cell_size) = HANDLES.array(oh)?;
        *size = objects::array_bytes(&dir)? / cell_size;
        Ok(())
    })
}

#[no_mangle]
pub extern "C" fn daos_array_destroy(oh: daos_handle_t, th: daos_handle_t, ev: *mut libc::c_void) -> c_int {
    call(ev, th, || objects::remove_object(&HANDLES.array(oh)?.0))
}
