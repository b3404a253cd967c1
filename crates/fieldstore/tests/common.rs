//! Helpers shared by the integration tests: the conformance crate's sites and support.

#![allow(dead_code, unused_imports)]

pub use fieldstore_conformance::sites::{all as sites, emulated_daos_pool, pairing};
pub use fieldstore_conformance::support::*;
pub use fieldstore_conformance::Site;
