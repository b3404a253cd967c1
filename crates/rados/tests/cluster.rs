//! Against the real cluster `scripts/ceph-cluster.sh` starts (`scripts/test.sh` starts one and
//! exports its `DIR/env`). By hand: `scripts/ceph-cluster.sh start /tmp/ceph && set -a &&
//! . /tmp/ceph/env && set +a && cargo test -p fieldstore-rados`.
use std::time::{Duration, Instant};

use fieldstore_rados::{Cluster, ClusterConfig};

/// The test cluster, if there (else the skip is said: `fieldstore_testing`).
fn test_cluster() -> Option<ClusterConfig> {
    Some(ClusterConfig { ceph_conf: Some(fieldstore_testing::ceph_conf()?), ..ClusterConfig::default() })
}

fn pool() -> String {
    fieldstore_testing::rados_pool("FIELDSTORE_TEST_RADOS_POOL", "fieldstore")
}

fn unique(prefix: &str) -> String {
    let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_nanos();
    format!("{prefix}-{}-{nanos}", std::process::id())
}

#[test]
fn objects_round_trip_and_namespaces_keep_them_apart() {
    let Some(config) = test_cluster() else { return };
    let cluster = Cluster::connect(&config).unwrap();
    let ns = unique("ns");
    let io = cluster.io(&pool(), &ns).unwrap();
    let other = cluster.io(&pool(), &unique("other")).unwrap();
    let data: Vec<u8> = (0..3 << 20).map(|i| (i % 251) as u8).collect();
    io.write_full("field", &data).unwrap();
    assert_eq!(io.size("field").unwrap(), Some(data.len() as u64));
    assert_eq!(other.size("field").unwrap(), None, "another namespace does not see it");
    let mut back = vec![0; data.len()];
    io.read_exact("field", 0, &mut back).unwrap();
    assert_eq!(back, data);
    let mut middle = vec![0; 1000];
    io.read_exact("field", 12345, &mut middle).unwrap();
    assert_eq!(middle, data[12345..13345]);
    let mut beyond = vec![0; 10];
    let err = io.read_exact("field", data.len() as u64 - 5, &mut beyond).unwrap_err().to_string();
    assert!(err.contains("not all there") && err.contains(&format!("rados://{}/{ns}/field", pool())), "{err}");
    io.write_full("field", b"shorter").unwrap();
    assert_eq!(io.size("field").unwrap(), Some(7), "write_full replaces");
    assert!(io.remove("field").unwrap());
    assert!(!io.remove("field").unwrap(), "removing a missing object is not an error");
    let err = io.read_exact("field", 0, &mut [0; 1]).unwrap_err().report().to_string();
    assert!(err.contains("No such file or directory"), "{err}");
}

#[test]
fn a_missing_pool_is_named() {
    let Some(config) = test_cluster() else { return };
    let cluster = Cluster::connect(&config).unwrap();
    let err = cluster.io("no-such-pool", "").err().unwrap().to_string();
    assert!(err.contains("pool 'no-such-pool' does not exist"), "{err}");
}

#[test]
fn an_unreachable_cluster_fails_within_the_timeout() {
    // Needs librados, which comes with the test cluster's packages.
    if test_cluster().is_none() {
        return;
    }
    let dir = std::env::temp_dir().join(unique("unreachable"));
    std::fs::create_dir_all(&dir).unwrap();
    // A monitor address nothing listens on (loopback only).
    let conf = dir.join("ceph.conf");
    std::fs::write(
        &conf,
        "[global]\nmon host = 127.0.0.1:1\nauth client required = none\nauth cluster required = none\nauth service required = none\n",
    )
    .unwrap();
    let t = Instant::now();
    let config = ClusterConfig { ceph_conf: Some(conf.clone()), timeout_seconds: 3, ..ClusterConfig::default() };
    let err = Cluster::connect(&config).err().unwrap().to_string();
    assert!(t.elapsed() < Duration::from_secs(30), "took {:?}", t.elapsed());
    assert!(err.contains("connect to Ceph cluster of") && err.contains(&conf.display().to_string()), "{err}");
    let missing = ClusterConfig { ceph_conf: Some(dir.join("missing.conf")), ..ClusterConfig::default() };
    let err = Cluster::connect(&missing).err().unwrap().to_string();
    assert!(err.contains("missing.conf"), "{err}");
    // librados reads a list of paths separated by commas or spaces: such a path is refused.
    let spaced = ClusterConfig { ceph_conf: Some(dir.join("my ceph.conf")), ..ClusterConfig::default() };
    let err = Cluster::connect(&spaced).err().unwrap().to_string();
    assert!(err.contains("paths that contain spaces or commas"), "{err}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn compound_writes_are_all_or_nothing() {
    use fieldstore_rados::{Outcome, WriteOp};
    let Some(config) = test_cluster() else { return };
    let cluster = Cluster::connect(&config).unwrap();
    let io = cluster.io(&pool(), &unique("ops")).unwrap();
    let create = WriteOp::new().create_exclusive().set("seq", b"0").set("schema", b"text");
    assert_eq!(io.apply("dataset", &create).unwrap(), Outcome::Applied);
    assert_eq!(io.apply("dataset", &create).unwrap(), Outcome::Exists, "exclusive creation of an existing object");
    let next = WriteOp::new().compare_equal("seq", b"0").set("seq", b"1").set("log/1", b"first");
    assert_eq!(io.apply("dataset", &next).unwrap(), Outcome::Applied);
    assert_eq!(io.apply("dataset", &next).unwrap(), Outcome::ComparisonFailed, "the guard saw seq=1");
    let guard_on_missing_key = WriteOp::new().compare_equal("nothing", b"0").set("x", b"y");
    assert_eq!(io.apply("dataset", &guard_on_missing_key).unwrap(), Outcome::ComparisonFailed);
    let missing_is_empty = WriteOp::new().compare_equal("nothing", b"").set("empty", b"");
    assert_eq!(io.apply("dataset", &missing_is_empty).unwrap(), Outcome::Applied, "the OSD compares a missing key as empty");
    let got = io.omap_get("dataset", &["seq", "log/1", "x", "missing"]).unwrap().unwrap();
    assert_eq!(got, vec![("log/1".to_string(), b"first".to_vec()), ("seq".to_string(), b"1".to_vec())], "nothing of a failed op applied");
    io.apply("dataset", &WriteOp::new().remove("log/1")).unwrap();
    assert_eq!(io.omap_get("dataset", &["log/1"]).unwrap().unwrap(), vec![]);
    assert_eq!(io.omap_get("no-such-object", &["seq"]).unwrap(), None);
    assert_eq!(io.omap_scan("no-such-object", "", "").unwrap(), None);
    // A wipe's mark must not make a record where the wipe removed one: an omap write alone
    // creates its object, one that asserts the object exists does not.
    let mark = WriteOp::new().assert_exists().set("lock/wiping-x", b"wiping");
    assert_eq!(io.apply("no-such-object", &mark).unwrap(), Outcome::Missing);
    assert_eq!(io.omap_get("no-such-object", &["lock/wiping-x"]).unwrap(), None, "nothing created");
    assert_eq!(io.apply("dataset", &mark).unwrap(), Outcome::Applied);
    // Removal guarded by two values: the identity and the mark of that identity.
    let unmarked = WriteOp::new().compare_equal("seq", b"1").compare_equal("lock/wiping-y", b"wiping").remove_object();
    assert_eq!(io.apply("dataset", &unmarked).unwrap(), Outcome::ComparisonFailed, "another creation's mark");
    let marked = WriteOp::new().compare_equal("seq", b"1").compare_equal("lock/wiping-x", b"wiping").remove_object();
    assert_eq!(io.apply("dataset", &marked).unwrap(), Outcome::Applied);
    assert_eq!(io.omap_get("dataset", &["seq"]).unwrap(), None, "removed");
}

#[test]
fn omap_scans_page_through_many_pairs_in_key_order() {
    use fieldstore_rados::WriteOp;
    let Some(config) = test_cluster() else { return };
    let cluster = Cluster::connect(&config).unwrap();
    let io = cluster.io(&pool(), &unique("scan")).unwrap();
    let keys: Vec<String> = (0..10_000).map(|i| format!("log/{i:08}")).collect();
    let values: Vec<Vec<u8>> = (0..10_000).map(|i: u32| i.to_le_bytes().to_vec()).collect();
    for chunk in keys.iter().zip(&values).collect::<Vec<_>>().chunks(3000) {
        let op = WriteOp::new().set_all(chunk.iter().map(|(k, v)| (k.as_str(), v.as_slice())));
        io.apply("index", &op).unwrap();
    }
    io.apply("index", &WriteOp::new().set("key", b"k").set("lock/list", b"")).unwrap();
    let all = io.omap_scan("index", "", "log/").unwrap().unwrap();
    assert_eq!(all.len(), 10_000, "more than one page, only the prefix");
    assert!(all.iter().zip(&keys).all(|((k, _), want)| k == want), "in key order");
    assert_eq!(all[1234].1, 1234u32.to_le_bytes());
    let tail = io.omap_scan("index", "log/00009989", "log/").unwrap().unwrap();
    assert_eq!(tail.len(), 10, "only what sorts after start_after");
    assert_eq!(io.omap_scan("index", "", "lock/").unwrap().unwrap(), vec![("lock/list".to_string(), vec![])]);
}

#[test]
fn writes_at_offsets_and_listing_a_namespace() {
    let Some(config) = test_cluster() else { return };
    let cluster = Cluster::connect(&config).unwrap();
    let ns = unique("list");
    let io = cluster.io(&pool(), &ns).unwrap();
    io.write("array", 0, b"hello ").unwrap();
    io.write("array", 6, b"world").unwrap();
    let mut back = [0; 11];
    io.read_exact("array", 0, &mut back).unwrap();
    assert_eq!(&back, b"hello world");
    io.write_full("other", b"x").unwrap();
    cluster.io(&pool(), &unique("elsewhere")).unwrap().write_full("not-listed", b"y").unwrap();
    let mut names = io.object_names().unwrap();
    names.sort();
    assert_eq!(names, ["array", "other"], "only this namespace's objects");
}

#[test]
fn the_object_api_on_rados_passes_the_conformance_checks() {
    let Some(config) = test_cluster() else { return };
    let cluster = Cluster::connect(&config).unwrap();
    let pool = fieldstore_rados::objects::RadosPool::new(cluster, &pool(), &unique("run")).unwrap();
    fieldstore_objects::conformance::check_pool(&pool, "forecast/../x");
}

#[test]
fn a_full_pool_fails_writes_at_once_and_keeps_what_it_holds() {
    let Some(config) = test_cluster() else { return };
    let pool = std::env::var("FIELDSTORE_TEST_RADOS_POOL_QUOTA").expect("scripts/ceph-cluster.sh makes a pool with a quota");
    let cluster = Cluster::connect(&config).unwrap();
    let io = cluster.io(&pool, &unique("full")).unwrap();
    let data = vec![7u8; 1 << 20];
    // The monitors mark the pool full a few seconds after it passes its 4 MiB quota; writes
    // are paced so that little lands beyond it meanwhile.
    let deadline = Instant::now() + Duration::from_secs(120);
    let mut written = 0;
    let err = loop {
        let started = Instant::now();
        match io.write_full(&format!("o{written}"), &data) {
            Ok(()) => written += 1,
            Err(e) => break e.report().to_string(),
        }
        assert!(started.elapsed() < Duration::from_secs(10), "a write waited for space");
        assert!(Instant::now() < deadline, "the pool never filled ({written} MiB written)");
        std::thread::sleep(Duration::from_millis(200));
    };
    assert!(err.contains("quota exceeded") && err.contains(&format!("rados://{pool}/")), "{err}");
    let mut back = vec![0u8; data.len()];
    for i in 0..written {
        io.read_exact(&format!("o{i}"), 0, &mut back).unwrap();
        assert!(back == data, "object {i} intact");
        assert!(io.remove(&format!("o{i}")).unwrap(), "removal goes ahead on a full pool");
    }
}

/// `prepare_flush` sends the index objects while the store's writes are in flight: an entry
/// archived after it must still be published, and index objects sent for a flush that is then
/// discarded must never become visible.
#[test]
fn index_objects_sent_early_publish_exactly_what_was_archived() {
    use fieldstore_core::{Catalogue, CatalogueWriter, FieldLocation, Key};

    let Some(config) = test_cluster() else { return };
    let cluster = Cluster::connect(&config).unwrap();
    let catalogue = fieldstore_rados::catalogue::open(cluster, &pool(), &unique("early")).unwrap();
    let mut writer = catalogue.writer().unwrap();
    let dataset = Key::parse("class=od,expver=0001").unwrap();
    let index = Key::parse("date=20260101,time=0000").unwrap();
    let location = |n: u64| FieldLocation { uri: format!("rados:x/y/{n}").into(), offset: 0, length: n, crc32c: None };
    let archive = |writer: &mut Box<dyn CatalogueWriter>, param: &str, n: u64| {
        let element = Key::parse(&format!("step=0,param={param}")).unwrap();
        writer.archive(&dataset, "schema", &index, &element, location(n)).unwrap();
    };

    archive(&mut writer, "discarded", 1);
    assert!(writer.prepare_flush().unwrap().is_empty(), "nothing for the store to embed");
    writer.discard();
    archive(&mut writer, "first", 2);
    writer.prepare_flush().unwrap();
    archive(&mut writer, "after_prepare", 3);
    writer.flush(&[]).unwrap();

    let mut view = catalogue.open(&dataset).unwrap().expect("the dataset exists");
    let indexes = view.indexes().unwrap();
    assert_eq!(indexes.len(), 1, "one flush, one index");
    let mut entries: Vec<(String, u64)> =
        view.entries(&indexes[0]).unwrap().into_iter().map(|(element, at)| (element.to_string(), at.length)).collect();
    entries.sort();
    assert_eq!(entries, [("step=0,param=after_prepare".to_string(), 3), ("step=0,param=first".to_string(), 2)]);
}

/// A flush publishes only into the creation of the dataset its writer found: after a wipe it
/// fails, saying so, and after the dataset was created again it leaves the new one alone.
#[test]
fn a_flush_after_a_wipe_fails_and_publishes_nothing() {
    use fieldstore_core::{Catalogue, FieldLocation, Key};

    let Some(config) = test_cluster() else { return };
    let cluster = Cluster::connect(&config).unwrap();
    let prefix = unique("wiped");
    let (writing, reading) = (
        fieldstore_rados::catalogue::open(cluster.clone(), &pool(), &prefix).unwrap(),
        fieldstore_rados::catalogue::open(cluster, &pool(), &prefix).unwrap(),
    );
    let (mut writer, mut other) = (writing.writer().unwrap(), reading.writer().unwrap());
    let dataset = Key::parse("class=od,expver=0001").unwrap();
    let index = Key::parse("date=20260101,time=0000").unwrap();
    let element = Key::parse("step=0,param=1").unwrap();
    let location = FieldLocation { uri: "rados:x/y/z".into(), offset: 0, length: 1, crc32c: None };
    let visible = |catalogue: &fieldstore_rados::catalogue::RadosCatalogue| {
        catalogue.open(&dataset).unwrap().map(|mut view| view.indexes().unwrap().len())
    };

    writer.archive(&dataset, "schema", &index, &element, location.clone()).unwrap();
    writer.flush(&[]).unwrap();
    writer.archive(&dataset, "schema", &index, &element, location.clone()).unwrap();
    writing.wipe_dataset(&dataset).unwrap();
    let err = writer.flush(&[]).unwrap_err().to_string();
    assert!(err.contains("was wiped while this flush published its fields"), "{err}");
    assert_eq!(visible(&reading), None, "no dataset object was made by the failed flush");

    writer.archive(&dataset, "schema", &index, &element, location.clone()).unwrap();
    reading.wipe_dataset(&dataset).unwrap();
    other.archive(&dataset, "schema", &index, &element, location.clone()).unwrap();
    other.flush(&[]).unwrap();
    let err = writer.flush(&[]).unwrap_err().to_string();
    assert!(err.contains("was wiped while this flush published its fields"), "{err}");
    assert_eq!(visible(&reading), Some(1), "only the new creation's flush is visible");

    // The handle goes on: its next archive writes into the dataset as it now is.
    writer.archive(&dataset, "schema", &index, &element, location).unwrap();
    writer.flush(&[]).unwrap();
    assert_eq!(visible(&reading), Some(2));
}

/// A write that would make an object larger than the cluster allows (a dataset's log at its
/// end) fails with an error that says so.
#[test]
fn an_object_past_the_largest_size_is_refused_by_name() {
    use fieldstore_rados::WriteOp;

    let Some(config) = test_cluster() else { return };
    let cluster = Cluster::connect(&config).unwrap();
    let io = cluster.io(&pool(), &unique("largest")).unwrap();
    // The test cluster's osd_max_object_size (scripts/ceph-cluster.sh), written in two halves
    // (one write may carry at most osd_max_write_size, 90 MiB by default).
    let half = vec![7u8; 64 << 20];
    io.write_full("log", &half).unwrap();
    io.apply("log", &WriteOp::new().append(&half)).unwrap();
    let err = io.apply("log", &WriteOp::new().append(b"x")).unwrap_err().to_string();
    assert!(err.contains("larger than the cluster allows (osd_max_object_size)") && err.contains("/log"), "{err}");
    assert_eq!(io.size("log").unwrap(), Some(128 << 20), "nothing appended");
    io.remove("log").unwrap();
}
