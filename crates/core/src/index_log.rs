//! The log of the object-store catalogues (RADOS, DAOS): each dataset has an append-only list
//! of records, each naming an immutable index object with its summary, or masking indexes.
//! The backends differ in how they append atomically and store index objects; the records,
//! what a reader makes of them, and the encoding of index entries are the same, and live
//! here.

use std::collections::HashSet;
use std::sync::Arc;

use crate::codec::{Decoder, Encoder};
use crate::error::Result;
use crate::indexing::{decode_summary, encode_summary, Interner, PendingIndex};
use crate::{FieldLocation, IndexInfo, Key};

const KIND_INDEX: u8 = 1;
const KIND_MASK: u8 = 2;

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

/// What a reader has made of a log so far: the visible indexes.
#[derive(Default)]
pub struct LogReplay {
    /// Visible indexes, oldest first.
    visible: Vec<Arc<IndexInfo>>,
    masked: HashSet<String>,
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
                self.visible.retain(|i| !ids.contains(&i.id));
                self.masked.extend(ids);
            }
            _ => return None,
        }
        Some(())
    }

    /// The visible indexes, newest first.
    pub fn indexes(&self) -> Vec<Arc<IndexInfo>> {
        self.visible.iter().rev().cloned().collect()
    }

    /// The ids of every index the log named, masked or not (their objects, for a wipe).
    pub fn all_ids(&self) -> impl Iterator<Item = &str> {
        self.visible.iter().map(|i| i.id.as_str()).chain(self.masked.iter().map(String::as_str))
    }
}

/// A location as stored in an index entry.
pub fn encode_location(location: &FieldLocation) -> Vec<u8> {
    let mut e = Encoder::new();
    e.str(&location.uri);
    e.u64(location.offset);
    e.u64(location.length);
    e.u32(location.crc32c);
    e.buf
}

/// Reads a location written by [`encode_location`]; `None` if it is malformed.
pub fn decode_location(value: &[u8]) -> Option<FieldLocation> {
    let mut d = Decoder::new(value);
    let location = FieldLocation { uri: d.str()?.into(), offset: d.u64()?, length: d.u64()?, crc32c: d.u32()? };
    d.finished().then_some(location)
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

    /// Every entry with its element key (the index's keywords with each entry's values).
    pub fn keyed(&self, index: &IndexInfo) -> Result<Vec<(Key, FieldLocation)>> {
        self.0.iter().map(|(values, loc)| Ok((Key::from_values_string(&index.element_keywords, values)?, loc.clone()))).collect()
    }
}

/// A whole index as one value: count, then element values and location per entry, in the
/// index's (sorted) order.
pub fn encode_entries(index: &PendingIndex) -> Vec<u8> {
    let mut e = Encoder::new();
    e.u32(index.entries.len() as u32);
    for (values, location) in &index.entries {
        e.str(values);
        let location = encode_location(location);
        e.u32(location.len() as u32);
        e.buf.extend_from_slice(&location);
    }
    e.buf
}

/// Reads an index written by [`encode_entries`]; `None` if it is malformed or not sorted.
pub fn decode_entries(value: &[u8]) -> Option<IndexEntries> {
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
/// single value).
pub fn encode_batch(records: &[Vec<u8>]) -> Vec<u8> {
    let mut e = Encoder::new();
    e.u32(records.len() as u32);
    for record in records {
        e.u32(record.len() as u32);
        e.buf.extend_from_slice(record);
    }
    e.buf
}

/// The records of a value made by [`encode_batch`]; `None` unless it is exactly one batch.
pub fn decode_batch(value: &[u8]) -> Option<Vec<&[u8]>> {
    let (records, rest) = split_batch(value)?;
    rest.is_empty().then_some(records)
}

/// The records of the batch at the start of `data` (batches appended one after another, as
/// to a log), and what follows it; `None` if `data` does not start with a whole batch.
pub fn split_batch(data: &[u8]) -> Option<(Vec<&[u8]>, &[u8])> {
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
    use crate::indexing::PendingIndexes;
    use crate::Key;

    #[test]
    fn replay_shows_published_indexes_newest_first_and_hides_masked_ones() {
        let mut pending = PendingIndexes::default();
        let location = FieldLocation { uri: "daos:p/c/1.2".into(), offset: 0, length: 7, crc32c: 9 };
        pending.insert(&Key::parse("type=fc").unwrap(), &Key::parse("step=1").unwrap(), location.clone());
        let index = pending.iter().next().unwrap();
        let batch = encode_batch(&[index_record("a", index), index_record("b", index)]);
        let mut replay = LogReplay::default();
        for record in decode_batch(&batch).unwrap() {
            replay.apply(record).unwrap();
        }
        assert_eq!(replay.indexes().iter().map(|i| i.id.as_str()).collect::<Vec<_>>(), ["b", "a"]);
        replay.apply(&mask_record(["b"].into_iter())).unwrap();
        replay.apply(&index_record("b", index)).unwrap();
        assert_eq!(replay.indexes().iter().map(|i| i.id.as_str()).collect::<Vec<_>>(), ["a"], "a masked index stays hidden");
        assert!(replay.apply(&[KIND_INDEX, 1]).is_none(), "a truncated record is refused");
        assert!(decode_batch(&batch[..batch.len() - 1]).is_none());
        let two = [batch.clone(), batch.clone()].concat();
        assert!(decode_batch(&two).is_none(), "two batches are not one");
        let (first, rest) = split_batch(&two).unwrap();
        assert_eq!((first.len(), rest), (2, &batch[..]));
        assert!(split_batch(&batch[..batch.len() - 1]).is_none());
        assert_eq!(decode_location(&encode_location(&location)), Some(location.clone()));
        let entries = decode_entries(&encode_entries(index)).unwrap();
        assert_eq!(entries.lookup(&Key::parse("step=1").unwrap()), Some(location));
        assert_eq!(entries.lookup(&Key::parse("step=2").unwrap()), None);
        assert!(decode_entries(&encode_entries(index)[1..]).is_none());
    }
}
