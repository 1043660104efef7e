//! Gaussian messages for teaching mode: scalar Gaussian BP in information form (Weiss &
//! Freeman 2001), one message at a time, on
//! `p(x) ∝ Π_t exp(-a_t x_t²/2 + b_t x_t) Π_(s,t) exp(-c_st (x_s - σ_st x_t)²/2)`
//! (`a_t > 0`, `c_st ≥ 0`, `σ_st = ±1`). Every factor is a positive semi-definite quadratic, so
//! the model is pairwise normalisable, hence walk-summable, and Gaussian BP converges on any
//! graph with exact means (Malioutov, Johnson, Willsky 2006); on a tree variances are exact too.
//!
//! A message `s → t` is `exp(-J x_t²/2 + h x_t)`, stored `[J, h]`; it carries the edge's whole
//! factor, so it is a proper Gaussian (`J > 0`) once sent. Its update is Gaussian BP's own
//! [`gaussian_message`] with the sender's aggregate `Ĵ = a_s + c_st + Σ_{u≠t} J_us`,
//! `ĥ = b_s + Σ_{u≠t} h_us` and the edge block `J_st = -σ_st c_st`, plus the receiver's share
//! `c_st x_t²/2` of the edge factor: `J = c_st - c_st²/Ĵ`, `h = σ_st c_st ĥ / Ĵ`. Damping mixes
//! `[J, h]`; the change is `|ΔJ| + |Δh|`. Exact marginals: the joint's covariance `Σ = J⁻¹` and
//! mean `Σ h` in closed form ([`ScalarGaussianMrf::exact`]).
//!
//! Cost: O(deg) per message, O(n³) once for the exact marginals; display curves O(grid).

use nalgebra::{DMatrix, DVector};

use super::{MessageRule, Stepper};
use crate::error::{Error, Result};
use crate::inference::gaussian_bp::gaussian_message;
use crate::inference::{Damping, Schedule};
use crate::model::{Graph, MsgId, NodeId};

/// Points of the display grid.
pub const DISPLAY_POINTS: usize = 241;

/// A scalar Gaussian pairwise MRF (see the module doc).
#[derive(Debug, Clone)]
pub struct ScalarGaussianMrf {
    pub graph: Graph,
    /// `a_t`, the node factor's precision (> 0).
    pub node_precision: Vec<f64>,
    /// `b_t` (the node factor's mean is `b_t / a_t`).
    pub node_shift: Vec<f64>,
    /// `c_st` per edge (graph order), ≥ 0.
    pub edge_strength: Vec<f64>,
    /// `σ_st` per edge, +1 (pulls together) or -1 (pulls to opposite signs).
    pub edge_sign: Vec<f64>,
}

/// A Gaussian marginal.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Moments {
    pub mean: f64,
    pub variance: f64,
}

impl Moments {
    pub fn density(&self, x: f64) -> f64 {
        let z = x - self.mean;
        (-0.5 * z * z / self.variance).exp() / (2.0 * std::f64::consts::PI * self.variance).sqrt()
    }
}

impl ScalarGaussianMrf {
    pub fn check(&self) -> Result<()> {
        let (n, e) = (self.graph.num_nodes(), self.graph.num_edges());
        if self.node_precision.len() != n
            || self.node_shift.len() != n
            || self.edge_strength.len() != e
            || self.edge_sign.len() != e
        {
            return Err(Error::param(
                "Gaussian model",
                format!("need {n} node and {e} edge parameters"),
            ));
        }
        if let Some(t) = (0..n).find(|&t| {
            !(self.node_precision[t] > 0.0
                && self.node_precision[t].is_finite()
                && self.node_shift[t].is_finite())
        }) {
            return Err(Error::param(
                "Gaussian model",
                format!("node {t}: the precision must be positive and finite, the shift finite"),
            ));
        }
        if let Some(k) = (0..e).find(|&k| {
            !(self.edge_strength[k] >= 0.0 && self.edge_strength[k].is_finite())
                || self.edge_sign[k].abs() != 1.0
        }) {
            return Err(Error::param(
                "Gaussian model",
                format!("edge {k}: the strength must be finite and ≥ 0, the sign ±1"),
            ));
        }
        Ok(())
    }

    /// The joint in information form: `J_tt = a_t + Σ_e c_e`, `J_st = -σ_st c_st`, `h = b`.
    pub fn joint(&self) -> (DMatrix<f64>, DVector<f64>) {
        let n = self.graph.num_nodes();
        let mut j = DMatrix::from_diagonal(&DVector::from_column_slice(&self.node_precision));
        for (e, &(s, t)) in self.graph.edges().iter().enumerate() {
            let c = self.edge_strength[e];
            j[(s, s)] += c;
            j[(t, t)] += c;
            j[(s, t)] -= self.edge_sign[e] * c;
            j[(t, s)] -= self.edge_sign[e] * c;
        }
        (j, DVector::from_fn(n, |t, _| self.node_shift[t]))
    }

    /// Exact marginals in closed form: `Σ = J⁻¹`, mean `Σ h`. O(n³).
    pub fn exact(&self) -> Result<Vec<Moments>> {
        let (j, h) = self.joint();
        let cov = j
            .cholesky()
            .ok_or_else(|| {
                Error::Other("the Gaussian model's precision is not positive definite".into())
            })?
            .inverse();
        let mean = &cov * h;
        Ok((0..self.graph.num_nodes())
            .map(|t| Moments {
                mean: mean[t],
                variance: cov[(t, t)],
            })
            .collect())
    }
}

/// Gaussian BP's message rule on a [`ScalarGaussianMrf`], with the grid curves are drawn on.
#[derive(Debug, Clone)]
pub struct GaussianRule {
    mrf: ScalarGaussianMrf,
    xs: Vec<f64>,
}

/// Gaussian BP, one message per step.
pub type GaussianStepper = Stepper<GaussianRule>;

impl GaussianRule {
    /// The display grid covers every exact marginal's mean ± 4 standard deviations.
    pub fn new(mrf: ScalarGaussianMrf) -> Result<GaussianRule> {
        mrf.check()?;
        let exact = mrf.exact()?;
        let lo = exact
            .iter()
            .map(|m| m.mean - 4.0 * m.variance.sqrt())
            .fold(f64::INFINITY, f64::min);
        let hi = exact
            .iter()
            .map(|m| m.mean + 4.0 * m.variance.sqrt())
            .fold(f64::NEG_INFINITY, f64::max);
        let step = (hi - lo) / (DISPLAY_POINTS - 1) as f64;
        let xs = (0..DISPLAY_POINTS).map(|i| lo + i as f64 * step).collect();
        Ok(GaussianRule { mrf, xs })
    }

    pub fn mrf(&self) -> &ScalarGaussianMrf {
        &self.mrf
    }

    /// The display grid.
    pub fn xs(&self) -> &[f64] {
        &self.xs
    }

    /// Node `t`'s belief `a_t + Σ J_ut`, `b_t + Σ h_ut` as mean and variance.
    pub fn moments(&self, messages: &[f64], t: NodeId) -> Moments {
        let (mut p, mut h) = (self.mrf.node_precision[t], self.mrf.node_shift[t]);
        for nb in self.mrf.graph.neighbors(t) {
            p += messages[2 * nb.incoming];
            h += messages[2 * nb.incoming + 1];
        }
        Moments {
            mean: h / p,
            variance: 1.0 / p,
        }
    }

    /// Every exact marginal as a density on the display grid.
    pub fn exact_curves(&self) -> Result<Vec<Vec<f64>>> {
        Ok(self
            .mrf
            .exact()?
            .iter()
            .map(|m| self.xs.iter().map(|&x| m.density(x)).collect())
            .collect())
    }
}

impl MessageRule for GaussianRule {
    fn graph(&self) -> &Graph {
        &self.mrf.graph
    }

    fn width(&self) -> usize {
        2
    }

    /// `[0, 0]`: the flat message (no information yet).
    fn initial(&self, _m: MsgId, out: &mut [f64]) {
        out.fill(0.0);
    }

    fn update(&self, messages: &[f64], m: MsgId, _count: usize, out: &mut [f64]) -> Result<()> {
        let g = &self.mrf.graph;
        let (s, t) = (g.source(m), g.target(m));
        let e = m / 2;
        let c = self.mrf.edge_strength[e];
        let (mut jhat, mut hhat) = (self.mrf.node_precision[s] + c, self.mrf.node_shift[s]);
        for nb in g.neighbors(s) {
            if nb.node != t {
                jhat += messages[2 * nb.incoming];
                hhat += messages[2 * nb.incoming + 1];
            }
        }
        let j_st = DMatrix::from_element(1, 1, -self.mrf.edge_sign[e] * c);
        let (mj, mh) = gaussian_message(
            DMatrix::from_element(1, 1, jhat),
            &DVector::from_element(1, hhat),
            &j_st,
        )
        .ok_or_else(|| Error::Other(format!("the precision at node {s} is not positive")))?;
        out[0] = c + mj[(0, 0)];
        out[1] = mh[0];
        if out.iter().all(|v| v.is_finite()) {
            Ok(())
        } else {
            Err(Error::Other("the message is not finite".into()))
        }
    }

    fn distance(&self, _m: MsgId, a: &[f64], b: &[f64]) -> f64 {
        super::l1(a, b)
    }

    /// `[mean, precision]` (mean 0 for a flat message, precision 0).
    fn content(&self, _m: MsgId, stored: &[f64]) -> Vec<f64> {
        let (j, h) = (stored[0], stored[1]);
        vec![if j > 0.0 { h / j } else { 0.0 }, j]
    }

    /// `exp(-J x²/2 + h x)` scaled to integrate to 1 over the display grid (flat when J = 0).
    fn curve(&self, _m: MsgId, stored: &[f64]) -> Vec<f64> {
        let (j, h) = (stored[0], stored[1]);
        let peak = if j > 0.0 { h / j } else { 0.0 };
        let log = |x: f64| -0.5 * j * x * x + h * x;
        let top = log(peak.clamp(self.xs[0], self.xs[self.xs.len() - 1]));
        let mut f: Vec<f64> = self.xs.iter().map(|&x| (log(x) - top).exp()).collect();
        normalise_on(&self.xs, &mut f);
        f
    }

    /// The belief's Gaussian density on the display grid.
    fn belief(&self, messages: &[f64], t: NodeId) -> Vec<f64> {
        let m = self.moments(messages, t);
        self.xs.iter().map(|&x| m.density(x)).collect()
    }

    fn check_schedule(&self, _schedule: Schedule, _damping: Damping) -> Result<()> {
        Ok(())
    }
}

/// Scales `f` to integrate to 1 on the uniform grid `xs` (trapezoid rule).
pub(crate) fn normalise_on(xs: &[f64], f: &mut [f64]) {
    let z = integral(xs, f);
    if z > 0.0 && z.is_finite() {
        f.iter_mut().for_each(|v| *v /= z);
    }
}

/// `∫ f` on the uniform grid `xs` (trapezoid rule).
pub fn integral(xs: &[f64], f: &[f64]) -> f64 {
    if xs.len() < 2 {
        return 0.0;
    }
    let h = xs[1] - xs[0];
    h * (f.iter().sum::<f64>() - 0.5 * (f[0] + f[f.len() - 1]))
}

impl Stepper<GaussianRule> {
    pub fn gaussian(
        mrf: ScalarGaussianMrf,
        schedule: Schedule,
        damping: Damping,
    ) -> Result<GaussianStepper> {
        Stepper::with_rule(GaussianRule::new(mrf)?, schedule, damping)
    }

    /// Every node's belief as mean and variance.
    pub fn moments(&self) -> Vec<Moments> {
        (0..self.graph().num_nodes())
            .map(|t| self.rule().moments(self.stored(), t))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use strum::VariantArray;

    use super::*;
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    fn random_model(graph: Graph, seed: u64, strength: f64) -> ScalarGaussianMrf {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let n = graph.num_nodes();
        let e = graph.num_edges();
        ScalarGaussianMrf {
            node_precision: (0..n).map(|_| rng.random_range(0.3..2.0)).collect(),
            node_shift: (0..n).map(|_| rng.random_range(-2.0..2.0)).collect(),
            edge_strength: (0..e)
                .map(|_| strength * rng.random_range(0.2..1.0))
                .collect(),
            edge_sign: (0..e)
                .map(|_| if rng.random::<bool>() { 1.0 } else { -1.0 })
                .collect(),
            graph,
        }
    }

    fn errors(bp: &GaussianStepper) -> (f64, f64) {
        let exact = bp.rule().mrf().exact().unwrap();
        let got = bp.moments();
        let mean = got
            .iter()
            .zip(&exact)
            .map(|(a, b)| (a.mean - b.mean).abs())
            .fold(0.0, f64::max);
        let var = got
            .iter()
            .zip(&exact)
            .map(|(a, b)| (a.variance - b.variance).abs())
            .fold(0.0, f64::max);
        (mean, var)
    }

    #[test]
    fn one_sweep_is_exact_on_a_chain_and_a_tree() {
        for g in [
            Graph::chain(6).unwrap(),
            Graph::balanced_tree(2, 2).unwrap(),
            Graph::random_tree(9, 3).unwrap(),
        ] {
            let mut bp = Stepper::gaussian(
                random_model(g.clone(), 5, 2.0),
                Schedule::Sweep,
                Damping(0.0),
            )
            .unwrap();
            assert!(
                errors(&bp).0 > 1e-2,
                "the node factors alone are not the marginals"
            );
            for _ in 0..g.num_messages() - 1 {
                bp.step().unwrap();
            }
            // One message short of the round: not yet exact.
            assert!(errors(&bp).0.max(errors(&bp).1) > 1e-4);
            bp.step().unwrap();
            let (mean, var) = errors(&bp);
            assert!(
                mean < 1e-12 && var < 1e-12,
                "{} nodes: {mean} {var}",
                g.num_nodes()
            );
            assert!(bp.fixed_point_residual() < 1e-12);
        }
    }

    #[test]
    fn loopy_means_are_exact_at_convergence_and_variances_are_not() {
        let g = Graph::grid(3, 3).unwrap();
        for &schedule in Schedule::VARIANTS {
            for damping in [0.0, 0.5] {
                let mut bp =
                    Stepper::gaussian(random_model(g.clone(), 9, 3.0), schedule, Damping(damping))
                        .unwrap();
                let mut steps = 0;
                while bp.fixed_point_residual() > 1e-13 && steps < 5000 * g.num_messages() {
                    bp.step().unwrap();
                    steps += 1;
                }
                assert!(
                    bp.fixed_point_residual() < 1e-12,
                    "{schedule:?} d={damping}"
                );
                let (mean, var) = errors(&bp);
                assert!(mean < 1e-9, "{schedule:?} d={damping}: mean error {mean}");
                // Loopy Gaussian BP's variances are too small in general (Weiss & Freeman 2001).
                assert!(var > 1e-4, "{schedule:?} d={damping}: variance error {var}");
            }
        }
    }

    #[test]
    fn the_update_is_the_integral_of_the_edge_factor() {
        // Message s -> t by quadrature of φ_s(x_s) ψ(x_s, x_t) over x_s, on a single edge.
        let g = Graph::chain(2).unwrap();
        let mrf = ScalarGaussianMrf {
            graph: g,
            node_precision: vec![0.7, 1.0],
            node_shift: vec![0.9, 0.0],
            edge_strength: vec![1.3],
            edge_sign: vec![-1.0],
        };
        let rule = GaussianRule::new(mrf).unwrap();
        let mut out = [0.0; 2];
        rule.update(&[0.0; 4], 0, 0, &mut out).unwrap();
        let log_message = |y: f64| {
            let h = 1e-3;
            let s: f64 = (-20000..20000)
                .map(|k| {
                    let x = k as f64 * h;
                    (-0.35 * x * x + 0.9 * x - 0.65 * (x + y) * (x + y)).exp()
                })
                .sum();
            (s * h).ln()
        };
        // log m(y) = -J y²/2 + h y + const: read J and h off three points.
        let (l0, l1, lm) = (log_message(0.0), log_message(1.0), log_message(-1.0));
        let j = -(l1 + lm - 2.0 * l0);
        let h = (l1 - lm) / 2.0;
        assert!((out[0] - j).abs() < 1e-6, "{out:?} vs J {j}");
        assert!((out[1] - h).abs() < 1e-6, "{out:?} vs h {h}");
    }
}
