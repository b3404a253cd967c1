//! fieldstore-core: the data model and API of fieldstore, independent of any storage backend.
//!
//! - [`key`]: identifiers and their dataset / collocation / element parts;
//! - [`types`] and [`schema`]: FDB5's schema language;
//! - [`request`]: the MARS request language;
//! - [`config`]: the YAML configuration; [`factory`]: backends by their `type:` name;
//! - [`backend`]: the `Catalogue` and `Store` traits each backend implements; [`objects`]: the
//!   object API of the pools a backend may offer the benchmarks; [`indexing`]: what
//!   catalogues share (pending entries, index summaries);
//! - [`api`]: `FieldStore`, which archives, flushes, retrieves, lists and administers fields
//!   through any catalogue and store.
//!
//! The toolkits the backend crates of this workspace share (binary records, unique names,
//! write windows, caches of recent items) are public only for them: hidden from the docs and
//! no part of the API.

pub mod api;
pub mod axis;
pub mod backend;
pub mod checksum;
pub mod config;
pub mod error;
pub mod factory;
pub mod indexing;
pub mod key;
pub mod objects;
pub mod parallel;
pub mod request;
pub mod schema;
pub mod types;
pub mod union;

mod cores;

// The toolkits of the backend crates (see above).
#[doc(hidden)]
pub mod codec;
#[doc(hidden)]
pub mod recent;
#[doc(hidden)]
pub mod unique;
#[doc(hidden)]
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
