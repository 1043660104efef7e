//! Colour maps for image panes: gray levels, and a perceptual heat map (a 5-stop piecewise-linear
//! approximation of "inferno": black, purple, red, orange, pale yellow) for error maps.
//! Cost O(pixels).

use image::{Rgba, RgbaImage};

/// Gray values mapped linearly from `[lo, hi]` to black..white (clamped).
pub fn gray_rgba(width: usize, height: usize, values: &[f64], lo: f64, hi: f64) -> RgbaImage {
    let span = (hi - lo).max(f64::EPSILON);
    RgbaImage::from_fn(width as u32, height as u32, |x, y| {
        let v = values[y as usize * width + x as usize];
        let g = ((v - lo) / span * 255.0).round().clamp(0.0, 255.0) as u8;
        Rgba([g, g, g, 255])
    })
}

const HEAT_STOPS: [[f64; 3]; 5] = [
    [0.0, 0.0, 4.0],
    [87.0, 16.0, 110.0],
    [188.0, 55.0, 84.0],
    [249.0, 142.0, 9.0],
    [252.0, 255.0, 164.0],
];

/// Heat colour of `t` in [0, 1] (clamped; NaN is shown as magenta).
pub fn heat_color(t: f64) -> [u8; 4] {
    if t.is_nan() {
        return [255, 0, 255, 255];
    }
    let t = t.clamp(0.0, 1.0) * (HEAT_STOPS.len() - 1) as f64;
    let i = (t.floor() as usize).min(HEAT_STOPS.len() - 2);
    let f = t - i as f64;
    let (a, b) = (HEAT_STOPS[i], HEAT_STOPS[i + 1]);
    let c = |k: usize| (a[k] + f * (b[k] - a[k])).round() as u8;
    [c(0), c(1), c(2), 255]
}

/// Values in `[0, max]` as a heat map.
pub fn heat_rgba(width: usize, height: usize, values: &[f64], max: f64) -> RgbaImage {
    let max = max.max(f64::EPSILON);
    RgbaImage::from_fn(width as u32, height as u32, |x, y| {
        Rgba(heat_color(values[y as usize * width + x as usize] / max))
    })
}

/// `|a - b|` per pixel as a heat map over `[0, max]` (the error map of an estimate).
pub fn abs_diff_heat(width: usize, height: usize, a: &[f64], b: &[f64], max: f64) -> RgbaImage {
    let max = max.max(f64::EPSILON);
    RgbaImage::from_fn(width as u32, height as u32, |x, y| {
        let i = y as usize * width + x as usize;
        Rgba(heat_color((a[i] - b[i]).abs() / max))
    })
}

/// A horizontal colour bar of the heat map, low values on the left (a legend for heat maps).
pub fn heat_bar(width: usize, height: usize) -> RgbaImage {
    let span = (width.max(2) - 1) as f64;
    RgbaImage::from_fn(width as u32, height as u32, |x, _| {
        Rgba(heat_color(x as f64 / span))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn heat_ends_are_dark_and_light() {
        assert_eq!(heat_color(0.0), [0, 0, 4, 255]);
        assert_eq!(heat_color(1.0), [252, 255, 164, 255]);
        assert_eq!(heat_color(2.0), heat_color(1.0));
    }

    #[test]
    fn abs_diff_is_symmetric_and_bar_spans_the_map() {
        let a = abs_diff_heat(2, 1, &[10.0, 0.0], &[0.0, 10.0], 10.0);
        assert_eq!(a.get_pixel(0, 0), a.get_pixel(1, 0));
        assert_eq!(a.get_pixel(0, 0).0, heat_color(1.0));
        let bar = heat_bar(16, 2);
        assert_eq!(bar.get_pixel(0, 1).0, heat_color(0.0));
        assert_eq!(bar.get_pixel(15, 0).0, heat_color(1.0));
    }

    #[test]
    fn gray_maps_range() {
        let img = gray_rgba(2, 1, &[0.0, 255.0], 0.0, 255.0);
        assert_eq!(img.get_pixel(0, 0).0, [0, 0, 0, 255]);
        assert_eq!(img.get_pixel(1, 0).0, [255, 255, 255, 255]);
    }
}
