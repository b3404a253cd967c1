//! Side objects ([`SideObjects`]) on POSIX: files `side/NAME` in the data set's directory,
//! each written under a hidden temporary name and renamed into place, so a reader sees one
//! whole or not at all. They are not synced: what they hold is derived from the data, and
//! their readers check it (a power loss may leave one empty or lose it; that costs a reader
//! time, never a value). A move takes them with the data set's other files; a wipe removes
//! them with its directory. Readers map them: an extractor needs a few records of each.

use std::io::Write;
use std::path::{Path, PathBuf};

use fieldstore_core::backend::{check_side_object_name, Mapping, SideObjects};
use fieldstore_core::error::{Error, ErrorKind, IoContext, Result};
use fieldstore_core::unique::unique_suffix;
use fieldstore_core::Key;

use crate::store::PosixStore;

/// The directory of a data set's side objects, inside its directory.
pub(crate) const SIDE_DIR: &str = "side";

impl SideObjects for PosixStore {
    fn put_side_object(&self, dataset: &Key, name: &str, bytes: &[u8]) -> Result<()> {
        check_side_object_name(name)?;
        let Some(dir) = self.dataset_dir(dataset)? else {
            return Err(Error::new(ErrorKind::NotFound, format!("data set {dataset} has no directory: nothing to keep beside")));
        };
        let side = dir.join(SIDE_DIR);
        match std::fs::create_dir(&side) {
            Err(e) if e.kind() != std::io::ErrorKind::AlreadyExists => return Err(Error::io("create directory", &side, e)),
            _ => {}
        }
        let temporary = side.join(format!(".{name}.{}", unique_suffix()));
        let written = std::fs::File::create(&temporary).and_then(|mut f| f.write_all(bytes)).ctx("write side object", &temporary);
        let placed = written.and_then(|()| std::fs::rename(&temporary, side.join(name)).ctx("rename side object", &temporary));
        if placed.is_err() {
            let _ = std::fs::remove_file(&temporary);
        }
        placed
    }

    fn side_object_names(&self, dataset: &Key) -> Result<Vec<String>> {
        let Some(dir) = self.dataset_dir(dataset)? else { return Ok(Vec::new()) };
        let names = crate::listing::names(&dir.join(SIDE_DIR), "read side objects directory")?;
        // Temporary files (hidden) and anything else not named as side objects are not ones.
        Ok(names.into_iter().filter_map(|n| n.into_string().ok()).filter(|n| check_side_object_name(n).is_ok()).collect())
    }

    fn get_side_object(&self, dataset: &Key, name: &str) -> Result<Option<Vec<u8>>> {
        check_side_object_name(name)?;
        let Some(dir) = self.dataset_dir(dataset)? else { return Ok(None) };
        let path = dir.join(SIDE_DIR).join(name);
        match std::fs::read(&path) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            other => other.ctx("read side object", &path).map(Some),
        }
    }

    fn map_side_object(&self, dataset: &Key, name: &str) -> Result<Option<Mapping>> {
        check_side_object_name(name)?;
        if !self.maps {
            return Ok(self.get_side_object(dataset, name)?.map(|bytes| Box::new(bytes) as Mapping));
        }
        let Some(dir) = self.dataset_dir(dataset)? else { return Ok(None) };
        let path = dir.join(SIDE_DIR).join(name);
        let file = match std::fs::File::open(&path) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            other => other.ctx("open side object", &path)?,
        };
        if file.metadata().ctx("read side object", &path)?.len() == 0 {
            return Ok(Some(Box::new(Vec::<u8>::new())));
        }
        // SAFETY: a side object's file is never written once in place (it is written under a
        // hidden name, then renamed; a wipe unlinks it, which leaves a mapping whole), so the
        // mapped bytes do not change while they are read, as the mapping requires.
        match unsafe { memmap2::Mmap::map(&file) } {
            Ok(mapped) => Ok(Some(Box::new(mapped))),
            // Out of mappings (or a file system that maps none): read whole instead.
            Err(_) => Ok(self.get_side_object(dataset, name)?.map(|bytes| Box::new(bytes) as Mapping)),
        }
    }
}

/// Removes a data set directory's side objects and their directory (a wipe), whatever they
/// are: a temporary file of a writer meanwhile fails its rename, as it should.
pub(crate) fn remove_side_objects(dataset_dir: &Path) {
    let side: PathBuf = dataset_dir.join(SIDE_DIR);
    if let Ok(names) = crate::listing::names(&side, "read side objects directory") {
        for name in names {
            let _ = std::fs::remove_file(side.join(name));
        }
    }
    let _ = std::fs::remove_dir(&side);
}
