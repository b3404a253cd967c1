//! `fieldstore move` (FDB5's fdb-move) between two roots of one space, interrupted at each
//! file system call it makes, through the `fieldstore-faults` library loaded with
//! `LD_PRELOAD`: killed there (SIGKILL), failed there (ENOSPC), and frozen there (SIGSTOP)
//! while readers and writers look on. Readers always get every field once with its bytes;
//! writers and wipes are refused while the move runs; killed or failed, the move leaves the
//! data set whole in exactly one root, and run again it completes.

use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

const BIN: &str = env!("CARGO_BIN_EXE_fieldstore");
const DATASET: &str = "class=od,expver=0001,stream=oper,date=20231201,time=1200";
/// The data set's directory name in a root.
const DIR_NAME: &str = "od:0001:oper:20231201:1200:g";
/// Every field the data set holds.
const EVERYTHING: &str = "type=fc,levtype=pl,step=0/6/12,levelist=500,param=130/131";

/// The injector, built with the workspace next to the binary under test.
fn injector() -> PathBuf {
    Path::new(BIN).with_file_name("libfieldstore_faults.so")
}

/// A config of one space with roots `a` and `b` (new data sets go to `a`), in a directory of
/// its own.
struct Site {
    dir: PathBuf,
}

impl Site {
    fn new(dir: PathBuf) -> Site {
        for root in ["a", "b"] {
            std::fs::create_dir_all(dir.join(root)).unwrap();
        }
        let spaces = format!("spaces: [{{roots: [{{path: {0}/a}}, {{path: {0}/b}}]}}]", dir.display());
        std::fs::write(dir.join("config.yaml"), format!("catalogue: {{type: posix, {spaces}}}\nstore: {{type: posix, {spaces}}}\n"))
            .unwrap();
        Site { dir }
    }

    /// A copy of this site (config included) in `dir`.
    fn copy_to(&self, dir: PathBuf) -> Site {
        let _ = std::fs::remove_dir_all(&dir);
        assert!(Command::new("cp").arg("-a").arg(&self.dir).arg(&dir).status().unwrap().success());
        let config = std::fs::read_to_string(self.dir.join("config.yaml")).unwrap();
        std::fs::write(dir.join("config.yaml"), config.replace(&*self.dir.to_string_lossy(), &dir.to_string_lossy())).unwrap();
        Site { dir }
    }

    fn command(&self, args: &[&str], fault: Option<(&str, &Path)>) -> Command {
        self.command_with("config.yaml", args, fault)
    }

    fn command_with(&self, config: &str, args: &[&str], fault: Option<(&str, &Path)>) -> Command {
        let mut command = Command::new(BIN);
        command.current_dir(&self.dir).arg("--config").arg(self.dir.join(config)).args(args).env_remove("FIELDSTORE_CONFIG");
        if let Some((spec, log)) = fault {
            let _ = std::fs::remove_file(log);
            command.env("LD_PRELOAD", injector()).env("FIELDSTORE_FAULT_ROOT", &self.dir).env("FIELDSTORE_FAULT_LOG", log);
            if !spec.is_empty() {
                command.env("FIELDSTORE_FAULT", spec);
            }
        }
        command
    }

    fn run(&self, args: &[&str]) -> Output {
        self.command(args, None).output().unwrap()
    }

    fn ok(&self, args: &[&str]) -> String {
        let out = self.run(args);
        assert!(out.status.success(), "{args:?} failed: {}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// What a reader sees of the data set: its fields' bytes and its listing.
    fn answer(&self) -> String {
        self.answer_of("config.yaml")
    }

    /// What a reader of the store `config` names sees of the data set.
    fn answer_of(&self, config: &str) -> String {
        let output = self.dir.join("retrieved.grib");
        let _ = std::fs::remove_file(&output);
        let request = format!("{DATASET},{EVERYTHING}");
        let out = self.command_with(config, &["retrieve", &request, "-o", &output.to_string_lossy()], None).output().unwrap();
        let listed = self.command_with(config, &["list", &request, "--porcelain"], None).output().unwrap();
        let bytes = std::fs::read(&output).unwrap_or_default();
        let digest = fieldstore::checksum::crc32c(&bytes);
        format!(
            "retrieve: {} {} bytes, crc32c {digest:08x}\nlist: {}",
            out.status.success(),
            bytes.len(),
            String::from_utf8_lossy(&listed.stdout)
        )
    }

    /// The roots holding the data set: those with its directory, less those moved away when
    /// another holds it too (a `moved-away` marker alone in one place counts for nothing).
    /// Exactly one, or readers would see a conflict or nothing.
    fn holders(&self) -> Vec<&'static str> {
        let dir = |root: &str| self.dir.join(root).join(DIR_NAME);
        let holding: Vec<&'static str> = ["a", "b"].into_iter().filter(|r| dir(r).is_dir()).collect();
        if holding.len() < 2 {
            return holding;
        }
        holding.into_iter().filter(|r| !dir(r).join("moved-away").exists()).collect()
    }

    /// Every entry of both roots.
    fn entries(&self) -> Vec<String> {
        let mut out = Vec::new();
        for root in ["a", "b"] {
            for entry in std::fs::read_dir(self.dir.join(root)).unwrap() {
                out.push(format!("{root}/{}", entry.unwrap().file_name().to_string_lossy()));
            }
        }
        out.sort();
        out
    }

    fn move_args(&self) -> Vec<String> {
        vec!["move".into(), "--dest".into(), self.dir.join("b").display().to_string(), DATASET.into()]
    }
}

/// A site holding the data set in root `a`, archived by two commands (two index and two data
/// files), and a GRIB file of one more field for writers to try.
fn prepared(scratch: &Path) -> (Site, String) {
    let site = Site::new(scratch.join("base"));
    let sample = |name: &str, extra: &[&str]| {
        let path = scratch.join(name).display().to_string();
        site.ok(&[&["sample", "-o", &path][..], extra].concat());
        path
    };
    let first = sample("first.grib", &["--steps", "0/6", "--params", "130/131"]);
    let second = sample("second.grib", &["--steps", "12", "--params", "130/131"]);
    let late = sample("late.grib", &["--steps", "18", "--params", "130"]);
    site.ok(&["archive", &first]);
    site.ok(&["archive", &second]);
    (site, late)
}

/// How many calls of each class a move makes, counted by the injector without a fault.
fn calls_of_a_move(base: &Site, scratch: &Path) -> Vec<(&'static str, usize)> {
    let trial = base.copy_to(scratch.join("count"));
    let log = scratch.join("count.log");
    let args = trial.move_args();
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let out = trial.command(&args, Some(("", &log))).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let log = std::fs::read_to_string(&log).unwrap_or_default();
    ["write", "sync", "rename", "unlink"]
        .into_iter()
        .map(|class| (class, log.lines().filter(|l| l.starts_with(&format!("{class} "))).count()))
        .collect()
}

fn faults_available() -> bool {
    fieldstore_testing::workspace_library("libfieldstore_faults.so", "fieldstore-faults").is_some()
}

#[test]
fn a_move_killed_or_failed_at_any_call_leaves_the_data_set_whole_in_one_root_and_run_again_completes() {
    assert!(faults_available(), "the fault injector must be built");
    let scratch = tempfile::tempdir().unwrap();
    let (base, _) = prepared(scratch.path());
    let expected = base.answer();
    assert!(expected.starts_with("retrieve: true") && expected.matches('\n').count() == 7, "{expected}");
    let calls = calls_of_a_move(&base, scratch.path());
    assert!(calls.iter().find(|(c, _)| *c == "sync").unwrap().1 >= 8, "{calls:?}");
    let mut trials = 0;
    for (class, count) in calls {
        for n in 1..=count {
            for kind in ["kill", "enospc"] {
                let spec = format!("{class}:{n}:{kind}");
                let trial = base.copy_to(scratch.path().join("trial"));
                let args = trial.move_args();
                let args: Vec<&str> = args.iter().map(String::as_str).collect();
                let out = trial.command(&args, Some((&spec, &scratch.path().join("trial.log")))).output().unwrap();
                let stderr = String::from_utf8_lossy(&out.stderr);
                if kind == "kill" {
                    assert_eq!(out.status.signal(), Some(libc::SIGKILL), "{spec}: {stderr}");
                } else if !out.status.success() {
                    assert!(stderr.contains("No space left on device"), "{spec}: {stderr}");
                }
                assert_eq!(trial.holders().len(), 1, "{spec}: {:?}", trial.entries());
                assert_eq!(trial.answer(), expected, "{spec}");
                trial.ok(&args);
                assert_eq!(trial.holders(), ["b"], "{spec}");
                assert_eq!(trial.entries(), [format!("b/{DIR_NAME}")], "{spec}: nothing left behind");
                assert_eq!(trial.answer(), expected, "{spec}: after the move run again");
                trials += 1;
            }
        }
    }
    eprintln!("{trials} moves interrupted");
}

/// Waits until process `pid` has stopped itself; false if it ended first.
fn stopped(child: &mut std::process::Child) -> bool {
    let deadline = Instant::now() + Duration::from_secs(20);
    while Instant::now() < deadline {
        if child.try_wait().unwrap().is_some() {
            return false;
        }
        let stat = std::fs::read_to_string(format!("/proc/{}/stat", child.id())).unwrap_or_default();
        // The state follows the command name in parentheses.
        if stat.rsplit_once(") ").is_some_and(|(_, rest)| rest.starts_with('T')) {
            return true;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    panic!("process {} neither stopped nor ended in 20 s", child.id());
}

#[test]
fn while_a_move_runs_readers_see_every_field_once_and_writers_and_wipes_are_refused() {
    assert!(faults_available(), "the fault injector must be built");
    let scratch = tempfile::tempdir().unwrap();
    let (base, late) = prepared(scratch.path());
    let expected = base.answer();
    let calls = calls_of_a_move(&base, scratch.path());
    let mut frozen = 0;
    for (class, count) in calls.into_iter().filter(|(c, _)| ["sync", "rename"].contains(c)) {
        for n in 1..=count {
            let spec = format!("{class}:{n}:stop");
            let trial = base.copy_to(scratch.path().join("trial"));
            let args = trial.move_args();
            let args: Vec<&str> = args.iter().map(String::as_str).collect();
            let mut mover = trial
                .command(&args, Some((&spec, &scratch.path().join("trial.log"))))
                .stdout(Stdio::null())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap();
            assert!(stopped(&mut mover), "{spec}: the move ended before its call");
            assert_eq!(trial.answer(), expected, "{spec}: a reader while the move is frozen");
            let archived = trial.run(&["archive", &late]);
            let refusal = String::from_utf8_lossy(&archived.stderr);
            assert!(!archived.status.success() && refusal.contains("is being moved"), "{spec}: {refusal}");
            let wiped = trial.run(&["wipe", DATASET, "--doit"]);
            assert!(!wiped.status.success() && String::from_utf8_lossy(&wiped.stderr).contains("is being moved"), "{spec}");
            assert_eq!(trial.answer(), expected, "{spec}: nothing changed by the refused writer and wipe");
            // SAFETY: kill takes no pointers; the child is ours and stopped.
            assert_eq!(unsafe { libc::kill(mover.id() as libc::pid_t, libc::SIGCONT) }, 0);
            let done = mover.wait_with_output().unwrap();
            assert!(done.status.success(), "{spec}: {}", String::from_utf8_lossy(&done.stderr));
            assert_eq!(trial.holders(), ["b"], "{spec}");
            assert_eq!(trial.answer(), expected, "{spec}: after the move");
            // Writers write again.
            trial.ok(&["archive", &late]);
            frozen += 1;
        }
    }
    assert!(frozen >= 10, "{frozen}");
    eprintln!("{frozen} points of a move looked at");
}

#[test]
fn a_move_to_another_store_killed_at_any_call_shows_the_data_set_whole_and_run_again_completes() {
    assert!(faults_available(), "the fault injector must be built");
    let scratch = tempfile::tempdir().unwrap();
    let (base, _) = prepared(scratch.path());
    let other = |site: &Site| {
        let root = site.dir.join("other");
        std::fs::write(
            site.dir.join("other.yaml"),
            format!(
                "catalogue: {{type: posix, root: {0}, create: true}}\nstore: {{type: posix, root: {0}, create: true}}\n",
                root.display()
            ),
        )
        .unwrap();
    };
    let expected = base.answer();
    other(&base);
    let nothing = base.answer_of("other.yaml");
    let args = ["move", "--target", "other.yaml", DATASET];
    let log = scratch.path().join("trial.log");
    let counting = base.copy_to(scratch.path().join("count"));
    other(&counting);
    assert!(counting.command(&args, Some(("", &log))).output().unwrap().status.success());
    let calls = std::fs::read_to_string(&log).unwrap();
    let mut trials = 0;
    for class in ["write", "sync", "rename", "unlink"] {
        for n in 1..=calls.lines().filter(|l| l.starts_with(&format!("{class} "))).count() {
            let spec = format!("{class}:{n}:kill");
            let trial = base.copy_to(scratch.path().join("trial"));
            other(&trial);
            let out = trial.command(&args, Some((&spec, &log))).output().unwrap();
            assert_eq!(out.status.signal(), Some(libc::SIGKILL), "{spec}: {}", String::from_utf8_lossy(&out.stderr));
            // Each store shows the data set whole or not at all, and one of them shows it.
            let (here, there) = (trial.answer(), trial.answer_of("other.yaml"));
            assert!(here == expected || there == expected, "{spec}: in neither store whole:\n{here}\n{there}");
            assert!(there == expected || there == nothing, "{spec}: the target shows part of it:\n{there}");
            // Killed once the source was wiped, there is nothing left to move: said so.
            let moved_already = trial.ok(&["list", "--all", "--depth", "1"]).is_empty();
            let again = trial.run(&args);
            let stderr = String::from_utf8_lossy(&again.stderr);
            assert!(again.status.success() != moved_already, "{spec}: {stderr}");
            assert!(!moved_already || stderr.contains("nothing to move"), "{spec}: {stderr}");
            assert_eq!(trial.answer_of("other.yaml"), expected, "{spec}: after the move run again");
            assert!(trial.ok(&["list", "--all", "--depth", "1"]).is_empty(), "{spec}: the source keeps it");
            trials += 1;
        }
    }
    assert!(trials >= 20, "{trials}");
    eprintln!("{trials} moves to another store killed");
    // Frozen at its first sync (the target's flush): the source is read whole, the target shows
    // nothing yet, and writers of the data set are refused.
    let trial = base.copy_to(scratch.path().join("trial"));
    other(&trial);
    let mut mover = trial.command(&args, Some(("sync:1:stop", &log))).stdout(Stdio::null()).stderr(Stdio::piped()).spawn().unwrap();
    assert!(stopped(&mut mover));
    assert_eq!((trial.answer(), trial.answer_of("other.yaml")), (expected.clone(), nothing.clone()));
    let archived = trial.run(&["archive", &scratch.path().join("late.grib").to_string_lossy()]);
    assert!(String::from_utf8_lossy(&archived.stderr).contains("is locked for archive"), "{}", String::from_utf8_lossy(&archived.stderr));
    // SAFETY: kill takes no pointers; the child is ours and stopped.
    assert_eq!(unsafe { libc::kill(mover.id() as libc::pid_t, libc::SIGCONT) }, 0);
    assert!(mover.wait().unwrap().success());
    assert_eq!((trial.answer_of("other.yaml"), trial.ok(&["list", "--all", "--depth", "1"])), (expected, String::new()));
}
