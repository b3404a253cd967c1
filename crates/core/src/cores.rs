//! How much parallelism this process has, for work that is split between threads only where
//! a second core can take it.

/// Whether this process may run on more than one core.
pub fn several() -> bool {
    static SEVERAL: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *SEVERAL.get_or_init(|| std::thread::available_parallelism().is_ok_and(|n| n.get() > 1))
}
