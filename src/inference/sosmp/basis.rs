//! Orthonormal bases on `[a, b]`, evaluated once on the quadrature grid.
//!
//! A message is `m(x) = Σ_{j=1}^r a_j φ_j(x)` (Noorshams & Wainwright 2013, eq. 9). The engine
//! only ever needs the values `φ_j(x_i)` at the grid nodes, so a basis is a table
//! ([`GridBasis`]); a tensor basis on a 2-D grid is built the same way from its own values.
//!
//! | kind | φ_1 | φ_j, j ≥ 2 |
//! |---|---|---|
//! | Fourier | `1/√L` | `√(2/L) cos(2πm(x-a)/L)` for `j = 2m`, `√(2/L) sin(2πm(x-a)/L)` for `j = 2m+1` |
//! | cosine | `1/√L` | `√(2/L) cos((j-1)π(x-a)/L)` |
//! | Legendre | `1/√L` | `√((2j-1)/L) P_{j-1}(2(x-a)/L - 1)` |
//! | Mercer | `√(2/L) sin(π(x-a)/L)` | `√(2/L) sin((2j-1)π(x-a)/L)` (eigenfunctions of the eq. 39 kernel) |
//!
//! Evaluating a message on the grid costs O(n r) (one axpy per basis function). On a 2-D box grid
//! the basis is the tensor product of a 1-D basis on each axis ([`GridBasis::tensor`], r = m²),
//! evaluated separably in O(n m + ny m²).

use serde::{Deserialize, Serialize};

use super::box_grid::BoxGrid;
use super::grid::IntervalGrid;
use super::kernels;
use crate::error::labels::{Labelled, unknown};
use crate::error::{Error, Result};
use crate::inference::sosmp::grid::StateGrid;

/// The orthonormal bases available on an interval.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
#[derive(strum::VariantArray, strum::IntoStaticStr, strum::EnumString)]
#[strum(serialize_all = "lowercase", parse_err_ty = String, parse_err_fn = unknown::<Self>)]
pub enum BasisKind {
    /// Constant, then cosine/sine pairs of increasing frequency (the paper's default).
    #[default]
    Fourier,
    /// Constant, then cosines of half-integer periods (even extension).
    Cosine,
    /// Normalised Legendre polynomials.
    Legendre,
    /// `√(2/L) sin((2j-1)π(x-a)/L)`: the eigenbasis of the eq. 39 kernel potentials.
    Mercer,
}

impl Labelled for BasisKind {
    const WHAT: &str = "basis";
}

impl BasisKind {
    pub fn label(self) -> &'static str {
        self.into()
    }

    /// True when `φ_1` is the constant `1/√L` (then `a_1` of every normalised message is `1/√L`).
    pub fn constant_first(self) -> bool {
        !matches!(self, BasisKind::Mercer)
    }

    /// Writes `φ_1(x), ..., φ_r(x)` on `[a, b]` into `out` (length r). O(r).
    pub fn eval_all(self, x: f64, a: f64, b: f64, out: &mut [f64]) {
        let len = b - a;
        let t = (x - a) / len;
        let c0 = 1.0 / len.sqrt();
        let c = (2.0 / len).sqrt();
        let pi = std::f64::consts::PI;
        match self {
            BasisKind::Fourier => {
                for (j, o) in out.iter_mut().enumerate() {
                    *o = if j == 0 {
                        c0
                    } else {
                        let m = j.div_ceil(2) as f64;
                        let arg = 2.0 * pi * m * t;
                        if j % 2 == 1 {
                            c * arg.cos()
                        } else {
                            c * arg.sin()
                        }
                    };
                }
            }
            BasisKind::Cosine => {
                for (j, o) in out.iter_mut().enumerate() {
                    *o = if j == 0 {
                        c0
                    } else {
                        c * (j as f64 * pi * t).cos()
                    };
                }
            }
            BasisKind::Legendre => {
                let s = 2.0 * t - 1.0;
                let (mut p_prev, mut p) = (0.0, 1.0);
                for (j, o) in out.iter_mut().enumerate() {
                    // p = P_j(s); normalised: √((2j+1)/L) P_j.
                    *o = ((2 * j + 1) as f64 / len).sqrt() * p;
                    let n = j as f64;
                    let next = ((2.0 * n + 1.0) * s * p - n * p_prev) / (n + 1.0);
                    p_prev = p;
                    p = next;
                }
            }
            BasisKind::Mercer => {
                for (j, o) in out.iter_mut().enumerate() {
                    *o = c * ((2 * j + 1) as f64 * pi * t).sin();
                }
            }
        }
    }
}

/// A basis evaluated on a grid: `r` functions at `n` nodes, stored both node-major (for
/// interpolated row look-ups) and function-major (for evaluating a message as r axpys).
#[derive(Debug, Clone, PartialEq)]
pub struct GridBasis {
    name: String,
    r: usize,
    n: usize,
    /// `rows[i * r + j] = φ_j(x_i)`.
    rows: Vec<f64>,
    /// `columns[j * n + i] = φ_j(x_i)`.
    columns: Vec<f64>,
    /// The 1-D factors of a tensor basis, for separable evaluation.
    tensor: Option<TensorFactors>,
}

/// A tensor basis `φ_j(x, y) = f_a(x) g_b(y)` with `j = b · m + a` (`a`, `b` in `0..m`) on a
/// `nx x ny` grid: evaluating `Σ_j c_j φ_j` costs O(ny m² + n m) instead of O(n m²).
#[derive(Debug, Clone, PartialEq)]
struct TensorFactors {
    m: usize,
    nx: usize,
    ny: usize,
    /// `fx[a * nx + ix] = f_a(x_ix)`.
    fx: Vec<f64>,
    /// `gy[iy * m + b] = g_b(y_iy)`.
    gy: Vec<f64>,
}

impl TensorFactors {
    /// `out_i = Σ_j c_j φ_j(node_i)`, one grid row at a time. O(ny m² + n m). Rows of 3 to 17
    /// nodes are accumulated in a fixed-size local array (registers) and stored once.
    #[inline(always)]
    fn evaluate(&self, coeffs: &[f64], out: &mut [f64]) {
        match self.nx {
            3 => self.evaluate_rows::<3>(coeffs, out),
            5 => self.evaluate_rows::<5>(coeffs, out),
            7 => self.evaluate_rows::<7>(coeffs, out),
            9 => self.evaluate_rows::<9>(coeffs, out),
            11 => self.evaluate_rows::<11>(coeffs, out),
            13 => self.evaluate_rows::<13>(coeffs, out),
            15 => self.evaluate_rows::<15>(coeffs, out),
            17 => self.evaluate_rows::<17>(coeffs, out),
            _ => self.evaluate_any(coeffs, out),
        }
    }

    /// The row weights `t_a = Σ_b c_{b m + a} g_b(y_iy)` of grid row `iy`.
    #[inline(always)]
    fn row_weights<'a>(&self, coeffs: &[f64], iy: usize, t: &'a mut [f64]) -> &'a [f64] {
        let m = self.m;
        let g = &self.gy[iy * m..(iy + 1) * m];
        let t = &mut t[..m];
        for (a, ta) in t.iter_mut().enumerate() {
            let mut acc = 0.0;
            for (b, gb) in g.iter().enumerate() {
                acc += coeffs[b * m + a] * gb;
            }
            *ta = acc;
        }
        t
    }

    #[inline(always)]
    fn evaluate_rows<const NX: usize>(&self, coeffs: &[f64], out: &mut [f64]) {
        let mut t = [0.0f64; MAX_TENSOR_SIDE];
        let (rows, _) = out.as_chunks_mut::<NX>();
        let (fx, _) = self.fx.as_chunks::<NX>();
        for (iy, row) in rows.iter_mut().enumerate().take(self.ny) {
            let t = self.row_weights(coeffs, iy, &mut t);
            let mut acc = [0.0f64; NX];
            for (&ta, f) in t.iter().zip(fx) {
                for i in 0..NX {
                    acc[i] += ta * f[i];
                }
            }
            *row = acc;
        }
    }

    #[inline(always)]
    fn evaluate_any(&self, coeffs: &[f64], out: &mut [f64]) {
        let nx = self.nx;
        let mut t = [0.0f64; MAX_TENSOR_SIDE];
        for (iy, row) in out.chunks_exact_mut(nx).enumerate().take(self.ny) {
            let t = self.row_weights(coeffs, iy, &mut t);
            row.iter_mut().for_each(|o| *o = 0.0);
            for (a, &ta) in t.iter().enumerate() {
                let f = &self.fx[a * nx..(a + 1) * nx];
                for (o, fa) in row.iter_mut().zip(f) {
                    *o += ta * fa;
                }
            }
        }
    }
}

/// Largest number of functions per axis of a tensor basis (`r = m²` up to 400).
pub const MAX_TENSOR_SIDE: usize = 20;

/// Largest number of coefficients accepted.
pub const MAX_COEFFICIENTS: usize = 400;

impl GridBasis {
    /// The first `r` functions of `kind` on an interval grid. Errors if `r` is 0, above
    /// [`MAX_COEFFICIENTS`] or too large for the grid to resolve (`r > n / 4`).
    pub fn on_interval(kind: BasisKind, r: usize, grid: &IntervalGrid) -> Result<Self> {
        let n = grid.len();
        if r == 0 || r > MAX_COEFFICIENTS || r > n / 4 {
            return Err(Error::param(
                "coefficients",
                format!(
                    "must be between 1 and {} for a grid of {n} points, got {r}",
                    MAX_COEFFICIENTS.min(n / 4)
                ),
            ));
        }
        let (a, b) = grid.domain();
        let mut rows = vec![0.0; n * r];
        for (row, &x) in rows.chunks_mut(r).zip(grid.points()) {
            kind.eval_all(x, a, b, row);
        }
        Ok(GridBasis::from_rows(kind.label(), r, rows))
    }

    /// The tensor basis `f_a(x) f_b(y)` (`a, b < m`, `r = m²`, function `j = b · m + a`) of the
    /// first `m` functions of `kind` on each axis of a box grid: orthonormal under the tensor
    /// trapezoid rule whenever the 1-D basis is under the 1-D rule. Errors unless
    /// `1 <= m <= 20` and the 1-D functions are orthonormal on the axis grid to 1e-9 (Fourier on
    /// `n` nodes: frequencies below `(n - 1) / 2`, so `m <= n - 2` for odd `n`; 9 nodes take
    /// 7 x 7). O(n m²) set-up.
    pub fn tensor(kind: BasisKind, m: usize, grid: &BoxGrid) -> Result<Self> {
        let (nx, ny) = grid.shape();
        let refuse = |why: String| {
            Error::param(
                "coefficients",
                format!(
                    "{m} x {m} {} functions on a {nx} x {ny} grid: {why}",
                    kind.label()
                ),
            )
        };
        if m == 0 || m > MAX_TENSOR_SIDE {
            return Err(refuse(format!(
                "need between 1 and {MAX_TENSOR_SIDE} per axis"
            )));
        }
        for axis in [grid.x_axis(), grid.y_axis()] {
            if m + 1 >= axis.len() {
                return Err(refuse("too many for the grid to resolve".into()));
            }
            let (a, b) = axis.domain();
            let mut rows = vec![0.0; axis.len() * m];
            for (row, &x) in rows.chunks_mut(m).zip(axis.points()) {
                kind.eval_all(x, a, b, row);
            }
            let defect =
                GridBasis::from_rows("axis", m, rows).orthonormality_defect(axis.weights());
            if defect > 1e-9 {
                return Err(refuse(format!(
                    "not orthonormal on the grid (defect {defect:.1e}); use fewer functions or more labels"
                )));
            }
        }
        let axis = |g: &IntervalGrid| -> Vec<f64> {
            let (a, b) = g.domain();
            let mut out = vec![0.0; g.len() * m];
            for (row, &x) in out.chunks_mut(m).zip(g.points()) {
                kind.eval_all(x, a, b, row);
            }
            out
        };
        let fx_rows = axis(grid.x_axis()); // [ix * m + a]
        let gy = axis(grid.y_axis()); // [iy * m + b]
        let mut fx = vec![0.0; m * nx];
        for ix in 0..nx {
            for a in 0..m {
                fx[a * nx + ix] = fx_rows[ix * m + a];
            }
        }
        let r = m * m;
        let mut rows = vec![0.0; nx * ny * r];
        for iy in 0..ny {
            for ix in 0..nx {
                let row = &mut rows[(iy * nx + ix) * r..(iy * nx + ix + 1) * r];
                for b in 0..m {
                    for a in 0..m {
                        row[b * m + a] = fx_rows[ix * m + a] * gy[iy * m + b];
                    }
                }
            }
        }
        let mut basis = GridBasis::from_rows(&format!("{}-{m}x{m}", kind.label()), r, rows);
        basis.tensor = Some(TensorFactors { m, nx, ny, fx, gy });
        Ok(basis)
    }

    /// Functions per axis when this is a tensor basis.
    pub fn tensor_side(&self) -> Option<usize> {
        self.tensor.as_ref().map(|t| t.m)
    }

    /// A basis from its node-major values (`rows[i * r + j] = φ_j(node_i)`), for grids of any
    /// dimension (a 2-D tensor basis is built this way).
    pub fn from_rows(name: &str, r: usize, rows: Vec<f64>) -> Self {
        assert!(r > 0 && rows.len().is_multiple_of(r), "rows must be n x r");
        let n = rows.len() / r;
        let mut columns = vec![0.0; n * r];
        for i in 0..n {
            for j in 0..r {
                columns[j * n + i] = rows[i * r + j];
            }
        }
        GridBasis {
            name: name.to_string(),
            r,
            n,
            rows,
            columns,
            tensor: None,
        }
    }

    pub fn name(&self) -> &str {
        &self.name
    }

    /// Number of coefficients r.
    pub fn len(&self) -> usize {
        self.r
    }

    pub fn is_empty(&self) -> bool {
        self.r == 0
    }

    /// Number of grid nodes.
    pub fn num_points(&self) -> usize {
        self.n
    }

    /// Node-major values, `rows()[i * r + j] = φ_j(x_i)`.
    pub fn rows(&self) -> &[f64] {
        &self.rows
    }

    /// `φ_j` at every node.
    pub fn column(&self, j: usize) -> &[f64] {
        &self.columns[j * self.n..(j + 1) * self.n]
    }

    /// `out_i = Σ_j a_j φ_j(x_i)`. O(n r); separable for a tensor basis, O(n √r + ny r).
    pub fn evaluate(&self, coeffs: &[f64], out: &mut [f64]) {
        if let Some(t) = &self.tensor {
            t.evaluate(coeffs, &mut out[..self.n]);
            return;
        }
        out.iter_mut().for_each(|o| *o = 0.0);
        for (j, &a) in coeffs.iter().enumerate().take(self.r) {
            kernels::axpy(a, self.column(j), out);
        }
    }

    /// `out_i = max(0, Σ_j a_j φ_j(x_i))`, the clipped message m̂ of Fig. 3. O(n r).
    pub fn evaluate_clipped(&self, coeffs: &[f64], out: &mut [f64]) {
        self.evaluate(coeffs, out);
        for o in out.iter_mut() {
            *o = o.max(0.0);
        }
    }

    /// [`evaluate_clipped`](Self::evaluate_clipped) register-blocked for the hot loop: 16 nodes
    /// at a time accumulate all r terms in registers before one store (the plain version makes
    /// r passes over `out`). Same additions in the same order, so bit-identical results. Always
    /// inlined, so it is compiled with the caller's target features.
    /// A tensor basis takes the separable path (the same as [`evaluate`](Self::evaluate)).
    #[inline(always)]
    pub fn evaluate_clipped_blocked(&self, coeffs: &[f64], out: &mut [f64]) {
        if let Some(t) = &self.tensor {
            let out = &mut out[..self.n];
            t.evaluate(coeffs, out);
            out.iter_mut().for_each(|o| *o = o.max(0.0));
            return;
        }
        const B: usize = 16;
        let (n, r) = (self.n, self.r);
        let coeffs = &coeffs[..r];
        let out = &mut out[..n];
        let mut i = 0;
        while i + B <= n {
            let mut acc = [0.0f64; B];
            for (j, &a) in coeffs.iter().enumerate() {
                let col: &[f64; B] = self.columns[j * n + i..j * n + i + B]
                    .try_into()
                    .expect("block of B");
                for l in 0..B {
                    acc[l] += a * col[l];
                }
            }
            for (o, v) in out[i..i + B].iter_mut().zip(acc) {
                *o = v.max(0.0);
            }
            i += B;
        }
        for (ii, o) in out.iter_mut().enumerate().skip(i) {
            let mut acc = 0.0;
            for (j, &a) in coeffs.iter().enumerate() {
                acc += a * self.columns[j * n + ii];
            }
            *o = acc.max(0.0);
        }
    }

    /// `out_j = Σ_i w_i f_i φ_j(x_i)`: the coefficients of `f` by quadrature. O(n r).
    pub fn project(&self, weights: &[f64], f: &[f64], out: &mut [f64]) {
        let wf: Vec<f64> = weights.iter().zip(f).map(|(w, v)| w * v).collect();
        for (j, o) in out.iter_mut().enumerate().take(self.r) {
            *o = kernels::dot(&wf, self.column(j));
        }
    }

    /// The largest `|Σ_i w_i φ_j φ_l - δ_jl|` on the grid (quadrature orthonormality defect).
    pub fn orthonormality_defect(&self, weights: &[f64]) -> f64 {
        let mut worst: f64 = 0.0;
        for j in 0..self.r {
            let wj: Vec<f64> = weights
                .iter()
                .zip(self.column(j))
                .map(|(w, v)| w * v)
                .collect();
            for l in 0..self.r {
                let g = kernels::dot(&wj, self.column(l));
                let target = if j == l { 1.0 } else { 0.0 };
                worst = worst.max((g - target).abs());
            }
        }
        worst
    }
}

#[cfg(test)]
mod tests {
    use strum::VariantArray;

    use super::*;

    #[test]
    fn every_basis_is_orthonormal_on_the_grid() {
        let g = IntervalGrid::with_density(-5.0, 5.0, 100.0).unwrap();
        for &kind in BasisKind::VARIANTS {
            let b = GridBasis::on_interval(kind, 12, &g).unwrap();
            // Trapezoid on smooth functions: Fourier is exact (periodic), the others carry the
            // O(h²) trapezoid error of their non-periodic products (≈ 1e-4 at h = 0.01 for
            // Legendre degree 11, whose end derivatives are large).
            let tol = match kind {
                BasisKind::Fourier | BasisKind::Mercer => 1e-12,
                BasisKind::Cosine => 1e-12,
                BasisKind::Legendre => 2e-3,
            };
            let d = b.orthonormality_defect(g.weights());
            assert!(d < tol, "{kind:?}: defect {d}");
        }
    }

    #[test]
    fn fourier_first_functions() {
        let mut out = [0.0; 3];
        BasisKind::Fourier.eval_all(0.0, -5.0, 5.0, &mut out);
        assert!((out[0] - 1.0 / 10f64.sqrt()).abs() < 1e-15);
        // cos(2π · 0.5) = -1.
        assert!((out[1] + (0.2f64).sqrt()).abs() < 1e-12);
        assert!(out[2].abs() < 1e-12);
    }
}
