//! The object API of the field-io and ior benchmarks on DAOS, as in the published study:
//! pool = DAOS pool, container = DAOS container (labelled from the name, see
//! [`crate::naming`]), key-value = DAOS KV, array = DAOS array. KV and array ids are MD5s of
//! their names, so processes that name the same object meet on it without coordination.

use std::sync::Arc;

use fieldstore_core::error::{Error, ErrorKind, Result};
use fieldstore_daos_sys::daos_oclass_id_t;
use fieldstore_objects::{Array, Container, KeyValue, Pool};

use crate::naming::{check_root_label, container_label, hashed_oid};
use crate::{Containers, ObjectType};

/// The object API's pool: containers labelled from their names under a prefix, in one DAOS pool.
pub struct DaosPool {
    containers: Containers,
    /// Starts every container's label, so runs can share a pool without meeting.
    prefix: String,
    class: daos_oclass_id_t,
}

impl DaosPool {
    /// Containers labelled `PREFIX-...` in `pool`, objects of `class`.
    pub fn new(pool: Arc<crate::Pool>, prefix: &str, class: daos_oclass_id_t) -> Result<Self> {
        check_root_label(prefix)?;
        Ok(DaosPool { containers: Containers::new(pool), prefix: prefix.into(), class })
    }
}

impl Pool for DaosPool {
    fn container(&self, name: &str, create: bool) -> Result<Box<dyn Container>> {
        let label = container_label(&self.prefix, name);
        let container = self.containers.get(&label, create)?.ok_or_else(|| {
            Error::new(
                ErrorKind::NotFound,
                format!("container {name:?} does not exist (pool '{}' label '{label}')", self.containers.pool().label()),
            )
        })?;
        Ok(Box::new(DaosContainer { container, class: self.class }))
    }

    fn remove_container(&self, name: &str) -> Result<()> {
        let label = container_label(&self.prefix, name);
        self.containers.forget(&label);
        self.containers.pool().destroy_container(&label)?;
        Ok(())
    }
}

struct DaosContainer {
    container: Arc<crate::Container>,
    class: daos_oclass_id_t,
}

impl DaosContainer {
    fn oid(&self, kind: ObjectType, name: &str) -> Result<fieldstore_daos_sys::daos_obj_id_t> {
        let tag = match kind {
            ObjectType::KeyValue => "kv",
            _ => "array",
        };
        let (lo, hi) = hashed_oid(&format!("{tag}/{name}"));
        self.container.object_id(lo, hi, kind, self.class)
    }
}

impl Container for DaosContainer {
    fn kv(&self, name: &str) -> Result<Box<dyn KeyValue>> {
        Ok(Box::new(DaosKeyValue(self.container.kv(self.oid(ObjectType::KeyValue, name)?)?)))
    }

    fn array(&self, name: &str, create: bool) -> Result<Box<dyn Array>> {
        let oid = self.oid(ObjectType::Array, name)?;
        let created = if create { self.container.create_array(oid)? } else { None };
        let array = match created {
            Some(array) => array,
            None => self
                .container
                .open_array(oid)?
                .ok_or_else(|| Error::new(ErrorKind::NotFound, format!("array {name:?} does not exist ({})", self.container.describe())))?,
        };
        Ok(Box::new(DaosArray(array)))
    }
}

struct DaosKeyValue(crate::KeyValue);

impl KeyValue for DaosKeyValue {
    fn put(&mut self, key: &str, value: &[u8]) -> Result<()> {
        self.0.put(key, value)
    }

    fn get(&self, key: &str) -> Result<Option<Vec<u8>>> {
        self.0.get(key)
    }

    fn keys(&self) -> Result<Vec<String>> {
        self.0.keys()
    }
}

struct DaosArray(crate::Array);

impl Array for DaosArray {
    fn write(&mut self, offset: u64, data: &[u8]) -> Result<()> {
        self.0.write(offset, data)
    }

    fn read(&self, offset: u64, buf: &mut [u8]) -> Result<()> {
        self.0.read(offset, buf)
    }

    fn size(&self) -> Result<u64> {
        self.0.size()
    }
}
