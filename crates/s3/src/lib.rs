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
//! - [`config`]: the `type: s3` sections, credentials, and the backend's [`FACTORY`];
//! - [`client`]: one S3 endpoint and bucket layout, its requests run on a runtime of the
//!   backend's own, errors mapped to fieldstore's kinds;
//! - [`layout`]: one bucket with a prefix per data set, or a bucket per data set;
//! - [`store`]: the store;
//! - [`catalogue`]: the catalogue;
//! - [`objects`]: the object API of the field-io and ior benchmarks;
//! - [`raw`]: the baselines of the S3 figures (a raw PUT/GET loop, a LIST and HEADs).

pub mod catalogue;
pub mod client;
pub mod config;
pub mod layout;
pub mod objects;
pub mod raw;
pub mod store;

pub use config::FACTORY;
