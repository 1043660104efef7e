//! Headless figures (PNG) drawn with plotters in the window's colours (`viz::palette`): line
//! plots on linear or log axes with dashed reference lines, laid out one or more panels to an
//! image (the scenarios write the PNG through `io`). `beliefscope run` writes them beside results.json (beliefs against the reference, error
//! curves on log-log axes with the floor and the 1/t slope, recall against chain length).
//! Log axes plot log10 of the values and label ticks as powers of ten. Cost: O(points) per
//! figure plus the bitmap (width x height x 3 bytes).

use std::sync::Once;

use plotters::coord::ranged1d::{DefaultFormatting, KeyPointHint};
use plotters::coord::types::RangedCoordf64;
use plotters::prelude::*;
use plotters::style::FontStyle;

use super::palette::Rgb;
use super::ticks::{self, Scale};
use crate::error::{Error, Result};

/// One curve of a panel.
#[derive(Debug, Clone)]
pub struct Curve {
    pub name: String,
    pub points: Vec<(f64, f64)>,
    pub color: Rgb,
    /// Reference curves (slopes, floors) are dashed.
    pub dashed: bool,
    pub width: u32,
    /// Drawn as bars from 0 instead of a line: `(slot, slots)` places this curve's bar in
    /// slot `slot` of `slots` side by side within each whole-number x (a distribution over
    /// states). A dashed curve's bars are outlined, not filled.
    pub bars: Option<(usize, usize)>,
}

impl Curve {
    pub fn new(name: impl Into<String>, points: Vec<(f64, f64)>, color: Rgb) -> Curve {
        Curve {
            name: name.into(),
            points,
            color,
            dashed: false,
            width: 2,
            bars: None,
        }
    }

    /// Bars in slot `slot` of `slots` per whole-number x (see [`Curve::bars`]).
    pub fn as_bars(mut self, slot: usize, slots: usize) -> Curve {
        self.bars = Some((slot, slots.max(1)));
        self
    }

    pub fn dashed(mut self) -> Curve {
        self.dashed = true;
        self
    }

    /// A thin line without a legend entry (e.g. individual paths behind their mean).
    pub fn faint(mut self) -> Curve {
        self.width = 1;
        self.name.clear();
        self
    }
}

/// One plot: title, axis labels (with units), scales and curves.
#[derive(Debug, Clone, Default)]
pub struct Panel {
    pub title: String,
    pub x_label: String,
    pub y_label: String,
    pub log_x: bool,
    pub log_y: bool,
    pub curves: Vec<Curve>,
    /// Horizontal reference lines (name, value, colour), dashed.
    pub levels: Vec<(String, f64, Rgb)>,
    /// Values the y range must include (e.g. 0 and 1 for a recall).
    pub include_y: Vec<f64>,
    /// The x axis counts (iterations, chain lengths, indices): whole-number ticks only.
    pub integer_x: bool,
}

pub(super) const FONT: &str = "sans-serif";

pub(super) fn register_font() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        // Ubuntu Light, the text font egui bundles: the figures read like the window.
        let _ = plotters::style::register_font(
            FONT,
            FontStyle::Normal,
            epaint_default_fonts::UBUNTU_LIGHT,
        );
    });
}

fn color(c: Rgb) -> RGBColor {
    RGBColor(c[0], c[1], c[2])
}

/// The value as drawn on an axis (log10 on a log axis; `None` where it cannot be drawn).
fn axis_value(v: f64, log: bool) -> Option<f64> {
    match log {
        true if v > 0.0 && v.is_finite() => Some(v.log10()),
        true => None,
        false if v.is_finite() => Some(v),
        false => None,
    }
}

/// A tick label: the number with the decimals its step needs, or the power of ten on a log
/// axis.
fn tick(v: f64, log: bool, step: f64) -> String {
    if !log {
        return ticks::linear_label(v, step);
    }
    let p = 10f64.powf(v);
    if (v - v.round()).abs() < 1e-9 {
        format!("1e{}", v.round() as i64)
    } else {
        format!("{p:.1e}")
    }
}

/// The scale of an axis.
fn scale(log: bool, integer: bool) -> Scale {
    match (log, integer) {
        (true, _) => Scale::Log10,
        (false, true) => Scale::Integer,
        (false, false) => Scale::Real,
    }
}

/// The smallest gap between neighbouring ticks (the step a label's decimals follow).
fn smallest_gap(ticks: &[f64]) -> f64 {
    let gap = ticks
        .windows(2)
        .map(|w| w[1] - w[0])
        .fold(f64::INFINITY, f64::min);
    if gap.is_finite() { gap } else { 1.0 }
}

/// The panel's (x, y) ranges over everything it draws, with a margin.
fn ranges(panel: &Panel) -> Option<((f64, f64), (f64, f64))> {
    let xs = panel
        .curves
        .iter()
        .flat_map(|c| c.points.iter().filter_map(|p| axis_value(p.0, panel.log_x)));
    let ys = panel
        .curves
        .iter()
        .flat_map(|c| c.points.iter().filter_map(|p| axis_value(p.1, panel.log_y)))
        .chain(
            panel
                .levels
                .iter()
                .filter_map(|l| axis_value(l.1, panel.log_y)),
        )
        .chain(
            panel
                .include_y
                .iter()
                .filter_map(|v| axis_value(*v, panel.log_y)),
        );
    let span = |it: &mut dyn Iterator<Item = f64>| {
        it.fold(None, |acc: Option<(f64, f64)>, v| {
            Some(acc.map_or((v, v), |(lo, hi)| (lo.min(v), hi.max(v))))
        })
    };
    let (mut x0, mut x1) = span(&mut xs.into_iter())?;
    let (mut y0, mut y1) = span(&mut ys.into_iter())?;
    if panel.curves.iter().any(|c| c.bars.is_some()) && !panel.log_x && !panel.log_y {
        // A bar covers x ± half a unit and rises from 0.
        (x0, x1) = (x0 - 0.5, x1 + 0.5);
        (y0, y1) = (y0.min(0.0), y1.max(0.0));
    }
    let pad = |lo: f64, hi: f64, log: bool| {
        let w = if hi > lo {
            hi - lo
        } else if log {
            1.0
        } else {
            lo.abs().max(1.0)
        };
        (lo - 0.04 * w, hi + 0.06 * w)
    };
    Some((pad(x0, x1, panel.log_x), pad(y0, y1, panel.log_y)))
}

/// A linear f64 axis whose ticks (labels and bold grid lines) are exactly `ticks` and that has
/// no light grid lines (plotters' own key points would put 0.5 on a counting axis).
struct Ticked {
    inner: RangedCoordf64,
    ticks: Vec<f64>,
}

impl Ticked {
    fn new(range: std::ops::Range<f64>, ticks: Vec<f64>) -> Ticked {
        Ticked {
            inner: range.into(),
            ticks,
        }
    }
}

impl Ranged for Ticked {
    type ValueType = f64;
    type FormatOption = DefaultFormatting;

    fn map(&self, value: &f64, limit: (i32, i32)) -> i32 {
        self.inner.map(value, limit)
    }

    fn key_points<Hint: KeyPointHint>(&self, hint: Hint) -> Vec<f64> {
        if hint.weight().allow_light_points() {
            Vec::new()
        } else {
            self.ticks.clone()
        }
    }

    fn range(&self) -> std::ops::Range<f64> {
        self.inner.range()
    }
}

/// The ticks of a panel drawn at `size` pixels: about 90 px apart on x and 45 px on y (the plot
/// area is the panel less its margins and label areas), whole numbers on a counting axis, two
/// at least.
fn panel_ticks(
    panel: &Panel,
    (x0, x1): (f64, f64),
    (y0, y1): (f64, f64),
    (width, height): (u32, u32),
) -> (Vec<f64>, Vec<f64>) {
    let plot_w = (width as f64 - 64.0 - 24.0).max(40.0);
    let plot_h = (height as f64 - 42.0 - 60.0).max(40.0);
    let x_scale = scale(panel.log_x, panel.integer_x);
    let x_ticks = ticks::ticks(x_scale, x0, x1, (x1 - x0) * 90.0 / plot_w);
    let y_scale = scale(panel.log_y, false);
    let y_ticks = ticks::ticks(y_scale, y0, y1, (y1 - y0) * 45.0 / plot_h);
    (x_ticks, y_ticks)
}

fn draw_panel<DB: DrawingBackend>(
    area: &DrawingArea<DB, plotters::coord::Shift>,
    panel: &Panel,
) -> Result<()>
where
    DB::ErrorType: 'static,
{
    let fail =
        |e: &dyn std::fmt::Display| Error::Other(format!("cannot draw '{}': {e}", panel.title));
    let Some(((x0, x1), (y0, y1))) = ranges(panel) else {
        area.draw(&Text::new(
            format!("{}: nothing to plot", panel.title),
            (20, 20),
            (FONT, 16).into_font(),
        ))
        .map_err(|e| fail(&e))?;
        return Ok(());
    };
    let (x_ticks, y_ticks) = panel_ticks(panel, (x0, x1), (y0, y1), area.dim_in_pixel());
    let (x_step, y_step) = (smallest_gap(&x_ticks), smallest_gap(&y_ticks));
    let mut chart = ChartBuilder::on(area)
        .caption(&panel.title, (FONT, 20).into_font())
        .margin(12)
        .x_label_area_size(42)
        .y_label_area_size(64)
        .build_cartesian_2d(Ticked::new(x0..x1, x_ticks), Ticked::new(y0..y1, y_ticks))
        .map_err(|e| fail(&e))?;
    let (log_x, log_y) = (panel.log_x, panel.log_y);
    let x_fmt = move |v: &f64| tick(*v, log_x, x_step);
    let y_fmt = move |v: &f64| tick(*v, log_y, y_step);
    chart
        .configure_mesh()
        .x_desc(&panel.x_label)
        .y_desc(&panel.y_label)
        .x_label_formatter(&x_fmt)
        .y_label_formatter(&y_fmt)
        .label_style((FONT, 14).into_font())
        .axis_desc_style((FONT, 16).into_font())
        .light_line_style(RGBColor(235, 235, 235))
        .draw()
        .map_err(|e| fail(&e))?;
    let mut legend = false;
    let plot = |c: &Curve| -> Vec<(f64, f64)> {
        c.points
            .iter()
            .filter_map(|&(x, y)| Some((axis_value(x, log_x)?, axis_value(y, log_y)?)))
            .collect()
    };
    for c in &panel.curves {
        let style = ShapeStyle::from(&color(c.color)).stroke_width(c.width);
        let points = plot(c);
        if let Some((slot, slots)) = c.bars.filter(|_| !log_x && !log_y) {
            // Bars side by side within [x - 0.4, x + 0.4]; outlined when dashed (a reference).
            let width = 0.8 / slots as f64;
            let bar_style = if c.dashed {
                ShapeStyle::from(&color(c.color)).stroke_width(2)
            } else {
                ShapeStyle::from(&color(c.color)).filled()
            };
            let rects = points.iter().map(move |&(x, y)| {
                let left = x - 0.4 + slot as f64 * width;
                Rectangle::new([(left, 0.0), (left + width, y)], bar_style)
            });
            let drawn = chart.draw_series(rects).map_err(|e| fail(&e))?;
            if !c.name.is_empty() {
                legend = true;
                drawn
                    .label(&c.name)
                    .legend(move |(x, y)| Rectangle::new([(x, y - 5), (x + 16, y + 5)], bar_style));
            }
            continue;
        }
        let drawn = if c.dashed {
            chart.draw_series(DashedLineSeries::new(points, 8, 5, style))
        } else {
            chart.draw_series(LineSeries::new(points, style))
        }
        .map_err(|e| fail(&e))?;
        if !c.name.is_empty() {
            legend = true;
            let rgb = color(c.color);
            drawn.label(&c.name).legend(move |(x, y)| {
                PathElement::new(vec![(x, y), (x + 18, y)], rgb.stroke_width(3))
            });
        }
    }
    for (name, value, c) in &panel.levels {
        let Some(y) = axis_value(*value, log_y) else {
            continue;
        };
        let style = ShapeStyle::from(&color(*c)).stroke_width(2);
        let rgb = color(*c);
        chart
            .draw_series(DashedLineSeries::new(vec![(x0, y), (x1, y)], 8, 5, style))
            .map_err(|e| fail(&e))?
            .label(name)
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 18, y)], rgb.stroke_width(3)));
        legend = true;
    }
    if legend {
        chart
            .configure_series_labels()
            .background_style(WHITE.mix(0.85))
            .border_style(RGBColor(200, 200, 200))
            .label_font((FONT, 14).into_font())
            .position(SeriesLabelPosition::UpperRight)
            .draw()
            .map_err(|e| fail(&e))?;
    }
    Ok(())
}

/// The panels drawn side by side in `columns` columns, as RGB bytes of `width` x `height`.
pub fn render(panels: &[Panel], columns: usize, width: u32, height: u32) -> Result<Vec<u8>> {
    register_font();
    let mut buffer = vec![0u8; width as usize * height as usize * 3];
    {
        let root = BitMapBackend::with_buffer(&mut buffer, (width, height)).into_drawing_area();
        root.fill(&WHITE)
            .map_err(|e| Error::Other(format!("cannot draw a figure: {e}")))?;
        let columns = columns.clamp(1, panels.len().max(1));
        let rows = panels.len().div_ceil(columns).max(1);
        let areas = root.split_evenly((rows, columns));
        for (panel, area) in panels.iter().zip(areas.iter()) {
            draw_panel(area, panel)?;
        }
        root.present()
            .map_err(|e| Error::Other(format!("cannot draw a figure: {e}")))?;
    }
    Ok(buffer)
}

/// [`render`] as RGBA bytes (what a PNG encoder takes; the caller writes the file).
pub fn render_rgba(panels: &[Panel], columns: usize, width: u32, height: u32) -> Result<Vec<u8>> {
    let rgb = render(panels, columns, width, height)?;
    Ok(rgb
        .chunks_exact(3)
        .flat_map(|p| [p[0], p[1], p[2], 255])
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pixels_of(rgb: &[u8], c: Rgb) -> usize {
        rgb.chunks_exact(3)
            .filter(|p| p[0] == c[0] && p[1] == c[1] && p[2] == c[2])
            .count()
    }

    #[test]
    fn curves_are_drawn_in_their_palette_colours_on_log_axes() {
        let blue = [66, 165, 245];
        let floor = [239, 108, 0];
        let panel = Panel {
            title: "error".into(),
            x_label: "iteration t".into(),
            y_label: "error".into(),
            log_x: true,
            log_y: true,
            curves: vec![Curve::new(
                "SOSMP",
                (1..200)
                    .map(|t| (t as f64, 1.0 / t as f64 + 1e-3))
                    .collect(),
                blue,
            )],
            levels: vec![("floor".into(), 1e-3, floor)],
            include_y: vec![],
            integer_x: true,
        };
        let rgb = render(&[panel], 1, 480, 320).unwrap();
        assert!(pixels_of(&rgb, blue) > 200, "the curve is drawn");
        assert!(pixels_of(&rgb, floor) > 100, "the floor is drawn");
        // Not everything: most of the image is background.
        assert!(pixels_of(&rgb, [255, 255, 255]) > 480 * 320 / 2);
    }

    #[test]
    fn bars_fill_their_slot_and_a_dashed_reference_is_only_outlined() {
        let (purple, grey) = ([94, 53, 177], [158, 158, 158]);
        let dist = vec![(0.0, 0.3), (1.0, 0.5), (2.0, 0.2)];
        let panel = |reference: bool| Panel {
            title: "P(D | evidence)".into(),
            integer_x: true,
            include_y: vec![0.0, 1.0],
            curves: vec![
                Curve::new("exact", dist.clone(), grey)
                    .as_bars(0, 2)
                    .dashed(),
                Curve::new("pbp", dist.clone(), purple).as_bars(1, 2),
            ]
            .into_iter()
            .filter(|c| reference || c.name != "exact")
            .collect(),
            ..Panel::default()
        };
        let rgb = render(&[panel(true)], 1, 480, 320).unwrap();
        let (filled, outlined) = (pixels_of(&rgb, purple), pixels_of(&rgb, grey));
        // Three filled bars about 0.4 units wide over a 3-unit axis cover far more than lines.
        assert!(filled > 4000, "filled bars: {filled} pixels");
        assert!(
            outlined > 300 && outlined < filled / 3,
            "outline {outlined}, fill {filled}"
        );
        // The x range includes each bar's half unit, so the leftmost bar is not clipped.
        let (xr, _) = ranges(&panel(false)).unwrap();
        assert!(xr.0 < -0.4 && xr.1 > 2.4, "{xr:?}");
    }

    #[test]
    fn ticks_read_as_numbers_and_powers_of_ten() {
        assert_eq!(tick(-3.0, true, 1.0), "1e-3");
        assert_eq!(tick(0.25, false, 0.05), "0.25");
        assert_eq!(tick(0.5, false, 0.5), "0.5");
        assert_eq!(axis_value(0.0, true), None);
    }

    #[test]
    fn a_counting_axis_has_whole_ticks_and_every_axis_two() {
        // Three chain lengths in a narrow figure: 0.5 steps would fit, whole ones must be used.
        let panel = Panel {
            title: "recall".into(),
            integer_x: true,
            curves: vec![Curve::new(
                "kbp",
                vec![(1.0, 0.42), (2.0, 0.44), (3.0, 0.47)],
                [0, 0, 0],
            )],
            ..Panel::default()
        };
        let (xr, yr) = ranges(&panel).unwrap();
        for size in [(300, 240), (640, 480), (1400, 500)] {
            let (x, y) = panel_ticks(&panel, xr, yr, size);
            assert!(x.len() >= 2 && y.len() >= 2, "{size:?}: {x:?} {y:?}");
            assert!(x.iter().all(|v| v.fract() == 0.0), "{size:?}: {x:?}");
        }
        // The same panel on a real axis may use halves.
        let real = Panel {
            integer_x: false,
            ..panel
        };
        let (x, _) = panel_ticks(&real, xr, yr, (1400, 500));
        assert!(x.iter().any(|v| v.fract() != 0.0), "{x:?}");
    }

    #[test]
    fn an_empty_panel_is_a_message_not_an_error() {
        let rgba = render_rgba(&[Panel::default()], 1, 200, 100).unwrap();
        assert_eq!(rgba.len(), 200 * 100 * 4);
    }
}
