//! The images of a denoise problem and the models learned from them: the clean image (the
//! sunset or a loaded file), the noisy test image, the training pair, the discrete-BP MRF and
//! the kernel-BP templates. Cost O(pixels · C + C²).

use crate::error::Result;
use crate::inference::discrete::{DiscreteMrf, EdgePotentials};
use crate::io;
use crate::model::Graph;

use super::config::{DenoiseConfig, TRAINING_SEED_OFFSET};
use super::{potentials, sunset};
use crate::scenarios::ScenarioParams;

/// The clean image (values and level indices) and its noisy test copy.
#[derive(Debug, Clone)]
pub struct DenoiseData {
    pub width: usize,
    pub height: usize,
    /// The C gray levels.
    pub levels: Vec<f64>,
    pub clean: Vec<f64>,
    /// Index of the level nearest to each clean pixel.
    pub indices: Vec<usize>,
    pub noisy: Vec<f64>,
}

/// Kernel-BP training samples from the training pair.
#[derive(Debug, Clone)]
pub struct KbpTemplates {
    /// Edge template: every 4-neighbour pair of the clean training image, both directions.
    pub sender: Vec<f64>,
    pub receiver: Vec<f64>,
    /// Observation template: clean and noisy training pixels.
    pub hidden: Vec<f64>,
    pub observed: Vec<f64>,
}

impl DenoiseData {
    /// The sunset (or the loaded image) and its noisy copy for a checked config.
    pub fn generate(config: &DenoiseConfig) -> Result<DenoiseData> {
        config.check()?;
        let levels = sunset::gray_levels(config.colors);
        let (width, height, clean, indices) = match &config.image {
            None => {
                let idx = sunset::sunset_indices(config.width, config.height, config.colors);
                let values = idx.iter().map(|&i| levels[i]).collect();
                (config.width, config.height, values, idx)
            }
            Some(path) => {
                let img = io::load_gray(path)?;
                let idx: Vec<usize> = img
                    .pixels
                    .iter()
                    .map(|&v| sunset::nearest_level(&levels, v))
                    .collect();
                let values = if config.quantize {
                    idx.iter().map(|&i| levels[i]).collect()
                } else {
                    img.pixels
                };
                (img.width, img.height, values, idx)
            }
        };
        let noisy = sunset::add_noise(&clean, config.noise, config.seed);
        Ok(DenoiseData {
            width,
            height,
            levels,
            clean,
            indices,
            noisy,
        })
    }

    pub fn graph(&self) -> Result<Graph> {
        Ok(Graph::grid(self.width, self.height)?)
    }

    /// The discrete-BP baseline's MRF: C level states, the true likelihood, pseudo-moment
    /// potentials from the clean training image (the same clean image; only the noise differs).
    pub fn discrete_mrf(&self, noise: f64) -> Result<DiscreteMrf> {
        let c = self.levels.len();
        let (psi, prior) =
            potentials::pseudo_moment_tables(&self.indices, self.width, self.height, c);
        Ok(DiscreteMrf {
            graph: self.graph()?,
            state_values: self.levels.clone(),
            node_potentials: potentials::node_potentials(&self.noisy, &self.levels, &prior, noise),
            edge_potentials: EdgePotentials::Shared(psi),
        })
    }

    /// Kernel-BP templates from the training pair: the clean image with noise drawn from
    /// `seed + TRAINING_SEED_OFFSET`.
    pub fn kbp_templates(&self, config: &DenoiseConfig) -> KbpTemplates {
        let (w, h) = (self.width, self.height);
        let mut sender = Vec::with_capacity(4 * w * h);
        let mut receiver = Vec::with_capacity(4 * w * h);
        let mut pair = |p: usize, q: usize| {
            sender.push(self.clean[p]);
            receiver.push(self.clean[q]);
            sender.push(self.clean[q]);
            receiver.push(self.clean[p]);
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
        let observed = sunset::add_noise(
            &self.clean,
            config.noise,
            config.seed.wrapping_add(TRAINING_SEED_OFFSET),
        );
        KbpTemplates {
            sender,
            receiver,
            hidden: self.clean.clone(),
            observed,
        }
    }
}
