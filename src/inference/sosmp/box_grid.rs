//! A rectangle of two-dimensional states (flow vectors) as a quadrature grid: the tensor product
//! of two [`IntervalGrid`]s, with the tensor trapezoid rule, bilinear cells for sampling, and a
//! Gaussian difference potential with an offset (the smoothness prior of optical flow, shifted
//! when two pixels search around different base flows).
//!
//! Nodes are numbered row-major, x fastest: node `i = iy · nx + ix` sits at
//! `(x[ix], y[iy])`. A cell is the square between four neighbouring nodes; its mass under the
//! cell rule is `hx hy (p₀₀ + p₁₀ + p₀₁ + p₁₁) / 4` (tensor trapezoid), a draw inside it is
//! uniform, and a node table is interpolated bilinearly at the draw. So, exactly as in 1-D (see
//! [`super::grid`]), the masses sum to the quadrature integral `Σ w_i p_i`, and `E[f(Y)]` for a
//! bilinearly interpolated `f` is `Σ ω_i f_i / Σ ω_i` with `ω_i` a quarter of the mass of each
//! cell touching node `i`.
//!
//! Costs: `cell_masses` and `expectation_weights` O(n); a draw O(log(cells) + 32) plus one
//! uniform for the second coordinate; `accumulate_row` O(4 width).

use rand::Rng;
use serde_json::{Value, json};

use super::grid::{IntervalGrid, StateGrid};
use super::potentials::PairPotential;
use crate::error::{Error, Result};
use crate::inference::Belief;

/// The rectangle `[x_a, x_b] x [y_a, y_b]` with `nx x ny` equally spaced nodes.
#[derive(Debug, Clone, PartialEq)]
pub struct BoxGrid {
    x: IntervalGrid,
    y: IntervalGrid,
    weights: Vec<f64>,
}

/// Largest number of nodes accepted (γ tables are n x r, their set-up n² r).
pub const MAX_BOX_POINTS: usize = 10_000;

impl BoxGrid {
    /// The tensor product of two interval grids. Errors above [`MAX_BOX_POINTS`] nodes.
    pub fn new(x: IntervalGrid, y: IntervalGrid) -> Result<Self> {
        let n = x.len() * y.len();
        if n > MAX_BOX_POINTS {
            return Err(Error::param(
                "displacement grid",
                format!(
                    "{} x {} = {n} nodes; the largest accepted is {MAX_BOX_POINTS}",
                    x.len(),
                    y.len()
                ),
            ));
        }
        let mut weights = Vec::with_capacity(n);
        for wy in y.weights() {
            for wx in x.weights() {
                weights.push(wx * wy);
            }
        }
        Ok(BoxGrid { x, y, weights })
    }

    /// `[-d, d]²` with `per_axis` nodes on each axis.
    pub fn square(d: f64, per_axis: usize) -> Result<Self> {
        BoxGrid::new(
            IntervalGrid::new(-d, d, per_axis)?,
            IntervalGrid::new(-d, d, per_axis)?,
        )
    }

    pub fn x_axis(&self) -> &IntervalGrid {
        &self.x
    }

    pub fn y_axis(&self) -> &IntervalGrid {
        &self.y
    }

    /// Nodes per axis `(nx, ny)`.
    pub fn shape(&self) -> (usize, usize) {
        (self.x.len(), self.y.len())
    }

    /// Node index of `(ix, iy)`.
    pub fn index(&self, ix: usize, iy: usize) -> usize {
        iy * self.x.len() + ix
    }
}

/// A draw on a box grid: cell `cell` (row-major over the `(nx - 1) x (ny - 1)` cells) at
/// fractions `(fx, fy)` of its sides.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct BoxSample {
    pub cell: u32,
    pub fx: f64,
    pub fy: f64,
}

impl StateGrid for BoxGrid {
    type Sample = BoxSample;

    fn dim(&self) -> usize {
        2
    }

    fn len(&self) -> usize {
        self.weights.len()
    }

    fn weights(&self) -> &[f64] {
        &self.weights
    }

    fn volume(&self) -> f64 {
        self.x.volume() * self.y.volume()
    }

    fn num_cells(&self) -> usize {
        (self.x.len() - 1) * (self.y.len() - 1)
    }

    #[inline(always)]
    fn cell_masses(&self, density: &[f64], masses: &mut [f64]) {
        let nx = self.x.len();
        let cx = nx - 1;
        let q = 0.25 * self.x.spacing() * self.y.spacing();
        for (cy, out) in masses.chunks_exact_mut(cx).enumerate() {
            let lo = &density[cy * nx..(cy + 1) * nx];
            let hi = &density[(cy + 1) * nx..(cy + 2) * nx];
            for (i, o) in out.iter_mut().enumerate() {
                *o = q * ((lo[i] + hi[i]) + (lo[i + 1] + hi[i + 1]));
            }
        }
    }

    fn expectation_weights(&self, density: &[f64], out: &mut [f64]) -> f64 {
        let (nx, ny) = self.shape();
        let mut masses = vec![0.0; self.num_cells()];
        self.cell_masses(density, &mut masses);
        out.iter_mut().for_each(|o| *o = 0.0);
        for cy in 0..ny - 1 {
            for cx in 0..nx - 1 {
                let quarter = 0.25 * masses[cy * (nx - 1) + cx];
                for (ix, iy) in [(cx, cy), (cx + 1, cy), (cx, cy + 1), (cx + 1, cy + 1)] {
                    out[iy * nx + ix] += quarter;
                }
            }
        }
        crate::inference::sosmp::kernels::sum(&masses)
    }

    #[inline]
    fn locate<R: Rng + ?Sized>(&self, cell: usize, frac: f64, rng: &mut R) -> BoxSample {
        BoxSample {
            cell: cell as u32,
            fx: frac,
            fy: rng.random(),
        }
    }

    #[inline]
    fn accumulate_row(
        &self,
        table: &[f64],
        width: usize,
        s: &BoxSample,
        scale: f64,
        out: &mut [f64],
    ) {
        let nx = self.x.len();
        let c = s.cell as usize;
        let (cx, cy) = (c % (nx - 1), c / (nx - 1));
        let i00 = cy * nx + cx;
        let i01 = i00 + nx;
        let row = |i: usize| &table[i * width..(i + 1) * width];
        let (fx, fy) = (s.fx, s.fy);
        let w00 = scale * (1.0 - fx) * (1.0 - fy);
        let w10 = scale * fx * (1.0 - fy);
        let w01 = scale * (1.0 - fx) * fy;
        let w11 = scale * fx * fy;
        let (r00, r10, r01, r11) = (row(i00), row(i00 + 1), row(i01), row(i01 + 1));
        for (j, o) in out.iter_mut().enumerate() {
            *o += (w00 * r00[j] + w10 * r10[j]) + (w01 * r01[j] + w11 * r11[j]);
        }
    }

    fn coordinates(&self, s: &BoxSample, out: &mut [f64]) {
        let nx = self.x.len();
        let c = s.cell as usize;
        let (cx, cy) = (c % (nx - 1), c / (nx - 1));
        out[0] = self.x.points()[cx] + s.fx * self.x.spacing();
        out[1] = self.y.points()[cy] + s.fy * self.y.spacing();
    }

    fn node_coordinates(&self, i: usize, out: &mut [f64]) {
        let nx = self.x.len();
        out[0] = self.x.points()[i % nx];
        out[1] = self.y.points()[i / nx];
    }

    fn to_belief(&self, values: Vec<f64>) -> Belief {
        Belief::Grid2 {
            xs: self.x.points().to_vec(),
            ys: self.y.points().to_vec(),
            values,
        }
    }
}

/// `ψ_e(s_a, s_b) = exp(-‖s_a - s_b + δ‖² / (2σ²))` on a box grid, with the offset `δ` a whole
/// number of node spacings per axis (optical flow: two pixels whose search windows are centred
/// on base flows `c_a`, `c_b` have total flows `c + s`, so the smoothness of the total flow is
/// this potential with `δ = c_a - c_b`). Separable: a row is the product of two 1-D Gaussians,
/// looked up in tables over the integer node differences. Symmetric exactly when `δ = 0`.
#[derive(Debug, Clone)]
pub struct ShiftedGaussianPotential {
    nx: usize,
    ny: usize,
    shift: [i64; 2],
    sigma: f64,
    /// `gx[t + ox] = exp(-(t hx)² / (2σ²))` for the integer differences `t` that occur.
    gx: Vec<f64>,
    gy: Vec<f64>,
    ox: i64,
    oy: i64,
    /// Outlier weight `ρ`: the potential is `(1 - ρ) g + ρ`.
    outlier: f64,
}

impl ShiftedGaussianPotential {
    /// Errors unless `sigma` is positive and finite.
    pub fn new(grid: &BoxGrid, sigma: f64, shift: [i64; 2]) -> Result<Self> {
        crate::error::check_positive("smoothness sigma", sigma)?;
        let (nx, ny) = grid.shape();
        let table = |n: usize, s: i64, h: f64| -> (Vec<f64>, i64) {
            let reach = n as i64 - 1 + s.abs();
            let v = (-reach..=reach)
                .map(|t| {
                    let z = t as f64 * h;
                    (-z * z / (2.0 * sigma * sigma)).exp()
                })
                .collect();
            (v, reach)
        };
        let (gx, ox) = table(nx, shift[0], grid.x_axis().spacing());
        let (gy, oy) = table(ny, shift[1], grid.y_axis().spacing());
        Ok(ShiftedGaussianPotential {
            nx,
            ny,
            shift,
            sigma,
            gx,
            gy,
            ox,
            oy,
            outlier: 0.0,
        })
    }

    /// The robust potential `(1 - ρ) exp(-‖s_a - s_b + δ‖² / (2σ²)) + ρ`. Errors unless `ρ` is
    /// in `[0, 1)`.
    pub fn with_outlier(mut self, outlier: f64) -> Result<Self> {
        if !(0.0..1.0).contains(&outlier) {
            return Err(Error::param(
                "smoothness outlier weight",
                format!("must be in [0, 1), got {outlier}"),
            ));
        }
        self.outlier = outlier;
        Ok(self)
    }

    pub fn shift(&self) -> [i64; 2] {
        self.shift
    }

    /// `ψ(s_a = node a, s_b = node b)`.
    pub fn value(&self, a: usize, b: usize) -> f64 {
        let (ax, ay) = ((a % self.nx) as i64, (a / self.nx) as i64);
        let (bx, by) = ((b % self.nx) as i64, (b / self.nx) as i64);
        let g = self.gx[(ax - bx + self.shift[0] + self.ox) as usize]
            * self.gy[(ay - by + self.shift[1] + self.oy) as usize];
        if self.outlier > 0.0 {
            (1.0 - self.outlier) * g + self.outlier
        } else {
            g
        }
    }
}

impl PairPotential for ShiftedGaussianPotential {
    fn len(&self) -> usize {
        self.nx * self.ny
    }

    fn receiver_row<'a>(&'a self, forward: bool, sender: usize, buf: &'a mut [f64]) -> &'a [f64] {
        let (kx, ky) = ((sender % self.nx) as i64, (sender / self.nx) as i64);
        // Forward (a -> b): receiver b = node i, sender a = node k: g(k - i + δ).
        // Backward (b -> a): receiver a = node i, sender b = node k: g(i - k + δ).
        let sign = if forward { -1 } else { 1 };
        for iy in 0..self.ny as i64 {
            let dy = if forward { ky - iy } else { iy - ky };
            let gy = self.gy[(dy + self.shift[1] + self.oy) as usize];
            let row = &mut buf[iy as usize * self.nx..(iy as usize + 1) * self.nx];
            for (ix, b) in row.iter_mut().enumerate() {
                let dx = sign * (ix as i64 - kx);
                *b = gy * self.gx[(dx + self.shift[0] + self.ox) as usize];
            }
        }
        if self.outlier > 0.0 {
            let keep = 1.0 - self.outlier;
            buf.iter_mut().for_each(|b| *b = keep * *b + self.outlier);
        }
        buf
    }

    fn symmetric(&self) -> bool {
        self.shift == [0, 0]
    }

    fn describe(&self) -> Value {
        json!({
            "potential": "exp(-|s_a - s_b + shift|^2 / (2 sigma^2))",
            "sigma": self.sigma,
            "outlier_weight": self.outlier,
            "shift_nodes": self.shift,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    #[test]
    fn tensor_weights_and_masses() {
        let g = BoxGrid::square(2.0, 9).unwrap();
        assert!((g.weights().iter().sum::<f64>() - 16.0).abs() < 1e-12);
        let d: Vec<f64> = (0..g.len())
            .map(|i| {
                let mut p = [0.0; 2];
                g.node_coordinates(i, &mut p);
                (0.3 * p[0] - 0.2 * p[1]).exp()
            })
            .collect();
        let mut m = vec![0.0; g.num_cells()];
        g.cell_masses(&d, &mut m);
        let quad: f64 = g.weights().iter().zip(&d).map(|(w, p)| w * p).sum();
        assert!((m.iter().sum::<f64>() - quad).abs() < 1e-12);
        let mut w = vec![0.0; g.len()];
        assert!((g.expectation_weights(&d, &mut w) - quad).abs() < 1e-12);
        assert!((w.iter().sum::<f64>() - quad).abs() < 1e-12);
    }

    #[test]
    fn bilinear_lookup_reproduces_bilinear_functions() {
        let g = BoxGrid::square(1.0, 5).unwrap();
        // f(x, y) = 1 + 2x - y + 0.5xy is bilinear: interpolation is exact.
        let f = |x: f64, y: f64| 1.0 + 2.0 * x - y + 0.5 * x * y;
        let table: Vec<f64> = (0..g.len())
            .map(|i| {
                let mut p = [0.0; 2];
                g.node_coordinates(i, &mut p);
                f(p[0], p[1])
            })
            .collect();
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(1);
        for c in 0..g.num_cells() {
            let s = g.locate(c, 0.37, &mut rng);
            let mut out = [0.0];
            g.accumulate_row(&table, 1, &s, 1.0, &mut out);
            let mut p = [0.0; 2];
            g.coordinates(&s, &mut p);
            assert!((out[0] - f(p[0], p[1])).abs() < 1e-12);
        }
    }

    #[test]
    fn shifted_rows_match_values() {
        let g = BoxGrid::square(1.0, 5).unwrap();
        let p = ShiftedGaussianPotential::new(&g, 0.7, [1, -2]).unwrap();
        assert!(!p.symmetric());
        let mut buf = vec![0.0; g.len()];
        for k in [0, 7, 24] {
            let row = p.receiver_row(true, k, &mut buf).to_vec();
            for (i, r) in row.iter().enumerate() {
                assert!((r - p.value(k, i)).abs() < 1e-15);
            }
            let row = p.receiver_row(false, k, &mut buf).to_vec();
            for (i, r) in row.iter().enumerate() {
                assert!((r - p.value(i, k)).abs() < 1e-15);
            }
        }
        // ψ(a, b) with s_a - s_b = -δ h is the peak.
        let a = g.index(1, 3);
        let b = g.index(2, 1);
        assert!((p.value(a, b) - 1.0).abs() < 1e-15);
    }
}
