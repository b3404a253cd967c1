//! `field-io`: the Field I/O functions of the DAOS proof of concept (SYSTEM.md section 5), on
//! any object API. `write(key, bytes)` stores a new array and points the index at it (the old
//! array is only de-referenced); `read(key)` follows the index. A key has a most-significant
//! part (the forecast) and a least-significant part (the field).
//!
//! Modes: **full**: a main key-value maps the forecast to a forecast container, named by the
//! MD5 of the forecast so racing creators converge, whose index key-value maps the field to its
//! array; **no-containers**: the same in the main container; **no-index**: the array is named
//! by the MD5 of the whole key, with no key-values.

use fieldstore::{Error, Result};
use fieldstore_objects::Pool;
use md5::{Digest, Md5};

use crate::clock::micros_since_epoch;
use crate::hammer::Phase;
use crate::payload::{self, Check};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    Full,
    NoContainers,
    NoIndex,
}

impl Mode {
    pub fn parse(text: &str) -> std::result::Result<Mode, String> {
        match text {
            "full" => Ok(Mode::Full),
            "no-containers" => Ok(Mode::NoContainers),
            "no-index" => Ok(Mode::NoIndex),
            _ => Err(format!("field-io mode {text:?}: use full, no-containers or no-index")),
        }
    }
}

const MAIN: &str = "main";

fn md5_hex(text: &str) -> String {
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

    /// Writes a new array for (forecast, field) and points the index at it.
    pub fn write(&mut self, forecast: &str, field: &str, data: &[u8]) -> Result<()> {
        if self.mode == Mode::NoIndex {
            let main = self.pool.container(MAIN, true)?;
            return main.array(&md5_hex(&format!("{forecast}/{field}")), true)?.write(0, data);
        }
        let (container_name, index_name) = self.forecast_place(forecast);
        if self.mode == Mode::Full {
            // The main key-value records the forecast's container (idempotent across writers).
            let main = self.pool.container(MAIN, true)?;
            let mut forecasts = main.kv(MAIN)?;
            if forecasts.get(forecast)?.is_none() {
                forecasts.put(forecast, container_name.as_bytes())?;
            }
        }
        let container = self.pool.container(&container_name, true)?;
        self.counter += 1;
        let array_name = format!("{}.{}", self.writer, self.counter);
        container.array(&array_name, true)?.write(0, data)?;
        let pointer = format!("{container_name} {array_name} {}", data.len());
        container.kv(&index_name)?.put(field, pointer.as_bytes())
    }

    /// Reads what the index points to for (forecast, field); `None` if it was never written.
    pub fn read(&self, forecast: &str, field: &str) -> Result<Option<Vec<u8>>> {
        if self.mode == Mode::NoIndex {
            let main = self.pool.container(MAIN, false)?;
            let array = main.array(&md5_hex(&format!("{forecast}/{field}")), false);
            let Ok(array) = array else { return Ok(None) };
            let mut buf = vec![0u8; array.size()? as usize];
            array.read(0, &mut buf)?;
            return Ok(Some(buf));
        }
        let container_name = match self.mode {
            Mode::Full => {
                let main = self.pool.container(MAIN, false)?;
                match main.kv(MAIN)?.get(forecast)? {
                    Some(name) => String::from_utf8(name).map_err(|_| Error::Invalid("forecast entry is not text".into()))?,
                    None => return Ok(None),
                }
            }
            _ => MAIN.to_string(),
        };
        let (_, index_name) = self.forecast_place(forecast);
        let container = self.pool.container(&container_name, false)?;
        let Some(pointer) = container.kv(&index_name)?.get(field)? else { return Ok(None) };
        let pointer = String::from_utf8(pointer).map_err(|_| Error::Invalid("index entry is not text".into()))?;
        let parts: Vec<&str> = pointer.split(' ').collect();
        let [store, array_name, length] = parts[..] else { return Err(Error::Invalid(format!("bad index entry {pointer:?}"))) };
        let length: usize = length.parse().map_err(|_| Error::Invalid(format!("bad index entry {pointer:?}")))?;
        let array = self.pool.container(store, false)?.array(array_name, false)?;
        let mut buf = vec![0u8; length];
        array.read(0, &mut buf)?;
        Ok(Some(buf))
    }
}

/// The field-io benchmark: `iterations` fields of `size` bytes per process.
#[derive(Clone, Debug)]
pub struct FieldIoBench {
    pub mode: Mode,
    pub size: usize,
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
        let template = payload::synthetic(self.size);
        Phase::measure("write", |phase| {
            for i in 0..self.iterations {
                let field = Self::field(rank, self.first_field + i);
                let key = fieldstore::Key::from_pairs([("forecast", forecast.as_str()), ("field", field.as_str())]);
                let data = payload::make(&template, &key, i as u64, Check::Metadata);
                phase.io("write", i, data.len() as u64, || io.write(&forecast, &field, &data))?;
                phase.fields += 1;
                phase.bytes += data.len() as u64;
            }
            Ok(())
        })
    }

    /// Reads the fields rank `owner` wrote, checking each one's stamp.
    pub fn read(&self, pool: &dyn Pool, owner: u32, reader: u32) -> Result<Phase> {
        let io = FieldIo::new(pool, self.mode, reader);
        let forecast = self.forecast(owner);
        Phase::measure("read", |phase| {
            for i in 0..self.iterations {
                let field = Self::field(owner, self.first_field + i);
                let data = phase.io("read", i, self.size as u64, || io.read(&forecast, &field))?;
                let data = data.ok_or_else(|| Error::Invalid(format!("field-io: {forecast}/{field} was never written")))?;
                let key = fieldstore::Key::from_pairs([("forecast", forecast.as_str()), ("field", field.as_str())]);
                payload::verify(&data, &key, Check::Metadata).map_err(Error::Invalid)?;
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
            assert_eq!(io.read("fc", "t").ok().flatten(), None, "{mode:?}");
            io.write("fc", "t", b"first").unwrap();
            io.write("fc", "q", b"other").unwrap();
            io.write("fc", "t", b"second").unwrap();
            let reader = FieldIo::new(&pool, mode, 1);
            assert_eq!(reader.read("fc", "t").unwrap().as_deref(), Some(&b"second"[..]), "{mode:?}");
            assert_eq!(reader.read("fc", "q").unwrap().as_deref(), Some(&b"other"[..]), "{mode:?}");
            assert_eq!(reader.read("fc", "z").unwrap(), None, "{mode:?}");
        }
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
