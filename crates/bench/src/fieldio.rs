//! `field-io`: the Field I/O functions of the DAOS proof of concept (docs/benchmarks.md), on
//! any object API. `write(key, bytes)` stores a new array and points the index at it (the old
//! array is only de-referenced); `read(key)` follows the index. A key has a most-significant
//! part (the forecast) and a least-significant part (the field).
//!
//! Modes: **full**: a main key-value maps the forecast to a forecast container, named by the
//! MD5 of the forecast so racing creators converge, whose index key-value maps the field to its
//! array; **no-containers**: the same in the main container; **no-index**: the array is named
//! by the MD5 of the whole key, with no key-values.

use fieldstore::error::ErrorKind;
use fieldstore::{Error, Result};
use fieldstore_objects::Pool;
use md5::{Digest, Md5};

use crate::clock::micros_since_epoch;
use crate::hammer::Phase;
use crate::payload::{self, Check};
use crate::roles::Role;

/// How Field I/O lays fields out: a container and index per forecast (the paper's full
/// mode), one shared container, or no index at all.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Mode {
    /// A container and an index key-value per forecast, named in a main key-value.
    Full,
    /// Each forecast's index key-value and arrays in the main container.
    NoContainers,
    /// Arrays named by the MD5 of the whole key, with no key-values.
    NoIndex,
}

impl Mode {
    /// Its name on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Mode::Full => "full",
            Mode::NoContainers => "no-containers",
            Mode::NoIndex => "no-index",
        }
    }
}

const MAIN: &str = "main";

/// The MD5 of `text` in hex (names that converge without coordination).
pub(crate) fn md5_hex(text: &str) -> String {
    Md5::digest(text.as_bytes()).iter().map(|b| format!("{b:02x}")).collect()
}

/// The Field I/O functions over a pool.
pub struct FieldIo<'p> {
    pool: &'p dyn Pool,
    mode: Mode,
    /// Names new arrays uniquely: rank and a counter.
    writer: String,
    counter: u64,
}

impl<'p> FieldIo<'p> {
    /// The functions over `pool` in `mode`, naming new arrays after `rank`.
    pub fn new(pool: &'p dyn Pool, mode: Mode, rank: u32) -> Self {
        FieldIo { pool, mode, writer: format!("{rank}.{}", micros_since_epoch()), counter: 0 }
    }

    /// Where a forecast's index and arrays live: (container, index key-value name).
    fn forecast_place(&self, forecast: &str) -> (String, String) {
        match self.mode {
            Mode::Full => (md5_hex(forecast), "index".into()),
            Mode::NoContainers | Mode::NoIndex => (MAIN.into(), format!("index.{}", md5_hex(forecast))),
        }
    }

    /// Writes a new array for (forecast, field) and points the index at it; `steps` times
    /// the index work, the array open and the transfer.
    pub fn write(&mut self, forecast: &str, field: &str, data: &[u8], steps: &mut Steps) -> Result<()> {
        let bytes = data.len() as u64;
        if self.mode == Mode::NoIndex {
            let name = md5_hex(&format!("{forecast}/{field}"));
            let mut array = steps.time("open", 0, || self.pool.container(MAIN, true)?.array(&name, true))?;
            return steps.time("transfer", bytes, || array.write(0, data));
        }
        let (container_name, index_name) = self.forecast_place(forecast);
        if self.mode == Mode::Full {
            // The main key-value records the forecast's container (idempotent across writers).
            steps.time("index", 0, || -> Result<()> {
                let mut forecasts = self.pool.container(MAIN, true)?.kv(MAIN)?;
                if forecasts.get(forecast)?.is_none() {
                    forecasts.put(forecast, container_name.as_bytes())?;
                }
                Ok(())
            })?;
        }
        self.counter += 1;
        let array_name = format!("{}.{}", self.writer, self.counter);
        let (container, mut array) = steps.time("open", 0, || -> Result<_> {
            let container = self.pool.container(&container_name, true)?;
            let array = container.array(&array_name, true)?;
            Ok((container, array))
        })?;
        steps.time("transfer", bytes, || array.write(0, data))?;
        let pointer = format!("{container_name} {array_name} {}", data.len());
        steps.time("index", 0, || container.kv(&index_name)?.put(field, pointer.as_bytes()))
    }

    /// Reads what the index points to for (forecast, field); `None` if it was never written.
    pub fn read(&self, forecast: &str, field: &str, steps: &mut Steps) -> Result<Option<Vec<u8>>> {
        let (array, length) = if self.mode == Mode::NoIndex {
            let opened = steps.time("open", 0, || self.pool.container(MAIN, false)?.array(&md5_hex(&format!("{forecast}/{field}")), false));
            let Ok(array) = opened else { return Ok(None) };
            let length = array.size()? as usize;
            (array, length)
        } else {
            let Some((store, array_name, length)) = steps.time("index", 0, || self.lookup(forecast, field))? else { return Ok(None) };
            (steps.time("open", 0, || self.pool.container(&store, false)?.array(&array_name, false))?, length)
        };
        let mut buf = vec![0u8; length];
        steps.time("transfer", length as u64, || array.read(0, &mut buf))?;
        Ok(Some(buf))
    }

    /// Follows the index: (container, array, length) of a field, if indexed.
    fn lookup(&self, forecast: &str, field: &str) -> Result<Option<(String, String, usize)>> {
        let container_name = match self.mode {
            Mode::Full => match self.pool.container(MAIN, false)?.kv(MAIN)?.get(forecast)? {
                Some(name) => String::from_utf8(name).map_err(|e| Error::caused_by(ErrorKind::Corrupt, "forecast entry is not text", e))?,
                None => return Ok(None),
            },
            _ => MAIN.to_string(),
        };
        let (_, index_name) = self.forecast_place(forecast);
        let Some(pointer) = self.pool.container(&container_name, false)?.kv(&index_name)?.get(field)? else { return Ok(None) };
        let pointer = String::from_utf8(pointer).map_err(|e| Error::caused_by(ErrorKind::Corrupt, "index entry is not text", e))?;
        let bad = || Error::new(ErrorKind::Corrupt, format!("bad index entry {pointer:?}"));
        let parts: Vec<&str> = pointer.split(' ').collect();
        let [store, array_name, length] = parts[..] else { return Err(bad()) };
        let length = length.parse().map_err(|e| Error::caused_by(ErrorKind::Corrupt, format!("bad index entry {pointer:?}"), e))?;
        Ok(Some((store.to_string(), array_name.to_string(), length)))
    }
}

/// The timed parts of one Field I/O call: (operation, bytes, start, end), microseconds since
/// the epoch (the object open, transfer and index work that docs/benchmarks.md, "Event logs and analyze", logs).
#[derive(Default)]
pub struct Steps {
    /// The parts timed so far, in order.
    pub parts: Vec<(&'static str, u64, u64, u64)>,
}

impl Steps {
    fn time<T>(&mut self, op: &'static str, bytes: u64, f: impl FnOnce() -> T) -> T {
        let start = micros_since_epoch();
        let out = f();
        self.parts.push((op, bytes, start, micros_since_epoch()));
        out
    }
}

/// The field-io benchmark: `iterations` fields of `size` bytes per process.
#[derive(Clone, Debug)]
pub struct FieldIoBench {
    /// How fields are laid out.
    pub mode: Mode,
    /// Bytes per field.
    pub size: usize,
    /// Fields per process.
    pub iterations: usize,
    /// One forecast (one index key-value) shared by all processes instead of one each.
    pub shared_forecast: bool,
    /// Number of the first field (writers of pattern B write new fields after the
    /// pre-populated ones).
    pub first_field: usize,
}

impl FieldIoBench {
    fn forecast(&self, rank: u32) -> String {
        if self.shared_forecast {
            "forecast".into()
        } else {
            format!("forecast.{rank}")
        }
    }

    fn field(rank: u32, i: usize) -> String {
        format!("field.{rank}.{i}")
    }

    /// Writes this rank's fields; each payload is stamped so reads can check it.
    pub fn write(&self, pool: &dyn Pool, rank: u32) -> Result<Phase> {
        let mut io = FieldIo::new(pool, self.mode, rank);
        let forecast = self.forecast(rank);
        let mut stamper = payload::Stamper::new(&payload::synthetic(self.size), Check::Metadata);
        Phase::measure("write", |phase| {
            for i in 0..self.iterations {
                let field = Self::field(rank, self.first_field + i);
                let key = fieldstore::Key::from_pairs([("forecast", forecast.as_str()), ("field", field.as_str())]);
                let data = stamper.field(&key, i as u64);
                let mut steps = Steps::default();
                let written = io.write(&forecast, &field, data, &mut steps);
                phase.record_all(i, &steps.parts);
                written?;
                phase.fields += 1;
                phase.bytes += data.len() as u64;
            }
            Ok(())
        })
    }

    /// Plays `role` as rank `rank` ([`Role::of_pairs`]): writes its fields (pattern B's writers
    /// the fields after the pre-populated ones), or reads the owner's.
    pub fn run(&self, pool: &dyn Pool, role: Role, rank: u32) -> Result<Phase> {
        let first_field = if role.after_prewrite { self.first_field + self.iterations } else { self.first_field };
        let bench = FieldIoBench { first_field, ..self.clone() };
        if role.reads {
            bench.read(pool, role.owner, rank)
        } else {
            bench.write(pool, role.owner)
        }
    }

    /// Removes what a run of `ranks` processes wrote in any mode: the main container and
    /// every forecast's (a sweep's runs on a server pool would otherwise pile up).
    pub fn remove(pool: &dyn Pool, ranks: u32) -> Result<()> {
        let per_process = (0..ranks).map(|r| format!("forecast.{r}"));
        for forecast in per_process.chain(["forecast".to_string()]) {
            pool.remove_container(&md5_hex(&forecast))?;
        }
        pool.remove_container(MAIN)
    }

    /// Reads the fields rank `owner` wrote, checking each one's stamp.
    pub fn read(&self, pool: &dyn Pool, owner: u32, reader: u32) -> Result<Phase> {
        let io = FieldIo::new(pool, self.mode, reader);
        let forecast = self.forecast(owner);
        Phase::measure("read", |phase| {
            for i in 0..self.iterations {
                let field = Self::field(owner, self.first_field + i);
                let mut steps = Steps::default();
                let data = io.read(&forecast, &field, &mut steps);
                phase.record_all(i, &steps.parts);
                let data = data?;
                let data =
                    data.ok_or_else(|| Error::new(ErrorKind::NotFound, format!("field-io: {forecast}/{field} was never written")))?;
                let key = fieldstore::Key::from_pairs([("forecast", forecast.as_str()), ("field", field.as_str())]);
                payload::verify(&data, &key, Check::Metadata)?;
                phase.fields += 1;
                phase.bytes += data.len() as u64;
            }
            Ok(())
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use fieldstore_objects::posix::PosixPool;

    #[test]
    fn every_mode_writes_rewrites_and_reads_back() {
        for mode in [Mode::Full, Mode::NoContainers, Mode::NoIndex] {
            let dir = tempfile::tempdir().unwrap();
            let pool = PosixPool::new(dir.path()).unwrap();
            let mut io = FieldIo::new(&pool, mode, 0);
            assert_eq!(io.read("fc", "t", &mut Steps::default()).ok().flatten(), None, "{mode:?}");
            let s = &mut Steps::default();
            io.write("fc", "t", b"first", s).unwrap();
            io.write("fc", "q", b"other", s).unwrap();
            io.write("fc", "t", b"second", s).unwrap();
            let reader = FieldIo::new(&pool, mode, 1);
            assert_eq!(reader.read("fc", "t", s).unwrap().as_deref(), Some(&b"second"[..]), "{mode:?}");
            assert_eq!(reader.read("fc", "q", s).unwrap().as_deref(), Some(&b"other"[..]), "{mode:?}");
            assert_eq!(reader.read("fc", "z", s).unwrap(), None, "{mode:?}");
            let ops: std::collections::BTreeSet<&str> = s.parts.iter().map(|p| p.0).collect();
            let expected: &[&str] = if mode == Mode::NoIndex { &["open", "transfer"] } else { &["index", "open", "transfer"] };
            assert_eq!(ops.into_iter().collect::<Vec<_>>(), expected, "{mode:?}");
            assert_eq!(s.parts.iter().filter(|p| p.0 == "transfer").map(|p| p.1).sum::<u64>(), 5 + 5 + 6 + 6 + 5, "{mode:?}");
        }
    }

    #[test]
    fn remove_leaves_nothing_of_a_run_in_any_mode() {
        for mode in [Mode::Full, Mode::NoContainers, Mode::NoIndex] {
            let dir = tempfile::tempdir().unwrap();
            let pool = PosixPool::new(dir.path()).unwrap();
            for shared_forecast in [false, true] {
                let bench = FieldIoBench { mode, size: 64, iterations: 2, shared_forecast, first_field: 0 };
                bench.write(&pool, 0).unwrap();
                bench.write(&pool, 1).unwrap();
            }
            FieldIoBench::remove(&pool, 2).unwrap();
            assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0, "{mode:?}");
        }
    }

    #[test]
    fn pattern_b_writes_new_fields_while_readers_read_the_pre_populated_ones() {
        use crate::launch::Place;
        use crate::roles::Pattern;
        let dir = tempfile::tempdir().unwrap();
        let pool = PosixPool::new(dir.path()).unwrap();
        let bench = FieldIoBench { mode: Mode::Full, size: 256, iterations: 3, shared_forecast: false, first_field: 0 };
        let role = |rank, pattern| Role::of_pairs(&Place { rank, size: 2, node: "n".into() }, pattern, false, false);
        bench.run(&pool, role(0, Pattern::A), 0).unwrap();
        assert_eq!(bench.run(&pool, role(0, Pattern::B), 0).unwrap().mode, "write");
        let new_fields = FieldIoBench { first_field: 3, ..bench.clone() };
        assert_eq!(new_fields.read(&pool, 0, 1).unwrap().fields, 3, "the writer wrote fields 3 to 5");
        let read = bench.run(&pool, role(1, Pattern::B), 1).unwrap();
        assert_eq!((read.mode, read.fields), ("read", 3));
    }

    #[test]
    fn the_benchmark_reads_back_another_ranks_fields_in_every_mode() {
        for mode in [Mode::Full, Mode::NoContainers, Mode::NoIndex] {
            for shared_forecast in [false, true] {
                let dir = tempfile::tempdir().unwrap();
                let pool = PosixPool::new(dir.path()).unwrap();
                let bench = FieldIoBench { mode, size: 2048, iterations: 5, shared_forecast, first_field: 0 };
                for rank in 0..2 {
                    assert_eq!(bench.write(&pool, rank).unwrap().fields, 5);
                }
                let r = bench.read(&pool, 1, 0).unwrap();
                assert_eq!((r.fields, r.bytes), (5, 5 * 2048), "{mode:?} shared={shared_forecast}");
                let missing = FieldIoBench { iterations: 6, ..bench.clone() };
                assert!(missing.read(&pool, 0, 1).unwrap_err().to_string().contains("never written"));
            }
        }
    }
}
