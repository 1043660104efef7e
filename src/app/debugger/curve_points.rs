//! The points of the debugger's curves (largest change and its quantiles on log axes, the
//! oscillating fraction), kept between frames and extended by the records new since the last
//! frame: reading them off the whole history each frame cost a lookup by name per record and
//! curve, so a long run slowed the window as it went.
//!
//! A long run's curves are kept reduced: past [`BLOCKS`] blocks of iterations a curve keeps each
//! block's first, lowest, highest and last point, and the block doubles, so the points handed
//! to the plot (which keeps the same four per pixel column) stay a few thousand however long
//! the run. A pixel column spans at least a block while the plot is narrower than [`BLOCKS`]
//! columns, so the drawn picture is the same to within a pixel.
//!
//! Cost per frame O(new records), and O(stored points) when the block doubles; memory at most
//! four points per block and curve.

use crate::app::views::thin::push_first_lowest_highest_last;
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
    pub largest: Reduced,
    /// [`QUANTILES`], log10, in their order.
    pub quantiles: [Reduced; 3],
    pub oscillating: Reduced,
}

/// Blocks of iterations a curve keeps before neighbouring blocks merge.
pub const BLOCKS: usize = 2048;

/// A curve in iteration order, at most four points (first, lowest, highest, last) per block of
/// `block` iterations.
#[derive(Debug, Clone)]
pub struct Reduced {
    block: usize,
    /// The points of every block, in order.
    points: Vec<[f64; 2]>,
    /// Blocks in `points`, and where the last (still open) one starts.
    blocks: usize,
    open: usize,
}

impl Default for Reduced {
    fn default() -> Self {
        Reduced {
            block: 1,
            points: Vec::new(),
            blocks: 0,
            open: 0,
        }
    }
}

impl Reduced {
    /// The points kept, in iteration order.
    pub fn points(&self) -> &[[f64; 2]] {
        &self.points
    }

    fn block_of(&self, x: f64) -> usize {
        (x.max(0.0) as usize) / self.block
    }

    /// Appends `p` (its x, an iteration, not below the last one's).
    fn push(&mut self, p: [f64; 2]) {
        let same_block = self
            .points
            .last()
            .is_some_and(|last| self.block_of(last[0]) == self.block_of(p[0]));
        if !same_block {
            self.open = self.points.len();
            self.blocks += 1;
        }
        self.points.push(p);
        if self.points.len() - self.open > 4 {
            let open = self.points.split_off(self.open);
            push_first_lowest_highest_last(&open, &mut self.points);
        }
        if self.blocks > BLOCKS {
            self.merge();
        }
    }

    /// Doubles the block and keeps each new block's four points.
    fn merge(&mut self) {
        self.block *= 2;
        let old = std::mem::take(&mut self.points);
        self.blocks = 0;
        let mut start = 0;
        while start < old.len() {
            let b = self.block_of(old[start][0]);
            let mut end = start + 1;
            while end < old.len() && self.block_of(old[end][0]) == b {
                end += 1;
            }
            self.open = self.points.len();
            self.blocks += 1;
            push_first_lowest_highest_last(&old[start..end], &mut self.points);
            start = end;
        }
    }
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
fn push_log(points: &mut Reduced, x: f64, v: f64) {
    if v > 0.0 {
        points.push([x, v.log10()]);
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

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
        let q = |c: &CurvePoints| {
            c.quantiles
                .iter()
                .map(|r| r.points().to_vec())
                .collect::<Vec<_>>()
        };
        a.largest.points() == b.largest.points()
            && q(a) == q(b)
            && a.oscillating.points() == b.oscillating.points()
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
        assert_eq!(p.largest.points().len(), 49);
        assert!(p.quantiles[2].points().is_empty());
        assert_eq!(p.largest.points()[0], [1.0, 0.0]);

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

    #[test]
    fn a_long_curve_keeps_every_columns_extent_to_within_a_column() {
        let mut rng = ChaCha8Rng::seed_from_u64(11);
        let mut noise = || rng.random::<f64>();
        let n = 100_000;
        let raw: Vec<[f64; 2]> = (1..=n)
            .map(|i| [i as f64, -(i as f64).log10() + 0.5 * noise()])
            .collect();
        let mut reduced = Reduced::default();
        for &p in &raw {
            reduced.push(p);
        }
        let kept = reduced.points();
        assert!(kept.len() <= 4 * (BLOCKS + 1), "{} points", kept.len());
        assert!(kept.windows(2).all(|w| w[0][0] < w[1][0]));
        assert_eq!(kept[0], raw[0]);
        assert_eq!(kept.last(), raw.last());
        // A plot 1,000 pixels wide over the whole run: every point lies within the extent the
        // kept points give its column and the columns beside it.
        let width = n as f64 / 1000.0;
        let column = |x: f64| (x / width).floor() as i64;
        let mut extent = std::collections::HashMap::<i64, (f64, f64)>::new();
        for p in kept {
            let e = extent.entry(column(p[0])).or_insert((f64::MAX, f64::MIN));
            *e = (e.0.min(p[1]), e.1.max(p[1]));
        }
        for p in &raw {
            let c = column(p[0]);
            let (lo, hi) = (c - 1..=c + 1)
                .filter_map(|k| extent.get(&k))
                .fold((f64::MAX, f64::MIN), |a, e| (a.0.min(e.0), a.1.max(e.1)));
            assert!(lo <= p[1] && p[1] <= hi, "{p:?} outside [{lo}, {hi}]");
        }
        // Short curves are kept whole.
        let mut short = Reduced::default();
        for &p in &raw[..BLOCKS] {
            short.push(p);
        }
        assert_eq!(short.points(), &raw[..BLOCKS]);
    }
}
