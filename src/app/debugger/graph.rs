//! The one canvas every graph scenario's convergence view is drawn on: nodes at the positions
//! the scenario gives ([`ConvergenceGraph`]), each directed message a line beside its twin (the
//! two directions of an edge side by side) coloured by that message's change in the scrubbed
//! iteration on the residual map's log scale, oscillating messages outlined in magenta, the
//! residual probed on hover, and a click picking a message (or a node). Cost O(nodes + messages)
//! shapes per frame.

use eframe::egui::{self, Color32, Pos2, Rect, Sense, Stroke, Vec2};

use crate::run::residuals::{ConvergenceGraph, EdgeFrame};
use crate::viz::colormap::heat_color;
use crate::viz::residual_map::{OSCILLATING_RGBA, log_position};

/// What a click on the canvas picked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CanvasPick {
    Message(usize),
    Node(usize),
}

/// Background of the canvas: mid gray, so both ends of the heat scale (near black, pale
/// yellow) stand out.
const BACKGROUND: Color32 = Color32::from_gray(105);
/// Pointer distance (points) within which a message is hovered or clicked.
const PICK_DISTANCE: f32 = 6.0;

/// The colour of a change on the log scale from `hi · 10^-decades` to `hi`.
pub fn residual_color(change: f64, hi: f64, decades: f64) -> Color32 {
    let [r, g, b, _] = heat_color(log_position(change, hi, decades));
    Color32::from_rgb(r, g, b)
}

/// Screen geometry of the canvas: node centres, the node radius, each message's segment.
pub struct CanvasGeometry {
    pub nodes: Vec<Pos2>,
    pub radius: f32,
    /// `(from, to)` of each message's line, beside its twin and clear of the nodes.
    pub segments: Vec<(Pos2, Pos2)>,
}

impl CanvasGeometry {
    pub fn new(graph: &ConvergenceGraph, rect: Rect) -> Self {
        let inner = fitted(rect.shrink(10.0), layout_aspect(graph));
        let nodes: Vec<Pos2> = graph
            .positions
            .iter()
            .map(|p| inner.min + Vec2::new(p[0] as f32, p[1] as f32) * inner.size())
            .collect();
        // A radius a fifth of the shortest message's length (within 2..8 points).
        let shortest = graph
            .messages
            .iter()
            .filter_map(|&[a, b]| Some(nodes.get(a)?.distance(*nodes.get(b)?)))
            .fold(f32::INFINITY, f32::min);
        // Nor more than a third of the closest two nodes' distance (many leaves of a star).
        let closest = closest_pair(&nodes);
        let radius = if shortest.is_finite() {
            (shortest / 5.0).min(closest / 3.0).clamp(2.0, 8.0)
        } else {
            6.0
        };
        let segments = graph
            .messages
            .iter()
            .map(|&[a, b]| {
                let (Some(&p), Some(&q)) = (nodes.get(a), nodes.get(b)) else {
                    return (rect.center(), rect.center());
                };
                let dir = (q - p).normalized();
                // Each direction drawn on its own side of the edge (left of travel).
                let side = Vec2::new(dir.y, -dir.x) * (radius * 0.45).max(1.5);
                (p + dir * radius + side, q - dir * radius + side)
            })
            .collect();
        CanvasGeometry {
            nodes,
            radius,
            segments,
        }
    }

    /// Middle of message `m`'s line (where tests click).
    pub fn midpoint(&self, m: usize) -> Pos2 {
        let (a, b) = self.segments[m];
        a + (b - a) * 0.5
    }

    /// The message whose line passes nearest `pos` (within [`PICK_DISTANCE`]), else the node
    /// under `pos`.
    pub fn pick(&self, pos: Pos2) -> Option<CanvasPick> {
        let nearest = self
            .segments
            .iter()
            .enumerate()
            .map(|(m, &(a, b))| (m, segment_distance(pos, a, b)))
            .min_by(|x, y| x.1.total_cmp(&y.1));
        if let Some((m, d)) = nearest
            && d <= PICK_DISTANCE
        {
            return Some(CanvasPick::Message(m));
        }
        self.nodes
            .iter()
            .position(|c| c.distance(pos) <= self.radius + 2.0)
            .map(CanvasPick::Node)
    }
}

/// The aspect the layout was made for: positions live in the unit square, so 1, except for a
/// line of nodes (all in one row or column), which fills any canvas (None).
fn layout_aspect(graph: &ConvergenceGraph) -> Option<f32> {
    let spans = |k: usize| {
        let (lo, hi) = graph
            .positions
            .iter()
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), p| {
                (lo.min(p[k]), hi.max(p[k]))
            });
        hi - lo > 1e-9
    };
    (spans(0) && spans(1)).then_some(1.0)
}

/// How much wider or taller than its layout a graph may be drawn: a taller debugger panel
/// gives a narrow canvas, where a star or grid stretched to fill it would read as an ellipse
/// or a tall lattice.
const MAX_STRETCH: f32 = 1.25;

/// The centred part of `inner` the layout is drawn in: all of it unless that would stretch a
/// layout of `aspect` by more than [`MAX_STRETCH`].
fn fitted(inner: Rect, aspect: Option<f32>) -> Rect {
    let Some(aspect) = aspect else {
        return inner;
    };
    let (w, h) = (inner.width(), inner.height());
    if w <= 0.0 || h <= 0.0 {
        return inner;
    }
    let drawn = w / h;
    let size = if drawn > aspect * MAX_STRETCH {
        Vec2::new(h * aspect * MAX_STRETCH, h)
    } else if drawn < aspect / MAX_STRETCH {
        Vec2::new(w, w / (aspect / MAX_STRETCH))
    } else {
        return inner;
    };
    Rect::from_center_size(inner.center(), size)
}

/// The smallest distance between two nodes (infinite for fewer than two; O(n²), only for
/// graphs of up to a few hundred nodes, larger ones are bounded by their messages' lengths).
fn closest_pair(nodes: &[Pos2]) -> f32 {
    if nodes.len() > 400 {
        return f32::INFINITY;
    }
    let mut best = f32::INFINITY;
    for (i, p) in nodes.iter().enumerate() {
        for q in &nodes[i + 1..] {
            best = best.min(p.distance(*q));
        }
    }
    best
}

fn segment_distance(p: Pos2, a: Pos2, b: Pos2) -> f32 {
    let ab = b - a;
    let len2 = ab.length_sq();
    let t = if len2 > 0.0 {
        ((p - a).dot(ab) / len2).clamp(0.0, 1.0)
    } else {
        0.0
    };
    p.distance(a + ab * t)
}

/// Draws `graph` with `frame`'s changes (`hi`: top of the scale) in a `size` canvas; returns
/// what a click picked. `selected` is drawn with a white halo.
pub fn graph_canvas(
    ui: &mut egui::Ui,
    graph: &ConvergenceGraph,
    frame: Option<&EdgeFrame>,
    hi: f64,
    decades: f64,
    selected: Option<usize>,
    size: Vec2,
) -> Option<CanvasPick> {
    let (response, painter) = ui.allocate_painter(size, Sense::click());
    response.widget_info(|| {
        egui::WidgetInfo::labeled(egui::accesskit::Role::Canvas, true, "message graph")
    });
    let rect = response.rect;
    painter.rect_filled(rect, 2.0, BACKGROUND);
    let geometry = CanvasGeometry::new(graph, rect);
    let width = (geometry.radius * 0.5).clamp(1.5, 3.0);
    let [or, og, ob, _] = OSCILLATING_RGBA;
    let oscillating_color = Color32::from_rgb(or, og, ob);
    for (m, &(a, b)) in geometry.segments.iter().enumerate() {
        let change = frame.and_then(|f| f.change().get(m)).map(|&c| f64::from(c));
        let oscillating = frame.is_some_and(|f| f.oscillating.get(m).copied().unwrap_or(false));
        if selected == Some(m) {
            painter.line_segment([a, b], Stroke::new(width + 4.0, Color32::WHITE));
        }
        if oscillating {
            painter.line_segment([a, b], Stroke::new(width + 2.5, oscillating_color));
        }
        let color = change.map_or(Color32::from_gray(170), |c| residual_color(c, hi, decades));
        painter.line_segment([a, b], Stroke::new(width, color));
        // Arrowhead at the target end.
        let dir = (b - a).normalized();
        let normal = Vec2::new(-dir.y, dir.x);
        let tip = b;
        let back = b - dir * (width * 2.5 + 2.0);
        painter.add(egui::Shape::convex_polygon(
            vec![
                tip,
                back + normal * (width + 1.5),
                back - normal * (width + 1.5),
            ],
            color,
            Stroke::NONE,
        ));
    }
    for c in &geometry.nodes {
        painter.circle(
            *c,
            geometry.radius,
            Color32::from_gray(225),
            Stroke::new(1.0, Color32::from_gray(40)),
        );
    }
    let pick = response
        .hover_pos()
        .and_then(|p| geometry.pick(p))
        .filter(|p| matches!(p, CanvasPick::Message(_)));
    if let Some(CanvasPick::Message(m)) = pick {
        let [from, to] = graph.messages[m];
        let text = match frame {
            Some(f) => format!(
                "message {from} → {to}: change {:.3e} in iteration {}{}\nclick: plot its history",
                f.change().get(m).copied().unwrap_or(f32::NAN),
                f.iteration,
                if f.oscillating.get(m).copied().unwrap_or(false) {
                    " (oscillating)"
                } else {
                    ""
                }
            ),
            None => format!("message {from} → {to}: not updated yet"),
        };
        response.clone().on_hover_text_at_pointer(text);
    }
    if response.clicked() {
        return response
            .interact_pointer_pos()
            .and_then(|p| geometry.pick(p));
    }
    None
}

/// The colour scale's legend: a bar from `hi · 10^-decades` to `hi`, and the outline's meaning.
pub fn legend(ui: &mut egui::Ui, hi: f64, decades: f64, width: f32) {
    ui.horizontal(|ui| {
        ui.label(egui::RichText::new(format!("{:.0e}", hi * 10f64.powf(-decades))).small());
        let (rect, _) = ui.allocate_exact_size(Vec2::new(width.max(40.0), 10.0), Sense::hover());
        let steps = 32;
        for k in 0..steps {
            let t = k as f64 / (steps - 1) as f64;
            let x0 = rect.min.x + rect.width() * k as f32 / steps as f32;
            let x1 = rect.min.x + rect.width() * (k + 1) as f32 / steps as f32;
            let [r, g, b, _] = heat_color(t);
            ui.painter().rect_filled(
                Rect::from_min_max(Pos2::new(x0, rect.min.y), Pos2::new(x1, rect.max.y)),
                0.0,
                Color32::from_rgb(r, g, b),
            );
        }
        ui.label(egui::RichText::new(format!("{hi:.1e} message change")).small());
    });
    let [r, g, b, _] = OSCILLATING_RGBA;
    ui.label(
        egui::RichText::new("magenta outline: oscillating")
            .small()
            .color(Color32::from_rgb(r, g, b)),
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_square_layout_is_not_stretched_into_a_tall_canvas() {
        let graph = ConvergenceGraph {
            positions: vec![[0.0, 0.0], [1.0, 0.0], [0.0, 1.0], [1.0, 1.0]],
            messages: vec![[0, 1], [1, 0]],
            value_axis: String::new(),
        };
        let tall = Rect::from_min_size(Pos2::ZERO, Vec2::new(200.0, 300.0));
        let g = CanvasGeometry::new(&graph, tall);
        let width = g.nodes[1].x - g.nodes[0].x;
        let height = g.nodes[2].y - g.nodes[0].y;
        assert!(
            (height / width - MAX_STRETCH).abs() < 1e-3,
            "{width} x {height}"
        );
        assert!(
            ((g.nodes[0].y + g.nodes[2].y) / 2.0 - 150.0).abs() < 1e-3,
            "centred"
        );
        // A line of nodes fills any canvas (its nodes at 1/6, 1/2, 5/6 of the width).
        let line = ConvergenceGraph {
            positions: ConvergenceGraph::line_positions(3),
            ..graph
        };
        let g = CanvasGeometry::new(&line, tall);
        assert!((g.nodes[2].x - g.nodes[0].x - 120.0).abs() < 1e-3);
    }

    #[test]
    fn picking_finds_each_direction_of_an_edge() {
        let graph = ConvergenceGraph {
            positions: ConvergenceGraph::line_positions(3),
            messages: vec![[0, 1], [1, 0], [1, 2], [2, 1]],
            value_axis: String::new(),
        };
        let rect = Rect::from_min_size(Pos2::ZERO, Vec2::new(300.0, 100.0));
        let g = CanvasGeometry::new(&graph, rect);
        for m in 0..4 {
            assert_eq!(g.pick(g.midpoint(m)), Some(CanvasPick::Message(m)));
        }
        assert_eq!(g.pick(g.nodes[2]), Some(CanvasPick::Node(2)));
        assert_eq!(g.pick(Pos2::new(150.0, 5.0)), None);
    }
}
