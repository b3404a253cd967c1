//! The DAOS store (docs/daos.md): one DAOS array per archived field, in the
//! dataset's container, with an object id from a batch reserved ahead
//! (`daos_cont_alloc_oids`), opened with `daos_array_open_with_attr` (no round trip),
//! written once and closed. A write is persistent and visible when it returns, so `flush`
//! has nothing left to do.
//!
//! Locations are `daos:POOL/CONTAINER/OID` with offset 0 and the field's length, so readers
//! never ask an array for its size.

use std::sync::Arc;

use fieldstore_core::backend::SideObjects;
use fieldstore_core::error::{Error, ErrorKind, Result};
use fieldstore_core::{FieldLocation, Key, Store, StoreWriter};
use fieldstore_daos_sys::{daos_obj_id_t, daos_oclass_id_t};

use crate::naming::{check_root_label, dataset_label};
use crate::{oid_text, parse_oid, Containers, ObjectType, Pool};

/// The store's shared side: reads and removals.
pub struct DaosStore {
    arrays: Arc<Arrays>,
}

/// A writer: each field is persistent when archived, so writers share everything (the open
/// containers and their reserved object ids) and keep nothing of their own.
pub struct DaosStoreWriter {
    arrays: Arc<Arrays>,
}

/// The dataset containers' arrays.
struct Arrays {
    containers: Containers,
    /// Starts every dataset container's label.
    root: String,
    class: daos_oclass_id_t,
    oid_batch: u64,
}

impl DaosStore {
    /// A store in `pool` whose containers' labels start with `root`; arrays of `class`, ids reserved `oid_batch` at
    /// once (at least 1).
    pub fn new(pool: Arc<Pool>, root: &str, class: daos_oclass_id_t, oid_batch: u64) -> Result<Self> {
        check_root_label(root)?;
        let arrays = Arrays { containers: Containers::new(pool), root: root.into(), class, oid_batch: oid_batch.max(1) };
        Ok(DaosStore { arrays: Arc::new(arrays) })
    }

    /// Its containers, the labels' root and the object class of what it writes.
    pub(crate) fn layout(&self) -> (&Containers, &str, daos_oclass_id_t) {
        (&self.arrays.containers, &self.arrays.root, self.arrays.class)
    }
}

impl Arrays {
    /// The container and array of a location this store wrote; anything else is refused.
    fn parse<'u>(&self, uri: &'u str) -> Result<(&'u str, daos_obj_id_t)> {
        let refuse = |why: &str| Error::new(ErrorKind::Corrupt, format!("refusing location {uri:?}: {why}"));
        let rest = uri.strip_prefix("daos:").ok_or_else(|| refuse("not a DAOS location"))?;
        let (pool, rest) = rest.split_once('/').ok_or_else(|| refuse("no container"))?;
        let ours = self.containers.pool().label();
        if pool != ours {
            return Err(refuse(&format!("it is in pool '{pool}', this store uses pool '{ours}'")));
        }
        let (label, oid) = rest.split_once('/').ok_or_else(|| refuse("no object id"))?;
        let oid = parse_oid(oid).ok_or_else(|| refuse("not an object id"))?;
        Ok((label, oid))
    }

    fn array<T>(&self, uri: &str, mut action: impl FnMut(crate::Array) -> Result<T>) -> Result<T> {
        let (label, oid) = self.parse(uri)?;
        self.containers
            .with(label, false, |container| action(container.byte_array(oid)?))?
            .ok_or_else(|| Error::new(ErrorKind::NotFound, format!("{uri}: its container does not exist (wiped?)")))
    }
}

impl StoreWriter for DaosStoreWriter {
    fn archive(&mut self, dataset: &Key, _collocation: &Key, data: &[u8]) -> Result<FieldLocation> {
        let arrays = &self.arrays;
        let label = dataset_label(&arrays.root, dataset);
        let uri = arrays.containers.with(&label, true, |container| {
            let oid = container.object_id(container.next_oid(arrays.oid_batch)?, 0, ObjectType::ByteArray, arrays.class)?;
            container.byte_array(oid)?.write(0, data)?;
            Ok(format!("daos:{}/{label}/{}", arrays.containers.pool().label(), oid_text(oid)))
        })?;
        let uri = uri.expect("created when missing");
        Ok(FieldLocation { uri: uri.into(), offset: 0, length: data.len() as u64, crc32c: None })
    }

    /// Every archive was persistent when it returned.
    fn flush(&mut self) -> Result<()> {
        Ok(())
    }

    /// Arrays of discarded fields stay unreferenced; later fields get other ids anyway.
    fn discard(&mut self) {}
}

impl Store for DaosStore {
    fn writer(&self) -> Result<Box<dyn StoreWriter>> {
        Ok(Box::new(DaosStoreWriter { arrays: self.arrays.clone() }))
    }

    fn read(&self, uri: &str, offset: u64, buf: &mut [u8]) -> Result<()> {
        self.arrays.array(uri, |array| array.read(offset, buf))
    }

    fn remove(&self, uri: &str) -> Result<bool> {
        let (label, oid) = self.arrays.parse(uri)?;
        // No container: the dataset was wiped, so the array is gone too.
        self.arrays.containers.with(label, false, |container| container.byte_array(oid)?.destroy())?;
        Ok(true)
    }

    fn wipe_dataset(&self, dataset: &Key) -> Result<()> {
        let label = dataset_label(&self.arrays.root, dataset);
        self.arrays.containers.forget(&label);
        self.arrays.containers.pool().destroy_container(&label)?;
        Ok(())
    }

    fn describe(&self, dataset: &Key) -> String {
        format!("daos pool {} container {}", self.arrays.containers.pool().label(), dataset_label(&self.arrays.root, dataset))
    }

    fn side_objects(&self) -> Option<&dyn SideObjects> {
        Some(self)
    }
}
