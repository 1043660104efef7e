//! Teaching mode's engines: belief propagation on a small pairwise graph, one message at a time
//! (a teaching aid), for three kinds of message:
//!
//! * [`discrete`]: a distribution over a few labels; the update is the discrete BP engine's own
//!   [`crate::inference::discrete::compute_message`] (Yedidia, Freeman, Weiss 2003, eq. 4);
//! * [`gaussian`]: a Gaussian in information form; the update is Gaussian BP's own
//!   [`crate::inference::gaussian_bp::gaussian_message`] (Weiss & Freeman 2001);
//! * [`series`]: `r` orthogonal-series coefficients updated by SOSMP's stochastic step
//!   (Noorshams & Wainwright 2013, Fig. 3), built from the SOSMP engine's own sampling density,
//!   sampler, random streams and γ tables.
//!
//! A [`MessageRule`] says what a message is and how one is computed; [`Stepper`] owns the
//! schedule, the damping and the bookkeeping, and is the same for every rule. What differs
//! from the engines is the granularity: [`Stepper::step`] sends exactly one message and
//! returns its content and the receiving node's belief before and after, and
//! [`Stepper::upcoming`] lists the messages the schedule sends next.
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
//! * residual BP (Elidan, McGraw, Koller 2006): every message's pending update and its change
//!   sit in a priority queue; a step commits the largest and recomputes the messages that
//!   read it. Sending one message changes the pending changes of others, so the upcoming list
//!   is found by sending the next messages on a copy.
//!
//! Cost per step: one rule update (residual BP: plus one per reader, and O(log M)); `upcoming(k)`
//! is O(k) for the fixed orders and k steps of a copy for residual BP. Memory O(M · width),
//! M = 2|E|.

pub mod discrete;
pub mod gaussian;
pub mod series;

use std::collections::VecDeque;

use super::schedule_order::{ResidualQueue, random_order};
use super::{Damping, Schedule};
use crate::error::{Error, Result};
use crate::model::{Graph, MsgId, NodeId};

pub use discrete::{DiscreteRule, MessageStepper, exact_marginals};
pub use gaussian::{GaussianRule, GaussianStepper, Moments, ScalarGaussianMrf};
pub use series::{SeriesRule, SeriesStepper};

/// What a message is and how one is computed: the part of BP that depends on the
/// representation. Messages are stored flat, [`width`](MessageRule::width) numbers each.
pub trait MessageRule: Clone + Send {
    fn graph(&self) -> &Graph;
    /// Numbers stored per message.
    fn width(&self) -> usize;
    /// Message `m`'s starting value.
    fn initial(&self, m: MsgId, out: &mut [f64]);
    /// The undamped update of `m` from `messages`; `count` is how many updates of `m` were
    /// committed before (the stream of a stochastic rule). An error names a message with no
    /// finite mass; the stepper then leaves every message as it was.
    fn update(&self, messages: &[f64], m: MsgId, count: usize, out: &mut [f64]) -> Result<()>;
    /// The deterministic update whose fixed point the run approaches (for the fixed-point
    /// residual); the update itself unless the rule is stochastic.
    fn expected_update(&self, messages: &[f64], m: MsgId, out: &mut [f64]) -> Result<()> {
        self.update(messages, m, 0, out)
    }
    /// Commits `update` to `message` (its `count`-th update): damping by default.
    fn commit(&self, damping: Damping, _count: usize, message: &mut [f64], update: &[f64]) {
        damping.mix(message, update);
    }
    /// How far apart two values of message `m` are (the change and the residual).
    fn distance(&self, m: MsgId, a: &[f64], b: &[f64]) -> f64;
    /// The numbers the view shows of a message (probabilities, mean and precision, or
    /// coefficients).
    fn content(&self, m: MsgId, stored: &[f64]) -> Vec<f64>;
    /// Message `m` as a function on the rule's display grid (empty for discrete messages).
    fn curve(&self, _m: MsgId, _stored: &[f64]) -> Vec<f64> {
        Vec::new()
    }
    /// Node `t`'s normalised belief: probabilities over its labels, or a density on the
    /// display grid.
    fn belief(&self, messages: &[f64], t: NodeId) -> Vec<f64>;
    /// Why the rule cannot run `schedule` with `damping`, if it cannot.
    fn check_schedule(&self, _schedule: Schedule, _damping: Damping) -> Result<()> {
        Ok(())
    }
}

/// One message as it was sent.
#[derive(Debug, Clone, PartialEq)]
pub struct SentMessage {
    pub id: MsgId,
    pub from: NodeId,
    pub to: NodeId,
    /// The round it belongs to (1-based; residual BP counts rounds of M updates).
    pub round: usize,
    /// The message's content before and after ([`MessageRule::content`]).
    pub before: Vec<f64>,
    pub after: Vec<f64>,
    /// The message as a function on the display grid before and after (continuous rules).
    pub curve_before: Vec<f64>,
    pub curve_after: Vec<f64>,
    /// [`MessageRule::distance`] between before and after.
    pub change: f64,
    /// The receiving node's belief before and after.
    pub belief_before: Vec<f64>,
    pub belief_after: Vec<f64>,
}

/// Belief propagation that sends one message per [`step`](Stepper::step).
#[derive(Clone)]
pub struct Stepper<R: MessageRule> {
    rule: R,
    schedule: Schedule,
    damping: Damping,
    /// `[m * width + k]`.
    messages: Vec<f64>,
    /// Synchronous: the messages at the start of the current round (what updates read).
    round_start: Vec<f64>,
    /// Messages still to send in the current round (not residual BP).
    plan: VecDeque<MsgId>,
    round: usize,
    sent: usize,
    /// Updates committed per message.
    counts: Vec<usize>,
    /// Residual BP: every message's pending undamped update and the queue of their changes.
    pending: Vec<f64>,
    queue: ResidualQueue,
    out: Vec<f64>,
}

impl<R: MessageRule> Stepper<R> {
    /// Every message at the rule's starting value.
    pub fn with_rule(rule: R, schedule: Schedule, damping: Damping) -> Result<Stepper<R>> {
        let damping = damping.check()?;
        rule.check_schedule(schedule, damping)?;
        let w = rule.width();
        let num = rule.graph().num_messages();
        let mut messages = vec![0.0; num * w];
        for m in 0..num {
            rule.initial(m, &mut messages[m * w..(m + 1) * w]);
        }
        let mut stepper = Stepper {
            round_start: messages.clone(),
            pending: messages.clone(),
            messages,
            schedule,
            damping,
            plan: VecDeque::new(),
            round: 0,
            sent: 0,
            counts: vec![0; num],
            queue: ResidualQueue::new(num),
            out: vec![0.0; w],
            rule,
        };
        if schedule == Schedule::Residual {
            for k in 0..num {
                stepper.update_pending(k)?;
            }
        }
        Ok(stepper)
    }

    pub fn rule(&self) -> &R {
        &self.rule
    }

    pub fn graph(&self) -> &Graph {
        self.rule.graph()
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

    /// Every message as stored, `[m * width + k]`.
    pub fn stored(&self) -> &[f64] {
        &self.messages
    }

    /// Message `m` as stored.
    pub fn stored_message(&self, m: MsgId) -> &[f64] {
        let w = self.rule.width();
        &self.messages[m * w..(m + 1) * w]
    }

    /// Message `m`'s content ([`MessageRule::content`]).
    pub fn content(&self, m: MsgId) -> Vec<f64> {
        self.rule.content(m, self.stored_message(m))
    }

    /// Node `t`'s belief.
    pub fn belief(&self, t: NodeId) -> Vec<f64> {
        self.rule.belief(&self.messages, t)
    }

    /// Every node's belief.
    pub fn beliefs(&self) -> Vec<Vec<f64>> {
        (0..self.graph().num_nodes())
            .map(|t| self.belief(t))
            .collect()
    }

    /// The largest distance between a message and its (expected) undamped update from the
    /// current messages: 0 exactly at a fixed point. O(M) rule updates.
    pub fn fixed_point_residual(&self) -> f64 {
        let mut out = vec![0.0; self.rule.width()];
        (0..self.graph().num_messages())
            .map(
                |m| match self.rule.expected_update(&self.messages, m, &mut out) {
                    Ok(()) => self.rule.distance(m, self.stored_message(m), &out),
                    Err(_) => f64::INFINITY,
                },
            )
            .fold(0.0, f64::max)
    }

    /// The next `k` messages the schedule sends, the very next first; exact for every
    /// schedule (residual BP: found by sending them on a copy, since each message sent changes
    /// the pending changes of others). An update that fails on the copy ends the list there.
    pub fn upcoming(&self, k: usize) -> Vec<MsgId> {
        if self.schedule == Schedule::Residual {
            let mut copy = self.clone();
            let mut out = Vec::with_capacity(k);
            for _ in 0..k {
                match copy.step() {
                    Ok(sent) => out.push(sent.id),
                    Err(_) => break,
                }
            }
            return out;
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
            Schedule::Checkerboard => colour_order(g),
            Schedule::Random => random_order(g.num_messages(), round),
            Schedule::Synchronous | Schedule::Residual => (0..g.num_messages()).collect(),
        }
    }

    /// Sends one message: the next of the schedule. A failed update is an error naming the
    /// message, and leaves every message as it was.
    pub fn step(&mut self) -> Result<SentMessage> {
        if self.graph().num_messages() == 0 {
            return Err(Error::Other(
                "the graph has no edges: no message to send".into(),
            ));
        }
        let w = self.rule.width();
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
        let stored_before = self.stored_message(m).to_vec();
        if self.schedule == Schedule::Residual {
            self.out.copy_from_slice(&self.pending[m * w..(m + 1) * w]);
        } else {
            let source = if self.schedule == Schedule::Synchronous {
                &self.round_start
            } else {
                &self.messages
            };
            self.rule
                .update(source, m, self.counts[m], &mut self.out)
                .map_err(|e| self.failed(m, e))?;
            self.plan.pop_front();
        }
        self.rule.commit(
            self.damping,
            self.counts[m],
            &mut self.messages[m * w..(m + 1) * w],
            &self.out,
        );
        self.counts[m] += 1;
        if self.schedule == Schedule::Residual {
            self.after_residual_commit(m)?;
        }
        self.sent += 1;
        let stored_after = self.stored_message(m);
        Ok(SentMessage {
            id: m,
            from,
            to,
            round: self.round(),
            change: self.rule.distance(m, &stored_before, stored_after),
            before: self.rule.content(m, &stored_before),
            after: self.rule.content(m, stored_after),
            curve_before: self.rule.curve(m, &stored_before),
            curve_after: self.rule.curve(m, stored_after),
            belief_before,
            belief_after: self.belief(to),
        })
    }

    /// Residual BP after committing `m`: its own pending change (its inputs did not move) and
    /// the pending updates of the messages that read it.
    fn after_residual_commit(&mut self, m: MsgId) -> Result<()> {
        let w = self.rule.width();
        let r = self.rule.distance(
            m,
            &self.messages[m * w..(m + 1) * w],
            &self.pending[m * w..(m + 1) * w],
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
        let w = self.rule.width();
        self.rule
            .update(&self.messages, k, self.counts[k], &mut self.out)
            .map_err(|e| self.failed(k, e))?;
        self.pending[k * w..(k + 1) * w].copy_from_slice(&self.out);
        let r = self
            .rule
            .distance(k, &self.messages[k * w..(k + 1) * w], &self.out);
        self.queue.set(k, r);
        Ok(())
    }

    fn failed(&self, m: MsgId, cause: Error) -> Error {
        Error::Diverged {
            iteration: self.sent + 1,
            detail: format!(
                "message {} -> {}: {cause}",
                self.graph().source(m),
                self.graph().target(m)
            ),
        }
    }
}

/// The checkerboard schedule's round: the nodes of each colour class (a greedy colouring,
/// [`Graph::colour_classes`]) send all their messages, class after class.
pub fn colour_order(g: &Graph) -> Vec<MsgId> {
    g.colour_classes()
        .into_iter()
        .flatten()
        .flat_map(|t| g.neighbors(t).iter().map(|nb| nb.outgoing))
        .collect()
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
    let reversed: Vec<NodeId> = order.iter().rev().copied().collect();
    for (earlier, nodes) in [(true, reversed), (false, order.clone())] {
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

pub(crate) fn l1(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).map(|(x, y)| (x - y).abs()).sum()
}

/// Scales `v` to sum to 1 (uniform when it has no finite mass).
pub(crate) fn normalise(v: &mut [f64]) {
    let z: f64 = v.iter().sum();
    if z > 0.0 && z.is_finite() {
        v.iter_mut().for_each(|x| *x /= z);
    } else {
        let n = v.len().max(1) as f64;
        v.iter_mut().for_each(|x| *x = 1.0 / n);
    }
}
