//! A light view of a point set: `n` points of dimension `d`, stored row-major so that each
//! point is a contiguous `&[f64]`.
//!
//! Wrapping a 1-D slice or a row-major buffer borrows it (O(1)); wrapping an nalgebra
//! `DMatrix` (column-major, one sample per row) copies it once into row-major order (O(n d)),
//! which is negligible next to any O(n^2) kernel computation.

use std::borrow::Cow;

use nalgebra::DMatrix;

use super::error::{KernelError, Result, check_finite};

/// `n` points of dimension `d`, one point per row, row-major.
#[derive(Debug, Clone, PartialEq)]
pub struct Points<'a> {
    data: Cow<'a, [f64]>,
    n: usize,
    d: usize,
}

impl<'a> Points<'a> {
    /// Wrap 1-D data (`d = 1`) without copying. O(1).
    ///
    /// ```
    /// use beliefscope::kernel::Points;
    /// let x = [1.0, 2.0, 3.0];
    /// let p = Points::from_slice(&x);
    /// assert_eq!((p.len(), p.dim()), (3, 1));
    /// assert_eq!(p.row(2), &[3.0]);
    /// ```
    pub fn from_slice(values: &'a [f64]) -> Self {
        Points {
            data: Cow::Borrowed(values),
            n: values.len(),
            d: 1,
        }
    }

    /// Wrap a row-major buffer of `values.len() / d` points of dimension `d`, without copying.
    ///
    /// Errors if `d == 0` or `values.len()` is not a multiple of `d`. O(1).
    pub fn from_row_major(values: &'a [f64], d: usize) -> Result<Self> {
        if d == 0 {
            return Err(KernelError::DimensionMismatch {
                what: "row-major points: dimension (must be >= 1)",
                expected: 1,
                got: 0,
            });
        }
        if !values.len().is_multiple_of(d) {
            return Err(KernelError::DimensionMismatch {
                what: "row-major points: buffer length (must be a multiple of the dimension)",
                expected: values.len().next_multiple_of(d),
                got: values.len(),
            });
        }
        Ok(Points {
            data: Cow::Borrowed(values),
            n: values.len() / d,
            d,
        })
    }

    /// Copy the rows of an nalgebra matrix (one sample per row, `d = ncols`). O(n d).
    ///
    /// ```
    /// use beliefscope::kernel::Points;
    /// use nalgebra::DMatrix;
    /// let m = DMatrix::from_row_slice(2, 3, &[1.0, 2.0, 3.0, 4.0, 5.0, 6.0]);
    /// let p = Points::from_matrix(&m);
    /// assert_eq!(p.row(1), &[4.0, 5.0, 6.0]);
    /// ```
    pub fn from_matrix(m: &DMatrix<f64>) -> Points<'static> {
        let (n, d) = m.shape();
        let mut data = Vec::with_capacity(n * d);
        for i in 0..n {
            data.extend(m.row(i).iter());
        }
        Points {
            data: Cow::Owned(data),
            n,
            d,
        }
    }

    /// Take ownership of a row-major buffer. Same checks as [`Points::from_row_major`].
    pub fn from_vec(values: Vec<f64>, d: usize) -> Result<Points<'static>> {
        let n = Points::from_row_major(&values, d)?.n;
        Ok(Points {
            data: Cow::Owned(values),
            n,
            d,
        })
    }

    /// Number of points `n`.
    pub fn len(&self) -> usize {
        self.n
    }

    /// Whether there are no points.
    pub fn is_empty(&self) -> bool {
        self.n == 0
    }

    /// Dimension `d` of each point.
    pub fn dim(&self) -> usize {
        self.d
    }

    /// Point `i` as a contiguous slice of length `d`. Panics if `i >= len()`.
    #[inline]
    pub fn row(&self, i: usize) -> &[f64] {
        &self.data[i * self.d..(i + 1) * self.d]
    }

    /// The row-major buffer (`n * d` values).
    pub fn as_slice(&self) -> &[f64] {
        &self.data
    }

    /// Iterate over the points.
    pub fn rows(&self) -> impl ExactSizeIterator<Item = &[f64]> + '_ {
        // `chunks_exact(0)` panics, so handle d = 0 (only possible for empty sets) up front.
        self.data.chunks_exact(self.d.max(1))
    }

    /// An owned copy of the points at `indices` (in that order). O(k d).
    pub fn select(&self, indices: &[usize]) -> Result<Points<'static>> {
        let mut data = Vec::with_capacity(indices.len() * self.d);
        for &i in indices {
            if i >= self.n {
                return Err(KernelError::IndexOutOfRange {
                    what: "point selection",
                    index: i,
                    len: self.n,
                });
            }
            data.extend_from_slice(self.row(i));
        }
        Ok(Points {
            data: Cow::Owned(data),
            n: indices.len(),
            d: self.d,
        })
    }

    /// An owned copy with `'static` lifetime.
    pub fn to_owned_points(&self) -> Points<'static> {
        Points {
            data: Cow::Owned(self.data.to_vec()),
            n: self.n,
            d: self.d,
        }
    }

    /// The points as an `n x d` nalgebra matrix (one sample per row). O(n d).
    pub fn to_matrix(&self) -> DMatrix<f64> {
        DMatrix::from_row_slice(self.n, self.d, &self.data)
    }

    /// Error if any coordinate is NaN or infinite. O(n d).
    pub fn check_finite(&self) -> Result<()> {
        check_finite("points", &self.data)
    }

    /// Error unless every point has dimension `d`.
    pub fn check_dim(&self, what: &'static str, d: usize) -> Result<()> {
        if self.d == d {
            Ok(())
        } else {
            Err(KernelError::DimensionMismatch {
                what,
                expected: d,
                got: self.d,
            })
        }
    }
}

impl<'a> From<&'a [f64]> for Points<'a> {
    fn from(values: &'a [f64]) -> Self {
        Points::from_slice(values)
    }
}

impl<'a> From<&'a Vec<f64>> for Points<'a> {
    fn from(values: &'a Vec<f64>) -> Self {
        Points::from_slice(values)
    }
}

impl From<&DMatrix<f64>> for Points<'static> {
    fn from(m: &DMatrix<f64>) -> Self {
        Points::from_matrix(m)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn views_and_selection() {
        let buf = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0];
        let p = Points::from_row_major(&buf, 2).unwrap();
        assert_eq!(p.len(), 3);
        assert_eq!(p.row(1), &[3.0, 4.0]);
        assert!(Points::from_row_major(&buf, 4).is_err());
        assert!(Points::from_row_major(&buf, 0).is_err());
        let s = p.select(&[2, 0]).unwrap();
        assert_eq!(s.as_slice(), &[5.0, 6.0, 1.0, 2.0]);
        assert!(p.select(&[3]).is_err());
        let m = p.to_matrix();
        assert_eq!(Points::from_matrix(&m), p.to_owned_points());
        assert_eq!(p.rows().count(), 3);
        let bad = [1.0, f64::NAN];
        assert!(Points::from_slice(&bad).check_finite().is_err());
    }
}
