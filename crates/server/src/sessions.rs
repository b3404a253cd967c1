//! Archivers kept between the archive requests of one client's archiver (its session, named by
//! the `fieldstore-session` header): its flushes then append to the same files, as a local
//! archiver's do, instead of opening new ones per flush. An archiver is parked only after a
//! successful flush (nothing pending), per identity, and dropped after [`SESSION_IDLE`] unused.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use fieldstore_core::api::Archiver;

/// How long a parked archiver waits for its session's next request.
const SESSION_IDLE: Duration = Duration::from_secs(300);
/// The most archivers parked at once (each holds files open).
const MAX_PARKED: usize = 1024;

/// A session's name as a header gives it: 1 to 64 letters, digits or `-`.
pub fn session_name(header: Option<&str>) -> Option<&str> {
    header.filter(|s| (1..=64).contains(&s.len()) && s.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-'))
}

/// The parked archivers, by identity and session.
#[derive(Default)]
pub struct Sessions {
    parked: Mutex<HashMap<(String, String), (Archiver, Instant)>>,
}

impl Sessions {
    /// The archiver `identity`'s session parked, if any (taken: a second request of the same
    /// session at once gets an archiver of its own).
    pub fn take(&self, identity: &str, session: &str) -> Option<Archiver> {
        let mut parked = self.parked.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        parked.remove(&(identity.to_string(), session.to_string())).map(|(archiver, _)| archiver)
    }

    /// Parks a flushed archiver for the session's next request; drops those unused too long,
    /// and this one if too many are parked.
    pub fn park(&self, identity: &str, session: &str, archiver: Archiver) {
        let mut parked = self.parked.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        parked.retain(|_, (_, at)| at.elapsed() < SESSION_IDLE);
        if parked.len() < MAX_PARKED {
            parked.insert((identity.to_string(), session.to_string()), (archiver, Instant::now()));
        }
    }
}
