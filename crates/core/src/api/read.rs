//! Reading retrieved fields: adjacent byte ranges of the same file or object are merged into
//! runs of up to the store's [`Store::largest_read`] bytes. Large caller buffers are filled straight from storage;
//! small ones through one staging buffer. On stores with asynchronous reads
//! ([`Store::read_ahead`]) the next runs are read while the caller consumes the current one,
//! each into a buffer of its own, up to [`READ_AHEAD_BYTES`]. Every field's CRC-32C is
//! computed as its bytes pass and checked when its last byte is read: a corrupt field ends
//! the stream with an error. The store hands each read's bytes over [`CHECK_PIECE`] at a
//! time as it fills the caller's buffer ([`Store::read_each_piece`]), so the check finds them
//! in the core's cache: one pass over memory, the copy's. Reads of [`SPLIT_READ`] bytes or
//! more are split at a field boundary, and a second thread reads and checks the second part
//! where a core is idle ([`crate::cores::spare`]): when every core is busy (many readers at
//! once), a second thread would only take turns with the others.
//!
//! Callers read the stream through [`Read`], field by field with [`DataReader::next_field`],
//! which lends each whole, checked field where the reader holds it (no copy of a field read
//! ahead; others are staged with the whole fields after them, up to [`STAGING`], in reads as
//! large as a stream's), or into a writer with [`DataReader::write_to`], which writes those
//! staged batches whole: the CLI's path.

use std::collections::VecDeque;
use std::io::Read;
use std::sync::Arc;

use super::{FieldEntry, FieldStore, ListOptions};
#[cfg(test)]
use crate::backend::LARGEST_READ;
use crate::backend::{ControlAction, StartedRead, Store};
use crate::error::{Error, ErrorKind, Result};
use crate::key::Key;
use crate::request::Request;

/// Caller buffers at least this large are read into directly.
const DIRECT_READ: usize = 1 << 20;

/// Size of the staging buffer used for smaller caller buffers.
const STAGING: usize = 8 << 20;

/// Reads at least this large are made and checked by two threads where a core is idle: the
/// second thread's start (tens of microseconds) is small against half of the work.
const SPLIT_READ: usize = 8 << 20;

/// Reads are checked in pieces of this size, each right after it is copied, while it is
/// still in the core's cache: a quarter of the smallest L2 cache of the machines here, so
/// that the piece is still there (1 MiB pieces cost 3-5% more per byte on a 2 MiB L2:
/// docs/performance.md).
const CHECK_PIECE: usize = 256 << 10;

/// Most bytes read ahead of the run being consumed.
pub const READ_AHEAD_BYTES: u64 = 64 << 20;

/// A read split between two threads at a field boundary ([`DataReader::split_at_a_field`]).
struct Split {
    /// Where the second thread's part starts, in the read.
    boundary: usize,
    /// The index of the first field after the boundary, and the ranges of the whole fields
    /// in the second part (relative to the boundary), which end at `end` (relative to the
    /// read): what follows belongs to a field that goes on past the read.
    first_whole: usize,
    whole: Vec<std::ops::Range<usize>>,
    end: usize,
}

/// Consecutive fields (`count` of them) that are adjacent in one file or object.
#[derive(Clone, Debug)]
struct ReadRun {
    uri: std::sync::Arc<str>,
    offset: u64,
    length: u64,
    count: usize,
}

/// Sets the keys an overlaid field's message carries to those of the data set it is shown as
/// part of ([`FieldEntry::archived_in`]), in place, as FDB5 does when it reads a field through
/// an overlay. The facade installs ecCodes' ([`FieldStore::with_field_rewriter`]); a handle
/// without one returns such fields as they are stored.
pub trait FieldRewriter: Send + Sync {
    /// Rewrites `message` to carry `keys` (keyword, value), keeping its length; the error
    /// names what could not be set. Bytes that carry no keys (not GRIB) stay as they are.
    fn rewrite(&self, message: &mut [u8], keys: &[(&str, &str)]) -> Result<()>;
}

/// The bytes of retrieved fields, in order, as one stream.
pub struct DataReader {
    /// Shared with the handle, so the reader is owned and may outlive it or move threads.
    store: Arc<dyn Store>,
    fields: Vec<FieldEntry>,
    runs: Vec<ReadRun>,
    /// The run being read, and how far.
    run: usize,
    run_position: u64,
    /// The field whose bytes come next, how many of its bytes were seen, and their CRC.
    field: usize,
    field_seen: u64,
    field_crc: u32,
    /// Staged bytes not yet handed out: `staging[staged..staged_end]` (allocated once, or
    /// the bytes of the last run read ahead).
    staging: Vec<u8>,
    staged: usize,
    staged_end: usize,
    /// Reads in flight, by run, in run order; runs before `next_to_start` were started.
    started: VecDeque<(usize, Box<dyn StartedRead>)>,
    next_to_start: usize,
    /// Buffers of runs consumed, for the next reads started ahead.
    spare: Vec<Vec<u8>>,
    /// The first field not wholly handed to the caller, and how many of its bytes were.
    out_field: usize,
    out_seen: u64,
    /// The error the reader stopped at (kind and message), returned by every later call.
    failed: Option<Arc<Error>>,
    /// Values the request named that no field read has (`Matches::not_found`).
    not_found: Vec<String>,
    /// Whether a core is idle for a second thread now ([`crate::cores::spare`]; tests decide
    /// for themselves).
    spare_core: fn() -> bool,
    /// What rewrites overlaid fields; while it is set and some field is overlaid, the stream
    /// goes field by field through the staging buffer, each field rewritten there whole
    /// before any of its bytes goes out.
    rewriter: Option<Arc<dyn FieldRewriter>>,
    /// The fields before this one are rewritten where they needed it.
    rewritten: usize,
}

impl FieldStore {
    /// Retrieves what a request names, in the order it names values (as FDB5 and MARS do;
    /// see [`ListOptions::in_request_order`]). The explanation is set when nothing matched.
    pub fn retrieve(&self, request: &Request) -> Result<(DataReader, Option<String>)> {
        let options = ListOptions { in_request_order: true, ..ListOptions::default() };
        let matches = self.resolve(request, options, Some(ControlAction::Retrieve))?;
        let mut reader = self.reader(matches.fields);
        reader.not_found = matches.not_found;
        Ok((reader, matches.explanation))
    }

    /// A location's URI as other programs open it ([`crate::backend::RelativeUris`]): a
    /// relative one made whole, any other as it is.
    pub fn absolute_uri(&self, uri: &str) -> Result<String> {
        match self.shared.store.relative_uris() {
            Some(relative) => relative.absolute_uri(uri),
            None => Ok(uri.to_string()),
        }
    }

    /// A reader of fields a listing returned, at the locations listed (not resolved again):
    /// a superseded field reads as it was, and a field replaced since the listing too, as
    /// long as its bytes are there (purge and wipe remove them). Refused, as a retrieve is,
    /// for a data set locked against retrieval.
    pub fn read_fields(&self, fields: Vec<FieldEntry>) -> Result<DataReader> {
        let mut checked: Vec<&Key> = Vec::new();
        // A field read through an overlay: the data set it was archived in is locked too.
        for dataset in fields.iter().flat_map(|f| std::iter::once(&*f.dataset).chain(f.archived_in.as_deref())) {
            if checked.contains(&dataset) {
                continue;
            }
            if self.catalogue().locks(dataset)?.contains(&ControlAction::Retrieve) {
                return Err(Error::new(ErrorKind::Locked, format!("data set {dataset} is locked for retrieve")));
            }
            checked.push(dataset);
        }
        Ok(self.reader(fields))
    }

    /// A reader of `fields`, rewriting overlaid ones with the handle's rewriter.
    fn reader(&self, fields: Vec<FieldEntry>) -> DataReader {
        let reader = DataReader::new(self.shared.store.clone(), fields);
        match &self.rewriter {
            Some(rewriter) => reader.with_rewriter(rewriter.clone()),
            None => reader,
        }
    }
}

impl DataReader {
    /// A reader of `fields`' bytes from `store`, in the given order, with adjacent byte ranges merged into runs.
    pub fn new(store: Arc<dyn Store>, fields: Vec<FieldEntry>) -> Self {
        Self::from_field(store, fields, 0)
    }

    /// A reader of `fields`' bytes whose stream starts at field `first` (the fields before it
    /// count as handed out).
    fn from_field(store: Arc<dyn Store>, fields: Vec<FieldEntry>, first: usize) -> Self {
        let runs = plan_runs(&fields[first..], store.largest_read());
        DataReader {
            store,
            fields,
            runs,
            run: 0,
            run_position: 0,
            field: first,
            field_seen: 0,
            field_crc: 0,
            staging: Vec::new(),
            staged: 0,
            staged_end: 0,
            started: VecDeque::new(),
            next_to_start: 0,
            spare: Vec::new(),
            out_field: first,
            out_seen: 0,
            failed: None,
            not_found: Vec::new(),
            spare_core: crate::cores::spare,
            rewriter: None,
            rewritten: first,
        }
    }

    /// The reader rewriting the overlaid fields among its fields with `rewriter`
    /// ([`FieldRewriter`]); the others are read as before.
    pub fn with_rewriter(mut self, rewriter: Arc<dyn FieldRewriter>) -> Self {
        if self.fields.iter().any(|f| f.archived_in.is_some()) {
            self.rewriter = Some(rewriter);
        }
        self
    }

    /// Rewrites the field handed out next (`out_field`, staged whole at `staged`) if it is an
    /// overlaid one not rewritten yet.
    fn rewrite_staged(&mut self) -> Result<()> {
        let index = self.out_field;
        let (Some(rewriter), Some(field)) = (self.rewriter.clone(), self.fields.get(index)) else { return Ok(()) };
        let Some(archived_in) = field.archived_in.as_ref().filter(|_| index >= self.rewritten && field.location.length > 0) else {
            return Ok(());
        };
        let keys: Vec<(&str, &str)> = field.dataset.iter().filter(|(k, v)| archived_in.get(k) != Some(*v)).collect();
        let length = field.location.length as usize;
        rewriter.rewrite(&mut self.staging[self.staged..self.staged + length], &keys).map_err(|e| {
            let wanted: Vec<String> = keys.iter().map(|(k, v)| format!("{k}={v}")).collect();
            Error::caused_by(
                e.kind(),
                format!(
                    "field {} of data set {archived_in}, shown through an overlay: its {} could not be set",
                    field.identifier(),
                    wanted.join(",")
                ),
                e,
            )
        })?;
        self.rewritten = index + 1;
        Ok(())
    }

    /// Values the request named that none of the fields read has, as `keyword=v1/v2` (a
    /// retrieve of `step=6/48` with no step 48 stored: `step=48`); empty for a reader of a
    /// listing's fields.
    pub fn not_found(&self) -> &[String] {
        &self.not_found
    }

    /// The reader staging in `buffer` (its contents ignored) instead of a buffer of its own:
    /// readers made one after another, a few fields each, then write into memory already
    /// mapped instead of faulting in fresh pages for every one. Take it back with
    /// [`DataReader::into_buffer`].
    pub fn with_buffer(mut self, buffer: Vec<u8>) -> Self {
        if self.staging.is_empty() {
            self.staging = buffer;
        }
        self
    }

    /// The reader's staging buffer, for another reader ([`DataReader::with_buffer`]).
    pub fn into_buffer(self) -> Vec<u8> {
        self.staging
    }

    /// Moves the stream to byte `position` (the end, past it), forward or back: the reader
    /// starts again at the field that holds `position`, and reads and checks that field's
    /// bytes before it, so a seek costs at most one field's read and no byte is handed out
    /// unchecked. Reads started ahead are dropped. Returns the new position. A reader that
    /// stopped at an error stays stopped.
    pub fn seek(&mut self, position: u64) -> Result<u64> {
        self.stopped()?;
        let position = position.min(self.total_bytes());
        let (mut first, mut start) = (0, 0u64);
        while let Some(field) = self.fields.get(first) {
            // The field holding `position`, or starting there (an empty field at a boundary is
            // handed out next, as a reader going on from there would).
            if start.saturating_add(field.location.length) > position || start == position {
                break;
            }
            start = start.saturating_add(field.location.length);
            first += 1;
        }
        let (fields, not_found, rewriter) = (std::mem::take(&mut self.fields), std::mem::take(&mut self.not_found), self.rewriter.take());
        *self =
            DataReader { not_found, spare_core: self.spare_core, rewriter, ..DataReader::from_field(self.store.clone(), fields, first) };
        let skipped = self.skip(position - start);
        self.stop_at(skipped)?;
        Ok(position)
    }

    /// Reads, checks and drops the next `n` bytes of the stream.
    fn skip(&mut self, mut n: u64) -> Result<()> {
        let mut scratch = vec![0; n.min(DIRECT_READ as u64) as usize];
        while n > 0 {
            let want = n.min(scratch.len() as u64) as usize;
            match self.read_stream(&mut scratch[..want])? {
                0 => return Err(Error::new(ErrorKind::Corrupt, "the stream ended inside a field")),
                read => n -= read as u64,
            }
        }
        Ok(())
    }

    /// The next field, whole and checked, with its entry; `None` after the last. The bytes
    /// are lent from where the reader holds them: a field read ahead is not copied, others
    /// are read into the reader's own buffer (sized by the largest field). May follow reads
    /// through [`Read`] only at a field boundary. After an error the reader stops: every
    /// later call returns it again (a new retrieve starts over).
    pub fn next_field(&mut self) -> Result<Option<(&FieldEntry, &[u8])>> {
        self.stopped()?;
        let Some(field) = self.fields.get(self.out_field) else { return Ok(None) };
        if self.out_seen != 0 {
            return Err(Error::new(
                ErrorKind::BadRequest,
                format!(
                    "field {} was partly read as a stream ({} of {} bytes); read its rest before asking for the next field",
                    field.identifier(),
                    self.out_seen,
                    field.location.length
                ),
            ));
        }
        let length = field.location.length as usize;
        let staged = self.stage_field(length).and_then(|()| self.rewrite_staged());
        self.stop_at(staged)?;
        let start = self.staged;
        self.staged += length;
        self.out_field += 1;
        Ok(Some((&self.fields[self.out_field - 1], &self.staging[start..start + length])))
    }

    /// Stages the next field, of `length` bytes, whole and checked, unless it is staged.
    fn stage_field(&mut self, length: usize) -> Result<()> {
        let read_ahead = self.store.read_ahead();
        if self.staged == self.staged_end && read_ahead > 0 && length > 0 {
            // Runs hold whole fields: the staged run holds this one.
            self.stage_run_read_ahead(read_ahead)?;
        } else if self.staged_end - self.staged < length {
            self.stage_exactly(self.batch_length(length))?;
        }
        if self.staged_end - self.staged < length {
            return Err(Error::corrupt(
                format!("field {}", self.fields[self.out_field].identifier()),
                &*self.fields[self.out_field].location.uri,
                "the stream ended inside it",
            ));
        }
        Ok(())
    }

    /// The error the reader stopped at, if it did.
    fn stopped(&self) -> Result<()> {
        match &self.failed {
            Some(error) => Err(Error::caused_by(error.kind(), "this reader stopped at an earlier error", Error::Shared(error.clone()))),
            None => Ok(()),
        }
    }

    /// Stops the reader at `result`'s error, if any: its buffers and checksums are then in no
    /// state to go on from (bytes of a failed read may be staged, a field half checked).
    fn stop_at<T>(&mut self, result: Result<T>) -> Result<T> {
        result.map_err(|error| {
            let error = Arc::new(error);
            self.failed = Some(error.clone());
            Error::Shared(error)
        })
    }

    /// Writes the fields left into `out`, in order: each batch of whole, checked fields the
    /// reader stages for [`DataReader::next_field`] in one write, straight from where the
    /// reader holds it. What `fieldstore retrieve` does: the same reads, at the same speed, as
    /// fields taken one by one or read through [`Read`] into large buffers. Returns the bytes
    /// written.
    pub fn write_to(&mut self, out: &mut dyn std::io::Write) -> std::io::Result<u64> {
        let mut written = 0;
        loop {
            let Some(first) = self.next_field().map_err(std::io::Error::other)?.map(|(_, bytes)| bytes.len()) else {
                return Ok(written);
            };
            let start = self.staged - first;
            // The whole fields staged after it go in the same write: they are checked already
            // (and rewritten, where some are, one by one by next_field).
            while let Some(length) = self.fields.get(self.out_field).filter(|_| self.rewriter.is_none()).map(|f| f.location.length as usize)
            {
                if self.staged + length > self.staged_end {
                    break;
                }
                self.staged += length;
                self.out_field += 1;
            }
            out.write_all(&self.staging[start..self.staged])?;
            written += (self.staged - start) as u64;
        }
    }

    /// How many bytes to stage for the next field, of `length` bytes: it and the whole fields
    /// after it that fit in [`STAGING`], so that fields taken one by one are read in reads as
    /// large (split between two threads as often) as a stream's.
    fn batch_length(&self, length: usize) -> usize {
        let mut total = length;
        for field in &self.fields[self.out_field + 1..] {
            let next = total + field.location.length as usize;
            if next > STAGING {
                break;
            }
            total = next;
        }
        total
    }

    /// Moves what is left staged to the front of the staging buffer and reads on until it
    /// holds `length` bytes.
    fn stage_exactly(&mut self, length: usize) -> Result<()> {
        let mut staging = std::mem::take(&mut self.staging);
        staging.copy_within(self.staged..self.staged_end, 0);
        let mut have = self.staged_end - self.staged;
        staging.resize(staging.len().max(length), 0);
        let filled = self.fill(&mut staging[..length], &mut have);
        // The buffer comes back whatever happened: what it holds stays staged.
        (self.staging, self.staged, self.staged_end) = (staging, 0, have);
        filled
    }

    /// Reads on into `buffer` after its first `*have` bytes until it is full; `*have` counts
    /// what it holds, also after a failure.
    fn fill(&mut self, buffer: &mut [u8], have: &mut usize) -> Result<()> {
        while *have < buffer.len() {
            match self.read_run(&mut buffer[*have..])? {
                0 => return Err(Error::new(ErrorKind::Corrupt, "the stream ended inside a field")),
                n => *have += n,
            }
        }
        Ok(())
    }

    /// Counts `n` more bytes handed out as a stream, and the fields they complete.
    fn deliver(&mut self, n: usize) {
        self.out_seen += n as u64;
        while let Some(f) = self.fields.get(self.out_field) {
            let length = f.location.length;
            // An empty field where the stream stopped is still there for next_field.
            if length > self.out_seen || (length == 0 && self.out_seen == 0) {
                break;
            }
            self.out_field += 1;
            self.out_seen -= length;
        }
    }

    /// The fields this reader returns, in order.
    pub fn fields(&self) -> &[FieldEntry] {
        &self.fields
    }

    /// How many merged runs the fields need (each is read with one request to the store per
    /// MiB when the caller's buffer holds it).
    pub fn storage_reads(&self) -> usize {
        self.runs.len()
    }

    /// The length of all the fields together, in bytes: what the reader returns in all.
    pub fn total_bytes(&self) -> u64 {
        self.fields.iter().map(|f| f.location.length).sum()
    }

    /// What the reader has yet to return, in bytes.
    fn bytes_left(&self) -> u64 {
        self.fields.iter().skip(self.out_field).map(|f| f.location.length).sum::<u64>() - self.out_seen
    }

    /// Moves past runs read to their end; whether a run is left to read.
    fn at_current_run(&mut self) -> bool {
        while self.runs.get(self.run).is_some_and(|r| self.run_position == r.length) {
            self.run += 1;
            self.run_position = 0;
        }
        self.run < self.runs.len()
    }

    /// Reads the next bytes of the current run into `out` and checks them (in pieces of
    /// [`CHECK_PIECE`], split between two threads when large).
    /// Returns 0 at the end of the stream.
    fn read_run(&mut self, out: &mut [u8]) -> Result<usize> {
        if !self.at_current_run() {
            return Ok(0);
        }
        let run = &self.runs[self.run];
        let (uri, start) = (run.uri.clone(), run.offset + self.run_position);
        let n = out.len().min((run.length - self.run_position) as usize);
        let out = &mut out[..n];
        match self.split_at_a_field(n) {
            Some(split) => self.read_and_check_in_two(&uri, start, out, split)?,
            None => self.read_checked(&uri, start, out)?,
        }
        self.run_position += n as u64;
        Ok(n)
    }

    /// Where a read of the next `n` bytes splits between two threads: at the first field
    /// boundary at or after the middle, with the whole fields after it. `None` for reads under
    /// [`SPLIT_READ`], with no core idle, or with no boundary inside.
    fn split_at_a_field(&self, n: usize) -> Option<Split> {
        if n < SPLIT_READ || !(self.spare_core)() {
            return None;
        }
        let mut boundary = (self.fields[self.field].location.length - self.field_seen) as usize;
        let mut next = self.field + 1;
        while boundary < n / 2 && next < self.fields.len() {
            boundary += self.fields[next].location.length as usize;
            next += 1;
        }
        if boundary >= n {
            return None;
        }
        let mut whole = Vec::new();
        let mut end = boundary;
        while let Some(field) = self.fields.get(next + whole.len()) {
            let field_end = end + field.location.length as usize;
            if field_end > n {
                break;
            }
            whole.push(end - boundary..field_end - boundary);
            end = field_end;
        }
        Some(Split { boundary, first_whole: next, whole, end })
    }

    /// Reads `out` from `uri` at `start` and checks it, the part after the split by a second
    /// thread: one core's copy out of storage bounds a large read where another core is idle.
    /// Each thread checks each piece of [`CHECK_PIECE`] as it is copied.
    fn read_and_check_in_two(&mut self, uri: &str, start: u64, out: &mut [u8], split: Split) -> Result<()> {
        let store = self.store.clone();
        let store = store.as_ref();
        let (first, second) = out.split_at_mut(split.boundary);
        let (first_result, second_crcs) = std::thread::scope(|scope| {
            let helper = scope.spawn(|| read_whole_fields_checked(store, uri, start + split.boundary as u64, second, &split));
            let first_result = self.read_checked(uri, start, first);
            (first_result, helper.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic)))
        });
        first_result?;
        for (i, crc) in (split.first_whole..).zip(second_crcs?) {
            // Empty fields at the boundary were passed with the first part already.
            if i >= self.field {
                self.verify(i, crc)?;
                self.field = i + 1;
            }
        }
        self.check(&out[split.end..])
    }

    /// Reads `out` from `uri` at `start`, checking each piece of [`CHECK_PIECE`] as it is
    /// copied.
    fn read_checked(&mut self, uri: &str, start: u64, out: &mut [u8]) -> Result<()> {
        let store = self.store.clone();
        store.read_each_piece(uri, start, out, CHECK_PIECE, &mut |piece| self.check(piece))
    }

    /// Stages the whole current run from a read started ahead, after starting the reads of
    /// the runs after it (up to the store's read-ahead and [`READ_AHEAD_BYTES`]), and checks
    /// it. Returns 0 at the end of the stream.
    fn stage_run_read_ahead(&mut self, read_ahead: usize) -> Result<usize> {
        if !self.at_current_run() {
            return Ok(0);
        }
        let current = self.run;
        let mut ahead: u64 = self.started.iter().map(|(r, _)| self.runs[*r].length).sum();
        // Reads that ended wait to be consumed in order without holding a place in flight:
        // one slow read does not leave the store with fewer requests in flight (within the
        // bytes read ahead).
        let mut in_flight = self.started.iter_mut().map(|(_, read)| !read.is_done()).filter(|busy| *busy).count();
        while self.next_to_start < self.runs.len() && (self.next_to_start <= current || in_flight <= read_ahead) {
            let run = &self.runs[self.next_to_start];
            if self.next_to_start > current && ahead + run.length > READ_AHEAD_BYTES {
                break;
            }
            if run.length > 0 {
                let buffer = self.spare.pop().unwrap_or_default();
                self.started.push_back((self.next_to_start, self.store.start_read(&run.uri, run.offset, run.length as usize, buffer)?));
                ahead += run.length;
                in_flight += 1;
            }
            self.next_to_start += 1;
        }
        let (run, read) = self.started.pop_front().expect("the current run was started");
        debug_assert_eq!(run, current);
        let bytes = read.finish()?;
        self.run_position = self.runs[current].length;
        self.check(&bytes)?;
        self.spare.push(std::mem::replace(&mut self.staging, bytes));
        self.staged = 0;
        self.staged_end = self.staging.len();
        Ok(self.staged_end)
    }

    /// Feeds bytes, in stream order, to the per-field checksums.
    fn check(&mut self, mut bytes: &[u8]) -> Result<()> {
        while !bytes.is_empty() {
            let length = self.fields[self.field].location.length;
            let take = bytes.len().min((length - self.field_seen) as usize);
            self.field_crc = crate::checksum::crc32c_append(self.field_crc, &bytes[..take]);
            self.field_seen += take as u64;
            bytes = &bytes[take..];
            if self.field_seen == length {
                self.verify(self.field, self.field_crc)?;
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

    /// Compares field `index`'s stored checksum with the one of the bytes read (a field
    /// stored without one passes: FDB5's, read in place).
    fn verify(&self, index: usize, read: u32) -> Result<()> {
        let field = &self.fields[index];
        let Some(stored) = field.location.crc32c else { return Ok(()) };
        if read == stored {
            return Ok(());
        }
        Err(Error::corrupt(
            format!("field {}", field.identifier()),
            &*field.location.uri,
            format!("checksum mismatch at offset {} ({stored:08x} stored, {read:08x} read)", field.location.offset),
        ))
    }
}

/// Reads the second part of a split read (`out`, from `start`) and returns the CRC-32C of
/// each whole field in it, summed piece by piece as the store copies them; the bytes after
/// the last whole field are read, not summed (they go on past the read).
fn read_whole_fields_checked(store: &dyn Store, uri: &str, start: u64, out: &mut [u8], split: &Split) -> Result<Vec<u32>> {
    let mut fields = FieldCrcs { ranges: &split.whole, position: 0, crc: 0, crcs: Vec::with_capacity(split.whole.len()) };
    store.read_each_piece(uri, start, out, CHECK_PIECE, &mut |piece| {
        fields.feed(piece);
        Ok(())
    })?;
    Ok(fields.crcs)
}

/// The CRC-32C of each of consecutive byte ranges of a stream fed to it piece by piece.
struct FieldCrcs<'a> {
    /// The ranges, in order, each starting where the one before ends.
    ranges: &'a [std::ops::Range<usize>],
    /// Bytes fed so far, and the CRC of the part of the next range among them.
    position: usize,
    crc: u32,
    /// The CRC of each range fed whole.
    crcs: Vec<u32>,
}

impl FieldCrcs<'_> {
    /// Sums the stream's next bytes into the ranges they belong to.
    fn feed(&mut self, piece: &[u8]) {
        let start = self.position;
        self.position += piece.len();
        while let Some(range) = self.ranges.get(self.crcs.len()) {
            let (from, to) = (range.start.max(start), range.end.min(self.position));
            if from < to {
                self.crc = crate::checksum::crc32c_append(self.crc, &piece[from - start..to - start]);
            }
            if range.end > self.position {
                break;
            }
            self.crcs.push(std::mem::take(&mut self.crc));
        }
    }
}

/// The most bytes `read_to_end` grows its vector by before reading into them: the lengths it
/// is told come from the catalogue, and a damaged one must not have it zero memory no read
/// will fill. (Small in tests, to take many steps.)
const GROWTH_STEP: usize = if cfg!(test) { 1000 } else { 256 << 20 };

impl Read for DataReader {
    fn read(&mut self, out: &mut [u8]) -> std::io::Result<usize> {
        self.stopped().map_err(std::io::Error::other)?;
        let read = self.read_stream(out);
        self.stop_at(read).map_err(std::io::Error::other)
    }

    /// The rest of the stream, with `buf` grown to what is left (in steps of at most
    /// [`GROWTH_STEP`]) and filled as [`DataReader::read_to_fill`] fills, straight from
    /// storage, where std's loop would grow it by doubling, zero each new part and read into
    /// it piece by piece. After an error `buf` is as it was: the reader stopped there, and what
    /// it had filled is not counted.
    fn read_to_end(&mut self, buf: &mut Vec<u8>) -> std::io::Result<usize> {
        let start = buf.len();
        loop {
            let step = usize::try_from(self.bytes_left()).unwrap_or(usize::MAX).min(GROWTH_STEP);
            if step == 0 {
                return Ok(buf.len() - start);
            }
            let end = buf.len();
            if buf.capacity() == 0 {
                // The allocator's zeroed memory: a large allocation's fresh pages are zero
                // already, which resize would write over once more (10-20 % of a page-cache
                // read).
                *buf = vec![0; step];
            } else {
                if buf.try_reserve(step).is_err() {
                    buf.truncate(start);
                    return Err(std::io::Error::from(std::io::ErrorKind::OutOfMemory));
                }
                buf.resize(end + step, 0);
            }
            match self.read_to_fill(&mut buf[end..]) {
                Ok(n) if n < step => {
                    buf.truncate(end + n);
                    return Ok(buf.len() - start);
                }
                Ok(_) => {}
                Err(e) => {
                    buf.truncate(start);
                    return Err(std::io::Error::other(e));
                }
            }
        }
    }
}

impl DataReader {
    /// Fills `out` with the stream's next bytes, fewer only at its end; returns how many. A
    /// buffer of [`DIRECT_READ`] bytes or more is filled straight from storage to its last
    /// byte, also where a run ends less than [`DIRECT_READ`] before it, which a loop of
    /// [`Read::read`] would stage, copying the staged bytes after it a second time: what C's
    /// `fdb_datareader_read` and Python's `readinto` call. After an error nothing is counted
    /// as read (the reader stops there: every later call returns it).
    pub fn read_to_fill(&mut self, out: &mut [u8]) -> Result<usize> {
        self.stopped()?;
        let filled = self.fill_stream(out);
        self.stop_at(filled)
    }

    /// [`DataReader::read_to_fill`], before the reader stops at an error.
    fn fill_stream(&mut self, out: &mut [u8]) -> Result<usize> {
        // Stores that read ahead hand out the buffers they read into.
        let direct = out.len() >= DIRECT_READ && self.store.read_ahead() == 0 && self.rewriter.is_none();
        let mut filled = 0;
        while filled < out.len() {
            let n = if direct && self.staged == self.staged_end {
                let n = self.read_run(&mut out[filled..])?;
                self.deliver(n);
                n
            } else {
                self.read_stream(&mut out[filled..])?
            };
            if n == 0 {
                break;
            }
            filled += n;
        }
        Ok(filled)
    }

    /// [`Read::read`], before the reader stops at an error.
    fn read_stream(&mut self, out: &mut [u8]) -> Result<usize> {
        if self.rewriter.is_some() {
            return self.read_stream_rewritten(out);
        }
        let read_ahead = self.store.read_ahead();
        if self.staged == self.staged_end && read_ahead > 0 {
            if self.stage_run_read_ahead(read_ahead)? == 0 {
                return Ok(0);
            }
        } else if self.staged == self.staged_end && out.len() >= DIRECT_READ {
            let n = self.read_run(out)?;
            self.deliver(n);
            return Ok(n);
        }
        if self.staged == self.staged_end {
            // No larger than what is left, so a small retrieve does not pay for a big buffer.
            let left = self.runs.iter().skip(self.run).map(|r| r.length).sum::<u64>() - self.run_position;
            let mut staging = std::mem::take(&mut self.staging);
            staging.resize(staging.len().max(left.min(STAGING as u64) as usize), 0);
            let filled = self.read_run(&mut staging);
            self.staging = staging;
            self.staged = 0;
            self.staged_end = filled?;
        }
        let n = out.len().min(self.staged_end - self.staged);
        out[..n].copy_from_slice(&self.staging[self.staged..self.staged + n]);
        self.staged += n;
        self.deliver(n);
        Ok(n)
    }
}

impl DataReader {
    /// [`DataReader::read_stream`] where overlaid fields are rewritten: each field is staged
    /// whole, and rewritten, before any of its bytes goes out, and no copy goes past its end.
    fn read_stream_rewritten(&mut self, out: &mut [u8]) -> Result<usize> {
        loop {
            let Some(field) = self.fields.get(self.out_field) else { return Ok(0) };
            let length = field.location.length as usize;
            if length == 0 {
                self.out_field += 1;
                continue;
            }
            if self.out_seen == 0 {
                self.stage_field(length)?;
                self.rewrite_staged()?;
            }
            let left = length - self.out_seen as usize;
            let n = out.len().min(left).min(self.staged_end - self.staged);
            out[..n].copy_from_slice(&self.staging[self.staged..self.staged + n]);
            self.staged += n;
            self.deliver(n);
            return Ok(n);
        }
    }
}

/// Groups consecutive fields that are adjacent in the same file or object into runs.
fn plan_runs(fields: &[FieldEntry], largest: u64) -> Vec<ReadRun> {
    let mut runs: Vec<ReadRun> = Vec::new();
    for f in fields {
        let loc = &f.location;
        match runs.last_mut() {
            // Locations come from the catalogue: checked arithmetic, damage makes no run.
            Some(r)
                if r.uri == loc.uri
                    && r.offset.checked_add(r.length) == Some(loc.offset)
                    && r.length.checked_add(loc.length).is_some_and(|length| length <= largest) =>
            {
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
            location: FieldLocation { uri: uri.into(), offset, length, crc32c: None },
            superseded: false,
            archived_in: None,
        }
    }

    #[test]
    fn adjacent_ranges_merge_and_gaps_split() {
        let fields = [field("a", 0, 10), field("a", 10, 5), field("a", 20, 5), field("b", 25, 5), field("b", 30, 1)];
        let runs = plan_runs(&fields, LARGEST_READ);
        let shape: Vec<(String, u64, u64, usize)> = runs.iter().map(|r| (r.uri.to_string(), r.offset, r.length, r.count)).collect();
        assert_eq!(shape, [("a".into(), 0, 15, 2), ("a".into(), 20, 5, 1), ("b".into(), 25, 6, 2)]);
    }

    /// Objects in memory, read ahead `read_ahead` at a time through `Store::start_read`'s
    /// default (a read made when started); counts the reads.
    struct Objects {
        objects: std::collections::HashMap<String, Vec<u8>>,
        reads: std::sync::atomic::AtomicUsize,
        read_ahead: usize,
    }

    impl Store for Objects {
        fn writer(&self) -> Result<Box<dyn crate::backend::StoreWriter>> {
            unreachable!("the reader only reads")
        }
        fn read(&self, uri: &str, offset: u64, buf: &mut [u8]) -> Result<()> {
            self.reads.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            let offset = offset as usize;
            let Some(bytes) = self.objects[uri].get(offset..offset + buf.len()) else {
                return Err(Error::corrupt("object", uri, "shorter than its fields"));
            };
            buf.copy_from_slice(bytes);
            Ok(())
        }
        fn read_ahead(&self) -> usize {
            self.read_ahead
        }
        fn remove(&self, _: &str) -> Result<bool> {
            unreachable!("the reader only reads")
        }
        fn wipe_dataset(&self, _: &Key) -> Result<()> {
            unreachable!("the reader only reads")
        }
        fn describe(&self, _: &Key) -> String {
            "memory".into()
        }
    }

    /// Three objects of two adjacent fields each (and an empty field), with their CRCs, read
    /// ahead `read_ahead` at a time.
    fn three_objects(read_ahead: usize) -> (Objects, Vec<FieldEntry>, Vec<u8>) {
        let mut objects = std::collections::HashMap::new();
        let (mut fields, mut stream) = (Vec::new(), Vec::new());
        for (i, name) in ["a", "b", "c"].into_iter().enumerate() {
            let bytes: Vec<u8> = (0..3000u32).map(|j| (j * 7 + i as u32) as u8).collect();
            for (offset, length) in [(0, 1000), (1000, 2000)] {
                let mut f = field(name, offset, length);
                f.location.crc32c = Some(crate::checksum::crc32c(&bytes[offset as usize..(offset + length) as usize]));
                fields.push(f);
            }
            if i == 1 {
                fields.push(field(name, 3000, 0));
            }
            stream.extend_from_slice(&bytes);
            objects.insert(name.to_string(), bytes);
        }
        (Objects { objects, reads: Default::default(), read_ahead }, fields, stream)
    }

    /// The whole stream, read with a buffer of `buffer` bytes.
    fn read_in_blocks(mut reader: DataReader, buffer: usize) -> Vec<u8> {
        let mut got = Vec::new();
        let mut block = vec![0u8; buffer];
        loop {
            let n = reader.read(&mut block).unwrap();
            if n == 0 {
                return got;
            }
            got.extend_from_slice(&block[..n]);
        }
    }

    #[test]
    fn reading_ahead_returns_the_same_stream_in_any_buffer_size() {
        for buffer in [1, 333, 3000, 1 << 20] {
            let (store, fields, stream) = three_objects(2);
            let store = Arc::new(store);
            let got = read_in_blocks(DataReader::new(store.clone(), fields), buffer);
            assert!(got == stream, "buffer of {buffer}");
            assert_eq!(store.reads.load(std::sync::atomic::Ordering::Relaxed), 3, "one read per object, buffer of {buffer}");
        }
    }

    /// A rewriter that stamps each field's first byte with the value of its first key, and
    /// fails on a field of data set "bad".
    struct Stamp;

    impl FieldRewriter for Stamp {
        fn rewrite(&self, message: &mut [u8], keys: &[(&str, &str)]) -> Result<()> {
            match keys.first() {
                Some((_, "bad")) => Err(Error::new(crate::error::ErrorKind::Unsupported, "cannot")),
                Some((_, value)) => {
                    message[0] = value.as_bytes()[0];
                    Ok(())
                }
                None => Ok(()),
            }
        }
    }

    /// `three_objects`' fields with those of object "b" overlaid (archived in expver=1, shown
    /// in expver=`shown`), and the stream as rewritten.
    fn overlaid(read_ahead: usize, shown: &str) -> (Arc<Objects>, Vec<FieldEntry>, Vec<u8>) {
        let (store, mut fields, mut stream) = three_objects(read_ahead);
        for f in fields.iter_mut().filter(|f| &*f.location.uri == "b") {
            f.dataset = Arc::new(Key::from_pairs([("expver", shown)]));
            f.archived_in = Some(Arc::new(Key::from_pairs([("expver", "1")])));
        }
        // b's fields start at 3000 and 4000 of the stream.
        (stream[3000], stream[4000]) = (shown.as_bytes()[0], shown.as_bytes()[0]);
        (Arc::new(store), fields, stream)
    }

    #[test]
    fn overlaid_fields_are_rewritten_whole_on_every_path_and_a_failure_stops_the_reader() {
        for read_ahead in [0, 2] {
            for buffer in [1, 333, 3000, 1 << 20] {
                let (store, fields, stream) = overlaid(read_ahead, "2");
                let got = read_in_blocks(DataReader::new(store, fields).with_rewriter(Arc::new(Stamp)), buffer);
                assert!(got == stream, "read ahead {read_ahead}, buffer of {buffer}");
            }
            let (store, fields, stream) = overlaid(read_ahead, "2");
            let mut out = Vec::new();
            DataReader::new(store.clone(), fields.clone()).with_rewriter(Arc::new(Stamp)).write_to(&mut out).unwrap();
            assert!(out == stream, "write_to, read ahead {read_ahead}");
            let mut reader = DataReader::new(store.clone(), fields.clone()).with_rewriter(Arc::new(Stamp));
            let mut filled = vec![0u8; stream.len()];
            assert_eq!(reader.read_to_fill(&mut filled).unwrap(), stream.len());
            assert!(filled == stream, "read_to_fill, read ahead {read_ahead}");
            let mut reader = DataReader::new(store.clone(), fields.clone()).with_rewriter(Arc::new(Stamp));
            let mut one_by_one = Vec::new();
            while let Some((_, bytes)) = reader.next_field().unwrap() {
                one_by_one.extend_from_slice(bytes);
            }
            assert!(one_by_one == stream, "next_field, read ahead {read_ahead}");
            // Back into the middle of a rewritten field, and from its start.
            let mut reader = DataReader::new(store.clone(), fields.clone()).with_rewriter(Arc::new(Stamp));
            for position in [3500, 4000, 3000] {
                reader.seek(position).unwrap();
                let mut rest = Vec::new();
                reader.read_to_end(&mut rest).unwrap();
                assert!(rest == stream[position as usize..], "seek to {position}, read ahead {read_ahead}");
            }
            // Without a rewriter, as stored.
            let (stored, ..) = (three_objects(read_ahead).2, ());
            assert!(read_in_blocks(DataReader::new(store, fields), 333) == stored);
            let (store, fields, _) = overlaid(read_ahead, "bad");
            let err = DataReader::new(store, fields).with_rewriter(Arc::new(Stamp)).write_to(&mut Vec::new()).unwrap_err().to_string();
            assert!(err.contains("shown through an overlay: its expver=bad could not be set"), "{err}");
        }
    }

    #[test]
    fn write_to_writes_the_stream_in_batches_of_whole_checked_fields() {
        for read_ahead in [0, 2] {
            let (store, fields, stream) = three_objects(read_ahead);
            let store = Arc::new(store);
            let mut out = Vec::new();
            assert_eq!(DataReader::new(store.clone(), fields).write_to(&mut out).unwrap(), stream.len() as u64);
            assert!(out == stream, "read ahead {read_ahead}");
            assert_eq!(store.reads.load(std::sync::atomic::Ordering::Relaxed), 3, "read ahead {read_ahead}");
            // A corrupt field: an error, and no byte of its batch written.
            let (mut store, fields, stream) = three_objects(read_ahead);
            store.objects.get_mut("c").unwrap()[1500] ^= 1;
            let mut out = Vec::new();
            let err = DataReader::new(Arc::new(store), fields).write_to(&mut out).unwrap_err().to_string();
            assert!(err.contains("checksum mismatch"), "{err}");
            // Read ahead, the objects before it; otherwise one batch holds all.
            let written = if read_ahead > 0 { 6000 } else { 0 };
            assert!(out == stream[..written], "read ahead {read_ahead}: {} bytes written", out.len());
        }
    }

    #[test]
    fn a_buffer_passed_between_readers_stages_their_fields_whatever_it_held() {
        for read_ahead in [0, 2] {
            let (store, fields, stream) = three_objects(read_ahead);
            let store = Arc::new(store);
            // Larger than any field, and full of another stream's bytes.
            let mut buffer = vec![0xa5u8; 10_000];
            for (i, field) in fields.iter().enumerate() {
                let mut reader = DataReader::new(store.clone(), vec![field.clone()]).with_buffer(buffer);
                let (_, bytes) = reader.next_field().unwrap().unwrap();
                let start = fields[..i].iter().map(|f| f.location.length as usize).sum::<usize>();
                assert!(bytes == &stream[start..start + bytes.len()], "field {i}, read ahead {read_ahead}");
                assert!(reader.next_field().unwrap().is_none());
                buffer = reader.into_buffer();
            }
            let streamed = read_in_blocks(DataReader::new(store.clone(), fields.clone()).with_buffer(buffer), 333);
            assert!(streamed == stream, "read ahead {read_ahead}");
        }
    }

    #[test]
    fn after_an_error_every_call_returns_it_again() {
        for read_ahead in [0, 2] {
            // The corrupt field is the last: read ahead, nothing is left to stage after it.
            let (mut store, fields, _) = three_objects(read_ahead);
            store.objects.get_mut("c").unwrap()[2500] ^= 1;
            let store = Arc::new(store);
            let mut reader = DataReader::new(store.clone(), fields.clone());
            let mut failed = false;
            for _ in 0..12 {
                match reader.next_field() {
                    Ok(Some(_)) => assert!(!failed, "read ahead {read_ahead}: a field after an error"),
                    Ok(None) => panic!("read ahead {read_ahead}: the stream ended past a corrupt field"),
                    Err(e) => {
                        let e = e.report().to_string();
                        assert!(e.contains("checksum mismatch"), "{e}");
                        failed = true;
                    }
                }
            }
            assert!(failed, "read ahead {read_ahead}");
            let again = reader.read(&mut [0; 10]).unwrap_err();
            assert!(crate::error::Report::of(&again).to_string().contains("checksum mismatch"), "{again}");
            // Small stream reads: once one failed, none hands out a staged byte.
            let mut reader = DataReader::new(store, fields);
            let mut out = vec![0; 100];
            let first_error = loop {
                if let Err(e) = reader.read(&mut out) {
                    break e.to_string();
                }
            };
            assert!(first_error.contains("checksum mismatch"), "{first_error}");
            for _ in 0..5 {
                assert!(reader.read(&mut out).is_err(), "read ahead {read_ahead}: bytes after an error");
            }
        }
    }

    #[test]
    fn seeking_forward_and_back_gives_the_stream_from_there() {
        for read_ahead in [0, 2] {
            let (store, fields, stream) = three_objects(read_ahead);
            let mut reader = DataReader::new(Arc::new(store), fields);
            reader.not_found = vec!["step=48".into()];
            let total = stream.len() as u64;
            // Inside a field, at a boundary, before and after the empty field, the start, the end.
            for position in [1500, 3000, 0, 5999, 6000, 2999, 8999, total, total + 10, 17] {
                assert_eq!(reader.seek(position).unwrap(), position.min(total), "read ahead {read_ahead}");
                let mut block = vec![0u8; 777];
                let n = reader.read(&mut block).unwrap();
                let at = position.min(total) as usize;
                assert_eq!(n == 0, at == stream.len(), "read ahead {read_ahead}, seek to {position}");
                assert!(block[..n] == stream[at..at + n], "read ahead {read_ahead}, seek to {position}");
            }
            // Fields one by one go on from a boundary: the empty field there first, as when
            // reading on from it.
            reader.seek(6000).unwrap();
            let (entry, bytes) = reader.next_field().unwrap().unwrap();
            assert_eq!((&*entry.location.uri, bytes.len()), ("b", 0));
            let (entry, bytes) = reader.next_field().unwrap().unwrap();
            assert_eq!((&*entry.location.uri, bytes.len()), ("c", 1000));
            assert_eq!(reader.not_found(), ["step=48"], "what the request missed stays said");
        }
    }

    #[test]
    fn a_seek_checks_the_bytes_it_passes_in_a_field() {
        let (mut store, fields, _) = three_objects(0);
        store.objects.get_mut("b").unwrap()[1500] ^= 1;
        let mut reader = DataReader::new(Arc::new(store), fields);
        // Into the damaged field, past the damage: the field is checked whole, by the seek
        // (which stages it) or by the read that completes it.
        let err = reader
            .seek(3000 + 1800)
            .and_then(|_| reader.read_to_end(&mut Vec::new()).map_err(|e| Error::new(ErrorKind::Io, e.to_string())));
        let err = err.unwrap_err().to_string();
        assert!(err.contains("checksum mismatch") && err.contains("offset 1000"), "{err}");
        assert!(reader.seek(0).is_err(), "a stopped reader stays stopped");
    }

    #[test]
    fn reading_ahead_still_checks_every_field() {
        let (mut store, fields, _) = three_objects(2);
        store.objects.get_mut("b").unwrap()[1500] ^= 1;
        let store = Arc::new(store);
        let mut reader = DataReader::new(store.clone(), fields);
        let err = reader.read_to_end(&mut Vec::new()).unwrap_err().to_string();
        assert!(err.contains("checksum mismatch") && err.contains("offset 1000"), "{err}");
    }

    #[test]
    fn fields_one_by_one_are_the_stream_cut_at_field_boundaries() {
        for read_ahead in [0, 2] {
            let (store, fields, stream) = three_objects(read_ahead);
            let store = Arc::new(store);
            let mut reader = DataReader::new(store.clone(), fields.clone());
            let mut position = 0;
            for expected in &fields {
                let (entry, bytes) = reader.next_field().unwrap().expect("a field is left");
                assert_eq!(entry.location, expected.location, "read ahead {read_ahead}");
                let length = expected.location.length as usize;
                assert!(bytes == &stream[position..position + length], "read ahead {read_ahead}, field at {position}");
                position += length;
            }
            assert!(reader.next_field().unwrap().is_none());
            assert_eq!(reader.read(&mut [0; 10]).unwrap(), 0);
            // Fields staged with the whole fields after them: one read per object either way.
            assert_eq!(store.reads.load(std::sync::atomic::Ordering::Relaxed), 3, "read ahead {read_ahead}");
        }
    }

    #[test]
    fn fields_one_by_one_may_follow_stream_reads_at_field_boundaries_only() {
        for read_ahead in [0, 2] {
            let (store, fields, stream) = three_objects(read_ahead);
            let store = Arc::new(store);
            let mut reader = DataReader::new(store.clone(), fields.clone());
            // Small stream reads stage more than they hand out; the rest is still lent whole.
            let mut first = vec![0; 1000];
            for chunk in first.chunks_mut(300) {
                reader.read_exact(chunk).unwrap();
            }
            assert!(first == stream[..1000]);
            let (entry, bytes) = reader.next_field().unwrap().unwrap();
            assert_eq!(entry.location, fields[1].location);
            assert!(bytes == &stream[1000..3000], "read ahead {read_ahead}");
            reader.read_exact(&mut [0; 10]).unwrap();
            let err = reader.next_field().unwrap_err().to_string();
            assert!(err.contains("partly read as a stream (10 of 1000 bytes)"), "{err}");
            let mut rest = vec![0; 990];
            reader.read_exact(&mut rest).unwrap();
            assert!(rest == stream[3010..4000]);
            assert_eq!(reader.next_field().unwrap().unwrap().1, &stream[4000..6000]);
            // The empty field after the second object, then the third object's fields.
            assert_eq!(reader.next_field().unwrap().unwrap().0.location.length, 0);
            assert_eq!(reader.next_field().unwrap().unwrap().1, &stream[6000..7000]);
        }
    }

    #[test]
    fn fields_one_by_one_are_checked() {
        for read_ahead in [0, 2] {
            let (mut store, fields, _) = three_objects(read_ahead);
            store.objects.get_mut("a").unwrap()[2500] ^= 1;
            let store = Arc::new(store);
            let mut reader = DataReader::new(store.clone(), fields);
            // A batch (read ahead: a whole object) is checked before its first field is lent.
            let err = reader.next_field().unwrap_err().to_string();
            assert!(err.contains("checksum mismatch") && err.contains("offset 1000"), "{err}");
        }
    }

    /// One object of fields from 0 to 1 MiB long, about 20 MiB in all, with empty fields
    /// among them, and their CRCs; read one at a time.
    fn one_large_object() -> (Objects, Vec<FieldEntry>, Vec<u8>) {
        let lengths: Vec<u64> = (0..48u64).map(|i| if i % 7 == 3 { 0 } else { (i * 337_531) % (1 << 20) + 1 }).collect();
        let total: u64 = lengths.iter().sum();
        let bytes: Vec<u8> = (0..total).map(|j| (j * 13 + j / 4093) as u8).collect();
        let (mut fields, mut offset) = (Vec::new(), 0);
        for length in lengths {
            let mut f = field("big", offset, length);
            f.location.crc32c = Some(crate::checksum::crc32c(&bytes[offset as usize..(offset + length) as usize]));
            fields.push(f);
            offset += length;
        }
        let objects = [("big".to_string(), bytes.clone())].into();
        (Objects { objects, reads: Default::default(), read_ahead: 0 }, fields, bytes)
    }

    /// A reader that splits large reads between two threads (`split`) or never.
    fn reader_splitting(store: Arc<Objects>, fields: Vec<FieldEntry>, split: bool) -> DataReader {
        DataReader { spare_core: if split { || true } else { || false }, ..DataReader::new(store, fields) }
    }

    #[test]
    fn large_reads_checked_by_two_threads_give_the_stream_and_find_damage_in_either_half() {
        for split in [true, false] {
            let (store, fields, stream) = one_large_object();
            let store = Arc::new(store);
            assert!(stream.len() > 2 * SPLIT_READ);
            // Buffers that end inside a field and on either side of the split size.
            for buffer in [SPLIT_READ + 4099, 2 * SPLIT_READ + 1, SPLIT_READ - 1] {
                let got = read_in_blocks(reader_splitting(store.clone(), fields.clone(), split), buffer);
                assert!(got == stream, "buffer of {buffer}, split {split}");
            }
            let at =
                |part: f64| fields.iter().find(|f| f.location.offset as f64 >= part * SPLIT_READ as f64 && f.location.length > 0).unwrap();
            for damaged in [at(0.2), at(0.7), at(1.1)] {
                let (mut store, fields, _) = one_large_object();
                store.objects.get_mut("big").unwrap()[damaged.location.offset as usize + 1] ^= 1;
                let mut reader = reader_splitting(Arc::new(store), fields, split);
                let err = reader.read_to_end(&mut Vec::new()).unwrap_err().to_string();
                let offset = format!("checksum mismatch at offset {} ", damaged.location.offset);
                assert!(err.contains(&offset), "{err}");
            }
            // A failed read of the second thread's part fails the read.
            let (mut store, fields, _) = one_large_object();
            store.objects.get_mut("big").unwrap().truncate(SPLIT_READ * 3 / 4);
            let mut reader = reader_splitting(Arc::new(store), fields, split);
            let err = reader.read(&mut vec![0; SPLIT_READ + 1]).unwrap_err().to_string();
            assert!(err.contains("shorter than its fields"), "{err}");
        }
    }

    #[test]
    fn field_crcs_are_the_same_whatever_pieces_the_stream_comes_in() {
        let bytes: Vec<u8> = (0..10_000u32).map(|i| (i * 7 + i / 251) as u8).collect();
        // Empty ranges first, inside and last; the bytes after the last range are not summed.
        let ends = [0, 0, 1, 1000, 1000, 4096, 4097, 9000, 9000];
        let ranges: Vec<std::ops::Range<usize>> = ends.windows(2).map(|w| w[0]..w[1]).collect();
        let expected: Vec<u32> = ranges.iter().map(|r| crate::checksum::crc32c(&bytes[r.clone()])).collect();
        for piece in [1, 7, 999, 1000, 4096, 10_000] {
            let mut crcs = FieldCrcs { ranges: &ranges, position: 0, crc: 0, crcs: Vec::new() };
            bytes.chunks(piece).for_each(|part| crcs.feed(part));
            assert_eq!(crcs.crcs, expected, "pieces of {piece}");
        }
    }

    #[test]
    fn the_default_piece_by_piece_read_visits_each_piece_in_order_and_stops_at_an_error() {
        let (store, _, stream) = three_objects(0);
        let mut buf = vec![0; 2500];
        let mut seen = Vec::new();
        let mut visit = |piece: &[u8]| {
            seen.push(piece.to_vec());
            Ok(())
        };
        store.read_each_piece("b", 100, &mut buf, 1000, &mut visit).unwrap();
        assert_eq!(seen.iter().map(Vec::len).collect::<Vec<_>>(), [1000, 1000, 500]);
        assert!(seen.concat() == stream[3100..5600] && buf == stream[3100..5600]);
        let mut visits = 0;
        let err = store.read_each_piece("b", 0, &mut buf, 1000, &mut |_| {
            visits += 1;
            Err(Error::corrupt("field", "b", "damaged"))
        });
        assert!(err.is_err() && visits == 1, "{visits} visits");
    }

    #[test]
    fn reading_to_fill_fills_large_buffers_straight_from_storage_across_runs() {
        // Two runs, the first ending 100 bytes before the end of a DIRECT_READ buffer.
        let first: Vec<u8> = (0..DIRECT_READ as u32 - 100).map(|i| (i % 253) as u8).collect();
        let second: Vec<u8> = (0..DIRECT_READ as u32).map(|i| (i % 241) as u8).collect();
        let mut fields = vec![field("a", 0, first.len() as u64), field("b", 0, second.len() as u64)];
        fields[0].location.crc32c = Some(crate::checksum::crc32c(&first));
        fields[1].location.crc32c = Some(crate::checksum::crc32c(&second));
        let objects = [("a".to_string(), first.clone()), ("b".to_string(), second.clone())].into();
        let store = Arc::new(Objects { objects, reads: Default::default(), read_ahead: 0 });
        let mut reader = DataReader::new(store, fields);
        let mut block = vec![0; DIRECT_READ];
        assert_eq!(reader.read_to_fill(&mut block).unwrap(), DIRECT_READ);
        assert!(block[..first.len()] == first && block[first.len()..] == second[..100]);
        assert!(reader.staging.is_empty(), "nothing was staged (a loop of reads stages the 100 bytes)");
        assert_eq!(reader.read_to_fill(&mut block).unwrap(), second.len() - 100, "fewer at the end");
        assert!(block[..second.len() - 100] == second[100..]);
        assert_eq!(reader.read_to_fill(&mut block).unwrap(), 0);
        assert!(reader.staging.is_empty());
    }

    #[test]
    fn a_field_stored_without_a_checksum_is_read_unchecked_and_others_still_are() {
        let bytes: Vec<u8> = (0..5000u32).map(|i| (i % 251) as u8).collect();
        let objects = [("a".to_string(), bytes.clone())].into();
        let store = Arc::new(Objects { objects, reads: Default::default(), read_ahead: 0 });
        // FDB5's fields have no checksum: passed as read.
        let mut reader = DataReader::new(store.clone(), vec![field("a", 0, 3000), field("a", 3000, 2000)]);
        reader.fields[1].location.crc32c = Some(crate::checksum::crc32c(&bytes[3000..]));
        let mut out = Vec::new();
        std::io::Read::read_to_end(&mut reader, &mut out).unwrap();
        assert!(out == bytes);
        // A checksum that does not match still fails.
        let mut reader = DataReader::new(store, vec![field("a", 0, 3000), field("a", 3000, 2000)]);
        reader.fields[1].location.crc32c = Some(0xdead_beef);
        let error = std::io::Read::read_to_end(&mut reader, &mut Vec::new()).unwrap_err();
        assert!(error.to_string().contains("checksum mismatch at offset 3000"), "{error}");
    }

    #[test]
    fn read_to_end_appends_what_is_left_and_leaves_the_vector_as_it_was_on_an_error() {
        let bytes: Vec<u8> = (0..5000u32).map(|i| (i % 251) as u8).collect();
        let objects = [("a".to_string(), bytes.clone())].into();
        let store = Arc::new(Objects { objects, reads: Default::default(), read_ahead: 0 });
        let fields = || vec![field("a", 0, 3000), field("a", 3000, 2000)];
        let mut reader = DataReader::new(store.clone(), fields());
        let mut start = [0u8; 1234];
        std::io::Read::read_exact(&mut reader, &mut start).unwrap();
        let mut out = b"before".to_vec();
        assert_eq!(std::io::Read::read_to_end(&mut reader, &mut out).unwrap(), 5000 - 1234);
        assert!(out[..6] == *b"before" && out[6..] == bytes[1234..]);
        assert_eq!(std::io::Read::read_to_end(&mut reader, &mut out).unwrap(), 0, "nothing is left");
        let mut whole = Vec::new();
        assert_eq!(std::io::Read::read_to_end(&mut DataReader::new(store.clone(), fields()), &mut whole).unwrap(), 5000);
        assert!(whole == bytes, "into an empty vector, in steps of {GROWTH_STEP}");
        let mut reader = DataReader::new(store.clone(), fields());
        reader.fields[1].location.crc32c = Some(0xdead_beef);
        let mut out = b"before".to_vec();
        assert!(std::io::Read::read_to_end(&mut reader, &mut out).is_err());
        assert_eq!(out, b"before");
        // A damaged catalogue's length: the vector grows a step at a time, not to what it claims.
        let mut reader = DataReader::new(store, vec![field("a", 0, 3000), field("a", 3000, 1 << 50)]);
        reader.fields[1].location.crc32c = None;
        let mut out = b"before".to_vec();
        assert!(std::io::Read::read_to_end(&mut reader, &mut out).is_err());
        assert_eq!(out, b"before");
    }

    #[test]
    fn runs_stop_at_the_read_size_limit() {
        let big = LARGEST_READ / 2 + 1;
        let runs = plan_runs(&[field("a", 0, big), field("a", big, big)], LARGEST_READ);
        assert_eq!(runs.len(), 2);
        assert_eq!(plan_runs(&[field("a", 0, big), field("a", big, big)], 2 * big).len(), 1);
    }
}
