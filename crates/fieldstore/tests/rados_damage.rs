//! Damage and failures on the RADOS backends are detected and named: a field object whose
//! bytes changed or that is gone (also while reads are in flight), an undecodable log record,
//! a cluster that cannot be reached (the open fails within the configured timeout), a write
//! refused while in flight (the flush fails and publishes nothing).

mod common;

use std::time::{Duration, Instant};

use common::*;
use fieldstore::{Key, ListOptions};
use fieldstore_object_catalogue::index_log;

fn cluster() -> std::sync::Arc<fieldstore::rados::Cluster> {
    let conf = fieldstore_testing::ceph_conf().expect("a Ceph cluster, as pairing found");
    let config = fieldstore::rados::ClusterConfig { ceph_conf: Some(conf), ..Default::default() };
    fieldstore::rados::Cluster::connect(&config).unwrap()
}

#[test]
fn damaged_objects_and_records_are_reported() {
    let Some(site) = pairing("rados", "rados") else { return };
    let fs = site.open();
    for step in 0..3 {
        let id =
            Key::parse(&format!("class=od,expver=1,stream=oper,date=20231201,time=12,type=fc,levtype=sfc,step={step},param=167")).unwrap();
        fs.archive(&id, &payload(&id, 1000)).unwrap();
    }
    fs.flush().unwrap();
    let listed = fs.list(&request("class=od,step=1"), ListOptions::default()).unwrap();
    let uri = listed.fields[0].location.uri.to_string();
    let (pool, rest) = uri.strip_prefix("rados:").unwrap().split_once('/').unwrap();
    let (namespace, object) = rest.rsplit_once('/').unwrap();
    let cluster = cluster();
    let data = cluster.io(pool, namespace).unwrap();
    data.write(object, 500, b"flipped").unwrap();
    let reader = site.open();
    let err = retrieve(&reader, "class=od,step=1").unwrap_err();
    assert!(err.contains("checksum mismatch") && err.contains("step=1") && err.contains(object), "{err}");
    assert_eq!(retrieve(&reader, "class=od,step=0").unwrap().len(), 1000, "intact fields still read");
    // Retrieves of several fields keep several reads in flight (store.reads_in_flight): the
    // changed bytes are still found, and an object that is gone is named.
    let err = retrieve(&reader, "class=od").unwrap_err();
    assert!(err.contains("checksum mismatch") && err.contains(object), "{err}");
    let gone = fs.list(&request("class=od,step=2"), ListOptions::default()).unwrap().fields[0].location.uri.to_string();
    let gone = gone.rsplit_once('/').unwrap().1;
    assert!(data.remove(gone).unwrap());
    let err = retrieve(&reader, "class=od,step=0/2").unwrap_err();
    assert!(err.contains("read") && err.contains(gone), "{err}");

    // A record no writer could have made, after the real ones: named with its place in the log.
    let index = cluster.io(pool, namespace).unwrap();
    let end = index.size("dataset").unwrap().unwrap();
    let frame = index_log::encode_batch(&[b"\x01not a record".to_vec()], index_log::Sealing::Checksummed);
    index.apply("dataset", &fieldstore::rados::WriteOp::new().append(&frame)).unwrap();
    let err = fs.list(&request("class=od"), ListOptions::default()).unwrap_err().to_string();
    assert!(err.contains("log record") && err.contains(&format!("at byte {end}")) && err.contains("undecodable"), "{err}");
    // A record cut short (no writer appends part of one).
    let fresh = site.open();
    index.apply("dataset", &fieldstore::rados::WriteOp::new().append(&[200, 0, 0, 0, 1])).unwrap();
    let err = fresh.list(&request("class=od"), ListOptions::default()).unwrap_err().to_string();
    assert!(
        err.contains("log record") && err.contains(&format!("at byte {}", end + frame.len() as u64)) && err.contains("cut short"),
        "{err}"
    );
    // A record of another format (a newer fieldstore's) is refused, by name, to readers and writers.
    index.apply("dataset", &fieldstore::rados::WriteOp::new().set("format", b"4")).unwrap();
    assert_refused_as_another_format(&site.open());
}

#[test]
fn an_unreachable_cluster_fails_the_open_within_its_timeout() {
    if !fieldstore_testing::librados() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let conf = dir.path().join("ceph.conf");
    std::fs::write(&conf, "[global]\nmon host = 127.0.0.1:1\nauth client required = none\n").unwrap();
    let yaml = format!(
        "catalogue: {{type: posix, root: {}, create: true}}\nstore: {{type: rados, pool: fieldstore, ceph_conf: {}, timeout_seconds: 2}}\n",
        dir.path().join("root").display(),
        conf.display()
    );
    let started = Instant::now();
    let err = fieldstore::open(&fieldstore::Config::parse("unreachable.yaml", &yaml).unwrap()).err().unwrap().to_string();
    assert!(started.elapsed() < Duration::from_secs(20), "took {:?}", started.elapsed());
    assert!(err.contains("connect to Ceph cluster of") && err.contains("ceph.conf"), "{err}");
    let bad = yaml.replace("timeout_seconds: 2", "timeout_seconds: soon");
    let err = fieldstore::open(&fieldstore::Config::parse("bad.yaml", &bad).unwrap()).err().unwrap().report().to_string();
    assert!(err.contains("store.timeout_seconds (type 'rados'): invalid type: string \"soon\", expected a nonzero u32"), "{err}");
}

#[test]
fn a_write_refused_in_flight_fails_the_flush_and_publishes_nothing() {
    let Some(site) = pairing("rados", "rados") else { return };
    let sections = std::fs::read_to_string(site.config()).unwrap();
    let yaml = sections.replace("store: {type: rados,", "store: {type: rados, writes_in_flight: 4,");
    let fs = fieldstore::open(&fieldstore::Config::parse("in-flight.yaml", &yaml).unwrap()).unwrap();
    let id = |step: u32| {
        Key::parse(&format!("class=od,expver=1,stream=oper,date=20231201,time=12,type=fc,levtype=sfc,step={step},param=167")).unwrap()
    };
    fs.archive(&id(0), &payload(&id(0), 1000)).unwrap();
    // Larger than the OSDs take in one write (osd_max_write_size, 90 MiB by default): sent,
    // and refused while the writer goes on.
    fs.archive(&id(1), &vec![1u8; 100 << 20]).expect("in flight: the refusal comes later");
    let err = fs.flush().unwrap_err().report().to_string();
    assert!(err.contains("write rados://") && err.contains("the 2 field(s) archived since the last flush were not stored"), "{err}");
    // The handle goes on; only what was flushed after the failure is visible.
    fs.archive(&id(2), &payload(&id(2), 1000)).unwrap();
    fs.flush().unwrap();
    let listed = fs.list(&request("class=od"), ListOptions::default()).unwrap();
    let steps: Vec<String> = listed.fields.iter().map(|f| f.element.get("step").unwrap().to_string()).collect();
    assert_eq!(steps, ["2"]);
    assert_eq!(retrieve(&site.open(), "class=od,step=2").unwrap(), payload(&id(2), 1000));

    for (bad, why) in [
        (
            sections.replace("store: {type: rados,", "store: {type: rados, writes_in_flight: 0,"),
            "store.writes_in_flight (type 'rados'): invalid value: integer `0`, expected a nonzero usize",
        ),
        (
            sections.replace("store: {type: rados,", "store: {type: rados, reads_in_flight: -1,"),
            "store.reads_in_flight (type 'rados'): invalid value: integer `-1`, expected a nonzero usize",
        ),
        (
            sections.replace("catalogue: {type: rados,", "catalogue: {type: rados, writes_in_flight: 2,"),
            "catalogue.writes_in_flight (type 'rados'): only a store keeps operations in flight",
        ),
    ] {
        let err = fieldstore::open(&fieldstore::Config::parse("bad.yaml", &bad).unwrap()).err().unwrap().report().to_string();
        assert!(err.contains(why), "{err}");
    }
}

#[test]
fn a_wipe_cut_short_after_its_first_removal_leaves_nothing_visible_and_nothing_corrupt() {
    let Some(site) = pairing("rados", "rados") else { return };
    let fs = site.open();
    let id = |step: u32| {
        Key::parse(&format!("class=od,expver=1,stream=oper,date=20231201,time=12,type=fc,levtype=sfc,step={step},param=167")).unwrap()
    };
    for step in 0..2 {
        fs.archive(&id(step), &payload(&id(step), 1000)).unwrap();
    }
    fs.flush().unwrap();
    let listed = fs.list(&request("class=od"), ListOptions::default()).unwrap();
    let uri = listed.fields[0].location.uri.to_string();
    let (pool, rest) = uri.strip_prefix("rados:").unwrap().split_once('/').unwrap();
    let namespace = rest.rsplit_once('/').unwrap().0;
    let io = cluster().io(pool, namespace).unwrap();
    let before = io.object_names().unwrap().len();

    // A wipe's first removal, and nothing after it (the wiping process killed there).
    assert!(io.remove("dataset").unwrap());
    let err = retrieve(&site.open(), "class=od,step=0").unwrap_err();
    assert!(!err.contains("corrupt"), "no dataset, not a broken one: {err}");
    let leftovers = io.object_names().unwrap();
    assert_eq!(leftovers.len(), before - 1, "index and field objects are left, unreferenced");

    // A writer creates the dataset again; only its own fields are visible.
    let writer = site.open();
    writer.archive(&id(2), &payload(&id(2), 1000)).unwrap();
    writer.flush().unwrap();
    let listed = site.open().list(&request("class=od"), ListOptions::default()).unwrap();
    assert_eq!(listed.fields.iter().map(|f| f.element.get("step").unwrap()).collect::<Vec<_>>(), ["2"]);

    // A whole wipe removes what the data set's creation names, nothing else: objects of
    // another creation in the namespace (here the leftovers of the wipe cut short; in a race,
    // those of a data set archived again meanwhile) stay.
    writer.wipe(&request("class=od,expver=1"), true).unwrap();
    let mut left = io.object_names().unwrap();
    left.sort();
    let mut expected = leftovers;
    expected.sort();
    assert_eq!(left, expected);
}
