//! Parameter sweeps: the same experiment run once per value of r (Fig. 6a), k (Fig. 6b),
//! the kernel decay α (Fig. 7) or the number of nodes n (the depth sweep: Theorem 1's bound is a
//! polynomial in `log t` whose degree grows with the depth, so the fitted slope bends from about
//! -1 on short chains towards -0.5 on long ones), everything else fixed, curves kept for
//! overlaying; the final error against r is Fig. 8. Runs are sequential (each run is already
//! parallel inside).
//!
//! Cost: the sum of the runs, each O(set-up + T · iteration); the depth sweep also runs the
//! noise-free iteration of each run, O(T · |E→| · deg · n r).

use std::fmt::Write as _;

use serde::{Deserialize, Serialize};

use super::{
    GraphKind, PotentialKind, SLOPE_FROM, SosmpConfig, SosmpScenario, fit_slope, fit_slope_points,
};
use crate::error::labels::{Labelled, unknown};
use crate::error::{Error, Result};
use crate::inference::sosmp::expected::noise_free_iteration;
use crate::scenarios::ScenarioParams;
use crate::scenarios::{CancelFlag, Scenario};

/// The parameter a sweep varies.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
#[derive(strum::VariantArray, strum::IntoStaticStr, strum::EnumString)]
#[strum(serialize_all = "lowercase", parse_err_ty = String, parse_err_fn = unknown::<Self>)]
pub enum SweepParameter {
    /// r, the number of basis coefficients (Fig. 6a, Fig. 8).
    Coefficients,
    /// k, the samples per update (Fig. 6b).
    Samples,
    /// α, the kernel eigenvalue decay (Fig. 7); switches to kernel potentials.
    Alpha,
    /// n, the number of nodes (the depth of a chain); a grid or custom graph becomes a chain.
    Nodes,
}

impl Labelled for SweepParameter {
    const WHAT: &str = "sweep";
}

impl SweepParameter {
    pub fn label(self) -> &'static str {
        self.into()
    }

    /// The symbol used in legends.
    pub fn symbol(self) -> &'static str {
        match self {
            SweepParameter::Coefficients => "r",
            SweepParameter::Samples => "k",
            SweepParameter::Alpha => "alpha",
            SweepParameter::Nodes => "n",
        }
    }

    /// `base` with this parameter set to `value` (checked).
    pub fn apply(self, base: &SosmpConfig, value: f64) -> Result<SosmpConfig> {
        let mut c = base.clone();
        let as_count = |name: &'static str| -> Result<usize> {
            if value.fract() == 0.0 && (1.0..=1e6).contains(&value) {
                Ok(value as usize)
            } else {
                Err(Error::param(
                    name,
                    format!("sweep values must be positive integers, got {value}"),
                ))
            }
        };
        match self {
            SweepParameter::Coefficients => c.coefficients = as_count("coefficients")?,
            SweepParameter::Samples => c.samples = as_count("samples")?,
            SweepParameter::Alpha => {
                c.potentials = PotentialKind::Kernel;
                c.alpha = value;
            }
            SweepParameter::Nodes => {
                c.nodes = as_count("nodes")?;
                // A depth needs a chain or a tree: a grid or a custom graph becomes a chain.
                if matches!(c.graph, GraphKind::Grid | GraphKind::Custom) {
                    c.graph = GraphKind::Chain;
                }
            }
        }
        c.check()?;
        Ok(c)
    }
}

/// Which parameter, over which values.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SweepSpec {
    pub parameter: SweepParameter,
    pub values: Vec<f64>,
}

impl SweepSpec {
    /// Fig. 6a: r in {2, 3, 5, 10}.
    pub fn figure_6a() -> Self {
        SweepSpec {
            parameter: SweepParameter::Coefficients,
            values: vec![2.0, 3.0, 5.0, 10.0],
        }
    }

    /// Fig. 6b: k in {1, 2, 5, 10}.
    pub fn figure_6b() -> Self {
        SweepSpec {
            parameter: SweepParameter::Samples,
            values: vec![1.0, 2.0, 5.0, 10.0],
        }
    }

    /// Fig. 7: α in {0.1, 1} with kernel potentials.
    pub fn figure_7() -> Self {
        SweepSpec {
            parameter: SweepParameter::Alpha,
            values: vec![0.1, 1.0],
        }
    }

    /// The depth sweep: chains of n in {2, 5, 10, 20, 50, 100} nodes.
    pub fn depth() -> Self {
        SweepSpec {
            parameter: SweepParameter::Nodes,
            values: vec![2.0, 5.0, 10.0, 20.0, 50.0, 100.0],
        }
    }

    /// Fig. 8 (final error against r): a wider r range.
    pub fn figure_8() -> Self {
        SweepSpec {
            parameter: SweepParameter::Coefficients,
            values: vec![2.0, 3.0, 5.0, 7.0, 10.0, 15.0, 20.0],
        }
    }
}

/// One run of a sweep.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SweepCurve {
    pub value: f64,
    /// Mean over paths of `e_t / e_0`, t = 1..T.
    pub mean_error: Vec<f64>,
    /// Mean over paths of `e_t`.
    pub mean_error_raw: Vec<f64>,
    /// `e(a_∞) / e_0`.
    pub floor: f64,
    pub floor_raw: f64,
    pub e0: f64,
    pub truncation: f64,
    pub slope: Option<f64>,
    /// Iterations in `[10, T]` above the floor, which the slope is fitted on.
    pub slope_points: usize,
    /// Slope of the mean distance `|a_t - a_∞|²` to the expected update's fixed point over
    /// `[10, T]` (no floor subtracted, so no cross term).
    #[serde(default)]
    pub fixed_point_slope: Option<f64>,
    /// Mean over paths of the squared L2 error `‖m_t - m*‖²`, divided by that of `a_0`.
    #[serde(default)]
    pub mean_error_l2: Vec<f64>,
    /// The L2 floor and the L2 error of `a_0`, raw.
    #[serde(default)]
    pub floor_l2: f64,
    #[serde(default)]
    pub e0_l2: f64,
    /// Median per-edge gain of the expected update at `a_∞` (none without inputs).
    #[serde(default)]
    pub median_gain: Option<f64>,
    /// Depth sweep only: the slope of the noise-free damped iteration's distance `|a_t - a_∞|²`
    /// over `[10, T]`.
    #[serde(default)]
    pub noise_free_slope: Option<f64>,
    pub setup_seconds: f64,
    pub run_seconds: f64,
    pub warnings: Vec<String>,
}

impl SweepCurve {
    pub fn final_error(&self) -> f64 {
        self.mean_error.last().copied().unwrap_or(f64::NAN)
    }

    pub fn final_error_raw(&self) -> f64 {
        self.mean_error_raw.last().copied().unwrap_or(f64::NAN)
    }

    /// The final mean squared L2 error, raw.
    pub fn final_error_l2_raw(&self) -> f64 {
        self.mean_error_l2
            .last()
            .map_or(f64::NAN, |e| e * self.e0_l2)
    }
}

/// A finished sweep.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SweepResult {
    pub parameter: SweepParameter,
    pub base: SosmpConfig,
    pub curves: Vec<SweepCurve>,
}

/// Progress of a sweep, for a bar or a log line.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum SweepProgress {
    /// Run `index` (0-based) of `runs` with this value is being set up.
    Started {
        index: usize,
        runs: usize,
        value: f64,
    },
    /// Run `index` finished iteration `iter` of `iters`.
    Iteration {
        index: usize,
        iter: usize,
        iters: usize,
    },
    /// Run `index` is done.
    Finished {
        index: usize,
        curve_floor: f64,
        final_error: f64,
    },
}

/// A sweep as a job for the worker (the window overlays its curves).
#[derive(Debug, Clone)]
pub struct SweepTask {
    pub config: SosmpConfig,
    pub spec: SweepSpec,
}

impl crate::scenarios::ScenarioTask for SweepTask {
    type Output = SweepResult;

    fn label(&self) -> &'static str {
        "sweep"
    }

    /// Progress in iterations over all runs.
    fn run(&self, cancel: &CancelFlag, progress: &dyn Fn(usize, usize)) -> Result<SweepResult> {
        let total = self.spec.values.len() * self.config.iters;
        let mut report = |p: SweepProgress| {
            if let SweepProgress::Iteration { index, iter, iters } = p {
                progress(index * iters + iter, total);
            }
        };
        run_sweep(&self.config, &self.spec, cancel, &mut report)
    }
}

/// Runs `spec` from `base` (one full run per value) and returns the curves. Cancellable between
/// iterations.
pub fn run_sweep(
    base: &SosmpConfig,
    spec: &SweepSpec,
    cancel: &CancelFlag,
    progress: &mut dyn FnMut(SweepProgress),
) -> Result<SweepResult> {
    if spec.values.is_empty() {
        return Err(Error::param("sweep", "needs at least one value"));
    }
    let configs: Vec<SosmpConfig> = spec
        .values
        .iter()
        .map(|&v| spec.parameter.apply(base, v))
        .collect::<Result<_>>()?;
    let runs = configs.len();
    let mut curves = Vec::with_capacity(runs);
    for (index, (config, &value)) in configs.into_iter().zip(&spec.values).enumerate() {
        progress(SweepProgress::Started { index, runs, value });
        let iters = config.iters;
        let mut s = SosmpScenario::new(config, cancel)?;
        while !s.finished() {
            cancel.check()?;
            let r = s.step()?;
            progress(SweepProgress::Iteration {
                index,
                iter: r.iter,
                iters,
            });
        }
        let noise_free_slope = if spec.parameter == SweepParameter::Nodes {
            let b = s.baselines();
            let dist = noise_free_iteration(
                s.problem(),
                &b.floor.coefficients,
                s.settings().step_gamma,
                iters,
                cancel,
            )?;
            // Distances at rounding level (a message exact from t = 1, as on two nodes) are
            // zero, not a curve to fit.
            let tiny = 1e-20 * b.e0;
            let dist: Vec<f64> = dist
                .into_iter()
                .map(|d| if d < tiny { 0.0 } else { d })
                .collect();
            fit_slope(&dist, 0.0, SLOPE_FROM)
        } else {
            None
        };
        let c = s.curves();
        let (slope, slope_points) = fit_slope_points(&c.mean, s.floor(), SLOPE_FROM);
        let curve = SweepCurve {
            value,
            mean_error: c.mean.clone(),
            mean_error_raw: c.mean_raw.clone(),
            floor: s.floor(),
            floor_raw: s.baselines().floor_raw,
            e0: s.baselines().e0,
            truncation: s.baselines().truncation,
            slope,
            slope_points,
            fixed_point_slope: fit_slope(&c.fixed_point, 0.0, SLOPE_FROM),
            mean_error_l2: c.mean_l2.clone(),
            floor_l2: s.baselines().floor_l2,
            e0_l2: s.baselines().e0_l2,
            median_gain: s.baselines().gains.as_ref().map(|g| g.median),
            noise_free_slope,
            setup_seconds: s.setup_seconds(),
            run_seconds: s.run_seconds(),
            warnings: s.warnings(),
        };
        progress(SweepProgress::Finished {
            index,
            curve_floor: curve.floor,
            final_error: curve.final_error(),
        });
        curves.push(curve);
    }
    Ok(SweepResult {
        parameter: spec.parameter,
        base: base.clone(),
        curves,
    })
}

impl SweepResult {
    /// Fig. 8's points: `(value, final e_T, e(a_∞), L2 floor)`, raw (not normalised, since e_0
    /// changes with r).
    pub fn final_errors(&self) -> Vec<[f64; 4]> {
        self.curves
            .iter()
            .map(|c| [c.value, c.final_error_raw(), c.floor_raw, c.floor_l2])
            .collect()
    }

    /// Rows `parameter,value,iter,mean_error,mean_error_raw,floor,floor_raw,mean_error_l2,
    /// floor_l2` (the L2 columns as in results.json: normalised by `e0_l2`, and raw).
    pub fn csv_rows(&self, out: &mut String) {
        for c in &self.curves {
            for (t, (e, er)) in c.mean_error.iter().zip(&c.mean_error_raw).enumerate() {
                let _ = writeln!(
                    out,
                    "{},{},{},{},{},{},{},{},{}",
                    self.parameter.label(),
                    c.value,
                    t + 1,
                    e,
                    er,
                    c.floor,
                    c.floor_raw,
                    c.mean_error_l2.get(t).copied().unwrap_or(f64::NAN),
                    c.floor_l2
                );
            }
        }
    }
}

/// The header of [`SweepResult::csv_rows`].
pub const SWEEP_CSV_HEADER: &str =
    "parameter,value,iter,mean_error,mean_error_raw,floor,floor_raw,mean_error_l2,floor_l2\n";

/// Several sweeps as one CSV of curves.
pub fn sweeps_csv(results: &[SweepResult]) -> String {
    let mut out = String::from(SWEEP_CSV_HEADER);
    for r in results {
        r.csv_rows(&mut out);
    }
    out
}
