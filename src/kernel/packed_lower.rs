//! A lower-triangular factor packed column by column, and the squared norm of `L⁻¹ b`: the
//! predictive variance `xᵀ P⁻¹ x = ‖L⁻¹ x‖²` of Bayesian linear regression with posterior
//! precision `P = L Lᵀ` (Jitkrittum et al. 2015, eq. 15).
//!
//! Why not `nalgebra`'s `solve_lower_triangular`: it updates the right-hand side once per
//! column, so its loads and stores dominate; here four columns update it at once (a quarter of
//! the passes), and the packing keeps only the `n(n+1)/2` entries that are read.
//!
//! The subtraction order is that of column-by-column forward substitution
//! (`y_i ← (((y_i − l_{i,k} y_k) − l_{i,k+1} y_{k+1}) − …)`), so the result is bit-identical to
//! the unblocked solve, on either code copy (the AVX2 copy only widens the loops; no fused
//! multiply-adds).
//!
//! Cost: `n²/2` multiply-adds; packing `n²/2` copies.

use nalgebra::DMatrix;

/// Columns eliminated together.
const BLOCK: usize = 4;

/// `L` (`n × n`, lower triangular), column `k` stored as rows `k..n`.
#[derive(Debug, Clone, PartialEq)]
pub struct PackedLower {
    n: usize,
    data: Vec<f64>,
    /// Offset of column `k` in `data`.
    starts: Vec<usize>,
}

impl PackedLower {
    /// Packs the lower triangle (with the diagonal) of `l`; the strict upper triangle is not
    /// read. Panics if `l` is not square.
    pub fn from_lower(l: &DMatrix<f64>) -> PackedLower {
        assert_eq!(
            l.nrows(),
            l.ncols(),
            "PackedLower: the factor must be square"
        );
        let n = l.nrows();
        let mut data = Vec::with_capacity(n * (n + 1) / 2);
        let mut starts = Vec::with_capacity(n);
        for k in 0..n {
            starts.push(data.len());
            data.extend_from_slice(&l.column(k).as_slice()[k..]);
        }
        PackedLower { n, data, starts }
    }

    /// Column `k`, rows `k..n`.
    fn column(&self, k: usize) -> &[f64] {
        &self.data[self.starts[k]..self.starts[k] + (self.n - k)]
    }

    /// Solves `L y = b` into `y` and returns `‖y‖²` (infinite when a diagonal entry is zero).
    /// Panics if the lengths do not match.
    pub fn solve_norm_squared(&self, b: &[f64], y: &mut [f64]) -> f64 {
        assert_eq!(b.len(), self.n, "PackedLower: b has the wrong length");
        assert_eq!(y.len(), self.n, "PackedLower: y has the wrong length");
        y.copy_from_slice(b);
        #[cfg(target_arch = "x86_64")]
        if std::arch::is_x86_feature_detected!("avx2") {
            // SAFETY: the CPU supports AVX2 (checked on the line above).
            unsafe { self.forward_substitute_avx2(y) };
            return y.iter().map(|v| v * v).sum();
        }
        self.forward_substitute(y);
        y.iter().map(|v| v * v).sum()
    }

    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2")]
    fn forward_substitute_avx2(&self, y: &mut [f64]) {
        self.forward_substitute(y)
    }

    #[inline(always)]
    fn forward_substitute(&self, y: &mut [f64]) {
        let n = self.n;
        let mut k = 0;
        while k < n {
            let width = (n - k).min(BLOCK);
            // The diagonal block, column by column.
            for j in k..k + width {
                let col = self.column(j);
                let yj = y[j] / col[0];
                y[j] = yj;
                for i in j + 1..k + width {
                    y[i] -= yj * col[i - j];
                }
            }
            let first = k + width;
            if width == BLOCK && first < n {
                let c0 = &self.column(k)[first - k..];
                let c1 = &self.column(k + 1)[first - k - 1..];
                let c2 = &self.column(k + 2)[first - k - 2..];
                let c3 = &self.column(k + 3)[first - k - 3..];
                let (y0, y1, y2, y3) = (y[k], y[k + 1], y[k + 2], y[k + 3]);
                for ((((t, a), b), c), d) in y[first..].iter_mut().zip(c0).zip(c1).zip(c2).zip(c3) {
                    *t = (((*t - y0 * a) - y1 * b) - y2 * c) - y3 * d;
                }
            }
            k = first;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn packed_solve_is_bit_identical_to_nalgebra_forward_substitution() {
        for n in [1, 2, 3, 4, 5, 9, 64, 131] {
            // A well-conditioned lower factor with an uneven diagonal.
            let l = DMatrix::from_fn(n, n, |i, j| match i.cmp(&j) {
                std::cmp::Ordering::Less => 99.0, // never read
                std::cmp::Ordering::Equal => 1.0 + (i % 5) as f64 * 0.7,
                std::cmp::Ordering::Greater => (((i * 13 + j * 7) % 11) as f64 - 5.0) / 20.0,
            });
            let b: Vec<f64> = (0..n).map(|i| ((i * 37) % 23) as f64 / 7.0 - 1.5).collect();
            let packed = PackedLower::from_lower(&l);
            let mut y = vec![0.0; n];
            let norm2 = packed.solve_norm_squared(&b, &mut y);
            let want = l
                .solve_lower_triangular(&nalgebra::DVector::from_column_slice(&b))
                .unwrap();
            assert_eq!(y, want.as_slice(), "n = {n}");
            // The portable copy (the one a machine without AVX2 runs) gives the same bits.
            let mut portable = b.clone();
            packed.forward_substitute(&mut portable);
            assert_eq!(portable, y, "n = {n}: the two copies differ");
            assert_eq!(norm2, y.iter().map(|v| v * v).sum::<f64>());
            // And L y reproduces b.
            let back = &l.lower_triangle() * &want;
            for i in 0..n {
                assert!((back[i] - b[i]).abs() < 1e-12, "n = {n}, row {i}");
            }
        }
    }
}
