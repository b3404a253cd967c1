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

    /// Whether it holds no point.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
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
