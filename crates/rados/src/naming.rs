//! Names of namespaces and objects. A dataset's namespace is its key as text: the core
//! validated every value (no `/`, `,`, `=`, whitespace or control characters), so it cannot
//! be confused with another dataset's or break a location apart. Objects that writers create
//! are named by the MD5 of a unique string (32 hex digits).

use fieldstore_core::error::{Error, ErrorKind, Result};
use fieldstore_core::Key;
use md5::{Digest, Md5};

/// The namespace holding a dataset's objects, in the catalogue pool and in the store pool:
/// the instance's prefix (see [`check_prefix`]), then the dataset key.
pub fn dataset_namespace(prefix: &str, dataset: &Key) -> String {
    format!("{prefix}{dataset}")
}

/// A prefix lets several fieldstore instances share a pool: each sees only its own datasets.
/// Printable ASCII without spaces, at most 64 bytes.
pub fn check_prefix(prefix: &str) -> Result<()> {
    if prefix.len() > 64 || !prefix.bytes().all(|b| b.is_ascii_graphic()) {
        return Err(Error::new(
            ErrorKind::BadConfig,
            format!("RADOS namespace prefix {prefix:?}: use at most 64 printable characters, no spaces"),
        ));
    }
    Ok(())
}

/// An object name from a unique string.
pub fn unique_object_name(unique: &str) -> String {
    Md5::digest(unique.as_bytes()).iter().map(|b| format!("{b:02x}")).collect()
}

/// Whether `name` is one [`unique_object_name`] makes.
pub fn is_object_name(name: &str) -> bool {
    name.len() == 32 && name.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}
