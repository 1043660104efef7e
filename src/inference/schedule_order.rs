//! The orders the serial schedules visit messages in: a seeded random permutation per
//! iteration, and the priority queue of residual BP (Elidan, McGraw, Koller, "Residual Belief
//! Propagation", UAI 2006, Sec. 3: update the message with the largest pending change
//! `||m_new - m_old||` first, then recompute the pending messages that read it).
//!
//! The queue is a binary max-heap with lazy deletion: raising or lowering a message's priority
//! pushes a new entry stamped with a per-message version, and stale entries are skipped when
//! popped. Cost O(log Q) per push and pop; the heap is rebuilt from the live entries when it
//! grows past four times the number of messages, so memory stays O(M).

use std::cmp::Ordering;
use std::collections::BinaryHeap;

use rand::SeedableRng;
use rand::seq::SliceRandom;
use rand_chacha::ChaCha8Rng;

/// Key of the random-order stream (one ChaCha stream per purpose).
const RANDOM_ORDER_KEY: u64 = 0x5eed_0dde_0000_0001;

/// A permutation of `0..n` for `iteration`, the same for the same iteration on every run.
pub fn random_order(n: usize, iteration: usize) -> Vec<usize> {
    let mut order: Vec<usize> = (0..n).collect();
    let mut rng = ChaCha8Rng::seed_from_u64(RANDOM_ORDER_KEY ^ (iteration as u64));
    order.shuffle(&mut rng);
    order
}

#[derive(Debug, Clone, Copy, PartialEq)]
struct Entry {
    priority: f64,
    message: usize,
    version: u32,
}

impl Eq for Entry {}

impl Ord for Entry {
    fn cmp(&self, other: &Self) -> Ordering {
        self.priority
            .total_cmp(&other.priority)
            // Ties: the lower message id first, so runs are reproducible.
            .then_with(|| other.message.cmp(&self.message))
    }
}

impl PartialOrd for Entry {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

/// Pending residuals of every message, largest first.
#[derive(Debug, Clone, Default)]
pub struct ResidualQueue {
    heap: BinaryHeap<Entry>,
    version: Vec<u32>,
    priority: Vec<f64>,
}

impl ResidualQueue {
    pub fn new(num_messages: usize) -> Self {
        ResidualQueue {
            heap: BinaryHeap::with_capacity(num_messages),
            version: vec![0; num_messages],
            priority: vec![0.0; num_messages],
        }
    }

    pub fn len(&self) -> usize {
        self.version.len()
    }

    pub fn is_empty(&self) -> bool {
        self.version.is_empty()
    }

    /// Sets message `m`'s pending residual.
    pub fn set(&mut self, m: usize, priority: f64) {
        self.version[m] = self.version[m].wrapping_add(1);
        self.priority[m] = priority;
        self.heap.push(Entry {
            priority,
            message: m,
            version: self.version[m],
        });
        if self.heap.len() > 4 * self.version.len() + 16 {
            self.rebuild();
        }
    }

    /// Message `m`'s pending residual.
    pub fn priority(&self, m: usize) -> f64 {
        self.priority[m]
    }

    /// The message with the largest pending residual and that residual (not removed).
    pub fn peek(&mut self) -> Option<(usize, f64)> {
        while let Some(top) = self.heap.peek() {
            if self.version[top.message] == top.version {
                return Some((top.message, top.priority));
            }
            self.heap.pop();
        }
        None
    }

    fn rebuild(&mut self) {
        let live: Vec<Entry> = (0..self.version.len())
            .map(|m| Entry {
                priority: self.priority[m],
                message: m,
                version: self.version[m],
            })
            .collect();
        self.heap = BinaryHeap::from(live);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn largest_first_and_updates_win() {
        let mut q = ResidualQueue::new(4);
        for (m, p) in [0.1, 0.5, 0.3, 0.2].into_iter().enumerate() {
            q.set(m, p);
        }
        assert_eq!(q.peek(), Some((1, 0.5)));
        q.set(1, 0.0);
        assert_eq!(q.peek(), Some((2, 0.3)));
        q.set(0, 0.9);
        assert_eq!(q.peek(), Some((0, 0.9)));
        for _ in 0..100 {
            q.set(3, 0.05);
        }
        assert!(q.heap.len() <= 4 * 4 + 16 + 1);
        assert_eq!(q.peek(), Some((0, 0.9)));
    }

    #[test]
    fn random_order_is_a_reproducible_permutation() {
        let a = random_order(100, 3);
        let mut sorted = a.clone();
        sorted.sort_unstable();
        assert_eq!(sorted, (0..100).collect::<Vec<_>>());
        assert_eq!(a, random_order(100, 3));
        assert_ne!(a, random_order(100, 4));
    }
}
