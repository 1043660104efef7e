//! A stored residual map as an image: each cell's largest incoming message change on a
//! log-scale heat map (`[hi · 10⁻decades, hi]`), cells whose messages oscillate outlined in
//! magenta (a cell is drawn as `cell x cell` pixels so the outline does not hide the value).
//! Cost O(cells · cell²).

use image::{Rgba, RgbaImage};

use super::colormap::heat_color;
use crate::run::residuals::ResidualMap;

/// Outline colour of oscillating cells (not on the heat scale).
pub const OSCILLATING_RGBA: [u8; 4] = [255, 0, 255, 255];

/// The largest residual of `map` (0 for an empty map).
pub fn map_max(map: &ResidualMap) -> f64 {
    map.residual
        .iter()
        .fold(0.0f64, |a, &v| a.max(f64::from(v)))
}

/// Position of `value` on the log scale from `hi · 10^-decades` to `hi`, in [0, 1].
pub fn log_position(value: f64, hi: f64, decades: f64) -> f64 {
    if value.is_nan() || hi.is_nan() || value <= 0.0 || hi <= 0.0 {
        return 0.0;
    }
    ((value / hi).log10() / decades + 1.0).clamp(0.0, 1.0)
}

/// The map drawn with `cell` pixels per cell (at least 1; outlines need 3 or more).
pub fn residual_map_rgba(map: &ResidualMap, hi: f64, decades: f64, cell: usize) -> RgbaImage {
    let cell = cell.max(1);
    let (w, h) = (map.width * cell, map.height * cell);
    RgbaImage::from_fn(w as u32, h as u32, |x, y| {
        let (x, y) = (x as usize, y as usize);
        let i = (y / cell) * map.width + x / cell;
        let edge = cell >= 3
            && (x % cell == 0 || y % cell == 0 || x % cell == cell - 1 || y % cell == cell - 1);
        if edge && map.oscillating[i] > 0 {
            Rgba(OSCILLATING_RGBA)
        } else {
            Rgba(heat_color(log_position(
                f64::from(map.residual[i]),
                hi,
                decades,
            )))
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn oscillating_cells_are_outlined_and_values_on_a_log_scale() {
        let map = ResidualMap {
            iteration: 3,
            width: 2,
            height: 1,
            residual: vec![1.0, 1e-3],
            oscillating: vec![0, 200],
        };
        let img = residual_map_rgba(&map, 1.0, 6.0, 4);
        assert_eq!((img.width(), img.height()), (8, 4));
        assert_eq!(img.get_pixel(4, 0).0, OSCILLATING_RGBA);
        assert_ne!(img.get_pixel(0, 0).0, OSCILLATING_RGBA);
        assert_eq!(img.get_pixel(1, 1).0, heat_color(1.0));
        assert_eq!(img.get_pixel(5, 1).0, heat_color(0.5));
        assert_eq!(map_max(&map), 1.0);
    }
}
