//! Plots that hold more points than their pixels can show draw what the pixels can show: a
//! scatter keeps one point per small screen cell, a line the first, lowest, highest and last
//! point of each pixel column (the M4 reduction), both in the plot's screen mapping of the last
//! frame. What is drawn is the same picture to within a pixel; what is tessellated and uploaded
//! is bounded by the plot's area instead of the data's length. Cost O(n) per frame (a hash set
//! of cells for scatters, one pass for x-sorted lines).

use std::collections::HashSet;

use eframe::egui;
use egui_plot::{PlotPoint, PlotTransform};

/// Below this many points nothing is thinned (the screen mapping of the first frame is a guess).
const THIN_FROM: usize = 2_000;

/// The screen cell of a point, `cell` pixels on a side.
fn cell_of(transform: &PlotTransform, point: [f64; 2], cell: f32) -> (i64, i64) {
    cell_of_position(
        transform.position_from_point(&PlotPoint::new(point[0], point[1])),
        cell,
    )
}

/// The first point of each `cell`-pixel square, in the data's order. Markers of radius about
/// `cell / 2` or more cover their cell, so the drawn scatter is unchanged. Non-finite points
/// are passed through (the plot skips them).
pub fn scatter(points: Vec<[f64; 2]>, transform: &PlotTransform, cell: f32) -> Vec<[f64; 2]> {
    if points.len() < THIN_FROM {
        return points;
    }
    // Cells inside the frame in a bitmap; the few outside (the data grew since the last
    // frame's mapping) in a set.
    let frame = transform.frame();
    let origin = cell_of_position(frame.min, cell);
    let (columns, rows) = (
        (frame.width() / cell).ceil() as i64 + 1,
        (frame.height() / cell).ceil() as i64 + 1,
    );
    let mut inside = vec![false; (columns * rows).max(0) as usize];
    let mut outside = HashSet::new();
    let mut first_in_cell = |p: [f64; 2]| {
        if !p[0].is_finite() || !p[1].is_finite() {
            return true;
        }
        let (x, y) = cell_of(transform, p, cell);
        let (cx, cy) = (x - origin.0, y - origin.1);
        if (0..columns).contains(&cx) && (0..rows).contains(&cy) {
            !std::mem::replace(&mut inside[(cy * columns + cx) as usize], true)
        } else {
            outside.insert((x, y))
        }
    };
    points.into_iter().filter(|&p| first_in_cell(p)).collect()
}

fn cell_of_position(p: egui::Pos2, cell: f32) -> (i64, i64) {
    ((p.x / cell).floor() as i64, (p.y / cell).floor() as i64)
}

/// For a line whose points are sorted by x: per pixel column, the first, lowest, highest and last
/// point, in x order, so the polyline's vertical extent in every column is the original's.
pub fn line(points: &[[f64; 2]], transform: &PlotTransform) -> Vec<[f64; 2]> {
    if points.len() < THIN_FROM {
        return points.to_vec();
    }
    let column = |p: &[f64; 2]| transform.position_from_point_x(p[0]).floor() as i64;
    let mut out = Vec::with_capacity(4 * transform.frame().width() as usize + 8);
    let mut start = 0;
    while start < points.len() {
        let col = column(&points[start]);
        let mut end = start + 1;
        while end < points.len() && column(&points[end]) == col {
            end += 1;
        }
        push_first_lowest_highest_last(&points[start..end], &mut out);
        start = end;
    }
    out
}

/// Appends the first, lowest, highest and last of `group` (not empty), in their order, each
/// once: what a polyline through `group` spans, as few points as show it.
pub fn push_first_lowest_highest_last(group: &[[f64; 2]], out: &mut Vec<[f64; 2]>) {
    let (mut low, mut high) = (0, 0);
    for (i, p) in group.iter().enumerate() {
        if p[1] < group[low][1] {
            low = i;
        }
        if p[1] > group[high][1] {
            high = i;
        }
    }
    let mut last = usize::MAX;
    for i in [0, low.min(high), low.max(high), group.len() - 1] {
        if i != last {
            out.push(group[i]);
            last = i;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use eframe::egui::{Pos2, Rect};
    use egui_plot::PlotBounds;

    fn transform() -> PlotTransform {
        // 100 x 100 pixels showing [0, 10] x [0, 10]: one unit is ten pixels.
        let frame = Rect::from_min_max(Pos2::ZERO, Pos2::new(100.0, 100.0));
        let bounds = PlotBounds::from_min_max([0.0, 0.0], [10.0, 10.0]);
        PlotTransform::new(frame, bounds, eframe::egui::Vec2b::FALSE)
    }

    #[test]
    fn a_dense_scatter_keeps_one_point_per_cell_and_every_occupied_cell() {
        // 10^4 points on a 100 x 100 lattice in [0, 10)^2, each lattice point twice.
        let points: Vec<[f64; 2]> = (0..20_000)
            .map(|i| {
                let k = i % 10_000;
                [(k % 100) as f64 * 0.1 + 0.01, (k / 100) as f64 * 0.1 + 0.01]
            })
            .collect();
        let t = transform();
        let thinned = scatter(points.clone(), &t, 2.0);
        let cells = |ps: &[[f64; 2]]| {
            ps.iter()
                .map(|&p| cell_of(&t, p, 2.0))
                .collect::<HashSet<_>>()
        };
        assert_eq!(thinned.len(), 50 * 50);
        assert_eq!(cells(&thinned), cells(&points));
    }

    #[test]
    fn points_beyond_the_last_frames_bounds_are_thinned_too() {
        // The data grew past the mapping: x in [10, 20) lies right of the frame.
        let points: Vec<[f64; 2]> = (0..20_000)
            .map(|i| {
                [
                    10.0 + (i % 100) as f64 * 0.1 + 0.01,
                    (i / 200) as f64 * 0.1 + 0.01,
                ]
            })
            .collect();
        let t = transform();
        let thinned = scatter(points.clone(), &t, 2.0);
        let cells = |ps: &[[f64; 2]]| {
            ps.iter()
                .map(|&p| cell_of(&t, p, 2.0))
                .collect::<HashSet<_>>()
        };
        assert_eq!(thinned.len(), cells(&points).len());
        assert_eq!(cells(&thinned), cells(&points));
    }

    #[test]
    fn a_line_keeps_each_columns_extremes_and_ends() {
        // 10^4 x-sorted points: a saw between 0 and 10 with period 7 points.
        let points: Vec<[f64; 2]> = (0..10_000)
            .map(|i| [i as f64 * 1e-3, (i % 7) as f64 * 10.0 / 6.0])
            .collect();
        let t = transform();
        let thinned = line(&points, &t);
        assert!(thinned.len() <= 4 * 101, "{}", thinned.len());
        assert_eq!(thinned.first(), points.first());
        assert_eq!(thinned.last(), points.last());
        // Every column spans the same heights as before.
        let span = |ps: &[[f64; 2]], col: i64| {
            let ys = ps
                .iter()
                .filter(|p| t.position_from_point_x(p[0]).floor() as i64 == col)
                .map(|p| p[1]);
            ys.fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), y| {
                (a.min(y), b.max(y))
            })
        };
        for col in 0..100 {
            assert_eq!(span(&thinned, col), span(&points, col), "column {col}");
        }
        // In x order.
        assert!(thinned.windows(2).all(|w| w[0][0] <= w[1][0]));
    }

    #[test]
    fn short_series_are_left_alone() {
        let points: Vec<[f64; 2]> = (0..100).map(|i| [0.0, i as f64 * 1e-9]).collect();
        assert_eq!(scatter(points.clone(), &transform(), 2.0), points);
        assert_eq!(line(&points, &transform()), points);
    }
}
