//! The RADOS store: one object per archived field (the design the published Ceph study found
//! best), in the dataset's namespace of the store pool, each written by one `write_full`.
//!
//! Writes are asynchronous within a bounded window: `archive` prepares the next write (the
//! object's name, librados' copy of the bytes) while earlier ones are in flight, waits only
//! when the window is full, and `flush` waits for all of them, so the bytes of every flushed
//! field are durable before the catalogue publishes it. With a window of one, at most one
//! write is in flight, and the preparation of the next field overlaps it. Reads of a
//! retrieve likewise keep up to `reads_in_flight` objects in flight (see `Store::read_ahead`).
//!
//! Object names are MD5s of a unique string (docs/rados.md) and locations are
//! `rados:POOL/NAMESPACE/NAME` with offset 0 and the field's length.

use std::sync::Arc;

use fieldstore_core::backend::SideObjects;
use fieldstore_core::error::{Error, ErrorKind, Result};
use fieldstore_core::unique::unique_suffix;
use fieldstore_core::window::{InFlight, WriteWindow};
use fieldstore_core::{FieldLocation, Key, StartedRead, Store, StoreWriter};

use crate::aio::{PendingRead, PendingWrite};
use crate::naming::{check_prefix, dataset_namespace};
use crate::{Cluster, Namespaces, WriteOp};
use fieldstore_core::unique::{is_object_name, unique_object_name};

/// The store's shared side: reads and removals.
pub struct RadosStore {
    namespaces: Arc<Namespaces>,
    prefix: Arc<str>,
    limits: InFlight,
}

/// One writer: its object names and its writes in flight.
pub struct RadosStoreWriter {
    namespaces: Arc<Namespaces>,
    prefix: Arc<str>,
    /// Unique to this writer, so its object names are unique across writers, processes and
    /// hosts.
    writer: String,
    written: u64,
    /// Writes sent and not yet waited for.
    in_flight: WriteWindow<PendingWrite>,
}

impl RadosStore {
    /// A store in `pool` whose namespaces start with `prefix`, with up to `limits` (each at
    /// least 1) operations in flight; fails now if the pool does not exist.
    pub fn new(cluster: Arc<Cluster>, pool: &str, prefix: &str, limits: InFlight) -> Result<Self> {
        check_prefix(prefix)?;
        Ok(RadosStore {
            namespaces: Arc::new(Namespaces::new(cluster, pool)?),
            prefix: prefix.into(),
            limits: InFlight::new(Some(limits.writes), Some(limits.reads)),
        })
    }

    /// The pool's namespaces.
    pub(crate) fn namespaces(&self) -> &Namespaces {
        &self.namespaces
    }

    /// What its namespaces start with.
    pub(crate) fn prefix(&self) -> &str {
        &self.prefix
    }

    /// The namespace and object of a location this store wrote; anything else is refused.
    fn parse<'u>(&self, uri: &'u str) -> Result<(&'u str, &'u str)> {
        let refuse = |why: &str| Error::new(ErrorKind::Corrupt, format!("refusing location {uri:?}: {why}"));
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

impl StoreWriter for RadosStoreWriter {
    fn archive(&mut self, dataset: &Key, collocation: &Key, data: &[u8]) -> Result<FieldLocation> {
        let namespace = dataset_namespace(&self.prefix, dataset);
        let object = unique_object_name(&format!("field/{collocation}/{}/{}", self.writer, self.written));
        self.written += 1;
        let write = self.namespaces.get(&namespace)?.prepare(&object, &WriteOp::new().write_full(data))?;
        self.in_flight.make_room()?;
        self.in_flight.push(write.submit()?);
        let uri = format!("rados:{}/{namespace}/{object}", self.namespaces.pool());
        Ok(FieldLocation { uri: uri.into(), offset: 0, length: data.len() as u64, crc32c: None })
    }

    /// Waits for every write in flight; the first failure is the answer, after all of them
    /// ended.
    fn flush(&mut self) -> Result<()> {
        self.in_flight.wait_all()
    }

    /// Waits for the writes in flight and forgets them: objects of discarded fields stay
    /// unreferenced; later names differ anyway.
    fn discard(&mut self) {
        self.in_flight.forget();
    }
}

impl Store for RadosStore {
    fn writer(&self) -> Result<Box<dyn StoreWriter>> {
        Ok(Box::new(RadosStoreWriter {
            namespaces: self.namespaces.clone(),
            prefix: self.prefix.clone(),
            writer: unique_suffix(),
            written: 0,
            in_flight: WriteWindow::new(self.limits.writes),
        }))
    }

    fn read(&self, uri: &str, offset: u64, buf: &mut [u8]) -> Result<()> {
        let (namespace, object) = self.parse(uri)?;
        self.namespaces.get(namespace)?.read_exact(object, offset, buf)
    }

    fn read_ahead(&self) -> usize {
        self.limits.reads - 1
    }

    fn start_read(&self, uri: &str, offset: u64, length: usize, buffer: Vec<u8>) -> Result<Box<dyn StartedRead>> {
        let (namespace, object) = self.parse(uri)?;
        Ok(Box::new(self.namespaces.get(namespace)?.start_read(object, offset, length, buffer)?))
    }

    /// Field objects are written whole and never appended to, so none is ever in use.
    fn remove(&self, uri: &str) -> Result<bool> {
        let (namespace, object) = self.parse(uri)?;
        self.namespaces.get(namespace)?.remove(object)?;
        Ok(true)
    }

    /// Nothing beyond the field objects, which the wipe removed by name: removing every
    /// object of the namespace would remove those of a data set archived again meanwhile.
    /// (Objects of writes no index names, from a writer that failed, stay.) Its side objects go too,
    /// where they can: they only save readers time.
    fn wipe_dataset(&self, dataset: &Key) -> Result<()> {
        // After the data set is gone, best effort: a side object left behind applies to no
        // field it does not name (its entries name locations and CRCs), and costs its bytes.
        let _ = crate::side::remove_side_objects(self, dataset);
        Ok(())
    }

    fn describe(&self, dataset: &Key) -> String {
        format!("rados pool {} namespace {}", self.namespaces.pool(), dataset_namespace(&self.prefix, dataset))
    }

    fn side_objects(&self) -> Option<&dyn SideObjects> {
        Some(self)
    }
}

impl fieldstore_core::window::PendingWrite for PendingWrite {
    fn wait(self) -> Result<()> {
        PendingWrite::wait(self).map(|_| ())
    }
}

impl StartedRead for PendingRead {
    fn finish(self: Box<Self>) -> Result<Vec<u8>> {
        PendingRead::finish(*self)
    }
}
