//! A crash-state simulator, in the spirit of ALICE and CrashMonkey: it reads the log of the
//! changes a workload made to files (recorded by `fieldstore-faults`, see its `record`
//! module) and rebuilds the states a power loss could leave on disk after any prefix of it.
//!
//! The model is what POSIX, ext4 and XFS promise, no more:
//! - the bytes of a file are durable once it was synced (`fsync`/`fdatasync`) after they were
//!   written; of the writes not yet synced any subset may be lost, and of a kept one any of
//!   its 512-byte sectors (the file's, not the write's): cut short at a boundary (the file ends
//!   there), or with holes anywhere in it (the file's size kept, the lost sectors reading as
//!   zeros, or as the bytes they would have replaced);
//! - a directory entry (a create, link, rename, unlink, mkdir or rmdir) is durable once its
//!   directory was synced after it; of the others any subset may be lost (kept in order);
//! - directories are tracked by identity, as the file system does, not by path: an entry made
//!   in a directory is made durable by a sync of that directory under any later name, and
//!   goes wherever the directory goes (a renamed directory whose rename is lost keeps, under
//!   its old name, the entries made in it after the rename);
//! - a file or directory not reachable from the root is missing.
//!
//! Which of the changes not yet durable a state keeps is decided by [`Fates`]: [`Random`]
//! draws them; a regression test names the ones that once showed a defect.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::Path;

/// One change from the log, with paths relative to the watched root.
#[derive(Clone, Debug)]
pub enum Change {
    Write {
        path: String,
        offset: u64,
        data: Vec<u8>,
    },
    Sync(String),
    Create(String),
    Mkdir(String),
    Rename(String, String),
    Link(String, String),
    Unlink(String),
    Rmdir(String),
    /// A line the workload wrote: it had done one more step.
    Mark,
}

/// Reads the log a recording left in `dir` (`ops` and `blobs`), for files under `root`.
pub fn read_log(dir: &Path, root: &Path) -> Vec<Change> {
    let ops = std::fs::read_to_string(dir.join("ops")).expect("a recorded log");
    let blobs = std::fs::read(dir.join("blobs")).unwrap_or_default();
    let root = format!("{}/", root.display());
    let relative = |p: &str| p.strip_prefix(&root).or_else(|| p.strip_prefix(root.trim_end_matches('/'))).unwrap_or(p).to_string();
    ops.lines()
        .map(|line| {
            let f: Vec<&str> = line.split('\t').collect();
            let number = |i: usize| -> usize { f[i].parse().unwrap_or_else(|_| panic!("bad log line {line:?}")) };
            match f[0] {
                "write" => {
                    let (length, at) = (number(3), number(4));
                    Change::Write { path: relative(f[1]), offset: number(2) as u64, data: blobs[at..at + length].to_vec() }
                }
                "sync" => Change::Sync(relative(f[1])),
                "create" => Change::Create(relative(f[1])),
                "mkdir" => Change::Mkdir(relative(f[1])),
                "rename" => Change::Rename(relative(f[1]), relative(f[2])),
                "link" => Change::Link(relative(f[1]), relative(f[2])),
                "unlink" => Change::Unlink(relative(f[1])),
                "rmdir" => Change::Rmdir(relative(f[1])),
                "mark" => Change::Mark,
                other => panic!("unknown change {other:?} in the log"),
            }
        })
        .collect()
}

type Inode = usize;
type DirId = usize;
/// The watched root: it exists in every state.
const ROOT: DirId = 0;

#[derive(Clone, Copy, Debug, PartialEq)]
enum Node {
    Dir(DirId),
    File(Inode),
}

/// A name in a directory.
type Place = (DirId, String);

/// A change of directory entries not yet durable: a name removed, a name added, or both at
/// once (a rename).
#[derive(Clone, Debug)]
pub struct Entry {
    /// The path the name removed had when the change was made.
    pub from: Option<String>,
    /// The path the name added had when the change was made.
    pub to: Option<String>,
    removed: Option<Place>,
    added: Option<(Place, Node)>,
}

impl Entry {
    /// A rename (a name removed and one added at once).
    pub fn is_rename(&self) -> bool {
        self.from.is_some() && self.to.is_some()
    }

    fn touches(&self, dir: DirId) -> bool {
        self.removed.as_ref().is_some_and(|(d, _)| *d == dir) || self.added.as_ref().is_some_and(|((d, _), _)| *d == dir)
    }

    fn apply(&self, dirs: &mut HashMap<DirId, BTreeMap<String, Node>>) {
        if let Some((dir, name)) = &self.removed {
            dirs.entry(*dir).or_default().remove(name);
        }
        if let Some(((dir, name), node)) = &self.added {
            dirs.entry(*dir).or_default().insert(name.clone(), *node);
        }
    }
}

fn parent(path: &str) -> &str {
    path.rsplit_once('/').map_or("", |(p, _)| p)
}

fn base_name(path: &str) -> &str {
    path.rsplit_once('/').map_or(path, |(_, n)| n)
}

#[derive(Clone, Default)]
struct File {
    /// Its latest name, for [`Fates`] to tell files apart.
    name: String,
    durable: Vec<u8>,
    pending: Vec<(u64, Vec<u8>)>,
}

/// What of one write not yet durable a crash state keeps.
#[derive(Clone, Debug)]
pub enum WriteFate {
    Lost,
    Whole,
    /// Its first bytes only (a number that ends at a 512-byte boundary of the file).
    Prefix(usize),
    /// The sectors marked true, of those [`sectors`] splits it into; the file is as long as
    /// if all were.
    Sectors(Vec<bool>),
}

/// Decides, for one crash state, which changes not yet durable survive it.
pub trait Fates {
    /// Whether a directory entry change survives.
    fn entry(&mut self, entry: &Entry) -> bool;
    /// What survives of a write of `length` bytes at `offset` of the file named `file`.
    fn write(&mut self, file: &str, offset: u64, length: usize) -> WriteFate;
}

/// The byte ranges of a write of `length` bytes at `offset`, split at the file's 512-byte
/// boundaries.
pub fn sectors(offset: u64, length: usize) -> Vec<std::ops::Range<usize>> {
    let mut pieces = Vec::new();
    let mut start = 0;
    while start < length {
        let end = ((offset + start as u64) / 512 + 1) * 512 - offset;
        let end = (end as usize).min(length);
        pieces.push(start..end);
        start = end;
    }
    pieces
}

/// Random fates: of what is not durable, each change is kept with probability `keep`
/// (0: nothing pending survives, 1: everything does, written whole), and a kept write that
/// crosses a 512-byte boundary loses some of its sectors with probability `keep` / 2: cut
/// short at one of them, or with holes.
pub struct Random {
    pub keep: f64,
    pub rng: Rng,
}

impl Fates for Random {
    fn entry(&mut self, _: &Entry) -> bool {
        self.rng.chance(self.keep)
    }

    fn write(&mut self, _: &str, offset: u64, length: usize) -> WriteFate {
        if !self.rng.chance(self.keep) {
            return WriteFate::Lost;
        }
        let pieces = sectors(offset, length);
        if pieces.len() < 2 || self.keep >= 1.0 || !self.rng.chance(self.keep / 2.0) {
            return WriteFate::Whole;
        }
        if self.rng.chance(0.5) {
            let cut = 1 + self.rng.below(pieces.len() as u64 - 1) as usize;
            WriteFate::Prefix(pieces[cut].start)
        } else {
            WriteFate::Sectors(pieces.iter().map(|_| self.rng.chance(self.keep)).collect())
        }
    }
}

/// The file system as the log has changed it up to some point: what is durable and what not.
#[derive(Clone)]
pub struct Simulation {
    /// Every name as the changes so far have left it, by path: how a change's paths are
    /// resolved to directories and files.
    current: BTreeMap<String, Node>,
    /// The durable entries of each directory.
    durable: HashMap<DirId, BTreeMap<String, Node>>,
    pending: Vec<Entry>,
    files: Vec<File>,
    directories: usize,
    /// Files not (or no longer) in a directory, by the path their descriptors showed.
    anonymous: HashMap<String, Inode>,
}

impl Simulation {
    pub fn new() -> Simulation {
        let current = BTreeMap::from([(String::new(), Node::Dir(ROOT))]);
        Simulation { current, durable: HashMap::new(), pending: Vec::new(), files: Vec::new(), directories: 1, anonymous: HashMap::new() }
    }

    /// The place a path names, in the directory its parent is now.
    fn place(&self, path: &str) -> Place {
        match self.current.get(parent(path)) {
            Some(Node::Dir(dir)) => (*dir, base_name(path).to_string()),
            other => panic!("{path:?} is in no directory the log made ({other:?})"),
        }
    }

    fn remove_name(&mut self, path: &str) -> Entry {
        let entry = Entry { from: Some(path.to_string()), to: None, removed: Some(self.place(path)), added: None };
        self.current.remove(path);
        entry
    }

    fn add_name(&mut self, path: &str, node: Node) -> Entry {
        let entry = Entry { from: None, to: Some(path.to_string()), removed: None, added: Some((self.place(path), node)) };
        self.current.insert(path.to_string(), node);
        if let Node::File(inode) = node {
            self.files[inode].name = path.to_string();
        }
        entry
    }

    fn rename(&mut self, from: &str, to: &str) -> Entry {
        let node = *self.current.get(from).unwrap_or_else(|| panic!("rename of {from:?}, which the log did not make"));
        let entry = Entry {
            from: Some(from.to_string()),
            to: Some(to.to_string()),
            removed: Some(self.place(from)),
            added: Some((self.place(to), node)),
        };
        // What is under a directory moves with it.
        let under: Vec<(String, Node)> = self
            .current
            .range(format!("{from}/")..)
            .take_while(|(k, _)| k.starts_with(&format!("{from}/")))
            .map(|(k, v)| (k.clone(), *v))
            .collect();
        for (path, node) in under {
            self.current.remove(&path);
            self.current.insert(format!("{to}{}", &path[from.len()..]), node);
        }
        self.current.remove(from);
        self.add_name(to, node);
        entry
    }

    fn inode_of(&mut self, path: &str) -> Inode {
        if let Some(Node::File(inode)) = self.current.get(path) {
            return *inode;
        }
        if let Some(inode) = self.anonymous.get(path) {
            return *inode;
        }
        self.files.push(File { name: path.to_string(), ..File::default() });
        let inode = self.files.len() - 1;
        if path.ends_with(" (deleted)") {
            self.anonymous.insert(path.to_string(), inode);
        } else {
            // A create, or the first write to a name not seen created.
            let entry = self.add_name(path, Node::File(inode));
            self.pending.push(entry);
        }
        inode
    }

    /// Applies the next change.
    pub fn apply(&mut self, change: &Change) {
        let entry = match change {
            Change::Write { path, offset, data } => {
                let inode = self.inode_of(path);
                self.files[inode].pending.push((*offset, data.clone()));
                None
            }
            Change::Sync(path) => {
                match self.current.get(path) {
                    Some(Node::Dir(dir)) => self.sync_dir(*dir),
                    _ => {
                        let inode = self.inode_of(path);
                        let file = &mut self.files[inode];
                        for (offset, data) in std::mem::take(&mut file.pending) {
                            write_at(&mut file.durable, offset, &data);
                        }
                    }
                }
                None
            }
            Change::Create(path) => {
                self.inode_of(path);
                None
            }
            // The root is the model's own.
            Change::Mkdir(path) if path.is_empty() => None,
            Change::Mkdir(path) => {
                self.directories += 1;
                Some(self.add_name(path, Node::Dir(self.directories - 1)))
            }
            Change::Rename(from, to) => Some(self.rename(from, to)),
            Change::Link(from, to) => {
                let inode = self.inode_of(from);
                Some(self.add_name(to, Node::File(inode)))
            }
            Change::Unlink(path) | Change::Rmdir(path) => Some(self.remove_name(path)),
            Change::Mark => None,
        };
        self.pending.extend(entry);
    }

    fn sync_dir(&mut self, dir: DirId) {
        let (now, later): (Vec<Entry>, Vec<Entry>) = std::mem::take(&mut self.pending).into_iter().partition(|e| e.touches(dir));
        for entry in &now {
            entry.apply(&mut self.durable);
        }
        self.pending = later;
    }

    /// A state a power loss could leave now, the changes not yet durable kept or lost as
    /// `fates` decides: each path with its bytes (`None`: a directory).
    pub fn crash_state(&self, fates: &mut dyn Fates) -> BTreeMap<String, Option<Vec<u8>>> {
        let mut dirs = self.durable.clone();
        for entry in &self.pending {
            if fates.entry(entry) {
                entry.apply(&mut dirs);
            }
        }
        let mut contents: HashMap<Inode, Vec<u8>> = HashMap::new();
        let mut state = BTreeMap::new();
        let (mut to_visit, mut seen) = (vec![(ROOT, String::new())], HashSet::from([ROOT]));
        while let Some((dir, path)) = to_visit.pop() {
            for (name, node) in dirs.get(&dir).into_iter().flatten() {
                let path = if path.is_empty() { name.clone() } else { format!("{path}/{name}") };
                match node {
                    Node::Dir(id) if seen.insert(*id) => {
                        state.insert(path.clone(), None);
                        to_visit.push((*id, path));
                    }
                    Node::Dir(_) => {}
                    Node::File(inode) => {
                        let bytes = contents.entry(*inode).or_insert_with(|| self.files[*inode].after_crash(fates));
                        state.insert(path, Some(bytes.clone()));
                    }
                }
            }
        }
        state
    }
}

impl File {
    fn after_crash(&self, fates: &mut dyn Fates) -> Vec<u8> {
        let mut bytes = self.durable.clone();
        for (offset, data) in &self.pending {
            match fates.write(&self.name, *offset, data.len()) {
                WriteFate::Lost => {}
                WriteFate::Whole => write_at(&mut bytes, *offset, data),
                WriteFate::Prefix(kept) => write_at(&mut bytes, *offset, &data[..kept.min(data.len())]),
                WriteFate::Sectors(kept) => {
                    let end = *offset as usize + data.len();
                    if bytes.len() < end {
                        bytes.resize(end, 0);
                    }
                    for (piece, _) in sectors(*offset, data.len()).into_iter().zip(kept).filter(|(_, kept)| *kept) {
                        write_at(&mut bytes, *offset + piece.start as u64, &data[piece]);
                    }
                }
            }
        }
        bytes
    }
}

/// A small deterministic random number generator (xorshift), so that a failing state can be
/// made again from its seed.
pub struct Rng(pub u64);

impl Rng {
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    pub fn chance(&mut self, p: f64) -> bool {
        (self.next() % 1_000_000) as f64 / 1_000_000.0 < p
    }

    pub fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
}

fn write_at(bytes: &mut Vec<u8>, offset: u64, data: &[u8]) {
    let (start, end) = (offset as usize, offset as usize + data.len());
    if bytes.len() < end {
        bytes.resize(end, 0);
    }
    bytes[start..end].copy_from_slice(data);
}

/// Writes a state into `root` (which must not exist).
pub fn materialize(state: &BTreeMap<String, Option<Vec<u8>>>, root: &Path) {
    std::fs::create_dir_all(root).unwrap();
    for (path, content) in state {
        let target = root.join(path);
        match content {
            None => std::fs::create_dir_all(&target).unwrap(),
            Some(bytes) => std::fs::write(&target, bytes).unwrap(),
        }
    }
}
