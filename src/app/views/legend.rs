//! Where a plot's legend goes so that it does not cover the curves: the corner whose legend-sized
//! box holds the fewest curve samples, or a row above the plot when every corner would cover some
//! of them. Cost: O(samples × 4) per frame (curves are resampled 8 times per segment).

use eframe::egui;
use egui_plot::Corner;

/// Samples per line segment when looking for a corner free of the curves.
const SUBSTEPS: usize = 8;

/// Where the legend goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LegendPlace {
    /// Inside the plot, in this corner (no curve under it).
    Corner(Corner),
    /// In a row above the plot (every corner had a curve under it).
    Above,
}

/// The place for a legend of `entries` names (the longest `longest_name` characters) over a plot
/// `size` points large showing `curves`, whose data bounds are widened to include `include_x`
/// and `include_y`.
pub fn place(
    curves: &[Vec<[f64; 2]>],
    include_x: &[f64],
    include_y: &[f64],
    entries: usize,
    longest_name: usize,
    size: egui::Vec2,
) -> LegendPlace {
    let points: Vec<[f64; 2]> = curves.iter().flat_map(|c| resample(c)).collect();
    let finite = || {
        points
            .iter()
            .filter(|p| p[0].is_finite() && p[1].is_finite())
    };
    let (mut x0, mut x1, mut y0, mut y1) = (
        f64::INFINITY,
        f64::NEG_INFINITY,
        f64::INFINITY,
        f64::NEG_INFINITY,
    );
    for p in finite() {
        x0 = x0.min(p[0]);
        x1 = x1.max(p[0]);
        y0 = y0.min(p[1]);
        y1 = y1.max(p[1]);
    }
    for &x in include_x {
        x0 = x0.min(x);
        x1 = x1.max(x);
    }
    for &y in include_y {
        y0 = y0.min(y);
        y1 = y1.max(y);
    }
    if !(x1 > x0 && y1 > y0) {
        return LegendPlace::Corner(Corner::RightTop);
    }
    // egui_plot's default margins: 5 % of the span on each side.
    let (mx, my) = (0.05 * (x1 - x0), 0.05 * (y1 - y0));
    let (x0, x1, y0, y1) = (x0 - mx, x1 + mx, y0 - my, y1 + my);
    // The legend's box as a fraction of the plot (rows of about 18 points, 7 points a character
    // plus the swatch and the frame), with a little room around it.
    let fw = ((longest_name as f32 * 7.0 + 40.0) / size.x.max(1.0)).min(1.0) as f64;
    let fh = ((entries as f32 * 18.0 + 14.0) / size.y.max(1.0)).min(1.0) as f64;
    let covered = |corner: Corner| {
        let (right, top) = match corner {
            Corner::LeftTop => (false, true),
            Corner::RightTop => (true, true),
            Corner::LeftBottom => (false, false),
            Corner::RightBottom => (true, false),
        };
        finite()
            .filter(|p| {
                let u = (p[0] - x0) / (x1 - x0);
                let v = (p[1] - y0) / (y1 - y0);
                let in_x = if right { u >= 1.0 - fw } else { u <= fw };
                let in_y = if top { v >= 1.0 - fh } else { v <= fh };
                in_x && in_y
            })
            .count()
    };
    let (best, count) = [
        Corner::RightTop,
        Corner::RightBottom,
        Corner::LeftTop,
        Corner::LeftBottom,
    ]
    .into_iter()
    .map(|c| (c, covered(c)))
    .min_by_key(|(_, n)| *n)
    .expect("four corners");
    if count == 0 {
        LegendPlace::Corner(best)
    } else {
        LegendPlace::Above
    }
}

/// The curve with points added along each segment, so a line crossing a corner counts there.
fn resample(curve: &[[f64; 2]]) -> Vec<[f64; 2]> {
    let mut out = Vec::with_capacity(curve.len() * SUBSTEPS + 1);
    for w in curve.windows(2) {
        for s in 0..SUBSTEPS {
            let t = s as f64 / SUBSTEPS as f64;
            out.push([
                w[0][0] + t * (w[1][0] - w[0][0]),
                w[0][1] + t * (w[1][1] - w[0][1]),
            ]);
        }
    }
    out.extend(curve.last());
    out
}

/// A plot's legend where [`place`] puts it: inside (returned for `Plot::legend`) or drawn now as
/// a row above the plot (`None`, and `height` loses the row's height). `entries` are the curves'
/// names and colours in order.
pub fn for_plot(
    ui: &mut egui::Ui,
    curves: &[Vec<[f64; 2]>],
    include_x: &[f64],
    include_y: &[f64],
    entries: &[(String, egui::Color32)],
    height: &mut f32,
) -> Option<egui_plot::Legend> {
    let longest = entries
        .iter()
        .map(|(n, _)| n.chars().count())
        .max()
        .unwrap_or(0);
    let size = egui::vec2(ui.available_width(), *height);
    match place(curves, include_x, include_y, entries.len(), longest, size) {
        LegendPlace::Corner(corner) => Some(
            egui_plot::Legend::default()
                .follow_insertion_order(true)
                .text_style(egui::TextStyle::Small)
                .background_alpha(0.7)
                .position(corner),
        ),
        LegendPlace::Above => {
            let used = row(ui, entries);
            *height = (*height - used - ui.spacing().item_spacing.y).max(60.0);
            None
        }
    }
}

/// A legend drawn as a row of coloured swatches and names (above a plot); returns its height.
pub fn row(ui: &mut egui::Ui, entries: &[(String, egui::Color32)]) -> f32 {
    ui.horizontal_wrapped(|ui| {
        ui.spacing_mut().item_spacing.x = 4.0;
        for (name, color) in entries {
            let (rect, _) = ui.allocate_exact_size(egui::vec2(14.0, 10.0), egui::Sense::hover());
            ui.painter()
                .line_segment([rect.left_center(), rect.right_center()], (2.5, *color));
            ui.label(egui::RichText::new(name).small());
            ui.add_space(8.0);
        }
    })
    .response
    .rect
    .height()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_rising_curve_leaves_the_top_left_and_bottom_right_free() {
        let rising = vec![[0.0, 0.0], [10.0, 1.0]];
        let place = place(&[rising], &[], &[], 2, 10, egui::vec2(400.0, 200.0));
        assert!(matches!(
            place,
            LegendPlace::Corner(Corner::LeftTop | Corner::RightBottom)
        ));
    }

    #[test]
    fn curves_through_every_corner_send_the_legend_above() {
        let rising = vec![[0.0, 0.0], [10.0, 1.0]];
        let falling = vec![[0.0, 1.0], [10.0, 0.0]];
        let place = place(
            &[rising, falling],
            &[],
            &[],
            3,
            20,
            egui::vec2(300.0, 150.0),
        );
        assert_eq!(place, LegendPlace::Above);
    }

    #[test]
    fn a_high_flat_curve_gets_the_legend_below_it() {
        let high = vec![[1.0, 0.9], [2.0, 0.95], [9.0, 0.97]];
        let place = place(&[high], &[], &[0.0, 1.0], 3, 17, egui::vec2(400.0, 200.0));
        assert!(matches!(
            place,
            LegendPlace::Corner(Corner::RightBottom | Corner::LeftBottom)
        ));
    }
}
