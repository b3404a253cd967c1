//! A small hammer run end to end, and its checks catching what they are for.

use fieldstore::Config;
use fieldstore_bench::{payload, Check, Hammer, Payload};

fn open(root: &std::path::Path) -> fieldstore::FieldStore {
    let yaml =
        format!("catalogue: {{type: posix, root: {0}, create: true}}\nstore: {{type: posix, root: {0}, create: true}}\n", root.display());
    fieldstore::open(&Config::parse("t", &yaml).unwrap()).unwrap()
}

fn hammer(check: Check) -> Hammer {
    Hammer {
        class: "od".into(),
        expver: "0001".into(),
        nsteps: 3,
        step: 0,
        nlevels: 2,
        level: 1,
        levels: None,
        nparams: 4,
        params: None,
        nensembles: 2,
        number: 1,
        payload: Payload::Synthetic(payload::synthetic(1000)),
        check,
        itt: None,
    }
}

#[test]
fn write_read_list_round_trip_with_full_checks() {
    let dir = tempfile::tempdir().unwrap();
    let h = hammer(Check::Full);
    let w = h.write(&open(dir.path())).unwrap();
    assert_eq!((w.fields, w.bytes), (3 * 2 * 4 * 2, 48 * 1000));
    assert!(w.first_io_us > 0 && w.last_io_us >= w.first_io_us);
    assert!(w.breakdown["flush"] > 0.0 && w.breakdown["archive"] > 0.0);
    let r = h.read(&open(dir.path())).unwrap();
    assert_eq!((r.fields, r.bytes), (48, 48_000));
    let l = h.list(&open(dir.path())).unwrap();
    assert_eq!(l.fields, 48);
    let json = serde_json::to_value(&r).unwrap();
    for k in ["mode", "fields", "bytes", "seconds", "first_io_us", "last_io_us"] {
        assert!(json.get(k).is_some(), "{k} missing from {json}");
    }
}

#[test]
fn a_read_fails_when_a_field_is_missing() {
    let dir = tempfile::tempdir().unwrap();
    let mut shorter = hammer(Check::None);
    shorter.nsteps = 2;
    shorter.write(&open(dir.path())).unwrap();
    let err = hammer(Check::None).read(&open(dir.path())).unwrap_err().to_string();
    assert!(err.contains("step 2") && err.contains("0 of 8 fields found"), "{err}");
}

#[test]
fn md_check_catches_a_misplaced_field_and_full_check_a_corrupt_one() {
    let dir = tempfile::tempdir().unwrap();
    let h = hammer(Check::Full);
    h.write(&open(dir.path())).unwrap();
    // Store step 1's bytes under step 2's identifier (a misplaced field).
    let (victim, source) = (h.identifier(1, 2, "1", "1"), h.identifier(1, 1, "1", "1"));
    let fs = open(dir.path());
    fs.archive(&victim, payload::Stamper::new(&payload::synthetic(1000), Check::Full).field(&source, 1)).unwrap();
    fs.flush().unwrap();
    let err = hammer(Check::Metadata).read(&open(dir.path())).unwrap_err().to_string();
    assert!(err.contains("misplaced"), "{err}");
    // Bytes changed before archiving (a writer-side corruption the store cannot know about).
    let mut bad = payload::Stamper::new(&payload::synthetic(1000), Check::Full).field(&victim, 2).to_vec();
    bad[500] ^= 0xff;
    fs.archive(&victim, &bad).unwrap();
    fs.flush().unwrap();
    assert!(hammer(Check::Metadata).read(&open(dir.path())).is_ok(), "the metadata check does not read the body");
    let err = hammer(Check::Full).read(&open(dir.path())).unwrap_err().to_string();
    assert!(err.contains("corrupt"), "{err}");
}

#[test]
fn operational_mode_readers_follow_writers_step_by_step() {
    let dir = tempfile::tempdir().unwrap();
    let itt = fieldstore_bench::Itt { step_seconds: 0.05, timeout_seconds: 10.0 };
    let mut h = hammer(Check::Metadata);
    h.nsteps = 6;
    h.itt = Some(itt);
    let (writer, reader) = (h.clone(), h.clone());
    let root = dir.path().to_path_buf();
    let write = std::thread::spawn(move || writer.write(&open(&root)).unwrap());
    let read = reader.read(&open(dir.path())).unwrap();
    let write = write.join().unwrap();
    assert_eq!(read.fields, write.fields);
    // The writer keeps its window (6 steps of 50 ms), and the reader read while it wrote.
    assert!(write.seconds >= 0.25, "{}", write.seconds);
    assert!(read.first_io_us < write.last_io_us, "the reader started before the writer finished");
    assert!(read.breakdown.contains_key("poll"));
    // A reader that waits for a step nobody writes gives up in bounded time.
    let mut stuck = hammer(Check::None);
    stuck.step = 100;
    stuck.itt = Some(fieldstore_bench::Itt { step_seconds: 0.0, timeout_seconds: 0.2 });
    let err = stuck.read(&open(dir.path())).unwrap_err().to_string();
    assert!(err.contains("step 100: 0 of 16 fields visible"), "{err}");
}

/// Pattern B after a pre-populating run of one process: the writer of two writes the steps
/// after the pre-populated ones, its reader reads those back; a third rank of a pattern-A run
/// writes the members after the first two ranks'.
#[test]
fn each_rank_takes_its_share_of_members_and_steps() {
    use fieldstore_bench::launch::Place;
    use fieldstore_bench::roles::{Pattern, Role};
    let place = |rank, size| Place { rank, size, node: "n".into() };
    let dir = tempfile::tempdir().unwrap();
    let prewrite = hammer(Check::Metadata).share(Role::of_halves(&place(0, 1), Pattern::A, false, false).unwrap()).unwrap();
    assert_eq!(prewrite.write(&open(dir.path())).unwrap().fields, 48);
    let writer = hammer(Check::Metadata).share(Role::of_halves(&place(0, 2), Pattern::B, false, false).unwrap()).unwrap();
    let reader = hammer(Check::Metadata).share(Role::of_halves(&place(1, 2), Pattern::B, false, false).unwrap()).unwrap();
    assert_eq!((writer.step, writer.number, reader.step, reader.number), (3, 1, 0, 1));
    assert_eq!(writer.write(&open(dir.path())).unwrap().fields, 48);
    assert_eq!(reader.read(&open(dir.path())).unwrap().fields, 48);
    let third = hammer(Check::None).share(Role::of_halves(&place(2, 4), Pattern::A, false, false).unwrap()).unwrap();
    assert_eq!((third.step, third.number), (0, 1 + 2 * 2), "members 5 and 6");
    let late = Hammer { step: usize::MAX, ..hammer(Check::None) };
    let refused = late.share(Role { reads: false, owner: 0, after_prewrite: true }).unwrap_err();
    assert!(refused.to_string().contains("--step plus --nsteps is too large"), "{refused}");
}
