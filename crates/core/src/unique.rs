//! Names no other process on any host produces, for files and objects that writers create
//! without coordinating.

use std::sync::atomic::{AtomicPtr, AtomicU64, Ordering};

/// A name no other process on any host will produce: this process's [`session`] and a
/// counter.
pub fn unique_suffix() -> String {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    format!("{}.{}", session(), n)
}

/// This process's name among all processes on all hosts: host, pid and the time of the first
/// call (which tells a later process reusing the pid apart). Every [`unique_suffix`] starts
/// with it, so whatever a process created can be found again by its session (recovery after
/// a crash). A child made by `fork()` gets a session of its own at its first call: it inherits
/// its parent's memory, and two children naming files after their parent's session would
/// collide (as Python's multiprocessing workers did).
pub fn session() -> &'static str {
    static CURRENT: AtomicPtr<(u32, String)> = AtomicPtr::new(std::ptr::null_mut());
    let pid = std::process::id();
    loop {
        let current = CURRENT.load(Ordering::Acquire);
        // SAFETY: a non-null pointer in CURRENT comes from `Box::leak` below and is never freed.
        if let Some((owner, name)) = unsafe { current.as_ref() } {
            if *owner == pid {
                return name;
            }
        }
        let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_nanos()).unwrap_or(0);
        let fresh: *mut (u32, String) = Box::leak(Box::new((pid, format!("{}.{}.{:x}", hostname(), pid, nanos))));
        // A thread that made this process's session first wins; the loser's stays leaked (a
        // few bytes, once per process).
        let _ = CURRENT.compare_exchange(current, fresh, Ordering::AcqRel, Ordering::Acquire);
    }
}

/// The host name, reduced to `[A-Za-z0-9-]` (other characters become `_`) and 64 characters.
pub fn hostname() -> String {
    let mut buf = [0u8; 256];
    // SAFETY: buf is writable for its length; gethostname NUL-terminates on success.
    let rc = unsafe { libc::gethostname(buf.as_mut_ptr().cast(), buf.len()) };
    let raw =
        if rc == 0 { String::from_utf8_lossy(&buf[..buf.iter().position(|&b| b == 0).unwrap_or(0)]).into_owned() } else { "host".into() };
    raw.chars().map(|c| if c.is_ascii_alphanumeric() || c == '-' { c } else { '_' }).take(64).collect()
}

/// An object name from a unique string ([`unique_suffix`] and what the object is): the MD5 of
/// it, as 32 hex digits, so names spread evenly over an object store's placement and say
/// nothing of the host that wrote them.
pub fn unique_object_name(unique: &str) -> String {
    use md5::{Digest, Md5};
    Md5::digest(unique.as_bytes()).iter().map(|b| format!("{b:02x}")).collect()
}

/// Whether `name` is one [`unique_object_name`] makes.
pub fn is_object_name(name: &str) -> bool {
    name.len() == 32 && name.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn suffixes_differ_and_start_with_the_session() {
        let (a, b) = (unique_suffix(), unique_suffix());
        assert_ne!(a, b);
        assert!(a.starts_with(&format!("{}.", session())) && b.starts_with(&format!("{}.", session())));
        assert!(!session().contains('/'));
    }
}
