//! Several processes on one data set: concurrent writers and readers, and writers killed
//! with SIGKILL at random moments. The calling test binary re-runs itself as the child
//! process (a test calling [`child_writer`], selected by [`CHILD_ENV`]), so children use
//! exactly the library under test; [`crate::pairing_tests!`] makes that test.

use std::collections::BTreeSet;
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use fieldstore::factory::Factory;
use fieldstore::{FieldStore, Key, ListOptions};

use crate::support::*;
use crate::Site;

/// Fields a child writer archives per step (one flush).
pub const FIELDS_PER_STEP: usize = 12;
/// What tells a test binary run as a child what to do.
pub const CHILD_ENV: &str = "FIELDSTORE_TEST_CHILD";

/// The identifier of a child writer's field.
pub fn identifier(member: usize, step: usize, param: usize) -> Key {
    Key::parse(&format!(
        "class=od,expver=0001,stream=enfo,date=20231201,time=1200,type=pf,levtype=pl,step={step},number={member},levelist=500,param={}",
        param + 1
    ))
    .unwrap()
}

/// Field sizes vary so that torn writes cannot line up with field boundaries.
pub fn size_of(step: usize, param: usize) -> usize {
    300 + (step * 7919 + param * 104_729) % 5000
}

/// The child writer's body, for a `#[test]` of the calling test binary that the process
/// properties start (see [`crate::pairing_tests!`]): when started as a child, archives `steps` steps for one member, flushing after each, and prints
/// `flushed STEP` once each flush has returned; otherwise does nothing. `backends` open the
/// config (the site's).
pub fn child_writer(backends: &[&Factory]) {
    let Ok(spec) = std::env::var(CHILD_ENV) else { return };
    let parts: Vec<&str> = spec.split(':').collect();
    let (config, member, steps): (&str, usize, usize) = (parts[0], parts[1].parse().unwrap(), parts[2].parse().unwrap());
    let fs = crate::open_config_with(Path::new(config), backends);
    for step in 0..steps {
        for param in 0..FIELDS_PER_STEP {
            let id = identifier(member, step, param);
            fs.archive(&id, &payload(&id, size_of(step, param))).unwrap();
        }
        fs.flush().unwrap();
        println!("flushed {step}");
    }
}

/// A child writer on the storage of a config file: the test `child` (a test calling
/// [`child_writer`]) of this test binary, run alone.
pub fn spawn_writer(child: &str, config: &Path, member: usize, steps: usize) -> Child {
    Command::new(std::env::current_exe().unwrap())
        .args([child, "--exact", "--nocapture", "--test-threads=1", "--quiet"])
        .env(CHILD_ENV, format!("{}:{member}:{steps}", config.display()))
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap()
}

/// Every visible field of a member must carry the bytes derived from its identifier, and
/// every visible step must be complete (a flush is atomic).
pub fn check_visible(fs: &FieldStore, member: usize) -> BTreeSet<usize> {
    let listed = fs.list(&request(&format!("class=od,number={member}")), ListOptions::default()).unwrap();
    let mut per_step = std::collections::BTreeMap::<usize, usize>::new();
    for f in &listed.fields {
        *per_step.entry(f.element.get("step").unwrap().parse().unwrap()).or_default() += 1;
    }
    for (&step, &n) in &per_step {
        assert_eq!(n, FIELDS_PER_STEP, "member {member} step {step} is partly visible");
    }
    if per_step.is_empty() {
        return BTreeSet::new();
    }
    // One retrieve of everything visible, in numeric step order: every byte must match.
    let got =
        retrieve(fs, &format!("class=od,number={member},step={}", per_step.keys().map(|s| s.to_string()).collect::<Vec<_>>().join("/")))
            .unwrap();
    let expected: Vec<u8> = per_step
        .keys()
        .flat_map(|&step| (0..FIELDS_PER_STEP).flat_map(move |p| payload(&identifier(member, step, p), size_of(step, p))))
        .collect();
    assert!(got == expected, "member {member}: wrong bytes");
    per_step.keys().copied().collect()
}

/// Four writer processes flush 15 steps each while two reader threads check that what they
/// see is whole, right, and never shrinks; at the end every step of every writer is there.
pub fn concurrent_writers_and_readers_see_every_flushed_field_and_nothing_else(site: &Site, child: &str) {
    let (members, steps) = (4, 15);
    let mut writers: Vec<Child> = (0..members).map(|m| spawn_writer(child, site.config(), m, steps)).collect();
    let outputs: Vec<_> = writers.iter_mut().map(|c| BufReader::new(c.stdout.take().unwrap())).collect();
    let done = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let readers: Vec<_> = (0..2)
        .map(|r| {
            let fs = site.open();
            let done = done.clone();
            std::thread::spawn(move || {
                let mut seen = vec![0usize; members];
                let deadline = Instant::now() + Duration::from_secs(60);
                let mut rounds = 0;
                // At least one round, however late the thread starts on a busy machine.
                loop {
                    for m in (0..members).filter(|m| m % 2 == r) {
                        let visible = check_visible(&fs, m);
                        assert!(visible.len() >= seen[m], "a reader saw flushed steps disappear");
                        seen[m] = visible.len();
                    }
                    rounds += 1;
                    if done.load(std::sync::atomic::Ordering::SeqCst) || Instant::now() >= deadline {
                        break rounds;
                    }
                }
            })
        })
        .collect();
    for (mut child, out) in writers.into_iter().zip(outputs) {
        let flushed = out.lines().map_while(Result::ok).filter(|l| l.starts_with("flushed")).count();
        assert!(child.wait().unwrap().success());
        assert_eq!(flushed, steps, "{}", site.name);
    }
    done.store(true, std::sync::atomic::Ordering::SeqCst);
    for r in readers {
        assert!(r.join().unwrap() > 0);
    }
    let fs = site.open();
    for m in 0..members {
        assert_eq!(check_visible(&fs, m).len(), steps, "{}: member {m}", site.name);
    }
}

/// Kills per pairing: `FIELDSTORE_CRASH_TRIALS`, else 20 (the long mode,
/// `scripts/crash-trials.sh`, runs 1,000).
pub fn crash_trials() -> usize {
    std::env::var("FIELDSTORE_CRASH_TRIALS").map_or(20, |n| n.parse().expect("FIELDSTORE_CRASH_TRIALS is a number of kills"))
}

/// Writers of one data set flushing at once in each trial, each killed at a moment of its own.
const WRITERS_PER_TRIAL: usize = 3;

/// Writer processes killed with SIGKILL at random moments ([`crash_trials`] trials, each of
/// [`WRITERS_PER_TRIAL`] writers of one data set flushing at once) lose nothing they flushed
/// and leave no partial step visible; the store stays usable.
pub fn writers_killed_at_random_moments_lose_nothing_flushed_and_leave_no_partial_field(site: &Site, child: &str) {
    let trials = crash_trials();
    let began = Instant::now();
    let (killed, beyond) = writers_killed_at_random_moments(site, child, trials);
    eprintln!(
        "{}: {} writers killed, {WRITERS_PER_TRIAL} at once ({killed} mid-run; {beyond} with the step being flushed visible too), nothing flushed lost, no partial step; {:.0} s",
        site.name,
        trials * WRITERS_PER_TRIAL,
        began.elapsed().as_secs_f64()
    );
}

/// Returns how many writers were killed before they ended, and how many had the step they
/// were flushing when killed made visible.
fn writers_killed_at_random_moments(site: &Site, child: &str, trials: usize) -> (usize, usize) {
    let mut seed: u64 = 0x9E37_79B9_7F4A_7C15;
    let mut next = || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    let (mut killed_mid_run, mut beyond_flushed, mut visible_steps) = (0, 0, 0);
    // One reader for all trials, as a post-processing job would keep one.
    let fs = site.open();
    for trial in 0..trials {
        // Started together, killed each at its own moment, in the order of the moments.
        let members: Vec<usize> = (0..WRITERS_PER_TRIAL).map(|k| 100 + trial * WRITERS_PER_TRIAL + k).collect();
        let mut writers: Vec<(Duration, usize, Child, std::thread::JoinHandle<usize>)> = members
            .iter()
            .map(|&member| {
                let mut child = spawn_writer(child, site.config(), member, 1000);
                let out = BufReader::new(child.stdout.take().unwrap());
                let collector = std::thread::spawn(move || out.lines().map_while(Result::ok).filter(|l| l.starts_with("flushed")).count());
                (Duration::from_micros(next() % 300_000), member, child, collector)
            })
            .collect();
        writers.sort_by_key(|(delay, ..)| *delay);
        let started = Instant::now();
        for (delay, member, mut child, collector) in writers {
            std::thread::sleep(delay.saturating_sub(started.elapsed()));
            let _ = child.kill();
            let status = child.wait().unwrap();
            if !status.success() {
                killed_mid_run += 1;
            }
            let flushed = collector.join().unwrap();
            let visible = check_visible(&fs, member);
            // Every step the writer reported flushed is visible; at most the one being flushed
            // when it died may be visible beyond that, and only complete.
            assert!(
                visible.len() >= flushed && visible.len() <= flushed + 1,
                "{}: trial {trial}, member {member}: {flushed} flushed, {} visible",
                site.name,
                visible.len()
            );
            beyond_flushed += usize::from(visible.len() > flushed);
            visible_steps += visible.len();
        }
    }
    let writers = trials * WRITERS_PER_TRIAL;
    assert!(killed_mid_run >= writers / 2, "{}: most writers must be killed mid-run ({killed_mid_run}/{writers})", site.name);
    // The store is still usable: a new writer archives and flushes, and everything reads.
    let fs = site.open();
    // Member 99: the trials' writers are members 100 and up.
    let id = identifier(99, 0, 0);
    fs.archive(&id, &payload(&id, 100)).unwrap();
    fs.flush().unwrap();
    assert_eq!(retrieve(&fs, "class=od,number=99").unwrap(), payload(&id, 100));
    let all = fs.list(&request("class=od"), ListOptions::default()).unwrap();
    // At least every step the trials left visible, and the new field (a catalogue that
    // recovers a killed writer's durable steps when a handle opens may show more). Not a
    // count of steps: how many a writer flushes before it is killed depends on how soon it
    // starts.
    assert!(
        all.fields.len() > visible_steps * FIELDS_PER_STEP,
        "{}: {} fields listed, {visible_steps} steps seen",
        site.name,
        all.fields.len()
    );
    // The POSIX catalogue (commits embedded, the default on a local disk): the killed
    // writers' markers were checked and removed when the new handle opened the dataset, and
    // its own when it closed.
    drop(fs);
    if site.name.starts_with("posix+") {
        let datasets = std::fs::read_dir(site.dir().join("root")).unwrap().map(|e| e.unwrap().path()).filter(|p| p.is_dir());
        let markers: Vec<_> = datasets.flat_map(|d| std::fs::read_dir(d.join("writers")).unwrap()).collect();
        assert!(markers.is_empty(), "{}: writer markers left: {markers:?}", site.name);
    }
    (killed_mid_run, beyond_flushed)
}
