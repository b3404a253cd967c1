//! What reading large fields from the page cache costs on this machine, piece by piece
//! (`cargo bench -p fieldstore-posix --bench page_cache_reads -- [DIR]`): a 1 GiB file in DIR
//! (default /tmp), written in 256 KiB writes aligned in the file and synced, as the store
//! writes its data files, read into one 16 MiB buffer as `bench compare` does: with `pread`
//! (the kernel copies), with `pread` split between two threads (as the reader splits large
//! reads), and from a read-only mapping (user space copies); the CRC-32C of 1 MiB fields over
//! that buffer, which every read checks; and both on two threads, as the reader does. Also
//! `pread` of the same file written 300 bytes off alignment: the page cache then holds it in
//! smaller blocks (folios), which is why the store aligns its writes. Seconds per GiB, first
//! and best of five rounds (a retrieve right after archiving is a first round). The POSIX
//! store picks the faster copy at run time (`large_reads.rs`); this shows the margins, and
//! what is left when the copy is as fast as the machine allows.
use std::fs::File;
use std::io::Write;
use std::os::unix::fs::FileExt;
use std::time::Instant;

const FILE_BYTES: usize = 1 << 30;
const BLOCK: usize = 16 << 20;
const FIELD: usize = 1 << 20;

/// Seconds of the first of five rounds, and of the fastest.
fn five_rounds(mut round: impl FnMut()) -> (f64, f64) {
    let seconds: Vec<f64> = (0..5)
        .map(|_| {
            let started = Instant::now();
            round();
            started.elapsed().as_secs_f64()
        })
        .collect();
    (seconds[0], seconds.iter().copied().fold(f64::MAX, f64::min))
}

/// Writes `skip` bytes, then 1 GiB of `pattern` in 256 KiB writes, syncs (as after a flush:
/// the pages are clean) and opens the file for reading.
fn write_in_256_kib_writes(path: &std::path::Path, pattern: &[u8], skip: usize) -> File {
    let mut file = File::create(path).expect("create the test file");
    file.write_all(&pattern[..skip]).unwrap();
    for _ in 0..FILE_BYTES / BLOCK {
        for chunk in pattern.chunks(256 << 10) {
            file.write_all(chunk).unwrap();
        }
    }
    file.sync_data().unwrap();
    File::open(path).unwrap()
}

/// Five rounds of reading the 1 GiB after the first `skip` bytes of `file` with `pread`, into
/// `block` one block at a time.
fn pread_rounds(file: &File, skip: usize, block: &mut [u8]) -> (f64, f64) {
    five_rounds(|| {
        for offset in (0..FILE_BYTES).step_by(BLOCK) {
            file.read_exact_at(block, (skip + offset) as u64).unwrap();
        }
    })
}

fn main() {
    let dir = std::env::args().skip(1).find(|a| !a.starts_with("--")).unwrap_or_else(|| "/tmp".into());
    let path = std::path::Path::new(&dir).join(format!("page-cache-reads-{}", std::process::id()));
    let pattern: Vec<u8> = (0..BLOCK).map(|i| (i % 251) as u8).collect();
    // The page cache holds a file in blocks (folios) aligned in the file and sized by the
    // writes: the same writes made 300 bytes off alignment leave smaller ones, slower to read.
    let mut block = vec![0u8; BLOCK];
    let misaligned = pread_rounds(&write_in_256_kib_writes(&path, &pattern, 300), 300, &mut block);
    let file = write_in_256_kib_writes(&path, &pattern, 0);
    let pread = pread_rounds(&file, 0, &mut block);
    // Each 16 MiB block in two halves, the second read by a second thread.
    let pread_two_threads = five_rounds(|| {
        for offset in (0..FILE_BYTES).step_by(BLOCK) {
            let (first, second) = block.split_at_mut(BLOCK / 2);
            std::thread::scope(|scope| {
                scope.spawn(|| file.read_exact_at(second, (offset + BLOCK / 2) as u64).unwrap());
                file.read_exact_at(first, offset as u64).unwrap();
            });
        }
    });
    let mapped = five_rounds(|| {
        for offset in (0..FILE_BYTES).step_by(BLOCK) {
            // SAFETY: the file is ours, complete and not changed while mapped.
            let map = unsafe { memmap2::MmapOptions::new().offset(offset as u64).len(BLOCK).populate().map(&file).unwrap() };
            block.copy_from_slice(&map);
        }
    });
    let crc = five_rounds(|| {
        for _ in 0..FILE_BYTES / BLOCK {
            for field in block.chunks(FIELD) {
                std::hint::black_box(fieldstore_core::checksum::crc32c(field));
            }
        }
    });
    // Reading and checking on two threads, as the reader does with a 16 MiB read: each thread
    // reads its half, then checks it; or reads and checks field by field (the check then
    // finds the field still in the cache).
    let read_then_check = |half: &mut [u8], at: usize, per_field: bool| {
        if per_field {
            for (i, field) in half.chunks_mut(FIELD).enumerate() {
                file.read_exact_at(field, (at + i * FIELD) as u64).unwrap();
                std::hint::black_box(fieldstore_core::checksum::crc32c(field));
            }
        } else {
            file.read_exact_at(half, at as u64).unwrap();
            for field in half.chunks(FIELD) {
                std::hint::black_box(fieldstore_core::checksum::crc32c(field));
            }
        }
    };
    let mut two_threads_checked = |per_field: bool| {
        five_rounds(|| {
            for offset in (0..FILE_BYTES).step_by(BLOCK) {
                let (first, second) = block.split_at_mut(BLOCK / 2);
                std::thread::scope(|scope| {
                    scope.spawn(|| read_then_check(second, offset + BLOCK / 2, per_field));
                    read_then_check(first, offset, per_field);
                });
            }
        })
    };
    let checked_halves = two_threads_checked(false);
    let checked_fields = two_threads_checked(true);
    std::fs::remove_file(&path).unwrap();
    println!("1 GiB in {dir}, 16 MiB blocks, seconds: first round, best of 5");
    for (what, (first, best)) in [
        ("pread (kernel copy)", pread),
        ("pread, written 300 bytes off", misaligned),
        ("pread on two threads", pread_two_threads),
        ("mapped copy", mapped),
        ("CRC-32C of 1 MiB fields", crc),
        ("two threads: read half, check it", checked_halves),
        ("two threads: read, check per field", checked_fields),
    ] {
        println!("  {what:<36} {first:.4}  {best:.4}");
    }
}
