//! The noise sigma of a noisy image with no clean counterpart: Donoho & Johnstone's robust
//! median estimator (Donoho & Johnstone, "Ideal spatial adaptation by wavelet shrinkage",
//! Biometrika 1994, Sec. 4.2; Donoho, "De-noising by soft-thresholding", IEEE Trans. IT 1995):
//! sigma = MAD / 0.6745 of the finest-scale diagonal (HH) wavelet coefficients, here of the
//! orthonormal 2-D Daubechies 8-tap (db4) transform over the image's interior (Haar for
//! images under 8 x 8). The longer filter leaks less image texture into HH than Haar
//! (cameraman, sigma 10: 11.2 against Haar's 11.5). For white Gaussian noise each d has the noise's sigma; a smooth image
//! contributes almost nothing to HH, and the median ignores the few large coefficients edges
//! leave. 0.6745 is the median of |Z| for a standard normal Z. Cost O(pixels) plus a selection.

use crate::error::{Error, Result};

/// The rule's name as echoed into results.json.
pub const MAD_RULE: &str =
    "MAD of the finest diagonal db4 wavelet coefficients / 0.6745 (Donoho & Johnstone 1994)";

/// Haar's scaling filter.
const HAAR_LOWPASS: [f64; 2] = [
    std::f64::consts::FRAC_1_SQRT_2,
    std::f64::consts::FRAC_1_SQRT_2,
];
/// Daubechies' 8-tap (4 vanishing moments) scaling filter.
const DB4_LOWPASS: [f64; 8] = [
    0.230_377_813_308_855_23,
    0.714_846_570_552_541_5,
    0.630_880_767_929_590_4,
    -0.027_983_769_416_983_85,
    -0.187_034_811_718_881_14,
    0.030_841_381_835_986_965,
    0.032_883_011_666_982_945,
    -0.010_597_401_784_997_278,
];
const WAVELET_LOWPASS: &[f64] = &DB4_LOWPASS;

/// The finest-scale HH coefficients of an orthonormal wavelet with scaling filter `lowpass`,
/// over the image's interior (no boundary extension, so no artificial edges).
fn diagonal_detail(pixels: &[f64], width: usize, height: usize, lowpass: &[f64]) -> Vec<f64> {
    let n = lowpass.len();
    let highpass: Vec<f64> = (0..n)
        .map(|k| if k % 2 == 0 { 1.0 } else { -1.0 } * lowpass[n - 1 - k])
        .collect();
    let mut out = Vec::new();
    if width < n || height < n {
        return out;
    }
    for y in (0..=height - n).step_by(2) {
        for x in (0..=width - n).step_by(2) {
            let mut d = 0.0;
            for (j, gy) in highpass.iter().enumerate() {
                let row = &pixels[(y + j) * width + x..(y + j) * width + x + n];
                d += gy * row.iter().zip(&highpass).map(|(p, g)| p * g).sum::<f64>();
            }
            out.push(d);
        }
    }
    out
}

/// Below this (gray levels) the noise is not measurable and the user must give sigma.
const MIN_SIGMA: f64 = 1e-3;

/// The median of |N(0, 1)|.
const MEDIAN_ABS_NORMAL: f64 = 0.674_489_750_196_081_7;

/// Sigma of the additive white Gaussian noise in a `width x height` row-major image.
/// Errors for images smaller than 2 x 2, non-finite values, or an image with no measurable
/// noise (sigma estimates to 0, e.g. a constant image), where the user must give sigma.
pub fn estimate_sigma_mad(pixels: &[f64], width: usize, height: usize) -> Result<f64> {
    let param = |reason: String| Error::param("sigma", reason);
    if width < 2 || height < 2 || pixels.len() != width * height {
        return Err(param(format!(
            "cannot estimate the noise sigma of a {width} x {height} image (needs 2 x 2 pixels); give --sigma"
        )));
    }
    if pixels.iter().any(|v| !v.is_finite()) {
        return Err(param("the image has non-finite values".into()));
    }
    let mut coefficients = diagonal_detail(pixels, width, height, WAVELET_LOWPASS);
    if coefficients.is_empty() {
        coefficients = diagonal_detail(pixels, width, height, &HAAR_LOWPASS);
    }
    coefficients.iter_mut().for_each(|d| *d = d.abs());
    let mid = coefficients.len() / 2;
    let (_, median, _) = coefficients.select_nth_unstable_by(mid, f64::total_cmp);
    let sigma = *median / MEDIAN_ABS_NORMAL;
    // Rounding alone leaves sigma near 0.29 on an 8-bit image; far below that there is no
    // measurable noise, only floating-point residue of the filters.
    if sigma < MIN_SIGMA {
        return Err(param(
            "the noise sigma estimates to 0 (more than half the image's finest diagonal \
             detail is exactly zero, e.g. a constant or synthetic image); give it with --sigma"
                .into(),
        ));
    }
    Ok(sigma)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenarios::denoise::sunset::add_noise;

    fn smooth(width: usize, height: usize) -> Vec<f64> {
        (0..width * height)
            .map(|i| {
                let (x, y) = ((i % width) as f64, (i / width) as f64);
                128.0 + 60.0 * (x / 17.0).sin() * (y / 23.0).cos() + 0.3 * x
            })
            .collect()
    }

    #[test]
    fn recovers_sigma_of_gaussian_noise_on_a_smooth_image() {
        let (w, h) = (160, 120);
        let clean = smooth(w, h);
        for (seed, sigma) in [(1, 10.0), (2, 20.0), (3, 30.0)] {
            let noisy = add_noise(&clean, sigma, seed);
            let est = estimate_sigma_mad(&noisy, w, h).unwrap();
            assert!(
                (est / sigma - 1.0).abs() < 0.05,
                "sigma {sigma}: estimated {est}"
            );
        }
    }

    #[test]
    fn constant_image_asks_for_sigma() {
        let err = estimate_sigma_mad(&[7.0; 64], 8, 8)
            .unwrap_err()
            .to_string();
        assert!(err.contains("--sigma"), "{err}");
    }

    #[test]
    fn tiny_or_nan_images_are_refused() {
        assert!(estimate_sigma_mad(&[1.0, 2.0], 2, 1).is_err());
        let mut v = add_noise(&[0.0; 16], 5.0, 0);
        v[3] = f64::NAN;
        assert!(estimate_sigma_mad(&v, 4, 4).is_err());
    }
}
