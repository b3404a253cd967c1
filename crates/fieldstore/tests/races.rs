//! Wipe racing archive, and wipe, purge, archive and readers all at once, in bounded trials
//! (issue 17 points 1 and 2): an archive whose flush returns success keeps its fields
//! readable, or they are gone entirely; an archive begun after the wipe returned keeps them;
//! a purge never changes what is read; nothing is ever listed that cannot be read, and no
//! reader ever gets other bytes than were archived. On POSIX (catalogue and store on one root,
//! the default, and on two) and on RADOS.

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

/// RADOS storage, if the test cluster is there (else the skip is said).
fn rados() -> Option<Storage> {
    let site = pairing("rados", "rados")?;
    let config = site.config().to_path_buf();
    Some(Storage { open: Arc::new(move || open_config(&config)), _kept: Box::new(site) })
}

fn field(step: usize) -> Key {
    Key::parse(&format!("{DATASET},type=fc,levtype=sfc,step={step},param=167")).unwrap()
}

/// Archives `steps`, flushes; whether the flush said the fields are stored.
fn archive(fs: &FieldStore, steps: std::ops::Range<usize>) -> bool {
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
    assert!(archive(&open(), 0..4), "the first archive");
    let start = Arc::new(Barrier::new(2));
    let wiper = {
        let (open, start) = (open.clone(), start.clone());
        std::thread::spawn(move || {
            let fs = open();
            start.wait();
            fs.wipe(&request(DATASET), true).map(|_| Instant::now())
        })
    };
    let writer = open();
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
    let stored = archive(&writer, 4..8);
    let wiped = wiper.join().unwrap().unwrap_or_else(|e| panic!("trial {trial}: the wipe failed: {e}"));
    let reader = open();
    let listed = reader.list(&request("class=od"), ListOptions::default()).unwrap();
    for f in &listed.fields {
        let id = f.identifier();
        let got = retrieve(&reader, &id.to_string()).unwrap_or_else(|e| panic!("trial {trial}: {id} is listed but: {e}"));
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

type Pairing = (&'static str, fn() -> Option<Storage>, u64);

/// Each pairing, with the longest delay that still lets an archive meet a wipe (a RADOS wipe
/// takes milliseconds, a POSIX one a fraction of one).
const PAIRINGS: [Pairing; 3] =
    [("posix, one root", || Some(posix(false)), 400), ("posix, two roots", || Some(posix(true)), 400), ("rados", rados, 20_000)];

#[test]
fn wipe_racing_archive_never_leaves_fields_listed_that_cannot_be_read() {
    let pairings = PAIRINGS;
    for (name, storage, max_delay_us) in pairings {
        if storage().is_none() {
            continue;
        }
        let mut kept = 0;
        for t in 0..TRIALS {
            let start = match t % 2 {
                0 => Start::OnceGone,
                _ => Start::After(std::time::Duration::from_micros(t as u64 * max_delay_us / TRIALS as u64)),
            };
            kept += usize::from(trial(&storage().expect("there a moment ago").open, t, start));
        }
        eprintln!("{name}: the archive kept in {kept} of {TRIALS} trials");
    }
}

/// The bytes of version `version` of a field (each archive of a step writes a new version).
fn versioned(id: &Key, version: u8) -> Vec<u8> {
    let mut bytes = payload(id, 3000);
    bytes[0] ^= version;
    bytes
}

/// Archives version `version` of `steps` and flushes; whether the flush said they are stored.
fn archive_version(fs: &FieldStore, steps: std::ops::Range<usize>, version: u8) -> bool {
    steps.into_iter().all(|step| fs.archive(&field(step), &versioned(&field(step), version)).is_ok()) && fs.flush().is_ok()
}

/// Lists the data set and reads every field listed: each must read back as the version it may
/// be (`expected(step)`). A read that meets a wipe half way may fail naming what went; it
/// never returns other bytes. Returns the steps listed and read whole, or the failure.
fn read_everything(fs: &FieldStore, expected: impl Fn(usize) -> u8, what: &str) -> Result<Vec<usize>, String> {
    let listed = fs.list(&request("class=od"), ListOptions::default()).map_err(|e| e.to_string())?;
    let mut steps = Vec::new();
    for f in &listed.fields {
        let id = f.identifier();
        let step: usize = f.element.get("step").unwrap().parse().unwrap();
        let got = retrieve(fs, &id.to_string())?;
        assert!(got == versioned(&id, expected(step)), "{what}: {id} reads back other bytes than version {}", expected(step));
        steps.push(step);
    }
    Ok(steps)
}

/// One trial: a long-lived writer archived steps 0-3 (version 1), another handle replaced them
/// (version 2), so the first writer's files hold only superseded fields. Then at once: a purge,
/// the first writer archiving steps 4-7 (version 3) into those same files, two readers, and in
/// odd trials a wipe. Returns whether the writer's fields were kept.
fn purge_trial(open: &Opener, trial: usize) -> bool {
    let what = format!("trial {trial}");
    let writer = open();
    assert!(archive_version(&writer, 0..4, 1) && archive_version(&open(), 0..4, 2), "{what}: the first archives");
    let version = |step: usize| if step < 4 { 2 } else { 3 };
    let with_wipe = trial % 2 == 1;
    let start = Arc::new(Barrier::new(if with_wipe { 5 } else { 4 }));
    let done = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let spawn = |job: fn(FieldStore) -> Result<(), String>| {
        let (open, start) = (open.clone(), start.clone());
        std::thread::spawn(move || {
            let fs = open();
            start.wait();
            job(fs)
        })
    };
    let purger = spawn(|fs| fs.purge(&request(DATASET), true).map(drop).map_err(|e| e.to_string()));
    let wiper = with_wipe.then(|| spawn(|fs| fs.wipe(&request(DATASET), true).map(drop).map_err(|e| e.to_string())));
    let readers: Vec<_> = (0..2)
        .map(|_| {
            let (open, start, done, what) = (open.clone(), start.clone(), done.clone(), what.clone());
            std::thread::spawn(move || {
                let fs = open();
                start.wait();
                let deadline = Instant::now() + std::time::Duration::from_secs(10);
                while !done.load(std::sync::atomic::Ordering::Relaxed) && Instant::now() < deadline {
                    let _ = read_everything(&fs, version, &what);
                }
            })
        })
        .collect();
    start.wait();
    let stored = archive_version(&writer, 4..8, 3);
    let purged = purger.join().unwrap();
    let wiped = wiper.map(|w| w.join().unwrap());
    done.store(true, std::sync::atomic::Ordering::Relaxed);
    readers.into_iter().for_each(|r| r.join().unwrap());
    if let Some(Err(e)) = &wiped {
        panic!("{what}: the wipe failed: {e}");
    }
    // A purge that meets a wipe may fail naming what the wipe removed; alone, it succeeds.
    assert!(purged.is_ok() || with_wipe, "{what}: the purge failed: {purged:?}");
    let steps = read_everything(&open(), version, &what).unwrap_or_else(|e| panic!("{what}: the store cannot be read: {e}"));
    let written: Vec<usize> = steps.iter().copied().filter(|s| *s >= 4).collect();
    assert!(written.is_empty() || written == [4, 5, 6, 7], "{what}: steps {steps:?} (stored: {stored})");
    if !with_wipe {
        assert!(steps[..4] == [0, 1, 2, 3], "{what}: the purge changed what is read: {steps:?}");
        assert_eq!(stored, !written.is_empty(), "{what}: the archive said stored={stored} but listed {steps:?}");
    }
    !written.is_empty()
}

#[test]
fn wipe_purge_archive_and_readers_at_once_never_lose_or_change_what_is_read() {
    for (name, storage, _) in PAIRINGS {
        if storage().is_none() {
            continue;
        }
        let kept: usize = (0..TRIALS).map(|t| usize::from(purge_trial(&storage().expect("there a moment ago").open, t))).sum();
        eprintln!("{name}: the writer's fields kept in {kept} of {TRIALS} trials");
    }
}
