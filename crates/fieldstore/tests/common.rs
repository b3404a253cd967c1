//! Helpers shared by the integration tests: the conformance crate's sites and support.

#![allow(dead_code, unused_imports)]

pub use fieldstore_conformance::sites::{all as sites, emulated_daos_pool, pairing};
pub use fieldstore_conformance::support::*;
pub use fieldstore_conformance::Site;

/// Asserts that `fs` refuses the data set `class=od,expver=1,...` of the damage tests, whose
/// record says format 4, as unsupported and naming the format: to a reader and to a writer.
pub fn assert_refused_as_another_format(fs: &fieldstore::FieldStore) {
    use fieldstore::error::ErrorKind;
    let err = fs.list(&request("class=od"), fieldstore::ListOptions::default()).map(|m| m.fields.len()).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Unsupported, "{err}");
    assert!(err.to_string().contains("format 4") && err.to_string().contains("reads formats 1 to 3"), "{err}");
    let id = fieldstore::Key::parse("class=od,expver=1,stream=oper,date=20231201,time=12,type=fc,levtype=sfc,step=9,param=167").unwrap();
    let err = fs.archive(&id, b"field").and_then(|()| fs.flush()).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Unsupported, "{err}");
}
