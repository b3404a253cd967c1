//! The RADOS catalogue: the object-store catalogue (`fieldstore_object_catalogue`, which holds
//! the logic and its invariants) over omaps and objects in the catalogue pool, one namespace
//! per dataset.
//!
//! ```text
//! namespace <prefix>              fieldstore.datasets   omap: dataset key -> ""  (the list)
//! namespace <prefix><dataset key> dataset               omap: key, schema, identity,
//!                                                       lock/<action> -> ""  (the record)
//!                                                       data: the log, one record batch
//!                                                       per flush, appended whole
//!                                 <md5>                 an index: omap element values -> location
//! ```
//!
//! The record is made by one exclusive create; a log append is one operation guarded by the
//! identity (compare, then append), which the OSD applies whole and in turn with other
//! writers', so no writer ever retries. Positions in the log are bytes.

use std::sync::Arc;

use fieldstore_core::error::{Error, ErrorKind, Result};
use fieldstore_core::indexing::PendingIndex;
use fieldstore_core::unique::unique_suffix;
use fieldstore_core::Key;
use fieldstore_object_catalogue::index_log::{decode_entry, encode_entry, split_batch, IndexEntries, Sealing};
use fieldstore_object_catalogue::{wipe_mark, DatasetObjects, IndexWrite, LogRead, ObjectCatalogue, Objects, Values, WIPING};

use crate::aio::PendingWrite;
use crate::naming::{check_prefix, dataset_namespace};
use crate::{Cluster, IoCtx, Namespaces, Outcome, WriteOp};
use fieldstore_core::unique::unique_object_name;

/// The object listing the datasets, in the namespace named by the instance's prefix.
const DATASETS: &str = "fieldstore.datasets";
/// Each dataset's own object: its record (omap) and its log (data).
const DATASET: &str = "dataset";
/// How much of the log a reader asks for in its first read operation of a request; each
/// further one (a log that grew by more) asks for twice as much as the one before.
const FIRST_LOG_READ: usize = 64 << 10;

/// The RADOS catalogue.
pub type RadosCatalogue = ObjectCatalogue<CatalogueNamespaces>;

/// A catalogue in `pool` whose namespaces start with `prefix`; fails now if the pool does not
/// exist.
pub fn open(cluster: Arc<Cluster>, pool: &str, prefix: &str) -> Result<RadosCatalogue> {
    check_prefix(prefix)?;
    Ok(ObjectCatalogue::new(CatalogueNamespaces { namespaces: Namespaces::new(cluster, pool)?, prefix: prefix.into() }))
}

/// The catalogue's namespaces in its pool.
pub struct CatalogueNamespaces {
    namespaces: Namespaces,
    /// Starts every namespace of this instance; its dataset list is in namespace `prefix`.
    prefix: String,
}

/// One data set's namespace.
pub struct DatasetNamespace {
    io: Arc<IoCtx>,
}

impl Objects for CatalogueNamespaces {
    type Dataset = DatasetNamespace;

    /// Namespaces need no creation.
    fn dataset(&self, dataset: &Key, _create: bool) -> Result<Option<Arc<DatasetNamespace>>> {
        Ok(Some(Arc::new(DatasetNamespace { io: self.namespaces.get(&dataset_namespace(&self.prefix, dataset))? })))
    }

    fn listed(&self) -> Result<Vec<String>> {
        let pairs = self.namespaces.get(&self.prefix)?.omap_scan(DATASETS, "", "")?.unwrap_or_default();
        Ok(pairs.into_iter().map(|(k, _)| k).collect())
    }

    fn describe_list(&self) -> String {
        self.namespaces.get(&self.prefix).map(|io| io.describe(DATASETS)).unwrap_or_else(|e| e.report().to_string())
    }

    fn set_listed(&self, dataset: &Key, listed: bool) -> Result<()> {
        let key = dataset.to_string();
        let op = if listed { WriteOp::new().set(&key, b"") } else { WriteOp::new().remove(&key) };
        self.namespaces.get(&self.prefix)?.apply(DATASETS, &op)?;
        Ok(())
    }

    fn remove(&self, _dataset: &Key, objects: Option<&DatasetNamespace>, index_ids: &[String]) -> Result<()> {
        let Some(objects) = objects else { return Ok(()) };
        objects.remove_marked_record()?;
        for id in index_ids {
            objects.io.remove(id)?;
        }
        Ok(())
    }

    fn describe(&self, dataset: &Key) -> String {
        format!("rados pool {} namespace {}", self.namespaces.pool(), dataset_namespace(&self.prefix, dataset))
    }
}

impl DatasetObjects for DatasetNamespace {
    fn create_record(&self, values: &[(&str, &[u8])]) -> Result<()> {
        // Exists: another creator's record, which stays.
        self.io.apply(DATASET, &WriteOp::new().create_exclusive().set_all(values.iter().copied()))?;
        Ok(())
    }

    fn get(&self, names: &[&str]) -> Result<Option<Values>> {
        self.io.omap_get(DATASET, names)
    }

    /// Only on a record that exists: an omap write alone would make a record of this one value
    /// where a wipe removed the data set (a wipe's mark, or a lock, set as it was removed).
    fn set(&self, name: &str, value: Option<&[u8]>) -> Result<()> {
        let op = match value {
            Some(value) => WriteOp::new().assert_exists().set(name, value),
            None => WriteOp::new().assert_exists().remove(name),
        };
        match self.io.apply(DATASET, &op)? {
            Outcome::Missing => Err(Error::new(ErrorKind::NotFound, format!("{}: no data set (wiped?) to set {name} on", self.describe()))),
            _ => Ok(()),
        }
    }

    fn append(&self, identity: &[u8], batch: &[u8]) -> Result<bool> {
        let append = WriteOp::new().compare_equal("identity", identity).append(batch);
        // Anything but Applied: another identity (created again) or no dataset object.
        Ok(self.io.apply(DATASET, &append)? == Outcome::Applied)
    }

    /// One operation guarded by both values (a missing `mark` compares as empty; a wipe's mark
    /// is not): no batch lands in a creation a wipe marked, and no second round trip.
    fn append_unless(&self, identity: &[u8], mark: &str, batch: &[u8]) -> Result<bool> {
        let append = WriteOp::new().compare_equal("identity", identity).compare_equal(mark, b"").append(batch);
        Ok(self.io.apply(DATASET, &append)? == Outcome::Applied)
    }

    /// The first part comes with the identity in one operation: one round trip for a reader
    /// that polls. Appends are whole, so what was read to the log's end ends at a batch's
    /// end: the whole stretch is split first, so a log cut short is reported before any
    /// record in it.
    fn read_log(&self, position: u64) -> Result<Option<LogRead>> {
        let mut log = Vec::new();
        let mut first_identity: Option<Vec<u8>> = None;
        let mut asked = FIRST_LOG_READ;
        loop {
            let start = log.len();
            log.resize(start + asked, 0);
            let Some((pairs, read)) = self.io.omap_get_and_read(DATASET, &["identity"], position + start as u64, &mut log[start..])? else {
                return Ok(None);
            };
            log.truncate(start + read);
            let identity = pairs.into_iter().next().map(|(_, v)| v).unwrap_or_default();
            match &first_identity {
                Some(first) if *first != identity => return Ok(Some(LogRead { identity, batches: Vec::new(), end: 0 })),
                Some(_) => {}
                None => first_identity = Some(identity),
            }
            if read < asked {
                break;
            }
            asked *= 2;
        }
        let (mut batches, mut rest, mut at) = (Vec::new(), &log[..], position);
        while !rest.is_empty() {
            let (_, after) = split_batch(rest).map_err(|why| Error::corrupt("log record", self.describe_position(at), why))?;
            let length = rest.len() - after.len();
            batches.push((at, rest[..length].to_vec()));
            (rest, at) = (after, at + length as u64);
        }
        Ok(Some(LogRead { identity: first_identity.unwrap_or_default(), batches, end: at }))
    }

    fn write_index(&self, index: &PendingIndex, sealing: Sealing) -> Result<Box<dyn IndexWrite>> {
        let name = unique_object_name(&format!("index/{}", unique_suffix()));
        let values: Vec<Vec<u8>> = index.entries.iter().map(|(values, location)| encode_entry(values, location, sealing)).collect();
        let pairs = index.entries.keys().map(String::as_str).zip(values.iter().map(Vec::as_slice));
        let write = self.io.prepare(&name, &WriteOp::new().create_exclusive().set_all(pairs))?.submit()?;
        Ok(Box::new(IndexObjectWrite { io: self.io.clone(), name, write }))
    }

    fn read_index(&self, id: &str) -> Result<IndexEntries> {
        let pairs = self
            .io
            .omap_scan(id, "", "")?
            .ok_or_else(|| Error::corrupt("index object", self.io.describe(id), "missing (the data set was wiped while it was read?)"))?;
        let entries = pairs
            .into_iter()
            .map(|(k, v)| {
                let location =
                    decode_entry(&k, &v).map_err(|why| Error::corrupt("index entry", format!("{} {k}", self.io.describe(id)), why))?;
                Ok((k, location))
            })
            .collect::<Result<Vec<_>>>()?;
        Ok(IndexEntries::from_sorted(entries))
    }

    fn describe(&self) -> String {
        self.io.describe(DATASET)
    }

    fn describe_position(&self, position: u64) -> String {
        format!("{} at byte {position}", self.io.describe(DATASET))
    }
}

impl DatasetNamespace {
    /// Removes the record if a wipe marked its creation (or it holds no identity, which no
    /// writer takes), in one guarded operation: a record created again after the marked one
    /// was removed (by a writer that finished a wipe it took for killed) stays.
    fn remove_marked_record(&self) -> Result<()> {
        let Some(values) = self.io.omap_get(DATASET, &["identity"])? else { return Ok(()) };
        let identity = values.into_iter().next().map(|(_, v)| v).unwrap_or_default();
        let mark = wipe_mark(&identity);
        let mut op = WriteOp::new().compare_equal("identity", &identity);
        if !identity.is_empty() {
            op = op.compare_equal(&mark, WIPING);
        }
        // Missing: removed meanwhile; ComparisonFailed: another creation, which stays.
        self.io.apply(DATASET, &op.remove_object())?;
        Ok(())
    }
}

/// An index object's exclusive create, in flight.
struct IndexObjectWrite {
    io: Arc<IoCtx>,
    name: String,
    write: PendingWrite,
}

impl IndexWrite for IndexObjectWrite {
    fn finish(self: Box<Self>) -> Result<String> {
        if self.write.wait()? != Outcome::Applied {
            return Err(Error::new(
                ErrorKind::AlreadyExists,
                format!("{}: a new index object already exists", self.io.describe(&self.name)),
            ));
        }
        Ok(self.name)
    }
}
