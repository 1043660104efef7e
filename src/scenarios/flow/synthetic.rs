//! The built-in frame pair: a procedural texture and the same texture moved by a known smooth
//! flow (a rotation about the centre plus a translation), with its exact ground truth.
//!
//! The texture `T(x, y)` is a continuous function (gray 128 plus 60 Gaussian blobs of radius 2 to
//! 10 px and 3 sinusoidal gratings of wavelength 6 to 20 px, drawn from the seed, clamped to
//! 0..255), so both frames are sampled exactly, without interpolation: frame 1 is `T(p)`,
//! frame 2 at `q` is `T(p)` for the `p` that moves to `q`, `p = c + R⁻¹(q - c - t)`. The flow
//! at pixel `p` of frame 1 is `w(p) = c + R(p - c) + t - p`, rotation `R` by the angle that
//! moves the corners by 2 px (so the motion stays small whatever the size), translation
//! `t = (1, -0.5)` px: at most about 3.1 px. Cost O(pixels · 63).

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use crate::io::{FlowField, GrayImage};

/// Translation of the built-in flow, in pixels.
pub const TRANSLATION: [f64; 2] = [1.0, -0.5];
/// Motion of the corners from the rotation alone, in pixels.
pub const CORNER_ROTATION_PX: f64 = 2.0;

struct Blob {
    x: f64,
    y: f64,
    inv_two_r2: f64,
    amp: f64,
}

struct Grating {
    kx: f64,
    ky: f64,
    phase: f64,
    amp: f64,
}

/// The procedural texture of a seed on a `w x h` canvas.
pub struct Texture {
    blobs: Vec<Blob>,
    gratings: Vec<Grating>,
}

impl Texture {
    pub fn new(width: usize, height: usize, seed: u64) -> Self {
        let mut rng = ChaCha8Rng::seed_from_u64(seed ^ 0x5eed_f10e);
        let (w, h) = (width as f64, height as f64);
        let blobs = (0..60)
            .map(|_| {
                let r: f64 = rng.random_range(2.0..10.0);
                let sign = if rng.random::<bool>() { 1.0 } else { -1.0 };
                Blob {
                    x: rng.random_range(-10.0..w + 10.0),
                    y: rng.random_range(-10.0..h + 10.0),
                    inv_two_r2: 1.0 / (2.0 * r * r),
                    amp: sign * rng.random_range(40.0..110.0),
                }
            })
            .collect();
        let gratings = (0..3)
            .map(|_| {
                let angle: f64 = rng.random_range(0.0..std::f64::consts::PI);
                let wavelength: f64 = rng.random_range(6.0..20.0);
                let k = 2.0 * std::f64::consts::PI / wavelength;
                Grating {
                    kx: k * angle.cos(),
                    ky: k * angle.sin(),
                    phase: rng.random_range(0.0..std::f64::consts::TAU),
                    amp: rng.random_range(10.0..20.0),
                }
            })
            .collect();
        Texture { blobs, gratings }
    }

    /// `T(x, y)` in 0..255.
    pub fn value(&self, x: f64, y: f64) -> f64 {
        let mut v = 128.0;
        for b in &self.blobs {
            let (dx, dy) = (x - b.x, y - b.y);
            let q = (dx * dx + dy * dy) * b.inv_two_r2;
            if q < 20.0 {
                v += b.amp * (-q).exp();
            }
        }
        for g in &self.gratings {
            v += g.amp * (g.kx * x + g.ky * y + g.phase).sin();
        }
        v.clamp(0.0, 255.0)
    }
}

/// The rotation angle (radians) and centre of the built-in flow on a `w x h` frame.
pub fn motion(width: usize, height: usize) -> (f64, [f64; 2]) {
    let c = [(width as f64 - 1.0) / 2.0, (height as f64 - 1.0) / 2.0];
    let half_diagonal = c[0].hypot(c[1]).max(1.0);
    (CORNER_ROTATION_PX / half_diagonal, c)
}

/// Frame 1, frame 2 and the ground-truth flow of the built-in pair.
pub fn synthetic_pair(width: usize, height: usize, seed: u64) -> (GrayImage, GrayImage, FlowField) {
    let tex = Texture::new(width, height, seed);
    let (theta, c) = motion(width, height);
    let (cs, sn) = (theta.cos(), theta.sin());
    let [tx, ty] = TRANSLATION;
    let n = width * height;
    let (mut f1, mut f2) = (Vec::with_capacity(n), Vec::with_capacity(n));
    let (mut u, mut v) = (Vec::with_capacity(n), Vec::with_capacity(n));
    for y in 0..height {
        for x in 0..width {
            let (px, py) = (x as f64, y as f64);
            f1.push(tex.value(px, py));
            // Forward flow of p: c + R (p - c) + t - p.
            let (dx, dy) = (px - c[0], py - c[1]);
            u.push(c[0] + cs * dx - sn * dy + tx - px);
            v.push(c[1] + sn * dx + cs * dy + ty - py);
            // Frame 2 at q = p: the source point c + R^-1 (q - c - t).
            let (qx, qy) = (px - c[0] - tx, py - c[1] - ty);
            let sx = c[0] + cs * qx + sn * qy;
            let sy = c[1] - sn * qx + cs * qy;
            f2.push(tex.value(sx, sy));
        }
    }
    let frame = |pixels| GrayImage {
        width,
        height,
        pixels,
    };
    (
        frame(f1),
        frame(f2),
        FlowField {
            width,
            height,
            u,
            v,
        },
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frame_two_is_frame_one_moved_by_the_flow() {
        let (f1, f2, gt) = synthetic_pair(40, 30, 1);
        let tex = Texture::new(40, 30, 1);
        // T at p equals frame 2 at p + w(p) (evaluated on the texture, not interpolated).
        let (theta, c) = motion(40, 30);
        let (cs, sn) = (theta.cos(), theta.sin());
        for &(x, y) in &[(3usize, 4usize), (20, 15), (38, 28)] {
            let i = y * 40 + x;
            let (qx, qy) = (x as f64 + gt.u[i], y as f64 + gt.v[i]);
            let (ax, ay) = (qx - c[0] - TRANSLATION[0], qy - c[1] - TRANSLATION[1]);
            let back = tex.value(c[0] + cs * ax + sn * ay, c[1] - sn * ax + cs * ay);
            assert!((back - f1.pixels[i]).abs() < 1e-9);
        }
        assert!(
            gt.max_speed() < 3.2 && gt.max_speed() > 2.0,
            "{}",
            gt.max_speed()
        );
        assert_ne!(f1.pixels, f2.pixels);
    }
}
