//! Side objects ([`SideObjects`]) on S3: objects `.../side/NAME` in the data set's place
//! (beside its `fields/` and `packs/`), each written by one PUT, so visible whole or not at
//! all. A wipe removes them with the data set.

use bytes::Bytes;
use object_store::{ObjectStoreExt, PutPayload};

use fieldstore_core::backend::{check_side_object_name, SideObjects};
use fieldstore_core::error::{Error, ErrorKind, Result};
use fieldstore_core::Key;

use crate::store::S3Store;

/// The folder of a data set's side objects in its place.
const SIDE: &str = "side";

impl SideObjects for S3Store {
    fn put_side_object(&self, dataset: &Key, name: &str, bytes: &[u8]) -> Result<()> {
        check_side_object_name(name)?;
        let missing = || Error::new(ErrorKind::NotFound, format!("no place for data set {dataset}'s side objects"));
        let place = self.buckets().place(dataset, true)?.ok_or_else(missing)?;
        let (store, path) = (place.client.store().clone(), place.path(&[SIDE, name]));
        let payload = PutPayload::from(Bytes::copy_from_slice(bytes));
        place.client.run(async move { store.put(&path, payload).await.map(drop) })
    }

    fn side_object_names(&self, dataset: &Key) -> Result<Vec<String>> {
        let Some(place) = self.buckets().place(dataset, false)? else { return Ok(Vec::new()) };
        let names = place.client.list(place.path(&[SIDE]), None)?;
        Ok(names.into_iter().filter(|n| check_side_object_name(n).is_ok()).collect())
    }

    fn get_side_object(&self, dataset: &Key, name: &str) -> Result<Option<Vec<u8>>> {
        check_side_object_name(name)?;
        let Some(place) = self.buckets().place(dataset, false)? else { return Ok(None) };
        let got = place.client.start_get(place.path(&[SIDE, name]))?.wait()?;
        Ok(got.map(|(bytes, _)| bytes.to_vec()))
    }
}

/// Removes a data set's side objects (its wipe).
pub(crate) fn remove_side_objects(store: &S3Store, dataset: &Key) -> Result<()> {
    let Some(place) = store.buckets().place(dataset, false)? else { return Ok(()) };
    let listed = place.client.list_meta(place.path(&[SIDE]), None)?;
    place.client.delete_all(listed.into_iter().map(|meta| meta.location).collect())
}
