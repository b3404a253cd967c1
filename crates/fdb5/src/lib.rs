//! fieldstore-fdb5: FDB5's TOC databases read in place, never written. A database is a
//! directory under an FDB5 root holding its `toc` (an append-only log of records, [`toc`]),
//! the `schema` it was made with, index files of B-trees ([`btree`]) and data files of GRIB
//! messages; [`Database`] puts them together as FDB5's own readers see them: the visible
//! indexes newest first, masked ones left out, sub-TOCs read in place. The format is written
//! down in docs/fdb5-format.md.
//!
//! As a backend (`type: fdb5`, [`FACTORY`]), the databases are a catalogue
//! ([`Fdb5Catalogue`]) and a store ([`Fdb5Store`]) that refuse every change.

pub mod btree;
mod catalogue;
mod config;
pub mod database;
mod store;
mod stream;
pub mod toc;

pub use catalogue::Fdb5Catalogue;
pub use config::{Fdb5Config, Fdb5Root, Root, RootEntry, FACTORY};
pub use database::{Database, Index, IndexFiles};
pub use store::Fdb5Store;
pub use stream::DecodeError;
