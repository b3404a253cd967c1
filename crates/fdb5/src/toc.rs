//! FDB5's TOC: an append-only log of records, each a 112-byte header (native little-endian)
//! and a payload of eckit stream values, padded to its size (a multiple of 1024). The records
//! say which index B-trees are visible: `i` adds one, `c` masks an index (or a sub-TOC, or all
//! before it), `s` names a sub-TOC (a writer's own log, read in place), `t` opens the log with
//! the database's key. See docs/fdb5-format.md.

use std::collections::{BTreeMap, HashSet};
use std::path::{Path, PathBuf};

use fieldstore_core::error::{Error, IoContext, Result};

use crate::stream::{DecodeError, Decoded, StreamReader};

/// The size of a record's header.
pub const HEADER_BYTES: usize = 112;
/// The largest record FDB5 writes: its payload is at most 1 MiB, rounded up to 1024.
const MAX_RECORD_BYTES: u64 = (1 << 20) + 1024 + HEADER_BYTES as u64;
/// Sub-TOCs name sub-TOCs only one level deep in what FDB5 writes; a loop stops here.
const MAX_SUB_TOC_DEPTH: usize = 8;

/// A key as FDB5 stores it: keywords in schema order, each with its value.
pub type Fdb5Key = Vec<(String, String)>;

/// One record's content.
#[derive(Debug, Clone, PartialEq)]
pub enum Record {
    /// `t`: opens a log.
    Init {
        /// The database's key.
        key: Fdb5Key,
        /// Whether this log is a sub-TOC.
        sub_toc: bool,
    },
    /// `i`: an index B-tree made visible.
    Index(IndexRecord),
    /// `c`: masks the index (or sub-TOC) named by its file's base name and offset; a path of
    /// `*` masks every index and sub-TOC before it in this log.
    Clear {
        /// The masked index file's or sub-TOC's name (its base name is what counts), or `*`.
        path: String,
        /// The masked B-tree's offset in its file (0 for a sub-TOC).
        offset: i64,
    },
    /// `s`: a sub-TOC, read in place.
    SubToc {
        /// Its name beside the TOC, or an absolute path (an overlay's).
        path: String,
    },
}

/// A `TOC_INDEX` record: where an index B-tree is and what it holds.
#[derive(Debug, Clone, PartialEq)]
pub struct IndexRecord {
    /// The index file's name, in the directory of the TOC holding the record.
    pub file: String,
    /// Where the B-tree starts in that file.
    pub offset: u64,
    /// The index type (B-tree key width, page size, value layout).
    pub kind: String,
    /// Data files by the ids the B-tree's values use: a name beside the TOC, or an absolute path.
    pub data_files: BTreeMap<u64, String>,
    /// Per element keyword, the values present.
    pub axes: BTreeMap<String, Vec<String>>,
    /// The index (collocation) key.
    pub key: Fdb5Key,
}

/// A record read from a TOC file, with where it is.
#[derive(Debug, Clone)]
pub struct Placed {
    /// Its offset in the file.
    pub at: u64,
    /// Its serialisation version (1-3).
    pub version: u32,
    /// Its content.
    pub record: Record,
    /// Who wrote it, and when (its header).
    pub written: Written,
    /// Its length in the file, header and padding included.
    pub size: u64,
}

/// Who wrote a record and when, as its header says (`fdb-dump-toc` prints it).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Written {
    /// FDB5's version, as a number (52500: 5.25.0).
    pub fdb_version: u32,
    /// When: seconds since the epoch ...
    pub seconds: i64,
    /// ... and microseconds.
    pub microseconds: i64,
    /// The writing process.
    pub pid: i32,
    /// Its user.
    pub uid: u32,
    /// Its host's name.
    pub host: String,
}

impl Written {
    /// The fields of a record's header: FDB5's `TocRecord::Header` (tag, serialisation
    /// version, FDB5 version, `timeval`, pid, uid, 64 bytes of host name, size).
    fn of(header: &[u8; HEADER_BYTES]) -> Written {
        let u32_at = |at: usize| u32::from_le_bytes(header[at..at + 4].try_into().expect("4 bytes"));
        let i64_at = |at: usize| i64::from_le_bytes(header[at..at + 8].try_into().expect("8 bytes"));
        let host = &header[40..104];
        let host = &host[..host.iter().position(|b| *b == 0).unwrap_or(host.len())];
        Written {
            fdb_version: u32_at(8),
            seconds: i64_at(16),
            microseconds: i64_at(24),
            pid: u32_at(32) as i32,
            uid: u32_at(36),
            host: String::from_utf8_lossy(host).into_owned(),
        }
    }
}

/// Reads every whole record of a TOC file. A record cut short at the end is one being
/// appended (FDB5 writes a record with one `write`): what is before it is returned.
pub fn read_records(path: &Path) -> Result<Vec<Placed>> {
    let bytes = std::fs::read(path).ctx("read FDB5 TOC", path)?;
    Ok(parse_records(&bytes, 0, path)?.0)
}

/// The whole records at the start of `bytes`, which begin at offset `base` of the TOC at
/// `path` (for messages), and how many bytes they take.
fn parse_records(bytes: &[u8], base: u64, path: &Path) -> Result<(Vec<Placed>, usize)> {
    let mut records = Vec::new();
    let mut at = 0usize;
    while bytes.len() - at >= HEADER_BYTES {
        let offset = base + at as u64;
        let header = &bytes[at..at + HEADER_BYTES];
        let size = u64::from_le_bytes(header[104..112].try_into().expect("8 bytes"));
        if !(HEADER_BYTES as u64..=MAX_RECORD_BYTES).contains(&size) {
            return Err(Error::corrupt("FDB5 TOC", path, format!("record at offset {offset} has size {size}")));
        }
        let Some(end) = at.checked_add(size as usize).filter(|end| *end <= bytes.len()) else { break };
        let version = u32::from_le_bytes(header[4..8].try_into().expect("4 bytes"));
        let record = decode(header[0], version, &bytes[at + HEADER_BYTES..end]).map_err(|e| {
            Error::corrupt_because(
                "FDB5 TOC",
                path,
                format!("record at offset {offset} (tag {:?}, version {version})", header[0] as char),
                e,
            )
        })?;
        let written = Written::of(header.try_into().expect("a whole header"));
        records.push(Placed { at: offset, version, record, written, size });
        at = end;
    }
    Ok((records, at))
}

/// A database's TOC as read so far, read on from where it ended at each refresh: FDB5 only
/// ever appends to it. A TOC replaced (a database wiped and made again) is read anew.
pub struct TocLog {
    path: PathBuf,
    records: Vec<Placed>,
    /// Where the first record not yet read starts.
    read_to: u64,
    /// The file read: (device, inode) and its first record's header, which holds when and by
    /// which process it was made (an inode number is used again once its file is removed).
    file: Option<((u64, u64), [u8; HEADER_BYTES])>,
}

impl TocLog {
    /// The TOC at `path`, nothing read yet.
    pub fn new(path: PathBuf) -> Self {
        TocLog { path, records: Vec::new(), read_to: 0, file: None }
    }

    /// Reads what was appended since the last refresh; every whole record so far.
    pub fn refresh(&mut self) -> Result<&[Placed]> {
        use std::os::unix::fs::{FileExt, MetadataExt};
        let file = std::fs::File::open(&self.path).ctx("open FDB5 TOC", &self.path)?;
        let meta = file.metadata().ctx("stat FDB5 TOC", &self.path)?;
        let id = (meta.dev(), meta.ino());
        let mut first = [0u8; HEADER_BYTES];
        let whole_first = file.read_exact_at(&mut first, 0).is_ok();
        let same = self.file.is_some_and(|(was, header)| was == id && whole_first && header == first);
        if !same || meta.len() < self.read_to {
            *self = TocLog { path: std::mem::take(&mut self.path), records: Vec::new(), read_to: 0, file: None };
        }
        if meta.len() > self.read_to {
            let mut bytes = vec![0u8; (meta.len() - self.read_to) as usize];
            file.read_exact_at(&mut bytes, self.read_to).ctx("read FDB5 TOC", &self.path)?;
            let (records, used) = parse_records(&bytes, self.read_to, &self.path)?;
            self.records.extend(records);
            self.read_to += used as u64;
        }
        if self.file.is_none() && !self.records.is_empty() {
            self.file = Some((id, first));
        }
        Ok(&self.records)
    }
}

/// The database key of a TOC, from its first record alone (listing databases reads no more);
/// `None` while its first record is not whole: FDB5 creates the file, then writes the
/// database's schema, then appends the record.
pub fn read_key(path: &Path) -> Result<Option<Fdb5Key>> {
    use std::io::Read;
    let mut file = std::fs::File::open(path).ctx("open FDB5 TOC", path)?;
    let mut header = [0u8; HEADER_BYTES];
    if file.read_exact(&mut header).is_err() {
        return Ok(None);
    }
    let size = u64::from_le_bytes(header[104..112].try_into().expect("8 bytes"));
    if !(HEADER_BYTES as u64..=MAX_RECORD_BYTES).contains(&size) {
        return Err(Error::corrupt("FDB5 TOC", path, format!("record at offset 0 has size {size}")));
    }
    let mut payload = vec![0u8; size as usize - HEADER_BYTES];
    if file.read_exact(&mut payload).is_err() {
        return Ok(None);
    }
    let version = u32::from_le_bytes(header[4..8].try_into().expect("4 bytes"));
    match decode(header[0], version, &payload) {
        Ok(Record::Init { key, .. }) => Ok(Some(key)),
        Ok(_) => Err(Error::corrupt("FDB5 TOC", path, "its first record is not TOC_INIT")),
        Err(e) => Err(Error::corrupt_because("FDB5 TOC", path, "record at offset 0", e)),
    }
}

/// Decodes one record's payload.
fn decode(tag: u8, version: u32, payload: &[u8]) -> Decoded<Record> {
    if !(1..=3).contains(&version) {
        return Err(DecodeError { at: 0, reason: format!("serialisation version {version} (FDB5 5.x writes 1-3)") });
    }
    let mut r = StreamReader::new(payload);
    Ok(match tag {
        b't' => {
            let key = key(&mut r)?;
            // Before version 2 there were no sub-TOCs, and the oldest logs have no flag.
            let sub_toc = version >= 2 && r.int()? != 0;
            Record::Init { key, sub_toc }
        }
        b'i' => Record::Index(index_record(&mut r, version)?),
        b'c' => Record::Clear { path: r.string()?, offset: r.long()? },
        b's' => Record::SubToc { path: r.string()? },
        other => return Err(DecodeError { at: 0, reason: format!("unknown record tag 0x{other:02x}") }),
    })
}

/// A key: its keyword-value pairs (sorted by keyword), then its keywords in schema order,
/// each with an empty type name. Values are lower-cased, as FDB5 reads them.
fn key(r: &mut StreamReader) -> Decoded<Fdb5Key> {
    let n = r.count(10)?;
    let mut values = BTreeMap::new();
    for _ in 0..n {
        let keyword = r.string()?;
        values.insert(keyword, r.string()?.to_lowercase());
    }
    let at = r.position();
    let m = r.count(10)?;
    let mut key = Vec::with_capacity(m);
    for _ in 0..m {
        let keyword = r.string()?;
        r.string()?;
        let value = values.remove(&keyword).unwrap_or_default();
        key.push((keyword, value));
    }
    if let Some(keyword) = values.keys().next() {
        return Err(DecodeError { at, reason: format!("keyword {keyword:?} has a value but is not in the key's keyword list") });
    }
    Ok(key)
}

fn index_record(r: &mut StreamReader, version: u32) -> Decoded<IndexRecord> {
    let file = r.string()?;
    let at = r.position();
    let offset = u64::try_from(r.long()?).map_err(|_| DecodeError { at, reason: "a negative index offset".into() })?;
    let kind = r.string()?;
    let data_files = file_table(r)?;
    let (axes, key) = if version >= 3 { index_tail_v3(r)? } else { index_tail_legacy(r)? };
    Ok(IndexRecord { file, offset, kind, data_files, axes, key })
}

/// The data files an index's values point to, by id.
fn file_table(r: &mut StreamReader) -> Decoded<BTreeMap<u64, String>> {
    let n = r.count(10)?;
    let mut files = BTreeMap::new();
    for _ in 0..n {
        let id = r.ulong()?;
        files.insert(id, r.string()?);
    }
    Ok(files)
}

/// Axes as versions 1 and 2 write them: a count, then per keyword its values.
fn axes(r: &mut StreamReader) -> Decoded<BTreeMap<String, Vec<String>>> {
    let n = r.count(10)?;
    axes_entries(r, n)
}

/// `n` axes: per keyword, its values.
fn axes_entries(r: &mut StreamReader, n: usize) -> Decoded<BTreeMap<String, Vec<String>>> {
    let mut axes = BTreeMap::new();
    for _ in 0..n {
        let keyword = r.string()?;
        let values = r.count(5)?;
        let values = (0..values).map(|_| r.string()).collect::<Decoded<Vec<_>>>()?;
        axes.insert(keyword, values);
    }
    Ok(axes)
}

/// Versions 1 and 2: axes, the index key, an obsolete empty string and the type again.
fn index_tail_legacy(r: &mut StreamReader) -> Decoded<(BTreeMap<String, Vec<String>>, Fdb5Key)> {
    let axes = axes(r)?;
    let key = key(r)?;
    Ok((axes, key))
}

/// Version 3: the axes as an object (`size`, then `axes` with that many entries), then an
/// object of `key`, `type` and `time`, in any order.
fn index_tail_v3(r: &mut StreamReader) -> Decoded<(BTreeMap<String, Vec<String>>, Fdb5Key)> {
    r.start_object()?;
    let (mut size, mut found_axes) = (None, None);
    while !r.end_of_object()? {
        let at = r.position();
        match (r.string()?.as_str(), size) {
            ("size", _) => size = Some(r.count(10)?),
            ("axes", Some(n)) => found_axes = Some(axes_entries(r, n)?),
            ("axes", None) => return Err(DecodeError { at, reason: "axes before their size".into() }),
            (other, _) => return Err(DecodeError { at, reason: format!("unknown axes field {other:?}") }),
        }
    }
    r.start_object()?;
    let mut found_key = None;
    while !r.end_of_object()? {
        let at = r.position();
        match r.string()?.as_str() {
            "key" => found_key = Some(key(r)?),
            "type" => drop(r.string()?),
            "time" => drop(r.long()?),
            other => return Err(DecodeError { at, reason: format!("unknown index field {other:?}") }),
        }
    }
    let missing = |what: &str| DecodeError { at: r.position(), reason: format!("the index record has no {what}") };
    Ok((found_axes.ok_or_else(|| missing("axes"))?, found_key.ok_or_else(|| missing("key"))?))
}

/// An index a reader sees, with the directory its relative names are in.
#[derive(Debug, Clone)]
pub struct VisibleIndex {
    /// The directory of the TOC that holds its record.
    pub dir: PathBuf,
    /// The record.
    pub record: IndexRecord,
}

/// What a reader of a database sees ([`visible_indexes`]).
#[derive(Debug)]
pub struct Visible {
    /// The database's key, from its first record.
    pub key: Fdb5Key,
    /// Its visible indexes, newest first.
    pub indexes: Vec<VisibleIndex>,
    /// The TOCs of the other databases overlaid onto it (`fdb-overlay`'s sub-TOCs not masked
    /// by a `--remove`), oldest first: their fields are shown as this database's.
    pub overlays: Vec<PathBuf>,
}

/// The indexes visible in a database, newest first, as FDB5 computes them: records masked by
/// a clear are left out, sub-TOCs are read in place (their indexes take the place of the
/// record naming them), those of other databases (overlays) named apart.
pub fn visible_indexes(dir: &Path) -> Result<Visible> {
    visible_in(dir, &read_records(&dir.join("toc"))?)
}

/// [`visible_indexes`] of a database whose TOC's records are `records`.
pub fn visible_in(dir: &Path, records: &[Placed]) -> Result<Visible> {
    let toc = dir.join("toc");
    let key = match records.first() {
        Some(Placed { record: Record::Init { key, .. }, .. }) => key.clone(),
        Some(_) => return Err(Error::corrupt("FDB5 TOC", &toc, "its first record is not TOC_INIT")),
        None => return Err(Error::corrupt("FDB5 TOC", &toc, "it holds no whole record")),
    };
    let mut visible = Visible { key, indexes: Vec::new(), overlays: Vec::new() };
    walk(dir, records, &HashSet::new(), 0, &mut visible)?;
    visible.indexes.reverse();
    Ok(visible)
}

/// Masks as (file base name, offset): what FDB5 matches a clear against.
type Masks = HashSet<(String, u64)>;

fn masks_of(records: &[Placed]) -> Masks {
    let mut masks = Masks::new();
    // Each record is added once, at the first `*` after it: linear in the log's length.
    let mut unmasked_from = 0;
    for (i, placed) in records.iter().enumerate() {
        match &placed.record {
            Record::Clear { path, .. } if path == "*" => {
                for earlier in &records[unmasked_from..i] {
                    match &earlier.record {
                        Record::Index(index) => drop(masks.insert((base_name(&index.file), index.offset))),
                        Record::SubToc { path } => drop(masks.insert((base_name(path), 0))),
                        _ => {}
                    }
                }
                unmasked_from = i;
            }
            Record::Clear { path, offset } => drop(masks.insert((base_name(path), u64::try_from(*offset).unwrap_or(u64::MAX)))),
            _ => {}
        }
    }
    masks
}

fn walk(dir: &Path, records: &[Placed], outer: &Masks, depth: usize, visible: &mut Visible) -> Result<()> {
    let masks = masks_of(records);
    let masked = |name: &str, offset: u64| {
        let id = (base_name(name), offset);
        masks.contains(&id) || outer.contains(&id)
    };
    for placed in records {
        match &placed.record {
            Record::Index(index) if !masked(&index.file, index.offset) => {
                visible.indexes.push(VisibleIndex { dir: dir.to_path_buf(), record: index.clone() })
            }
            Record::SubToc { path } if !masked(path, 0) => {
                if depth >= MAX_SUB_TOC_DEPTH {
                    return Err(Error::corrupt("FDB5 TOC", dir.join("toc"), format!("sub-TOCs nest deeper than {MAX_SUB_TOC_DEPTH}")));
                }
                let sub = sub_toc_path(dir, path);
                let sub_dir = sub.parent().unwrap_or(dir).to_path_buf();
                if sub_dir != dir {
                    // fdb-overlay's: another database's TOC, whose fields FDB5 shows under this
                    // database's key, setting the keys inside each message as it reads it.
                    visible.overlays.retain(|known| *known != sub);
                    visible.overlays.push(sub);
                    continue;
                }
                let sub_records = read_records(&sub)?;
                walk(&sub_dir, sub_records.get(1..).unwrap_or_default(), &masks, depth + 1, visible)?;
            }
            _ => {}
        }
    }
    Ok(())
}

/// Where a sub-TOC named in a record is: beside the TOC for a plain name; for an absolute
/// path (an overlay's), the path if it is there, else its base name beside the TOC.
fn sub_toc_path(dir: &Path, path: &str) -> PathBuf {
    let named = Path::new(path);
    if named.is_absolute() && named.exists() {
        return named.to_path_buf();
    }
    dir.join(base_name(path))
}

/// The last component of a path as FDB5 writes it.
pub fn base_name(path: &str) -> String {
    path.rsplit('/').next().unwrap_or(path).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stream::tests::StreamWriter;

    fn key_bytes(w: &mut StreamWriter, pairs: &[(&str, &str)]) {
        let mut sorted = pairs.to_vec();
        sorted.sort();
        w.ulong(sorted.len() as u32);
        for (k, v) in sorted {
            w.string(k).string(v);
        }
        w.ulong(pairs.len() as u32);
        for (k, _) in pairs {
            w.string(k).string("");
        }
    }

    #[test]
    fn keys_come_back_in_schema_order_lower_cased() {
        let mut w = StreamWriter::default();
        key_bytes(&mut w, &[("type", "FC"), ("levtype", "pl"), ("timespan", "")]);
        let got = key(&mut StreamReader::new(&w.0)).unwrap();
        assert_eq!(got, [("type".into(), "fc".into()), ("levtype".into(), "pl".into()), ("timespan".into(), "".into())]);
        // A value whose keyword is not in the list.
        let mut w = StreamWriter::default();
        w.ulong(1).string("class").string("od").ulong(0);
        assert!(key(&mut StreamReader::new(&w.0)).unwrap_err().reason.contains("\"class\""));
    }

    fn index_payload(version: u32) -> Vec<u8> {
        let mut w = StreamWriter::default();
        w.string("fc:pl:.x.index").long(65536).string("BTreeIndex").ulong(1).ulong(0).string("fc:pl:.x.data");
        let axes = |w: &mut StreamWriter| {
            w.string("param").ulong(2).string("130").string("131").string("step").ulong(1).string("0");
        };
        if version >= 3 {
            w.byte(1).string("size").ulong(2).string("axes");
            axes(&mut w);
            w.byte(2).byte(1).string("key");
            key_bytes(&mut w, &[("type", "fc"), ("levtype", "pl")]);
            w.string("type").string("BTreeIndex").string("time").long(1_700_000_000).byte(2);
        } else {
            w.ulong(2);
            axes(&mut w);
            key_bytes(&mut w, &[("type", "fc"), ("levtype", "pl")]);
            w.string("").string("BTreeIndex");
        }
        w.0
    }

    /// A record as FDB5 writes it: the header, the payload, zeros up to a multiple of 1024.
    fn record(tag: u8, version: u32, payload: &[u8]) -> Vec<u8> {
        let size = (HEADER_BYTES + payload.len()).div_ceil(1024) * 1024;
        let mut bytes = vec![0u8; size];
        bytes[0] = tag;
        bytes[4..8].copy_from_slice(&version.to_le_bytes());
        bytes[104..112].copy_from_slice(&(size as u64).to_le_bytes());
        bytes[HEADER_BYTES..HEADER_BYTES + payload.len()].copy_from_slice(payload);
        bytes
    }

    #[test]
    fn a_record_being_written_is_not_read_and_damage_is_named_by_offset() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("toc");
        let mut init = StreamWriter::default();
        key_bytes(&mut init, &[("class", "od"), ("expver", "0001")]);
        init.int(0);
        let mut toc = record(b't', 3, &init.0);
        toc.extend(record(b'i', 3, &index_payload(3)));
        std::fs::write(&path, &toc).unwrap();
        assert_eq!(read_records(&path).unwrap().len(), 2);
        assert_eq!(read_key(&path).unwrap().unwrap()[1], ("expver".to_string(), "0001".to_string()));
        // A database being created: its TOC holds no whole record yet.
        std::fs::write(&path, &toc[..600]).unwrap();
        assert!(read_key(&path).unwrap().is_none());
        std::fs::write(&path, &toc).unwrap();
        // An index record cut short (a writer's append in progress): the records before it.
        std::fs::write(&path, &toc[..toc.len() - 100]).unwrap();
        assert_eq!(read_records(&path).unwrap().len(), 1);
        // A size no record has, and a payload that does not decode: named by offset.
        let mut bad = toc.clone();
        bad[1024 + 104..1024 + 112].copy_from_slice(&7u64.to_le_bytes());
        std::fs::write(&path, &bad).unwrap();
        let error = read_records(&path).unwrap_err();
        assert!(error.to_string().contains("record at offset 1024 has size 7"), "{error}");
        let mut bad = toc.clone();
        bad[1024 + HEADER_BYTES] = 0x0a;
        std::fs::write(&path, &bad).unwrap();
        let error = read_records(&path).unwrap_err();
        assert_eq!(error.kind(), fieldstore_core::ErrorKind::Corrupt);
        assert!(error.report().to_string().contains("record at offset 1024 (tag 'i', version 3)"), "{}", error.report());
    }

    #[test]
    fn a_log_is_read_on_from_where_it_ended_and_anew_when_replaced() {
        use std::io::Write;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("toc");
        let mut init = StreamWriter::default();
        key_bytes(&mut init, &[("class", "od")]);
        init.int(0);
        let index = record(b'i', 3, &index_payload(3));
        std::fs::write(&path, record(b't', 3, &init.0)).unwrap();
        let mut log = TocLog::new(path.clone());
        assert_eq!(log.refresh().unwrap().len(), 1);
        // A record half appended is left for later, then read whole.
        let mut file = std::fs::OpenOptions::new().append(true).open(&path).unwrap();
        file.write_all(&index[..500]).unwrap();
        assert_eq!(log.refresh().unwrap().len(), 1);
        file.write_all(&index[500..]).unwrap();
        let records = log.refresh().unwrap();
        assert_eq!((records.len(), records[1].at), (2, 1024));
        // A database made anew (another file at the path): read from its start.
        let replacement = path.with_extension("new");
        std::fs::write(&replacement, record(b't', 3, &init.0)).unwrap();
        std::fs::rename(&replacement, &path).unwrap();
        assert_eq!(log.refresh().unwrap().len(), 1);
        // Made anew in the same file (an inode used again), as long as before: its first
        // record's header (when and by which process) differs.
        let mut other = StreamWriter::default();
        key_bytes(&mut other, &[("class", "rd")]);
        other.int(0);
        let mut remade = record(b't', 3, &other.0);
        remade[8..16].copy_from_slice(&1_800_000_000u64.to_le_bytes());
        remade.extend_from_slice(&record(b'i', 2, &index_payload(2)));
        std::fs::write(&path, &remade).unwrap();
        let records = log.refresh().unwrap();
        assert!(matches!(&records[0].record, Record::Init { key, .. } if key[0].1 == "rd"), "{:?}", records[0]);
        assert_eq!(records.len(), 2);
        std::fs::write(&path, [remade[..1024].to_vec(), index.clone(), index].concat()).unwrap();
        let records = log.refresh().unwrap();
        // The same first record: read on, what was read kept (the version 2 record).
        assert_eq!(records.iter().map(|r| r.version).collect::<Vec<_>>(), [3, 2, 3]);
    }

    #[test]
    fn an_overlay_of_another_database_is_named_apart_until_removed() {
        let root = tempfile::tempdir().unwrap();
        let (source, overlay) = (root.path().join("rd:xxxx"), root.path().join("rd:yyyy"));
        let init = |expver: &str| {
            let mut w = StreamWriter::default();
            key_bytes(&mut w, &[("class", "rd"), ("expver", expver)]);
            w.int(0);
            record(b't', 3, &w.0)
        };
        for dir in [&source, &overlay] {
            std::fs::create_dir(dir).unwrap();
        }
        std::fs::write(source.join("toc"), init("xxxx")).unwrap();
        let mut toc = init("yyyy");
        let mut sub = StreamWriter::default();
        sub.string(&source.join("toc").display().to_string()).long(0);
        toc.extend(record(b's', 3, &sub.0));
        std::fs::write(overlay.join("toc"), &toc).unwrap();
        let visible = visible_indexes(&overlay).unwrap();
        assert_eq!(visible.overlays, [source.join("toc")]);
        assert!(visible.indexes.is_empty() && visible_indexes(&source).unwrap().overlays.is_empty());
        // fdb-overlay --remove: a clear naming the sub-TOC.
        let mut clear = StreamWriter::default();
        clear.string(&source.join("toc").display().to_string()).long(0);
        toc.extend(record(b'c', 3, &clear.0));
        std::fs::write(overlay.join("toc"), &toc).unwrap();
        assert!(visible_indexes(&overlay).unwrap().overlays.is_empty());
    }

    #[test]
    fn index_records_of_every_version_decode_alike() {
        let decoded: Vec<Record> = (1..=3).map(|v| decode(b'i', v, &index_payload(v)).unwrap()).collect();
        let Record::Index(index) = &decoded[0] else { panic!("{decoded:?}") };
        assert_eq!((index.file.as_str(), index.offset, index.kind.as_str()), ("fc:pl:.x.index", 65536, "BTreeIndex"));
        assert_eq!(index.data_files[&0], "fc:pl:.x.data");
        assert_eq!(index.axes["param"], ["130", "131"]);
        assert_eq!(index.key[0], ("type".to_string(), "fc".to_string()));
        assert!(decoded.iter().all(|d| *d == decoded[0]), "{decoded:?}");
        assert!(decode(b'i', 4, &index_payload(3)).unwrap_err().reason.contains("version 4"));
        assert!(decode(b'w', 3, &[]).unwrap_err().reason.contains("0x77"));
    }
}
