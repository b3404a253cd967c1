//! How the POSIX store copies large reads out of the page cache: with `pread` (the kernel
//! copies) or from a read-only mapping of the read's whole range, made with its page tables
//! filled at once (`MAP_POPULATE`; user space copies). Which is faster depends on the machine
//! and on how the file's pages lie in memory, by a wide margin both ways (docs/performance.md):
//! on one machine type here the kernel copied at ~2.3 GB/s and a copy from the mapping ran at
//! 4.5-9 GB/s; on another the kernel copied at ~19 GB/s, and setting up the mapping's page
//! tables made mapped reads 1.4-1.7x slower than `pread`; on the Xeon type the mapped copy of
//! 16 MiB reads took 0.26 s per GiB against `pread`'s 0.29 s. So a store handle times the two
//! on its first large reads, taking turns, and then keeps the one faster per byte. The reads
//! timed are the caller's own (no byte is read twice to measure), each whole with what the
//! caller does with its pieces, which is the same for both.
//!
//! A read is a [`Source`] the store copies out of in pieces ([`Source::copy`]), so that the
//! caller can check each piece while it is still in the core's cache.

use std::fs::File;
use std::os::unix::fs::FileExt;
use std::sync::atomic::{AtomicU32, AtomicU64, AtomicU8, Ordering::Relaxed};
use std::time::Instant;

/// Reads at least this large may copy from a mapping; smaller ones always use `pread`.
pub const LARGE_READ: usize = 256 << 10;

/// Large reads each method makes, timed, before one is chosen.
const RACES: u32 = 3;

const PREAD: u8 = 0;
const MAPPED: u8 = 1;
const UNDECIDED: u8 = 2;

/// The copy method of one store handle's large reads, chosen by measurement.
pub struct LargeReads {
    method: AtomicU8,
    /// Large reads started while undecided: even ones map, odd ones `pread`.
    turns: AtomicU32,
    /// Per method: reads timed, their nanoseconds and their bytes.
    timed: [AtomicU32; 2],
    nanos: [AtomicU64; 2],
    bytes: [AtomicU64; 2],
}

impl Default for LargeReads {
    fn default() -> Self {
        LargeReads {
            method: AtomicU8::new(UNDECIDED),
            turns: AtomicU32::new(0),
            timed: Default::default(),
            nanos: Default::default(),
            bytes: Default::default(),
        }
    }
}

/// `len` bytes of a file from `offset`, to copy out of in pieces.
pub struct Source<'a> {
    file: &'a File,
    offset: u64,
    len: usize,
    /// The range mapped, for a mapped copy.
    map: Option<memmap2::Mmap>,
    /// For a read timed while the methods race: its handle's tallies, its method and start.
    race: Option<(&'a LargeReads, u8, Instant)>,
}

impl LargeReads {
    /// The `len` bytes of `file` at `offset`, copied out of by this handle's method (while it
    /// is undecided, by the method whose turn it is, timed). A range beyond the end of the
    /// file is `UnexpectedEof`, here or at the copy of the piece that reaches past the end.
    pub fn source<'a>(&'a self, file: &'a File, offset: u64, len: usize) -> std::io::Result<Source<'a>> {
        let (method, race) = match self.method.load(Relaxed) {
            _ if len < LARGE_READ => (PREAD, None),
            UNDECIDED => {
                let method = if self.turns.fetch_add(1, Relaxed).is_multiple_of(2) { MAPPED } else { PREAD };
                (method, Some((self, method, Instant::now())))
            }
            decided => (decided, None),
        };
        let map = if method == MAPPED { Some(map_range(file, offset, len)?) } else { None };
        Ok(Source { file, offset, len, map, race })
    }

    /// Whether this handle has found copying from a mapping its faster way (so lending a
    /// mapping, which saves the copy, is faster still).
    pub fn maps(&self) -> bool {
        self.method.load(Relaxed) == MAPPED
    }

    /// Large reads that always copy with `pread`, never racing a mapping.
    pub fn copying() -> Self {
        LargeReads { method: AtomicU8::new(PREAD), ..LargeReads::default() }
    }

    /// Decides the method as if the race had: mapped copies or `pread`.
    #[cfg(test)]
    pub(crate) fn decide(&self, mapped: bool) {
        self.method.store(if mapped { MAPPED } else { PREAD }, Relaxed);
    }

    /// Counts a timed read; once each method has made [`RACES`], keeps the faster per byte.
    fn record(&self, method: u8, bytes: usize, nanos: u64) {
        let m = usize::from(method);
        self.nanos[m].fetch_add(nanos, Relaxed);
        self.bytes[m].fetch_add(bytes as u64, Relaxed);
        self.timed[m].fetch_add(1, Relaxed);
        if self.timed.iter().all(|t| t.load(Relaxed) >= RACES) {
            // Nanoseconds per byte, compared without division.
            let per_byte =
                |m: u8| u128::from(self.nanos[usize::from(m)].load(Relaxed)) * u128::from(self.bytes[usize::from(1 - m)].load(Relaxed));
            let faster = if per_byte(MAPPED) < per_byte(PREAD) { MAPPED } else { PREAD };
            self.method.store(faster, Relaxed);
        }
    }
}

impl Source<'_> {
    /// Copies the bytes `at..at + out.len()` of the source (from its start) into `out`.
    pub fn copy(&self, at: usize, out: &mut [u8]) -> std::io::Result<()> {
        match &self.map {
            Some(map) => {
                let bytes = at.checked_add(out.len()).and_then(|end| map.get(at..end)).ok_or(std::io::ErrorKind::UnexpectedEof)?;
                out.copy_from_slice(bytes);
                Ok(())
            }
            None => self.file.read_exact_at(out, self.offset + at as u64),
        }
    }

    /// Ends a read whose every piece was copied: a timed one counts in the race.
    pub fn finish(self) {
        if let Some((reads, method, started)) = self.race {
            reads.record(method, self.len, u64::try_from(started.elapsed().as_nanos()).unwrap_or(u64::MAX));
        }
    }
}

/// A read-only mapping of `len` bytes of `file` at `offset`, its page tables filled. The size
/// is checked first, because touching a mapping beyond the end of its file raises SIGBUS:
/// data files are only ever appended to and removed (a removed file's pages stay mapped),
/// never truncated, so a range inside the file stays inside it.
pub fn map_range(file: &File, offset: u64, len: usize) -> std::io::Result<memmap2::Mmap> {
    let size = file.metadata()?.len();
    if offset.checked_add(len as u64).is_none_or(|end| end > size) {
        return Err(std::io::ErrorKind::UnexpectedEof.into());
    }
    // SAFETY: the range lies inside the file (checked above) and data files are never
    // truncated or rewritten in place (only appended to, and removed, which keeps a mapping's
    // pages), so the mapped bytes stay valid for as long as the mapping lives: one copy, or a
    // server's send of a mapping lent (`MappedReads`).
    unsafe { memmap2::MmapOptions::new().offset(offset).len(len).populate().map(file) }
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

    /// Reads `len` bytes at `offset` through a source, in pieces of `piece`.
    fn read(reads: &LargeReads, file: &File, offset: usize, len: usize, piece: usize) -> std::io::Result<Vec<u8>> {
        let mut buf = vec![0; len];
        let source = reads.source(file, offset as u64, len)?;
        for (i, part) in buf.chunks_mut(piece).enumerate() {
            source.copy(i * piece, part)?;
        }
        source.finish();
        Ok(buf)
    }

    #[test]
    fn every_read_returns_the_bytes_before_and_after_the_choice() {
        let (file, bytes) = data_file(4 * LARGE_READ);
        let reads = LargeReads::default();
        for round in 0..2 * RACES + 2 {
            assert_eq!(reads.method.load(Relaxed) != UNDECIDED, round >= 2 * RACES, "round {round}");
            let offset = (round as usize * 4099) % LARGE_READ;
            let piece = [1000, 4096, LARGE_READ][round as usize % 3];
            let buf = read(&reads, file.as_file(), offset, LARGE_READ + 17, piece).unwrap();
            assert!(buf == bytes[offset..offset + buf.len()], "round {round}, pieces of {piece}");
        }
        assert_eq!(read(&reads, file.as_file(), 5, 100, 7).unwrap(), bytes[5..105]);
    }

    #[test]
    fn the_methods_take_turns_and_the_faster_per_byte_is_kept() {
        let reads = LargeReads::default();
        // Mapped reads of 2 MiB in 2 ms, pread reads of 1 MiB in 2 ms: mapped is faster.
        for _ in 0..RACES {
            reads.record(MAPPED, 2 << 20, 2_000_000);
            assert_eq!(reads.method.load(Relaxed), UNDECIDED);
            reads.record(PREAD, 1 << 20, 2_000_000);
        }
        assert_eq!(reads.method.load(Relaxed), MAPPED);
        let (file, _) = data_file(2 * LARGE_READ);
        let turns = LargeReads::default();
        let methods: Vec<bool> = (0..4).map(|_| turns.source(file.as_file(), 0, LARGE_READ).unwrap().map.is_some()).collect();
        assert_eq!(methods, [true, false, true, false], "mapped first, then pread, in turn");
    }

    #[test]
    fn a_range_past_the_end_is_unexpected_eof_for_both_methods() {
        let (file, _) = data_file(2 * LARGE_READ);
        for method in [PREAD, MAPPED, UNDECIDED] {
            let reads = LargeReads::default();
            reads.method.store(method, Relaxed);
            let err = read(&reads, file.as_file(), LARGE_READ, LARGE_READ + 1, 4096).unwrap_err();
            assert_eq!(err.kind(), std::io::ErrorKind::UnexpectedEof, "method {method}");
        }
    }
}
