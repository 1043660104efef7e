//! Positive-definite kernels: Gaussian RBF, Laplacian, linear, polynomial, von Mises-Fisher,
//! delta and products over column groups.
//!
//! Bandwidth convention (Song et al. 2010/2011 write `exp(-s ||x - y||^2)`):
//! `k_rbf(x, y) = exp(-||x - y||^2 / (2 sigma^2))`, i.e. `s = 1 / (2 sigma^2)`
//! ([`s_from_sigma`], [`sigma_from_s`]).
//!
//! Cost of one evaluation: O(d) (O(|columns|) per product factor).

use serde::{Deserialize, Serialize};

use super::error::{KernelError, Result};
use super::params::{KAPPA, POLY_DEGREE, POLY_OFFSET, ParamSpec, RBF_S, SIGMA};

/// A positive (semi-)definite kernel on `R^d`.
///
/// Build kernels with the validating constructors ([`Kernel::rbf`], ...) or call
/// [`Kernel::check`] before use; [`Kernel::eval`] itself does no validation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum Kernel {
    /// Gaussian RBF `exp(-||x - y||^2 / (2 sigma^2))`; `sigma` in data units ([`SIGMA`]).
    Rbf {
        /// Bandwidth, data units.
        sigma: f64,
    },
    /// Laplacian `exp(-||x - y|| / sigma)` (Euclidean norm); `sigma` in data units.
    Laplacian {
        /// Bandwidth, data units.
        sigma: f64,
    },
    /// Linear `x . y`.
    Linear,
    /// Polynomial `(x . y + c)^degree`, `c >= 0` ([`POLY_OFFSET`], [`POLY_DEGREE`]).
    Polynomial {
        /// Offset, data units squared.
        c: f64,
        /// Integer degree `>= 1`.
        degree: u32,
    },
    /// von Mises-Fisher `exp(kappa <x, y>)` for points on the unit sphere ([`KAPPA`]).
    /// Positive definite for any `kappa > 0` (it is `exp` of a linear kernel). The points
    /// are not renormalised: pass unit vectors.
    VonMisesFisher {
        /// Concentration, dimensionless.
        kappa: f64,
    },
    /// Delta kernel `1[x = y]` (exact equality of all coordinates) for finite sets.
    Delta,
    /// Product `prod_f k_f(x[columns_f], y[columns_f])` over column groups.
    Product(Vec<ProductFactor>),
}

/// One factor of a [`Kernel::Product`]: a kernel applied to a group of columns.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ProductFactor {
    /// Column indices (into the point) that this factor sees, in order.
    pub columns: Vec<usize>,
    /// The factor's kernel.
    pub kernel: Kernel,
}

/// The papers' RBF scale `s = 1 / (2 sigma^2)` for a bandwidth `sigma`.
///
/// ```
/// use beliefscope::kernel::{s_from_sigma, sigma_from_s};
/// assert_eq!(s_from_sigma(1.0), 0.5);
/// assert!((sigma_from_s(s_from_sigma(0.3)) - 0.3).abs() < 1e-15);
/// ```
pub fn s_from_sigma(sigma: f64) -> f64 {
    0.5 / (sigma * sigma)
}

/// The bandwidth `sigma = 1 / sqrt(2 s)` for the papers' RBF scale `s`.
pub fn sigma_from_s(s: f64) -> f64 {
    (0.5 / s).sqrt()
}

// ---- shared scalar formulas: the fast paths in gram.rs / incomplete_cholesky.rs use the
// ---- very same functions so their values are bit-identical to `Kernel::eval`.

#[inline(always)]
pub(crate) fn sq_dist(x: &[f64], y: &[f64]) -> f64 {
    let mut s = 0.0;
    for (a, b) in x.iter().zip(y) {
        let t = a - b;
        s += t * t;
    }
    s
}

#[inline(always)]
pub(crate) fn dot(x: &[f64], y: &[f64]) -> f64 {
    let mut s = 0.0;
    for (a, b) in x.iter().zip(y) {
        s += a * b;
    }
    s
}

/// `exp(-sq * inv_two_sigma2)` with `inv_two_sigma2 = 0.5 / sigma^2`.
#[inline(always)]
pub(crate) fn rbf_from_sq(sq: f64, inv_two_sigma2: f64) -> f64 {
    exp_of_negative(-sq * inv_two_sigma2)
}

/// Below this `exp` is exactly 0 (the smallest subnormal is `exp(-744.44)`).
const EXP_IS_ZERO_BELOW: f64 = -746.0;

/// `x.exp()`, answering the underflow to 0 without calling `exp`: glibc takes a slow path
/// there (it raises the underflow flag and sets errno), and the far pairs of a narrow kernel
/// land there by the million in a bandwidth search. The same value for every `x`.
#[inline(always)]
pub(crate) fn exp_of_negative(x: f64) -> f64 {
    if x < EXP_IS_ZERO_BELOW { 0.0 } else { x.exp() }
}

#[inline(always)]
pub(crate) fn rbf_scale(sigma: f64) -> f64 {
    0.5 / (sigma * sigma)
}

#[inline(always)]
pub(crate) fn laplacian_from_sq(sq: f64, inv_sigma: f64) -> f64 {
    exp_of_negative(-sq.sqrt() * inv_sigma)
}

/// Access to the statistics a base kernel needs, over all columns or a column group.
trait Pair {
    fn sq_dist(&self) -> f64;
    fn dot(&self) -> f64;
    fn equal(&self) -> bool;
}

struct Full<'a>(&'a [f64], &'a [f64]);

impl Pair for Full<'_> {
    #[inline]
    fn sq_dist(&self) -> f64 {
        sq_dist(self.0, self.1)
    }
    #[inline]
    fn dot(&self) -> f64 {
        dot(self.0, self.1)
    }
    #[inline]
    fn equal(&self) -> bool {
        self.0 == self.1
    }
}

struct Sel<'a>(&'a [f64], &'a [f64], &'a [usize]);

impl Pair for Sel<'_> {
    #[inline]
    fn sq_dist(&self) -> f64 {
        let mut s = 0.0;
        for &c in self.2 {
            let t = self.0[c] - self.1[c];
            s += t * t;
        }
        s
    }
    #[inline]
    fn dot(&self) -> f64 {
        let mut s = 0.0;
        for &c in self.2 {
            s += self.0[c] * self.1[c];
        }
        s
    }
    #[inline]
    fn equal(&self) -> bool {
        self.2.iter().all(|&c| self.0[c] == self.1[c])
    }
}

impl Kernel {
    /// Gaussian RBF with bandwidth `sigma` (validated against [`SIGMA`]).
    ///
    /// ```
    /// use beliefscope::kernel::Kernel;
    /// let k = Kernel::rbf(2.0).unwrap();
    /// let v = k.eval(&[0.0], &[2.0]);
    /// assert!((v - (-0.5f64).exp()).abs() < 1e-15);
    /// assert!(Kernel::rbf(0.0).is_err());
    /// ```
    pub fn rbf(sigma: f64) -> Result<Kernel> {
        SIGMA.check(sigma)?;
        Ok(Kernel::Rbf { sigma })
    }

    /// Gaussian RBF written as `exp(-s ||x - y||^2)` (validated against [`RBF_S`]).
    pub fn rbf_from_s(s: f64) -> Result<Kernel> {
        RBF_S.check(s)?;
        Kernel::rbf(sigma_from_s(s))
    }

    /// Laplacian `exp(-||x - y|| / sigma)`.
    pub fn laplacian(sigma: f64) -> Result<Kernel> {
        SIGMA.check(sigma)?;
        Ok(Kernel::Laplacian { sigma })
    }

    /// Linear kernel `x . y`.
    pub fn linear() -> Kernel {
        Kernel::Linear
    }

    /// Polynomial `(x . y + c)^degree`.
    pub fn polynomial(c: f64, degree: u32) -> Result<Kernel> {
        let k = Kernel::Polynomial { c, degree };
        k.check()?;
        Ok(k)
    }

    /// von Mises-Fisher `exp(kappa <x, y>)`.
    pub fn von_mises_fisher(kappa: f64) -> Result<Kernel> {
        KAPPA.check(kappa)?;
        Ok(Kernel::VonMisesFisher { kappa })
    }

    /// Delta kernel `1[x = y]`.
    pub fn delta() -> Kernel {
        Kernel::Delta
    }

    /// Product kernel over column groups: `prod_f k_f(x[cols_f], y[cols_f])`.
    ///
    /// Nested products are flattened (column indices composed), so evaluation never
    /// allocates. Errors on an empty product, an empty column group or an invalid factor.
    ///
    /// ```
    /// use beliefscope::kernel::Kernel;
    /// let k = Kernel::product(vec![
    ///     (vec![0], Kernel::rbf(1.0).unwrap()),
    ///     (vec![1, 2], Kernel::delta()),
    /// ]).unwrap();
    /// assert_eq!(k.eval(&[0.0, 1.0, 2.0], &[0.0, 1.0, 3.0]), 0.0);
    /// assert_eq!(k.eval(&[0.0, 1.0, 2.0], &[0.0, 1.0, 2.0]), 1.0);
    /// ```
    pub fn product(factors: Vec<(Vec<usize>, Kernel)>) -> Result<Kernel> {
        let mut flat = Vec::with_capacity(factors.len());
        for (columns, kernel) in factors {
            flatten_into(&columns, kernel, &mut flat)?;
        }
        let k = Kernel::Product(flat);
        k.check()?;
        Ok(k)
    }

    /// Names of the kernel families, in the order a GUI combo box should list them
    /// (see [`Kernel::from_name`]).
    pub const NAMES: [&'static str; 6] = [
        "rbf",
        "laplacian",
        "linear",
        "polynomial",
        "von-mises-fisher",
        "delta",
    ];

    /// The kernel family `name` (one of [`Kernel::NAMES`]) with default parameters from
    /// their [`ParamSpec`]s (`sigma = 1`, `c = 1`, `degree = 2`, `kappa = 1`); `None` for an
    /// unknown name. Products are built with [`Kernel::product`].
    ///
    /// ```
    /// use beliefscope::kernel::Kernel;
    /// for name in Kernel::NAMES {
    ///     assert_eq!(Kernel::from_name(name).unwrap().name(), name);
    /// }
    /// ```
    pub fn from_name(name: &str) -> Option<Kernel> {
        Some(match name {
            "rbf" => Kernel::Rbf {
                sigma: SIGMA.default,
            },
            "laplacian" => Kernel::Laplacian {
                sigma: SIGMA.default,
            },
            "linear" => Kernel::Linear,
            "polynomial" => Kernel::Polynomial {
                c: POLY_OFFSET.default,
                degree: POLY_DEGREE.default as u32,
            },
            "von-mises-fisher" => Kernel::VonMisesFisher {
                kappa: KAPPA.default,
            },
            "delta" => Kernel::Delta,
            _ => return None,
        })
    }

    /// Short name for display ("rbf", "laplacian", ...).
    pub fn name(&self) -> &'static str {
        match self {
            Kernel::Rbf { .. } => "rbf",
            Kernel::Laplacian { .. } => "laplacian",
            Kernel::Linear => "linear",
            Kernel::Polynomial { .. } => "polynomial",
            Kernel::VonMisesFisher { .. } => "von-mises-fisher",
            Kernel::Delta => "delta",
            Kernel::Product(_) => "product",
        }
    }

    /// The scalar parameters of this kernel (not of product factors) with their [`ParamSpec`]s.
    pub fn parameters(&self) -> Vec<(ParamSpec, f64)> {
        match self {
            Kernel::Rbf { sigma } | Kernel::Laplacian { sigma } => vec![(SIGMA, *sigma)],
            Kernel::Polynomial { c, degree } => {
                vec![(POLY_OFFSET, *c), (POLY_DEGREE, f64::from(*degree))]
            }
            Kernel::VonMisesFisher { kappa } => vec![(KAPPA, *kappa)],
            Kernel::Linear | Kernel::Delta | Kernel::Product(_) => vec![],
        }
    }

    /// The bandwidth `sigma` for RBF and Laplacian kernels.
    pub fn sigma(&self) -> Option<f64> {
        match self {
            Kernel::Rbf { sigma } | Kernel::Laplacian { sigma } => Some(*sigma),
            _ => None,
        }
    }

    /// The same kernel with bandwidth `sigma` (RBF / Laplacian only; others are returned
    /// unchanged). Validates `sigma`.
    pub fn with_sigma(&self, sigma: f64) -> Result<Kernel> {
        match self {
            Kernel::Rbf { .. } => Kernel::rbf(sigma),
            Kernel::Laplacian { .. } => Kernel::laplacian(sigma),
            other => Ok(other.clone()),
        }
    }

    /// Validate all parameters (recursively for products). O(size of the kernel).
    pub fn check(&self) -> Result<()> {
        match self {
            Kernel::Rbf { sigma } | Kernel::Laplacian { sigma } => SIGMA.check(*sigma),
            Kernel::Linear | Kernel::Delta => Ok(()),
            Kernel::Polynomial { c, degree } => {
                POLY_OFFSET.check(*c)?;
                POLY_DEGREE.check(f64::from(*degree))
            }
            Kernel::VonMisesFisher { kappa } => KAPPA.check(*kappa),
            Kernel::Product(factors) => {
                if factors.is_empty() {
                    return Err(KernelError::InvalidKernel(
                        "a product kernel needs at least one factor".into(),
                    ));
                }
                for (i, f) in factors.iter().enumerate() {
                    if f.columns.is_empty() {
                        return Err(KernelError::InvalidKernel(format!(
                            "product factor {i} has an empty column group"
                        )));
                    }
                    if matches!(f.kernel, Kernel::Product(_)) {
                        return Err(KernelError::InvalidKernel(format!(
                            "product factor {i} is itself a product; build nested products \
                             with Kernel::product, which flattens them"
                        )));
                    }
                    f.kernel.check()?;
                }
                Ok(())
            }
        }
    }

    /// Validate the kernel for points of dimension `d` (product columns must be `< d`).
    pub fn check_dim(&self, d: usize) -> Result<()> {
        self.check()?;
        if d == 0 {
            return Err(KernelError::DimensionMismatch {
                what: "kernel input dimension (must be >= 1)",
                expected: 1,
                got: 0,
            });
        }
        if let Kernel::Product(factors) = self {
            for f in factors {
                if let Some(&c) = f.columns.iter().find(|&&c| c >= d) {
                    return Err(KernelError::IndexOutOfRange {
                        what: "product kernel column",
                        index: c,
                        len: d,
                    });
                }
            }
        }
        Ok(())
    }

    /// Evaluate `k(x, y)`. O(d). No validation (see [`Kernel::check`]); `x` and `y` must
    /// have the same length.
    #[inline]
    pub fn eval(&self, x: &[f64], y: &[f64]) -> f64 {
        debug_assert_eq!(x.len(), y.len());
        match self {
            Kernel::Product(factors) => factors
                .iter()
                .map(|f| f.kernel.eval_pair(&Sel(x, y, &f.columns)))
                .product(),
            _ => self.eval_pair(&Full(x, y)),
        }
    }

    #[inline]
    fn eval_pair<P: Pair>(&self, p: &P) -> f64 {
        match self {
            Kernel::Rbf { sigma } => rbf_from_sq(p.sq_dist(), rbf_scale(*sigma)),
            Kernel::Laplacian { sigma } => laplacian_from_sq(p.sq_dist(), 1.0 / *sigma),
            Kernel::Linear => p.dot(),
            Kernel::Polynomial { c, degree } => (p.dot() + c).powi(*degree as i32),
            Kernel::VonMisesFisher { kappa } => (kappa * p.dot()).exp(),
            Kernel::Delta => {
                if p.equal() {
                    1.0
                } else {
                    0.0
                }
            }
            // Nested products are rejected by `check` and flattened by `Kernel::product`.
            Kernel::Product(_) => f64::NAN,
        }
    }

    /// The kernel `k^p` (pointwise power), e.g. the kernel of a product of `p` messages in
    /// loopy kernel BP. Closed forms: RBF `sigma / sqrt(p)`, Laplacian `sigma / p`,
    /// polynomial degree `degree * p` (linear becomes `(x.y)^p`), vMF `kappa * p`, delta
    /// unchanged, products factor-wise. `p = 0` is an error (the constant kernel is not
    /// represented). O(size of the kernel).
    ///
    /// ```
    /// use beliefscope::kernel::Kernel;
    /// let k = Kernel::rbf(2.0).unwrap();
    /// let k3 = k.powered(3).unwrap();
    /// let (x, y) = ([0.1], [1.3]);
    /// assert!((k3.eval(&x, &y) - k.eval(&x, &y).powi(3)).abs() < 1e-14);
    /// ```
    pub fn powered(&self, p: u32) -> Result<Kernel> {
        if p == 0 {
            return Err(KernelError::InvalidParameter {
                name: "kernel power p",
                value: 0.0,
                range: "an integer >= 1".into(),
            });
        }
        let pf = f64::from(p);
        let k = match self {
            Kernel::Rbf { sigma } => Kernel::Rbf {
                sigma: sigma / pf.sqrt(),
            },
            Kernel::Laplacian { sigma } => Kernel::Laplacian { sigma: sigma / pf },
            Kernel::Linear if p == 1 => Kernel::Linear,
            Kernel::Linear => Kernel::Polynomial { c: 0.0, degree: p },
            Kernel::Polynomial { c, degree } => Kernel::Polynomial {
                c: *c,
                degree: degree.saturating_mul(p),
            },
            Kernel::VonMisesFisher { kappa } => Kernel::VonMisesFisher { kappa: kappa * pf },
            Kernel::Delta => Kernel::Delta,
            Kernel::Product(factors) => Kernel::Product(
                factors
                    .iter()
                    .map(|f| {
                        Ok(ProductFactor {
                            columns: f.columns.clone(),
                            kernel: f.kernel.powered(p)?,
                        })
                    })
                    .collect::<Result<Vec<_>>>()?,
            ),
        };
        k.check()?;
        Ok(k)
    }
}

fn flatten_into(columns: &[usize], kernel: Kernel, out: &mut Vec<ProductFactor>) -> Result<()> {
    match kernel {
        Kernel::Product(inner) => {
            for f in inner {
                // Column c of the inner factor is column columns[c] of the outer point.
                let composed = f
                    .columns
                    .iter()
                    .map(|&c| {
                        columns.get(c).copied().ok_or(KernelError::IndexOutOfRange {
                            what: "nested product kernel column",
                            index: c,
                            len: columns.len(),
                        })
                    })
                    .collect::<Result<Vec<_>>>()?;
                flatten_into(&composed, f.kernel, out)?;
            }
        }
        k => out.push(ProductFactor {
            columns: columns.to_vec(),
            kernel: k,
        }),
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exp_of_negative_is_exp_to_the_bit() {
        let mut xs: Vec<f64> = (0..=16_000)
            .map(|i| -800.0 * f64::from(i) / 16_000.0)
            .collect();
        xs.extend([
            -746.0,
            -745.999,
            -745.2,
            -745.13,
            -744.44,
            -708.4,
            f64::NEG_INFINITY,
        ]);
        for x in xs {
            assert_eq!(exp_of_negative(x).to_bits(), x.exp().to_bits(), "x = {x}");
        }
        assert!(exp_of_negative(f64::NAN).is_nan());
    }

    #[test]
    fn closed_forms() {
        let x = [0.3, -1.0];
        let y = [1.0, 0.5];
        let sq: f64 = 0.7f64.powi(2) + 1.5f64.powi(2);
        let rbf = Kernel::rbf(0.8).unwrap();
        assert!((rbf.eval(&x, &y) - (-sq / (2.0 * 0.64)).exp()).abs() < 1e-15);
        let s = s_from_sigma(0.8);
        let rbf_s = Kernel::rbf_from_s(s).unwrap();
        assert!((rbf_s.eval(&x, &y) - (-s * sq).exp()).abs() < 1e-14);
        let lap = Kernel::laplacian(0.8).unwrap();
        assert!((lap.eval(&x, &y) - (-sq.sqrt() / 0.8).exp()).abs() < 1e-15);
        let d = 0.3 - 0.5;
        assert!((Kernel::linear().eval(&x, &y) - d).abs() < 1e-15);
        let poly = Kernel::polynomial(1.0, 3).unwrap();
        assert!((poly.eval(&x, &y) - (d + 1.0f64).powi(3)).abs() < 1e-15);
        let vmf = Kernel::von_mises_fisher(2.0).unwrap();
        assert!((vmf.eval(&x, &y) - (2.0 * d).exp()).abs() < 1e-15);
        assert_eq!(Kernel::delta().eval(&x, &x), 1.0);
        assert_eq!(Kernel::delta().eval(&x, &y), 0.0);
    }

    #[test]
    fn validation() {
        assert!(Kernel::rbf(-1.0).is_err());
        assert!(Kernel::rbf(f64::NAN).is_err());
        assert!(Kernel::polynomial(-1.0, 2).is_err());
        assert!(Kernel::polynomial(1.0, 0).is_err());
        assert!(Kernel::von_mises_fisher(1e4).is_err());
        assert!(Kernel::product(vec![]).is_err());
        assert!(Kernel::product(vec![(vec![], Kernel::Linear)]).is_err());
        let p = Kernel::product(vec![(vec![3], Kernel::Linear)]).unwrap();
        assert!(p.check_dim(2).is_err());
        assert!(p.check_dim(4).is_ok());
        assert!(Kernel::Linear.powered(0).is_err());
    }

    #[test]
    fn nested_products_flatten() {
        let inner = Kernel::product(vec![
            (vec![1], Kernel::rbf(1.0).unwrap()),
            (vec![0], Kernel::Linear),
        ])
        .unwrap();
        let outer = Kernel::product(vec![(vec![2, 0], inner), (vec![1], Kernel::Delta)]).unwrap();
        match &outer {
            Kernel::Product(f) => {
                assert_eq!(f.len(), 3);
                assert_eq!(f[0].columns, vec![0]);
                assert_eq!(f[1].columns, vec![2]);
                assert_eq!(f[2].columns, vec![1]);
            }
            _ => panic!(),
        }
        let x = [0.5, 1.0, 2.0];
        let y = [0.0, 1.0, 3.0];
        let want = (-0.25f64 / 2.0).exp() * 6.0;
        assert!((outer.eval(&x, &y) - want).abs() < 1e-14);
        let bad = Kernel::product(vec![(
            vec![0],
            Kernel::Product(vec![ProductFactor {
                columns: vec![1],
                kernel: Kernel::Linear,
            }]),
        )]);
        assert!(bad.is_err());
    }

    #[test]
    fn powers() {
        let x = [0.2, 0.9];
        let y = [-0.4, 0.1];
        for k in [
            Kernel::rbf(0.7).unwrap(),
            Kernel::laplacian(1.3).unwrap(),
            Kernel::Linear,
            Kernel::polynomial(0.5, 2).unwrap(),
            Kernel::von_mises_fisher(1.5).unwrap(),
            Kernel::Delta,
            Kernel::product(vec![
                (vec![0], Kernel::rbf(1.0).unwrap()),
                (vec![1], Kernel::Linear),
            ])
            .unwrap(),
        ] {
            for p in 1..=4 {
                let kp = k.powered(p).unwrap();
                let want = k.eval(&x, &y).powi(p as i32);
                assert!(
                    (kp.eval(&x, &y) - want).abs() < 1e-13 * want.abs().max(1.0),
                    "{k:?} {p}"
                );
            }
        }
    }
}
