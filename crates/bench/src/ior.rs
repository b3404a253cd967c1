//! `ior`: IOR's "easy" case in segments mode. Each process writes one array (file or object)
//! of `segments` transfers of `transfer` bytes, then reads it back: the ideal bulk bandwidth
//! of a storage system, against which the field benchmarks are judged.

use fieldstore::Result;
use fieldstore_objects::Pool;

use crate::hammer::Phase;
use crate::payload::synthetic;
use crate::roles::Role;

/// IOR's `-s` and `-t` (`-b` equals `-t`).
#[derive(Clone, Copy, Debug)]
pub struct Ior {
    /// Transfers per array (`-s`).
    pub segments: usize,
    /// Bytes per transfer (`-t`).
    pub transfer: usize,
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

    /// Reads the array of rank `owner` (another rank's, to defeat caches, like IOR's -C).
    pub fn read(&self, pool: &dyn Pool, owner: u32) -> Result<Phase> {
        let mut buf = vec![0u8; self.transfer];
        let reference = synthetic(self.transfer);
        Phase::measure("read", |phase| {
            let array = phase.io("open", 0, 0, || pool.container(CONTAINER, false)?.array(&array_name(owner), false))?;
            let expected = (self.segments * self.transfer) as u64;
            let size = array.size()?;
            if size < expected {
                return Err(fieldstore::Error::new(
                    fieldstore::error::ErrorKind::Corrupt,
                    format!("ior array of rank {owner} holds {size} bytes, expected {expected}"),
                ));
            }
            for s in 0..self.segments {
                phase.io("transfer", s, buf.len() as u64, || array.read((s * self.transfer) as u64, &mut buf))?;
                if buf != reference {
                    return Err(fieldstore::Error::new(
                        fieldstore::error::ErrorKind::Corrupt,
                        format!("ior rank {owner} segment {s}: wrong bytes"),
                    ));
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
    fn writes_then_reads_every_segment_and_checks_them() {
        let dir = tempfile::tempdir().unwrap();
        let pool = fieldstore_objects::posix::PosixPool::new(dir.path()).unwrap();
        let ior = Ior { segments: 8, transfer: 4096 };
        crate::hammer::keep_events(true);
        let w = ior.write(&pool, 0).unwrap();
        assert_eq!((w.fields, w.bytes, w.events.len()), (8, 8 * 4096, 9), "one open and eight transfers");
        let r = ior.read(&pool, 0).unwrap();
        assert_eq!((r.fields, r.bytes), (8, 8 * 4096));
        assert!(ior.read(&pool, 1).is_err(), "rank 1 wrote nothing");
        let longer = Ior { segments: 9, transfer: 4096 };
        assert!(longer.read(&pool, 0).unwrap_err().to_string().contains("expected"));
        Ior::remove(&pool).unwrap();
        assert!(ior.read(&pool, 0).is_err(), "removed");
    }
}
