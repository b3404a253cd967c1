//! Compound operations on one object (atomic writes of data and omap pairs with guards;
//! omap reads in bulk) and listing the objects of a namespace.

use std::ffi::{c_char, c_int};

use fieldstore_core::error::{Error, ErrorKind, Result};

use crate::ffi::{
    librados, Librados, ListCtxT, OmapIterT, ReadOpT, WriteOpT, COMPARE_EQUAL, CREATE_EXCLUSIVE, OPERATION_FULL_FORCE, OPERATION_FULL_TRY,
};
use crate::{c_string, check, IoCtx};

/// Omap pairs as read: key, value.
pub type Pairs = Vec<(String, Vec<u8>)>;

/// How many pairs one omap read asks for (the OSD may return fewer and say there are more).
const PAGE: u64 = 4096;

/// A compound write applied atomically to one object: all of its parts take effect, or none.
#[derive(Default)]
pub struct WriteOp<'a> {
    create_exclusive: bool,
    assert_exists: bool,
    full: Option<&'a [u8]>,
    append: Option<&'a [u8]>,
    compare: Vec<(&'a str, &'a [u8])>,
    set: Vec<(&'a str, &'a [u8])>,
    remove: Vec<&'a str>,
    remove_object: bool,
}

/// What became of a [`WriteOp`] that the cluster answered.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// Every part of it took effect.
    Applied,
    /// It asked to create the object, which exists: nothing was changed.
    Exists,
    /// A guarded omap value differed: nothing was changed.
    ComparisonFailed,
    /// The object does not exist: it asked to remove it, or guarded the write by a comparison
    /// or by [`WriteOp::assert_exists`].
    Missing,
}

impl<'a> WriteOp<'a> {
    /// An operation that does nothing yet.
    pub fn new() -> Self {
        WriteOp::default()
    }

    /// Fails with [`Outcome::Exists`] if the object exists.
    pub fn create_exclusive(mut self) -> Self {
        self.create_exclusive = true;
        self
    }

    /// Fails with [`Outcome::Missing`] unless the object exists (an omap write would create it).
    pub fn assert_exists(mut self) -> Self {
        self.assert_exists = true;
        self
    }

    /// Replaces the object's data.
    pub fn write_full(mut self, data: &'a [u8]) -> Self {
        self.full = Some(data);
        self
    }

    /// Appends `data` to the object's data (creating the object). Appends to one object are
    /// applied one after the other, each at the end the object has then.
    pub fn append(mut self, data: &'a [u8]) -> Self {
        self.append = Some(data);
        self
    }

    /// Applies only if the omap holds `key` with exactly `value` ([`Outcome::ComparisonFailed`]
    /// otherwise). The OSD compares a missing key as the empty value.
    pub fn compare_equal(mut self, key: &'a str, value: &'a [u8]) -> Self {
        self.compare.push((key, value));
        self
    }

    /// Sets omap `key` to `value`.
    pub fn set(mut self, key: &'a str, value: &'a [u8]) -> Self {
        self.set.push((key, value));
        self
    }

    /// Sets each omap key of `pairs` to its value.
    pub fn set_all(mut self, pairs: impl IntoIterator<Item = (&'a str, &'a [u8])>) -> Self {
        self.set.extend(pairs);
        self
    }

    /// Removes omap `key`.
    pub fn remove(mut self, key: &'a str) -> Self {
        self.remove.push(key);
        self
    }

    /// The verb for messages about this operation.
    fn action(&self) -> &'static str {
        if self.remove_object {
            "remove"
        } else if self.full.is_some() || self.append.is_some() {
            "write"
        } else {
            "update"
        }
    }

    /// Deletes the object (allowed on a full pool: it frees space).
    pub fn remove_object(mut self) -> Self {
        self.remove_object = true;
        self
    }
}

/// Pointers and lengths of byte strings, as librados' `*2` functions take them.
fn pointers<'s>(items: impl Iterator<Item = &'s [u8]>) -> (Vec<*const c_char>, Vec<usize>) {
    items.map(|b| (b.as_ptr().cast::<c_char>(), b.len())).unzip()
}

/// A [`WriteOp`] encoded into a librados write operation, ready to be sent (now, or later
/// and asynchronously: see [`IoCtx::prepare`]). librados copied every byte the `WriteOp`
/// borrowed, so those may go; where the OSD reports each comparison's result lives here.
pub(crate) struct EncodedOp {
    pub(crate) lib: &'static Librados,
    pub(crate) handle: WriteOpT,
    /// Written by librados when the operation completes: boxed, so it does not move while
    /// the operation is in flight.
    _compare_results: Box<[c_int]>,
    kind: OpKind,
}

/// What an answer's code means depends on what the operation asked for.
#[derive(Clone, Copy)]
struct OpKind {
    create_exclusive: bool,
    /// Compares omap values or asserts that the object exists: `ENOENT` says it does not.
    compares: bool,
    uses_omap: bool,
    remove_object: bool,
    action: &'static str,
}

// SAFETY: a librados write operation may be sent from any thread; an EncodedOp is owned by
// one thread at a time.
unsafe impl Send for EncodedOp {}

impl EncodedOp {
    pub(crate) fn new(op: &WriteOp) -> Result<Self> {
        let lib = librados()?;
        // SAFETY: creating an op has no preconditions; it is released once, by Drop.
        let handle = unsafe { (lib.create_write_op)() };
        let mut compare_results = vec![0; op.compare.len()].into_boxed_slice();
        let (set_keys, set_key_lens) = pointers(op.set.iter().map(|(k, _)| k.as_bytes()));
        let (set_values, set_value_lens) = pointers(op.set.iter().map(|(_, v)| *v));
        let (remove_keys, remove_key_lens) = pointers(op.remove.iter().map(|k| k.as_bytes()));
        // SAFETY: every pointer refers to memory borrowed by `op` or owned by the vectors
        // above, alive during these calls, which copy what they are given; lengths match.
        // The comparison results go into the EncodedOp, which outlives the operation.
        unsafe {
            if op.create_exclusive {
                (lib.write_op_create)(handle, CREATE_EXCLUSIVE, std::ptr::null());
            }
            if op.assert_exists {
                (lib.write_op_assert_exists)(handle);
            }
            for ((key, value), result) in op.compare.iter().zip(compare_results.iter_mut()) {
                let (k, v) = (key.as_ptr().cast(), value.as_ptr().cast());
                (lib.write_op_omap_cmp2)(handle, k, COMPARE_EQUAL, v, key.len(), value.len(), result);
            }
            if let Some(data) = op.full {
                (lib.write_op_write_full)(handle, data.as_ptr().cast(), data.len());
            }
            if let Some(data) = op.append {
                (lib.write_op_append)(handle, data.as_ptr().cast(), data.len());
            }
            if !op.set.is_empty() {
                let n = op.set.len();
                (lib.write_op_omap_set2)(handle, set_keys.as_ptr(), set_values.as_ptr(), set_key_lens.as_ptr(), set_value_lens.as_ptr(), n);
            }
            if !op.remove.is_empty() {
                (lib.write_op_omap_rm_keys2)(handle, remove_keys.as_ptr(), remove_key_lens.as_ptr(), op.remove.len());
            }
            if op.remove_object {
                (lib.write_op_remove)(handle);
            }
        }
        let kind = OpKind {
            create_exclusive: op.create_exclusive,
            compares: !op.compare.is_empty() || op.assert_exists,
            uses_omap: !(op.compare.is_empty() && op.set.is_empty() && op.remove.is_empty()),
            remove_object: op.remove_object,
            action: op.action(),
        };
        // Moving the box keeps its contents where librados was told they are.
        Ok(EncodedOp { lib, handle, _compare_results: compare_results, kind })
    }

    /// A full pool fails a write at once rather than blocking it until space is freed;
    /// deletions go ahead.
    pub(crate) fn flags(&self) -> c_int {
        if self.kind.remove_object {
            OPERATION_FULL_FORCE
        } else {
            OPERATION_FULL_TRY
        }
    }

    /// What the cluster's answer `rc` for object `oid` means.
    pub(crate) fn outcome(&self, io: &IoCtx, oid: &str, rc: c_int) -> Result<Outcome> {
        let kind = self.kind;
        match rc {
            rc if rc == -libc::ENOENT && (kind.remove_object || kind.compares) => Ok(Outcome::Missing),
            rc if rc == -libc::EOPNOTSUPP && kind.uses_omap => Err(no_omaps(io, oid)),
            rc if rc == -libc::EEXIST && kind.create_exclusive => Ok(Outcome::Exists),
            rc if rc == -libc::ECANCELED && kind.compares => Ok(Outcome::ComparisonFailed),
            rc if rc == -libc::EFBIG => Err(Error::new(
                ErrorKind::BadRequest,
                format!("{}: the object would be larger than the cluster allows (osd_max_object_size)", io.describe(oid)),
            )),
            rc => check(rc, kind.action, || io.describe(oid)).map(|_| Outcome::Applied),
        }
    }
}

impl Drop for EncodedOp {
    fn drop(&mut self) {
        // SAFETY: created in `new`, released once; whoever sent it waited for its answer
        // before dropping it.
        unsafe { (self.lib.release_write_op)(self.handle) };
    }
}

impl IoCtx {
    /// Applies a compound write to `oid`; on a full pool it fails with `ENOSPC` or `EDQUOT`
    /// (over its quota) rather than waiting.
    pub fn apply(&self, oid: &str, op: &WriteOp) -> Result<Outcome> {
        let oid_c = c_string(oid, "object name")?;
        let encoded = EncodedOp::new(op)?;
        // SAFETY: a live operation, context and name; the call returns once answered.
        let rc =
            unsafe { (encoded.lib.write_op_operate)(encoded.handle, self.handle, oid_c.as_ptr(), std::ptr::null_mut(), encoded.flags()) };
        encoded.outcome(self, oid, rc)
    }

    /// Writes `data` at `offset` (creating the object).
    pub fn write(&self, oid: &str, offset: u64, data: &[u8]) -> Result<()> {
        let oid_c = c_string(oid, "object name")?;
        // SAFETY: live context; `data` is valid for `data.len()` bytes.
        let rc = unsafe { (librados()?.write)(self.handle, oid_c.as_ptr(), data.as_ptr().cast(), data.len(), offset) };
        if rc == -libc::EOPNOTSUPP {
            return Err(Error::new(
                ErrorKind::Unsupported,
                format!(
                    "{}: this pool refuses a write of {} bytes at offset {offset} (erasure-coded pools take whole objects and \
                 appends of whole stripes only)",
                    self.describe(oid),
                    data.len()
                ),
            ));
        }
        check(rc, "write", || self.describe(oid))?;
        Ok(())
    }

    /// The values of some omap keys (missing keys are left out), or `None` if the object does
    /// not exist.
    pub fn omap_get(&self, oid: &str, keys: &[&str]) -> Result<Option<Pairs>> {
        let (key_pointers, key_lens) = pointers(keys.iter().map(|k| k.as_bytes()));
        let read = self.omap_read(oid, |lib, op, [iter], [result], _more| {
            // SAFETY: the key arrays outlive the operation (they live until `omap_read` returns).
            unsafe { (lib.read_op_omap_get_vals_by_keys2)(op, key_pointers.as_ptr(), keys.len(), key_lens.as_ptr(), iter, result) }
        })?;
        Ok(read.map(|([pairs], _)| pairs))
    }

    /// Every omap pair whose key starts with `prefix` and sorts after `start_after`, in key
    /// order, or `None` if the object does not exist. Reads pages of [`PAGE`] pairs.
    pub fn omap_scan(&self, oid: &str, start_after: &str, prefix: &str) -> Result<Option<Pairs>> {
        let Some((_, first, more)) = self.omap_get_and_scan_page(oid, &[], start_after, prefix)? else { return Ok(None) };
        self.scan_on(oid, first, more, prefix).map(Some)
    }

    /// The value of omap key `key` (empty if missing) and [`IoCtx::omap_scan`]'s pairs, the
    /// first page read in the same operation (one round trip for a reader that polls).
    pub fn omap_get_and_scan(&self, oid: &str, key: &str, start_after: &str, prefix: &str) -> Result<Option<(Vec<u8>, Pairs)>> {
        let Some((got, first, more)) = self.omap_get_and_scan_page(oid, &[key], start_after, prefix)? else { return Ok(None) };
        let value = got.into_iter().next().map(|(_, v)| v).unwrap_or_default();
        Ok(Some((value, self.scan_on(oid, first, more, prefix)?)))
    }

    /// The values of some omap keys (missing keys are left out) and up to `buf.len()` bytes of
    /// the object's data from `offset`, read in one operation (one round trip for a reader
    /// that polls a log), or `None` if the object does not exist; with the number of bytes
    /// read (fewer than asked: the data ends there).
    pub fn omap_get_and_read(&self, oid: &str, keys: &[&str], offset: u64, buf: &mut [u8]) -> Result<Option<(Pairs, usize)>> {
        let (key_pointers, key_lens) = pointers(keys.iter().map(|k| k.as_bytes()));
        let (mut bytes_read, mut read_result) = (0usize, 0 as c_int);
        let read = self.omap_read(oid, |lib, op, [iter], [result], _more| {
            // SAFETY: the key arrays, the buffer and the two result slots outlive the
            // operation (they live until this function returns); the buffer holds `buf.len()`.
            unsafe {
                (lib.read_op_omap_get_vals_by_keys2)(op, key_pointers.as_ptr(), keys.len(), key_lens.as_ptr(), iter, result);
                (lib.read_op_read)(op, offset, buf.len(), buf.as_mut_ptr().cast(), &mut bytes_read, &mut read_result);
            }
        })?;
        let Some(([pairs], _)) = read else { return Ok(None) };
        check(read_result, "read", || self.describe(oid))?;
        Ok(Some((pairs, bytes_read.min(buf.len()))))
    }

    /// Reads the pages after `pairs` while the OSD says there are more.
    fn scan_on(&self, oid: &str, mut pairs: Pairs, mut more: bool, prefix: &str) -> Result<Pairs> {
        while more {
            let Some((last, _)) = pairs.last() else { break };
            let after = last.clone();
            // An object removed between pages ends the scan.
            let Some((_, page, more_after)) = self.omap_get_and_scan_page(oid, &[], &after, prefix)? else { break };
            pairs.extend(page);
            more = more_after;
        }
        Ok(pairs)
    }

    /// One read op: the values of `keys` (none: no such read) and one page of a scan.
    fn omap_get_and_scan_page(&self, oid: &str, keys: &[&str], start_after: &str, prefix: &str) -> Result<Option<(Pairs, Pairs, bool)>> {
        let (after_c, prefix_c) = (c_string(start_after, "omap key")?, c_string(prefix, "omap key prefix")?);
        let (key_pointers, key_lens) = pointers(keys.iter().map(|k| k.as_bytes()));
        let read = self.omap_read(oid, |lib, op, [scan, got]: &mut [OmapIterT; 2], [scan_result, got_result]: &mut [c_int; 2], more| {
            // SAFETY: the strings and key arrays outlive the operation (they live until
            // `omap_read` returns).
            unsafe {
                (lib.read_op_omap_get_vals2)(op, after_c.as_ptr(), prefix_c.as_ptr(), PAGE, scan, more, scan_result);
                if !keys.is_empty() {
                    (lib.read_op_omap_get_vals_by_keys2)(op, key_pointers.as_ptr(), keys.len(), key_lens.as_ptr(), got, got_result);
                }
            }
        })?;
        Ok(read.map(|([scan, got], more)| (got, scan, more)))
    }

    /// Runs one read op that `add` fills with up to `M` omap reads (given the op, an iterator
    /// and a result slot per read, and the "more pairs" flag); returns each read's pairs and
    /// the flag, or `None` if the object does not exist.
    fn omap_read<const M: usize>(
        &self,
        oid: &str,
        add: impl FnOnce(&Librados, ReadOpT, &mut [OmapIterT; M], &mut [c_int; M], *mut u8),
    ) -> Result<Option<([Pairs; M], bool)>> {
        let lib = librados()?;
        let oid_c = c_string(oid, "object name")?;
        let mut iters: [OmapIterT; M] = [std::ptr::null_mut(); M];
        let mut results: [c_int; M] = [0; M];
        let mut more = 0u8;
        // SAFETY: the op is released on every path; `iters`, `results` and `more` outlive it.
        let rc = unsafe {
            let op = (lib.create_read_op)();
            add(lib, op, &mut iters, &mut results, &mut more);
            let rc = (lib.read_op_operate)(op, self.handle, oid_c.as_ptr(), 0);
            (lib.release_read_op)(op);
            rc
        };
        let pairs = iters.map(|iter| drain(lib, iter));
        if rc == -libc::ENOENT {
            return Ok(None);
        }
        if rc == -libc::EOPNOTSUPP {
            return Err(no_omaps(self, oid));
        }
        check(rc, "read the omap of", || self.describe(oid))?;
        for result in results {
            check(result, "read the omap of", || self.describe(oid))?;
        }
        Ok(Some((pairs, more != 0)))
    }

    /// Removes every object of this context's namespace, `last` (if there) after the others,
    /// so that an interrupted removal leaves `last` to show what is left to remove.
    pub fn remove_all_objects(&self, last: &str) -> Result<()> {
        let mut names = self.object_names()?;
        names.sort_by_key(|n| n == last);
        for name in names {
            self.remove(&name)?;
        }
        Ok(())
    }

    /// The names of every object in this context's namespace.
    pub fn object_names(&self) -> Result<Vec<String>> {
        let lib = librados()?;
        let mut ctx: ListCtxT = std::ptr::null_mut();
        // SAFETY: live context, valid out-pointer.
        check(unsafe { (lib.nobjects_list_open)(self.handle, &mut ctx) }, "list the objects of", || self.describe(""))?;
        let mut names = Vec::new();
        let result = loop {
            let (mut entry, mut key, mut namespace) = (std::ptr::null(), std::ptr::null(), std::ptr::null());
            let (mut entry_len, mut key_len, mut namespace_len) = (0usize, 0usize, 0usize);
            // SAFETY: live listing; the returned strings stay valid until the next call.
            let rc = unsafe {
                (lib.nobjects_list_next2)(ctx, &mut entry, &mut key, &mut namespace, &mut entry_len, &mut key_len, &mut namespace_len)
            };
            if rc == -libc::ENOENT {
                break Ok(names);
            }
            if let Err(e) = check(rc, "list the objects of", || self.describe("")) {
                break Err(e);
            }
            // SAFETY: librados returned `entry_len` valid bytes at `entry`.
            let bytes = unsafe { std::slice::from_raw_parts(entry.cast::<u8>(), entry_len) };
            names.push(String::from_utf8_lossy(bytes).into_owned());
        };
        // SAFETY: closed once.
        unsafe { (lib.nobjects_list_close)(ctx) };
        result
    }
}

/// The error for an omap operation on a pool without omaps.
fn no_omaps(io: &IoCtx, oid: &str) -> Error {
    Error::new(
        ErrorKind::BadConfig,
        format!(
            "{}: this pool does not support omaps (erasure-coded pools do not): put indexes and key-values in a replicated pool",
            io.describe(oid)
        ),
    )
}

/// Copies the pairs out of an omap iterator and ends it.
fn drain(lib: &Librados, iter: OmapIterT) -> Pairs {
    let mut pairs = Pairs::new();
    if iter.is_null() {
        return pairs;
    }
    loop {
        let (mut key, mut value): (*mut c_char, *mut c_char) = (std::ptr::null_mut(), std::ptr::null_mut());
        let (mut key_len, mut value_len) = (0usize, 0usize);
        // SAFETY: a live iterator; returned buffers stay valid until `omap_get_end`.
        let rc = unsafe { (lib.omap_get_next2)(iter, &mut key, &mut value, &mut key_len, &mut value_len) };
        if rc < 0 || key.is_null() {
            break;
        }
        // SAFETY: librados returned that many valid bytes at each pointer.
        let (k, v) = unsafe {
            (
                std::slice::from_raw_parts(key.cast::<u8>(), key_len),
                if value.is_null() { &[][..] } else { std::slice::from_raw_parts(value.cast::<u8>(), value_len) },
            )
        };
        pairs.push((String::from_utf8_lossy(k).into_owned(), v.to_vec()));
    }
    // SAFETY: ended once; nothing borrowed from it remains.
    unsafe { (lib.omap_get_end)(iter) };
    pairs
}
