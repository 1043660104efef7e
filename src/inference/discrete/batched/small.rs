//! The chunk of [`super`]'s batched iteration for tables of at most 16 states, fused per message
//! in AVX registers: the same update (Yedidia, Freeman, Weiss 2003, eq. 4; tree-reweighted as
//! Wainwright, Jaakkola, Willsky 2003, eq. 11), with each state vector in `ceil(S / 4)` registers
//! whose last one is loaded under a mask (stored whole where the next vector overwrites the
//! spill), so a 10-state message takes no scalar tail, and the S x S table held as padded
//! columns for the whole chunk instead of a GEMM call per chunk. Sums run in another order than
//! [`super::StepInputs`]'s general path, so messages agree with it to rounding, not to the bit.
//! Cost O(S²) multiply-adds and O(S) otherwise per message.

use super::StepInputs;
use crate::inference::discrete::DiscreteMrf;

/// The most states taken here.
pub(super) const MAX_STATES: usize = 16;

impl StepInputs<'_> {
    /// [`StepInputs::chunk`] when the states fit and the processor has AVX2 and FMA; None
    /// (nothing written) otherwise.
    pub(super) fn small_chunk(
        &self,
        m0: usize,
        out: &mut [f64],
        change: &mut [f64],
        signed: &mut [f64],
    ) -> Option<std::result::Result<f64, usize>> {
        #[cfg(target_arch = "x86_64")]
        if let Some(registers) = registers(self.mrf.num_states()) {
            // SAFETY: `registers` checked the processor and that the states fit.
            return Some(unsafe {
                match registers {
                    1 => avx::chunk::<1>(self, m0, out, change, signed),
                    2 => avx::chunk::<2>(self, m0, out, change, signed),
                    3 => avx::chunk::<3>(self, m0, out, change, signed),
                    _ => avx::chunk::<4>(self, m0, out, change, signed),
                }
            });
        }
        None
    }
}

/// The AVX registers per state vector, `ceil(S / 4)`, when the kernel takes `s` states (1 to
/// [`MAX_STATES`]) on this processor (AVX2 and FMA); None otherwise.
#[cfg(target_arch = "x86_64")]
fn registers(s: usize) -> Option<usize> {
    ((1..=MAX_STATES).contains(&s)
        && std::arch::is_x86_feature_detected!("avx2")
        && std::arch::is_x86_feature_detected!("fma"))
    .then(|| s.div_ceil(4))
}

/// `out[k] = Π_u max(m_ut, MIN_POSITIVE)` for the nodes `t = first + k` (as many as `out`
/// holds, S values each), in registers when the states fit and the processor has AVX2 and FMA;
/// false (nothing written) otherwise. The same multiplications in the same order as the plain
/// loop, so the same bits.
pub(super) fn plain_node_products(
    mrf: &DiscreteMrf,
    messages: &[f64],
    first: usize,
    out: &mut [f64],
) -> bool {
    #[cfg(target_arch = "x86_64")]
    if let Some(registers) = registers(mrf.num_states()) {
        // SAFETY: `registers` checked the processor and that the states fit.
        unsafe {
            match registers {
                1 => avx::plain_node_products::<1>(mrf, messages, first, out),
                2 => avx::plain_node_products::<2>(mrf, messages, first, out),
                3 => avx::plain_node_products::<3>(mrf, messages, first, out),
                _ => avx::plain_node_products::<4>(mrf, messages, first, out),
            }
        }
        return true;
    }
    false
}

#[cfg(target_arch = "x86_64")]
mod avx {
    use super::super::{SCALE_HIGH, SCALE_LOW};
    use super::{DiscreteMrf, MAX_STATES, StepInputs};
    use std::arch::x86_64::*;

    /// A state vector of `S <= 4R` values in `R` registers, zero past S.
    type Vector<const R: usize> = [__m256d; R];

    /// Loads and stores of S values, the last register under a mask.
    #[derive(Clone, Copy)]
    struct Lanes {
        mask: __m256i,
    }

    impl Lanes {
        /// # Safety
        /// The processor has AVX2; `4(R - 1) < s <= 4R`.
        #[inline(always)]
        unsafe fn new<const R: usize>(s: usize) -> Self {
            let tail = s - 4 * (R - 1);
            let lane = |i: usize| if i < tail { -1i64 } else { 0 };
            // SAFETY: the caller's contract.
            let mask = unsafe { _mm256_setr_epi64x(lane(0), lane(1), lane(2), lane(3)) };
            Lanes { mask }
        }

        /// # Safety
        /// The processor has AVX2; `x` holds at least S values.
        #[inline(always)]
        unsafe fn load<const R: usize>(self, x: &[f64]) -> Vector<R> {
            let p = x.as_ptr();
            // SAFETY: the caller's contract; the mask reads only rows below S.
            std::array::from_fn(|r| unsafe {
                if r + 1 < R {
                    _mm256_loadu_pd(p.add(4 * r))
                } else {
                    _mm256_maskload_pd(p.add(4 * r), self.mask)
                }
            })
        }

        /// Stores the S values of `v` at the start of `x`. Where `x` holds 4R values or more
        /// the last register is stored whole (a masked store is slow on some processors): the
        /// caller writes the values past S afterwards.
        ///
        /// # Safety
        /// As [`Lanes::load`].
        #[inline(always)]
        unsafe fn store<const R: usize>(self, x: &mut [f64], v: &Vector<R>) {
            let whole = x.len() >= 4 * R;
            let p = x.as_mut_ptr();
            for (r, &v) in v.iter().enumerate() {
                // SAFETY: the caller's contract; whole registers only where x holds them, else
                // the mask writes only rows below S.
                unsafe {
                    if r + 1 < R || whole {
                        _mm256_storeu_pd(p.add(4 * r), v)
                    } else {
                        _mm256_maskstore_pd(p.add(4 * r), self.mask, v)
                    }
                }
            }
        }
    }

    /// The sum of the four lanes of `v`.
    ///
    /// # Safety
    /// The processor has AVX.
    #[inline(always)]
    unsafe fn lane_sum(v: __m256d) -> f64 {
        // SAFETY: the caller's contract.
        unsafe {
            let pair = _mm_add_pd(_mm256_castpd256_pd128(v), _mm256_extractf128_pd::<1>(v));
            _mm_cvtsd_f64(_mm_add_sd(pair, _mm_unpackhi_pd(pair, pair)))
        }
    }

    /// The table's columns (`column l` maps state l of the sender), zero past S, for one
    /// direction.
    struct Columns<const R: usize> {
        columns: [__m256d; 4 * MAX_STATES],
        mass: Vector<R>,
    }

    impl<const R: usize> Columns<R> {
        /// # Safety
        /// The processor has AVX2; `table` is S x S with S <= 4R, `mass` holds S values.
        #[inline(always)]
        unsafe fn new(table: &[f64], mass: &[f64], s: usize, lanes: Lanes) -> Self {
            // SAFETY (the intrinsics and loads here): the caller's contract; a column holds S
            // values.
            let mut columns = [unsafe { _mm256_setzero_pd() }; 4 * MAX_STATES];
            for (l, column) in table.chunks_exact(s).enumerate() {
                let v: Vector<R> = unsafe { lanes.load(column) };
                columns[l * R..(l + 1) * R].copy_from_slice(&v);
            }
            let mass = unsafe { lanes.load(mass) };
            Columns { columns, mass }
        }
    }

    /// # Safety
    /// The processor has AVX2 and FMA; `0 < S <= 4R <= 16`.
    #[target_feature(enable = "avx2,fma")]
    pub(super) unsafe fn chunk<const R: usize>(
        inputs: &StepInputs,
        m0: usize,
        out: &mut [f64],
        change: &mut [f64],
        signed: &mut [f64],
    ) -> std::result::Result<f64, usize> {
        let mrf = inputs.mrf;
        let (s, g) = (mrf.num_states(), &mrf.graph);
        debug_assert!(s > 4 * (R - 1) && s <= 4 * R);
        // SAFETY (the helpers below): the processor has AVX2 (this function's contract), the
        // table is S x S and every slice loaded or stored is one state vector of S values.
        let lanes = unsafe { Lanes::new::<R>(s) };
        let table = inputs.table;
        let forward =
            unsafe { Columns::<R>::new(table.forward.as_slice(), &table.forward_mass, s, lanes) };
        let backward = match (&table.backward, &table.backward_mass) {
            (Some(t), Some(w)) => Some(unsafe { Columns::<R>::new(t.as_slice(), w, s, lanes) }),
            _ => None,
        };
        let message = |m: usize| &inputs.messages[m * s..(m + 1) * s];
        // SAFETY (every load and store below): each slice is one state vector of S values.
        let projection: Vector<R> = unsafe { lanes.load(inputs.projection) };
        let (d, rho) = (inputs.damping, inputs.rho);
        let zero = _mm256_setzero_pd();
        let tiny = _mm256_set1_pd(f64::MIN_POSITIVE);
        let sign = _mm256_set1_pd(-0.0);
        let mut values = [0.0f64; 4 * MAX_STATES];
        let mut largest: f64 = 0.0;
        for j in 0..out.len() / s {
            let m = m0 + j;
            let (t, target) = (g.source(m), g.target(m));
            let columns = match &backward {
                Some(b) if m % 2 == 1 => b,
                _ => &forward,
            };
            // The sender product: P_t / m_st (tree-reweighted), or the leave-one-out product.
            let mut x: Vector<R> = if rho == 1.0 {
                let mut x = unsafe { lanes.load(&mrf.node_potentials[t * s..(t + 1) * s]) };
                for nb in g.neighbors(t).iter().filter(|nb| nb.node != target) {
                    let v: Vector<R> = unsafe { lanes.load(message(nb.incoming)) };
                    for (x, v) in x.iter_mut().zip(v) {
                        *x = _mm256_mul_pd(*x, v);
                    }
                }
                x
            } else {
                let p: Vector<R> = unsafe { lanes.load(&inputs.products[t * s..(t + 1) * s]) };
                let r: Vector<R> = unsafe { lanes.load(message(m ^ 1)) };
                std::array::from_fn(|k| _mm256_div_pd(p[k], _mm256_max_pd(r[k], tiny)))
            };
            // Largest value (a NaN lane keeps the running maximum, as the general path does)
            // and mass Σ x w.
            let mut top = zero;
            let mut mass = zero;
            for (&x, &w) in x.iter().zip(&columns.mass) {
                top = _mm256_max_pd(x, top);
                mass = _mm256_fmadd_pd(x, w, mass);
            }
            let top = {
                let half = _mm_max_pd(_mm256_castpd256_pd128(top), _mm256_extractf128_pd::<1>(top));
                _mm_cvtsd_f64(_mm_max_sd(_mm_unpackhi_pd(half, half), half))
            };
            let mut mass = unsafe { lane_sum(mass) };
            if !(SCALE_LOW..=SCALE_HIGH).contains(&top) && top > 0.0 && top.is_finite() {
                let inv = 1.0 / top;
                let v = _mm256_set1_pd(inv);
                x.iter_mut().for_each(|x| *x = _mm256_mul_pd(*x, v));
                mass *= inv;
            }
            if !(mass > 0.0 && mass.is_finite()) {
                return Err(m);
            }
            // The message before normalising: Σ_l x_l · column l, in two interleaved sums.
            unsafe { lanes.store(&mut values, &x) };
            let (mut even, mut odd) = ([zero; R], [zero; R]);
            let mut pairs = columns.columns[..s * R].chunks_exact(2 * R);
            for (c, v) in (&mut pairs).zip(values.chunks_exact(2)) {
                let (a, b) = (_mm256_set1_pd(v[0]), _mm256_set1_pd(v[1]));
                for ((e, o), (&ca, &cb)) in even.iter_mut().zip(&mut odd).zip(c.iter().zip(&c[R..]))
                {
                    *e = _mm256_fmadd_pd(ca, a, *e);
                    *o = _mm256_fmadd_pd(cb, b, *o);
                }
            }
            if s % 2 == 1 {
                let a = _mm256_set1_pd(values[s - 1]);
                for (e, &c) in even.iter_mut().zip(pairs.remainder()) {
                    *e = _mm256_fmadd_pd(c, a, *e);
                }
            }
            // Normalise and damp: new = d old + (1 - d) out / mass.
            let old: Vector<R> = unsafe { lanes.load(message(m)) };
            let (keep, scale) = (_mm256_set1_pd(d), _mm256_set1_pd((1.0 - d) / mass));
            let mut l1 = zero;
            let mut projected = zero;
            let next: Vector<R> = std::array::from_fn(|k| {
                let sent = _mm256_add_pd(even[k], odd[k]);
                let next = _mm256_fmadd_pd(keep, old[k], _mm256_mul_pd(scale, sent));
                let delta = _mm256_sub_pd(next, old[k]);
                l1 = _mm256_add_pd(l1, _mm256_andnot_pd(sign, delta));
                projected = _mm256_fmadd_pd(projection[k], delta, projected);
                next
            });
            // The messages after this one are written later, so its last register may spill.
            unsafe { lanes.store(&mut out[j * s..], &next) };
            let l1 = unsafe { lane_sum(l1) };
            change[j] = l1;
            signed[j] = unsafe { lane_sum(projected) };
            largest = largest.max(l1);
        }
        Ok(largest)
    }

    /// # Safety
    /// The processor has AVX2 and FMA; `0 < S <= 4R <= 16`; `out` holds whole nodes.
    #[target_feature(enable = "avx2,fma")]
    pub(super) unsafe fn plain_node_products<const R: usize>(
        mrf: &DiscreteMrf,
        messages: &[f64],
        first: usize,
        out: &mut [f64],
    ) {
        let s = mrf.num_states();
        debug_assert!(s > 4 * (R - 1) && s <= 4 * R);
        // SAFETY: the processor has AVX2 (this function's contract), 4(R - 1) < S <= 4R.
        let lanes = unsafe { Lanes::new::<R>(s) };
        let tiny = _mm256_set1_pd(f64::MIN_POSITIVE);
        for k in 0..out.len() / s {
            let mut product = [_mm256_set1_pd(1.0); R];
            for nb in mrf.graph.neighbors(first + k) {
                let m = &messages[nb.incoming * s..(nb.incoming + 1) * s];
                // SAFETY: one message of S values.
                let v: Vector<R> = unsafe { lanes.load(m) };
                for (p, v) in product.iter_mut().zip(v) {
                    // max(v, tiny) keeps tiny for a NaN v, as `at_least_min_positive` does.
                    *p = _mm256_mul_pd(*p, _mm256_max_pd(v, tiny));
                }
            }
            // SAFETY: the nodes from k on; the nodes after k are written later.
            unsafe { lanes.store(&mut out[k * s..], &product) };
        }
    }
}
