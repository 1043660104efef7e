//! The flow scenario's estimated peak memory (see `run::budget`), kept beside the config so
//! that the config's checks stay about the parameters. Fitted to the peak RSS of runs of
//! 256 x 192 and 512 x 384 pixels with 81 and 1089 labels: discrete BP keeps about 10.5 values
//! per pixel and label (four incoming and four outgoing messages over the displacement lattice,
//! the data term, the belief), SOSMP about 1.1 per pixel and label (the data term on the box
//! grid) plus 150 per pixel (coefficients, samples, CDF scratch, the frames and the pyramid).

use super::config::{FlowAlgorithm, FlowConfig};
use crate::model::flow::FlowLabels;
use crate::run::budget::MemoryNeed;

/// The estimate for `config`; the frames are sized from their headers when given.
pub fn flow_memory_need(config: &FlowConfig) -> Option<MemoryNeed> {
    let (w, h) = match &config.frame1 {
        Some(path) => crate::io::image_size(path).unwrap_or((config.width, config.height)),
        None => (config.width, config.height),
    };
    // One level is alive at a time: the largest labels x pixels over the levels.
    let levels = config.levels_for(w, h);
    let (mut lw, mut lh, mut level_size) = (w, h, 0.0f64);
    for level in 0..levels {
        let labels = FlowLabels::new(config.displacement_at(level, levels), config.subpixel)
            .map_or(1.0, |l| l.len() as f64);
        level_size = level_size.max(labels * (lw * lh) as f64);
        (lw, lh) = (lw.div_ceil(2), lh.div_ceil(2));
    }
    let pixels = (w * h) as f64;
    let labels = level_size / pixels;
    let mut need = MemoryNeed::new(format!(
        "flow {w} x {h} with {labels:.0} displacement labels (largest level)"
    ))
    .doubles("frames and pyramid", 16.0 * pixels);
    for algorithm in config.algorithms() {
        need = match algorithm {
            FlowAlgorithm::Discrete => need.doubles(
                "discrete-BP messages (about 10 values per pixel and label)",
                10.5 * labels * pixels,
            ),
            FlowAlgorithm::Sosmp => need.doubles(
                "SOSMP data terms and messages",
                (1.1 * labels + 150.0 + 2.0 * (config.coefficients + config.samples) as f64)
                    * pixels,
            ),
        };
    }
    Some(need)
}
