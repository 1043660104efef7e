//! `out = a * b` for column-major matrices, split over column blocks with rayon (nalgebra's
//! product is single-threaded). Cost O(rows(a) · cols(a) · cols(b)) / threads; no allocation.

use nalgebra::{DMatrix, DMatrixView, DMatrixViewMut};
use rayon::prelude::*;

/// Columns per parallel block: large enough for an efficient kernel, small enough to balance.
const BLOCK_COLUMNS: usize = 512;

/// `out[:, ..] = a * b` where `b` is a column-major slice with `a.ncols()` rows and `out` a
/// column-major slice with `a.nrows()` rows; both hold the same number of columns.
pub fn par_gemm(a: &DMatrix<f64>, b: &[f64], out: &mut [f64]) {
    let (rows, inner) = a.shape();
    if rows == 0 || inner == 0 {
        out.iter_mut().for_each(|o| *o = 0.0);
        return;
    }
    let cols = b.len() / inner;
    debug_assert_eq!(out.len(), rows * cols);
    out.par_chunks_mut(rows * BLOCK_COLUMNS)
        .zip(b.par_chunks(inner * BLOCK_COLUMNS))
        .for_each(|(o, bb)| {
            let n = bb.len() / inner;
            let bv = DMatrixView::from_slice(bb, inner, n);
            let mut ov = DMatrixViewMut::from_slice(o, rows, n);
            ov.gemm(1.0, a, &bv, 0.0);
        });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matches_the_serial_product() {
        let a = DMatrix::from_fn(7, 5, |i, j| (i * 3 + j) as f64 * 0.1 - 1.0);
        let b = DMatrix::from_fn(5, 1300, |i, j| ((i + 2 * j) % 11) as f64);
        let mut out = vec![0.0; 7 * 1300];
        par_gemm(&a, b.as_slice(), &mut out);
        let want = &a * &b;
        assert!(
            want.as_slice()
                .iter()
                .zip(&out)
                .all(|(x, y)| (x - y).abs() < 1e-12)
        );
    }
}
