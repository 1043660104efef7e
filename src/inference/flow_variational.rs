//! Variational refinement of a flow field (beyond Noorshams & Wainwright 2013): a continuous
//! energy minimised from a discrete estimate, as DIS does after its patch search (Kroeger et al.
//! 2016, Sec. 2.3, after Brox et al. 2004, with the data-term normalisation of Zimmer et al.
//! 2011).
//!
//! Energy over the flow `w = (u, v)`, with `Ψ(s²) = √(s² + ε²)` (Charbonnier):
//!
//! `E(w) = Σ_p δ Ψ(BC_p) + γ Ψ(GC_p) + α Ψ(‖∇u_p‖² + ‖∇v_p‖²)`
//!
//! where `BC = (I_z + I_x du + I_y dv)² / (‖∇I‖² + ζ²)` is brightness constancy linearised
//! around the starting flow (frame 2 warped by it, `I_z = I2(p + w) - I1(p)`, derivatives on
//! the mean of frame 1 and the warped frame 2), and `GC` the same for the two components of
//! the gradient (gradient constancy). The normalisation by `‖∇I‖² + ζ²` turns the residual
//! into a distance in pixels of flow, so `δ`, `γ`, `α` do not depend on the contrast.
//! Minimisation: lagged non-linearity (each fixed-point iteration freezes the `Ψ'` weights
//! and solves the linear Euler-Lagrange system for the increment `(du, dv)`) with red-black
//! SOR, the whole repeated `warps` times from the flow reached (frame 2 warped again). Derivatives are differences across two pixels (`I(x+1) - I(x-1)`, replicated border),
//! so `ζ` and `ε` have the meaning they have in OpenCV's `VariationalRefinement`, whose
//! defaults (α 20, δ 5, γ 10, ω 1.6, ζ 0.1, ε 0.001) these are.
//!
//! The Charbonnier smoothness lets motion boundaries through; the robust data term turns an
//! occluded pixel's residual into a bounded pull, so the smoothness fills it in.
//!
//! Cost: O(pixels) to warp and differentiate, O(pixels · fixed-point iterations · SOR
//! iterations · warps) to solve, rayon over rows; memory about 20 `f64` images.

use rayon::prelude::*;

use crate::error::{Error, Result};
use crate::model::flow::bilinear;
use crate::model::image::GrayImage;

/// Pixels per parallel task of the per-pixel passes.
const ROWS: usize = 4096;

/// The weights and iteration counts of the refinement.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct VariationalParams {
    /// Times frame 2 is re-warped by the current flow and the energy linearised again.
    pub warps: usize,
    /// Fixed-point (lagged non-linearity) iterations per warp; 0 leaves the flow as it is.
    pub iterations: usize,
    /// SOR sweeps per fixed-point iteration.
    pub sor_iterations: usize,
    /// Smoothness weight α.
    pub alpha: f64,
    /// Brightness-constancy weight δ.
    pub delta: f64,
    /// Gradient-constancy weight γ.
    pub gamma: f64,
    /// SOR relaxation ω in (0, 2).
    pub omega: f64,
    /// Normalisation ζ of the data terms.
    pub zeta: f64,
    /// ε of the Charbonnier penalty.
    pub epsilon: f64,
}

impl Default for VariationalParams {
    fn default() -> Self {
        VariationalParams {
            warps: 10,
            iterations: 5,
            sor_iterations: 5,
            alpha: 20.0,
            delta: 5.0,
            gamma: 10.0,
            omega: 1.6,
            zeta: 0.05,
            epsilon: 0.001,
        }
    }
}

impl VariationalParams {
    /// Errors on a negative weight, ω outside (0, 2), or non-positive ζ / ε.
    pub fn check(&self) -> Result<()> {
        for (name, v) in [
            ("refine_alpha", self.alpha),
            ("refine_delta", self.delta),
            ("refine_gamma", self.gamma),
        ] {
            if !(v.is_finite() && v >= 0.0) {
                return Err(Error::param(name, format!("must be >= 0, got {v}")));
            }
        }
        if !(self.omega > 0.0 && self.omega < 2.0) {
            return Err(Error::param(
                "omega",
                format!("SOR needs 0 < omega < 2, got {}", self.omega),
            ));
        }
        if !(self.zeta > 0.0 && self.epsilon > 0.0) {
            return Err(Error::param("zeta", "zeta and epsilon must be positive"));
        }
        Ok(())
    }
}

/// Central differences `(I(x+1) - I(x-1)) / 2` along x and along y (replicated border, so a
/// one-sided half difference there).
fn diff2(f: &[f64], w: usize, h: usize) -> (Vec<f64>, Vec<f64>) {
    let mut gx = vec![0.0; w * h];
    let mut gy = vec![0.0; w * h];
    for y in 0..h {
        let (yu, yd) = (y.saturating_sub(1), (y + 1).min(h - 1));
        for x in 0..w {
            let (xl, xr) = (x.saturating_sub(1), (x + 1).min(w - 1));
            gx[y * w + x] = 0.5 * (f[y * w + xr] - f[y * w + xl]);
            gy[y * w + x] = 0.5 * (f[yd * w + x] - f[yu * w + x]);
        }
    }
    (gx, gy)
}

/// The linearised data terms: image derivatives at the starting flow.
struct Derivatives {
    ix: Vec<f64>,
    iy: Vec<f64>,
    iz: Vec<f64>,
    ixx: Vec<f64>,
    ixy: Vec<f64>,
    iyy: Vec<f64>,
    ixz: Vec<f64>,
    iyz: Vec<f64>,
}

impl Derivatives {
    fn new(i1: &GrayImage, i2: &GrayImage, u: &[f64], v: &[f64]) -> Self {
        let (w, h) = (i1.width, i1.height);
        let mut mean = vec![0.0; w * h];
        let mut iz = vec![0.0; w * h];
        for y in 0..h {
            for x in 0..w {
                let p = y * w + x;
                let warped = bilinear(&i2.pixels, w, h, x as f64 + u[p], y as f64 + v[p]);
                mean[p] = 0.5 * (i1.pixels[p] + warped);
                iz[p] = warped - i1.pixels[p];
            }
        }
        let (ix, iy) = diff2(&mean, w, h);
        let (ixz, iyz) = diff2(&iz, w, h);
        let (ixx, ixy) = diff2(&ix, w, h);
        let (_, iyy) = diff2(&iy, w, h);
        Derivatives {
            ix,
            iy,
            iz,
            ixx,
            ixy,
            iyy,
            ixz,
            iyz,
        }
    }
}

/// Refines `(u, v)` (row-major, `i1`'s size) in place: `warps` times, frame 2 is warped by
/// the current flow, the energy linearised there and minimised for the increment. Errors on
/// bad parameters, frames of different sizes or a flow of another length; a non-finite result
/// leaves the flow unchanged and errors.
pub fn refine_flow(
    i1: &GrayImage,
    i2: &GrayImage,
    u: &mut [f64],
    v: &mut [f64],
    params: &VariationalParams,
) -> Result<()> {
    params.check()?;
    let (w, h) = (i1.width, i1.height);
    let n = w * h;
    if (i2.width, i2.height) != (w, h) || u.len() != n || v.len() != n {
        return Err(Error::param(
            "refinement",
            "frames and flow must have one size",
        ));
    }
    if params.iterations == 0 || params.warps == 0 || n == 0 {
        return Ok(());
    }
    let (mut nu, mut nv) = (u.to_vec(), v.to_vec());
    let mut sys = System {
        a11: vec![0.0; n],
        a12: vec![0.0; n],
        a22: vec![0.0; n],
        b1: vec![0.0; n],
        b2: vec![0.0; n],
        smooth: vec![0.0; n],
    };
    let (mut du, mut dv) = (vec![0.0; n], vec![0.0; n]);
    let (mut tu, mut tv) = (vec![0.0; n], vec![0.0; n]);
    for _ in 0..params.warps {
        let d = Derivatives::new(i1, i2, &nu, &nv);
        du.iter_mut().for_each(|x| *x = 0.0);
        dv.iter_mut().for_each(|x| *x = 0.0);
        for _ in 0..params.iterations {
            sys.data_terms(&d, &du, &dv, params);
            sys.smoothness_weights(&nu, &nv, &du, &dv, w, h, params);
            for _ in 0..params.sor_iterations {
                for colour in 0..2 {
                    sys.sor_pass(
                        &nu,
                        &nv,
                        (&du, &dv),
                        (&mut tu, &mut tv),
                        w,
                        colour,
                        params.omega,
                    );
                    std::mem::swap(&mut du, &mut tu);
                    std::mem::swap(&mut dv, &mut tv);
                }
            }
        }
        for p in 0..n {
            nu[p] += du[p];
            nv[p] += dv[p];
        }
    }
    if nu.iter().chain(&nv).any(|x| !x.is_finite()) {
        return Err(Error::Diverged {
            iteration: params.warps * params.iterations,
            detail: "the variational refinement produced a non-finite flow".into(),
        });
    }
    u.copy_from_slice(&nu);
    v.copy_from_slice(&nv);
    Ok(())
}

/// The per-pixel 2 x 2 data system `A (du, dv) = b` and the smoothness weights of one
/// fixed-point iteration.
struct System {
    a11: Vec<f64>,
    a12: Vec<f64>,
    a22: Vec<f64>,
    b1: Vec<f64>,
    b2: Vec<f64>,
    /// `α Ψ'` at every pixel: the weight of its edges to the right and down.
    smooth: Vec<f64>,
}

impl System {
    /// `δ Ψ'(BC)` and `γ Ψ'(GC)` at the current increment, and the quadratic terms they weigh.
    fn data_terms(&mut self, d: &Derivatives, du: &[f64], dv: &[f64], p: &VariationalParams) {
        let (z2, e2) = (p.zeta * p.zeta, p.epsilon * p.epsilon);
        let (delta2, gamma2) = (0.5 * p.delta, 0.5 * p.gamma);
        let rows = self
            .a11
            .par_chunks_mut(ROWS)
            .zip(self.a12.par_chunks_mut(ROWS))
            .zip(self.a22.par_chunks_mut(ROWS))
            .zip(self.b1.par_chunks_mut(ROWS))
            .zip(self.b2.par_chunks_mut(ROWS))
            .enumerate();
        rows.for_each(|(c, ((((a11s, a12s), a22s), b1s), b2s))| {
            for k in 0..a11s.len() {
                let i = c * ROWS + k;
                let (ix, iy, iz) = (d.ix[i], d.iy[i], d.iz[i]);
                let norm = ix * ix + iy * iy + z2;
                let r = iz + ix * du[i] + iy * dv[i];
                let wgt = delta2 / (r * r / norm + e2).sqrt() / norm;
                let mut a11 = wgt * ix * ix + z2;
                let mut a12 = wgt * ix * iy;
                let mut a22 = wgt * iy * iy + z2;
                let mut b1 = -wgt * iz * ix;
                let mut b2 = -wgt * iz * iy;
                if p.gamma > 0.0 {
                    let (ixx, ixy, iyy) = (d.ixx[i], d.ixy[i], d.iyy[i]);
                    let (ixz, iyz) = (d.ixz[i], d.iyz[i]);
                    let nx = ixx * ixx + ixy * ixy + z2;
                    let ny = iyy * iyy + ixy * ixy + z2;
                    let rx = ixz + ixx * du[i] + ixy * dv[i];
                    let ry = iyz + ixy * du[i] + iyy * dv[i];
                    let g = gamma2 / (rx * rx / nx + ry * ry / ny + e2).sqrt();
                    a11 += g * (ixx * ixx / nx + ixy * ixy / ny);
                    a12 += g * (ixx * ixy / nx + ixy * iyy / ny);
                    a22 += g * (ixy * ixy / nx + iyy * iyy / ny);
                    b1 -= g * (ixx * ixz / nx + ixy * iyz / ny);
                    b2 -= g * (ixy * ixz / nx + iyy * iyz / ny);
                }
                a11s[k] = a11;
                a12s[k] = a12;
                a22s[k] = a22;
                b1s[k] = b1;
                b2s[k] = b2;
            }
        });
    }

    /// `α Ψ'(‖∇u‖² + ‖∇v‖²)` with forward differences of the current flow `w + dw`.
    #[allow(clippy::too_many_arguments)]
    fn smoothness_weights(
        &mut self,
        u: &[f64],
        v: &[f64],
        du: &[f64],
        dv: &[f64],
        w: usize,
        h: usize,
        p: &VariationalParams,
    ) {
        let e2 = p.epsilon * p.epsilon;
        let alpha2 = 0.5 * p.alpha;
        let at = |f: &[f64], df: &[f64], i: usize| f[i] + df[i];
        self.smooth
            .par_chunks_mut(w)
            .enumerate()
            .for_each(|(y, row)| {
                for (x, out) in row.iter_mut().enumerate() {
                    let i = y * w + x;
                    let (mut s, uc, vc) = (0.0, at(u, du, i), at(v, dv, i));
                    if x + 1 < w {
                        let a = at(u, du, i + 1) - uc;
                        let b = at(v, dv, i + 1) - vc;
                        s += a * a + b * b;
                    }
                    if y + 1 < h {
                        let a = at(u, du, i + w) - uc;
                        let b = at(v, dv, i + w) - vc;
                        s += a * a + b * b;
                    }
                    *out = alpha2 / (s + e2).sqrt();
                }
            });
    }

    /// One SOR half-sweep over the pixels with `(x + y) % 2 == colour`: each solves its row of
    /// the Euler-Lagrange system for `du`, then `dv`, from its neighbours' increments (all of
    /// the other colour, so the half-sweep is order-free: rows run in parallel, from `cur` into
    /// `next`, which gets the other colour's values unchanged).
    #[allow(clippy::too_many_arguments)]
    fn sor_pass(
        &self,
        u: &[f64],
        v: &[f64],
        (du, dv): (&[f64], &[f64]),
        (nu, nv): (&mut [f64], &mut [f64]),
        w: usize,
        colour: usize,
        omega: f64,
    ) {
        let h = u.len() / w;
        nu.par_chunks_mut(w)
            .zip(nv.par_chunks_mut(w))
            .enumerate()
            .for_each(|(y, (ru, rv))| {
                let base = y * w;
                ru.copy_from_slice(&du[base..base + w]);
                rv.copy_from_slice(&dv[base..base + w]);
                let start = (colour + y) % 2;
                for x in (start..w).step_by(2) {
                    let i = base + x;
                    let (mut sw, mut su, mut sv) = (0.0, 0.0, 0.0);
                    let mut edge = |j: usize, wt: f64| {
                        sw += wt;
                        su += wt * (u[j] + du[j] - u[i]);
                        sv += wt * (v[j] + dv[j] - v[i]);
                    };
                    if x + 1 < w {
                        edge(i + 1, self.smooth[i]);
                    }
                    if x > 0 {
                        edge(i - 1, self.smooth[i - 1]);
                    }
                    if y + 1 < h {
                        edge(i + w, self.smooth[i]);
                    }
                    if y > 0 {
                        edge(i - w, self.smooth[i - w]);
                    }
                    let (a, b) = (du[i], dv[i]);
                    let new_u = (self.b1[i] - self.a12[i] * b + su) / (self.a11[i] + sw);
                    let a = a + omega * (new_u - a);
                    let new_v = (self.b2[i] - self.a12[i] * a + sv) / (self.a22[i] + sw);
                    ru[x] = a;
                    rv[x] = b + omega * (new_v - b);
                }
            });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A smooth texture and the same texture moved by `(a, b)` px (exact, band-limited).
    fn pair(w: usize, h: usize, a: f64, b: f64) -> (GrayImage, GrayImage) {
        let tex = |x: f64, y: f64| {
            128.0
                + 40.0 * (0.31 * x + 0.17 * y).sin()
                + 30.0 * (0.23 * y - 0.11 * x).cos()
                + 20.0 * (0.05 * x * 0.7 + 0.41 * y).sin()
        };
        let img = |dx: f64, dy: f64| GrayImage {
            width: w,
            height: h,
            pixels: (0..w * h)
                .map(|p| tex((p % w) as f64 - dx, (p / w) as f64 - dy))
                .collect(),
        };
        (img(0.0, 0.0), img(a, b))
    }

    fn mean_error(u: &[f64], v: &[f64], a: f64, b: f64, w: usize, h: usize) -> f64 {
        // Interior only: the replicated border has no information about the motion.
        let mut s = 0.0;
        let mut n = 0;
        for y in 3..h - 3 {
            for x in 3..w - 3 {
                let i = y * w + x;
                s += (u[i] - a).hypot(v[i] - b);
                n += 1;
            }
        }
        s / n as f64
    }

    #[test]
    fn refines_a_quantised_translation_to_sub_pixel() {
        let (w, h) = (48, 40);
        let (a, b) = (0.8, -0.35);
        let (i1, i2) = pair(w, h, a, b);
        // The nearest half-pixel label, as discrete BP would read it out.
        let (mut u, mut v) = (vec![1.0; w * h], vec![-0.5; w * h]);
        let before = mean_error(&u, &v, a, b, w, h);
        refine_flow(&i1, &i2, &mut u, &mut v, &VariationalParams::default()).unwrap();
        let after = mean_error(&u, &v, a, b, w, h);
        assert!(before > 0.2, "{before}");
        assert!(after < 0.03, "before {before}, after {after}");
    }

    #[test]
    fn zero_iterations_leave_the_flow() {
        let (i1, i2) = pair(16, 12, 0.5, 0.0);
        let (mut u, mut v) = (vec![0.25; 16 * 12], vec![0.0; 16 * 12]);
        let p = VariationalParams {
            iterations: 0,
            ..VariationalParams::default()
        };
        refine_flow(&i1, &i2, &mut u, &mut v, &p).unwrap();
        assert!(u.iter().all(|&x| x == 0.25));
    }

    #[test]
    fn bad_input_is_refused() {
        let (i1, i2) = pair(16, 12, 0.5, 0.0);
        let (mut u, mut v) = (vec![0.0; 10], vec![0.0; 10]);
        assert!(refine_flow(&i1, &i2, &mut u, &mut v, &VariationalParams::default()).is_err());
        let (mut u, mut v) = (vec![0.0; 16 * 12], vec![0.0; 16 * 12]);
        let p = VariationalParams {
            omega: 2.5,
            ..VariationalParams::default()
        };
        assert!(refine_flow(&i1, &i2, &mut u, &mut v, &p).is_err());
    }
}
