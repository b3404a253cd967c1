//! Ranges of grid points, as gribjump takes them: `[start, end)` in the order of the field's
//! values.

use fieldstore_core::error::{Error, ErrorKind, Result};

/// Grid points `start..end` (end excluded).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Range {
    /// The first point.
    pub start: u64,
    /// One past the last point.
    pub end: u64,
}

impl Range {
    /// Points `start..end`.
    pub fn new(start: u64, end: u64) -> Self {
        Range { start, end }
    }

    /// How many points.
    pub fn len(&self) -> u64 {
        self.end.saturating_sub(self.start)
    }

    /// The points of all of `ranges` (saturating: ranges from outside may be of any length).
    pub fn points(ranges: &[Range]) -> u64 {
        ranges.iter().map(Range::len).fold(0, u64::saturating_add)
    }

    /// Whether it holds no point.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The ranges of consecutive points among `indices` (in their order; gribjump's
    /// `from_indices` makes one range per index, which merged give the same values).
    pub fn from_indices(indices: &[u64]) -> Vec<Range> {
        let mut ranges: Vec<Range> = Vec::new();
        for &index in indices {
            match ranges.last_mut() {
                // The last point (u64::MAX) ends no range: refused later as an empty one.
                Some(last) if last.end == index && index < u64::MAX => last.end += 1,
                _ => ranges.push(Range::new(index, index.saturating_add(1))),
            }
        }
        ranges
    }

    /// The ranges of the points a mask marks (gribjump's `from_mask`): runs of `true`.
    pub fn from_mask(mask: &[bool]) -> Vec<Range> {
        let marked: Vec<u64> = mask.iter().enumerate().filter(|(_, m)| **m).map(|(i, _)| i as u64).collect();
        Range::from_indices(&marked)
    }

    /// Refuses an empty range, or one beyond a field of `points` points.
    pub fn check(&self, points: u64) -> Result<()> {
        if self.start >= self.end {
            return Err(Error::new(
                ErrorKind::BadRequest,
                format!("range {}-{}: expected start < end for [start, end)", self.start, self.end),
            ));
        }
        if self.end > points {
            return Err(Error::new(ErrorKind::BadRequest, format!("range {}-{} beyond the field's {points} points", self.start, self.end)));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn indices_and_masks_become_runs() {
        assert_eq!(Range::from_indices(&[3, 4, 5, 9, 2, 3]), [Range::new(3, 6), Range::new(9, 10), Range::new(2, 4)]);
        assert_eq!(Range::from_mask(&[false, true, true, false, true]), [Range::new(1, 3), Range::new(4, 5)]);
        assert!(Range::from_mask(&[false, false]).is_empty());
    }
}
