//! Handles and readers belong to the process that opened them. After `fork()` (multiprocessing's
//! fork start method) a child has their memory but not the threads that may have held their
//! locks, nor a working cluster connection, and a child's flush would publish its parent's
//! pending fields a second time. So every call checks the process first and refuses, naming
//! both, rather than hang or corrupt; and a child leaves what it inherited to the parent.

use pyo3::{PyResult, Python};

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

    /// Drops `value` in its owner with the GIL released: dropping a store or a reader may wait
    /// on storage (a writer's last sync, reads still in flight), which must not stall every
    /// Python thread (Python drops objects with the GIL held, so attaching only counts one
    /// more). In another process, leaves it: its files, locks and connections are the owner's.
    pub fn release<T: Send>(&self, value: T) {
        if self.is_current() {
            Python::attach(|py| py.detach(move || drop(value)));
        } else {
            std::mem::forget(value);
        }
    }
}
