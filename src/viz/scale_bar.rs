//! A heat map with its scale bar, for headless PNGs such as denoise's `error.png`: the map
//! (enlarged by a whole factor so small images stay readable, nearest neighbour so pixels stay
//! pixels) beside a vertical bar of the same colour map with labelled ticks and the quantity's
//! name and unit. Drawn with plotters in the figures' font. Cost: O(output pixels).

use image::{Rgba, RgbaImage};
use plotters::prelude::*;

use super::colormap::heat_color;
use super::figures::{FONT, register_font};
use crate::error::{Error, Result};

/// The map is enlarged until it is at least this tall (when that keeps it under 1200 px wide).
const MIN_MAP_HEIGHT: u32 = 256;
/// Room right of the map for the bar, its ticks and its label.
const BAR_AREA: u32 = 150;

fn fail(e: &dyn std::fmt::Display) -> Error {
    Error::Other(format!("cannot draw a scale bar: {e}"))
}

/// `map` (a heat map of values in `[0, max]`) with a scale bar labelled `label`.
pub fn heat_map_with_scale(map: &RgbaImage, max: f64, label: &str) -> Result<RgbaImage> {
    register_font();
    let (w, h) = map.dimensions();
    if w == 0 || h == 0 {
        return Err(Error::Other(
            "cannot draw a scale bar for an empty map".into(),
        ));
    }
    let mut scale = MIN_MAP_HEIGHT.div_ceil(h).max(1);
    while scale > 1 && w * scale > 1200 {
        scale -= 1;
    }
    let (mw, mh) = (w * scale, h * scale);
    let pad = 12u32;
    let width = mw + BAR_AREA + pad;
    let height = mh.max(160) + 2 * pad;
    let mut rgb = vec![255u8; (width * height * 3) as usize];
    {
        let root = BitMapBackend::with_buffer(&mut rgb, (width, height)).into_drawing_area();
        for y in 0..mh {
            for x in 0..mw {
                let p = map.get_pixel(x / scale, y / scale).0;
                root.draw_pixel(
                    ((pad + x) as i32, (pad + y) as i32),
                    &RGBColor(p[0], p[1], p[2]),
                )
                .map_err(|e| fail(&e))?;
            }
        }
        // The bar: max at the top, as the values of a vertical axis.
        let (bx, bw) = ((pad + mw + 16) as i32, 18i32);
        let (top, bottom) = (pad as i32, (pad + mh.max(160)) as i32 - 1);
        let span = (bottom - top).max(1) as f64;
        for y in top..=bottom {
            let c = heat_color(1.0 - (y - top) as f64 / span);
            root.draw(&Rectangle::new(
                [(bx, y), (bx + bw, y + 1)],
                RGBColor(c[0], c[1], c[2]).filled(),
            ))
            .map_err(|e| fail(&e))?;
        }
        root.draw(&Rectangle::new(
            [(bx, top), (bx + bw, bottom)],
            BLACK.stroke_width(1),
        ))
        .map_err(|e| fail(&e))?;
        let font = (FONT, 13).into_font().color(&BLACK);
        for k in 0..=4 {
            let v = max * k as f64 / 4.0;
            let y = bottom - ((bottom - top) as f64 * k as f64 / 4.0).round() as i32;
            root.draw(&PathElement::new(
                vec![(bx + bw, y), (bx + bw + 4, y)],
                BLACK.stroke_width(1),
            ))
            .map_err(|e| fail(&e))?;
            let text = if v.fract() == 0.0 || max >= 10.0 {
                format!("{v:.0}")
            } else {
                format!("{v:.3}")
            };
            root.draw_text(&text, &font, (bx + bw + 7, y - 7))
                .map_err(|e| fail(&e))?;
        }
        // The quantity, along the bar.
        let vertical = (FONT, 13)
            .into_font()
            .transform(FontTransform::Rotate270)
            .color(&BLACK);
        let label_x = bx + bw + 56;
        root.draw_text(label, &vertical, (label_x, (top + bottom) / 2 + 90))
            .map_err(|e| fail(&e))?;
        root.present().map_err(|e| fail(&e))?;
    }
    Ok(RgbaImage::from_fn(width, height, |x, y| {
        let i = ((y * width + x) * 3) as usize;
        Rgba([rgb[i], rgb[i + 1], rgb[i + 2], 255])
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::viz::heat_rgba;

    #[test]
    fn the_map_is_enlarged_and_the_bar_runs_from_dark_to_light() {
        let values: Vec<f64> = (0..20 * 10).map(|i| (i % 20) as f64 * 10.0).collect();
        let map = heat_rgba(20, 10, &values, 255.0);
        let out = heat_map_with_scale(&map, 255.0, "|error| (gray levels)").unwrap();
        // 10 rows become 260 (scale 26), plus the bar area.
        assert_eq!(out.height(), 260 + 24);
        assert!(out.width() > 20 * 26 + 100);
        // The map's first pixel, enlarged: the colour of 0.
        assert_eq!(out.get_pixel(12, 12).0, heat_color(0.0));
        // The bar: light at the top, dark at the bottom.
        let bx = 12 + 20 * 26 + 16 + 9;
        let high = out.get_pixel(bx, 14).0;
        let light = heat_color(1.0);
        assert!((0..3).all(|k| high[k].abs_diff(light[k]) <= 6), "{high:?}");
        let low = out.get_pixel(bx, 12 + 259).0;
        assert!(u32::from(low[0]) + u32::from(low[1]) < 60, "{low:?}");
    }
}
