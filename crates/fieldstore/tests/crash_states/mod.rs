//! A crash-state simulator, in the spirit of ALICE and CrashMonkey: it reads the log of the
//! changes a workload made to files (recorded by `fieldstore-faults`, see its `record`
//! module) and rebuilds the states a power loss could leave on disk after any prefix of it.
//!
//! The model is what POSIX, ext4 and XFS promise, no more:
//! - the bytes of a file are durable once it was synced (`fsync`/`fdatasync`) after they were
//!   written; of the writes not yet synced any subset may be lost, each may be cut short at a
//!   512-byte boundary of the file, and what was lost reads as zeros below the file's end;
//! - a directory entry (a create, link, rename, unlink, mkdir or rmdir) is durable once its
//!   directory was synced after it; of the others any subset may be lost (kept in order);
//! - a file or directory whose parent is missing is missing.

use std::collections::{BTreeMap, HashMap};
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

#[derive(Clone, Copy, Debug, PartialEq)]
enum Node {
    Dir,
    File(Inode),
}

/// A change of directory entries not yet durable.
#[derive(Clone, Debug)]
enum Entry {
    Create(String, Node),
    Remove(String),
    Move(String, String),
}

impl Entry {
    /// The directories whose sync makes it durable.
    fn dirs(&self) -> Vec<&str> {
        match self {
            Entry::Create(p, _) | Entry::Remove(p) => vec![parent(p)],
            Entry::Move(a, b) => vec![parent(a), parent(b)],
        }
    }

    fn apply(&self, names: &mut BTreeMap<String, Node>) {
        match self {
            Entry::Create(p, node) => {
                names.insert(p.clone(), *node);
            }
            Entry::Remove(p) => {
                names.remove(p);
            }
            Entry::Move(a, b) => {
                // A directory moves with everything under it.
                let moved: Vec<(String, Node)> =
                    names.range(a.clone()..).take_while(|(k, _)| k.starts_with(a.as_str())).map(|(k, v)| (k.clone(), *v)).collect();
                for (k, node) in moved {
                    if k == *a || k.starts_with(&format!("{a}/")) {
                        names.remove(&k);
                        names.insert(format!("{b}{}", &k[a.len()..]), node);
                    }
                }
            }
        }
    }
}

fn parent(path: &str) -> &str {
    path.rsplit_once('/').map_or("", |(p, _)| p)
}

#[derive(Clone, Default)]
struct File {
    durable: Vec<u8>,
    pending: Vec<(u64, Vec<u8>)>,
}

/// The file system as the log has changed it up to some point: what is durable and what not.
#[derive(Clone, Default)]
pub struct Simulation {
    current: BTreeMap<String, Node>,
    durable: BTreeMap<String, Node>,
    pending: Vec<Entry>,
    files: Vec<File>,
    /// Files not (or no longer) in a directory, by the path their descriptors showed.
    anonymous: HashMap<String, Inode>,
}

impl Simulation {
    pub fn new() -> Simulation {
        Simulation::default()
    }

    fn entry(&mut self, entry: Entry) {
        entry.apply(&mut self.current);
        self.pending.push(entry);
    }

    fn inode_of(&mut self, path: &str) -> Inode {
        if let Some(Node::File(inode)) = self.current.get(path) {
            return *inode;
        }
        if let Some(inode) = self.anonymous.get(path) {
            return *inode;
        }
        self.files.push(File::default());
        let inode = self.files.len() - 1;
        if path.ends_with(" (deleted)") {
            self.anonymous.insert(path.to_string(), inode);
        } else {
            // A create, or the first write to a name not seen created.
            self.entry(Entry::Create(path.to_string(), Node::File(inode)));
        }
        inode
    }

    /// Applies the next change.
    pub fn apply(&mut self, change: &Change) {
        match change {
            Change::Write { path, offset, data } => {
                let inode = self.inode_of(path);
                self.files[inode].pending.push((*offset, data.clone()));
            }
            Change::Sync(path) => match self.current.get(path) {
                Some(Node::Dir) => self.sync_dir(path),
                _ if path.is_empty() => self.sync_dir(path),
                _ => {
                    let inode = self.inode_of(path);
                    let file = &mut self.files[inode];
                    for (offset, data) in std::mem::take(&mut file.pending) {
                        write_at(&mut file.durable, offset, &data);
                    }
                }
            },
            Change::Create(path) => {
                self.inode_of(path);
            }
            Change::Mkdir(path) => self.entry(Entry::Create(path.clone(), Node::Dir)),
            Change::Rename(a, b) => self.entry(Entry::Move(a.clone(), b.clone())),
            Change::Link(a, b) => {
                let inode = self.inode_of(a);
                self.entry(Entry::Create(b.clone(), Node::File(inode)));
            }
            Change::Unlink(p) | Change::Rmdir(p) => self.entry(Entry::Remove(p.clone())),
            Change::Mark => {}
        }
    }

    fn sync_dir(&mut self, dir: &str) {
        let (now, later): (Vec<Entry>, Vec<Entry>) = std::mem::take(&mut self.pending).into_iter().partition(|e| e.dirs().contains(&dir));
        for entry in &now {
            entry.apply(&mut self.durable);
        }
        self.pending = later;
    }

    /// A state a power loss could leave now: of what is not durable, each change is kept with
    /// probability `keep` (0: nothing pending survives, 1: everything does), and a kept write
    /// that crosses a 512-byte boundary is cut at one of them with probability `keep` / 2.
    pub fn crash_state(&self, keep: f64, rng: &mut Rng) -> BTreeMap<String, Option<Vec<u8>>> {
        let mut names = self.durable.clone();
        for entry in &self.pending {
            if rng.chance(keep) {
                entry.apply(&mut names);
            }
        }
        let mut contents: HashMap<Inode, Vec<u8>> = HashMap::new();
        let mut state: BTreeMap<String, Option<Vec<u8>>> = BTreeMap::new();
        // Sorted, so a directory comes before what is in it.
        for (path, node) in &names {
            if !parent(path).is_empty() && !matches!(state.get(parent(path)), Some(None)) {
                continue; // its directory is missing
            }
            let content = match node {
                Node::Dir => None,
                Node::File(inode) => Some(contents.entry(*inode).or_insert_with(|| self.files[*inode].after_crash(keep, rng)).clone()),
            };
            state.insert(path.clone(), content);
        }
        state
    }
}

impl File {
    fn after_crash(&self, keep: f64, rng: &mut Rng) -> Vec<u8> {
        let mut bytes = self.durable.clone();
        for (offset, data) in &self.pending {
            if rng.chance(keep) {
                let first_boundary = offset.div_ceil(512) * 512;
                let end = offset + data.len() as u64;
                // Everything kept (keep 1) is the write-back completed: no cut.
                let kept = if first_boundary < end && keep < 1.0 && rng.chance(keep / 2.0) {
                    let boundary = first_boundary + 512 * rng.below((end - first_boundary).div_ceil(512));
                    (boundary - offset) as usize
                } else {
                    data.len()
                };
                write_at(&mut bytes, *offset, &data[..kept]);
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
        if path.is_empty() {
            continue;
        }
        let target = root.join(path);
        match content {
            None => std::fs::create_dir_all(&target).unwrap(),
            Some(bytes) => std::fs::write(&target, bytes).unwrap(),
        }
    }
}
