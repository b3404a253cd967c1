//! Checks every implementation of the object API must pass, run by each implementation's
//! tests against a real pool (a directory, a Ceph pool, ...).

use crate::Pool;

/// Exercises containers, key-values and arrays in a container named `name` (which should
/// contain characters that must not escape their place, like `/` and `..`); panics on the
/// first broken promise. Removes the container at the end.
pub fn check_pool(pool: &dyn Pool, name: &str) {
    assert!(pool.container(&format!("{name}-missing"), false).is_err(), "opening a missing container without create");
    let c = pool.container(name, true).unwrap();
    assert!(pool.container(name, true).is_ok(), "creating twice converges on one container");
    let mut kv = c.kv("index").unwrap();
    kv.put("step=1,param=130", b"array-1").unwrap();
    kv.put("step=1,param=130", b"array-2").unwrap();
    kv.put("..", b"dots").unwrap();
    assert_eq!(kv.get("step=1,param=130").unwrap().as_deref(), Some(&b"array-2"[..]), "a put replaces");
    assert_eq!(kv.get("nothing").unwrap(), None);
    let mut keys = kv.keys().unwrap();
    keys.sort();
    assert_eq!(keys, ["..", "step=1,param=130"]);
    assert_eq!(c.kv("other").unwrap().keys().unwrap(), Vec::<String>::new(), "key-values are separate");
    assert!(c.array("field", false).is_err(), "opening a missing array without create");
    let mut a = c.array("field", true).unwrap();
    a.write(0, b"hello").unwrap();
    a.write(5, b" world").unwrap();
    let mut buf = [0u8; 11];
    a.read(0, &mut buf).unwrap();
    assert_eq!(&buf, b"hello world");
    assert_eq!(a.size().unwrap(), 11);
    assert!(a.read(6, &mut [0u8; 10]).is_err(), "reading past the end is an error");
    let reopened = pool.container(name, false).unwrap().array("field", false).unwrap();
    assert_eq!(reopened.size().unwrap(), 11, "another handle sees the array");
    pool.remove_container(name).unwrap();
    assert!(pool.container(name, false).is_err(), "a removed container is gone");
    pool.remove_container(name).unwrap();
}
