//! Damage to the POSIX store's files (flipped bits, truncation, a broken index segment) is
//! detected and named, and intact fields still read.

mod common;

use common::*;
use fieldstore::{Key, ListOptions};

#[test]
fn corrupt_and_truncated_data_are_reported() {
    let dir = tempfile::tempdir().unwrap();
    let fs = open_at(dir.path());
    for step in 0..3 {
        let id =
            Key::parse(&format!("class=od,expver=1,stream=oper,date=20231201,time=12,type=fc,levtype=sfc,step={step},param=167")).unwrap();
        fs.archive(&id, &payload(&id, 1000)).unwrap();
    }
    fs.flush().unwrap();
    let listed = fs.list(&request("class=od"), ListOptions::default()).unwrap();
    let data = dir.path().join(&*listed.fields[0].location.uri);
    let mut bytes = std::fs::read(&data).unwrap();
    bytes[1500] ^= 0x55;
    std::fs::write(&data, &bytes).unwrap();
    let reader = open_at(dir.path());
    let err = retrieve(&reader, "class=od,step=1").unwrap_err();
    assert!(err.contains("checksum mismatch") && err.contains("step=1"), "{err}");
    assert_eq!(retrieve(&reader, "class=od,step=0").unwrap().len(), 1000, "intact fields still read");
    std::fs::write(&data, &bytes[..2500]).unwrap();
    let err = retrieve(&open_at(dir.path()), "class=od,step=2").unwrap_err();
    assert!(err.contains("truncated"), "{err}");
    // A damaged index segment is reported, not silently ignored.
    let index = std::fs::read_dir(data.parent().unwrap())
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.extension().is_some_and(|e| e == "index"))
        .unwrap();
    let mut ix = std::fs::read(&index).unwrap();
    let n = ix.len();
    ix[n - 3] ^= 1;
    std::fs::write(&index, &ix).unwrap();
    let err = retrieve(&open_at(dir.path()), "class=od,step=0").unwrap_err();
    assert!(err.contains("corrupt index segment"), "{err}");
}

/// A flipped bit in the newest TOC record is damage, reported by file and byte: never an
/// answer from the record before it (which held the field it replaced).
#[test]
fn damage_in_the_newest_toc_record_is_reported_not_answered_from_older_records() {
    let dir = tempfile::tempdir().unwrap();
    let id = Key::parse("class=od,expver=1,stream=oper,date=20231201,time=12,type=fc,levtype=sfc,step=0,param=167").unwrap();
    for content in [b"old field", b"new field"] {
        let fs = open_at(dir.path());
        fs.archive(&id, content).unwrap();
        fs.flush().unwrap();
    }
    assert_eq!(retrieve(&open_at(dir.path()), "class=od").unwrap(), b"new field");
    let dataset = std::fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().path()).find(|p| p.is_dir()).unwrap();
    let toc = dataset.join("toc");
    let mut bytes = std::fs::read(&toc).unwrap();
    let last = bytes.len() - 5;
    bytes[last] ^= 0x04;
    std::fs::write(&toc, &bytes).unwrap();
    let err = retrieve(&open_at(dir.path()), "class=od").unwrap_err();
    assert!(err.contains("toc") && err.contains("bytes ") && err.contains("damaged"), "{err}");
}

/// A damaged catalogue file is reported by name, never read as a data set that is not there
/// (a deleted TOC, an altered key file, a key file cut short, one changed character of the
/// stored schema).
#[test]
fn damaged_catalogue_files_are_reported_by_name() {
    let id = Key::parse("class=od,expver=1,stream=oper,date=20231201,time=12,type=fc,levtype=sfc,step=0,param=167").unwrap();
    type Damage = fn(&std::path::Path);
    let damages: [(&str, Damage); 4] = [
        ("toc", |d| std::fs::remove_file(d.join("toc")).unwrap()),
        ("key", |d| {
            let text = std::fs::read_to_string(d.join("key")).unwrap();
            std::fs::write(d.join("key"), text.replacen("class=od", "class=oe", 1)).unwrap();
        }),
        ("key", |d| {
            let text = std::fs::read_to_string(d.join("key")).unwrap();
            std::fs::write(d.join("key"), text.lines().take(2).collect::<Vec<_>>().join("\n")).unwrap();
        }),
        ("schema", |d| {
            let text = std::fs::read_to_string(d.join("schema")).unwrap();
            std::fs::write(d.join("schema"), text.replacen("step", "stap", 1)).unwrap();
        }),
    ];
    for (file, damage) in damages {
        let dir = tempfile::tempdir().unwrap();
        let fs = open_at(dir.path());
        fs.archive(&id, b"field").unwrap();
        fs.flush().unwrap();
        let dataset = std::fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().path()).find(|p| p.is_dir()).unwrap();
        damage(&dataset);
        let reader = open_at(dir.path());
        let err = reader.list(&request("class=od"), ListOptions::default()).map(|m| m.explanation).unwrap_err().to_string();
        assert!(err.contains(&dataset.join(file).display().to_string()), "{file}: {err}");
        assert!(reader.stats(&request("class=od")).is_err(), "{file}: stats counts nothing it cannot read");
    }
}

/// A data set whose key file names another layout format (a newer fieldstore's) is refused as
/// unsupported, naming the data set and both formats: never read as damaged or as format 1.
#[test]
fn a_data_set_of_another_layout_format_is_refused_by_name() {
    let id = Key::parse("class=od,expver=1,stream=oper,date=20231201,time=12,type=fc,levtype=sfc,step=0,param=167").unwrap();
    let dir = tempfile::tempdir().unwrap();
    let fs = open_at(dir.path());
    fs.archive(&id, b"field").unwrap();
    fs.flush().unwrap();
    let dataset = std::fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().path()).find(|p| p.is_dir()).unwrap();
    let text = std::fs::read_to_string(dataset.join("key")).unwrap();
    assert!(text.starts_with("format=1\n"), "{text}");
    // A whole key file of format 2: its checksum matches, so it is no damage.
    let body: String = text.lines().take(3).map(|l| format!("{}\n", l.replace("format=1", "format=2"))).collect();
    let sum = fieldstore::checksum::crc32c(body.as_bytes());
    std::fs::write(dataset.join("key"), format!("{body}crc32c={sum:08x}\n")).unwrap();
    let err = open_at(dir.path()).list(&request("class=od"), ListOptions::default()).map(|m| m.fields.len()).unwrap_err();
    assert_eq!(err.kind(), fieldstore::error::ErrorKind::Unsupported, "{err}");
    let message = err.to_string();
    assert!(
        message.contains(&dataset.display().to_string()) && message.contains("format 2") && message.contains("reads format 1"),
        "{message}"
    );
}
