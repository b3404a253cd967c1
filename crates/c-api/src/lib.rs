//! fieldstore's C API: every function of FDB5's `fdb_c.h` (5.25), so C and Fortran programs
//! written against FDB5 build and run unchanged against `libfieldstore_c`, and fieldstore's
//! own additions with a `fieldstore_` prefix (`fieldstore_c.h`: axes, stats, lock/unlock,
//! where, and why nothing matched). Both headers are in the repository's `include/`
//! directory; `docs/c-api.md` documents building against them and each difference from FDB5.
//!
//! A thin leaf over [`fieldstore::FieldStore`], which is `Send + Sync`: a handle may be used
//! from many threads at once. Every function returns an `FdbErrorValues` code; no panic
//! crosses the boundary ([`ffi::call`] turns one into `FDB_ERROR_UNKNOWN_EXCEPTION`), and every
//! error sets the message `fdb_error_string` returns (per thread) and calls the failure
//! handler, as FDB5 does.
//!
//! Modules: [`ffi`] (return codes, errors, pointer arguments), [`request`] (keys, requests,
//! split keys), [`handle`] (handles, archive, flush), [`list`], [`reader`] (retrieve and the
//! data reader), [`admin`] (wipe and purge), [`extras`] (the `fieldstore_` functions).

pub mod admin;
pub mod extract;
pub mod extras;
pub mod ffi;
pub mod handle;
pub mod list;
pub mod reader;
pub mod request;
