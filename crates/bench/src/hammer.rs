//! `hammer`: the fdb-hammer workload. Each process writes, for each step, every (level,
//! param) field of its ensemble members and flushes once per step; the read phase retrieves
//! the same sequence and fails if any expected field is missing or fails its check; the list
//! phase lists what was written.

use std::collections::BTreeMap;
use std::time::Instant;

use fieldstore::error::IoContext;
use fieldstore::{Error, ErrorKind, FieldStore, Key, ListOptions, Request};
use serde::Serialize;

use crate::analyze::IoEvent;
use crate::clock::micros_since_epoch;
use crate::payload::{self, Check};
use crate::roles::Role;

/// What a hammer run writes and reads (fdb-hammer's options).
#[derive(Clone, Debug)]
pub struct Hammer {
    /// The `class` of every field.
    pub class: String,
    /// The `expver` of every field.
    pub expver: String,
    /// How many steps to write or read.
    pub nsteps: usize,
    /// First step.
    pub step: usize,
    /// How many levels, unless `levels` names them.
    pub nlevels: usize,
    /// First level (levels are `level`, `level + 1`, ... unless `levels` is given).
    pub level: usize,
    /// The levels by name, instead of `nlevels` numbered from `level`.
    pub levels: Option<Vec<String>>,
    /// How many parameters, unless `params` names them.
    pub nparams: usize,
    /// Parameter ids (default 1..=nparams).
    pub params: Option<Vec<String>>,
    /// How many ensemble members this process writes or reads (at least 1).
    pub nensembles: usize,
    /// First ensemble member.
    pub number: usize,
    /// Where each field's bytes come from.
    pub payload: Payload,
    /// What the write phase stamps into synthetic fields and the read phase checks.
    pub check: Check,
    /// Operational mode (FDB5's ITT): a step window for writers, polling for readers.
    pub itt: Option<Itt>,
}

/// The operational mode: writers start step `i` at `i * step_seconds` after they begin (a model
/// producing a step per window); readers poll `list()` until a step is complete, for at most
/// `timeout_seconds` per step, then read it while writers go on.
#[derive(Clone, Copy, Debug)]
pub struct Itt {
    /// The length of a writer's step window.
    pub step_seconds: f64,
    /// Longest a reader waits for a step to be complete.
    pub timeout_seconds: f64,
}

/// Where field bytes come from.
#[derive(Clone, Debug)]
pub enum Payload {
    /// Synthetic bytes of this size, archived with explicit keys.
    Synthetic(Vec<u8>),
    /// A GRIB message whose keys are set with ecCodes for each field (fdb-hammer's way).
    Grib(Vec<u8>),
}

impl Payload {
    /// The first GRIB message of the file at `path`, as the template, with its `class` and
    /// `expver` set once (fdb-hammer's `--class` and `--expver`): each field's message then
    /// says what it is archived as.
    pub fn from_template(path: &std::path::Path, class: &str, expver: &str) -> fieldstore::Result<Payload> {
        let bytes = std::fs::read(path).ctx("reading", path)?;
        let spans = fieldstore::grib::scan(&bytes, &path.display().to_string())?;
        let first = spans.first().ok_or_else(|| Error::new(ErrorKind::BadRequest, format!("{} holds no GRIB message", path.display())))?;
        let keys = [("class".to_string(), class.to_string()), ("expver".to_string(), expver.to_string())];
        Ok(Payload::Grib(fieldstore::grib::modify(&bytes[first.offset..first.offset + first.length], &keys)?))
    }
}

/// Where a write phase takes each field's bytes from.
enum FieldSource<'a> {
    /// The synthetic template in one kept buffer, stamped per field.
    Stamped(payload::Stamper),
    /// The GRIB template, encoded anew per field.
    Grib(&'a [u8]),
}

/// The result of one phase, as printed by `--json`.
#[derive(Clone, Debug, Serialize)]
pub struct Phase {
    /// `write`, `read` or `list`.
    pub mode: &'static str,
    /// Fields archived, retrieved or listed.
    pub fields: u64,
    /// Their bytes.
    pub bytes: u64,
    /// Wall-clock time of the whole phase.
    pub seconds: f64,
    /// Wall-clock time of the first and last I/O, microseconds since the epoch.
    pub first_io_us: u64,
    /// Wall-clock time of the last I/O, microseconds since the epoch.
    pub last_io_us: u64,
    /// Seconds spent in each kind of operation (archive, flush, grib, retrieve, list, check).
    pub breakdown: std::collections::BTreeMap<&'static str, f64>,
    /// Write phase: fields per second over the first and the last [`RATE_WINDOW`] fields
    /// (whole flushes), to show whether cost grows with what is stored.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub first_window_rate: Option<f64>,
    /// Write phase: fields per second over the last [`RATE_WINDOW`] fields.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub last_window_rate: Option<f64>,
    /// Every I/O of the phase (operation, iteration, bytes, start, end in microseconds since
    /// the epoch), for `bench analyze`; kept compact while timing.
    #[serde(skip)]
    pub events: Vec<(&'static str, u32, u64, u64, u64)>,
}

/// Whether phases keep their per-I/O events (40 bytes each: 40 MB for a million fields, which
/// would hide the store's own memory use). Off unless an event log will be written.
static KEEP_EVENTS: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// The data set hammer writes for `class` and `expver` (what a sweep wipes between runs).
pub fn dataset(class: &str, expver: &str) -> String {
    format!("class={class},expver={expver},stream=enfo,date=20231201,time=1200")
}

/// Makes phases started from now on keep (or drop) their per-I/O events, for `bench analyze`.
pub fn keep_events(keep: bool) {
    KEEP_EVENTS.store(keep, std::sync::atomic::Ordering::Relaxed);
}

fn keeping_events() -> bool {
    KEEP_EVENTS.load(std::sync::atomic::Ordering::Relaxed)
}

/// Most fields a read run retrieves with one request (steps are read together up to this).
pub const MERGED_READ_FIELDS: usize = 50_000;

/// Fields in the windows of [`Phase::first_window_rate`] and [`Phase::last_window_rate`].
pub const RATE_WINDOW: u64 = 10_000;

impl Phase {
    pub(crate) fn new(mode: &'static str) -> Self {
        Phase {
            mode,
            fields: 0,
            bytes: 0,
            seconds: 0.0,
            first_io_us: 0,
            last_io_us: 0,
            breakdown: Default::default(),
            first_window_rate: None,
            last_window_rate: None,
            events: Vec::new(),
        }
    }

    fn time<T>(&mut self, what: &'static str, f: impl FnOnce() -> T) -> T {
        let t = Instant::now();
        let out = f();
        *self.breakdown.entry(what).or_default() += t.elapsed().as_secs_f64();
        out
    }

    /// Times an I/O and records it as an event.
    pub(crate) fn io<T>(&mut self, op: &'static str, iteration: usize, bytes: u64, f: impl FnOnce() -> T) -> T {
        if !keeping_events() {
            return self.time(op, f);
        }
        let start = micros_since_epoch();
        let out = self.time(op, f);
        self.events.push((op, iteration as u32, bytes, start, micros_since_epoch()));
        out
    }

    /// Records timed parts (operation, bytes, start, end) measured elsewhere as events.
    pub(crate) fn record_all(&mut self, iteration: usize, parts: &[(&'static str, u64, u64, u64)]) {
        for &(op, bytes, start, end) in parts {
            *self.breakdown.entry(op).or_default() += end.saturating_sub(start) as f64 / 1e6;
            if keeping_events() {
                self.events.push((op, iteration as u32, bytes, start, end));
            }
        }
    }

    /// The phase's events as [`IoEvent`]s of one process.
    pub fn io_events(&self, node: &str, process: u32) -> Vec<IoEvent> {
        self.events
            .iter()
            .map(|&(op, iteration, bytes, io_start, io_end)| IoEvent {
                node: node.to_string(),
                process,
                phase: self.mode.to_string(),
                op: op.to_string(),
                iteration,
                bytes,
                io_start,
                io_end,
            })
            .collect()
    }

    /// Appends the phase's events, as the process at `place`, to a JSON-lines log (the input
    /// of `bench analyze`).
    pub fn append_events(&self, path: &std::path::Path, place: &crate::launch::Place) -> fieldstore::Result<()> {
        use std::io::Write;
        let file = std::fs::OpenOptions::new().create(true).append(true).open(path).ctx("writing", path)?;
        let mut out = std::io::BufWriter::new(file);
        for event in self.io_events(&place.node, place.rank) {
            serde_json::to_writer(&mut out, &event)
                .map_err(|e| Error::caused_by(ErrorKind::Io, format!("writing {}", path.display()), e))?;
            out.write_all(b"\n").ctx("writing", path)?;
        }
        out.flush().ctx("writing", path)
    }

    /// Runs a phase body and records its wall-clock time and first and last I/O times.
    pub(crate) fn measure(mode: &'static str, body: impl FnOnce(&mut Phase) -> fieldstore::Result<()>) -> fieldstore::Result<Phase> {
        let mut phase = Phase::new(mode);
        let start = Instant::now();
        phase.first_io_us = micros_since_epoch();
        body(&mut phase)?;
        phase.seconds = start.elapsed().as_secs_f64();
        phase.last_io_us = micros_since_epoch();
        Ok(phase)
    }

    /// Fields per second over the whole phase.
    pub fn fields_per_second(&self) -> f64 {
        self.fields as f64 / self.seconds
    }

    /// Bytes per second over the whole phase.
    pub fn bytes_per_second(&self) -> f64 {
        self.bytes as f64 / self.seconds
    }
}

/// Rates over the first and last [`RATE_WINDOW`] fields, from (fields, seconds) points taken
/// at each flush; `None` when the run is shorter than two windows.
fn window_rates(progress: &[(u64, f64)]) -> (Option<f64>, Option<f64>) {
    let total = progress.last().map_or(0, |p| p.0);
    if total < 2 * RATE_WINDOW {
        return (None, None);
    }
    let rate = |a: (u64, f64), b: (u64, f64)| (b.0 - a.0) as f64 / (b.1 - a.1);
    let first_end = *progress.iter().find(|p| p.0 >= RATE_WINDOW).expect("total >= window");
    let last_start = *progress.iter().rev().find(|p| p.0 <= total - RATE_WINDOW).expect("starts at 0");
    (Some(rate(progress[0], first_end)), Some(rate(last_start, *progress.last().unwrap())))
}

impl Hammer {
    fn levels(&self) -> Vec<String> {
        self.levels.clone().unwrap_or_else(|| (0..self.nlevels).map(|l| (self.level + l).to_string()).collect())
    }

    fn params(&self) -> Vec<String> {
        self.params.clone().unwrap_or_else(|| (1..=self.nparams).map(|p| p.to_string()).collect())
    }

    fn members(&self) -> impl Iterator<Item = usize> {
        self.number..self.number + self.nensembles.max(1)
    }

    /// Fields of one step, over all members of this process.
    fn fields_per_step(&self) -> usize {
        self.levels().len() * self.params().len() * self.nensembles.max(1)
    }

    fn steps(&self) -> impl Iterator<Item = usize> {
        self.step..self.step + self.nsteps
    }

    /// The dataset and collocation part of every identifier (fdb-hammer's ensemble layout).
    fn base(&self) -> String {
        format!("{},domain=g,type=pf,levtype=pl", dataset(&self.class, &self.expver))
    }

    /// The identifier of the field of `member`, `step`, `level` and `param`.
    pub fn identifier(&self, member: usize, step: usize, level: &str, param: &str) -> Key {
        self.identifier_from(&Key::parse(&self.base()).expect("well-formed"), member, step, level, param)
    }

    /// The identifier of one field, from the parsed [`Hammer::base`] (built once per run).
    fn identifier_from(&self, base: &Key, member: usize, step: usize, level: &str, param: &str) -> Key {
        self.identifier_in(&self.member_key(base, member, step), level, param)
    }

    /// The keys every field of one member and step shares: built once per member and step.
    fn member_key(&self, base: &Key, member: usize, step: usize) -> Key {
        let mut key = base.clone();
        key.push("step", step.to_string());
        key.push("number", member.to_string());
        key
    }

    fn identifier_in(&self, member_key: &Key, level: &str, param: &str) -> Key {
        let mut key = member_key.clone();
        key.push("levelist", level);
        key.push("param", param);
        key
    }

    /// The share of a process playing `role` in a run whose first rank's share this is: the
    /// ensemble members of rank `role.owner` (each rank has `nensembles` of its own, the
    /// first rank's from `number`) and, for pattern B's writers, the steps after those the
    /// pre-populating run wrote.
    pub fn share(self, role: Role) -> fieldstore::Result<Hammer> {
        let step = match role.after_prewrite {
            true => {
                self.step.checked_add(self.nsteps).ok_or_else(|| Error::new(ErrorKind::BadRequest, "--step plus --nsteps is too large"))?
            }
            false => self.step,
        };
        Ok(Hammer { number: self.number + role.owner as usize * self.nensembles.max(1), step, ..self })
    }

    /// Archives every field, flushing after each step.
    pub fn write(&self, fs: &FieldStore) -> fieldstore::Result<Phase> {
        let (levels, params) = (self.levels(), self.params());
        let mut phase = Phase::new("write");
        let run = micros_since_epoch();
        let start = Instant::now();
        phase.first_io_us = micros_since_epoch();
        let mut op = run;
        let base = Key::parse(&self.base())?;
        let mut source = match &self.payload {
            Payload::Synthetic(template) => FieldSource::Stamped(payload::Stamper::new(template, self.check)),
            Payload::Grib(template) => FieldSource::Grib(template),
        };
        // (fields archived, seconds) after each flush.
        let mut progress: Vec<(u64, f64)> = vec![(0, 0.0)];
        for step in self.steps() {
            if let Some(itt) = self.itt {
                let window_start = std::time::Duration::from_secs_f64(itt.step_seconds * (step - self.step) as f64);
                std::thread::sleep(window_start.saturating_sub(start.elapsed()));
            }
            for member in self.members() {
                let member_key = self.member_key(&base, member, step);
                for level in &levels {
                    for param in &params {
                        let id = self.identifier_in(&member_key, level, param);
                        let encoded;
                        let bytes = match &mut source {
                            FieldSource::Stamped(stamper) => stamper.field(&id, op),
                            FieldSource::Grib(template) => {
                                encoded = phase.time("grib", || crate::grib_fields::encode(template, member, step, level, param))?;
                                &encoded[..]
                            }
                        };
                        op += 1;
                        let index = step - self.step;
                        phase.io("archive", index, bytes.len() as u64, || fs.archive(&id, bytes))?;
                        phase.fields += 1;
                        phase.bytes += bytes.len() as u64;
                    }
                }
            }
            phase.io("flush", step - self.step, 0, || fs.flush())?;
            progress.push((phase.fields, start.elapsed().as_secs_f64()));
        }
        phase.seconds = start.elapsed().as_secs_f64();
        phase.last_io_us = micros_since_epoch();
        (phase.first_window_rate, phase.last_window_rate) = window_rates(&progress);
        Ok(phase)
    }

    /// Retrieves every field; fails on a missing field or a failed check. As fdb-hammer reads
    /// all its retrieves through one merged handle, steps are read together, up to
    /// [`MERGED_READ_FIELDS`] fields per request, so that the store keeps reads in flight from
    /// one step into the next; in operational mode each step is read once it is complete.
    pub fn read(&self, fs: &FieldStore) -> fieldstore::Result<Phase> {
        Phase::measure("read", |phase| {
            if let Some(itt) = self.itt {
                for step in self.steps() {
                    self.wait_for_step(fs, step, itt, phase)?;
                    self.read_steps(fs, &[step], phase)?;
                }
                return Ok(());
            }
            let per_step = self.fields_per_step().max(1);
            let steps: Vec<usize> = self.steps().collect();
            for group in steps.chunks((MERGED_READ_FIELDS / per_step).max(1)) {
                self.read_steps(fs, group, phase)?;
            }
            Ok(())
        })
    }

    /// Retrieves every field of `steps` (all members) with one request, field by field as
    /// fdb-hammer does: memory stays bounded by the largest field (or the store's read-ahead),
    /// and each field is checked where the reader holds it. Records one "retrieve" event per
    /// step, from its first field's read to its last; check time is kept apart.
    fn read_steps(&self, fs: &FieldStore, steps: &[usize], phase: &mut Phase) -> fieldstore::Result<()> {
        let (levels, params) = (self.levels(), self.params());
        let join = |values: &mut dyn Iterator<Item = String>| values.collect::<Vec<_>>().join("/");
        let members = join(&mut self.members().map(|m| m.to_string()));
        let request = Request::parse(&format!(
            "{},step={},number={members},levelist={},param={}",
            self.base(),
            join(&mut steps.iter().map(|s| s.to_string())),
            levels.join("/"),
            params.join("/")
        ))?;
        let retrieve_started = Instant::now();
        let mut check_seconds = 0.0;
        // Per (step, member): fields, bytes, and the first field's start and last one's end.
        let mut read: BTreeMap<(String, String), (usize, u64, u64, u64)> = BTreeMap::new();
        // The first step's reads start with the request.
        let mut field_start = micros_since_epoch();
        let (mut reader, _) = fs.retrieve(&request)?;
        while let Some((entry, field)) = reader.next_field()? {
            let field_end = micros_since_epoch();
            let identifier = entry.identifier();
            let checked = Instant::now();
            payload::verify(field, &identifier, self.check)?;
            check_seconds += checked.elapsed().as_secs_f64();
            let at = |k: &str| identifier.get(k).unwrap_or_default().to_string();
            let counts = read.entry((at("step"), at("number"))).or_insert((0, 0, field_start, field_end));
            (counts.0, counts.1, counts.3) = (counts.0 + 1, counts.1 + field.len() as u64, field_end);
            field_start = micros_since_epoch();
        }
        *phase.breakdown.entry("retrieve").or_default() += retrieve_started.elapsed().as_secs_f64() - check_seconds;
        *phase.breakdown.entry("check").or_default() += check_seconds;
        let expected = levels.len() * params.len();
        for &step in steps {
            let (mut bytes, mut span) = (0, None::<(u64, u64)>);
            for member in self.members() {
                let (fields, member_bytes, start, end) = read.get(&(step.to_string(), member.to_string())).copied().unwrap_or_default();
                if fields != expected {
                    return Err(Error::new(
                        ErrorKind::NotFound,
                        format!("step {step} member {member}: {fields} of {expected} fields found"),
                    ));
                }
                bytes += member_bytes;
                span = Some(span.map_or((start, end), |(s, e)| (s.min(start), e.max(end))));
                phase.fields += fields as u64;
            }
            phase.bytes += bytes;
            if let (true, Some((start, end))) = (keeping_events(), span) {
                phase.events.push(("retrieve", (step - self.step) as u32, bytes, start, end));
            }
        }
        Ok(())
    }

    /// Polls `list()` until every field of a step is visible (operational mode).
    fn wait_for_step(&self, fs: &FieldStore, step: usize, itt: Itt, phase: &mut Phase) -> fieldstore::Result<()> {
        let expected = self.fields_per_step();
        let members: Vec<String> = self.members().map(|m| m.to_string()).collect();
        let request = Request::parse(&format!("{},step={step},number={}", self.base(), members.join("/")))?;
        let give_up = Instant::now() + std::time::Duration::from_secs_f64(itt.timeout_seconds);
        loop {
            let listed = phase.io("poll", step - self.step, 0, || fs.list(&request, ListOptions::default()))?;
            if listed.fields.len() >= expected {
                return Ok(());
            }
            if Instant::now() > give_up {
                return Err(Error::new(
                    ErrorKind::Timeout,
                    format!("step {step}: {} of {expected} fields visible after {} s", listed.fields.len(), itt.timeout_seconds),
                ));
            }
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
    }

    /// Lists every member's fields; fails if any is missing.
    pub fn list(&self, fs: &FieldStore) -> fieldstore::Result<Phase> {
        let expected = self.nsteps * self.levels().len() * self.params().len();
        Phase::measure("list", |phase| {
            for (i, member) in self.members().enumerate() {
                let request = Request::parse(&format!("{},number={member}", self.base()))?;
                let listed = phase.io("list", i, 0, || fs.list(&request, ListOptions::default()))?;
                let in_steps = |f: &&fieldstore::FieldEntry| self.steps().any(|s| f.element.get("step") == Some(s.to_string().as_str()));
                let found = listed.fields.iter().filter(in_steps).count();
                if found < expected {
                    return Err(Error::new(ErrorKind::NotFound, format!("member {member}: {found} of {expected} fields listed")));
                }
                phase.fields += listed.fields.len() as u64;
                phase.bytes += listed.fields.iter().map(|f| f.location.length).sum::<u64>();
            }
            Ok(())
        })
    }
}
