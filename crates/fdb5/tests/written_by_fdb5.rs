//! FDB5 as the oracle of the format: databases written by FDB5 5.25's own tools (the parity
//! corpus, fields archived again with sub-TOCs, in serialisation version 2 and into the other
//! index types, then a purge) are read with this crate, and every visible field's place must be the one FDB5's
//! `fdb-list --full --location` prints, in FDB5's order; each must be a whole GRIB message.

use std::collections::{BTreeMap, HashSet};
use std::path::{Path, PathBuf};
use std::process::Command;

use fieldstore_fdb5::Database;
use fieldstore_parity::systems::{Fdb5, System};

/// A field's place as both sides name it: data file, offset, length.
type Place = (PathBuf, u64, u64);

fn project() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..").canonicalize().unwrap()
}

fn run(mut command: Command) -> String {
    let out = command.output().unwrap();
    assert!(out.status.success(), "{command:?}: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).unwrap()
}

/// The places `fdb-list --all --location` prints, per database directory, in its order.
fn fdb5_places(fdb5: &Fdb5, full: bool) -> BTreeMap<PathBuf, Vec<Place>> {
    let mut list = fdb5.tool("fdb-list");
    list.args(["--all", "--location", "--porcelain", "--minimum-keys="]);
    if full {
        list.arg("--full");
    }
    let mut places: BTreeMap<PathBuf, Vec<Place>> = BTreeMap::new();
    for line in run(list).lines().filter(|l| l.contains("name=")) {
        let field = |name: &str, end: char| {
            let start = line.find(name).unwrap_or_else(|| panic!("{name} in {line}")) + name.len();
            line[start..].split(end).next().unwrap().to_string()
        };
        let path = PathBuf::from(field("name=", ']'));
        let place = (path.clone(), field("offset=", ',').parse().unwrap(), field("length=", ',').parse().unwrap());
        places.entry(path.parent().unwrap().to_path_buf()).or_default().push(place);
    }
    places
}

/// Every visible entry of a database, newest index first, each B-tree in key order; and the
/// same with only the newest of each key.
fn our_places(db: &Database) -> (Vec<Place>, Vec<Place>) {
    let (mut full, mut newest, mut seen) = (Vec::new(), Vec::new(), HashSet::new());
    for index in &db.indexes {
        for (key, field) in index.btree().unwrap().entries().unwrap() {
            let (path, offset, length) = index.locate(field).unwrap();
            let place = (path.to_path_buf(), offset, length);
            if seen.insert((index.record.key.clone(), key)) {
                newest.push(place.clone());
            }
            full.push(place);
        }
    }
    (full, newest)
}

fn assert_whole_grib(place: &Place) {
    let bytes = std::fs::read(&place.0).unwrap();
    let field = &bytes[place.1 as usize..(place.1 + place.2) as usize];
    assert!(field.starts_with(b"GRIB") && field.ends_with(b"7777"), "{place:?} is not a whole GRIB message");
}

fn databases(root: &Path) -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(root).unwrap().map(|e| e.unwrap().path()).filter(|p| p.join("toc").exists()).collect();
    dirs.sort();
    dirs
}

/// Checks every database under `root` against FDB5's listing; returns how many fields.
fn check_all(fdb5: &Fdb5, root: &Path) -> usize {
    let (mut ours_full, mut ours_newest) = (BTreeMap::new(), BTreeMap::new());
    for dir in databases(root) {
        let db = Database::open(&dir, &[root.to_path_buf()]).unwrap();
        let (full, newest) = our_places(&db);
        full.iter().for_each(assert_whole_grib);
        ours_full.insert(dir.clone(), full);
        ours_newest.insert(dir, newest);
    }
    assert_eq!(ours_full, fdb5_places(fdb5, true), "every field, in FDB5's order");
    assert_eq!(ours_newest, fdb5_places(fdb5, false), "the newest of each");
    ours_full.values().map(Vec::len).sum()
}

#[test]
fn databases_fdb5_writes_read_as_fdb5_reads_them() {
    let work = tempfile::tempdir().unwrap();
    let project = project();
    let root = work.path().join("fdb");
    let fdb5 =
        Fdb5::new(&project.join("scripts/fdb5-install.sh"), &work.path().join("home"), &project.join("../shared/fdb5/schema"), &root)
            .unwrap();
    let corpus = fieldstore_parity::corpus::write(work.path()).unwrap();
    for file in &corpus {
        fdb5.archive(file).unwrap();
    }
    let first = check_all(&fdb5, &root);
    assert!(first >= 800, "{first} fields");

    // Archived again: by writers with sub-TOCs, in serialisation version 2, and into the
    // index types with 64-byte keys and with 4 MiB pages (whose pages FDB5 keeps on its
    // stack: it needs a stack without limit).
    let settings = [
        ("FDB5_SUB_TOCS", "1"),
        ("FDB5_SERIALISATION_VERSION", "2"),
        ("FDB_INDEX_TYPE", "BTreeIndex64"),
        ("FDB_INDEX_TYPE", "BTreeIndex4MB"),
    ];
    for (i, (variable, value)) in settings.into_iter().enumerate() {
        let write = fdb5.tool("fdb-write");
        let mut unlimited = Command::new("bash");
        unlimited.args(["-c", "ulimit -s unlimited && exec \"$0\" \"$@\""]).arg(write.get_program());
        unlimited.envs(write.get_envs().filter_map(|(k, v)| Some((k, v?)))).env(variable, value).arg(&corpus[i % corpus.len()]);
        run(unlimited);
    }
    let kinds: HashSet<String> = databases(&root)
        .iter()
        .flat_map(|d| Database::open(d, std::slice::from_ref(&root)).unwrap().indexes)
        .map(|i| i.record.kind)
        .collect();
    assert!(["BTreeIndex", "BTreeIndex64", "BTreeIndex4MB"].iter().all(|k| kinds.contains(*k)), "{kinds:?}");
    let again = check_all(&fdb5, &root);
    assert!(again > first, "{again} fields, {first} before");
    let dirs = databases(&root);
    let mut files = dirs.iter().flat_map(|d| std::fs::read_dir(d).unwrap());
    assert!(files.any(|e| e.unwrap().file_name().to_string_lossy().starts_with("toc.")), "a sub-TOC was written");

    // A purge masks the indexes all of whose fields are newer elsewhere, and removes files.
    let db = Database::open(&databases(&root)[0], std::slice::from_ref(&root)).unwrap();
    let request: Vec<String> = db.key.iter().filter(|(_, v)| !v.is_empty()).map(|(k, v)| format!("{k}={v}")).collect();
    let mut purge = fdb5.tool("fdb-purge");
    purge.args(["--doit", "--minimum-keys="]).arg(request.join(","));
    run(purge);
    let purged = check_all(&fdb5, &root);
    assert!(purged < again, "the purge masked indexes: {purged} fields listed in full, {again} before");
}
