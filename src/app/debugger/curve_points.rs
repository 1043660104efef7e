//! The points of the debugger's curves (largest change and its quantiles on log axes, the
//! oscillating fraction), kept between frames and extended by the records new since the last
//! frame: reading them off the whole history each frame cost a lookup by name per record and
//! curve, so a long run slowed the window as it went.
//!
//! Cost per frame O(new records); memory five points per record.

use crate::scenarios::IterationRecord;

/// The residual quantiles drawn, with the metric each reads.
pub const QUANTILES: [(&str, &str); 3] = [
    ("p50", "residual_p50"),
    ("p90", "residual_p90"),
    ("p99", "residual_p99"),
];

/// `[iteration, value]` points of one run's curves, log10 of the value on the log axes.
#[derive(Debug, Default)]
pub struct CurvePoints {
    run: Option<u64>,
    /// Records read so far, and the last one's iteration and seconds: a history that no
    /// longer holds it there (a new run, a history cut back) is read again from its start.
    read: usize,
    last: Option<(usize, u64)>,
    /// The largest change (log10; iterations with none above zero left out).
    pub largest: Vec<[f64; 2]>,
    /// [`QUANTILES`], log10, in their order.
    pub quantiles: [Vec<[f64; 2]>; 3],
    pub oscillating: Vec<[f64; 2]>,
}

impl CurvePoints {
    /// Brings the points up to `history`, the whole history of run `run`.
    pub fn update(&mut self, run: u64, history: &[IterationRecord]) {
        let stamp = |r: &IterationRecord| (r.iter, r.seconds.to_bits());
        let continues = self.run == Some(run)
            && self.read <= history.len()
            && (self.read == 0 || history.get(self.read - 1).map(stamp) == self.last);
        if !continues {
            *self = CurvePoints {
                run: Some(run),
                ..CurvePoints::default()
            };
        }
        for r in &history[self.read..] {
            let x = r.iter as f64;
            push_log(&mut self.largest, x, r.residual);
            for (points, (_, key)) in self.quantiles.iter_mut().zip(QUANTILES) {
                if let Some(&v) = r.metrics.get(key) {
                    push_log(points, x, v);
                }
            }
            if let Some(&v) = r.metrics.get("oscillating_fraction") {
                self.oscillating.push([x, v]);
            }
        }
        self.read = history.len();
        self.last = history.last().map(stamp);
    }
}

/// Appends `[x, log10 v]` when `v` is above zero (NaN is not).
fn push_log(points: &mut Vec<[f64; 2]>, x: f64, v: f64) {
    if v > 0.0 {
        points.push([x, v.log10()]);
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;

    fn record(iter: usize, residual: f64) -> IterationRecord {
        IterationRecord {
            iter,
            seconds: iter as f64 * 0.01,
            residual,
            metrics: BTreeMap::from([
                ("residual_p50".to_string(), residual / 4.0),
                ("residual_p90".to_string(), residual / 2.0),
                ("oscillating_fraction".to_string(), 0.1),
            ]),
        }
    }

    /// The points read in pieces equal those read from the whole history at once.
    fn whole(run: u64, history: &[IterationRecord]) -> CurvePoints {
        let mut p = CurvePoints::default();
        p.update(run, history);
        p
    }

    fn same(a: &CurvePoints, b: &CurvePoints) -> bool {
        a.largest == b.largest && a.quantiles == b.quantiles && a.oscillating == b.oscillating
    }

    #[test]
    fn appending_matches_reading_everything_and_a_new_run_starts_over() {
        let history: Vec<IterationRecord> = (1..=50)
            .map(|i| record(i, if i == 7 { 0.0 } else { 1.0 / i as f64 }))
            .collect();
        let mut p = CurvePoints::default();
        for n in [0, 1, 10, 10, 33, 50] {
            p.update(3, &history[..n]);
        }
        assert!(same(&p, &whole(3, &history)));
        // Iteration 7's zero has no log; p99 was never recorded.
        assert_eq!(p.largest.len(), 49);
        assert!(p.quantiles[2].is_empty());
        assert_eq!(p.largest[0], [1.0, 0.0]);

        // Another run as long as this one: read again.
        let other: Vec<IterationRecord> = (1..=50).map(|i| record(i, 2.0)).collect();
        p.update(4, &other);
        assert!(same(&p, &whole(4, &other)));
        // The same run's history cut back and grown past where it was, with other records
        // (their iterations took other times): read again.
        let mut replaced = other.clone();
        replaced.truncate(20);
        replaced.extend((21..=60).map(|i| IterationRecord {
            seconds: 100.0 + i as f64,
            ..record(i, 5.0)
        }));
        p.update(4, &replaced);
        assert!(same(&p, &whole(4, &replaced)));
    }
}
