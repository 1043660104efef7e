//! Per-message residual history of graph scenarios (the convergence debugger's edge colours and
//! message histories): one [`EdgeFrame`] per stored iteration with every message's change, its
//! oscillation flag and, where the engine has a fixed-length message (SOSMP's coefficients, a
//! function on a grid), its values. Kept within a byte budget like the residual maps: past the
//! budget every other frame is dropped (the stride doubles), so the frames span the whole run
//! evenly and the newest iteration is always kept.
//!
//! Cost per iteration O(M · (1 + values per message)) for M messages; memory
//! `frames · M · (4 + 1 + 4 · values)` bytes, at most the budget.

use std::sync::Arc;

/// Default budget for the stored frames of one run.
pub const EDGE_BUDGET_BYTES: usize = 32 << 20;

/// One stored iteration of every message.
#[derive(Debug, Clone, PartialEq)]
pub struct EdgeFrame {
    pub iteration: usize,
    /// Each message's change this iteration (the engine's norm).
    change: Vec<f32>,
    /// Whether each message was oscillating.
    pub oscillating: Vec<bool>,
    /// `values[m * per_message + j]`: the message's content after the iteration (empty when the
    /// engine gives none).
    pub values: Vec<f32>,
    pub per_message: usize,
    /// The largest of `change`, found once: the canvas scales its colours by the largest over
    /// every stored frame, each frame drawn.
    largest: f64,
}

impl EdgeFrame {
    pub fn new(
        iteration: usize,
        change: Vec<f32>,
        oscillating: Vec<bool>,
        values: Vec<f32>,
        per_message: usize,
    ) -> Self {
        let largest = change.iter().fold(0.0f64, |a, &c| a.max(f64::from(c)));
        EdgeFrame {
            iteration,
            change,
            oscillating,
            values,
            per_message,
            largest,
        }
    }

    /// Each message's change this iteration (the engine's norm).
    pub fn change(&self) -> &[f32] {
        &self.change
    }

    pub fn bytes(&self) -> usize {
        self.change.len() * 4 + self.oscillating.len() + self.values.len() * 4 + size_of::<Self>()
    }

    /// The largest change of any message (0 when there is none).
    pub fn max_change(&self) -> f64 {
        self.largest
    }

    /// Message `m`'s stored values (empty when none were stored).
    pub fn values_of(&self, m: usize) -> &[f32] {
        let k = self.per_message;
        self.values.get(m * k..(m + 1) * k).unwrap_or(&[])
    }
}

/// The stored frames of one run.
#[derive(Debug, Clone)]
pub struct EdgeFrames {
    budget_bytes: usize,
    stride: usize,
    frames: Vec<Arc<EdgeFrame>>,
    /// The frames' bytes, kept as they come and go rather than summed per iteration.
    bytes: usize,
}

impl EdgeFrames {
    pub fn new(budget_bytes: usize) -> Self {
        EdgeFrames {
            budget_bytes,
            stride: 1,
            frames: Vec::new(),
            bytes: 0,
        }
    }

    /// Stores `frame` unless the current stride skips its iteration (the newest frame is
    /// always kept: an off-stride newest frame gives way to the next).
    pub fn record(&mut self, frame: EdgeFrame) {
        if self.frames.len() > 1
            && self
                .frames
                .last()
                .is_some_and(|last| !last.iteration.is_multiple_of(self.stride))
            && let Some(dropped) = self.frames.pop()
        {
            self.bytes -= dropped.bytes();
        }
        self.bytes += frame.bytes();
        self.frames.push(Arc::new(frame));
        self.thin();
    }

    /// Doubles the stride until the frames fit the budget (first and newest always kept).
    fn thin(&mut self) {
        while self.bytes() > self.budget_bytes && self.frames.len() > 2 {
            self.stride *= 2;
            let stride = self.stride;
            let last = self.frames.len() - 1;
            let mut i = 0;
            let mut dropped = 0;
            self.frames.retain(|f| {
                let keep = f.iteration.is_multiple_of(stride) || i == last || i == 0;
                i += 1;
                if !keep {
                    dropped += f.bytes();
                }
                keep
            });
            self.bytes -= dropped;
        }
    }

    pub fn bytes(&self) -> usize {
        self.bytes
    }

    pub fn budget_bytes(&self) -> usize {
        self.budget_bytes
    }

    pub fn frames(&self) -> &[Arc<EdgeFrame>] {
        &self.frames
    }
}

/// Where a graph scenario's nodes are drawn and which nodes each message joins, so one canvas
/// can draw any graph coloured by message residual.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ConvergenceGraph {
    /// Node positions in [0, 1]² (x right, y down).
    pub positions: Vec<[f64; 2]>,
    /// `(source, target)` of each message, in message order.
    pub messages: Vec<[usize; 2]>,
    /// What a message's values are ("coefficient", "grid point"), for the history's axis.
    pub value_axis: String,
}

impl ConvergenceGraph {
    /// A chain laid out left to right.
    pub fn line_positions(n: usize) -> Vec<[f64; 2]> {
        (0..n)
            .map(|i| [(i as f64 + 0.5) / n.max(1) as f64, 0.5])
            .collect()
    }

    /// A chain: one row up to 10 nodes, longer chains folded back and forth (a snake of about
    /// `sqrt(n / 2)` rows) so every message stays long enough to see and click.
    pub fn chain_positions(n: usize) -> Vec<[f64; 2]> {
        if n <= 10 {
            return Self::line_positions(n);
        }
        let rows = ((n as f64 / 2.0).sqrt().ceil() as usize).max(1);
        let cols = n.div_ceil(rows);
        (0..n)
            .map(|i| {
                let (row, k) = (i / cols, i % cols);
                let col = if row % 2 == 0 { k } else { cols - 1 - k };
                [
                    (col as f64 + 0.5) / cols as f64,
                    (row as f64 + 0.5) / rows as f64,
                ]
            })
            .collect()
    }

    /// A `side x side` grid, node `y * side + x`.
    pub fn grid_positions(side: usize) -> Vec<[f64; 2]> {
        let s = side.max(1) as f64;
        (0..side * side)
            .map(|i| [((i % side) as f64 + 0.5) / s, ((i / side) as f64 + 0.5) / s])
            .collect()
    }

    /// A tree drawn in layers by breadth-first depth from `root` (`edges` undirected), each
    /// layer's nodes spread evenly in the order they are reached. Nodes not reached go in a
    /// last row.
    pub fn layered_positions(n: usize, edges: &[(usize, usize)], root: usize) -> Vec<[f64; 2]> {
        let mut adjacency = vec![Vec::new(); n];
        for &(a, b) in edges {
            if a < n && b < n {
                adjacency[a].push(b);
                adjacency[b].push(a);
            }
        }
        let mut depth = vec![usize::MAX; n];
        let mut order = Vec::with_capacity(n);
        if root < n {
            depth[root] = 0;
            order.push(root);
        }
        let mut head = 0;
        while head < order.len() {
            let u = order[head];
            head += 1;
            for &v in &adjacency[u] {
                if depth[v] == usize::MAX {
                    depth[v] = depth[u] + 1;
                    order.push(v);
                }
            }
        }
        let deepest = order.iter().map(|&u| depth[u]).max().unwrap_or(0);
        for (u, d) in depth.iter_mut().enumerate() {
            if *d == usize::MAX {
                *d = deepest + 1;
                order.push(u);
            }
        }
        let rows = depth.iter().copied().max().unwrap_or(0) + 1;
        let mut per_row = vec![0usize; rows];
        for &d in &depth {
            per_row[d] += 1;
        }
        let mut placed = vec![0usize; rows];
        let mut positions = vec![[0.5, 0.5]; n];
        for &u in &order {
            let d = depth[u];
            let x = (placed[d] as f64 + 0.5) / per_row[d] as f64;
            placed[d] += 1;
            positions[u] = [x, (d as f64 + 0.5) / rows as f64];
        }
        positions
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frame(iteration: usize, messages: usize, per_message: usize) -> EdgeFrame {
        EdgeFrame::new(
            iteration,
            vec![iteration as f32; messages],
            vec![false; messages],
            vec![0.5; messages * per_message],
            per_message,
        )
    }

    #[test]
    fn frames_stay_within_budget_and_span_the_run() {
        let one = frame(1, 1000, 7).bytes();
        let mut frames = EdgeFrames::new(20 * one);
        for it in 1..=500 {
            frames.record(frame(it, 1000, 7));
        }
        assert!(frames.bytes() <= 20 * one, "{}", frames.bytes());
        let stored: usize = frames.frames().iter().map(|f| f.bytes()).sum();
        assert_eq!(frames.bytes(), stored);
        let f = frames.frames();
        assert_eq!(f.first().unwrap().iteration, 1);
        assert_eq!(f.last().unwrap().iteration, 500);
        assert!(f.len() >= 8, "{} frames", f.len());
        // Evenly spread: no gap more than twice the mean gap.
        let gaps: Vec<usize> = f
            .windows(2)
            .map(|w| w[1].iteration - w[0].iteration)
            .collect();
        let mean = 499.0 / gaps.len() as f64;
        assert!(
            gaps.iter().all(|&g| (g as f64) <= 2.0 * mean + 1.0),
            "{gaps:?}"
        );
    }

    #[test]
    fn values_of_reads_one_message() {
        let mut f = frame(3, 3, 2);
        f.values = vec![1.0, 2.0, 3.0, 4.0, 5.0, 6.0];
        assert_eq!(f.values_of(1), &[3.0, 4.0]);
        assert_eq!(f.values_of(5), &[] as &[f32]);
        assert_eq!(f.max_change(), 3.0);
    }

    #[test]
    fn long_chains_fold_with_neighbours_adjacent() {
        let p = ConvergenceGraph::chain_positions(100);
        let rows = 8.0; // ceil(sqrt(50))
        let cols = 13.0; // ceil(100 / 8)
        for w in p.windows(2) {
            let (dx, dy) = ((w[0][0] - w[1][0]).abs(), (w[0][1] - w[1][1]).abs());
            let horizontal = dy == 0.0 && (dx - 1.0 / cols).abs() < 1e-9;
            let vertical = dx == 0.0 && (dy - 1.0 / rows).abs() < 1e-9;
            assert!(horizontal || vertical, "{:?} -> {:?}", w[0], w[1]);
        }
        assert_eq!(ConvergenceGraph::chain_positions(4)[3][1], 0.5);
    }

    #[test]
    fn layered_tree_puts_children_below_parents() {
        let p = ConvergenceGraph::layered_positions(4, &[(0, 1), (0, 2), (2, 3)], 0);
        assert!(p[0][1] < p[1][1] && p[1][1] == p[2][1] && p[2][1] < p[3][1]);
        assert_ne!(p[1][0], p[2][0]);
    }
}
