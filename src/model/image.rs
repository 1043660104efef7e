//! Gray-scale images as f64 arrays and the pyramid operations on them (blur, 2x downsampling),
//! on the model floor so that models (the flow MRF) and file readers (`io`) share one type.
//! Costs: O(pixels) for downsampling, O(pixels · sigma) for the blur.

/// A gray-scale image as f64 values (0..255 for 8-bit inputs), row-major.
#[derive(Debug, Clone, PartialEq)]
pub struct GrayImage {
    pub width: usize,
    pub height: usize,
    pub pixels: Vec<f64>,
}

impl GrayImage {
    pub fn get(&self, x: usize, y: usize) -> f64 {
        self.pixels[y * self.width + x]
    }
}

/// Separable Gaussian blur with standard deviation `sigma` pixels (kernel radius `ceil(3σ)`,
/// borders replicated); `sigma <= 0` returns a copy. O(pixels · σ).
pub fn gaussian_blur(img: &GrayImage, sigma: f64) -> GrayImage {
    if !(sigma > 0.0 && sigma.is_finite()) {
        return img.clone();
    }
    let radius = (3.0 * sigma).ceil() as i64;
    let kernel: Vec<f64> = (-radius..=radius)
        .map(|t| (-(t * t) as f64 / (2.0 * sigma * sigma)).exp())
        .collect();
    let total: f64 = kernel.iter().sum();
    let kernel: Vec<f64> = kernel.iter().map(|k| k / total).collect();
    let (w, h) = (img.width as i64, img.height as i64);
    let mut tmp = vec![0.0; img.pixels.len()];
    for y in 0..h {
        for x in 0..w {
            let mut acc = 0.0;
            for (k, t) in kernel.iter().zip(-radius..=radius) {
                acc += k * img.pixels[(y * w + (x + t).clamp(0, w - 1)) as usize];
            }
            tmp[(y * w + x) as usize] = acc;
        }
    }
    let mut out = vec![0.0; img.pixels.len()];
    for y in 0..h {
        for x in 0..w {
            let mut acc = 0.0;
            for (k, t) in kernel.iter().zip(-radius..=radius) {
                acc += k * tmp[((y + t).clamp(0, h - 1) * w + x) as usize];
            }
            out[(y * w + x) as usize] = acc;
        }
    }
    GrayImage {
        width: img.width,
        height: img.height,
        pixels: out,
    }
}

/// Half the size (rounded up): each pixel the mean of a 2 x 2 block (the last row or column
/// repeated on odd sizes). Pixel `(X, Y)` of the result is centred on `(2X + 0.5, 2Y + 0.5)` of
/// the input. O(pixels).
pub fn downsample2(img: &GrayImage) -> GrayImage {
    let (w, h) = (img.width, img.height);
    let (cw, ch) = (w.div_ceil(2), h.div_ceil(2));
    let mut out = Vec::with_capacity(cw * ch);
    for y in 0..ch {
        for x in 0..cw {
            let (x0, y0) = (2 * x, 2 * y);
            let (x1, y1) = ((2 * x + 1).min(w - 1), (2 * y + 1).min(h - 1));
            out.push(
                0.25 * (img.get(x0, y0) + img.get(x1, y0) + img.get(x0, y1) + img.get(x1, y1)),
            );
        }
    }
    GrayImage {
        width: cw,
        height: ch,
        pixels: out,
    }
}
