//! Fitting the rate of the error curves: least-squares slopes of log(e_t - floor) against log t
//! (overall and per decade), the graph diameter, and the Theorem 1 explanation (eq. 26) of why
//! a deep tree's slope is shallower than -1. Cost O(T) per fit.

use crate::inference::sosmp::gains::GainSummary;
use crate::model::NodeId;

/// Least-squares slope of `log(y_t - floor)` against `log t` over `t ∈ [from, len]` (1-based t,
/// `y[t - 1]`), skipping points where `y_t <= floor`. `None` with fewer than 3 usable points.
pub fn fit_slope(y: &[f64], floor: f64, from: usize) -> Option<f64> {
    fit_slope_points(y, floor, from).0
}

/// [`fit_slope`] and the number of points it used (those above the floor).
pub fn fit_slope_points(y: &[f64], floor: f64, from: usize) -> (Option<f64>, usize) {
    fit_slope_range(y, floor, from, y.len())
}

/// [`fit_slope_points`] over `t ∈ [from, to]` only.
pub fn fit_slope_range(y: &[f64], floor: f64, from: usize, to: usize) -> (Option<f64>, usize) {
    let pts: Vec<(f64, f64)> = y
        .iter()
        .enumerate()
        .map(|(i, &v)| (i + 1, v - floor))
        .filter(|&(t, d)| t >= from && t <= to && d > 0.0 && d.is_finite())
        .map(|(t, d)| ((t as f64).ln(), d.ln()))
        .collect();
    if pts.len() < 3 {
        return (None, pts.len());
    }
    let n = pts.len() as f64;
    let mx = pts.iter().map(|p| p.0).sum::<f64>() / n;
    let my = pts.iter().map(|p| p.1).sum::<f64>() / n;
    let sxx: f64 = pts.iter().map(|p| (p.0 - mx) * (p.0 - mx)).sum();
    let sxy: f64 = pts.iter().map(|p| (p.0 - mx) * (p.1 - my)).sum();
    ((sxx > 0.0).then(|| sxy / sxx), pts.len())
}

/// [`fit_slope`] kept up to date point by point, for a curve that grows while a window shows
/// its slope: the same points and the same least-squares line, with the means and co-moments
/// updated per point (Welford's stable one-pass form) instead of read again from the whole
/// curve. O(1) per point. Equal to [`fit_slope`] up to rounding.
#[derive(Debug, Clone)]
pub struct RunningSlope {
    floor: f64,
    from: usize,
    /// Points pushed so far (`t` of the next one is `seen + 1`).
    seen: usize,
    used: usize,
    mean_x: f64,
    mean_y: f64,
    /// `Σ (x - mean_x)²` and `Σ (x - mean_x)(y - mean_y)` over the points used.
    sxx: f64,
    sxy: f64,
}

impl RunningSlope {
    pub fn new(floor: f64, from: usize) -> Self {
        RunningSlope {
            floor,
            from,
            seen: 0,
            used: 0,
            mean_x: 0.0,
            mean_y: 0.0,
            sxx: 0.0,
            sxy: 0.0,
        }
    }

    /// Adds `y_t` for the next `t`.
    pub fn push(&mut self, y: f64) {
        self.seen += 1;
        let d = y - self.floor;
        if self.seen < self.from || !(d > 0.0 && d.is_finite()) {
            return;
        }
        let (x, y) = ((self.seen as f64).ln(), d.ln());
        self.used += 1;
        let n = self.used as f64;
        let dx = x - self.mean_x;
        self.mean_x += dx / n;
        self.mean_y += (y - self.mean_y) / n;
        self.sxx += dx * (x - self.mean_x);
        self.sxy += dx * (y - self.mean_y);
    }

    /// The slope so far, `None` with fewer than 3 usable points.
    pub fn slope(&self) -> Option<f64> {
        (self.used >= 3 && self.sxx > 0.0).then(|| self.sxy / self.sxx)
    }
}

/// Local slopes of `log(y_t - floor)` over the decades `[from, 10 from]`, `[10 from, 100 from]`,
/// ... up to `len` (a last shorter window ends at `len`): `(start, end, slope, points used)`.
/// A slope that steepens from one window to the next is a transient, not the asymptotic rate.
pub fn slope_windows(
    y: &[f64],
    floor: f64,
    from: usize,
) -> Vec<(usize, usize, Option<f64>, usize)> {
    let mut out = Vec::new();
    let mut lo = from.max(1);
    while lo < y.len() {
        let hi = (lo * 10).min(y.len());
        let (s, used) = fit_slope_range(y, floor, lo, hi);
        out.push((lo, hi, s, used));
        lo = hi;
    }
    out
}

/// The number of edges on the longest shortest path (two breadth-first searches: exact on a
/// tree, a lower bound with cycles). O(nodes + edges).
pub fn graph_diameter(graph: &crate::model::Graph) -> usize {
    let depths = |root: NodeId| {
        let mut depth = vec![0usize; graph.num_nodes()];
        let mut far = (root, 0);
        for (node, parent) in graph.bfs_order(root) {
            if let Some(p) = parent {
                depth[node] = depth[p] + 1;
            }
            if depth[node] > far.1 {
                far = (node, depth[node]);
            }
        }
        far
    };
    let (end, _) = depths(0);
    depths(end).1
}

/// One paragraph on why the fitted slope is not -1: Theorem 1's bound and this problem's gains.
pub fn slope_explanation(
    slope: Option<f64>,
    gains: Option<&GainSummary>,
    diameter: usize,
    tree: bool,
) -> String {
    let slope = slope.map_or("not fitted yet".to_string(), |s| format!("{s:.2}"));
    let gains = match gains {
        Some(g) => format!(
            "Here the per-edge gains of the expected update at its fixed point (spectral norm of \
             dG(v→u)/da(w→v), {} pairs) have median {:.2}, geometric mean {:.2}, maximum {:.2}.",
            g.count, g.median, g.geometric_mean, g.max
        ),
        None => "Here no message has an input (each leaves a leaf): there is no gain, and the \
                 error falls like 1/t from the start."
            .to_string(),
    };
    let theorem = if tree {
        "Theorem 1 (eq. 26) bounds the error by (6 Σ B_j²) (I − log t · N)^-1 (N1 + 16) / t plus \
         the floor, N the tree's nilpotent matrix of per-edge constants: (I − log t · N)^-1 = \
         Σ_k (log t)^k N^k is a polynomial in log t of degree up to the depth"
    } else {
        "Theorem 1 is for trees (this graph has cycles; Theorem 2 gives (log t)/t for a \
         contractive update); on a tree its bound (I − log t · N)^-1 / t is a polynomial in \
         log t of degree up to the depth"
    };
    format!(
        "Fitted slope {slope}, not −1: {theorem} ({diameter} edges here), so the rate is 1/t only \
         \"apart from logarithmic factors\". {gains} A message d edges from a leaf carries the \
         noise-free transient of its upstream errors, of order (J ln t)^(d−1) / ((d−1)! t) for \
         gains J: with gains near or above 1/2 on a deep tree it dominates at any practical t, \
         and the slope bends from about −1 on short chains towards −0.5 on long ones (the depth \
         sweep)."
    )
}

#[cfg(test)]
mod tests {
    use super::super::SLOPE_FROM;
    use super::*;
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    #[test]
    fn the_running_slope_is_the_fit_over_the_curve_so_far() {
        let mut rng = ChaCha8Rng::seed_from_u64(7);
        let floor = 0.01;
        // A noisy 1/t curve over a floor, with points at or below the floor and a NaN, which
        // both fits skip.
        let curve: Vec<f64> = (1..=20_000)
            .map(|t| match t {
                500 => f64::NAN,
                t if t % 97 == 0 => floor,
                t => floor + (3.0 / t as f64) * (1.0 + 0.3 * (rng.random::<f64>() - 0.5)),
            })
            .collect();
        let mut running = RunningSlope::new(floor, SLOPE_FROM);
        for (i, &y) in curve.iter().enumerate() {
            running.push(y);
            let len = i + 1;
            if len < 30 || len % 997 == 0 || len == curve.len() {
                let whole = fit_slope(&curve[..len], floor, SLOPE_FROM);
                match (running.slope(), whole) {
                    (None, None) => {}
                    (Some(a), Some(b)) => {
                        assert!((a - b).abs() < 1e-9 * b.abs(), "{a} {b} at {len}")
                    }
                    other => panic!("{other:?} at {len}"),
                }
            }
        }
        let last = running.slope().expect("fitted");
        assert!((last + 1.0).abs() < 0.05, "{last}");
    }
}
