//! Dashed lines drawn one shape per dash: several polylines under one legend entry (the SOSMP
//! lab's sample paths, dashed as Noorshams & Wainwright 2013 draw them in Fig. 5), with dashes
//! and gaps where egui_plot's `LineStyle::Dashed` puts them.
//!
//! egui cuts a dashed polyline into one line-segment shape per polyline segment inside a dash,
//! so a noisy path with a point per pixel became as many shapes as points, each tessellated,
//! uploaded and drawn apart. Here each dash is one path through its points, and points closer
//! than half a pixel to the last one kept are merged (they move the drawn line by less than
//! that). Cost O(points) per frame; shapes one per dash.

use std::ops::RangeInclusive;

use eframe::egui::{self, Color32, Pos2, Rect, Shape, Stroke};
use egui_plot::{PlotBounds, PlotGeometry, PlotItem, PlotItemBase, PlotPoint, PlotTransform};

/// Points nearer than this many pixels to the last point kept are merged.
const MERGE_PIXELS: f32 = 0.5;

/// Polylines in plot coordinates, dashed, under one name and colour.
pub struct DashedLines {
    base: PlotItemBase,
    /// Every polyline's points one after another; `ends[i]` is where polyline i ends.
    points: Vec<PlotPoint>,
    ends: Vec<usize>,
    stroke: Stroke,
    dash: f32,
    gap: f32,
}

impl DashedLines {
    /// Dashes `dash` pixels long, gaps as egui_plot leaves them (0.618 of a dash).
    pub fn new(name: impl Into<String>, dash: f32) -> Self {
        DashedLines {
            base: PlotItemBase::new(name.into()),
            points: Vec::new(),
            ends: Vec::new(),
            stroke: Stroke::new(1.0, Color32::GRAY),
            dash,
            gap: dash * (std::f32::consts::GOLDEN_RATIO - 1.0),
        }
    }

    /// Adds a polyline of `[x, y]` points.
    pub fn line(mut self, points: impl IntoIterator<Item = [f64; 2]>) -> Self {
        self.points
            .extend(points.into_iter().map(|[x, y]| PlotPoint::new(x, y)));
        self.ends.push(self.points.len());
        self
    }

    pub fn color(mut self, color: Color32) -> Self {
        self.stroke.color = color;
        self
    }

    pub fn width(mut self, width: f32) -> Self {
        self.stroke.width = width;
        self
    }

    fn polylines(&self) -> impl Iterator<Item = &[PlotPoint]> {
        let starts = std::iter::once(0).chain(self.ends.iter().copied());
        starts
            .zip(&self.ends)
            .map(|(start, &end)| &self.points[start..end])
    }
}

/// The visible runs of `points` on screen: segments that miss `clip` end a run, and a point
/// within [`MERGE_PIXELS`] of the last one kept is left out unless it ends its run.
fn screen_runs(points: &[PlotPoint], transform: &PlotTransform, clip: Rect) -> Vec<Vec<Pos2>> {
    let mut runs = Vec::new();
    let mut run: Vec<Pos2> = Vec::new();
    // The latest point of the run when it was too near to keep.
    let mut pending: Option<Pos2> = None;
    let mut finish = |run: &mut Vec<Pos2>, pending: &mut Option<Pos2>| {
        run.extend(pending.take());
        if run.len() > 1 {
            runs.push(std::mem::take(run));
        }
        run.clear();
    };
    let mut previous: Option<Pos2> = None;
    for p in points {
        let here = transform.position_from_point(p);
        match previous {
            Some(a) if clip.intersects(Rect::from_two_pos(a, here)) => {
                if run.is_empty() {
                    run.push(a);
                }
                if run.last().is_some_and(|l| l.distance(here) >= MERGE_PIXELS) {
                    run.push(here);
                    pending = None;
                } else {
                    pending = Some(here);
                }
            }
            _ => finish(&mut run, &mut pending),
        }
        previous = Some(here);
    }
    finish(&mut run, &mut pending);
    runs
}

/// Appends one path shape per dash of `run` (dash and gap lengths in pixels, starting with a
/// dash at the run's first point, as egui's dashed lines do).
fn dash_run(run: &[Pos2], stroke: Stroke, dash: f32, gap: f32, shapes: &mut Vec<Shape>) {
    let mut dash_points: Vec<Pos2> = vec![run[0]];
    let mut drawing = true;
    // Distance left in the current dash or gap.
    let mut left = dash;
    for w in run.windows(2) {
        let (a, b) = (w[0], w[1]);
        let length = a.distance(b);
        let mut at = 0.0;
        while length - at >= left {
            at += left;
            // The point ends a dash or starts one.
            dash_points.push(a + (b - a) * (at / length));
            if drawing {
                shapes.push(Shape::line(std::mem::take(&mut dash_points), stroke));
                left = gap;
            } else {
                left = dash;
            }
            drawing = !drawing;
        }
        left -= length - at;
        if drawing {
            dash_points.push(b);
        }
    }
    if drawing && dash_points.len() > 1 {
        shapes.push(Shape::line(dash_points, stroke));
    }
}

impl PlotItem for DashedLines {
    fn shapes(&self, ui: &egui::Ui, transform: &PlotTransform, shapes: &mut Vec<Shape>) {
        let mut stroke = self.stroke;
        if self.highlighted() {
            stroke.width *= 2.0;
        }
        for line in self.polylines() {
            for run in screen_runs(line, transform, ui.clip_rect()) {
                dash_run(&run, stroke, self.dash, self.gap, shapes);
            }
        }
    }

    fn initialize(&mut self, _x_range: RangeInclusive<f64>) {}

    fn color(&self) -> Color32 {
        self.stroke.color
    }

    fn geometry(&self) -> PlotGeometry<'_> {
        PlotGeometry::Points(&self.points)
    }

    fn bounds(&self) -> PlotBounds {
        let mut bounds = PlotBounds::NOTHING;
        for p in &self.points {
            bounds.extend_with(p);
        }
        bounds
    }

    fn base(&self) -> &PlotItemBase {
        &self.base
    }

    fn base_mut(&mut self) -> &mut PlotItemBase {
        &mut self.base
    }
}

#[cfg(test)]
mod tests {
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    use super::*;
    use egui_plot::PlotBounds;

    fn path_length(points: &[Pos2]) -> f32 {
        points.windows(2).map(|w| w[0].distance(w[1])).sum()
    }

    /// Each dash's points, from path shapes (ours) or line segments (egui's).
    fn dash_lengths(shapes: &[Shape]) -> Vec<f32> {
        shapes
            .iter()
            .map(|s| match s {
                Shape::Path(p) => path_length(&p.points),
                Shape::LineSegment { points, .. } => points[0].distance(points[1]),
                other => panic!("unexpected shape {other:?}"),
            })
            .collect()
    }

    #[test]
    fn a_dense_straight_line_gets_one_shape_per_dash_where_egui_puts_the_dashes() {
        // 100 pixels in 0.25-pixel steps: dashes of 10 from 0, 16.18, 32.36, ... (7 of them).
        let run: Vec<Pos2> = (0..=400).map(|i| Pos2::new(i as f32 * 0.25, 5.0)).collect();
        let stroke = Stroke::new(1.0, Color32::WHITE);
        let gap = 10.0 * (std::f32::consts::GOLDEN_RATIO - 1.0);
        let mut ours = Vec::new();
        dash_run(&run, stroke, 10.0, gap, &mut ours);
        assert_eq!(ours.len(), 7);
        for (k, s) in ours.iter().enumerate() {
            let Shape::Path(p) = s else { panic!() };
            let start = k as f32 * (10.0 + gap);
            assert!(
                (p.points[0].x - start).abs() < 1e-3,
                "dash {k} starts at {:?}",
                p.points[0]
            );
            let end = (start + 10.0).min(100.0);
            assert!((p.points.last().unwrap().x - end).abs() < 1e-3, "dash {k}");
        }
        // egui draws the same line as 280 separate segments covering the same length.
        let egui = Shape::dashed_line(&run, stroke, 10.0, gap);
        assert!(egui.len() > 250, "{}", egui.len());
        let (a, b): (f32, f32) = (
            dash_lengths(&ours).iter().sum(),
            dash_lengths(&egui).iter().sum(),
        );
        assert!((a - b).abs() < 1e-2, "{a} against {b}");
    }

    #[test]
    fn a_zigzag_is_dashed_over_the_same_length_as_egui_dashes_it() {
        // A noisy path like a sample path: x steps of 0.8 pixels, y jumping by up to 12.
        let mut rng = ChaCha8Rng::seed_from_u64(7);
        let mut noise = || rng.random::<f32>();
        let run: Vec<Pos2> = (0..500)
            .map(|i| Pos2::new(i as f32 * 0.8, 50.0 + 12.0 * noise()))
            .collect();
        let stroke = Stroke::new(1.0, Color32::WHITE);
        for dash in [5.0, 10.0] {
            let gap = dash * (std::f32::consts::GOLDEN_RATIO - 1.0);
            let mut ours = Vec::new();
            dash_run(&run, stroke, dash, gap, &mut ours);
            let egui = Shape::dashed_line(&run, stroke, dash, gap);
            let (a, b): (f32, f32) = (
                dash_lengths(&ours).iter().sum(),
                dash_lengths(&egui).iter().sum(),
            );
            assert!((a - b).abs() < 1e-3 * b, "dash {dash}: {a} against {b}");
            // Every dash but the last is as long as a dash.
            let lengths = dash_lengths(&ours);
            let whole = &lengths[..lengths.len() - 1];
            assert!(whole.iter().all(|l| (l - dash).abs() < 1e-2), "{whole:?}");
            assert!(
                ours.len() * 2 < egui.len(),
                "{} against {}",
                ours.len(),
                egui.len()
            );
        }
    }

    #[test]
    fn near_points_merge_and_runs_break_where_the_line_leaves_the_plot() {
        // 100 x 100 pixels showing [0, 10]²: one unit is ten pixels.
        let frame = Rect::from_min_max(Pos2::ZERO, Pos2::new(100.0, 100.0));
        let bounds = PlotBounds::from_min_max([0.0, 0.0], [10.0, 10.0]);
        let transform = PlotTransform::new(frame, bounds, egui::Vec2b::FALSE);
        // Points 0.1 pixels apart along y = 5, then far out of the plot, then back in.
        let mut points: Vec<PlotPoint> = (0..=100)
            .map(|i| PlotPoint::new(1.0 + i as f64 * 0.01, 5.0))
            .collect();
        points.push(PlotPoint::new(50.0, 50.0));
        points.push(PlotPoint::new(60.0, 50.0));
        points.push(PlotPoint::new(3.0, 2.0));
        points.push(PlotPoint::new(4.0, 2.0));
        let runs = screen_runs(&points, &transform, frame);
        assert_eq!(runs.len(), 2, "{runs:?}");
        // The dense part kept every half pixel; the segment that leaves the plot is drawn
        // (its start is inside), the one wholly outside ends the run.
        let first = &runs[0];
        assert!(first.len() >= 20 && first.len() <= 24, "{}", first.len());
        assert!((first[0].x - 10.0).abs() < 1e-4);
        assert!((first.last().unwrap().x - 500.0).abs() < 1e-3);
        assert!(
            first
                .windows(2)
                .all(|w| w[0].distance(w[1]) >= MERGE_PIXELS - 1e-4)
        );
        // The segment back into the plot starts the second run.
        assert_eq!(runs[1].len(), 3);
    }
}
