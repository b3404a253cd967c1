//! Markers of writers whose TOC records may not be durable yet, and how a dataset's opener
//! tells which of them a crash may have cut short.
//!
//! A writer that lets the store make its commits durable (`CommitMode::Embedded`) appends
//! its TOC records without syncing them. Before its first such record it creates, durably,
//! a marker `writers/SESSION.N` in the dataset directory (the session names its host and
//! pid) holding the boot id of its kernel and its pid namespace; when it closes it syncs what
//! it wrote and removes the marker. A marker left behind names a writer that is still
//! running, was killed, or died with its kernel. The last two must be checked against the
//! store's copy:
//! - a marker of another boot: its kernel is gone (boot ids are random per boot, so no other
//!   running kernel has it). On a local file system every marker is this machine's, whatever
//!   host name it was written under (containers, renamed hosts); on a shared one only this
//!   host's markers are judged, the rest are left to their hosts ([`Sharing`]);
//! - a marker of this boot and this pid namespace whose process is gone: killed. One of
//!   another pid namespace (another container on this kernel) cannot be judged: its records
//!   are in this kernel's page cache, and a later boot will check them.

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use fieldstore_core::error::{IoContext, Result};
use fieldstore_core::unique::{hostname, unique_suffix};

/// The directory of the markers, inside a dataset directory.
const WRITERS_DIR: &str = "writers";

/// This host's boot id (Linux), which changes at every boot; `None` where there is none,
/// and then a crash cannot be told from a running writer, so commits are not embedded.
pub fn boot_id() -> Option<&'static str> {
    static BOOT_ID: OnceLock<Option<String>> = OnceLock::new();
    BOOT_ID
        .get_or_init(|| {
            let text = std::fs::read_to_string("/proc/sys/kernel/random/boot_id").ok()?;
            Some(text.trim().to_string()).filter(|t| !t.is_empty())
        })
        .as_deref()
}

/// Whether `path` (or, if it does not exist yet, its nearest existing ancestor) is on a file
/// system only this host writes to: ext2/3/4, XFS, Btrfs, tmpfs, F2FS, ZFS, bcachefs, or an
/// overlay. Network and cluster file systems (Lustre, GPFS, NFS, CephFS, ...) are not.
pub fn on_local_file_system(path: &Path) -> bool {
    const LOCAL: [i64; 9] =
        [0xEF53, 0x5846_5342, 0x9123_683E, 0x0102_1994, 0xF2F5_2010, 0x2FC1_2FC1, 0xCA45_1A4E, 0x794C_7630, 0x8584_58F6];
    let Some(existing) = path.ancestors().find(|p| p.exists()) else { return false };
    let Ok(c_path) = std::ffi::CString::new(existing.as_os_str().as_encoded_bytes()) else { return false };
    // SAFETY: `statfs` is a plain C struct of integers, for which all zero bytes is a valid value.
    let mut stat: libc::statfs = unsafe { std::mem::zeroed() };
    // SAFETY: a NUL-terminated path and a statfs buffer owned by this frame.
    let rc = unsafe { libc::statfs(c_path.as_ptr(), &mut stat) };
    rc == 0 && LOCAL.contains(&(stat.f_type as i64))
}

/// Who may have written the markers of a dataset.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Sharing {
    /// A local file system: every marker was written on this machine, in this boot or an
    /// earlier one.
    ThisMachine,
    /// A file system several hosts write to.
    Hosts,
}

/// What a marker records of its writer: the boot id of its kernel, then its pid namespace.
fn identity() -> Option<String> {
    Some(format!("{}\n{}", boot_id()?, pid_namespace()))
}

fn pid_namespace() -> String {
    std::fs::read_link("/proc/self/ns/pid").map(|p| p.to_string_lossy().into_owned()).unwrap_or_default()
}

/// A running writer's marker; [`Marker::remove`] once everything it wrote is durable.
pub struct Marker {
    path: PathBuf,
}

impl Marker {
    /// Creates the marker durably (file and directory entry synced), so that no one ever
    /// reads a marker without its boot id (which would make a running writer look crashed):
    /// written and synced as an unnamed file, then linked into place, where the file system
    /// has unnamed files (`O_TMPFILE`: ext4, XFS, Btrfs, tmpfs, ...); elsewhere written under
    /// a hidden name and renamed.
    pub fn create(dataset_dir: &Path) -> Result<Marker> {
        let identity = identity()
            .ok_or_else(|| fieldstore_core::Error::new(fieldstore_core::error::ErrorKind::Unsupported, "this system has no boot id"))?;
        let dir = dataset_dir.join(WRITERS_DIR);
        if !dir.exists() {
            std::fs::create_dir_all(&dir).ctx("create writers directory", &dir)?;
            File::open(dataset_dir).and_then(|d| d.sync_all()).ctx("sync directory", dataset_dir)?;
        }
        let name = unique_suffix();
        let path = dir.join(&name);
        if !create_unnamed_then_link(&dir, &path, identity.as_bytes()).ctx("create writer marker", &path)? {
            create_hidden_then_rename(&dir, &name, identity.as_bytes())?;
        }
        File::open(&dir).and_then(|d| d.sync_all()).ctx("sync directory", &dir)?;
        Ok(Marker { path })
    }

    /// The marker's name, unique among all writers (`HOST.PID.TIME.N`), which the writer's
    /// commits carry.
    pub fn name(&self) -> &str {
        self.path.file_name().and_then(|n| n.to_str()).expect("a marker is named by unique_suffix")
    }

    pub fn remove(self) {
        // If the removal is lost, a later opener checks this writer's records again and
        // finds them whole: harmless.
        let _ = std::fs::remove_file(&self.path);
    }
}

/// Writes and syncs `content` under the hidden name `.NAME` in `dir`, then renames it `NAME`.
fn create_hidden_then_rename(dir: &Path, name: &str, content: &[u8]) -> Result<()> {
    let (hidden, path) = (dir.join(format!(".{name}")), dir.join(name));
    let mut file = OpenOptions::new().write(true).create_new(true).mode(0o666).open(&hidden).ctx("create writer marker", &hidden)?;
    file.write_all(content).and_then(|_| file.sync_all()).ctx("write writer marker", &hidden)?;
    std::fs::rename(&hidden, &path).ctx("publish writer marker", &path)
}

/// Writes and syncs `content` as an unnamed file in `dir`, then gives it the name `path`
/// (which must not exist). `Ok(false)` where the file system or kernel has no unnamed files
/// (or /proc is missing): nothing was created.
fn create_unnamed_then_link(dir: &Path, path: &Path, content: &[u8]) -> std::io::Result<bool> {
    use std::os::fd::AsRawFd;
    use std::os::unix::ffi::OsStrExt;
    let unsupported = |e: &std::io::Error| matches!(e.raw_os_error(), Some(libc::EOPNOTSUPP | libc::EISDIR | libc::EINVAL | libc::ENOENT));
    let mut file = match OpenOptions::new().write(true).mode(0o666).custom_flags(libc::O_TMPFILE).open(dir) {
        Err(e) if unsupported(&e) => return Ok(false),
        other => other?,
    };
    file.write_all(content)?;
    file.sync_all()?;
    let from = std::ffi::CString::new(format!("/proc/self/fd/{}", file.as_raw_fd()))?;
    let to = std::ffi::CString::new(path.as_os_str().as_bytes())?;
    // SAFETY: two NUL-terminated paths; linking an open unnamed file through /proc needs no
    // privilege (unlike AT_EMPTY_PATH).
    let rc = unsafe { libc::linkat(libc::AT_FDCWD, from.as_ptr(), libc::AT_FDCWD, to.as_ptr(), libc::AT_SYMLINK_FOLLOW) };
    if rc == 0 {
        return Ok(true);
    }
    let e = std::io::Error::last_os_error();
    if e.raw_os_error() == Some(libc::ENOENT) && !Path::new("/proc/self/fd").exists() {
        return Ok(false);
    }
    Err(e)
}

/// The sessions of the writers of a dataset that ended without closing, as far as this
/// process can tell (module doc). Sorted, each once.
///
/// A hidden marker (`.SESSION.N`, still being written) of a writer that ended is removed
/// here: its writer died before its first record, so there is nothing to recover. One whose
/// identity was not yet written is judged only by its age: from before this boot, it is gone.
pub fn ended_without_closing(dataset_dir: &Path, sharing: Sharing) -> Result<Vec<String>> {
    let dir = dataset_dir.join(WRITERS_DIR);
    let this = (hostname(), pid_namespace());
    let mut ended = Vec::new();
    for name in crate::listing::names(&dir, "read writers directory")? {
        let name = name.to_string_lossy();
        let (hidden, visible_name) = match name.strip_prefix('.') {
            Some(visible_name) => (true, visible_name),
            None => (false, &*name),
        };
        let Some(session) = session_of(visible_name) else { continue };
        let path = dir.join(&*name);
        let recorded = match std::fs::read_to_string(&path) {
            // Its writer closed or published it (or another opener recovered it) since the
            // listing.
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
            other => other.ctx("read writer marker", &path)?,
        };
        let gone = match recorded.split_once('\n') {
            Some((boot, namespace)) => writer_gone(&session, boot, namespace, sharing, &this),
            None if hidden => written_before_this_boot(&path),
            None => writer_gone(&session, &recorded, "", sharing, &this),
        };
        match (gone, hidden) {
            (true, true) => {
                let _ = std::fs::remove_file(&path);
            }
            (true, false) => ended.push(session.name),
            (false, _) => {}
        }
    }
    ended.sort();
    ended.dedup();
    Ok(ended)
}

/// Whether the writer of a marker recording `boot` and `namespace` is gone (module doc);
/// `this` is this process's host name and pid namespace.
fn writer_gone(session: &Session, boot: &str, namespace: &str, sharing: Sharing, this: &(String, String)) -> bool {
    let (host, this_namespace) = this;
    if boot_id() == Some(boot) {
        namespace == this_namespace && !process_exists(session.pid)
    } else {
        sharing == Sharing::ThisMachine || session.host == *host
    }
}

/// Whether a file was last changed before this kernel booted (`btime` of /proc/stat).
fn written_before_this_boot(path: &Path) -> bool {
    let booted = std::fs::read_to_string("/proc/stat")
        .ok()
        .and_then(|stat| stat.lines().find_map(|l| l.strip_prefix("btime ")?.trim().parse::<u64>().ok()));
    let changed = std::fs::metadata(path).and_then(|m| m.modified()).ok();
    match (booted, changed.and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())) {
        (Some(booted), Some(changed)) => changed.as_secs() < booted,
        _ => false,
    }
}

/// The names of a session's markers in a dataset directory (not the hidden ones).
pub fn markers_of(dataset_dir: &Path, session: &str) -> Result<Vec<String>> {
    let dir = dataset_dir.join(WRITERS_DIR);
    let prefix = format!("{session}.");
    let names = crate::listing::names(&dir, "read writers directory")?;
    Ok(names.into_iter().map(|n| n.to_string_lossy().into_owned()).filter(|n| n.starts_with(&prefix)).collect())
}

/// Removes every marker of a session.
pub fn forget(dataset_dir: &Path, session: &str) -> Result<()> {
    for name in markers_of(dataset_dir, session)? {
        let _ = std::fs::remove_file(dataset_dir.join(WRITERS_DIR).join(name));
    }
    Ok(())
}

struct Session {
    name: String,
    host: String,
    pid: i32,
}

/// The session of a marker named `HOST.PID.TIME.N` (none for any other name).
fn session_of(marker: &str) -> Option<Session> {
    let (session, counter) = marker.rsplit_once('.')?;
    let mut parts = session.split('.');
    let (host, pid, _time) = (parts.next()?, parts.next()?, parts.next()?);
    let well_formed = parts.next().is_none() && counter.bytes().all(|b| b.is_ascii_digit());
    well_formed.then(|| Some(Session { name: session.to_string(), host: host.to_string(), pid: pid.parse().ok()? })).flatten()
}

fn process_exists(pid: i32) -> bool {
    // SAFETY: signal 0 only checks that the process exists and may be signalled.
    pid > 0 && (unsafe { libc::kill(pid, 0) } == 0 || std::io::Error::last_os_error().raw_os_error() == Some(libc::EPERM))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markers_coming_and_going_never_make_a_running_writer_look_ended() {
        let dir = tempfile::tempdir().unwrap();
        let done = std::sync::atomic::AtomicBool::new(false);
        std::thread::scope(|scope| {
            scope.spawn(|| {
                for _ in 0..300 {
                    Marker::create(dir.path()).unwrap().remove();
                }
                done.store(true, std::sync::atomic::Ordering::Relaxed);
            });
            let mut surveys = 0;
            while !done.load(std::sync::atomic::Ordering::Relaxed) && surveys < 1_000_000 {
                let ended = ended_without_closing(dir.path(), Sharing::ThisMachine).unwrap();
                assert!(ended.is_empty(), "a running writer taken for ended: {ended:?}");
                surveys += 1;
            }
        });
    }

    #[test]
    fn hidden_markers_of_gone_writers_are_removed_and_never_reported() {
        let dir = tempfile::tempdir().unwrap();
        let markers = dir.path().join(WRITERS_DIR);
        std::fs::create_dir_all(&markers).unwrap();
        let (host, boot, ns, dead, alive) = (hostname(), boot_id().unwrap(), pid_namespace(), i32::MAX, std::process::id());
        let hidden = |name: String, content: &str| {
            std::fs::write(markers.join(&name), content).unwrap();
            name
        };
        let killed = hidden(format!(".{host}.{dead}.1a.0"), &format!("{boot}\n{ns}"));
        let crashed = hidden(format!(".{host}.{dead}.2b.0"), &format!("an earlier boot\n{ns}"));
        let running = hidden(format!(".{host}.{alive}.3c.0"), &format!("{boot}\n{ns}"));
        let just_created = hidden(format!(".{host}.{dead}.4d.0"), "");
        let empty_of_an_earlier_boot = hidden(format!(".{host}.{dead}.5e.0"), "");
        let long_ago = std::time::UNIX_EPOCH + std::time::Duration::from_secs(1_000_000);
        std::fs::File::options().write(true).open(markers.join(&empty_of_an_earlier_boot)).unwrap().set_modified(long_ago).unwrap();
        assert_eq!(ended_without_closing(dir.path(), Sharing::ThisMachine).unwrap(), Vec::<String>::new());
        let mut left: Vec<String> = std::fs::read_dir(&markers).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into()).collect();
        left.sort();
        let mut expected = vec![running, just_created];
        expected.sort();
        assert_eq!(left, expected, "removed: {killed}, {crashed}, {empty_of_an_earlier_boot}");
    }

    #[test]
    fn both_ways_of_creating_a_marker_leave_only_the_named_whole_file() {
        let dir = tempfile::tempdir_in("/dev/shm").unwrap();
        let path = dir.path().join("a");
        assert!(create_unnamed_then_link(dir.path(), &path, b"boot\nns").unwrap(), "tmpfs has unnamed files");
        assert_eq!(std::fs::read(&path).unwrap(), b"boot\nns");
        let err = create_unnamed_then_link(dir.path(), &path, b"other").unwrap_err();
        assert_eq!(err.kind(), std::io::ErrorKind::AlreadyExists, "an existing marker is never replaced");
        create_hidden_then_rename(dir.path(), "b", b"boot\nns").unwrap();
        assert_eq!(std::fs::read(dir.path().join("b")).unwrap(), b"boot\nns");
        let mut names: Vec<String> =
            std::fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into()).collect();
        names.sort();
        assert_eq!(names, ["a", "b"]);
    }

    #[test]
    fn tmpfs_is_local_and_a_path_yet_to_be_made_is_judged_by_its_parent() {
        assert!(on_local_file_system(Path::new("/dev/shm/not/made/yet")));
        assert!(!on_local_file_system(Path::new("/proc/self")));
    }

    #[test]
    fn markers_of_a_gone_kernel_or_a_gone_process_of_this_namespace_are_reported() {
        let dir = tempfile::tempdir().unwrap();
        let running = Marker::create(dir.path()).unwrap();
        let markers = dir.path().join(WRITERS_DIR);
        let (host, boot, ns, dead) = (hostname(), boot_id().unwrap(), pid_namespace(), i32::MAX);
        let marker = |name: String, boot: &str, ns: &str| std::fs::write(markers.join(name), format!("{boot}\n{ns}")).unwrap();
        marker(format!("{host}.{}.1a.0", std::process::id()), "an earlier boot", &ns);
        marker(format!("{host}.{dead}.2b.3"), boot, &ns); // killed
        marker(format!("renamed.{dead}.3c.0"), boot, &ns); // killed, under another host name
        marker(format!("other.{dead}.4d.0"), boot, "pid:[1]"); // another container: cannot tell
        marker("other.1.5e.0".to_string(), "another boot", "pid:[1]"); // another kernel
        std::fs::write(markers.join("not-a-marker"), boot).unwrap();
        let sorted = |mut v: Vec<String>| {
            v.sort();
            v
        };
        let this_machine = sorted(vec![
            format!("{host}.{}.1a", std::process::id()),
            format!("{host}.{dead}.2b"),
            format!("renamed.{dead}.3c"),
            "other.1.5e".to_string(),
        ]);
        assert_eq!(ended_without_closing(dir.path(), Sharing::ThisMachine).unwrap(), this_machine);
        // On a shared file system another kernel's marker may be another host's running writer.
        let hosts: Vec<String> = this_machine.iter().filter(|s| !s.starts_with("other.")).cloned().collect();
        assert_eq!(ended_without_closing(dir.path(), Sharing::Hosts).unwrap(), hosts);
        forget(dir.path(), &format!("{host}.{dead}.2b")).unwrap();
        assert_eq!(ended_without_closing(dir.path(), Sharing::Hosts).unwrap().len(), hosts.len() - 1);
        running.remove();
        assert_eq!(std::fs::read_dir(&markers).unwrap().count(), 5);
    }
}
