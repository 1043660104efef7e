//! Discrete messages for teaching mode: a distribution over the receiving node's labels,
//! computed by the discrete BP engine's own [`compute_message`] (Yedidia, Freeman, Weiss 2003,
//! eq. 4: `m_ts(x_s) ∝ Σ_{x_t} ψ_ts φ_t Π_{u∈N(t)\s} m_ut`), mixed into the old message with
//! damping `d` (`new = d·old + (1−d)·update`); the change is the L1 distance. Exact marginals
//! of small models by enumeration ([`exact_marginals`]).
//!
//! Nodes may have fewer real states than the MRF's `S` (the predictive-BP stand-in mixes 2 and
//! 3): padded states carry zero potential, so their belief and incoming messages are exactly 0
//! and every read-out is cut to the node's own states.
//!
//! Cost per update O(deg · S + S²); enumeration O(Π cards · (n + |E|)).

use super::{MessageRule, Stepper, l1, normalise};
use crate::error::{Error, Result};
use crate::inference::discrete::{DiscreteMrf, compute_message};
use crate::inference::{Damping, Schedule};
use crate::model::{Graph, MsgId, NodeId};

/// A discrete pairwise MRF with each node's number of real states.
#[derive(Debug, Clone)]
pub struct DiscreteRule {
    mrf: DiscreteMrf,
    /// Real states per node (at most S).
    cards: Vec<usize>,
}

/// Discrete BP, one message per step.
pub type MessageStepper = Stepper<DiscreteRule>;

impl DiscreteRule {
    /// `cards[t]` is node `t`'s number of real states (1..=S); the MRF's potentials must be
    /// zero on the padded ones.
    pub fn new(mrf: DiscreteMrf, cards: Vec<usize>) -> Result<DiscreteRule> {
        mrf.check()?;
        let s = mrf.num_states();
        let n = mrf.graph.num_nodes();
        if cards.len() != n || cards.iter().any(|&c| c == 0 || c > s) {
            return Err(Error::param(
                "states",
                format!("need one count in 1..={s} per node ({n} nodes)"),
            ));
        }
        Ok(DiscreteRule { mrf, cards })
    }
}

impl MessageRule for DiscreteRule {
    fn graph(&self) -> &Graph {
        &self.mrf.graph
    }

    fn width(&self) -> usize {
        self.mrf.num_states()
    }

    /// Uniform over the receiving node's real states.
    fn initial(&self, m: MsgId, out: &mut [f64]) {
        let c = self.cards[self.mrf.graph.target(m)];
        out.fill(0.0);
        out[..c].fill(1.0 / c as f64);
    }

    fn update(&self, messages: &[f64], m: MsgId, _count: usize, out: &mut [f64]) -> Result<()> {
        let mut product = vec![0.0; self.width()];
        if compute_message(&self.mrf, messages, m, 1.0, &mut product, out) {
            Ok(())
        } else {
            Err(Error::Other(
                "the message has no finite mass (a potential is zero everywhere it reads)".into(),
            ))
        }
    }

    fn distance(&self, _m: MsgId, a: &[f64], b: &[f64]) -> f64 {
        l1(a, b)
    }

    fn content(&self, m: MsgId, stored: &[f64]) -> Vec<f64> {
        stored[..self.cards[self.mrf.graph.target(m)]].to_vec()
    }

    /// `φ_t Π_u m_ut`, normalised, over t's real states.
    fn belief(&self, messages: &[f64], t: NodeId) -> Vec<f64> {
        let s = self.mrf.num_states();
        let c = self.cards[t];
        let mut b = self.mrf.node_potentials[t * s..t * s + c].to_vec();
        for nb in self.mrf.graph.neighbors(t) {
            let m = &messages[nb.incoming * s..nb.incoming * s + c];
            b.iter_mut().zip(m).for_each(|(b, m)| *b *= m);
        }
        normalise(&mut b);
        b
    }
}

impl Stepper<DiscreteRule> {
    /// Uniform initial messages over each node's real states (see [`DiscreteRule::new`]).
    pub fn new(
        mrf: DiscreteMrf,
        cards: Vec<usize>,
        schedule: Schedule,
        damping: Damping,
    ) -> Result<MessageStepper> {
        Stepper::with_rule(DiscreteRule::new(mrf, cards)?, schedule, damping)
    }

    pub fn mrf(&self) -> &DiscreteMrf {
        &self.rule().mrf
    }

    pub fn cards(&self) -> &[usize] {
        &self.rule().cards
    }

    /// Message `m` over its receiving node's states.
    pub fn message(&self, m: MsgId) -> &[f64] {
        let c = self.cards()[self.graph().target(m)];
        &self.stored_message(m)[..c]
    }
}

/// Exact marginals of a small pairwise MRF by enumerating every joint state over each node's
/// real states: `p(x) ∝ Π_t φ_t(x_t) Π_(a,b) ψ_ab(x_a, x_b)`. O(Π cards · (n + |E|)); refuses
/// more than `max_states` joint states.
pub fn exact_marginals(
    mrf: &DiscreteMrf,
    cards: &[usize],
    max_states: usize,
) -> Result<Vec<Vec<f64>>> {
    let s = mrf.num_states();
    let g = &mrf.graph;
    let total = cards
        .iter()
        .try_fold(1usize, |acc, &c| acc.checked_mul(c))
        .filter(|&t| t <= max_states)
        .ok_or_else(|| {
            Error::Other(format!(
                "exact enumeration needs the product of the state counts {cards:?}, more than {max_states} joint states"
            ))
        })?;
    let mut marginals: Vec<Vec<f64>> = cards.iter().map(|&c| vec![0.0; c]).collect();
    let mut x = vec![0usize; cards.len()];
    for _ in 0..total {
        let mut p: f64 = (0..x.len())
            .map(|t| mrf.node_potentials[t * s + x[t]])
            .product();
        for (e, &(a, b)) in g.edges().iter().enumerate() {
            p *= edge_table(mrf, e)[x[a] * s + x[b]];
        }
        for (t, &xt) in x.iter().enumerate() {
            marginals[t][xt] += p;
        }
        // Next joint state (first node fastest).
        for (t, xt) in x.iter_mut().enumerate() {
            *xt += 1;
            if *xt < cards[t] {
                break;
            }
            *xt = 0;
        }
    }
    for m in &mut marginals {
        let z: f64 = m.iter().sum();
        if !(z > 0.0 && z.is_finite()) {
            return Err(Error::Other(
                "the model gives every joint state probability 0".into(),
            ));
        }
        m.iter_mut().for_each(|v| *v /= z);
    }
    Ok(marginals)
}

fn edge_table(mrf: &DiscreteMrf, e: usize) -> &[f64] {
    match &mrf.edge_potentials {
        crate::inference::discrete::EdgePotentials::Shared(t) => t,
        crate::inference::discrete::EdgePotentials::PerEdge(ts) => &ts[e],
    }
}

#[cfg(test)]
mod tests {
    use strum::VariantArray;

    use super::*;
    use crate::inference::discrete::EdgePotentials;
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    /// Random positive node potentials and per-edge tables on `graph`, S states.
    fn random_mrf(graph: Graph, s: usize, seed: u64) -> DiscreteMrf {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let n = graph.num_nodes();
        let node_potentials = (0..n * s).map(|_| rng.random_range(0.1..2.0)).collect();
        let tables = (0..graph.num_edges())
            .map(|_| (0..s * s).map(|_| rng.random_range(0.1..2.0)).collect())
            .collect();
        DiscreteMrf {
            graph,
            state_values: (0..s).map(|x| x as f64).collect(),
            node_potentials,
            edge_potentials: EdgePotentials::PerEdge(tables),
        }
    }

    fn max_error(a: &[Vec<f64>], b: &[Vec<f64>]) -> f64 {
        a.iter()
            .flatten()
            .zip(b.iter().flatten())
            .map(|(x, y)| (x - y).abs())
            .fold(0.0, f64::max)
    }

    fn stepper(g: Graph, schedule: Schedule, damping: f64) -> MessageStepper {
        let s = 3;
        let cards = vec![s; g.num_nodes()];
        MessageStepper::new(random_mrf(g, s, 7), cards, schedule, Damping(damping)).unwrap()
    }

    #[test]
    fn one_sweep_is_exact_on_a_chain_and_a_tree() {
        for g in [
            Graph::chain(6).unwrap(),
            Graph::balanced_tree(2, 2).unwrap(),
            Graph::random_tree(9, 3).unwrap(),
        ] {
            let mut bp = stepper(g.clone(), Schedule::Sweep, 0.0);
            let exact = exact_marginals(bp.mrf(), bp.cards(), 1 << 20).unwrap();
            // Before the sweep the beliefs are the node potentials alone: far from exact.
            assert!(max_error(&bp.beliefs(), &exact) > 1e-3);
            for _ in 0..g.num_messages() {
                bp.step().unwrap();
            }
            assert_eq!(bp.round(), 1);
            let err = max_error(&bp.beliefs(), &exact);
            assert!(err < 1e-9, "{} nodes: error {err}", g.num_nodes());
            assert!(bp.fixed_point_residual() < 1e-12);
        }
    }

    #[test]
    fn one_round_less_one_message_is_not_exact_on_a_chain() {
        // The sweep's last message is needed: the test above would catch a schedule that
        // sends the wrong direction first.
        let g = Graph::chain(6).unwrap();
        let mut bp = stepper(g.clone(), Schedule::Sweep, 0.0);
        let exact = exact_marginals(bp.mrf(), bp.cards(), 1 << 20).unwrap();
        for _ in 0..g.num_messages() - 1 {
            bp.step().unwrap();
        }
        assert!(max_error(&bp.beliefs(), &exact) > 1e-4);
    }

    #[test]
    fn every_schedule_reaches_the_exact_marginals_on_a_tree() {
        let g = Graph::balanced_tree(2, 2).unwrap();
        for &schedule in Schedule::VARIANTS {
            for damping in [0.0, 0.5] {
                let mut bp = stepper(g.clone(), schedule, damping);
                let exact = exact_marginals(bp.mrf(), bp.cards(), 1 << 20).unwrap();
                for _ in 0..400 * g.num_messages() {
                    bp.step().unwrap();
                    if bp.fixed_point_residual() < 1e-13 {
                        break;
                    }
                }
                let err = max_error(&bp.beliefs(), &exact);
                assert!(err < 1e-9, "{schedule:?} d={damping}: error {err}");
            }
        }
    }

    #[test]
    fn the_next_message_listed_is_the_one_sent() {
        let g = Graph::grid(3, 3).unwrap();
        for &schedule in Schedule::VARIANTS {
            let mut bp = stepper(g.clone(), schedule, 0.3);
            for _ in 0..3 * g.num_messages() {
                let next = bp.upcoming(4);
                assert_eq!(next.len(), 4);
                let sent = bp.step().unwrap();
                assert_eq!(sent.id, next[0], "{schedule:?}");
                // Every schedule, residual BP too: the rest of the list is still ahead.
                assert_eq!(bp.upcoming(3), next[1..], "{schedule:?}");
            }
        }
    }

    #[test]
    fn a_step_changes_one_message_and_the_receivers_belief() {
        let g = Graph::chain(4).unwrap();
        let mut bp = stepper(g, Schedule::Sweep, 0.0);
        let before: Vec<Vec<f64>> = (0..6).map(|m| bp.message(m).to_vec()).collect();
        let sent = bp.step().unwrap();
        for (m, old) in before.iter().enumerate() {
            if m == sent.id {
                assert!(sent.change > 1e-3);
                assert_eq!(bp.message(m), &sent.after[..]);
            } else {
                assert_eq!(bp.message(m), &old[..]);
            }
        }
        assert_eq!(sent.belief_after, bp.belief(sent.to));
        assert!(l1(&sent.belief_before, &sent.belief_after) > 1e-3);
    }

    #[test]
    fn synchronous_rounds_read_the_start_of_the_round() {
        // A synchronous round equals one iteration of the discrete BP engine.
        use crate::inference::Inference;
        use crate::inference::discrete::DiscreteBp;
        let g = Graph::grid(3, 3).unwrap();
        let mut bp = stepper(g.clone(), Schedule::Synchronous, 0.2);
        let mut engine =
            DiscreteBp::new(bp.mrf().clone(), Schedule::Synchronous, Damping(0.2)).unwrap();
        for _ in 0..3 {
            for _ in 0..g.num_messages() {
                bp.step().unwrap();
            }
            engine.step().unwrap();
        }
        for m in 0..g.num_messages() {
            let err = l1(bp.message(m), engine.message(m));
            assert!(err < 1e-12, "message {m}: {err}");
        }
    }

    #[test]
    fn loopy_bp_on_the_three_by_three_grid_is_near_the_exact_marginals() {
        let g = Graph::grid(3, 3).unwrap();
        let mut bp = stepper(g.clone(), Schedule::Residual, 0.0);
        let exact = exact_marginals(bp.mrf(), bp.cards(), 1 << 20).unwrap();
        for _ in 0..200 * g.num_messages() {
            bp.step().unwrap();
        }
        assert!(bp.fixed_point_residual() < 1e-10);
        let err = max_error(&bp.beliefs(), &exact);
        // Loopy BP is approximate: close, not equal, on weak random potentials.
        assert!(err > 1e-6 && err < 0.05, "error {err}");
    }

    #[test]
    fn padded_states_stay_at_zero() {
        let g = Graph::chain(3).unwrap();
        let mut mrf = random_mrf(g, 3, 1);
        // Node 1 has two real states: zero potential on its third, in φ and in both tables.
        mrf.node_potentials[3 + 2] = 0.0;
        if let EdgePotentials::PerEdge(tables) = &mut mrf.edge_potentials {
            (0..3).for_each(|i| tables[0][i * 3 + 2] = 0.0);
            (0..3).for_each(|j| tables[1][2 * 3 + j] = 0.0);
        }
        let mut bp =
            MessageStepper::new(mrf, vec![3, 2, 3], Schedule::Sweep, Damping(0.0)).unwrap();
        let exact = exact_marginals(bp.mrf(), bp.cards(), 1000).unwrap();
        for _ in 0..4 {
            bp.step().unwrap();
        }
        assert_eq!(bp.belief(1).len(), 2);
        let into_middle = bp.message(0);
        assert!((into_middle.iter().sum::<f64>() - 1.0).abs() < 1e-12);
        assert!(max_error(&bp.beliefs(), &exact) < 1e-9);
    }

    #[test]
    fn enumeration_refuses_large_models() {
        let bp = stepper(Graph::chain(6).unwrap(), Schedule::Sweep, 0.0);
        let e = exact_marginals(bp.mrf(), bp.cards(), 100).unwrap_err();
        assert!(e.to_string().contains("joint states"), "{e}");
    }
}
