//! The in-tree pairings: POSIX, RADOS (the test cluster's pools), DAOS (the libdaos
//! emulation) and S3 (Ceph's RADOS gateway and SeaweedFS), each on storage of its own: a
//! temporary directory, a namespace prefix of its own in a pool, a root container label of its
//! own, a prefix of its own in the test bucket.

use std::path::Path;

use crate::{Grouping, Site};

/// The backend kinds the tests name: each of `fieldstore::BACKENDS`, plus variants (the POSIX
/// catalogue in FDB5's commit order; RADOS in the replicated size-2 and erasure-coded 2+1
/// pools; S3 on Ceph's RADOS gateway (`s3`) and on SeaweedFS (`s3-seaweed`), one bucket with a
/// prefix per data set, or (`-buckets`) a bucket per data set, and (`-packed`) a store packing
/// a writer's fields of a flush into one object).
pub const KINDS: &[&str] = &[
    "posix",
    "posix-ordered",
    "rados",
    "rados-rep2",
    "rados-ec21",
    "daos",
    "s3",
    "s3-seaweed",
    "s3-buckets",
    "s3-seaweed-buckets",
    "s3-packed",
    "s3-seaweed-packed",
];

/// The pairing of two kinds, if the services both need are there (else the skip is said).
pub fn pairing(catalogue: &str, store: &str) -> Option<Site> {
    if !(available(catalogue) && available(store)) {
        return None;
    }
    let grouping = match store {
        posix if posix.starts_with("posix") => Grouping::Writer,
        packed if packed.ends_with("-packed") => Grouping::Flush,
        _ => Grouping::Field,
    };
    let mut site = Site::new(&format!("{catalogue}+{store}"), grouping, |dir| {
        format!("catalogue: {}\nstore: {}\n", section(catalogue, dir), section(store, dir))
    });
    site.catalogue_described_by = match catalogue {
        "posix" => vec![site.dir().display().to_string(), "(commit: embedded)".into()],
        "posix-ordered" => vec![site.dir().display().to_string(), "(commit: ordered)".into()],
        s3 if s3.starts_with("s3") => vec!["s3 bucket".into()],
        other => vec![format!("{} pool", other.split('-').next().unwrap_or(other))],
    };
    Some(site)
}

/// The pairing of two kinds served by a server in this process ([`Site::served`]), its
/// clients `type: remote`.
pub fn served(catalogue: &str, store: &str) -> Option<Site> {
    pairing(catalogue, store).map(Site::served)
}

/// A backend's config section for a site in `dir`.
fn section(kind: &str, dir: &Path) -> String {
    match kind {
        "posix" => format!("{{type: posix, root: {}, create: true}}", dir.join("root").display()),
        "posix-ordered" => format!("{{type: posix, root: {}, create: true, commit: ordered}}", dir.join("root").display()),
        "rados" => rados_section("FIELDSTORE_TEST_RADOS_POOL", "fieldstore", dir),
        "rados-rep2" => rados_section("FIELDSTORE_TEST_RADOS_POOL_REP2", "fieldstore-rep2", dir),
        "rados-ec21" => rados_section("FIELDSTORE_TEST_RADOS_POOL_EC", "fieldstore-ec21", dir),
        "daos" => {
            let (library, pool) = emulated_daos_pool();
            let unique = dir.file_name().unwrap_or_default().to_string_lossy().replace(|c: char| !c.is_ascii_alphanumeric(), "");
            format!("{{type: daos, pool: {pool}, library: {library}, root_container: 't{}{unique}'}}", std::process::id())
        }
        "s3" => s3_section("FIELDSTORE_TEST_S3_", dir, false, ""),
        "s3-seaweed" => s3_section("FIELDSTORE_TEST_S3_SEAWEED_", dir, false, ""),
        "s3-buckets" => s3_section("FIELDSTORE_TEST_S3_", dir, true, ""),
        "s3-seaweed-buckets" => s3_section("FIELDSTORE_TEST_S3_SEAWEED_", dir, true, ""),
        "s3-packed" => s3_section("FIELDSTORE_TEST_S3_", dir, false, ", pack: true"),
        "s3-seaweed-packed" => s3_section("FIELDSTORE_TEST_S3_SEAWEED_", dir, false, ", pack: true"),
        other => panic!("no test site for backend {other} (known: {})", KINDS.join(", ")),
    }
}

/// An S3 section on the test server whose variables start with `prefix`: in the test bucket,
/// under a prefix of its own; or (`bucket_per_dataset`) in buckets of its own; `extra` ends it.
fn s3_section(prefix: &str, dir: &Path, bucket_per_dataset: bool, extra: &str) -> String {
    let server = fieldstore_testing::s3_server(prefix).expect("an S3 server for an S3 pairing");
    let unique =
        dir.file_name().unwrap_or_default().to_string_lossy().replace(|c: char| !c.is_ascii_alphanumeric(), "").to_ascii_lowercase();
    let place = if bucket_per_dataset {
        format!("bucket_prefix: 't{}-{unique}-'", std::process::id())
    } else {
        format!("bucket: {}, prefix: 'test-{}-{unique}/'", fieldstore_testing::S3_TEST_BUCKET, std::process::id())
    };
    format!(
        "{{type: s3, endpoint: '{}', {place}, access_key_id: '{}', secret_access_key: '{}'{extra}}}",
        server.endpoint, server.access_key, server.secret_key
    )
}

/// A RADOS section in the test cluster's pool named by environment variable `pool_variable`
/// (scripts/ceph-cluster.sh makes and exports them), with a namespace prefix of its own.
fn rados_section(pool_variable: &str, default_pool: &str, dir: &Path) -> String {
    let conf = fieldstore_testing::ceph_conf().expect("a Ceph cluster for a RADOS pairing").display().to_string();
    let pool = fieldstore_testing::rados_pool(pool_variable, default_pool);
    let unique = dir.file_name().unwrap_or_default().to_string_lossy();
    format!("{{type: rados, pool: {pool}, ceph_conf: {conf}, namespace_prefix: 'test-{}-{unique}-'}}", std::process::id())
}

/// The libdaos emulation and the pool the tests use in it (created if missing).
pub fn emulated_daos_pool() -> (String, &'static str) {
    let (library, root) = fieldstore_testing::daos_emulation().expect("the libdaos emulation for a DAOS pairing");
    std::fs::create_dir_all(root.join("tests")).expect("the emulated pool's directory");
    (library, "tests")
}

/// Whether the services a backend needs are there (a skip is said where not).
fn available(kind: &str) -> bool {
    match kind {
        k if k.starts_with("rados") => fieldstore_testing::ceph_conf().is_some(),
        "daos" => fieldstore_testing::daos_emulation().is_some(),
        "s3" => fieldstore_testing::s3_server("FIELDSTORE_TEST_S3_").is_some(),
        "s3-seaweed" | "s3-seaweed-buckets" | "s3-seaweed-packed" => fieldstore_testing::s3_server("FIELDSTORE_TEST_S3_SEAWEED_").is_some(),
        "s3-buckets" | "s3-packed" => fieldstore_testing::s3_server("FIELDSTORE_TEST_S3_").is_some(),
        _ => true,
    }
}

/// Every pairing of the backends this build has (`fieldstore::BACKENDS`), each catalogue with
/// each store, plus the POSIX catalogue in FDB5's commit order with the POSIX store, RADOS
/// as production would run it (fields in an erasure-coded 2+1 pool, the catalogue in a
/// replicated size-2 pool), on the second S3 server its catalogue with its store, the POSIX
/// catalogue with its store and its catalogue with the RADOS store, and on both S3 servers
/// the S3 catalogue and store with a bucket per data set and with a packing store; those whose
/// services are missing are left out, and said.
pub fn all() -> Vec<Site> {
    let catalogues: Vec<&str> = fieldstore::BACKENDS.iter().filter(|f| f.catalogue.is_some()).map(|f| f.name).collect();
    let stores: Vec<&str> = fieldstore::BACKENDS.iter().filter(|f| f.store.is_some()).map(|f| f.name).collect();
    let pairings = catalogues.iter().flat_map(|c| stores.iter().map(move |s| (*c, *s)));
    pairings
        .chain([
            ("posix-ordered", "posix"),
            ("rados-rep2", "rados-ec21"),
            ("s3-seaweed", "s3-seaweed"),
            ("posix", "s3-seaweed"),
            ("s3-seaweed", "rados"),
            ("s3-buckets", "s3-buckets"),
            ("s3-seaweed-buckets", "s3-seaweed-buckets"),
            ("s3", "s3-packed"),
            ("s3-seaweed", "s3-seaweed-packed"),
        ])
        .filter_map(|(c, s)| pairing(c, s))
        .collect()
}
