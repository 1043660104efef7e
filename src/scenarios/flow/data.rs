//! The flow scenario's inputs: two frames and an optional ground-truth `.flo`, read from files
//! with errors that name the file and the problem, or the built-in synthetic pair. Cost: reading
//! the files, O(pixels).

use super::config::BuiltinPair;
use super::{FlowConfig, layers, synthetic};
use crate::error::{Error, Result};
use crate::io::{self, FlowField, GrayImage};

/// The frames, the optional ground truth, and where they came from.
#[derive(Debug, Clone)]
pub struct FlowData {
    pub frame1: GrayImage,
    pub frame2: GrayImage,
    pub ground_truth: Option<FlowField>,
    /// "built-in synthetic pair" or the frame paths.
    pub source: String,
}

impl FlowData {
    /// Loads the frames and ground truth of `config`, or generates its built-in pair. Errors name
    /// the file and the problem (unreadable, sizes that differ, a `.flo` of another size).
    pub fn load(config: &FlowConfig) -> Result<Self> {
        match (&config.frame1, &config.frame2) {
            (Some(a), Some(b)) => {
                let frame1 = io::load_gray(a)?;
                let frame2 = io::load_gray(b)?;
                if (frame1.width, frame1.height) != (frame2.width, frame2.height) {
                    return Err(Error::Io(format!(
                        "the frames differ in size: {} is {} x {}, {} is {} x {}",
                        a.display(),
                        frame1.width,
                        frame1.height,
                        b.display(),
                        frame2.width,
                        frame2.height
                    )));
                }
                let ground_truth = match &config.ground_truth {
                    None => None,
                    Some(p) => {
                        let f = io::read_flo(p)?;
                        f.check_size(
                            frame1.width,
                            frame1.height,
                            &format!("ground truth {}", p.display()),
                        )?;
                        Some(f)
                    }
                };
                Ok(FlowData {
                    source: format!("{} -> {}", a.display(), b.display()),
                    frame1,
                    frame2,
                    ground_truth,
                })
            }
            (None, None) => {
                let (w, h, seed) = (config.width, config.height, config.seed);
                let ((frame1, frame2, gt), source) = match config.pair {
                    BuiltinPair::Rotation => (
                        synthetic::synthetic_pair(w, h, seed),
                        "built-in synthetic pair",
                    ),
                    BuiltinPair::Layers => (
                        layers::layered_pair(w, h, seed),
                        "built-in layered pair (large motion)",
                    ),
                };
                Ok(FlowData {
                    frame1,
                    frame2,
                    ground_truth: Some(gt),
                    source: source.into(),
                })
            }
            _ => Err(Error::param(
                "frames",
                "give both frames (--frame1 and --frame2) or neither",
            )),
        }
    }

    pub fn size(&self) -> (usize, usize) {
        (self.frame1.width, self.frame1.height)
    }
}
