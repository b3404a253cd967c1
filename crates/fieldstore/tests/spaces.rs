//! Data sets over several roots (a POSIX section's `spaces:`, FDB5's spaces): a data set found
//! in two roots fails the requests that name it and no other; a handle that read a data set
//! reads it where it is created again after a wipe, another root included.

mod common;

use std::path::{Path, PathBuf};

use common::*;
use fieldstore::error::ErrorKind;
use fieldstore::{Config, FieldStore, Key, ListOptions};

/// A store whose one space has the roots `a` and `b`, `a` taking archives or not.
fn two_roots(a: &Path, b: &Path, a_takes_archives: bool) -> FieldStore {
    let space = format!("spaces: [{{roots: [{{path: {}, writable: {a_takes_archives}}}, {{path: {}}}]}}]", a.display(), b.display());
    let yaml = format!("catalogue: {{type: posix, {space}}}\nstore: {{type: posix, {space}}}\n");
    fieldstore::open(&Config::parse("test", &yaml).unwrap()).unwrap()
}

/// Two empty directories, `a` and `b`, in a temporary one (kept while the first is).
fn two_directories() -> (tempfile::TempDir, PathBuf, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (dir.path().join("a"), dir.path().join("b"));
    std::fs::create_dir(&a).unwrap();
    std::fs::create_dir(&b).unwrap();
    (dir, a, b)
}

fn field(class: &str, step: usize) -> Key {
    Key::parse(&format!("class={class},expver=0001,stream=oper,date=20231201,time=1200,type=fc,levtype=sfc,step={step},param=167")).unwrap()
}

fn archive(fs: &FieldStore, class: &str, steps: std::ops::Range<usize>) {
    for step in steps {
        fs.archive(&field(class, step), &payload(&field(class, step), 500)).unwrap();
    }
    fs.flush().unwrap();
}

fn listed(fs: &FieldStore, text: &str) -> Result<usize, fieldstore::Error> {
    fs.list(&request(text), ListOptions::default()).map(|m| m.fields.len())
}

/// The one directory (a data set's) in `root`, whose name starts with `prefix`.
fn dataset_dir(root: &Path, prefix: &str) -> PathBuf {
    let dirs: Vec<_> = std::fs::read_dir(root)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.file_name().unwrap().to_string_lossy().starts_with(prefix))
        .collect();
    assert_eq!(dirs.len(), 1, "{dirs:?}");
    dirs[0].clone()
}

#[test]
fn a_data_set_in_two_roots_fails_only_the_requests_naming_it() {
    let (_dir, a, b) = two_directories();
    let fs = two_roots(&a, &b, true);
    archive(&fs, "od", 0..3);
    archive(&fs, "rd", 0..2);
    // A copy of rd's directory in the second root, as a careless copy of a root leaves it.
    let rd = dataset_dir(&a, "rd");
    assert!(std::process::Command::new("cp").arg("-r").arg(&rd).arg(&b).status().unwrap().success());
    for handle in [fs, two_roots(&a, &b, true)] {
        assert_eq!(listed(&handle, "class=od").unwrap(), 3, "a data set the request does not name is no obstacle");
        for text in ["class=rd", "class=od/rd", "expver=0001"] {
            let err = listed(&handle, text).unwrap_err();
            assert_eq!(err.kind(), ErrorKind::Conflict, "{text}: {err}");
            assert!(err.to_string().contains("several roots"), "{text}: {err}");
        }
    }
}

#[test]
fn a_handle_reads_a_data_set_where_it_is_created_again_after_a_wipe() {
    let (_dir, a, b) = two_directories();
    let reader = two_roots(&a, &b, true);
    archive(&reader, "od", 0..3);
    assert_eq!(listed(&reader, "class=od").unwrap(), 3);
    let dataset = "class=od,expver=0001,stream=oper,date=20231201,time=1200";
    reader.wipe(&request(dataset), true).unwrap();
    // Written again by a handle whose first root takes no archives: into the second root.
    archive(&two_roots(&a, &b, false), "od", 0..5);
    dataset_dir(&b, "od");
    assert_eq!(listed(&reader, "class=od").unwrap(), 5, "the reader follows the data set into its new root");
    assert_eq!(
        retrieve(&reader, "class=od,expver=0001,stream=oper,date=20231201,time=1200,type=fc,levtype=sfc,step=4,param=167").unwrap(),
        payload(&field("od", 4), 500)
    );
}
