//! Per-iteration curves shared by every scenario: any metric of `IterationRecord.metrics`, and
//! the message residual on a log scale (log10 values, ticks labelled as powers of ten).

use eframe::egui::{self, Color32};
use egui_plot::{HLine, HoverPosition, Line, LineStyle, PlotPoint, PlotPoints, VLine};

use super::ticks::{self, Scale};
use crate::scenarios::IterationRecord;

/// Where a curve's values come from.
#[derive(Debug, Clone, PartialEq)]
pub enum Source {
    /// `IterationRecord.residual`.
    Residual,
    /// `IterationRecord.metrics[key]`.
    Metric(String),
}

/// One curve: its legend name and its values.
#[derive(Debug, Clone, PartialEq)]
pub struct Series {
    pub name: String,
    pub source: Source,
}

impl Series {
    pub fn metric(name: &str, key: &str) -> Series {
        Series {
            name: name.to_string(),
            source: Source::Metric(key.to_string()),
        }
    }

    pub fn residual(name: &str) -> Series {
        Series {
            name: name.to_string(),
            source: Source::Residual,
        }
    }

    fn value(&self, r: &IterationRecord) -> Option<f64> {
        match &self.source {
            Source::Residual => Some(r.residual),
            Source::Metric(key) => r.metrics.get(key).copied(),
        }
    }

    /// (iteration, value) for every record that has a finite value.
    fn points(&self, history: &[IterationRecord]) -> Vec<[f64; 2]> {
        history
            .iter()
            .filter_map(|r| self.value(r).map(|v| [r.iter as f64, v]))
            .filter(|p| p[1].is_finite())
            .collect()
    }
}

/// A horizontal reference line (e.g. the RMSE of the noisy input).
pub struct Reference {
    pub name: String,
    pub value: f64,
}

/// The colour of the `k`-th metric: its method's where its key names one (e.g. `recall_kbp`),
/// else an overlay colour that is no method's.
fn series_color(series: &Series, k: usize) -> Color32 {
    let key = match &series.source {
        Source::Metric(key) => key.as_str(),
        Source::Residual => "",
    };
    crate::viz::palette::Method::in_key(key)
        .map_or_else(|| crate::app::colors::series(k), crate::app::colors::method)
}

/// Reference lines (noisy input, tolerance) are drawn in this gray, no method's colour.
const REFERENCE_GRAY: Color32 = Color32::from_rgb(158, 158, 158);

/// Up to this many planned iterations the x axis spans them all from the start (a stable axis
/// to watch a run fill); beyond, it follows the run.
const FIXED_AXIS_ITERS: usize = 100;

/// The end of the x range every curve of a run shares.
fn x_end(history: &[IterationRecord], max_iters: Option<usize>) -> f64 {
    let last = history.last().map_or(0, |r| r.iter);
    match max_iters {
        Some(m) if m <= FIXED_AXIS_ITERS => m.max(last).max(1) as f64,
        _ => (last as f64 * 1.25).max(10.0),
    }
}

/// The y label of a plot of `series`: the metric's name when there is one, else "value".
pub fn quantity_of(series: &[Series]) -> String {
    match series {
        [one] => one.name.clone(),
        _ => "value".to_string(),
    }
}

/// Every metric of the last record as a series named by its key.
pub fn all_metrics(history: &[IterationRecord]) -> Vec<Series> {
    history
        .last()
        .map(|r| r.metrics.keys().map(|k| Series::metric(k, k)).collect())
        .unwrap_or_default()
}

/// A plot of `series` per iteration on a linear scale, with reference lines; `quantity` labels
/// the y axis (what the series measure, with their unit).
#[allow(clippy::too_many_arguments)]
pub fn metrics_plot(
    ui: &mut egui::Ui,
    id: &str,
    quantity: &str,
    history: &[IterationRecord],
    series: &[Series],
    references: &[Reference],
    max_iters: Option<usize>,
    height: f32,
) {
    metrics_plot_over(
        ui,
        "iteration",
        id,
        quantity,
        history,
        series,
        references,
        max_iters,
        height,
    );
}

/// `metrics_plot` for a run whose steps are not iterations (e.g. retrieval's repeats): the x
/// axis is labelled `step_name`.
#[allow(clippy::too_many_arguments)]
pub fn metrics_plot_over(
    ui: &mut egui::Ui,
    step_name: &str,
    id: &str,
    quantity: &str,
    history: &[IterationRecord],
    series: &[Series],
    references: &[Reference],
    max_iters: Option<usize>,
    height: f32,
) {
    let lines = Lines {
        series,
        references,
        marks: &[],
    };
    lines_plot(
        ui, step_name, id, quantity, history, &lines, max_iters, height,
    );
}

/// A vertical line at one step (e.g. the iterate a stopping rule kept), named in the legend.
pub struct Mark {
    pub name: String,
    pub x: f64,
    pub color: Color32,
}

/// What a per-iteration plot draws: curves, horizontal references, vertical marks.
pub struct Lines<'a> {
    pub series: &'a [Series],
    pub references: &'a [Reference],
    pub marks: &'a [Mark],
}

/// A plot of `lines` (curves, horizontal references and vertical marks drawn dotted in their
/// colour) per step, the x axis labelled `step_name`.
#[allow(clippy::too_many_arguments)]
pub fn lines_plot(
    ui: &mut egui::Ui,
    step_name: &str,
    id: &str,
    quantity: &str,
    history: &[IterationRecord],
    lines: &Lines<'_>,
    max_iters: Option<usize>,
    height: f32,
) {
    let Lines {
        series,
        references,
        marks,
    } = *lines;
    let curves: Vec<(String, Vec<[f64; 2]>)> = series
        .iter()
        .map(|s| (s.name.clone(), s.points(history)))
        .collect();
    let x_range = [0.0, x_end(history, max_iters)];
    // The legend where the curves are not (reference lines count as curves across the plot,
    // marks as lines from 0 to the top of the curves).
    let mut shapes: Vec<Vec<[f64; 2]>> = curves.iter().map(|(_, p)| p.clone()).collect();
    shapes.extend(
        references
            .iter()
            .map(|r| vec![[x_range[0], r.value], [x_range[1], r.value]]),
    );
    let top = shapes.iter().flatten().map(|p| p[1]).fold(0.0, f64::max);
    shapes.extend(marks.iter().map(|m| vec![[m.x, 0.0], [m.x, top]]));
    let mut entries: Vec<(String, Color32)> = curves
        .iter()
        .enumerate()
        .map(|(k, (name, _))| (name.clone(), series_color(&series[k], k)))
        .collect();
    entries.extend(references.iter().map(|r| (r.name.clone(), REFERENCE_GRAY)));
    entries.extend(marks.iter().map(|m| (m.name.clone(), m.color)));
    let mut height = height;
    let legend = super::legend::for_plot(ui, &shapes, &x_range, &[0.0], &entries, &mut height);
    let mut plot = ticks::plot(id, Scale::Integer, Scale::Real)
        .x_axis_label(step_name.to_string())
        .y_axis_label(quantity.to_string())
        .height(height)
        .include_x(x_range[0])
        .include_x(x_range[1])
        .include_y(0.0);
    if let Some(legend) = legend {
        plot = plot.legend(legend);
    }
    plot.allow_scroll(false).show(ui, |plot| {
        for (k, (name, points)) in curves.into_iter().enumerate() {
            plot.line(
                Line::new(name, PlotPoints::from(points))
                    .color(series_color(&series[k], k))
                    .width(2.0),
            );
        }
        for r in references {
            plot.hline(
                HLine::new(r.name.clone(), r.value)
                    .color(REFERENCE_GRAY)
                    .style(LineStyle::dashed_loose()),
            );
        }
        for m in marks {
            plot.vline(
                VLine::new(m.name.clone(), m.x)
                    .color(m.color)
                    .style(LineStyle::dotted_dense())
                    .width(1.5),
            );
        }
    });
}

/// A hover's first line (the curve's name, when the pointer is near one) and its position.
pub fn hover_head(hover: &HoverPosition<'_>) -> (String, PlotPoint) {
    match hover {
        HoverPosition::NearDataPoint {
            plot_name,
            position,
            ..
        } => (format!("{plot_name}\n"), *position),
        HoverPosition::Elsewhere { position } => (String::new(), *position),
    }
}

/// Positive series per iteration on a log scale (residuals), with the stopping tolerance as a
/// line once the curves come within three decades of it (before that it would squash them).
pub fn residual_plot(
    ui: &mut egui::Ui,
    id: &str,
    history: &[IterationRecord],
    series: &[Series],
    tolerance: Option<f64>,
    max_iters: Option<usize>,
    height: f32,
) {
    residual_plot_over(
        ui,
        "iteration",
        id,
        history,
        series,
        tolerance,
        max_iters,
        height,
    );
}

/// `residual_plot` for a run whose steps are not iterations (e.g. teaching mode's messages):
/// the x axis and the hover read-out say `step_name`.
#[allow(clippy::too_many_arguments)]
pub fn residual_plot_over(
    ui: &mut egui::Ui,
    step_name: &str,
    id: &str,
    history: &[IterationRecord],
    series: &[Series],
    tolerance: Option<f64>,
    max_iters: Option<usize>,
    height: f32,
) {
    let curves: Vec<(String, Vec<[f64; 2]>)> = series
        .iter()
        .map(|s| {
            let points = s
                .points(history)
                .into_iter()
                .filter(|p| p[1] > 0.0)
                .map(|p| [p[0], p[1].log10()])
                .collect();
            (s.name.clone(), points)
        })
        .collect();
    let mut plot = ticks::plot(id, Scale::Integer, Scale::Log10)
        .x_axis_label(step_name.to_string())
        .y_axis_label("residual")
        .height(height)
        .include_x(0.0)
        .include_x(x_end(history, max_iters))
        .allow_scroll(false)
        .y_axis_min_width(36.0)
        .label_formatter(|hover| {
            let (head, point) = hover_head(hover);
            Some(format!(
                "{head}{step_name} {:.0}\n{:.3e}",
                point.x,
                10f64.powf(point.y)
            ))
        });
    let range = curves
        .iter()
        .flat_map(|(_, p)| p.iter().map(|p| p[1]))
        .fold(None, |acc: Option<(f64, f64)>, y| {
            Some(acc.map_or((y, y), |(lo, hi)| (lo.min(y), hi.max(y))))
        });
    if let Some((lo, hi)) = range {
        // At least one decade tall, so a flat residual still shows a labelled tick.
        plot = plot
            .include_y(lo.floor())
            .include_y(hi.ceil().max(lo.floor() + 1.0));
    }
    let tolerance = tolerance
        .filter(|t| *t > 0.0)
        .map(f64::log10)
        .filter(|t| range.is_some_and(|(lo, _)| lo - t <= 3.0));
    let x_range = [0.0, x_end(history, max_iters)];
    let mut shapes: Vec<Vec<[f64; 2]>> = curves.iter().map(|(_, p)| p.clone()).collect();
    let mut entries: Vec<(String, Color32)> = curves
        .iter()
        .enumerate()
        .map(|(k, (name, _))| (name.clone(), series_color(&series[k], k)))
        .collect();
    if let Some(t) = tolerance {
        shapes.push(vec![[x_range[0], t], [x_range[1], t]]);
        entries.push(("tolerance".into(), REFERENCE_GRAY));
    }
    let include_y: Vec<f64> = range
        .map(|(lo, hi)| vec![lo.floor(), hi.ceil().max(lo.floor() + 1.0)])
        .unwrap_or_default();
    let mut plot_height = height;
    if let Some(legend) = super::legend::for_plot(
        ui,
        &shapes,
        &x_range,
        &include_y,
        &entries,
        &mut plot_height,
    ) {
        plot = plot.legend(legend);
    }
    plot = plot.height(plot_height);
    plot.show(ui, |plot| {
        for (k, (name, points)) in curves.into_iter().enumerate() {
            plot.line(
                Line::new(name, PlotPoints::from(points))
                    .color(series_color(&series[k], k))
                    .width(2.0),
            );
        }
        if let Some(t) = tolerance {
            plot.hline(
                HLine::new("tolerance", t)
                    .color(REFERENCE_GRAY)
                    .style(LineStyle::dashed_loose()),
            );
        }
    });
}
