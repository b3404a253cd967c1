//! The table of contents (TOC) of a dataset, and the index segments it points to.
//!
//! The TOC is one append-only file per dataset, shared by every writer. Each writer's `flush`
//! appends, in a single `write` on an `O_APPEND` descriptor, one **index record** per
//! collocation key it wrote since its last flush; a record names an index segment (file,
//! offset, length) and summarises it (element keywords, the values of each element keyword:
//! its axes, and the field count). **Mask records** hide index records (purge, partial
//! wipe). Records are framed and checksummed ([`fieldstore_core::codec`]). A reader skips a
//! record torn by a crash and resynchronises on the next one, but reports a damaged one (by
//! file and byte) rather than answer from the records before it ([`looks_torn`] tells them
//! apart).
//!
//! Order. Each index record carries a **claim**: the TOC's size when its writer began the
//! flush. Readers order records by (claim, position in the TOC), newest last. A flush that
//! began after another returned claims more than the other's position, so it comes later
//! whichever was appended first; this is what lets a record lost in a crash be appended
//! again later (a **recovered record**, carrying its segment inline) in its original place
//! in the order.
//!
//! An index segment is one frame in a writer's own index file: the URI table of the data
//! files it points into, then its entries sorted by element key (values joined by `,`), so a
//! point query is a binary search.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::fs::File;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use fieldstore_core::error::{Error, ErrorKind, IoContext, Result};
use fieldstore_core::{FieldLocation, IndexInfo, Key};

use fieldstore_core::codec::{self, frame, next_magic, parse_frame, Decoder, Encoder, Frame};
use fieldstore_core::indexing::{apply_overlay, decode_summary, encode_overlay, encode_summary, Interner, PendingIndex};

/// The magic of every frame in a TOC file.
pub const TOC_MAGIC: &[u8; 4] = b"FSTC";
/// The magic of every segment frame in an index file.
pub const INDEX_MAGIC: &[u8; 4] = b"FSIX";
const KIND_MASK: u8 = 2;
const KIND_IDENTITY: u8 = 3;
/// An index record: claim, place, summary.
const KIND_INDEX: u8 = 4;
/// A recovered index record: an index record, then its segment frame.
const KIND_RECOVERED: u8 = 5;
/// The index records of one flush in one frame (each as its length u32 and its payload; no
/// frame inside, which a reader resynchronising after damage could take for a record): a
/// power loss that cuts the TOC's last write short takes all of them, never some.
const KIND_BATCH: u8 = 6;
/// An overlay record: another data set's key, and whether it is shown from then on.
const KIND_OVERLAY: u8 = 7;
const KIND_SEGMENT: u8 = 1;

/// The payload of an index record: the claim, where its segment is, then its summary
/// ([`fieldstore_core::indexing::encode_summary`]).
pub fn index_record(claim: u64, place: &SegmentPlace, index: &PendingIndex) -> Vec<u8> {
    let mut e = Encoder::new();
    e.u64(claim);
    e.str(&place.file);
    e.u64(place.offset);
    e.u64(place.length);
    encode_summary(&mut e, index);
    e.buf
}

/// The TOC frame of an index record.
pub fn index_frame(record: &[u8]) -> Vec<u8> {
    frame(TOC_MAGIC, KIND_INDEX, record)
}

/// The TOC frame of one flush's index records: one record's own, or a batch of several.
pub fn flush_frame(records: &[Vec<u8>]) -> Vec<u8> {
    match records {
        [] => Vec::new(),
        [record] => index_frame(record),
        _ => {
            let mut e = Encoder::new();
            for record in records {
                e.u32(record.len() as u32);
                e.buf.extend_from_slice(record);
            }
            frame(TOC_MAGIC, KIND_BATCH, &e.buf)
        }
    }
}

/// The TOC frame of a recovered index record: the record and its segment's frame, so the
/// record needs no index file.
pub fn recovered_frame(record: &[u8], segment: &[u8]) -> Vec<u8> {
    let mut e = Encoder::new();
    e.u32(record.len() as u32);
    e.buf.extend_from_slice(record);
    e.buf.extend_from_slice(segment);
    frame(TOC_MAGIC, KIND_RECOVERED, &e.buf)
}

/// Decodes an index record straight into the summary readers share and the place of its
/// segment (nothing is decoded twice).
fn decode_index(payload: &[u8], shared: &mut Interner) -> Option<(u64, SegmentPlace, IndexInfo)> {
    let mut d = Decoder::new(payload);
    let claim = d.u64()?;
    let place = SegmentPlace::decode(&mut d)?;
    let info = decode_summary(&mut d, shared, place.id())?;
    d.finished().then_some((claim, place, info))
}

/// Where the segment of an encoded index record is.
pub fn record_place(record: &[u8]) -> Option<SegmentPlace> {
    let mut d = Decoder::new(record);
    d.u64()?;
    SegmentPlace::decode(&mut d)
}

/// Where an index segment is: a file of the dataset directory and a byte range.
#[derive(Clone, Debug, PartialEq)]
pub struct SegmentPlace {
    /// The index file's name in the dataset directory.
    pub file: String,
    /// Where the segment's frame starts in the file.
    pub offset: u64,
    /// The frame's size in bytes.
    pub length: u64,
}

impl SegmentPlace {
    /// Reads a place as index records hold it: file name, offset, length.
    fn decode(d: &mut Decoder) -> Option<SegmentPlace> {
        Some(SegmentPlace { file: d.str()?.to_string(), offset: d.u64()?, length: d.u64()? })
    }

    /// The index id readers use (`file@offset`).
    pub fn id(&self) -> String {
        format!("{}@{}", self.file, self.offset)
    }
}

/// A writer's commit for one flush of one dataset, which the store makes durable with the
/// data: the name of the writer's marker, then each index record with its segment's frame.
/// The marker ties the commit to this writer in this incarnation of the data set: recovery
/// takes only commits whose marker it finds (`crate::writers`), never those of a writer of
/// the same process that wrote into a wiped incarnation whose data files were left behind.
pub fn encode_commit(marker: &str, parts: &[(Vec<u8>, Vec<u8>)]) -> Vec<u8> {
    let mut e = Encoder::new();
    e.str(marker);
    e.u32(parts.len() as u32);
    for (record, segment) in parts {
        e.u32(record.len() as u32);
        e.buf.extend_from_slice(record);
        e.u32(segment.len() as u32);
        e.buf.extend_from_slice(segment);
    }
    e.buf
}

/// A commit's (index record, segment frame) pairs.
pub type CommitParts<'a> = Vec<(&'a [u8], &'a [u8])>;

/// The marker name and the parts of a commit; `None` if it does not decode.
pub fn decode_commit(commit: &[u8]) -> Option<(&str, CommitParts<'_>)> {
    let mut d = Decoder::new(commit);
    let marker = d.str()?;
    let count = d.u32()?;
    let mut parts = Vec::new();
    for _ in 0..count {
        let record = d.u32().and_then(|n| d.bytes(n as usize))?;
        let segment = d.u32().and_then(|n| d.bytes(n as usize))?;
        parts.push((record, segment));
    }
    d.finished().then_some((marker, parts))
}

/// The first record of every TOC: a name no other TOC has. Readers compare it on each
/// refresh, so a TOC that was wiped and created again (even on a reused inode) is re-read.
pub fn identity_frame(unique: &str) -> Vec<u8> {
    frame(TOC_MAGIC, KIND_IDENTITY, unique.as_bytes())
}

/// A mask record: hides the listed index ids.
pub fn mask_frame(ids: &[String]) -> Vec<u8> {
    let mut e = Encoder::new();
    e.strs(ids.iter().map(String::as_str));
    frame(TOC_MAGIC, KIND_MASK, &e.buf)
}

/// An overlay record: data set `source` is shown as part of this one from then on, or (`shown`
/// false) no longer.
pub fn overlay_frame(source: &Key, shown: bool) -> Vec<u8> {
    let mut e = Encoder::new();
    encode_overlay(&mut e, source, shown);
    frame(TOC_MAGIC, KIND_OVERLAY, &e.buf)
}

/// Where a reader finds an index's segment.
#[derive(Clone, Debug)]
pub enum SegmentSource {
    /// In an index file.
    File(SegmentPlace),
    /// In a recovered record, decoded when the TOC was read.
    Inline(Arc<Segment>),
}

/// An index record in the readers' order.
struct Ordered {
    claim: u64,
    position: u64,
    info: Arc<IndexInfo>,
}

/// Incremental reader of a TOC: each `refresh` reads only what was appended since the last.
pub struct TocReader {
    path: PathBuf,
    /// The identity record read first: a TOC starting differently is another TOC (the
    /// dataset was wiped and created again) and is read from the start.
    identity: Option<Vec<u8>>,
    offset: u64,
    sources: HashMap<String, SegmentSource>,
    /// Sorted by (claim, position).
    order: Vec<Ordered>,
    shared: Interner,
    masked: HashSet<String>,
    /// The data sets shown as part of this one ([`overlay_frame`]), oldest first.
    pub overlays: Vec<Key>,
    /// Frames skipped as torn by a crash.
    pub bad_frames: u64,
    /// Records read (each of a batch counts, as FDB5 counts one per flushed index): `stats`
    /// reports them as FDB5's "TOC records".
    pub records: u64,
    /// The last bytes of a torn record at the end of the TOC, left unread by the last refresh
    /// in case they begin the next record's magic: not to be judged again.
    torn_tail: usize,
    /// The TOC was not there at the last refresh (its data set was wiped, or damaged).
    pub missing: bool,
}

impl TocReader {
    /// A reader of the TOC at `path`, which has read nothing yet.
    pub fn new(path: PathBuf) -> Self {
        TocReader {
            path,
            identity: None,
            offset: 0,
            sources: HashMap::new(),
            order: Vec::new(),
            shared: Interner::default(),
            masked: HashSet::new(),
            overlays: Vec::new(),
            bad_frames: 0,
            records: 0,
            torn_tail: 0,
            missing: false,
        }
    }

    /// Reads records appended since the last call. A TOC that vanished (wiped dataset)
    /// reads as empty.
    pub fn refresh(&mut self) -> Result<()> {
        let file = match File::open(&self.path) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                *self = TocReader::new(std::mem::take(&mut self.path));
                self.missing = true;
                return Ok(());
            }
            other => other.ctx("open TOC", &self.path)?,
        };
        self.missing = false;
        let size = file.metadata().ctx("stat TOC", &self.path)?.len();
        if let Some(identity) = &self.identity {
            let mut head = vec![0u8; identity.len()];
            if size < identity.len() as u64 || file.read_exact_at(&mut head, 0).is_err() || head != *identity {
                *self = TocReader::new(std::mem::take(&mut self.path));
            }
        }
        if size <= self.offset {
            return Ok(());
        }
        let mut data = vec![0u8; (size - self.offset) as usize];
        file.read_exact_at(&mut data, self.offset).ctx("read TOC", &self.path)?;
        let consumed = self.parse(&data)?;
        self.offset += consumed as u64;
        Ok(())
    }

    /// Parses frames; returns how many bytes were consumed (an incomplete tail is left).
    fn parse(&mut self, data: &[u8]) -> Result<usize> {
        let mut pos = 0;
        let torn_tail = std::mem::take(&mut self.torn_tail);
        while pos < data.len() {
            match parse_frame(TOC_MAGIC, &data[pos..]) {
                Frame::Valid { kind, payload, size } => {
                    if self.offset == 0 && pos == 0 {
                        self.identity = Some(data[..size].to_vec());
                    }
                    self.apply(kind, payload, self.offset + pos as u64);
                    pos += size;
                }
                Frame::Incomplete => {
                    // A torn frame followed by whole ones is skipped; a frame still being
                    // written at the very end is left for the next refresh.
                    match next_magic(TOC_MAGIC, &data[pos..]) {
                        Some(skip) if matches!(parse_frame(TOC_MAGIC, &data[pos + skip..]), Frame::Valid { .. }) => {
                            self.skip_torn(&data[pos..pos + skip], pos, torn_tail)?;
                            pos += skip;
                        }
                        _ => {
                            // Still only what the last refresh left of a torn record.
                            if pos == 0 {
                                self.torn_tail = torn_tail;
                            }
                            break;
                        }
                    }
                }
                Frame::Bad => match next_magic(TOC_MAGIC, &data[pos..]) {
                    Some(skip) => {
                        self.skip_torn(&data[pos..pos + skip], pos, torn_tail)?;
                        pos += skip;
                    }
                    None => {
                        self.skip_torn(&data[pos..], pos, torn_tail)?;
                        let read = data.len().saturating_sub(3).max(pos);
                        self.torn_tail = data.len() - read;
                        return Ok(read);
                    }
                },
            }
        }
        Ok(pos)
    }

    /// Skips bytes that do not frame a record, at `pos` of what this refresh read: a record
    /// a crash tore is skipped; anything else is damage, reported by file and byte. The first
    /// `torn_tail` bytes read are the end of a torn record the last refresh skipped.
    fn skip_torn(&mut self, region: &[u8], pos: usize, torn_tail: usize) -> Result<()> {
        if pos == 0 && region.len() <= torn_tail {
            return Ok(());
        }
        let start = self.offset + pos as u64;
        if looks_torn(region, start) {
            self.bad_frames += 1;
            return Ok(());
        }
        let end = start + region.len() as u64;
        Err(Error::corrupt(
            "TOC",
            &self.path,
            format!("bytes {start}..{end} are no whole record (a checksum or length that does not match): the data set is damaged, not torn by a crash"),
        ))
    }

    fn apply(&mut self, kind: u8, payload: &[u8], position: u64) {
        let applied = match kind {
            KIND_INDEX => self.add_index(payload, position).map(drop),
            KIND_RECOVERED => self.add_recovered(payload, position),
            KIND_BATCH => self.add_batch(payload, position),
            KIND_MASK => Decoder::new(payload).strs().map(|ids| self.masked.extend(ids)),
            KIND_OVERLAY => apply_overlay(&mut self.overlays, &mut Decoder::new(payload)),
            KIND_IDENTITY => Some(()),
            _ => None,
        };
        match applied {
            // A batch counted its records itself.
            Some(()) if kind != KIND_BATCH => self.records += 1,
            Some(()) => {}
            None => self.bad_frames += 1,
        }
    }

    /// Adds an index record in its place in the order, unless its index is known already
    /// (a record appended again by recovery). Returns the index's id.
    fn add_index(&mut self, record: &[u8], position: u64) -> Option<String> {
        let (claim, place, info) = decode_index(record, &mut self.shared)?;
        let id = info.id.clone();
        if !self.sources.contains_key(&id) {
            self.sources.insert(id.clone(), SegmentSource::File(place));
            // Nearly always the last place: claims grow with the TOC.
            let at = self.order.partition_point(|o| (o.claim, o.position) <= (claim, position));
            self.order.insert(at, Ordered { claim, position, info: Arc::new(info) });
        }
        Some(id)
    }

    /// The index records of a batch, each at its own position inside it.
    fn add_batch(&mut self, payload: &[u8], position: u64) -> Option<()> {
        let mut d = Decoder::new(payload);
        let mut inner = position;
        while !d.finished() {
            let record = d.u32().and_then(|n| d.bytes(n as usize))?;
            self.add_index(record, inner)?;
            inner += 1;
            self.records += 1;
        }
        Some(())
    }

    /// A recovered record's segment replaces any index file copy of it, which the crash
    /// may have damaged.
    fn add_recovered(&mut self, payload: &[u8], position: u64) -> Option<()> {
        let mut d = Decoder::new(payload);
        let length = d.u32()? as usize;
        let record = d.bytes(length)?;
        let segment_frame = &payload[4 + length..];
        let Frame::Valid { kind: KIND_SEGMENT, payload: segment, .. } = parse_frame(INDEX_MAGIC, segment_frame) else { return None };
        let segment = Arc::new(Segment::decode(segment)?);
        let id = self.add_index(record, position)?;
        self.sources.insert(id, SegmentSource::Inline(segment));
        Some(())
    }

    /// Visible indexes, newest first.
    pub fn visible(&self) -> impl Iterator<Item = &Arc<IndexInfo>> {
        self.order.iter().rev().map(|o| &o.info).filter(|i| !self.masked.contains(&i.id))
    }

    /// Where the segment of a visible or masked index is.
    pub fn source(&self, id: &str) -> Option<&SegmentSource> {
        self.sources.get(id)
    }
}

/// Refuses a data set directory holding a TOC that is not fieldstore's: FDB5 names its
/// databases' directories as fieldstore names its data sets', so a root shared with FDB5 (or
/// an FDB5 root given as fieldstore's) holds directories fieldstore must never write into.
pub fn refuse_foreign(dir: &Path) -> Result<()> {
    let mut magic = [0u8; 4];
    match std::fs::File::open(dir.join("toc")) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(Error::io("open TOC", dir.join("toc"), e)),
        Ok(mut file) => {
            if std::io::Read::read_exact(&mut file, &mut magic).is_ok() && magic == *TOC_MAGIC {
                return Ok(());
            }
        }
    }
    Err(Error::new(
        ErrorKind::Conflict,
        format!(
            "{} holds a TOC that is not fieldstore's (an FDB5 database?): fieldstore writes nothing there; give fieldstore a root \
         of its own (an FDB5 config puts it in the root's subdirectory 'fieldstore')",
            dir.display()
        ),
    ))
}

/// Whether bytes that frame no record, starting at byte `start` of a TOC, are what a crash
/// leaves of a record appended but not written out: blocks the file system had not written
/// read as zeros, so the bytes are zeros, or are zeros from a 512-byte boundary on; or the
/// file's size was written up to a block boundary inside the record (even inside its
/// header), so the record is cut short there and later appends follow; or blocks inside it
/// read as zeros while later ones were written (a hole). A record damaged later (a flipped
/// bit) is whole and looks like none of these, unless its own last bytes are zeros across a
/// 512-byte boundary (records end in a field count: a chance of about one in 70). A block a
/// failing disk returns as zeros looks like a hole, and is skipped as one.
pub fn looks_torn(region: &[u8], start: u64) -> bool {
    const BLOCK: u64 = 512;
    let nonzero_end = region.iter().rposition(|b| *b != 0).map_or(0, |i| i + 1);
    let end = start + region.len() as u64;
    let zeros_from_boundary = (start + nonzero_end as u64).div_ceil(BLOCK) * BLOCK < end;
    let declared = (region.len() >= 8 && region[..4] == TOC_MAGIC[..])
        .then(|| codec::HEADER + u32::from_le_bytes(region[4..8].try_into().expect("4 bytes")) as usize);
    // Cut inside its header, or after it, before the length it declares.
    let cut_header = region.len() < codec::HEADER && TOC_MAGIC.starts_with(&region[..region.len().min(4)]);
    let cut_at_boundary = (cut_header || declared.is_some_and(|size| size > region.len())) && end.is_multiple_of(BLOCK);
    nonzero_end == 0 || zeros_from_boundary || cut_at_boundary || has_unwritten_block(region, start)
}

/// Whether a block of the file inside `region` (at byte `start` of it) reads as zeros: one
/// the file system had not written when the power went, whatever it wrote after it. Only a
/// whole 512-byte block counts, or the region's first bytes up to a boundary, which hold a
/// record's magic: a flipped bit makes neither.
fn has_unwritten_block(region: &[u8], start: u64) -> bool {
    const BLOCK: usize = 512;
    let first_boundary = ((BLOCK as u64 - start % BLOCK as u64) % BLOCK as u64) as usize;
    let head_lost = first_boundary > 0 && region.len() >= first_boundary && region[..first_boundary].iter().all(|b| *b == 0);
    head_lost || region.get(first_boundary..).is_some_and(|rest| rest.chunks_exact(BLOCK).any(|block| block.iter().all(|b| *b == 0)))
}

/// Encodes an index segment from entries sorted by element values.
pub fn encode_segment(entries: &BTreeMap<String, FieldLocation>) -> Vec<u8> {
    let mut uris: Vec<&str> = Vec::new();
    let mut uri_ids: HashMap<&str, u32> = HashMap::new();
    for loc in entries.values() {
        uri_ids.entry(&loc.uri).or_insert_with(|| {
            uris.push(&loc.uri);
            (uris.len() - 1) as u32
        });
    }
    let mut e = Encoder::new();
    e.strs(uris.iter().copied());
    e.u64(entries.len() as u64);
    for (key, loc) in entries {
        e.str(key);
        e.u32(uri_ids[&*loc.uri]);
        e.u64(loc.offset);
        e.u64(loc.length);
        e.u32(loc.recorded_crc32c());
    }
    frame(INDEX_MAGIC, KIND_SEGMENT, &e.buf)
}

/// The bytes at a segment's place, unchecked.
pub fn read_place(dir: &Path, record: &SegmentPlace) -> Result<Vec<u8>> {
    if record.file.contains('/') || record.file.starts_with('.') {
        return Err(Error::corrupt("TOC record", dir.join("toc"), format!("bad index file name {:?}", record.file)));
    }
    let path = dir.join(&record.file);
    let file = File::open(&path).ctx("open index file", &path)?;
    // The place is checked against the file before anything is allocated: a damaged or
    // crafted record may name any length.
    let size = file.metadata().ctx("stat index file", &path)?.len();
    if record.offset.checked_add(record.length).is_none_or(|end| end > size) {
        let place = format!("segment of {} bytes at offset {}", record.length, record.offset);
        return Err(Error::corrupt("index file", &path, format!("{place} lies past the file's end ({size} bytes)")));
    }
    let mut data = vec![0u8; record.length as usize];
    file.read_exact_at(&mut data, record.offset)
        .map_err(|e| Error::corrupt_because("index file", &path, format!("segment at offset {} unreadable", record.offset), e))?;
    Ok(data)
}

/// A loaded index segment: sorted element values -> location.
#[derive(Debug)]
pub struct Segment {
    uris: Vec<Arc<str>>,
    entries: Vec<(String, u32, u64, u64, u32)>,
}

impl Segment {
    /// Reads and checks the segment at a place.
    pub fn load(dir: &Path, record: &SegmentPlace) -> Result<Segment> {
        let path = dir.join(&record.file);
        let data = read_place(dir, record)?;
        Segment::from_frame(&data).map_err(|why| Error::corrupt("index segment", &path, format!("{why} at offset {}", record.offset)))
    }

    /// Checks and decodes a segment's frame; the error says what is wrong with it.
    pub fn from_frame(data: &[u8]) -> std::result::Result<Segment, &'static str> {
        let Frame::Valid { kind: KIND_SEGMENT, payload, .. } = parse_frame(INDEX_MAGIC, data) else {
            return Err("checksum or framing error");
        };
        Segment::decode(payload).ok_or("undecodable segment")
    }

    fn decode(payload: &[u8]) -> Option<Segment> {
        let mut d = Decoder::new(payload);
        let uris: Vec<Arc<str>> = d.strs()?.into_iter().map(Arc::from).collect();
        let n = d.u64()? as usize;
        let mut entries = Vec::with_capacity(n.min(1 << 20));
        for _ in 0..n {
            let key = d.str()?.to_string();
            let (uri, offset, length, crc) = (d.u32()?, d.u64()?, d.u64()?, d.u32()?);
            if uri as usize >= uris.len() {
                return None;
            }
            entries.push((key, uri, offset, length, crc));
        }
        let sorted = entries.windows(2).all(|w| w[0].0 < w[1].0);
        (d.finished() && sorted).then_some(Segment { uris, entries })
    }

    fn location(&self, i: usize) -> FieldLocation {
        let (_, uri, offset, length, crc32c) = &self.entries[i];
        FieldLocation { uri: self.uris[*uri as usize].clone(), offset: *offset, length: *length, crc32c: Some(*crc32c) }
    }

    /// The location of the field whose element values (joined by `,`) are `values`.
    pub fn lookup(&self, values: &str) -> Option<FieldLocation> {
        self.entries.binary_search_by(|e| e.0.as_str().cmp(values)).ok().map(|i| self.location(i))
    }

    /// Every entry's element values (joined by `,`) and location, in sorted order.
    pub fn entries(&self) -> impl Iterator<Item = (&str, FieldLocation)> + '_ {
        (0..self.entries.len()).map(|i| (self.entries[i].0.as_str(), self.location(i)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use fieldstore_core::indexing::PendingIndexes;
    use fieldstore_core::Key;

    /// The TOC record of an index file's segment (two fields), claiming 0.
    fn record(file: &str, offset: u64) -> Vec<u8> {
        claimed(file, offset, 0)
    }

    /// The TOC record of an index file's segment (two fields), claiming `claim`.
    fn claimed(file: &str, offset: u64, claim: u64) -> Vec<u8> {
        index_frame(&record_payload(file, offset, claim))
    }

    fn record_payload(file: &str, offset: u64, claim: u64) -> Vec<u8> {
        let mut index = PendingIndexes::default();
        let colloc = Key::from_pairs([("type", "fc"), ("levtype", "sfc")]);
        let location = FieldLocation { uri: "d".into(), offset: 0, length: 1, crc32c: None };
        index.insert(&colloc, &Key::from_pairs([("step", "0"), ("param", "130")]), location.clone());
        index.insert(&colloc, &Key::from_pairs([("step", "6"), ("param", "130")]), location);
        let record = index_record(claim, &SegmentPlace { file: file.into(), offset, length: 10 }, index.iter().next().unwrap());
        record
    }

    #[test]
    fn damaged_records_are_reported_by_byte_not_skipped() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("toc");
        let (a, b) = (record("a", 0), record("b", 5));
        for (place, damaged_tail) in [(20, false), (a.len() / 2, true)] {
            // A flipped bit in the middle of the TOC, and in its newest record.
            let mut bytes = a.clone();
            let mut flipped = b.clone();
            flipped[place] ^= 0x10;
            bytes.extend_from_slice(&flipped);
            if !damaged_tail {
                bytes.extend_from_slice(&a);
            }
            std::fs::write(&path, &bytes).unwrap();
            let err = TocReader::new(path.clone()).refresh().unwrap_err().to_string();
            let start = a.len();
            assert!(err.contains(&format!("bytes {start}..")) && err.contains("toc") && err.contains("damaged"), "{err}");
        }
    }

    #[test]
    fn torn_records_are_skipped_and_later_ones_read() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("toc");
        let (a, b, c) = (record("a", 0), record("b", 5), record("c", 9));
        let mut bytes = a.clone();
        // Masks of nothing bring the next record's start near a 512-byte boundary.
        let near_boundary = |bytes: &mut Vec<u8>| {
            while !(14..b.len()).contains(&(512 - bytes.len() % 512)) {
                bytes.extend_from_slice(&mask_frame(&["nothing".into()]));
            }
            512 - bytes.len() % 512
        };
        // Torn by a crash: the blocks not written read as zeros from a boundary on...
        let boundary = near_boundary(&mut bytes);
        let mut zeroed = b.clone();
        zeroed[boundary..].fill(0);
        bytes.extend_from_slice(&zeroed);
        // ... or the size was written up to a block boundary inside the record.
        let cut = near_boundary(&mut bytes);
        assert!(cut < b.len() && cut > 13, "the cut falls inside the record's payload");
        bytes.extend_from_slice(&b[..cut]);
        assert_eq!(bytes.len() % 512, 0);
        bytes.extend_from_slice(&c);
        bytes.extend_from_slice(&mask_frame(&["a@0".into()]));
        std::fs::write(&path, &bytes).unwrap();
        let mut toc = TocReader::new(path.clone());
        toc.refresh().unwrap();
        let ids: Vec<String> = toc.visible().map(|r| r.id.clone()).collect();
        assert_eq!(ids, ["c@9"]);
        assert_eq!(toc.bad_frames, 2);
        // Appends after the first read are picked up incrementally.
        let mut more = std::fs::OpenOptions::new().append(true).open(&path).unwrap();
        std::io::Write::write_all(&mut more, &record("d", 1)).unwrap();
        toc.refresh().unwrap();
        assert_eq!(toc.visible().next().unwrap().id, "d@1");
        let Some(SegmentSource::File(place)) = toc.source("c@9") else { panic!("c@9 is in an index file") };
        assert_eq!(place, &SegmentPlace { file: "c".into(), offset: 9, length: 10 });
    }

    /// Appends a mask frame sized so that the next record starts `before` bytes before a
    /// 512-byte boundary.
    fn pad_to(bytes: &mut Vec<u8>, before: usize) {
        let base = mask_frame(&["x".into()]).len();
        let need = (2 * 512 - before - (bytes.len() + base) % 512) % 512;
        bytes.extend_from_slice(&mask_frame(&["x".repeat(1 + need)]));
        assert_eq!(512 - bytes.len() % 512, before);
    }

    fn visible_after_reading(bytes: &[u8]) -> Result<(Vec<String>, u64)> {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("toc"), bytes).unwrap();
        let mut toc = TocReader::new(dir.path().join("toc"));
        toc.refresh()?;
        // Read again, as readers do: what it left unread at the end is judged again.
        toc.refresh()?;
        Ok((toc.visible().map(|r| r.id.clone()).collect(), toc.bad_frames))
    }

    #[test]
    fn a_record_cut_inside_its_header_at_a_block_boundary_is_torn() {
        let (a, b, c) = (record("a", 0), record("b", 5), record("c", 9));
        for cut in [1, 5, 12] {
            let mut bytes = a.clone();
            pad_to(&mut bytes, cut);
            bytes.extend_from_slice(&b[..cut]);
            bytes.extend_from_slice(&c);
            assert_eq!(visible_after_reading(&bytes).unwrap(), (vec!["c@9".to_string(), "a@0".to_string()], 1), "cut after {cut} bytes");
        }
    }

    #[test]
    fn a_flush_record_with_a_block_never_written_is_torn_and_a_flipped_bit_is_not() {
        let batch = flush_frame(&(0..40).map(|i| record_payload(&format!("f{i}"), i, 0)).collect::<Vec<_>>());
        let later = record("d", 1);
        let mut base = record("a", 0);
        pad_to(&mut base, 100);
        let at = base.len();
        assert!(batch.len() > 100 + 2 * 512, "the batch spans a whole block");
        // Its first bytes up to a boundary (its magic), or a whole block inside it, read as
        // zeros: with a later record after it, and as the TOC's last bytes.
        for hole in [0..100, 100..612] {
            let mut holed = batch.clone();
            holed[hole.clone()].fill(0);
            for tail in [&later[..], &[]] {
                let bytes = [&base[..], &holed, tail].concat();
                let (ids, bad) = visible_after_reading(&bytes).unwrap();
                assert_eq!(ids.first().map(String::as_str), Some(if tail.is_empty() { "a@0" } else { "d@1" }), "hole {hole:?}");
                assert!(!ids.iter().any(|id| id.starts_with('f')) && bad == 1, "hole {hole:?}: {ids:?}");
            }
        }
        // Zeros that fill no whole block, or a flipped bit, are damage.
        for (place, value) in [(300, 0u8), (700, 0x55)] {
            let mut damaged = batch.clone();
            damaged[place..place + 8].fill(value);
            damaged[place] ^= 1;
            let err = visible_after_reading(&[&base[..], &damaged, &later].concat()).unwrap_err().to_string();
            assert!(err.contains(&format!("bytes {at}..")) && err.contains("damaged"), "{err}");
        }
    }

    #[test]
    fn a_torn_last_record_ending_like_a_magic_stays_torn_across_refreshes() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("toc");
        let mut base = record("a", 0);
        pad_to(&mut base, 100);
        // A flush's records with a block never written, whose last bytes begin a magic.
        let mut torn = flush_frame(&(0..40).map(|i| record_payload(&format!("f{i}"), i, 0)).collect::<Vec<_>>());
        torn[100..612].fill(0);
        let n = torn.len();
        torn[n - 3..].copy_from_slice(&TOC_MAGIC[..3]);
        std::fs::write(&path, [&base[..], &torn].concat()).unwrap();
        let mut toc = TocReader::new(path.clone());
        toc.refresh().unwrap();
        toc.refresh().unwrap(); // nothing new: only the torn record's last bytes, a magic's start
        let mut more = std::fs::OpenOptions::new().append(true).open(&path).unwrap();
        std::io::Write::write_all(&mut more, &record("d", 1)).unwrap();
        toc.refresh().unwrap();
        let ids: Vec<String> = toc.visible().map(|r| r.id.clone()).collect();
        assert_eq!(ids, ["d@1", "a@0"]);
    }

    #[test]
    fn records_are_read_in_the_order_of_their_claims_and_a_recovered_one_takes_its_place() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("toc");
        // "b" began its flush after "a" returned; "c" was lost in a crash and appended again
        // by recovery after "b", with the claim it had before "b" began.
        let mut bytes = identity_frame("t");
        let a = claimed("a", 0, bytes.len() as u64);
        bytes.extend_from_slice(&a);
        let b_claim = bytes.len() as u64 + 100;
        bytes.extend_from_slice(&claimed("b", 0, b_claim));
        let segment =
            encode_segment(&BTreeMap::from([("0,130".to_string(), FieldLocation { uri: "d".into(), offset: 0, length: 1, crc32c: None })]));
        bytes.extend_from_slice(&recovered_frame(&record_payload("c", 0, b_claim - 1), &segment));
        std::fs::write(&path, &bytes).unwrap();
        let mut toc = TocReader::new(path);
        toc.refresh().unwrap();
        let ids: Vec<String> = toc.visible().map(|i| i.id.clone()).collect();
        assert_eq!(ids, ["b@0", "c@0", "a@0"]);
        assert!(matches!(toc.source("c@0"), Some(SegmentSource::Inline(_))));
        assert_eq!(toc.bad_frames, 0);
    }

    #[test]
    fn a_toc_created_again_at_the_same_path_is_read_from_the_start() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("toc");
        let mut first = identity_frame("one");
        first.extend_from_slice(&record("a", 0));
        first.extend_from_slice(&record("b", 0));
        std::fs::write(&path, &first).unwrap();
        let mut toc = TocReader::new(path.clone());
        toc.refresh().unwrap();
        assert_eq!(toc.visible().count(), 2);
        // Same length prefix, different identity: must not be parsed from the old offset.
        let mut second = identity_frame("two");
        second.extend_from_slice(&record("c", 0));
        second.extend_from_slice(&record("d", 0));
        second.extend_from_slice(&record("e", 0));
        std::fs::write(&path, &second).unwrap();
        toc.refresh().unwrap();
        let ids: Vec<String> = toc.visible().map(|i| i.id.clone()).collect();
        assert_eq!(ids, ["e@0", "d@0", "c@0"]);
        assert_eq!(toc.bad_frames, 0);
    }

    #[test]
    fn an_incomplete_tail_waits_for_the_rest() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("toc");
        let a = record("a", 0);
        std::fs::write(&path, &a[..a.len() - 4]).unwrap();
        let mut toc = TocReader::new(path.clone());
        toc.refresh().unwrap();
        assert_eq!(toc.visible().count(), 0);
        std::fs::write(&path, &a).unwrap();
        toc.refresh().unwrap();
        assert_eq!(toc.visible().count(), 1);
        assert_eq!(toc.bad_frames, 0);
    }

    #[test]
    fn segments_round_trip_and_detect_corruption() {
        let dir = tempfile::tempdir().unwrap();
        let loc = |o| FieldLocation { uri: "ds/f.data".into(), offset: o, length: 3, crc32c: Some(7) };
        let entries: BTreeMap<String, FieldLocation> = [("0,130".to_string(), loc(0)), ("6,130".to_string(), loc(3))].into();
        let seg = encode_segment(&entries);
        std::fs::write(dir.path().join("x.index"), &seg).unwrap();
        let rec = SegmentPlace { file: "x.index".into(), offset: 0, length: seg.len() as u64 };
        let s = Segment::load(dir.path(), &rec).unwrap();
        assert_eq!(s.lookup("6,130"), Some(loc(3)));
        assert_eq!(s.lookup("12,130"), None);
        assert_eq!(s.entries().count(), 2);
        let mut bad = seg.clone();
        bad[30] ^= 1;
        std::fs::write(dir.path().join("x.index"), &bad).unwrap();
        assert!(Segment::load(dir.path(), &rec).unwrap_err().to_string().contains("corrupt index segment"));
        std::fs::write(dir.path().join("x.index"), &seg[..10]).unwrap();
        assert!(Segment::load(dir.path(), &rec).is_err());
    }
}
