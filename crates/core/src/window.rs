//! A bounded window of writes in flight, for object stores' writers (RADOS, S3): a writer
//! starts a write and waits only when the window is full; a flush waits for them all.

use std::collections::VecDeque;

use crate::error::Result;

/// How many operations a store handle keeps in flight unless configured otherwise.
pub const DEFAULT_IN_FLIGHT: usize = 8;

/// How many operations a store handle keeps in flight.
#[derive(Clone, Copy, Debug)]
pub struct InFlight {
    /// Writes started and not yet waited for, at most.
    pub writes: usize,
    /// Reads a retrieve keeps in flight, at most.
    pub reads: usize,
}

impl Default for InFlight {
    fn default() -> Self {
        InFlight { writes: DEFAULT_IN_FLIGHT, reads: DEFAULT_IN_FLIGHT }
    }
}

impl InFlight {
    /// The configured limits (`None`: the default), each at least 1.
    pub fn new(writes: Option<usize>, reads: Option<usize>) -> Self {
        let default = InFlight::default();
        InFlight { writes: writes.unwrap_or(default.writes).max(1), reads: reads.unwrap_or(default.reads).max(1) }
    }
}

/// A write in flight.
pub trait PendingWrite {
    /// Waits for the write to end.
    fn wait(self) -> Result<()>;
}

/// Writes in flight, oldest first, at most `limit`.
pub struct WriteWindow<W> {
    in_flight: VecDeque<W>,
    limit: usize,
}

impl<W: PendingWrite> WriteWindow<W> {
    /// An empty window of `limit` writes (at least 1).
    pub fn new(limit: usize) -> Self {
        WriteWindow { in_flight: VecDeque::new(), limit: limit.max(1) }
    }

    /// Makes room for one more write, waiting for the oldest ones while the window is full.
    /// A failure of an earlier write is the answer: the caller then discards everything since
    /// its last flush.
    pub fn make_room(&mut self) -> Result<()> {
        while self.in_flight.len() >= self.limit {
            match self.in_flight.pop_front() {
                Some(write) => write.wait()?,
                None => break,
            }
        }
        Ok(())
    }

    /// Adds a write just started (after [`WriteWindow::make_room`]).
    pub fn push(&mut self, write: W) {
        self.in_flight.push_back(write);
    }

    /// Waits for every write in flight; the first failure is the answer, after all of them
    /// ended.
    pub fn wait_all(&mut self) -> Result<()> {
        let mut first_failure = Ok(());
        for write in self.in_flight.drain(..) {
            if let (Err(e), Ok(())) = (write.wait(), &first_failure) {
                first_failure = Err(e);
            }
        }
        first_failure
    }

    /// Forgets the writes in flight (they end on their own).
    pub fn forget(&mut self) {
        self.in_flight.clear();
    }
}

/// An error naming the in-flight limits (`writes_in_flight`, `reads_in_flight`) a catalogue's
/// section of type `kind` sets: only a store keeps operations in flight.
pub fn refuse_in_catalogue(section: &crate::factory::Section<'_>, kind: &str, writes: Option<usize>, reads: Option<usize>) -> Result<()> {
    for (key, set) in [("writes_in_flight", writes.is_some()), ("reads_in_flight", reads.is_some())] {
        if set {
            return Err(section.error(format!("{}.{key} (type '{kind}'): only a store keeps operations in flight", section.name)));
        }
    }
    Ok(())
}
