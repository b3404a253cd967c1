//! The object API on a POSIX file system: pool = directory, container = sub-directory,
//! key-value = directory with one file per key, array = file (as the Lustre runs of the
//! published field-io comparison emulated it).

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::os::unix::fs::FileExt;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};

use fieldstore_core::error::{Error, ErrorKind, IoContext, Result};

use crate::{escape_name, Array, Container, KeyValue, Pool};

/// A pool that is a directory of the file system.
pub struct PosixPool {
    root: PathBuf,
}

impl PosixPool {
    /// The pool in directory `root`, created if missing.
    pub fn new(root: impl Into<PathBuf>) -> Result<Self> {
        let root = root.into();
        std::fs::create_dir_all(&root).ctx("create pool", &root)?;
        Ok(PosixPool { root })
    }
}

impl Pool for PosixPool {
    fn container(&self, name: &str, create: bool) -> Result<Box<dyn Container>> {
        let dir = self.root.join(escape_name(name));
        if create {
            // mkdir races are harmless: every creator ends with the same directory.
            std::fs::create_dir_all(&dir).ctx("create container", &dir)?;
        } else if !dir.is_dir() {
            return Err(Error::new(ErrorKind::NotFound, format!("container {name:?} does not exist in pool {}", self.root.display())));
        }
        Ok(Box::new(PosixContainer { dir }))
    }

    fn remove_container(&self, name: &str) -> Result<()> {
        let dir = self.root.join(escape_name(name));
        match std::fs::remove_dir_all(&dir) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(Error::io("remove container", dir, e)),
            _ => Ok(()),
        }
    }
}

struct PosixContainer {
    dir: PathBuf,
}

impl Container for PosixContainer {
    fn kv(&self, name: &str) -> Result<Box<dyn KeyValue>> {
        let dir = self.dir.join(format!("kv.{}", escape_name(name)));
        std::fs::create_dir_all(&dir).ctx("create key-value", &dir)?;
        Ok(Box::new(PosixKeyValue { dir }))
    }

    fn array(&self, name: &str, create: bool) -> Result<Box<dyn Array>> {
        let path = self.dir.join(format!("array.{}", escape_name(name)));
        let file = OpenOptions::new().read(true).write(true).create(create).open(&path).ctx("open array", &path)?;
        Ok(Box::new(PosixArray { path, file }))
    }
}

struct PosixKeyValue {
    dir: PathBuf,
}

/// Distinguishes temporary files of concurrent puts in one process.
static PUT_COUNTER: AtomicU64 = AtomicU64::new(0);

impl KeyValue for PosixKeyValue {
    /// Written to a temporary file and renamed over the key: readers see the old value or the
    /// new one, never a part.
    fn put(&mut self, key: &str, value: &[u8]) -> Result<()> {
        let path = self.dir.join(escape_name(key));
        let tmp = self.dir.join(format!(".{}.{}.{}", escape_name(key), std::process::id(), PUT_COUNTER.fetch_add(1, Ordering::Relaxed)));
        let mut f = File::create(&tmp).ctx("write key", &tmp)?;
        f.write_all(value).ctx("write key", &tmp)?;
        std::fs::rename(&tmp, &path).ctx("publish key", &path)
    }

    fn get(&self, key: &str) -> Result<Option<Vec<u8>>> {
        let path = self.dir.join(escape_name(key));
        match std::fs::read(&path) {
            Ok(v) => Ok(Some(v)),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(Error::io("read key", path, e)),
        }
    }

    fn keys(&self) -> Result<Vec<String>> {
        let mut out = Vec::new();
        for entry in std::fs::read_dir(&self.dir).ctx("list key-value", &self.dir)? {
            let name = entry.ctx("list key-value", &self.dir)?.file_name().to_string_lossy().into_owned();
            if !name.starts_with('.') {
                out.push(unescape(&name));
            }
        }
        Ok(out)
    }
}

fn unescape(name: &str) -> String {
    let bytes = name.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' && i + 3 <= bytes.len() {
            if let Ok(b) = u8::from_str_radix(&name[i + 1..i + 3], 16) {
                out.push(b);
                i += 3;
                continue;
            }
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

struct PosixArray {
    path: PathBuf,
    file: File,
}

impl Array for PosixArray {
    fn write(&mut self, offset: u64, data: &[u8]) -> Result<()> {
        self.file.write_all_at(data, offset).ctx("write array", &self.path)
    }

    fn read(&self, offset: u64, buf: &mut [u8]) -> Result<()> {
        self.file.read_exact_at(buf, offset).ctx("read array", &self.path)
    }

    fn size(&self) -> Result<u64> {
        Ok(self.file.metadata().ctx("stat array", &self.path)?.len())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn passes_the_object_api_conformance_checks() {
        let dir = tempfile::tempdir().unwrap();
        let pool = PosixPool::new(dir.path().join("pool")).unwrap();
        crate::conformance::check_pool(&pool, "forecast/../x");
        // Nothing escaped the pool directory.
        assert!(std::fs::read_dir(dir.path()).unwrap().all(|e| e.unwrap().file_name() == "pool"));
    }
}
