//! Image denoising: discrete BP and kernel BP on grids, noisy inputs.

mod discrete_bp;
mod kbp;
mod noisy;
mod scenario;
