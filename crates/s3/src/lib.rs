//! fieldstore's S3 backends, over Apache's `object_store` (docs/s3.md says why that client):
//! [`store::S3Store`] keeps each archived field in an object of its own, named from a unique
//! id, so concurrent writers on any number of nodes never collide; [`catalogue::S3Catalogue`]
//! is the object-store catalogue over plain objects and conditional PUTs, so an S3 endpoint
//! alone is enough.
//!
//! ```yaml
//! catalogue: { type: s3, endpoint: "http://127.0.0.1:7480", bucket: fields }
//! store:     { type: s3, endpoint: "http://127.0.0.1:7480", bucket: fields }
//! ```
//!
//! - [`config`]: the `type: s3` sections and credentials;
//! - [`client`]: one S3 endpoint and bucket layout, its requests run on a runtime of the
//!   backend's own, errors mapped to fieldstore's kinds;
//! - [`layout`]: one bucket with a prefix per data set, or a bucket per data set;
//! - [`store`]: the store;
//! - [`catalogue`]: the catalogue;
//! - [`objects`]: the object API of the field-io and ior benchmarks;
//! - [`FACTORY`]: the backend, for the facade's list (module `factory`, which only this root
//!   uses: it opens the others, none of them uses it).
//!
//! `raw`, the baselines of the S3 figures (a raw PUT/GET loop, a LIST and HEADs), is hidden:
//! the bench crate's `bench s3-raw` alone uses it.

pub mod catalogue;
pub mod client;
pub mod config;
mod factory;
pub mod layout;
pub mod objects;
#[doc(hidden)]
pub mod raw;
mod side;
pub mod store;

pub use factory::FACTORY;
