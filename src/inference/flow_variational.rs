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
//! The system is solved in a checkerboard layout (each colour's pixels in a dense array of
//! their own), so a red-black half-sweep updates one colour in place from the other: about
//! half the memory traffic of a sweep over interleaved pixels, which is what bounds it.
//!
//! Cost: O(pixels) to warp and differentiate, O(pixels · fixed-point iterations · SOR
//! iterations · warps) to solve, rayon over rows; memory about 24 `f64` images.

use rayon::prelude::*;

use crate::error::{Error, Result};
use crate::model::flow::bilinear;
use crate::model::image::GrayImage;
use crate::run::CancelFlag;

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
    /// The warps end once one moves the flow by less than this (mean end-point change, pixels
    /// of the frames); 0 runs every warp.
    pub warp_tolerance: f64,
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
            warp_tolerance: 0.0,
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
/// one-sided half difference there), rayon over rows.
fn diff2(f: &[f64], w: usize, h: usize) -> (Vec<f64>, Vec<f64>) {
    let mut gx = vec![0.0; w * h];
    let mut gy = vec![0.0; w * h];
    gx.par_chunks_mut(w)
        .zip(gy.par_chunks_mut(w))
        .enumerate()
        .for_each(|(y, (rx, ry))| {
            let (yu, yd) = (y.saturating_sub(1), (y + 1).min(h - 1));
            for x in 0..w {
                let (xl, xr) = (x.saturating_sub(1), (x + 1).min(w - 1));
                rx[x] = 0.5 * (f[y * w + xr] - f[y * w + xl]);
                ry[x] = 0.5 * (f[yd * w + x] - f[yu * w + x]);
            }
        });
    (gx, gy)
}

/// The linearised data terms: image derivatives at the starting flow (row-major).
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
    /// Frame 2 warped by `(u, v)` (bilinear, clamped), its difference from frame 1 and the
    /// derivatives of their mean. O(pixels), rayon over rows.
    fn new(i1: &GrayImage, i2: &GrayImage, u: &[f64], v: &[f64]) -> Self {
        let (w, h) = (i1.width, i1.height);
        let mut mean = vec![0.0; w * h];
        let mut iz = vec![0.0; w * h];
        mean.par_chunks_mut(w)
            .zip(iz.par_chunks_mut(w))
            .enumerate()
            .for_each(|(y, (rm, rz))| {
                for x in 0..w {
                    let p = y * w + x;
                    let warped = bilinear(&i2.pixels, w, h, x as f64 + u[p], y as f64 + v[p]);
                    rm[x] = 0.5 * (i1.pixels[p] + warped);
                    rz[x] = warped - i1.pixels[p];
                }
            });
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

/// A `w x h` image split by pixel colour `(x + y) % 2` into two arrays of `h` rows of
/// `half = ceil(w / 2)` cells: cell `k` of row `y` of colour `c` is pixel `x = 2k + (y + c) % 2`
/// (a row's last cell may be padding). A red-black SOR half-sweep then reads one colour and
/// writes the other, each a dense array: no copies, half the memory traffic of a sweep over
/// interleaved pixels.
#[derive(Debug, Clone, Copy)]
struct Checker {
    w: usize,
    h: usize,
    half: usize,
}

impl Checker {
    fn new(w: usize, h: usize) -> Self {
        Checker {
            w,
            h,
            half: w.div_ceil(2),
        }
    }

    /// Cells per colour (with padding).
    fn len(&self) -> usize {
        self.h * self.half
    }

    /// The colour of pixel `(x, y)` and its cell index.
    #[inline(always)]
    fn cell(&self, x: usize, y: usize) -> (usize, usize) {
        ((x + y) % 2, y * self.half + x / 2)
    }

    /// `[a, b]`'s value at pixel `(x, y)`.
    #[inline(always)]
    fn at(&self, f: &[Vec<f64>; 2], x: usize, y: usize) -> f64 {
        let (c, i) = self.cell(x, y);
        f[c][i]
    }

    fn pack(&self, f: &[f64]) -> [Vec<f64>; 2] {
        let mut out = [vec![0.0; self.len()], vec![0.0; self.len()]];
        let [a, b] = &mut out;
        let (w, half) = (self.w, self.half);
        a.par_chunks_mut(half)
            .zip(b.par_chunks_mut(half))
            .enumerate()
            .for_each(|(y, (ra, rb))| {
                for x in 0..w {
                    let row = if (x + y) % 2 == 0 { &mut *ra } else { &mut *rb };
                    row[x / 2] = f[y * w + x];
                }
            });
        out
    }

    fn unpack(&self, f: &[Vec<f64>; 2], out: &mut [f64]) {
        let (w, half) = (self.w, self.half);
        out.par_chunks_mut(w).enumerate().for_each(|(y, row)| {
            for (x, o) in row.iter_mut().enumerate() {
                *o = f[(x + y) % 2][y * half + x / 2];
            }
        });
    }
}

/// Refines `(u, v)` (row-major, `i1`'s size) in place: `warps` times, frame 2 is warped by
/// the current flow, the energy linearised there and minimised for the increment. Errors on
/// bad parameters, frames of different sizes or a flow of another length; a non-finite result
/// leaves the flow unchanged and errors. `interrupt` is checked before every SOR sweep; once
/// it is set the flow is left unchanged and `Err(Cancelled)` returned.
pub fn refine_flow(
    i1: &GrayImage,
    i2: &GrayImage,
    u: &mut [f64],
    v: &mut [f64],
    params: &VariationalParams,
    interrupt: &CancelFlag,
) -> Result<usize> {
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
        return Ok(0);
    }
    let grid = Checker::new(w, h);
    let (mut nu, mut nv) = (u.to_vec(), v.to_vec());
    let mut sys = System::new(grid);
    let mut warps = 0;
    while warps < params.warps {
        warps += 1;
        let d = Derivatives::new(i1, i2, &nu, &nv);
        // The warp's starting flow, and the flow being solved for (`base + (du, dv)`).
        let base = [grid.pack(&nu), grid.pack(&nv)];
        let mut flow = base.clone();
        for _ in 0..params.iterations {
            sys.smoothness_weights(&flow, params);
            sys.linearise(&d, &base, &flow, params);
            for _ in 0..params.sor_iterations {
                interrupt.check()?;
                for colour in 0..2 {
                    sys.sor_half_sweep(&mut flow, colour, params.omega);
                }
            }
        }
        let change = mean_move(&base, &flow, n);
        grid.unpack(&flow[0], &mut nu);
        grid.unpack(&flow[1], &mut nv);
        if change < params.warp_tolerance {
            break;
        }
    }
    if nu.iter().chain(&nv).any(|x| !x.is_finite()) {
        return Err(Error::Diverged {
            iteration: warps * params.iterations,
            detail: "the variational refinement produced a non-finite flow".into(),
        });
    }
    u.copy_from_slice(&nu);
    v.copy_from_slice(&nv);
    Ok(warps)
}

/// The mean end-point distance over the `pixels` pixels of two flows in the checkerboard layout
/// (a row's spare cell is equal in both), summed in fixed chunks in order (the same value
/// whatever the thread count). O(pixels), rayon.
fn mean_move(a: &[[Vec<f64>; 2]; 2], b: &[[Vec<f64>; 2]; 2], pixels: usize) -> f64 {
    const CHUNK: usize = 1 << 14;
    let mut total = 0.0;
    for c in 0..2 {
        let (au, av, bu, bv) = (&a[0][c], &a[1][c], &b[0][c], &b[1][c]);
        let n = au.len();
        let parts: Vec<f64> = (0..n.div_ceil(CHUNK))
            .into_par_iter()
            .map(|k| {
                (k * CHUNK..((k + 1) * CHUNK).min(n))
                    .map(|i| {
                        let (x, y) = (bu[i] - au[i], bv[i] - av[i]);
                        (x * x + y * y).sqrt()
                    })
                    .sum::<f64>()
            })
            .collect();
        total += parts.iter().sum::<f64>();
    }
    total / pixels.max(1) as f64
}

/// One fixed-point iteration's linear system in the checkerboard layout. The Euler-Lagrange
/// equations for the increment `(du, dv)` at pixel `i`, with `Ψ'` frozen, are
/// `(A11 + S) du + A12 dv = b1 + Σ_j s_ij (u_j + du_j - u_i)` (and the same for `dv`), `s_ij`
/// the smoothness weight of edge `ij` and `S = Σ_j s_ij`. In the total flow `f = base + d`
/// the SOR step of `u` is `f_u <- f_u + ω (t_u - f_u)` with
/// `t_u = T1 + inv1 Σ_j s_ij f_u,j - g1 f_v,i` (and likewise `v`, with the new `f_u`), whose
/// per-pixel constants are set once per fixed-point iteration.
struct System {
    grid: Checker,
    /// `α Ψ'` at every pixel: the weight of its edges to the right and down.
    smooth: [Vec<f64>; 2],
    t1: [Vec<f64>; 2],
    t2: [Vec<f64>; 2],
    inv1: [Vec<f64>; 2],
    inv2: [Vec<f64>; 2],
    g1: [Vec<f64>; 2],
    g2: [Vec<f64>; 2],
}

/// The rows (`half` entries) of both colours of a checkerboard array, in parallel pairs.
fn paired_rows(
    a: &mut [Vec<f64>; 2],
    half: usize,
) -> rayon::iter::Zip<rayon::slice::ChunksMut<'_, f64>, rayon::slice::ChunksMut<'_, f64>> {
    let [x, y] = a;
    x.par_chunks_mut(half).zip(y.par_chunks_mut(half))
}

impl System {
    fn new(grid: Checker) -> Self {
        let z = || [vec![0.0; grid.len()], vec![0.0; grid.len()]];
        System {
            grid,
            smooth: z(),
            t1: z(),
            t2: z(),
            inv1: z(),
            inv2: z(),
            g1: z(),
            g2: z(),
        }
    }

    /// `α Ψ'(‖∇u‖² + ‖∇v‖²)` with forward differences of the current flow.
    fn smoothness_weights(&mut self, flow: &[[Vec<f64>; 2]; 2], p: &VariationalParams) {
        let g = self.grid;
        let e2 = p.epsilon * p.epsilon;
        let alpha2 = 0.5 * p.alpha;
        let [fu, fv] = flow;
        let [s0, s1] = &mut self.smooth;
        s0.par_chunks_mut(g.half)
            .zip(s1.par_chunks_mut(g.half))
            .enumerate()
            .for_each(|(y, (r0, r1))| {
                for x in 0..g.w {
                    let (uc, vc) = (g.at(fu, x, y), g.at(fv, x, y));
                    let mut s = 0.0;
                    if x + 1 < g.w {
                        let a = g.at(fu, x + 1, y) - uc;
                        let b = g.at(fv, x + 1, y) - vc;
                        s += a * a + b * b;
                    }
                    if y + 1 < g.h {
                        let a = g.at(fu, x, y + 1) - uc;
                        let b = g.at(fv, x, y + 1) - vc;
                        s += a * a + b * b;
                    }
                    let row = if (x + y) % 2 == 0 { &mut *r0 } else { &mut *r1 };
                    row[x / 2] = alpha2 / (s + e2).sqrt();
                }
            });
    }

    /// `δ Ψ'(BC)` and `γ Ψ'(GC)` at the current increment, the quadratic terms they weigh and
    /// the smoothness weights' sum, folded into the SOR constants.
    fn linearise(
        &mut self,
        d: &Derivatives,
        base: &[[Vec<f64>; 2]; 2],
        flow: &[[Vec<f64>; 2]; 2],
        p: &VariationalParams,
    ) {
        let g = self.grid;
        let (z2, e2) = (p.zeta * p.zeta, p.epsilon * p.epsilon);
        let (delta2, gamma2) = (0.5 * p.delta, 0.5 * p.gamma);
        let smooth = &self.smooth;
        paired_rows(&mut self.t1, g.half)
            .zip(paired_rows(&mut self.t2, g.half))
            .zip(paired_rows(&mut self.inv1, g.half))
            .zip(paired_rows(&mut self.inv2, g.half))
            .zip(paired_rows(&mut self.g1, g.half))
            .zip(paired_rows(&mut self.g2, g.half))
            .enumerate()
            .for_each(|(y, (((((t1, t2), inv1), inv2), g1), g2))| {
                let t1 = [t1.0, t1.1];
                let t2 = [t2.0, t2.1];
                let inv1 = [inv1.0, inv1.1];
                let inv2 = [inv2.0, inv2.1];
                let g1 = [g1.0, g1.1];
                let g2 = [g2.0, g2.1];
                for x in 0..g.w {
                    let i = y * g.w + x;
                    let (c, cell) = g.cell(x, y);
                    let k = x / 2;
                    let (bu, bv) = (base[0][c][cell], base[1][c][cell]);
                    let (du, dv) = (flow[0][c][cell] - bu, flow[1][c][cell] - bv);
                    let (ix, iy, iz) = (d.ix[i], d.iy[i], d.iz[i]);
                    let norm = ix * ix + iy * iy + z2;
                    let r = iz + ix * du + iy * dv;
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
                        let rx = ixz + ixx * du + ixy * dv;
                        let ry = iyz + ixy * du + iyy * dv;
                        let gw = gamma2 / (rx * rx / nx + ry * ry / ny + e2).sqrt();
                        a11 += gw * (ixx * ixx / nx + ixy * ixy / ny);
                        a12 += gw * (ixx * ixy / nx + ixy * iyy / ny);
                        a22 += gw * (ixy * ixy / nx + iyy * iyy / ny);
                        b1 -= gw * (ixx * ixz / nx + ixy * iyz / ny);
                        b2 -= gw * (ixy * ixz / nx + iyy * iyz / ny);
                    }
                    // The weights of the pixel's four edges: its own to the right and down,
                    // its left and upper neighbours' (of the other colour) to it.
                    let mut sum = 0.0;
                    if x + 1 < g.w {
                        sum += smooth[c][cell];
                    }
                    if y + 1 < g.h {
                        sum += smooth[c][cell];
                    }
                    if x > 0 {
                        sum += g.at(smooth, x - 1, y);
                    }
                    if y > 0 {
                        sum += g.at(smooth, x, y - 1);
                    }
                    let (q1, q2) = (1.0 / (a11 + sum), 1.0 / (a22 + sum));
                    t1[c][k] = bu + q1 * (b1 + a12 * bv - sum * bu);
                    t2[c][k] = bv + q2 * (b2 + a12 * bu - sum * bv);
                    inv1[c][k] = q1;
                    inv2[c][k] = q2;
                    g1[c][k] = q1 * a12;
                    g2[c][k] = q2 * a12;
                }
            });
    }

    /// One SOR half-sweep over the pixels of `colour`, in place: each moves its `u`, then its
    /// `v`, towards the solution of its equations given its neighbours, all of the other
    /// colour (so rows run in parallel, in any order).
    fn sor_half_sweep(&self, flow: &mut [[Vec<f64>; 2]; 2], colour: usize, omega: f64) {
        let g = self.grid;
        let other = 1 - colour;
        let [fu, fv] = flow;
        let (own_u, other_u) = split(fu, colour);
        let (own_v, other_v) = split(fv, colour);
        let (t1, t2) = (&self.t1[colour], &self.t2[colour]);
        let (inv1, inv2) = (&self.inv1[colour], &self.inv2[colour]);
        let (g1, g2) = (&self.g1[colour], &self.g2[colour]);
        let (s_own, s_other) = (&self.smooth[colour], &self.smooth[other]);
        own_u
            .par_chunks_mut(g.half)
            .zip(own_v.par_chunks_mut(g.half))
            .enumerate()
            .for_each(|(y, (ru, rv))| {
                let o = (y + colour) % 2;
                let row = y * g.half;
                for k in 0..g.half {
                    let x = 2 * k + o;
                    if x >= g.w {
                        break;
                    }
                    let i = row + k;
                    let (mut su, mut sv) = (0.0, 0.0);
                    if x + 1 < g.w {
                        let (s, j) = (s_own[i], row + k + o);
                        su += s * other_u[j];
                        sv += s * other_v[j];
                    }
                    if x > 0 {
                        let j = row + k + o - 1;
                        let s = s_other[j];
                        su += s * other_u[j];
                        sv += s * other_v[j];
                    }
                    if y + 1 < g.h {
                        let (s, j) = (s_own[i], i + g.half);
                        su += s * other_u[j];
                        sv += s * other_v[j];
                    }
                    if y > 0 {
                        let j = i - g.half;
                        let s = s_other[j];
                        su += s * other_u[j];
                        sv += s * other_v[j];
                    }
                    let tu = t1[i] + inv1[i] * su - g1[i] * rv[k];
                    ru[k] += omega * (tu - ru[k]);
                    let tv = t2[i] + inv2[i] * sv - g2[i] * ru[k];
                    rv[k] += omega * (tv - rv[k]);
                }
            });
    }
}

/// `(&mut f[colour], &f[1 - colour])`.
fn split(f: &mut [Vec<f64>; 2], colour: usize) -> (&mut [f64], &[f64]) {
    let [a, b] = f;
    if colour == 0 { (a, b) } else { (b, a) }
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
        refine_flow(
            &i1,
            &i2,
            &mut u,
            &mut v,
            &VariationalParams::default(),
            &CancelFlag::default(),
        )
        .unwrap();
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
        refine_flow(&i1, &i2, &mut u, &mut v, &p, &CancelFlag::default()).unwrap();
        assert!(u.iter().all(|&x| x == 0.25));
    }

    #[test]
    fn bad_input_is_refused() {
        let (i1, i2) = pair(16, 12, 0.5, 0.0);
        let (mut u, mut v) = (vec![0.0; 10], vec![0.0; 10]);
        assert!(
            refine_flow(
                &i1,
                &i2,
                &mut u,
                &mut v,
                &VariationalParams::default(),
                &CancelFlag::default()
            )
            .is_err()
        );
        let (mut u, mut v) = (vec![0.0; 16 * 12], vec![0.0; 16 * 12]);
        let p = VariationalParams {
            omega: 2.5,
            ..VariationalParams::default()
        };
        assert!(refine_flow(&i1, &i2, &mut u, &mut v, &p, &CancelFlag::default()).is_err());
    }
}
