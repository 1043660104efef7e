//! Beliefs at the candidate values and the point estimates of every pixel: `B(x) = P(x)
//! m_obs(x) Π_u m_us(x)` (Song et al. 2011, eq. 9: the belief multiplies the prior, the
//! evidence and every incoming message). Chunk by chunk: a chunk's incoming messages are
//! evaluated at the candidates with one product and multiplied per pixel while in cache, so no
//! candidates x pixels array is ever made. Cost O(pixels · degree · candidates · dim).

use std::collections::BTreeMap;

use rayon::prelude::*;

use super::batch::positive_floor;
use super::{KbpEngine, store};
use crate::error::Result;
use crate::inference::EstimateKind;
use crate::inference::lanes::{lane_sums, with_avx2};
use crate::inference::matmul;
use crate::run::CancelFlag;

/// Pixels per parallel task.
const CHUNK_NODES: usize = 64;
/// Pixels per check of the interrupt flag (and per task of the set-up estimates).
const NODES_PER_CHECK: usize = 4096;

impl KbpEngine {
    /// The unnormalised belief of pixel `t` at the candidates (may be negative) into `out`,
    /// from its incoming messages' values at the candidates (`values`, `nc` per message in
    /// direction order).
    #[inline(always)]
    fn belief_from_values(&self, t: usize, values: &[f64], out: &mut [f64]) {
        let nc = self.candidates.len();
        match &self.evidence {
            Some(ev) => {
                ev.table.interpolate(&ev.candidate_values, t, out);
                out.iter_mut()
                    .zip(&self.candidate_prior)
                    .for_each(|(x, p)| *x *= p);
            }
            None => out.copy_from_slice(&self.candidate_prior),
        }
        for v in values.chunks_exact(nc) {
            if self.rho == 1.0 {
                out.iter_mut().zip(v).for_each(|(x, v)| *x *= v);
            } else {
                let floor = positive_floor(v);
                out.iter_mut()
                    .zip(v)
                    .for_each(|(x, v)| *x *= v.max(floor).powf(self.rho));
            }
        }
    }

    /// Pixel `t`'s belief at the candidates.
    pub(super) fn candidate_belief(&self, t: usize) -> Vec<f64> {
        let (nc, dim) = (self.candidates.len(), self.dim);
        let (dirs, n) = self.shape.directions(t);
        let mut c = vec![0.0; dim];
        let mut values = vec![0.0; nc * n];
        for (k, &d) in dirs[..n].iter().enumerate() {
            let s = self.shape.incoming_slot(t, d).expect("a neighbour");
            store::read(&self.messages, dim, s, &mut c);
            matmul::product(
                &mut values[k * nc..(k + 1) * nc],
                self.candidate_eval.as_slice(),
                &c,
                nc,
                dim,
                1,
            );
        }
        let mut out = vec![0.0; nc];
        self.belief_from_values(t, &values, &mut out);
        out
    }

    /// Every pixel's point estimate: the candidate of largest belief (MAP) or the candidates
    /// weighted by the positive part of the belief (mean; negative lobes carry no probability).
    pub(super) fn point_estimates(&self, kind: EstimateKind) -> Vec<f64> {
        self.point_estimates_until(kind, None)
            .expect("without a flag the estimates always finish")
    }

    /// [`Self::point_estimates`], checking the interrupt flag per 4096 pixels: a
    /// photograph's estimates take seconds after each iteration.
    pub fn interruptible_estimates(&self, kind: EstimateKind) -> Result<Vec<f64>> {
        self.point_estimates_until(kind, self.interrupt.as_ref())
    }

    fn point_estimates_until(
        &self,
        kind: EstimateKind,
        interrupt: Option<&CancelFlag>,
    ) -> Result<Vec<f64>> {
        let nc = self.candidates.len();
        let mut estimates = vec![0.0; self.shape.num_nodes()];
        let filled: Result<()> = estimates
            .par_chunks_mut(CHUNK_NODES)
            .enumerate()
            .try_for_each_init(
                || (Vec::new(), Vec::new(), vec![0.0; nc]),
                |(gathered, values, belief), (c, out)| {
                    if c % (NODES_PER_CHECK / CHUNK_NODES) == 0 {
                        interrupt.map_or(Ok(()), CancelFlag::check)?;
                    }
                    let first = c * CHUNK_NODES;
                    with_avx2(
                        #[inline(always)]
                        || self.estimate_chunk(first, out, gathered, values, belief, kind),
                    );
                    Ok(())
                },
            );
        filled.map(|()| estimates)
    }

    /// The estimates of the pixels `first..first + out.len()` into `out`.
    #[inline(always)]
    fn estimate_chunk(
        &self,
        first: usize,
        out: &mut [f64],
        gathered: &mut Vec<f64>,
        values: &mut Vec<f64>,
        belief: &mut [f64],
        kind: EstimateKind,
    ) {
        let (nc, dim) = (self.candidates.len(), self.dim);
        let nodes = first..first + out.len();
        gathered.clear();
        for t in nodes.clone() {
            let (dirs, n) = self.shape.directions(t);
            for &d in &dirs[..n] {
                let s = self.shape.incoming_slot(t, d).expect("a neighbour");
                let start = gathered.len();
                gathered.resize(start + dim, 0.0);
                store::read(&self.messages, dim, s, &mut gathered[start..]);
            }
        }
        let cols = gathered.len() / dim.max(1);
        values.resize(nc * cols, 0.0);
        matmul::product(
            values,
            self.candidate_eval.as_slice(),
            gathered,
            nc,
            dim,
            cols,
        );
        let mut col = 0;
        for (t, e) in nodes.zip(out.iter_mut()) {
            let n = self.shape.degree(t);
            self.belief_from_values(t, &values[col * nc..(col + n) * nc], belief);
            col += n;
            *e = point_estimate(&self.candidates, belief, kind);
        }
    }

    /// The estimates of the messages as they are set up, before any iteration: every message
    /// is then its sender's start message ([`KbpEngine::start_messages`], one per degree), so
    /// its values at the candidates are computed once per degree instead of once per message.
    /// O(pixels · degree · candidates), without the `dim` factor; the flag is checked per
    /// 4096 pixels. On an engine that has iterated (or had messages restored) this is not its
    /// estimate: use [`Self::interruptible_estimates`].
    pub fn set_up_estimates(&self, kind: EstimateKind) -> Result<Vec<f64>> {
        let nc = self.candidates.len();
        // The values of the stored (f32-rounded) start messages, as the general path reads them.
        let start_values: BTreeMap<usize, Vec<f64>> = self
            .start_messages()
            .into_iter()
            .map(|(degree, c)| {
                let rounded = c.map(|v| f64::from(v as f32));
                (degree, (&self.candidate_eval * rounded).as_slice().to_vec())
            })
            .collect();
        let interrupt = self.interrupt.as_ref();
        let mut estimates = vec![0.0; self.shape.num_nodes()];
        let filled: Result<()> = estimates
            .par_chunks_mut(NODES_PER_CHECK)
            .enumerate()
            .try_for_each_init(
                || (Vec::new(), vec![0.0; nc]),
                |(values, belief), (c, out)| {
                    interrupt.map_or(Ok(()), CancelFlag::check)?;
                    let first = c * NODES_PER_CHECK;
                    for (i, e) in out.iter_mut().enumerate() {
                        let t = first + i;
                        let (dirs, n) = self.shape.directions(t);
                        values.clear();
                        for &d in &dirs[..n] {
                            let u = self.shape.neighbour(t, d).expect("a neighbour");
                            values.extend_from_slice(&start_values[&self.shape.degree(u)]);
                        }
                        self.belief_from_values(t, values, belief);
                        *e = point_estimate(&self.candidates, belief, kind);
                    }
                    Ok(())
                },
            );
        filled.map(|()| estimates)
    }
}

/// MAP or positive-part mean of one belief over the candidates.
#[inline(always)]
fn point_estimate(candidates: &[f64], belief: &[f64], kind: EstimateKind) -> f64 {
    let argmax = || {
        let mut best = 0;
        for (i, v) in belief.iter().enumerate() {
            if *v > belief[best] {
                best = i;
            }
        }
        candidates[best]
    };
    match kind {
        EstimateKind::Map => argmax(),
        EstimateKind::Mean => {
            let n = belief.len();
            let candidates = &candidates[..n];
            let [num, den] = lane_sums(n, |i| {
                let w = belief[i].max(0.0);
                [candidates[i] * w, w]
            });
            if den > 0.0 {
                num / den
            } else {
                // No positive mass anywhere: the least negative candidate.
                argmax()
            }
        }
    }
}
