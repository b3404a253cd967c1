//! `ior`: IOR's "easy" case in segments mode. Each process writes one array (file or object)
//! of `segments` transfers of `transfer` bytes, then reads it back: the ideal bulk bandwidth
//! of a storage system, against which the field benchmarks are judged. It writes through the
//! pool's own interface (files, RADOS, DAOS or S3 objects) or, as IOR's `-a HDF5 -F`, an HDF5
//! file per process ([`Api::Hdf5`]).

use std::path::{Path, PathBuf};

use fieldstore::{Error, ErrorKind, Result};
use fieldstore_objects::Pool;

use crate::hammer::Phase;
use crate::payload::synthetic;
use crate::roles::Role;

mod hdf5_files;
mod hdf5_library;

/// The interface ior writes and reads through (IOR's `-a`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum Api {
    /// The pool's own: files in a directory, or RADOS, DAOS or S3 objects (`--pool`).
    #[default]
    Pool,
    /// HDF5 (IOR's `-a HDF5 -F`): an HDF5 file per process in a directory pool, a dataset per
    /// segment.
    Hdf5,
}

impl Api {
    /// Its name on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Api::Pool => "pool",
            Api::Hdf5 => "hdf5",
        }
    }
}

/// The directory of a `--pool` spec that HDF5 files can go in: HDF5 writes files, so the pool
/// must be a directory.
pub fn hdf5_directory(pool: &str) -> Result<PathBuf> {
    match fieldstore::factory::pool_type(pool) {
        (fieldstore::factory::DIRECTORY_POOL, dir) => Ok(PathBuf::from(dir)),
        (kind, _) => {
            let daos = if kind == "daos" { "; HDF5 on DAOS needs DAOS's HDF5 connector, which is not part of fieldstore" } else { "" };
            let message = format!("--api hdf5 writes HDF5 files, so --pool must be a directory, not {pool:?} ({kind}){daos}");
            Err(Error::new(ErrorKind::Unsupported, message))
        }
    }
}

/// IOR's `-s` and `-t` (`-b` equals `-t`).
#[derive(Clone, Copy, Debug)]
pub struct Ior {
    /// Transfers per array (`-s`).
    pub segments: usize,
    /// Bytes per transfer (`-t`).
    pub transfer: usize,
    /// Whether a read compares every byte with what was written (IOR's `-R`), not only a
    /// value of each page ([`read_back`]).
    pub every_byte: bool,
}

/// Whether a transfer read back (`got`) holds what was written (`written`). IOR checks
/// nothing unless told (`-R`); comparing every byte costs a page-cache read a fair part of its
/// bandwidth (docs/performance.md, "ior through HDF5"), so by default one value of each 4 KiB
/// page and the last are compared: a short read, or a page of other bytes (zeros, another
/// file's), is still found. (Every page of a transfer holds the same bytes, so pages out of
/// place are not, even byte by byte.)
pub fn read_back<T: PartialEq>(got: &[T], written: &[T], every_byte: bool) -> bool {
    if every_byte {
        return got == written;
    }
    let stride = (4096 / std::mem::size_of::<T>()).max(1);
    got.len() == written.len() && got.iter().step_by(stride).eq(written.iter().step_by(stride)) && got.last() == written.last()
}

const CONTAINER: &str = "ior";

fn array_name(rank: u32) -> String {
    format!("ior.{rank}")
}

impl Ior {
    /// Writes this rank's array, one transfer per segment.
    pub fn write(&self, pool: &dyn Pool, rank: u32) -> Result<Phase> {
        let data = synthetic(self.transfer);
        Phase::measure("write", |phase| {
            let mut array = phase.io("open", 0, 0, || pool.container(CONTAINER, true)?.array(&array_name(rank), true))?;
            for s in 0..self.segments {
                phase.io("transfer", s, data.len() as u64, || array.write((s * self.transfer) as u64, &data))?;
                phase.fields += 1;
                phase.bytes += data.len() as u64;
            }
            Ok(())
        })
    }

    /// Plays `role` ([`Role::of_pairs`]): writes the owner's array, or reads it.
    pub fn run(&self, pool: &dyn Pool, role: Role) -> Result<Phase> {
        if role.reads {
            self.read(pool, role.owner)
        } else {
            self.write(pool, role.owner)
        }
    }

    /// Removes what every rank wrote.
    pub fn remove(pool: &dyn Pool) -> Result<()> {
        pool.remove_container(CONTAINER)
    }

    /// Refuses what `api` cannot run, naming it: HDF5 transfers are of 64-bit integers, and
    /// HDF5's library must load (said once, before ranks start).
    pub fn check(&self, api: Api) -> Result<()> {
        if api != Api::Hdf5 {
            return Ok(());
        }
        if !self.transfer.is_multiple_of(8) {
            let message = format!("-t {}: with --api hdf5 a transfer is of 64-bit integers, so a multiple of 8 bytes", self.transfer);
            return Err(Error::new(ErrorKind::BadRequest, message));
        }
        hdf5_library::lock().map(drop)
    }

    /// Plays `role` through HDF5, with the files in directory `dir`, laid out as IOR's HDF5
    /// backend lays out a file per process (`hdf5_files`).
    pub fn run_hdf5(&self, dir: &Path, role: Role) -> Result<Phase> {
        self.check(Api::Hdf5)?;
        if role.reads {
            hdf5_files::read(self, dir, role.owner)
        } else {
            hdf5_files::write(self, dir, role.owner)
        }
    }

    /// Removes what every rank wrote through HDF5 in directory `dir`.
    pub fn remove_hdf5(dir: &Path) -> Result<()> {
        hdf5_files::remove(dir)
    }

    /// Reads the array of rank `owner` (another rank's, to defeat caches, like IOR's -C).
    pub fn read(&self, pool: &dyn Pool, owner: u32) -> Result<Phase> {
        let mut buf = vec![0u8; self.transfer];
        let reference = synthetic(self.transfer);
        Phase::measure("read", |phase| {
            let array = phase.io("open", 0, 0, || pool.container(CONTAINER, false)?.array(&array_name(owner), false))?;
            let expected = (self.segments * self.transfer) as u64;
            let size = array.size()?;
            if size < expected {
                return Err(Error::new(ErrorKind::Corrupt, format!("ior array of rank {owner} holds {size} bytes, expected {expected}")));
            }
            for s in 0..self.segments {
                phase.io("transfer", s, buf.len() as u64, || array.read((s * self.transfer) as u64, &mut buf))?;
                if !read_back(&buf, &reference, self.every_byte) {
                    return Err(Error::new(ErrorKind::Corrupt, format!("ior rank {owner} segment {s}: wrong bytes")));
                }
                phase.fields += 1;
                phase.bytes += buf.len() as u64;
            }
            Ok(())
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_read_back_is_checked_at_each_page_or_at_every_byte() {
        let written = synthetic(3 * 4096 + 100);
        let mut got = written.clone();
        assert!(read_back(&got, &written, false) && read_back(&got, &written, true));
        got[4096 + 1] ^= 1;
        assert!(read_back(&got, &written, false), "a byte within a page is found with every_byte only");
        assert!(!read_back(&got, &written, true));
        for changed in [0, 4096, 3 * 4096, written.len() - 1] {
            let mut got = written.clone();
            got[changed] ^= 1;
            assert!(!read_back(&got, &written, false), "{changed}: each page's first value and the last are compared");
        }
        assert!(!read_back(&written[1..], &written, false), "a short read");
        let mut zeros = written.clone();
        zeros[2 * 4096..3 * 4096].fill(0);
        assert!(!read_back(&zeros, &written, false), "a page of zeros");
    }

    #[test]
    fn writes_then_reads_every_segment_and_checks_them() {
        let dir = tempfile::tempdir().unwrap();
        let pool = fieldstore_objects::posix::PosixPool::new(dir.path()).unwrap();
        let ior = Ior { segments: 8, transfer: 4096, every_byte: true };
        crate::hammer::keep_events(true);
        let w = ior.write(&pool, 0).unwrap();
        assert_eq!((w.fields, w.bytes, w.events.len()), (8, 8 * 4096, 9), "one open and eight transfers");
        let r = ior.read(&pool, 0).unwrap();
        assert_eq!((r.fields, r.bytes), (8, 8 * 4096));
        assert!(ior.read(&pool, 1).is_err(), "rank 1 wrote nothing");
        let longer = Ior { segments: 9, ..ior };
        assert!(longer.read(&pool, 0).unwrap_err().to_string().contains("expected"));
        Ior::remove(&pool).unwrap();
        assert!(ior.read(&pool, 0).is_err(), "removed");
    }
}
