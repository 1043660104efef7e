//! Where kernel BP's messages live on a 4-connected `width x height` grid, without a stored
//! graph: pixel `t = y · width + x` owns four message slots `4t + d`, one per direction
//! `d` in (left, right, up, down), the order in which `Graph::grid` lists a pixel's
//! neighbours. The message `t -> neighbour in direction d` sits in slot `4t + d`; the message
//! into `t` from that neighbour is the neighbour's slot in the opposite direction. Slots
//! towards the image border are never used. Everything here is O(1) per query and O(1)
//! memory, so a 12-megapixel grid costs its messages and nothing for its topology.

/// A 4-connected grid.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GridShape {
    pub width: usize,
    pub height: usize,
}

/// Directions in slot order.
pub const LEFT: usize = 0;
pub const RIGHT: usize = 1;
pub const UP: usize = 2;
pub const DOWN: usize = 3;

/// The direction pointing back.
pub const fn opposite(d: usize) -> usize {
    d ^ 1
}

impl GridShape {
    pub fn num_nodes(&self) -> usize {
        self.width * self.height
    }

    /// Slots of the message store (four per pixel, border ones unused).
    pub fn num_slots(&self) -> usize {
        4 * self.num_nodes()
    }

    /// Messages that exist: two per edge.
    pub fn num_messages(&self) -> usize {
        2 * (self.width.saturating_sub(1) * self.height
            + self.width * self.height.saturating_sub(1))
    }

    /// The neighbour of `t` in direction `d`, if inside the grid.
    #[inline]
    pub fn neighbour(&self, t: usize, d: usize) -> Option<usize> {
        let (x, y) = (t % self.width, t / self.width);
        match d {
            LEFT => (x > 0).then(|| t - 1),
            RIGHT => (x + 1 < self.width).then(|| t + 1),
            UP => (y > 0).then(|| t - self.width),
            _ => (y + 1 < self.height).then(|| t + self.width),
        }
    }

    /// The directions in which `t` has a neighbour, in slot order, and how many.
    #[inline]
    pub fn directions(&self, t: usize) -> ([usize; 4], usize) {
        let mut dirs = [0; 4];
        let mut n = 0;
        for d in 0..4 {
            if self.neighbour(t, d).is_some() {
                dirs[n] = d;
                n += 1;
            }
        }
        (dirs, n)
    }

    pub fn degree(&self, t: usize) -> usize {
        self.directions(t).1
    }

    /// The slot holding the message from `t`'s neighbour in direction `d` into `t`.
    #[inline]
    pub fn incoming_slot(&self, t: usize, d: usize) -> Option<usize> {
        self.neighbour(t, d).map(|u| 4 * u + opposite(d))
    }

    /// The pixel that sends the message in `slot` and the one it goes to (None for a border
    /// slot that holds no message).
    pub fn slot_ends(&self, slot: usize) -> Option<(usize, usize)> {
        let t = slot / 4;
        self.neighbour(t, slot % 4).map(|u| (t, u))
    }

    /// The pixels on anti-diagonal `k` (`x + y = k`), by increasing x: none of them is
    /// another's neighbour, and a raster-order sweep updates every pixel of diagonal `k` after
    /// all of diagonal `k - 1` and before any of `k + 1`.
    pub fn diagonal(&self, k: usize) -> impl Iterator<Item = usize> + '_ {
        let x0 = k.saturating_sub(self.height - 1);
        let x1 = k.min(self.width - 1);
        (x0..=x1).map(move |x| (k - x) * self.width + x)
    }

    /// The neighbour counts that occur, ascending.
    pub fn degrees(&self) -> Vec<usize> {
        let (w, h) = (self.width, self.height);
        // A corner, an inner pixel of the first row and column, and an inner pixel.
        let mut probes = vec![0];
        if w > 2 {
            probes.push(1);
        }
        if h > 2 {
            probes.push(w);
        }
        if w > 2 && h > 2 {
            probes.push(w + 1);
        }
        if w == 1 || h == 1 {
            probes.push(w * h - 1);
        }
        let mut degrees: Vec<usize> = probes.into_iter().map(|t| self.degree(t)).collect();
        degrees.sort_unstable();
        degrees.dedup();
        degrees
    }

    /// Anti-diagonals in all.
    pub fn num_diagonals(&self) -> usize {
        self.width + self.height - 1
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Graph;

    #[test]
    fn slots_and_directions_agree_with_the_grid_graph() {
        let shape = GridShape {
            width: 5,
            height: 4,
        };
        let graph = Graph::grid(5, 4).unwrap();
        assert_eq!(shape.num_messages(), graph.num_messages());
        for t in 0..shape.num_nodes() {
            let (dirs, n) = shape.directions(t);
            let from_graph: Vec<usize> = graph.neighbors(t).iter().map(|nb| nb.node).collect();
            let from_shape: Vec<usize> = dirs[..n]
                .iter()
                .map(|&d| shape.neighbour(t, d).unwrap())
                .collect();
            assert_eq!(
                from_shape, from_graph,
                "pixel {t}: same neighbours, same order"
            );
            for &d in &dirs[..n] {
                let u = shape.neighbour(t, d).unwrap();
                let slot = shape.incoming_slot(t, d).unwrap();
                assert_eq!(shape.slot_ends(slot), Some((u, t)));
            }
        }
    }

    #[test]
    fn the_degrees_that_occur_are_the_grid_graphs() {
        for (w, h) in [(1, 5), (5, 1), (2, 2), (2, 3), (3, 2), (3, 3), (7, 4)] {
            let graph = Graph::grid(w, h).unwrap();
            let mut want: Vec<usize> = (0..w * h).map(|t| graph.degree(t)).collect();
            want.sort_unstable();
            want.dedup();
            let shape = GridShape {
                width: w,
                height: h,
            };
            assert_eq!(shape.degrees(), want, "{w} x {h}");
        }
    }

    #[test]
    fn diagonals_cover_the_grid_once_in_raster_dependency_order() {
        let shape = GridShape {
            width: 4,
            height: 3,
        };
        let mut seen = [false; 12];
        for k in 0..shape.num_diagonals() {
            for t in shape.diagonal(k) {
                assert!(!seen[t]);
                seen[t] = true;
                assert_eq!(t % 4 + t / 4, k);
            }
        }
        assert!(seen.iter().all(|&s| s));
    }
}
