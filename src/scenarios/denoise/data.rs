//! The images of a denoise problem and the models learned from them: the clean image (the
//! sunset or a loaded file), the noisy test image, the training image, the discrete-BP MRF and
//! the kernel-BP templates. Cost O(pixels · C + C²).
//!
//! Training follows Song et al. 2011, Sec. 6.1: the potentials are learned from a training pair
//! that is not the test image. On the sunset the training image is the same generator's output
//! with an independent noise draw (the paper's protocol). A loaded test image trains on
//! `train_image` or else on built-in images of the same size (`train_builtin`: by default
//! four dead-leaves draws side by side, `dead_leaves.rs`, whose edges at every scale resemble a
//! photograph's, or the sunset); training on the test image's
//! own clean version is the `oracle` option (a user has no clean test image). By default
//! kernel BP's likelihood uses the observation template's expectation over the known noise
//! instead of its one noise draw per pixel (`kbp_expected_observations`, see
//! `inference::kbp::model`).

use crate::error::{Error, Result};
use crate::inference::discrete::{DiscreteMrf, EdgePotentials};
use crate::io;
use crate::model::Graph;
use rayon::prelude::*;

use super::config::{
    BuiltinTraining, DEAD_LEAVES_DRAWS, DEAD_LEAVES_SEED_OFFSET, DenoiseConfig,
    TRAINING_SEED_OFFSET,
};
use super::dead_leaves::{DeadLeavesParams, Shading, dead_leaves};
use super::{potentials, sunset};
use crate::scenarios::ScenarioParams;

/// The clean image (values and level indices) and its noisy test copy.
#[derive(Debug, Clone)]
pub struct DenoiseData {
    pub width: usize,
    pub height: usize,
    /// The C gray levels.
    pub levels: Vec<f64>,
    /// The clean image; None for a noisy image loaded as it is (`noisy_image`), which has none.
    pub clean: Option<Vec<f64>>,
    /// Index of the level nearest to each clean pixel (empty without a clean image).
    pub indices: Vec<usize>,
    pub noisy: Vec<f64>,
    /// The clean image the potentials are learned from.
    pub train: TrainingImage,
}

/// The clean training image (on the same C levels as the test image).
#[derive(Debug, Clone)]
pub struct TrainingImage {
    pub width: usize,
    pub height: usize,
    pub clean: Vec<f64>,
    pub indices: Vec<usize>,
    /// What it is, for the window and results.json.
    pub source: String,
}

/// A clean image on the C levels: `(width, height, values, level indices)`.
type Clean = (usize, usize, Vec<f64>, Vec<usize>);

fn sunset_clean(width: usize, height: usize, levels: &[f64]) -> Clean {
    let idx = sunset::sunset_indices(width, height, levels.len());
    let values = idx.iter().map(|&i| levels[i]).collect();
    (width, height, values, idx)
}

/// The built-in training image a loaded `width x height` image trains on
/// (`config.train_builtin`), each side at most `config.train_size`, with its description.
fn builtin_clean(
    config: &DenoiseConfig,
    width: usize,
    height: usize,
    levels: &[f64],
) -> (Clean, String) {
    let (width, height) = (width.min(config.train_size), height.min(config.train_size));
    let shading = match config.train_builtin {
        BuiltinTraining::Sunset => {
            return (
                sunset_clean(width, height, levels),
                format!("the built-in sunset, {width} x {height} (another image)"),
            );
        }
        BuiltinTraining::DeadLeaves => Shading::Flat,
        BuiltinTraining::DeadLeavesShaded => Shading::Ramp,
    };
    let params = DeadLeavesParams::standard(width, height, shading);
    let seed = config.seed.wrapping_add(DEAD_LEAVES_SEED_OFFSET);
    let draws: Vec<Vec<f64>> = (0..DEAD_LEAVES_DRAWS)
        .map(|j| dead_leaves(width, height, &params, draw_seed(seed, j)).values)
        .collect();
    // Side by side, row by row: the seams add a few edges, as leaf borders do.
    let mut side_by_side = Vec::with_capacity(width * height * draws.len());
    for row in 0..height {
        for draw in &draws {
            side_by_side.extend_from_slice(&draw[row * width..(row + 1) * width]);
        }
    }
    let idx: Vec<usize> = side_by_side
        .iter()
        .map(|&v| sunset::nearest_level(levels, v))
        .collect();
    let values = if config.quantize {
        idx.iter().map(|&i| levels[i]).collect()
    } else {
        side_by_side
    };
    let what = match shading {
        Shading::Flat => "flat",
        Shading::Ramp => "shaded",
    };
    (
        (width * DEAD_LEAVES_DRAWS, height, values, idx),
        format!(
            "built-in dead leaves, {DEAD_LEAVES_DRAWS} draws of {width} x {height} side by side \
             ({what} disks, radii ∝ r^-{} in {}..{} px, seeds {seed}, {}, …; another image)",
            params.exponent,
            params.r_min,
            params.r_max,
            draw_seed(seed, 1)
        ),
    )
}

/// The seed of the `j`-th dead-leaves draw (draw 0 has `seed` itself).
pub fn draw_seed(seed: u64, j: usize) -> u64 {
    seed.wrapping_add(7_919 * j as u64)
}

fn file_clean(path: &std::path::Path, levels: &[f64], quantize: bool) -> Result<Clean> {
    let img = io::load_gray(path)?;
    // Kernel BP learns its edge model from neighbouring pixel pairs, and the grid needs edges.
    if img.width < 2 || img.height < 2 {
        return Err(Error::Image {
            path: path.display().to_string(),
            reason: format!(
                "image is {} x {}; denoising needs at least 2 x 2 pixels (neighbouring pairs)",
                img.width, img.height
            ),
        });
    }
    // In parallel: a photograph has millions of pixels.
    let idx: Vec<usize> = img
        .pixels
        .par_iter()
        .map(|&v| sunset::nearest_level(levels, v))
        .collect();
    let values = if quantize {
        idx.par_iter().map(|&i| levels[i]).collect()
    } else {
        img.pixels
    };
    Ok((img.width, img.height, values, idx))
}

/// The training description, naming kernel BP's template shifts where there are any and how it
/// learns its likelihood.
fn describe_training(source: String, config: &DenoiseConfig) -> String {
    let shifts = config.resolved_template_shifts();
    let shifted = if shifts.iter().all(|&s| s == 0.0) {
        String::new()
    } else {
        let list: Vec<String> = shifts.iter().map(|s| format!("{s}")).collect();
        format!(
            "; kernel BP's templates also shifted by ±{} gray levels",
            list.join(", ")
        )
    };
    let likelihood = if config.kbp_expected_observations {
        "its likelihood the expectation over the noise draws"
    } else {
        "its likelihood from one noise draw per pixel"
    };
    format!("{source}{shifted}; {likelihood}")
}

/// Kernel-BP training samples from the training pair.
///
/// With `template_shifts` (a deviation from Song et al. 2011, Sec. 6.1, whose templates are the
/// training pair as it is) every pair is repeated at gray levels shifted by whole level
/// spacings. Kernel BP's implicit pairwise potential is `P(a, b) / (P(a) P(b))` with node factor
/// `P(x)` (Property 1), both in absolute gray levels, so a model learned on one image's
/// histogram transfers badly to another's; averaged over shifts, `P(a, b)` depends mostly on
/// `b - a` and `P(x)` flattens: a stationary smoothness prior, as total variation's, learned
/// from the training image's differences. The learned likelihood and the candidate set then
/// cover gray levels the training image lacks.
#[derive(Debug, Clone)]
pub struct KbpTemplates {
    /// Edge template: every 4-neighbour pair of the clean training image, both directions
    /// (and of its shifted copies).
    pub sender: Vec<f64>,
    pub receiver: Vec<f64>,
    /// Observation template: clean and noisy training pixels, each pixel once (at one of the
    /// shifts when there are shifts), with one noise draw each.
    pub hidden: Vec<f64>,
    pub observed: Vec<f64>,
    /// The known noise σ when kernel BP uses the observation template's expectation over it
    /// (`kbp_expected_observations`); `observed` then only sets the observation bandwidth.
    pub observation_noise: Option<f64>,
}

impl DenoiseData {
    /// The sunset (or the loaded image) and its noisy copy for a checked config.
    pub fn generate(config: &DenoiseConfig) -> Result<DenoiseData> {
        config.check()?;
        let levels = sunset::gray_levels(config.colors);
        if let Some(path) = &config.noisy_image {
            return Self::from_noisy(config, path, levels);
        }
        let (width, height, clean, indices) = match &config.image {
            None => sunset_clean(config.width, config.height, &levels),
            Some(path) => file_clean(path, &levels, config.quantize)?,
        };
        let name = |p: &std::path::Path| {
            p.file_name()
                .map_or_else(|| p.display().to_string(), |n| n.to_string_lossy().into())
        };
        let ((tw, th, tclean, tidx), source) = match (&config.train_image, &config.image) {
            _ if config.oracle => (
                (width, height, clean.clone(), indices.clone()),
                "oracle: the test image's own clean version".to_string(),
            ),
            (Some(p), _) => (
                file_clean(p, &levels, config.quantize)?,
                format!("{} (another image)", name(p)),
            ),
            (None, None) => (
                (width, height, clean.clone(), indices.clone()),
                "the sunset generator (the paper's protocol: an independent noise draw)".into(),
            ),
            (None, Some(_)) => builtin_clean(config, width, height, &levels),
        };
        let noisy = sunset::add_noise(&clean, config.noise, config.seed);
        let source = describe_training(source, config);
        Ok(DenoiseData {
            width,
            height,
            levels,
            clean: Some(clean),
            indices,
            noisy,
            train: TrainingImage {
                width: tw,
                height: th,
                clean: tclean,
                indices: tidx,
                source,
            },
        })
    }

    /// A noisy image taken as it is (the observation y, never quantised), with no clean
    /// version; the potentials learn from `train_image` or the built-in training image of its size.
    fn from_noisy(
        config: &DenoiseConfig,
        path: &std::path::Path,
        levels: Vec<f64>,
    ) -> Result<DenoiseData> {
        let img = io::load_gray(path)?;
        if img.width < 2 || img.height < 2 {
            return Err(Error::Image {
                path: path.display().to_string(),
                reason: format!(
                    "image is {} x {}; denoising needs at least 2 x 2 pixels (neighbouring pairs)",
                    img.width, img.height
                ),
            });
        }
        let (width, height) = (img.width, img.height);
        let ((tw, th, tclean, tidx), source) = match &config.train_image {
            Some(p) => (
                file_clean(p, &levels, config.quantize)?,
                format!(
                    "{} (another image)",
                    p.file_name()
                        .map_or_else(|| p.display().to_string(), |n| n.to_string_lossy().into())
                ),
            ),
            None => builtin_clean(config, width, height, &levels),
        };
        let source = describe_training(source, config);
        Ok(DenoiseData {
            width,
            height,
            levels,
            clean: None,
            indices: Vec::new(),
            noisy: img.pixels,
            train: TrainingImage {
                width: tw,
                height: th,
                clean: tclean,
                indices: tidx,
                source,
            },
        })
    }

    /// With `estimate_sigma`, sets `config.noise` to the sigma estimated from the noisy image
    /// and records the rule in `config.sigma_rule`, so the echoed config reproduces the run.
    pub fn resolve_sigma(&self, config: &mut DenoiseConfig) -> Result<()> {
        if config.noisy_image.is_some() && config.estimate_sigma {
            config.noise =
                super::noise_estimate::estimate_sigma_mad(&self.noisy, self.width, self.height)?;
            config.sigma_rule = Some(super::noise_estimate::MAD_RULE.to_string());
        }
        Ok(())
    }

    pub fn graph(&self) -> Result<Graph> {
        Ok(Graph::grid(self.width, self.height)?)
    }

    /// The discrete-BP baseline's MRF: C level states, the true likelihood, pseudo-moment
    /// potentials from the clean training image.
    pub fn discrete_mrf(&self, noise: f64) -> Result<DiscreteMrf> {
        let c = self.levels.len();
        let t = &self.train;
        let (psi, prior) = potentials::pseudo_moment_tables(&t.indices, t.width, t.height, c);
        Ok(DiscreteMrf {
            graph: self.graph()?,
            state_values: self.levels.clone(),
            node_potentials: potentials::node_potentials(&self.noisy, &self.levels, &prior, noise),
            edge_potentials: EdgePotentials::Shared(psi),
        })
    }

    /// Kernel-BP templates from the training pair: the clean training image with noise drawn
    /// from `seed + TRAINING_SEED_OFFSET`, plus its copies shifted by the config's template shifts
    /// (see [`KbpTemplates`]). Cost O(pixels · copies) for the edge template, O(pixels) for
    /// the observation template.
    pub fn kbp_templates(&self, config: &DenoiseConfig) -> KbpTemplates {
        let t = &self.train;
        let (w, h) = (t.width, t.height);
        let offsets = self.shift_offsets(&config.resolved_template_shifts());
        // The training image shifted by `k` level spacings; None where a pixel leaves 0..255.
        let spacing = self.level_spacing();
        let top = self.levels.len() as isize - 1;
        let shifted = |p: usize, k: isize| -> Option<f64> {
            if k == 0 {
                return Some(t.clean[p]);
            }
            let i = t.indices[p] as isize + k;
            if !(0..=top).contains(&i) {
                return None;
            }
            if config.quantize {
                return Some(self.levels[i as usize]);
            }
            let v = t.clean[p] + k as f64 * spacing;
            (self.levels[0]..=self.levels[top as usize])
                .contains(&v)
                .then_some(v)
        };
        let pairs = 2 * (w.saturating_sub(1) * h + w * h.saturating_sub(1));
        let mut sender = Vec::with_capacity(pairs * offsets.len());
        let mut receiver = Vec::with_capacity(pairs * offsets.len());
        let mut hidden = Vec::with_capacity(w * h);
        let copies = offsets.len();
        for (c, &k) in offsets.iter().enumerate() {
            let mut pair = |p: usize, q: usize| {
                if let (Some(a), Some(b)) = (shifted(p, k), shifted(q, k)) {
                    sender.push(a);
                    receiver.push(b);
                    sender.push(b);
                    receiver.push(a);
                }
            };
            for y in 0..h {
                for x in 0..w {
                    if x + 1 < w {
                        pair(y * w + x, y * w + x + 1);
                    }
                    if y + 1 < h {
                        pair(y * w + x, (y + 1) * w + x);
                    }
                }
            }
            // The observation template takes each pixel once, at the shift of copy
            // `p mod copies`: the learned likelihood and prior see every shift, and the
            // evidence set-up (O(n) per grid point of y) costs what it costs without shifts.
            hidden.extend(
                (0..w * h)
                    .filter(|p| p % copies == c)
                    .filter_map(|p| shifted(p, k)),
            );
        }
        // Without shifts the one copy draws exactly the paper's template's noise.
        let observed = sunset::add_noise(
            &hidden,
            config.noise,
            config.seed.wrapping_add(TRAINING_SEED_OFFSET),
        );
        KbpTemplates {
            sender,
            receiver,
            hidden,
            observed,
            observation_noise: config.kbp_expected_observations.then_some(config.noise),
        }
    }

    /// Gray levels between neighbouring levels (255 / (C - 1)).
    fn level_spacing(&self) -> f64 {
        match self.levels.len() {
            0 | 1 => 255.0,
            c => (self.levels[c - 1] - self.levels[0]) / (c - 1) as f64,
        }
    }

    /// The template copies as whole level spacings: 0 first, then each shift's nearest
    /// positive multiple of the spacing and its negative, without repeats.
    pub fn shift_offsets(&self, shifts: &[f64]) -> Vec<isize> {
        let spacing = self.level_spacing();
        let mut offsets = vec![0isize];
        for &s in shifts {
            let k = (s / spacing).round() as isize;
            for o in [k, -k] {
                if !offsets.contains(&o) {
                    offsets.push(o);
                }
            }
        }
        offsets
    }
}
