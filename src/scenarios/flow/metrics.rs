//! Flow accuracy against ground truth (Baker et al. 2011): average endpoint error (EPE, pixels)
//! and average angular error (AAE, degrees, the angle between `(u, v, 1)` and
//! `(u_gt, v_gt, 1)`), over the pixels whose ground truth is known. O(pixels).

use rayon::prelude::*;

use crate::io::FlowField;
use crate::io::flo::component_known;

/// EPE and AAE of an estimate, and how many pixels they average over.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FlowErrors {
    pub epe: f64,
    pub aae: f64,
    pub counted: usize,
}

/// Endpoint error of one pixel.
pub fn endpoint_error(u: f64, v: f64, ug: f64, vg: f64) -> f64 {
    let (a, b) = (u - ug, v - vg);
    (a * a + b * b).sqrt()
}

/// Angular error of one pixel, in degrees.
pub fn angular_error(u: f64, v: f64, ug: f64, vg: f64) -> f64 {
    let dot = u * ug + v * vg + 1.0;
    let norm = ((u * u + v * v + 1.0) * (ug * ug + vg * vg + 1.0)).sqrt();
    (dot / norm).clamp(-1.0, 1.0).acos().to_degrees()
}

/// EPE and AAE of `(u, v)` against `gt`, skipping unknown ground truth (magnitude above 1e9).
/// NaN when no pixel counts.
pub fn flow_errors(u: &[f64], v: &[f64], gt: &FlowField) -> FlowErrors {
    // Fixed chunks summed in order: the same errors whatever the thread count or work
    // stealing (a replay repeats them exactly).
    const CHUNK: usize = 1 << 14;
    let n = gt.len();
    let parts: Vec<(f64, f64, usize)> = (0..n.div_ceil(CHUNK))
        .into_par_iter()
        .map(|c| {
            (c * CHUNK..((c + 1) * CHUNK).min(n))
                .filter(|&i| component_known(gt.u[i]) && component_known(gt.v[i]))
                .fold((0.0, 0.0, 0), |a, i| {
                    (
                        a.0 + endpoint_error(u[i], v[i], gt.u[i], gt.v[i]),
                        a.1 + angular_error(u[i], v[i], gt.u[i], gt.v[i]),
                        a.2 + 1,
                    )
                })
        })
        .collect();
    let (epe, aae, counted) = parts
        .iter()
        .fold((0.0, 0.0, 0), |a, b| (a.0 + b.0, a.1 + b.1, a.2 + b.2));
    let c = counted as f64;
    FlowErrors {
        epe: epe / c,
        aae: aae / c,
        counted,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errors_of_simple_fields() {
        assert!((angular_error(1.0, 0.0, 1.0, 0.0)).abs() < 1e-6);
        // (0,0,1) against (1,0,1): 45 degrees.
        assert!((angular_error(0.0, 0.0, 1.0, 0.0) - 45.0).abs() < 1e-9);
        let gt = FlowField::new(2, 1, vec![3.0, 1e10], vec![4.0, 0.0]).unwrap();
        let e = flow_errors(&[0.0, 0.0], &[0.0, 0.0], &gt);
        assert_eq!(e.counted, 1);
        assert!((e.epe - 5.0).abs() < 1e-12);
    }
}
