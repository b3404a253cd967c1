//! Process tests of the POSIX pairing beyond the conformance suite's: a flush failing on a
//! full disk, and a reader that may not write. The test binary re-runs itself as the child
//! process (selected by `FIELDSTORE_TEST_CHILD`), so children use exactly the library under
//! test.

mod common;

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::Command;

use common::*;
use fieldstore::ListOptions;
use fieldstore_conformance::processes::{check_visible, identifier, spawn_writer, CHILD_ENV};

/// The child writer of `a_reader_that_may_not_write_...`.
#[test]
fn child_writer() {
    fieldstore_conformance::processes::child_writer(fieldstore::BACKENDS);
}

/// Child body for the full-disk test: runs on a 1 MiB tmpfs of its own (see below).
#[test]
fn child_full_disk() {
    let Ok(spec) = std::env::var(CHILD_ENV) else { return };
    let Some(dir) = spec.strip_prefix("full-disk:") else { return };
    let dir = Path::new(dir);
    let ballast = dir.join("ballast");
    std::fs::write(&ballast, vec![0u8; 400 << 10]).unwrap();
    let fs = open_at(&dir.join("root"));
    for step in 0..5 {
        let id = identifier(1, step, 0);
        fs.archive(&id, &payload(&id, 1000)).unwrap();
    }
    fs.flush().unwrap();
    // The disk fills while the big field is written: at its archive (it is larger than the
    // store's buffer) or at the flush, depending on the store.
    let big = identifier(1, 100, 0);
    let small = identifier(1, 6, 0);
    let failed =
        fs.archive(&big, &payload(&big, 2 << 20)).and_then(|()| fs.archive(&small, &payload(&small, 1000))).and_then(|()| fs.flush());
    let err = failed.unwrap_err().report().to_string();
    assert!(err.contains("No space left on device") && err.contains("not stored and must be archived again"), "{err}");
    // The operator frees space; the same handle goes on.
    std::fs::remove_file(&ballast).unwrap();
    fs.archive(&small, &payload(&small, 1000)).unwrap();
    fs.flush().unwrap();
    let reader = open_at(&dir.join("root"));
    let listed = reader.list(&request("class=od,number=1"), ListOptions::default()).unwrap();
    let steps: Vec<&str> = listed.fields.iter().map(|f| f.element.get("step").unwrap()).collect();
    assert_eq!(steps, ["0", "1", "2", "3", "4", "6"], "flushed fields kept, the failed flush published nothing");
    for step in [0, 1, 2, 3, 4, 6] {
        let id = identifier(1, step, 0);
        assert_eq!(retrieve(&reader, &format!("class=od,number=1,step={step}")).unwrap(), payload(&id, 1000));
    }
    println!("recovered");
}

#[test]
fn a_flush_failing_on_a_full_disk_publishes_nothing_of_it_and_the_handle_recovers() {
    let dir = tempfile::tempdir().unwrap();
    let mount = format!("mount -t tmpfs -o size=1m tmpfs {}", dir.path().display());
    let out = child_in_mount_namespace(&mount, "child_full_disk", format!("full-disk:{}", dir.path().display()));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success() && stdout.contains("recovered"), "{stdout}\n{}", String::from_utf8_lossy(&out.stderr));
}

/// Child body for the read-only test: lists and retrieves what a killed writer flushed, on a
/// read-only bind mount of the store (see below).
#[test]
fn child_read_only_reader() {
    let Ok(spec) = std::env::var(CHILD_ENV) else { return };
    let Some(config) = spec.strip_prefix("read-only:") else { return };
    let fs = open_config(Path::new(config));
    let visible = check_visible(&fs, 5);
    println!("visible {}", visible.len());
}

#[test]
fn a_reader_that_may_not_write_reads_what_a_killed_writer_flushed() {
    let site = pairing("posix", "posix").expect("POSIX needs no service");
    let mut child = spawn_writer("child_writer", site.config(), 5, 1000);
    let mut out = BufReader::new(child.stdout.take().unwrap()).lines();
    let flushed = out.by_ref().map_while(Result::ok).filter(|l| l.starts_with("flushed")).take(3).count();
    let _ = child.kill();
    child.wait().unwrap();
    assert_eq!(flushed, 3);
    // Its marker stays: the next opener that may write would check it against the store.
    let markers: Vec<_> = std::fs::read_dir(site.dir().join("root"))
        .unwrap()
        .flat_map(|d| std::fs::read_dir(d.unwrap().path().join("writers")).unwrap())
        .collect();
    assert_eq!(markers.len(), 1);
    let mount = format!("mount --bind -o ro {0} {0}", site.dir().join("root").display());
    let out = child_in_mount_namespace(&mount, "child_read_only_reader", format!("read-only:{}", site.config().display()));
    let stdout = String::from_utf8_lossy(&out.stdout);
    let visible: usize = stdout.lines().find_map(|l| l.strip_prefix("visible ")).map_or(0, |n| n.parse().unwrap());
    assert!(out.status.success() && visible >= 3, "{stdout}\n{}", String::from_utf8_lossy(&out.stderr));
}

/// Runs the child test `child` (given `spec` in its environment) after `mount` in a user and
/// mount namespace of its own, where this unprivileged process may mount.
fn child_in_mount_namespace(mount: &str, child: &str, spec: String) -> std::process::Output {
    let script =
        format!("{mount} && exec {} {child} --exact --nocapture --quiet --test-threads=1", std::env::current_exe().unwrap().display());
    Command::new("unshare").args(["--user", "--map-root-user", "--mount", "bash", "-c", &script]).env(CHILD_ENV, spec).output().unwrap()
}
