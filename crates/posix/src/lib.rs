//! fieldstore's POSIX backend, the embedded default (also for Lustre and GPFS): a
//! [`PosixCatalogue`] (per-dataset append-only TOC pointing at per-writer index segments) and
//! a [`PosixStore`] (per-writer data files). `docs/posix-layout.md` describes the files and
//! why they keep fieldstore's guarantees.

mod catalogue;
pub mod config;
pub mod embedded;
mod in_use;
mod large_reads;
mod listing;
pub mod moving;
pub mod naming;
pub mod placement;
mod side;
mod store;
pub mod toc;
mod write_back;
mod writers;

pub use catalogue::{CommitMode, PosixCatalogue, PosixCatalogueWriter};
pub use config::FACTORY;
pub use store::{PosixStore, PosixStoreWriter};
