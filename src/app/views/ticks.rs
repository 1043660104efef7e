//! Every plot of the window starts here (`plot(id, x, y)`): egui_plot's default grid puts
//! ticks at powers of ten only, so a short axis (an AAE between 0.42 and 0.47, a 3-iteration
//! run in a narrow panel) shows a single labelled tick, and an iteration axis shows 0.5. These
//! spacers use `viz::ticks` (steps of 1, 2, 5, at least two labelled ticks where the axis is
//! long enough for two labels, whole numbers on an integer axis, decades on a log axis), the
//! same rule as the headless figures. Cost: O(ticks) per axis per frame.

use eframe::egui;
use egui_plot::{AxisHints, GridInput, GridMark, Plot};

use crate::viz::ticks;
pub use crate::viz::ticks::Scale;

/// egui_plot's smallest grid spacing in points; `GridInput::base_step_size` is this many
/// points in data units, which is how a spacer learns the axis' scale.
const GRID_MIN: f32 = 8.0;

/// Which axis a spacer serves (labels are wide on x, short on y).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Axis {
    X,
    Y,
}

/// Approximate width in points of a label of `chars` characters in the body font.
fn label_width(chars: usize) -> f64 {
    7.0 * chars as f64 + 4.0
}

/// The comfortable and the least gap between labels, in points.
fn gaps(axis: Axis, chars: usize) -> (f64, f64) {
    match axis {
        Axis::X => (
            (label_width(chars) + 20.0).max(56.0),
            label_width(chars) + 6.0,
        ),
        Axis::Y => (30.0, 18.0),
    }
}

/// The grid marks of one axis over `bounds`, `points_per_unit` points per data unit. Each mark's
/// `step_size` is the gap to its neighbours, so egui_plot labels it where it fits.
pub fn marks(scale: Scale, axis: Axis, bounds: (f64, f64), points_per_unit: f64) -> Vec<GridMark> {
    let (lo, hi) = bounds;
    if !(lo.is_finite() && hi.is_finite() && hi > lo && points_per_unit > 0.0) {
        return Vec::new();
    }
    match scale {
        Scale::Log10 => {
            // "2·10⁻³": six characters.
            let (_, least) = gaps(axis, 6);
            let values = ticks::log_ticks(lo, hi, least / points_per_unit);
            let gap = values
                .windows(2)
                .map(|w| w[1] - w[0])
                .fold(f64::INFINITY, f64::min);
            let gap = if gap.is_finite() { gap } else { 1.0 };
            values
                .into_iter()
                .map(|value| GridMark {
                    value,
                    step_size: gap,
                })
                .collect()
        }
        Scale::Real | Scale::Integer => {
            let integer = scale == Scale::Integer;
            // Label widths depend on the step's decimals; a first guess is close enough.
            let guess = ticks::nice_step_at_least(40.0 / points_per_unit);
            let chars = [lo, hi]
                .iter()
                .map(|v| ticks::linear_label(*v, guess).chars().count())
                .max()
                .unwrap_or(1);
            let (comfortable, least) = gaps(axis, chars);
            let step = ticks::linear_step(
                lo,
                hi,
                comfortable / points_per_unit,
                least / points_per_unit,
                integer,
            );
            ticks::multiples(step, lo, hi)
                .into_iter()
                .map(|value| GridMark {
                    value,
                    step_size: step,
                })
                .collect()
        }
    }
}

/// The spacer of one axis for `Plot::x_grid_spacer` / `y_grid_spacer`.
fn spacer(scale: Scale, axis: Axis) -> impl Fn(GridInput) -> Vec<GridMark> {
    move |input: GridInput| {
        let points_per_unit = GRID_MIN as f64 / input.base_step_size;
        marks(scale, axis, input.bounds, points_per_unit)
    }
}

/// A tick label on an axis of `scale`.
pub fn label(scale: Scale, mark: GridMark) -> String {
    match scale {
        Scale::Log10 => ticks::log_label(mark.value),
        Scale::Real | Scale::Integer => ticks::linear_label(mark.value, mark.step_size),
    }
}

/// The axis' hints: labels drawn wherever the spacer's gap fits them (the spacer already keeps
/// them apart), in full colour.
fn hints(scale: Scale, axis: Axis) -> AxisHints<'static> {
    let hints = match axis {
        Axis::X => AxisHints::new_x().label_spacing(12.0..=13.0),
        Axis::Y => AxisHints::new_y().label_spacing(12.0..=13.0),
    };
    hints.formatter(move |mark, _| label(scale, mark))
}

/// A plot whose axes count in `x` and `y`. Set axis labels and formatters after this call (it
/// replaces the axes' hints).
pub fn plot<'a>(id: impl egui::AsIdSalt, x: Scale, y: Scale) -> Plot<'a> {
    Plot::new(id)
        .grid_spacing(GRID_MIN..=300.0)
        .custom_x_axes(vec![hints(x, Axis::X)])
        .custom_y_axes(vec![hints(y, Axis::Y)])
        .x_grid_spacer(spacer(x, Axis::X))
        .y_grid_spacer(spacer(y, Axis::Y))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The marks egui_plot labels: gap wide enough for the label (its own rule).
    fn labelled(marks: &[GridMark], scale: Scale, axis: Axis, ppu: f64) -> Vec<String> {
        marks
            .iter()
            .filter(|m| {
                let text = label(scale, **m);
                let gap = m.step_size * ppu;
                let size = match axis {
                    Axis::X => label_width(text.chars().count()),
                    Axis::Y => 16.0,
                };
                !text.is_empty() && gap >= size && gap > 12.0
            })
            .map(|m| label(scale, *m))
            .collect()
    }

    #[test]
    fn every_axis_of_a_usual_size_has_two_labels() {
        let ranges = [
            (0.0, 1.0),
            (0.42, 0.47),
            (0.0, 3.0),
            (-1.0, 41.0),
            (0.0, 250.0),
            (0.0, 10_000.0),
            (1.8, 2.05),
            (-0.05, 1.3),
        ];
        for scale in [Scale::Real, Scale::Integer, Scale::Log10] {
            for axis in [Axis::X, Axis::Y] {
                for points in [110.0, 160.0, 240.0, 400.0, 900.0] {
                    for (lo, hi) in ranges {
                        if scale == Scale::Integer && hi - lo < 2.0 {
                            continue;
                        }
                        let ppu = points / (hi - lo);
                        let m = marks(scale, axis, (lo, hi), ppu);
                        let shown = labelled(&m, scale, axis, ppu);
                        assert!(
                            shown.len() >= 2,
                            "{scale:?} {axis:?} {lo}..{hi} over {points} points: {shown:?}"
                        );
                        if scale == Scale::Integer {
                            assert!(m.iter().all(|m| m.value.fract() == 0.0), "{m:?}");
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn labels_do_not_crowd_a_wide_axis() {
        let ppu = 900.0 / 100.0;
        let m = marks(Scale::Integer, Axis::X, (0.0, 100.0), ppu);
        assert!(m.len() <= 12, "{} ticks", m.len());
        assert!(m[0].step_size * ppu >= 30.0);
    }
}
