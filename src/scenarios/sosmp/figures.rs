//! error.png beside results.json: the normalised error e_t / e_0 against t on log-log axes
//! (Noorshams & Wainwright 2013, Figs. 5-7), with the paths behind their mean, the floor (the
//! error of the fixed point a_inf, dashed), the distance to a_inf and a 1/t slope guide; the
//! fitted slope is in the title. Colours from `viz::palette`.

use std::path::Path;

use super::{SLOPE_FROM, SosmpScenario};
use crate::error::Result;
use crate::scenarios::output::write_figure;
use crate::viz::figures::{Curve, Panel};
use crate::viz::palette::{self, Method};

/// Paths drawn behind the mean (more only clutter).
const MAX_PATHS: usize = 12;

fn points(ys: &[f64]) -> Vec<(f64, f64)> {
    ys.iter()
        .enumerate()
        .map(|(t, e)| ((t + 1) as f64, *e))
        .collect()
}

pub fn panel(s: &SosmpScenario) -> Panel {
    let c = &s.curves;
    let slope = s
        .slope()
        .map_or_else(String::new, |k| format!(" (slope of e_t - floor: {k:.2})"));
    let mut p = Panel {
        title: format!("SOSMP error against iterations{slope}"),
        x_label: "iteration t".into(),
        integer_x: true,
        y_label: "error e_t / e_0 (normalised)".into(),
        log_x: true,
        log_y: true,
        ..Panel::default()
    };
    let faint = palette::Rgb::from([206, 147, 170]);
    for path in c.paths.iter().take(MAX_PATHS) {
        p.curves.push(Curve::new("", points(path), faint).faint());
    }
    if !c.fixed_point.is_empty() {
        p.curves.push(Curve::new(
            "distance to a_inf",
            points(&c.fixed_point),
            palette::FIXED_POINT,
        ));
    }
    // The mean last, on top (the distance to a_inf can lie right on it).
    p.curves.push(Curve::new(
        "SOSMP, mean over paths",
        points(&c.mean),
        Method::Sosmp.color(),
    ));
    if !c.mean.is_empty() {
        let ta = SLOPE_FROM.min(c.mean.len());
        let k = c.mean[ta - 1] * ta as f64;
        let end = s.config.iters.max(c.mean.len()) as f64;
        p.curves.push(
            Curve::new(
                "slope -1 (1/t)",
                vec![(1.0, k), (end, k / end)],
                palette::SLOPE,
            )
            .dashed(),
        );
    }
    let floor = s.floor();
    if floor > 0.0 {
        p.levels
            .push((format!("floor (a_inf) {floor:.2e}"), floor, palette::FLOOR));
    }
    p
}

pub fn write(s: &SosmpScenario, dir: &Path) -> Result<()> {
    write_figure(&dir.join("error.png"), &[panel(s)], 1, 960, 640)
}
