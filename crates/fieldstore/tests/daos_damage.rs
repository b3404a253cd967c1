//! Damage on the DAOS backends (on the libdaos emulation) is detected and named: an array
//! whose bytes changed, an undecodable log record, an index KV that was overwritten.

mod common;

use common::*;
use fieldstore::daos::{object_class, parse_oid, ObjectType, Pool, PoolConfig};
use fieldstore::{Key, ListOptions};

#[test]
fn damaged_arrays_records_and_indexes_are_reported() {
    let Some(site) = pairing("daos", "daos") else { return };
    let fs = site.open();
    for step in 0..3 {
        let id =
            Key::parse(&format!("class=od,expver=1,stream=oper,date=20231201,time=12,type=fc,levtype=sfc,step={step},param=167")).unwrap();
        fs.archive(&id, &payload(&id, 1000)).unwrap();
    }
    fs.flush().unwrap();
    let listed = fs.list(&request("class=od,step=1"), ListOptions::default()).unwrap();
    let uri = listed.fields[0].location.uri.to_string();
    let (pool, rest) = uri.strip_prefix("daos:").unwrap().split_once('/').unwrap();
    let (label, oid) = rest.split_once('/').unwrap();
    let (library, _) = emulated_daos_pool();
    let pool = Pool::connect(&PoolConfig { library, pool: pool.into(), system: None }).unwrap();
    let container = pool.open_container(label).unwrap().unwrap();
    container.byte_array(parse_oid(oid).unwrap()).unwrap().write(500, b"flipped").unwrap();
    let reader = site.open();
    let err = retrieve(&reader, "class=od,step=1").unwrap_err();
    assert!(err.contains("checksum mismatch") && err.contains("step=1") && err.contains(oid), "{err}");
    assert_eq!(retrieve(&reader, "class=od,step=0").unwrap().len(), 1000, "intact fields still read");

    // The dataset KV holds the log: slot 1 is the flush above; slot 2 is a record no writer
    // could have made.
    let dataset_kv = container.kv(container.object_id(0, 0, ObjectType::KeyValue, object_class("OC_S1").unwrap()).unwrap()).unwrap();
    assert!(dataset_kv.get("log/00000000000000000001").unwrap().is_some());
    assert!(dataset_kv.insert("log/00000000000000000002", b"\x01\x00\x00\x00\x05\x00\x00\x00junk!").unwrap());
    let err = fs.list(&request("class=od"), ListOptions::default()).unwrap_err().to_string();
    assert!(err.contains("log record") && err.contains("log/00000000000000000002"), "{err}");
    dataset_kv.remove("log/00000000000000000002").unwrap();
    // A record of another format (a newer fieldstore's) is refused, by name, to readers and writers.
    dataset_kv.put("format", b"4").unwrap();
    assert_refused_as_another_format(&site.open());
    // A data set of format 1 (before compaction records) is read as before, and never compacted.
    dataset_kv.put("format", b"1").unwrap();
    let id = Key::parse("class=od,expver=1,stream=oper,date=20231201,time=12,type=fc,levtype=sfc,step=7,param=167").unwrap();
    fs.archive(&id, b"second flush").unwrap();
    fs.flush().unwrap();
    let old = site.open();
    assert_eq!(retrieve(&old, "class=od,step=7").unwrap(), b"second flush");
    let compaction = &old.compact(&request("class=od,expver=1")).unwrap().datasets[0].compaction;
    assert_eq!((compaction.indexes_before, compaction.indexes_written), (2, 0), "{compaction:?}");

    // An index KV overwritten with bytes that are no index.
    let Some(site) = pairing("daos", "posix") else { return };
    let fs = site.open();
    let id = Key::parse("class=od,expver=1,stream=oper,date=20231201,time=12,type=fc,levtype=sfc,step=0,param=167").unwrap();
    fs.archive(&id, b"field").unwrap();
    fs.flush().unwrap();
    let where_is = fs.where_is(&request("class=od")).unwrap();
    let label = where_is[0].catalogue.rsplit(' ').next().unwrap().to_string();
    let container = pool.open_container(&label).unwrap().unwrap();
    let first_index = container.object_id(1, 0, ObjectType::KeyValue, object_class("OC_S1").unwrap()).unwrap();
    let index_kv = container.kv(first_index).unwrap();
    assert!(index_kv.get("entries").unwrap().is_some(), "the first reserved id holds the first index");
    index_kv.put("entries", b"not an index").unwrap();
    let err = retrieve(&site.open(), "class=od,step=0").unwrap_err();
    assert!(err.contains("index KV") && err.contains("undecodable"), "{err}");
}
