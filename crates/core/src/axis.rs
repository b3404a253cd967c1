//! [`AxisValues`]: the set of values one element keyword takes in one index, stored compactly.
//!
//! Readers hold one per keyword per index, for every index of a dataset (a million-field
//! dataset can have thousands of indexes with a hundred values each), and build them when
//! they read a catalogue. So the values live in one string buffer with an offset table, kept
//! sorted for binary search: two allocations per axis instead of one per value.

use std::fmt;

/// A sorted set of distinct strings in one buffer.
#[derive(Clone, Default, PartialEq, Eq)]
pub struct AxisValues {
    buffer: Box<str>,
    /// End of each value in `buffer`.
    ends: Box<[u32]>,
}

impl AxisValues {
    /// Builds from values in any order, with or without repeats.
    pub fn new<'a>(values: impl IntoIterator<Item = &'a str>) -> Self {
        let mut sorted: Vec<&str> = values.into_iter().collect();
        // Stored axes come back already sorted and distinct: check in one pass before sorting.
        if !sorted.windows(2).all(|w| w[0] < w[1]) {
            sorted.sort_unstable();
            sorted.dedup();
        }
        let mut buffer = String::with_capacity(sorted.iter().map(|v| v.len()).sum());
        let mut ends = Vec::with_capacity(sorted.len());
        for v in sorted {
            buffer.push_str(v);
            ends.push(buffer.len() as u32);
        }
        AxisValues { buffer: buffer.into_boxed_str(), ends: ends.into_boxed_slice() }
    }

    /// The stored form: all values concatenated, and where each ends.
    pub fn parts(&self) -> (&str, &[u32]) {
        (&self.buffer, &self.ends)
    }

    /// Rebuilds from [`AxisValues::parts`] as read back from storage; `None` if the ends do
    /// not fit the buffer. (Order is trusted: stored forms are checksummed.)
    pub fn from_parts(buffer: &str, ends: Vec<u32>) -> Option<Self> {
        let mut start = 0;
        for &end in &ends {
            let end = end as usize;
            if end < start || end > buffer.len() || !buffer.is_char_boundary(end) {
                return None;
            }
            start = end;
        }
        (start == buffer.len()).then(|| AxisValues { buffer: buffer.into(), ends: ends.into_boxed_slice() })
    }

    /// How many distinct values the axis holds.
    pub fn len(&self) -> usize {
        self.ends.len()
    }

    /// Whether the axis holds no value at all (the empty string is a value).
    pub fn is_empty(&self) -> bool {
        self.ends.is_empty()
    }

    fn get(&self, i: usize) -> &str {
        let start = if i == 0 { 0 } else { self.ends[i - 1] as usize };
        &self.buffer[start..self.ends[i] as usize]
    }

    /// Whether `value` is one of the axis's values (a binary search, no allocation).
    pub fn contains(&self, value: &str) -> bool {
        let (mut lo, mut hi) = (0, self.len());
        while lo < hi {
            let mid = (lo + hi) / 2;
            match self.get(mid).cmp(value) {
                std::cmp::Ordering::Less => lo = mid + 1,
                std::cmp::Ordering::Greater => hi = mid,
                std::cmp::Ordering::Equal => return true,
            }
        }
        false
    }

    /// The values, in byte order.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = &str> + '_ {
        (0..self.len()).map(|i| self.get(i))
    }
}

impl fmt::Debug for AxisValues {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_set().entries(self.iter()).finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sorted_set_in_one_buffer() {
        let a = AxisValues::new(["500", "1000", "", "500", "850"]);
        assert_eq!(a.iter().collect::<Vec<_>>(), ["", "1000", "500", "850"]);
        assert!(a.contains("850") && a.contains("") && !a.contains("85") && !a.contains("9"));
        assert_eq!(a.len(), 4);
        assert!(AxisValues::new([]).is_empty() && !AxisValues::new([]).contains(""));
        let (buffer, ends) = a.parts();
        assert_eq!(AxisValues::from_parts(buffer, ends.to_vec()), Some(a.clone()));
        assert_eq!(AxisValues::from_parts("abc", vec![2, 1]), None);
        assert_eq!(AxisValues::from_parts("abc", vec![4]), None);
        assert_eq!(AxisValues::from_parts("abc", vec![2]), None, "the ends must cover the buffer");
    }
}
