//! Power loss never loses a flushed field (issue 24): a workload of several writers, data sets
//! and collocations, a purge and a wipe runs as a child process under the `fieldstore-faults`
//! recorder; from its log, `crash_states` rebuilds the states a power loss could leave after
//! every change (everything synced kept; of the rest, any subset, writes cut short or holed at
//! 512-byte boundaries, directory entries missing), and each is opened as a new process would
//! (with its recovery of embedded commits) and checked:
//! - every field whose flush returned is listed, with its bytes;
//! - nothing else is visible but the step under way, each of its flushes whole or not at all
//!   (and then correct), so no superseded field shows in place of a newer flushed one;
//! - the store reads without error, and accepts new archives.
//!
//! Both POSIX commit modes are explored, and catalogue and store on roots of their own.
//! `FIELDSTORE_POWER_LOSS_STATES` sets the random states drawn per point of the log besides
//! the two extremes (default 2; the long mode runs more). The `regression_` tests check, at
//! every point, the state by rule that once showed a defect.

mod common;
mod crash_states;

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Arc, Mutex};

use common::*;
use crash_states::{materialize, read_log, sectors, Change, Entry, Fates, Random, Rng, Simulation, WriteFate};
use fieldstore::{Config, FieldStore, Key, ListOptions};

const CHILD_ENV: &str = "FIELDSTORE_TEST_CHILD";

fn id(date: u32, levtype: &str, step: u32, param: u32) -> Key {
    let level = if levtype == "pl" { ",levelist=500" } else { "" };
    Key::parse(&format!(
        "class=od,expver=0001,stream=oper,date={date},time=1200,type=fc,levtype={levtype},step={step}{level},param={param}"
    ))
    .unwrap()
}

/// A field's bytes in a version (sizes from 700 to 2,700 bytes, so writes cross blocks).
fn bytes(id: &Key, version: u8) -> Vec<u8> {
    let size = 700 + (id.to_string().len() * 37 + usize::from(version) * 211) % 2000;
    let mut b = payload(id, size);
    b[0] ^= version;
    b
}

/// Fields, each in a version.
type Fields = Vec<(Key, u8)>;

/// One step of the workload.
enum Step {
    /// Writer `writer` archives these fields (in this version) and flushes.
    Archive {
        writer: usize,
        fields: Fields,
    },
    /// Writer processes of their own, started together, each archive their fields and flush.
    Together(Vec<Fields>),
    Purge(&'static str),
    Wipe(&'static str),
}

impl Step {
    /// Each group of fields the step makes visible whole or not at all: one per data set of a
    /// flush, one per data set of a wipe.
    fn units(&self, before: &BTreeMap<String, Vec<u8>>) -> Vec<Vec<String>> {
        let per_dataset = |fields: &Fields| -> Vec<Vec<String>> {
            let mut units: BTreeMap<&str, Vec<String>> = BTreeMap::new();
            for (id, _) in fields {
                let id = id.to_string();
                units.entry(DATASETS.iter().find(|d| id.starts_with(**d)).unwrap()).or_default().push(id);
            }
            units.into_values().collect()
        };
        match self {
            Step::Archive { fields, .. } => per_dataset(fields),
            Step::Together(members) => members.iter().flat_map(per_dataset).collect(),
            Step::Purge(_) => Vec::new(),
            Step::Wipe(dataset) => vec![before.keys().filter(|id| id.starts_with(dataset)).cloned().collect()],
        }
    }
}

const D1: &str = "class=od,expver=0001,stream=oper,date=20231201,time=1200";
const D2: &str = "class=od,expver=0001,stream=oper,date=20231202,time=1200";
/// Created by two processes at once.
const D3: &str = "class=od,expver=0001,stream=oper,date=20231204,time=1200";
const DATASETS: [&str; 3] = [D1, D2, D3];

fn steps() -> Vec<Step> {
    let fields_of = |dates: &[u32], levtypes: &[&str], steps: std::ops::Range<u32>, version: u8| -> Fields {
        let mut out = Vec::new();
        for &date in dates {
            for levtype in levtypes {
                for step in steps.clone() {
                    out.push((id(date, levtype, step, 130), version));
                }
            }
        }
        out
    };
    let fields = |dates: &[u32], steps, version| fields_of(dates, &["sfc", "pl"], steps, version);
    vec![
        Step::Archive { writer: 0, fields: fields(&[20231201, 20231202], 0..2, 1) },
        // Another writer replaces half of the first one's fields and adds its own.
        Step::Archive { writer: 1, fields: fields(&[20231201], 0..3, 2) },
        Step::Archive { writer: 0, fields: fields(&[20231201, 20231202], 3..5, 3) },
        Step::Purge(D1),
        Step::Wipe(D2),
        // A new writer archives the wiped data set again.
        Step::Archive { writer: 2, fields: fields(&[20231202], 0..2, 4) },
        // Three processes create a data set at once, flushing into it together (two of them
        // into one collocation), one of them adding to another data set.
        Step::Together(vec![
            fields_of(&[20231204], &["sfc"], 0..3, 5),
            [fields_of(&[20231204], &["pl"], 0..3, 6), fields_of(&[20231201], &["sfc"], 5..7, 6)].concat(),
            fields_of(&[20231204], &["sfc"], 3..5, 7),
        ]),
    ]
}

/// What every reader must see after the first `done` steps: each field's bytes.
fn expected(done: usize) -> BTreeMap<String, Vec<u8>> {
    let mut fields = BTreeMap::new();
    for step in steps().into_iter().take(done) {
        match step {
            Step::Archive { fields: archived, .. } => {
                for (id, version) in archived {
                    fields.insert(id.to_string(), bytes(&id, version));
                }
            }
            Step::Together(members) => {
                for (id, version) in members.into_iter().flatten() {
                    fields.insert(id.to_string(), bytes(&id, version));
                }
            }
            Step::Purge(_) => {}
            Step::Wipe(dataset) => fields.retain(|id, _| !id.starts_with(dataset)),
        }
    }
    fields
}

/// A layout: a commit mode, with catalogue and store under one root (`embedded`, `ordered`) or
/// on roots of their own (`embedded-two-roots`: `ROOT/catalogue` and `ROOT/store`).
fn config_text(root: &Path, layout: &str) -> String {
    let (commit, catalogue, store) = match layout.strip_suffix("-two-roots") {
        Some(commit) => (commit, root.join("catalogue"), root.join("store")),
        None => (layout, root.to_path_buf(), root.to_path_buf()),
    };
    format!(
        "catalogue: {{type: posix, root: {}, create: true, commit: {commit}}}\nstore: {{type: posix, root: {}, create: true}}\n",
        catalogue.display(),
        store.display()
    )
}

fn open_root(root: &Path, commit: &str) -> FieldStore {
    fieldstore::open(&Config::parse("test", &config_text(root, commit)).unwrap()).unwrap()
}

/// Child body: runs the steps on `ROOT` with commit mode `COMMIT`, appending `mark N` to the
/// recorder's log once step N has returned.
#[test]
fn child_power_loss_workload() {
    let Ok(spec) = std::env::var(CHILD_ENV) else { return };
    let Some(spec) = spec.strip_prefix("power-loss:") else { return };
    let (commit, rest) = spec.split_once(':').unwrap();
    let (root, log) = rest.split_once(':').unwrap();
    let mut marks = std::fs::OpenOptions::new().append(true).open(Path::new(log).join("ops")).unwrap();
    let writers: Vec<FieldStore> = (0..3).map(|_| open_root(Path::new(root), commit)).collect();
    for (n, step) in steps().into_iter().enumerate() {
        match step {
            Step::Archive { writer, fields } => {
                for (id, version) in &fields {
                    writers[writer].archive(id, &bytes(id, *version)).unwrap();
                }
                writers[writer].flush().unwrap();
            }
            Step::Together(members) => run_together(commit, root, n, members.len()),
            Step::Purge(dataset) => drop(open_root(Path::new(root), commit).purge(&request(dataset), true).unwrap()),
            Step::Wipe(dataset) => drop(open_root(Path::new(root), commit).wipe(&request(dataset), true).unwrap()),
        }
        // One write: a line split over several could interleave with a recorded change.
        marks.write_all(format!("mark\t{}\n", n + 1).as_bytes()).unwrap();
    }
}

/// Runs the members of step `step` (a `Together`) as processes of their own, started at once;
/// they inherit the recorder, which orders the changes of all of them in one log.
fn run_together(layout: &str, root: &str, step: usize, members: usize) {
    let start = std::env::temp_dir().join(format!("fieldstore-power-loss-{}-{step}.start", std::process::id()));
    let children: Vec<_> = (0..members)
        .map(|member| {
            Command::new(std::env::current_exe().unwrap())
                .args(["child_power_loss_member", "--exact", "--nocapture", "--test-threads=1", "--quiet"])
                .env(CHILD_ENV, format!("power-loss-member:{layout}:{root}:{step}:{member}:{}", start.display()))
                .spawn()
                .unwrap()
        })
        .collect();
    std::fs::write(&start, "").unwrap();
    for mut child in children {
        assert!(child.wait().unwrap().success(), "a member of step {step} failed");
    }
    std::fs::remove_file(&start).unwrap();
}

/// Child body of one member of a `Together` step: waits for the start, archives, flushes.
#[test]
fn child_power_loss_member() {
    let Ok(spec) = std::env::var(CHILD_ENV) else { return };
    let Some(spec) = spec.strip_prefix("power-loss-member:") else { return };
    let parts: Vec<&str> = spec.splitn(5, ':').collect();
    let [layout, root, step, member, start] = parts[..] else { panic!("bad member spec {spec}") };
    let Step::Together(members) = steps().swap_remove(step.parse().unwrap()) else { panic!("step {step} is not Together") };
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while !Path::new(start).exists() {
        assert!(std::time::Instant::now() < deadline, "no start for member {member}");
        std::thread::sleep(std::time::Duration::from_millis(1));
    }
    let fs = open_root(Path::new(root), layout);
    for (id, version) in &members[member.parse::<usize>().unwrap()] {
        fs.archive(id, &bytes(id, *version)).unwrap();
    }
    fs.flush().unwrap();
}

/// Child body for `scripts/power-cut.py`, which runs the workload above on a real device and
/// mounts the states a power cut could leave on it: checks the store at `ROOT` as `check_state`
/// does, `DONE` steps having returned, and fails with what is wrong.
#[test]
fn child_power_cut_check() {
    let Ok(spec) = std::env::var(CHILD_ENV) else { return };
    let Some(spec) = spec.strip_prefix("power-cut-check:") else { return };
    let (commit, rest) = spec.split_once(':').unwrap();
    let (done, root) = rest.split_once(':').unwrap();
    if let Err(e) = check_state(Path::new(root), commit, done.parse().unwrap()) {
        panic!("{e}");
    }
}

/// Runs the workload under the recorder; returns its log, or `None` (said) where the fault
/// library is not built.
fn record_workload(dir: &Path, commit: &str) -> Option<Vec<Change>> {
    let (root, log) = (dir.join("root"), dir.join("log"));
    std::fs::create_dir_all(&log).unwrap();
    std::fs::write(log.join("ops"), "").unwrap();
    // Beside this test's directory (target/PROFILE/deps): built with the workspace.
    let injector = fieldstore_testing::workspace_library("libfieldstore_faults.so", "fieldstore-faults")?;
    let status = Command::new(std::env::current_exe().unwrap())
        .args(["child_power_loss_workload", "--exact", "--nocapture", "--test-threads=1", "--quiet"])
        .env(CHILD_ENV, format!("power-loss:{commit}:{}:{}", root.display(), log.display()))
        .env("LD_PRELOAD", &injector)
        .env("FIELDSTORE_FAULT_ROOT", &root)
        .env("FIELDSTORE_RECORD", &log)
        .status()
        .unwrap();
    assert!(status.success(), "the workload failed");
    Some(read_log(&log, &root))
}

/// Checks one crash state, `done` steps having returned before the crash.
fn check_state(root: &Path, commit: &str, done: usize) -> Result<(), String> {
    let (before, after) = (expected(done), expected(done + 1));
    let fs = open_root(root, commit);
    let listed = fs.list(&request("class=od"), ListOptions::default()).map_err(|e| format!("list: {e}"))?;
    let mut seen = BTreeMap::new();
    for field in &listed.fields {
        let id = field.identifier().to_string();
        let got = retrieve(&fs, &id).map_err(|e| format!("{id} is listed but: {e}"))?;
        seen.insert(id, got);
    }
    // Every field reads as before the step under way or as after it (absent included).
    for id in before.keys().chain(after.keys()).chain(seen.keys()) {
        let (now, was, will) = (seen.get(id), before.get(id), after.get(id));
        if now != was && now != will {
            let state = |b: Option<&Vec<u8>>| if b.is_some() { "present" } else { "absent" };
            return Err(format!(
                "{id} is {} with other bytes than before ({}) or after ({}) the step under way",
                state(now),
                state(was),
                state(will)
            ));
        }
    }
    // Each flush (per data set and writer) and wipe of the step under way is whole or absent.
    for unit in steps().get(done).map_or(Vec::new(), |step| step.units(&before)) {
        let changed: Vec<&String> = unit.iter().filter(|id| before.get(*id) != after.get(*id)).collect();
        let now_after = changed.iter().filter(|id| seen.get(**id) == after.get(**id)).count();
        let now_before = changed.iter().filter(|id| seen.get(**id) == before.get(**id)).count();
        if now_after != changed.len() && now_before != changed.len() {
            let dataset = DATASETS.iter().find(|d| unit[0].starts_with(**d)).unwrap();
            return Err(format!("step {} is partly visible in {dataset}: {now_after} of {} fields changed", done + 1, changed.len()));
        }
    }
    // The store accepts new archives.
    let new = id(20231203, "sfc", 0, 167);
    fs.archive(&new, &bytes(&new, 9)).map_err(|e| format!("archive after the crash: {e}"))?;
    fs.flush().map_err(|e| format!("flush after the crash: {e}"))?;
    match retrieve(&fs, &new.to_string()) {
        Ok(got) if got == bytes(&new, 9) => Ok(()),
        other => Err(format!("a field archived after the crash reads back as {other:?}")),
    }
}

fn states_per_point() -> usize {
    std::env::var("FIELDSTORE_POWER_LOSS_STATES").map_or(2, |n| n.parse().expect("FIELDSTORE_POWER_LOSS_STATES is a number"))
}

/// The log of the workload in a layout, recorded once per test process; `None` (said) where
/// it cannot be recorded.
fn recorded(layout: &str) -> Option<Arc<Vec<Change>>> {
    static LOGS: Mutex<BTreeMap<String, Arc<Vec<Change>>>> = Mutex::new(BTreeMap::new());
    let mut logs = LOGS.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    if let Some(log) = logs.get(layout) {
        return Some(log.clone());
    }
    let log = {
        let dir = tempfile::tempdir().unwrap();
        let changes = record_workload(dir.path(), layout)?;
        let marks = changes.iter().filter(|c| matches!(c, Change::Mark)).count();
        assert_eq!(marks, steps().len(), "every step marked");
        if std::env::var("FIELDSTORE_POWER_LOSS_DUMP").is_ok() {
            for (i, c) in changes.iter().enumerate() {
                let t = format!("{c:?}");
                eprintln!("{layout} {} {}", i + 1, &t[..t.len().min(160)]);
            }
        }
        Arc::new(changes)
    };
    logs.insert(layout.to_string(), log.clone());
    Some(log)
}

/// The states to check at one point of a log, each with its name.
type Draw<'a> = &'a mut dyn FnMut() -> Vec<(String, Box<dyn Fates>)>;

/// Checks the states `draw` gives at every point of the log of one layout; returns how many.
fn explore(layout: &str, draw: Draw) -> usize {
    let Some(changes) = recorded(layout) else { return 0 };
    let dir = tempfile::tempdir().unwrap();
    let mut simulation = Simulation::new();
    let (mut checked, mut failures, mut done) = (0, Vec::new(), 0);
    for point in 0..=changes.len() {
        if point > 0 {
            simulation.apply(&changes[point - 1]);
            done += usize::from(matches!(changes[point - 1], Change::Mark));
        }
        for (n, (name, mut fates)) in draw().into_iter().enumerate() {
            let state = simulation.crash_state(fates.as_mut());
            let root: PathBuf = dir.path().join(format!("state-{point}-{n}"));
            materialize(&state, &root);
            if let Err(e) = check_state(&root, layout, done) {
                // FIELDSTORE_POWER_LOSS_KEEP=DIR keeps each failing state there, to be opened by hand.
                if let Some(dir) = std::env::var_os("FIELDSTORE_POWER_LOSS_KEEP") {
                    materialize(&state, &Path::new(&dir).join(format!("{layout}-{point}-{n}")));
                }
                let total = changes.len();
                failures.push(format!("{layout}: crash after change {point} of {total} ({done} steps done), state {name}: {e}"));
            }
            std::fs::remove_dir_all(&root).unwrap();
            checked += 1;
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {checked} crash states fail; the first ones:\n{}",
        failures.len(),
        failures[..failures.len().min(8)].join("\n")
    );
    checked
}

const LAYOUTS: [&str; 3] = ["embedded", "ordered", "embedded-two-roots"];

#[test]
fn a_power_loss_at_any_point_loses_no_flushed_field_and_shows_nothing_partial() {
    for layout in LAYOUTS {
        let mut rng = Rng(0x2545_F491_4F6C_DD1D);
        let mut draw = || {
            let keeps = [0.0, 1.0].into_iter().chain((0..states_per_point()).map(|i| [0.5, 0.2, 0.8][i % 3]));
            keeps
                .map(|keep| {
                    let seed = rng.next() | 1;
                    let fates: Box<dyn Fates> = Box::new(Random { keep, rng: Rng(seed) });
                    (format!("keep {keep}, seed {seed:#x}"), fates)
                })
                .collect()
        };
        let checked = explore(layout, &mut draw);
        eprintln!("{layout}: {checked} crash states checked");
    }
}

/// Fates decided by rule, the same at every point of a log: the crash states that once
/// showed a defect, kept as its regression test.
#[derive(Clone, Copy)]
struct Rule {
    entry: fn(&Entry) -> bool,
    write: fn(file: &str, offset: u64, length: usize) -> WriteFate,
}

impl Fates for Rule {
    fn entry(&mut self, entry: &Entry) -> bool {
        (self.entry)(entry)
    }

    fn write(&mut self, file: &str, offset: u64, length: usize) -> WriteFate {
        (self.write)(file, offset, length)
    }
}

/// Checks the states of `rules` at every point of the workload's log in each layout.
fn regression(layouts: &[&str], rules: &[(&str, Rule)]) {
    for layout in layouts {
        let mut draw = || rules.iter().map(|(name, rule)| (name.to_string(), Box::new(*rule) as Box<dyn Fates>)).collect();
        explore(layout, &mut draw);
    }
}

fn kept(_: &Entry) -> bool {
    true
}

fn whole(_: &str, _: u64, _: usize) -> WriteFate {
    WriteFate::Whole
}

fn adds_name_ending(entry: &Entry, suffix: &str) -> bool {
    entry.to.as_deref().is_some_and(|path| path.ends_with(suffix))
}

/// A new data file's name was never made durable: a power loss lost a flushed data file
/// whole, commit included; then a recovered commit could name a data file whose name was not
/// yet durable (its directory is now synced before the commit is appended).
#[test]
fn regression_a_flushed_data_file_keeps_its_name() {
    let rule = Rule { entry: |e| !adds_name_ending(e, ".data"), write: whole };
    regression(&LAYOUTS, &[("new data files' names lost", rule)]);
}

/// Ordered mode: the TOC named a new index file whose name a power loss could take (shown
/// with the catalogue on a root of its own: on one root, the store's sync of the data set
/// directory for its new data files covers the index files too).
#[test]
fn regression_the_toc_never_names_an_index_file_a_power_loss_can_take() {
    let rule = Rule { entry: |e| !adds_name_ending(e, ".index"), write: whole };
    regression(&["ordered", "ordered-two-roots"], &[("new index files' names lost", rule)]);
}

/// A data set's key file survived without its TOC ("TOC missing while the key file is
/// there"): the key is now linked once the schema and TOC names are durable.
#[test]
fn regression_a_data_set_key_never_survives_without_its_toc() {
    let rule = Rule { entry: |e| adds_name_ending(e, "/key"), write: whole };
    regression(&LAYOUTS, &[("only key files' names kept", rule)]);
}

/// A wipe's rename of the data set away was lost while removals in it were kept: the data
/// set came back with some of its files gone (its rename is now durable first).
#[test]
fn regression_a_wipe_never_leaves_a_data_set_with_some_files_removed() {
    let rule = Rule { entry: |e| !e.is_rename(), write: whole };
    regression(&LAYOUTS, &[("renames lost", rule)]);
}

/// The several TOC records of one flush, written at once, were kept in part when the write
/// was cut at a block boundary (they are now one frame).
#[test]
fn regression_a_flush_is_never_kept_in_part_in_the_toc() {
    let rules = [
        ("TOC writes cut at their first boundary", Rule { entry: kept, write: |f, o, l| cut_toc(f, o, l, false) }),
        ("TOC writes cut at their last boundary", Rule { entry: kept, write: |f, o, l| cut_toc(f, o, l, true) }),
    ];
    regression(&LAYOUTS, &rules);
}

/// A TOC write cut at its first (or last) block boundary inside it; other writes whole.
fn cut_toc(file: &str, offset: u64, length: usize, at_last: bool) -> WriteFate {
    let pieces = sectors(offset, length);
    match if at_last { pieces.last() } else { pieces.get(1) } {
        Some(piece) if file.ends_with("/toc") && piece.start > 0 => WriteFate::Prefix(piece.start),
        _ => WriteFate::Whole,
    }
}

/// A TOC record with a block inside it never written (a hole: the writes after it were) was
/// reported as damage, and the data set could not be read; and when it ended the TOC, its last
/// bytes, left unread for the next read, were reported then (both now read as torn).
#[test]
fn regression_a_toc_record_with_a_hole_reads_as_torn() {
    let rules = [
        ("TOC writes' first block lost", Rule { entry: kept, write: |f, o, l| block_lost(f, "/toc", o, l, 0) }),
        ("TOC writes' second block lost", Rule { entry: kept, write: |f, o, l| block_lost(f, "/toc", o, l, 1) }),
    ];
    regression(&LAYOUTS, &rules);
}

/// Recovery published a commit embedded in a data file whose fields had a hole: one sync
/// makes a flush's data and its commit durable, and a power loss during it may keep the
/// commit without all the data (recovery now reads every field back first).
#[test]
fn regression_a_commit_is_recovered_only_with_all_its_data() {
    let rules = [
        ("data writes' first block lost", Rule { entry: kept, write: |f, o, l| block_lost(f, ".data", o, l, 0) }),
        ("data writes' second block lost", Rule { entry: kept, write: |f, o, l| block_lost(f, ".data", o, l, 1) }),
    ];
    regression(&["embedded", "embedded-two-roots"], &rules);
}

/// A write to a file named `...suffix` with its block `lost` (if it has a later one) not
/// written; other writes whole.
fn block_lost(file: &str, suffix: &str, offset: u64, length: usize, lost: usize) -> WriteFate {
    let pieces = sectors(offset, length).len();
    if file.ends_with(suffix) && lost + 1 < pieces {
        WriteFate::Sectors((0..pieces).map(|i| i != lost).collect())
    } else {
        WriteFate::Whole
    }
}
