//! The catalogue and store of a `type: remote` config. The catalogue's one use is its
//! [`Remote`] capability: a `FieldStore` over it sends every call to the server, so its other
//! methods serve only the locks a read checks and refuse the rest, which no handle makes.
//! The store reads the locations the server gave, a byte range per request, several in flight.

use fieldstore_core::api::{call, Operation, Remote};
use fieldstore_core::backend::{Catalogue, CatalogueWriter, ControlAction, DatasetView, StartedRead, Store, StoreWriter};
use fieldstore_core::{Error, ErrorKind, Key, Result};

use crate::client::Client;

/// Reads a store keeps in flight beyond the one being consumed (a read is a run of adjacent
/// fields, up to tens of MiB: a few in flight fill the network).
const READS_IN_FLIGHT: usize = 4;
/// The most bytes one read asks for: a read is handed to the reader whole, so smaller reads
/// let the reader check and hand out bytes while more arrive, and keep fewer bytes between
/// the two copies a remote read makes (1,000 x 1 MiB retrieved through a server on loopback:
/// 0.48-0.70 s with three reads of 64 MiB in flight, 0.42-0.47 s with four of 16 MiB).
const LARGEST_READ: u64 = 16 << 20;

/// The error of a method a handle over a server never calls.
fn through_the_server(what: &str) -> Error {
    Error::new(ErrorKind::Unsupported, format!("{what} of a remote store goes through its server's calls (FieldStore's)"))
}

/// The catalogue of a server ([`Catalogue::remote`]).
pub struct RemoteCatalogue {
    client: Client,
}

impl RemoteCatalogue {
    /// The catalogue reached through `client`.
    pub fn new(client: Client) -> Self {
        RemoteCatalogue { client }
    }
}

impl Catalogue for RemoteCatalogue {
    fn writer(&self) -> Result<Box<dyn CatalogueWriter>> {
        Err(through_the_server("archiving"))
    }

    fn datasets(&self) -> Result<Vec<Key>> {
        /// The part of a resolve's answer this reads.
        #[derive(serde::Deserialize)]
        struct Datasets {
            datasets: Vec<Key>,
        }
        let options = fieldstore_core::api::ListOptions { depth: 1, ..Default::default() };
        let answer: Datasets = call(&self.client, Operation::Resolve { request: String::new(), options, action: None })?;
        Ok(answer.datasets)
    }

    fn open(&self, _dataset: &Key) -> Result<Option<Box<dyn DatasetView>>> {
        Err(through_the_server("reading a data set's indexes"))
    }

    fn wipe_dataset(&self, _dataset: &Key) -> Result<()> {
        Err(through_the_server("wiping"))
    }

    fn locks(&self, dataset: &Key) -> Result<std::collections::BTreeSet<ControlAction>> {
        call(&self.client, Operation::Locks { dataset: dataset.clone() })
    }

    fn set_lock(&self, _dataset: &Key, _action: ControlAction, _locked: bool) -> Result<()> {
        Err(through_the_server("locking"))
    }

    fn describe(&self, dataset: &Key) -> String {
        format!("server {} data set {dataset}", self.client.endpoint())
    }

    fn remote(&self) -> Option<&dyn Remote> {
        Some(&self.client)
    }
}

/// The store of a server: reads of the locations it gave.
pub struct RemoteStore {
    client: Client,
}

impl RemoteStore {
    /// The store reached through `client`.
    pub fn new(client: Client) -> Self {
        RemoteStore { client }
    }
}

impl Store for RemoteStore {
    fn writer(&self) -> Result<Box<dyn StoreWriter>> {
        Err(through_the_server("archiving"))
    }

    fn read(&self, uri: &str, offset: u64, buf: &mut [u8]) -> Result<()> {
        buf.copy_from_slice(&self.client.read(uri, offset, buf.len())?);
        Ok(())
    }

    fn read_ahead(&self) -> usize {
        READS_IN_FLIGHT
    }

    fn largest_read(&self) -> u64 {
        LARGEST_READ
    }

    fn start_read(&self, uri: &str, offset: u64, length: usize, buffer: Vec<u8>) -> Result<Box<dyn StartedRead>> {
        Ok(Box::new(Reading { client: self.client.clone(), started: self.client.start_read(uri, offset, length, buffer) }))
    }

    fn remove(&self, _uri: &str) -> Result<bool> {
        Err(through_the_server("removing"))
    }

    fn wipe_dataset(&self, _dataset: &Key) -> Result<()> {
        Err(through_the_server("wiping"))
    }

    fn describe(&self, dataset: &Key) -> String {
        format!("server {} data set {dataset}", self.client.endpoint())
    }
}

/// A read in flight ([`Store::start_read`]).
struct Reading {
    client: Client,
    started: tokio::task::JoinHandle<Result<Vec<u8>>>,
}

impl StartedRead for Reading {
    fn finish(self: Box<Self>) -> Result<Vec<u8>> {
        self.client.finish(self.started)
    }

    fn is_done(&mut self) -> bool {
        self.started.is_finished()
    }
}
