//! [`RecentList`]: a short list searched by predicate, where the item used last is tried first.
//! Writers hold their open files, datasets and pending indexes this way: consecutive fields
//! nearly always go to the same one, so the common lookup is one comparison.

use std::ops::{Deref, DerefMut};

/// Items in the order added, with the position of the one used last.
#[derive(Debug)]
pub struct RecentList<T> {
    items: Vec<T>,
    last: usize,
}

impl<T> Default for RecentList<T> {
    fn default() -> Self {
        RecentList { items: Vec::new(), last: 0 }
    }
}

impl<T> RecentList<T> {
    /// The position of an item that `is`, trying the last one used first; it becomes the last.
    pub fn find(&mut self, is: impl Fn(&T) -> bool) -> Option<usize> {
        if !self.items.get(self.last).is_some_and(&is) {
            self.last = self.items.iter().position(is)?;
        }
        Some(self.last)
    }

    /// Adds an item, which becomes the last used; returns its position.
    pub fn push(&mut self, item: T) -> usize {
        self.items.push(item);
        self.last = self.items.len() - 1;
        self.last
    }

    /// Removes every item.
    pub fn clear(&mut self) {
        self.items.clear();
        self.last = 0;
    }

    /// Keeps only the items that `keep`.
    pub fn retain(&mut self, keep: impl FnMut(&T) -> bool) {
        self.items.retain(keep);
        self.last = 0;
    }
}

impl<T> Deref for RecentList<T> {
    type Target = [T];
    fn deref(&self) -> &[T] {
        &self.items
    }
}

impl<T> DerefMut for RecentList<T> {
    fn deref_mut(&mut self) -> &mut [T] {
        &mut self.items
    }
}

impl<'a, T> IntoIterator for &'a RecentList<T> {
    type Item = &'a T;
    type IntoIter = std::slice::Iter<'a, T>;
    fn into_iter(self) -> Self::IntoIter {
        self.items.iter()
    }
}

impl<'a, T> IntoIterator for &'a mut RecentList<T> {
    type Item = &'a mut T;
    type IntoIter = std::slice::IterMut<'a, T>;
    fn into_iter(self) -> Self::IntoIter {
        self.items.iter_mut()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_pushes_and_remembers_the_last_hit() {
        let mut list = RecentList::default();
        assert_eq!(list.find(|x: &u32| *x == 1), None);
        assert_eq!(list.push(1), 0);
        assert_eq!(list.push(2), 1);
        assert_eq!(list.find(|x| *x == 1), Some(0));
        assert_eq!(list.find(|x| *x == 1), Some(0));
        assert_eq!(list.find(|x| *x == 2), Some(1));
        assert_eq!(list.find(|x| *x == 3), None);
        list[0] = 5;
        assert_eq!(list.iter().copied().collect::<Vec<_>>(), [5, 2]);
        list.clear();
        assert!(list.is_empty() && list.find(|x| *x == 2).is_none());
    }
}
