//! The open handles of this process: what each `daos_handle_t` cookie stands for.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Mutex;

use fieldstore_daos_sys::daos_handle_t;
use fieldstore_daos_sys::errno::DER_NO_HDL;

pub enum Handle {
    Pool { dir: PathBuf },
    Container { dir: PathBuf },
    KeyValue { dir: PathBuf },
    Array { dir: PathBuf, cell_size: u64 },
}

pub struct Handles {
    table: Mutex<(u64, BTreeMap<u64, Handle>)>,
}

pub static HANDLES: Handles = Handles { table: Mutex::new((0, BTreeMap::new())) };

impl Handles {
    pub fn insert(&self, handle: Handle) -> daos_handle_t {
        let mut table = self.table.lock().unwrap();
        table.0 += 1;
        let cookie = table.0;
        table.1.insert(cookie, handle);
        daos_handle_t { cookie }
    }

    pub fn remove(&self, handle: daos_handle_t) -> Result<(), i32> {
        self.table.lock().unwrap().1.remove(&handle.cookie).map(drop).ok_or(DER_NO_HDL)
    }

    fn find<T>(&self, handle: daos_handle_t, pick: impl FnOnce(&Handle) -> Option<T>) -> Result<T, i32> {
        self.table.lock().unwrap().1.get(&handle.cookie).and_then(pick).ok_or(DER_NO_HDL)
    }

    pub fn pool_dir(&self, handle: daos_handle_t) -> Result<PathBuf, i32> {
        self.find(handle, |h| match h {
            Handle::Pool { dir } => Some(dir.clone()),
            _ => None,
        })
    }

    pub fn container_dir(&self, handle: daos_handle_t) -> Result<PathBuf, i32> {
        self.find(handle, |h| match h {
            Handle::Container { dir } => Some(dir.clone()),
            _ => None,
        })
    }

    pub fn kv_dir(&self, handle: daos_handle_t) -> Result<PathBuf, i32> {
        self.find(handle, |h| match h {
            Handle::KeyValue { dir } => Some(dir.clone()),
            _ => None,
        })
    }

    pub fn array(&self, handle: daos_handle_t) -> Result<(PathBuf, u64), i32> {
        self.find(handle, |h| match h {
            Handle::Array { dir, cell_size } => Some((dir.clone(), *cell_size)),
            _ => None,
        })
    }
}
