//! The DAOS handles and the object API, through the libdaos emulation (loaded by `dlopen` as
//! a real libdaos would be, built with the workspace). Needs DAOS_EMULATION_ROOT, which
//! scripts/test.sh sets; without it the tests say they skip.

use std::sync::Arc;

use fieldstore_daos::naming::hashed_oid;
use fieldstore_daos::objects::DaosPool;
use fieldstore_daos::{object_class, ObjectType, Pool, PoolConfig};

/// The emulation's pool `pool` (the emulation is built with the workspace; else the skip is
/// said: `fieldstore_testing`).
fn config(pool: &str) -> Option<PoolConfig> {
    let (library, _) = fieldstore_testing::daos_emulation()?;
    Some(PoolConfig { library, pool: pool.into(), system: None })
}

/// The tests' pool, made if missing.
fn pool() -> Option<Arc<Pool>> {
    let (_, root) = fieldstore_testing::daos_emulation()?;
    std::fs::create_dir_all(root.join("daos-crate")).unwrap();
    Some(Pool::connect(&config("daos-crate")?).unwrap())
}

/// A container label of its own for each test (tests share the pool).
fn label(test: &str) -> String {
    format!("{test}-{}", std::process::id())
}

#[test]
fn a_missing_pool_or_library_is_named() {
    let Some(no_pool) = config("no-such-pool") else { return };
    let error = Pool::connect(&no_pool).err().unwrap().to_string();
    assert!(error.contains("no-such-pool") && error.contains("DER_NONEXIST"), "{error}");
    let mut missing = no_pool;
    missing.library = "/nonexistent/libdaos.so.2".into();
    let error = Pool::connect(&missing).err().unwrap().report().to_string();
    assert!(error.contains("/nonexistent/libdaos.so.2"), "{error}");
}

#[test]
fn containers_are_created_once_and_destroyed_with_their_objects() {
    let Some(pool) = pool() else { return };
    let name = label("containers");
    let creators: Vec<bool> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..4).map(|_| s.spawn(|| pool.create_container(&name).unwrap())).collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    assert_eq!(creators.iter().filter(|&&c| c).count(), 1, "exactly one racing creator wins: {creators:?}");
    let container = pool.open_container(&name).unwrap().unwrap();
    let first = container.alloc_oids(10).unwrap();
    assert_eq!(container.alloc_oids(5).unwrap(), first + 10, "id batches do not overlap");
    let kv = container.kv(container.object_id(0, 0, ObjectType::KeyValue, object_class("OC_S1").unwrap()).unwrap()).unwrap();
    kv.put("k", b"v").unwrap();
    assert!(pool.destroy_container(&name).unwrap());
    assert!(pool.open_container(&name).unwrap().is_none());
    assert!(kv.put("k", b"again").is_err(), "a destroyed container's objects are gone, not brought back");
    assert!(!pool.destroy_container(&name).unwrap());
    assert!(pool.create_container("not/a/label").is_err());
}

#[test]
fn key_values_insert_once_list_everything_and_hold_any_size() {
    let Some(pool) = pool() else { return };
    let name = label("kv");
    pool.create_container(&name).unwrap();
    let container = pool.open_container(&name).unwrap().unwrap();
    let (lo, hi) = hashed_oid("kv");
    let kv = container.kv(container.object_id(lo, hi, ObjectType::KeyValue, 0).unwrap()).unwrap();
    assert!(kv.insert("slot", b"first").unwrap());
    assert!(!kv.insert("slot", b"second").unwrap(), "a conditional insert does not replace");
    assert_eq!(kv.get("slot").unwrap().as_deref(), Some(&b"first"[..]));
    assert_eq!(kv.get("nothing").unwrap(), None);
    kv.put("empty", b"").unwrap();
    assert_eq!(kv.get("empty").unwrap().as_deref(), Some(&b""[..]), "an empty value is not a missing one");
    let big = vec![7u8; 100_000];
    kv.put("big", &big).unwrap();
    assert_eq!(kv.get("big").unwrap().unwrap(), big, "values larger than the first guess");
    let long_key = "k".repeat(300);
    kv.put(&long_key, b"long").unwrap();
    for i in 0..600 {
        kv.put(&format!("key{i:04}"), b"").unwrap();
    }
    let mut keys = kv.keys().unwrap();
    keys.sort();
    assert_eq!(keys.len(), 604, "listing goes on past one batch");
    assert!(keys.contains(&long_key) && keys.contains(&"key0599".to_string()));
    kv.remove("slot").unwrap();
    kv.remove("slot").unwrap();
    assert_eq!(kv.get("slot").unwrap(), None);
    assert!(kv.put("bad\0key", b"").is_err());
    pool.destroy_container(&name).unwrap();
}

#[test]
fn arrays_read_what_was_written_and_refuse_reads_past_the_end() {
    let Some(pool) = pool() else { return };
    let name = label("arrays");
    pool.create_container(&name).unwrap();
    let container = pool.open_container(&name).unwrap().unwrap();
    let oid = container.object_id(container.alloc_oids(1).unwrap(), 0, ObjectType::ByteArray, 0).unwrap();
    let array = container.byte_array(oid).unwrap();
    array.write(0, b"hello world").unwrap();
    let mut buf = [0u8; 5];
    container.byte_array(oid).unwrap().read(6, &mut buf).unwrap();
    assert_eq!(&buf, b"world");
    assert_eq!(array.size().unwrap(), 11);
    let error = array.read(8, &mut [0u8; 10]).unwrap_err().to_string();
    assert!(error.contains("holds 11"), "{error}");
    let created = container.object_id(1, 1, ObjectType::Array, 0).unwrap();
    assert!(container.open_array(created).unwrap().is_none());
    assert!(container.create_array(created).unwrap().is_some());
    assert!(container.create_array(created).unwrap().is_none(), "created once");
    assert!(container.open_array(created).unwrap().is_some());
    array.destroy().unwrap();
    pool.destroy_container(&name).unwrap();
}

#[test]
fn the_object_api_conforms() {
    let Some(pool) = pool() else { return };
    let objects = DaosPool::new(pool, &format!("conformance{}", std::process::id()), object_class("OC_S2").unwrap()).unwrap();
    fieldstore_objects::conformance::check_pool(&objects, "forecast/../x=1,y=2");
}
