//! ior through HDF5, in the layout IOR's HDF5 backend (`ior -a HDF5 -F`, its `aiori-HDF5.c`)
//! gives a file per process when a block is one transfer (`-b` = `-t`, as `bench ior` runs):
//!
//! - each rank writes a file of its own, `DIR/ior-hdf5/testFile.RANK`, RANK in 8 digits (IOR's
//!   name for `-o DIR/testFile -F`);
//! - each segment is a dataset of its own at the file's root, `Dataset-0000.SSSS` (SSSS the
//!   segment from 0, at least 4 digits): one dimension of `-t / 8` 64-bit integers (IOR's
//!   `H5T_NATIVE_LLONG`), contiguous (IOR's default: no `hdf5.chunkSize`), allocated early (as
//!   MPI-IO allocates), with HDF5's default fill value and fill time and object times recorded;
//! - a transfer is one `H5Dwrite` (a read one `H5Dread`) of the whole dataset, made just before
//!   (a read opens it just before), as IOR makes a dataset when a segment starts.
//!
//! IOR goes through MPI-IO (HDF5's `mpio` driver, `MPI_COMM_SELF` for each file with `-F`); this
//! goes through HDF5's default POSIX driver: the same file, without MPI.

use std::path::{Path, PathBuf};

use fieldstore::error::IoContext;
use fieldstore::{Error, ErrorKind, Result};

use super::hdf5_library;
use super::Ior;
use crate::hammer::Phase;
use crate::payload::synthetic;

/// The directory of the files in a pool directory.
const DIRECTORY: &str = "ior-hdf5";

/// IOR's element: `IOR_size_t`, a 64-bit integer.
const ELEMENT: usize = std::mem::size_of::<i64>();

/// The file of `rank` in the pool directory `dir`.
fn file_path(dir: &Path, rank: u32) -> PathBuf {
    dir.join(DIRECTORY).join(format!("testFile.{rank:08}"))
}

/// The dataset of `segment`.
fn dataset_name(segment: usize) -> String {
    format!("Dataset-0000.{segment:04}")
}

/// A transfer's bytes as IOR's elements (the file holds these bytes as they are).
fn elements(transfer: usize) -> Vec<i64> {
    synthetic(transfer).chunks_exact(ELEMENT).map(|b| i64::from_ne_bytes(b.try_into().expect("chunks of 8 bytes"))).collect()
}

/// An HDF5 failure `e` in the file `shown` (and the dataset, where there is one).
fn in_file(shown: &str, e: Error) -> Error {
    Error::caused_by(e.kind(), shown, e)
}

/// Writes the file of `rank`, a dataset per segment.
pub(super) fn write(ior: &Ior, dir: &Path, rank: u32) -> Result<Phase> {
    let path = file_path(dir, rank);
    let parent = dir.join(DIRECTORY);
    std::fs::create_dir_all(&parent).ctx("creating", &parent)?;
    let data = elements(ior.transfer);
    let shown = path.display().to_string();
    let hdf5 = hdf5_library::lock()?;
    // IOR's files are allocated early: MPI-IO's default, which HDF5's POSIX driver is told.
    let properties = hdf5.early_allocation()?;
    Phase::measure("write", |phase| {
        let file = phase.io("open", 0, 0, || hdf5.create_file(&shown)).map_err(|e| in_file(&shown, e))?;
        for s in 0..ior.segments {
            let name = dataset_name(s);
            phase
                .io("transfer", s, ior.transfer as u64, || hdf5.write_dataset(&file, &name, &properties, &data))
                .map_err(|e| in_file(&format!("{shown}, dataset {name}"), e))?;
            phase.fields += 1;
            phase.bytes += ior.transfer as u64;
        }
        phase.io("close", ior.segments, 0, || file.close()).map_err(|e| in_file(&shown, e))
    })
}

/// Reads the file of rank `owner` (another rank's, to defeat caches, like IOR's `-C`) and
/// checks what it reads ([`super::read_back`]).
pub(super) fn read(ior: &Ior, dir: &Path, owner: u32) -> Result<Phase> {
    let path = file_path(dir, owner);
    if !path.is_file() {
        return Err(Error::new(ErrorKind::NotFound, format!("{}: no HDF5 file of rank {owner} (run the write first)", path.display())));
    }
    let reference = elements(ior.transfer);
    let mut values = vec![0i64; reference.len()];
    let shown = path.display().to_string();
    let hdf5 = hdf5_library::lock()?;
    Phase::measure("read", |phase| {
        let file = phase.io("open", 0, 0, || hdf5.open_file(&shown)).map_err(|e| in_file(&shown, e))?;
        for s in 0..ior.segments {
            let name = dataset_name(s);
            if let Err(e) = phase.io("transfer", s, ior.transfer as u64, || hdf5.read_dataset(&file, &name, &mut values)) {
                // Asked only after a failure: a lookup per segment would cost as much again.
                if let Ok(false) = hdf5.exists(&file, &name) {
                    let message = format!("{shown} has no dataset {name}: it holds fewer segments than -s {}", ior.segments);
                    return Err(Error::new(ErrorKind::Corrupt, message));
                }
                return Err(in_file(&format!("{shown}, dataset {name}"), e));
            }
            if !super::read_back(&values, &reference, ior.every_byte) {
                return Err(Error::new(ErrorKind::Corrupt, format!("{shown}, dataset {name}: wrong values")));
            }
            phase.fields += 1;
            phase.bytes += ior.transfer as u64;
        }
        phase.io("close", ior.segments, 0, || file.close()).map_err(|e| in_file(&shown, e))
    })
}

/// Removes what every rank wrote in the pool directory `dir`.
pub(super) fn remove(dir: &Path) -> Result<()> {
    let files = dir.join(DIRECTORY);
    match std::fs::remove_dir_all(&files) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(e).ctx("removing", &files),
        _ => Ok(()),
    }
}
