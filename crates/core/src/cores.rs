//! How much parallelism this process has, for work that is split between threads only where
//! another core can take it.

/// Whether this process may run on more than one core.
pub fn several() -> bool {
    parallelism() > 1
}

/// Whether a core is idle now for one more thread: fewer threads are runnable on the machine
/// than the cores this process may use. On Linux, `/proc/loadavg`'s count of runnable
/// threads (the caller among them), read at each call (a few microseconds, against the
/// milliseconds of the reads it decides on); elsewhere, [`several`].
pub fn spare() -> bool {
    several() && runnable_threads().is_none_or(|runnable| runnable < parallelism())
}

fn parallelism() -> usize {
    static PARALLELISM: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *PARALLELISM.get_or_init(|| std::thread::available_parallelism().map_or(1, usize::from))
}

/// The threads runnable on the machine now, `None` where the system does not say.
fn runnable_threads() -> Option<usize> {
    std::fs::read_to_string("/proc/loadavg").ok().as_deref().and_then(runnable_in_loadavg)
}

/// The runnable count of a `/proc/loadavg` line (`0.52 0.58 0.59 3/467 12345`: the fourth
/// field is runnable/all).
fn runnable_in_loadavg(line: &str) -> Option<usize> {
    line.split_whitespace().nth(3)?.split_once('/')?.0.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_runnable_count_is_the_fourth_fields_numerator() {
        assert_eq!(runnable_in_loadavg("0.52 0.58 0.59 3/467 12345\n"), Some(3));
        assert_eq!(runnable_in_loadavg("0.52 0.58 0.59"), None);
        assert_eq!(runnable_in_loadavg("0.52 0.58 0.59 x/467 1"), None);
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn this_machine_says_how_many_threads_are_runnable_counting_the_caller() {
        assert!(runnable_threads().is_some_and(|n| n >= 1));
    }
}
