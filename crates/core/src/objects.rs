//! The object API of the DAOS and Ceph designs (docs/daos.md, docs/rados.md,
//! docs/benchmarks.md): a pool holds containers; a container holds key-value objects and
//! arrays. The field-io and ior benchmarks run on it, so they run on every backend that
//! implements these traits; a backend's [`Factory`](crate::factory::Factory) opens its pool.
//! The crate `fieldstore-objects` has the POSIX implementation and the checks every
//! implementation passes.

use crate::error::Result;

/// A pool of containers.
pub trait Pool: Send + Sync {
    /// Opens a container, creating it if `create` (creation races converge on one container).
    fn container(&self, name: &str, create: bool) -> Result<Box<dyn Container>>;
    /// Removes a container and everything in it.
    fn remove_container(&self, name: &str) -> Result<()>;
}

/// A container of key-values and arrays.
pub trait Container: Send {
    /// Opens the key-value object `name`, which need not have been created.
    fn kv(&self, name: &str) -> Result<Box<dyn KeyValue>>;
    /// Opens an array, creating it if `create`.
    fn array(&self, name: &str, create: bool) -> Result<Box<dyn Array>>;
}

/// A key-value object. A `put` is visible to every reader once it returns.
pub trait KeyValue: Send {
    /// Sets `key` to `value`, replacing any earlier value.
    fn put(&mut self, key: &str, value: &[u8]) -> Result<()>;
    /// The value of `key`; `None` if it has none.
    fn get(&self, key: &str) -> Result<Option<Vec<u8>>>;
    /// Every key, in no particular order.
    fn keys(&self) -> Result<Vec<String>>;
}

/// A byte array. Writes are persistent and visible when they return.
pub trait Array: Send {
    /// Writes `data` at `offset`, growing the array as needed.
    fn write(&mut self, offset: u64, data: &[u8]) -> Result<()>;
    /// Fills `buf` from `offset`; reading beyond the end is an error.
    fn read(&self, offset: u64, buf: &mut [u8]) -> Result<()>;
    /// The array's size in bytes.
    fn size(&self) -> Result<u64>;
}
