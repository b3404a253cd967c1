//! The RADOS store: one object per archived field (the design the published Ceph study found
//! best), in the dataset's namespace of the store pool, written with one blocking
//! `write_full` that is persistent when it returns, so `flush` has nothing left to do.
//!
//! Object names are MD5s of a unique string (SYSTEM.md section 4.3) and locations are
//! `rados:POOL/NAMESPACE/NAME` with offset 0 and the field's length.

use std::sync::Arc;

use fieldstore_core::error::{Error, Result};
use fieldstore_core::unique::unique_suffix;
use fieldstore_core::{FieldLocation, Key, Store};

use crate::naming::{check_prefix, dataset_namespace, is_object_name, unique_object_name};
use crate::{Cluster, Namespaces};

pub struct RadosStore {
    namespaces: Namespaces,
    prefix: String,
    /// Unique to this handle, so its object names are unique across processes and hosts.
    writer: String,
    written: u64,
}

impl RadosStore {
    /// A store in `pool` whose namespaces start with `prefix`; fails now if the pool does not
    /// exist.
    pub fn new(cluster: Arc<Cluster>, pool: &str, prefix: &str) -> Result<Self> {
        check_prefix(prefix)?;
        Ok(RadosStore { namespaces: Namespaces::new(cluster, pool)?, prefix: prefix.into(), writer: unique_suffix(), written: 0 })
    }

    /// The namespace and object of a location this store wrote; anything else is refused.
    fn parse<'u>(&self, uri: &'u str) -> Result<(&'u str, &'u str)> {
        let refuse = |why: &str| Error::Invalid(format!("refusing location {uri:?}: {why}"));
        let rest = uri.strip_prefix("rados:").ok_or_else(|| refuse("not a RADOS location"))?;
        let (pool, rest) = rest.split_once('/').ok_or_else(|| refuse("no namespace"))?;
        if pool != self.namespaces.pool() {
            return Err(refuse(&format!("it is in pool '{pool}', this store uses pool '{}'", self.namespaces.pool())));
        }
        let (namespace, object) = rest.rsplit_once('/').ok_or_else(|| refuse("no object name"))?;
        if !is_object_name(object) {
            return Err(refuse("not an object name this store makes"));
        }
        Ok((namespace, object))
    }
}

impl Store for RadosStore {
    fn archive(&mut self, dataset: &Key, collocation: &Key, data: &[u8]) -> Result<FieldLocation> {
        let namespace = dataset_namespace(&self.prefix, dataset);
        let object = unique_object_name(&format!("field/{collocation}/{}/{}", self.writer, self.written));
        self.written += 1;
        self.namespaces.get(&namespace)?.write_full(&object, data)?;
        let uri = format!("rados:{}/{namespace}/{object}", self.namespaces.pool());
        Ok(FieldLocation { uri: uri.into(), offset: 0, length: data.len() as u64, crc32c: crc32c::crc32c(data) })
    }

    /// Every archive was persistent when it returned.
    fn flush(&mut self) -> Result<()> {
        Ok(())
    }

    /// Objects of fields that are discarded stay unreferenced; later names differ anyway.
    fn discard(&mut self) {}

    fn read(&self, uri: &str, offset: u64, buf: &mut [u8]) -> Result<()> {
        let (namespace, object) = self.parse(uri)?;
        self.namespaces.get(namespace)?.read_exact(object, offset, buf)
    }

    fn remove(&self, uri: &str) -> Result<()> {
        let (namespace, object) = self.parse(uri)?;
        self.namespaces.get(namespace)?.remove(object)?;
        Ok(())
    }

    fn wipe_dataset(&self, dataset: &Key) -> Result<()> {
        self.namespaces.get(&dataset_namespace(&self.prefix, dataset))?.remove_all_objects("")
    }

    fn describe(&self, dataset: &Key) -> String {
        format!("rados pool {} namespace {}", self.namespaces.pool(), dataset_namespace(&self.prefix, dataset))
    }
}
