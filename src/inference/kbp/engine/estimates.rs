//! Beliefs at the candidate values and the point estimates of every pixel: `B(x) = P(x)
//! m_obs(x) Π_u m_us(x)` (Song et al. 2011, eq. 9: the belief multiplies the prior, the
//! evidence and every incoming message). Chunk by chunk: a chunk's incoming messages are
//! evaluated at the candidates with one product and multiplied per pixel while in cache, so no
//! candidates x pixels array is ever made. Cost O(pixels · degree · candidates · dim).

use nalgebra::{DMatrixView, DMatrixViewMut};
use rayon::prelude::*;

use super::batch::positive_floor;
use super::{KbpEngine, store};
use crate::inference::EstimateKind;

/// Pixels per parallel task.
const CHUNK_NODES: usize = 64;

impl KbpEngine {
    /// The unnormalised belief of pixel `t` at the candidates (may be negative) into `out`,
    /// from its incoming messages' values at the candidates (`values`, `nc` per message in
    /// direction order).
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
            DMatrixViewMut::from_slice(&mut values[k * nc..(k + 1) * nc], nc, 1).gemm(
                1.0,
                &self.candidate_eval,
                &DMatrixView::from_slice(&c, dim, 1),
                0.0,
            );
        }
        let mut out = vec![0.0; nc];
        self.belief_from_values(t, &values, &mut out);
        out
    }

    /// Every pixel's point estimate: the candidate of largest belief (MAP) or the candidates
    /// weighted by the positive part of the belief (mean; negative lobes carry no probability).
    pub(super) fn point_estimates(&self, kind: EstimateKind) -> Vec<f64> {
        let (nc, dim) = (self.candidates.len(), self.dim);
        let mut estimates = vec![0.0; self.shape.num_nodes()];
        estimates
            .par_chunks_mut(CHUNK_NODES)
            .enumerate()
            .for_each_init(
                || (Vec::new(), Vec::new(), vec![0.0; nc]),
                |(gathered, values, belief), (c, out)| {
                    let first = c * CHUNK_NODES;
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
                    DMatrixViewMut::from_slice(values, nc, cols).gemm(
                        1.0,
                        &self.candidate_eval,
                        &DMatrixView::from_slice(gathered, dim, cols),
                        0.0,
                    );
                    let mut col = 0;
                    for (t, e) in nodes.zip(out.iter_mut()) {
                        let n = self.shape.degree(t);
                        self.belief_from_values(t, &values[col * nc..(col + n) * nc], belief);
                        col += n;
                        *e = point_estimate(&self.candidates, belief, kind);
                    }
                },
            );
        estimates
    }
}

/// MAP or positive-part mean of one belief over the candidates.
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
            let (mut num, mut den) = (0.0, 0.0);
            for (x, v) in candidates.iter().zip(belief) {
                let w = v.max(0.0);
                num += x * w;
                den += w;
            }
            if den > 0.0 {
                num / den
            } else {
                // No positive mass anywhere: the least negative candidate.
                argmax()
            }
        }
    }
}
