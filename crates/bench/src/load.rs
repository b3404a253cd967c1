//! `bench load`: many clients of one store at once for a bounded time, every byte checked:
//! the load test of a server (`fieldstore serve`, through a `type: remote` config), though any
//! config works.
//!
//! Each client is a thread with a handle of its own (for a remote config, its own connections).
//! Readers list one step of a seeded data set (every field must be listed) or retrieve one of
//! its fields at random (its bytes must be those archived); archivers write rounds of fields
//! into a step of their own of the same data set, one flush per round. When the time is up,
//! every round an archiver flushed is retrieved and checked, byte for byte. Latencies of each
//! operation are reported as percentiles; any error fails the run.

use std::io::Read;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Mutex, RwLock};
use std::time::{Duration, Instant};

use fieldstore::{Config, Error, ErrorKind, FieldStore, Key, ListOptions, Request, Result};
use serde::Serialize;

use crate::payload::key_digest;

/// The data set every client works in (wiped before and after a run).
const DATASET: &str = "class=od,expver=load,stream=enfo,date=20231201,time=1200";
/// The keys of every field below the data set, the step and the member.
const COLLOCATION: &str = "domain=g,type=pf,levtype=pl";
/// Most operations one client makes, whatever the time allows.
const MAX_OPERATIONS: usize = 100_000;
/// Errors whose messages the report keeps.
const ERRORS_KEPT: usize = 10;

/// What a run does.
#[derive(Clone, Debug)]
pub struct Load {
    /// Clients at once.
    pub clients: usize,
    /// How many of them archive (the rest read, half listing, half retrieving).
    pub archivers: usize,
    /// How long the clients work.
    pub duration: Duration,
    /// Bytes of each field.
    pub field_bytes: usize,
    /// Levels of the seeded step (its fields: levels x 10 parameters).
    pub levels: usize,
    /// Fields an archiver writes per flush.
    pub batch: usize,
    /// How often an archiver starts a round (as a model's I/O server flushes once per step;
    /// each flush adds an index that lists of the data set read until it is compacted).
    pub interval: Duration,
}

/// What a run measured.
#[derive(Clone, Debug, Serialize)]
pub struct LoadReport {
    /// Clients at once.
    pub clients: usize,
    /// How many of them archived.
    pub archivers: usize,
    /// How long the clients worked.
    pub seconds: f64,
    /// Bytes of each field.
    pub field_bytes: usize,
    /// Listing the seeded step (every field of it).
    pub list: Latencies,
    /// Retrieving one field.
    pub point_retrieve: Latencies,
    /// An archiver's round: its fields archived, then flushed.
    pub archive_flush: Latencies,
    /// Fields the archivers flushed.
    pub fields_flushed: usize,
    /// Fields read back and checked after the run (all those flushed, unless errors).
    pub fields_checked: usize,
    /// Bytes the readers retrieved and checked.
    pub bytes_read: u64,
    /// Operations that failed (a run passes with none).
    pub errors: usize,
    /// The first errors' messages.
    pub first_errors: Vec<String>,
}

/// Percentiles of one operation's latencies, in milliseconds.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Latencies {
    /// Operations measured.
    pub count: usize,
    /// The median.
    pub p50_ms: f64,
    /// The 99th percentile.
    pub p99_ms: f64,
    /// The slowest.
    pub max_ms: f64,
}

impl Latencies {
    fn of(mut seconds: Vec<f64>) -> Latencies {
        if seconds.is_empty() {
            return Latencies::default();
        }
        seconds.sort_by(f64::total_cmp);
        let at = |percent: usize| seconds[(seconds.len() - 1) * percent / 100] * 1e3;
        Latencies { count: seconds.len(), p50_ms: at(50), p99_ms: at(99), max_ms: at(100) }
    }
}

/// What each client does.
#[derive(Clone, Copy)]
enum Role {
    Lister,
    Retriever,
    /// Archiver into its own step.
    Archiver {
        step: usize,
    },
}

/// What one client did: its latencies and, for an archiver, the rounds it flushed.
#[derive(Default)]
struct Done {
    list: Vec<f64>,
    retrieve: Vec<f64>,
    flush: Vec<f64>,
    flushed_rounds: usize,
    bytes_read: u64,
}

/// The errors of a run: counted, the first few kept.
#[derive(Default)]
struct Errors {
    count: AtomicUsize,
    first: Mutex<Vec<String>>,
}

impl Errors {
    fn note(&self, who: &str, error: &Error) {
        self.count.fetch_add(1, Ordering::Relaxed);
        let mut first = self.first.lock().unwrap_or_else(|e| e.into_inner());
        if first.len() < ERRORS_KEPT {
            first.push(format!("{who}: {}", error.report()));
        }
    }
}

/// Runs `load` on the store `config` opens: seeds, lets the clients work, checks what was
/// archived, and wipes the data set again.
pub fn run(config: &Config, load: &Load) -> Result<LoadReport> {
    check(load)?;
    let fs = fieldstore::open(config)?;
    wipe(&fs)?;
    seed(&fs, load)?;
    let errors = Errors::default();
    // Held while the clients start: each opens its handle, then waits for it to be let go.
    let gate = RwLock::new(());
    let starting = gate.write().unwrap_or_else(|e| e.into_inner());
    let abandoned = AtomicBool::new(false);
    let roles: Vec<Role> = (0..load.clients)
        .map(|i| match i {
            i if i < load.archivers => Role::Archiver { step: i + 1 },
            i if (i - load.archivers).is_multiple_of(2) => Role::Lister,
            _ => Role::Retriever,
        })
        .collect();
    let started = std::thread::scope(|scope| {
        let mut clients = Vec::new();
        for (i, &role) in roles.iter().enumerate() {
            let (errors, gate, abandoned) = (&errors, &gate, &abandoned);
            let spawned = std::thread::Builder::new()
                .name(format!("load-client-{i}"))
                .spawn_scoped(scope, move || client(config, load, i, role, (gate, abandoned), errors));
            match spawned {
                Ok(client) => clients.push((role, client)),
                Err(e) => {
                    // Those started stop at the gate; the run fails.
                    abandoned.store(true, Ordering::Relaxed);
                    drop(starting);
                    return Err(Error::caused_by(ErrorKind::Unavailable, format!("cannot start client {i} of {}", load.clients), e));
                }
            }
        }
        drop(starting);
        let clock = Instant::now();
        let mut done = Vec::new();
        for (i, (role, client)) in clients.into_iter().enumerate() {
            let finished = client.join().unwrap_or_else(|_| {
                errors.note(&format!("client {i}"), &Error::new(ErrorKind::Io, "stopped by a panic"));
                Done::default()
            });
            done.push((role, finished));
        }
        Ok((done, clock.elapsed().as_secs_f64()))
    });
    let (done, seconds) = started?;
    let mut fields_checked = 0;
    for (role, done) in &done {
        if let Role::Archiver { step } = role {
            match check_archived(&fs, load, *step, done.flushed_rounds) {
                Ok(fields) => fields_checked += fields,
                Err(e) => errors.note(&format!("archiver of step {step}"), &e),
            }
        }
    }
    wipe(&fs)?;
    let gather = |f: fn(&Done) -> &Vec<f64>| done.iter().flat_map(|(_, d)| f(d).iter().copied()).collect::<Vec<f64>>();
    Ok(LoadReport {
        clients: load.clients,
        archivers: load.archivers,
        seconds,
        field_bytes: load.field_bytes,
        list: Latencies::of(gather(|d| &d.list)),
        point_retrieve: Latencies::of(gather(|d| &d.retrieve)),
        archive_flush: Latencies::of(gather(|d| &d.flush)),
        fields_flushed: done.iter().map(|(_, d)| d.flushed_rounds * load.batch).sum(),
        fields_checked,
        bytes_read: done.iter().map(|(_, d)| d.bytes_read).sum(),
        errors: errors.count.load(Ordering::Relaxed),
        first_errors: errors.first.into_inner().unwrap_or_else(|e| e.into_inner()),
    })
}

/// Most clients a run starts (each a thread, and a remote client's handle two more).
pub const MAX_CLIENTS: usize = 10_000;

fn check(load: &Load) -> Result<()> {
    let bad = |what: String| Err(Error::new(ErrorKind::BadRequest, what));
    if load.clients == 0 || load.clients > MAX_CLIENTS || load.archivers > load.clients {
        return bad(format!("{} archivers among {} clients (at most {MAX_CLIENTS})", load.archivers, load.clients));
    }
    if load.field_bytes < 8 || load.levels == 0 || load.batch == 0 {
        return bad("fields need at least 8 bytes, the seeded step a level, a round a field".into());
    }
    Ok(())
}

/// The identifier of the field of `step`, `level` and `param` (member 0).
fn identifier(step: usize, level: usize, param: usize) -> Key {
    Key::parse(&format!("{DATASET},{COLLOCATION},step={step},number=0,levelist={level},param={param}")).expect("well-formed")
}

/// The request of every field of `step`.
fn step_request(step: usize) -> Request {
    Request::parse(&format!("{DATASET},{COLLOCATION},step={step},number=0")).expect("well-formed")
}

/// The bytes of `identifier`'s field: a stream only it has (so every byte read is checked).
fn payload(identifier: &Key, bytes: usize) -> Vec<u8> {
    let mut state = key_digest(identifier);
    let mut data = Vec::with_capacity(bytes + 8);
    while data.len() < bytes {
        data.extend_from_slice(&splitmix(&mut state).to_le_bytes());
    }
    data.truncate(bytes);
    data
}

fn splitmix(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

const PARAMS: usize = 10;

/// Step 0, which readers read: `levels` x 10 fields.
fn seed(fs: &FieldStore, load: &Load) -> Result<()> {
    for level in 1..=load.levels {
        for param in 1..=PARAMS {
            let id = identifier(0, level, param);
            fs.archive(&id, &payload(&id, load.field_bytes))?;
        }
    }
    fs.flush()
}

/// Wipes the data set of a run (of an earlier one, before; of this one, after).
fn wipe(fs: &FieldStore) -> Result<()> {
    match fs.wipe(&Request::parse(DATASET).expect("well-formed"), true) {
        Err(e) if e.kind() == ErrorKind::NotFound => Ok(()),
        wiped => wiped.map(drop),
    }
}

/// One client: opens its own handle, waits at `gate` for the others, then works until the
/// time is up (unless the run was abandoned meanwhile).
fn client(config: &Config, load: &Load, index: usize, role: Role, (gate, abandoned): (&RwLock<()>, &AtomicBool), errors: &Errors) -> Done {
    let opened = fieldstore::open(config);
    drop(gate.read().unwrap_or_else(|e| e.into_inner()));
    if abandoned.load(Ordering::Relaxed) {
        return Done::default();
    }
    let who = format!("client {index}");
    let fs = match opened {
        Ok(fs) => fs,
        Err(e) => {
            errors.note(&who, &e);
            return Done::default();
        }
    };
    let deadline = Instant::now() + load.duration;
    let mut done = Done::default();
    let mut random = index as u64;
    for operation in 0..MAX_OPERATIONS {
        if Instant::now() >= deadline {
            break;
        }
        let clock = Instant::now();
        let outcome = match role {
            Role::Lister => list_step(&fs, load).map(|()| done.list.push(clock.elapsed().as_secs_f64())),
            Role::Retriever => {
                let (level, param) = (1 + splitmix(&mut random) as usize % load.levels, 1 + splitmix(&mut random) as usize % PARAMS);
                retrieve_one(&fs, load, level, param).map(|bytes| {
                    done.retrieve.push(clock.elapsed().as_secs_f64());
                    done.bytes_read += bytes;
                })
            }
            Role::Archiver { step } => archive_round(&fs, load, step, operation).map(|()| {
                done.flush.push(clock.elapsed().as_secs_f64());
                done.flushed_rounds += 1;
                std::thread::sleep((clock + load.interval).min(deadline).saturating_duration_since(Instant::now()));
            }),
        };
        if let Err(e) = outcome {
            errors.note(&who, &e);
            if role_stops_after_error(role) {
                break;
            }
        }
    }
    done
}

/// An archiver whose round failed stops: its later rounds would not be numbered as checked.
fn role_stops_after_error(role: Role) -> bool {
    matches!(role, Role::Archiver { .. })
}

/// Lists step 0: every seeded field must be there.
fn list_step(fs: &FieldStore, load: &Load) -> Result<()> {
    let listed = fs.list(&step_request(0), ListOptions::default())?;
    let expected = load.levels * PARAMS;
    if listed.fields.len() != expected {
        return Err(Error::new(ErrorKind::Corrupt, format!("step 0 listed {} fields, not {expected}", listed.fields.len())));
    }
    Ok(())
}

/// Retrieves one seeded field and checks its bytes; their count.
fn retrieve_one(fs: &FieldStore, load: &Load, level: usize, param: usize) -> Result<u64> {
    let id = identifier(0, level, param);
    let bytes = retrieve(fs, &Request::parse(&id.to_string())?)?;
    if bytes != payload(&id, load.field_bytes) {
        return Err(Error::new(ErrorKind::Corrupt, format!("{id}: the bytes retrieved are not those archived")));
    }
    Ok(bytes.len() as u64)
}

/// Archives round `round` of an archiver (its fields are parameters `round * batch + 1..`
/// of level 1 of `step`), then flushes.
fn archive_round(fs: &FieldStore, load: &Load, step: usize, round: usize) -> Result<()> {
    for param in round * load.batch + 1..=(round + 1) * load.batch {
        let id = identifier(step, 1, param);
        fs.archive(&id, &payload(&id, load.field_bytes))?;
    }
    fs.flush()
}

/// Retrieves every round an archiver flushed and checks each field's bytes; their count.
fn check_archived(fs: &FieldStore, load: &Load, step: usize, rounds: usize) -> Result<usize> {
    let (mut reader, _) = fs.retrieve(&step_request(step))?;
    let mut params = Vec::new();
    while let Some((field, bytes)) = reader.next_field()? {
        let id = field.identifier();
        if bytes != payload(&id, load.field_bytes) {
            return Err(Error::new(ErrorKind::Corrupt, format!("{id}: the bytes read back are not those archived")));
        }
        params.push(id.get("param").and_then(|p| p.parse::<usize>().ok()).unwrap_or_default());
    }
    params.sort_unstable();
    if params != (1..=rounds * load.batch).collect::<Vec<_>>() {
        let message =
            format!("step {step}: {} fields read back, not the {} of the {rounds} rounds flushed", params.len(), rounds * load.batch);
        return Err(Error::new(ErrorKind::Corrupt, message));
    }
    Ok(params.len())
}

fn retrieve(fs: &FieldStore, request: &Request) -> Result<Vec<u8>> {
    let (mut reader, _) = fs.retrieve(request)?;
    let mut bytes = Vec::new();
    reader.read_to_end(&mut bytes).map_err(|e| Error::caused_by(ErrorKind::Io, format!("retrieving {request}"), e))?;
    Ok(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn latencies_are_percentiles_of_what_was_measured() {
        let l = Latencies::of((1..=100).map(|ms| ms as f64 / 1e3).collect());
        assert_eq!((l.count, l.p50_ms, l.p99_ms, l.max_ms), (100, 50.0, 99.0, 100.0));
    }

    #[test]
    fn each_field_has_bytes_of_its_own() {
        let (a, b) = (identifier(0, 1, 1), identifier(0, 1, 2));
        assert_eq!(payload(&a, 100), payload(&a, 100));
        assert_ne!(payload(&a, 100), payload(&b, 100));
        assert_eq!(payload(&a, 13).len(), 13);
    }

    #[test]
    fn a_run_checks_every_flushed_field_and_reports_no_errors() {
        let dir = std::env::temp_dir().join(format!("fieldstore-load-{}", std::process::id()));
        let root = dir.display();
        let yaml = format!("catalogue: {{type: posix, root: {root}, create: true}}\nstore: {{type: posix, root: {root}, create: true}}\n");
        let config = Config::parse("test", &yaml).unwrap();
        let duration = Duration::from_millis(300);
        let load = Load { clients: 6, archivers: 2, duration, field_bytes: 1000, levels: 2, batch: 3, interval: Duration::from_millis(10) };
        let report = run(&config, &load).unwrap();
        let _ = std::fs::remove_dir_all(&dir);
        assert_eq!(report.errors, 0, "{:?}", report.first_errors);
        assert!(report.fields_flushed > 0 && report.fields_checked == report.fields_flushed);
        assert!(report.list.count > 0 && report.point_retrieve.count > 0 && report.bytes_read > 0);
    }
}
