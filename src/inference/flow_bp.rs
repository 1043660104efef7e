//! Discrete sum-product BP for optical flow: the baseline on the same MRF as SOSMP
//! ([`crate::model::flow`]), over the displacement lattice as labels.
//!
//! This is [`super::discrete`]'s update (Yedidia, Freeman, Weiss 2003, eq. 4, leave-one-out
//! products formed directly, messages normalised to sum 1, synchronous, optional damping)
//! specialised to what makes flow large:
//! * the node potential `φ_t(x) = w(x) ψ_t(x)` is computed from the frames when the pixel is
//!   updated (`w` the tensor trapezoid weight of label `x`, so that the messages are exactly
//!   the grid-BP discretisation of the continuous model SOSMP approximates, and beliefs are label
//!   probabilities);
//! * the edge sum `m(x_s) = Σ_{x_t} g(x_t - x_s + δ) p(x_t)` with the Gaussian
//!   `g(z) = exp(-‖z‖² / (2σ_uv²))` is a separable filter over the `n x n` label lattice: a pass
//!   along x, then one along y, O(L · 2n) per message for `L = n²` labels instead of O(L²);
//! * messages are `f64` like every engine here, grouped by sender so one rayon task owns a
//!   pixel's four outgoing messages.
//!
//! Cost per iteration O(pixels · 4 · L · 2n) plus the node potentials; memory two buffers of
//! `|E→| L` floats (RubberWhale, 584 x 388, 17 x 17 labels: 2 x 2.1 GB; 9 x 9: 2 x 0.58 GB).

use std::sync::Arc;
use std::time::Instant;

use rayon::prelude::*;

use super::{Belief, EstimateKind, Estimates, Inference, StepReport};
use crate::error::{Error, Result};
use crate::model::SlotLayout;
use crate::model::flow::FlowMrf;
use crate::model::{NodeEvidence, NodeId};

/// Largest message storage accepted, in bytes (both buffers).
pub const MAX_MESSAGE_BYTES: usize = 6 << 30;

/// Synchronous sum-product BP on a flow MRF.
pub struct FlowBp {
    mrf: Arc<FlowMrf>,
    layout: SlotLayout,
    /// Tensor trapezoid weight of each label.
    weights: Vec<f64>,
    /// `kernels[(s + half) * n * n + a * n + b] = g((b - a + s) h)`: the 1-D filter matrix of
    /// axis shift `s` (row = receiver label, column = sender label).
    kernels: Vec<f64>,
    damping: f64,
    messages: Vec<f64>,
    next: Vec<f64>,
    iteration: usize,
}

struct Scratch {
    phi: Vec<f64>,
    incoming: Vec<f64>,
    product: Vec<f64>,
    pass: Vec<f64>,
    out: Vec<f64>,
}

impl FlowBp {
    /// Uniform initial messages. Errors on a damping outside `[0, 0.99]` or messages over
    /// [`MAX_MESSAGE_BYTES`].
    pub fn new(mrf: Arc<FlowMrf>, damping: f64) -> Result<Self> {
        crate::error::check_range("damping", damping, 0.0, 0.99)?;
        let labels = mrf.labels;
        let (n, l) = (labels.per_axis(), labels.len());
        let messages = mrf.graph.num_messages();
        let bytes = 2 * messages * l * std::mem::size_of::<f64>();
        if bytes > MAX_MESSAGE_BYTES {
            return Err(Error::param(
                "labels",
                format!(
                    "discrete BP would need {:.1} GB of messages ({messages} messages x {l} labels x 2 buffers); use fewer labels (a smaller displacement or a pyramid)",
                    bytes as f64 / 1e9
                ),
            ));
        }
        let h = labels.step();
        let mut w1 = vec![h; n];
        w1[0] = 0.5 * h;
        w1[n - 1] = 0.5 * h;
        let weights = (0..l).map(|i| w1[i % n] * w1[i / n]).collect();
        let half = labels.half() as i64;
        let two_var = 2.0 * mrf.sigma_smooth * mrf.sigma_smooth;
        let mut kernels = Vec::with_capacity((2 * half as usize + 1) * n * n);
        for s in -half..=half {
            for a in 0..n as i64 {
                for b in 0..n as i64 {
                    let z = (b - a + s) as f64 * h;
                    kernels.push((-z * z / two_var).exp());
                }
            }
        }
        let layout = SlotLayout::new(&mrf.graph);
        let init = vec![1.0 / l as f64; messages * l];
        Ok(FlowBp {
            layout,
            weights,
            kernels,
            damping,
            next: init.clone(),
            messages: init,
            mrf,
            iteration: 0,
        })
    }

    pub fn mrf(&self) -> &Arc<FlowMrf> {
        &self.mrf
    }

    /// The current message `m` (sums to 1), as stored.
    pub fn message(&self, m: usize) -> &[f64] {
        let l = self.mrf.labels.len();
        let s = self.layout.slot_of[m];
        &self.messages[s * l..(s + 1) * l]
    }

    /// Label probabilities of pixel `t` (`w ψ_t Π m`, sum 1) into `out`; `phi` is scratch.
    pub fn belief_into(&self, t: NodeId, phi: &mut [f64], out: &mut [f64]) {
        self.mrf.evidence.fill(t, phi);
        for ((o, p), w) in out.iter_mut().zip(phi.iter()).zip(&self.weights) {
            *o = p * w;
        }
        for nb in self.mrf.graph.neighbors(t) {
            for (o, &m) in out.iter_mut().zip(self.message(nb.incoming)) {
                *o *= m;
            }
        }
        let z: f64 = out.iter().sum();
        if z > 0.0 && z.is_finite() {
            out.iter_mut().for_each(|o| *o /= z);
        } else {
            let u = 1.0 / out.len() as f64;
            out.iter_mut().for_each(|o| *o = u);
        }
    }

    /// The 1-D filter matrix of axis shift `s`.
    fn kernel(&self, s: i64) -> &[f64] {
        let n = self.mrf.labels.per_axis();
        let i = (s + self.mrf.labels.half() as i64) as usize;
        &self.kernels[i * n * n..(i + 1) * n * n]
    }

    /// `out(x_s) = Σ_{x_t} g(x_t - x_s + δ) p(x_t)`: along x for every row of `p`, then along y.
    fn filter(&self, p: &[f64], delta: [i64; 2], pass: &mut [f64], out: &mut [f64]) {
        let n = self.mrf.labels.per_axis();
        let kx = self.kernel(delta[0]);
        let ky = self.kernel(delta[1]);
        // x pass: pass[iy, a] = Σ_b kx[a, b] p[iy, b].
        for (prow, qrow) in p.chunks_exact(n).zip(pass.chunks_exact_mut(n)) {
            for (a, q) in qrow.iter_mut().enumerate() {
                *q = crate::inference::sosmp::kernels::dot(&kx[a * n..(a + 1) * n], prow);
            }
        }
        // y pass: out[a, :] = Σ_b ky[a, b] pass[b, :].
        for (a, orow) in out.chunks_exact_mut(n).enumerate() {
            orow.iter_mut().for_each(|o| *o = 0.0);
            for (b, qrow) in pass.chunks_exact(n).enumerate() {
                let k = ky[a * n + b];
                for (o, q) in orow.iter_mut().zip(qrow) {
                    *o += k * q;
                }
            }
        }
    }

    /// Updates the outgoing messages of pixel `t` from the current ones into `dst` (its slots).
    /// Returns the largest L1 change, or the failing message.
    fn update_node(
        &self,
        t: NodeId,
        dst: &mut [f64],
        sc: &mut Scratch,
    ) -> std::result::Result<f64, usize> {
        let l = self.mrf.labels.len();
        let graph = &self.mrf.graph;
        let nbrs = graph.neighbors(t);
        let d = nbrs.len();
        self.mrf.evidence.fill(t, &mut sc.phi);
        for (p, w) in sc.phi.iter_mut().zip(&self.weights) {
            *p *= w;
        }
        for (i, nb) in nbrs.iter().enumerate() {
            for (o, &m) in sc.incoming[i * l..(i + 1) * l]
                .iter_mut()
                .zip(self.message(nb.incoming))
            {
                *o = m;
            }
        }
        let mut residual: f64 = 0.0;
        for (o, nb) in nbrs.iter().enumerate() {
            sc.product.copy_from_slice(&sc.phi);
            for i in (0..d).filter(|&i| i != o) {
                for (p, m) in sc.product.iter_mut().zip(&sc.incoming[i * l..(i + 1) * l]) {
                    *p *= m;
                }
            }
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
            let z: f64 = sc.out.iter().sum();
            if !(z > 0.0 && z.is_finite()) {
                return Err(m);
            }
            let inv = 1.0 / z;
            let old = self.message(m);
            let slot = &mut dst[o * l..(o + 1) * l];
            let mut change = 0.0;
            for ((s, &v), &prev) in slot.iter_mut().zip(&sc.out).zip(old) {
                let mut new = v * inv;
                if self.damping > 0.0 {
                    new = self.damping * prev + (1.0 - self.damping) * new;
                }
                change += (new - prev).abs();
                *s = new;
            }
            residual = residual.max(change);
        }
        Ok(residual)
    }

    /// Label probabilities of every pixel (pixel-major), and the point estimates from them.
    fn point_estimates(&self, kind: EstimateKind) -> Vec<f64> {
        let l = self.mrf.labels.len();
        let values = self.mrf.labels.values();
        let nodes = self.mrf.graph.num_nodes();
        let mut out = vec![0.0; nodes * 2];
        out.par_chunks_mut(2).enumerate().for_each_init(
            || (vec![0.0; l], vec![0.0; l]),
            |(phi, b), (t, est)| {
                self.belief_into(t, phi, b);
                match kind {
                    EstimateKind::Map => {
                        let mut best = 0;
                        for (i, p) in b.iter().enumerate() {
                            if *p > b[best] {
                                best = i;
                            }
                        }
                        est.copy_from_slice(&values[best]);
                    }
                    EstimateKind::Mean => {
                        est[0] = 0.0;
                        est[1] = 0.0;
                        for (p, v) in b.iter().zip(&values) {
                            est[0] += p * v[0];
                            est[1] += p * v[1];
                        }
                    }
                }
            },
        );
        out
    }
}

impl Inference for FlowBp {
    /// One synchronous iteration (rayon over pixels). Residual: the largest L1 change of a
    /// message.
    fn step(&mut self) -> Result<StepReport> {
        let start = Instant::now();
        let l = self.mrf.labels.len();
        let n = self.mrf.labels.per_axis();
        let mut next = std::mem::take(&mut self.next);
        let mut tasks = Vec::with_capacity(self.mrf.graph.num_nodes());
        {
            let mut rest: &mut [f64] = &mut next;
            for t in 0..self.mrf.graph.num_nodes() {
                let d = self.layout.node_start[t + 1] - self.layout.node_start[t];
                let (mine, tail) = std::mem::take(&mut rest).split_at_mut(d * l);
                rest = tail;
                tasks.push((t, mine));
            }
        }
        let outcome = tasks
            .into_par_iter()
            .map_init(
                || Scratch {
                    phi: vec![0.0; l],
                    incoming: vec![0.0; 4 * l],
                    product: vec![0.0; l],
                    pass: vec![0.0; n * n],
                    out: vec![0.0; l],
                },
                |sc, (t, dst)| self.update_node(t, dst, sc),
            )
            .try_reduce(|| 0.0, |a, b| Ok(a.max(b)));
        let residual = match outcome {
            Ok(r) => r,
            Err(m) => {
                self.next = next;
                let g = &self.mrf.graph;
                return Err(Error::Diverged {
                    iteration: self.iteration + 1,
                    detail: format!(
                        "message {} -> {} has no finite mass",
                        g.source(m),
                        g.target(m)
                    ),
                });
            }
        };
        self.next = std::mem::replace(&mut self.messages, next);
        self.iteration += 1;
        Ok(StepReport {
            iteration: self.iteration,
            residual,
            seconds: start.elapsed().as_secs_f64(),
            updates: self.mrf.graph.num_messages(),
        })
    }

    fn iteration(&self) -> usize {
        self.iteration
    }

    /// Label probabilities over the displacement lattice (relative to the pixel's base flow).
    fn belief(&self, node: NodeId) -> Belief {
        let l = self.mrf.labels.len();
        let (mut phi, mut b) = (vec![0.0; l], vec![0.0; l]);
        self.belief_into(node, &mut phi, &mut b);
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
