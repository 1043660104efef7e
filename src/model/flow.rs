//! Optical flow as a pairwise MRF on the 4-connected pixel grid (Noorshams & Wainwright 2013,
//! Sec. 5.2), and the image operations it needs.
//!
//! Each pixel `u` has a displacement `x_u` in `[-d, d]²` around a base flow `c_u` (zero without a
//! pyramid); its total flow is `c_u + x_u`. Potentials, with frames in gray levels 0..255:
//! * node: `ψ_u(x) = exp(-(I1(p) - I2(p + c_u + x))² / (2 σ_u²))`, `I2` bilinearly interpolated
//!   (positions outside the frame are clamped to its border);
//! * edge: `ψ_uv(x_u, x_v) = exp(-‖(c_u + x_u) - (c_v + x_v)‖² / (2 σ_uv²))`, the Gaussian
//!   smoothness prior on the total flow; optionally (beyond the paper) the robust
//!   `(1 - ρ) exp(..) + ρ`;
//! * optionally (beyond the paper, Brox et al. 2004 eq. 3) gradient constancy in the node
//!   potential: `(I1 - I2)² + λ ‖∇I1 - ∇I2‖²` in place of `(I1 - I2)²`, which a brightness
//!   offset between the frames leaves unchanged ([`FlowEvidence::with_gradient`]);
//! * optionally (beyond the paper) a census data term in place of brightness constancy:
//!   `κ H(C1(p), C2(q))`, the Hamming distance between ternary census signatures of the 5 x 5
//!   windows around `p` in `I1` and `q` in `I2` (Zabih & Woodfill 1994; ternary: Stein 2004),
//!   unchanged by any brightness change that keeps the order of nearby gray levels (a gain and
//!   an offset, up to the dead zone ε) ([`FlowEvidence::with_census`]).
//!
//! The displacements are discretised on a lattice of `sub` nodes per pixel ([`FlowLabels`]): the
//! quadrature grid of SOSMP and the label set of discrete BP are the same nodes. Base flows are
//! rounded to that lattice, so every `p + c_u + x` is a lattice point and `I2` there is a look-up
//! in `I2` upsampled `sub` times (bilinear, computed once); the edge potential then depends on
//! `c_u - c_v`, a whole number of lattice steps per axis (clamped to `±d`, the reach of a
//! window), so a few shifted copies of one Gaussian serve every edge.
//!
//! `ψ_u` is computed on demand ([`FlowEvidence`], a [`NodeEvidence`]): for the 584 x 388
//! RubberWhale pair and 17 x 17 labels a table would be 65 million numbers. Each evaluation
//! subtracts the smallest squared difference before exponentiating (a per-pixel constant that no
//! belief depends on), so the largest value is 1 and occluded pixels never underflow to zero.
//! Cost O(labels) per pixel, with a vectorised exponential.

use std::sync::Arc;

use rayon::prelude::*;

use super::image::GrayImage;
pub use super::image::{downsample2, gaussian_blur};
use crate::error::{Error, Result, check_positive};
use crate::model::{Graph, NodeEvidence, NodeId};

/// The displacement lattice `[-d, d]²` with `sub` nodes per pixel on each axis: `2 d sub + 1`
/// nodes per axis, label `i = iy · per_axis + ix` at `(-d + ix / sub, -d + iy / sub)`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FlowLabels {
    max_displacement: f64,
    sub: usize,
}

/// Largest number of lattice nodes per axis.
pub const MAX_LABELS_PER_AXIS: usize = 81;

impl FlowLabels {
    /// Errors unless `sub` is in 1..=8, `d · sub` is a whole number and the lattice has 3 to 81
    /// nodes per axis.
    pub fn new(max_displacement: f64, sub: usize) -> Result<Self> {
        check_positive("max displacement", max_displacement)?;
        if !(1..=8).contains(&sub) {
            return Err(Error::param(
                "label subdivision",
                format!("must be between 1 and 8 nodes per pixel, got {sub}"),
            ));
        }
        let half = max_displacement * sub as f64;
        if (half - half.round()).abs() > 1e-9 {
            return Err(Error::param(
                "max displacement",
                format!("must be a multiple of the label step 1/{sub} px, got {max_displacement}"),
            ));
        }
        let per_axis = 2 * half.round() as usize + 1;
        if !(3..=MAX_LABELS_PER_AXIS).contains(&per_axis) {
            return Err(Error::param(
                "max displacement",
                format!(
                    "gives {per_axis} labels per axis at step 1/{sub} px; allowed 3 to {MAX_LABELS_PER_AXIS}"
                ),
            ));
        }
        Ok(FlowLabels {
            max_displacement,
            sub,
        })
    }

    /// `d`, in pixels.
    pub fn max_displacement(&self) -> f64 {
        self.max_displacement
    }

    /// Lattice nodes per pixel.
    pub fn sub(&self) -> usize {
        self.sub
    }

    /// Lattice step `1 / sub`, in pixels.
    pub fn step(&self) -> f64 {
        1.0 / self.sub as f64
    }

    /// `d · sub`: the lattice steps from the centre to an edge of the window.
    pub fn half(&self) -> usize {
        (self.max_displacement * self.sub as f64).round() as usize
    }

    pub fn per_axis(&self) -> usize {
        2 * self.half() + 1
    }

    /// Number of labels (lattice nodes).
    pub fn len(&self) -> usize {
        self.per_axis() * self.per_axis()
    }

    pub fn is_empty(&self) -> bool {
        false
    }

    /// The displacement of label `i`, in pixels.
    pub fn value(&self, i: usize) -> [f64; 2] {
        let n = self.per_axis();
        let h = self.step();
        let d = self.half() as f64 * h;
        [-d + (i % n) as f64 * h, -d + (i / n) as f64 * h]
    }

    /// The displacement of every label, `[i] = (u, v)`.
    pub fn values(&self) -> Vec<[f64; 2]> {
        (0..self.len()).map(|i| self.value(i)).collect()
    }
}

/// `ψ_u(x) = exp(-(I1(p) - I2(p + c_u + x))² / (2σ²))` at every label, from two frames.
#[derive(Debug, Clone)]
pub struct FlowEvidence {
    width: usize,
    height: usize,
    labels: FlowLabels,
    i1: Vec<f64>,
    /// `I2` on the lattice of `sub` nodes per pixel, `fine_w x fine_h`.
    fine: Vec<f64>,
    fine_w: usize,
    fine_h: usize,
    /// Base flow of each pixel in lattice steps (empty: zero everywhere).
    base: Vec<[i32; 2]>,
    sigma: f64,
    inv_two_var: f64,
    /// Gradient constancy (beyond the paper): weight `λ` (0: off), `∇I1` per pixel and `∇I2`
    /// on the lattice, `[gx, gy]` (central differences in gray levels per pixel).
    gradient_weight: f64,
    grad1: Vec<[f64; 2]>,
    fine_grad: Vec<[f64; 2]>,
    /// Census data term (beyond the paper): weight `κ` per differing trit (0: off, brightness
    /// constancy), the signature of every pixel of `I1` and of every lattice node of `I2`.
    census_weight: f64,
    census1: Vec<Census>,
    fine_census: Vec<Census>,
}

/// Dead zone ε of the ternary census, gray levels: neighbours within ε of the centre count as
/// equal (so sensor noise in flat regions does not flip signatures).
pub const CENSUS_EPSILON: f64 = 2.0;

/// Half-width of the census window (5 x 5: 24 neighbours).
const CENSUS_RADIUS: i64 = 2;

/// Ternary census signature of a 5 x 5 window: bit `k` of `brighter` (`darker`) is set when
/// neighbour `k` is brighter (darker) than the centre by more than [`CENSUS_EPSILON`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Census {
    brighter: u32,
    darker: u32,
}

impl Census {
    /// The signature at `(x, y)` of a `w x h` image, neighbours `step` samples apart (1 for
    /// pixels, `sub` on the label lattice), positions clamped to the image. O(24).
    pub fn at(values: &[f64], w: usize, h: usize, x: usize, y: usize, step: usize) -> Census {
        let centre = values[y * w + x];
        let (mut brighter, mut darker, mut bit) = (0u32, 0u32, 0u32);
        let s = step as i64;
        for dy in -CENSUS_RADIUS..=CENSUS_RADIUS {
            let yy = (y as i64 + dy * s).clamp(0, h as i64 - 1) as usize;
            for dx in -CENSUS_RADIUS..=CENSUS_RADIUS {
                if dx == 0 && dy == 0 {
                    continue;
                }
                let xx = (x as i64 + dx * s).clamp(0, w as i64 - 1) as usize;
                let diff = values[yy * w + xx] - centre;
                if diff > CENSUS_EPSILON {
                    brighter |= 1 << bit;
                } else if diff < -CENSUS_EPSILON {
                    darker |= 1 << bit;
                }
                bit += 1;
            }
        }
        Census { brighter, darker }
    }

    /// Trits that differ (0..=24).
    #[inline(always)]
    pub fn distance(self, other: Census) -> u32 {
        ((self.brighter ^ other.brighter) | (self.darker ^ other.darker)).count_ones()
    }

    /// The signature of every sample of a `w x h` image, neighbours `step` samples apart.
    pub fn image(values: &[f64], w: usize, h: usize, step: usize) -> Vec<Census> {
        (0..w * h)
            .map(|i| Census::at(values, w, h, i % w, i / w, step))
            .collect()
    }
}

impl FlowEvidence {
    /// Evidence for frames `i1`, `i2` (same size, already pre-smoothed as wanted) with base flows
    /// `base` (in pixels, rounded to the lattice; `None` for zero). Errors on mismatched sizes
    /// or a bad `sigma`. O(pixels · sub²).
    pub fn new(
        i1: &GrayImage,
        i2: &GrayImage,
        labels: FlowLabels,
        sigma: f64,
        base: Option<(&[f64], &[f64])>,
    ) -> Result<Self> {
        check_positive("data sigma", sigma)?;
        if (i1.width, i1.height) != (i2.width, i2.height) {
            return Err(Error::param(
                "frames",
                format!(
                    "frame 1 is {} x {} but frame 2 is {} x {}",
                    i1.width, i1.height, i2.width, i2.height
                ),
            ));
        }
        let (w, h) = (i1.width, i1.height);
        if w == 0 || h == 0 {
            return Err(Error::param("frames", "the frames have no pixels"));
        }
        let sub = labels.sub();
        let (fine, fine_w, fine_h) = upsample_lattice(i2, sub);
        let base = match base {
            None => Vec::new(),
            Some((u, v)) => {
                if u.len() != w * h || v.len() != w * h {
                    return Err(Error::param(
                        "base flow",
                        format!("needs {} values per component", w * h),
                    ));
                }
                let s = sub as f64;
                let cap = (4 * (w.max(h)) * sub) as f64;
                u.iter()
                    .zip(v)
                    .map(|(a, b)| {
                        let q = |c: f64| {
                            if c.is_finite() {
                                (c * s).round().clamp(-cap, cap) as i32
                            } else {
                                0
                            }
                        };
                        [q(*a), q(*b)]
                    })
                    .collect()
            }
        };
        Ok(FlowEvidence {
            width: w,
            height: h,
            labels,
            i1: i1.pixels.clone(),
            fine,
            fine_w,
            fine_h,
            base,
            sigma,
            inv_two_var: 1.0 / (2.0 * sigma * sigma),
            gradient_weight: 0.0,
            grad1: Vec::new(),
            fine_grad: Vec::new(),
            census_weight: 0.0,
            census1: Vec::new(),
            fine_census: Vec::new(),
        })
    }

    /// Replaces brightness constancy by the census data term `κ H(C1(p), C2(q))` (beyond the
    /// paper; see the module doc), `κ` in squared gray levels per differing trit so that `σ_u`
    /// scales it like the term it replaces; `i1` is the frame given to [`Self::new`]; `κ = 0`
    /// keeps brightness constancy. Gradient constancy, if on, is added to it. O(pixels · sub²
    /// · 24); 8 bytes per lattice node.
    pub fn with_census(mut self, i1: &GrayImage, weight: f64) -> Result<Self> {
        if !(weight.is_finite() && weight >= 0.0) {
            return Err(Error::param(
                "census weight",
                format!("must be finite and at least 0, got {weight}"),
            ));
        }
        if (i1.width, i1.height) != (self.width, self.height) {
            return Err(Error::param("frames", "census frame differs in size"));
        }
        self.census_weight = weight;
        if weight == 0.0 {
            self.census1 = Vec::new();
            self.fine_census = Vec::new();
            return Ok(self);
        }
        self.census1 = Census::image(&i1.pixels, self.width, self.height, 1);
        self.fine_census = Census::image(&self.fine, self.fine_w, self.fine_h, self.labels.sub());
        Ok(self)
    }

    /// The census weight `κ` (0: brightness constancy).
    pub fn census_weight(&self) -> f64 {
        self.census_weight
    }

    /// Adds gradient constancy (Brox et al. 2004, eq. 3; beyond the paper): the squared
    /// difference becomes `(I1(p) - I2(q))² + λ ‖∇I1(p) - ∇I2(q)‖²` at `q = p + c + x`, which an
    /// additive brightness change between the frames leaves unchanged. `i1`, `i2` are the
    /// frames given to [`Self::new`]; `λ = 0` keeps the paper's term. O(pixels · sub²).
    pub fn with_gradient(mut self, i1: &GrayImage, i2: &GrayImage, weight: f64) -> Result<Self> {
        if !(weight.is_finite() && weight >= 0.0) {
            return Err(Error::param(
                "gradient weight",
                format!("must be finite and at least 0, got {weight}"),
            ));
        }
        if (i1.width, i1.height) != (self.width, self.height)
            || (i2.width, i2.height) != (self.width, self.height)
        {
            return Err(Error::param("frames", "gradient frames differ in size"));
        }
        self.gradient_weight = weight;
        if weight == 0.0 {
            self.grad1 = Vec::new();
            self.fine_grad = Vec::new();
            return Ok(self);
        }
        let (gx1, gy1) = central_gradient(i1);
        self.grad1 = gx1
            .pixels
            .iter()
            .zip(&gy1.pixels)
            .map(|(&a, &b)| [a, b])
            .collect();
        let (gx2, gy2) = central_gradient(i2);
        let sub = self.labels.sub();
        let (fx, _, _) = upsample_lattice(&gx2, sub);
        let (fy, _, _) = upsample_lattice(&gy2, sub);
        self.fine_grad = fx.into_iter().zip(fy).map(|(a, b)| [a, b]).collect();
        Ok(self)
    }

    /// The weight `λ` of gradient constancy (0: brightness constancy alone).
    pub fn gradient_weight(&self) -> f64 {
        self.gradient_weight
    }

    pub fn size(&self) -> (usize, usize) {
        (self.width, self.height)
    }

    pub fn labels(&self) -> FlowLabels {
        self.labels
    }

    pub fn sigma(&self) -> f64 {
        self.sigma
    }

    /// Base flow of pixel `u` in lattice steps.
    pub fn base_steps(&self, u: NodeId) -> [i32; 2] {
        self.base.get(u).copied().unwrap_or([0, 0])
    }

    /// Base flow of pixel `u` in pixels.
    pub fn base_flow(&self, u: NodeId) -> [f64; 2] {
        let b = self.base_steps(u);
        let h = self.labels.step();
        [b[0] as f64 * h, b[1] as f64 * h]
    }

    /// True when every base flow is zero.
    pub fn has_base(&self) -> bool {
        !self.base.is_empty()
    }

    /// The data cost at every label into `out`: `(I1(p) - I2(q))²` at `q = p + c_u + x`, or
    /// with the census term `κ H(C1(p), C2(q))`; plus gradient constancy when on. O(labels).
    #[inline(always)]
    fn squared_differences(&self, u: NodeId, out: &mut [f64]) {
        let n = self.labels.per_axis();
        let half = self.labels.half() as i64;
        let s = self.labels.sub() as i64;
        let b = self.base_steps(u);
        let (px, py) = ((u % self.width) as i64, (u / self.width) as i64);
        let x0 = s * px + b[0] as i64 - half;
        let y0 = s * py + b[1] as i64 - half;
        let (fw, fh) = (self.fine_w as i64, self.fine_h as i64);
        let i1 = self.i1[u];
        if self.census_weight > 0.0 {
            let (c1, kappa) = (self.census1[u], self.census_weight);
            for (iy, dst) in out.chunks_exact_mut(n).enumerate() {
                let yy = (y0 + iy as i64).clamp(0, fh - 1) as usize;
                let row = &self.fine_census[yy * self.fine_w..(yy + 1) * self.fine_w];
                for (ix, o) in dst.iter_mut().enumerate() {
                    let c2 = row[(x0 + ix as i64).clamp(0, fw - 1) as usize];
                    *o = kappa * f64::from(c1.distance(c2));
                }
            }
        } else {
            for (iy, dst) in out.chunks_exact_mut(n).enumerate() {
                let yy = (y0 + iy as i64).clamp(0, fh - 1) as usize;
                let row = &self.fine[yy * self.fine_w..(yy + 1) * self.fine_w];
                if x0 >= 0 && x0 + n as i64 <= fw {
                    let src = &row[x0 as usize..x0 as usize + n];
                    for (o, &v) in dst.iter_mut().zip(src) {
                        let e = i1 - v;
                        *o = e * e;
                    }
                } else {
                    for (ix, o) in dst.iter_mut().enumerate() {
                        let xx = (x0 + ix as i64).clamp(0, fw - 1) as usize;
                        let e = i1 - row[xx];
                        *o = e * e;
                    }
                }
            }
        }
        if self.gradient_weight > 0.0 {
            let lambda = self.gradient_weight;
            let g1 = self.grad1[u];
            for (iy, dst) in out.chunks_exact_mut(n).enumerate() {
                let yy = (y0 + iy as i64).clamp(0, fh - 1) as usize;
                let row = &self.fine_grad[yy * self.fine_w..(yy + 1) * self.fine_w];
                for (ix, o) in dst.iter_mut().enumerate() {
                    let g2 = row[(x0 + ix as i64).clamp(0, fw - 1) as usize];
                    let (ex, ey) = (g1[0] - g2[0], g1[1] - g2[1]);
                    *o += lambda * (ex * ex + ey * ey);
                }
            }
        }
    }

    #[inline(always)]
    fn fill_body(&self, u: NodeId, out: &mut [f64]) {
        self.squared_differences(u, out);
        let mut min = f64::INFINITY;
        for &e in out.iter() {
            min = if e < min { e } else { min };
        }
        let c = self.inv_two_var;
        for o in out.iter_mut() {
            *o = exp_nonpositive(-(*o - min) * c);
        }
    }

    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2")]
    fn fill_avx2(&self, u: NodeId, out: &mut [f64]) {
        self.fill_body(u, out)
    }
}

impl NodeEvidence for FlowEvidence {
    fn num_nodes(&self) -> usize {
        self.width * self.height
    }

    fn grid_len(&self) -> usize {
        self.labels.len()
    }

    /// O(labels); compiled for AVX2 where the CPU has it (same arithmetic, no fused
    /// multiply-adds, so the same numbers).
    fn fill(&self, u: NodeId, out: &mut [f64]) {
        #[cfg(target_arch = "x86_64")]
        if std::arch::is_x86_feature_detected!("avx2") {
            // SAFETY: the CPU supports AVX2 (checked on the line above).
            return unsafe { self.fill_avx2(u, out) };
        }
        self.fill_body(u, out)
    }
}

/// `exp(x)` for `x <= 0`, branch-free so that loops over it vectorise: `x = k ln 2 + r` with
/// `|r| <= ln 2 / 2` (Cody-Waite, two-part ln 2), `exp(r)` by its degree-12 Taylor polynomial
/// (truncation below 1e-15 relative), times `2^k` built from the exponent bits. Arguments below
/// -700 give `exp(-700) ≈ 1e-304` (never a denormal or zero). Relative error below 2e-15.
#[inline(always)]
pub fn exp_nonpositive(x: f64) -> f64 {
    const LOG2E: f64 = std::f64::consts::LOG2_E;
    // ln 2 split so that k · LN2_HI is exact for |k| < 2^11 (its low 21 bits are zero).
    const LN2_HI: f64 = f64::from_bits(0x3fe6_2e42_fee0_0000);
    const LN2_LO: f64 = f64::from_bits(0x3dea_39ef_3579_3c76);
    // 1.5 · 2^52: adding it rounds to an integer held in the low mantissa bits.
    const MAGIC: f64 = 6_755_399_441_055_744.0;
    let x = if x < -700.0 { -700.0 } else { x };
    let t = x * LOG2E + MAGIC;
    let k = t - MAGIC;
    let r = (x - k * LN2_HI) - k * LN2_LO;
    let mut p = 1.0 / 479_001_600.0;
    p = p * r + 1.0 / 39_916_800.0;
    p = p * r + 1.0 / 3_628_800.0;
    p = p * r + 1.0 / 362_880.0;
    p = p * r + 1.0 / 40_320.0;
    p = p * r + 1.0 / 5_040.0;
    p = p * r + 1.0 / 720.0;
    p = p * r + 1.0 / 120.0;
    p = p * r + 1.0 / 24.0;
    p = p * r + 1.0 / 6.0;
    p = p * r + 0.5;
    p = p * r + 1.0;
    p = p * r + 1.0;
    // k in [-1010, 0]: 2^k has biased exponent k + 1023 in [13, 1023].
    let bits = t.to_bits().wrapping_sub(MAGIC.to_bits()).wrapping_add(1023) << 52;
    p * f64::from_bits(bits)
}

/// The flow MRF of one image (or pyramid level): the pixel grid, the labels, the evidence, the
/// smoothness `σ_uv` and each edge's shift.
#[derive(Debug, Clone)]
pub struct FlowMrf {
    pub width: usize,
    pub height: usize,
    /// The 4-connected grid; pixel `(x, y)` is node `y · width + x`.
    pub graph: Graph,
    pub labels: FlowLabels,
    pub evidence: Arc<FlowEvidence>,
    /// `σ_uv` of the smoothness prior, in pixels.
    pub sigma_smooth: f64,
    /// Outlier weight `ρ` of the robust smoothness `(1 - ρ) g + ρ` (0: the paper's Gaussian
    /// `g`). Beyond the paper: its negative log is a truncated quadratic, so a motion boundary
    /// costs at most `-ln ρ` instead of growing with the jump.
    pub smooth_outlier: f64,
    /// Per undirected edge `(a, b)` (graph order): `δ = c_a - c_b` in lattice steps, clamped to
    /// `±d`; the edge potential is `exp(-‖x_a - x_b + δ h‖² / (2σ_uv²))`.
    pub shifts: Vec<[i64; 2]>,
}

impl FlowMrf {
    /// The MRF of `evidence` with smoothness `sigma_smooth` (pixels). O(pixels).
    pub fn new(evidence: FlowEvidence, sigma_smooth: f64) -> Result<Self> {
        check_positive("smoothness sigma", sigma_smooth)?;
        let (width, height) = evidence.size();
        let graph = Graph::grid(width, height)?;
        let half = evidence.labels().half() as i64;
        let shifts = graph
            .edges()
            .iter()
            .map(|&(a, b)| {
                let (ca, cb) = (evidence.base_steps(a), evidence.base_steps(b));
                [
                    (ca[0] as i64 - cb[0] as i64).clamp(-half, half),
                    (ca[1] as i64 - cb[1] as i64).clamp(-half, half),
                ]
            })
            .collect();
        Ok(FlowMrf {
            width,
            height,
            graph,
            labels: evidence.labels(),
            evidence: Arc::new(evidence),
            sigma_smooth,
            smooth_outlier: 0.0,
            shifts,
        })
    }

    /// The same MRF with the robust smoothness `(1 - ρ) g + ρ`. Errors unless `ρ` is in
    /// `[0, 1)`.
    pub fn with_smooth_outlier(mut self, outlier: f64) -> Result<Self> {
        if !(0.0..1.0).contains(&outlier) {
            return Err(Error::param(
                "smoothness outlier weight",
                format!("must be in [0, 1), got {outlier}"),
            ));
        }
        self.smooth_outlier = outlier;
        Ok(self)
    }

    /// The distinct shifts, sorted, and for each edge the index of its shift in that list.
    pub fn shift_classes(&self) -> (Vec<[i64; 2]>, Vec<usize>) {
        let mut distinct = self.shifts.clone();
        distinct.sort_unstable();
        distinct.dedup();
        let index = self
            .shifts
            .iter()
            .map(|s| distinct.binary_search(s).expect("present"))
            .collect();
        (distinct, index)
    }

    /// Total flow at pixel `u` for the displacement `x` (pixels).
    pub fn total_flow(&self, u: NodeId, x: [f64; 2]) -> [f64; 2] {
        let c = self.evidence.base_flow(u);
        [c[0] + x[0], c[1] + x[1]]
    }
}

/// Bilinear value of a `w x h` row-major array at `(x, y)` (pixel centres at integers),
/// clamped to the border.
pub fn bilinear(values: &[f64], w: usize, h: usize, x: f64, y: f64) -> f64 {
    let x = x.clamp(0.0, (w - 1) as f64);
    let y = y.clamp(0.0, (h - 1) as f64);
    let (x0, y0) = (x.floor() as usize, y.floor() as usize);
    let (x1, y1) = ((x0 + 1).min(w - 1), (y0 + 1).min(h - 1));
    let (fx, fy) = (x - x0 as f64, y - y0 as f64);
    let at = |xx: usize, yy: usize| values[yy * w + xx];
    (1.0 - fy) * ((1.0 - fx) * at(x0, y0) + fx * at(x1, y0))
        + fy * ((1.0 - fx) * at(x0, y1) + fx * at(x1, y1))
}

/// The image bilinearly interpolated on the lattice of `sub` points per pixel: returns the
/// values, `sub (w - 1) + 1` and `sub (h - 1) + 1`. O(pixels · sub²), rayon over rows.
pub fn upsample_lattice(img: &GrayImage, sub: usize) -> (Vec<f64>, usize, usize) {
    let (w, h) = (img.width, img.height);
    let (fw, fh) = (sub * (w - 1) + 1, sub * (h - 1) + 1);
    let s = sub as f64;
    let mut out = vec![0.0; fw * fh];
    out.par_chunks_mut(fw).enumerate().for_each(|(y, row)| {
        for (x, o) in row.iter_mut().enumerate() {
            *o = bilinear(&img.pixels, w, h, x as f64 / s, y as f64 / s);
        }
    });
    (out, fw, fh)
}

/// Central differences `(I(x+1) - I(x-1)) / 2` along x and y (one-sided at the border, zero on
/// a side of one pixel). O(pixels).
pub fn central_gradient(img: &GrayImage) -> (GrayImage, GrayImage) {
    let (w, h) = (img.width, img.height);
    let at = |x: usize, y: usize| img.pixels[y * w + x];
    let mut gx = Vec::with_capacity(w * h);
    let mut gy = Vec::with_capacity(w * h);
    for y in 0..h {
        for x in 0..w {
            let (xl, xr) = (x.saturating_sub(1), (x + 1).min(w - 1));
            let (yu, yd) = (y.saturating_sub(1), (y + 1).min(h - 1));
            let dx = if xr > xl { (xr - xl) as f64 } else { 1.0 };
            let dy = if yd > yu { (yd - yu) as f64 } else { 1.0 };
            gx.push((at(xr, y) - at(xl, y)) / dx);
            gy.push((at(x, yd) - at(x, yu)) / dy);
        }
    }
    let image = |pixels| GrayImage {
        width: w,
        height: h,
        pixels,
    };
    (image(gx), image(gy))
}

/// A flow field of a `cw x ch` level brought to the `fw x fh` level below it (twice the size,
/// see [`downsample2`]): bilinear at `((x + 0.5) / 2 - 0.5, (y + 0.5) / 2 - 0.5)`, times the
/// size ratio. O(fine pixels), rayon over rows.
pub fn upsample_flow(
    u: &[f64],
    v: &[f64],
    (cw, ch): (usize, usize),
    (fw, fh): (usize, usize),
) -> (Vec<f64>, Vec<f64>) {
    let (sx, sy) = (fw as f64 / cw as f64, fh as f64 / ch as f64);
    let mut uu = vec![0.0; fw * fh];
    let mut vv = vec![0.0; fw * fh];
    uu.par_chunks_mut(fw.max(1))
        .zip(vv.par_chunks_mut(fw.max(1)))
        .enumerate()
        .for_each(|(y, (ru, rv))| {
            let cy = (y as f64 + 0.5) / sy - 0.5;
            for (x, (a, b)) in ru.iter_mut().zip(rv.iter_mut()).enumerate() {
                let cx = (x as f64 + 0.5) / sx - 0.5;
                *a = sx * bilinear(u, cw, ch, cx, cy);
                *b = sy * bilinear(v, cw, ch, cx, cy);
            }
        });
    (uu, vv)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fast_exp_matches_std() {
        let mut worst: f64 = 0.0;
        for i in 0..=70_000 {
            let x = -(i as f64) * 0.01 - 1e-3 * (i % 7) as f64;
            let a = exp_nonpositive(x);
            let b = x.exp();
            worst = worst.max(((a - b) / b).abs());
        }
        assert!(worst < 2e-15, "{worst}");
        assert_eq!(exp_nonpositive(0.0), 1.0);
        assert!(exp_nonpositive(-1e9) > 0.0);
    }

    #[test]
    fn labels_and_lattice() {
        let l = FlowLabels::new(2.0, 2).unwrap();
        assert_eq!(l.per_axis(), 9);
        assert_eq!(l.value(0), [-2.0, -2.0]);
        assert_eq!(l.value(40), [0.0, 0.0]);
        assert!(FlowLabels::new(1.3, 2).is_err());
        let img = GrayImage {
            width: 3,
            height: 2,
            pixels: vec![0.0, 10.0, 20.0, 30.0, 40.0, 50.0],
        };
        let (f, fw, fh) = upsample_lattice(&img, 2);
        assert_eq!((fw, fh), (5, 3));
        assert_eq!(f[1], 5.0);
        assert_eq!(f[fw + 1], 20.0);
    }

    #[test]
    fn evidence_peaks_at_the_true_shift() {
        // I2(x, y) = I1(x - 1, y): the flow is (+1, 0).
        let (w, h) = (12, 9);
        let f = |x: f64, y: f64| 100.0 + 50.0 * (0.7 * x).sin() + 30.0 * (0.5 * y + 0.3 * x).cos();
        let mk = |dx: f64| GrayImage {
            width: w,
            height: h,
            pixels: (0..w * h)
                .map(|i| f((i % w) as f64 - dx, (i / w) as f64))
                .collect(),
        };
        let labels = FlowLabels::new(2.0, 2).unwrap();
        let ev = FlowEvidence::new(&mk(0.0), &mk(1.0), labels, 5.0, None).unwrap();
        let mut out = vec![0.0; labels.len()];
        let u = 4 * w + 5;
        ev.fill(u, &mut out);
        let best = (0..out.len())
            .max_by(|&a, &b| out[a].total_cmp(&out[b]))
            .unwrap();
        assert_eq!(labels.value(best), [1.0, 0.0]);
        assert_eq!(out[best], 1.0);
    }

    #[test]
    fn census_evidence_survives_a_brightness_change_that_breaks_brightness_constancy() {
        // I2(x, y) = 1.1 I1(x - 1, y) + 4 (the gain and offset of the brightness-changed
        // pair): the flow is (+1, 0) at every pixel.
        let (w, h) = (16, 12);
        let f = |x: f64, y: f64| 100.0 + 50.0 * (0.7 * x).sin() + 30.0 * (0.5 * y + 0.3 * x).cos();
        let mk = |dx: f64, gain: f64, offset: f64| GrayImage {
            width: w,
            height: h,
            pixels: (0..w * h)
                .map(|i| gain * f((i % w) as f64 - dx, (i / w) as f64) + offset)
                .collect(),
        };
        let (i1, i2) = (mk(0.0, 1.0, 0.0), mk(1.0, 1.1, 4.0));
        let labels = FlowLabels::new(2.0, 2).unwrap();
        // ψ at the true shift (1 = among the best labels: census distances are whole numbers,
        // so neighbouring half-pixel labels can tie) and the share of labels that tie with it.
        let at_truth = |ev: &FlowEvidence, u: usize| {
            let mut out = vec![0.0; labels.len()];
            ev.fill(u, &mut out);
            let truth = (0..out.len())
                .find(|&i| labels.value(i) == [1.0, 0.0])
                .unwrap();
            let ties = out.iter().filter(|&&v| v >= out[truth]).count();
            (out[truth], ties as f64 / out.len() as f64)
        };
        let brightness = FlowEvidence::new(&i1, &i2, labels, 2.0, None).unwrap();
        let census = FlowEvidence::new(&i1, &i2, labels, 2.0, None)
            .unwrap()
            .with_census(&i1, 8.0)
            .unwrap();
        assert_eq!(census.census_weight(), 8.0);
        // Interior pixels (the 5 x 5 window and the window of shifts inside the frame).
        let (mut census_best, mut brightness_best, mut total) = (0, 0, 0);
        let mut census_ties = 0.0;
        for y in 3..h - 3 {
            for x in 4..w - 4 {
                let u = y * w + x;
                total += 1;
                let (psi, ties) = at_truth(&census, u);
                census_best += usize::from(psi == 1.0);
                census_ties += ties;
                brightness_best += usize::from(at_truth(&brightness, u).0 == 1.0);
            }
        }
        assert!(
            census_best * 10 >= total * 9,
            "census has the shift among its best labels at {census_best} of {total} pixels"
        );
        let mean_ties = census_ties / total as f64;
        assert!(mean_ties < 0.25, "census ties {mean_ties:.2} of the labels");
        assert!(
            brightness_best * 2 < total,
            "brightness constancy found it at {brightness_best} of {total} (expected to fail)"
        );
    }

    #[test]
    fn census_signatures_ignore_gain_and_offset_and_count_differing_trits() {
        let w = 7;
        let base: Vec<f64> = (0..w * w).map(|i| ((i * 37) % 101) as f64).collect();
        let changed: Vec<f64> = base.iter().map(|v| 1.1 * v + 4.0).collect();
        let a = Census::at(&base, w, w, 3, 3, 1);
        let b = Census::at(&changed, w, w, 3, 3, 1);
        // Differences of at least ε stay beyond ε under a gain of 1.1.
        assert_eq!(a.distance(b), 0);
        assert_eq!(a.distance(a), 0);
        let flat = Census::at(&vec![10.0; w * w], w, w, 3, 3, 1);
        let mut one_brighter = vec![10.0; w * w];
        one_brighter[w + 1] = 10.0 + 3.0; // beyond the dead zone
        assert_eq!(flat.distance(Census::at(&one_brighter, w, w, 3, 3, 1)), 1);
        one_brighter[w + 1] = 10.0 + 1.5; // inside it: equal
        assert_eq!(flat.distance(Census::at(&one_brighter, w, w, 3, 3, 1)), 0);
        // Outside the 5 x 5 window: no effect.
        let mut outside = vec![10.0; w * w];
        outside[0] = 200.0;
        assert_eq!(flat.distance(Census::at(&outside, w, w, 3, 3, 1)), 0);
        let centre_dark: Vec<f64> = (0..w * w)
            .map(|i| if i == 3 * w + 3 { 0.0 } else { 10.0 })
            .collect();
        assert_eq!(flat.distance(Census::at(&centre_dark, w, w, 3, 3, 1)), 24);
    }
}
