//! Gram and cross-Gram matrices, tiled and parallel (rayon).
//!
//! * [`gram`]: `K_ij = k(x_i, x_j)`, `m x m`. Only the upper triangle is evaluated (each
//!   pair once, `m (m + 1) / 2` kernel evaluations) in 64 x 64 tiles that rayon distributes;
//!   every tile writes its block and the mirrored block. Memory: the `m^2` output only.
//! * [`cross_gram`]: rows = evaluation points, columns = support points, `n x m`
//!   evaluations, parallel over column blocks, tiled over rows.
//!
//! The kernel is dispatched once per call to a monomorphised closure (with a 1-D fast path),
//! whose values are bit-identical to [`Kernel::eval`].

use nalgebra::{DMatrix, DVector};
use rayon::prelude::*;

use super::error::{KernelError, Result};
use super::kernels::{Kernel, dot, laplacian_from_sq, rbf_from_sq, rbf_scale, sq_dist};
use super::points::Points;

/// Side of the square tiles of the symmetric Gram matrix.
const TILE: usize = 64;
/// Rows per block in the cross-Gram inner loop.
const ROW_BLOCK: usize = 512;
/// Below this many entries the work is done on the calling thread.
const PAR_THRESHOLD: usize = 4096;

/// A visitor receiving a monomorphised pair function `f(x, y) = k(x, y)`.
pub(crate) trait PairVisitor {
    type Out;
    fn visit<F: Fn(&[f64], &[f64]) -> f64 + Sync + Send + Copy>(self, f: F) -> Self::Out;
}

/// Squared distance for a fixed dimension `D` (unrolled; same summation order as
/// [`sq_dist`], hence bit-identical).
#[inline(always)]
fn sq_dist_fixed<const D: usize>(x: &[f64], y: &[f64]) -> f64 {
    let x: &[f64; D] = x.try_into().expect("point dimension");
    let y: &[f64; D] = y.try_into().expect("point dimension");
    let mut s = 0.0;
    for k in 0..D {
        let t = x[k] - y[k];
        s += t * t;
    }
    s
}

/// Dispatch a distance-based kernel `g(sq_dist)` to a closure specialised for small `d`.
fn with_sq_fn<V: PairVisitor, G: Fn(f64) -> f64 + Sync + Send + Copy>(
    d: usize,
    g: G,
    v: V,
) -> V::Out {
    match d {
        1 => v.visit(move |x: &[f64], y: &[f64]| g(sq_dist_fixed::<1>(x, y))),
        2 => v.visit(move |x: &[f64], y: &[f64]| g(sq_dist_fixed::<2>(x, y))),
        3 => v.visit(move |x: &[f64], y: &[f64]| g(sq_dist_fixed::<3>(x, y))),
        4 => v.visit(move |x: &[f64], y: &[f64]| g(sq_dist_fixed::<4>(x, y))),
        _ => v.visit(move |x: &[f64], y: &[f64]| g(sq_dist(x, y))),
    }
}

/// Dispatch `kernel` (for points of dimension `d`) to a specialised closure whose values
/// are bit-identical to [`Kernel::eval`].
pub(crate) fn with_pair_fn<V: PairVisitor>(kernel: &Kernel, d: usize, v: V) -> V::Out {
    match *kernel {
        Kernel::Rbf { sigma } => {
            let s = rbf_scale(sigma);
            with_sq_fn(d, move |sq| rbf_from_sq(sq, s), v)
        }
        Kernel::Laplacian { sigma } => {
            let inv = 1.0 / sigma;
            with_sq_fn(d, move |sq| laplacian_from_sq(sq, inv), v)
        }
        Kernel::Linear => v.visit(|x: &[f64], y: &[f64]| dot(x, y)),
        Kernel::VonMisesFisher { kappa } => {
            v.visit(move |x: &[f64], y: &[f64]| (kappa * dot(x, y)).exp())
        }
        _ => v.visit(|x: &[f64], y: &[f64]| kernel.eval(x, y)),
    }
}

/// Validate the kernel against the points' dimension and the points for finiteness.
pub(crate) fn check_inputs(kernel: &Kernel, x: &Points) -> Result<()> {
    kernel.check_dim(x.dim())?;
    x.check_finite()
}

/// An `r x c` zero matrix from `vec![0.0; r * c]`, which becomes `calloc`: large buffers
/// come straight from the OS as untouched zero pages, so the page faults happen in the
/// parallel workers that first write them, not in a serial `memset` (`DMatrix::zeros` may
/// compile to one).
pub(crate) fn zeros_lazy(r: usize, c: usize) -> DMatrix<f64> {
    DMatrix::from_vec(r, c, vec![0.0; r * c])
}

/// A raw pointer that may be shared between rayon tasks writing disjoint entries.
#[derive(Clone, Copy)]
struct SharedMut(*mut f64);
// SAFETY: only used by `gram`, where every task writes a disjoint set of entries of one
// allocation that outlives the parallel loop, and nobody reads them during the loop.
unsafe impl Send for SharedMut {}
unsafe impl Sync for SharedMut {}
impl SharedMut {
    /// Method access so closures capture the whole (Sync) wrapper, not the raw field.
    #[inline(always)]
    fn get(self) -> *mut f64 {
        self.0
    }
}

/// Symmetric Gram matrix `K_ij = k(x_i, x_j)` of `m` points, `m x m`.
///
/// Evaluates each unordered pair once (upper triangle, mirrored), tiled 64 x 64, in
/// parallel. Cost: `m (m + 1) / 2` kernel evaluations, `8 m^2` bytes. Errors on an invalid
/// kernel, a dimension mismatch with a product kernel, or non-finite coordinates.
///
/// ```
/// use beliefscope::kernel::{Kernel, Points, gram};
/// let x = [0.0, 1.0, 3.0];
/// let k = gram(&Kernel::rbf(1.0).unwrap(), &Points::from_slice(&x)).unwrap();
/// assert_eq!(k[(0, 0)], 1.0);
/// assert_eq!(k[(0, 1)], k[(1, 0)]);
/// assert!((k[(0, 1)] - (-0.5f64).exp()).abs() < 1e-15);
/// ```
pub fn gram(kernel: &Kernel, x: &Points) -> Result<DMatrix<f64>> {
    check_inputs(kernel, x)?;
    let m = x.len();
    let mut k = zeros_lazy(m, m);
    fill_gram(kernel, x, &mut k);
    Ok(k)
}

/// [`gram`] into an existing matrix, reusing its buffer when it already is `m x m`
/// (otherwise it is reallocated). Every entry is overwritten. Saves the allocation and the
/// first-touch page faults of a fresh `8 m^2`-byte buffer, e.g. when a GUI recomputes the
/// Gram matrix of the same points for a new bandwidth. On error `out` is unchanged.
///
/// ```
/// use beliefscope::kernel::{Kernel, Points, gram, gram_into};
/// use nalgebra::DMatrix;
/// let x = [0.0, 1.0, 3.0];
/// let p = Points::from_slice(&x);
/// let mut k = DMatrix::zeros(0, 0);
/// for sigma in [0.5, 1.0, 2.0] {
///     let kern = Kernel::rbf(sigma).unwrap();
///     gram_into(&kern, &p, &mut k).unwrap();
///     assert_eq!(k, gram(&kern, &p).unwrap());
/// }
/// ```
pub fn gram_into(kernel: &Kernel, x: &Points, out: &mut DMatrix<f64>) -> Result<()> {
    check_inputs(kernel, x)?;
    let m = x.len();
    if out.shape() != (m, m) {
        *out = zeros_lazy(m, m);
    }
    fill_gram(kernel, x, out);
    Ok(())
}

/// Fill the `m x m` matrix `k` (already the right shape) with the Gram matrix of `x`.
fn fill_gram(kernel: &Kernel, x: &Points, k: &mut DMatrix<f64>) {
    let m = x.len();
    assert_eq!(k.shape(), (m, m));
    if m == 0 {
        return;
    }
    struct Sym<'a, 'b> {
        x: &'a Points<'b>,
        out: SharedMut,
    }
    impl PairVisitor for Sym<'_, '_> {
        type Out = ();
        fn visit<F: Fn(&[f64], &[f64]) -> f64 + Sync + Send + Copy>(self, f: F) {
            let x = self.x;
            let out = self.out;
            let m = x.len();
            let nt = m.div_ceil(TILE);
            // Upper-triangular tiles (bi <= bj).
            let tiles: Vec<(usize, usize)> = (0..nt)
                .flat_map(|bj| (0..=bj).map(move |bi| (bi, bj)))
                .collect();
            let data = x.as_slice();
            let d = x.dim();
            let run = |&(bi, bj): &(usize, usize)| {
                let (i0, i1) = (bi * TILE, ((bi + 1) * TILE).min(m));
                let (j0, j1) = (bj * TILE, ((bj + 1) * TILE).min(m));
                let p = out.get();
                for (j, xj) in (j0..j1).zip(data[j0 * d..j1 * d].chunks_exact(d)) {
                    let iend = if bi == bj { j + 1 } else { i1 };
                    for (i, xi) in (i0..iend).zip(data[i0 * d..iend * d].chunks_exact(d)) {
                        let v = f(xi, xj);
                        // SAFETY: (i, j) with i <= j lies in exactly one upper tile (this one),
                        // and its mirror (j, i) is written only by this tile as well; both
                        // indices are < m so the writes are in bounds of the m x m buffer.
                        unsafe {
                            *p.add(j * m + i) = v;
                            *p.add(i * m + j) = v;
                        }
                    }
                }
            };
            if m * m < PAR_THRESHOLD {
                tiles.iter().for_each(run);
            } else {
                tiles.par_iter().for_each(run);
            }
        }
    }
    let out = SharedMut(k.as_mut_ptr());
    with_pair_fn(kernel, x.dim(), Sym { x, out });
}

/// Cross-Gram matrix `K_ij = k(e_i, s_j)`: rows = evaluation points `eval` (n), columns =
/// support points `support` (m), `n x m`.
///
/// Parallel over blocks of columns, tiled over rows. Cost: `n m` kernel evaluations.
/// Errors if the dimensions differ, on an invalid kernel, or non-finite coordinates.
///
/// ```
/// use beliefscope::kernel::{Kernel, Points, cross_gram};
/// let e = [0.0, 1.0];
/// let s = [0.0, 2.0, 4.0];
/// let k = cross_gram(&Kernel::Linear, &Points::from_slice(&e), &Points::from_slice(&s)).unwrap();
/// assert_eq!(k.shape(), (2, 3));
/// assert_eq!(k[(1, 2)], 4.0);
/// ```
pub fn cross_gram(kernel: &Kernel, eval: &Points, support: &Points) -> Result<DMatrix<f64>> {
    support.check_dim("cross_gram: support vs evaluation dimension", eval.dim())?;
    check_inputs(kernel, eval)?;
    support.check_finite()?;
    let (n, m) = (eval.len(), support.len());
    let mut k = zeros_lazy(n, m);
    if n == 0 || m == 0 {
        return Ok(k);
    }
    struct Cross<'a, 'b, 'c> {
        eval: &'a Points<'b>,
        support: &'a Points<'c>,
        out: &'a mut [f64],
    }
    impl PairVisitor for Cross<'_, '_, '_> {
        type Out = ();
        fn visit<F: Fn(&[f64], &[f64]) -> f64 + Sync + Send + Copy>(self, f: F) {
            let (eval, support) = (self.eval, self.support);
            let n = eval.len();
            let m = support.len();
            // Column blocks: enough for load balancing, each at least a few columns.
            let cols_per_block = (m / (8 * rayon::current_num_threads().max(1))).clamp(1, 64);
            let (edata, sdata, d) = (eval.as_slice(), support.as_slice(), eval.dim());
            let run = |(b, chunk): (usize, &mut [f64])| {
                let j0 = b * cols_per_block;
                let ncols = chunk.len() / n;
                let sup = sdata[j0 * d..(j0 + ncols) * d].chunks_exact(d);
                for r0 in (0..n).step_by(ROW_BLOCK) {
                    let r1 = (r0 + ROW_BLOCK).min(n);
                    let rows = &edata[r0 * d..r1 * d];
                    for (col, sj) in chunk.chunks_exact_mut(n).zip(sup.clone()) {
                        for (v, ei) in col[r0..r1].iter_mut().zip(rows.chunks_exact(d)) {
                            *v = f(ei, sj);
                        }
                    }
                }
            };
            if n * m < PAR_THRESHOLD {
                self.out
                    .chunks_mut(n * cols_per_block)
                    .enumerate()
                    .for_each(run);
            } else {
                self.out
                    .par_chunks_mut(n * cols_per_block)
                    .enumerate()
                    .for_each(run);
            }
        }
    }
    with_pair_fn(
        kernel,
        eval.dim(),
        Cross {
            eval,
            support,
            out: k.as_mut_slice(),
        },
    );
    Ok(k)
}

/// The diagonal `k(x_i, x_i)` of the Gram matrix. O(m d).
pub fn gram_diagonal(kernel: &Kernel, x: &Points) -> Result<DVector<f64>> {
    check_inputs(kernel, x)?;
    Ok(DVector::from_iterator(
        x.len(),
        x.rows().map(|r| kernel.eval(r, r)),
    ))
}

/// The kernel column `k(x_i, y)` for all points `x_i` (length m), e.g. the vector
/// `k_X(y)` of a kernel BP message evaluation. O(m d), parallel for large m.
pub fn kernel_column(kernel: &Kernel, x: &Points, y: &[f64]) -> Result<DVector<f64>> {
    check_inputs(kernel, x)?;
    if y.len() != x.dim() {
        return Err(KernelError::DimensionMismatch {
            what: "kernel_column: query point dimension",
            expected: x.dim(),
            got: y.len(),
        });
    }
    super::error::check_finite("query point", y)?;
    let mut out = DVector::<f64>::zeros(x.len());
    struct Col<'a, 'b> {
        x: &'a Points<'b>,
        y: &'a [f64],
        out: &'a mut [f64],
    }
    impl PairVisitor for Col<'_, '_> {
        type Out = ();
        fn visit<F: Fn(&[f64], &[f64]) -> f64 + Sync + Send + Copy>(self, f: F) {
            let (x, y) = (self.x, self.y);
            let d = x.dim();
            let fill = |(b, chunk): (usize, &mut [f64])| {
                let rows = &x.as_slice()[b * 1024 * d..(b * 1024 + chunk.len()) * d];
                for (v, xi) in chunk.iter_mut().zip(rows.chunks_exact(d)) {
                    *v = f(xi, y);
                }
            };
            if self.out.len() < PAR_THRESHOLD {
                self.out.chunks_mut(1024).enumerate().for_each(fill);
            } else {
                self.out.par_chunks_mut(1024).enumerate().for_each(fill);
            }
        }
    }
    with_pair_fn(
        kernel,
        x.dim(),
        Col {
            x,
            y,
            out: out.as_mut_slice(),
        },
    );
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn naive(kernel: &Kernel, a: &Points, b: &Points) -> DMatrix<f64> {
        DMatrix::from_fn(a.len(), b.len(), |i, j| kernel.eval(a.row(i), b.row(j)))
    }

    #[test]
    fn matches_naive_bitwise() {
        let data: Vec<f64> = (0..2 * 150)
            .map(|i| ((i * 37 % 101) as f64) * 0.03)
            .collect();
        let p2 = Points::from_row_major(&data, 2).unwrap();
        let p1 = Points::from_slice(&data[..130]);
        for k in [
            Kernel::rbf(0.7).unwrap(),
            Kernel::laplacian(0.5).unwrap(),
            Kernel::Linear,
            Kernel::polynomial(1.0, 2).unwrap(),
            Kernel::von_mises_fisher(0.3).unwrap(),
            Kernel::Delta,
        ] {
            for p in [&p1, &p2] {
                let g = gram(&k, p).unwrap();
                assert_eq!(g, naive(&k, p, p), "{k:?}");
                let e = p.select(&[3, 1, 4, 1, 5]).unwrap();
                assert_eq!(cross_gram(&k, &e, p).unwrap(), naive(&k, &e, p));
                let col = kernel_column(&k, p, p.row(7)).unwrap();
                assert_eq!(col.as_slice(), naive(&k, p, p).column(7).as_slice());
            }
        }
    }

    #[test]
    fn input_errors() {
        let k = Kernel::rbf(1.0).unwrap();
        let bad = [0.0, f64::NAN];
        assert!(matches!(
            gram(&k, &Points::from_slice(&bad)),
            Err(KernelError::NonFinite { index: 1, .. })
        ));
        let a = [0.0, 1.0];
        let b = [0.0, 1.0, 2.0, 3.0];
        let pb = Points::from_row_major(&b, 2).unwrap();
        assert!(cross_gram(&k, &Points::from_slice(&a), &pb).is_err());
        assert!(gram(&Kernel::Rbf { sigma: 0.0 }, &pb).is_err());
        assert_eq!(gram(&k, &Points::from_slice(&[])).unwrap().shape(), (0, 0));
    }
}
