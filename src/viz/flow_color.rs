//! Flow fields as colours: the Middlebury colour wheel and plain HSV, a colour-wheel legend, an
//! error map, and a subsampled arrow overlay as point lists. Pure functions; cost O(pixels).
//!
//! **Middlebury wheel** (Baker, Scharstein, Lewis, Roth, Black, Szeliski, "A Database and
//! Evaluation Methodology for Optical Flow", IJCV 2011): 55 colours in six ramps, red-yellow 15,
//! yellow-green 6, green-cyan 4, cyan-blue 11, blue-magenta 13, magenta-red 6. A flow `(u, v)`
//! (v pointing down) normalised by the largest speed gives the angle `a = atan2(-v, -u) / π` in
//! `[-1, 1]`, the wheel position `(a + 1) / 2 · 54` (linear between neighbouring colours) and the
//! radius `ρ = |(u, v)| / max`. Each channel `c` of the wheel colour becomes `1 - ρ (1 - c)`
//! (white at zero motion, the full colour at the largest speed); speeds above the maximum are
//! darkened to 75%. So rightward motion (`a = -1`) is red, downward (`a = -1/2`) orange-yellow,
//! leftward (`a = 0`) cyan-blue, upward (`a = 1/2`) blue-violet. Angle `+π` (only reachable as
//! `atan2(+0, -u)`) is mapped to `-π`, so the seam of the wheel never shows as a second colour
//! for rightward motion. Unknown pixels (magnitude above 1e9) are black.
//!
//! **Plain HSV**: hue = direction measured in image coordinates, `atan2(v, u)` (right 0° red,
//! down 90°, left 180° cyan, up 270°), saturation = speed / max, value 1: again white at rest.

use image::{Rgba, RgbaImage};
use serde::{Deserialize, Serialize};

use super::colormap::heat_color;
use crate::error::labels::{Labelled, unknown};

/// Lengths of the six ramps of the Middlebury wheel.
pub const WHEEL_RAMPS: [usize; 6] = [15, 6, 4, 11, 13, 6];
/// Number of colours of the wheel.
pub const WHEEL_COLORS: usize = 55;
/// A component above this magnitude is unknown (as in `.flo` files).
const UNKNOWN: f64 = 1e9;

/// Which colour coding to use.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
#[derive(strum::VariantArray, strum::IntoStaticStr, strum::EnumString)]
#[strum(serialize_all = "lowercase", parse_err_ty = String, parse_err_fn = unknown::<Self>)]
pub enum FlowColoring {
    /// The Middlebury colour wheel (Baker et al.).
    #[default]
    Middlebury,
    /// Hue = direction, saturation = speed.
    Hsv,
}

impl Labelled for FlowColoring {
    const WHAT: &str = "colour coding";
}

impl FlowColoring {
    pub fn label(self) -> &'static str {
        self.into()
    }
}

/// The 55 colours of the Middlebury wheel, in order (red first).
pub fn color_wheel() -> [[u8; 3]; WHEEL_COLORS] {
    let mut wheel = [[0u8; 3]; WHEEL_COLORS];
    let mut k = 0;
    let ramp = |i: usize, n: usize| (255 * i / n) as u8;
    let [ry, yg, gc, cb, bm, mr] = WHEEL_RAMPS;
    for i in 0..ry {
        wheel[k] = [255, ramp(i, ry), 0];
        k += 1;
    }
    for i in 0..yg {
        wheel[k] = [255 - ramp(i, yg), 255, 0];
        k += 1;
    }
    for i in 0..gc {
        wheel[k] = [0, 255, ramp(i, gc)];
        k += 1;
    }
    for i in 0..cb {
        wheel[k] = [0, 255 - ramp(i, cb), 255];
        k += 1;
    }
    for i in 0..bm {
        wheel[k] = [ramp(i, bm), 0, 255];
        k += 1;
    }
    for i in 0..mr {
        wheel[k] = [255, 0, 255 - ramp(i, mr)];
        k += 1;
    }
    wheel
}

/// The wheel position `(a + 1) / 2 · 54` of the direction `(u, v)`, in `[0, 54)`.
pub fn wheel_position(u: f64, v: f64) -> f64 {
    let mut a = (-v).atan2(-u) / std::f64::consts::PI;
    if a >= 1.0 {
        a = -1.0;
    }
    (a + 1.0) / 2.0 * (WHEEL_COLORS - 1) as f64
}

/// The Middlebury colour of the normalised flow `(fu, fv)` (already divided by the largest
/// speed). Non-finite input is black.
pub fn middlebury_color(wheel: &[[u8; 3]; WHEEL_COLORS], fu: f64, fv: f64) -> [u8; 4] {
    if !(fu.is_finite() && fv.is_finite()) {
        return [0, 0, 0, 255];
    }
    let rad = fu.hypot(fv);
    let fk = wheel_position(fu, fv);
    let k0 = (fk.floor() as usize).min(WHEEL_COLORS - 1);
    let k1 = if k0 + 1 == WHEEL_COLORS { 0 } else { k0 + 1 };
    let f = fk - k0 as f64;
    let mut out = [0u8, 0, 0, 255];
    for (c, o) in out.iter_mut().take(3).enumerate() {
        let c0 = wheel[k0][c] as f64 / 255.0;
        let c1 = wheel[k1][c] as f64 / 255.0;
        let mut col = (1.0 - f) * c0 + f * c1;
        if rad <= 1.0 {
            col = 1.0 - rad * (1.0 - col);
        } else {
            col *= 0.75;
        }
        *o = (255.0 * col).floor().clamp(0.0, 255.0) as u8;
    }
    out
}

/// HSV (hue in degrees, saturation and value in [0, 1]) to RGB bytes.
pub fn hsv_to_rgb(hue: f64, sat: f64, val: f64) -> [u8; 3] {
    let h = hue.rem_euclid(360.0) / 60.0;
    let c = val * sat.clamp(0.0, 1.0);
    let x = c * (1.0 - (h % 2.0 - 1.0).abs());
    let (r, g, b) = match h as u32 {
        0 => (c, x, 0.0),
        1 => (x, c, 0.0),
        2 => (0.0, c, x),
        3 => (0.0, x, c),
        4 => (x, 0.0, c),
        _ => (c, 0.0, x),
    };
    let m = val - c;
    let to = |t: f64| ((t + m) * 255.0).round().clamp(0.0, 255.0) as u8;
    [to(r), to(g), to(b)]
}

/// The plain-HSV colour of the normalised flow `(fu, fv)`: hue `atan2(fv, fu)` in degrees,
/// saturation `min(1, |(fu, fv)|)`, value 1 (values above the maximum are darkened to 75%).
pub fn hsv_color(fu: f64, fv: f64) -> [u8; 4] {
    if !(fu.is_finite() && fv.is_finite()) {
        return [0, 0, 0, 255];
    }
    let rad = fu.hypot(fv);
    let hue = fv.atan2(fu).to_degrees();
    let val = if rad > 1.0 { 0.75 } else { 1.0 };
    let [r, g, b] = hsv_to_rgb(hue, rad.min(1.0), val);
    [r, g, b, 255]
}

fn known(u: f64, v: f64) -> bool {
    u.is_finite() && v.is_finite() && u.abs() <= UNKNOWN && v.abs() <= UNKNOWN
}

/// The largest speed over the known pixels (0 if none).
pub fn max_speed(u: &[f64], v: &[f64]) -> f64 {
    u.iter()
        .zip(v)
        .filter(|(a, b)| known(**a, **b))
        .map(|(a, b)| a.hypot(*b))
        .fold(0.0, f64::max)
}

/// Colour of one flow vector under `coding`, normalised by `max` (a speed; at most 1e-9 counts as
/// no motion anywhere, then every pixel is white). Unknown vectors are black.
pub fn flow_color(
    coding: FlowColoring,
    wheel: &[[u8; 3]; WHEEL_COLORS],
    u: f64,
    v: f64,
    max: f64,
) -> [u8; 4] {
    if !known(u, v) {
        return [0, 0, 0, 255];
    }
    let scale = if max > 1e-9 { 1.0 / max } else { 0.0 };
    match coding {
        FlowColoring::Middlebury => middlebury_color(wheel, u * scale, v * scale),
        FlowColoring::Hsv => hsv_color(u * scale, v * scale),
    }
}

/// A flow field as an image. `max_speed`: the speed shown at full saturation; `None` takes the
/// field's own largest speed (pass the ground truth's to compare two fields on one scale).
pub fn flow_rgba(
    width: usize,
    height: usize,
    u: &[f64],
    v: &[f64],
    coding: FlowColoring,
    max_speed_opt: Option<f64>,
) -> RgbaImage {
    let max = max_speed_opt.unwrap_or_else(|| max_speed(u, v));
    let wheel = color_wheel();
    RgbaImage::from_fn(width as u32, height as u32, |x, y| {
        let i = y as usize * width + x as usize;
        Rgba(flow_color(coding, &wheel, u[i], v[i], max))
    })
}

/// The colour-wheel legend: a `size x size` image whose pixel at offset `(dx, dy)` from the
/// centre (in units of the radius `size / 2`) shows the flow `(dx, dy)` at full scale, inside the
/// unit disk; outside it is transparent. Pixel centres sit at `x + 0.5`, so the legend is exactly
/// mirror-symmetric in its mask and saturation. Read it as: a pixel moving towards that point
/// of the disk (right = +u, down = +v) has that colour.
pub fn legend_rgba(size: usize, coding: FlowColoring) -> RgbaImage {
    let wheel = color_wheel();
    let half = size as f64 / 2.0;
    RgbaImage::from_fn(size as u32, size as u32, |x, y| {
        let dx = (x as f64 + 0.5 - half) / half;
        let dy = (y as f64 + 0.5 - half) / half;
        if dx.hypot(dy) > 1.0 {
            return Rgba([0, 0, 0, 0]);
        }
        Rgba(flow_color(coding, &wheel, dx, dy, 1.0))
    })
}

/// A subsampled arrow overlay in image coordinates (x right, y down; pixel centres at
/// `x + 0.5`): one `(origin, tip)` pair every `step` pixels (starting at `step / 2`), the tip at
/// `origin + scale · (u, v)`. Unknown vectors are skipped. O(pixels / step²).
pub fn flow_arrows(
    width: usize,
    height: usize,
    u: &[f64],
    v: &[f64],
    step: usize,
    scale: f64,
) -> Vec<([f64; 2], [f64; 2])> {
    let step = step.max(1);
    let mut out = Vec::with_capacity((width / step + 1) * (height / step + 1));
    for y in (step / 2..height).step_by(step) {
        for x in (step / 2..width).step_by(step) {
            let i = y * width + x;
            if !known(u[i], v[i]) {
                continue;
            }
            let o = [x as f64 + 0.5, y as f64 + 0.5];
            out.push((o, [o[0] + scale * u[i], o[1] + scale * v[i]]));
        }
    }
    out
}

/// Per-pixel endpoint error `|(u, v) - (u_gt, v_gt)|`; NaN where the ground truth is unknown.
pub fn endpoint_errors(u: &[f64], v: &[f64], u_gt: &[f64], v_gt: &[f64]) -> Vec<f64> {
    u.iter()
        .zip(v)
        .zip(u_gt.iter().zip(v_gt))
        .map(|((a, b), (g, h))| {
            if known(*g, *h) {
                (a - g).hypot(b - h)
            } else {
                f64::NAN
            }
        })
        .collect()
}

/// An error map: values in `[0, max]` as the heat colour map, NaN (unknown) as mid gray.
pub fn error_map_rgba(width: usize, height: usize, errors: &[f64], max: f64) -> RgbaImage {
    let max = max.max(f64::EPSILON);
    RgbaImage::from_fn(width as u32, height as u32, |x, y| {
        let e = errors[y as usize * width + x as usize];
        if e.is_nan() {
            Rgba([128, 128, 128, 255])
        } else {
            Rgba(heat_color(e / max))
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wheel_has_the_documented_ramps() {
        let w = color_wheel();
        assert_eq!(w[0], [255, 0, 0]);
        assert_eq!(w[15], [255, 255, 0]);
        assert_eq!(w[21], [0, 255, 0]);
        assert_eq!(w[25], [0, 255, 255]);
        assert_eq!(w[36], [0, 0, 255]);
        assert_eq!(w[49], [255, 0, 255]);
    }

    #[test]
    fn hsv_primaries() {
        assert_eq!(hsv_to_rgb(0.0, 1.0, 1.0), [255, 0, 0]);
        assert_eq!(hsv_to_rgb(120.0, 1.0, 1.0), [0, 255, 0]);
        assert_eq!(hsv_to_rgb(240.0, 1.0, 1.0), [0, 0, 255]);
        assert_eq!(hsv_to_rgb(77.0, 0.0, 1.0), [255, 255, 255]);
    }
}
