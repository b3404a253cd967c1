//! `bench ior --api hdf5`'s files, read by HDF5's own `h5dump` (Debian: hdf5-tools).
//!
//! A test binary of its own, its tests one at a time ([`alone`]): HDF5 opens files without
//! close-on-exec and locks them, so a process started while another test held one open (a
//! `dd`, a rank, an `h5dump` of the unit tests) would keep it locked after its close, and the
//! next open of it would fail.

use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard};

use fieldstore::ErrorKind;
use fieldstore_bench::hammer::{keep_events, Phase};
use fieldstore_bench::ior::Ior;
use fieldstore_bench::payload::synthetic;
use fieldstore_bench::roles::Role;

fn alone() -> MutexGuard<'static, ()> {
    static ONE_TEST: Mutex<()> = Mutex::new(());
    ONE_TEST.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

fn write(ior: &Ior, dir: &Path, rank: u32) -> fieldstore::Result<Phase> {
    ior.run_hdf5(dir, Role { reads: false, owner: rank, after_prewrite: false })
}

fn read(ior: &Ior, dir: &Path, owner: u32) -> fieldstore::Result<Phase> {
    ior.run_hdf5(dir, Role { reads: true, owner, after_prewrite: false })
}

fn file_path(dir: &Path, rank: u32) -> PathBuf {
    dir.join(format!("ior-hdf5/testFile.{rank:08}"))
}

/// `h5dump -H -p` of the file at `path` (its structure, with each dataset's storage and
/// offset), its blanks made single spaces.
fn h5dump(path: &Path) -> String {
    let out = std::process::Command::new("h5dump").args(["-H", "-p"]).arg(path).output().expect("h5dump (Debian: hdf5-tools)");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).unwrap().split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Where dataset `name`'s values start in the file, as h5dump tells it.
fn offset(dump: &str, name: &str) -> usize {
    let dataset = &dump[dump.find(&format!("DATASET \"{name}\"")).unwrap()..];
    let at = &dataset[dataset.find("OFFSET ").unwrap() + 7..];
    at[..at.find(char::is_whitespace).unwrap()].parse().unwrap()
}

#[test]
fn a_file_per_rank_holds_a_contiguous_dataset_per_segment_as_ior_lays_it_out() {
    let _alone = alone();
    let dir = tempfile::tempdir().unwrap();
    let ior = Ior { segments: 3, transfer: 4096, every_byte: false };
    keep_events(true);
    let w = write(&ior, dir.path(), 1).unwrap();
    assert_eq!((w.fields, w.bytes), (3, 3 * 4096));
    let ops: Vec<&str> = w.events.iter().map(|e| e.0).collect();
    assert_eq!(ops, ["open", "transfer", "transfer", "transfer", "close"]);
    let path = file_path(dir.path(), 1);
    let dump = h5dump(&path);
    for name in ["Dataset-0000.0000", "Dataset-0000.0001", "Dataset-0000.0002"] {
        assert!(dump.contains(&format!("DATASET \"{name}\"")), "{name}: {dump}");
    }
    assert_eq!(dump.matches("DATASET ").count(), 3, "{dump}");
    assert_eq!(dump.matches("DATATYPE H5T_STD_I64LE").count(), 3, "IOR's long long: {dump}");
    assert_eq!(dump.matches("DATASPACE SIMPLE { ( 512 ) / ( 512 ) }").count(), 3, "{dump}");
    assert_eq!(dump.matches("CONTIGUOUS SIZE 4096").count(), 3, "as IOR without hdf5.chunkSize: {dump}");
    assert_eq!(dump.matches("ALLOCATION_TIME { H5D_ALLOC_TIME_EARLY }").count(), 3, "{dump}");
    // The file holds the transfer's bytes as they are.
    let at = offset(&dump, "Dataset-0000.0002");
    assert_eq!(std::fs::read(&path).unwrap()[at..at + 4096], synthetic(4096));

    let r = read(&ior, dir.path(), 1).unwrap();
    assert_eq!((r.fields, r.bytes), (3, 3 * 4096));
    assert_eq!(read(&ior, dir.path(), 0).unwrap_err().kind(), ErrorKind::NotFound, "rank 0 wrote nothing");
    let more = Ior { segments: 4, ..ior };
    let e = read(&more, dir.path(), 1).unwrap_err();
    assert!(e.to_string().contains("no dataset Dataset-0000.0003"), "{e}");
    let wider = Ior { transfer: 8192, ..ior };
    let e = read(&wider, dir.path(), 1).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Corrupt, "{e}");
    let e = e.report().to_string();
    assert!(e.contains("testFile.00000001, dataset Dataset-0000.0000: holds 512 values of 8 bytes, a transfer 1024"), "{e}");

    Ior::remove_hdf5(dir.path()).unwrap();
    assert!(!path.exists());
    Ior::remove_hdf5(dir.path()).unwrap();
}

#[test]
fn changed_values_are_found_and_named() {
    let _alone = alone();
    let dir = tempfile::tempdir().unwrap();
    let ior = Ior { segments: 2, transfer: 8192, every_byte: false };
    write(&ior, dir.path(), 0).unwrap();
    let path = file_path(dir.path(), 0);
    let start = offset(&h5dump(&path), "Dataset-0000.0001");
    let change = |value: usize| {
        let mut bytes = std::fs::read(&path).unwrap();
        bytes[start + value * 8] ^= 1;
        std::fs::write(&path, bytes).unwrap();
    };
    change(100);
    assert!(read(&ior, dir.path(), 0).is_ok(), "a value within a page: found with every_byte only");
    let e = read(&Ior { every_byte: true, ..ior }, dir.path(), 0).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Corrupt);
    assert!(e.to_string().contains("dataset Dataset-0000.0001: wrong values"), "{e}");
    change(512);
    let e = read(&ior, dir.path(), 0).unwrap_err();
    assert!(e.to_string().contains("dataset Dataset-0000.0001: wrong values"), "{e}");
}

#[test]
fn hdf5_errors_carry_its_error_stack_and_name_the_file() {
    let _alone = alone();
    let dir = tempfile::tempdir().unwrap();
    let path = file_path(dir.path(), 2);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(&path, b"not an HDF5 file").unwrap();
    let e = read(&Ior { segments: 1, transfer: 8, every_byte: false }, dir.path(), 2).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Io);
    let e = e.report().to_string();
    assert!(e.starts_with(&format!("{}: opening: H5Fopen(): ", path.display())), "{e}");
}
