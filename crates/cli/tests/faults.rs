//! Fault injection: every write, sync, rename/link and unlink that `archive` (with its flush),
//! `wipe --doit` and `purge --doit` make in a POSIX store fails in turn, with ENOSPC, with EIO,
//! and (writes) as a short write, through the `fieldstore-faults` library loaded with
//! `LD_PRELOAD`. After each: what was flushed before is all there with its bytes, nothing of a
//! failed command is half visible (the store answers as before the command or as after it),
//! a failure names its cause and the file, and the store stays usable (the same command run
//! again completes it).

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const BIN: &str = env!("CARGO_BIN_EXE_fieldstore");
const DATASET: &str = "class=od,expver=0001,stream=oper,date=20231201,time=1200";
const OTHER_DATASET: &str = "class=od,expver=0001,stream=oper,date=20231202,time=1200";
/// Every field either data set can hold.
const EVERYTHING: &str = "type=fc,levtype=pl,step=0/6/12,levelist=500,param=130/131";

/// The injector, built with the workspace next to the binary under test.
fn injector() -> PathBuf {
    Path::new(BIN).with_file_name("libfieldstore_faults.so")
}

/// A store layout under test: its config, given the directory it lives in.
#[derive(Clone, Copy, Debug)]
enum Layout {
    /// One root, commits embedded in data files (the default on a local disk).
    Embedded,
    /// One root, data synced before the TOC record (the default on shared file systems).
    Ordered,
    /// Catalogue and store on two roots.
    TwoRoots,
}

impl Layout {
    fn config(self, dir: &Path) -> String {
        let (catalogue, store) = (dir.join("catalogue").display().to_string(), dir.join("store").display().to_string());
        match self {
            Layout::Embedded => {
                format!("catalogue: {{type: posix, root: {catalogue}, create: true, commit: embedded}}\nstore: {{type: posix, root: {catalogue}, create: true}}\n")
            }
            Layout::Ordered => {
                format!("catalogue: {{type: posix, root: {catalogue}, create: true, commit: ordered}}\nstore: {{type: posix, root: {catalogue}, create: true}}\n")
            }
            Layout::TwoRoots => format!(
                "catalogue: {{type: posix, root: {catalogue}, create: true}}\nstore: {{type: posix, root: {store}, create: true}}\n"
            ),
        }
    }
}

/// A store in a directory of its own, which trials copy.
struct Store {
    dir: PathBuf,
}

/// What the injector is asked to do for one command.
struct Fault<'a> {
    /// `CLASS:N:KIND`, or none to count the calls.
    spec: Option<&'a str>,
    log: &'a Path,
}

impl Store {
    fn new(dir: PathBuf, layout: Layout) -> Store {
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("config.yaml"), layout.config(&dir)).unwrap();
        Store { dir }
    }

    /// A copy of this store (config included) in `dir`.
    fn copy_to(&self, dir: PathBuf) -> Store {
        let _ = std::fs::remove_dir_all(&dir);
        let status = Command::new("cp").arg("-a").arg(&self.dir).arg(&dir).status().unwrap();
        assert!(status.success());
        let config = std::fs::read_to_string(self.dir.join("config.yaml")).unwrap();
        std::fs::write(dir.join("config.yaml"), config.replace(&*self.dir.to_string_lossy(), &dir.to_string_lossy())).unwrap();
        Store { dir }
    }

    fn run(&self, args: &[&str], fault: Option<Fault>) -> Output {
        let mut command = Command::new(BIN);
        command.arg("--config").arg(self.dir.join("config.yaml")).args(args).env_remove("FIELDSTORE_CONFIG");
        if let Some(fault) = fault {
            let _ = std::fs::remove_file(fault.log);
            command.env("LD_PRELOAD", injector()).env("FIELDSTORE_FAULT_ROOT", &self.dir).env("FIELDSTORE_FAULT_LOG", fault.log);
            if let Some(spec) = fault.spec {
                command.env("FIELDSTORE_FAULT", spec);
            }
        }
        command.output().unwrap()
    }

    fn ok(&self, args: &[&str]) -> String {
        let out = self.run(args, None);
        assert!(out.status.success(), "{args:?} failed: {}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// What a reader sees of a data set: its fields with their bytes (or why there are none).
    fn answer(&self, dataset: &str) -> String {
        let output = self.dir.join("retrieved.grib");
        let _ = std::fs::remove_file(&output);
        let request = format!("{dataset},{EVERYTHING}");
        let out = self.run(&["retrieve", &request, "-o", &output.to_string_lossy()], None);
        let listed = self.run(&["list", &request, "--porcelain"], None);
        format!(
            "retrieve: {} {:x?}\nlist: {}",
            out.status.success(),
            std::fs::read(&output).unwrap_or_default(),
            String::from_utf8_lossy(&listed.stdout)
        )
    }
}

/// A command that changes the store, with the states it goes between.
struct Change<'a> {
    name: &'a str,
    args: Vec<String>,
    /// The data set the command changes, and one it must leave alone.
    dataset: &'a str,
    untouched: &'a str,
}

/// Fails each call of each class the command makes on the store in `base`, in turn, and
/// checks the outcome; returns how many trials ran.
fn every_fault(base: &Store, change: &Change, scratch: &Path) -> usize {
    let args: Vec<&str> = change.args.iter().map(String::as_str).collect();
    let (before, untouched) = (base.answer(change.dataset), base.answer(change.untouched));
    let log = scratch.join("calls.log");
    let counted = base.copy_to(scratch.join("counted"));
    let out = counted.run(&args, Some(Fault { spec: None, log: &log }));
    assert!(out.status.success(), "{}: {}", change.name, String::from_utf8_lossy(&out.stderr));
    let after = counted.answer(change.dataset);
    let calls = std::fs::read_to_string(&log).unwrap_or_default();
    let mut trials = 0;
    for class in ["write", "sync", "rename", "unlink"] {
        let n = calls.lines().filter(|l| l.starts_with(&format!("{class} "))).count();
        let kinds: &[&str] = if class == "write" { &["enospc", "eio", "short"] } else { &["enospc", "eio"] };
        for at in 1..=n {
            for kind in kinds {
                let spec = format!("{class}:{at}:{kind}");
                let trial = base.copy_to(scratch.join("trial"));
                let out = trial.run(&args, Some(Fault { spec: Some(&spec), log: &log }));
                check_trial(change, &spec, &out, &log, &trial, [&before, &after], &untouched);
                trials += 1;
            }
        }
    }
    assert!(trials > 0, "{}: the command made no call to fail", change.name);
    trials
}

fn check_trial(change: &Change, spec: &str, out: &Output, log: &Path, trial: &Store, states: [&String; 2], untouched: &str) {
    let what = format!("{} with {spec}", change.name);
    let stderr = String::from_utf8_lossy(&out.stderr);
    let calls = std::fs::read_to_string(log).unwrap();
    let failed_call = calls.lines().find_map(|l| l.strip_prefix("FAILED ")).unwrap_or_else(|| {
        panic!("{what}: the fault was not injected (the calls differ from the counting run):\n{calls}");
    });
    let answer = trial.answer(change.dataset);
    if out.status.success() {
        assert!(answer == *states[1], "{what}: succeeded but the store answers\n{answer}\ninstead of\n{}", states[1]);
    } else {
        assert!(
            stderr.contains("No space left on device") || stderr.contains("Input/output error"),
            "{what}: the error does not name its cause: {stderr}"
        );
        let names = named_files(failed_call);
        assert!(names.iter().any(|n| stderr.contains(n)), "{what}: the error names neither of {names:?}: {stderr}");
        assert!(states.contains(&&answer), "{what} failed ({stderr}) and left the store answering\n{answer}");
    }
    assert!(trial.answer(change.untouched) == untouched, "{what}: changed another data set");
    // Usable: the command again, without faults, completes it.
    let again = trial.run(&change.args.iter().map(String::as_str).collect::<Vec<_>>(), None);
    let again_stderr = String::from_utf8_lossy(&again.stderr);
    assert!(again.status.success() || again_stderr.contains("nothing to wipe"), "{what}, then again: {again_stderr}");
    assert!(trial.answer(change.dataset) == *states[1], "{what}, then again: not the state after the command");
}

/// The names an error may give for a failed call logged as `CLASS N PATH`: the file's, or
/// its directory's (the directory holding a file not yet linked into it, `#INODE (deleted)`,
/// or the one a rename or link fills).
fn named_files(call: &str) -> [&str; 2] {
    let path = Path::new(call.splitn(3, ' ').nth(2).expect("CLASS N PATH"));
    let file = path.file_name().and_then(|n| n.to_str()).expect("a file name");
    let dir = path.parent().and_then(Path::file_name).and_then(|n| n.to_str()).expect("a directory");
    [file, dir]
}

/// A store holding `a.grib` (4 fields) in DATASET and the same in OTHER_DATASET; the paths of
/// `a.grib` and of a second batch `b.grib` (2 fields of DATASET, one replacing a field of
/// `a.grib`).
fn prepared(layout: Layout, scratch: &Path) -> (Store, String, String) {
    let store = Store::new(scratch.join("base"), layout);
    let sample = |name: &str, extra: &[&str]| {
        let path = scratch.join(name).display().to_string();
        store.ok(&[&["sample", "-o", &path, "--steps", "0/6", "--params", "130/131"][..], extra].concat());
        path
    };
    let a = sample("a.grib", &[]);
    let other = sample("other.grib", &["--date", "20231202"]);
    let b = scratch.join("b.grib").display().to_string();
    store.ok(&["sample", "-o", &b, "--steps", "6/12", "--params", "130", "--fill-bits", "8"]);
    store.ok(&["archive", &a, &other]);
    (store, a, b)
}

fn each_layout(test: impl Fn(Layout, &Path) -> usize) {
    if fieldstore_testing::workspace_library("libfieldstore_faults.so", "fieldstore-faults").is_none() {
        return;
    }
    for layout in [Layout::Embedded, Layout::Ordered, Layout::TwoRoots] {
        let scratch = tempfile::tempdir().unwrap();
        let trials = test(layout, scratch.path());
        eprintln!("{layout:?}: {trials} faults injected");
    }
}

#[test]
fn a_fault_in_archive_and_flush_loses_nothing_flushed_and_shows_nothing_half_done() {
    each_layout(|layout, scratch| {
        let (base, _, b) = prepared(layout, scratch);
        let change = Change { name: "archive", args: vec!["archive".into(), b], dataset: DATASET, untouched: OTHER_DATASET };
        every_fault(&base, &change, scratch)
    });
}

#[test]
fn a_fault_in_wipe_removes_all_or_nothing_and_a_second_wipe_completes_it() {
    each_layout(|layout, scratch| {
        let (base, _, _) = prepared(layout, scratch);
        let args = vec!["wipe".into(), DATASET.into(), "--doit".into()];
        every_fault(&base, &Change { name: "wipe", args, dataset: DATASET, untouched: OTHER_DATASET }, scratch)
    });
}

#[test]
fn a_fault_in_purge_never_changes_what_is_read() {
    each_layout(|layout, scratch| {
        // Archived again, `a.grib` leaves its first copy without a live field.
        let (base, a, _) = prepared(layout, scratch);
        base.ok(&["archive", &a]);
        let args = vec!["purge".into(), DATASET.into(), "--doit".into()];
        every_fault(&base, &Change { name: "purge", args, dataset: DATASET, untouched: OTHER_DATASET }, scratch)
    });
}
