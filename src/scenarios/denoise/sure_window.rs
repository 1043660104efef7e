//! Monte-Carlo SURE on a window of a large image. SURE's guard (`sure_stop.rs`) runs the
//! algorithm on `y` and on `y + ε b` in lockstep and takes a step back when SURE rises. On a
//! photograph of many megapixels those copies, and the saved messages a step back returns to,
//! would cost several times the run itself. Above [`FULL_SURE_PIXELS`] the guard therefore
//! decides on a window: [`TILES`] x [`TILES`] tiles of [`TILE`] x [`TILE`] pixels spread evenly
//! over the image, laid side by side into one small image (the seams join tiles, as the built-in
//! training draws are joined). The window runs the algorithm and its probes with the image's
//! model; a step the window keeps is then taken, with the same step size, by the run on the
//! whole image, and a step the window takes back is never taken there. So the image's run
//! holds one message store and moves only along steps SURE accepted, and a rejected step costs
//! only the window's work.
//!
//! The window has 16 · 64² = 65,536 pixels: with one probe the same SURE resolution as a
//! 256 x 256 image's (`sure_stop::AUTO_PROBE_PIXELS`), from sixteen places of the image.
//! Images up to 2^18 pixels (512 x 512) keep SURE on every pixel. Cost per iteration: two
//! window steps (more with more probes) and O(window) for SURE.

/// Images with more pixels than this decide SURE on a window.
pub const FULL_SURE_PIXELS: usize = 1 << 18;
/// Tiles per side of the window.
pub const TILES: usize = 4;
/// Side of a tile, in pixels.
pub const TILE: usize = 64;

/// The window's tiles side by side: its size and, for each of its pixels in raster order, the
/// image pixel it shows.
#[derive(Debug, Clone, PartialEq)]
pub struct SureWindow {
    pub width: usize,
    pub height: usize,
    pub pixels: Vec<usize>,
}

impl SureWindow {
    /// The window of a `width x height` image, or None when SURE runs on every pixel.
    pub fn of(width: usize, height: usize) -> Option<SureWindow> {
        if width * height <= FULL_SURE_PIXELS {
            return None;
        }
        let (tw, th) = (TILE.min(width), TILE.min(height));
        // Tile i's left edge: centred on (2i + 1) / (2 TILES) of the width, inside the image.
        let start = |i: usize, side: usize, tile: usize| {
            ((2 * i + 1) * side / (2 * TILES))
                .saturating_sub(tile / 2)
                .min(side - tile)
        };
        let (ww, wh) = (TILES * tw, TILES * th);
        let mut pixels = Vec::with_capacity(ww * wh);
        for my in 0..wh {
            let y = start(my / th, height, th) + my % th;
            for mx in 0..ww {
                let x = start(mx / tw, width, tw) + mx % tw;
                pixels.push(y * width + x);
            }
        }
        Some(SureWindow {
            width: ww,
            height: wh,
            pixels,
        })
    }

    /// What it is, for results.json and the window.
    pub fn describe(&self) -> String {
        format!(
            "{TILES} x {TILES} tiles of {} x {} pixels spread over the image, side by side ({} x {} pixels)",
            self.width / TILES,
            self.height / TILES,
            self.width,
            self.height
        )
    }

    /// The window's values of an image.
    pub fn take(&self, image: &[f64]) -> Vec<f64> {
        self.pixels.iter().map(|&p| image[p]).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn small_images_keep_sure_on_every_pixel() {
        assert_eq!(SureWindow::of(512, 512), None);
        assert_eq!(SureWindow::of(256, 256), None);
    }

    #[test]
    fn a_large_image_gets_sixteen_tiles_spread_over_it() {
        let (w, h) = (4000, 3000);
        let win = SureWindow::of(w, h).unwrap();
        assert_eq!((win.width, win.height), (256, 256));
        assert_eq!(win.pixels.len(), 65_536);
        let mut sorted = win.pixels.clone();
        sorted.sort_unstable();
        sorted.dedup();
        assert_eq!(
            sorted.len(),
            65_536,
            "tiles do not overlap on a large image"
        );
        // Each tile is a contiguous 64 x 64 block of the image, centred in its sixteenth.
        for (ty, tx) in [(0, 0), (3, 3), (1, 2)] {
            let corner = win.pixels[ty * TILE * win.width + tx * TILE];
            let (x, y) = (corner % w, corner / w);
            assert_eq!(x + TILE / 2, (2 * tx + 1) * w / 8);
            assert_eq!(y + TILE / 2, (2 * ty + 1) * h / 8);
            let below_right = win.pixels[(ty * TILE + 63) * win.width + tx * TILE + 63];
            assert_eq!(below_right, corner + 63 * w + 63);
        }
        // A long thin image: tiles as tall as the image, overlapping is allowed.
        let strip = SureWindow::of(20_000, 20).unwrap();
        assert_eq!((strip.width, strip.height), (256, 80));
        assert!(strip.pixels.iter().all(|&p| p < 20_000 * 20));
    }
}
