//! Wipe racing archive on the POSIX pairing, in bounded trials (issue 17 point 1): an archive
//! whose flush returns success keeps its fields readable, or they are gone entirely; nothing
//! is ever listed that cannot be read. Catalogue and store on one root (the default) and on
//! roots of their own.

mod common;

use std::path::Path;
use std::sync::{Arc, Barrier};
use std::time::Instant;

use common::*;
use fieldstore::{Config, FieldStore, Key, ListOptions};

const TRIALS: usize = 40;
const DATASET: &str = "class=od,expver=0001,stream=oper,date=20231201,time=1200";

fn open(catalogue: &Path, store: &Path) -> FieldStore {
    let yaml = format!("catalogue: {{type: posix, root: {}}}\nstore: {{type: posix, root: {}}}\n", catalogue.display(), store.display());
    fieldstore::open(&Config::parse("test", &yaml).unwrap()).unwrap()
}

fn field(step: usize) -> Key {
    Key::parse(&format!("{DATASET},type=fc,levtype=sfc,step={step},param=167")).unwrap()
}

/// Archives `steps`, flushes; whether the flush said the fields are stored.
fn archive(fs: &mut FieldStore, steps: std::ops::Range<usize>) -> bool {
    for step in steps {
        let id = field(step);
        if fs.archive(&id, &payload(&id, 3000)).is_err() {
            return false;
        }
    }
    fs.flush().is_ok()
}

#[test]
fn wipe_racing_archive_never_leaves_fields_listed_that_cannot_be_read() {
    for separate_roots in [false, true] {
        let mut kept = 0;
        for trial in 0..TRIALS {
            let dir = tempfile::tempdir().unwrap();
            let (catalogue, store) =
                if separate_roots { (dir.path().join("c"), dir.path().join("s")) } else { (dir.path().into(), dir.path().into()) };
            assert!(archive(&mut open(&catalogue, &store), 0..4), "the first archive");
            let start = Arc::new(Barrier::new(2));
            let wiper = {
                let (catalogue, store, start) = (catalogue.clone(), store.clone(), start.clone());
                std::thread::spawn(move || {
                    let mut fs = open(&catalogue, &store);
                    start.wait();
                    fs.wipe(&request(DATASET), true).map(|_| Instant::now())
                })
            };
            let mut writer = open(&catalogue, &store);
            start.wait();
            // Vary the moment the archive meets the wipe.
            std::thread::sleep(std::time::Duration::from_micros((trial * 37 % 400) as u64));
            let began = Instant::now();
            let stored = archive(&mut writer, 4..8);
            let wiped = wiper.join().unwrap().unwrap_or_else(|e| panic!("trial {trial}: the wipe failed: {e}"));
            let mut reader = open(&catalogue, &store);
            let listed = reader.list(&request("class=od"), ListOptions::default()).unwrap();
            for f in &listed.fields {
                let id = f.identifier();
                let got = retrieve(&mut reader, &id.to_string()).unwrap_or_else(|e| panic!("trial {trial}: {id} is listed but: {e}"));
                assert_eq!(got, payload(&id, 3000), "trial {trial}: {id}");
            }
            // The second archive's fields are all there, or none: the old ones never.
            let steps: Vec<usize> = listed.fields.iter().map(|f| f.element.get("step").unwrap().parse().unwrap()).collect();
            assert!(steps.is_empty() || steps == [4, 5, 6, 7], "trial {trial}: steps {steps:?} (stored: {stored})");
            // An archive begun after the wipe returned, and said stored, is kept.
            if stored && began > wiped {
                assert_eq!(steps, [4, 5, 6, 7], "trial {trial}: stored after the wipe, yet gone");
            }
            kept += usize::from(!steps.is_empty());
        }
        // Both outcomes occur over the trials, or the race was never run.
        eprintln!("separate roots {separate_roots}: the second archive kept in {kept} of {TRIALS} trials");
    }
}
