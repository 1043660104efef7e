//! Orthogonal-series messages for teaching mode: SOSMP (Noorshams & Wainwright 2013, Fig. 3),
//! one message at a time. A message `v → u` is `r` coefficients `a` of an orthonormal basis on
//! the state grid; one update draws `k` samples `Y_i` from `β_uv Π_{w≠u} max(0, Σ_j a_{w→v;j} φ_j)`
//! (eq. 13), averages `b_j = (1/k) Σ_i γ_uv;j(Y_i)` (eq. 15) and steps
//! `a ← (1 − η) a + η b` with `η = 1/(t + 1)`, `t` the number of earlier updates of that
//! message (eq. 16, γ = 1). Every piece is the SOSMP engine's own: its sampling density
//! ([`sampling_density`]), its cell sampler, its random stream per (path 0, update, message)
//! ([`sampling_rng`]), its γ tables, its clipped beliefs ([`belief_values`]) and its expected
//! update ([`expected_update`], whose fixed point `a_∞` the run approaches; the fixed-point
//! residual is measured against it). A synchronous round therefore equals one iteration of
//! the engine ([`crate::inference::sosmp::update::step_path`]).
//!
//! The step size is SOSMP's damping, so the stepper's damping must be 0. The paper's schedule
//! is synchronous; sweep and random orders are the same stochastic approximation updated in
//! another order (a teaching deviation, named in the room's help); residual BP is refused, as
//! the engine refuses it, since a random update has no exact pending residual to rank.
//!
//! Cost per update: O(deg · n r) to evaluate the incoming messages, O(n) for the sampler,
//! O(k (log n + r)) for the samples; the change is the coefficients' L2 distance (eq. 38).

use std::sync::Arc;

use super::{MessageRule, Stepper};
use crate::error::{Error, Result};
use crate::inference::sosmp::SosmpProblem;
use crate::inference::sosmp::expected::{ExpectedScratch, expected_update};
use crate::inference::sosmp::grid::{CellSampler, IntervalGrid, StateGrid};
use crate::inference::sosmp::update::{belief_values, sampling_density, sampling_rng};
use crate::inference::{Damping, Schedule};
use crate::model::{Graph, MsgId, NodeId};

/// SOSMP's message rule on a problem over an interval grid.
#[derive(Debug, Clone)]
pub struct SeriesRule {
    problem: Arc<SosmpProblem<IntervalGrid>>,
    /// Samples per update, k.
    samples: usize,
    seed: u64,
}

/// SOSMP, one message per step.
pub type SeriesStepper = Stepper<SeriesRule>;

impl SeriesRule {
    pub fn new(
        problem: Arc<SosmpProblem<IntervalGrid>>,
        samples: usize,
        seed: u64,
    ) -> Result<SeriesRule> {
        if !(1..=100_000).contains(&samples) {
            return Err(Error::param(
                "samples",
                format!("must be between 1 and 100000, got {samples}"),
            ));
        }
        Ok(SeriesRule {
            problem,
            samples,
            seed,
        })
    }

    pub fn problem(&self) -> &Arc<SosmpProblem<IntervalGrid>> {
        &self.problem
    }

    pub fn samples(&self) -> usize {
        self.samples
    }

    /// The grid the curves are drawn on (the quadrature grid).
    pub fn xs(&self) -> &[f64] {
        self.problem.mrf.grid.points()
    }
}

impl MessageRule for SeriesRule {
    fn graph(&self) -> &Graph {
        &self.problem.mrf.graph
    }

    fn width(&self) -> usize {
        self.problem.r()
    }

    /// SOSMP's start: every coefficient `1/r`.
    fn initial(&self, _m: MsgId, out: &mut [f64]) {
        out.fill(1.0 / self.problem.r() as f64);
    }

    /// The sample average `b` (eq. 15) from the `count`-th stream of message `m`.
    fn update(&self, messages: &[f64], m: MsgId, count: usize, out: &mut [f64]) -> Result<()> {
        let p = &*self.problem;
        let (grid, r, n) = (&p.mrf.grid, p.r(), p.mrf.grid.len());
        let (mut eval, mut density) = (vec![0.0; n], vec![0.0; n]);
        sampling_density(
            p,
            |w| &messages[w * r..(w + 1) * r],
            m,
            &mut eval,
            &mut density,
        );
        let mut sampler = CellSampler::new(grid.num_cells());
        let total = sampler.prepare(grid, &density);
        if !(total > 0.0 && total.is_finite()) {
            // As the engine does: a density with no mass falls back to β alone.
            sampler.prepare(grid, p.tables.beta(&p.mrf, m, &mut eval));
        }
        let mut rng = sampling_rng(self.seed, 0, count, m);
        let drawn: Vec<_> = (0..self.samples)
            .map(|_| sampler.draw(grid, &mut rng))
            .collect();
        out.fill(0.0);
        let inv_k = 1.0 / self.samples as f64;
        for s in &drawn {
            grid.accumulate_row(p.tables.gamma(m), r, s, inv_k, out);
        }
        if out.iter().all(|b| b.is_finite()) {
            Ok(())
        } else {
            Err(Error::Other("a coefficient is not finite".into()))
        }
    }

    /// SOSMP's expected update `G(a)` (the mean of `b`), whose fixed point is `a_∞`.
    fn expected_update(&self, messages: &[f64], m: MsgId, out: &mut [f64]) -> Result<()> {
        let r = self.problem.r();
        let mut scratch = ExpectedScratch::new(self.problem.mrf.grid.len());
        expected_update(
            &self.problem,
            |w| &messages[w * r..(w + 1) * r],
            m,
            &mut scratch,
            out,
        );
        Ok(())
    }

    /// `a ← (1 − η) a + η b`, `η = 1/(count + 1)` (eq. 16).
    fn commit(&self, _damping: Damping, count: usize, message: &mut [f64], update: &[f64]) {
        let eta = 1.0 / (count as f64 + 1.0);
        for (a, b) in message.iter_mut().zip(update) {
            *a = (1.0 - eta) * *a + eta * b;
        }
    }

    fn distance(&self, _m: MsgId, a: &[f64], b: &[f64]) -> f64 {
        a.iter()
            .zip(b)
            .map(|(x, y)| (x - y) * (x - y))
            .sum::<f64>()
            .sqrt()
    }

    fn content(&self, _m: MsgId, stored: &[f64]) -> Vec<f64> {
        stored.to_vec()
    }

    /// The expansion `Σ_j a_j φ_j` on the grid (before SOSMP's clipping at 0).
    fn curve(&self, _m: MsgId, stored: &[f64]) -> Vec<f64> {
        let mut out = vec![0.0; self.problem.mrf.grid.len()];
        self.problem.basis.evaluate(stored, &mut out);
        out
    }

    /// `ψ_u Π_w max(0, Σ_j a_{w→u;j} φ_j)`, integrating to 1 on the grid.
    fn belief(&self, messages: &[f64], t: NodeId) -> Vec<f64> {
        let r = self.problem.r();
        belief_values(&self.problem, |w| &messages[w * r..(w + 1) * r], t)
    }

    fn check_schedule(&self, schedule: Schedule, damping: Damping) -> Result<()> {
        if schedule == Schedule::Residual {
            return Err(Error::param(
                "schedule",
                "series messages are SOSMP's stochastic updates: a random update has no exact \
                 pending residual to rank, so residual BP does not apply (use sweep, synchronous \
                 or random)",
            ));
        }
        if damping.0 != 0.0 {
            return Err(Error::param(
                "damping",
                format!(
                    "series messages take SOSMP's step size 1/(t+1), which is their damping; \
                     set the damping to 0 (got {})",
                    damping.0
                ),
            ));
        }
        Ok(())
    }
}

impl Stepper<SeriesRule> {
    pub fn series(rule: SeriesRule, schedule: Schedule) -> Result<SeriesStepper> {
        Stepper::with_rule(rule, schedule, Damping(0.0))
    }
}

#[cfg(test)]
mod tests {
    use super::super::gaussian::integral;
    use super::super::sweep_order;
    use super::*;
    use crate::inference::sosmp::basis::{BasisKind, GridBasis};
    use crate::inference::sosmp::expected::expected_fixed_point;
    use crate::inference::sosmp::model::GridMrf;
    use crate::inference::sosmp::potentials::{
        GaussianMixture, MixtureForm, MixturePrior, draw_difference_potentials,
    };
    use crate::inference::sosmp::reference::grid_bp;
    use crate::inference::sosmp::update::{PathState, PathStep, step_path};
    use crate::run::CancelFlag;
    use rand::SeedableRng;
    use rand_chacha::ChaCha8Rng;

    /// The paper's eq. 37 model on `graph`: mixtures of three bumps per node and per edge.
    pub(crate) fn mixture_problem(graph: Graph, seed: u64) -> Arc<SosmpProblem<IntervalGrid>> {
        let grid = IntervalGrid::with_density(-5.0, 5.0, 20.0).unwrap();
        let basis = GridBasis::on_interval(BasisKind::Fourier, 10, &grid).unwrap();
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let prior = MixturePrior {
            components: 3,
            mean_range: 3.0,
            max_variance: 0.5,
            min_variance: 0.05,
            form: MixtureForm::Eq37,
        };
        let mut node_potentials = Vec::new();
        for _ in 0..graph.num_nodes() {
            node_potentials.extend(GaussianMixture::draw(&mut rng, &prior).0.on_grid(&grid));
        }
        let pair_potentials =
            draw_difference_potentials(&mut rng, &prior, &grid, graph.num_edges());
        let mrf = GridMrf {
            edge_potential: (0..graph.num_edges()).collect(),
            graph,
            grid,
            node_potentials: node_potentials.into(),
            pair_potentials,
        };
        Arc::new(SosmpProblem::new(mrf, basis, &CancelFlag::default()).unwrap())
    }

    #[test]
    fn a_synchronous_round_is_one_iteration_of_the_sosmp_engine() {
        let problem = mixture_problem(Graph::grid(3, 3).unwrap(), 4);
        let (k, seed) = (7, 11);
        let rule = SeriesRule::new(problem.clone(), k, seed).unwrap();
        let mut bp = Stepper::series(rule, Schedule::Synchronous).unwrap();
        let r = problem.r();
        let mut state = PathState::new(problem.num_messages(), r, k);
        for t in 0..3 {
            for _ in 0..problem.num_messages() {
                bp.step().unwrap();
            }
            let step = PathStep {
                seed,
                samples: k,
                path: 0,
                iteration: t,
                eta: 1.0 / (t as f64 + 1.0),
                interrupt: None,
            };
            step_path(&problem, step, &mut state).unwrap();
            for m in 0..problem.num_messages() {
                let slot = problem.layout.slot_of[m];
                let engine = &state.coeffs[slot * r..(slot + 1) * r];
                let err = bp.rule().distance(m, bp.stored_message(m), engine);
                assert!(err < 1e-9, "iteration {t}, message {m}: {err}");
            }
        }
    }

    #[test]
    fn beliefs_approach_the_expected_fixed_point_and_the_grid_bp_reference() {
        let problem = mixture_problem(Graph::chain(5).unwrap(), 2);
        let cancel = CancelFlag::default();
        let reference = grid_bp(&problem.mrf, 1e-12, 1000, &cancel).unwrap();
        let floor = expected_fixed_point(&problem, 1e-12, 1000, &cancel).unwrap();
        let r = problem.r();
        let xs = problem.mrf.grid.points().to_vec();
        let n = xs.len();
        // The largest L1 distance between two sets of beliefs on the grid.
        let distance = |a: &dyn Fn(NodeId) -> Vec<f64>, b: &dyn Fn(NodeId) -> Vec<f64>| -> f64 {
            (0..5)
                .map(|t| {
                    let diff: Vec<f64> =
                        a(t).iter().zip(&b(t)).map(|(x, y)| (x - y).abs()).collect();
                    integral(&xs, &diff)
                })
                .fold(0.0, f64::max)
        };
        let grid_belief = |t: NodeId| reference.beliefs[t * n..(t + 1) * n].to_vec();
        let floor_belief =
            |t: NodeId| belief_values(&problem, |w| &floor.coefficients[w * r..(w + 1) * r], t);
        // r coefficients cannot hold grid BP's messages exactly: the floor of Theorem 1.
        let floor_error = distance(&floor_belief, &grid_belief);
        let rule = SeriesRule::new(problem.clone(), 200, 3).unwrap();
        let mut bp = Stepper::series(rule, Schedule::Sweep).unwrap();
        let mut to_floor = Vec::new();
        for rounds in [0, 1, 10, 100] {
            while bp.round() < rounds
                || (bp.round() == rounds && bp.upcoming(1) != [sweep_order(bp.graph())[0]])
            {
                bp.step().unwrap();
            }
            to_floor.push(distance(&|t| bp.belief(t), &floor_belief));
        }
        let to_reference = distance(&|t| bp.belief(t), &grid_belief);
        eprintln!(
            "L1 belief distance to a_inf after 0/1/10/100 rounds {to_floor:.4?}; a_inf to grid BP {floor_error:.4}; after 100 rounds to grid BP {to_reference:.4}"
        );
        assert!(to_floor[0] > 0.5, "{to_floor:?}");
        // The Monte Carlo error falls like 1/sqrt(k t) (measured: 0.22, 0.10, 0.033 after 1, 10
        // and 100 rounds); a constant step size would leave it near the first round's.
        assert!(
            to_floor[2] < to_floor[1] / 1.5 && to_floor[3] < to_floor[2] / 2.0,
            "{to_floor:?}"
        );
        assert!(to_floor[3] < 0.05, "{to_floor:?}");
        assert!(
            (to_reference - floor_error).abs() < 0.03,
            "{to_reference} vs floor {floor_error}"
        );
        assert!(
            bp.fixed_point_residual() < 0.01,
            "{}",
            bp.fixed_point_residual()
        );
    }

    #[test]
    fn residual_bp_and_damping_are_refused_with_the_reason() {
        let problem = mixture_problem(Graph::chain(3).unwrap(), 1);
        let rule = SeriesRule::new(problem, 5, 0).unwrap();
        let e = Stepper::with_rule(rule.clone(), Schedule::Residual, Damping(0.0))
            .err()
            .unwrap();
        assert!(e.to_string().contains("no exact pending residual"), "{e}");
        let e = Stepper::with_rule(rule, Schedule::Sweep, Damping(0.5))
            .err()
            .unwrap();
        assert!(e.to_string().contains("step size"), "{e}");
    }
}
