//! Moving a data set to another root of its space (FDB5's `fdb-move`): readers find it whole,
//! in one place, all along; writers, wipes and purges are refused while it moves; a move
//! killed at any instant leaves it whole in exactly one root, and run again it finishes or
//! starts over.
//!
//! The protocol, moving `A/D` (data set directory `D` in root `A`) to root `B`:
//! 1. `A/D/moving` is created and locked: the mover holds an exclusive `flock` on it for as
//!    long as it runs (the kernel drops it when the process ends, however it ends). A writer
//!    that creates a file in a directory whose `moving` is locked removes the file and
//!    refuses; wipe and purge refuse too. The mover then looks for files writers hold
//!    ([`crate::in_use`]) and refuses to move a data set a writer has open. A writer checks
//!    after creating (and holding) its file, the mover after locking: one sees the other.
//! 2. Every file of `A/D` is copied into `B/.incoming.D=<unique>`, a hidden directory nobody
//!    reads, with a locked `moving` of its own; each file is synced, then the directories.
//! 3. `A/D` must be as it was (the same files, the same sizes), and no writer holds a file.
//! 4. `A/D/moved-away` is written and synced: once a `B/D` exists, `B/D` is the data set
//!    ([`crate::placement`]).
//! 5. The switch: `B/.incoming.D=<unique>` is renamed `B/D` (atomic), and `B` synced.
//! 6. After the delay asked for, `A/D` is renamed `A/.moved.D=<unique>` and removed (or
//!    `A/.kept.D=<unique>`, kept): readers holding its files open read them to the end, and
//!    one opening a file anew finds it in `B/D`.
//! 7. `B/D/moving` is removed: writers may write again.
//!
//! Killed before step 5, `A/D` is the data set (a `moved-away` counts only beside another
//! copy, and a `moving` nobody locks is stale); killed after it, `B/D` is. Run again, a move
//! first removes what a killed one left (a stale `.incoming`, a stale `moved-away`, a source
//! moved away but not removed) and then moves, or finds the data set where it was sent.
//!
//! Wipes and purges hold the data set's directory with a shared `flock` while they change it,
//! the mover holds it exclusively from before its copy to the switch: one of them is refused.
//!
//! On a file system without `flock` (some Lustre mounts) a `moving` marker is taken as live:
//! writers stay refused after a killed move until its `moving` file is removed by hand, and the
//! mover cannot see live writers (as purge there, a move must not run while writers archive
//! into the data set).

use std::fs::{File, OpenOptions};
use std::io::{Read, Write};
use std::os::fd::AsRawFd;
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::Duration;

use serde::Serialize;

use fieldstore_core::error::{Error, ErrorKind, IoContext, Result};
use fieldstore_core::unique::unique_suffix;
use fieldstore_core::{ControlAction, Key};

use crate::listing::sync_dir;
use crate::naming::dataset_dir_name;
use crate::placement::{MoveRoots, Placement};

/// In a data set directory while a move runs, locked by its mover.
pub const MOVING: &str = "moving";
/// In a move's source once its copy is complete: beside the copy, the copy is the data set.
pub const MOVED_AWAY: &str = "moved-away";
/// Prefix of the hidden directory a copy is made in.
const INCOMING: &str = ".incoming.";
/// Prefix of a moved-away source being removed.
const REMOVING: &str = ".moved.";
/// Prefix of a moved-away source kept (`--keep`).
const KEPT: &str = ".kept.";
/// The last line of a `moved-away` note whose source is to be kept, or removed.
const KEEP: &str = "keep";
const REMOVE: &str = "remove";
/// Bytes copied between progress reports.
const PROGRESS_STEP: u64 = 8 << 20;

/// How a move is made.
#[derive(Clone, Debug)]
pub struct MoveOptions {
    /// The root to move to (as configured, or its data directory).
    pub destination: PathBuf,
    /// Keep the source, hidden as `.kept.DIR=<unique>` in its root, instead of removing it.
    pub keep: bool,
    /// Time between the switch and the removal of the source (FDB5's `--delay`): readers that
    /// found the source just before the switch read it for at least this long.
    pub delay: Duration,
    /// Files copied at once.
    pub threads: usize,
}

/// What a move of one data set did.
#[derive(Clone, Debug, Default, Serialize)]
pub struct DatasetMove {
    /// The data set's key.
    pub dataset: String,
    /// Its directory before the move.
    pub from: PathBuf,
    /// Its directory after it.
    pub to: PathBuf,
    /// Files copied.
    pub files: u64,
    /// Bytes copied.
    pub bytes: u64,
    /// The data set was in the destination root already: nothing copied.
    pub already_there: bool,
    /// Where the source was kept (`--keep`).
    pub kept: Option<PathBuf>,
    /// What earlier moves, killed, had left and this one removed.
    pub leftovers_removed: Vec<PathBuf>,
    /// Sources of earlier moves, killed, that this one put aside as `.kept.DIR=...` (their
    /// move said `--keep`, or their root takes no wipes).
    pub leftovers_kept: Vec<PathBuf>,
}

/// Bytes copied so far of a data set's move, and of how many.
#[derive(Clone, Copy, Debug)]
pub struct MoveProgress {
    /// Bytes copied.
    pub done: u64,
    /// Bytes to copy.
    pub total: u64,
}

/// Moves `dataset` to the root `options.destination` of its space, as the module says.
pub fn move_dataset(
    placement: &Placement,
    dataset: &Key,
    options: &MoveOptions,
    progress: &(dyn Fn(MoveProgress) + Sync),
) -> Result<DatasetMove> {
    let name = dataset_dir_name(dataset)?;
    let roots = placement.move_between(dataset, &name, &options.destination)?;
    let source = roots.from.join(&name);
    let mut report = DatasetMove { dataset: dataset.to_string(), from: source.clone(), to: roots.to.join(&name), ..DatasetMove::default() };
    let note = format!("to {} by process {}", roots.to.display(), std::process::id());
    // Locked before anything is removed: two moves of one data set never clean up together.
    let lock = MovingLock::take(&source, &note, dataset)?;
    (report.leftovers_removed, report.leftovers_kept) = remove_leftovers(&roots, &name, options.keep)?;
    if roots.from == roots.to {
        report.already_there = true;
        lock.release();
        return Ok(report);
    }
    if !options.keep && roots.from_denied.contains(&ControlAction::Wipe) {
        lock.release();
        return Err(Error::new(
            ErrorKind::Locked,
            format!(
                "data set {dataset} is in root {}, which takes no wipes: it cannot be removed from there (--keep copies it and keeps it)",
                roots.from.display()
            ),
        ));
    }
    let moved =
        crate::listing::create_dir_durably(&roots.to).and_then(|()| copy_and_switch(&source, &roots.to, &name, &lock, options, progress));
    let (files, bytes, incoming_lock) = match moved {
        Ok(done) => done,
        Err(e) => {
            lock.release();
            return Err(e);
        }
    };
    (report.files, report.bytes) = (files, bytes);
    std::thread::sleep(options.delay);
    report.kept = dispose_of(&source, &roots.from, &name, options.keep).map_err(|e| {
        Error::caused_by(
            e.kind(),
            format!(
                "data set {dataset} is in {} now, but its source was not removed: run the move again to remove it",
                report.to.display()
            ),
            e,
        )
    })?;
    incoming_lock.release();
    drop(lock);
    Ok(report)
}

/// Steps 1-5: the copy, checked and switched to. Returns the files and bytes copied and the
/// copy's own lock (now the data set's).
fn copy_and_switch(
    source: &Path,
    to_root: &Path,
    name: &str,
    lock: &MovingLock,
    options: &MoveOptions,
    progress: &(dyn Fn(MoveProgress) + Sync),
) -> Result<(u64, u64, MovingLock)> {
    // Held until the switch: a wipe or purge holds it shared while it changes the data set.
    let _changes = lock_directory(source, libc::LOCK_EX).map_err(|e| {
        let why = format!("{} is being wiped or purged: run the move again once that is done", source.display());
        Error::caused_by(ErrorKind::Locked, why, e)
    })?;
    refuse_live_writers(source)?;
    let before = Snapshot::of(source)?;
    let incoming = to_root.join(format!("{INCOMING}{name}={}", unique_suffix()));
    std::fs::create_dir(&incoming).ctx("create directory", &incoming)?;
    let copied = (|| {
        let incoming_lock = MovingLock::take_new(&incoming, &lock.note)?;
        before.copy_into(source, &incoming, options.threads.max(1), progress)?;
        let now = Snapshot::of(source)?;
        if now != before || !crate::listing::still_at(&lock.file, &lock.path)? {
            return Err(Error::new(
                ErrorKind::Conflict,
                format!(
                    "{} changed while it was copied (a writer, a wipe or a purge): nothing moved; run the move again",
                    source.display()
                ),
            ));
        }
        refuse_live_writers(source)?;
        let disposal = if options.keep { KEEP } else { REMOVE };
        write_durably(&source.join(MOVED_AWAY), format!("{}\n{disposal}\n", lock.note).as_bytes())?;
        Ok(incoming_lock)
    })();
    let incoming_lock = match copied {
        Ok(lock) => lock,
        Err(e) => {
            // A marker half written, if that is what failed, goes with the copy.
            let _ = std::fs::remove_file(source.join(MOVED_AWAY));
            let _ = std::fs::remove_dir_all(&incoming);
            return Err(e);
        }
    };
    let target = to_root.join(name);
    if let Err(e) = std::fs::rename(&incoming, &target) {
        // Still the source's: its marker goes before anything else can see a copy.
        if std::fs::remove_file(source.join(MOVED_AWAY)).is_ok() {
            let _ = sync_dir(source);
        }
        let _ = std::fs::remove_dir_all(&incoming);
        return Err(Error::caused_by(
            ErrorKind::Conflict,
            format!("cannot put the copy at {}: nothing moved", target.display()),
            Error::io("rename", &incoming, e),
        ));
    }
    sync_dir(to_root).map_err(|e| {
        let why = format!("{} is the data set now, but its root could not be synced: run the move again to finish it", target.display());
        Error::caused_by(e.kind(), why, e)
    })?;
    Ok((before.files(), before.bytes()?, incoming_lock.at(target.join(MOVING))))
}

/// Step 6: the moved-away source renamed out of the data set's name, then removed or kept.
fn dispose_of(source: &Path, root: &Path, name: &str, keep: bool) -> Result<Option<PathBuf>> {
    let hidden = root.join(format!("{}{name}={}", if keep { KEPT } else { REMOVING }, unique_suffix()));
    std::fs::rename(source, &hidden).ctx("rename the moved data set's source", source)?;
    sync_dir(root)?;
    if keep {
        for marker in [MOVING, MOVED_AWAY] {
            let _ = std::fs::remove_file(hidden.join(marker));
        }
        return Ok(Some(hidden));
    }
    std::fs::remove_dir_all(&hidden).ctx("remove the moved data set's source", &hidden)?;
    Ok(None)
}

/// What killed moves of the data set named `name` left in the roots of its space (its mover
/// holding the data set's lock): copies never switched to, sources moved away but not removed
/// (kept instead where their move or root says so: `--keep`, or a root without wipes), a
/// stale `moved-away` in the one place the data set is. Returns those removed and those kept.
fn remove_leftovers(roots: &MoveRoots, name: &str, keep: bool) -> Result<(Vec<PathBuf>, Vec<PathBuf>)> {
    let (mut removed, mut kept) = (Vec::new(), Vec::new());
    for other in &roots.others {
        let dir = other.root.join(name);
        if let Some(note) = live_move(&dir)? {
            return Err(being_moved(&dir, &note));
        }
        let asked_to_keep = std::fs::read_to_string(dir.join(MOVED_AWAY)).is_ok_and(|note| note.lines().any(|l| l == KEEP));
        match dispose_of(&dir, &other.root, name, keep || asked_to_keep || !other.removable)? {
            Some(hidden) => kept.push(hidden),
            None => removed.push(dir),
        }
    }
    let current = roots.from.join(name);
    if current.join(MOVED_AWAY).exists() {
        let path = current.join(MOVED_AWAY);
        std::fs::remove_file(&path).ctx("remove stale marker", &path)?;
        sync_dir(&current)?;
        removed.push(path);
    }
    for root in &roots.all {
        for entry in crate::listing::names(root, "read root")? {
            let entry = entry.to_string_lossy();
            let Some(rest) = entry.strip_prefix(INCOMING).or_else(|| entry.strip_prefix(REMOVING)) else { continue };
            let dir = root.join(&*entry);
            if rest.split_once('=').is_some_and(|(n, _)| n == name) && live_move(&dir)?.is_none() {
                std::fs::remove_dir_all(&dir).ctx("remove what a killed move left", &dir)?;
                removed.push(dir);
            }
        }
    }
    Ok((removed, kept))
}

/// `attempt`'s answer, asked again while it is `None`: the directory of a data set it found
/// was gone when it came to use it (moved to another root meanwhile, or wiped), and is to be
/// found again, never made again where it was.
pub fn found_again<T>(dataset: &Key, mut attempt: impl FnMut() -> Result<Option<T>>) -> Result<T> {
    for _ in 0..3 {
        if let Some(answer) = attempt()? {
            return Ok(answer);
        }
    }
    Err(Error::new(ErrorKind::Conflict, format!("data set {dataset} was moved or wiped each time this writer found it: archive again")))
}

/// The error of a writer whose data set's directory `dir` is no longer where it wrote: moved
/// to another root, or wiped. Either way what it wrote since its last flush went with the old
/// directory ([`Error::Wiped`], which makes the writer forget it).
pub fn gone_under_writer(placement: &Placement, dataset: &Key, dir: Option<&Path>) -> Error {
    let wiped = Error::Wiped { dataset: dataset.to_string() };
    let now = dataset_dir_name(dataset).and_then(|name| placement.existing(dataset, &name));
    match (now, dir) {
        (Ok(Some(now)), Some(dir)) if now != dir && !moved_away(&now) => Error::caused_by(
            ErrorKind::Conflict,
            format!("data set {dataset} was moved to {} while this handle wrote into {}: archive again", now.display(), dir.display()),
            wiped,
        ),
        _ => wiped,
    }
}

/// Whether the data set directory `dir` was moved away (a copy elsewhere is the data set).
pub fn moved_away(dir: &Path) -> bool {
    dir.join(MOVED_AWAY).exists()
}

/// A Locked error if a move of the data set in `dir` runs: `what` (e.g. "archiving into
/// it") is refused until it ends.
pub fn refuse_if_moving(dir: &Path, what: &str) -> Result<()> {
    match live_move(dir)? {
        Some(note) => {
            Err(Error::new(ErrorKind::Locked, format!("{} is being moved ({note}): {what} is refused until the move ends", dir.display())))
        }
        None => Ok(()),
    }
}

/// The note of the move of `dir` running now, if one is: its `moving` marker is locked (or
/// cannot be, where the file system has no `flock`).
fn live_move(dir: &Path) -> Result<Option<String>> {
    let path = dir.join(MOVING);
    let mut file = match File::open(&path) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        other => other.ctx("open move marker", &path)?,
    };
    if flock(&file, libc::LOCK_SH | libc::LOCK_NB) == Flock::Taken {
        return Ok(None);
    }
    let mut note = String::new();
    let _ = file.read_to_string(&mut note);
    Ok(Some(if note.is_empty() { "by another process".into() } else { note }))
}

/// Holds a data set's directory while a wipe or purge changes it: refused (naming the move)
/// while a move copies it. The guard releases it.
pub fn hold_for_change(dir: &Path, what: &str) -> Result<File> {
    refuse_if_moving(dir, what)?;
    lock_directory(dir, libc::LOCK_SH).map_err(|e| {
        Error::caused_by(ErrorKind::Locked, format!("{} is being moved: {what} is refused until the move ends", dir.display()), e)
    })
}

/// The directory `dir` opened and `flock`ed (`operation`: shared or exclusive, never waiting);
/// an error if another process holds a lock that excludes it. Where the file system has no
/// `flock`, the directory is merely opened.
fn lock_directory(dir: &Path, operation: libc::c_int) -> Result<File> {
    let file = File::open(dir).ctx("open directory", dir)?;
    match flock(&file, operation | libc::LOCK_NB) {
        Flock::Held => Err(Error::new(ErrorKind::Locked, format!("another process has locked {}", dir.display()))),
        Flock::Taken | Flock::Unsupported => Ok(file),
    }
}

fn being_moved(dir: &Path, note: &str) -> Error {
    Error::new(ErrorKind::Locked, format!("{} is being moved already ({note})", dir.display()))
}

/// What `flock` said.
#[derive(PartialEq)]
enum Flock {
    Taken,
    /// Another process holds a lock that excludes it.
    Held,
    /// The file system has no `flock`.
    Unsupported,
}

fn flock(file: &File, operation: libc::c_int) -> Flock {
    // SAFETY: `file` is borrowed for the call, so its descriptor is open; flock takes no pointers.
    if unsafe { libc::flock(file.as_raw_fd(), operation) } == 0 {
        return Flock::Taken;
    }
    match std::io::Error::last_os_error().raw_os_error() {
        Some(libc::EWOULDBLOCK) => Flock::Held,
        _ => Flock::Unsupported,
    }
}

/// A `moving` marker this process holds locked, with the note it holds.
struct MovingLock {
    file: File,
    path: PathBuf,
    note: String,
}

impl MovingLock {
    /// Locks the `moving` marker of the data set in `dir`, creating it if needed; refused if
    /// another move holds it.
    fn take(dir: &Path, note: &str, dataset: &Key) -> Result<MovingLock> {
        let path = dir.join(MOVING);
        let file = OpenOptions::new().read(true).write(true).create(true).truncate(false).mode(0o666).open(&path);
        let file = file.ctx("create move marker", &path)?;
        if flock(&file, libc::LOCK_EX | libc::LOCK_NB) == Flock::Held {
            let mut held = String::new();
            let _ = (&file).read_to_string(&mut held);
            return Err(Error::new(ErrorKind::Locked, format!("data set {dataset} is being moved already ({held})")));
        }
        MovingLock { file, path, note: note.to_string() }.noted()
    }

    /// Creates and locks the `moving` marker of a new directory (the copy's).
    fn take_new(dir: &Path, note: &str) -> Result<MovingLock> {
        let path = dir.join(MOVING);
        let file = OpenOptions::new().read(true).write(true).create_new(true).mode(0o666).open(&path).ctx("create move marker", &path)?;
        flock(&file, libc::LOCK_EX | libc::LOCK_NB);
        MovingLock { file, path, note: note.to_string() }.noted()
    }

    /// Writes the note into the marker, for the errors of those it refuses.
    fn noted(self) -> Result<MovingLock> {
        self.file.set_len(0).ctx("write move marker", &self.path)?;
        (&self.file).write_all(self.note.as_bytes()).ctx("write move marker", &self.path)?;
        Ok(self)
    }

    /// The same lock, its marker now at `path` (its directory renamed).
    fn at(self, path: PathBuf) -> MovingLock {
        MovingLock { path, ..self }
    }

    /// Removes the marker (its lock goes with the file).
    fn release(self) {
        let _ = std::fs::remove_file(&self.path);
    }
}

/// Refuses a data set whose files a live writer holds.
fn refuse_live_writers(dir: &Path) -> Result<()> {
    for (relative, _) in Snapshot::of(dir)?.entries.iter().filter(|(_, size)| size.is_some()) {
        let path = dir.join(relative);
        let Ok(file) = File::open(&path) else { continue };
        if flock(&file, libc::LOCK_EX | libc::LOCK_NB) == Flock::Held {
            return Err(Error::new(
                ErrorKind::Locked,
                format!("a writer has {} open: the data set is moved once its writers are done (run the move again then)", path.display()),
            ));
        }
    }
    Ok(())
}

/// A data set directory's files (with their sizes) and subdirectories (without), by path
/// relative to it; the move's markers left out.
#[derive(PartialEq, Debug)]
struct Snapshot {
    entries: Vec<(PathBuf, Option<u64>)>,
}

impl Snapshot {
    fn of(dir: &Path) -> Result<Snapshot> {
        let mut entries = Vec::new();
        Snapshot::add(dir, Path::new(""), &mut entries)?;
        entries.sort();
        Ok(Snapshot { entries })
    }

    fn add(root: &Path, relative: &Path, entries: &mut Vec<(PathBuf, Option<u64>)>) -> Result<()> {
        let dir = root.join(relative);
        for name in crate::listing::names(&dir, "read dataset directory")? {
            if relative.as_os_str().is_empty() && (name == MOVING || name == MOVED_AWAY) {
                continue;
            }
            let path = relative.join(&name);
            let metadata = std::fs::symlink_metadata(root.join(&path)).ctx("stat", root.join(&path))?;
            if metadata.is_file() {
                entries.push((path, Some(metadata.len())));
            } else if metadata.is_dir() && relative.as_os_str().is_empty() {
                entries.push((path.clone(), None));
                Snapshot::add(root, &path, entries)?;
            } else {
                return Err(Error::new(
                    ErrorKind::Unsupported,
                    format!(
                        "{} is neither a file nor a directory of writers' markers: the data set is not moved",
                        root.join(&path).display()
                    ),
                ));
            }
        }
        Ok(())
    }

    fn files(&self) -> u64 {
        self.entries.iter().filter(|(_, size)| size.is_some()).count() as u64
    }

    fn bytes(&self) -> Result<u64> {
        let mut sizes = self.entries.iter().filter_map(|(_, size)| *size);
        sizes
            .try_fold(0u64, u64::checked_add)
            .ok_or_else(|| Error::new(ErrorKind::Corrupt, "the data set's files add up to more than 2^64 bytes"))
    }

    /// Copies every file into `to` (`threads` at once), each synced, then the directories.
    fn copy_into(&self, from: &Path, to: &Path, threads: usize, progress: &(dyn Fn(MoveProgress) + Sync)) -> Result<()> {
        for (dir, _) in self.entries.iter().filter(|(_, size)| size.is_none()) {
            std::fs::create_dir(to.join(dir)).ctx("create directory", to.join(dir))?;
        }
        let files: Vec<(&PathBuf, u64)> = self.entries.iter().filter_map(|(p, size)| size.map(|s| (p, s))).collect();
        let (next, done, total) = (AtomicUsize::new(0), AtomicU64::new(0), self.bytes()?);
        let failed: Mutex<Option<Error>> = Mutex::new(None);
        std::thread::scope(|scope| {
            for _ in 0..threads.min(files.len()) {
                scope.spawn(|| {
                    while let Some((relative, size)) = files.get(next.fetch_add(1, Ordering::Relaxed)) {
                        let step = |n: u64| progress(MoveProgress { done: done.fetch_add(n, Ordering::Relaxed) + n, total });
                        if let Err(e) = copy_file(&from.join(relative), &to.join(relative), *size, &step) {
                            failed.lock().unwrap_or_else(|p| p.into_inner()).get_or_insert(e);
                            next.store(files.len(), Ordering::Relaxed);
                        }
                    }
                });
            }
        });
        if let Some(e) = failed.into_inner().unwrap_or_else(|p| p.into_inner()) {
            return Err(e);
        }
        for (dir, _) in self.entries.iter().filter(|(_, size)| size.is_none()) {
            sync_dir(&to.join(dir))?;
        }
        sync_dir(to)
    }
}

/// Copies the first `size` bytes of `from` into a new file `to` with its permissions (by
/// `copy_file_range` where the kernel has it), synced.
fn copy_file(from: &Path, to: &Path, size: u64, step: &dyn Fn(u64)) -> Result<()> {
    let source = File::open(from).ctx("open", from)?;
    let mode = source.metadata().ctx("stat", from)?.permissions().mode();
    let mut target = OpenOptions::new().write(true).create_new(true).open(to).ctx("create", to)?;
    // As the source's, whatever the umask.
    target.set_permissions(std::fs::Permissions::from_mode(mode & 0o7777)).ctx("set the mode of", to)?;
    let mut copied = 0;
    while copied < size {
        let chunk = (size - copied).min(PROGRESS_STEP);
        let n = std::io::copy(&mut (&source).take(chunk), &mut target).ctx("copy into", to)?;
        if n == 0 {
            return Err(Error::new(ErrorKind::Conflict, format!("{} shrank while it was copied: nothing moved", from.display())));
        }
        copied += n;
        step(n);
    }
    target.sync_all().ctx("sync", to)
}

/// Writes a new file and makes it and its name durable.
fn write_durably(path: &Path, content: &[u8]) -> Result<()> {
    let mut file = File::create(path).ctx("create", path)?;
    file.write_all(content).and_then(|()| file.sync_all()).ctx("write", path)?;
    sync_dir(path.parent().unwrap_or(Path::new(".")))
}

#[cfg(test)]
mod tests;
