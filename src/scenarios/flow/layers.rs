//! A built-in pair with large motion (for the pyramid's reach; the paper's experiments move
//! a few pixels): a background and three rectangular layers in front of it, each moving
//! rigidly, that occlude the background and each other, with exact ground truth.
//!
//! Drawn from the seed: the background moves by up to 3 px per axis and holds a textureless
//! band (its top third: a smooth vertical shading, no texture); each layer is 22 % to 38 % of
//! the frame on each side and moves 20 to 30 px in any direction; the lowest layer is
//! textureless (a flat gray with a faint linear shading, at least 40 gray levels off the
//! background's mean), the other two carry their own procedural texture
//! ([`super::synthetic::Texture`]). Frame 1 at pixel `p` shows the topmost layer whose
//! rectangle holds `p`; frame 2 at `q` the topmost layer whose rectangle, moved by its motion
//! `t`, holds `q`, sampled at `q - t` (so every layer's texture moves rigidly and is sampled
//! exactly, never interpolated). Pixels that straddle an edge average 4 x 4 sub-samples; both
//! frames get Gaussian noise of 1 gray level (seeded) and are rounded to whole gray levels, so
//! the pair written as 8-bit PNG files is the pair in memory. The ground truth at `p` is the
//! motion of the topmost layer at `p` in frame 1 (defined also where frame 2 occludes it, as
//! Middlebury's is). Cost O(pixels · 63), rayon over rows.

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rand_distr::{Distribution, Normal};
use rayon::prelude::*;

use super::synthetic::Texture;
use crate::io::{FlowField, GrayImage};

/// Shortest and longest motion of a foreground layer, pixels.
pub const LAYER_MOTION: (f64, f64) = (20.0, 30.0);
/// Largest background motion per axis, pixels.
pub const BACKGROUND_MOTION: f64 = 3.0;
/// Standard deviation of the noise added to both frames, gray levels.
pub const NOISE: f64 = 1.0;
/// Sub-samples per axis of a pixel that straddles a layer edge.
const SUPERSAMPLE: usize = 4;

/// What a layer shows.
enum Fill {
    /// `base + slope · (x, y)`: no texture.
    Flat {
        base: f64,
        slope: [f64; 2],
    },
    Textured(Box<Texture>),
}

/// One rigid layer: the rectangle `[x0, x1) x [y0, y1)` of frame 1 and its motion.
struct Layer {
    rect: [f64; 4],
    motion: [f64; 2],
    fill: Fill,
}

impl Layer {
    /// Holds the frame-1 point `p`.
    fn holds(&self, p: [f64; 2]) -> bool {
        let [x0, y0, x1, y1] = self.rect;
        p[0] >= x0 && p[0] < x1 && p[1] >= y0 && p[1] < y1
    }

    /// The layer's gray level at its frame-1 point `p`.
    fn value(&self, p: [f64; 2]) -> f64 {
        match &self.fill {
            Fill::Flat { base, slope } => base + slope[0] * p[0] + slope[1] * p[1],
            Fill::Textured(t) => t.value(p[0], p[1]),
        }
    }
}

/// The background: a texture below `sky`, a smooth shading above it, moving by `motion`.
struct Background {
    motion: [f64; 2],
    sky: f64,
    texture: Texture,
}

impl Background {
    fn value(&self, p: [f64; 2]) -> f64 {
        if p[1] < self.sky {
            // 170 at the top to 200 at the sky line: gradients of a fraction of a gray level
            // per pixel, below the noise.
            170.0 + 30.0 * p[1] / self.sky.max(1.0)
        } else {
            self.texture.value(p[0], p[1])
        }
    }
}

/// The scene of a seed on a `w x h` frame.
struct Scene {
    background: Background,
    /// Bottom to top.
    layers: Vec<Layer>,
}

impl Scene {
    fn new(width: usize, height: usize, seed: u64) -> Self {
        let mut rng = ChaCha8Rng::seed_from_u64(seed ^ 0x1a7e_25f1_0000);
        let (w, h) = (width as f64, height as f64);
        let motion = |rng: &mut ChaCha8Rng| -> [f64; 2] {
            let length = rng.random_range(LAYER_MOTION.0..=LAYER_MOTION.1);
            let angle = rng.random_range(0.0..std::f64::consts::TAU);
            [length * angle.cos(), length * angle.sin()]
        };
        let background = Background {
            motion: [
                rng.random_range(-BACKGROUND_MOTION..=BACKGROUND_MOTION),
                rng.random_range(-BACKGROUND_MOTION..=BACKGROUND_MOTION),
            ],
            sky: (h / 3.0).round(),
            texture: Texture::new(width, height, seed.wrapping_add(11)),
        };
        let mut layers = Vec::with_capacity(3);
        for k in 0..3u64 {
            let lw = w * rng.random_range(0.22..0.38);
            let lh = h * rng.random_range(0.22..0.38);
            let x0 = rng.random_range(0.0..(w - lw).max(1.0));
            let y0 = rng.random_range(0.0..(h - lh).max(1.0));
            let fill = if k == 0 {
                // 40 to 70 gray levels off the background's mean (128), either way.
                let off = rng.random_range(40.0..70.0);
                let base = if rng.random::<bool>() {
                    128.0 + off
                } else {
                    128.0 - off
                };
                Fill::Flat {
                    base,
                    slope: [rng.random_range(-0.05..0.05), rng.random_range(-0.05..0.05)],
                }
            } else {
                Fill::Textured(Box::new(Texture::new(
                    width,
                    height,
                    seed.wrapping_add(100 + k),
                )))
            };
            layers.push(Layer {
                rect: [x0, y0, x0 + lw, y0 + lh],
                motion: motion(&mut rng),
                fill,
            });
        }
        Scene { background, layers }
    }

    /// The topmost layer at point `q` of frame `frame` (0 or 1): its index (None = the
    /// background) and the frame-1 point it shows there.
    fn at(&self, q: [f64; 2], frame: usize) -> (Option<usize>, [f64; 2]) {
        let s = frame as f64;
        for (i, layer) in self.layers.iter().enumerate().rev() {
            let p = [q[0] - s * layer.motion[0], q[1] - s * layer.motion[1]];
            if layer.holds(p) {
                return (Some(i), p);
            }
        }
        let m = self.background.motion;
        (None, [q[0] - s * m[0], q[1] - s * m[1]])
    }

    fn value(&self, q: [f64; 2], frame: usize) -> f64 {
        match self.at(q, frame) {
            (Some(i), p) => self.layers[i].value(p),
            (None, p) => self.background.value(p),
        }
    }

    /// Pixel `(x, y)` of frame `frame`: one sample, or 4 x 4 where the pixel's corners see
    /// different layers.
    fn pixel(&self, x: usize, y: usize, frame: usize) -> f64 {
        let (fx, fy) = (x as f64, y as f64);
        let corners = [(-0.5, -0.5), (0.5, -0.5), (-0.5, 0.5), (0.5, 0.5)]
            .map(|(dx, dy)| self.at([fx + dx, fy + dy], frame).0);
        if corners.iter().all(|c| *c == corners[0]) {
            return self.value([fx, fy], frame);
        }
        let n = SUPERSAMPLE as f64;
        let mut sum = 0.0;
        for i in 0..SUPERSAMPLE {
            for j in 0..SUPERSAMPLE {
                let q = [
                    fx - 0.5 + (j as f64 + 0.5) / n,
                    fy - 0.5 + (i as f64 + 0.5) / n,
                ];
                sum += self.value(q, frame);
            }
        }
        sum / (n * n)
    }

    /// The ground-truth flow at pixel `(x, y)` of frame 1.
    fn flow(&self, x: usize, y: usize) -> [f64; 2] {
        match self.at([x as f64, y as f64], 0) {
            (Some(i), _) => self.layers[i].motion,
            (None, _) => self.background.motion,
        }
    }
}

/// Frame 1, frame 2 and the ground-truth flow of the layered pair of `seed` (see the module
/// doc). Any size from 8 x 8.
pub fn layered_pair(width: usize, height: usize, seed: u64) -> (GrayImage, GrayImage, FlowField) {
    let scene = Scene::new(width, height, seed);
    let noise = Normal::new(0.0, NOISE).expect("positive");
    let frame = |k: usize| -> GrayImage {
        let mut pixels = vec![0.0; width * height];
        pixels
            .par_chunks_mut(width)
            .enumerate()
            .for_each(|(y, row)| {
                // One noise stream per (frame, row): the same pair whatever the thread count.
                let mut rng = ChaCha8Rng::seed_from_u64(
                    seed ^ ((k as u64 + 1) << 40) ^ (y as u64).wrapping_mul(0x9e37_79b9),
                );
                for (x, v) in row.iter_mut().enumerate() {
                    let clean = scene.pixel(x, y, k);
                    *v = (clean + noise.sample(&mut rng)).round().clamp(0.0, 255.0);
                }
            });
        GrayImage {
            width,
            height,
            pixels,
        }
    };
    let (f1, f2) = (frame(0), frame(1));
    let (mut u, mut v) = (vec![0.0; width * height], vec![0.0; width * height]);
    for y in 0..height {
        for x in 0..width {
            [u[y * width + x], v[y * width + x]] = scene.flow(x, y);
        }
    }
    (
        f1,
        f2,
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
    fn layers_move_rigidly_and_far() {
        let (w, h) = (200, 150);
        let (f1, f2, gt) = layered_pair(w, h, 3);
        let scene = Scene::new(w, h, 3);
        // Away from edges frame 2 at p + w(p) shows what frame 1 shows at p (noise apart).
        let mut checked = 0;
        for y in (2..h - 2).step_by(3) {
            for x in (2..w - 2).step_by(3) {
                let i = y * w + x;
                let (qx, qy) = (x as f64 + gt.u[i], y as f64 + gt.v[i]);
                if qx < 0.0 || qy < 0.0 || qx > (w - 1) as f64 || qy > (h - 1) as f64 {
                    continue;
                }
                // Visible in frame 2: the same layer shows the same point of its texture.
                let layer = scene.at([x as f64, y as f64], 0).0;
                if scene.at([qx, qy], 1).0 != layer {
                    continue;
                }
                let clean1 = scene.value([x as f64, y as f64], 0);
                let clean2 = scene.value([qx, qy], 1);
                assert!((clean1 - clean2).abs() < 1e-6, "({x}, {y})");
                if qx.fract() == 0.0 && qy.fract() == 0.0 {
                    let j = qy as usize * w + qx as usize;
                    assert!((f1.pixels[i] - f2.pixels[j]).abs() <= 8.0);
                }
                checked += 1;
            }
        }
        assert!(checked > 100, "{checked}");
        let speeds: Vec<f64> = (0..w * h).map(|i| gt.u[i].hypot(gt.v[i])).collect();
        let fast = speeds.iter().filter(|&&s| s >= LAYER_MOTION.0).count();
        assert!(fast * 10 > w * h, "{fast} fast pixels");
        assert!(gt.max_speed() <= LAYER_MOTION.1 + 1e-9);
        // Whole gray levels, as 8-bit files hold them; the same pair from the same seed.
        assert!(f1.pixels.iter().all(|p| p.fract() == 0.0));
        assert_eq!(layered_pair(w, h, 3).1.pixels, f2.pixels);
        assert_ne!(layered_pair(w, h, 4).1.pixels, f2.pixels);
    }

    #[test]
    fn the_sky_and_the_flat_layer_have_no_texture() {
        let (w, h) = (200, 150);
        let scene = Scene::new(w, h, 5);
        let (f1, _, _) = layered_pair(w, h, 5);
        // Rows of the sky not covered by a layer: differences between neighbours are noise.
        let mut worst: f64 = 0.0;
        for y in 2..(h / 3 - 2) {
            for x in 1..w - 1 {
                // Pixel footprints reach half a pixel beyond their centres (edge pixels
                // average sub-samples): no layer within two pixels, on this row or the next.
                let covered = |xx: f64, yy: f64| scene.at([xx, yy], 0).0.is_some();
                let near = (-4..=4).any(|k| {
                    let xx = x as f64 + 0.5 * k as f64;
                    (-1..=1).any(|l| covered(xx, y as f64 + 0.5 * l as f64))
                });
                if near {
                    continue;
                }
                let i = y * w + x;
                worst = worst.max((f1.pixels[i + 1] - f1.pixels[i - 1]).abs());
            }
        }
        assert!(worst <= 10.0, "{worst}");
        assert!(matches!(scene.layers[0].fill, Fill::Flat { .. }));
    }
}
