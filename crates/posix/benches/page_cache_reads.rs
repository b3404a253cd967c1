//! What reading large fields from the page cache costs on this machine, piece by piece
//! (`cargo bench -p fieldstore-posix --bench page_cache_reads -- [DIR]`): a 1 GiB file in DIR
//! (default /tmp), written in 256 KiB writes aligned in the file and synced, as the store
//! writes its data files, read into one 16 MiB buffer as `bench compare` does: with `pread`
//! (the kernel copies), with `pread` split between two threads (as the reader splits large
//! reads), and from a read-only mapping of each block (user space copies); the CRC-32C of
//! 1 MiB fields over that buffer, which every read checks; and the copy and the check in one
//! pass, each piece checked right after it is copied, as the reader does (on one thread, and
//! on two as where a core is idle). Also `pread` of the same file written 300 bytes off
//! alignment: the page cache then holds it in smaller blocks (folios), which is why the store
//! aligns its writes. Seconds per GiB, first
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
/// The piece the reader checks as it copies (`CHECK_PIECE` in core's reader).
const PIECE: usize = 256 << 10;

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
    // Copy and check in one pass, as the reader does: each piece is checked right after it is
    // copied, while it is still in the core's cache, by `pread` per piece or out of one
    // mapping of the whole block; and the mapped way on two threads, a half each.
    let copy_and_check = |out: &mut [u8], at: usize, piece: usize, mapped: bool| {
        // SAFETY: the file is ours, complete and not changed while mapped.
        let map = mapped.then(|| unsafe { memmap2::MmapOptions::new().offset(at as u64).len(out.len()).populate().map(&file).unwrap() });
        for (i, part) in out.chunks_mut(piece).enumerate() {
            match &map {
                Some(map) => part.copy_from_slice(&map[i * piece..i * piece + part.len()]),
                None => file.read_exact_at(part, (at + i * piece) as u64).unwrap(),
            }
            std::hint::black_box(fieldstore_core::checksum::crc32c(part));
        }
    };
    let mut checked = |piece: usize, mapped: bool| {
        five_rounds(|| {
            for offset in (0..FILE_BYTES).step_by(BLOCK) {
                copy_and_check(&mut block, offset, piece, mapped);
            }
        })
    };
    let pread_checked_1m = checked(FIELD, false);
    let pread_checked = checked(PIECE, false);
    let mapped_checked = checked(PIECE, true);
    let mapped_checked_two_threads = five_rounds(|| {
        for offset in (0..FILE_BYTES).step_by(BLOCK) {
            let (first, second) = block.split_at_mut(BLOCK / 2);
            std::thread::scope(|scope| {
                scope.spawn(|| copy_and_check(second, offset + BLOCK / 2, PIECE, true));
                copy_and_check(first, offset, PIECE, true);
            });
        }
    });
    std::fs::remove_file(&path).unwrap();
    println!("1 GiB in {dir}, 16 MiB blocks, seconds: first round, best of 5");
    for (what, (first, best)) in [
        ("pread (kernel copy)", pread),
        ("pread, written 300 bytes off", misaligned),
        ("pread on two threads", pread_two_threads),
        ("mapped copy", mapped),
        ("CRC-32C of 1 MiB fields", crc),
        ("pread, check each 1 MiB piece", pread_checked_1m),
        ("pread, check each 256 KiB piece", pread_checked),
        ("mapped copy, check each 256 KiB", mapped_checked),
        ("two threads: the same, a half each", mapped_checked_two_threads),
    ] {
        println!("  {what:<36} {first:.4}  {best:.4}");
    }
}
