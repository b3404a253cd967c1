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
        for (key, field) in index.btree(&mut Default::default()).unwrap().entries().unwrap() {
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
    assert_eq!(versions_written(&root), HashSet::from([2, 3]), "FDB5 5.25 writes version 3 unless told 2");
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

    // A wipe of part of a database (the indexes of one level type) masks those indexes.
    let wiped_part: Vec<String> = request.iter().cloned().chain(["levtype=sfc".to_string()]).collect();
    let mut wipe = fdb5.tool("fdb-wipe");
    wipe.args(["--doit", "--minimum-keys="]).arg(wiped_part.join(","));
    run(wipe);
    let after_wipe = check_all(&fdb5, &root);
    assert!(after_wipe < purged, "the wipe masked indexes: {after_wipe} fields listed in full, {purged} before");
    assert!(after_wipe > 0, "the rest of the database is still listed");

    a_damaged_fields_length_is_reported_not_allocated(&root);
}

/// Checks that records of the serialisation version `FDB5_SERIALISATION_VERSION` asked for
/// were written and read.
fn versions_written(root: &Path) -> HashSet<u32> {
    let tocs = databases(root).into_iter().flat_map(|d| std::fs::read_dir(d).unwrap()).map(|e| e.unwrap().path());
    tocs.filter(|p| p.file_name().unwrap().to_string_lossy().starts_with("toc"))
        .flat_map(|toc| fieldstore_fdb5::toc::read_records(&toc).unwrap())
        .map(|placed| placed.version)
        .collect()
}

/// A length of 2^62 in a B-tree leaf (a damaged index file) is an error naming the index
/// file, checked against the data file's size before any buffer is sized by it.
fn a_damaged_fields_length_is_reported_not_allocated(root: &Path) {
    use fieldstore_core::{Catalogue, ErrorKind, Key};
    use std::os::unix::fs::FileExt;
    // An index of the default type whose root page is a leaf.
    let is_leaf = |index: &fieldstore_fdb5::Index| {
        let mut node = [0u8; 8];
        std::fs::File::open(&index.path).unwrap().read_exact_at(&mut node, index.record.offset + 16).unwrap();
        index.record.kind == "BTreeIndex" && u64::from_le_bytes(node) == 0
    };
    let (db, index) = databases(root)
        .iter()
        .map(|dir| Database::open(dir, &[root.to_path_buf()]).unwrap())
        .find_map(|db| db.indexes.iter().position(is_leaf).map(|i| (db, i)))
        .expect("an index whose root page is a leaf");
    let index = &db.indexes[index];
    let file = std::fs::OpenOptions::new().write(true).open(&index.path).unwrap();
    file.write_all_at(&(1u64 << 62).to_le_bytes(), index.record.offset + 40 + 32 + 16).unwrap();

    let catalogue =
        fieldstore_fdb5::Fdb5Catalogue::new(vec![fieldstore_fdb5::Root { path: root.to_path_buf(), denied: Default::default() }]);
    let dataset = Key::from_pairs(db.key.iter().map(|(k, v)| (k.as_str(), v.as_str())));
    let mut view = catalogue.open(&dataset).unwrap().unwrap();
    let id = format!("{}@{}", index.record.file, index.record.offset);
    let info = view.indexes().unwrap().into_iter().find(|info| info.id == id).unwrap();
    let error = view.entries(&info).unwrap_err();
    assert_eq!(error.kind(), ErrorKind::Corrupt);
    let report = error.report().to_string();
    assert!(report.contains(&index.path.display().to_string()) && report.contains("runs past the end of data file"), "{report}");
}
