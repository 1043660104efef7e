//! Export any pane or plot as PNG: a right-click on a plot, an image pane or any other
//! interactive area of the panels offers "Save this pane as PNG…"; the pane is the smallest
//! interactive widget (at least [`MIN_PANE`] points wide and tall) under the pointer in the
//! previous frame's widget rectangles, so every room's plots and panes get it without code of
//! their own. The window's screenshot is cropped to that rectangle when it is saved.
//! Cost: one pass over the previous frame's widgets of one layer per right-click.

use eframe::egui::{self, Color32, Id, Order, Pos2, Rect, Stroke};

/// Smaller widgets (buttons, sliders) are not panes.
pub const MIN_PANE: egui::Vec2 = egui::vec2(80.0, 50.0);

/// The pane (its rectangle in points) under `pos`: the smallest interactive widget of at
/// least [`MIN_PANE`] on the panels' layer, not under a window or popup.
pub fn pane_at(ctx: &egui::Context, pos: Pos2) -> Option<Rect> {
    let layer = ctx.layer_id_at(pos)?;
    if layer.order != Order::Background {
        return None;
    }
    ctx.viewport(|v| {
        v.prev_pass
            .widgets
            .get_layer(layer)
            .filter(|w| w.sense.interactive() && w.interact_rect.contains(pos))
            .filter(|w| w.rect.width() >= MIN_PANE.x && w.rect.height() >= MIN_PANE.y)
            .map(|w| w.rect)
            .min_by(|a, b| a.area().total_cmp(&b.area()))
    })
}

/// The part of a whole-window screenshot that shows `rect` (points).
pub fn crop(image: &egui::ColorImage, rect: Rect, pixels_per_point: f32) -> egui::ColorImage {
    image.region(&rect, Some(pixels_per_point))
}

/// The right-click menu of a pane.
#[derive(Default)]
pub struct PaneExport {
    /// Where the menu opened and the pane it offers.
    menu: Option<(Pos2, Rect)>,
}

impl PaneExport {
    /// Opens the menu on a right-click over a pane (call before the panels draw, so the
    /// previous frame's widgets are the ones under the pointer).
    pub fn detect(&mut self, ctx: &egui::Context) {
        let (clicked, pos) =
            ctx.input(|i| (i.pointer.secondary_clicked(), i.pointer.interact_pos()));
        if clicked
            && let Some(pos) = pos
            && let Some(rect) = pane_at(ctx, pos)
        {
            self.menu = Some((pos, rect));
        }
    }

    /// Opens the menu for the pane under `pos`, as a right-click there does; whether there is one.
    pub fn open_at(&mut self, ctx: &egui::Context, pos: Pos2) -> bool {
        self.menu = pane_at(ctx, pos).map(|rect| (pos, rect));
        self.menu.is_some()
    }

    /// The pane whose menu is open.
    pub fn offered(&self) -> Option<Rect> {
        self.menu.map(|(_, r)| r)
    }

    /// Draws the open menu with the pane outlined; the pane's rectangle once the user asks to
    /// save it.
    pub fn show(&mut self, ctx: &egui::Context) -> Option<Rect> {
        let (pos, rect) = self.menu?;
        let painter = ctx.layer_painter(egui::LayerId::new(
            Order::Foreground,
            Id::unique("pane_export_outline"),
        ));
        painter.rect_stroke(
            rect,
            2.0,
            Stroke::new(2.0, Color32::from_rgb(66, 133, 244)),
            egui::StrokeKind::Outside,
        );
        let mut save = false;
        let mut close = false;
        let area = egui::Area::new(Id::unique("pane_export_menu"))
            .order(Order::Foreground)
            .fixed_pos(pos)
            .show(ctx, |ui| {
                egui::Frame::menu(ui.style()).show(ui, |ui| {
                    save = ui.button("Save this pane as PNG…").clicked();
                    close = ui.button("Close").clicked();
                });
            });
        let escape = ctx.input(|i| i.key_pressed(egui::Key::Escape));
        if save {
            self.menu = None;
            return Some(rect);
        }
        if close || escape || area.response.clicked_elsewhere() {
            self.menu = None;
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn crops_the_pane_in_physical_pixels() {
        let mut image = egui::ColorImage::filled([40, 30], Color32::BLACK);
        // The pane at (5, 4)..(15, 12) points at 2 pixels per point: pixels (10, 8)..(30, 24).
        for y in 8..24 {
            for x in 10..30 {
                image.pixels[y * 40 + x] = Color32::RED;
            }
        }
        let pane = Rect::from_min_max(egui::pos2(5.0, 4.0), egui::pos2(15.0, 12.0));
        let cropped = crop(&image, pane, 2.0);
        assert_eq!(cropped.size, [20, 16]);
        assert!(cropped.pixels.iter().all(|&c| c == Color32::RED));
    }
}
