//! Discrete sum-product BP for optical flow: the baseline on the same MRF as SOSMP
//! ([`crate::model::flow`]), over the displacement lattice as labels.
//!
//! The update is [`super::discrete`]'s (Yedidia, Freeman, Weiss 2003, eq. 4, leave-one-out
//! products formed directly, messages normalised to sum 1, optional damping) specialised to what
//! makes flow large:
//! * **schedule: checkerboard** (Felzenszwalb & Huttenlocher 2006, Sec. 3.1). The 4-connected
//!   grid is bipartite: a half-iteration updates every message sent by the pixels of one colour
//!   (`x + y` even, then odd) from the messages sent by the other colour, in place. An iteration
//!   (both halves) updates every message once, like a synchronous one, has the same fixed
//!   points, needs one message buffer instead of two, and passes information twice as far.
//!   This is the `Synchronous` schedule; `Sweep` (raster order and back), `Random` (a seeded
//!   permutation of the pixels per iteration) and `Residual` (residual BP, Elidan, McGraw,
//!   Koller 2006, with a pixel's outgoing messages as the unit) update one pixel at a time
//!   from the freshest messages, serially;
//! * the node potential `φ_t(x) = w(x) ψ_t(x)` (`w` the tensor trapezoid weight of label `x`, so
//!   the messages are the grid-BP discretisation of the continuous model SOSMP approximates and
//!   beliefs are label probabilities), scaled to a largest value of 1 per pixel, is computed
//!   from the frames when a pixel is updated (O(L) exponentials), not stored;
//! * the edge sum `m(x_s) = Σ_{x_t} g(x_t - x_s + δ) p(x_t)` with the Gaussian
//!   `g(z) = exp(-‖z‖² / (2σ_uv²))` is a separable filter over the `n x n` label lattice: a pass
//!   along x, then one along y, each a sequence of row `axpy`s (vectorised), O(L · 2n) per
//!   message for `L = n²` labels instead of O(L²). With an outlier weight `ρ` the smoothness is
//!   `(1 - ρ) g + ρ` (a robust, truncated-quadratic-like prior): the filter adds `ρ Σ p`;
//! * messages are stored as `f32` and every computation on them is `f64` (products, filter,
//!   normalisation, damping and the change records; only the stored result is rounded, to a
//!   relative 6e-8, far below the level stop's tolerance): the store is most of the engine's
//!   memory and its traffic most of an iteration's. Stored values are kept at or above
//!   1.2e-38 (a normal `f32`), so no label's probability is ever exactly zero.
//!
//! * the read-out is fused into the checkerboard iteration: the odd pixels' belief means are
//!   formed inside their update (their incoming messages, sent by even pixels, are final for
//!   the iteration; `φ_t` is already computed), the even pixels' in one pass after the odd
//!   half, so [`Inference::estimates`] (mean) costs a copy. A leave-one-out product is one
//!   pass over the three other messages, read where they are stored, and only the filter's
//!   output is normalised (the filter is linear).
//!
//! Residual: the mean L1 change of a message over an iteration (the largest is in
//! [`FlowBp::max_change`]); L1 distances between distributions are at most 2. Every update
//! also records its messages' L1 and signed changes per slot ([`Inference::message_changes`],
//! the convergence debugger's residual map and oscillation detector), in the same loop that
//! writes the message: 3 numbers per message of extra memory, no extra pass.
//!
//! Cost per iteration O(pixels · 4 · L · 2n); memory `|E→| L` `f32`s (RubberWhale, 584 x 388:
//! 293 MB with 9 x 9 labels, 178 MB with 7 x 7, 91 MB with 5 x 5) plus 3 numbers per message
//! for the change records.

use std::sync::Arc;
use std::time::Instant;

use rayon::prelude::*;

use super::schedule_order::{ResidualQueue, random_order};
use super::{Belief, EstimateKind, Estimates, Inference, MessageChanges, Schedule, StepReport};
use crate::error::{Error, Result};
use crate::model::SlotLayout;
use crate::model::flow::FlowMrf;
use crate::model::{NodeEvidence, NodeId};
use crate::run::CancelFlag;
use crate::run::residuals::projection_weight;

/// Largest message storage accepted, in bytes (messages and node potentials).
pub const MAX_MESSAGE_BYTES: usize = 6 << 30;

/// Smallest stored value.
const FLOOR: f64 = 1.2e-38;

/// Checkerboard sum-product BP on a flow MRF. Clone copies the messages (a what-if run).
#[derive(Clone)]
pub struct FlowBp {
    mrf: Arc<FlowMrf>,
    /// Checked before each half of a checkerboard iteration.
    interrupt: CancelFlag,
    layout: SlotLayout,
    /// The trapezoid weight `w` of every label.
    weights: Vec<f64>,
    /// The displacement of every label, per axis.
    value_x: Vec<f64>,
    value_y: Vec<f64>,
    /// `kernels[(s + half) n² + a n + b] = g((b - a + s) h)`: the 1-D filter matrix of axis
    /// shift `s` (row = receiver label, column = sender label).
    kernels: Vec<f64>,
    /// The same matrices transposed (`[.. + b n + a]`), for the x pass as row `axpy`s.
    kernels_t: Vec<f64>,
    /// Outlier weight `ρ` of the smoothness `(1 - ρ) g + ρ`.
    outlier: f64,
    damping: f64,
    schedule: Schedule,
    /// Pending changes per pixel (residual schedule), built at its first iteration.
    queue: Option<ResidualQueue>,
    /// Slot-major (the outgoing messages of a pixel are contiguous); f32 storage, f64
    /// arithmetic (see the module doc).
    messages: Vec<f32>,
    /// [`projection_weight`] of every label (the signed change of a message).
    projection: Vec<f64>,
    /// Per slot, this iteration's L1 change and signed projected change of the message (summed
    /// over its updates: serial schedules may update a pixel more than once per iteration),
    /// and the pixel it goes into: the convergence debugger's record, filled by the update.
    slot_change: Vec<f64>,
    slot_signed: Vec<f64>,
    slot_target: Vec<usize>,
    /// The belief mean of every pixel after the latest checkerboard iteration, read out in
    /// the iteration itself (empty when stale: after a serial schedule's iteration).
    means: Vec<[f64; 2]>,
    iteration: usize,
    max_change: f64,
}

struct Scratch {
    phi: Vec<f64>,
    /// The incoming messages of a pixel updated serially (gathered from the store).
    incoming: Vec<f32>,
    product: Vec<f64>,
    pass: Vec<f64>,
    out: Vec<f64>,
    /// A pixel's outgoing messages as a serial update would store them.
    pending: Vec<f32>,
    /// Per outgoing message of the latest update: its L1 and signed projected change.
    diff: [(f64, f64); 4],
}

impl Scratch {
    fn new(l: usize) -> Self {
        Scratch {
            phi: vec![0.0; l],
            incoming: vec![0.0; 4 * l],
            product: vec![0.0; l],
            pass: vec![0.0; l],
            out: vec![0.0; l],
            pending: Vec::with_capacity(4 * l),
            diff: [(0.0, 0.0); 4],
        }
    }
}

/// What one half-iteration measured: summed and largest L1 change, messages updated.
#[derive(Clone, Copy)]
struct Change {
    sum: f64,
    max: f64,
}

impl FlowBp {
    /// Uniform initial messages. Errors on a damping outside `[0, 0.99]` or storage over
    /// [`MAX_MESSAGE_BYTES`].
    pub fn new(mrf: Arc<FlowMrf>, damping: f64) -> Result<Self> {
        crate::error::check_range("damping", damping, 0.0, 0.99)?;
        let outlier = mrf.smooth_outlier;
        let labels = mrf.labels;
        let (n, l) = (labels.per_axis(), labels.len());
        let nodes = mrf.graph.num_nodes();
        let messages = mrf.graph.num_messages();
        let bytes = FlowBp::storage_bytes(nodes, messages, l);
        if bytes > MAX_MESSAGE_BYTES {
            return Err(Error::param(
                "labels",
                format!(
                    "discrete BP would need {:.1} GB ({messages} messages x {l} labels); use fewer labels (a smaller displacement or a pyramid)",
                    bytes as f64 / 1e9
                ),
            ));
        }
        let h = labels.step();
        let mut w1 = vec![h; n];
        w1[0] = 0.5 * h;
        w1[n - 1] = 0.5 * h;
        let weights: Vec<f64> = (0..l).map(|i| w1[i % n] * w1[i / n]).collect();
        let half = labels.half() as i64;
        let two_var = 2.0 * mrf.sigma_smooth * mrf.sigma_smooth;
        let size = (2 * half as usize + 1) * n * n;
        let (mut kernels, mut kernels_t) = (vec![0.0; size], vec![0.0; size]);
        for s in -half..=half {
            let base = (s + half) as usize * n * n;
            for a in 0..n {
                for b in 0..n {
                    let z = (b as i64 - a as i64 + s) as f64 * h;
                    let g = (-z * z / two_var).exp();
                    kernels[base + a * n + b] = g;
                    kernels_t[base + b * n + a] = g;
                }
            }
        }
        let layout = SlotLayout::new(&mrf.graph);
        let mut slot_target = vec![0; messages];
        for t in 0..nodes {
            for (o, nb) in mrf.graph.neighbors(t).iter().enumerate() {
                slot_target[layout.node_start[t] + o] = nb.node;
            }
        }
        Ok(FlowBp {
            projection: (0..l).map(projection_weight).collect(),
            slot_change: vec![0.0; messages],
            slot_signed: vec![0.0; messages],
            slot_target,
            layout,
            weights,
            value_x: labels.values().iter().map(|v| v[0]).collect(),
            value_y: labels.values().iter().map(|v| v[1]).collect(),
            kernels,
            kernels_t,
            outlier,
            damping,
            schedule: Schedule::Synchronous,
            queue: None,
            messages: vec![1.0 / l as f32; messages * l],
            means: Vec::new(),
            mrf,
            iteration: 0,
            max_change: 0.0,
            interrupt: CancelFlag::default(),
        })
    }

    /// Bytes of storage for `nodes` pixels, `messages` directed messages and `labels` labels
    /// (the messages; `φ` is computed when a pixel is updated, not stored).
    pub fn storage_bytes(_nodes: usize, messages: usize, labels: usize) -> usize {
        messages * labels * std::mem::size_of::<f32>()
    }

    /// `φ_t = w ψ_t / max` into `out` (floored at [`FLOOR`]). O(labels): recomputed at each
    /// update instead of stored, which saves `pixels · L` values (a fifth of the memory) for
    /// about one exponential per label and pixel per iteration.
    #[inline(always)]
    fn phi_into(&self, t: NodeId, out: &mut [f64]) {
        self.mrf.evidence.fill(t, out);
        let mut max: f64 = 0.0;
        for (b, w) in out.iter_mut().zip(&self.weights) {
            *b *= w;
            max = max.max(*b);
        }
        let inv = if max > 0.0 { 1.0 / max } else { 1.0 };
        for b in out.iter_mut() {
            *b = (*b * inv).max(FLOOR);
        }
    }

    pub fn mrf(&self) -> &Arc<FlowMrf> {
        &self.mrf
    }

    /// The largest L1 change of a message in the latest iteration.
    pub fn max_change(&self) -> f64 {
        self.max_change
    }

    /// The current message `m` (sums to 1 up to f32 rounding), as stored.
    pub fn message(&self, m: usize) -> &[f32] {
        let l = self.mrf.labels.len();
        let s = self.layout.slot_of[m];
        &self.messages[s * l..(s + 1) * l]
    }

    /// Label probabilities of pixel `t` (`w ψ_t Π m`, sum 1) into `out`.
    pub fn belief_into(&self, t: NodeId, out: &mut [f64]) {
        self.phi_into(t, out);
        for nb in self.mrf.graph.neighbors(t) {
            for (o, &m) in out.iter_mut().zip(self.message(nb.incoming)) {
                *o *= f64::from(m);
            }
        }
        normalise_or_uniform(out);
    }

    /// The 1-D filter matrix of axis shift `s` (and its transpose).
    fn kernel(&self, s: i64) -> (&[f64], &[f64]) {
        let n = self.mrf.labels.per_axis();
        let i = (s + self.mrf.labels.half() as i64) as usize;
        (
            &self.kernels[i * n * n..(i + 1) * n * n],
            &self.kernels_t[i * n * n..(i + 1) * n * n],
        )
    }

    /// `out(x_s) = Σ_{x_t} ψ(x_t - x_s + δ) p(x_t)`: along x for every row of `p`, then along y;
    /// plus `ρ Σ p` with an outlier weight. Lattices of 3 to 17 nodes per axis use a copy with
    /// the row length fixed at compile time (rows held in registers).
    #[inline(always)]
    fn filter(&self, p: &[f64], delta: [i64; 2], pass: &mut [f64], out: &mut [f64]) {
        let n = self.mrf.labels.per_axis();
        let (_, kxt) = self.kernel(delta[0]);
        let (ky, _) = self.kernel(delta[1]);
        match n {
            3 => filter_fixed::<3>(p, kxt, ky, pass, out),
            5 => filter_fixed::<5>(p, kxt, ky, pass, out),
            7 => filter_fixed::<7>(p, kxt, ky, pass, out),
            9 => filter_fixed::<9>(p, kxt, ky, pass, out),
            11 => filter_fixed::<11>(p, kxt, ky, pass, out),
            13 => filter_fixed::<13>(p, kxt, ky, pass, out),
            15 => filter_fixed::<15>(p, kxt, ky, pass, out),
            17 => filter_fixed::<17>(p, kxt, ky, pass, out),
            _ => filter_any(n, p, kxt, ky, pass, out),
        }
        if self.outlier > 0.0 {
            let keep = 1.0 - self.outlier;
            let floor = self.outlier * p.iter().sum::<f64>();
            out.iter_mut().for_each(|o| *o = keep * *o + floor);
        }
    }

    /// Updates the outgoing messages of pixel `t` (its slots `dst`) from the messages its
    /// neighbours sent (`sent[s]`: all slots of pixel `s`), read in place. With `mean`, also
    /// the belief mean of `t` from the same incoming messages and `φ_t` (the read-out fused
    /// into the update: `t`'s incoming messages do not change again in this iteration).
    /// Returns the summed and largest L1 change, or the failing message.
    #[inline(always)]
    fn update_node_body(
        &self,
        t: NodeId,
        dst: &mut [f32],
        sent: &[&[f32]],
        sc: &mut Scratch,
        mean: Option<&mut [f64; 2]>,
    ) -> std::result::Result<Change, usize> {
        let l = self.mrf.labels.len();
        let mut incoming: [&[f32]; 4] = [&[]; 4];
        for (i, nb) in self.mrf.graph.neighbors(t).iter().enumerate() {
            let s = nb.node;
            let local = self.layout.slot_of[nb.incoming] - self.layout.node_start[s];
            incoming[i] = &sent[s][local * l..(local + 1) * l];
        }
        let d = self.mrf.graph.neighbors(t).len();
        self.phi_into(t, &mut sc.phi);
        if let Some(mean) = mean {
            *mean = self.mean_of(&sc.phi, &incoming[..d], &mut sc.product);
        }
        self.send_from_incoming(t, &incoming[..d], dst, sc)
    }

    /// The belief mean (relative to the base flow) from `φ` and all incoming messages in one
    /// pass: `Σ_x b(x) x / Σ_x b(x)` with `b = φ Π m` unnormalised, summed in four lanes.
    /// O(L · deg). A belief without finite positive mass reads out as the uniform one's mean.
    #[inline(always)]
    fn mean_of(&self, phi: &[f64], incoming: &[&[f32]], work: &mut [f64]) -> [f64; 2] {
        let l = phi.len();
        let (vx, vy) = (&self.value_x[..l], &self.value_y[..l]);
        if let [a, b, c, d] = incoming {
            let factors = phi.iter().zip(*a).zip(*b).zip(*c).zip(*d);
            for (o, ((((&p, &x), &y), &z), &v)) in work.iter_mut().zip(factors) {
                *o = p * f64::from(x) * f64::from(y) * f64::from(z) * f64::from(v);
            }
        } else {
            work.copy_from_slice(phi);
            for m in incoming {
                for (o, &v) in work.iter_mut().zip(m.iter()) {
                    *o *= f64::from(v);
                }
            }
        }
        let (mut z, mut sx, mut sy) = ([0.0; 4], [0.0; 4], [0.0; 4]);
        let (w4, w_tail) = work[..l].as_chunks::<4>();
        let (x4, x_tail) = vx.as_chunks::<4>();
        let (y4, y_tail) = vy.as_chunks::<4>();
        for ((p, x), y) in w4.iter().zip(x4).zip(y4) {
            for k in 0..4 {
                z[k] += p[k];
                sx[k] += p[k] * x[k];
                sy[k] += p[k] * y[k];
            }
        }
        let fold = |a: [f64; 4]| (a[0] + a[1]) + (a[2] + a[3]);
        let (mut z, mut sx, mut sy) = (fold(z), fold(sx), fold(sy));
        for ((&p, &x), &y) in w_tail.iter().zip(x_tail).zip(y_tail) {
            z += p;
            sx += p * x;
            sy += p * y;
        }
        if z > 0.0 && z.is_finite() {
            [sx / z, sy / z]
        } else {
            let n = l as f64;
            [vx.iter().sum::<f64>() / n, vy.iter().sum::<f64>() / n]
        }
    }

    /// The belief mean of pixel `t` from the stored messages (the read-out outside the
    /// checkerboard update). `work` holds `L` values.
    #[inline(always)]
    fn mean_at(&self, t: NodeId, phi: &mut [f64], work: &mut [f64]) -> [f64; 2] {
        self.phi_into(t, phi);
        let mut incoming: [&[f32]; 4] = [&[]; 4];
        let nbrs = self.mrf.graph.neighbors(t);
        for (slot, nb) in incoming.iter_mut().zip(nbrs) {
            *slot = self.message(nb.incoming);
        }
        self.mean_of(phi, &incoming[..nbrs.len()], work)
    }

    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2")]
    fn mean_at_avx2(&self, t: NodeId, phi: &mut [f64], work: &mut [f64]) -> [f64; 2] {
        self.mean_at(t, phi, work)
    }

    /// [`Self::mean_at`], compiled for AVX2 where the CPU has it.
    fn mean_at_dispatch(&self, t: NodeId, phi: &mut [f64], work: &mut [f64]) -> [f64; 2] {
        #[cfg(target_arch = "x86_64")]
        if std::arch::is_x86_feature_detected!("avx2") {
            // SAFETY: the CPU supports AVX2 (checked on the line above).
            return unsafe { self.mean_at_avx2(t, phi, work) };
        }
        self.mean_at(t, phi, work)
    }

    /// The outgoing messages of pixel `t` into `dst` (damped against what `dst` holds) from
    /// its incoming messages (neighbour order) and `φ_t` in `sc.phi`. Per message: the
    /// leave-one-out product in one pass over the three other messages (no copies), the
    /// separable filter, then normalisation (the filter is linear, so normalising only its
    /// output is the same message; every factor is at least 1.2e-38, so the unnormalised
    /// product of five stays far above f64's smallest normal number).
    #[inline(always)]
    fn send_from_incoming(
        &self,
        t: NodeId,
        incoming: &[&[f32]],
        dst: &mut [f32],
        sc: &mut Scratch,
    ) -> std::result::Result<Change, usize> {
        let l = self.mrf.labels.len();
        let nbrs = self.mrf.graph.neighbors(t);
        let mut change = Change { sum: 0.0, max: 0.0 };
        for (o, nb) in nbrs.iter().enumerate() {
            leave_one_out(&sc.phi, incoming, o, &mut sc.product);
            let m = nb.outgoing;
            let shift = self.mrf.shifts[nb.edge];
            // Edge (a, b): ψ = g(x_a - x_b + δ). From a (forward): g(x_t - x_s + δ); from b:
            // g(x_s - x_t + δ) = g(x_t - x_s - δ).
            let delta = if m.is_multiple_of(2) {
                shift
            } else {
                [-shift[0], -shift[1]]
            };
            self.filter(&sc.product, delta, &mut sc.pass, &mut sc.out);
            let z = sum_lanes(&sc.out);
            if !(z > 0.0 && z.is_finite()) {
                return Err(m);
            }
            let inv = 1.0 / z;
            let slot = &mut dst[o * l..(o + 1) * l];
            let (diff, signed) = write_message(slot, &sc.out, inv, self.damping, &self.projection);
            sc.diff[o] = (diff, signed);
            change.sum += diff;
            change.max = change.max.max(diff);
        }
        Ok(change)
    }

    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2")]
    fn update_node_avx2(
        &self,
        t: NodeId,
        dst: &mut [f32],
        sent: &[&[f32]],
        sc: &mut Scratch,
        mean: Option<&mut [f64; 2]>,
    ) -> std::result::Result<Change, usize> {
        self.update_node_body(t, dst, sent, sc, mean)
    }

    /// [`Self::update_node_body`], compiled for AVX2 where the CPU has it (plain multiplies and
    /// adds, no fused multiply-adds, so the same numbers).
    fn update_node(
        &self,
        t: NodeId,
        dst: &mut [f32],
        sent: &[&[f32]],
        sc: &mut Scratch,
        mean: Option<&mut [f64; 2]>,
    ) -> std::result::Result<Change, usize> {
        #[cfg(target_arch = "x86_64")]
        if std::arch::is_x86_feature_detected!("avx2") {
            // SAFETY: the CPU supports AVX2 (checked on the line above).
            return unsafe { self.update_node_avx2(t, dst, sent, sc, mean) };
        }
        self.update_node_body(t, dst, sent, sc, mean)
    }

    /// Updates every message sent by the pixels of `colour` (`(x + y) % 2`), in place. With
    /// `read_out`, also the belief means of those pixels into `self.means` (their incoming
    /// messages, sent by the other colour, are final for this iteration).
    fn half_step(&mut self, colour: usize, read_out: bool) -> Result<Change> {
        let l = self.mrf.labels.len();
        let width = self.mrf.width;
        let nodes = self.mrf.graph.num_nodes();
        let mut messages = std::mem::take(&mut self.messages);
        let mut slot_change = std::mem::take(&mut self.slot_change);
        let mut slot_signed = std::mem::take(&mut self.slot_signed);
        let mut means = std::mem::take(&mut self.means);
        means.resize(nodes, [0.0; 2]);
        let outcome = {
            let mut tasks = Vec::with_capacity(nodes / 2 + 1);
            let mut sent: Vec<&[f32]> = vec![&[]; nodes];
            let mut rest: &mut [f32] = &mut messages;
            let mut rest_change: &mut [f64] = &mut slot_change;
            let mut rest_signed: &mut [f64] = &mut slot_signed;
            for ((t, s), mean) in sent.iter_mut().enumerate().zip(means.iter_mut()) {
                let d = self.layout.node_start[t + 1] - self.layout.node_start[t];
                let (mine, tail) = std::mem::take(&mut rest).split_at_mut(d * l);
                rest = tail;
                let (ch, tail) = std::mem::take(&mut rest_change).split_at_mut(d);
                rest_change = tail;
                let (sg, tail) = std::mem::take(&mut rest_signed).split_at_mut(d);
                rest_signed = tail;
                if (t % width + t / width) % 2 == colour {
                    tasks.push((t, mine, ch, sg, mean));
                } else {
                    *s = mine;
                }
            }
            let this = &*self;
            let sent = &sent;
            tasks
                .into_par_iter()
                .map_init(
                    || Scratch::new(l),
                    |sc, (t, dst, ch, sg, mean)| {
                        let mean = read_out.then_some(mean);
                        let change = this.update_node(t, dst, sent, sc, mean)?;
                        for (o, &(c, g)) in sc.diff.iter().take(ch.len()).enumerate() {
                            ch[o] = c;
                            sg[o] = g;
                        }
                        Ok(change)
                    },
                )
                .try_reduce(
                    || Change { sum: 0.0, max: 0.0 },
                    |a, b| {
                        Ok(Change {
                            sum: a.sum + b.sum,
                            max: a.max.max(b.max),
                        })
                    },
                )
        };
        self.messages = messages;
        self.slot_change = slot_change;
        self.slot_signed = slot_signed;
        self.means = means;
        outcome.map_err(|m| self.diverged(m))
    }

    /// The belief means of the pixels of `colour` into `self.means` (rayon over pixels).
    fn read_out_colour(&mut self, colour: usize) {
        let l = self.mrf.labels.len();
        let width = self.mrf.width;
        let mut means = std::mem::take(&mut self.means);
        means
            .par_iter_mut()
            .enumerate()
            .filter(|(t, _)| (t % width + t / width) % 2 == colour)
            .for_each_init(
                || (vec![0.0; l], vec![0.0; l]),
                |(phi, work), (t, mean)| *mean = self.mean_at_dispatch(t, phi, work),
            );
        self.means = means;
    }

    /// Pixel `t`'s outgoing messages recomputed from the current (freshest) messages into
    /// `sc.pending`, not stored; returns their change. One pixel update, O(4 · L · 2n).
    fn pending_update(&self, t: NodeId, sc: &mut Scratch) -> Result<Change> {
        let l = self.mrf.labels.len();
        for (i, nb) in self.mrf.graph.neighbors(t).iter().enumerate() {
            sc.incoming[i * l..(i + 1) * l].copy_from_slice(self.message(nb.incoming));
        }
        let (a, b) = (
            self.layout.node_start[t] * l,
            self.layout.node_start[t + 1] * l,
        );
        let mut pending = std::mem::take(&mut sc.pending);
        pending.clear();
        pending.extend_from_slice(&self.messages[a..b]);
        self.phi_into(t, &mut sc.phi);
        let gathered = std::mem::take(&mut sc.incoming);
        let d = self.mrf.graph.neighbors(t).len();
        let mut incoming: [&[f32]; 4] = [&[]; 4];
        for (slot, m) in incoming.iter_mut().zip(gathered.chunks_exact(l).take(d)) {
            *slot = m;
        }
        let outcome = self.send_from_incoming(t, &incoming[..d], &mut pending, sc);
        sc.incoming = gathered;
        sc.pending = pending;
        outcome.map_err(|m| self.diverged(m))
    }

    /// Updates pixel `t`'s outgoing messages in place from the freshest messages (the serial
    /// schedules); returns their change.
    fn update_serial(&mut self, t: NodeId, sc: &mut Scratch) -> Result<Change> {
        let change = self.pending_update(t, sc)?;
        let l = self.mrf.labels.len();
        let a = self.layout.node_start[t] * l;
        self.messages[a..a + sc.pending.len()].copy_from_slice(&sc.pending);
        let first = self.layout.node_start[t];
        for (o, &(c, g)) in sc.diff.iter().take(sc.pending.len() / l).enumerate() {
            self.slot_change[first + o] += c;
            self.slot_signed[first + o] += g;
        }
        Ok(change)
    }

    fn diverged(&self, m: usize) -> Error {
        let g = &self.mrf.graph;
        Error::Diverged {
            iteration: self.iteration + 1,
            detail: format!(
                "message {} -> {} has no finite mass",
                g.source(m),
                g.target(m)
            ),
        }
    }

    /// One serial pass over the pixels in `order`, each sending from the freshest messages.
    fn serial_pass(&mut self, order: impl Iterator<Item = NodeId>) -> Result<Change> {
        let mut sc = Scratch::new(self.mrf.labels.len());
        let mut total = Change { sum: 0.0, max: 0.0 };
        for t in order {
            let c = self.update_serial(t, &mut sc)?;
            total.sum += c.sum;
            total.max = total.max.max(c.max);
        }
        Ok(total)
    }

    /// One residual-BP iteration at pixel granularity (Elidan, McGraw, Koller 2006, with a
    /// pixel's four outgoing messages as one unit, since they are computed together): as many
    /// updates as pixels, each of the pixel whose pending change (largest L1 change of its
    /// outgoing messages) is largest; after an update the four neighbours' pending changes are
    /// recomputed. Cost: five pixel updates per update.
    fn residual_iteration(&mut self) -> Result<Change> {
        let nodes = self.mrf.graph.num_nodes();
        let mut sc = Scratch::new(self.mrf.labels.len());
        if self.queue.as_ref().is_none_or(|q| q.len() != nodes) {
            let mut queue = ResidualQueue::new(nodes);
            for t in 0..nodes {
                queue.set(t, self.pending_update(t, &mut sc)?.max);
            }
            self.queue = Some(queue);
        }
        let mut queue = self.queue.take().expect("set above");
        let mut total = Change { sum: 0.0, max: 0.0 };
        for _ in 0..nodes {
            let Some((t, _)) = queue.peek() else { break };
            let c = self.update_serial(t, &mut sc)?;
            total.sum += c.sum;
            total.max = total.max.max(c.max);
            queue.set(t, 0.0);
            for nb in self.mrf.graph.neighbors(t) {
                queue.set(nb.node, self.pending_update(nb.node, &mut sc)?.max);
            }
        }
        self.queue = Some(queue);
        Ok(total)
    }

    /// Switches schedule and damping from the next iteration on, keeping the messages.
    /// `Synchronous` is the checkerboard (see the module doc).
    pub fn set_schedule(&mut self, schedule: Schedule, damping: f64) -> Result<()> {
        crate::error::check_range("damping", damping, 0.0, 0.99)?;
        self.schedule = schedule;
        self.damping = damping;
        self.queue = None;
        Ok(())
    }

    pub fn schedule(&self) -> Schedule {
        self.schedule
    }

    /// Label probabilities of every pixel (pixel-major), and the point estimates from them.
    fn point_estimates(&self, kind: EstimateKind) -> Vec<f64> {
        let l = self.mrf.labels.len();
        let nodes = self.mrf.graph.num_nodes();
        if kind == EstimateKind::Mean {
            if self.means.len() == nodes {
                return self.means.iter().flat_map(|m| [m[0], m[1]]).collect();
            }
            let mut out = vec![0.0; nodes * 2];
            out.par_chunks_mut(2).enumerate().for_each_init(
                || (vec![0.0; l], vec![0.0; l]),
                |(phi, work), (t, est)| {
                    est.copy_from_slice(&self.mean_at_dispatch(t, phi, work));
                },
            );
            return out;
        }
        let values = self.mrf.labels.values();
        let mut out = vec![0.0; nodes * 2];
        out.par_chunks_mut(2).enumerate().for_each_init(
            || vec![0.0; l],
            |b, (t, est)| {
                self.belief_into(t, b);
                let mut best = 0;
                for (i, p) in b.iter().enumerate() {
                    if *p > b[best] {
                        best = i;
                    }
                }
                est.copy_from_slice(&values[best]);
            },
        );
        out
    }
}

/// The separable filter for `N` nodes per axis: `pass[iy, a] = Σ_b p[iy, b] kx[a, b]` (`kxt`
/// transposed), then `out[a, :] = Σ_b ky[a, b] pass[b, :]`; each output row is accumulated in
/// a local array the compiler keeps in registers.
#[inline(always)]
fn filter_fixed<const N: usize>(
    p: &[f64],
    kxt: &[f64],
    ky: &[f64],
    pass: &mut [f64],
    out: &mut [f64],
) {
    let kxt: &[[f64; N]] = kxt.as_chunks::<N>().0;
    let ky: &[[f64; N]] = ky.as_chunks::<N>().0;
    let (p, _) = p.as_chunks::<N>();
    let (pass, _) = pass.as_chunks_mut::<N>();
    for (prow, qrow) in p.iter().zip(pass.iter_mut()) {
        let mut acc = [0.0; N];
        for (&pb, col) in prow.iter().zip(kxt) {
            for a in 0..N {
                acc[a] += pb * col[a];
            }
        }
        *qrow = acc;
    }
    let (out, _) = out.as_chunks_mut::<N>();
    for (orow, krow) in out.iter_mut().zip(ky) {
        let mut acc = [0.0; N];
        for (&k, qrow) in krow.iter().zip(pass.iter()) {
            for a in 0..N {
                acc[a] += k * qrow[a];
            }
        }
        *orow = acc;
    }
}

/// `out = φ Π_{i != skip} incoming[i]` in one pass (three reads and one write per label for
/// an interior pixel, instead of a copy and three in-place passes).
#[inline(always)]
fn leave_one_out(phi: &[f64], incoming: &[&[f32]], skip: usize, out: &mut [f64]) {
    match (incoming.len(), skip) {
        (4, _) => {
            let [a, b, c] = match skip {
                0 => [incoming[1], incoming[2], incoming[3]],
                1 => [incoming[0], incoming[2], incoming[3]],
                2 => [incoming[0], incoming[1], incoming[3]],
                _ => [incoming[0], incoming[1], incoming[2]],
            };
            for ((((o, &p), &x), &y), &z) in out.iter_mut().zip(phi).zip(a).zip(b).zip(c) {
                *o = p * f64::from(x) * f64::from(y) * f64::from(z);
            }
        }
        _ => {
            out.copy_from_slice(phi);
            for (i, m) in incoming.iter().enumerate() {
                if i != skip {
                    for (p, &v) in out.iter_mut().zip(m.iter()) {
                        *p *= f64::from(v);
                    }
                }
            }
        }
    }
}

/// `Σ v`, accumulated in four lanes (vectorisable; f64 addition is not reassociated by the
/// compiler, so a single running sum would be a serial chain).
#[inline(always)]
fn sum_lanes(v: &[f64]) -> f64 {
    let mut acc = [0.0; 4];
    let (chunks, rest) = v.as_chunks::<4>();
    for c in chunks {
        for k in 0..4 {
            acc[k] += c[k];
        }
    }
    let tail: f64 = rest.iter().sum();
    (acc[0] + acc[1]) + (acc[2] + acc[3]) + tail
}

/// Writes the new message `keep · old + (1 - keep) · out · inv` (floored, computed in f64 and
/// stored as f32) into `slot`; returns the L1 change and signed projected change of what is
/// stored (four lanes, as [`sum_lanes`]).
#[inline(always)]
fn write_message(
    slot: &mut [f32],
    out: &[f64],
    inv: f64,
    keep: f64,
    projection: &[f64],
) -> (f64, f64) {
    let take = 1.0 - keep;
    let (mut diff, mut signed) = ([0.0; 4], [0.0; 4]);
    let (s4, s_tail) = slot.as_chunks_mut::<4>();
    let (o4, o_tail) = out.as_chunks::<4>();
    let (p4, p_tail) = projection.as_chunks::<4>();
    for ((s, o), p) in s4.iter_mut().zip(o4).zip(p4) {
        for k in 0..4 {
            let prev = f64::from(s[k]);
            let stored = (keep * prev + take * (o[k] * inv)).max(FLOOR) as f32;
            let new = f64::from(stored);
            diff[k] += (new - prev).abs();
            signed[k] += p[k] * (new - prev);
            s[k] = stored;
        }
    }
    let (mut d_tail, mut s_tail_sum) = (0.0, 0.0);
    for ((s, &o), &p) in s_tail.iter_mut().zip(o_tail).zip(p_tail) {
        let prev = f64::from(*s);
        let stored = (keep * prev + take * (o * inv)).max(FLOOR) as f32;
        let new = f64::from(stored);
        d_tail += (new - prev).abs();
        s_tail_sum += p * (new - prev);
        *s = stored;
    }
    (
        (diff[0] + diff[1]) + (diff[2] + diff[3]) + d_tail,
        (signed[0] + signed[1]) + (signed[2] + signed[3]) + s_tail_sum,
    )
}

/// `Σ v` in parallel over fixed chunks, added in chunk order: the same number whatever the
/// thread count or work stealing.
fn ordered_sum(v: &[f64]) -> f64 {
    let parts: Vec<f64> = v.par_chunks(1 << 14).map(sum_lanes).collect();
    parts.iter().sum()
}

/// Normalises `p` to sum 1, or makes it uniform when it has no finite positive mass.
#[inline(always)]
fn normalise_or_uniform(p: &mut [f64]) {
    let z: f64 = p.iter().sum();
    if z > 0.0 && z.is_finite() {
        let inv = 1.0 / z;
        p.iter_mut().for_each(|o| *o *= inv);
    } else {
        let u = 1.0 / p.len() as f64;
        p.iter_mut().for_each(|o| *o = u);
    }
}

/// [`filter_fixed`] for any row length `n`.
fn filter_any(n: usize, p: &[f64], kxt: &[f64], ky: &[f64], pass: &mut [f64], out: &mut [f64]) {
    for (prow, qrow) in p.chunks_exact(n).zip(pass.chunks_exact_mut(n)) {
        qrow.iter_mut().for_each(|q| *q = 0.0);
        for (&pb, col) in prow.iter().zip(kxt.chunks_exact(n)) {
            for (q, &k) in qrow.iter_mut().zip(col) {
                *q += pb * k;
            }
        }
    }
    for (orow, krow) in out.chunks_exact_mut(n).zip(ky.chunks_exact(n)) {
        orow.iter_mut().for_each(|o| *o = 0.0);
        for (&k, qrow) in krow.iter().zip(pass.chunks_exact(n)) {
            for (o, q) in orow.iter_mut().zip(qrow) {
                *o += k * q;
            }
        }
    }
}

impl Inference for FlowBp {
    /// One iteration: the messages sent by the even pixels, then those sent by the odd ones
    /// (rayon over pixels in each half). Residual: the mean L1 change of a message.
    fn step(&mut self) -> Result<StepReport> {
        let start = Instant::now();
        let nodes = self.mrf.graph.num_nodes();
        let messages = self.mrf.graph.num_messages();
        self.slot_change.iter_mut().for_each(|c| *c = 0.0);
        self.slot_signed.iter_mut().for_each(|c| *c = 0.0);
        let (change, updates) = match self.schedule {
            // The grid's "synchronous" step already sends the even pixels' messages, then the
            // odd pixels' from the fresh ones: it is the checkerboard.
            Schedule::Synchronous | Schedule::Checkerboard => {
                self.interrupt.check()?;
                let even = self.half_step(0, false)?;
                self.interrupt.check()?;
                let odd = self.half_step(1, true)?;
                self.read_out_colour(0);
                // Every slot was written once: its summed change in a fixed order (the halves'
                // rayon sums group their terms as the work was stolen, so they can differ in
                // the last bit from run to run, and a replay must repeat the residual exactly).
                let change = Change {
                    sum: ordered_sum(&self.slot_change),
                    max: even.max.max(odd.max),
                };
                (change, messages)
            }
            Schedule::Sweep => {
                let change = self.serial_pass((0..nodes).chain((0..nodes).rev()))?;
                (change, 2 * messages)
            }
            Schedule::Random => {
                let order = random_order(nodes, self.iteration + 1);
                (self.serial_pass(order.into_iter())?, messages)
            }
            Schedule::Residual => (self.residual_iteration()?, messages),
        };
        if self.schedule != Schedule::Synchronous {
            // The serial schedules read nothing out on the way: estimates compute afresh.
            self.means.clear();
        }
        self.iteration += 1;
        self.max_change = change.max;
        Ok(StepReport {
            iteration: self.iteration,
            residual: change.sum / updates.max(1) as f64,
            seconds: start.elapsed().as_secs_f64(),
            updates,
        })
    }

    fn set_interrupt(&mut self, flag: CancelFlag) {
        self.interrupt = flag;
    }

    fn iteration(&self) -> usize {
        self.iteration
    }

    /// Per message (in slot order: a pixel's outgoing messages together), its L1 change over
    /// the latest iteration, recorded by the update itself (no second pass).
    fn message_changes(&self) -> Option<MessageChanges<'_>> {
        (self.iteration > 0).then_some(MessageChanges {
            change: &self.slot_change,
            signed: &self.slot_signed,
            target: &self.slot_target,
        })
    }

    /// Label probabilities over the displacement lattice (relative to the pixel's base flow).
    fn belief(&self, node: NodeId) -> Belief {
        let l = self.mrf.labels.len();
        let mut b = vec![0.0; l];
        self.belief_into(node, &mut b);
        let n = self.mrf.labels.per_axis();
        let axis: Vec<f64> = (0..n).map(|i| self.mrf.labels.value(i)[0]).collect();
        Belief::Grid2 {
            xs: axis.clone(),
            ys: axis,
            values: b,
        }
    }

    /// The displacement (relative to the base flow), two numbers per pixel.
    fn estimates(&self, kind: EstimateKind) -> Estimates {
        Estimates {
            dim: 2,
            values: self.point_estimates(kind),
        }
    }
}
