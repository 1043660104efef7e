//! The application icon, drawn from primitives: a 3 x 3 grid graph whose nodes are coloured by
//! the heat map (beliefs converging from dark to light) on a rounded dark tile. Written to
//! `assets/icon.png` by `cargo run --example make_icon`. Cost O(size²).

use image::{Rgba, RgbaImage};

use super::colormap::heat_color;

/// Distance from `p` to the segment `a`-`b`.
fn segment_distance(p: [f64; 2], a: [f64; 2], b: [f64; 2]) -> f64 {
    let (dx, dy) = (b[0] - a[0], b[1] - a[1]);
    let len2 = dx * dx + dy * dy;
    let t = if len2 > 0.0 {
        (((p[0] - a[0]) * dx + (p[1] - a[1]) * dy) / len2).clamp(0.0, 1.0)
    } else {
        0.0
    };
    let (cx, cy) = (a[0] + t * dx, a[1] + t * dy);
    ((p[0] - cx).powi(2) + (p[1] - cy).powi(2)).sqrt()
}

/// Coverage of a shape whose signed distance is `d` (negative inside), with a one-pixel ramp.
fn coverage(d: f64) -> f64 {
    (0.5 - d).clamp(0.0, 1.0)
}

/// Paints `color` over `dst` with opacity `alpha` in [0, 1] (straight alpha).
fn blend(dst: &mut [f64; 4], color: [f64; 3], alpha: f64) {
    let out_a = alpha + dst[3] * (1.0 - alpha);
    if out_a <= 0.0 {
        return;
    }
    for k in 0..3 {
        dst[k] = (color[k] * alpha + dst[k] * dst[3] * (1.0 - alpha)) / out_a;
    }
    dst[3] = out_a;
}

/// The icon at `size` x `size` pixels (antialiased, transparent corners).
pub fn app_icon(size: u32) -> RgbaImage {
    let s = size as f64;
    let margin = s * 0.06;
    let radius = s * 0.18;
    // Node centres of a 3 x 3 grid.
    let step = (s - 2.0 * margin) / 3.0;
    let centre = |i: usize| margin + step * (i as f64 + 0.5);
    let nodes: Vec<[f64; 2]> = (0..9).map(|k| [centre(k % 3), centre(k / 3)]).collect();
    let mut edges = Vec::new();
    for k in 0..9 {
        if k % 3 < 2 {
            edges.push((k, k + 1));
        }
        if k / 3 < 2 {
            edges.push((k, k + 3));
        }
    }
    let node_r = step * 0.26;
    let edge_w = step * 0.07;
    RgbaImage::from_fn(size, size, |x, y| {
        let p = [x as f64 + 0.5, y as f64 + 0.5];
        let mut px = [0.0; 4];
        // Rounded tile.
        let half = s / 2.0 - margin * 0.5;
        let qx = (p[0] - s / 2.0).abs() - (half - radius);
        let qy = (p[1] - s / 2.0).abs() - (half - radius);
        let outside = (qx.max(0.0).powi(2) + qy.max(0.0).powi(2)).sqrt();
        let d_tile = outside + qx.max(qy).min(0.0) - radius;
        blend(&mut px, [30.0, 27.0, 46.0], coverage(d_tile));
        // Edges.
        for &(a, b) in &edges {
            let d = segment_distance(p, nodes[a], nodes[b]) - edge_w;
            blend(&mut px, [170.0, 170.0, 190.0], coverage(d) * 0.9);
        }
        // Nodes, coloured along the heat map from the top-left corner.
        for (k, c) in nodes.iter().enumerate() {
            let d = ((p[0] - c[0]).powi(2) + (p[1] - c[1]).powi(2)).sqrt() - node_r;
            let t = 0.25 + 0.75 * ((k % 3 + k / 3) as f64 / 4.0);
            let h = heat_color(t);
            blend(
                &mut px,
                [h[0] as f64, h[1] as f64, h[2] as f64],
                coverage(d),
            );
        }
        let to_u8 = |v: f64| v.round().clamp(0.0, 255.0) as u8;
        Rgba([
            to_u8(px[0]),
            to_u8(px[1]),
            to_u8(px[2]),
            to_u8(px[3] * 255.0),
        ])
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn icon_has_transparent_corners_and_opaque_centre() {
        let img = app_icon(64);
        assert_eq!(img.dimensions(), (64, 64));
        assert_eq!(img.get_pixel(0, 0).0[3], 0);
        assert_eq!(img.get_pixel(32, 32).0[3], 255);
    }
}
