//! Headless figures of predictive BP, drawn with `viz::figures` in the pbp room's colours
//! (`viz::palette::PBP`, `EM`, `ONLINE_EM`, `PBP_EXACT`): `posterior.png` beside `run pbp`'s
//! results (P(query | evidence) of every method over the query's values as grouped bars, the
//! exact posterior outlined) and `kl.png` beside `sweep pbp`'s summary (the synthetic model:
//! average KL to the exact posterior against the training size on log-log axes, Wang & Gordon
//! 2020, Fig. 5) and `pendigits.png` beside `sweep pbp --model pendigits` (test accuracy
//! against the training size, Fig. 7: the mean over the seeds with each seed's run behind it).
//! Cost: O(values x methods) or O(sizes x methods) plus the bitmap.

use std::path::Path;

use super::MethodAnswer;
use super::pendigits::AccuracyPoint;
use crate::error::Result;
use crate::scenarios::output::write_figure;
use crate::viz::figures::{Curve, Panel};
use crate::viz::palette::{self, Rgb};

/// A method's colour and legend name.
pub fn method_style(name: &str) -> (Rgb, &'static str) {
    match name {
        "exact" => (palette::PBP_EXACT, "exact (enumeration)"),
        "pbp" => (palette::PBP, "predictive BP"),
        "em" => (palette::EM, "EM"),
        "online_em" => (palette::ONLINE_EM, "online EM"),
        _ => (palette::PBP_EXACT, "other"),
    }
}

/// P(query = x | evidence) against x, one curve per method.
pub fn posterior_panel(query: &str, answers: &[MethodAnswer]) -> Panel {
    let mut p = Panel {
        title: format!("P({query} | evidence) by method"),
        x_label: format!("value of {query} (state index)"),
        integer_x: true,
        y_label: "probability".into(),
        include_y: vec![0.0, 1.0],
        ..Panel::default()
    };
    // A distribution over a few states reads as grouped bars, one slot per method; the exact
    // posterior is outlined.
    for (slot, a) in answers.iter().enumerate() {
        let (color, name) = method_style(a.name);
        let points = a
            .dist
            .iter()
            .enumerate()
            .map(|(x, &y)| (x as f64, y))
            .collect();
        let curve = Curve::new(name, points, color).as_bars(slot, answers.len());
        p.curves.push(if a.name == "exact" {
            curve.dashed()
        } else {
            curve
        });
    }
    p
}

/// The synthetic model's average KL against N (Fig. 5), one curve per method (`(n, kl)` points).
pub fn kl_panel(curves: &[(&str, Vec<(f64, f64)>)]) -> Panel {
    let mut p = Panel {
        title: "Average KL(exact ‖ learned) against training size".into(),
        x_label: "training samples N".into(),
        y_label: "average KL (nats)".into(),
        log_x: true,
        log_y: true,
        ..Panel::default()
    };
    for (name, points) in curves {
        let (color, legend) = method_style(name);
        p.curves.push(Curve::new(legend, points.clone(), color));
    }
    p
}

pub fn write_posterior(dir: &Path, query: &str, answers: &[MethodAnswer]) -> Result<()> {
    if answers.is_empty() {
        return Ok(());
    }
    write_figure(
        &dir.join("posterior.png"),
        &[posterior_panel(query, answers)],
        1,
        820,
        520,
    )
}

pub fn write_kl(dir: &Path, curves: &[(&str, Vec<(f64, f64)>)]) -> Result<()> {
    write_figure(&dir.join("kl.png"), &[kl_panel(curves)], 1, 900, 560)
}

/// Pendigits test accuracy against N (Fig. 7): per method the mean over the seeds and, faint,
/// each seed's curve.
pub fn accuracy_panel(pbp: &[AccuracyPoint], em_hmm: &[AccuracyPoint]) -> Panel {
    let seeds = pbp.first().map_or(0, |p| p.per_seed.len());
    let mut p = Panel {
        title: format!("Pendigits test accuracy against training size ({seeds} seeds)"),
        x_label: "training digits N (stratified)".into(),
        y_label: "test accuracy".into(),
        log_x: true,
        include_y: vec![1.0],
        ..Panel::default()
    };
    for (name, points) in [("pbp", pbp), ("em", em_hmm)] {
        let (color, legend) = method_style(name);
        let legend = if name == "em" { "EM-HMM" } else { legend };
        for s in 0..seeds {
            let seed_points = points
                .iter()
                .filter_map(|a| a.per_seed.get(s).map(|&y| (a.n as f64, y)))
                .collect();
            p.curves.push(Curve::new("", seed_points, color).faint());
        }
        let mean = points.iter().map(|a| (a.n as f64, a.mean)).collect();
        p.curves
            .push(Curve::new(format!("{legend} (mean)"), mean, color));
    }
    p
}

pub fn write_accuracy(dir: &Path, pbp: &[AccuracyPoint], em_hmm: &[AccuracyPoint]) -> Result<()> {
    write_figure(
        &dir.join("pendigits.png"),
        &[accuracy_panel(pbp, em_hmm)],
        1,
        900,
        560,
    )
}
