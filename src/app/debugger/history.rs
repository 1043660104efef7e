//! One message's history across the stored iterations, for a message clicked on the graph
//! canvas: its values (SOSMP's coefficients, a function on a grid) as a heat map over time
//! (columns: stored iterations, rows: the message's values, blue negative, red positive, scaled
//! by the largest |value|), and its change per iteration on a log axis with the iterations where
//! it oscillated marked. Cost O(frames · values) when the history changes, O(frames) per frame.

use std::sync::Arc;

use eframe::egui::{self, Color32, ColorImage, TextureHandle, TextureOptions};
use egui_plot::{Line, PlotPoints, Points};

use crate::app::views::ticks::{self, Scale};
use crate::run::residuals::{ConvergenceGraph, EdgeFrame};

/// The change of message `m` per stored iteration: `(iteration, change, oscillating)`.
pub fn change_series(frames: &[Arc<EdgeFrame>], m: usize) -> Vec<(usize, f64, bool)> {
    frames
        .iter()
        .filter_map(|f| {
            let c = *f.change().get(m)?;
            Some((
                f.iteration,
                f64::from(c),
                f.oscillating.get(m) == Some(&true),
            ))
        })
        .collect()
}

/// Diverging colour of `t` in [-1, 1]: blue, white at 0, red.
fn diverging(t: f32) -> Color32 {
    let t = if t.is_nan() { 0.0 } else { t.clamp(-1.0, 1.0) };
    let fade = |full: f32| (255.0 - (255.0 - full) * t.abs()).round() as u8;
    if t >= 0.0 {
        Color32::from_rgb(fade(178.0), fade(24.0), fade(43.0))
    } else {
        Color32::from_rgb(fade(33.0), fade(102.0), fade(172.0))
    }
}

/// The heat map of message `m`'s values: one column per stored frame with values, one row per
/// value (row 0 at the top); None when no frame stores values.
pub fn values_image(frames: &[Arc<EdgeFrame>], m: usize) -> Option<ColorImage> {
    let columns: Vec<&[f32]> = frames
        .iter()
        .map(|f| f.values_of(m))
        .filter(|v| !v.is_empty())
        .collect();
    let rows = columns.iter().map(|c| c.len()).max()?;
    let scale = columns
        .iter()
        .flat_map(|c| c.iter())
        .fold(0.0f32, |a, v| a.max(v.abs()))
        .max(f32::MIN_POSITIVE);
    let width = columns.len();
    let mut image = ColorImage::filled([width, rows], Color32::GRAY);
    for (x, column) in columns.iter().enumerate() {
        for (y, v) in column.iter().enumerate() {
            image.pixels[y * width + x] = diverging(v / scale);
        }
    }
    Some(image)
}

/// What the history window keeps between frames.
#[derive(Default)]
pub struct MessageHistory {
    /// The message shown (None: window closed).
    pub message: Option<usize>,
    texture: Option<TextureHandle>,
    /// (message, frames, newest iteration) the texture was made from.
    made_from: Option<(usize, usize, usize)>,
}

impl MessageHistory {
    /// Draws the window for the chosen message, if any.
    pub fn show(
        &mut self,
        ctx: &egui::Context,
        graph: &ConvergenceGraph,
        frames: &[Arc<EdgeFrame>],
    ) {
        let Some(m) = self.message.filter(|&m| m < graph.messages.len()) else {
            return;
        };
        let [from, to] = graph.messages[m];
        let mut open = true;
        egui::Window::new("Message history")
            .open(&mut open)
            .default_size([520.0, 420.0])
            .resizable(true)
            .show(ctx, |ui| {
                let series = change_series(frames, m);
                ui.label(format!(
                    "history of message {from} → {to}: {} stored iterations",
                    series.len()
                ));
                let key = (m, frames.len(), frames.last().map_or(0, |f| f.iteration));
                if self.made_from != Some(key) {
                    self.texture = values_image(frames, m).map(|image| {
                        ctx.load_texture("message history", image, TextureOptions::NEAREST)
                    });
                    self.made_from = Some(key);
                }
                if let Some(texture) = &self.texture {
                    ui.label(format!(
                        "{} over time (left: iteration {}, right: {}; blue negative, red positive)",
                        graph.value_axis,
                        series.first().map_or(0, |s| s.0),
                        series.last().map_or(0, |s| s.0),
                    ));
                    let width = ui.available_width().max(120.0);
                    ui.add(
                        egui::Image::new((texture.id(), egui::vec2(width, 140.0)))
                            .maintain_aspect_ratio(false),
                    )
                    .on_hover_text(
                        "one column per stored iteration, one row per value of the message",
                    );
                }
                let line: Vec<[f64; 2]> = series
                    .iter()
                    .filter(|s| s.1 > 0.0)
                    .map(|s| [s.0 as f64, s.1.log10()])
                    .collect();
                let oscillating: Vec<[f64; 2]> = series
                    .iter()
                    .filter(|s| s.2 && s.1 > 0.0)
                    .map(|s| [s.0 as f64, s.1.log10()])
                    .collect();
                ticks::plot("message history change", Scale::Integer, Scale::Log10)
                    .x_axis_label("iteration")
                    .y_axis_label("change of this message")
                    .height(ui.available_height().max(120.0))
                    .allow_scroll(false)
                    .show(ui, |plot| {
                        plot.line(
                            Line::new("change", PlotPoints::from(line))
                                .color(Color32::from_rgb(213, 94, 0))
                                .width(2.0),
                        );
                        plot.points(
                            Points::new("oscillating", PlotPoints::from(oscillating))
                                .color(Color32::from_rgb(255, 0, 255))
                                .radius(3.0),
                        );
                    });
            });
        if !open {
            self.message = None;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn heat_map_has_a_column_per_frame_and_signed_colours() {
        let frame = |iteration, values: Vec<f32>| {
            Arc::new(EdgeFrame::new(
                iteration,
                vec![0.1, 0.2],
                vec![false, iteration == 2],
                values,
                2,
            ))
        };
        let frames = vec![
            frame(1, vec![0.0, 0.0, 1.0, -1.0]),
            frame(2, vec![0.0, 0.0, -2.0, 0.0]),
        ];
        let image = values_image(&frames, 1).unwrap();
        assert_eq!(image.size, [2, 2]);
        // Message 1's first value: 1 then -2 (the scale's top), so pale red then full blue.
        assert_eq!(image.pixels[1], diverging(-1.0));
        assert_eq!(image.pixels[0], diverging(0.5));
        assert_eq!(
            change_series(&frames, 1),
            vec![(1, 0.2f32 as f64, false), (2, 0.2f32 as f64, true)]
        );
    }
}
