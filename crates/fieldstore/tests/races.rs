//! Wipe racing archive, in bounded trials (issue 17 points 1 and 2): an archive whose flush
//! returns success keeps its fields readable, or they are gone entirely; an archive begun
//! after the wipe returned keeps them; nothing is ever listed that cannot be read. On POSIX
//! (catalogue and store on one root, the default, and on two) and on RADOS.

mod common;

use std::path::PathBuf;
use std::sync::{Arc, Barrier};
use std::time::Instant;

use common::*;
use fieldstore::{Config, FieldStore, Key, ListOptions};

const TRIALS: usize = 40;
const DATASET: &str = "class=od,expver=0001,stream=oper,date=20231201,time=1200";

/// Opens a handle on one trial's storage.
type Opener = Arc<dyn Fn() -> FieldStore + Send + Sync>;

/// One trial's storage: how to open it, and what keeps it until the trial ends.
struct Storage {
    open: Opener,
    _kept: Box<dyn std::any::Any>,
}

fn posix(two_roots: bool) -> Storage {
    let dir = tempfile::tempdir().unwrap();
    let (catalogue, store): (PathBuf, PathBuf) =
        if two_roots { (dir.path().join("c"), dir.path().join("s")) } else { (dir.path().into(), dir.path().into()) };
    let yaml = format!("catalogue: {{type: posix, root: {}}}\nstore: {{type: posix, root: {}}}\n", catalogue.display(), store.display());
    Storage { open: Arc::new(move || fieldstore::open(&Config::parse("test", &yaml).unwrap()).unwrap()), _kept: Box::new(dir) }
}

fn rados() -> Storage {
    let site = Site::new("rados", "rados");
    let config = site.config().to_path_buf();
    Storage { open: Arc::new(move || open_config(&config)), _kept: Box::new(site) }
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

/// When the archive starts, once the wipe has started.
#[derive(Clone, Copy)]
enum Start {
    /// After a delay.
    After(std::time::Duration),
    /// Once a reader sees the data set gone (the wipe took effect; it may still be running).
    OnceGone,
}

/// One trial: a data set of steps 0-3; a wipe of it and an archive of steps 4-7 at once.
/// Returns whether the archive's fields were kept.
fn trial(open: &Opener, trial: usize, start_archive: Start) -> bool {
    assert!(archive(&mut open(), 0..4), "the first archive");
    let start = Arc::new(Barrier::new(2));
    let wiper = {
        let (open, start) = (open.clone(), start.clone());
        std::thread::spawn(move || {
            let mut fs = open();
            start.wait();
            fs.wipe(&request(DATASET), true).map(|_| Instant::now())
        })
    };
    let mut writer = open();
    start.wait();
    let seen_gone = match start_archive {
        Start::After(delay) => {
            std::thread::sleep(delay);
            false
        }
        Start::OnceGone => {
            let deadline = Instant::now() + std::time::Duration::from_secs(10);
            // A list that meets the wipe half way may fail (an index file gone): not yet gone.
            while !open().list(&request("class=od"), ListOptions::default()).is_ok_and(|m| m.fields.is_empty()) {
                assert!(Instant::now() < deadline, "trial {trial}: the wipe never took effect");
                std::thread::sleep(std::time::Duration::from_micros(100));
            }
            true
        }
    };
    let began = Instant::now();
    let stored = archive(&mut writer, 4..8);
    let wiped = wiper.join().unwrap().unwrap_or_else(|e| panic!("trial {trial}: the wipe failed: {e}"));
    let mut reader = open();
    let listed = reader.list(&request("class=od"), ListOptions::default()).unwrap();
    for f in &listed.fields {
        let id = f.identifier();
        let got = retrieve(&mut reader, &id.to_string()).unwrap_or_else(|e| panic!("trial {trial}: {id} is listed but: {e}"));
        assert_eq!(got, payload(&id, 3000), "trial {trial}: {id}");
    }
    // The second archive's fields are all there, or none: the old ones never.
    let steps: Vec<usize> = listed.fields.iter().map(|f| f.element.get("step").unwrap().parse().unwrap()).collect();
    assert!(steps.is_empty() || steps == [4, 5, 6, 7], "trial {trial}: steps {steps:?} (stored: {stored})");
    if stored && (seen_gone || began > wiped) {
        assert_eq!(steps, [4, 5, 6, 7], "trial {trial}: stored after the wipe took effect, yet gone");
    }
    !steps.is_empty()
}

#[test]
fn wipe_racing_archive_never_leaves_fields_listed_that_cannot_be_read() {
    // Each with the longest delay that still lets the archive meet the wipe (a RADOS wipe
    // takes milliseconds, a POSIX one a fraction of one).
    type Pairing = (&'static str, fn() -> Storage, u64);
    let pairings: [Pairing; 3] =
        [("posix, one root", || posix(false), 400), ("posix, two roots", || posix(true), 400), ("rados", rados, 20_000)];
    for (name, storage, max_delay_us) in pairings {
        let mut kept = 0;
        for t in 0..TRIALS {
            let start = match t % 2 {
                0 => Start::OnceGone,
                _ => Start::After(std::time::Duration::from_micros(t as u64 * max_delay_us / TRIALS as u64)),
            };
            kept += usize::from(trial(&storage().open, t, start));
        }
        eprintln!("{name}: the archive kept in {kept} of {TRIALS} trials");
    }
}
