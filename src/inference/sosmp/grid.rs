//! The state space as a quadrature grid, and sampling over its cells.
//!
//! SOSMP needs four things from the state domain X: quadrature nodes and weights (every
//! integral of the paper is a weighted sum over them), cells between the nodes (the sampler
//! picks a cell by inverse CDF and a point inside it), interpolation of a node table at a sampled
//! point (γ_uv;j(Y) is looked up, not recomputed) and a way to show a nodal function. The
//! [`StateGrid`] trait collects exactly these, so the engine is written once for any domain: the
//! interval `[a, b]` here ([`IntervalGrid`], trapezoid rule), a rectangle of flow vectors later
//! (tensor trapezoid rule, bilinear cells).
//!
//! The sampling density is the *cell rule*: a cell's mass is the quadrature mass of its corner
//! values (trapezoid: `h (p_i + p_{i+1}) / 2`), and inside a cell the draw is uniform (the CDF is
//! linear in between the nodes). Its total equals the quadrature integral `Σ_i w_i p_i` exactly,
//! and `E[f(Y)]` for a linearly interpolated node table `f` is `Σ_i ω_i f_i / Σ_i ω_i` with the
//! [`StateGrid::expectation_weights`] `ω` (half of each adjacent cell's mass in 1-D); the
//! expected update of the floor uses those same weights, so the sampler is unbiased for it
//! exactly. Against the trapezoid rule the difference is
//! `(h/4) Σ (p_{i+1} - p_i)(f_{i+1} - f_i) = O(h²)`.

use rand::Rng;

use crate::error::{Error, Result};
use crate::inference::Belief;

/// A quadrature grid over a compact state domain, with cells for sampling.
///
/// Nodal functions are slices of length [`len`](StateGrid::len); node tables with `width`
/// columns are node-major (`table[i * width + j]`).
pub trait StateGrid: Send + Sync {
    /// Where a draw landed, enough to interpolate a node table there (1-D: cell and fraction).
    type Sample: Copy + Default + Send + Sync + std::fmt::Debug;

    /// Number of coordinates of a state (1 on an interval, 2 for a flow vector).
    fn dim(&self) -> usize;
    /// Number of quadrature nodes.
    fn len(&self) -> usize;
    /// Always false: a grid has at least three nodes.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// Quadrature weights: `∫ f ≈ Σ_i w_i f(node_i)`.
    fn weights(&self) -> &[f64];
    /// The volume of the domain (the sum of the weights).
    fn volume(&self) -> f64;
    /// Number of sampling cells.
    fn num_cells(&self) -> usize;
    /// Writes each cell's mass under the cell rule for the non-negative nodal function
    /// `density` into `masses` (length [`num_cells`](StateGrid::num_cells)). Their sum is
    /// `Σ_i w_i density_i`. O(len).
    fn cell_masses(&self, density: &[f64], masses: &mut [f64]);
    /// Weights `ω` with `E[f(Y)] = Σ_i ω_i f_i / Σ_i ω_i` for `Y` drawn by the cell rule from
    /// `density` and `f` interpolated from the nodes; returns `Σ ω`. O(len).
    fn expectation_weights(&self, density: &[f64], out: &mut [f64]) -> f64;
    /// A point in `cell`, `frac` in `[0, 1)` being the position of the draw within the cell's
    /// CDF (1-D: the position itself; more dimensions draw the rest from `rng`).
    fn locate<R: Rng + ?Sized>(&self, cell: usize, frac: f64, rng: &mut R) -> Self::Sample;
    /// Adds `scale` times the row of `table` (node-major, `width` columns) interpolated at `s`
    /// into `out` (length `width`). O(width · stencil).
    fn accumulate_row(
        &self,
        table: &[f64],
        width: usize,
        s: &Self::Sample,
        scale: f64,
        out: &mut [f64],
    );
    /// The coordinates of a sample (length [`dim`](StateGrid::dim)).
    fn coordinates(&self, s: &Self::Sample, out: &mut [f64]);
    /// The coordinates of node `i` (length [`dim`](StateGrid::dim)).
    fn node_coordinates(&self, i: usize, out: &mut [f64]);
    /// A nodal function as a [`Belief`] for display.
    fn to_belief(&self, values: Vec<f64>) -> Belief;
}

/// The interval `[a, b]` with `n` equally spaced nodes and trapezoid weights.
#[derive(Debug, Clone, PartialEq)]
pub struct IntervalGrid {
    a: f64,
    b: f64,
    h: f64,
    points: Vec<f64>,
    weights: Vec<f64>,
}

/// Largest number of nodes accepted (a γ table is `n x r` per edge; set-up costs `n²` per edge).
pub const MAX_GRID_POINTS: usize = 20_001;

impl IntervalGrid {
    /// `n` equally spaced nodes from `a` to `b` inclusive. Errors unless `a < b` are finite and
    /// `3 <= n <= MAX_GRID_POINTS`.
    pub fn new(a: f64, b: f64, n: usize) -> Result<Self> {
        if !(a.is_finite() && b.is_finite() && a < b) {
            return Err(Error::param(
                "domain",
                format!("needs finite a < b, got [{a}, {b}]"),
            ));
        }
        if !(3..=MAX_GRID_POINTS).contains(&n) {
            return Err(Error::param(
                "grid points",
                format!("must be between 3 and {MAX_GRID_POINTS}, got {n}"),
            ));
        }
        let h = (b - a) / (n - 1) as f64;
        let points: Vec<f64> = (0..n)
            .map(|i| if i + 1 == n { b } else { a + i as f64 * h })
            .collect();
        let mut weights = vec![h; n];
        weights[0] = 0.5 * h;
        weights[n - 1] = 0.5 * h;
        Ok(IntervalGrid {
            a,
            b,
            h,
            points,
            weights,
        })
    }

    /// `round((b - a) · points_per_unit) + 1` nodes (1001 for `[-5, 5]` at 100 per unit).
    pub fn with_density(a: f64, b: f64, points_per_unit: f64) -> Result<Self> {
        crate::error::check_positive("points per unit", points_per_unit)?;
        let cells = ((b - a) * points_per_unit).round();
        if !(cells.is_finite() && cells >= 2.0 && cells < MAX_GRID_POINTS as f64) {
            return Err(Error::param(
                "points per unit",
                format!(
                    "gives {cells} cells on [{a}, {b}]; need between 2 and {}",
                    MAX_GRID_POINTS - 1
                ),
            ));
        }
        IntervalGrid::new(a, b, cells as usize + 1)
    }

    pub fn domain(&self) -> (f64, f64) {
        (self.a, self.b)
    }

    /// Node spacing `h`.
    pub fn spacing(&self) -> f64 {
        self.h
    }

    pub fn points(&self) -> &[f64] {
        &self.points
    }
}

/// A draw on an interval grid: cell `cell` (between nodes `cell` and `cell + 1`) at fraction
/// `frac` of its width.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct IntervalSample {
    pub cell: u32,
    pub frac: f64,
}

impl StateGrid for IntervalGrid {
    type Sample = IntervalSample;

    fn dim(&self) -> usize {
        1
    }

    fn len(&self) -> usize {
        self.points.len()
    }

    fn weights(&self) -> &[f64] {
        &self.weights
    }

    fn volume(&self) -> f64 {
        self.b - self.a
    }

    fn num_cells(&self) -> usize {
        self.points.len() - 1
    }

    #[inline(always)]
    fn cell_masses(&self, density: &[f64], masses: &mut [f64]) {
        let half = 0.5 * self.h;
        for ((m, lo), hi) in masses.iter_mut().zip(density).zip(&density[1..]) {
            *m = half * (lo + hi);
        }
    }

    fn expectation_weights(&self, density: &[f64], out: &mut [f64]) -> f64 {
        // ω_i = (mass_{i-1} + mass_i) / 2 with mass_c = h (p_c + p_{c+1}) / 2.
        let n = density.len();
        let q = 0.25 * self.h;
        out[0] = q * (density[0] + density[1]);
        out[n - 1] = q * (density[n - 2] + density[n - 1]);
        for i in 1..n - 1 {
            out[i] = q * (density[i - 1] + 2.0 * density[i] + density[i + 1]);
        }
        crate::inference::sosmp::kernels::sum(out)
    }

    #[inline]
    fn locate<R: Rng + ?Sized>(&self, cell: usize, frac: f64, _rng: &mut R) -> IntervalSample {
        IntervalSample {
            cell: cell as u32,
            frac,
        }
    }

    #[inline]
    fn accumulate_row(
        &self,
        table: &[f64],
        width: usize,
        s: &IntervalSample,
        scale: f64,
        out: &mut [f64],
    ) {
        let c = s.cell as usize;
        let lo = &table[c * width..(c + 1) * width];
        let hi = &table[(c + 1) * width..(c + 2) * width];
        let (wl, wh) = (scale * (1.0 - s.frac), scale * s.frac);
        for ((o, l), h) in out.iter_mut().zip(lo).zip(hi) {
            *o += wl * l + wh * h;
        }
    }

    fn coordinates(&self, s: &IntervalSample, out: &mut [f64]) {
        out[0] = self.points[s.cell as usize] + s.frac * self.h;
    }

    fn node_coordinates(&self, i: usize, out: &mut [f64]) {
        out[0] = self.points[i];
    }

    fn to_belief(&self, values: Vec<f64>) -> Belief {
        Belief::Curve {
            xs: self.points.clone(),
            ys: values,
        }
    }
}

/// Cells per block of the two-level inverse CDF.
const BLOCK: usize = 32;

/// Inverse-CDF sampling over a grid's cells: cell masses, block sums (so that preparing a
/// density costs two vectorisable passes, not a serial prefix sum), then per draw a binary
/// search over the blocks and a scan inside one block. Allocation-free after construction.
///
/// Cost: `prepare` O(cells); `draw` O(log(cells / 32) + 32).
#[derive(Debug, Clone)]
pub struct CellSampler {
    masses: Vec<f64>,
    /// Cumulative mass at the end of each block.
    blocks: Vec<f64>,
    total: f64,
}

impl CellSampler {
    pub fn new(num_cells: usize) -> Self {
        CellSampler {
            masses: vec![0.0; num_cells],
            blocks: vec![0.0; num_cells.div_ceil(BLOCK)],
            total: 0.0,
        }
    }

    /// Loads a non-negative nodal density; returns its total mass (0 or non-finite means it
    /// cannot be sampled).
    #[inline(always)]
    pub fn prepare<G: StateGrid>(&mut self, grid: &G, density: &[f64]) -> f64 {
        grid.cell_masses(density, &mut self.masses);
        let mut acc = 0.0;
        for (end, chunk) in self.blocks.iter_mut().zip(self.masses.chunks(BLOCK)) {
            acc += crate::inference::sosmp::kernels::sum(chunk);
            *end = acc;
        }
        self.total = acc;
        acc
    }

    /// Total mass of the prepared density.
    pub fn total(&self) -> f64 {
        self.total
    }

    /// The prepared cell masses.
    pub fn masses(&self) -> &[f64] {
        &self.masses
    }

    /// One draw from the prepared density (which must have positive finite mass).
    #[inline]
    pub fn draw<G: StateGrid, R: Rng + ?Sized>(&self, grid: &G, rng: &mut R) -> G::Sample {
        let u: f64 = rng.random();
        let (cell, frac) = self.invert(u);
        grid.locate(cell, frac, rng)
    }

    /// The cell and the fraction within it at which the CDF reaches `u · total`.
    #[inline]
    pub fn invert(&self, u: f64) -> (usize, f64) {
        let target = u * self.total;
        let nb = self.blocks.len();
        let block = self.blocks.partition_point(|&c| c <= target).min(nb - 1);
        let mut cum = if block == 0 {
            0.0
        } else {
            self.blocks[block - 1]
        };
        let start = block * BLOCK;
        let end = (start + BLOCK).min(self.masses.len());
        let mut last = None;
        for c in start..end {
            let m = self.masses[c];
            if m > 0.0 {
                if cum + m > target {
                    let frac = ((target - cum) / m).clamp(0.0, 1.0 - f64::EPSILON);
                    return (c, frac);
                }
                last = Some(c);
            }
            cum += m;
        }
        // Rounding put the target past the block's last positive cell (the block sums and the
        // scan add in different orders): take that cell's right end.
        match last {
            Some(c) => (c, 1.0 - f64::EPSILON),
            None => self.last_positive(),
        }
    }

    #[cold]
    fn last_positive(&self) -> (usize, f64) {
        let c = self.masses.iter().rposition(|&m| m > 0.0).unwrap_or(0);
        (c, 1.0 - f64::EPSILON)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trapezoid_weights_integrate_polynomials_of_degree_one() {
        let g = IntervalGrid::with_density(-5.0, 5.0, 100.0).unwrap();
        assert_eq!(g.len(), 1001);
        let s: f64 = g.weights().iter().sum();
        assert!((s - 10.0).abs() < 1e-12);
        let lin: f64 = g
            .weights()
            .iter()
            .zip(g.points())
            .map(|(w, x)| w * (2.0 * x + 1.0))
            .sum();
        assert!((lin - 10.0).abs() < 1e-11);
    }

    #[test]
    fn cell_masses_sum_to_the_quadrature_integral() {
        let g = IntervalGrid::new(0.0, 1.0, 101).unwrap();
        let d: Vec<f64> = g.points().iter().map(|x| (3.0 * x).exp()).collect();
        let mut m = vec![0.0; g.num_cells()];
        g.cell_masses(&d, &mut m);
        let quad: f64 = g.weights().iter().zip(&d).map(|(w, p)| w * p).sum();
        assert!((m.iter().sum::<f64>() - quad).abs() < 1e-12);
        let mut w = vec![0.0; g.len()];
        let tot = g.expectation_weights(&d, &mut w);
        assert!((tot - quad).abs() < 1e-12);
    }

    #[test]
    fn inversion_hits_the_right_cell() {
        let g = IntervalGrid::new(0.0, 4.0, 5).unwrap();
        // Density 0, 0, 1, 1, 0: cells 1, 2, 3 carry masses 0.5, 1, 0.5.
        let mut s = CellSampler::new(g.num_cells());
        let total = s.prepare(&g, &[0.0, 0.0, 1.0, 1.0, 0.0]);
        assert!((total - 2.0).abs() < 1e-15);
        assert_eq!(s.invert(0.0).0, 1);
        let (c, f) = s.invert(0.5);
        assert_eq!(c, 2);
        assert!((f - 0.5).abs() < 1e-12);
        assert_eq!(s.invert(0.999).0, 3);
    }
}
