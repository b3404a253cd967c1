//! How the POSIX store copies large reads out of the page cache: with `pread` (the kernel
//! copies) or from a read-only mapping of the file (user space copies). Which is faster
//! depends on the machine, by a wide margin both ways (docs/performance.md): on one machine
//! type here the kernel copied at ~2.3 GB/s and a copy from the mapping ran at 4.5-9 GB/s; on
//! another the kernel copied at ~19 GB/s, and setting up the mapping's page tables made mapped
//! reads 1.4-1.7x slower than `pread`. So a store handle times both on the same bytes for its
//! first few large reads and then keeps the faster one.

use std::fs::File;
use std::os::unix::fs::FileExt;
use std::sync::atomic::{AtomicU32, AtomicU64, AtomicU8, Ordering::Relaxed};
use std::time::Instant;

/// Reads at least this large may copy from a mapping; smaller ones always use `pread`.
pub const LARGE_READ: usize = 256 << 10;

/// Large reads that time both methods before one is chosen.
const RACES: u32 = 3;

/// Most bytes of a read that each method copies in a race (the race's whole cost).
const RACE_BYTES: usize = 1 << 20;

const UNDECIDED: u8 = 0;
const PREAD: u8 = 1;
const MAPPED: u8 = 2;

/// The copy method of one store handle's large reads, chosen by measurement.
pub struct LargeReads {
    method: AtomicU8,
    races: AtomicU32,
    pread_nanos: AtomicU64,
    mapped_nanos: AtomicU64,
}

impl Default for LargeReads {
    fn default() -> Self {
        LargeReads {
            method: AtomicU8::new(UNDECIDED),
            races: AtomicU32::new(0),
            pread_nanos: AtomicU64::new(0),
            mapped_nanos: AtomicU64::new(0),
        }
    }
}

impl LargeReads {
    /// Fills `buf` from `file` at `offset`; a range beyond the end of the file is
    /// `UnexpectedEof`.
    pub fn read(&self, file: &File, offset: u64, buf: &mut [u8]) -> std::io::Result<()> {
        if buf.len() < LARGE_READ {
            return file.read_exact_at(buf, offset);
        }
        match self.method.load(Relaxed) {
            PREAD => file.read_exact_at(buf, offset),
            MAPPED => read_mapped(file, offset, buf),
            _ => self.race(file, offset, buf),
        }
    }

    /// Reads the first [`RACE_BYTES`] of the range once to bring them into the page cache,
    /// then once timed by each method, then the whole range; after [`RACES`] races, keeps the
    /// faster method.
    fn race(&self, file: &File, offset: u64, buf: &mut [u8]) -> std::io::Result<()> {
        let sample_len = RACE_BYTES.min(buf.len());
        let sample = &mut buf[..sample_len];
        file.read_exact_at(sample, offset)?;
        let started = Instant::now();
        read_mapped(file, offset, sample)?;
        self.mapped_nanos.fetch_add(started.elapsed().as_nanos() as u64, Relaxed);
        let started = Instant::now();
        file.read_exact_at(sample, offset)?;
        self.pread_nanos.fetch_add(started.elapsed().as_nanos() as u64, Relaxed);
        file.read_exact_at(buf, offset)?;
        if self.races.fetch_add(1, Relaxed) + 1 >= RACES {
            let mapped_wins = self.mapped_nanos.load(Relaxed) < self.pread_nanos.load(Relaxed);
            self.method.store(if mapped_wins { MAPPED } else { PREAD }, Relaxed);
        }
        Ok(())
    }
}

/// Copies `buf.len()` bytes at `offset` from a read-only mapping of the file. The size is
/// checked first, because touching a mapping beyond the end of its file raises SIGBUS: data
/// files are only ever appended to and removed (a removed file's pages stay mapped), never
/// truncated, so a range inside the file stays inside it.
fn read_mapped(file: &File, offset: u64, buf: &mut [u8]) -> std::io::Result<()> {
    let size = file.metadata()?.len();
    if offset.checked_add(buf.len() as u64).is_none_or(|end| end > size) {
        return Err(std::io::ErrorKind::UnexpectedEof.into());
    }
    // SAFETY: the range lies inside the file (checked above) and data files are never
    // truncated or rewritten in place, so the mapped bytes stay valid while they are copied.
    let map = unsafe { memmap2::MmapOptions::new().offset(offset).len(buf.len()).populate().map(file)? };
    buf.copy_from_slice(&map);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn data_file(len: usize) -> (tempfile::NamedTempFile, Vec<u8>) {
        let bytes: Vec<u8> = (0..len).map(|i| (i * 31 % 251) as u8).collect();
        let mut file = tempfile::NamedTempFile::new().unwrap();
        std::io::Write::write_all(&mut file, &bytes).unwrap();
        (file, bytes)
    }

    #[test]
    fn every_read_returns_the_bytes_before_and_after_the_choice() {
        let (file, bytes) = data_file(4 * LARGE_READ);
        let reads = LargeReads::default();
        for round in 0..RACES + 2 {
            assert_eq!(reads.method.load(Relaxed) != UNDECIDED, round >= RACES, "round {round}");
            let offset = (round as usize * 4099) % LARGE_READ;
            let mut buf = vec![0; LARGE_READ + 17];
            reads.read(file.as_file(), offset as u64, &mut buf).unwrap();
            assert!(buf == bytes[offset..offset + buf.len()], "round {round}");
        }
        let mut small = [0; 100];
        reads.read(file.as_file(), 5, &mut small).unwrap();
        assert!(small == bytes[5..105]);
    }

    #[test]
    fn a_range_past_the_end_is_unexpected_eof_for_both_methods() {
        let (file, _) = data_file(2 * LARGE_READ);
        let mut buf = vec![0; LARGE_READ + 1];
        for method in [PREAD, MAPPED, UNDECIDED] {
            let reads = LargeReads::default();
            reads.method.store(method, Relaxed);
            let err = reads.read(file.as_file(), LARGE_READ as u64, &mut buf).unwrap_err();
            assert_eq!(err.kind(), std::io::ErrorKind::UnexpectedEof, "method {method}");
        }
    }
}
