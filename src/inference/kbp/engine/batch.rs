//! One kernel-BP update of a group of pixels whose messages multiply the same number of factors
//! (Song et al. 2011, eq. 12 and Sec. 5, as [`FactorClass`] matrices): gather the group's
//! incoming coefficients, `Y = A_p C` (one product for all of them), leave-one-out products
//! times the evidence per pixel, `C_new = U_p G` (one product), then normalise, orient, damp and
//! record each message's change. The schedules (synchronous, wavefront sweep, serial) differ
//! only in which pixels form a group and where the new messages are written.
//!
//! Cost per message: the class's `A_p` and `U_p` products (O(n_p · dim)) plus O(n_p · degree)
//! for the products and O(dim) for the rest.

use std::collections::BTreeMap;

use nalgebra::DMatrix;

use super::layout::GridShape;
use crate::inference::kbp::model::{EvidenceTable, FactorClass};
use crate::inference::lanes::{change_sums, lane_dots};
use crate::inference::matmul;

/// The evidence of every pixel, evaluated where the updates and the estimates need it.
#[derive(Debug, Clone)]
pub(super) struct EngineEvidence {
    pub table: EvidenceTable,
    /// Per factor count p: the evidence messages at the class's points (`n_p x columns`).
    pub class_values: BTreeMap<usize, DMatrix<f64>>,
    /// At the candidate values (`candidates x columns`).
    pub candidate_values: DMatrix<f64>,
}

/// What every group update reads.
pub(super) struct Updater<'a> {
    pub shape: GridShape,
    pub dim: usize,
    pub classes: &'a BTreeMap<usize, FactorClass>,
    pub evidence: Option<&'a EngineEvidence>,
    pub orientation: &'a [f64],
    /// [`crate::run::residuals::projection_weight`] of every coefficient.
    pub projection: &'a [f64],
    pub damping: f64,
    pub rho: f64,
}

thread_local! {
    /// Each worker thread's buffers, kept between tasks: a wavefront iteration runs thousands
    /// of small parallel steps, and fresh buffers for each cost more than the products.
    static SCRATCH: std::cell::RefCell<Scratch> = std::cell::RefCell::new(Scratch::default());
}

/// Runs `f` with this thread's scratch buffers.
pub(super) fn with_scratch<R>(f: impl FnOnce(&mut Scratch) -> R) -> R {
    SCRATCH.with(|s| f(&mut s.borrow_mut()))
}

/// Per-task buffers.
#[derive(Default)]
pub(super) struct Scratch {
    gathered: Vec<f64>,
    values: Vec<f64>,
    products: Vec<f64>,
    suffix: Vec<f64>,
    evidence: Vec<f64>,
    /// The group's new coefficients, `dim` per message, pixel after pixel (the buffer may be
    /// longer: buffers only grow).
    pub out: Vec<f64>,
    pub old: Vec<f64>,
}

impl Updater<'_> {
    /// The factor count of `degree`-neighbour pixels.
    pub fn factor_count(&self, degree: usize) -> usize {
        degree - 1 + usize::from(self.evidence.is_some())
    }

    /// The new (undamped, not normalised) outgoing coefficients of `nodes`, all of degree
    /// `degree`, into `sc.out`: `dim` per message, pixel after pixel, in direction order.
    /// `read(slot, out)` reads an incoming message.
    #[inline(always)]
    pub fn compute(
        &self,
        nodes: &[usize],
        degree: usize,
        read: impl Fn(usize, &mut [f64]),
        sc: &mut Scratch,
    ) {
        let dim = self.dim;
        let p = self.factor_count(degree);
        let class = &self.classes[&p];
        let n_points = class.eval.nrows();
        let cols = nodes.len() * degree;
        // Buffers only grow: a diagonal's interior pixels and its few edge pixels form groups of
        // very different sizes, one after the other, and shrinking a buffer to grow it back
        // would write zeros over all of it each time.
        for (buffer, len) in [
            (&mut sc.gathered, dim * cols),
            (&mut sc.values, n_points * cols),
            (&mut sc.products, n_points * cols),
            (&mut sc.suffix, n_points),
            (&mut sc.evidence, n_points),
            (&mut sc.out, dim * cols),
        ] {
            if buffer.len() < len {
                buffer.resize(len, 0.0);
            }
        }
        let mut col = 0;
        for &t in nodes {
            let (dirs, n) = self.shape.directions(t);
            debug_assert_eq!(n, degree);
            for &d in &dirs[..n] {
                let s = self.shape.incoming_slot(t, d).expect("a neighbour");
                read(s, &mut sc.gathered[col * dim..(col + 1) * dim]);
                col += 1;
            }
        }
        matmul::product(
            &mut sc.values,
            class.eval.as_slice(),
            &sc.gathered,
            n_points,
            dim,
            cols,
        );
        let evidence_values = self.evidence.map(|e| (&e.table, &e.class_values[&p]));
        for (i, (g_node, y_node)) in sc.products[..n_points * cols]
            .chunks_exact_mut(n_points * degree)
            .zip(sc.values[..n_points * cols].chunks_exact(n_points * degree))
            .enumerate()
        {
            // A `match`, not `Option::map`: the closure was compiled apart, outside this AVX2
            // region, as two-lane code.
            let evidence = match evidence_values {
                Some((table, values)) => {
                    table.interpolate(values, nodes[i], &mut sc.evidence[..n_points]);
                    Some(&sc.evidence[..n_points])
                }
                None => None,
            };
            leave_one_out(
                y_node,
                evidence,
                n_points,
                degree,
                self.rho,
                &mut sc.suffix,
                g_node,
            );
        }
        matmul::product(
            &mut sc.out,
            class.update.as_slice(),
            &sc.products,
            dim,
            n_points,
            cols,
        );
    }

    /// Normalises, orients and damps `new` against `old` (f64 copies), leaving the message to
    /// store in `new`; returns its change `(‖new - old‖, signed projection)`, or None when a
    /// norm is zero or not finite.
    #[inline(always)]
    pub fn mix(&self, old: &[f64], new: &mut [f64]) -> Option<(f64, f64)> {
        mix_with_change(
            old,
            new,
            self.orientation,
            Some(self.projection),
            self.damping,
        )
    }

    /// Updates a group of pixels of one degree: [`Self::compute`], then each message mixed
    /// with its old value (read with `read`) and handed to `sink(slot, new, change, signed)`.
    /// Returns the largest change, or the slot of the first message without a finite norm.
    /// On processors with AVX2 the whole of it runs four lanes wide.
    pub fn update_group(
        &self,
        nodes: &[usize],
        degree: usize,
        read: impl Fn(usize, &mut [f64]),
        sc: &mut Scratch,
        sink: impl FnMut(usize, &[f64], f64, f64),
    ) -> Result<f64, usize> {
        #[cfg(target_arch = "x86_64")]
        if std::arch::is_x86_feature_detected!("avx2") {
            // SAFETY: the processor has AVX2, checked just above.
            return unsafe { self.update_group_avx2(nodes, degree, read, sc, sink) };
        }
        self.update_group_body(nodes, degree, read, sc, sink)
    }

    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2")]
    unsafe fn update_group_avx2(
        &self,
        nodes: &[usize],
        degree: usize,
        read: impl Fn(usize, &mut [f64]),
        sc: &mut Scratch,
        sink: impl FnMut(usize, &[f64], f64, f64),
    ) -> Result<f64, usize> {
        self.update_group_body(nodes, degree, read, sc, sink)
    }

    #[inline(always)]
    fn update_group_body(
        &self,
        nodes: &[usize],
        degree: usize,
        read: impl Fn(usize, &mut [f64]),
        sc: &mut Scratch,
        mut sink: impl FnMut(usize, &[f64], f64, f64),
    ) -> Result<f64, usize> {
        let dim = self.dim;
        self.compute(nodes, degree, &read, sc);
        let mut old = std::mem::take(&mut sc.old);
        old.resize(dim, 0.0);
        let mut largest: f64 = 0.0;
        let mut outcome = Ok(());
        for (j, new) in sc.out[..dim * nodes.len() * degree]
            .chunks_exact_mut(dim)
            .enumerate()
        {
            let t = nodes[j / degree];
            let d = self.shape.directions(t).0[j % degree];
            let s = 4 * t + d;
            read(s, &mut old);
            let Some((l2, projected)) = self.mix(&old, new) else {
                outcome = Err(s);
                break;
            };
            sink(s, new, l2, projected);
            largest = largest.max(l2);
        }
        sc.old = old;
        outcome.map(|()| largest)
    }
}

/// `g[:, k] = evidence ⊙ Π_{j != k} y[:, j]` for `d` columns of `n` values, by a prefix pass
/// (stored in `g`) and a suffix pass (in `suffix`); no division, so zeros are exact. O(n d).
/// With ρ < 1 the tree-reweighted product `evidence ⊙ Π_j ŷ_j^ρ / ŷ_k` instead, ŷ the values
/// floored at [`positive_floor`] of their column.
#[inline(always)]
pub(super) fn leave_one_out(
    y: &[f64],
    evidence: Option<&[f64]>,
    n: usize,
    d: usize,
    rho: f64,
    suffix: &mut [f64],
    g: &mut [f64],
) {
    if rho != 1.0 {
        // suffix holds the full product evidence ⊙ Π_j ŷ_j^ρ; g[:, k] keeps ŷ_k until the end.
        for (i, s) in suffix[..n].iter_mut().enumerate() {
            *s = evidence.map_or(1.0, |e| e[i]);
        }
        for (column, g_col) in y[..d * n].chunks_exact(n).zip(g.chunks_exact_mut(n)) {
            let floor = positive_floor(column);
            for ((gv, s), v) in g_col.iter_mut().zip(suffix[..n].iter_mut()).zip(column) {
                *gv = v.max(floor);
                *s *= gv.powf(rho);
            }
        }
        for g_col in g[..d * n].chunks_exact_mut(n) {
            for (gv, s) in g_col.iter_mut().zip(&suffix[..n]) {
                *gv = s / *gv;
            }
        }
        return;
    }
    match d {
        2 => return leave_one_out_of::<2>(y, evidence, n, g),
        3 => return leave_one_out_of::<3>(y, evidence, n, g),
        4 => return leave_one_out_of::<4>(y, evidence, n, g),
        _ => {}
    }
    // Prefix: g[:, k] = evidence ⊙ y[:, 0] ⊙ ... ⊙ y[:, k-1].
    match evidence {
        Some(e) => g[..n].copy_from_slice(&e[..n]),
        None => g[..n].fill(1.0),
    }
    for k in 1..d {
        let (done, rest) = g.split_at_mut(k * n);
        let prev = &done[(k - 1) * n..];
        let y_prev = &y[(k - 1) * n..k * n];
        for ((gv, p), v) in rest[..n].iter_mut().zip(prev).zip(y_prev) {
            *gv = p * v;
        }
    }
    // Suffix: multiply g[:, k] by y[:, k+1] ⊙ ... ⊙ y[:, d-1].
    suffix[..n].fill(1.0);
    for k in (0..d).rev() {
        for ((gv, s), v) in g[k * n..(k + 1) * n]
            .iter_mut()
            .zip(suffix[..n].iter_mut())
            .zip(&y[k * n..(k + 1) * n])
        {
            *gv *= *s;
            *s *= v;
        }
    }
}

/// [`leave_one_out`] for `D` columns (a grid pixel's 2, 3 or 4 neighbours), point by point with
/// the columns unrolled, so the loop over points is vectorised.
#[inline(always)]
fn leave_one_out_of<const D: usize>(y: &[f64], evidence: Option<&[f64]>, n: usize, g: &mut [f64]) {
    // Every slice cut to exactly n up front, so the loop over points has no bounds checks
    // left and is vectorised.
    let ys: [&[f64]; D] = std::array::from_fn(|k| &y[k * n..(k + 1) * n]);
    let mut columns = g[..D * n].chunks_exact_mut(n);
    let heads: [&mut [f64]; D] =
        std::array::from_fn(|_| columns.next().expect("D columns of n values"));
    let mut heads = heads.map(|h| &mut h[..n]);
    let evidence = evidence.map(|e| &e[..n]);
    let mut first = 0;
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx") {
        // SAFETY: the processor has AVX (checked); every column holds n values (cut above).
        first = unsafe { leave_one_out_avx(&ys, evidence, &mut heads, n) };
    }
    for i in first..n {
        let mut prefix = [0.0; D];
        let mut running = evidence.map_or(1.0, |e| e[i]);
        for k in 0..D {
            prefix[k] = running;
            running *= ys[k][i];
        }
        let mut suffix = 1.0;
        for k in (0..D).rev() {
            heads[k][i] = prefix[k] * suffix;
            suffix *= ys[k][i];
        }
    }
}

/// [`leave_one_out_of`] four points at a time in AVX registers, the same multiplications in
/// the same order; returns the first point it left for the scalar loop (`n` rounded down to 4).
///
/// # Safety
/// Every slice holds at least `n` values.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx")]
unsafe fn leave_one_out_avx<const D: usize>(
    ys: &[&[f64]; D],
    evidence: Option<&[f64]>,
    heads: &mut [&mut [f64]; D],
    n: usize,
) -> usize {
    use std::arch::x86_64::*;
    let quads = n / 4;
    for at in (0..quads).map(|q| 4 * q) {
        // SAFETY (every load and store): at + 4 <= n, inside every slice (the contract).
        let y: [__m256d; D] =
            std::array::from_fn(|k| unsafe { _mm256_loadu_pd(ys[k].as_ptr().add(at)) });
        let mut running = match evidence {
            Some(e) => unsafe { _mm256_loadu_pd(e.as_ptr().add(at)) },
            None => _mm256_set1_pd(1.0),
        };
        let mut prefix = [_mm256_setzero_pd(); D];
        for k in 0..D {
            prefix[k] = running;
            running = _mm256_mul_pd(running, y[k]);
        }
        let mut suffix = _mm256_set1_pd(1.0);
        for k in (0..D).rev() {
            unsafe {
                _mm256_storeu_pd(
                    heads[k].as_mut_ptr().add(at),
                    _mm256_mul_pd(prefix[k], suffix),
                )
            };
            suffix = _mm256_mul_pd(suffix, y[k]);
        }
    }
    4 * quads
}

/// The floor below which a message's values are raised before a power: 1e-6 of its largest
/// |value| (a kernel message can dip below zero where it is small), at least the smallest
/// positive normal number.
pub(super) fn positive_floor(values: &[f64]) -> f64 {
    let top = values.iter().fold(0.0f64, |a, v| a.max(v.abs()));
    (1e-6 * top).max(f64::MIN_POSITIVE)
}

/// Normalises `update` to unit norm with the sign that makes the message's values at the
/// training values sum to a positive number (`orientation · c > 0`; BP messages are positive
/// functions, and a sign flip in one factor would turn a belief's argmax into its argmin),
/// damps it with `old` (`d old + (1 - d) update`) and normalises again, leaving the new message
/// in `update`. Returns the change `||new - old||`, or None when a norm is zero or not finite.
#[inline(always)]
pub(super) fn mix_normalised(
    old: &[f64],
    update: &mut [f64],
    orientation: &[f64],
    damping: f64,
) -> Option<f64> {
    mix_with_change(old, update, orientation, None, damping).map(|(change, _)| change)
}

/// [`mix_normalised`] in two passes over the coefficients: the first takes every dot product
/// the norms need (`‖u‖²`, `u · orientation`, `u · old`, `‖old‖²`, so the mixed vector's norm
/// is known before it is formed), the second writes the new message and sums its change and
/// the change's projection on `projection` (0 without one).
#[inline(always)]
pub(super) fn mix_with_change(
    old: &[f64],
    update: &mut [f64],
    orientation: &[f64],
    projection: Option<&[f64]>,
    damping: f64,
) -> Option<(f64, f64)> {
    let n = update.len();
    // Cut to n, so that the sums below have no bounds checks and are vectorised.
    let (old, orientation) = (&old[..n], &orientation[..n]);
    let projection = projection.map(|w| &w[..n]);
    let [uu, uo, ua, aa] = lane_dots([
        (update, update),
        (update, orientation),
        (update, old),
        (old, old),
    ]);
    let norm = uu.sqrt();
    if !(norm > 0.0 && norm.is_finite()) {
        return None;
    }
    let scale = (1.0 - damping) / if uo < 0.0 { -norm } else { norm };
    let mixed2 = damping * damping * aa + 2.0 * damping * scale * ua + scale * scale * uu;
    let mixed = mixed2.sqrt();
    if !(mixed > 0.0 && mixed.is_finite()) {
        return None;
    }
    let (d, s) = (damping / mixed, scale / mixed);
    for (u, a) in update.iter_mut().zip(old) {
        *u = d * a + s * *u;
    }
    let [change2, signed] = change_sums(update, old, projection);
    Some((change2.sqrt(), signed))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `evidence ⊙ Π_{j≠k} y_j` point by point, prefix times suffix as the engine multiplies.
    fn plain(y: &[f64], evidence: Option<&[f64]>, n: usize, d: usize) -> Vec<f64> {
        let mut g = vec![0.0; n * d];
        for i in 0..n {
            for k in 0..d {
                let mut prefix = evidence.map_or(1.0, |e| e[i]);
                for j in 0..k {
                    prefix *= y[j * n + i];
                }
                let mut suffix = 1.0;
                for j in (k + 1..d).rev() {
                    suffix *= y[j * n + i];
                }
                g[k * n + i] = prefix * suffix;
            }
        }
        g
    }

    #[test]
    fn leave_one_out_products_are_the_plain_ones_to_the_bit() {
        // Point counts with and without a tail past the last group of four, values spanning
        // many magnitudes and signs (kernel messages dip below zero), one exact zero.
        for n in [1usize, 3, 4, 5, 8, 47, 50] {
            for d in 2..=4 {
                let y: Vec<f64> = (0..n * d)
                    .map(|i| (((i * 7919) % 97) as f64 - 30.0) * 10f64.powi((i % 7) as i32 - 3))
                    .collect();
                let mut y = y;
                y[n / 2] = 0.0;
                let e: Vec<f64> = (0..n).map(|i| 0.5 + (i % 5) as f64).collect();
                for evidence in [None, Some(&e[..])] {
                    let mut g = vec![f64::NAN; n * d];
                    let mut suffix = vec![0.0; n];
                    leave_one_out(&y, evidence, n, d, 1.0, &mut suffix, &mut g);
                    let want = plain(&y, evidence, n, d);
                    let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
                    assert_eq!(bits(&g), bits(&want), "n = {n}, d = {d}");
                }
            }
        }
    }
}
