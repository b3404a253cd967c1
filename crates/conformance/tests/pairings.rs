//! The conformance suite on every in-tree pairing: one test per pairing and property
//! (`posix_rados::locks_wipe_and_where`), skipped with a message where a service is missing;
//! and through `fieldstore serve` (`served_*`: a server in the test over the pairing, the
//! handles its `type: remote` clients).

use fieldstore_conformance::pairing_tests;

pairing_tests!(posix_posix, fieldstore_conformance::sites::pairing("posix", "posix"));
pairing_tests!(posix_rados, fieldstore_conformance::sites::pairing("posix", "rados"));
pairing_tests!(posix_daos, fieldstore_conformance::sites::pairing("posix", "daos"));
pairing_tests!(rados_posix, fieldstore_conformance::sites::pairing("rados", "posix"));
pairing_tests!(rados_rados, fieldstore_conformance::sites::pairing("rados", "rados"));
pairing_tests!(rados_daos, fieldstore_conformance::sites::pairing("rados", "daos"));
pairing_tests!(daos_posix, fieldstore_conformance::sites::pairing("daos", "posix"));
pairing_tests!(daos_rados, fieldstore_conformance::sites::pairing("daos", "rados"));
pairing_tests!(daos_daos, fieldstore_conformance::sites::pairing("daos", "daos"));
pairing_tests!(posix_ordered_posix, fieldstore_conformance::sites::pairing("posix-ordered", "posix"));
pairing_tests!(rados_rep2_rados_ec21, fieldstore_conformance::sites::pairing("rados-rep2", "rados-ec21"));
pairing_tests!(posix_s3, fieldstore_conformance::sites::pairing("posix", "s3"));
pairing_tests!(rados_s3, fieldstore_conformance::sites::pairing("rados", "s3"));
pairing_tests!(daos_s3, fieldstore_conformance::sites::pairing("daos", "s3"));
pairing_tests!(s3_posix, fieldstore_conformance::sites::pairing("s3", "posix"));
pairing_tests!(s3_rados, fieldstore_conformance::sites::pairing("s3", "rados"));
pairing_tests!(s3_daos, fieldstore_conformance::sites::pairing("s3", "daos"));
pairing_tests!(s3_s3, fieldstore_conformance::sites::pairing("s3", "s3"));
pairing_tests!(s3_seaweed_s3_seaweed, fieldstore_conformance::sites::pairing("s3-seaweed", "s3-seaweed"));
pairing_tests!(posix_s3_seaweed, fieldstore_conformance::sites::pairing("posix", "s3-seaweed"));
pairing_tests!(s3_seaweed_rados, fieldstore_conformance::sites::pairing("s3-seaweed", "rados"));
pairing_tests!(s3_buckets_s3_buckets, fieldstore_conformance::sites::pairing("s3-buckets", "s3-buckets"));
pairing_tests!(s3_seaweed_buckets_s3_seaweed_buckets, fieldstore_conformance::sites::pairing("s3-seaweed-buckets", "s3-seaweed-buckets"));
pairing_tests!(s3_s3_packed, fieldstore_conformance::sites::pairing("s3", "s3-packed"));
pairing_tests!(s3_seaweed_s3_seaweed_packed, fieldstore_conformance::sites::pairing("s3-seaweed", "s3-seaweed-packed"));
pairing_tests!(served_posix_posix, fieldstore_conformance::sites::served("posix", "posix"));
pairing_tests!(served_rados_s3, fieldstore_conformance::sites::served("rados", "s3"));
pairing_tests!(served_daos_daos, fieldstore_conformance::sites::served("daos", "daos"));

/// The pairings above are every pairing of the backends this build has: a backend added to
/// `fieldstore::BACKENDS` fails here until its pairings join the list. `fdb5` reads FDB5's
/// databases in place and refuses every write, so the suite's properties (archive, flush,
/// wipe, crashes) are not its own: FDB5 itself is its oracle (crates/fdb5/tests and
/// crates/cli/tests/fdb5_parity.rs).
#[test]
fn every_backend_of_this_build_is_paired() {
    let (paired, read_only) = (["posix", "remote", "rados", "daos", "s3"], ["fdb5"]);
    let built: Vec<&str> = fieldstore::BACKENDS.iter().map(|f| f.name).filter(|n| !read_only.contains(n)).collect();
    assert_eq!(built, paired, "pair every backend of fieldstore::BACKENDS in tests/pairings.rs");
    assert!(read_only.iter().all(|r| fieldstore::BACKENDS.iter().any(|f| f.name == *r)), "the read-only backends are built");
}
