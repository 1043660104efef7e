//! Dense Cholesky factorisation `A = L L^T` in place (lower triangle), used by the
//! regularised solves.
//!
//! Blocked left-looking (Crout) variant: for each panel of 64 columns, the update by all
//! previous columns (`A[j.., J] -= L[j.., :j0] L[J, :j0]^T`, almost all of the flops) runs in
//! parallel over groups of 4 panel columns, row-blocked so the 4 target columns stay in L1;
//! the panel itself is then factorised serially. The strict upper triangle is never written.
//!
//! Cost: `m^3 / 3` flops, no extra memory beyond O(m) per task.

use nalgebra::DMatrix;
use rayon::prelude::*;

/// Columns per panel.
const PANEL: usize = 64;
/// Columns updated together by one task.
const GROUP: usize = 4;
/// Rows per block in the panel update.
const ROWS: usize = 512;

/// Factorise the symmetric matrix `a` in place: on success its lower triangle (with the
/// diagonal) holds `L` with `A = L L^T`; the strict upper triangle is left untouched (still
/// `A`). Only the lower triangle of `a` is read.
///
/// Returns `Err(j)` with the first column whose pivot was not positive (or not finite);
/// the lower triangle is then partially overwritten, the strict upper triangle is intact.
/// Cost: `m^3 / 3` flops, parallel. Panics if `a` is not square.
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
    for j0 in (0..n).step_by(PANEL) {
        let j1 = (j0 + PANEL).min(n);
        let (left, right) = s.split_at_mut(j0 * n);
        let panel = &mut right[..(j1 - j0) * n];
        if j0 > 0 {
            let update = |(g, cols): (usize, &mut [f64])| {
                update_group(left, cols, j0 + g * GROUP, j0, n);
            };
            if (n - j0) * j0 * (j1 - j0) < 1 << 18 {
                panel.chunks_mut(GROUP * n).enumerate().for_each(update);
            } else {
                panel.par_chunks_mut(GROUP * n).enumerate().for_each(update);
            }
        }
        factor_panel(panel, j0, n)?;
    }
    Ok(())
}

/// Subtract the contributions of the finished columns `0..j0` (in `left`) from the group of
/// consecutive columns `c0..c0 + cols.len() / n` (in `cols`), rows `>=` each column's
/// diagonal only.
fn update_group(left: &[f64], cols: &mut [f64], c0: usize, j0: usize, n: usize) {
    let g = cols.len() / n;
    // fs[k * g + q] = L[c0 + q, k]: the multipliers, gathered once.
    let mut fs = vec![0.0; j0 * g];
    for k in 0..j0 {
        for q in 0..g {
            fs[k * g + q] = left[k * n + c0 + q];
        }
    }
    // Head rows c0 .. c0 + g - 1: each column only from its own diagonal down.
    let head_end = c0 + g - 1;
    for q in 0..g {
        let c = c0 + q;
        let col = &mut cols[q * n..(q + 1) * n];
        for k in 0..j0 {
            let f = fs[k * g + q];
            let lk = &left[k * n..(k + 1) * n];
            for i in c..head_end {
                col[i] -= f * lk[i];
            }
        }
    }
    // Tail rows head_end.. : all g columns together, row-blocked.
    if g == GROUP {
        let (c0s, rest) = cols.split_at_mut(n);
        let (c1s, rest) = rest.split_at_mut(n);
        let (c2s, c3s) = rest.split_at_mut(n);
        for r0 in (head_end..n).step_by(ROWS) {
            let r1 = (r0 + ROWS).min(n);
            let (a0, a1, a2, a3) = (
                &mut c0s[r0..r1],
                &mut c1s[r0..r1],
                &mut c2s[r0..r1],
                &mut c3s[r0..r1],
            );
            // Four previous columns at a time: 16 multiply-adds per 4 loads + 4 stores.
            let mut k = 0;
            while k + 4 <= j0 {
                let f = &fs[k * GROUP..(k + 4) * GROUP];
                let l0 = &left[k * n + r0..k * n + r1];
                let l1 = &left[(k + 1) * n + r0..(k + 1) * n + r1];
                let l2 = &left[(k + 2) * n + r0..(k + 2) * n + r1];
                let l3 = &left[(k + 3) * n + r0..(k + 3) * n + r1];
                let len = l0.len();
                let (a0, a1, a2, a3) = (
                    &mut a0[..len],
                    &mut a1[..len],
                    &mut a2[..len],
                    &mut a3[..len],
                );
                let (l1, l2, l3) = (&l1[..len], &l2[..len], &l3[..len]);
                for i in 0..len {
                    let (x0, x1, x2, x3) = (l0[i], l1[i], l2[i], l3[i]);
                    a0[i] -= f[0] * x0 + f[4] * x1 + f[8] * x2 + f[12] * x3;
                    a1[i] -= f[1] * x0 + f[5] * x1 + f[9] * x2 + f[13] * x3;
                    a2[i] -= f[2] * x0 + f[6] * x1 + f[10] * x2 + f[14] * x3;
                    a3[i] -= f[3] * x0 + f[7] * x1 + f[11] * x2 + f[15] * x3;
                }
                k += 4;
            }
            for k in k..j0 {
                let f = &fs[k * GROUP..k * GROUP + GROUP];
                let (f0, f1, f2, f3) = (f[0], f[1], f[2], f[3]);
                let lk = &left[k * n + r0..k * n + r1];
                for i in 0..lk.len() {
                    let x = lk[i];
                    a0[i] -= f0 * x;
                    a1[i] -= f1 * x;
                    a2[i] -= f2 * x;
                    a3[i] -= f3 * x;
                }
            }
        }
    } else {
        for q in 0..g {
            let col = &mut cols[q * n..(q + 1) * n];
            for k in 0..j0 {
                let f = fs[k * g + q];
                let lk = &left[k * n..(k + 1) * n];
                for (x, y) in col[head_end..].iter_mut().zip(&lk[head_end..]) {
                    *x -= f * y;
                }
            }
        }
    }
}

/// Left-looking factorisation of the panel columns `j0..j0 + panel.len() / n`, whose updates
/// from columns `< j0` are already applied.
fn factor_panel(panel: &mut [f64], j0: usize, n: usize) -> Result<(), usize> {
    let w = panel.len() / n;
    for q in 0..w {
        let c = j0 + q;
        let (done, rest) = panel.split_at_mut(q * n);
        let col = &mut rest[..n];
        for p in 0..q {
            let lp = &done[p * n..(p + 1) * n];
            let f = lp[c];
            for (x, y) in col[c..].iter_mut().zip(&lp[c..]) {
                *x -= f * y;
            }
        }
        let d = col[c];
        if !(d > 0.0 && d.is_finite()) {
            return Err(c);
        }
        let r = d.sqrt();
        col[c] = r;
        let inv = 1.0 / r;
        for x in &mut col[c + 1..] {
            *x *= inv;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spd(n: usize) -> DMatrix<f64> {
        let b = DMatrix::from_fn(n, n, |i, j| ((i * 31 + j * 17) % 23) as f64 / 23.0 - 0.5);
        &b * b.transpose() + DMatrix::identity(n, n) * (n as f64 * 0.1)
    }

    #[test]
    fn matches_reconstruction_and_keeps_upper() {
        for n in [1, 3, 4, 5, 63, 64, 65, 130, 257] {
            let a = spd(n);
            let mut f = a.clone();
            cholesky_in_place(&mut f).unwrap();
            let mut l = f.clone();
            l.fill_upper_triangle(0.0, 1);
            let err = (&l * l.transpose() - &a).amax();
            assert!(err < 1e-10 * a.amax(), "n = {n}: {err}");
            for j in 0..n {
                for i in 0..j {
                    assert_eq!(f[(i, j)], a[(i, j)], "upper triangle touched");
                }
            }
        }
    }

    #[test]
    fn reports_failing_column() {
        let mut a = DMatrix::from_row_slice(3, 3, &[1.0, 1.0, 0.0, 1.0, 1.0, 0.0, 0.0, 0.0, 1.0]);
        assert_eq!(cholesky_in_place(&mut a), Err(1));
        let mut nan = DMatrix::from_element(2, 2, f64::NAN);
        assert_eq!(cholesky_in_place(&mut nan), Err(0));
    }
}
