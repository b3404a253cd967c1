//! Crash recovery of the POSIX catalogue's embedded commits (`commit: embedded`): TOC
//! records and index segments a host crash lost are published again from the commits the
//! store made durable with the data, in their original order.
//!
//! A crash is simulated from what it can leave on disk: the writer's handle is leaked (its
//! marker stays, as after a death), the TOC and index files are cut back or holed as the
//! page cache would have left them unwritten, and the marker is given another boot id.

mod common;

use std::path::{Path, PathBuf};

use common::*;
use fieldstore::{Config, FieldStore, Key, ListOptions};

fn open_embedded(root: &Path) -> FieldStore {
    open_embedded_on(root, root)
}

/// Catalogue and store on roots of their own.
fn open_embedded_on(catalogue: &Path, store: &Path) -> FieldStore {
    let yaml = format!(
        "catalogue: {{type: posix, root: {}, create: true, commit: embedded}}\nstore: {{type: posix, root: {}, create: true}}\n",
        catalogue.display(),
        store.display()
    );
    fieldstore::open(&Config::parse("test", &yaml).unwrap()).unwrap()
}

fn identifier(step: u32) -> Key {
    Key::parse(&format!("class=od,expver=1,stream=oper,date=20231201,time=12,type=fc,levtype=sfc,step={step},param=167")).unwrap()
}

/// The one dataset directory under `root`.
fn dataset_dir(root: &Path) -> PathBuf {
    let mut dirs = std::fs::read_dir(root).unwrap().map(|e| e.unwrap().path()).filter(|p| p.is_dir());
    let dir = dirs.next().unwrap();
    assert!(dirs.next().is_none());
    dir
}

fn files_ending(dir: &Path, ending: &str) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> =
        std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().path()).filter(|p| p.to_string_lossy().ends_with(ending)).collect();
    files.sort();
    files
}

fn size(path: &Path) -> u64 {
    std::fs::metadata(path).unwrap().len()
}

fn cut(path: &Path, len: u64) {
    std::fs::OpenOptions::new().write(true).open(path).unwrap().set_len(len).unwrap();
}

/// Makes every leftover writer marker look as if its host has restarted since.
fn restart_host(dataset: &Path) -> usize {
    let markers = files_ending(&dataset.join("writers"), "");
    for marker in &markers {
        std::fs::write(marker, "a boot before the crash").unwrap();
    }
    markers.len()
}

fn steps_listed(fs: &FieldStore) -> Vec<String> {
    let listed = fs.list(&request("class=od"), ListOptions::default()).unwrap();
    listed.fields.iter().map(|f| f.identifier().get("step").unwrap().to_string()).collect()
}

#[test]
fn records_and_segments_lost_in_a_host_crash_are_recovered_from_the_store() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let writer = open_embedded(root);
    let (mut toc_sizes, mut index_sizes) = (Vec::new(), Vec::new());
    for step in 0..5 {
        writer.archive(&identifier(step), &payload(&identifier(step), 3000)).unwrap();
        writer.flush().unwrap();
        let dataset = dataset_dir(root);
        toc_sizes.push(size(&dataset.join("toc")));
        index_sizes.push(size(&files_ending(&dataset, ".index")[0]));
    }
    std::mem::forget(writer);
    let dataset = dataset_dir(root);
    // Lost: the TOC record of step 4, and the index segments of steps 3 and 4 (step 3's
    // TOC record survived, pointing at a segment that did not).
    cut(&dataset.join("toc"), toc_sizes[3]);
    cut(&files_ending(&dataset, ".index")[0], index_sizes[2]);
    let damaged = open_at(root).list(&request("class=od,step=3"), ListOptions::default()).map(|_| ()).unwrap_err();
    assert!(damaged.to_string().contains("index"), "without recovery the lost segment is an error: {damaged}");
    assert_eq!(restart_host(&dataset), 1);

    let reader = open_at(root);
    assert_eq!(steps_listed(&reader), ["0", "1", "2", "3", "4"]);
    for step in 0..5 {
        assert_eq!(retrieve(&reader, &format!("class=od,step={step}")).unwrap(), payload(&identifier(step), 3000));
    }
    assert!(files_ending(&dataset.join("writers"), "").is_empty(), "the recovered writer's marker is gone");
    // Recovering once is enough: a new reader appends nothing more.
    let recovered_size = size(&dataset.join("toc"));
    assert!(recovered_size > toc_sizes[3]);
    assert_eq!(steps_listed(&open_at(root)), ["0", "1", "2", "3", "4"]);
    assert_eq!(size(&dataset.join("toc")), recovered_size);
}

/// Found by the power-loss simulator (`power_loss`, layout `embedded-two-roots`): a writer
/// still holding data files of a wiped data set keeps them from the wipe, and a crash of its
/// process after another of its handles archived the data set again made recovery take the
/// old handle's commits (same process, same session) and bring wiped fields back.
#[test]
fn recovery_after_a_wipe_takes_no_commit_of_the_wiped_data_set() {
    let dir = tempfile::tempdir().unwrap();
    let (catalogue, store) = (dir.path().join("catalogue"), dir.path().join("store"));
    let old = open_embedded_on(&catalogue, &store);
    for step in [1, 2] {
        old.archive(&identifier(step), &payload(&identifier(step), 3000)).unwrap();
    }
    old.flush().unwrap();
    let report = open_embedded_on(&catalogue, &store).wipe(&request("class=od,expver=1,stream=oper,date=20231201,time=12"), true).unwrap();
    assert!(!report.in_use.is_empty(), "the old writer's data files stay while it holds them");
    let new = open_embedded_on(&catalogue, &store);
    new.archive(&identifier(3), &payload(&identifier(3), 3000)).unwrap();
    new.flush().unwrap();
    // The process "crashes": neither handle closes, and the host restarts.
    std::mem::forget(old);
    std::mem::forget(new);
    assert_eq!(restart_host(&dataset_dir(&catalogue)), 1);

    assert_eq!(steps_listed(&open_embedded_on(&catalogue, &store)), ["3"]);
}

#[test]
fn a_flush_over_several_collocations_is_recovered_whole() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let id = |levtype: &str, step: u32| {
        let levelist = if levtype == "pl" { ",levelist=500" } else { "" };
        Key::parse(&format!(
            "class=od,expver=1,stream=oper,date=20231201,time=12,type=fc,levtype={levtype}{levelist},step={step},param=130"
        ))
        .unwrap()
    };
    let writer = open_embedded(root);
    let mut toc_size = 0;
    for step in 0..2 {
        for levtype in ["sfc", "pl"] {
            writer.archive(&id(levtype, step), &payload(&id(levtype, step), 5000)).unwrap();
        }
        writer.flush().unwrap();
        if step == 0 {
            toc_size = size(&dataset_dir(root).join("toc"));
        }
    }
    std::mem::forget(writer);
    let dataset = dataset_dir(root);
    assert_eq!(files_ending(&dataset, ".data").len(), 2, "one data file per collocation");
    // The crash lost both records of the second flush; its commit is in one data file only.
    cut(&dataset.join("toc"), toc_size);
    assert_eq!(open_at(root).list(&request("class=od,step=1"), ListOptions::default()).unwrap().fields.len(), 0);
    assert_eq!(restart_host(&dataset), 1);
    let reader = open_at(root);
    for levtype in ["sfc", "pl"] {
        for step in 0..2 {
            let request = format!("class=od,levtype={levtype},step={step}");
            assert_eq!(retrieve(&reader, &request).unwrap(), payload(&id(levtype, step), 5000), "{request}");
        }
    }
}

#[test]
fn a_recovered_record_stays_behind_a_replacement_flushed_after_it() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let x = identifier(0);
    let first = open_embedded(root);
    first.archive(&identifier(9), b"created the dataset").unwrap();
    first.flush().unwrap();
    let toc = dataset_dir(root).join("toc");
    let before = size(&toc);
    first.archive(&x, b"version 1").unwrap();
    first.flush().unwrap();
    let after = size(&toc);
    std::mem::forget(first);

    let second = open_embedded(root);
    second.archive(&x, b"version 2").unwrap();
    second.flush().unwrap();
    drop(second);
    // The crash lost the first writer's record but not the later one (a file system may
    // write later pages of a file before earlier ones): it reads back as zeros.
    let mut bytes = std::fs::read(&toc).unwrap();
    bytes[before as usize..after as usize].fill(0);
    std::fs::write(&toc, &bytes).unwrap();
    assert_eq!(restart_host(&dataset_dir(root)), 1);

    let reader = open_at(root);
    assert_eq!(retrieve(&reader, "class=od,step=0").unwrap(), b"version 2");
    let full = reader.list(&request("class=od,step=0"), ListOptions { include_superseded: true, ..Default::default() }).unwrap();
    assert_eq!(full.fields.len(), 2, "version 1 is back, superseded");
}

#[test]
fn a_writer_that_closes_leaves_no_marker_and_an_ordered_one_none_at_all() {
    let dir = tempfile::tempdir().unwrap();
    let writer = open_embedded(dir.path());
    writer.archive(&identifier(0), b"x").unwrap();
    writer.flush().unwrap();
    let markers = dataset_dir(dir.path()).join("writers");
    assert_eq!(files_ending(&markers, "").len(), 1, "a marker while the writer runs");
    drop(writer);
    assert!(files_ending(&markers, "").is_empty());

    let ordered = tempfile::tempdir().unwrap();
    let yaml = format!(
        "catalogue: {{type: posix, root: {0}, create: true, commit: ordered}}\nstore: {{type: posix, root: {0}, create: true}}\n",
        ordered.path().display()
    );
    let writer = fieldstore::open(&Config::parse("test", &yaml).unwrap()).unwrap();
    writer.archive(&identifier(0), b"x").unwrap();
    writer.flush().unwrap();
    assert!(!dataset_dir(ordered.path()).join("writers").exists());
    let data = files_ending(&dataset_dir(ordered.path()), ".data");
    assert_eq!(size(&data[0]), 1, "no commit in the data file");
}
