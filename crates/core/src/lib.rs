//! fieldstore-core: the data model and API of fieldstore, independent of any storage backend.
//!
//! - [`key`]: identifiers and their dataset / collocation / element parts;
//! - [`types`] and [`schema`]: FDB5's schema language;
//! - [`request`]: the MARS request language;
//! - [`config`]: the YAML configuration; [`factory`]: backends by their `type:` name;
//! - [`backend`]: the `Catalogue` and `Store` traits each backend implements; [`indexing`]
//!   [`index_log`] and [`codec`]: what catalogues share (pending entries, index summaries,
//!   the log records of the object-store catalogues, binary records);
//! - [`api`]: `FieldStore`, which archives, flushes, retrieves, lists and administers fields
//!   through any catalogue and store.

pub mod api;
pub mod axis;
pub mod backend;
pub mod checksum;
pub mod codec;
pub mod config;
pub mod cores;
pub mod error;
pub mod factory;
pub mod index_log;
pub mod indexing;
pub mod key;
pub mod recent;
pub mod request;
pub mod schema;
pub mod types;
pub mod unique;
pub mod window;

pub use api::{Archiver, FieldEntry, FieldStore, ListOptions};
pub use axis::AxisValues;
pub use backend::{
    Catalogue, CatalogueWriter, Commit, Compaction, ControlAction, DatasetView, FieldLocation, IndexInfo, StartedRead, Store, StoreWriter,
};
pub use config::Config;
pub use error::{Error, ErrorKind, Report, Result};
pub use key::Key;
pub use request::Request;
pub use schema::Schema;
