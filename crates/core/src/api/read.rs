//! Reading retrieved fields: adjacent byte ranges of the same file or object are merged into
//! runs of up to [`MAX_READ`] bytes. Large caller buffers are filled straight from storage;
//! small ones through one staging buffer. Every field's CRC-32C is computed as its bytes pass
//! and checked when its last byte is read: a corrupt field ends the stream with an error.

use std::io::Read;

use super::{FieldEntry, FieldStore, ListOptions};
use crate::backend::{ControlAction, Store};
use crate::error::{Error, Result};
use crate::request::Request;

/// Largest range the reader merges into one run.
pub const MAX_READ: u64 = 64 << 20;

/// Caller buffers at least this large are read into directly.
const DIRECT_READ: usize = 1 << 20;

/// Size of the staging buffer used for smaller caller buffers.
const STAGING: usize = 8 << 20;

/// Consecutive fields (`count` of them) that are adjacent in one file or object.
#[derive(Clone, Debug)]
struct ReadRun {
    uri: std::sync::Arc<str>,
    offset: u64,
    length: u64,
    count: usize,
}

/// The bytes of retrieved fields, in order, as one stream.
pub struct DataReader<'s> {
    store: &'s dyn Store,
    fields: Vec<FieldEntry>,
    runs: Vec<ReadRun>,
    /// The run being read, and how far.
    run: usize,
    run_position: u64,
    /// The field whose bytes come next, how many of its bytes were seen, and their CRC.
    field: usize,
    field_seen: u64,
    field_crc: u32,
    /// Staged bytes not yet handed out: `staging[staged..staged_end]` (allocated once).
    staging: Vec<u8>,
    staged: usize,
    staged_end: usize,
}

impl FieldStore {
    /// Retrieves what a request names, in numeric key order. The explanation is set when
    /// nothing matched.
    pub fn retrieve(&mut self, request: &Request) -> Result<(DataReader<'_>, Option<String>)> {
        let matches = self.resolve(request, ListOptions::default(), Some(ControlAction::Retrieve))?;
        Ok((DataReader::new(self.store(), matches.fields), matches.explanation))
    }
}

impl<'s> DataReader<'s> {
    pub fn new(store: &'s dyn Store, fields: Vec<FieldEntry>) -> Self {
        let runs = plan_runs(&fields);
        DataReader {
            store,
            fields,
            runs,
            run: 0,
            run_position: 0,
            field: 0,
            field_seen: 0,
            field_crc: 0,
            staging: Vec::new(),
            staged: 0,
            staged_end: 0,
        }
    }

    /// The fields this reader returns, in order.
    pub fn fields(&self) -> &[FieldEntry] {
        &self.fields
    }

    /// How many merged runs the fields need (each is read with one storage read when the
    /// caller's buffer holds it).
    pub fn storage_reads(&self) -> usize {
        self.runs.len()
    }

    pub fn total_bytes(&self) -> u64 {
        self.fields.iter().map(|f| f.location.length).sum()
    }

    /// Reads the next bytes of the current run into `out` (one storage read) and checks them.
    /// Returns 0 at the end of the stream.
    fn read_run(&mut self, out: &mut [u8]) -> Result<usize> {
        while self.runs.get(self.run).is_some_and(|r| self.run_position == r.length) {
            self.run += 1;
            self.run_position = 0;
        }
        let Some(run) = self.runs.get(self.run) else { return Ok(0) };
        let n = out.len().min((run.length - self.run_position) as usize);
        self.store.read(&run.uri, run.offset + self.run_position, &mut out[..n])?;
        self.run_position += n as u64;
        self.check(&out[..n])?;
        Ok(n)
    }

    /// Feeds bytes, in stream order, to the per-field checksums.
    fn check(&mut self, mut bytes: &[u8]) -> Result<()> {
        while !bytes.is_empty() {
            let field = &self.fields[self.field];
            let take = bytes.len().min((field.location.length - self.field_seen) as usize);
            self.field_crc = crc32c::crc32c_append(self.field_crc, &bytes[..take]);
            self.field_seen += take as u64;
            bytes = &bytes[take..];
            if self.field_seen == field.location.length {
                if self.field_crc != field.location.crc32c {
                    return Err(Error::corrupt(
                        format!("field {}", field.identifier()),
                        &*field.location.uri,
                        format!(
                            "checksum mismatch at offset {} ({:08x} stored, {:08x} read)",
                            field.location.offset, field.location.crc32c, self.field_crc
                        ),
                    ));
                }
                self.field += 1;
                self.field_seen = 0;
                self.field_crc = 0;
            }
        }
        // Zero-length fields at this point are complete too.
        while self.fields.get(self.field).is_some_and(|f| f.location.length == 0) {
            self.field += 1;
        }
        Ok(())
    }
}

impl Read for DataReader<'_> {
    fn read(&mut self, out: &mut [u8]) -> std::io::Result<usize> {
        if self.staged == self.staged_end && out.len() >= DIRECT_READ {
            return self.read_run(out).map_err(std::io::Error::other);
        }
        if self.staged == self.staged_end {
            // No larger than what is left, so a small retrieve does not pay for a big buffer.
            let left = self.runs.iter().skip(self.run).map(|r| r.length).sum::<u64>() - self.run_position;
            let mut staging = std::mem::take(&mut self.staging);
            staging.resize(staging.len().max(left.min(STAGING as u64) as usize), 0);
            let filled = self.read_run(&mut staging);
            self.staging = staging;
            self.staged = 0;
            self.staged_end = filled.map_err(std::io::Error::other)?;
        }
        let n = out.len().min(self.staged_end - self.staged);
        out[..n].copy_from_slice(&self.staging[self.staged..self.staged + n]);
        self.staged += n;
        Ok(n)
    }
}

/// Groups consecutive fields that are adjacent in the same file or object into runs.
fn plan_runs(fields: &[FieldEntry]) -> Vec<ReadRun> {
    let mut runs: Vec<ReadRun> = Vec::new();
    for f in fields {
        let loc = &f.location;
        match runs.last_mut() {
            Some(r) if r.uri == loc.uri && r.offset + r.length == loc.offset && r.length + loc.length <= MAX_READ => {
                r.length += loc.length;
                r.count += 1;
            }
            _ => runs.push(ReadRun { uri: loc.uri.clone(), offset: loc.offset, length: loc.length, count: 1 }),
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
