//! The object API of the field-io and ior benchmarks on RADOS: pool = RADOS pool, container =
//! namespace (optionally prefixed), key-value = an object's omap, array = object.
//!
//! A container exists once its marker object does (namespaces themselves need no creation).
//! Names are escaped like the POSIX form's, so a user's name can never be the marker's.

use std::sync::Arc;

use fieldstore_core::error::{Error, ErrorKind, Result};
use fieldstore_objects::{escape_name, Array, Container, KeyValue, Pool};

use crate::{Cluster, IoCtx, Namespaces, WriteOp};

/// The object marking a container as created (escaped names never start with `.`).
const CONTAINER_MARKER: &str = ".container";

/// The benchmarks' object pool on a RADOS pool: containers are (prefixed) namespaces.
pub struct RadosPool {
    namespaces: Namespaces,
    /// Put before every container's name, so runs can share a RADOS pool without meeting.
    prefix: String,
}

impl RadosPool {
    /// A pool of `cluster` whose containers' names start with `prefix`; fails now if the
    /// RADOS pool does not exist.
    pub fn new(cluster: Arc<Cluster>, pool: &str, prefix: &str) -> Result<Self> {
        Ok(RadosPool { namespaces: Namespaces::new(cluster, pool)?, prefix: prefix.into() })
    }

    fn namespace(&self, container: &str) -> Result<Arc<IoCtx>> {
        self.namespaces.get(&format!("{}{}", self.prefix, escape_name(container)))
    }
}

impl Pool for RadosPool {
    fn container(&self, name: &str, create: bool) -> Result<Box<dyn Container>> {
        let io = self.namespace(name)?;
        if create {
            // Creation is idempotent, so racing creators end with the same container. (Data,
            // not an omap: erasure-coded pools have no omaps.)
            io.write_full(CONTAINER_MARKER, name.as_bytes())?;
        } else if io.size(CONTAINER_MARKER)?.is_none() {
            return Err(Error::new(ErrorKind::NotFound, format!("container {name:?} does not exist ({})", io.describe(""))));
        }
        Ok(Box::new(RadosContainer { io }))
    }

    fn remove_container(&self, name: &str) -> Result<()> {
        // The marker goes last, so an interrupted removal leaves a container that can be
        // removed again.
        self.namespace(name)?.remove_all_objects(CONTAINER_MARKER)
    }
}

struct RadosContainer {
    io: Arc<IoCtx>,
}

impl Container for RadosContainer {
    fn kv(&self, name: &str) -> Result<Box<dyn KeyValue>> {
        Ok(Box::new(RadosKeyValue { io: self.io.clone(), oid: format!("kv.{}", escape_name(name)) }))
    }

    fn array(&self, name: &str, create: bool) -> Result<Box<dyn Array>> {
        let oid = format!("array.{}", escape_name(name));
        if !create && self.io.size(&oid)?.is_none() {
            return Err(Error::new(ErrorKind::NotFound, format!("array {name:?} does not exist ({})", self.io.describe(&oid))));
        }
        Ok(Box::new(RadosArray { io: self.io.clone(), oid }))
    }
}

struct RadosKeyValue {
    io: Arc<IoCtx>,
    oid: String,
}

impl KeyValue for RadosKeyValue {
    fn put(&mut self, key: &str, value: &[u8]) -> Result<()> {
        self.io.apply(&self.oid, &WriteOp::new().set(key, value))?;
        Ok(())
    }

    fn get(&self, key: &str) -> Result<Option<Vec<u8>>> {
        let pairs = self.io.omap_get(&self.oid, &[key])?.unwrap_or_default();
        Ok(pairs.into_iter().next().map(|(_, value)| value))
    }

    fn keys(&self) -> Result<Vec<String>> {
        let pairs = self.io.omap_scan(&self.oid, "", "")?.unwrap_or_default();
        Ok(pairs.into_iter().map(|(key, _)| key).collect())
    }
}

struct RadosArray {
    io: Arc<IoCtx>,
    oid: String,
}

impl Array for RadosArray {
    fn write(&mut self, offset: u64, data: &[u8]) -> Result<()> {
        self.io.write(&self.oid, offset, data)
    }

    fn read(&self, offset: u64, buf: &mut [u8]) -> Result<()> {
        self.io.read_exact(&self.oid, offset, buf)
    }

    fn size(&self) -> Result<u64> {
        self.io
            .size(&self.oid)?
            .ok_or_else(|| Error::new(ErrorKind::NotFound, format!("array {} does not exist", self.io.describe(&self.oid))))
    }
}
