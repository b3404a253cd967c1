//! fieldstore's S3 backends, over Apache's `object_store` (docs/s3.md says why that client):
//! [`store::S3Store`] keeps each archived field in an object of its own, named from a unique
//! id, so concurrent writers on any number of nodes never collide.
//!
//! ```yaml
//! store: { type: s3, endpoint: "http://127.0.0.1:7480", bucket: fields, path_style: true }
//! ```
//!
//! - [`config`]: the `type: s3` sections, credentials, and the backend's [`FACTORY`];
//! - [`client`]: one S3 endpoint and bucket layout, its requests run on a runtime of the
//!   backend's own, errors mapped to fieldstore's kinds;
//! - [`store`]: the store.

pub mod client;
pub mod config;
pub mod store;

pub use config::FACTORY;
