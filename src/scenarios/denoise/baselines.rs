//! Two reference baselines for denoising, shown beside message passing (they are not message
//! passing): total-variation denoising by Chambolle's projection algorithm (A. Chambolle, "An
//! algorithm for total variation minimization and applications", JMIV 2004, eq. (9)-(11)) and
//! a Gaussian blur whose sigma is chosen, like everything else here, without the clean image:
//! by Stein's unbiased risk estimate (SURE) of the blur's mean squared error,
//! `||y - H y||² / n - s² + 2 s² tr(H) / n`, with s the noise sigma and `tr(H) / n` the centre
//! weight of the blur kernel.
//!
//! TV minimises `||u - f||² / 2 + w TV(u)` (isotropic TV, forward differences); the weight is
//! `TV_WEIGHT` on the 0..1 scale (scikit-image's `denoise_tv_chambolle(weight = 0.1)`), i.e.
//! `0.1 * 255` in gray levels, with scikit-image's step `1/4`, at most 200 iterations and its
//! stopping rule (relative energy change below 2e-4). Cost O(pixels) per iteration. The blur
//! search tries 30 sigmas from 0.3 to 5 px, O(pixels · sigma) each.

use std::sync::Arc;

use rayon::prelude::*;

use crate::error::Result;
use crate::run::CancelFlag;

/// TV weight on the 0..1 intensity scale.
pub const TV_WEIGHT: f64 = 0.1;

/// Chambolle's projection algorithm on a `w` x `h` image in gray levels.
/// `stop` is checked once per iteration (`Err(Cancelled)` once raised).
pub fn tv_chambolle(
    f: &[f64],
    w: usize,
    h: usize,
    weight: f64,
    stop: &CancelFlag,
) -> Result<Vec<f64>> {
    let n = w * h;
    let (mut px, mut py) = (vec![0.0; n], vec![0.0; n]);
    let mut u = f.to_vec();
    let tau = 0.25;
    let mut last_energy: Option<f64> = None;
    for _ in 0..200 {
        stop.check()?;
        // u = f + d, d = -(div p) in scikit-image's sign convention: d_i = p_{i-1} - p_i.
        // Row by row in parallel; each row's energy is summed in order, then the rows'.
        let rows: Vec<f64> = u
            .par_chunks_mut(w)
            .enumerate()
            .map(|(y, row)| {
                let mut energy = 0.0;
                for (x, ux) in row.iter_mut().enumerate() {
                    let i = y * w + x;
                    let mut d = -px[i] - py[i];
                    if x > 0 {
                        d += px[i - 1];
                    }
                    if y > 0 {
                        d += py[i - w];
                    }
                    *ux = f[i] + d;
                    energy += d * d;
                }
                energy
            })
            .collect();
        let mut energy: f64 = rows.iter().sum();
        let u = &u;
        let rows: Vec<f64> = px
            .par_chunks_mut(w)
            .zip(py.par_chunks_mut(w))
            .enumerate()
            .map(|(y, (px_row, py_row))| {
                let mut energy = 0.0;
                for (x, (pxi, pyi)) in px_row.iter_mut().zip(py_row.iter_mut()).enumerate() {
                    let i = y * w + x;
                    let gx = if x + 1 < w { u[i + 1] - u[i] } else { 0.0 };
                    let gy = if y + 1 < h { u[i + w] - u[i] } else { 0.0 };
                    let norm = (gx * gx + gy * gy).sqrt();
                    energy += weight * norm;
                    let scale = 1.0 + tau / weight * norm;
                    *pxi = (*pxi - tau * gx) / scale;
                    *pyi = (*pyi - tau * gy) / scale;
                }
                energy
            })
            .collect();
        energy += rows.iter().sum::<f64>();
        energy /= n as f64;
        if let Some(e0) = last_energy
            && (e0 - energy).abs() < 2e-4 * e0.abs()
        {
            break;
        }
        last_energy = Some(energy);
    }
    Ok(u)
}

/// 1-D Gaussian weights for offsets `0..=radius` (radius `ceil(4 sigma)`), summing to 1 over
/// `-radius..=radius`.
fn gauss_weights(sigma: f64) -> Vec<f64> {
    let r = (4.0 * sigma).ceil() as usize;
    let mut k: Vec<f64> = (0..=r)
        .map(|d| (-((d * d) as f64) / (2.0 * sigma * sigma)).exp())
        .collect();
    let total = k[0] + 2.0 * k[1..].iter().sum::<f64>();
    k.iter_mut().for_each(|v| *v /= total);
    k
}

/// Separable Gaussian blur with mirrored borders, rows in parallel.
pub fn gaussian_blur(img: &[f64], w: usize, h: usize, sigma: f64) -> Vec<f64> {
    let k = gauss_weights(sigma);
    let mirror = |i: isize, n: usize| -> usize {
        let n = n as isize;
        let mut i = i;
        while i < 0 || i >= n {
            i = if i < 0 { -i - 1 } else { 2 * n - i - 1 };
        }
        i as usize
    };
    let mut tmp = vec![0.0; w * h];
    tmp.par_chunks_mut(w).enumerate().for_each(|(y, row)| {
        for (x, t) in row.iter_mut().enumerate() {
            let mut s = k[0] * img[y * w + x];
            for (d, kd) in k.iter().enumerate().skip(1) {
                let d = d as isize;
                s += kd
                    * (img[y * w + mirror(x as isize - d, w)]
                        + img[y * w + mirror(x as isize + d, w)]);
            }
            *t = s;
        }
    });
    let mut out = vec![0.0; w * h];
    out.par_chunks_mut(w).enumerate().for_each(|(y, row)| {
        for (x, o) in row.iter_mut().enumerate() {
            let mut s = k[0] * tmp[y * w + x];
            for (d, kd) in k.iter().enumerate().skip(1) {
                let d = d as isize;
                s += kd
                    * (tmp[mirror(y as isize - d, h) * w + x]
                        + tmp[mirror(y as isize + d, h) * w + x]);
            }
            *o = s;
        }
    });
    out
}

/// The blur sigma (px) minimising SURE for noise `noise`, and its blurred image. The 30
/// candidates are scored one after another (two images in memory at a time), the winner
/// blurred again. `stop` is checked before each candidate.
pub fn blur_by_sure(
    noisy: &[f64],
    w: usize,
    h: usize,
    noise: f64,
    stop: &CancelFlag,
) -> Result<(f64, Vec<f64>)> {
    let n = noisy.len() as f64;
    let s2 = noise * noise;
    let mut best: Option<(f64, f64)> = None;
    for k in 0..30 {
        stop.check()?;
        let sigma = 0.3 * (5.0f64 / 0.3).powf(k as f64 / 29.0);
        let out = gaussian_blur(noisy, w, h, sigma);
        let centre = gauss_weights(sigma)[0].powi(2);
        let residual: f64 = noisy.iter().zip(&out).map(|(a, b)| (a - b).powi(2)).sum();
        let sure = residual / n - s2 + 2.0 * s2 * centre;
        if best.is_none_or(|b| sure < b.0) {
            best = Some((sure, sigma));
        }
    }
    let (_, sigma) = best.expect("30 candidates");
    Ok((sigma, gaussian_blur(noisy, w, h, sigma)))
}

/// A baseline's label and estimate.
pub type Labelled = (String, Arc<Vec<f64>>);
/// Labelled baseline estimates.
pub type Estimates = Vec<Labelled>;

/// The baselines of a noisy image, computed on their own thread while the message passing
/// runs (on a photograph they take seconds): `(label, estimate)` once ready.
///
/// They run on a thread pool of their own: on rayon's global pool each of their parallel
/// passes over a whole photograph would hold back the engine's tasks queued behind it, and
/// with them the engine's checks of the interrupt flag. Dropping the baselines stops them at
/// their next check.
pub struct Baselines {
    ready: std::sync::OnceLock<Estimates>,
    pending: std::sync::Mutex<Option<std::thread::JoinHandle<Estimates>>>,
    abandoned: CancelFlag,
}

impl Baselines {
    /// Starts TV and the SURE blur on `noisy` (`w x h`, noise sigma `noise`).
    pub fn start(noisy: Arc<Vec<f64>>, w: usize, h: usize, noise: f64) -> Baselines {
        let abandoned = CancelFlag::default();
        let stop = abandoned.clone();
        let handle = std::thread::spawn(move || {
            let compute = || -> Result<Estimates> {
                let tv = tv_chambolle(&noisy, w, h, TV_WEIGHT * 255.0, &stop)?;
                let (blur_sigma, blur) = blur_by_sure(&noisy, w, h, noise, &stop)?;
                Ok(vec![
                    (format!("tv_w{TV_WEIGHT}"), Arc::new(tv)),
                    (format!("blur_sure_s{blur_sigma:.2}"), Arc::new(blur)),
                ])
            };
            let pool = rayon::ThreadPoolBuilder::new()
                .num_threads(rayon::current_num_threads())
                .thread_name(|i| format!("beliefscope-baselines-{i}"))
                .build();
            // Without a pool of their own (no thread can be started) they share the global one.
            let estimates = match pool {
                Ok(pool) => pool.install(compute),
                Err(_) => compute(),
            };
            estimates.unwrap_or_default()
        });
        Baselines {
            ready: std::sync::OnceLock::new(),
            pending: std::sync::Mutex::new(Some(handle)),
            abandoned,
        }
    }

    /// The baselines if they are ready (never waits).
    pub fn ready(&self) -> Option<&[Labelled]> {
        if self.ready.get().is_none() {
            let mut pending = self.pending.lock().unwrap_or_else(|e| e.into_inner());
            if pending.as_ref().is_some_and(|h| h.is_finished()) {
                self.take(&mut pending);
            }
        }
        self.ready.get().map(Vec::as_slice)
    }

    /// The baselines, waiting for them if need be.
    pub fn wait(&self) -> &[Labelled] {
        if self.ready.get().is_none() {
            let mut pending = self.pending.lock().unwrap_or_else(|e| e.into_inner());
            self.take(&mut pending);
        }
        self.ready.get().map_or(&[], Vec::as_slice)
    }

    fn take(&self, pending: &mut Option<std::thread::JoinHandle<Estimates>>) {
        if let Some(handle) = pending.take() {
            // A panic in a baseline leaves it out; the run itself is unaffected.
            let _ = self.ready.set(handle.join().unwrap_or_default());
        }
    }
}

impl Drop for Baselines {
    fn drop(&mut self) {
        self.abandoned.cancel();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tv_keeps_constants_and_flattens_noise() {
        let f = vec![100.0; 36];
        assert!(
            tv_chambolle(&f, 6, 6, 25.5, &CancelFlag::default())
                .unwrap()
                .iter()
                .all(|v| (v - 100.0).abs() < 1e-9)
        );
        // A step with a small wiggle: TV removes the wiggle, keeps the step.
        let (w, h) = (20, 10);
        let f: Vec<f64> = (0..w * h)
            .map(|i| if i % w < 10 { 50.0 } else { 200.0 } + if i % 2 == 0 { 3.0 } else { -3.0 })
            .collect();
        let u = tv_chambolle(&f, w, h, 25.5, &CancelFlag::default()).unwrap();
        let wiggle = (u[5 * w + 4] - u[5 * w + 5]).abs();
        assert!(wiggle < 1.0, "{wiggle}");
        assert!(u[5 * w + 15] - u[5 * w + 4] > 120.0);
    }

    #[test]
    fn blur_preserves_the_mean_of_a_constant_and_sure_picks_more_blur_for_more_noise() {
        let f = vec![7.0; 50];
        assert!(
            gaussian_blur(&f, 10, 5, 1.3)
                .iter()
                .all(|v| (v - 7.0).abs() < 1e-12)
        );
        let (w, h) = (64, 64);
        let clean: Vec<f64> = (0..w * h)
            .map(|i| ((i % w) as f64 * 0.1).sin() * 50.0 + 100.0)
            .collect();
        let low = crate::scenarios::denoise::sunset::add_noise(&clean, 5.0, 1);
        let high = crate::scenarios::denoise::sunset::add_noise(&clean, 40.0, 1);
        let (s_low, _) = blur_by_sure(&low, w, h, 5.0, &CancelFlag::default()).unwrap();
        let (s_high, _) = blur_by_sure(&high, w, h, 40.0, &CancelFlag::default()).unwrap();
        assert!(s_high > s_low, "{s_low} {s_high}");
    }

    #[test]
    fn a_raised_flag_stops_both_baselines() {
        let stop = CancelFlag::default();
        stop.cancel();
        let f = vec![1.0; 64];
        assert!(tv_chambolle(&f, 8, 8, 25.5, &stop).is_err());
        assert!(blur_by_sure(&f, 8, 8, 5.0, &stop).is_err());
    }

    #[test]
    fn dropped_baselines_raise_their_flag() {
        let baselines = Baselines::start(Arc::new(vec![1.0; 64]), 8, 8, 5.0);
        let flag = baselines.abandoned.clone();
        assert!(!flag.is_cancelled());
        drop(baselines);
        assert!(flag.is_cancelled());
    }
}
