//! The object API of the DAOS and Ceph designs (docs/daos.md, docs/rados.md, docs/benchmarks.md): a pool holds
//! containers; a container holds key-value objects and arrays. The field-io and ior
//! benchmarks run on it, so they run on every backend that implements these traits. The
//! traits are core's ([`fieldstore_core::objects`], re-exported here), so that a backend's
//! factory opens its pool by its `type:` name as it opens its catalogue and store.
//!
//! [`posix::PosixPool`] implements it on a file system the way the published Lustre
//! comparison did: pool = directory, container = sub-directory, key-value = directory with one
//! file per key, array = file.

pub mod conformance;
pub mod posix;

pub use fieldstore_core::objects::{Array, Container, KeyValue, Pool};

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
