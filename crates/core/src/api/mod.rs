//! `FieldStore`: FDB5's API (archive, flush, retrieve, list, axes, wipe, purge, control, stats,
//! where) over any [`Catalogue`] and [`Store`].
//!
//! Writes go store first, catalogue second, and `flush` flushes them in that order, so an
//! index never points at bytes that are not durable. Reads resolve a MARS request against
//! each dataset's own schema (the `resolve` module), then read the bytes through
//! [`DataReader`], which merges adjacent byte ranges into single reads and checks every
//! field's checksum.

mod admin;
mod read;
mod resolve;

use std::collections::HashMap;
use std::sync::Arc;

use serde::Serialize;

pub use admin::{Axes, PurgeReport, StatsReport, WhereReport, WipeReport};
pub use read::DataReader;
pub use resolve::{FieldEntry, ListOptions, Matches};

use crate::backend::{Catalogue, ControlAction, FieldLocation, Store};
use crate::error::{Error, ErrorKind, Result};
use crate::key::Key;
use crate::recent::RecentList;
use crate::schema::Schema;

/// Counters of one `FieldStore` handle.
#[derive(Clone, Debug, Default, Serialize)]
pub struct ArchiveStats {
    pub fields_archived: u64,
    pub bytes_archived: u64,
    pub flushes: u64,
}

pub struct FieldStore {
    /// The configured schema: used to find the dataset of a new identifier.
    schema: Arc<Schema>,
    /// The configured schema's last split (consecutive fields mostly differ in element values).
    split_memo: crate::schema::SplitMemo,
    catalogue: Box<dyn Catalogue>,
    store: Box<dyn Store>,
    /// Parsed schemas by text, so datasets sharing a schema share one parse.
    schemas: HashMap<String, Arc<Schema>>,
    /// Datasets this handle archives into, with the schema they were created with.
    writing: RecentList<(Key, Arc<Schema>)>,
    /// Fields archived since the last successful flush.
    pending_fields: u64,
    /// Read views kept between requests (each refreshes incrementally).
    views: HashMap<Key, Box<dyn crate::backend::DatasetView>>,
    stats: ArchiveStats,
}

impl FieldStore {
    pub fn new(schema: Schema, catalogue: Box<dyn Catalogue>, store: Box<dyn Store>) -> Self {
        FieldStore {
            schema: Arc::new(schema),
            catalogue,
            store,
            schemas: HashMap::new(),
            writing: RecentList::default(),
            pending_fields: 0,
            split_memo: Default::default(),
            views: HashMap::new(),
            stats: ArchiveStats::default(),
        }
    }

    /// An error naming where the store should be if it is not there: for tools, which
    /// refuse to read a store that was never made (most often a mistyped path). Archiving
    /// makes it.
    pub fn check_exists(&self) -> Result<()> {
        self.catalogue.check_exists()
    }

    /// The configured schema.
    pub fn schema(&self) -> &Schema {
        &self.schema
    }

    pub fn archive_stats(&self) -> &ArchiveStats {
        &self.stats
    }

    /// Archives one field under a full identifier. The field is stored when this returns and
    /// becomes visible at the next [`FieldStore::flush`]; archiving the same identifier again
    /// replaces it (the old field stays visible until then).
    pub fn archive(&mut self, identifier: &Key, data: &[u8]) -> Result<()> {
        let split = self.schema.split_remembering(identifier, &mut self.split_memo)?;
        let schema = self.dataset_schema_for_writing(&split.dataset)?;
        let split = if Arc::ptr_eq(&schema, &self.schema) { split } else { self.resplit(&schema, identifier, &split.dataset)? };
        let mut location = match self.store.archive(&split.dataset, &split.collocation, data) {
            Ok(location) => location,
            Err(e) => return Err(self.discard_pending(e, "this field and ")),
        };
        location.crc32c = crate::checksum::crc32c(data);
        self.catalogue.archive(&split.dataset, schema.text(), &split.collocation, &split.element, location)?;
        self.pending_fields += 1;
        self.stats.fields_archived += 1;
        self.stats.bytes_archived += data.len() as u64;
        Ok(())
    }

    /// Makes everything archived through this handle durable and visible: the catalogue
    /// stages its index bytes, the store syncs (with the catalogue's commit records, if the
    /// catalogue offers them and the store can embed them), then the catalogue publishes,
    /// syncing only what the store did not make durable.
    pub fn flush(&mut self) -> Result<()> {
        // Nothing staged is visible, so a failure here loses nothing: entries stay pending.
        let commits = self.catalogue.prepare_flush()?;
        let embedded = match self.store.flush_with_commits(&commits) {
            Ok(embedded) => embedded,
            Err(e) => return Err(self.discard_pending(e, "")),
        };
        let embedded: Vec<Key> = commits.into_iter().zip(embedded).filter(|(_, e)| *e).map(|(c, _)| c.dataset).collect();
        // A catalogue failure keeps its entries pending: their bytes are durable, and the
        // next flush can still publish them; unless their data set was wiped meanwhile.
        match self.catalogue.flush(&embedded) {
            Err(e @ Error::Wiped { .. }) => return Err(self.discard_pending(e, "")),
            other => other?,
        }
        self.pending_fields = 0;
        self.stats.flushes += 1;
        Ok(())
    }

    /// After a failed store write the bytes of unflushed fields may be incomplete: nothing
    /// pending may ever be published. Both sides forget it; the handle stays usable.
    /// `also` names what else was lost ("this field and ", or "").
    fn discard_pending(&mut self, cause: Error, also: &str) -> Error {
        self.store.discard();
        self.catalogue.discard();
        let lost = std::mem::take(&mut self.pending_fields);
        Error::new(
            cause.kind(),
            format!("{cause}; {also}the {lost} field(s) archived since the last flush were not stored and must be archived again"),
        )
    }

    /// The schema a dataset is written with: its stored schema if it exists, else the
    /// configured one. Checks the archive lock once per dataset and handle.
    fn dataset_schema_for_writing(&mut self, dataset: &Key) -> Result<Arc<Schema>> {
        if let Some(i) = self.writing.find(|(d, _)| d == dataset) {
            return Ok(self.writing[i].1.clone());
        }
        if self.catalogue.locks(dataset)?.contains(&ControlAction::Archive) {
            return Err(Error::Locked { dataset: dataset.to_string(), action: "archive".into() });
        }
        let schema = match self.open_dataset(dataset)? {
            Some(view) if view.schema_text() != self.schema.text() => self.parse_schema(view.schema_text(), dataset)?,
            _ => self.schema.clone(),
        };
        self.writing.push((dataset.clone(), schema.clone()));
        Ok(schema)
    }

    /// Opens a dataset for reading, first recovering any records its catalogue lost in a
    /// crash from the commits the store embedded with the data. A reader the file system does
    /// not let write reads without recovering: what a crash lost appears once a process that
    /// may write opens the dataset (after a writer merely killed, nothing is lost).
    fn open_dataset(&self, dataset: &Key) -> Result<Option<Box<dyn crate::backend::DatasetView>>> {
        for session in self.catalogue.sessions_to_recover(dataset)? {
            let commits = self.store.embedded_commits(dataset, &session)?;
            match self.catalogue.recover(dataset, &session, &commits, &|location| self.is_whole(location)) {
                Err(e) if e.is_write_refused() => break,
                other => other?,
            }
        }
        self.catalogue.open(dataset)
    }

    /// Whether a field's bytes are all in the store, with its checksum. A missing or short
    /// data file is an answer (no), not an error: a power loss can leave either.
    fn is_whole(&self, location: &FieldLocation) -> Result<bool> {
        let Ok(length) = usize::try_from(location.length) else { return Ok(false) };
        let mut bytes = vec![0u8; length];
        match self.store.read(&location.uri, location.offset, &mut bytes) {
            Ok(()) => Ok(crate::checksum::crc32c(&bytes) == location.crc32c),
            Err(Error::Corrupt { .. }) => Ok(false),
            Err(Error::Io { cause, .. }) if cause.kind() == std::io::ErrorKind::NotFound => Ok(false),
            Err(e) => Err(e),
        }
    }

    /// Splits an identifier again with a dataset's own schema, which must agree on the
    /// dataset key.
    fn resplit(&self, schema: &Schema, identifier: &Key, dataset: &Key) -> Result<crate::schema::SplitKey> {
        let split = schema.split(identifier)?;
        if *split.dataset != *dataset {
            return Err(Error::new(
                ErrorKind::BadRequest,
                format!("data set {dataset} was created with a schema that names it {} for identifier {identifier}", split.dataset),
            ));
        }
        Ok(split)
    }

    /// A dataset's stored schema, parsed once per text.
    fn parse_schema(&mut self, text: &str, dataset: &Key) -> Result<Arc<Schema>> {
        if text == self.schema.text() {
            return Ok(self.schema.clone());
        }
        if let Some(s) = self.schemas.get(text) {
            return Ok(s.clone());
        }
        let schema = Arc::new(Schema::parse(&format!("schema of data set {dataset}"), text)?);
        self.schemas.insert(text.to_string(), schema.clone());
        Ok(schema)
    }

    pub(crate) fn catalogue(&self) -> &dyn Catalogue {
        self.catalogue.as_ref()
    }

    pub(crate) fn store(&self) -> &dyn Store {
        self.store.as_ref()
    }
}
