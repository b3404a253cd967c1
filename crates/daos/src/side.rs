//! Side objects ([`SideObjects`]) on DAOS: the values of one key-value object in the data
//! set's container, `NAME` its key, each put in one update, so visible whole or not at all.
//! Its object id (`hi` = 1) is one the store's allocated ids (`hi` = 0) never take. The wipe
//! destroys the container, and with it the side objects.

use fieldstore_core::backend::{check_side_object_name, SideObjects};
use fieldstore_core::error::{Error, ErrorKind, Result};
use fieldstore_core::Key;

use crate::naming::dataset_label;
use crate::store::DaosStore;
use crate::{KeyValue, ObjectType};

impl DaosStore {
    /// Runs `action` on the data set's side key-value object; `None` where its container is
    /// missing (and not `create`).
    fn with_side_objects<T>(&self, dataset: &Key, create: bool, mut action: impl FnMut(&KeyValue) -> Result<T>) -> Result<Option<T>> {
        let (containers, root, class) = self.layout();
        containers.with(&dataset_label(root, dataset), create, |container| {
            action(&container.kv(container.object_id(0, 1, ObjectType::KeyValue, class)?)?)
        })
    }
}

impl SideObjects for DaosStore {
    fn put_side_object(&self, dataset: &Key, name: &str, bytes: &[u8]) -> Result<()> {
        check_side_object_name(name)?;
        // Never a container of its own: one wiped meanwhile stays wiped.
        self.with_side_objects(dataset, false, |kv| kv.put(name, bytes))?
            .ok_or_else(|| Error::new(ErrorKind::NotFound, format!("data set {dataset} has no container: nothing to keep beside")))
    }

    fn side_object_names(&self, dataset: &Key) -> Result<Vec<String>> {
        let names = self.with_side_objects(dataset, false, KeyValue::keys)?.unwrap_or_default();
        Ok(names.into_iter().filter(|n| check_side_object_name(n).is_ok()).collect())
    }

    fn get_side_object(&self, dataset: &Key, name: &str) -> Result<Option<Vec<u8>>> {
        check_side_object_name(name)?;
        Ok(self.with_side_objects(dataset, false, |kv| kv.get(name))?.flatten())
    }
}
