//! Wipe racing archive, and wipe, purge, archive and readers all at once, in bounded trials
//! (issue 17 points 1 and 2): an archive whose flush returns success keeps its fields
//! readable, or they are gone entirely; an archive begun after the wipe returned keeps them;
//! a purge never changes what is read; nothing is ever listed that cannot be read, and no
//! reader ever gets other bytes than were archived. On POSIX (catalogue and store on one root,
//! the default, and on two) and on RADOS. And (issue 38) an archive put exactly inside a wipe
//! of an object-store catalogue (RADOS, DAOS, S3), after it unlisted the data set and before
//! it removed it: one that succeeds keeps its fields.

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
    let yaml = format!(
        "catalogue: {{type: posix, root: {}, create: true}}\nstore: {{type: posix, root: {}, create: true}}\n",
        catalogue.display(),
        store.display()
    );
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

/// The data set of the archives put inside a wipe: of its own, as the pause holds only wipes
/// of it (the other tests of this file wipe `DATASET` at the same time).
const PAUSED: &str = "class=od,expver=0002,stream=oper,date=20231201,time=1200";

fn paused_field(step: usize) -> Key {
    Key::parse(&format!("{PAUSED},type=fc,levtype=sfc,step={step},param=167")).unwrap()
}

/// Archives `steps` of `PAUSED` and flushes.
fn archive_paused(fs: &FieldStore, steps: std::ops::Range<usize>) -> fieldstore::error::Result<()> {
    for step in steps {
        fs.archive(&paused_field(step), &payload(&paused_field(step), 3000))?;
    }
    fs.flush()
}

/// The steps of `PAUSED` listed, each read back with its bytes.
fn paused_steps(fs: &FieldStore, what: &str) -> Vec<usize> {
    // Nothing listed may also be said as an error naming why.
    let Ok(listed) = fs.list(&request("class=od,expver=0002"), ListOptions::default()) else { return Vec::new() };
    let mut steps = Vec::new();
    for f in &listed.fields {
        let id = f.identifier();
        let got = retrieve(fs, &id.to_string()).unwrap_or_else(|e| panic!("{what}: {id} is listed but: {e}"));
        assert_eq!(got, payload(&id, 3000), "{what}: {id}");
        steps.push(f.element.get("step").unwrap().parse().unwrap());
    }
    steps
}

/// One order of a wipe and an archive (issue 38): a wipe of `PAUSED` (steps 0-3) held where a
/// slow wipe is, after it unlisted the data set and before it removed its record and index
/// objects; then, once a reader sees the data set gone, an archive of steps 4-7 and its flush,
/// by a new handle or (`existing_writer`) by one that flushed into the data set before the
/// wipe; then the rest of the wipe. An archive whose flush returned success keeps its fields;
/// one that failed says the wipe took them, and left nothing.
#[cfg(feature = "rados")]
fn archive_inside_a_paused_wipe(open: &Opener, what: &str, existing_writer: bool) {
    use std::sync::mpsc::channel;
    use std::sync::Mutex;
    use std::time::Duration;
    archive_paused(&open(), 0..4).unwrap_or_else(|e| panic!("{what}: the first archive: {e}"));
    let writer = open();
    if existing_writer {
        archive_paused(&writer, 10..11).unwrap_or_else(|e| panic!("{what}: the writer's archive before the wipe: {e}"));
    }
    let (paused, at_pause) = channel();
    let (resume, resumed) = channel::<()>();
    let (paused, resumed) = (Mutex::new(paused), Mutex::new(resumed));
    fieldstore::rados::set_wipe_pause(Some(Arc::new(move |dataset: &Key| {
        if dataset.get("expver") == Some("0002") {
            let _ = paused.lock().unwrap().send(());
            let _ = resumed.lock().unwrap().recv_timeout(Duration::from_secs(60));
        }
    })));
    let wiper = {
        let open = open.clone();
        std::thread::spawn(move || open().wipe(&request(PAUSED), true).map(drop))
    };
    at_pause.recv_timeout(Duration::from_secs(60)).unwrap_or_else(|_| panic!("{what}: the wipe never unlisted the data set"));
    assert_eq!(paused_steps(&open(), what), Vec::<usize>::new(), "{what}: a reader still sees the data set the wipe unlisted");
    let (done, archived) = channel();
    let archiver = std::thread::spawn(move || {
        let stored = archive_paused(&writer, 4..8);
        let _ = done.send(());
        (stored, writer)
    });
    // Today's wipe lets the archive through while it is held; one that holds the archive
    // until it ended is as good: give it a while either way.
    let during = archived.recv_timeout(Duration::from_secs(3)).is_ok();
    resume.send(()).unwrap();
    let wiped = wiper.join().unwrap();
    let (stored, writer) = archiver.join().unwrap();
    fieldstore::rados::set_wipe_pause(None);
    wiped.unwrap_or_else(|e| panic!("{what}: the wipe failed: {e}"));
    let steps = paused_steps(&open(), what);
    let finished = if during { "while the wipe was held" } else { "after the wipe" };
    match stored {
        Ok(()) => {
            assert_eq!(steps, [4, 5, 6, 7], "{what}: the archive returned success ({finished}), yet its fields are gone");
            eprintln!("{what}: the archive finished {finished} and kept its fields");
        }
        Err(e) => {
            assert!(existing_writer, "{what}: a new handle's archive failed ({finished}): {e}");
            let by_the_wipe = e.kind() == fieldstore::error::ErrorKind::Conflict && e.report().to_string().contains("was wiped");
            assert!(by_the_wipe, "{what}: the flush failed otherwise than by the wipe: {e}");
            assert_eq!(steps, Vec::<usize>::new(), "{what}: a flush said its fields went with the wipe, yet it left some");
            eprintln!("{what}: the flush failed {finished}, naming the wipe: {e}");
            // The handle's next archive creates the data set again.
            archive_paused(&writer, 4..8).unwrap_or_else(|e| panic!("{what}: the archive after the wipe: {e}"));
            assert_eq!(paused_steps(&open(), what), [4, 5, 6, 7], "{what}: the archive after the wipe");
        }
    }
}

/// A wipe of `PAUSED` killed after it unlisted the data set (its thread panics there), which
/// leaves the record marked: a new writer waits for it as for a running wipe, then finishes
/// it and archives into a new creation; the wiped fields stay gone.
#[cfg(feature = "rados")]
fn archive_after_a_killed_wipe(open: &Opener, what: &str) {
    use std::sync::atomic::{AtomicBool, Ordering};
    archive_paused(&open(), 0..4).unwrap_or_else(|e| panic!("{what}: the first archive: {e}"));
    let killed = Arc::new(AtomicBool::new(false));
    let kill = killed.clone();
    fieldstore::rados::set_wipe_pause(Some(Arc::new(move |dataset: &Key| {
        if dataset.get("expver") == Some("0002") && !kill.swap(true, Ordering::SeqCst) {
            panic!("the wipe killed after unlisting the data set");
        }
    })));
    let wiper = {
        let open = open.clone();
        std::thread::spawn(move || open().wipe(&request(PAUSED), true).map(drop))
    };
    assert!(wiper.join().is_err() && killed.load(Ordering::SeqCst), "{what}: the wipe was not killed at its pause");
    let began = Instant::now();
    let stored = archive_paused(&open(), 4..8);
    fieldstore::rados::set_wipe_pause(None);
    stored.unwrap_or_else(|e| panic!("{what}: the archive after a killed wipe: {e}"));
    assert_eq!(paused_steps(&open(), what), [4, 5, 6, 7], "{what}: after the killed wipe");
    eprintln!("{what}: an archive after a killed wipe finished it and kept its fields in {:?}", began.elapsed());
}

/// Issue 38: a wipe slowed in its network sends, an archive into the data set once a listing
/// no longer showed it: that archive returned success and its fields went with the wipe (the
/// writer took the record the wipe was about to remove, and its flush appended to it). Both
/// orders, on every object-store catalogue (they share the wipe's protocol). The DAOS
/// catalogue with the POSIX store: the DAOS store's wipe destroys the data set's container as
/// a whole, with whatever an archive wrote into it meanwhile, which no catalogue can prevent.
#[cfg(feature = "rados")]
#[test]
fn an_archive_that_succeeds_inside_a_wipe_keeps_its_fields() {
    for (catalogue, store) in [("rados", "rados"), ("daos", "posix"), ("s3", "s3")] {
        let Some(site) = pairing(catalogue, store) else { continue };
        let config = site.config().to_path_buf();
        let open: Opener = Arc::new(move || open_config(&config));
        for existing_writer in [false, true] {
            let what = format!("{catalogue} catalogue, {} writer", if existing_writer { "an existing" } else { "a new" });
            archive_inside_a_paused_wipe(&open, &what, existing_writer);
            open().wipe(&request(PAUSED), true).unwrap_or_else(|e| panic!("{what}: the wipe after: {e}"));
        }
        // A writer waits a minute for a marked creation; here, longer than this file's other
        // wipes (of `DATASET`, milliseconds) take, so none is taken for killed.
        fieldstore::rados::set_wipe_patience(std::time::Duration::from_secs(3));
        archive_after_a_killed_wipe(&open, &format!("{catalogue} catalogue"));
        fieldstore::rados::set_wipe_patience(std::time::Duration::from_secs(60));
        open().wipe(&request(PAUSED), true).unwrap_or_else(|e| panic!("{catalogue} catalogue: the wipe after: {e}"));
    }
}
