//! Dense Cholesky factorisation `A = L L^T` in place (lower triangle), used by the
//! regularised solves. Cost: `m^3 / 3` flops.

use nalgebra::DMatrix;

/// Factorise the symmetric matrix `a` in place: on success its lower triangle (with the
/// diagonal) holds `L` with `A = L L^T`; the strict upper triangle is left untouched (still
/// `A`). Only the lower triangle of `a` is read.
///
/// Returns `Err(j)` with the first column whose pivot was not positive (or not finite);
/// `a` is then partially overwritten. Cost: `m^3 / 3` flops. Panics if `a` is not square.
///
/// ```
/// use beliefscope::kernel::cholesky_in_place;
/// use nalgebra::DMatrix;
/// let mut a = DMatrix::from_row_slice(2, 2, &[4.0, 2.0, 2.0, 5.0]);
/// cholesky_in_place(&mut a).unwrap();
/// assert_eq!((a[(0, 0)], a[(1, 0)], a[(1, 1)]), (2.0, 1.0, 2.0));
/// ```
pub fn cholesky_in_place(a: &mut DMatrix<f64>) -> Result<(), usize> {
    assert!(a.is_square(), "cholesky_in_place needs a square matrix");
    let n = a.nrows();
    let s = a.as_mut_slice();
    for j in 0..n {
        let (left, right) = s.split_at_mut(j * n);
        let col_j = &mut right[..n];
        for k in 0..j {
            let col_k = &left[k * n..(k + 1) * n];
            let f = col_k[j];
            for (x, y) in col_j[j..].iter_mut().zip(&col_k[j..]) {
                *x -= f * y;
            }
        }
        let d = col_j[j];
        if !(d > 0.0 && d.is_finite()) {
            return Err(j);
        }
        let r = d.sqrt();
        col_j[j] = r;
        let inv = 1.0 / r;
        for x in &mut col_j[j + 1..] {
            *x *= inv;
        }
    }
    Ok(())
}
