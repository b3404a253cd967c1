//! Reading retrieved fields: adjacent byte ranges of the same file or object are merged into
//! one storage read (up to [`MAX_READ`] bytes), and every field's CRC-32C is checked before
//! its bytes are handed out.

use std::io::Read;

use super::{FieldEntry, FieldStore, ListOptions};
use crate::backend::{ControlAction, Store};
use crate::error::{Error, Result};
use crate::request::Request;

/// Largest single storage read the reader issues.
pub const MAX_READ: u64 = 64 << 20;

/// One storage read covering consecutive fields `first..first + count`.
#[derive(Clone, Debug)]
struct ReadRun {
    uri: std::sync::Arc<str>,
    offset: u64,
    length: u64,
    first: usize,
    count: usize,
}

/// The bytes of retrieved fields, in order, as one stream.
pub struct DataReader<'s> {
    store: &'s dyn Store,
    fields: Vec<FieldEntry>,
    runs: Vec<ReadRun>,
    next_run: usize,
    buffer: Vec<u8>,
    position: usize,
}

impl FieldStore {
    /// Retrieves what a request names, in numeric key order. `explanation` is set on the
    /// reader when nothing matched.
    pub fn retrieve(&mut self, request: &Request) -> Result<(DataReader<'_>, Option<String>)> {
        let matches = self.resolve(request, ListOptions::default(), Some(ControlAction::Retrieve))?;
        Ok((DataReader::new(self.store(), matches.fields), matches.explanation))
    }
}

impl<'s> DataReader<'s> {
    pub fn new(store: &'s dyn Store, fields: Vec<FieldEntry>) -> Self {
        let runs = plan_runs(&fields);
        DataReader { store, fields, runs, next_run: 0, buffer: Vec::new(), position: 0 }
    }

    /// The fields this reader returns, in order.
    pub fn fields(&self) -> &[FieldEntry] {
        &self.fields
    }

    /// How many storage reads the fields need after merging.
    pub fn storage_reads(&self) -> usize {
        self.runs.len()
    }

    pub fn total_bytes(&self) -> u64 {
        self.fields.iter().map(|f| f.location.length).sum()
    }

    /// Reads the next run into the buffer and checks its fields. `Ok(false)` at the end.
    fn fill(&mut self) -> Result<bool> {
        let Some(run) = self.runs.get(self.next_run).cloned() else { return Ok(false) };
        self.next_run += 1;
        self.buffer.resize(run.length as usize, 0);
        self.store.read(&run.uri, run.offset, &mut self.buffer)?;
        for field in &self.fields[run.first..run.first + run.count] {
            let start = (field.location.offset - run.offset) as usize;
            let bytes = &self.buffer[start..start + field.location.length as usize];
            let crc = crc32c::crc32c(bytes);
            if crc != field.location.crc32c {
                return Err(Error::corrupt(
                    format!("field {}", field.identifier()),
                    &*field.location.uri,
                    format!("checksum mismatch at offset {} ({:08x} stored, {crc:08x} read)", field.location.offset, field.location.crc32c),
                ));
            }
        }
        self.position = 0;
        Ok(true)
    }
}

impl Read for DataReader<'_> {
    fn read(&mut self, out: &mut [u8]) -> std::io::Result<usize> {
        while self.position == self.buffer.len() {
            if !self.fill().map_err(std::io::Error::other)? {
                return Ok(0);
            }
        }
        let n = out.len().min(self.buffer.len() - self.position);
        out[..n].copy_from_slice(&self.buffer[self.position..self.position + n]);
        self.position += n;
        Ok(n)
    }
}

/// Groups consecutive fields that are adjacent in the same file or object into runs.
fn plan_runs(fields: &[FieldEntry]) -> Vec<ReadRun> {
    let mut runs: Vec<ReadRun> = Vec::new();
    for (i, f) in fields.iter().enumerate() {
        let loc = &f.location;
        match runs.last_mut() {
            Some(r) if r.uri == loc.uri && r.offset + r.length == loc.offset && r.length + loc.length <= MAX_READ => {
                r.length += loc.length;
                r.count += 1;
            }
            _ => runs.push(ReadRun { uri: loc.uri.clone(), offset: loc.offset, length: loc.length, first: i, count: 1 }),
        }
    }
    runs
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend::FieldLocation;
    use crate::key::Key;

    fn field(uri: &str, offset: u64, length: u64) -> FieldEntry {
        FieldEntry {
            dataset: Default::default(),
            collocation: Default::default(),
            element: Key::new(),
            location: FieldLocation { uri: uri.into(), offset, length, crc32c: 0 },
            superseded: false,
        }
    }

    #[test]
    fn adjacent_ranges_merge_and_gaps_split() {
        let runs = plan_runs(&[field("a", 0, 10), field("a", 10, 5), field("a", 20, 5), field("b", 25, 5), field("b", 30, 1)]);
        let shape: Vec<(String, u64, u64, usize)> = runs.iter().map(|r| (r.uri.to_string(), r.offset, r.length, r.count)).collect();
        assert_eq!(shape, [("a".into(), 0, 15, 2), ("a".into(), 20, 5, 1), ("b".into(), 25, 6, 2)]);
    }

    #[test]
    fn runs_stop_at_the_read_size_limit() {
        let big = MAX_READ / 2 + 1;
        let runs = plan_runs(&[field("a", 0, big), field("a", big, big)]);
        assert_eq!(runs.len(), 2);
    }
}
