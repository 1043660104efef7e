//! Potentials of the paper's experiments, as functions that fill grid tables.
//!
//! * Gaussian mixtures (eq. 37): `ψ_u(x) = Σ_c π_c exp(-(x - μ_c)² / (2σ_c²))` with 3
//!   components, means uniform in `[-3, 3]`, variances uniform in `(0, 0.5]`, weights uniform
//!   then normalised to sum to 1; `ψ_uv(x_u, x_v) = Σ_c π_c exp(-(x_v - x_u)² / (2σ_c²))`. As the
//!   paper writes them these are *unnormalised* bumps, each of height `π_c`
//!   ([`MixtureForm::Eq37`], the default); [`MixtureForm::Normalised`] uses the densities
//!   `π_c N(x; μ_c, σ_c²)` instead (taller and peakier for small variances). Variances below a
//!   grid-resolvable value are clamped up to it (and counted). Evaluation O(components).
//! * Mercer kernels (eq. 39): `ψ_uv(x, y) = Σ_{j≤J} j^{-α} φ_j(x) φ_j(y)` with the sine
//!   eigenbasis `φ_j = √(2/L) sin((2j-1)π(x-a)/L)`, clipped below at a small positive value where
//!   it is not positive (α = 0.1 has large negative lobes; both α vanish on the boundary).
//!
//! A pair potential is consumed as rows: for a directed message `v -> u` the engine needs
//! `ψ(x_u = x_i, x_v = y_k)` for every receiver node `i` at a fixed sender node `k`
//! ([`PairPotential::receiver_row`]). Both potentials here depend on the node indices only
//! through `i - k` and `i + k` on the uniform grid, so a row is a slice of a precomputed table
//! (O(n) to fill, no transcendental functions).

use rand::Rng;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use super::grid::{IntervalGrid, StateGrid};
use crate::error::labels::{Labelled, unknown};
use crate::error::{Error, Result, check_positive, check_range};

/// What one mixture component is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
#[derive(strum::VariantArray, strum::IntoStaticStr, strum::EnumString)]
#[strum(serialize_all = "lowercase", parse_err_ty = String, parse_err_fn = unknown::<Self>)]
pub enum MixtureForm {
    /// Eq. 37 as written: `π exp(-(x - μ)² / (2σ²))`, a bump of height `π`.
    #[default]
    Eq37,
    /// The normalised density `π N(x; μ, σ²)`, of height `π / √(2πσ²)`.
    Normalised,
}

impl Labelled for MixtureForm {
    const WHAT: &str = "mixture form";
}

impl MixtureForm {
    pub fn label(self) -> &'static str {
        self.into()
    }
}

/// A weighted sum of Gaussian bumps (eq. 37) or of normalised Gaussian densities, per `form`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GaussianMixture {
    pub weights: Vec<f64>,
    pub means: Vec<f64>,
    pub variances: Vec<f64>,
    #[serde(default)]
    pub form: MixtureForm,
}

/// Mixture components per potential (eq. 37).
pub const MIXTURE_COMPONENTS: usize = 3;
/// Node-potential means are uniform in `[-MEAN_RANGE, MEAN_RANGE]`.
pub const MEAN_RANGE: f64 = 3.0;
/// Variances are uniform in `(0, MAX_VARIANCE]`.
pub const MAX_VARIANCE: f64 = 0.5;
/// The smallest standard deviation kept, in grid spacings: below about three spacings a
/// Gaussian is sampled by too few nodes for the cell sampler's linear interpolation.
pub const MIN_SD_SPACINGS: f64 = 3.0;

/// How eq. 37 draws a mixture.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MixturePrior {
    pub components: usize,
    /// Means uniform in `[-mean_range, mean_range]` (0 gives centred mixtures, as for edges).
    pub mean_range: f64,
    /// Variances uniform in `(0, max_variance]`.
    pub max_variance: f64,
    /// Variances below this are raised to it.
    pub min_variance: f64,
    /// Bumps (eq. 37) or normalised densities.
    pub form: MixtureForm,
}

impl MixturePrior {
    /// The paper's node potentials (Section 5.1) on a grid of spacing `spacing`: three
    /// components, means in [-3, 3], variances in (0, 0.5] raised to three grid spacings.
    pub fn node_potentials(spacing: f64, form: MixtureForm) -> MixturePrior {
        MixturePrior {
            components: MIXTURE_COMPONENTS,
            mean_range: MEAN_RANGE,
            max_variance: MAX_VARIANCE,
            min_variance: (MIN_SD_SPACINGS * spacing).powi(2),
            form,
        }
    }
}

/// One difference potential `ψ(x, y) = m(x − y)` per edge, each `m` a centred mixture drawn
/// from `prior` with its means at 0 (how eq. 37 draws edge potentials). O(edges · n).
pub fn draw_difference_potentials<R: Rng + ?Sized>(
    rng: &mut R,
    prior: &MixturePrior,
    grid: &IntervalGrid,
    edges: usize,
) -> Vec<std::sync::Arc<dyn PairPotential>> {
    let centred = MixturePrior {
        mean_range: 0.0,
        ..*prior
    };
    (0..edges)
        .map(|_| {
            let m = GaussianMixture::draw(rng, &centred).0;
            std::sync::Arc::new(DifferencePotential::from_mixture(grid, &m))
                as std::sync::Arc<dyn PairPotential>
        })
        .collect()
}

impl GaussianMixture {
    /// `Σ_c π_c exp(-(x - μ_c)² / (2σ_c²))` (eq. 37), or `Σ_c π_c N(x; μ_c, σ_c²)` for the
    /// normalised form. O(components).
    pub fn eval(&self, x: f64) -> f64 {
        let norm = match self.form {
            MixtureForm::Eq37 => None,
            MixtureForm::Normalised => Some(1.0 / (2.0 * std::f64::consts::PI).sqrt()),
        };
        self.weights
            .iter()
            .zip(&self.means)
            .zip(&self.variances)
            .map(|((w, m), v)| {
                let z = x - m;
                let height = norm.map_or(*w, |c| w * c / v.sqrt());
                height * (-0.5 * z * z / v).exp()
            })
            .sum()
    }

    /// A draw from `prior`; also returns how many variances were clamped up.
    pub fn draw<R: Rng + ?Sized>(rng: &mut R, prior: &MixturePrior) -> (Self, usize) {
        let k = prior.components;
        let mut weights: Vec<f64> = (0..k).map(|_| 1.0 - rng.random::<f64>()).collect();
        let total: f64 = weights.iter().sum();
        weights.iter_mut().for_each(|w| *w /= total);
        let means: Vec<f64> = (0..k)
            .map(|_| {
                if prior.mean_range > 0.0 {
                    rng.random_range(-prior.mean_range..=prior.mean_range)
                } else {
                    0.0
                }
            })
            .collect();
        let mut clamped = 0;
        let variances: Vec<f64> = (0..k)
            .map(|_| {
                let v = (1.0 - rng.random::<f64>()) * prior.max_variance;
                if v < prior.min_variance {
                    clamped += 1;
                    prior.min_variance
                } else {
                    v
                }
            })
            .collect();
        (
            GaussianMixture {
                weights,
                means,
                variances,
                form: prior.form,
            },
            clamped,
        )
    }

    /// The mixture at every node of `grid`.
    pub fn on_grid(&self, grid: &IntervalGrid) -> Vec<f64> {
        grid.points().iter().map(|&x| self.eval(x)).collect()
    }
}

/// A pairwise potential `ψ_e(x_a, x_b)` of an edge `(a, b)`, read as rows over a grid.
pub trait PairPotential: Send + Sync + std::fmt::Debug {
    /// Number of grid nodes it is defined on.
    fn len(&self) -> usize;
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// The row `ψ(receiver = node i, sender = node k)` for all `i`. `forward` is true for a
    /// message `a -> b` (receiver `b`, so the row is `ψ_e(x_a = y_k, x_b = x_i)`), false for
    /// `b -> a`. Returns either a slice of an internal table or `buf` after filling it. O(n).
    fn receiver_row<'a>(&'a self, forward: bool, sender: usize, buf: &'a mut [f64]) -> &'a [f64];
    /// True when `ψ_e(s, t) = ψ_e(t, s)`: both directions then share one γ table.
    fn symmetric(&self) -> bool;
    /// Parameters for results.json.
    fn describe(&self) -> Value;
}

/// `ψ_e(x_a, x_b) = g(x_b - x_a)` on a uniform grid, stored as `g` at the `2n - 1` differences.
#[derive(Debug, Clone)]
pub struct DifferencePotential {
    n: usize,
    /// `table[m + n - 1] = g(m h)` for `m = -(n-1)..=(n-1)`.
    table: Vec<f64>,
    symmetric: bool,
    description: Value,
}

impl DifferencePotential {
    /// Tabulates `g` at every node difference of `grid`. O(n) evaluations of `g`.
    pub fn new(grid: &IntervalGrid, g: impl Fn(f64) -> f64, description: Value) -> Self {
        let n = grid.len();
        let h = grid.spacing();
        let table: Vec<f64> = (0..2 * n - 1)
            .map(|k| g((k as f64 - (n - 1) as f64) * h))
            .collect();
        let symmetric = (0..n).all(|m| table[n - 1 + m] == table[n - 1 - m]);
        DifferencePotential {
            n,
            table,
            symmetric,
            description,
        }
    }

    /// The eq. 37 edge potential of a centred mixture.
    pub fn from_mixture(grid: &IntervalGrid, mixture: &GaussianMixture) -> Self {
        let desc = serde_json::to_value(mixture).unwrap_or(Value::Null);
        DifferencePotential::new(grid, |d| mixture.eval(d), desc)
    }

    /// `g` at the differences `-(n-1)h ..= (n-1)h`.
    pub fn table(&self) -> &[f64] {
        &self.table
    }
}

impl PairPotential for DifferencePotential {
    fn len(&self) -> usize {
        self.n
    }

    fn receiver_row<'a>(&'a self, forward: bool, sender: usize, buf: &'a mut [f64]) -> &'a [f64] {
        let n = self.n;
        // Forward (receiver b = x_i, sender a = y_k): g(x_i - y_k) = table[i - k + n - 1].
        let start = n - 1 - sender;
        if forward || self.symmetric {
            &self.table[start..start + n]
        } else {
            // Backward (receiver a = x_i, sender b = y_k): g(y_k - x_i) = table[k - i + n - 1].
            for (i, b) in buf.iter_mut().enumerate() {
                *b = self.table[sender + n - 1 - i];
            }
            buf
        }
    }

    fn symmetric(&self) -> bool {
        self.symmetric
    }

    fn describe(&self) -> Value {
        self.description.clone()
    }
}

/// Statistics of where a kernel potential had to be clipped.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct ClipReport {
    /// Smallest raw value over the grid pairs.
    pub min_value: f64,
    /// Largest raw value over the grid pairs.
    pub max_value: f64,
    /// The floor the potential was clipped to.
    pub clip_value: f64,
    /// Fraction of grid pairs `(x_i, y_k)` where the raw value was below the floor.
    pub clipped_fraction: f64,
    /// Fraction of grid pairs where the raw value was negative (below `-1e-9 · max`).
    pub negative_fraction: f64,
    /// Smallest value at the pairs (point between two nodes, node): what the grid misses.
    pub offgrid_min_value: f64,
    /// Fraction of those pairs where the kernel is negative (below `-1e-9 · max`).
    pub offgrid_negative_fraction: f64,
}

/// A kernel value counts as negative below `-NEGATIVE_RELATIVE · max ψ` (beyond rounding).
pub const NEGATIVE_RELATIVE: f64 = 1e-9;

/// Relative clip floor of kernel potentials: `clip = KERNEL_CLIP_RELATIVE · max ψ`.
pub const KERNEL_CLIP_RELATIVE: f64 = 1e-6;

/// The eq. 39 kernel `Σ_{j≤J} j^{-α} φ_j(x) φ_j(y)` with the sine eigenbasis, clipped below.
///
/// With `φ_j φ_j = (1/L)(cos ω_j (x - y) - cos ω_j (x + y - 2a))` and grid nodes
/// `x_i = a + i h`, the kernel at `(x_i, y_k)` is `c[|i - k|] - c[i + k]` with
/// `c[m] = (1/L) Σ_j j^{-α} cos(ω_j h m)`: `2n - 1` sums of J terms instead of `n² J`.
/// Note that at `n` nodes the sine modes `j` and `n - j` coincide on the grid (aliasing), so the
/// tabulated kernel is the one whose eigenvalue on grid mode `j` is `λ_j + λ_{n-j}`; at 100 points
/// per unit and `J = 1000` this matters only for α well below 1.
#[derive(Debug, Clone)]
pub struct MercerKernelPotential {
    n: usize,
    c: Vec<f64>,
    clip: f64,
    alpha: f64,
    terms: usize,
    report: ClipReport,
}

impl MercerKernelPotential {
    /// Tabulates the kernel on `grid` (uniform). O(n J) set-up, O(n²) for the clip statistics.
    pub fn new(grid: &IntervalGrid, alpha: f64, terms: usize) -> Result<Self> {
        check_range("alpha", alpha, 0.0, 10.0)?;
        if !(1..=100_000).contains(&terms) {
            return Err(Error::param(
                "kernel terms",
                format!("must be between 1 and 100000, got {terms}"),
            ));
        }
        let n = grid.len();
        let len = grid.volume();
        let h = grid.spacing();
        check_positive("grid spacing", h)?;
        let pi = std::f64::consts::PI;
        let lambdas: Vec<f64> = (1..=terms).map(|j| (j as f64).powf(-alpha)).collect();
        let c: Vec<f64> = (0..2 * n - 1)
            .map(|m| {
                let base = pi * h * m as f64 / len;
                lambdas
                    .iter()
                    .enumerate()
                    .map(|(j, l)| l * ((2 * j + 1) as f64 * base).cos())
                    .sum::<f64>()
                    / len
            })
            .collect();
        let raw = |i: usize, k: usize| c[i.abs_diff(k)] - c[i + k];
        let mut min_value = f64::INFINITY;
        let mut max_value = f64::NEG_INFINITY;
        for i in 0..n {
            for k in 0..n {
                let v = raw(i, k);
                min_value = min_value.min(v);
                max_value = max_value.max(v);
            }
        }
        if !(max_value > 0.0 && max_value.is_finite()) {
            return Err(Error::param(
                "kernel",
                format!("has no positive value on the grid (max {max_value})"),
            ));
        }
        // Negative beyond rounding: below -1e-9 of the maximum.
        let tol = NEGATIVE_RELATIVE * max_value;
        let mut negative = 0usize;
        for i in 0..n {
            for k in 0..n {
                negative += usize::from(raw(i, k) < -tol);
            }
        }
        // Between the nodes, at x_i + δh with δ the golden fraction (an offset at which no
        // sine mode cancels, unlike the nodes and their midpoints): the kernel at
        // (x_i + δh, y_k) is c(i - k + δ) - c(i + k + δ), with c(-m + δ) = c(m - δ).
        let delta = 0.5 * (5f64.sqrt() - 1.0);
        let c_at = |offset: f64| -> Vec<f64> {
            (0..2 * n - 1)
                .map(|m| {
                    let base = pi * h * (m as f64 + offset) / len;
                    lambdas
                        .iter()
                        .enumerate()
                        .map(|(j, l)| l * ((2 * j + 1) as f64 * base).cos())
                        .sum::<f64>()
                        / len
                })
                .collect()
        };
        let (c_plus, c_minus) = (c_at(delta), c_at(1.0 - delta));
        let mut offgrid_min_value = f64::INFINITY;
        let mut offgrid_negative = 0usize;
        for i in 0..n - 1 {
            for k in 0..n {
                let diff = if i >= k {
                    c_plus[i - k]
                } else {
                    c_minus[k - i - 1]
                };
                let v = diff - c_plus[i + k];
                offgrid_min_value = offgrid_min_value.min(v);
                offgrid_negative += usize::from(v < -tol);
            }
        }
        let clip = KERNEL_CLIP_RELATIVE * max_value;
        let mut clipped = 0usize;
        for i in 0..n {
            for k in 0..n {
                clipped += usize::from(raw(i, k) < clip);
            }
        }
        let pairs = (n * n) as f64;
        Ok(MercerKernelPotential {
            n,
            c,
            clip,
            alpha,
            terms,
            report: ClipReport {
                min_value,
                max_value,
                clip_value: clip,
                clipped_fraction: clipped as f64 / pairs,
                negative_fraction: negative as f64 / pairs,
                offgrid_min_value,
                offgrid_negative_fraction: offgrid_negative as f64 / ((n - 1) * n) as f64,
            },
        })
    }

    pub fn clip_report(&self) -> ClipReport {
        self.report
    }

    /// The clipped kernel at nodes `(i, k)`.
    pub fn value(&self, i: usize, k: usize) -> f64 {
        (self.c[i.abs_diff(k)] - self.c[i + k]).max(self.clip)
    }
}

impl PairPotential for MercerKernelPotential {
    fn len(&self) -> usize {
        self.n
    }

    fn receiver_row<'a>(&'a self, _forward: bool, sender: usize, buf: &'a mut [f64]) -> &'a [f64] {
        let k = sender;
        for (i, b) in buf.iter_mut().enumerate() {
            *b = (self.c[i.abs_diff(k)] - self.c[i + k]).max(self.clip);
        }
        buf
    }

    fn symmetric(&self) -> bool {
        true
    }

    fn describe(&self) -> Value {
        json!({
            "kernel": "mercer",
            "alpha": self.alpha,
            "terms": self.terms,
            "eigenfunctions": "sqrt(2/L) sin((2j-1) pi (x-a) / L)",
            "clip": self.report,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normalised_mixture_is_a_density() {
        let g = IntervalGrid::with_density(-5.0, 5.0, 100.0).unwrap();
        let m = GaussianMixture {
            weights: vec![0.3, 0.7],
            means: vec![-1.0, 1.0],
            variances: vec![0.2, 0.05],
            form: MixtureForm::Normalised,
        };
        let v = m.on_grid(&g);
        let s: f64 = v.iter().zip(g.weights()).map(|(a, w)| a * w).sum();
        assert!((s - 1.0).abs() < 1e-10);
    }

    #[test]
    fn eq37_mixture_has_bumps_of_height_pi() {
        // [-10, 10]: both bumps lie 6 (> 13 sd) inside, so the grid holds all their mass.
        let g = IntervalGrid::with_density(-10.0, 10.0, 100.0).unwrap();
        // Far-apart components: the value at each mean is its weight (plus a negligible tail
        // of the other, exp(-8² / 0.4) < 1e-69), and the integral is Σ π_c √(2π σ_c²).
        let m = GaussianMixture {
            weights: vec![0.3, 0.7],
            means: vec![-4.0, 4.0],
            variances: vec![0.2, 0.05],
            form: MixtureForm::Eq37,
        };
        assert!((m.eval(-4.0) - 0.3).abs() < 1e-15);
        assert!((m.eval(4.0) - 0.7).abs() < 1e-15);
        let two_pi = 2.0 * std::f64::consts::PI;
        let mass = 0.3 * (two_pi * 0.2).sqrt() + 0.7 * (two_pi * 0.05).sqrt();
        let s: f64 = m
            .on_grid(&g)
            .iter()
            .zip(g.weights())
            .map(|(a, w)| a * w)
            .sum();
        assert!((s - mass).abs() < 1e-10, "{s} against {mass}");
        // The normalised form is the same mixture with each bump divided by √(2πσ²).
        let n = GaussianMixture {
            form: MixtureForm::Normalised,
            ..m.clone()
        };
        let x = 3.9;
        let direct = 0.7 * (-(x - 4.0f64).powi(2) / 0.1).exp() / (two_pi * 0.05).sqrt()
            + 0.3 * (-(x + 4.0f64).powi(2) / 0.4).exp() / (two_pi * 0.2).sqrt();
        assert!((n.eval(x) - direct).abs() < 1e-14);
    }

    #[test]
    fn difference_rows_match_the_function() {
        let g = IntervalGrid::new(-1.0, 1.0, 21).unwrap();
        let p = DifferencePotential::new(&g, |d| (d + 0.3f64).exp(), Value::Null);
        assert!(!p.symmetric());
        let mut buf = vec![0.0; 21];
        let pts = g.points().to_vec();
        let row = p.receiver_row(true, 4, &mut buf).to_vec();
        for i in 0..21 {
            // forward: ψ(x_a = y_4, x_b = x_i) = g(x_i - y_4)
            assert!((row[i] - (pts[i] - pts[4] + 0.3).exp()).abs() < 1e-12);
        }
        let row = p.receiver_row(false, 4, &mut buf).to_vec();
        for i in 0..21 {
            // backward: ψ(x_a = x_i, x_b = y_4) = g(y_4 - x_i)
            assert!((row[i] - (pts[4] - pts[i] + 0.3).exp()).abs() < 1e-12);
        }
    }

    #[test]
    fn kernel_table_matches_the_direct_sum() {
        let g = IntervalGrid::new(-5.0, 5.0, 41).unwrap();
        let kern = MercerKernelPotential::new(&g, 1.0, 30).unwrap();
        let mut phi_x = vec![0.0; 30];
        let mut phi_y = vec![0.0; 30];
        let pts = g.points();
        for (i, k) in [(3, 7), (20, 20), (10, 33)] {
            super::super::basis::BasisKind::Mercer.eval_all(pts[i], -5.0, 5.0, &mut phi_x);
            super::super::basis::BasisKind::Mercer.eval_all(pts[k], -5.0, 5.0, &mut phi_y);
            let direct: f64 = (0..30).map(|j| phi_x[j] * phi_y[j] / (j + 1) as f64).sum();
            assert!(
                (kern.value(i, k) - direct.max(kern.clip_report().clip_value)).abs() < 1e-10,
                "({i},{k})"
            );
        }
    }
}
