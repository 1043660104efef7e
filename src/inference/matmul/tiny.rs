//! Products whose left factor is tiny (at most 16 x 16: discrete BP's table at C <= 16), where
//! a general GEMM spends more on packing and edge handling than on the O(m k n) arithmetic: the
//! left matrix's columns are padded to whole AVX registers once per call, and every output
//! column is `Σ_l b[l] · a[:, l]` in FMA registers, two columns at a time.
//! Cost O(m k n) multiply-adds and one pass over `b`.

/// The largest left factor taken here (rows and columns).
pub const MAX_SIDE: usize = 16;

/// `out = a · b` as [`super::product`] when `a` is at most [`MAX_SIDE`] square and the processor
/// has AVX2 and FMA; false (nothing written) otherwise. The slices' lengths are checked by the
/// caller.
pub(super) fn product(out: &mut [f64], a: &[f64], b: &[f64], m: usize, k: usize, n: usize) -> bool {
    if m == 0 || m > MAX_SIDE || k > MAX_SIDE {
        return false;
    }
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") && std::arch::is_x86_feature_detected!("fma") {
        let (out, a, b) = (&mut out[..m * n], &a[..m * k], &b[..k * n]);
        // SAFETY: the processor has AVX2 and FMA (checked); the slices hold the packed
        // matrices (cut just above), which is all the kernel reads or writes.
        unsafe {
            match m.div_ceil(4) {
                1 => avx::product::<1>(out, a, b, m, k, n),
                2 => avx::product::<2>(out, a, b, m, k, n),
                3 => avx::product::<3>(out, a, b, m, k, n),
                _ => avx::product::<4>(out, a, b, m, k, n),
            }
        }
        return true;
    }
    false
}

#[cfg(target_arch = "x86_64")]
mod avx {
    use super::MAX_SIDE;
    use std::arch::x86_64::*;

    /// `R` registers per column (`4R >= m`).
    ///
    /// # Safety
    /// The processor has AVX2 and FMA; `out`, `a` and `b` hold exactly `m n`, `m k` and `k n`
    /// values, with `m <= 4R` and `k <= MAX_SIDE`.
    #[target_feature(enable = "avx2,fma")]
    pub(super) unsafe fn product<const R: usize>(
        out: &mut [f64],
        a: &[f64],
        b: &[f64],
        m: usize,
        k: usize,
        n: usize,
    ) {
        debug_assert!(m <= 4 * R && k <= MAX_SIDE);
        debug_assert!(out.len() == m * n && a.len() == m * k && b.len() == k * n);
        // a's columns, zero past row m.
        let mut columns = [_mm256_setzero_pd(); 4 * MAX_SIDE];
        for (l, column) in a.chunks_exact(m).enumerate() {
            for r in 0..R {
                let mut lanes = [0.0; 4];
                for (i, v) in lanes.iter_mut().enumerate() {
                    if let Some(&x) = column.get(4 * r + i) {
                        *v = x;
                    }
                }
                // SAFETY: `lanes` holds four values.
                columns[l * R + r] = unsafe { _mm256_loadu_pd(lanes.as_ptr()) };
            }
        }
        let columns = &columns[..k * R];
        // The last register's lanes that hold rows below m.
        let tail = m - 4 * (R - 1);
        let lane = |i: usize| if i < tail { -1i64 } else { 0 };
        let mask = _mm256_setr_epi64x(lane(0), lane(1), lane(2), lane(3));
        let store = |out: &mut [f64], acc: &[__m256d; R]| {
            let p = out.as_mut_ptr();
            for (r, &v) in acc.iter().enumerate().take(R - 1) {
                // SAFETY: rows 4r..4r+4 < 4(R-1) < m lie in this column of m values.
                unsafe { _mm256_storeu_pd(p.add(4 * r), v) };
            }
            // SAFETY: the mask writes only the rows below m.
            unsafe { _mm256_maskstore_pd(p.add(4 * (R - 1)), mask, acc[R - 1]) };
        };
        let mut pairs = b.chunks_exact(2 * k);
        let mut outs = out.chunks_exact_mut(2 * m);
        for (x, o) in (&mut pairs).zip(&mut outs) {
            let (x0, x1) = x.split_at(k);
            let mut acc0 = [_mm256_setzero_pd(); R];
            let mut acc1 = [_mm256_setzero_pd(); R];
            for ((c, &v0), &v1) in columns.chunks_exact(R).zip(x0).zip(x1) {
                let (b0, b1) = (_mm256_set1_pd(v0), _mm256_set1_pd(v1));
                for r in 0..R {
                    acc0[r] = _mm256_fmadd_pd(c[r], b0, acc0[r]);
                    acc1[r] = _mm256_fmadd_pd(c[r], b1, acc1[r]);
                }
            }
            let (o0, o1) = o.split_at_mut(m);
            store(o0, &acc0);
            store(o1, &acc1);
        }
        let (x, o) = (pairs.remainder(), outs.into_remainder());
        if !x.is_empty() {
            let mut acc = [_mm256_setzero_pd(); R];
            for (c, &v) in columns.chunks_exact(R).zip(x) {
                let bv = _mm256_set1_pd(v);
                for r in 0..R {
                    acc[r] = _mm256_fmadd_pd(c[r], bv, acc[r]);
                }
            }
            store(o, &acc);
        }
    }
}
