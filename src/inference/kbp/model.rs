//! The learned kernel-BP model of Song et al., "Kernel Belief Propagation" (AISTATS 2011):
//! everything that does not change while messages iterate. A message is a coefficient vector in
//! a [`MessageBasis`]; one update of a message whose sender multiplies `p` factors (its other
//! incoming messages and its evidence) is
//!
//! `values = A_p c` (each factor evaluated at the class's points), `g = ⊙ values`,
//! `c_new = U_p g`,
//!
//! with, per update mode:
//! * **full** (eq. 12, collapsed exactly onto the U distinct values): the kernel expansion
//!   `β_new = (N_b K_u + λ m I)^{-1} N_abᵀ g` (see `collapse.rs`), carried in orthonormal
//!   coordinates `c = R_u β` of an exact pivoted Cholesky factor `K_u = R_uᵀ R_u` (to
//!   [`FULL_FACTOR_EPSILON`]): `A = R_uᵀ`, `U = R_u (N_b K_u + λ m I)^{-1} N_abᵀ`; cost O(U²)
//!   per message;
//! * **linear** (Sec. 5.1): `A = F_b(a)ᵀ` (m x l: the b-basis features of every a-point),
//!   `U = (R_b R_bᵀ + λ m I)^{-1} R_b`; cost O(l m) per message;
//! * **constant** (Sec. 5.3): tensor incomplete Cholesky of the a-points under `k^p` with pivots
//!   `I'`, `A = E_p` (l' x l, rows `f_b(a_I')`), `U = P_p = (R_b R_bᵀ + λ m I)^{-1} R_b W_pᵀ`,
//!   `W_p = R_{I'}^{-1} R_tensor`; cost O(l l') per message, independent of m and C.
//!
//! Every form's coefficients are coordinates in an orthonormal basis of the RKHS, so a
//! coefficient vector's Euclidean norm is the message's RKHS norm and the engine normalises and
//! damps the same functions whatever the form. (Normalising the kernel-expansion weights β
//! instead weighs directions that barely change the function: `K_u` is near singular at the
//! default bandwidth, and the full form ended 16% above the low-rank ones in Appendix 3's study.)
//!
//! λ is in Gram form throughout (`L + λ·m·I`, m = number of template pairs; the evidence solve
//! uses n = number of observation pairs). Set-up cost: full O(U³ + m), linear O(m l²),
//! constant O(m (l² + l'²) + m l l') per factor count, evidence O(n · pixels + U² · pixels)
//! (O(U · pixels + U² · pixels) with the expected observation template).
//!
//! **The expected observation template** (a deviation from Sec. 6.1, used when the noise is
//! known, [`KbpTraining::observation_noise`]). The paper learns the likelihood from one noisy
//! draw `o_i` of each clean training value `h_i`: the evidence message regresses
//! `k_o(o_i, y)` on `h_i`. When the noise is Gaussian with a known σ (the generator the paper
//! draws its training pair from), the model takes the expectation of that estimator over the
//! draws instead, in closed form:
//! `E_{o ~ N(h, σ²)} k_o(o, y) = σ_o / √(σ_o² + σ²) · exp(−(y − h)² / (2 (σ_o² + σ²)))`,
//! the limit of infinitely many independent draws per training pixel. The observation
//! bandwidth σ_o is still the median heuristic of the drawn noisy values, so the estimator is
//! the paper's, without its sampling noise (which the near-interpolating regression passes on
//! to the likelihood at rarely seen gray levels). Measured (README, "The expected observation
//! template"): kernel BP's RMSE falls on both photographs trained on each other, the synthetic
//! pair and the sunset, and the evidence set-up is cheaper than with one draw.

use std::collections::BTreeMap;

use nalgebra::{DMatrix, DVector};
use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use super::collapse::{Collapsed, CountWeightedSolver, collapse_onto, distinct_values};
use super::{Bandwidth, KbpSettings, KbpUpdate};
use crate::error::{Error, KernelError, Result};
use crate::kernel::{
    IncompleteCholesky, IncompleteCholeskyOptions, Kernel, Lambda, MedianHeuristic, Points,
    RegularizedCholesky, gram, median_heuristic,
};

/// Training samples: the edge template and the observation template (1-D values).
#[derive(Debug, Clone, Copy)]
pub struct KbpTraining<'a> {
    /// Sender values a_i (x_t of message t -> s).
    pub sender: &'a [f64],
    /// Receiver values b_i (x_s), paired with `sender`.
    pub receiver: &'a [f64],
    /// Clean values h_i of the observation template.
    pub hidden: &'a [f64],
    /// Observed (noisy) values o_i, paired with `hidden`.
    pub observed: &'a [f64],
    /// The known standard deviation σ of Gaussian observation noise, if known: then the
    /// evidence uses the observation template's expectation over the noise in closed form (see
    /// the module doc) and `observed` only sets the observation bandwidth. None: the paper's
    /// estimator from the drawn `observed` values.
    pub observation_noise: Option<f64>,
}

/// Residual tolerance of the full form's factor of `K_u`: its residual diagonal ends below
/// 1e-16 of `k(x, x)`, so the factor reproduces the Gram matrix to rounding.
pub const FULL_FACTOR_EPSILON: f64 = 1e-8;

/// How a message's coefficients become a function: `m(x) = c · f(x)`, with `f` the
/// incomplete-Cholesky features of the b-points (low-rank updates) or of every distinct value,
/// to full numerical rank (full update).
#[derive(Debug, Clone)]
pub struct MessageBasis(Box<IncompleteCholesky>);

impl MessageBasis {
    pub fn dim(&self) -> usize {
        self.0.rank()
    }

    /// `len(xs) x dim`: row i evaluates every basis function at `xs[i]`.
    pub fn eval_matrix(&self, xs: &[f64]) -> Result<DMatrix<f64>> {
        Ok(self.0.features_of(&Points::from_slice(xs))?.transpose())
    }
}

/// The evaluation and update matrices of one factor count p.
#[derive(Debug, Clone)]
pub struct FactorClass {
    /// `n x dim`: evaluates a message at the class's n points.
    pub eval: DMatrix<f64>,
    /// `dim x n`: maps the product of the factors at those points to the new message.
    pub update: DMatrix<f64>,
}

/// Evidence messages of many observations: coefficient columns and where each observation's
/// message sits among them ([`KbpModel::evidence_table`]).
#[derive(Debug, Clone)]
pub struct EvidenceTable {
    /// `dim x columns`.
    pub coefficients: DMatrix<f64>,
    pub lookup: EvidenceLookup,
}

/// How an observation finds its evidence message in an [`EvidenceTable`].
#[derive(Debug, Clone)]
pub enum EvidenceLookup {
    /// Column t is observation t's message, exactly.
    PerObservation,
    /// Observation y lies at `(y - lo) / step` on a grid of columns, between two of them.
    Grid {
        lo: f64,
        step: f64,
        observations: Vec<f64>,
    },
}

impl EvidenceTable {
    /// Observations covered.
    pub fn len(&self) -> usize {
        match &self.lookup {
            EvidenceLookup::PerObservation => self.coefficients.ncols(),
            EvidenceLookup::Grid { observations, .. } => observations.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Observation t's column g and the weight w of column g + 1 (its message is
    /// `(1 - w) col_g + w col_{g+1}`).
    #[inline(always)]
    pub fn position(&self, t: usize) -> (usize, f64) {
        match &self.lookup {
            EvidenceLookup::PerObservation => (t, 0.0),
            EvidenceLookup::Grid {
                lo,
                step,
                observations,
            } => {
                let pos = (observations[t] - lo) / step;
                let g = (pos.floor() as usize).min(self.coefficients.ncols() - 2);
                (g, pos - g as f64)
            }
        }
    }

    /// Observation t's column of `table` (any matrix with one column per table column, e.g.
    /// the evidence evaluated at some points) into `out`.
    #[inline(always)]
    pub fn interpolate(&self, table: &DMatrix<f64>, t: usize, out: &mut [f64]) {
        let (g, w) = self.position(t);
        // Columns are contiguous (column-major): plain slices, so the blend is vectorised.
        let rows = table.nrows();
        let a = &table.as_slice()[g * rows..(g + 1) * rows];
        if w == 0.0 {
            out.copy_from_slice(a);
            return;
        }
        let b = &table.as_slice()[(g + 1) * rows..(g + 2) * rows];
        for ((o, x), y) in out.iter_mut().zip(a).zip(b) {
            *o = (1.0 - w) * x + w * y;
        }
    }
}

/// Ranks and conditioning, for display and results.json.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct KbpDiagnostics {
    /// Rank l of the b-point features (low-rank updates).
    pub feature_rank: Option<usize>,
    /// Rank l' of the tensor features per factor count p (constant time).
    pub tensor_ranks: BTreeMap<usize, usize>,
    /// Distinct training values U.
    pub distinct_values: usize,
    /// Template pairs m and observation pairs n.
    pub template_pairs: usize,
    pub observation_pairs: usize,
    /// Condition-number estimates of the regularised matrices that are factorised.
    pub condition_numbers: BTreeMap<String, f64>,
    /// Collapsing repeated values is exact here; said in results.
    pub collapsed: bool,
    /// Seconds spent in each set-up phase.
    pub setup_timings: BTreeMap<String, f64>,
}

/// Everything the kernel-BP iterations need.
#[derive(Debug, Clone)]
pub struct KbpModel {
    pub update: KbpUpdate,
    /// Bandwidths actually used (RBF sigma, gray levels) for hidden and observed values.
    pub sigma_hidden: f64,
    pub sigma_observed: f64,
    pub lambda: f64,
    pub basis: MessageBasis,
    /// Per factor count p.
    pub classes: BTreeMap<usize, FactorClass>,
    pub diagnostics: KbpDiagnostics,
    hidden_kernel: Kernel,
    observed_kernel: Kernel,
    /// Distinct training values u (a, b and h together).
    values: Vec<f64>,
    hidden: Collapsed,
    /// Observation template sorted by the noisy value, with each pair's clean-value index
    /// (empty with a known noise, whose expectation replaces the drawn values).
    observed_sorted: Vec<(f64, usize)>,
    /// Known Gaussian observation noise σ (the expected observation template), or None.
    observation_noise: Option<f64>,
    /// `N_h K_u + λ n I` for the evidence messages.
    evidence_solver: CountWeightedSolver,
    /// Basis features of the distinct values, `dim x U`: maps kernel-expansion weights over
    /// them to coefficients.
    features_of_values: DMatrix<f64>,
}

fn bandwidth(
    which: Bandwidth,
    multiplier: f64,
    samples: &[f64],
    what: &'static str,
) -> Result<f64> {
    match which {
        Bandwidth::Value(s) => {
            crate::error::check_positive(what, s)?;
            Ok(s)
        }
        Bandwidth::Auto => {
            let opts = MedianHeuristic {
                multiplier,
                ..MedianHeuristic::default()
            };
            median_heuristic(&Points::from_slice(samples), &opts).map_err(|e| match e {
                KernelError::ZeroMedian { pairs } => Error::param(
                    what,
                    format!(
                        "the median heuristic gives 0: more than half of the {pairs} pairs of \
                         training values are equal (too few distinct levels); give the {what} \
                         as a number instead of auto, e.g. the spacing of the levels"
                    ),
                ),
                e => Error::param(what, format!("the median heuristic failed: {e}")),
            })
        }
    }
}

impl KbpModel {
    /// Learns the model. `factor_counts` lists the p values that occur (e.g. {2, 3, 4} on a
    /// grid with evidence); only the constant-time update builds one basis per p.
    pub fn learn(
        training: &KbpTraining,
        settings: &KbpSettings,
        factor_counts: &[usize],
    ) -> Result<KbpModel> {
        settings.check()?;
        let mut clock = std::time::Instant::now();
        let m = training.sender.len();
        let n = training.hidden.len();
        if m == 0 || training.receiver.len() != m {
            return Err(Error::param(
                "edge template",
                format!(
                    "needs equally many sender and receiver values, got {} and {}",
                    m,
                    training.receiver.len()
                ),
            ));
        }
        if n == 0 || training.observed.len() != n {
            return Err(Error::param(
                "observation template",
                format!(
                    "needs equally many clean and noisy values, got {} and {}",
                    n,
                    training.observed.len()
                ),
            ));
        }
        if let Some(noise) = training.observation_noise {
            crate::error::check_positive("observation noise", noise)?;
        }
        for (what, s) in [
            ("edge template", training.sender),
            ("edge template", training.receiver),
            ("observation template", training.hidden),
            ("observation template", training.observed),
        ] {
            if let Some(v) = s.iter().find(|v| !v.is_finite()) {
                return Err(Error::param(
                    what,
                    format!("contains a non-finite value {v}"),
                ));
            }
        }
        let values = distinct_values(&[training.sender, training.receiver, training.hidden]);
        if values.len() < 2 {
            return Err(Error::param(
                "training image",
                format!(
                    "has a single gray level ({}); kernel BP needs at least two distinct values to learn from",
                    values[0]
                ),
            ));
        }
        let sigma_hidden = bandwidth(
            settings.bandwidth,
            settings.multiplier,
            training.receiver,
            "bandwidth",
        )?;
        let sigma_observed = bandwidth(
            settings.observation_bandwidth,
            settings.multiplier,
            training.observed,
            "observation bandwidth",
        )?;
        let hidden_kernel = Kernel::rbf(sigma_hidden)?;
        let observed_kernel = Kernel::rbf(sigma_observed)?;
        let lambda = settings.lambda;
        let u_pts = Points::from_slice(&values);
        let k_u = gram(&hidden_kernel, &u_pts)?;
        let mut diagnostics = KbpDiagnostics {
            distinct_values: values.len(),
            template_pairs: m,
            observation_pairs: n,
            collapsed: true,
            ..Default::default()
        };

        // Evidence: (N_h K_u + λ n I) β = s(y), collapsed exactly onto the distinct values.
        let mut lap = |d: &mut KbpDiagnostics, name: &str| {
            d.setup_timings
                .insert(name.to_string(), clock.elapsed().as_secs_f64());
            clock = std::time::Instant::now();
        };
        lap(&mut diagnostics, "bandwidths");
        let hidden = collapse_onto(training.hidden, &values);
        let evidence_solver = CountWeightedSolver::new(&k_u, &hidden.counts, lambda * n as f64)?;
        diagnostics
            .condition_numbers
            .insert("evidence".into(), evidence_solver.condition_estimate());

        let (basis, classes, features_of_values) = match settings.update {
            KbpUpdate::Full => {
                let a = collapse_onto(training.sender, &values);
                let b = collapse_onto(training.receiver, &values);
                let u = values.len();
                // N_abᵀ[j, k] = #pairs with b = u_j and a = u_k.
                let mut n_ab_t = DMatrix::zeros(u, u);
                for (ia, ib) in a.index.iter().zip(&b.index) {
                    n_ab_t[(*ib, *ia)] += 1.0;
                }
                let system = CountWeightedSolver::new(&k_u, &b.counts, lambda * m as f64)?;
                diagnostics
                    .condition_numbers
                    .insert("message".into(), system.condition_estimate());
                let update_weights = system.solve(&n_ab_t)?;
                // Orthonormal coordinates c = R_u β (module doc): values at u are K_u β = R_uᵀ c.
                let factor = IncompleteCholesky::new(
                    &hidden_kernel,
                    &u_pts,
                    &IncompleteCholeskyOptions {
                        epsilon: FULL_FACTOR_EPSILON,
                        max_rank: u,
                    },
                )?;
                diagnostics.feature_rank = Some(factor.rank());
                let r_u = factor.features_of(&u_pts)?;
                let class = FactorClass {
                    eval: r_u.transpose(),
                    update: &r_u * update_weights,
                };
                let classes = factor_counts.iter().map(|&p| (p, class.clone())).collect();
                (MessageBasis(Box::new(factor)), classes, r_u)
            }
            KbpUpdate::Linear | KbpUpdate::Constant => {
                // Incomplete Cholesky picks pivots by residual diagonal, which is the same for
                // repeated points, so factorising the distinct values and repeating columns
                // gives exactly the factor of all m points at O(U r²) instead of O(m r²).
                let options = IncompleteCholeskyOptions {
                    epsilon: settings.epsilon,
                    max_rank: settings.max_rank,
                };
                lap(&mut diagnostics, "evidence system");
                let b_values = distinct_values(&[training.receiver]);
                let a_values = distinct_values(&[training.sender]);
                let b = collapse_onto(training.receiver, &b_values);
                let a = collapse_onto(training.sender, &a_values);
                let ic_b = IncompleteCholesky::new(
                    &hidden_kernel,
                    &Points::from_slice(&b_values),
                    &options,
                )?;
                diagnostics.feature_rank = Some(ic_b.rank());
                lap(&mut diagnostics, "feature incomplete Cholesky");
                let r_bu = ic_b.r();
                // R_b R_bᵀ = R_bu diag(counts_b) R_buᵀ.
                let r_weighted = DMatrix::from_fn(r_bu.nrows(), r_bu.ncols(), |i, j| {
                    r_bu[(i, j)] * b.counts[j]
                });
                let rrt = &r_weighted * r_bu.transpose();
                let system =
                    RegularizedCholesky::new(&rrt, Lambda::OperatorForm(lambda * m as f64))?;
                diagnostics
                    .condition_numbers
                    .insert("message".into(), system.condition_estimate());
                let mut classes = BTreeMap::new();
                if settings.update == KbpUpdate::Linear {
                    // Literal Sec. 5.1: evaluate at every one of the m a-points.
                    let f_a = ic_b.features_of(&Points::from_slice(&a_values))?;
                    let eval = DMatrix::from_fn(m, f_a.nrows(), |i, k| f_a[(k, a.index[i])]);
                    let r_b = DMatrix::from_fn(r_bu.nrows(), m, |k, i| r_bu[(k, b.index[i])]);
                    let class = FactorClass {
                        eval,
                        update: system.solve_matrix(&r_b)?,
                    };
                    for &p in factor_counts {
                        classes.insert(p, class.clone());
                    }
                } else {
                    // Pair counts C[kb, ka] so that R_b Wᵀ = R_bu C W_uᵀ.
                    let mut pair_counts = DMatrix::zeros(b_values.len(), a_values.len());
                    for (ib, ia) in b.index.iter().zip(&a.index) {
                        pair_counts[(*ib, *ia)] += 1.0;
                    }
                    let r_c = &r_bu * &pair_counts;
                    for &p in factor_counts {
                        let p32 = u32::try_from(p).unwrap_or(u32::MAX);
                        let tensor_kernel = hidden_kernel.powered(p32)?;
                        let ic_t = IncompleteCholesky::new(
                            &tensor_kernel,
                            &Points::from_slice(&a_values),
                            &options,
                        )?;
                        diagnostics.tensor_ranks.insert(p, ic_t.rank());
                        let w_u = ic_t
                            .pivot_block()
                            .solve_upper_triangular(&ic_t.r())
                            .ok_or_else(|| {
                                Error::param(
                                    "epsilon",
                                    "the tensor pivot block is singular; use a larger epsilon",
                                )
                            })?;
                        let pivot_values: Vec<f64> =
                            ic_t.pivots().iter().map(|&i| a_values[i]).collect();
                        let eval = ic_b
                            .features_of(&Points::from_slice(&pivot_values))?
                            .transpose();
                        let update = system.solve_matrix(&(&r_c * w_u.transpose()))?;
                        classes.insert(p, FactorClass { eval, update });
                        lap(&mut diagnostics, &format!("tensor basis p={p}"));
                    }
                }
                let fv = ic_b.features_of(&u_pts)?;
                (MessageBasis(Box::new(ic_b)), classes, fv)
            }
        };
        let mut observed_sorted: Vec<(f64, usize)> = match training.observation_noise {
            Some(_) => Vec::new(),
            None => training
                .observed
                .iter()
                .copied()
                .zip(hidden.index.iter().copied())
                .collect(),
        };
        observed_sorted.sort_by(|x, y| x.0.total_cmp(&y.0));
        Ok(KbpModel {
            update: settings.update,
            sigma_hidden,
            sigma_observed,
            lambda,
            basis,
            classes,
            diagnostics,
            hidden_kernel,
            observed_kernel,
            values,
            hidden,
            observed_sorted,
            observation_noise: training.observation_noise,
            evidence_solver,
            features_of_values,
        })
    }

    /// The distinct clean training values (the default candidate set).
    pub fn training_values(&self) -> &[f64] {
        &self.values
    }

    /// Evidence-message coefficients (`dim x len(y)`) for observations `y`: the learned
    /// likelihood `m_obs(x) = Σ_j β_j k(u_j, x)`, `β = (N_h K_u + λ n I)^{-1} s(y)`,
    /// `s_j(y) = Σ_{i: h_i = u_j} k_o(o_i, y)`, expressed in the message basis; with a known
    /// noise σ, `s_j(y) = N_j E_{o ~ N(u_j, σ²)} k_o(o, y)` in closed form (module doc).
    /// The columns of [`Self::evidence_table`], laid out one per observation.
    pub fn evidence_coefficients(&self, y: &[f64]) -> Result<DMatrix<f64>> {
        let table = self.evidence_table(y)?;
        let dim = table.coefficients.nrows();
        let mut out = DMatrix::zeros(dim, y.len());
        out.as_mut_slice()
            .par_chunks_mut(dim.max(1))
            .enumerate()
            .for_each(|(t, col)| table.interpolate(&table.coefficients, t, col));
        Ok(out)
    }

    /// The evidence messages of observations `y` as a table: exact coefficient columns at
    /// every observation for few observations, else at grid points of y spaced σ_o / 64 with
    /// each observation's message interpolated linearly between two (the message is linear in
    /// s(y); relative error about (1/64)² / 8 = 3e-5). The grid turns O(n · pixels) kernel
    /// sums into O(n · grid) and keeps O(1) numbers per pixel, so a photograph of any size
    /// costs its observations and a fixed table. Cost O(n · min(len(y), grid) + dim ·
    /// min(len(y), grid)), grid = range(y) / (σ_o / 64); n becomes U with a known noise.
    pub fn evidence_table(&self, y: &[f64]) -> Result<EvidenceTable> {
        if let Some(v) = y.iter().find(|v| !v.is_finite()) {
            return Err(Error::param(
                "observations",
                format!("contain a non-finite value {v}"),
            ));
        }
        let (lo, hi) = y
            .iter()
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), v| {
                (a.min(*v), b.max(*v))
            });
        let step = self.sigma_observed / 64.0;
        let grid_points = ((hi - lo) / step).ceil() as usize + 2;
        if y.len() <= 4 * grid_points {
            return Ok(EvidenceTable {
                coefficients: self.evidence_at(y)?,
                lookup: EvidenceLookup::PerObservation,
            });
        }
        let grid: Vec<f64> = (0..grid_points).map(|g| lo + g as f64 * step).collect();
        Ok(EvidenceTable {
            coefficients: self.evidence_at(&grid)?,
            lookup: EvidenceLookup::Grid {
                lo,
                step,
                observations: y.to_vec(),
            },
        })
    }

    /// Exact evidence coefficients at each observation in `y`. O(n · len(y) + U² · len(y)).
    fn evidence_at(&self, y: &[f64]) -> Result<DMatrix<f64>> {
        let s = match self.observation_noise {
            Some(noise) => self.expected_kernel_sums(y, noise),
            None => self.drawn_kernel_sums(y),
        };
        let beta = self.evidence_solver.solve(&s)?;
        Ok(&self.features_of_values * beta)
    }

    /// `s_j(y) = N_j σ_o / √(σ_o² + σ²) exp(−(y − u_j)² / (2 (σ_o² + σ²)))`: the kernel sums of
    /// the observation template averaged over its Gaussian noise (`U x len(y)`). O(U · len(y)).
    fn expected_kernel_sums(&self, y: &[f64], noise: f64) -> DMatrix<f64> {
        let u = self.values.len();
        let var = self.sigma_observed * self.sigma_observed + noise * noise;
        let scale = self.sigma_observed / var.sqrt();
        let mut s = DMatrix::zeros(u, y.len());
        s.as_mut_slice()
            .par_chunks_mut(u)
            .zip(y.par_iter())
            .for_each(|(col, &yt)| {
                for ((c, &v), &count) in col.iter_mut().zip(&self.values).zip(&self.hidden.counts) {
                    if count > 0.0 {
                        let d = yt - v;
                        *c = count * scale * (-d * d / (2.0 * var)).exp();
                    }
                }
            });
        s
    }

    /// `s_j(y) = Σ_{i: h_i = u_j} k_o(o_i, y)` over the drawn observation template
    /// (`U x len(y)`). O(n · len(y)).
    fn drawn_kernel_sums(&self, y: &[f64]) -> DMatrix<f64> {
        let u = self.values.len();
        let sigma2 = 2.0 * self.sigma_observed * self.sigma_observed;
        // Terms beyond 9 sigma are below 1e-17 of the largest: skip them via a sorted window.
        let reach = 9.0 * self.sigma_observed;
        let mut s = DMatrix::zeros(u, y.len());
        s.as_mut_slice()
            .par_chunks_mut(u)
            .zip(y.par_iter())
            .for_each(|(col, &yt)| {
                let lo = self
                    .observed_sorted
                    .partition_point(|(o, _)| *o < yt - reach);
                let hi = self
                    .observed_sorted
                    .partition_point(|(o, _)| *o <= yt + reach);
                for &(o, j) in &self.observed_sorted[lo..hi] {
                    let d = o - yt;
                    col[j] += (-d * d / sigma2).exp();
                }
            });
        s
    }

    /// The Parzen estimate `P(x) = (1/n) Σ_i k(h_i, x)` of the clean values (unnormalised
    /// kernel sum; only its shape matters for beliefs).
    pub fn prior(&self, xs: &[f64]) -> Vec<f64> {
        let n: f64 = self.hidden.counts.iter().sum();
        xs.iter()
            .map(|x| {
                self.values
                    .iter()
                    .zip(&self.hidden.counts)
                    .map(|(u, c)| c * self.hidden_kernel.eval(&[*u], &[*x]))
                    .sum::<f64>()
                    / n
            })
            .collect()
    }

    pub fn observed_kernel(&self) -> &Kernel {
        &self.observed_kernel
    }

    /// Evaluates one message (coefficients `c`) at `xs`.
    pub fn message_values(&self, c: &[f64], xs: &[f64]) -> Result<Vec<f64>> {
        let e = self.basis.eval_matrix(xs)?;
        Ok((e * DVector::from_column_slice(c)).as_slice().to_vec())
    }
}

#[cfg(test)]
mod tests {
    use rand::SeedableRng;
    use rand_chacha::ChaCha8Rng;
    use rand_distr::{Distribution, StandardNormal};

    use super::*;

    const LEVELS: [f64; 3] = [40.0, 120.0, 200.0];
    const NOISE: f64 = 30.0;
    const SIGMA_O: f64 = 12.0;

    /// Three clean levels far apart under bandwidth 10 (so `K_u` is the identity to 1e-14) and
    /// a λ of 1e-9: the evidence message at a level is then the mean of `k_o(o, y)` over that
    /// level's observation pairs, to 1e-8.
    fn model(draws: usize, observation_noise: Option<f64>) -> KbpModel {
        let hidden: Vec<f64> = (0..draws).flat_map(|_| LEVELS).collect();
        let mut rng = ChaCha8Rng::seed_from_u64(7);
        let observed: Vec<f64> = hidden
            .iter()
            .map(|h| {
                let z: f64 = StandardNormal.sample(&mut rng);
                h + NOISE * z
            })
            .collect();
        let training = KbpTraining {
            sender: &LEVELS,
            receiver: &[120.0, 200.0, 40.0],
            hidden: &hidden,
            observed: &observed,
            observation_noise,
        };
        let settings = KbpSettings {
            update: KbpUpdate::Full,
            lambda: 1e-9,
            bandwidth: Bandwidth::Value(10.0),
            observation_bandwidth: Bandwidth::Value(SIGMA_O),
            ..KbpSettings::default()
        };
        KbpModel::learn(&training, &settings, &[2]).unwrap()
    }

    /// The evidence message `m_obs(u_j)` at every level (rows) for every `y` (columns).
    fn likelihood_at_levels(model: &KbpModel, ys: &[f64]) -> DMatrix<f64> {
        let coeff = model.evidence_coefficients(ys).unwrap();
        DMatrix::from_fn(LEVELS.len(), ys.len(), |j, t| {
            let c: Vec<f64> = coeff.column(t).iter().copied().collect();
            model.message_values(&c, &[LEVELS[j]]).unwrap()[0]
        })
    }

    /// `E_{o ~ N(h, σ²)} exp(−(o − y)² / (2 σ_o²))` by the trapezoid rule over ±12 σ.
    fn quadrature(h: f64, y: f64) -> f64 {
        let (step, n) = (1e-3, 24_000);
        (0..=n)
            .map(|i| {
                let z = -12.0 + i as f64 * step;
                let o = h + NOISE * z;
                let w = if i == 0 || i == n { 0.5 } else { 1.0 };
                w * (-(o - y).powi(2) / (2.0 * SIGMA_O * SIGMA_O)).exp() * (-z * z / 2.0).exp()
            })
            .sum::<f64>()
            * step
            / (2.0 * std::f64::consts::PI).sqrt()
    }

    #[test]
    fn the_expected_observation_template_is_the_gaussian_noise_models_kernel_mean() {
        let ys = [10.0, 40.0, 95.0, 160.0, 250.0];
        let m = model(5, Some(NOISE));
        let got = likelihood_at_levels(&m, &ys);
        for (j, &h) in LEVELS.iter().enumerate() {
            for (t, &y) in ys.iter().enumerate() {
                let want = quadrature(h, y);
                assert!(
                    (got[(j, t)] - want).abs() < 1e-7,
                    "level {h}, y {y}: {} against quadrature {want}",
                    got[(j, t)]
                );
            }
        }
        // As a function of y it is the noise density widened by the kernel: its log is a
        // parabola in y - h of curvature 1 / (σ² + σ_o²).
        let var = NOISE * NOISE + SIGMA_O * SIGMA_O;
        let ratio = got[(1, 3)] / got[(1, 2)];
        let want = ((95.0f64 - 120.0).powi(2) / (2.0 * var)
            - (160.0f64 - 120.0).powi(2) / (2.0 * var))
            .exp();
        assert!((ratio / want - 1.0).abs() < 1e-6, "{ratio} against {want}");
    }

    #[test]
    fn many_noise_draws_converge_to_the_expected_observation_template() {
        let ys = [10.0, 95.0, 160.0, 250.0];
        let expected = likelihood_at_levels(&model(5, Some(NOISE)), &ys);
        let one = likelihood_at_levels(&model(1, None), &ys);
        let many = likelihood_at_levels(&model(20_000, None), &ys);
        // Each entry is a mean of k_o in [0, 1] over 20,000 draws: standard error below 0.0035.
        let err_many = (&many - &expected).amax();
        let err_one = (&one - &expected).amax();
        assert!(err_many < 0.015, "20,000 draws: {err_many}");
        assert!(
            err_one > 3.0 * err_many,
            "one draw {err_one}, many {err_many}"
        );
    }

    #[test]
    fn a_non_positive_observation_noise_is_refused() {
        let training = KbpTraining {
            sender: &LEVELS,
            receiver: &LEVELS,
            hidden: &LEVELS,
            observed: &LEVELS,
            observation_noise: Some(0.0),
        };
        let err = KbpModel::learn(&training, &KbpSettings::default(), &[2]).unwrap_err();
        assert!(err.to_string().contains("observation noise"), "{err}");
    }
}
