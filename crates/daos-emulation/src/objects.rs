//! Pools, containers, key-values and arrays as files, safe across processes: every change
//! is a rename or link(2) of a complete file, or a write at an offset (arrays); OIDs are
//! handed out under flock(2).

use std::fs::{self, File, OpenOptions};
use std::io::Read;
use std::os::unix::fs::FileExt;
use std::os::unix::io::AsRawFd;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use fieldstore_daos_sys::errno::*;
use fieldstore_daos_sys::*;
use md5::{Digest, Md5};

use crate::io_error;

type Result<T> = std::result::Result<T, i32>;

/// A name for a temporary file in `dir`, unique across processes (listings skip `.` names).
fn temporary(dir: &Path) -> PathBuf {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    dir.join(format!(".tmp.{}.{}", std::process::id(), COUNTER.fetch_add(1, Ordering::Relaxed)))
}

/// Writes `bytes` to a new temporary file in `dir` and returns its path.
fn write_temporary(dir: &Path, bytes: &[u8]) -> Result<PathBuf> {
    let path = temporary(dir);
    fs::write(&path, bytes).map_err(io_error)?;
    Ok(path)
}

/// Moves a complete temporary file to `target`: replacing what is there, or, if `exclusive`,
/// failing with `DER_EXIST` when `target` exists.
fn publish(temporary: &Path, target: &Path, exclusive: bool) -> Result<()> {
    let result =
        if exclusive { fs::hard_link(temporary, target).and_then(|()| fs::remove_file(temporary)) } else { fs::rename(temporary, target) };
    if result.is_err() {
        let _ = fs::remove_file(temporary);
    }
    result.map_err(io_error)
}

fn new_uuid() -> [u8; 16] {
    let mut id = [0u8; 16];
    File::open("/dev/urandom").and_then(|mut f| f.read_exact(&mut id)).expect("/dev/urandom");
    id
}

fn uuid_text(id: &[u8; 16]) -> String {
    let hex: String = id.iter().map(|b| format!("{b:02x}")).collect();
    format!("{}-{}-{}-{}-{}", &hex[..8], &hex[8..12], &hex[12..16], &hex[16..20], &hex[20..])
}

/// Creates a container and its label; `DER_EXIST` if the label is taken (one racer wins).
pub fn create_container(pool: &Path, label: &str) -> Result<[u8; 16]> {
    let id = new_uuid();
    let dir = pool.join("containers").join(uuid_text(&id));
    fs::create_dir_all(&dir).map_err(io_error)?;
    let labels = pool.join("labels");
    fs::create_dir_all(&labels).map_err(io_error)?;
    let claim = write_temporary(&labels, uuid_text(&id).as_bytes())?;
    if let Err(e) = publish(&claim, &labels.join(label), true) {
        let _ = fs::remove_dir_all(&dir);
        return Err(e);
    }
    Ok(id)
}

/// The directory of a container named by label or UUID.
pub fn container_dir(pool: &Path, name: &str) -> Result<PathBuf> {
    if !label_is_valid(name) {
        return Err(DER_INVAL);
    }
    let uuid = match fs::read_to_string(pool.join("labels").join(name)) {
        Ok(uuid) => uuid,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => name.to_string(),
        Err(e) => return Err(io_error(e)),
    };
    let dir = pool.join("containers").join(uuid.trim());
    if dir.is_dir() {
        Ok(dir)
    } else {
        Err(DER_NONEXIST)
    }
}

/// Removes the label first (the container is then gone for everyone), then its objects.
pub fn destroy_container(pool: &Path, name: &str) -> Result<()> {
    let dir = container_dir(pool, name)?;
    match fs::remove_file(pool.join("labels").join(name)) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(io_error(e)),
        _ => {}
    }
    let doomed = temporary(&pool.join("containers"));
    fs::rename(&dir, &doomed).map_err(io_error)?;
    fs::remove_dir_all(&doomed).map_err(io_error)
}

/// Reserves `count` OIDs of a container; returns the first.
pub fn alloc_oids(container: &Path, count: u64) -> Result<u64> {
    let mut file = OpenOptions::new().read(true).write(true).create(true).truncate(false).open(container.join("oids")).map_err(io_error)?;
    // SAFETY: flock on a descriptor this function owns; released when it is closed.
    if unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX) } != 0 {
        return Err(io_error(std::io::Error::last_os_error()));
    }
    let mut text = String::new();
    file.read_to_string(&mut text).map_err(io_error)?;
    // OID 0 is reserved for well-known objects (root and dataset KVs).
    let first = text.trim().parse::<u64>().unwrap_or(1);
    let next = first.checked_add(count).ok_or(DER_NOSPACE)?;
    file.write_all_at(format!("{next:020}").as_bytes(), 0).map_err(io_error)?;
    Ok(first)
}

pub fn object_dir(container: &Path, oid: daos_obj_id_t) -> PathBuf {
    container.join(format!("{:016x}.{:016x}", oid.hi, oid.lo))
}

/// Creates an object's directory on its first write; `DER_NONEXIST` once its container is
/// destroyed (a handle opened before does not bring it back).
fn ensure_object(dir: &Path) -> Result<()> {
    match fs::create_dir(dir) {
        Err(e) if e.kind() != std::io::ErrorKind::AlreadyExists => Err(io_error(e)),
        _ => Ok(()),
    }
}

/// An object never written reads as empty, but not in a destroyed container.
fn check_container(dir: &Path) -> Result<()> {
    match dir.parent() {
        Some(container) if container.is_dir() => Ok(()),
        _ => Err(DER_NONEXIST),
    }
}

pub fn remove_object(dir: &Path) -> Result<()> {
    match fs::remove_dir_all(dir) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(io_error(e)),
        _ => Ok(()),
    }
}

/// The file name of a key: its hex form when short (so names sort like keys), otherwise `~`
/// and its MD5 (the key itself is in the file). Either way it fits a listing anchor.
fn key_file(key: &[u8]) -> String {
    if key.len() <= 48 {
        key.iter().map(|b| format!("{b:02x}")).collect()
    } else {
        let digest: String = Md5::digest(key).iter().map(|b| format!("{b:02x}")).collect();
        format!("~{digest}")
    }
}

/// A pair's file: key length (u32 LE), key, value.
fn read_pair(path: &Path) -> Result<Option<(Vec<u8>, Vec<u8>)>> {
    let bytes = match fs::read(path) {
        Ok(bytes) => bytes,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(io_error(e)),
    };
    let length = u32::from_le_bytes(bytes.get(..4).ok_or(DER_IO)?.try_into().unwrap()) as usize;
    let key = bytes.get(4..4 + length).ok_or(DER_IO)?.to_vec();
    Ok(Some((key, bytes[4 + length..].to_vec())))
}

pub fn kv_put(dir: &Path, key: &[u8], value: &[u8], flags: u64) -> Result<()> {
    if key.is_empty() {
        return Err(DER_INVAL);
    }
    ensure_object(dir)?;
    let target = dir.join(key_file(key));
    if flags & DAOS_COND_KEY_UPDATE != 0 && !target.exists() {
        return Err(DER_NONEXIST);
    }
    let mut bytes = (key.len() as u32).to_le_bytes().to_vec();
    bytes.extend_from_slice(key);
    bytes.extend_from_slice(value);
    let pair = write_temporary(dir, &bytes)?;
    publish(&pair, &target, flags & DAOS_COND_KEY_INSERT != 0)
}

pub fn kv_get(dir: &Path, key: &[u8]) -> Result<Option<Vec<u8>>> {
    check_container(dir)?;
    Ok(read_pair(&dir.join(key_file(key)))?.map(|(_, value)| value))
}

/// Removes a pair; false if there was none.
pub fn kv_remove(dir: &Path, key: &[u8]) -> Result<bool> {
    match fs::remove_file(dir.join(key_file(key))) {
        Ok(()) => Ok(true),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(false),
        Err(e) => Err(io_error(e)),
    }
}

/// Lists keys after the anchor's into `room`, at most `kds.len()`; returns how many and the
/// bytes used. A key that does not fit even alone gives `DER_KEY2BIG` with its length in
/// `kds[0]`, as DAOS does.
pub fn kv_list(dir: &Path, kds: &mut [daos_key_desc_t], room: &mut [u8], anchor: &mut daos_anchor_t) -> Result<(usize, usize)> {
    let after = match anchor.da_type {
        DAOS_ANCHOR_TYPE_EOF => return Ok((0, 0)),
        DAOS_ANCHOR_TYPE_KEY => {
            let end = anchor.da_buf.iter().position(|&b| b == 0).unwrap_or(DAOS_ANCHOR_BUF_MAX);
            String::from_utf8_lossy(&anchor.da_buf[..end]).into_owned()
        }
        _ => String::new(),
    };
    let mut names: Vec<String> = match fs::read_dir(dir) {
        Ok(entries) => {
            entries.filter_map(|e| e.ok()?.file_name().into_string().ok()).filter(|n| !n.starts_with('.') && *n > after).collect()
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            check_container(dir)?;
            Vec::new()
        }
        Err(e) => return Err(io_error(e)),
    };
    names.sort();
    let (mut count, mut used, mut last) = (0, 0, None);
    for name in &names {
        if count == kds.len() {
            break;
        }
        // A pair removed since the directory was read is skipped.
        let Some((key, _)) = read_pair(&dir.join(name))? else { continue };
        if used + key.len() > room.len() {
            if count == 0 {
                kds[0].kd_key_len = key.len() as u64;
                return Err(DER_KEY2BIG);
            }
            break;
        }
        room[used..used + key.len()].copy_from_slice(&key);
        kds[count] = daos_key_desc_t { kd_key_len: key.len() as u64, kd_val_type: 0 };
        (count, used, last) = (count + 1, used + key.len(), Some(name));
    }
    match last {
        Some(name) if names.last() != Some(name) => {
            anchor.da_type = DAOS_ANCHOR_TYPE_KEY;
            anchor.da_buf = [0; DAOS_ANCHOR_BUF_MAX];
            anchor.da_buf[..name.len()].copy_from_slice(name.as_bytes());
        }
        _ => anchor.da_type = DAOS_ANCHOR_TYPE_EOF,
    }
    Ok((count, used))
}

/// `daos_array_create`: the object directory (created once: `DER_EXIST` after), then the
/// attributes that make it an array.
pub fn create_array(dir: &Path, cell_size: u64, chunk_size: u64) -> Result<()> {
    if cell_size == 0 {
        return Err(DER_INVAL);
    }
    fs::create_dir(dir).map_err(io_error)?;
    let attributes = write_temporary(dir, format!("{cell_size} {chunk_size}").as_bytes())?;
    publish(&attributes, &dir.join("attr"), true)
}

pub fn array_attributes(dir: &Path) -> Result<(u64, u64)> {
    let text = fs::read_to_string(dir.join("attr")).map_err(io_error)?;
    let mut parts = text.split(' ').map(str::parse::<u64>);
    match (parts.next(), parts.next()) {
        (Some(Ok(cell)), Some(Ok(chunk))) => Ok((cell, chunk)),
        _ => Err(DER_IO),
    }
}

pub fn array_write(dir: &Path, ranges: &[(u64, usize)], mut data: &[u8]) -> Result<()> {
    if ranges.iter().map(|r| r.1).sum::<usize>() != data.len() {
        return Err(DER_INVAL);
    }
    ensure_object(dir)?;
    let file = OpenOptions::new().write(true).create(true).truncate(false).open(dir.join("data")).map_err(io_error)?;
    for &(offset, length) in ranges {
        file.write_all_at(&data[..length], offset).map_err(io_error)?;
        data = &data[length..];
    }
    Ok(())
}

/// Fills `data` from the ranges; returns the bytes found (the rest reads as zeros).
pub fn array_read(dir: &Path, ranges: &[(u64, usize)], mut data: &mut [u8]) -> Result<usize> {
    let file = match File::open(dir.join("data")) {
        Ok(file) => file,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return check_container(dir).map(|()| 0),
        Err(e) => return Err(io_error(e)),
    };
    let mut found = 0;
    for &(offset, length) in ranges {
        let (range, rest) = std::mem::take(&mut data).split_at_mut(length);
        let mut done = 0;
        while done < length {
            match file.read_at(&mut range[done..], offset + done as u64).map_err(io_error)? {
                0 => break,
                n => done += n,
            }
        }
        found += done;
        data = rest;
    }
    Ok(found)
}

pub fn array_bytes(dir: &Path) -> Result<u64> {
    match fs::metadata(dir.join("data")) {
        Ok(m) => Ok(m.len()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(0),
        Err(e) => Err(io_error(e)),
    }
}
