//! The run's fixed references: grid BP's messages m* and their coefficients a*, the expected
//! update's fixed point a_inf (the floor), e_0, the truncation and the L2 distances, and the
//! per-edge gains. Computed once at set-up; cost O(edges · grid · r) plus the fixed-point sweeps.

use super::*;
use crate::error::Result;
use crate::inference::sosmp::expected::{ExpectedFixedPoint, expected_fixed_point};
use crate::inference::sosmp::gains::{GainSummary, edge_gains};
use crate::inference::sosmp::grid::{IntervalGrid, StateGrid};
use crate::inference::sosmp::reference::{GridBp, grid_bp};
use crate::inference::sosmp::{SosmpProblem, kernels};
use crate::model::MsgId;

/// The error baselines of a problem: the reference, `a*`, the floor, `e_0`.
#[derive(Debug, Clone)]
pub struct Baselines {
    pub reference: GridBp,
    /// `a*`, message order.
    pub reference_coefficients: Vec<f64>,
    pub floor: ExpectedFixedPoint,
    /// `e(a_0)` with `a_0 = 1/r`.
    pub e0: f64,
    /// `e(a_∞)`.
    pub floor_raw: f64,
    /// `(1/|E→|) Σ ‖m* - Σ_{j≤r} a*_j φ_j‖²` (grid quadrature): the squared L2 error of the best
    /// r-term expansion, which eq. 38 does not count (`Σ_{j>r} a*_j²` for an orthonormal basis).
    pub truncation: f64,
    /// The squared L2 error `(1/|E→|) Σ ‖Σ_j a_0;j φ_j - m*‖²` of `a_0 = 1/r`.
    pub e0_l2: f64,
    /// The L2 floor `(1/|E→|) Σ ‖Σ_j a_∞;j φ_j - m*‖²`: the full distance of the expected
    /// update's fixed point, as a function, from `m*` (eq. 38's floor plus the truncation).
    pub floor_l2: f64,
    /// The per-edge gains of the expected update at `a_∞` ([`gains`]); `None` without inputs.
    ///
    /// [`gains`]: crate::inference::sosmp::gains
    pub gains: Option<GainSummary>,
    l2: L2Error,
}

/// The squared L2 distance `‖Σ_j a_j φ_j - m*‖²` (grid quadrature) of any coefficients, from
/// `d = a - a*` as `dᵀ M d + 2 dᵀ c + τ`: `M` the basis' Gram matrix on the grid, `c = M a* - a*`
/// (zero for a basis orthonormal on the grid) and `τ = ‖Σ a*_j φ_j - m*‖²`. O(r²) per message.
#[derive(Debug, Clone)]
struct L2Error {
    r: usize,
    gram: Vec<f64>,
    /// `c` per message, `[m * r + j]`.
    offset: Vec<f64>,
    /// `τ` per message.
    tail: Vec<f64>,
    /// `M = I` and `c = 0` to 1e-13 (Fourier, cosine and Mercer bases on the trapezoid grid):
    /// the L2 error is then eq. 38's plus the mean `τ`, with no O(r²) work.
    orthonormal: bool,
}

impl L2Error {
    fn new(problem: &SosmpProblem<IntervalGrid>, messages: &[f64], a_star: &[f64]) -> Self {
        let (n, r) = (problem.mrf.grid.len(), problem.r());
        let weights = problem.mrf.grid.weights();
        let basis = &problem.basis;
        let mut gram = vec![0.0; r * r];
        for j in 0..r {
            let wj: Vec<f64> = weights
                .iter()
                .zip(basis.column(j))
                .map(|(w, v)| w * v)
                .collect();
            for l in 0..r {
                gram[j * r + l] = kernels::dot(&wj, basis.column(l));
            }
        }
        let total = problem.num_messages();
        let mut offset = vec![0.0; total * r];
        let mut tail = vec![0.0; total];
        let mut expansion = vec![0.0; n];
        for m in 0..total {
            let a = &a_star[m * r..(m + 1) * r];
            basis.evaluate(a, &mut expansion);
            tail[m] = expansion
                .iter()
                .zip(&messages[m * n..(m + 1) * n])
                .zip(weights)
                .map(|((e, v), w)| w * (e - v) * (e - v))
                .sum();
            for j in 0..r {
                let ma: f64 = (0..r).map(|l| gram[j * r + l] * a[l]).sum();
                offset[m * r + j] = ma - a[j];
            }
        }
        let defect = (0..r * r)
            .map(|k| (gram[k] - if k % (r + 1) == 0 { 1.0 } else { 0.0 }).abs())
            .chain(offset.iter().map(|c| c.abs()))
            .fold(0.0, f64::max);
        L2Error {
            r,
            gram,
            offset,
            tail,
            orthonormal: defect < 1e-13,
        }
    }

    /// `(1/|E→|) Σ_m ‖Σ_j a_m;j φ_j - m*_m‖²`.
    fn mean<'a>(&self, coeff: impl Fn(MsgId) -> &'a [f64], a_star: &[f64]) -> f64 {
        let r = self.r;
        let mut d = vec![0.0; r];
        let mut total = 0.0;
        for (m, tail) in self.tail.iter().enumerate() {
            for ((dj, a), s) in d.iter_mut().zip(coeff(m)).zip(&a_star[m * r..(m + 1) * r]) {
                *dj = a - s;
            }
            let mut q = *tail;
            for j in 0..r {
                let md: f64 = (0..r).map(|l| self.gram[j * r + l] * d[l]).sum();
                q += d[j] * (md + 2.0 * self.offset[m * r + j]);
            }
            total += q;
        }
        total / self.tail.len() as f64
    }
}

impl Baselines {
    pub fn new(problem: &SosmpProblem<IntervalGrid>, cancel: &CancelFlag) -> Result<Self> {
        let reference = grid_bp(
            &problem.mrf,
            REFERENCE_TOLERANCE,
            REFERENCE_MAX_SWEEPS,
            cancel,
        )?;
        let n = problem.mrf.grid.len();
        let r = problem.r();
        let weights = problem.mrf.grid.weights();
        let mut reference_coefficients = vec![0.0; problem.num_messages() * r];
        for (m, a) in reference_coefficients.chunks_mut(r).enumerate() {
            let msg = &reference.messages[m * n..(m + 1) * n];
            problem.basis.project(weights, msg, a);
        }
        let l2 = L2Error::new(problem, &reference.messages, &reference_coefficients);
        let truncation = l2.tail.iter().sum::<f64>() / problem.num_messages() as f64;
        cancel.check()?;
        let floor = expected_fixed_point(problem, REFERENCE_TOLERANCE, FLOOR_MAX_SWEEPS, cancel)?;
        let a0 = vec![1.0 / r as f64; r];
        let e0 = problem.squared_error(|_| &a0, &reference_coefficients);
        let floor_raw = problem.squared_error(
            |m| &floor.coefficients[m * r..(m + 1) * r],
            &reference_coefficients,
        );
        let e0_l2 = l2.mean(|_| &a0, &reference_coefficients);
        let floor_l2 = l2.mean(
            |m| &floor.coefficients[m * r..(m + 1) * r],
            &reference_coefficients,
        );
        cancel.check()?;
        let (_, gains) = edge_gains(problem, &floor.coefficients);
        Ok(Baselines {
            reference,
            reference_coefficients,
            floor,
            e0,
            floor_raw,
            truncation,
            e0_l2,
            floor_l2,
            gains,
            l2,
        })
    }

    /// The squared L2 error `(1/|E→|) Σ_m ‖Σ_j a_m;j φ_j - m*_m‖²` (grid quadrature) of any
    /// coefficients: what eq. 38 measures plus the truncation (and, for a basis that is not
    /// orthonormal on the grid, the cross terms). O(|E→| r²).
    pub fn l2_error<'a>(&self, coeff: impl Fn(MsgId) -> &'a [f64]) -> f64 {
        self.l2.mean(coeff, &self.reference_coefficients)
    }

    /// [`Self::l2_error`] given the coefficients' eq. 38 error `eq38` (raw): for a basis
    /// orthonormal on the grid that is `eq38 + truncation` at no cost, otherwise O(|E→| r²).
    pub fn l2_error_from<'a>(&self, eq38: f64, coeff: impl Fn(MsgId) -> &'a [f64]) -> f64 {
        if self.l2.orthonormal {
            eq38 + self.truncation
        } else {
            self.l2_error(coeff)
        }
    }

    /// True when the basis is orthonormal on the grid to 1e-13, so that the L2 error is eq. 38's
    /// plus the truncation.
    pub fn orthonormal_basis(&self) -> bool {
        self.l2.orthonormal
    }
}
