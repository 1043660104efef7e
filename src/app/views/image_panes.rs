//! Side-by-side image panes of one scenario (all the same size) with one shared zoom: fit to the
//! window or a fixed factor (zoom buttons, keys or ctrl+scroll). A click selects a pixel; the
//! selected pixel is marked with a crosshair in every pane, the hovered pixel with a thin box,
//! and hovering shows a tooltip supplied by the scenario's view.

use eframe::egui::{
    self, Color32, Pos2, Rect, RichText, Sense, Stroke, StrokeKind, TextureHandle, Vec2, pos2, vec2,
};

use crate::app::commands::UiCommand;
use crate::app::state::{ZOOM_RANGE, Zoom};

const GAP: f32 = 12.0;
const COLORBAR_HEIGHT: f32 = 10.0;

/// A colour legend under a pane.
pub struct ColorBar<'a> {
    pub texture: &'a TextureHandle,
    pub low: String,
    pub high: String,
}

pub struct Pane<'a> {
    /// Shown above the image.
    pub title: String,
    /// Accessible name of the image (what tests and screen readers find it by).
    pub name: String,
    pub texture: &'a TextureHandle,
    pub colorbar: Option<ColorBar<'a>>,
    /// A small legend drawn at the right end of the title row (the flow colour wheel).
    pub legend: Option<&'a TextureHandle>,
}

/// Side of a title-row legend, in points.
pub const LEGEND_SIZE: f32 = 30.0;

/// What the pointer did over the panes this frame.
#[derive(Debug, Default, Clone)]
pub struct PanesResponse {
    pub clicked: Option<[usize; 2]>,
    pub hovered: Option<[usize; 2]>,
    /// Where each pane's image was drawn (pane order) and at what zoom, for overlays.
    pub rects: Vec<Rect>,
    pub zoom: f32,
}

/// Zoom out / in buttons, the Fit toggle and the current factor.
pub fn zoom_toolbar(ui: &mut egui::Ui, zoom: &mut Zoom, commands: &mut Vec<UiCommand>) {
    ui.label("Zoom");
    for (command, text) in [(UiCommand::ZoomOut, "−"), (UiCommand::ZoomIn, "+")] {
        let b = ui
            .small_button(text)
            .accessible_name(command.label())
            .on_hover_text(command.tooltip(ui.ctx()));
        if b.clicked() {
            commands.push(command);
        }
    }
    let fit = ui
        .selectable_label(zoom.fit, "Fit")
        .on_hover_text(UiCommand::ZoomFit.tooltip(ui.ctx()));
    if fit.clicked() {
        commands.push(UiCommand::ZoomFit);
    }
    ui.weak(format!("{:.0} %", zoom.factor * 100.0))
        .on_hover_text("Screen points per image pixel; ctrl+scroll over the images zooms");
}

/// The zoom (points per pixel) and number of columns (one of `columns`) that fit `n` panes of
/// `image` pixels into `avail` points, each pane also needing `extra_h` points of captions.
pub fn fit_layout(
    avail: Vec2,
    image: [usize; 2],
    n: usize,
    extra_h: f32,
    columns: &[usize],
) -> (f32, usize) {
    let (w, h) = (image[0].max(1) as f32, image[1].max(1) as f32);
    let mut best = (ZOOM_RANGE.0, columns.first().copied().unwrap_or(1).max(1));
    for cols in columns.iter().copied().filter(|&c| c >= 1 && c <= n.max(1)) {
        let rows = n.div_ceil(cols).max(1);
        let zx = (avail.x - GAP * (cols - 1) as f32) / cols as f32 / w;
        let zy = (avail.y - rows as f32 * extra_h - GAP * (rows - 1) as f32) / rows as f32 / h;
        let z = zx.min(zy);
        if z > best.0 {
            best = (z, cols);
        }
    }
    let (mut z, cols) = best;
    // Whole screen points per pixel keep every pixel the same size; only where that wastes at
    // most an eighth of the space (Fit fills the central area).
    if z >= 8.0 {
        z = z.floor();
    }
    (z.clamp(ZOOM_RANGE.0, ZOOM_RANGE.1), cols)
}

/// The pixel under `pos` in an image drawn into `rect` at `zoom`, if any.
pub fn pixel_at(rect: Rect, zoom: f32, image: [usize; 2], pos: Pos2) -> Option<[usize; 2]> {
    if !rect.contains(pos) {
        return None;
    }
    let p = (pos - rect.min) / zoom;
    let x = (p.x.floor().max(0.0) as usize).min(image[0].saturating_sub(1));
    let y = (p.y.floor().max(0.0) as usize).min(image[1].saturating_sub(1));
    Some([x, y])
}

/// Draws the panes in a grid that uses the space available, with one of `columns` columns (so
/// that rows keep their meaning).
#[allow(clippy::too_many_arguments)]
pub fn show(
    ui: &mut egui::Ui,
    zoom: &mut Zoom,
    image: [usize; 2],
    panes: &[Pane<'_>],
    columns: &[usize],
    selected: Option<[usize; 2]>,
    hover_text: &dyn Fn([usize; 2]) -> String,
) -> PanesResponse {
    let mut out = PanesResponse::default();
    let has_legend = panes.iter().any(|p| p.legend.is_some());
    let text_h = ui.text_style_height(&egui::TextStyle::Body);
    let title_h = if has_legend {
        text_h.max(LEGEND_SIZE)
    } else {
        text_h
    } + ui.spacing().item_spacing.y;
    let has_bar = panes.iter().any(|p| p.colorbar.is_some());
    let bar_h = if has_bar {
        COLORBAR_HEIGHT
            + ui.text_style_height(&egui::TextStyle::Small)
            + 2.0 * ui.spacing().item_spacing.y
    } else {
        0.0
    };
    // What is visible of the space left (a wide row above must not make the panes overflow).
    let area = ui.available_rect_before_wrap().intersect(ui.clip_rect());
    let avail = area.size().max(Vec2::ZERO);
    let (fit_zoom, fit_cols) = fit_layout(avail, image, panes.len(), title_h + bar_h, columns);

    // Ctrl+scroll (or a pinch) over the panes zooms them.
    if ui.rect_contains_pointer(area) {
        let factor = ui.input(|i| i.zoom_delta());
        if factor != 1.0 {
            zoom.scale(factor);
        }
    }
    if zoom.fit {
        zoom.factor = fit_zoom;
    }
    let z = zoom.factor;
    let size = vec2(image[0] as f32 * z, image[1] as f32 * z);
    let cols = if zoom.fit {
        fit_cols
    } else {
        // The widest allowed layout that fits the width (the narrowest if none does).
        let fits = ((avail.x + GAP) / (size.x + GAP)).floor() as usize;
        columns
            .iter()
            .copied()
            .filter(|&c| c >= 1 && c <= fits.min(panes.len().max(1)))
            .max()
            .or_else(|| columns.iter().copied().min())
            .unwrap_or(1)
    };

    let mut rects = Vec::with_capacity(panes.len());
    let mut draw = |ui: &mut egui::Ui| {
        egui::Grid::new("image_panes")
            .spacing([GAP, GAP])
            .show(ui, |ui| {
                for (i, pane) in panes.iter().enumerate() {
                    ui.vertical(|ui| {
                        if has_legend {
                            title_with_legend(ui, pane, size.x);
                        } else {
                            // One line (truncated, full on hover): the layout counts one line
                            // of title per pane, and panes of a row stay aligned.
                            ui.scope(|ui| {
                                ui.set_max_width(size.x);
                                ui.add(
                                    egui::Label::new(RichText::new(&pane.title).strong())
                                        .truncate(),
                                )
                                .on_hover_text(&pane.title);
                            });
                        }
                        let (rect, response) = ui.allocate_exact_size(size, Sense::click());
                        response.widget_info(|| {
                            egui::WidgetInfo::labeled(
                                egui::accesskit::Role::Image,
                                true,
                                &pane.name,
                            )
                        });
                        ui.painter().image(
                            pane.texture.id(),
                            rect,
                            Rect::from_min_max(pos2(0.0, 0.0), pos2(1.0, 1.0)),
                            Color32::WHITE,
                        );
                        ui.painter().rect_stroke(
                            rect,
                            0.0,
                            ui.visuals().widgets.noninteractive.bg_stroke,
                            StrokeKind::Outside,
                        );
                        if let Some(p) = response
                            .hover_pos()
                            .and_then(|p| pixel_at(rect, z, image, p))
                        {
                            out.hovered = Some(p);
                            if response.clicked() {
                                out.clicked = Some(p);
                            }
                            response
                                .on_hover_cursor(egui::CursorIcon::Crosshair)
                                .on_hover_text_at_pointer(hover_text(p));
                        }
                        if let Some(bar) = &pane.colorbar {
                            colorbar(ui, bar, size.x);
                        } else if has_bar {
                            ui.add_space(bar_h - ui.spacing().item_spacing.y);
                        }
                        rects.push(rect);
                    });
                    if (i + 1) % cols == 0 {
                        ui.end_row();
                    }
                }
            });
    };
    if zoom.fit {
        // Centre the grid in the space it fits.
        let used = cols as f32 * size.x + (cols.saturating_sub(1)) as f32 * GAP;
        let pad = ((avail.x - used) / 2.0).max(0.0);
        ui.horizontal_top(|ui| {
            ui.add_space(pad);
            draw(ui);
        });
    } else {
        egui::ScrollArea::both()
            .id_salt("image_panes_scroll")
            .auto_shrink(false)
            .show(ui, draw);
    }

    out.zoom = z;
    out.rects = rects.clone();
    for rect in &rects {
        let painter = ui.painter().with_clip_rect(rect.expand(1.0));
        if let Some(p) = out.hovered {
            let cell = pixel_rect(*rect, z, p);
            painter.rect_stroke(
                cell,
                0.0,
                Stroke::new(1.0, Color32::from_white_alpha(200)),
                StrokeKind::Outside,
            );
        }
        if let Some(p) = selected.filter(|p| p[0] < image[0] && p[1] < image[1]) {
            crosshair(&painter, *rect, pixel_rect(*rect, z, p));
        }
    }
    out
}

/// The title at the left of a row `width` wide and the pane's legend (if any) at its right.
fn title_with_legend(ui: &mut egui::Ui, pane: &Pane<'_>, width: f32) {
    ui.allocate_ui_with_layout(
        vec2(width, LEGEND_SIZE),
        egui::Layout::left_to_right(egui::Align::Center),
        |ui| {
            ui.set_width(width);
            // The title stops short of the legend (truncated with "…"), never under it.
            let room = if pane.legend.is_some() {
                width - LEGEND_SIZE - ui.spacing().item_spacing.x
            } else {
                width
            };
            ui.scope(|ui| {
                ui.set_max_width(room.max(0.0));
                ui.add(egui::Label::new(RichText::new(&pane.title).strong()).truncate())
                    .on_hover_text(&pane.title);
            });
            if let Some(legend) = pane.legend {
                ui.with_layout(egui::Layout::right_to_left(egui::Align::Center), |ui| {
                    let (rect, response) =
                        ui.allocate_exact_size(Vec2::splat(LEGEND_SIZE), Sense::hover());
                    ui.painter().image(
                        legend.id(),
                        rect,
                        Rect::from_min_max(pos2(0.0, 0.0), pos2(1.0, 1.0)),
                        Color32::WHITE,
                    );
                    response.on_hover_text(
                        "Colour wheel: a pixel moving in a direction (right = +u, down = +v) \
                         has the colour at that point of the disk; white is no motion, the rim \
                         the largest speed",
                    );
                });
            }
        },
    );
}

fn pixel_rect(image_rect: Rect, zoom: f32, p: [usize; 2]) -> Rect {
    Rect::from_min_size(
        image_rect.min + vec2(p[0] as f32 * zoom, p[1] as f32 * zoom),
        Vec2::splat(zoom),
    )
}

/// A crosshair across the pane with a gap around the selected pixel, drawn twice (dark under
/// light) so it shows on any image.
fn crosshair(painter: &egui::Painter, pane: Rect, cell: Rect) {
    let c = cell.center();
    let gap = (cell.width() * 0.5 + 4.0).max(5.0);
    let segments = [
        [pos2(pane.left(), c.y), pos2(c.x - gap, c.y)],
        [pos2(c.x + gap, c.y), pos2(pane.right(), c.y)],
        [pos2(c.x, pane.top()), pos2(c.x, c.y - gap)],
        [pos2(c.x, c.y + gap), pos2(c.x, pane.bottom())],
    ];
    let dark = Stroke::new(3.0, Color32::from_black_alpha(150));
    let light = Stroke::new(1.0, Color32::from_rgb(0, 230, 255));
    for stroke in [dark, light] {
        for s in segments {
            painter.line_segment(s, stroke);
        }
        painter.rect_stroke(cell.expand(1.5), 0.0, stroke, StrokeKind::Outside);
    }
}

fn colorbar(ui: &mut egui::Ui, bar: &ColorBar<'_>, width: f32) {
    let (rect, _) = ui.allocate_exact_size(vec2(width, COLORBAR_HEIGHT), Sense::hover());
    ui.painter().image(
        bar.texture.id(),
        rect,
        Rect::from_min_max(pos2(0.0, 0.0), pos2(1.0, 1.0)),
        Color32::WHITE,
    );
    ui.allocate_ui_with_layout(
        vec2(width, ui.text_style_height(&egui::TextStyle::Small)),
        egui::Layout::left_to_right(egui::Align::Center),
        |ui| {
            ui.set_width(width);
            ui.small(&bar.low);
            ui.with_layout(egui::Layout::right_to_left(egui::Align::Center), |ui| {
                ui.small(&bar.high);
            });
        },
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fit_prefers_the_layout_with_the_larger_zoom() {
        // A wide area: four square panes in a row.
        let (z, cols) = fit_layout(vec2(1000.0, 300.0), [100, 100], 4, 20.0, &[1, 2, 4]);
        assert_eq!(cols, 4);
        // Fit fills the width: (1000 - 3 gaps) / 4 panes / 100 px, not rounded down to 2.
        assert!((z - 2.41).abs() < 1e-6, "{z}");
        // Large zooms are whole numbers (every pixel the same size), wasting under an eighth.
        let (z, _) = fit_layout(vec2(1000.0, 1000.0), [100, 100], 1, 20.0, &[1]);
        assert_eq!(z, 9.0);
        // A square area: two by two.
        let (_, cols) = fit_layout(vec2(700.0, 700.0), [100, 100], 4, 20.0, &[1, 2, 4]);
        assert_eq!(cols, 2);
        // Only the allowed counts are considered.
        let (_, cols) = fit_layout(vec2(700.0, 700.0), [100, 100], 6, 20.0, &[3]);
        assert_eq!(cols, 3);
    }

    #[test]
    fn pixel_at_maps_points_to_pixels() {
        let rect = Rect::from_min_size(pos2(10.0, 20.0), vec2(300.0, 200.0));
        assert_eq!(
            pixel_at(rect, 3.0, [100, 66], pos2(10.0, 20.0)),
            Some([0, 0])
        );
        assert_eq!(
            pixel_at(rect, 3.0, [100, 66], pos2(14.0, 26.5)),
            Some([1, 2])
        );
        assert_eq!(
            pixel_at(rect, 3.0, [100, 66], pos2(309.9, 219.9)),
            Some([99, 65])
        );
        assert_eq!(pixel_at(rect, 3.0, [100, 66], pos2(5.0, 26.5)), None);
    }
}
