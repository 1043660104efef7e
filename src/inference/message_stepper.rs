//! Teaching mode's engine: discrete sum-product BP on a small pairwise MRF, one message at a
//! time (issue 19, item 4).
//!
//! Every update is [`super::discrete::compute_message`], the discrete BP engine's own message
//! (Yedidia, Freeman, Weiss 2003, eq. 4: `m_ts(x_s) ∝ Σ_{x_t} ψ_ts φ_t Π_{u∈N(t)\s} m_ut`), mixed
//! into the old message with damping `d` (`new = d·old + (1−d)·update`). What differs from
//! [`super::discrete::DiscreteBp`] is the granularity: [`MessageStepper::step`] sends exactly
//! one message and returns its content and the receiving node's belief before and after, and
//! [`MessageStepper::upcoming`] lists the messages the schedule sends next.
//!
//! Schedules (one round = every directed message once):
//! * sweep: the two-pass tree schedule. Nodes in breadth-first order from node 0; first every
//!   node in reverse order sends towards its earlier neighbours (leaves to root), then every
//!   node in order sends to its later neighbours (root to leaves). On a tree each message is
//!   sent after all the messages it reads, so one round gives the exact marginals (Pearl's
//!   forward-backward); on a loopy graph it is one Gauss-Seidel sweep.
//! * synchronous: every message in id order, each computed from the messages as they were at
//!   the start of the round (Jacobi), committed one at a time so each can be watched.
//! * random: every message once in a seeded random order (`schedule_order::random_order`),
//!   each from the freshest messages.
//! * residual BP (Elidan, McGraw, Koller 2006): every message's pending update and its L1
//!   change sit in a priority queue; a step commits the largest and recomputes the messages
//!   that read it.
//!
//! Nodes may have fewer real states than the MRF's `S` (the predictive-BP stand-in mixes 2 and
//! 3): padded states carry zero potential, so their belief and incoming messages are exactly 0
//! and every read-out is cut to the node's own states.
//!
//! Cost per step: O(deg · S + S²) (residual: O(deg · (deg·S + S²) + log M)); `upcoming(k)` is
//! O(k) for the fixed orders and O(M log M) for residual BP. Memory O(M · S), M = 2|E|.

use std::collections::VecDeque;

use super::discrete::{DiscreteMrf, compute_message};
use super::schedule_order::{ResidualQueue, random_order};
use super::{Damping, Schedule};
use crate::error::{Error, Result};
use crate::model::{Graph, MsgId, NodeId};

/// One message as it was sent.
#[derive(Debug, Clone, PartialEq)]
pub struct SentMessage {
    pub id: MsgId,
    pub from: NodeId,
    pub to: NodeId,
    /// The round it belongs to (1-based; residual BP counts rounds of M updates).
    pub round: usize,
    /// The message over the receiving node's states, before and after (each sums to 1).
    pub before: Vec<f64>,
    pub after: Vec<f64>,
    /// L1 distance between `before` and `after`.
    pub change: f64,
    /// The receiving node's belief before and after.
    pub belief_before: Vec<f64>,
    pub belief_after: Vec<f64>,
}

/// Discrete BP that sends one message per [`step`](MessageStepper::step).
#[derive(Clone)]
pub struct MessageStepper {
    mrf: DiscreteMrf,
    /// Real states per node (at most S).
    cards: Vec<usize>,
    schedule: Schedule,
    damping: Damping,
    /// `[m * S + x]`.
    messages: Vec<f64>,
    /// Synchronous: the messages at the start of the current round (what updates read).
    round_start: Vec<f64>,
    /// Messages still to send in the current round (not residual BP).
    plan: VecDeque<MsgId>,
    round: usize,
    sent: usize,
    /// Residual BP: every message's pending undamped update and the queue of their changes.
    pending: Vec<f64>,
    queue: ResidualQueue,
    product: Vec<f64>,
    out: Vec<f64>,
}

impl MessageStepper {
    /// Uniform initial messages over each node's real states. `cards[t]` is node `t`'s number
    /// of real states (1..=S); the MRF's potentials must be zero on the padded ones.
    pub fn new(
        mrf: DiscreteMrf,
        cards: Vec<usize>,
        schedule: Schedule,
        damping: Damping,
    ) -> Result<MessageStepper> {
        mrf.check()?;
        let damping = damping.check()?;
        let s = mrf.num_states();
        let g = &mrf.graph;
        if cards.len() != g.num_nodes() || cards.iter().any(|&c| c == 0 || c > s) {
            return Err(Error::param(
                "states",
                format!(
                    "need one count in 1..={s} per node ({} nodes)",
                    g.num_nodes()
                ),
            ));
        }
        let num = g.num_messages();
        let mut messages = vec![0.0; num * s];
        for m in 0..num {
            let c = cards[g.target(m)];
            messages[m * s..m * s + c].fill(1.0 / c as f64);
        }
        let mut stepper = MessageStepper {
            round_start: messages.clone(),
            pending: messages.clone(),
            messages,
            cards,
            schedule,
            damping,
            plan: VecDeque::new(),
            round: 0,
            sent: 0,
            queue: ResidualQueue::new(num),
            product: vec![0.0; s],
            out: vec![0.0; s],
            mrf,
        };
        if schedule == Schedule::Residual {
            stepper.fill_queue()?;
        }
        Ok(stepper)
    }

    pub fn graph(&self) -> &Graph {
        &self.mrf.graph
    }

    pub fn mrf(&self) -> &DiscreteMrf {
        &self.mrf
    }

    pub fn cards(&self) -> &[usize] {
        &self.cards
    }

    pub fn schedule(&self) -> Schedule {
        self.schedule
    }

    pub fn damping(&self) -> Damping {
        self.damping
    }

    /// Messages sent so far.
    pub fn sent(&self) -> usize {
        self.sent
    }

    /// The round of the last message sent (0 before the first).
    pub fn round(&self) -> usize {
        if self.schedule == Schedule::Residual {
            self.sent.div_ceil(self.graph().num_messages().max(1))
        } else {
            self.round
        }
    }

    /// Message `m` over its receiving node's states.
    pub fn message(&self, m: MsgId) -> &[f64] {
        let s = self.mrf.num_states();
        &self.messages[m * s..m * s + self.cards[self.graph().target(m)]]
    }

    /// Node `t`'s normalised belief `φ_t Π_u m_ut` over its states.
    pub fn belief(&self, t: NodeId) -> Vec<f64> {
        let s = self.mrf.num_states();
        let c = self.cards[t];
        let mut b = self.mrf.node_potentials[t * s..t * s + c].to_vec();
        for nb in self.graph().neighbors(t) {
            let m = &self.messages[nb.incoming * s..nb.incoming * s + c];
            b.iter_mut().zip(m).for_each(|(b, m)| *b *= m);
        }
        normalise(&mut b);
        b
    }

    /// Every node's belief.
    pub fn beliefs(&self) -> Vec<Vec<f64>> {
        (0..self.graph().num_nodes())
            .map(|t| self.belief(t))
            .collect()
    }

    /// The largest L1 distance between a message and its undamped update from the current
    /// messages: 0 exactly at a BP fixed point. O(M · S²).
    pub fn fixed_point_residual(&self) -> f64 {
        let s = self.mrf.num_states();
        let (mut product, mut out) = (vec![0.0; s], vec![0.0; s]);
        (0..self.graph().num_messages())
            .map(|m| {
                if compute_message(&self.mrf, &self.messages, m, 1.0, &mut product, &mut out) {
                    l1(&self.messages[m * s..(m + 1) * s], &out)
                } else {
                    f64::INFINITY
                }
            })
            .fold(0.0, f64::max)
    }

    /// The next `k` messages the schedule sends, the very next first. Exact for the fixed
    /// orders; for residual BP the current queue order (the first is exact, later ones can
    /// move once the first is sent).
    pub fn upcoming(&self, k: usize) -> Vec<MsgId> {
        if self.schedule == Schedule::Residual {
            let mut ranked: Vec<(f64, MsgId)> = (0..self.graph().num_messages())
                .map(|m| (self.queue.priority(m), m))
                .collect();
            // Largest first; ties: the lower id first, as the queue breaks them.
            ranked.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
            return ranked.into_iter().take(k).map(|(_, m)| m).collect();
        }
        let mut out: Vec<MsgId> = self.plan.iter().copied().take(k).collect();
        let mut round = self.round;
        while out.len() < k && self.graph().num_messages() > 0 {
            round += 1;
            let order = self.round_order(round);
            out.extend(order.into_iter().take(k - out.len()));
        }
        out
    }

    /// The order of round `round` (1-based) of a fixed schedule.
    fn round_order(&self, round: usize) -> Vec<MsgId> {
        let g = self.graph();
        match self.schedule {
            Schedule::Sweep => sweep_order(g),
            Schedule::Random => random_order(g.num_messages(), round),
            Schedule::Synchronous | Schedule::Residual => (0..g.num_messages()).collect(),
        }
    }

    /// Sends one message: the next of the schedule. A message with no finite mass is an error
    /// naming it, and leaves every message as it was.
    pub fn step(&mut self) -> Result<SentMessage> {
        if self.graph().num_messages() == 0 {
            return Err(Error::Other(
                "the graph has no edges: no message to send".into(),
            ));
        }
        let s = self.mrf.num_states();
        let m = if self.schedule == Schedule::Residual {
            self.queue.peek().map(|(m, _)| m).unwrap_or(0)
        } else {
            if self.plan.is_empty() {
                self.round += 1;
                self.plan = self.round_order(self.round).into();
                if self.schedule == Schedule::Synchronous {
                    self.round_start.copy_from_slice(&self.messages);
                }
            }
            self.plan[0]
        };
        let (from, to) = (self.graph().source(m), self.graph().target(m));
        let belief_before = self.belief(to);
        let before = self.message(m).to_vec();
        if self.schedule == Schedule::Residual {
            self.out.copy_from_slice(&self.pending[m * s..(m + 1) * s]);
        } else {
            let source = if self.schedule == Schedule::Synchronous {
                &self.round_start
            } else {
                &self.messages
            };
            if !compute_message(&self.mrf, source, m, 1.0, &mut self.product, &mut self.out) {
                return Err(self.no_mass(m));
            }
            self.plan.pop_front();
        }
        self.damping
            .mix(&mut self.messages[m * s..(m + 1) * s], &self.out);
        if self.schedule == Schedule::Residual {
            self.after_residual_commit(m)?;
        }
        self.sent += 1;
        let after = self.message(m).to_vec();
        Ok(SentMessage {
            id: m,
            from,
            to,
            round: self.round(),
            change: l1(&before, &after),
            before,
            after,
            belief_before,
            belief_after: self.belief(to),
        })
    }

    /// Residual BP after committing `m`: its own pending change (its inputs did not move) and
    /// the pending updates of the messages that read it.
    fn after_residual_commit(&mut self, m: MsgId) -> Result<()> {
        let s = self.mrf.num_states();
        let r = l1(
            &self.messages[m * s..(m + 1) * s],
            &self.pending[m * s..(m + 1) * s],
        );
        self.queue.set(m, r);
        let (from, t) = (self.graph().source(m), self.graph().target(m));
        let readers: Vec<MsgId> = (self.graph().neighbors(t).iter())
            .filter(|nb| nb.node != from)
            .map(|nb| nb.outgoing)
            .collect();
        for k in readers {
            self.update_pending(k)?;
        }
        Ok(())
    }

    fn update_pending(&mut self, k: MsgId) -> Result<()> {
        let s = self.mrf.num_states();
        if !compute_message(
            &self.mrf,
            &self.messages,
            k,
            1.0,
            &mut self.product,
            &mut self.out,
        ) {
            return Err(self.no_mass(k));
        }
        self.pending[k * s..(k + 1) * s].copy_from_slice(&self.out);
        let r = l1(&self.messages[k * s..(k + 1) * s], &self.out);
        self.queue.set(k, r);
        Ok(())
    }

    fn fill_queue(&mut self) -> Result<()> {
        for k in 0..self.graph().num_messages() {
            self.update_pending(k)?;
        }
        Ok(())
    }

    fn no_mass(&self, m: MsgId) -> Error {
        Error::Diverged {
            iteration: self.sent + 1,
            detail: format!(
                "message {} -> {} has no finite mass (a potential is zero everywhere it reads)",
                self.graph().source(m),
                self.graph().target(m)
            ),
        }
    }
}

/// The sweep schedule's round: breadth-first order from node 0 (then from each node not yet
/// reached); every node in reverse order sends to its earlier neighbours, then every node in
/// order to its later ones. Each directed message appears once.
pub fn sweep_order(g: &Graph) -> Vec<MsgId> {
    let n = g.num_nodes();
    let mut order = Vec::with_capacity(n);
    let mut seen = vec![false; n];
    for start in 0..n {
        if seen[start] {
            continue;
        }
        seen[start] = true;
        let mut queue = VecDeque::from([start]);
        while let Some(t) = queue.pop_front() {
            order.push(t);
            for nb in g.neighbors(t) {
                if !seen[nb.node] {
                    seen[nb.node] = true;
                    queue.push_back(nb.node);
                }
            }
        }
    }
    let mut position = vec![0; n];
    for (i, &t) in order.iter().enumerate() {
        position[t] = i;
    }
    let mut out = Vec::with_capacity(g.num_messages());
    for (earlier, nodes) in [(true, rev(&order)), (false, order.clone())] {
        for t in nodes {
            let sends = g.neighbors(t).iter();
            out.extend(
                sends
                    .filter(|nb| (position[nb.node] < position[t]) == earlier)
                    .map(|nb| nb.outgoing),
            );
        }
    }
    out
}

fn rev(v: &[NodeId]) -> Vec<NodeId> {
    v.iter().rev().copied().collect()
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
        super::discrete::EdgePotentials::Shared(t) => t,
        super::discrete::EdgePotentials::PerEdge(ts) => &ts[e],
    }
}

fn normalise(v: &mut [f64]) {
    let z: f64 = v.iter().sum();
    if z > 0.0 && z.is_finite() {
        v.iter_mut().for_each(|x| *x /= z);
    } else {
        let n = v.len().max(1) as f64;
        v.iter_mut().for_each(|x| *x = 1.0 / n);
    }
}

fn l1(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).map(|(x, y)| (x - y).abs()).sum()
}

#[cfg(test)]
mod tests {
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
        for schedule in Schedule::ALL {
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
        for schedule in Schedule::ALL {
            let mut bp = stepper(g.clone(), schedule, 0.3);
            for _ in 0..3 * g.num_messages() {
                let next = bp.upcoming(4);
                assert_eq!(next.len(), 4);
                let sent = bp.step().unwrap();
                assert_eq!(sent.id, next[0], "{schedule:?}");
                if schedule != Schedule::Residual {
                    // Fixed orders: the rest of the list is still ahead.
                    assert_eq!(bp.upcoming(3), next[1..], "{schedule:?}");
                }
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
