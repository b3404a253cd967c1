//! The server's memory budget (`--max-memory`): the bytes of fields being received
//! (`/v1/archive`) and of reads being sent (`/v1/read`, what clients read with), each held by
//! its request while the server holds them. A request that needs more waits for others to give
//! some back, [`WAIT`] at most, then fails: however many clients archive or read at once, those
//! buffers stay within the budget. (Not counted: the answers of calls, and `/v1/retrieve`'s
//! stream for curl, at most four reads of 64 MiB each.)

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use fieldstore_core::{Error, ErrorKind, Result};

/// How long a request waits for its share of the budget.
const WAIT: Duration = Duration::from_secs(60);

/// Bytes the server may hold for requests, shared by all of them.
pub struct Budget {
    bytes: Arc<Semaphore>,
    total: u64,
}

impl Budget {
    /// A budget of `total` bytes.
    pub fn new(total: u64) -> Budget {
        let permits = usize::try_from(total).unwrap_or(usize::MAX).min(Semaphore::MAX_PERMITS);
        Budget { bytes: Arc::new(Semaphore::new(permits)), total }
    }

    /// The bytes of the whole budget.
    pub fn total(&self) -> u64 {
        self.total
    }

    /// `bytes` of the budget, waited for; called from a blocking thread of the server's runtime.
    pub fn take(&self, bytes: u64) -> Result<OwnedSemaphorePermit> {
        let refused = |why: String| Error::new(ErrorKind::Unavailable, why);
        if bytes > self.total {
            return Err(refused(format!("{bytes} bytes at once are more than the server's memory budget ({} bytes)", self.total)));
        }
        // Limits::check keeps every frame and piece below this.
        let permits = u32::try_from(bytes).map_err(|_| refused(format!("{bytes} bytes at once are more than the server takes")))?;
        let waited = tokio::runtime::Handle::current().block_on(tokio::time::timeout(WAIT, self.bytes.clone().acquire_many_owned(permits)));
        // (The semaphore is never closed: a permit, or the wait's end.)
        waited.ok().and_then(|acquired| acquired.ok()).ok_or_else(|| {
            refused(format!(
                "the server's memory budget ({} bytes) stayed taken by other requests for {} s: try again later",
                self.total,
                WAIT.as_secs()
            ))
        })
    }
}

/// What one request holds of the budget, set to what it buffers.
pub struct Held<'b> {
    budget: &'b Budget,
    permit: Option<OwnedSemaphorePermit>,
}

impl<'b> Held<'b> {
    /// Nothing held yet.
    pub fn none(budget: &'b Budget) -> Self {
        Held { budget, permit: None }
    }

    fn bytes(&self) -> u64 {
        self.permit.as_ref().map_or(0, |p| p.num_permits() as u64)
    }

    /// Holds `bytes` in all: gives back what is more; for more than held, gives back all it
    /// holds and waits for the whole anew, so that no request waits while holding any of the
    /// budget (two requests each holding part and waiting for the other's would wait forever).
    pub fn set(&mut self, bytes: u64) -> Result<()> {
        let held = self.bytes();
        if bytes <= held {
            if let (Some(permit), Ok(excess)) = (&mut self.permit, usize::try_from(held - bytes)) {
                drop(permit.split(excess));
            }
            return Ok(());
        }
        self.permit = None;
        self.permit = Some(self.budget.take(bytes)?);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests_hold_what_they_buffer_and_wait_for_what_others_hold() {
        let runtime = tokio::runtime::Runtime::new().unwrap();
        let budget = Budget::new(100);
        runtime.block_on(async {
            tokio::task::spawn_blocking(move || {
                let mut one = Held::none(&budget);
                one.set(60).unwrap();
                one.set(80).unwrap();
                assert_eq!(budget.bytes.available_permits(), 20);
                one.set(10).unwrap();
                assert_eq!(budget.bytes.available_permits(), 90);
                let mut other = Held::none(&budget);
                other.set(90).unwrap();
                assert_eq!(budget.bytes.available_permits(), 0);
                // Growing gives back what it held before it waits: 10 + 90 taken, 100 asked.
                drop(other);
                one.set(100).unwrap();
                assert_eq!(budget.bytes.available_permits(), 0);
                drop(one);
                assert_eq!(budget.bytes.available_permits(), 100);
                let error = Held::none(&budget).set(101).unwrap_err();
                assert!(error.to_string().contains("more than the server's memory budget (100 bytes)"), "{error}");
            })
            .await
            .unwrap();
        });
    }
}
