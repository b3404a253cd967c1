//! Ceph RADOS for fieldstore: connections to a cluster and I/O on its objects through librados,
//! which is loaded at run time ([`ffi`]). Errors name the cluster, pool, namespace and object
//! (as `rados://pool/namespace/object`) and carry the system error librados returned.
//!
//! Every call is bounded in time: connections set librados' monitor and OSD operation
//! timeouts, so an unreachable cluster is an error after [`ClusterConfig::timeout_seconds`],
//! not a hang.

mod aio;
pub mod catalogue;
pub mod config;
mod ffi;
mod naming;
pub mod objects;
mod ops;
mod side;
pub mod store;

pub use config::FACTORY;
/// For tests of every object-store catalogue (RADOS, DAOS, S3 share its crate): a pause inside
/// wipes, where a slow wipe lets an archive in.
#[doc(hidden)]
pub use fieldstore_object_catalogue::{set_wipe_patience, set_wipe_pause};
pub use ops::{Outcome, Pairs, WriteOp};

use std::ffi::CString;
use std::path::PathBuf;
use std::sync::Arc;

use fieldstore_core::error::{Error, ErrorKind, Result};

use ffi::{librados, IoCtxT, RadosT};

/// How to reach a cluster.
#[derive(Clone, Debug)]
pub struct ClusterConfig {
    /// A `ceph.conf`; `None` uses librados' defaults (`CEPH_CONF`, `/etc/ceph/ceph.conf`).
    pub ceph_conf: Option<PathBuf>,
    /// The client's user name without `client.` (`admin` by default).
    pub user: String,
    /// Limit for connecting and for each monitor or OSD operation.
    pub timeout_seconds: u32,
}

impl Default for ClusterConfig {
    fn default() -> Self {
        ClusterConfig { ceph_conf: None, user: "admin".into(), timeout_seconds: 20 }
    }
}

/// A connected cluster handle (librados handles are safe to share between threads).
pub struct Cluster {
    handle: RadosT,
    /// What was connected to, for messages.
    description: String,
}

// SAFETY: librados documents cluster handles as thread-safe.
unsafe impl Send for Cluster {}
// SAFETY: librados documents cluster handles as thread-safe; the handle is configured in
// `connect` before it is shared, and afterwards `&self` only opens I/O contexts on it.
unsafe impl Sync for Cluster {}

/// Turns a negative librados return code into an error about `what`.
fn check(rc: i32, action: &'static str, what: impl FnOnce() -> String) -> Result<i32> {
    if rc == -libc::ETIMEDOUT {
        return Err(Error::new(
            ErrorKind::Timeout,
            format!("{action} {}: no answer within the operation timeout (is the cluster unhealthy? `ceph health detail` says)", what()),
        ));
    }
    if rc < 0 {
        Err(Error::io(action, what(), std::io::Error::from_raw_os_error(-rc)))
    } else {
        Ok(rc)
    }
}

fn c_string(text: &str, what: &str) -> Result<CString> {
    CString::new(text).map_err(|_| Error::new(ErrorKind::BadRequest, format!("{what} {text:?} contains a NUL byte")))
}

impl Cluster {
    /// Connects, or fails within the configured timeout.
    pub fn connect(config: &ClusterConfig) -> Result<Arc<Cluster>> {
        let lib = librados()?;
        let conf_name = config.ceph_conf.as_ref().map_or_else(|| "the default ceph.conf".to_string(), |p| p.display().to_string());
        let description = format!("Ceph cluster of {conf_name} as client.{}", config.user);
        let name = c_string(&format!("client.{}", config.user), "user")?;
        let cluster_name = c_string("ceph", "cluster name")?;
        let mut handle: RadosT = std::ptr::null_mut();
        // SAFETY: valid out-pointer and NUL-terminated strings.
        check(unsafe { (lib.create2)(&mut handle, cluster_name.as_ptr(), name.as_ptr(), 0) }, "create a handle for", || {
            description.clone()
        })?;
        // From here on, dropping `cluster` shuts the handle down.
        let cluster = Cluster { handle, description };
        cluster.read_conf(config.ceph_conf.as_deref())?;
        let timeout = config.timeout_seconds.to_string();
        for option in ["client_mount_timeout", "rados_mon_op_timeout", "rados_osd_op_timeout"] {
            cluster.set(option, &timeout)?;
        }
        // SAFETY: live, configured handle.
        check(unsafe { (lib.connect)(cluster.handle) }, "connect to", || {
            format!("{} (is the cluster up and its monitors reachable? gave up after {timeout} s)", cluster.description)
        })?;
        Ok(Arc::new(cluster))
    }

    /// Reads a ceph.conf, or without one librados' default search (`$CEPH_CONF`,
    /// `/etc/ceph/ceph.conf`, `~/.ceph/config`, `./ceph.conf`).
    fn read_conf(&self, path: Option<&std::path::Path>) -> Result<()> {
        let lib = librados()?;
        let Some(path) = path else {
            // SAFETY: live handle; NULL asks for the default search.
            let rc = unsafe { (lib.conf_read_file)(self.handle, std::ptr::null()) };
            return check(rc, "find a ceph.conf ($CEPH_CONF, /etc/ceph/ceph.conf, ~/.ceph/config, ./ceph.conf) for", || {
                self.description.clone()
            })
            .map(|_| ());
        };
        let text = path.display().to_string();
        if text.contains(|c: char| c == ',' || c.is_whitespace()) {
            // librados would read it as a list of several paths.
            return Err(Error::new(
                ErrorKind::BadConfig,
                format!("ceph.conf path {text:?}: librados cannot read paths that contain spaces or commas"),
            ));
        }
        let path_c = c_string(&text, "ceph.conf path")?;
        // SAFETY: live handle, NUL-terminated path.
        check(unsafe { (lib.conf_read_file)(self.handle, path_c.as_ptr()) }, "read", || text.clone())?;
        Ok(())
    }

    fn set(&self, option: &str, value: &str) -> Result<()> {
        let lib = librados()?;
        let (o, v) = (c_string(option, "option")?, c_string(value, "value")?);
        // SAFETY: live handle, NUL-terminated strings.
        check(unsafe { (lib.conf_set)(self.handle, o.as_ptr(), v.as_ptr()) }, "set option", || format!("{option}={value}"))?;
        Ok(())
    }

    /// An I/O context on `pool`, in `namespace` ("" is the default namespace).
    pub fn io(self: &Arc<Self>, pool: &str, namespace: &str) -> Result<IoCtx> {
        let lib = librados()?;
        let pool_c = c_string(pool, "pool name")?;
        let namespace_c = c_string(namespace, "namespace")?;
        let mut handle: IoCtxT = std::ptr::null_mut();
        // SAFETY: live cluster handle, valid out-pointer.
        let rc = unsafe { (lib.ioctx_create)(self.handle, pool_c.as_ptr(), &mut handle) };
        if rc == -libc::ENOENT {
            return Err(Error::new(ErrorKind::NotFound, format!("pool '{pool}' does not exist in the {}", self.description)));
        }
        check(rc, "open pool", || format!("{pool} of the {}", self.description))?;
        // SAFETY: live I/O context, NUL-terminated namespace (copied by librados).
        unsafe { (lib.ioctx_set_namespace)(handle, namespace_c.as_ptr()) };
        Ok(IoCtx { _cluster: self.clone(), handle, pool: pool.into(), namespace: namespace.into() })
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        if let Ok(lib) = librados() {
            // SAFETY: the handle is live and no I/O context outlives it (each holds an Arc).
            unsafe { (lib.shutdown)(self.handle) };
        }
    }
}

/// I/O contexts of one pool by namespace, opened on first use (librados fixes a context's
/// namespace, and backends address one namespace per dataset).
pub struct Namespaces {
    cluster: Arc<Cluster>,
    pool: String,
    open: std::sync::Mutex<std::collections::HashMap<String, Arc<IoCtx>>>,
}

impl Namespaces {
    /// The namespaces of `pool`; fails now if the pool does not exist.
    pub fn new(cluster: Arc<Cluster>, pool: &str) -> Result<Self> {
        cluster.io(pool, "")?;
        Ok(Namespaces { cluster, pool: pool.into(), open: Default::default() })
    }

    /// The RADOS pool's name.
    pub fn pool(&self) -> &str {
        &self.pool
    }

    /// The I/O context of `namespace`, opened on first use and shared after.
    pub fn get(&self, namespace: &str) -> Result<Arc<IoCtx>> {
        let mut open = self.open.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(io) = open.get(namespace) {
            return Ok(io.clone());
        }
        let io = Arc::new(self.cluster.io(&self.pool, namespace)?);
        open.insert(namespace.to_string(), io.clone());
        Ok(io)
    }
}

/// Objects of one pool and namespace.
pub struct IoCtx {
    /// Keeps the cluster connected while this context exists.
    _cluster: Arc<Cluster>,
    handle: IoCtxT,
    pool: String,
    namespace: String,
}

// SAFETY: librados I/O contexts may be used from any thread; this type never changes its
// namespace after creation, the one operation that is not thread-safe.
unsafe impl Send for IoCtx {}
// SAFETY: as for `Send`: concurrent operations on one librados I/O context are thread-safe,
// and no method of this type sets its namespace, the one operation that is not.
unsafe impl Sync for IoCtx {}

impl IoCtx {
    /// `rados://pool/namespace/object`, for messages.
    pub fn describe(&self, oid: &str) -> String {
        format!("rados://{}/{}/{oid}", self.pool, self.namespace)
    }

    /// Replaces an object's contents (creating it), durably, in one operation; fails at once
    /// on a full pool.
    pub fn write_full(&self, oid: &str, data: &[u8]) -> Result<()> {
        self.apply(oid, &WriteOp::new().write_full(data))?;
        Ok(())
    }

    /// Fills `buf` from `offset`; an object shorter than that is an error.
    pub fn read_exact(&self, oid: &str, offset: u64, buf: &mut [u8]) -> Result<()> {
        let oid_c = c_string(oid, "object name")?;
        let mut filled = 0;
        // librados reads at most INT_MAX bytes per call (its return value is an int).
        while filled < buf.len() {
            let chunk = (buf.len() - filled).min(1 << 30);
            // SAFETY: live context; the destination is valid for `chunk` bytes.
            let rc = unsafe {
                (librados()?.read)(self.handle, oid_c.as_ptr(), buf[filled..].as_mut_ptr().cast(), chunk, offset + filled as u64)
            };
            let n = check(rc, "read", || self.describe(oid))? as usize;
            if n == 0 {
                return Err(self.short_read(oid, buf.len(), offset, filled));
            }
            filled += n;
        }
        Ok(())
    }

    /// The error for a read of `wanted` bytes at `offset` that found only `read` of them.
    pub(crate) fn short_read(&self, oid: &str, wanted: usize, offset: u64, read: usize) -> Error {
        Error::corrupt("object", self.describe(oid), format!("{wanted} bytes at offset {offset} are not all there ({read} read)"))
    }

    /// An object's size, or `None` if it does not exist.
    pub fn size(&self, oid: &str) -> Result<Option<u64>> {
        let oid_c = c_string(oid, "object name")?;
        let (mut size, mut mtime) = (0u64, 0 as libc::time_t);
        // SAFETY: live context, valid out-pointers.
        let rc = unsafe { (librados()?.stat)(self.handle, oid_c.as_ptr(), &mut size, &mut mtime) };
        if rc == -libc::ENOENT {
            return Ok(None);
        }
        check(rc, "stat", || self.describe(oid))?;
        Ok(Some(size))
    }

    /// Deletes an object, also from a full pool; returns whether it existed.
    pub fn remove(&self, oid: &str) -> Result<bool> {
        Ok(self.apply(oid, &WriteOp::new().remove_object())? == Outcome::Applied)
    }
}

impl Drop for IoCtx {
    fn drop(&mut self) {
        if let Ok(lib) = librados() {
            // SAFETY: live context, destroyed once.
            unsafe { (lib.ioctx_destroy)(self.handle) };
        }
    }
}
