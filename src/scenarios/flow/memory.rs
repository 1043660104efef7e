//! The flow scenario's estimated peak memory (see `run::budget`) and time, kept beside the config so
//! that the config's checks stay about the parameters. Discrete BP keeps about 10.5 values per
//! pixel and label (four incoming and four outgoing messages over the displacement lattice, the
//! data term, the belief), SOSMP about 1.1 per pixel and label (the data term on the box grid)
//! plus 150 per pixel (coefficients, samples, CDF scratch), over the largest level that passes
//! messages, both stored as f32; the frames and pyramid about 8 doubles per pixel and the
//! variational refinement about 12. Checked against the peak RSS of runs from 128² to
//! 1024 x 768 (`tests/it/project/estimates.rs`).

use super::config::{FlowAlgorithm, FlowConfig};
use crate::model::flow::FlowLabels;
use crate::run::budget::MemoryNeed;

/// `config` with the size of its frames, read from their headers when given.
fn sized_from_frames(config: &FlowConfig) -> FlowConfig {
    let (width, height) = match &config.frame1 {
        Some(path) => crate::io::image_size(path).unwrap_or((config.width, config.height)),
        None => (config.width, config.height),
    };
    FlowConfig {
        width,
        height,
        ..config.clone()
    }
}

/// The estimate for `config`; the frames are sized from their headers when given.
pub fn flow_memory_need(config: &FlowConfig) -> Option<MemoryNeed> {
    // One level is alive at a time: the largest labels x pixels over the levels that pass
    // messages (a larger level is only refined).
    let sized = sized_from_frames(config);
    let (w, h) = (sized.width, sized.height);
    let levels = config.levels_for(w, h);
    let (mut lw, mut lh, mut level_size, mut mp_pixels) = (w, h, 0.0f64, 0.0f64);
    for level in 0..levels {
        if sized.passes_messages(level, levels) {
            let labels = FlowLabels::new(sized.displacement_at(level, levels), config.subpixel)
                .map_or(1.0, |l| l.len() as f64);
            level_size = level_size.max(labels * (lw * lh) as f64);
            mp_pixels = mp_pixels.max((lw * lh) as f64);
        }
        (lw, lh) = (lw.div_ceil(2), lh.div_ceil(2));
    }
    let pixels = (w * h) as f64;
    let labels = level_size / pixels;
    let shown = level_size / mp_pixels.max(1.0);
    let mut need = MemoryNeed::new(format!(
        "flow {w} x {h} with {shown:.0} displacement labels (largest level)"
    ))
    .doubles("frames and pyramid", 8.0 * pixels);
    if config.variational_iters > 0 {
        // Derivatives, SOR constants and two flows over the finest level.
        need = need.doubles("variational refinement", 12.0 * pixels);
    }
    for algorithm in config.algorithms() {
        need = match algorithm {
            // f32 storage: half of the values counted as doubles.
            FlowAlgorithm::Discrete => need.doubles(
                "discrete-BP messages (about 10 f32 values per pixel and label)",
                0.5 * 10.5 * labels * pixels,
            ),
            FlowAlgorithm::Sosmp => need.doubles(
                "SOSMP data terms and messages",
                0.5 * (1.1 * labels * pixels
                    + (150.0 + 2.0 * (config.coefficients + config.samples) as f64) * mp_pixels),
            ),
        };
    }
    Some(need)
}

/// The estimated time of `config` (see [`crate::run::time_need`]): levels that pass messages
/// cost about 14 µs per pixel over their iterations, levels that are only refined about 8.4 µs
/// per pixel, per algorithm run; fitted to whole runs of 128², 256², 512² and 1168 x 776.
/// Coarse levels stop early, so iterations are counted as they typically run (8 per level).
pub fn flow_time_need(config: &FlowConfig) -> crate::run::time_need::TimeNeed {
    let sized = sized_from_frames(config);
    let (w, h) = (sized.width, sized.height);
    let levels = config.levels_for(w, h);
    let (mut lw, mut lh, mut messages, mut refined) = (w, h, 0.0, 0.0);
    for level in 0..levels {
        let pixels = (lw * lh) as f64;
        if sized.passes_messages(level, levels) {
            messages += pixels;
        } else {
            refined += pixels;
        }
        (lw, lh) = (lw.div_ceil(2), lh.div_ceil(2));
    }
    let runs = config.algorithms().len() as f64;
    let total = 0.2 + runs * (1.4e-5 * messages + 8.4e-6 * refined);
    let iterations = (8 * levels).max(1);
    crate::run::time_need::TimeNeed::scaled(
        0.1 * total,
        0.9 * total / iterations as f64,
        iterations,
    )
    .stopping_early()
}
