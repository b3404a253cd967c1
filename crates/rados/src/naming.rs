//! Names of namespaces and objects. A dataset's namespace is its key as text: the core
//! validated every value (no `/`, `,`, `=`, whitespace or control characters), so it cannot
//! be confused with another dataset's or break a location apart. Objects that writers create
//! are named by [`fieldstore_core::unique::unique_object_name`].

use fieldstore_core::error::{Error, ErrorKind, Result};
use fieldstore_core::Key;

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
