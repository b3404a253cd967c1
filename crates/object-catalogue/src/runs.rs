//! Which indexes a compaction merges ([`runs`]): chosen so that the compacted index answers
//! every question exactly as its indexes did (docs/consistency.md, "Compaction").
//!
//! A run is a sequence of adjacent indexes of one collocation and element keywords (newest
//! first) such that:
//! - each is *clean*: no newer index of the collocation holds any of its elements, so none of
//!   its entries is superseded. Then no two share an element, `list --full`, `stats` and
//!   `purge` find the same superseded entries in the same indexes as before, and an index
//!   whose entries a later archive supersedes stays whole for a purge to hide;
//! - its members' axes *tile* the axes of their union: the boxes (products of each member's
//!   axes) do not overlap and fill the product of the union's axes. Readers decide from an
//!   index's axes whether a request may find anything in it (`list` at depth 2, `axes`, why
//!   nothing matched); with a tiling the compacted index matches a request exactly when one of
//!   its members did, and shows the same values of each keyword;
//! - it is small enough: at most [`MAX_MEMBERS`] indexes of at most [`MAX_ENTRIES`] entries in
//!   all, none of them larger than a quarter of that (already large: rewriting it would cost
//!   more than it saves).

use std::collections::{BTreeSet, HashSet};
use std::ops::Range;

use fieldstore_core::IndexInfo;

use crate::index_log::IndexEntries;

/// The most entries a compacted index holds (each about 100-200 bytes with its object name:
/// a few MiB, which a point query reads whole).
pub const MAX_ENTRIES: usize = 10_000;
/// The most indexes one compacted index replaces.
pub const MAX_MEMBERS: usize = 256;

/// The runs of `group` (indexes of one collocation and element keywords, newest first, with
/// their entries) to compact, as ranges of positions, each of at least two indexes.
pub fn runs(group: &[(&IndexInfo, &IndexEntries)]) -> Vec<Range<usize>> {
    let clean = clean_indexes(group);
    let mut runs = Vec::new();
    let mut start = 0;
    while start < group.len() {
        let length = longest_tiling_run(&group[start..], &clean[start..]);
        if length >= 2 {
            runs.push(start..start + length);
            start += length;
        } else {
            start += 1;
        }
    }
    runs
}

/// Whether each index of `group` (newest first) is clean: none of its elements in a newer one.
fn clean_indexes(group: &[(&IndexInfo, &IndexEntries)]) -> Vec<bool> {
    let mut newer: HashSet<&str> = HashSet::new();
    group
        .iter()
        .map(|(_, entries)| {
            let clean = entries.iter().all(|(values, _)| !newer.contains(values.as_str()));
            newer.extend(entries.iter().map(|(values, _)| values.as_str()));
            clean
        })
        .collect()
}

/// The length of the longest run at the start of `group` whose members tile their union
/// (0 or 1 when none of two or more does).
fn longest_tiling_run(group: &[(&IndexInfo, &IndexEntries)], clean: &[bool]) -> usize {
    let keywords = &group[0].0.element_keywords;
    let mut union: Vec<BTreeSet<&str>> = vec![BTreeSet::new(); keywords.len()];
    let (mut entries, mut cells, mut longest) = (0usize, 0u128, 0);
    for (length, (index, index_entries)) in group.iter().enumerate().take(MAX_MEMBERS) {
        entries += index_entries.len();
        let fits = clean[length] && index_entries.len() <= MAX_ENTRIES / 4 && entries <= MAX_ENTRIES;
        if !fits || group[..length].iter().any(|(other, _)| boxes_overlap(index, other)) {
            break;
        }
        for (values, keyword) in union.iter_mut().zip(keywords.iter()) {
            values.extend(index.axes.get(keyword.as_str()).into_iter().flat_map(|axis| axis.iter()));
        }
        cells = cells.saturating_add(box_cells(index));
        let product = union.iter().fold(1u128, |product, values| product.saturating_mul(values.len() as u128));
        // The union's product only grows: past this, no longer run is dense enough to tile it.
        if product > 4 * MAX_ENTRIES as u128 {
            break;
        }
        if cells == product {
            longest = length + 1;
        }
    }
    longest
}

/// How many combinations of values an index's axes allow.
fn box_cells(index: &IndexInfo) -> u128 {
    index
        .element_keywords
        .iter()
        .fold(1u128, |product, keyword| product.saturating_mul(index.axes.get(keyword.as_str()).map_or(0, |axis| axis.len()) as u128))
}

/// Whether two indexes' boxes share a combination: their axes share a value on every keyword.
fn boxes_overlap(a: &IndexInfo, b: &IndexInfo) -> bool {
    a.element_keywords.iter().all(|keyword| match (a.axes.get(keyword.as_str()), b.axes.get(keyword.as_str())) {
        (Some(x), Some(y)) => x.iter().any(|value| y.contains(value)),
        _ => true,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::index_log::{decode_entries, encode_entries, Sealing};
    use fieldstore_core::indexing::PendingIndex;
    use fieldstore_core::{FieldLocation, Key};

    /// An index of `step` and `number` values holding every combination of them.
    fn index(id: &str, steps: &[u32], numbers: &[u32]) -> (IndexInfo, IndexEntries) {
        let location = FieldLocation { uri: "s3:b/f".into(), offset: 0, length: 1, crc32c: None };
        let entries =
            steps.iter().flat_map(|s| numbers.iter().map(|n| (format!("{s},{n}"), location.clone())).collect::<Vec<_>>()).collect();
        let pending = PendingIndex { collocation: Key::new(), element_keywords: vec!["step".into(), "number".into()], entries };
        let axes = pending.axes().into_iter().map(|(k, v)| (k.into(), v)).collect();
        let info = IndexInfo {
            id: id.into(),
            collocation: Key::new().into(),
            element_keywords: pending.element_keywords.clone().into(),
            axes,
            fields: pending.entries.len() as u64,
        };
        (info, decode_entries(&encode_entries(&pending, Sealing::Checksummed)).unwrap())
    }

    fn runs_of(indexes: &[(IndexInfo, IndexEntries)]) -> Vec<Range<usize>> {
        runs(&indexes.iter().map(|(i, e)| (i, e)).collect::<Vec<_>>())
    }

    #[test]
    fn steps_of_one_writer_merge_and_a_superseded_index_stays_out() {
        let steps =
            [index("3", &[3], &[1]), index("2", &[2], &[1]), index("1", &[1], &[1]), index("1a", &[1], &[1]), index("0", &[0], &[1])];
        // "1a" is wholly superseded by "1": it stays whole, for a purge; "0" alone is no run.
        assert_eq!(runs_of(&steps), vec![0..3]);
    }

    #[test]
    fn members_must_tile_the_product_of_their_axes() {
        // Writers 1 and 2, steps 0 and 1, flushed in turn: the four tile {0,1} x {1,2}; the
        // first three do not (step 1 of writer 2 would appear in the product).
        let grid = [index("a", &[1], &[2]), index("b", &[1], &[1]), index("c", &[0], &[2]), index("d", &[0], &[1])];
        assert_eq!(runs_of(&grid), vec![0..4]);
        assert_eq!(runs_of(&grid[..3]), vec![0..2], "a and b tile step 1 x {{1, 2}}; c alone is no run");
        let diagonal = [index("a", &[1], &[2]), index("b", &[0], &[1])];
        assert!(runs_of(&diagonal).is_empty(), "(0,2) and (1,1) would appear");
        let overlapping = [index("a", &[0, 1], &[1]), index("b", &[1, 2], &[2]), index("c", &[0, 2], &[2])];
        assert!(runs_of(&overlapping).is_empty());
    }

    #[test]
    fn large_indexes_and_long_runs_are_bounded() {
        let numbers: Vec<u32> = (0..(MAX_ENTRIES / 4 + 1) as u32).collect();
        let large = [index("a", &[1], &numbers), index("b", &[0], &numbers)];
        assert!(runs_of(&large).is_empty(), "each is large already");
        let many: Vec<_> = (0..MAX_MEMBERS as u32 + 10).map(|s| index(&s.to_string(), &[s], &[1])).collect();
        assert_eq!(runs_of(&many), [0..MAX_MEMBERS, MAX_MEMBERS..MAX_MEMBERS + 10]);
    }
}
