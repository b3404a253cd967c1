//! Jobs run on a few threads at once, their answers in order: for work that waits (reads of
//! an object store, calls to a server) more than it computes.

use std::sync::atomic::{AtomicUsize, Ordering};

/// `job(0)` to `job(count - 1)` on up to `threads` threads, the answers in order.
pub fn in_parallel<T: Send>(threads: usize, count: usize, job: impl Fn(usize) -> T + Sync) -> Vec<T> {
    let threads = count.min(threads);
    if threads <= 1 {
        return (0..count).map(job).collect();
    }
    let next = AtomicUsize::new(0);
    let mut done: Vec<(usize, T)> = std::thread::scope(|scope| {
        let workers: Vec<_> = (0..threads)
            .map(|_| {
                scope.spawn(|| {
                    let mut mine = Vec::new();
                    loop {
                        let i = next.fetch_add(1, Ordering::Relaxed);
                        if i >= count {
                            break mine;
                        }
                        mine.push((i, job(i)));
                    }
                })
            })
            .collect();
        // A job that panicked is a bug: its panic goes on to the caller's thread.
        workers.into_iter().flat_map(|w| w.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic))).collect()
    });
    done.sort_unstable_by_key(|(i, _)| *i);
    done.into_iter().map(|(_, answer)| answer).collect()
}
