//! The object API of the DAOS and Ceph designs (docs/daos.md, docs/rados.md, docs/benchmarks.md): a pool holds
//! containers; a container holds key-value objects and arrays. The field-io and ior
//! benchmarks run on it, so they run on every backend that implements these traits.
//!
//! [`posix::PosixPool`] implements it on a file system the way the published Lustre
//! comparison did: pool = directory, container = sub-directory, key-value = directory with one
//! file per key, array = file.

pub mod conformance;
pub mod posix;

use fieldstore_core::Result;

/// A pool of containers.
pub trait Pool: Send + Sync {
    /// Opens a container, creating it if `create` (creation races converge on one container).
    fn container(&self, name: &str, create: bool) -> Result<Box<dyn Container>>;
    /// Removes a container and everything in it.
    fn remove_container(&self, name: &str) -> Result<()>;
}

/// A container of key-values and arrays.
pub trait Container: Send {
    /// Opens the key-value object `name`, which need not have been created.
    fn kv(&self, name: &str) -> Result<Box<dyn KeyValue>>;
    /// Opens an array, creating it if `create`.
    fn array(&self, name: &str, create: bool) -> Result<Box<dyn Array>>;
}

/// A key-value object. A `put` is visible to every reader once it returns.
pub trait KeyValue: Send {
    /// Sets `key` to `value`, replacing any earlier value.
    fn put(&mut self, key: &str, value: &[u8]) -> Result<()>;
    /// The value of `key`; `None` if it has none.
    fn get(&self, key: &str) -> Result<Option<Vec<u8>>>;
    /// Every key, in no particular order.
    fn keys(&self) -> Result<Vec<String>>;
}

/// A byte array. Writes are persistent and visible when they return.
pub trait Array: Send {
    /// Writes `data` at `offset`, growing the array as needed.
    fn write(&mut self, offset: u64, data: &[u8]) -> Result<()>;
    /// Fills `buf` from `offset`; reading beyond the end is an error.
    fn read(&self, offset: u64, buf: &mut [u8]) -> Result<()>;
    /// The array's size in bytes.
    fn size(&self) -> Result<u64>;
}

/// Escapes a name for use as one file name: bytes outside `[A-Za-z0-9_-]` and a leading
/// `.` become `%XX`, so no name can be `.`, `..`, hidden or contain `/`.
pub fn escape_name(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    for (i, b) in name.bytes().enumerate() {
        if b.is_ascii_alphanumeric() || b == b'_' || b == b'-' || (b == b'.' && i > 0) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    if out.is_empty() {
        out.push_str("%00");
    }
    out
}
