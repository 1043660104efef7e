//! The synchronous discrete-BP iteration for MRFs whose edges share one table (image grids), as
//! matrix products: the update of [`super`] (Yedidia, Freeman, Weiss 2003, eq. 4; tree-reweighted
//! as Wainwright, Jaakkola, Willsky 2003, eq. 11) for a chunk of messages is one product
//! `OUT = Ψᵀ X` of the S x S table with the S x k matrix of their senders' leave-one-out
//! products, so a GEMM ([`crate::inference::matmul`], the `gemm` crate's runtime-detected
//! AVX/FMA kernels) does the O(|E| S²) work.
//!
//! Tree-reweighted products take one power per node and state: the node product
//! `P_t = φ_t (Π_u m_ut)^ρ` (also the unnormalised belief) is kept for the current messages, and the message `t -> s` multiplies `P_t / m_st` (= `φ_t Π_{u≠s} m_ut^ρ m_st^{ρ-1}`).
//! Ordinary BP (ρ = 1) forms the leave-one-out product directly, so zeros stay exact.
//! A message's mass is known before its product is taken (the sender product times the table's
//! column sums, summed in the pass that forms the product), so normalising, damping and each
//! message's change are one pass over the product's output, while the chunk is in cache.
//!
//! Tables of at most 16 states skip the GEMM: [`small`] runs the whole update of a message in
//! AVX registers, with the table held as padded columns. Larger tables that are a scaled floor
//! plus a few diagonals, rows and columns (smoothed pseudo-moments, Potts, truncated) skip it
//! too: [`structured`] applies them in O(lines · S) per message.
//!
//! Cost per iteration: O(|E| S²) in the products, O(|E| S) powers (ρ < 1) and O(|E| S) for the
//! rest; memory one S-vector per node for the node products besides the two message buffers.

use nalgebra::DMatrix;
use rayon::prelude::*;

use super::DiscreteMrf;
use crate::inference::lanes::{
    at_least_min_positive, damp_in_place, map_max_dot, quotient_max_dot, with_avx2,
};
use crate::inference::matmul;
use crate::inference::powers::{scaled_power_in_place, scaled_power_of_product};
use crate::run::CancelFlag;

mod small;
mod structured;

use structured::LinesTable;

/// Values of a chunk's input matrix: a chunk is about this many doubles (a few hundred KB with
/// its output), so the gathered products, the output and the table stay in the core's cache.
const CHUNK_VALUES: usize = 8192;

/// Sender products whose largest value lies in this range go into the matrix product as they
/// are (the message is normalised after it anyway); others are scaled to a largest value of 1.
const SCALE_LOW: f64 = 1e-200;
const SCALE_HIGH: f64 = 1e200;

/// The shared table as the two maps a message goes through.
#[derive(Debug, Clone)]
pub(super) struct SharedTable {
    /// `forward[(j, i)] = ψ(i, j)`: a sender product over `x_a` to the message over `x_b`
    /// (message `a -> b`, even ids).
    forward: DMatrix<f64>,
    /// `ψ(i, j)` at `(i, j)`: messages `b -> a` (odd ids). None for a symmetric table, where
    /// `forward` serves both directions.
    backward: Option<DMatrix<f64>>,
    /// The column sums of `forward` (and of `backward`): a sender product `x` becomes a message
    /// of mass `Σ_i x_i w_i`, known before the product is taken.
    forward_mass: Vec<f64>,
    backward_mass: Option<Vec<f64>>,
    /// The table as scales, a floor and a few lines ([`structured`]), in both directions, when
    /// it has that form and more states than [`small`] takes.
    lines: Option<(LinesTable, Option<LinesTable>)>,
}

impl SharedTable {
    /// From the row-major table `[i * S + j] = ψ(i, j)`.
    pub(super) fn new(table: &[f64], s: usize) -> Self {
        // Read column-major, the row-major table is its own transpose: (j, i) = ψ(i, j).
        let forward = DMatrix::from_column_slice(s, s, table);
        let symmetric = (0..s).all(|i| (0..s).all(|j| table[i * s + j] == table[j * s + i]));
        let backward = (!symmetric).then(|| forward.transpose());
        let column_sums = |m: &DMatrix<f64>| m.column_iter().map(|c| c.sum()).collect();
        let lines = (s > small::MAX_STATES)
            .then(|| LinesTable::find(table, s))
            .flatten()
            .and_then(|forward| match &backward {
                // `b` holds ψ(i, j) at [j * S + i]: row-major, the table from x_b to x_a.
                Some(b) => LinesTable::find(b.as_slice(), s).map(|b| (forward, Some(b))),
                None => Some((forward, None)),
            });
        SharedTable {
            lines,
            forward_mass: column_sums(&forward),
            backward_mass: backward.as_ref().map(column_sums),
            backward,
            forward,
        }
    }
}

/// Messages per chunk for `s` states.
pub(super) fn chunk_messages(s: usize) -> usize {
    (CHUNK_VALUES / s.max(1)).clamp(32, 1024)
}

/// `out[t] = φ_t Π_{u ∈ N(t)} max(m_ut, MIN_POSITIVE)^ρ` for every node (node-major, S each),
/// one power per node and state instead of one per message: the plain products of a block of
/// nodes first, then one vectorised power over the block ([`scaled_power_in_place`]); a block
/// where some product may have underflowed takes [`scaled_power_of_product`] per node.
pub(super) fn node_products(mrf: &DiscreteMrf, messages: &[f64], rho: f64, out: &mut [f64]) {
    const NODES: usize = 64;
    let s = mrf.num_states();
    out.par_chunks_mut(s * NODES)
        .enumerate()
        .for_each_init(Vec::new, |factors, (c, chunk)| {
            with_avx2(
                #[inline(always)]
                || node_block(mrf, messages, rho, c * NODES, chunk, factors),
            );
        });
}

/// [`node_products`] of the nodes `first..` (as many as `out` holds).
#[inline(always)]
fn node_block<'m>(
    mrf: &DiscreteMrf,
    messages: &'m [f64],
    rho: f64,
    first: usize,
    out: &mut [f64],
    factors: &mut Vec<&'m [f64]>,
) {
    let s = mrf.num_states();
    let g = &mrf.graph;
    let incoming = |nb: &crate::model::Neighbor| &messages[nb.incoming * s..(nb.incoming + 1) * s];
    let phi = &mrf.node_potentials[first * s..first * s + out.len()];
    if !small::plain_node_products(mrf, messages, first, out) {
        let floor = at_least_min_positive;
        for (k, p) in out.chunks_exact_mut(s).enumerate() {
            match g.neighbors(first + k) {
                // A grid's inner node: one pass instead of one per factor (1 · a = a, so the
                // same bits as the general loop).
                [a, b, c, d] => {
                    let (a, b, c, d) = (incoming(a), incoming(b), incoming(c), incoming(d));
                    for ((((o, &a), &b), &c), &d) in p.iter_mut().zip(a).zip(b).zip(c).zip(d) {
                        *o = floor(a) * floor(b) * floor(c) * floor(d);
                    }
                }
                neighbors => {
                    p.fill(1.0);
                    for nb in neighbors {
                        for (o, &v) in p.iter_mut().zip(incoming(nb)) {
                            *o *= floor(v);
                        }
                    }
                }
            }
        }
    }
    if scaled_power_in_place(out, rho, phi) {
        return;
    }
    for (k, p) in out.chunks_exact_mut(s).enumerate() {
        factors.clear();
        factors.extend(g.neighbors(first + k).iter().map(incoming));
        scaled_power_of_product(factors, rho, &phi[k * s..(k + 1) * s], p);
    }
}

/// Per-task buffers.
#[derive(Default)]
pub(super) struct ChunkScratch {
    inputs: Vec<f64>,
    /// The mass of each message of the chunk before normalising.
    mass: Vec<f64>,
    even: Vec<f64>,
    odd: Vec<f64>,
    /// A scaled sender product ([`LinesTable::apply`]).
    scaled: Vec<f64>,
}

/// What every chunk reads.
pub(super) struct StepInputs<'a> {
    pub mrf: &'a DiscreteMrf,
    pub table: &'a SharedTable,
    pub messages: &'a [f64],
    /// The node products of `messages` (ρ < 1), else empty.
    pub products: &'a [f64],
    pub rho: f64,
    pub damping: f64,
    /// [`crate::run::residuals::projection_weight`] of every state.
    pub projection: &'a [f64],
    /// Checked before every chunk of messages.
    pub interrupt: Option<&'a CancelFlag>,
}

/// Why a batched iteration stopped before its end.
pub(super) enum Halt {
    /// The update of this message had no finite mass.
    NoFiniteMass(usize),
    /// The interrupt flag was set.
    Interrupted,
}

impl StepInputs<'_> {
    /// One synchronous iteration into `next` (normalised and damped against `messages`), with
    /// each message's L1 change and signed projection in `change`/`signed`. Returns the largest
    /// change, or why it stopped.
    pub(super) fn run(
        &self,
        next: &mut [f64],
        change: &mut [f64],
        signed: &mut [f64],
    ) -> std::result::Result<f64, Halt> {
        let s = self.mrf.num_states();
        let k = chunk_messages(s);
        next.par_chunks_mut(s * k)
            .zip(change.par_chunks_mut(k))
            .zip(signed.par_chunks_mut(k))
            .enumerate()
            .map_init(ChunkScratch::default, |sc, (c, ((out, ch), sg))| {
                if self.interrupt.is_some_and(|f| f.check().is_err()) {
                    return Err(Halt::Interrupted);
                }
                self.chunk(c * k, out, ch, sg, sc)
                    .map_err(Halt::NoFiniteMass)
            })
            .try_reduce(|| 0.0, |a, b| Ok(a.max(b)))
    }

    /// The messages `m0..` (as many as `out` holds): on AVX2 processors the same code
    /// compiled for four lanes.
    fn chunk(
        &self,
        m0: usize,
        out: &mut [f64],
        change: &mut [f64],
        signed: &mut [f64],
        sc: &mut ChunkScratch,
    ) -> std::result::Result<f64, usize> {
        if let Some(outcome) = self.small_chunk(m0, out, change, signed) {
            return outcome;
        }
        #[cfg(target_arch = "x86_64")]
        if std::arch::is_x86_feature_detected!("avx2") {
            // SAFETY: the processor has AVX2, checked just above.
            return unsafe { self.chunk_avx2(m0, out, change, signed, sc) };
        }
        self.chunk_body(m0, out, change, signed, sc)
    }

    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2")]
    unsafe fn chunk_avx2(
        &self,
        m0: usize,
        out: &mut [f64],
        change: &mut [f64],
        signed: &mut [f64],
        sc: &mut ChunkScratch,
    ) -> std::result::Result<f64, usize> {
        self.chunk_body(m0, out, change, signed, sc)
    }

    #[inline(always)]
    fn chunk_body(
        &self,
        m0: usize,
        out: &mut [f64],
        change: &mut [f64],
        signed: &mut [f64],
        sc: &mut ChunkScratch,
    ) -> std::result::Result<f64, usize> {
        let s = self.mrf.num_states();
        let cols = out.len() / s;
        sc.inputs.resize(out.len(), 0.0);
        sc.mass.clear();
        for (j, x) in sc.inputs.chunks_exact_mut(s).enumerate() {
            let mass = self.sender_product(m0 + j, x);
            sc.mass.push(mass);
        }
        match (&self.table.lines, &self.table.backward) {
            (Some((forward, backward)), _) => {
                sc.scaled.resize(s, 0.0);
                let messages = sc.inputs.chunks_exact(s).zip(out.chunks_exact_mut(s));
                for (j, (x, o)) in messages.enumerate() {
                    let table = match backward {
                        Some(b) if (m0 + j) % 2 == 1 => b,
                        _ => forward,
                    };
                    table.apply(x, &mut sc.scaled, o);
                }
            }
            (None, None) => gemm(out, &self.table.forward, &sc.inputs, s, cols),
            (None, Some(backward)) => {
                // Even ids go a -> b through ψᵀ, odd ids b -> a through ψ: one product each.
                let (even, odd) = (&mut sc.even, &mut sc.odd);
                even.clear();
                odd.clear();
                for (j, x) in sc.inputs.chunks_exact(s).enumerate() {
                    if (m0 + j).is_multiple_of(2) {
                        even.extend_from_slice(x);
                    } else {
                        odd.extend_from_slice(x);
                    }
                }
                let (ne, no) = (even.len() / s, odd.len() / s);
                let mut even_out = vec![0.0; even.len()];
                let mut odd_out = vec![0.0; odd.len()];
                gemm(&mut even_out, &self.table.forward, even, s, ne);
                gemm(&mut odd_out, backward, odd, s, no);
                let (mut e, mut o) = (even_out.chunks_exact(s), odd_out.chunks_exact(s));
                for (j, col) in out.chunks_exact_mut(s).enumerate() {
                    let from = if (m0 + j).is_multiple_of(2) {
                        e.next()
                    } else {
                        o.next()
                    };
                    col.copy_from_slice(from.expect("one column per message"));
                }
            }
        }
        let d = self.damping;
        let w = self.projection;
        let mut largest: f64 = 0.0;
        for ((j, new), &z) in out.chunks_exact_mut(s).enumerate().zip(&sc.mass) {
            let m = m0 + j;
            if !(z > 0.0 && z.is_finite()) {
                return Err(m);
            }
            let old = &self.messages[m * s..(m + 1) * s];
            let (l1, projected) = damp_in_place(new, old, w, d, (1.0 - d) / z);
            change[j] = l1;
            signed[j] = projected;
            largest = largest.max(l1);
        }
        Ok(largest)
    }

    /// The product message `m = t -> s` multiplies, in `x`, and the mass of the message it makes
    /// (before normalising). A product whose largest value is far from 1 is scaled to 1 first,
    /// so the matrix product neither overflows nor loses it to underflow.
    #[inline(always)]
    fn sender_product(&self, m: usize, x: &mut [f64]) -> f64 {
        let s = self.mrf.num_states();
        let g = &self.mrf.graph;
        let (t, target) = (g.source(m), g.target(m));
        let w = match &self.table.backward_mass {
            Some(backward) if m % 2 == 1 => backward,
            _ => &self.table.forward_mass,
        };
        let (top, mass) = if self.rho == 1.0 {
            let phi = &self.mrf.node_potentials[t * s..(t + 1) * s];
            let incoming = |nb: &crate::model::Neighbor| {
                &self.messages[nb.incoming * s..(nb.incoming + 1) * s]
            };
            let mut others = g
                .neighbors(t)
                .iter()
                .filter(|nb| nb.node != target)
                .map(incoming);
            match others.next_back() {
                None => map_max_dot(x, phi, phi, w, |_, p, _| p),
                Some(last) => {
                    x.copy_from_slice(phi);
                    for inc in others {
                        x.iter_mut().zip(inc).for_each(|(p, v)| *p *= v);
                    }
                    map_max_dot(x, last, last, w, |p, v, _| p * v)
                }
            }
        } else {
            // P_t / m_st: the reverse of message m is m ^ 1.
            let reverse = &self.messages[(m ^ 1) * s..((m ^ 1) + 1) * s];
            let product = &self.products[t * s..(t + 1) * s];
            quotient_max_dot(x, product, reverse, w)
        };
        if (SCALE_LOW..=SCALE_HIGH).contains(&top) || !(top > 0.0 && top.is_finite()) {
            return mass;
        }
        let inv = 1.0 / top;
        x.iter_mut().for_each(|p| *p *= inv);
        mass * inv
    }
}

/// `out (s x cols) = table (s x s) · inputs (s x cols)`, column-major.
fn gemm(out: &mut [f64], table: &DMatrix<f64>, inputs: &[f64], s: usize, cols: usize) {
    matmul::product(out, table.as_slice(), inputs, s, s, cols);
}
