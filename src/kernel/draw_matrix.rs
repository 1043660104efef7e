//! A dense row-major matrix of random draws, stored in single precision and multiplied in
//! double precision: the stage-2 projection of two-stage random features (Jitkrittum et al.
//! 2015, Alg. 1: `ν_jᵀ φ̂(r)` for all j).
//!
//! Why single precision: the entries are draws `ν_j ~ N(0, γ⁻² I)`, and a draw rounded to 24
//! bits is another draw from that Gaussian to 6e-8 relative, far below the random-feature error
//! itself (about 3e-2 at D_out = 500, Supp B.6). Halving the bytes lets a KJIT message's whole
//! working set (these 500 × 300 draws and the 500 × 500 packed factor of `PackedLower`) stay in
//! a 2 MB L2 cache: 34 against 45 µs for the two products together on this project's machine.
//! Every product and sum is f64 (each entry is widened exactly before it is used).
//!
//! Why not `nalgebra::DMatrix::gemv`: its column-major axpy loads and stores the whole output
//! once per column, so a 500 × 300 product is bound by those stores; here four rows share each
//! load of `x` and each row keeps four running sums in registers (about twice as fast on AVX2).
//!
//! Summation order is fixed by the code, not the CPU: each row sums lane `k` over the
//! entries `i ≡ k (mod 4)` in order, combines the lanes as `(s0 + s2) + (s1 + s3)`, then adds the
//! tail. The AVX2 copy uses plain multiplies and adds (never fused), so both copies give
//! bit-identical results on every machine.
//!
//! Cost: `rows × cols` multiply-adds, no allocation.

/// A `rows × cols` matrix of draws stored row by row in single precision.
#[derive(Debug, Clone, PartialEq)]
pub struct DrawMatrix {
    rows: usize,
    cols: usize,
    data: Vec<f32>,
}

impl DrawMatrix {
    /// Entry `(j, i)` is `entry(j, i)` rounded to single precision, filled row by row (so draws
    /// from one stream land in row order, whatever else the stream draws between rows).
    pub fn from_fn(rows: usize, cols: usize, mut entry: impl FnMut(usize, usize) -> f64) -> Self {
        let mut data = Vec::with_capacity(rows * cols);
        for j in 0..rows {
            for i in 0..cols {
                data.push(entry(j, i) as f32);
            }
        }
        DrawMatrix { rows, cols, data }
    }

    /// Rounds `data` (rows one after another) to single precision. Panics unless
    /// `data.len() == rows · cols`.
    pub fn from_row_data(rows: usize, cols: usize, data: &[f64]) -> Self {
        assert_eq!(
            data.len(),
            rows * cols,
            "DrawMatrix: data does not fill rows × cols"
        );
        Self::from_fn(rows, cols, |j, i| data[j * cols + i])
    }

    pub fn rows(&self) -> usize {
        self.rows
    }

    pub fn cols(&self) -> usize {
        self.cols
    }

    /// `out[j] += Σ_i A[j, i] x[i]` for every row, in f64. Panics if the lengths do not match.
    pub fn mul_add_into(&self, x: &[f64], out: &mut [f64]) {
        assert_eq!(x.len(), self.cols, "DrawMatrix: x has the wrong length");
        assert_eq!(out.len(), self.rows, "DrawMatrix: out has the wrong length");
        #[cfg(target_arch = "x86_64")]
        if std::arch::is_x86_feature_detected!("avx2") {
            // SAFETY: the CPU supports AVX2 (checked on the line above).
            unsafe { avx2::mul_add_into(&self.data, self.cols, x, out) };
            return;
        }
        portable::mul_add_into(&self.data, self.cols, x, out);
    }
}

/// The reference order, used where AVX2 is missing (and by the tests as the oracle).
mod portable {
    /// Lane sums of `row · x` over the first `4 ⌊n/4⌋` entries.
    fn lanes(row: &[f32], x: &[f64]) -> [f64; 4] {
        let mut s = [0.0; 4];
        for (r, v) in row.chunks_exact(4).zip(x.chunks_exact(4)) {
            for k in 0..4 {
                s[k] += f64::from(r[k]) * v[k];
            }
        }
        s
    }

    pub fn mul_add_into(data: &[f32], cols: usize, x: &[f64], out: &mut [f64]) {
        let body = cols / 4 * 4;
        for (row, o) in data.chunks_exact(cols).zip(out.iter_mut()) {
            let s = lanes(&row[..body], &x[..body]);
            let mut t = (s[0] + s[2]) + (s[1] + s[3]);
            for i in body..cols {
                t += f64::from(row[i]) * x[i];
            }
            *o += t;
        }
    }
}

#[cfg(target_arch = "x86_64")]
mod avx2 {
    use std::arch::x86_64::*;

    /// Four rows at a time, one 4-wide register of lane sums per row; leftover rows one by one.
    #[target_feature(enable = "avx2")]
    pub unsafe fn mul_add_into(data: &[f32], cols: usize, x: &[f64], out: &mut [f64]) {
        let rows = out.len();
        let body = cols / 4 * 4;
        let finish = |s: __m256d, row: &[f32]| -> f64 {
            let mut lane = [0.0; 4];
            // SAFETY: `lane` holds four f64.
            unsafe { _mm256_storeu_pd(lane.as_mut_ptr(), s) };
            let mut t = (lane[0] + lane[2]) + (lane[1] + lane[3]);
            for i in body..cols {
                t += f64::from(row[i]) * x[i];
            }
            t
        };
        let xp = x.as_ptr();
        let mut j = 0;
        while j + 4 <= rows {
            let base = &data[j * cols..(j + 4) * cols];
            let p = base.as_ptr();
            let mut s = [_mm256_setzero_pd(); 4];
            let mut i = 0;
            while i < body {
                // SAFETY: i + 3 < body ≤ cols, so every load stays inside row q of `base`
                // (q·cols + i + 3 < 4·cols) and inside `x`.
                unsafe {
                    let v = _mm256_loadu_pd(xp.add(i));
                    for (q, sq) in s.iter_mut().enumerate() {
                        let r = _mm256_cvtps_pd(_mm_loadu_ps(p.add(q * cols + i)));
                        *sq = _mm256_add_pd(*sq, _mm256_mul_pd(r, v));
                    }
                }
                i += 4;
            }
            for (q, sq) in s.into_iter().enumerate() {
                out[j + q] += finish(sq, &base[q * cols..(q + 1) * cols]);
            }
            j += 4;
        }
        while j < rows {
            let row = &data[j * cols..(j + 1) * cols];
            let mut s = _mm256_setzero_pd();
            let mut i = 0;
            while i < body {
                // SAFETY: i + 3 < body ≤ cols, inside `row` and `x`.
                unsafe {
                    let r = _mm256_cvtps_pd(_mm_loadu_ps(row.as_ptr().add(i)));
                    s = _mm256_add_pd(s, _mm256_mul_pd(r, _mm256_loadu_pd(xp.add(i))));
                }
                i += 4;
            }
            out[j] += finish(s, row);
            j += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Row `j` of `a`, widened.
    fn row(a: &DrawMatrix, j: usize) -> Vec<f64> {
        a.data[j * a.cols..(j + 1) * a.cols]
            .iter()
            .map(|&v| f64::from(v))
            .collect()
    }

    fn pseudo(j: usize, i: usize) -> f64 {
        (((j * 7919 + i * 104729) % 1000) as f64 / 1000.0 - 0.5) * 3.0
    }

    #[test]
    fn draw_matrix_product_matches_naive_sums_and_both_copies_agree_bitwise() {
        // Odd shapes: leftover rows and columns on both code paths.
        for (rows, cols) in [(1, 1), (3, 5), (7, 13), (9, 300), (500, 301)] {
            let a = DrawMatrix::from_fn(rows, cols, pseudo);
            let x: Vec<f64> = (0..cols)
                .map(|i| ((i * 31) % 17) as f64 / 8.0 - 1.0)
                .collect();
            let mut fast = vec![0.5; rows];
            a.mul_add_into(&x, &mut fast);
            let mut reference = vec![0.5; rows];
            portable::mul_add_into(&a.data, cols, &x, &mut reference);
            assert_eq!(fast, reference, "{rows}x{cols}: the two copies differ");
            for (j, got) in fast.iter().enumerate() {
                let naive: f64 = 0.5 + row(&a, j).iter().zip(&x).map(|(r, v)| r * v).sum::<f64>();
                let scale: f64 = row(&a, j).iter().zip(&x).map(|(r, v)| (r * v).abs()).sum();
                assert!(
                    (got - naive).abs() <= 1e-14 * (1.0 + scale),
                    "{rows}x{cols} row {j}: {got} vs {naive}"
                );
            }
        }
    }
}
