//! Side objects ([`SideObjects`]) on RADOS: objects `NAME` in a namespace of their own beside
//! the data set's (`NAMESPACE/side`; a data set's key has no `/`), each written by one
//! `write_full`, so visible whole or not at all, in erasure-coded pools too (no omap). Listing
//! them lists that namespace, which librados does by going through the pool's placement
//! groups: readers list once per data set and keep what they read. A wipe removes them.

use fieldstore_core::backend::{check_side_object_name, SideObjects};
use fieldstore_core::error::{Error, ErrorKind, Result};
use fieldstore_core::Key;

use crate::naming::dataset_namespace;
use crate::store::RadosStore;

/// The largest side object read (1 GiB): what one holds is small, derived from its fields.
const LARGEST: usize = 1 << 30;

/// The namespace of a data set's side objects.
fn side_namespace(prefix: &str, dataset: &Key) -> String {
    format!("{}/side", dataset_namespace(prefix, dataset))
}

impl SideObjects for RadosStore {
    fn put_side_object(&self, dataset: &Key, name: &str, bytes: &[u8]) -> Result<()> {
        check_side_object_name(name)?;
        self.namespaces().get(&side_namespace(self.prefix(), dataset))?.write_full(name, bytes)
    }

    fn side_object_names(&self, dataset: &Key) -> Result<Vec<String>> {
        let names = self.namespaces().get(&side_namespace(self.prefix(), dataset))?.object_names()?;
        Ok(names.into_iter().filter(|n| check_side_object_name(n).is_ok()).collect())
    }

    fn get_side_object(&self, dataset: &Key, name: &str) -> Result<Option<Vec<u8>>> {
        check_side_object_name(name)?;
        let io = self.namespaces().get(&side_namespace(self.prefix(), dataset))?;
        let Some(size) = io.size(name)? else { return Ok(None) };
        let size = usize::try_from(size)
            .ok()
            .filter(|s| *s <= LARGEST)
            .ok_or_else(|| Error::corrupt("side object", io.describe(name), format!("{size} bytes: side objects are at most {LARGEST}")))?;
        let mut bytes = vec![0; size];
        match io.read_exact(name, 0, &mut bytes) {
            // Removed (a wipe) or replaced between its size and its read.
            Err(e) if e.kind() == ErrorKind::NotFound => Ok(None),
            other => other.map(|()| Some(bytes)),
        }
    }
}

/// Removes a data set's side objects (its wipe).
pub(crate) fn remove_side_objects(store: &RadosStore, dataset: &Key) -> Result<()> {
    let io = store.namespaces().get(&side_namespace(store.prefix(), dataset))?;
    for name in io.object_names()? {
        io.remove(&name)?;
    }
    Ok(())
}
