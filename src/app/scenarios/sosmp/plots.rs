//! The lab's plots: the normalised error against t on log-log axes (paths, mean, floor, the
//! slope -1 line, the distance to a_inf, sweep overlays), the final error against r and the
//! fitted slope against chain length.

use eframe::egui::{self};
use egui_plot::{HLine, Line, LineStyle, PlotPoints, Points};

use crate::app::views::curves::hover_head;
use crate::app::views::dashed::DashedLines;

use super::view::*;
use crate::app::views::ticks::{self, Scale};
use crate::scenarios::sosmp::{SosmpView, SweepResult};

/// The log-log plot of the normalised error.
pub(super) fn error_plot(ui: &mut egui::Ui, view: &SosmpView, caches: &Caches, height: f32) {
    let l2 = caches.l2();
    let tag = metric_tag(l2);
    let what = if l2 {
        "‖m_t − m*‖² / ‖m_0 − m*‖² (L2)"
    } else {
        "e_t / e_0 (eq. 38)"
    };
    ui.strong(format!("Normalised error {what}, log-log"));
    let curves = &view.curves;
    let iters = view.config.iters.max(curves.mean.len()).max(10) as f64;
    let mut plot = ticks::plot("sosmp_error", Scale::Log10, Scale::Log10)
        .height(height)
        .legend(legend(egui_plot::Corner::LeftBottom))
        .allow_scroll(false)
        .include_x(0.0)
        .include_x(iters.log10())
        .x_axis_label("iteration t")
        .y_axis_label(if l2 {
            "normalised error (L2)"
        } else {
            "normalised error e_t / e_0"
        })
        .y_axis_min_width(36.0)
        .label_formatter(|hover| {
            let (head, p) = hover_head(hover);
            Some(format!(
                "{head}t = {:.0}\n{:.3e}",
                10f64.powf(p.x),
                10f64.powf(p.y)
            ))
        });
    let floor = if l2 {
        view.floor_l2 / view.e0_l2
    } else {
        view.floor
    };
    let (paths, mean) = if l2 {
        (&curves.paths_l2, &curves.mean_l2)
    } else {
        (&curves.paths, &curves.mean)
    };
    if floor > 0.0 {
        plot = plot.include_y(floor.log10() - 0.3);
    }
    plot = plot.include_y(0.2);
    plot.show(ui, |plot| {
        let mut axis = LogAxis::default();
        if caches.show_paths && !paths.is_empty() {
            // Dashed as in Fig. 5: one shape per dash, not per point.
            let dashed = paths
                .iter()
                .fold(DashedLines::new("sample paths", 10.0), |d, p| {
                    d.line(axis.points(p, |e| e))
                });
            plot.add(dashed.color(PATH_COLOR.gamma_multiply(0.8)).width(1.0));
        }
        plot.line(
            Line::new(
                format!("mean of {} paths ({tag})", paths.len()),
                PlotPoints::from(axis.points(mean, |e| e)),
            )
            .color(MEAN_COLOR)
            .width(2.5),
        );
        if !l2 {
            // What the slope is fitted on.
            let above: Vec<[f64; 2]> = axis
                .points(&curves.mean, |e| e - view.floor)
                .into_iter()
                .filter(|p| p[0] >= 1.0)
                .collect();
            plot.line(
                Line::new("mean − floor (t ≥ 10, fitted)", PlotPoints::from(above))
                    .color(MEAN_COLOR.gamma_multiply(0.7))
                    .style(LineStyle::dotted_loose())
                    .width(1.5),
            );
            // What the stochastic approximation itself converges to: its distance falls like
            // 1/t only when the expected update contracts enough (see the README).
            plot.line(
                Line::new(
                    "distance to a∞, ‖a_t − a∞‖² / e_0",
                    PlotPoints::from(axis.points(&curves.fixed_point, |e| e)),
                )
                .color(FIXED_POINT_COLOR)
                .width(1.5),
            );
        }
        if !l2 && view.slope_reference.len() == 2 {
            let pts: Vec<[f64; 2]> = view
                .slope_reference
                .iter()
                .map(|[t, e]| [t.log10(), e.log10()])
                .collect();
            plot.line(
                Line::new("slope −1", PlotPoints::from(pts))
                    .color(SLOPE_COLOR)
                    .style(LineStyle::dotted_dense())
                    .width(1.5),
            );
        }
        if floor > 0.0 {
            plot.hline(
                HLine::new(format!("floor at a∞ ({tag}) {floor:.2e}"), floor.log10())
                    .color(FLOOR_COLOR)
                    .style(LineStyle::dashed_dense())
                    .width(1.5),
            );
        }
        let mut k = 0;
        for s in &caches.sweeps {
            for c in &s.curves {
                let color = SWEEP_COLORS[k % SWEEP_COLORS.len()];
                k += 1;
                let name = format!("{} = {} ({tag})", s.parameter.symbol(), c.value);
                let (y, f) = if l2 && !c.mean_error_l2.is_empty() {
                    (&c.mean_error_l2, c.floor_l2 / c.e0_l2)
                } else {
                    (&c.mean_error, c.floor)
                };
                plot.line(
                    Line::new(name.clone(), PlotPoints::from(log_points(y, |e| e)))
                        .color(color)
                        .width(1.8),
                );
                if f > 0.0 {
                    plot.hline(
                        HLine::new(name, f.log10())
                            .color(color)
                            .style(LineStyle::dotted_loose())
                            .width(1.0),
                    );
                }
            }
        }
    });
}

/// Fig. 8: the final error (and the floor) against r, raw, on semilog axes.
pub(super) fn final_against_r(ui: &mut egui::Ui, sweep: &SweepResult, l2: bool, height: f32) {
    ui.strong("Final error against r (Fig. 8)")
        .on_hover_text("Raw errors (not divided by e_0, which changes with r), log scale");
    let finals: Vec<[f64; 2]> = sweep
        .curves
        .iter()
        .map(|c| {
            let e = if l2 {
                c.final_error_l2_raw()
            } else {
                c.final_error_raw()
            };
            [c.value, e]
        })
        .filter(|p| p[1] > 0.0)
        .map(|p| [p[0], p[1].log10()])
        .collect();
    let floors: Vec<[f64; 2]> = sweep
        .curves
        .iter()
        .map(|c| [c.value, if l2 { c.floor_l2 } else { c.floor_raw }])
        .filter(|p| p[1] > 0.0)
        .map(|p| [p[0], p[1].log10()])
        .collect();
    let (final_name, floor_name) = if l2 {
        ("final ‖m_T − m*‖² (L2)", "floor at a∞ (L2)")
    } else {
        ("final e_T (eq. 38)", "floor e(a∞) (eq. 38)")
    };
    ticks::plot("sosmp_fig8", Scale::Integer, Scale::Log10)
        .height(height)
        .legend(legend(egui_plot::Corner::RightTop))
        .allow_scroll(false)
        .x_axis_label("r (basis functions)")
        .y_axis_label(if l2 {
            "final error (L2, raw)"
        } else {
            "final error e_T (raw)"
        })
        .include_x(0.0)
        .show(ui, |plot| {
            plot.line(
                Line::new(final_name, PlotPoints::from(finals.clone()))
                    .color(MEAN_COLOR)
                    .width(2.0),
            );
            plot.points(
                Points::new(final_name, PlotPoints::from(finals))
                    .color(MEAN_COLOR)
                    .radius(3.5),
            );
            plot.line(
                Line::new(floor_name, PlotPoints::from(floors))
                    .color(FLOOR_COLOR)
                    .style(LineStyle::dashed_dense())
                    .width(1.5),
            );
        });
}

/// The depth sweep: the fitted slope (and the noise-free iteration's) against the chain length,
/// log x axis, with the −1 and −0.5 levels.
pub(super) fn slope_against_depth(ui: &mut egui::Ui, sweep: &SweepResult, height: f32) {
    ui.strong("Slope against chain length n").on_hover_text(
        "Slope of log(mean e_t/e_0 − floor) over t ∈ [10, T] (eq. 38) for each chain length, and \
             that of the noise-free iteration a ← (1 − η_t) a + η_t G(a) (its distance to a∞)",
    );
    let pts = |f: &dyn Fn(&crate::scenarios::sosmp::SweepCurve) -> Option<f64>| -> Vec<[f64; 2]> {
        sweep
            .curves
            .iter()
            .filter_map(|c| f(c).map(|s| [c.value.log10(), s]))
            .collect()
    };
    let fitted = pts(&|c| c.slope);
    let noise_free = pts(&|c| c.noise_free_slope);
    ticks::plot("sosmp_depth", Scale::Log10, Scale::Real)
        .height(height)
        .legend(legend(egui_plot::Corner::RightTop))
        .allow_scroll(false)
        .x_axis_formatter(|m, _| format!("{:.0}", 10f64.powf(m.value)))
        .x_axis_label("nodes n")
        .y_axis_label("slope of log error vs log t")
        .include_y(-1.5)
        .include_y(0.0)
        .show(ui, |plot| {
            plot.line(
                Line::new("fitted slope (eq. 38)", PlotPoints::from(fitted.clone()))
                    .color(MEAN_COLOR)
                    .width(2.0),
            );
            plot.points(
                Points::new("fitted slope (eq. 38)", PlotPoints::from(fitted))
                    .color(MEAN_COLOR)
                    .radius(3.5),
            );
            plot.line(
                Line::new("noise-free iteration", PlotPoints::from(noise_free))
                    .color(FIXED_POINT_COLOR)
                    .style(LineStyle::dashed_dense())
                    .width(1.5),
            );
            plot.hline(
                HLine::new("−1 (Theorem 1 without log factors)", -1.0)
                    .color(SLOPE_COLOR)
                    .style(LineStyle::dotted_dense()),
            );
            plot.hline(
                HLine::new("−0.5", -0.5)
                    .color(FLOOR_COLOR)
                    .style(LineStyle::dotted_loose()),
            );
        });
}
