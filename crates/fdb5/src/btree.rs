//! FDB5's index files: eckit B+trees of fixed-size pages (native little-endian), one tree per
//! flush at the offset its TOC record gives. Page `n` of a tree is at `offset + (n - 1) *
//! page size`; page 1 is the root. A page is a 40-byte header (id, entry count, node flag,
//! left, right) and its entries: in a leaf, a NUL-padded key and a field reference; in a
//! node, a key and a child page (for keys from it up to the next), `left` holding the child
//! of keys below the first.

use std::collections::{HashMap, HashSet};
use std::fs::File;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use fieldstore_core::error::{Error, ErrorKind, Result};

const PAGE_HEADER: usize = 40;
/// Deeper than any tree a file of 2^63 bytes holds: a loop of pages stops here.
const MAX_DEPTH: usize = 32;

/// Where a field is: a data file (by its id in the index record's file table), offset, length.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FieldRef {
    /// The data file's id.
    pub file: u64,
    /// Where the field starts in it.
    pub offset: u64,
    /// Its length in bytes.
    pub length: u64,
}

/// The layout of an index type's B-tree.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Layout {
    /// Bytes of a key (values joined by `:`, NUL-padded).
    pub key_bytes: usize,
    /// Bytes of a page.
    pub page_bytes: usize,
    /// Bytes of a leaf's value: a field reference (24), or one with GRIB details (128).
    pub value_bytes: usize,
}

impl Layout {
    /// The layout of one of FDB5's index types, by the short name it records by default
    /// (`BTreeIndex`, `BTreeIndex64`, `BTreeIndex4MB`, `PointDBIndex`) or the full name its
    /// B-tree class is registered under (`BTreeIndex_32_65536_FieldRefReduced`, ...), which
    /// `fdbIndexType` may name.
    pub fn of(kind: &str) -> Option<Layout> {
        let (key_bytes, page_bytes, value_bytes) = match kind {
            "BTreeIndex" | "BTreeIndex_32_65536_FieldRefReduced" => (32, 64 << 10, 24),
            "BTreeIndex64" | "BTreeIndex_64_65536_FieldRefReduced" => (64, 64 << 10, 24),
            "BTreeIndex4MB" | "BTreeIndex_32_4194304_FieldRefReduced" => (32, 4 << 20, 24),
            "PointDBIndex" | "BTreeIndex_32_65536_FieldRefFull" => (32, 64 << 10, 128),
            _ => return None,
        };
        Some(Layout { key_bytes, page_bytes, value_bytes })
    }

    fn leaf_entry(&self) -> usize {
        self.key_bytes + self.value_bytes
    }

    fn node_entry(&self) -> usize {
        self.key_bytes + 8
    }
}

/// Bytes of pages kept per B-tree: the root and inner pages every lookup passes, and the
/// leaves of recent ones (256 pages of 64 KiB; 4 of 4 MiB).
const CACHED_BYTES: usize = 16 << 20;

/// One B-tree of an index file. Its pages are read once and kept (a B-tree FDB5 published is
/// never changed: later flushes start new ones).
pub struct BTree {
    file: Arc<File>,
    path: PathBuf,
    offset: u64,
    layout: Layout,
    pages: Mutex<HashMap<u64, Arc<Page>>>,
}

/// A page as read: whether it is a node, its left link, and its entries' bytes.
struct Page {
    node: bool,
    left: u64,
    entries: Vec<u8>,
    count: usize,
}

impl BTree {
    /// The tree at `offset` of the index file at `path`, open as `file`, of index type `kind`.
    pub fn open(file: Arc<File>, path: &Path, offset: u64, kind: &str) -> Result<BTree> {
        let layout = Layout::of(kind).ok_or_else(|| {
            Error::new(ErrorKind::Unsupported, format!("{}: FDB5 index type {kind:?} is not one fieldstore reads", path.display()))
        })?;
        Ok(BTree { file, path: path.to_path_buf(), offset, layout, pages: Mutex::new(HashMap::new()) })
    }

    fn corrupt(&self, page: u64, reason: impl Into<String>) -> Error {
        let at = self.page_offset(page).unwrap_or(u64::MAX);
        Error::corrupt("FDB5 index", &self.path, format!("B-tree page {page} at offset {at}: {}", reason.into()))
    }

    fn page_offset(&self, page: u64) -> Option<u64> {
        page.checked_sub(1)?.checked_mul(self.layout.page_bytes as u64)?.checked_add(self.offset)
    }

    /// Page `id`, from the cache or read.
    fn page(&self, id: u64) -> Result<Arc<Page>> {
        if let Some(page) = self.pages.lock().unwrap_or_else(|p| p.into_inner()).get(&id) {
            return Ok(page.clone());
        }
        let page = Arc::new(self.read_page(id)?);
        let mut pages = self.pages.lock().unwrap_or_else(|p| p.into_inner());
        if pages.len() >= (CACHED_BYTES / self.layout.page_bytes).max(4) {
            // Inner pages are read again at once by the next lookup: cheap to lose.
            pages.clear();
        }
        pages.insert(id, page.clone());
        Ok(page)
    }

    fn read_page(&self, id: u64) -> Result<Page> {
        let at = self.page_offset(id).ok_or_else(|| self.corrupt(id, "no such page"))?;
        let mut header = [0u8; PAGE_HEADER];
        self.file
            .read_exact_at(&mut header, at)
            .map_err(|e| Error::corrupt_because("FDB5 index", &self.path, format!("B-tree page {id} at offset {at} unreadable"), e))?;
        let word = |i: usize| u64::from_le_bytes(header[i * 8..i * 8 + 8].try_into().expect("8 bytes"));
        let (page_id, count, node, left) = (word(0), word(1), word(2), word(3));
        if page_id != id {
            return Err(self.corrupt(id, format!("it says it is page {page_id}")));
        }
        let entry = if node == 1 { self.layout.node_entry() } else { self.layout.leaf_entry() };
        let fits = (self.layout.page_bytes - PAGE_HEADER) / entry;
        if node > 1 || count > fits as u64 {
            return Err(self.corrupt(id, format!("node flag {node}, {count} entries (at most {fits} fit)")));
        }
        let mut entries = vec![0u8; count as usize * entry];
        self.file
            .read_exact_at(&mut entries, at + PAGE_HEADER as u64)
            .map_err(|e| Error::corrupt_because("FDB5 index", &self.path, format!("B-tree page {id} at offset {at} cut short"), e))?;
        Ok(Page { node: node == 1, left, entries, count: count as usize })
    }

    fn key<'p>(&self, page: &'p Page, i: usize) -> &'p [u8] {
        let entry = if page.node { self.layout.node_entry() } else { self.layout.leaf_entry() };
        &page.entries[i * entry..i * entry + self.layout.key_bytes]
    }

    fn child(&self, page: &Page, i: usize) -> u64 {
        let at = i * self.layout.node_entry() + self.layout.key_bytes;
        u64::from_le_bytes(page.entries[at..at + 8].try_into().expect("8 bytes"))
    }

    fn value(&self, page_id: u64, page: &Page, i: usize) -> Result<FieldRef> {
        let at = i * self.layout.leaf_entry() + self.layout.key_bytes;
        let word = |j: usize| u64::from_le_bytes(page.entries[at + j * 8..at + j * 8 + 8].try_into().expect("8 bytes"));
        let (file, offset, length) = (word(0), word(1), word(2));
        if offset > i64::MAX as u64 || length > i64::MAX as u64 {
            return Err(self.corrupt(page_id, format!("entry {i} has offset {} and length {}", offset as i64, length as i64)));
        }
        Ok(FieldRef { file, offset, length })
    }

    /// How many of a page's entries have keys up to `key` (entries are sorted: a binary search).
    fn count_at_most(&self, page: &Page, key: &[u8]) -> usize {
        let (mut low, mut high) = (0, page.count);
        while low < high {
            let mid = (low + high) / 2;
            if self.key(page, mid) <= key {
                low = mid + 1;
            } else {
                high = mid;
            }
        }
        low
    }

    /// The field stored under `key` (element values joined by `:`), if any.
    pub fn lookup(&self, key: &str) -> Result<Option<FieldRef>> {
        if key.len() > self.layout.key_bytes {
            return Ok(None);
        }
        let mut wanted = vec![0u8; self.layout.key_bytes];
        wanted[..key.len()].copy_from_slice(key.as_bytes());
        let mut id = 1;
        for _ in 0..MAX_DEPTH {
            let page = self.page(id)?;
            let below = self.count_at_most(&page, &wanted);
            if !page.node {
                let found = below.checked_sub(1).filter(|&i| self.key(&page, i) == wanted.as_slice());
                return found.map(|i| self.value(id, &page, i)).transpose();
            }
            id = if below == 0 { page.left } else { self.child(&page, below - 1) };
        }
        Err(self.corrupt(id, format!("deeper than {MAX_DEPTH} levels")))
    }

    /// Every entry, in key order: keys without their padding. Each page is read at most
    /// once: a damaged tree whose nodes name a page twice is refused, not walked again.
    pub fn entries(&self) -> Result<Vec<(String, FieldRef)>> {
        let mut out = Vec::new();
        self.collect(1, 0, &mut HashSet::new(), &mut out)?;
        Ok(out)
    }

    fn collect(&self, id: u64, depth: usize, seen: &mut HashSet<u64>, out: &mut Vec<(String, FieldRef)>) -> Result<()> {
        if depth >= MAX_DEPTH {
            return Err(self.corrupt(id, format!("deeper than {MAX_DEPTH} levels")));
        }
        if !seen.insert(id) {
            return Err(self.corrupt(id, "named twice in the tree"));
        }
        let page = self.read_page(id)?;
        if page.node {
            self.collect(page.left, depth + 1, seen, out)?;
            for i in 0..page.count {
                self.collect(self.child(&page, i), depth + 1, seen, out)?;
            }
            return Ok(());
        }
        for i in 0..page.count {
            let raw = self.key(&page, i);
            let key = &raw[..raw.iter().position(|b| *b == 0).unwrap_or(raw.len())];
            let key = std::str::from_utf8(key).map_err(|_| self.corrupt(id, format!("entry {i}'s key is not UTF-8")))?;
            out.push((key.to_string(), self.value(id, &page, i)?));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn index_type_names_give_their_layouts() {
        assert_eq!(Layout::of("BTreeIndex"), Some(Layout { key_bytes: 32, page_bytes: 65536, value_bytes: 24 }));
        assert_eq!(Layout::of("BTreeIndex_32_65536_FieldRefReduced"), Layout::of("BTreeIndex"));
        assert_eq!(Layout::of("BTreeIndex_32_4194304_FieldRefReduced"), Layout::of("BTreeIndex4MB"));
        assert_eq!(Layout::of("BTreeIndex64").unwrap().key_bytes, 64);
        assert_eq!(Layout::of("BTreeIndex4MB").unwrap().page_bytes, 4 << 20);
        assert_eq!(Layout::of("PointDBIndex").unwrap().value_bytes, 128);
        for bad in ["", "BTreeIndex_32_1024_FieldRefReduced", "PMem"] {
            assert_eq!(Layout::of(bad), None, "{bad}");
        }
    }

    fn open(path: &Path, offset: u64, kind: &str) -> Result<BTree> {
        BTree::open(Arc::new(File::open(path).unwrap()), path, offset, kind)
    }

    /// A tree of one leaf (page 1) written as eckit writes it.
    fn leaf(entries: &[(&str, u64, u64, u64)]) -> Vec<u8> {
        let mut page = Vec::new();
        for word in [1u64, entries.len() as u64, 0, 0, 0] {
            page.extend_from_slice(&word.to_le_bytes());
        }
        for (key, file, offset, length) in entries {
            let mut k = [0u8; 32];
            k[..key.len()].copy_from_slice(key.as_bytes());
            page.extend_from_slice(&k);
            for word in [file, offset, length] {
                page.extend_from_slice(&word.to_le_bytes());
            }
        }
        page.resize(65536, 0);
        page
    }

    #[test]
    fn a_node_naming_a_page_twice_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("x.index");
        // Page 1: a node whose left child and first entry's child are both page 2 (a leaf).
        let mut node = Vec::new();
        for word in [1u64, 1, 1, 2, 0] {
            node.extend_from_slice(&word.to_le_bytes());
        }
        node.extend_from_slice(&[b'5'; 32]);
        node.extend_from_slice(&2u64.to_le_bytes());
        node.resize(65536, 0);
        let mut leaf2 = leaf(&[("1", 0, 0, 1)]);
        leaf2[..8].copy_from_slice(&2u64.to_le_bytes());
        std::fs::write(&path, [node, leaf2].concat()).unwrap();
        let error = open(&path, 0, "BTreeIndex").unwrap().entries().unwrap_err();
        assert!(error.to_string().contains("page 2 at offset 65536: named twice"), "{error}");
    }

    #[test]
    fn a_leaf_is_looked_up_and_listed_in_byte_order() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("x.index");
        let mut bytes = vec![0u8; 65536]; // another tree before
        bytes.extend(leaf(&[("0:1:100:1", 0, 0, 8), ("0:1:100:10", 1, 8, 9), ("0:1:100:2", 0, 17, 10)]));
        std::fs::write(&path, &bytes).unwrap();
        let tree = open(&path, 65536, "BTreeIndex").unwrap();
        assert_eq!(tree.lookup("0:1:100:10").unwrap(), Some(FieldRef { file: 1, offset: 8, length: 9 }));
        assert_eq!(tree.lookup("0:1:100:3").unwrap(), None);
        assert_eq!(tree.lookup(&"9".repeat(33)).unwrap(), None, "longer than any key");
        let keys: Vec<String> = tree.entries().unwrap().into_iter().map(|(k, _)| k).collect();
        assert_eq!(keys, ["0:1:100:1", "0:1:100:10", "0:1:100:2"]);
        // The tree at offset 0 is all zeros: page 1 says it is page 0.
        let error = open(&path, 0, "BTreeIndex").unwrap().lookup("0").unwrap_err();
        assert!(error.to_string().contains("page 1 at offset 0: it says it is page 0"), "{error}");
        assert_eq!(error.kind(), ErrorKind::Corrupt);
        // A count beyond what a page holds.
        bytes[65536 + 8..65536 + 16].copy_from_slice(&5000u64.to_le_bytes());
        std::fs::write(&path, &bytes).unwrap();
        let error = open(&path, 65536, "BTreeIndex").unwrap().entries().unwrap_err();
        assert!(error.to_string().contains("5000 entries"), "{error}");
    }
}
