//! Operations that run while the caller goes on. Writes: any compound write is prepared
//! (librados copies the bytes into its operation, so the caller's buffer is free at once),
//! submitted, and waited for later. Reads: started into a buffer of their own and finished
//! later. The RADOS store keeps bounded windows of both in flight.

use std::ffi::CString;
use std::sync::Arc;

use fieldstore_core::error::{Error, ErrorKind, Result};

use crate::ffi::{librados, CompletionT, Librados};
use crate::ops::EncodedOp;
use crate::{c_string, check, IoCtx, Outcome, WriteOp};

/// A compound write, encoded but not yet sent.
pub struct PreparedWrite {
    op: EncodedOp,
    io: Arc<IoCtx>,
    oid: String,
    oid_c: CString,
}

/// A write sent to the cluster; [`PendingWrite::wait`] says how it ended. Dropping it waits
/// for the cluster's answer (bounded by the cluster's operation timeout) and ignores it.
pub struct PendingWrite {
    write: PreparedWrite,
    completion: CompletionT,
}

// SAFETY: librados operations and completions may be used from any thread; each of these
// values is owned by one thread at a time.
unsafe impl Send for PendingWrite {}

impl IoCtx {
    /// `op` on object `oid`, prepared to be submitted later: librados copies the bytes `op`
    /// borrows now, so they are free at once.
    pub fn prepare(self: &Arc<Self>, oid: &str, op: &WriteOp) -> Result<PreparedWrite> {
        let oid_c = c_string(oid, "object name")?;
        Ok(PreparedWrite { op: EncodedOp::new(op)?, io: self.clone(), oid: oid.into(), oid_c })
    }
}

impl PreparedWrite {
    /// Sends the write; like every fieldstore write it fails at once on a full pool instead
    /// of waiting for space.
    pub fn submit(self) -> Result<PendingWrite> {
        let lib = self.op.lib;
        let mut completion: CompletionT = std::ptr::null_mut();
        // SAFETY: no callback, valid out-pointer; the completion is released once (Drop).
        check(unsafe { (lib.aio_create_completion2)(std::ptr::null_mut(), None, &mut completion) }, "prepare a write of", || {
            self.io.describe(&self.oid)
        })?;
        // SAFETY: the op, the context and the name live in `self` and then in the returned
        // PendingWrite, which releases nothing before the operation completed.
        let rc = unsafe {
            (lib.aio_write_op_operate)(
                self.op.handle,
                self.io.handle,
                completion,
                self.oid_c.as_ptr(),
                std::ptr::null_mut(),
                self.op.flags(),
            )
        };
        if rc < 0 {
            // Never sent: nothing will complete it, so it is released without waiting.
            // SAFETY: released once, unused.
            unsafe { (lib.aio_release)(completion) };
            check(rc, "send a write to", || self.io.describe(&self.oid))?;
        }
        Ok(PendingWrite { write: self, completion })
    }
}

impl PendingWrite {
    /// Waits until the cluster applied the write (durably, on every replica) or refused it. A
    /// completion made by `rados_aio_create_completion2` completes when the operation "is
    /// committed on all replicas" (rados/librados.h); the separate "safe" wait is deprecated.
    pub fn wait(self) -> Result<Outcome> {
        let rc = self.wait_for_answer();
        self.write.op.outcome(&self.write.io, &self.write.oid, rc)
    }

    fn wait_for_answer(&self) -> i32 {
        let lib = self.write.op.lib;
        // SAFETY: a live, submitted completion.
        unsafe {
            (lib.aio_wait_for_complete)(self.completion);
            (lib.aio_get_return_value)(self.completion)
        }
    }
}

impl Drop for PendingWrite {
    fn drop(&mut self) {
        self.wait_for_answer();
        // SAFETY: the operation completed; the completion is released once.
        unsafe { (self.write.op.lib.aio_release)(self.completion) };
    }
}

/// A read sent to the cluster into a buffer of its own; [`PendingRead::finish`] waits for it.
/// Dropping it waits too: librados writes into the buffer until the read completes.
pub struct PendingRead {
    lib: &'static Librados,
    io: Arc<IoCtx>,
    oid: CString,
    offset: u64,
    buffer: Vec<u8>,
    completion: CompletionT,
}

// SAFETY: as for PendingWrite; the buffer is owned and does not move while librados fills it
// (the Vec's heap block stays where it is when the PendingRead moves).
unsafe impl Send for PendingRead {}

impl IoCtx {
    /// Starts reading `length` bytes of object `oid` at `offset` into `buffer` (resized;
    /// what it holds is overwritten).
    pub fn start_read(self: &Arc<Self>, oid: &str, offset: u64, length: usize, mut buffer: Vec<u8>) -> Result<PendingRead> {
        let lib = librados()?;
        let oid = c_string(oid, "object name")?;
        // The read's answer is an int: the byte count or an error.
        if length > i32::MAX as usize {
            return Err(Error::new(
                ErrorKind::BadRequest,
                format!("{}: one read of {length} bytes is more than librados can answer", self.describe(&oid.to_string_lossy())),
            ));
        }
        let mut completion: CompletionT = std::ptr::null_mut();
        // SAFETY: no callback, valid out-pointer; the completion is released once.
        check(unsafe { (lib.aio_create_completion2)(std::ptr::null_mut(), None, &mut completion) }, "prepare a read of", || {
            self.describe(&oid.to_string_lossy())
        })?;
        buffer.resize(length, 0);
        // SAFETY: the name and the buffer live in the returned PendingRead, which waits for the
        // read before releasing either.
        let rc = unsafe { (lib.aio_read)(self.handle, oid.as_ptr(), completion, buffer.as_mut_ptr().cast(), length, offset) };
        if rc < 0 {
            // SAFETY: never sent; released once, unused.
            unsafe { (lib.aio_release)(completion) };
            check(rc, "read", || self.describe(&oid.to_string_lossy()))?;
        }
        Ok(PendingRead { lib, io: self.clone(), oid, offset, buffer, completion })
    }
}

impl PendingRead {
    /// The bytes asked for; an object shorter than that is an error.
    pub fn finish(mut self) -> Result<Vec<u8>> {
        let rc = self.wait_for_answer();
        let read = check(rc, "read", || self.io.describe(&self.oid.to_string_lossy()))? as usize;
        if read < self.buffer.len() {
            return Err(self.io.short_read(&self.oid.to_string_lossy(), self.buffer.len(), self.offset, read));
        }
        Ok(std::mem::take(&mut self.buffer))
    }

    fn wait_for_answer(&self) -> i32 {
        // SAFETY: a live, submitted completion.
        unsafe {
            (self.lib.aio_wait_for_complete)(self.completion);
            (self.lib.aio_get_return_value)(self.completion)
        }
    }
}

impl Drop for PendingRead {
    fn drop(&mut self) {
        self.wait_for_answer();
        // SAFETY: the read completed; the completion is released once.
        unsafe { (self.lib.aio_release)(self.completion) };
    }
}
