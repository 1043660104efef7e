//! Sharing a value that only grows (a run's curves) with the window without copying all of it
//! per snapshot. The engine keeps its own value and a few shared copies; a snapshot takes a copy
//! nobody else holds any more and appends what the value gained since that copy was made. So a
//! snapshot costs the points added since the copy's last use, not the whole run, and the
//! engine's own appends never wait for, or copy out from under, a reader.
//! Cost per share: O(points added since that copy was shared) while the reader lets copies go
//! (the window drops each snapshot when the next arrives), O(all points) when every copy is held.

use std::sync::{Arc, Mutex};

/// A value that grows by appending only: what is there already never changes.
pub trait AppendOnly: Clone {
    /// Makes `self` equal to `source`, given that `self` is an earlier state of the same value
    /// (or of an unrelated value, which is copied whole).
    fn catch_up(&mut self, source: &Self);
}

/// Brings `copy` up to `source` by appending its new values (copied whole if `copy` is longer,
/// which an append-only series never is).
pub fn catch_up_series(copy: &mut Vec<f64>, source: &[f64]) {
    if copy.len() > source.len() {
        copy.clear();
    }
    copy.extend_from_slice(&source[copy.len()..]);
}

/// [`catch_up_series`] for a list of series.
pub fn catch_up_all(copies: &mut Vec<Vec<f64>>, sources: &[Vec<f64>]) {
    copies.resize_with(sources.len(), Vec::new);
    for (copy, source) in copies.iter_mut().zip(sources) {
        catch_up_series(copy, source);
    }
}

/// At most this many copies are kept: the one a reader shows, the one it may still hold while
/// the next arrives, and one to bring up to date.
const KEPT: usize = 3;

/// Shared, up-to-date copies of one growing value (see the module doc).
#[derive(Debug)]
pub struct SharedCopies<T> {
    copies: Mutex<Vec<Arc<T>>>,
}

impl<T> Default for SharedCopies<T> {
    fn default() -> Self {
        SharedCopies {
            copies: Mutex::new(Vec::new()),
        }
    }
}

impl<T: AppendOnly> SharedCopies<T> {
    /// A shared copy equal to `source`.
    pub fn share(&self, source: &T) -> Arc<T> {
        let mut copies = self.copies.lock().unwrap_or_else(|e| e.into_inner());
        for copy in copies.iter_mut() {
            if let Some(free) = Arc::get_mut(copy) {
                free.catch_up(source);
                return copy.clone();
            }
        }
        if copies.len() >= KEPT {
            copies.remove(0);
        }
        let fresh = Arc::new(source.clone());
        copies.push(fresh.clone());
        fresh
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, Clone, PartialEq)]
    struct Curves(Vec<Vec<f64>>, Vec<f64>);

    impl AppendOnly for Curves {
        fn catch_up(&mut self, source: &Self) {
            catch_up_all(&mut self.0, &source.0);
            catch_up_series(&mut self.1, &source.1);
        }
    }

    fn grow(c: &mut Curves, t: usize) {
        for (p, path) in c.0.iter_mut().enumerate() {
            path.push((t * 7 + p) as f64);
        }
        c.1.push(t as f64 * 0.5);
    }

    #[test]
    fn a_released_copy_is_brought_up_to_date_and_shared_again() {
        let shared = SharedCopies::default();
        let mut curves = Curves(vec![Vec::new(); 3], Vec::new());
        grow(&mut curves, 0);
        let first = shared.share(&curves);
        let first_address = Arc::as_ptr(&first);
        drop(first);
        for t in 1..50 {
            grow(&mut curves, t);
            let copy = shared.share(&curves);
            assert_eq!(*copy, curves);
            // Nobody held the copy: it is the same allocation, appended to.
            assert_eq!(Arc::as_ptr(&copy), first_address);
        }
    }

    #[test]
    fn a_copy_still_held_is_left_as_it_was() {
        let shared = SharedCopies::default();
        let mut curves = Curves(vec![Vec::new(); 2], Vec::new());
        let mut held = Vec::new();
        for t in 0..10 {
            grow(&mut curves, t);
            let snapshot = curves.clone();
            held.push((shared.share(&curves), snapshot));
            // Every copy a reader holds still shows the value as it was when shared.
            for (copy, then) in &held {
                assert_eq!(**copy, *then);
            }
            if held.len() > 1 {
                held.remove(0);
            }
        }
        drop(held);
        grow(&mut curves, 10);
        assert_eq!(*shared.share(&curves), curves);
    }

    #[test]
    fn a_shorter_source_is_copied_whole() {
        let mut copy = vec![1.0, 2.0, 3.0];
        catch_up_series(&mut copy, &[4.0]);
        assert_eq!(copy, vec![4.0]);
        let mut lists = vec![vec![1.0], vec![2.0], vec![3.0]];
        catch_up_all(&mut lists, &[vec![1.0, 5.0]]);
        assert_eq!(lists, vec![vec![1.0, 5.0]]);
    }
}
