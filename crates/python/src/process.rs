//! Handles and readers belong to the process that opened them. After `fork()` (multiprocessing's
//! fork start method) a child has their memory but not the threads that may have held their
//! locks, nor a working cluster connection, and a child's flush would publish its parent's
//! pending fields a second time. So every call checks the process first and refuses, naming
//! both, rather than hang or corrupt; and a child leaves what it inherited to the parent.

use pyo3::PyResult;

use crate::errors;

/// The process that opened a handle or reader.
pub struct Owner(u32);

impl Owner {
    /// The calling process.
    pub fn current() -> Self {
        Owner(std::process::id())
    }

    /// Whether the calling process is the owner.
    pub fn is_current(&self) -> bool {
        self.0 == std::process::id()
    }

    /// An error unless the calling process is the owner of `what`.
    pub fn check(&self, what: &str) -> PyResult<()> {
        if self.is_current() {
            return Ok(());
        }
        Err(errors::Unsupported::new_err(format!(
            "this {what} was opened in process {}, and this is process {} (after fork()): open a new one here",
            self.0,
            std::process::id()
        )))
    }

    /// Drops `value` with the GIL released in its owner (see `drop_detached`); in another
    /// process, leaves it (its files, locks and connections are the owner's).
    pub fn release<T: Send>(&self, value: T) {
        if self.is_current() {
            crate::drop_detached(value);
        } else {
            std::mem::forget(value);
        }
    }
}
