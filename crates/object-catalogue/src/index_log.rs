//! The log of the object-store catalogues (RADOS, DAOS, S3): each dataset has an append-only
//! list of records, each naming an immutable index object with its summary, masking indexes,
//! putting a compacted index in the place of several, or showing another data set as part of
//! this one (an overlay). The backends differ in how they
//! append atomically and store index objects; the records, what a reader makes of them, and
//! the encoding of index entries are the same, and live here.
//!
//! Compaction never changes what a reader sees (docs/consistency.md, "Compaction"): a
//! compaction record takes effect only where its indexes are all visible and follow one
//! another among the indexes of their collocation, so that the compacted index, holding their
//! entries (disjoint: no element in two of them), stands where the newest of them stood; and
//! a mask naming an index a compaction replaced (written by a purge or wipe that read the log
//! before the compaction) undoes that compaction first, as if it had never been.

use std::collections::{BTreeSet, HashMap, HashSet};
use std::sync::Arc;

use fieldstore_core::codec::{frame, parse_frame, Decoder, Encoder, Frame};
use fieldstore_core::error::Result;
use fieldstore_core::indexing::{apply_overlay, decode_summary, encode_overlay, encode_summary, Interner, PendingIndex};
use fieldstore_core::{FieldLocation, IndexInfo, Key};

const KIND_INDEX: u8 = 1;
const KIND_MASK: u8 = 2;
const KIND_COMPACT: u8 = 3;
/// An overlay record: another data set shown as part of this one, or no longer.
const KIND_OVERLAY: u8 = 4;

/// Whether a data set's catalogue objects (index objects and entries, log batches) are
/// written in a frame with their CRC-32C, which readers check: a changed byte is damage
/// reported by name, never a field that vanishes from a listing. Readers tell the two apart
/// by the frame's magic, which no unframed object starts with (its first four bytes are a
/// count or a length, which would be hundreds of millions), and a changed byte in the magic
/// leaves bytes that decode as nothing.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Sealing {
    /// As formats before checksums wrote them (a data set of such a format is written on so,
    /// for the fieldstore versions that read it).
    Plain,
    /// In a frame with a CRC-32C.
    Checksummed,
}

/// The magic of a framed index object.
const INDEX_MAGIC: &[u8; 4] = b"FSIX";
/// The magic of a framed log batch.
const BATCH_MAGIC: &[u8; 4] = b"FSLB";
/// The magic of a framed index entry (a RADOS omap value, whose frame also holds its key).
const ENTRY_MAGIC: &[u8; 4] = b"FSIE";
/// The kind of every frame here (the magic says what it holds).
const FRAMED: u8 = 0;

/// Why a catalogue object cannot be read.
pub const CHECKSUM_MISMATCH: &str = "checksum mismatch (damaged)";
/// Why a catalogue object cannot be read.
pub const UNDECODABLE: &str = "undecodable";

/// `payload` in a frame of `magic` when `sealing` says so.
fn sealed(magic: &[u8; 4], payload: Vec<u8>, sealing: Sealing) -> Vec<u8> {
    match sealing {
        Sealing::Plain => payload,
        Sealing::Checksummed => frame(magic, FRAMED, &payload),
    }
}

/// The payload of the frame of `magic` at the start of `data`, checked, and the frame's size.
fn unsealed<'a>(magic: &[u8; 4], data: &'a [u8]) -> std::result::Result<(&'a [u8], usize), &'static str> {
    match parse_frame(magic, data) {
        Frame::Valid { kind: FRAMED, payload, size } => Ok((payload, size)),
        Frame::Valid { .. } | Frame::Bad => Err(CHECKSUM_MISMATCH),
        Frame::Incomplete => Err("cut short"),
    }
}

/// A record publishing index object `id` with the summary of `index`.
pub fn index_record(id: &str, index: &PendingIndex) -> Vec<u8> {
    let mut e = Encoder::new();
    e.buf.push(KIND_INDEX);
    e.str(id);
    encode_summary(&mut e, index);
    e.buf
}

/// A record hiding indexes from every reader.
pub fn mask_record<'a>(ids: impl ExactSizeIterator<Item = &'a str>) -> Vec<u8> {
    let mut e = Encoder::new();
    e.buf.push(KIND_MASK);
    e.strs(ids);
    e.buf
}

/// A record putting index object `id`, holding the entries of the indexes `replaced` (no
/// element in two of them) summarised by `index`, in their place.
pub fn compact_record<'a>(id: &str, index: &PendingIndex, replaced: impl ExactSizeIterator<Item = &'a str>) -> Vec<u8> {
    let mut e = Encoder::new();
    e.buf.push(KIND_COMPACT);
    e.str(id);
    encode_summary(&mut e, index);
    e.strs(replaced);
    e.buf
}

/// A record showing data set `source` as part of this one from then on, or (`shown` false) no
/// longer ([`fieldstore_core::backend::Overlays`]).
pub fn overlay_record(source: &Key, shown: bool) -> Vec<u8> {
    let mut e = Encoder::new();
    e.buf.push(KIND_OVERLAY);
    encode_overlay(&mut e, source, shown);
    e.buf
}

/// What a reader has made of a log so far: the visible indexes and the overlays.
#[derive(Default)]
pub struct LogReplay {
    /// Visible indexes, oldest first.
    visible: Vec<Arc<IndexInfo>>,
    masked: HashSet<String>,
    /// Compactions in effect: a compacted index's id -> the indexes it stands for, oldest
    /// first (kept to undo the compaction, and for a wipe).
    compacted: HashMap<String, Vec<Arc<IndexInfo>>>,
    /// An index a compaction in effect replaced -> the compacted index.
    replaced_by: HashMap<String, String>,
    /// Compacted indexes whose records took no effect (for a wipe).
    unused: Vec<String>,
    /// Compacted indexes a mask undid -> the indexes they stood for (a mask naming one then
    /// hides those).
    undone: HashMap<String, Vec<String>>,
    /// The data sets shown as part of this one, oldest first.
    pub overlays: Vec<Key>,
    shared: Interner,
}

impl LogReplay {
    /// Applies the next record; `None` if it cannot be decoded.
    pub fn apply(&mut self, record: &[u8]) -> Option<()> {
        let (&kind, payload) = record.split_first()?;
        let mut d = Decoder::new(payload);
        match kind {
            KIND_INDEX => {
                let id = d.str()?.to_string();
                let info = decode_summary(&mut d, &mut self.shared, id).filter(|_| d.finished())?;
                if !self.masked.contains(&info.id) {
                    self.visible.push(Arc::new(info));
                }
            }
            KIND_MASK => {
                let ids = d.strs().filter(|_| d.finished())?;
                self.mask(ids);
            }
            KIND_COMPACT => {
                let id = d.str()?.to_string();
                let info = decode_summary(&mut d, &mut self.shared, id)?;
                let replaced = d.strs().filter(|_| d.finished())?;
                self.compact(info, &replaced);
            }
            KIND_OVERLAY => apply_overlay(&mut self.overlays, &mut d)?,
            _ => return None,
        }
        Some(())
    }

    /// Hides indexes; a compacted index that was undone hides the indexes it stood for, and
    /// an index a compaction replaced undoes it first (the masker read the log before it),
    /// until neither finds more (one record may name a compaction and what it replaced).
    fn mask(&mut self, ids: Vec<String>) {
        let mut hidden: HashSet<String> = HashSet::new();
        let mut named = ids;
        while !named.is_empty() {
            for id in &named {
                if let Some(compacted) = self.replaced_by.get(id).cloned() {
                    self.undo_compaction(&compacted);
                }
            }
            let mut more = Vec::new();
            for id in named {
                if let Some(stood_for) = self.undone.get(&id) {
                    more.extend(stood_for.iter().filter(|m| !hidden.contains(*m)).cloned());
                }
                hidden.insert(id);
            }
            named = more;
        }
        self.visible.retain(|i| !hidden.contains(&i.id));
        self.masked.extend(hidden);
    }

    /// Every id the records so far named, some more than once: visible, masked, replaced by a
    /// compaction in effect (a compacted index in effect is visible or masked), unused, undone.
    fn named(&self) -> impl Iterator<Item = &str> {
        let stood_for = self.compacted.values().flatten().map(|i| i.id.as_str());
        let named = self.visible.iter().map(|i| i.id.as_str()).chain(self.masked.iter().map(String::as_str)).chain(stood_for);
        named.chain(self.unused.iter().map(String::as_str)).chain(self.undone.keys().map(String::as_str))
    }

    /// Puts `info` in the place of the indexes `replaced` if they are all visible, of its
    /// collocation and element keywords, and no other index of those comes between them;
    /// else the record takes no effect.
    fn compact(&mut self, info: IndexInfo, replaced: &[String]) {
        // An id is never used twice: a record using one again is damage, which takes no effect.
        if self.named().any(|known| known == info.id) {
            return;
        }
        let same_kind = |i: &IndexInfo| i.collocation == info.collocation && i.element_keywords == info.element_keywords;
        let members: HashSet<&str> = replaced.iter().map(String::as_str).collect();
        let positions: Vec<usize> = (0..self.visible.len()).filter(|&p| members.contains(self.visible[p].id.as_str())).collect();
        let whole = members.len() == replaced.len() && positions.len() == members.len() && !members.contains(info.id.as_str());
        let valid = whole
            && positions.iter().all(|&p| same_kind(&self.visible[p]))
            && positions.first().zip(positions.last()).is_some_and(|(&first, &last)| {
                (first..=last).all(|p| members.contains(self.visible[p].id.as_str()) || !same_kind(&self.visible[p]))
            });
        if !valid {
            self.unused.push(info.id);
            return;
        }
        let newest = positions[positions.len() - 1];
        let mut stood_for = Vec::with_capacity(positions.len());
        for &p in positions.iter().rev() {
            stood_for.push(self.visible.remove(p));
        }
        stood_for.reverse();
        let id = info.id.clone();
        self.visible.insert(newest + 1 - positions.len(), Arc::new(info));
        for member in &stood_for {
            self.replaced_by.insert(member.id.clone(), id.clone());
        }
        self.compacted.insert(id, stood_for);
    }

    /// Puts the indexes compacted index `id` stands for back in its place, undoing first the
    /// compactions that replaced it in turn (outermost first). Nothing if it is not visible
    /// then (masked whole).
    fn undo_compaction(&mut self, id: &str) {
        // The chain of compactions from `id` outwards; ids are never reused (`known`), so it
        // ends, but a bound keeps damage from looping.
        let mut chain = vec![id.to_string()];
        while let Some(outer) = self.replaced_by.get(chain.last().map_or("", String::as_str)) {
            if chain.contains(outer) || chain.len() > self.compacted.len() {
                break;
            }
            chain.push(outer.clone());
        }
        for compacted in chain.iter().rev() {
            let Some(position) = self.visible.iter().position(|i| i.id == *compacted) else { return };
            let Some(stood_for) = self.compacted.remove(compacted) else { return };
            for member in &stood_for {
                self.replaced_by.remove(&member.id);
            }
            let ids = stood_for.iter().map(|i| i.id.clone()).collect();
            self.visible.splice(position..=position, stood_for);
            self.undone.insert(compacted.clone(), ids);
        }
    }

    /// The visible indexes, newest first.
    pub fn indexes(&self) -> Vec<Arc<IndexInfo>> {
        self.visible.iter().rev().cloned().collect()
    }

    /// The ids of every index the log named, masked, compacted or not, once each (their
    /// objects, for a wipe).
    pub fn all_ids(&self) -> BTreeSet<&str> {
        self.named().collect()
    }
}

/// A location as stored in an index entry.
pub fn encode_location(location: &FieldLocation) -> Vec<u8> {
    let mut e = Encoder::new();
    e.str(&location.uri);
    e.u64(location.offset);
    e.u64(location.length);
    e.u32(location.recorded_crc32c());
    e.buf
}

/// Reads a location written by [`encode_location`]; `None` if it is malformed.
pub fn decode_location(value: &[u8]) -> Option<FieldLocation> {
    let mut d = Decoder::new(value);
    let location = FieldLocation { uri: d.str()?.into(), offset: d.u64()?, length: d.u64()?, crc32c: Some(d.u32()?) };
    d.finished().then_some(location)
}

/// An index entry stored apart from its index (a RADOS omap value under the key `values`,
/// the element values): its location, in a frame that also holds `values`, so that a changed
/// byte in the key is caught as well as one in the value.
pub fn encode_entry(values: &str, location: &FieldLocation, sealing: Sealing) -> Vec<u8> {
    match sealing {
        Sealing::Plain => encode_location(location),
        Sealing::Checksummed => {
            let mut e = Encoder::new();
            e.str(values);
            e.buf.extend_from_slice(&encode_location(location));
            sealed(ENTRY_MAGIC, e.buf, sealing)
        }
    }
}

/// Reads an entry written by [`encode_entry`] under the key `values`, framed or plain.
pub fn decode_entry(values: &str, value: &[u8]) -> std::result::Result<FieldLocation, &'static str> {
    if !value.starts_with(ENTRY_MAGIC) {
        return decode_location(value).ok_or(UNDECODABLE);
    }
    let (payload, _) = unsealed(ENTRY_MAGIC, value)?;
    let mut d = Decoder::new(payload);
    // The key the frame holds must be the key it is stored under.
    if d.str().ok_or(UNDECODABLE)? != values {
        return Err(CHECKSUM_MISMATCH);
    }
    decode_location(d.rest()).ok_or(UNDECODABLE)
}

/// An index object's entries as a reader loaded them: element values (joined by `,`) and
/// locations, sorted by element values.
pub struct IndexEntries(Vec<(String, FieldLocation)>);

impl IndexEntries {
    /// Entries already sorted by element values (as omaps and [`encode_entries`] keep them).
    pub fn from_sorted(entries: Vec<(String, FieldLocation)>) -> Self {
        debug_assert!(entries.windows(2).all(|w| w[0].0 < w[1].0));
        IndexEntries(entries)
    }

    /// The location of `element` in this index (a binary search); `None` if it has no entry.
    pub fn lookup(&self, element: &Key) -> Option<FieldLocation> {
        let values = element.values_string();
        self.0.binary_search_by(|(k, _)| k.as_str().cmp(&values)).ok().map(|i| self.0[i].1.clone())
    }

    /// The entries: element values and location, sorted by element values.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = &(String, FieldLocation)> {
        self.0.iter()
    }

    /// How many entries there are.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// Whether there is none.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Every entry with its element key (the index's keywords with each entry's values).
    pub fn keyed(&self, index: &IndexInfo) -> Result<Vec<(Key, FieldLocation)>> {
        self.0.iter().map(|(values, loc)| Ok((Key::from_values_string(&index.element_keywords, values)?, loc.clone()))).collect()
    }
}

/// A whole index as one value: count, then element values and location per entry, in the
/// index's (sorted) order; in a frame with its CRC-32C when `sealing` says so.
pub fn encode_entries(index: &PendingIndex, sealing: Sealing) -> Vec<u8> {
    let mut e = Encoder::new();
    e.u32(index.entries.len() as u32);
    for (values, location) in &index.entries {
        e.str(values);
        let location = encode_location(location);
        e.u32(location.len() as u32);
        e.buf.extend_from_slice(&location);
    }
    sealed(INDEX_MAGIC, e.buf, sealing)
}

/// Reads an index written by [`encode_entries`], framed or plain; why not if it is damaged,
/// malformed or not sorted.
pub fn decode_entries(value: &[u8]) -> std::result::Result<IndexEntries, &'static str> {
    let payload = match value.starts_with(INDEX_MAGIC) {
        true => unsealed(INDEX_MAGIC, value)?.0,
        false => value,
    };
    decode_plain_entries(payload).ok_or(UNDECODABLE)
}

fn decode_plain_entries(value: &[u8]) -> Option<IndexEntries> {
    let mut d = Decoder::new(value);
    let count = d.u32()? as usize;
    let mut entries = Vec::with_capacity(count.min(1 << 20));
    for _ in 0..count {
        let values = d.str()?.to_string();
        let length = d.u32()? as usize;
        let location = decode_location(d.bytes(length)?)?;
        entries.push((values, location));
    }
    let sorted = entries.windows(2).all(|w| w[0].0 < w[1].0);
    (d.finished() && sorted).then_some(IndexEntries(entries))
}

/// Records that must be published together, as one value (for stores whose atomic unit is a
/// single value); in a frame with its CRC-32C when `sealing` says so.
pub fn encode_batch(records: &[Vec<u8>], sealing: Sealing) -> Vec<u8> {
    let mut e = Encoder::new();
    e.u32(records.len() as u32);
    for record in records {
        e.u32(record.len() as u32);
        e.buf.extend_from_slice(record);
    }
    sealed(BATCH_MAGIC, e.buf, sealing)
}

/// The records of a value made by [`encode_batch`], framed or plain; why not unless it is
/// exactly one whole, undamaged batch.
pub fn decode_batch(value: &[u8]) -> std::result::Result<Vec<&[u8]>, &'static str> {
    let (records, rest) = split_batch(value)?;
    if rest.is_empty() {
        Ok(records)
    } else {
        Err(UNDECODABLE)
    }
}

/// The records of the batch at the start of `data` (batches appended one after another, as
/// to a log), framed or plain, and what follows it; why not if `data` does not start with a
/// whole, undamaged batch.
pub fn split_batch(data: &[u8]) -> std::result::Result<(Vec<&[u8]>, &[u8]), &'static str> {
    if !data.starts_with(BATCH_MAGIC) {
        return split_plain_batch(data).ok_or("cut short");
    }
    let (payload, size) = unsealed(BATCH_MAGIC, data)?;
    // A frame holds exactly one batch.
    match split_plain_batch(payload) {
        Some((records, [])) => Ok((records, &data[size..])),
        _ => Err(UNDECODABLE),
    }
}

fn split_plain_batch(data: &[u8]) -> Option<(Vec<&[u8]>, &[u8])> {
    let (count, mut rest) = data.split_first_chunk::<4>()?;
    let mut records = Vec::new();
    for _ in 0..u32::from_le_bytes(*count) {
        let (length, tail) = rest.split_first_chunk::<4>()?;
        let (record, tail) = tail.split_at_checked(u32::from_le_bytes(*length) as usize)?;
        records.push(record);
        rest = tail;
    }
    Some((records, rest))
}

#[cfg(test)]
mod tests {
    use super::*;
    use fieldstore_core::indexing::PendingIndexes;
    use fieldstore_core::Key;

    #[test]
    fn replay_shows_published_indexes_newest_first_and_hides_masked_ones() {
        for sealing in [Sealing::Plain, Sealing::Checksummed] {
            let mut pending = PendingIndexes::default();
            let location = FieldLocation { uri: "daos:p/c/1.2".into(), offset: 0, length: 7, crc32c: Some(9) };
            pending.insert(&Key::parse("type=fc").unwrap(), &Key::parse("step=1").unwrap(), location.clone());
            let index = pending.iter().next().unwrap();
            let batch = encode_batch(&[index_record("a", index), index_record("b", index)], sealing);
            let mut replay = LogReplay::default();
            for record in decode_batch(&batch).unwrap() {
                replay.apply(record).unwrap();
            }
            assert_eq!(replay.indexes().iter().map(|i| i.id.as_str()).collect::<Vec<_>>(), ["b", "a"]);
            replay.apply(&mask_record(["b"].into_iter())).unwrap();
            replay.apply(&index_record("b", index)).unwrap();
            assert_eq!(replay.indexes().iter().map(|i| i.id.as_str()).collect::<Vec<_>>(), ["a"], "a masked index stays hidden");
            assert!(replay.apply(&[KIND_INDEX, 1]).is_none(), "a truncated record is refused");
            assert!(decode_batch(&batch[..batch.len() - 1]).is_err());
            let two = [batch.clone(), batch.clone()].concat();
            assert!(decode_batch(&two).is_err(), "two batches are not one");
            let (first, rest) = split_batch(&two).unwrap();
            assert_eq!((first.len(), rest), (2, &batch[..]));
            assert!(split_batch(&batch[..batch.len() - 1]).is_err());
            assert_eq!(decode_location(&encode_location(&location)), Some(location.clone()));
            assert_eq!(decode_entry("1", &encode_entry("1", &location, sealing)), Ok(location.clone()));
            let entries = decode_entries(&encode_entries(index, sealing)).unwrap();
            assert_eq!(entries.lookup(&Key::parse("step=1").unwrap()), Some(location));
            assert_eq!(entries.lookup(&Key::parse("step=2").unwrap()), None);
            assert!(decode_entries(&encode_entries(index, sealing)[1..]).is_err());
        }
    }

    /// Every catalogue object written with checksums is damage, by name, after any one of its
    /// bytes changed: never a batch, an index or an entry that reads as another (S3's index
    /// objects had no checksum: a field vanished from `list`).
    #[test]
    fn a_changed_byte_in_a_checksummed_object_is_always_caught() {
        let index = index("fc", &[0, 6, 12]);
        let batch = encode_batch(&[index_record("a", &index), mask_record(["b"].into_iter())], Sealing::Checksummed);
        let entries = encode_entries(&index, Sealing::Checksummed);
        let (values, location) = index.entries.iter().next().unwrap();
        let entry = encode_entry(values, location, Sealing::Checksummed);
        for flip in [0x01u8, 0x04, 0x80, 0xff] {
            for at in 0..batch.len() {
                let mut damaged = batch.clone();
                damaged[at] ^= flip;
                assert!(decode_batch(&damaged).is_err(), "batch byte {at} ^ {flip:#x}");
                assert!(split_batch(&[damaged, batch.clone()].concat()).is_err(), "log batch byte {at} ^ {flip:#x}");
            }
            for at in 0..entries.len() {
                let mut damaged = entries.clone();
                damaged[at] ^= flip;
                assert!(decode_entries(&damaged).is_err(), "index byte {at} ^ {flip:#x}");
            }
            for at in 0..entry.len() {
                let mut damaged = entry.clone();
                damaged[at] ^= flip;
                assert!(decode_entry(values, &damaged).is_err(), "entry byte {at} ^ {flip:#x}");
            }
            let mut other_key = values.clone().into_bytes();
            other_key[0] ^= flip;
            assert!(decode_entry(std::str::from_utf8(&other_key).unwrap_or("?"), &entry).is_err(), "a changed key ^ {flip:#x}");
        }
    }

    /// An index of collocation `type=TYPE` holding steps `steps`.
    fn index(kind: &str, steps: &[u32]) -> PendingIndex {
        let location = |step: &u32| FieldLocation { uri: format!("s3:b/{kind}/{step}").into(), offset: 0, length: 1, crc32c: None };
        PendingIndex {
            collocation: Key::parse(&format!("type={kind}")).unwrap(),
            element_keywords: vec!["step".into()],
            entries: steps.iter().map(|step| (step.to_string(), location(step))).collect(),
        }
    }

    fn replayed(records: &[Vec<u8>]) -> LogReplay {
        let mut replay = LogReplay::default();
        for record in records {
            replay.apply(record).unwrap();
        }
        replay
    }

    fn ids(replay: &LogReplay) -> Vec<String> {
        replay.indexes().iter().map(|i| i.id.clone()).collect()
    }

    fn compaction(id: &str, kind: &str, steps: &[u32], replaced: &[&str]) -> Vec<u8> {
        compact_record(id, &index(kind, steps), replaced.iter().copied())
    }

    #[test]
    fn a_compacted_index_stands_where_the_newest_it_replaced_stood() {
        let log = [
            index_record("a", &index("fc", &[0])),
            index_record("x", &index("an", &[0])),
            index_record("b", &index("fc", &[1])),
            index_record("c", &index("fc", &[2])),
        ];
        let mut records = log.to_vec();
        records.push(compaction("C", "fc", &[0, 1], &["a", "b"]));
        let replay = replayed(&records);
        assert_eq!(ids(&replay), ["c", "C", "x"], "another collocation between them does not matter");
        assert_eq!(replay.indexes()[1].fields, 2);
        assert_eq!(replay.all_ids().into_iter().collect::<Vec<_>>(), ["C", "a", "b", "c", "x"]);
    }

    #[test]
    fn a_compaction_of_indexes_not_all_visible_or_not_adjacent_takes_no_effect() {
        let a = index_record("a", &index("fc", &[0]));
        let b = index_record("b", &index("fc", &[1]));
        let c = index_record("c", &index("fc", &[2]));
        let mask_b = mask_record(["b"].into_iter());
        let not_adjacent = replayed(&[a.clone(), b.clone(), c.clone(), compaction("C", "fc", &[0, 2], &["a", "c"])]);
        assert_eq!(ids(&not_adjacent), ["c", "b", "a"]);
        let masked = replayed(&[a.clone(), b.clone(), mask_b, compaction("C", "fc", &[0, 1], &["a", "b"])]);
        assert_eq!(ids(&masked), ["a"], "a masked field stays hidden");
        let unknown = replayed(&[a.clone(), compaction("C", "fc", &[0, 9], &["a", "z"])]);
        assert_eq!(ids(&unknown), ["a"]);
        let other_kind = replayed(&[a.clone(), b.clone(), compaction("C", "an", &[0, 1], &["a", "b"])]);
        assert_eq!(ids(&other_kind), ["b", "a"]);
        let twice = replayed(&[a, b, compaction("C", "fc", &[0, 1], &["a", "b"]), compaction("D", "fc", &[0, 1], &["a", "b"])]);
        assert_eq!(ids(&twice), ["C"], "of two compactions of the same indexes the first counts");
        assert!(twice.all_ids().contains("D"), "a wipe removes the unused one too");
    }

    #[test]
    fn a_mask_written_before_a_compaction_was_seen_undoes_it() {
        let log = [
            index_record("a", &index("fc", &[0])),
            index_record("b", &index("fc", &[1])),
            compaction("C", "fc", &[0, 1], &["a", "b"]),
            index_record("d", &index("fc", &[2])),
            compaction("E", "fc", &[0, 1, 2], &["C", "d"]),
        ];
        assert_eq!(ids(&replayed(&log)), ["E"]);
        let mut undone = log.to_vec();
        undone.push(mask_record(["a"].into_iter()));
        let replay = replayed(&undone);
        assert_eq!(ids(&replay), ["d", "b"], "both compactions undone, then a hidden");
        assert_eq!(replay.all_ids().into_iter().collect::<Vec<_>>(), ["C", "E", "a", "b", "d"]);
        undone.push(mask_record(["C"].into_iter()));
        assert_eq!(ids(&replayed(&undone)), ["d"], "a mask naming an undone compaction hides what it stood for");
        let mut whole = log.to_vec();
        whole.push(mask_record(["E"].into_iter()));
        whole.push(mask_record(["b"].into_iter()));
        assert!(ids(&replayed(&whole)).is_empty(), "a compaction masked whole stays hidden");
    }

    #[test]
    fn a_record_that_uses_an_id_again_is_damage_that_takes_no_effect() {
        let a = index_record("a", &index("fc", &[0]));
        let b = index_record("b", &index("fc", &[1]));
        let itself = replayed(&[a.clone(), compaction("a", "fc", &[0], &["a"]), mask_record(["a"].into_iter())]);
        assert!(ids(&itself).is_empty());
        let cycle = [a, b, compaction("B", "fc", &[0], &["a"]), compaction("a", "fc", &[0], &["B"]), mask_record(["a"].into_iter())];
        assert_eq!(ids(&replayed(&cycle)), ["b"], "no loop, and a is hidden");
    }

    #[test]
    fn a_mask_naming_a_compaction_and_what_it_replaced_at_once_hides_them_all() {
        let log = [
            index_record("a", &index("fc", &[0])),
            index_record("b", &index("fc", &[1])),
            index_record("c", &index("fc", &[2])),
            compaction("C", "fc", &[0, 1, 2], &["a", "b", "c"]),
        ];
        for mask in [&["C", "a"][..], &["a", "C"][..]] {
            let mut records = log.to_vec();
            records.push(mask_record(mask.iter().copied()));
            assert!(ids(&replayed(&records)).is_empty(), "{mask:?}");
        }
    }
}
