//! Wall-clock timestamps that processes on different nodes can compare.

/// Microseconds since the Unix epoch.
pub fn micros_since_epoch() -> u64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_micros() as u64).unwrap_or(0)
}
