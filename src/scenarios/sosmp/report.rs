//! The SOSMP scenario's fields of results.json, as types: the error curves (eq. 38 and L2) with
//! the floor, e_0 and the fitted slopes, the distance to the expected update's fixed point, the
//! per-edge gains and the Theorem 1 explanation, and everything an independent check needs (the
//! grid, the potentials, the reference messages and coefficients, the floor's coefficients).

use serde::Serialize;
use serde_json::Value;

use super::{
    PotentialKind, SLOPE_FROM, SosmpScenario, fit_slope, fit_slope_points, slope_explanation,
    slope_windows,
};
use crate::inference::sosmp::gains::GainSummary;
use crate::inference::sosmp::grid::StateGrid as _;
use crate::inference::sosmp::potentials::{ClipReport, GaussianMixture};
use crate::model::NodeId;

#[derive(Debug, Clone, Serialize)]
pub struct SosmpReport<'a> {
    pub mean_error: &'a [f64],
    pub mean_error_raw: &'a [f64],
    pub mean_error_l2: &'a [f64],
    pub mean_error_l2_raw: &'a [f64],
    pub path_errors: &'a [Vec<f64>],
    pub floor: f64,
    pub floor_raw: f64,
    pub e0: f64,
    pub slope: Option<f64>,
    pub slope_range: [usize; 2],
    /// Iterations in the range where the mean is above the floor (only those are fitted).
    pub slope_points: usize,
    pub slope_windows: Vec<SlopeWindow>,
    pub fixed_point_error: &'a [f64],
    pub fixed_point_bias: &'a [f64],
    pub fixed_point_slope: Option<f64>,
    pub fixed_point_slope_windows: Vec<SlopeWindow>,
    pub truncation: f64,
    pub floor_l2: f64,
    pub floor_l2_normalised: f64,
    pub e0_l2: f64,
    pub l2_definition: &'static str,
    pub gains: &'a Option<GainSummary>,
    pub diameter: usize,
    pub slope_explanation: String,
    pub domain: [f64; 2],
    pub grid: &'a [f64],
    pub basis: Basis<'a>,
    pub edges: &'a [[NodeId; 2]],
    pub node_potentials: &'a [GaussianMixture],
    pub edge_potentials: Value,
    pub reference_coefficients: Vec<&'a [f64]>,
    pub reference_messages: Vec<&'a [f64]>,
    pub floor_coefficients: Vec<&'a [f64]>,
    pub reference: Reference,
    pub expected_update: ExpectedUpdate,
    pub variance_clamp: VarianceClamp,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kernel_clip: Option<ClipReport>,
    pub warnings: Vec<String>,
    pub fallbacks: u64,
    pub error_definition: &'static str,
    pub fixed_point_error_definition: &'static str,
}

/// A slope fitted over one decade of iterations.
#[derive(Debug, Clone, Serialize)]
pub struct SlopeWindow {
    pub from: usize,
    pub to: usize,
    pub slope: Option<f64>,
    pub points: usize,
}

#[derive(Debug, Clone, Serialize)]
pub struct Basis<'a> {
    pub kind: &'a str,
    pub coefficients: usize,
}

#[derive(Debug, Clone, Serialize)]
pub struct Reference {
    pub schedule: &'static str,
    pub sweeps: usize,
    pub residual: f64,
    pub converged: bool,
    pub normalisation: &'static str,
}

#[derive(Debug, Clone, Serialize)]
pub struct ExpectedUpdate {
    pub sweeps: usize,
    pub residual: f64,
    pub converged: bool,
    pub fallbacks: usize,
}

#[derive(Debug, Clone, Serialize)]
pub struct VarianceClamp {
    pub min_variance: f64,
    pub clamped: usize,
}

fn windows(y: &[f64], floor: f64) -> Vec<SlopeWindow> {
    slope_windows(y, floor, SLOPE_FROM)
        .into_iter()
        .map(|(from, to, slope, points)| SlopeWindow {
            from,
            to,
            slope,
            points,
        })
        .collect()
}

impl<'a> SosmpReport<'a> {
    pub fn of(s: &'a SosmpScenario) -> SosmpReport<'a> {
        let p = &s.problem;
        let b = &s.baselines;
        let c = &s.curves;
        let (n, r) = (p.mrf.grid.len(), p.r());
        let (slope, used) = fit_slope_points(&c.mean, s.floor(), SLOPE_FROM);
        let (lo, hi) = p.mrf.grid.domain();
        SosmpReport {
            mean_error: &c.mean,
            mean_error_raw: &c.mean_raw,
            mean_error_l2: &c.mean_l2,
            mean_error_l2_raw: &c.mean_l2_raw,
            path_errors: &c.paths,
            floor: s.floor(),
            floor_raw: b.floor_raw,
            e0: b.e0,
            slope,
            slope_range: [SLOPE_FROM, c.mean.len()],
            slope_points: used,
            slope_windows: windows(&c.mean, s.floor()),
            fixed_point_error: &c.fixed_point,
            fixed_point_bias: &c.fixed_point_bias,
            fixed_point_slope: fit_slope(&c.fixed_point, 0.0, SLOPE_FROM),
            fixed_point_slope_windows: windows(&c.fixed_point, 0.0),
            truncation: b.truncation,
            floor_l2: b.floor_l2,
            floor_l2_normalised: b.floor_l2 / b.e0_l2,
            e0_l2: b.e0_l2,
            l2_definition: "floor_l2 = (1/|E->|) sum over directed edges of the squared L2 distance (grid quadrature) of sum_j a_inf,j phi_j (unclipped) from m*, = sum_{j<=r} (a_inf,j - a*_j)^2 + sum_{j>r} a*_j^2 for an orthonormal basis (floor_raw + truncation); e0_l2 the same for a_0 = 1/r; mean_error_l2[t-1] = the same for a_t averaged over paths, divided by e0_l2 (mean_error_l2_raw undivided); floor_l2_normalised = floor_l2 / e0_l2",
            gains: &b.gains,
            diameter: s.diameter,
            slope_explanation: slope_explanation(
                s.slope(),
                b.gains.as_ref(),
                s.diameter,
                p.mrf.graph.check_tree().is_ok(),
            ),
            domain: [lo, hi],
            grid: &s.grid_points,
            basis: Basis {
                kind: p.basis.name(),
                coefficients: r,
            },
            edges: &s.directed_edges,
            node_potentials: &s.model.node_mixtures,
            edge_potentials: match s.config.potentials {
                PotentialKind::Mixture => {
                    serde_json::to_value(&s.model.edge_mixtures).unwrap_or(Value::Null)
                }
                PotentialKind::Kernel => p.mrf.pair_potentials[0].describe(),
            },
            reference_coefficients: b.reference_coefficients.chunks(r).collect(),
            reference_messages: b.reference.messages.chunks(n).collect(),
            floor_coefficients: b.floor.coefficients.chunks(r).collect(),
            reference: Reference {
                schedule: b.reference.schedule,
                sweeps: b.reference.sweeps,
                residual: b.reference.residual,
                converged: b.reference.converged,
                normalisation: "each message integrates to 1 under the trapezoid rule on `grid`",
            },
            expected_update: ExpectedUpdate {
                sweeps: b.floor.sweeps,
                residual: b.floor.residual,
                converged: b.floor.converged,
                fallbacks: b.floor.fallbacks,
            },
            variance_clamp: VarianceClamp {
                min_variance: s.model.min_variance,
                clamped: s.model.clamped_variances,
            },
            kernel_clip: s.model.kernel_clip,
            warnings: s.warnings(),
            fallbacks: s.engine.fallbacks(),
            error_definition: "e_t = (1/|E->|) sum over directed edges of sum_{j<=r} (a_t,j - a*_j)^2 (eq. 38); curves are e_t / e_0 for t = 1..T",
            fixed_point_error_definition: "fixed_point_error: (1/|E->|) sum over directed edges of |a_t - a_inf|^2 / e_0, averaged over paths (a_inf = floor_coefficients, the fixed point of the expected update); fixed_point_bias: the same for the mean of a_t over the paths. mean_error - floor - fixed_point_error is the cross term 2 <a_t - a_inf, a_inf - a*> / e_0 (averaged), which can be negative",
        }
    }
}
