//! The teaching canvas: the graph, the message in flight travelling along its edge (carrying
//! its content as small bars, or its curve for a continuous message), the schedule's next
//! messages as numbered arrows, and under each node its belief (bars, or a curve) with the
//! reference (ticks, or a grey curve). Cost: O(|V| · (S or grid) + |E|) shapes.

use eframe::egui::{self, Align2, Color32, FontId, Pos2, Rect, Sense, Stroke, Vec2};

use super::{BELIEF, EXACT, NEXT, SENT};
use crate::scenarios::teach::TeachView;

const NODE_RADIUS: f32 = 17.0;
/// Size of a node's belief glyph.
const GLYPH: Vec2 = Vec2::new(40.0, 24.0);

/// Draws the canvas; `progress` in [0, 1] is how far the last message has travelled.
pub fn draw(ui: &mut egui::Ui, v: &TeachView, progress: f32, height: f32) {
    let (response, painter) =
        ui.allocate_painter(Vec2::new(ui.available_width(), height), Sense::hover());
    let rect = response.rect;
    painter.rect_filled(rect, 4.0, ui.visuals().extreme_bg_color);
    let inner = rect.shrink2(Vec2::new(60.0, 40.0));
    let inner = Rect::from_min_max(inner.min, inner.max - Vec2::new(0.0, GLYPH.y));
    let pos: Vec<Pos2> = (v.positions.iter())
        .map(|&(x, y)| {
            Pos2::new(
                inner.left() + x as f32 * inner.width(),
                inner.top() + y as f32 * inner.height(),
            )
        })
        .collect();
    let text = ui.visuals().text_color();
    for &(a, b) in &v.edges {
        painter.line_segment([pos[a], pos[b]], Stroke::new(1.5, Color32::from_gray(120)));
    }
    // The schedule's next messages, the very next boldest, drawn beside their edge.
    for (k, &(_, from, to)) in v.upcoming.iter().enumerate().rev() {
        let alpha = 1.0 - 0.15 * k as f32;
        let color = NEXT.gamma_multiply(alpha);
        let (a, b) = offset_segment(pos[from], pos[to], 7.0);
        let width = if k == 0 { 3.0 } else { 1.6 };
        arrow(&painter, a, b, Stroke::new(width, color));
        let mid = a + (b - a) * 0.5 + perpendicular(pos[from], pos[to]) * 9.0;
        painter.text(
            mid,
            Align2::CENTER_CENTER,
            format!("{}", k + 1),
            FontId::proportional(12.0),
            color,
        );
    }
    // The message just sent: its arrow, and its content travelling from sender to receiver.
    if let Some(m) = &v.last {
        let (a, b) = offset_segment(pos[m.from], pos[m.to], -7.0);
        arrow(&painter, a, b, Stroke::new(3.0, SENT));
        let t = progress.clamp(0.0, 1.0);
        if t < 1.0 {
            let at = pos[m.from] + (pos[m.to] - pos[m.from]) * t;
            let width = if m.curve_after.is_empty() {
                12.0 * m.after.len() as f32 + 8.0
            } else {
                52.0
            };
            let card = Rect::from_center_size(at, Vec2::new(width, 26.0));
            painter.rect_filled(card, 3.0, ui.visuals().panel_fill);
            painter.rect_stroke(card, 3.0, Stroke::new(2.0, SENT), egui::StrokeKind::Outside);
            if m.curve_after.is_empty() {
                bars(&painter, card.shrink(3.0), &m.after, SENT);
            } else {
                let top = peak(&[&m.curve_after]);
                curve(&painter, card.shrink(3.0), &m.curve_after, top, SENT, 1.5);
            }
        }
    }
    let receiver = v.last.as_ref().map(|m| m.to);
    let next_sender = v.upcoming.first().map(|u| u.1);
    for (t, &p) in pos.iter().enumerate() {
        let stroke = if Some(t) == receiver {
            Stroke::new(3.0, SENT)
        } else if Some(t) == next_sender {
            Stroke::new(2.5, NEXT)
        } else {
            Stroke::new(1.5, text)
        };
        painter.circle(p, NODE_RADIUS, ui.visuals().panel_fill, stroke);
        painter.text(
            p,
            Align2::CENTER_CENTER,
            &v.names[t],
            FontId::proportional(13.0),
            text,
        );
        let glyph = Rect::from_min_size(p + Vec2::new(-GLYPH.x / 2.0, NODE_RADIUS + 4.0), GLYPH);
        // Opaque, so edges leaving the node downwards do not run through the bars.
        painter.rect_filled(glyph, 2.0, ui.visuals().extreme_bg_color);
        painter.rect_stroke(
            glyph,
            2.0,
            Stroke::new(0.5, Color32::from_gray(110)),
            egui::StrokeKind::Inside,
        );
        if v.kind.is_continuous() {
            let top = peak(&[&v.beliefs[t], &v.exact[t]]);
            curve(&painter, glyph.shrink(2.0), &v.exact[t], top, EXACT, 2.0);
            curve(&painter, glyph.shrink(2.0), &v.beliefs[t], top, BELIEF, 1.5);
        } else {
            bars(&painter, glyph.shrink(2.0), &v.beliefs[t], BELIEF);
            exact_ticks(&painter, glyph.shrink(2.0), &v.exact[t]);
        }
    }
}

/// The largest finite value of the curves (at least a tiny positive number).
fn peak(curves: &[&Vec<f64>]) -> f64 {
    (curves.iter().flat_map(|c| c.iter()))
        .filter(|v| v.is_finite())
        .fold(1e-12, |a, &b| a.max(b))
}

/// `values` (sampled evenly across the rect) as a polyline, `top` at the rect's top; values
/// below 0 (a series expansion can dip) are drawn at the bottom edge.
fn curve(
    painter: &egui::Painter,
    rect: Rect,
    values: &[f64],
    top: f64,
    color: Color32,
    width: f32,
) {
    if values.len() < 2 {
        return;
    }
    let last = (values.len() - 1) as f32;
    let points = (values.iter().enumerate())
        .map(|(i, &y)| {
            let f = (y / top).clamp(0.0, 1.0) as f32;
            Pos2::new(
                rect.left() + rect.width() * i as f32 / last,
                rect.bottom() - rect.height() * f,
            )
        })
        .collect();
    painter.add(egui::Shape::line(points, Stroke::new(width, color)));
}

/// `values` (each in [0, 1]) as bars filling `rect`.
fn bars(painter: &egui::Painter, rect: Rect, values: &[f64], color: Color32) {
    let n = values.len().max(1) as f32;
    let w = rect.width() / n;
    for (i, &p) in values.iter().enumerate() {
        let h = rect.height() * p.clamp(0.0, 1.0) as f32;
        let x = rect.left() + i as f32 * w;
        let bar = Rect::from_min_max(
            Pos2::new(x + 1.0, rect.bottom() - h),
            Pos2::new(x + w - 1.0, rect.bottom()),
        );
        painter.rect_filled(bar, 0.0, color);
    }
}

/// The exact marginal as a short horizontal tick over each bar.
fn exact_ticks(painter: &egui::Painter, rect: Rect, values: &[f64]) {
    let n = values.len().max(1) as f32;
    let w = rect.width() / n;
    for (i, &p) in values.iter().enumerate() {
        let y = rect.bottom() - rect.height() * p.clamp(0.0, 1.0) as f32;
        let x = rect.left() + i as f32 * w;
        painter.line_segment(
            [Pos2::new(x, y), Pos2::new(x + w, y)],
            Stroke::new(2.0, EXACT),
        );
    }
}

/// A line from `a` to `b` with a head of fixed size (egui's scales with the length).
fn arrow(painter: &egui::Painter, a: Pos2, b: Pos2, stroke: Stroke) {
    painter.line_segment([a, b], stroke);
    let d = (b - a).normalized();
    let side = Vec2::new(-d.y, d.x);
    let size = 7.0 + stroke.width;
    for s in [1.0, -1.0] {
        painter.line_segment([b, b - d * size + side * (s * size * 0.6)], stroke);
    }
}

fn perpendicular(a: Pos2, b: Pos2) -> Vec2 {
    let d = (b - a).normalized();
    Vec2::new(-d.y, d.x)
}

/// The segment `a -> b` cut short of both nodes and moved sideways by `by` points, so the two
/// directions of an edge are told apart.
fn offset_segment(a: Pos2, b: Pos2, by: f32) -> (Pos2, Pos2) {
    let d = (b - a).normalized();
    let side = perpendicular(a, b) * by;
    (
        a + d * (NODE_RADIUS + 2.0) + side,
        b - d * (NODE_RADIUS + 2.0) + side,
    )
}
