//! What every catalogue does the same way: collecting the entries archived since the last
//! flush into the indexes the flush will publish ([`PendingIndexes`]), summarising an index
//! (its collocation key, element keywords, field count and axes) in a binary record
//! ([`encode_summary`], [`decode_summary`]), and sharing what many decoded summaries repeat
//! ([`Interner`]); overlay records likewise ([`encode_overlay`], [`apply_overlay`]).

use std::collections::BTreeMap;
use std::sync::Arc;

use crate::codec::{Decoder, Encoder};
use crate::recent::RecentList;
use crate::{AxisValues, FieldLocation, IndexInfo, Key};

/// The entries of one future index: one collocation key, one element keyword list.
pub struct PendingIndex {
    /// The collocation key the index's entries share.
    pub collocation: Key,
    /// The element keywords of every entry, in schema order.
    pub element_keywords: Vec<String>,
    /// Element values joined by `,` -> location; a later archive of the same element wins.
    pub entries: BTreeMap<String, FieldLocation>,
}

impl PendingIndex {
    fn holds(&self, collocation: &Key, element: &Key) -> bool {
        self.collocation == *collocation && element.keywords().eq(self.element_keywords.iter().map(String::as_str))
    }

    /// The values present per element keyword.
    pub fn axes(&self) -> BTreeMap<String, AxisValues> {
        let keywords = &self.element_keywords;
        // Values per keyword position, with repeats: AxisValues sorts and drops them, which
        // is cheaper than a set per keyword (this runs for every index at every flush).
        let mut parts: Vec<Vec<&str>> = vec![Vec::with_capacity(self.entries.len()); keywords.len()];
        for values in self.entries.keys() {
            for (axis, part) in parts.iter_mut().zip(values.split(',')) {
                axis.push(part);
            }
        }
        keywords.iter().zip(parts).map(|(k, values)| (k.clone(), AxisValues::new(values))).collect()
    }
}

/// Entries archived since the last flush, by collocation key and element keywords (the
/// index each will go to). A writer usually archives into the index it used last, so that
/// one is found first.
#[derive(Default)]
pub struct PendingIndexes(RecentList<PendingIndex>);

impl PendingIndexes {
    /// Adds an entry to the pending index of its collocation key and element keywords, made if new.
    pub fn insert(&mut self, collocation: &Key, element: &Key, location: FieldLocation) {
        let i = match self.0.find(|p| p.holds(collocation, element)) {
            Some(i) => i,
            None => {
                let element_keywords = element.keywords().map(String::from).collect();
                self.0.push(PendingIndex { collocation: collocation.clone(), element_keywords, entries: BTreeMap::new() })
            }
        };
        self.0[i].entries.insert(element.values_string(), location);
    }

    /// Whether nothing was archived since the last flush.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Forgets every pending entry (after a flush published them, or a discard).
    pub fn clear(&mut self) {
        self.0.clear();
    }

    /// The pending indexes, in the order they were made.
    pub fn iter(&self) -> impl Iterator<Item = &PendingIndex> {
        self.0.iter()
    }
}

/// Appends an index summary: collocation key, element keywords, field count, axes.
pub fn encode_summary(e: &mut Encoder, index: &PendingIndex) {
    e.strs(index.collocation.keywords());
    e.strs(index.collocation.values());
    e.strs(index.element_keywords.iter().map(String::as_str));
    e.u64(index.entries.len() as u64);
    let axes = index.axes();
    e.u32(axes.len() as u32);
    for (k, values) in &axes {
        e.str(k);
        e.axis_values(values);
    }
}

/// Reads a summary written by [`encode_summary`] into the form readers share; `None` if it is
/// malformed.
pub fn decode_summary(d: &mut Decoder, shared: &mut Interner, id: String) -> Option<IndexInfo> {
    let keywords = d.str_slices()?;
    let values = d.str_slices()?;
    if keywords.len() != values.len() {
        return None;
    }
    let collocation = shared.key(&keywords, &values);
    let element_keywords = shared.keyword_list(&d.str_slices()?);
    let fields = d.u64()?;
    let mut axes = BTreeMap::new();
    for _ in 0..d.u32()? {
        let k = shared.name(d.str()?);
        axes.insert(k, d.axis_values()?);
    }
    Some(IndexInfo { id, collocation, element_keywords, axes, fields })
}

/// Appends an overlay ([`crate::backend::Overlays`]): the other data set's key, and whether it
/// is shown from then on.
pub fn encode_overlay(e: &mut Encoder, source: &Key, shown: bool) {
    e.str(&source.to_string());
    e.u32(u32::from(shown));
}

/// Applies an overlay written by [`encode_overlay`] to the overlays in effect (oldest first):
/// one shown again moves last. `None` if it is malformed.
pub fn apply_overlay(overlays: &mut Vec<Key>, d: &mut Decoder) -> Option<()> {
    let source = Key::parse(d.str()?).ok()?;
    let shown = d.u32().filter(|_| d.finished())? != 0;
    overlays.retain(|k| *k != source);
    if shown {
        overlays.push(source);
    }
    Some(())
}

/// What the summaries of one dataset share (collocation keys, element keyword lists, axis
/// names), held once: a dataset's thousands of indexes usually repeat a handful of them.
#[derive(Default)]
pub struct Interner {
    keys: Vec<Arc<Key>>,
    keyword_lists: Vec<Arc<[String]>>,
    names: Vec<Arc<str>>,
}

impl Interner {
    /// The shared key with these keywords and values, made on first use.
    pub fn key(&mut self, keywords: &[&str], values: &[&str]) -> Arc<Key> {
        let same = |k: &&Arc<Key>| {
            k.len() == keywords.len() && k.iter().zip(keywords.iter().zip(values)).all(|((a, b), (c, d))| a == *c && b == *d)
        };
        // The summary before usually has the same collocation: look at the newest first.
        if let Some(k) = self.keys.iter().rev().find(same) {
            return k.clone();
        }
        let key = Arc::new(Key::from_pairs(keywords.iter().zip(values).map(|(k, v)| (k.to_string(), v.to_string()))));
        self.keys.push(key.clone());
        key
    }

    /// The shared list of these keywords, made on first use.
    pub fn keyword_list(&mut self, keywords: &[&str]) -> Arc<[String]> {
        if let Some(l) = self.keyword_lists.iter().rev().find(|l| l.iter().map(String::as_str).eq(keywords.iter().copied())) {
            return l.clone();
        }
        let list: Arc<[String]> = keywords.iter().map(|k| k.to_string()).collect();
        self.keyword_lists.push(list.clone());
        list
    }

    /// The shared copy of a keyword name, made on first use.
    pub fn name(&mut self, name: &str) -> Arc<str> {
        if let Some(n) = self.names.iter().find(|n| &***n == name) {
            return n.clone();
        }
        let n: Arc<str> = name.into();
        self.names.push(n.clone());
        n
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn location(offset: u64) -> FieldLocation {
        FieldLocation { uri: "u".into(), offset, length: 1, crc32c: None }
    }

    #[test]
    fn pending_entries_group_by_index_and_summaries_round_trip() {
        let colloc = Key::parse("type=fc,levtype=pl").unwrap();
        let mut pending = PendingIndexes::default();
        pending.insert(&colloc, &Key::parse("step=12,param=130").unwrap(), location(0));
        pending.insert(&colloc, &Key::parse("step=6,param=130").unwrap(), location(1));
        pending.insert(&colloc, &Key::parse("step=12,param=130").unwrap(), location(2));
        pending.insert(&colloc, &Key::parse("param=130").unwrap(), location(3));
        let indexes: Vec<&PendingIndex> = pending.iter().collect();
        assert_eq!(indexes.len(), 2, "another element keyword list is another index");
        let steps = indexes.iter().find(|p| p.element_keywords.len() == 2).unwrap();
        assert_eq!(steps.entries.len(), 2);
        assert_eq!(steps.entries["12,130"].offset, 2, "the later archive of an element wins");
        let mut e = Encoder::new();
        encode_summary(&mut e, steps);
        let mut shared = Interner::default();
        let info = decode_summary(&mut Decoder::new(&e.buf), &mut shared, "id".into()).unwrap();
        assert_eq!((&*info.collocation, info.fields, &info.element_keywords[..]), (&colloc, 2, &["step".to_string(), "param".into()][..]));
        assert_eq!(info.axes["step"].iter().collect::<Vec<_>>(), ["12", "6"]);
        assert!(decode_summary(&mut Decoder::new(&e.buf[..e.buf.len() - 1]), &mut shared, "id".into()).is_none());
    }
}
