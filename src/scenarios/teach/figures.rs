//! Headless figure of teaching mode, drawn with `viz::figures` in the teach room's colours
//! (`viz::palette::series`, in the window's order): `convergence.png` beside `run teach`'s
//! results, per message sent the largest |belief − exact marginal| (continuous messages: the
//! largest L1 distance to the reference), the fixed-point residual, the change of the message
//! sent and, for series messages, the distance to SOSMP's floor `a_∞`, on a log y axis. Cost: O(messages) plus the bitmap.

use std::path::Path;

use crate::error::Result;
use crate::run::IterationRecord;
use crate::scenarios::output::write_figure;
use crate::viz::figures::{Curve, Panel};
use crate::viz::palette;

/// The three per-message curves; values that are not positive cannot sit on a log axis and
/// are left out (an exact belief has error 0).
pub fn convergence_panel(history: &[IterationRecord]) -> Panel {
    let mut p = Panel {
        title: "One message at a time: error and residual per message".into(),
        x_label: "message".into(),
        y_label: "distance (log scale)".into(),
        log_y: true,
        integer_x: true,
        ..Panel::default()
    };
    let metric = |key: &str| -> Vec<(f64, f64)> {
        history
            .iter()
            .filter_map(|r| r.metrics.get(key).map(|&v| (r.iter as f64, v)))
            .filter(|&(_, v)| v > 0.0 && v.is_finite())
            .collect()
    };
    let change: Vec<(f64, f64)> = history
        .iter()
        .map(|r| (r.iter as f64, r.residual))
        .filter(|&(_, v)| v > 0.0 && v.is_finite())
        .collect();
    // Continuous messages record their mean error; their belief error is an L1 distance.
    let continuous = history.iter().any(|r| r.metrics.contains_key("mean_error"));
    let belief = if continuous {
        "largest ∫|belief − reference|"
    } else {
        "largest |belief − exact|"
    };
    let curves = [
        (belief, metric("belief_error")),
        ("fixed-point residual", metric("fixed_point_residual")),
        ("change of the message sent", change),
        (
            "largest ∫|belief − floor a∞| (series)",
            metric("floor_distance"),
        ),
    ];
    for (k, (name, points)) in curves.into_iter().enumerate() {
        if !points.is_empty() {
            p.curves.push(Curve::new(name, points, palette::series(k)));
        }
    }
    p
}

pub fn write_convergence(dir: &Path, history: &[IterationRecord]) -> Result<()> {
    if history.is_empty() {
        return Ok(());
    }
    write_figure(
        &dir.join("convergence.png"),
        &[convergence_panel(history)],
        1,
        820,
        520,
    )
}
