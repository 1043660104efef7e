//! Residual maps of a coarse-to-fine run (optical flow's pyramid, Sec. 5 of the SOSMP paper's
//! multi-level set-up): a [`crate::run::residuals::ConvergenceTracker`] restarts on each level's
//! grid, and this keeps the maps of the levels already done, so the debugger's scrubber spans
//! the whole run, coarse levels first. Maps are identified by their global iteration; each
//! level's span (its first iteration, pyramid index and grid) says which level a map belongs to.
//!
//! Memory: the finished levels' maps share [`EARLIER_LEVELS_BUDGET`] and the running level's
//! tracker gets [`RUNNING_LEVEL_BUDGET`], together the debugger's stated
//! [`crate::run::residuals::MAP_BUDGET_BYTES`]. Past its share, the finished level holding the
//! most maps drops every other one (its first and last kept), so every level stays represented
//! across its whole length. Cost per hand-off: O(stored maps).

use std::sync::Arc;

use crate::run::residuals::{ConvergenceView, MAP_BUDGET_BYTES, ResidualMap, ResidualMaps};

/// Bytes the running level's maps may hold.
pub const RUNNING_LEVEL_BUDGET: usize = MAP_BUDGET_BYTES / 2;
/// Bytes the maps of all finished levels may hold together.
pub const EARLIER_LEVELS_BUDGET: usize = MAP_BUDGET_BYTES - RUNNING_LEVEL_BUDGET;

/// Where one pyramid level's iterations are in the run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LevelSpan {
    /// Pyramid index: 0 is the finest (full-resolution) level.
    pub index: usize,
    /// Levels in the pyramid.
    pub count: usize,
    /// The run's (global) iteration number of the level's first iteration.
    pub first_iteration: usize,
    /// The level's grid (width, height).
    pub grid: (usize, usize),
}

impl LevelSpan {
    /// The level's place counted coarse to fine, from 1 (the order in which the run visits them).
    pub fn ordinal(&self) -> usize {
        self.count - self.index.min(self.count - 1)
    }

    /// "level 2 of 4 (146 x 97)".
    pub fn label(&self) -> String {
        format!(
            "level {} of {} ({} x {})",
            self.ordinal(),
            self.count,
            self.grid.0,
            self.grid.1
        )
    }
}

/// The span `iteration` belongs to (the last one starting at or before it).
pub fn span_of(spans: &[LevelSpan], iteration: usize) -> Option<&LevelSpan> {
    spans.iter().rev().find(|s| s.first_iteration <= iteration)
}

/// The maps of the finished levels and every level's span.
#[derive(Debug, Clone, Default)]
pub struct PyramidMaps {
    /// One entry per finished level, oldest (coarsest) first.
    earlier: Vec<Vec<Arc<ResidualMap>>>,
    spans: Vec<LevelSpan>,
}

impl PyramidMaps {
    /// Maps of a run whose first level is `first`.
    pub fn starting(first: LevelSpan) -> Self {
        PyramidMaps {
            earlier: Vec::new(),
            spans: vec![first],
        }
    }

    /// Starts recording `span` (call before its first iteration is observed).
    pub fn start_level(&mut self, span: LevelSpan) {
        self.spans.push(span);
    }

    /// Keeps the maps of the level that just ended (its tracker's), within the budget.
    pub fn finish_level(&mut self, maps: Option<&ResidualMaps>) {
        let Some(maps) = maps else {
            return;
        };
        self.earlier.push(maps.maps().to_vec());
        while self.earlier_bytes() > EARLIER_LEVELS_BUDGET {
            let Some(fullest) = self
                .earlier
                .iter_mut()
                .filter(|m| m.len() > 2)
                .max_by_key(|m| m.len())
            else {
                break;
            };
            let last = fullest.len() - 1;
            let mut i = 0;
            fullest.retain(|_| {
                let keep = i % 2 == 0 || i == last;
                i += 1;
                keep
            });
        }
    }

    /// Bytes held by the finished levels' maps.
    pub fn earlier_bytes(&self) -> usize {
        self.earlier.iter().flatten().map(|m| m.bytes()).sum()
    }

    pub fn spans(&self) -> &[LevelSpan] {
        &self.spans
    }

    /// Puts the finished levels' maps before the running level's in `view` (whose maps are the
    /// running level's tracker's), with the spans and the bytes of both; `image` becomes the
    /// view's grid, so a click on any level's map picks a full-resolution pixel.
    pub fn compose(&self, view: &mut ConvergenceView, image: (usize, usize)) {
        let mut maps: Vec<Arc<ResidualMap>> = self.earlier.iter().flatten().cloned().collect();
        maps.append(&mut view.maps);
        view.maps = maps;
        view.map_bytes += self.earlier_bytes();
        view.map_budget_bytes += EARLIER_LEVELS_BUDGET;
        view.levels = self.spans.clone();
        view.grid = Some(image);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::run::residuals::MessageChanges;

    fn record(maps: &mut ResidualMaps, iteration: usize, value: f64) {
        let (w, h) = maps.grid;
        let change = vec![value; w * h];
        let target: Vec<usize> = (0..w * h).collect();
        let changes = MessageChanges {
            change: &change,
            signed: &change,
            target: &target,
        };
        maps.record(iteration, &changes, &[]);
    }

    fn span(index: usize, first_iteration: usize, grid: (usize, usize)) -> LevelSpan {
        LevelSpan {
            index,
            count: 3,
            first_iteration,
            grid,
        }
    }

    #[test]
    fn levels_are_composed_coarse_first_and_spans_name_each_map() {
        let mut pyramid = PyramidMaps::default();
        pyramid.start_level(span(2, 1, (8, 6)));
        let mut coarse = ResidualMaps::new((8, 6), RUNNING_LEVEL_BUDGET);
        for t in 1..=4 {
            record(&mut coarse, t, 1.0 / t as f64);
        }
        pyramid.finish_level(Some(&coarse));
        pyramid.start_level(span(1, 5, (16, 12)));
        let mut middle = ResidualMaps::new((16, 12), RUNNING_LEVEL_BUDGET);
        for t in 5..=7 {
            record(&mut middle, t, 0.5);
        }
        let mut view = ConvergenceView {
            maps: middle.maps().to_vec(),
            map_bytes: middle.bytes(),
            map_budget_bytes: RUNNING_LEVEL_BUDGET,
            ..ConvergenceView::default()
        };
        pyramid.compose(&mut view, (32, 24));
        let iterations: Vec<usize> = view.maps.iter().map(|m| m.iteration).collect();
        assert_eq!(iterations, [1, 2, 3, 4, 5, 6, 7]);
        assert_eq!((view.maps[0].width, view.maps[0].height), (8, 6));
        assert_eq!((view.maps[6].width, view.maps[6].height), (16, 12));
        assert_eq!(view.grid, Some((32, 24)));
        assert_eq!(view.map_budget_bytes, MAP_BUDGET_BYTES);
        assert_eq!(view.map_bytes, coarse.bytes() + middle.bytes());
        assert_eq!(span_of(&view.levels, 4).unwrap().index, 2);
        assert_eq!(span_of(&view.levels, 5).unwrap().index, 1);
        assert_eq!(
            span_of(&view.levels, 4).unwrap().label(),
            "level 1 of 3 (8 x 6)"
        );
        assert_eq!(span_of(&view.levels, 0), None);
    }

    #[test]
    fn finished_levels_are_thinned_to_their_share_keeping_each_levels_ends() {
        let mut pyramid = PyramidMaps::default();
        // 128 x 128 cells: 80 kB a map, so a few hundred maps pass the share.
        let grid = (128, 128);
        let mut first_of_level = Vec::new();
        let mut last_of_level = Vec::new();
        let mut t = 0;
        for level in 0..3 {
            pyramid.start_level(span(2 - level, t + 1, grid));
            let mut maps = ResidualMaps::new(grid, RUNNING_LEVEL_BUDGET);
            first_of_level.push(t + 1);
            for _ in 0..300 {
                t += 1;
                record(&mut maps, t, 1.0);
            }
            last_of_level.push(t);
            pyramid.finish_level(Some(&maps));
        }
        assert!(pyramid.earlier_bytes() <= EARLIER_LEVELS_BUDGET);
        let mut view = ConvergenceView::default();
        pyramid.compose(&mut view, grid);
        let kept: Vec<usize> = view.maps.iter().map(|m| m.iteration).collect();
        for (first, last) in first_of_level.iter().zip(&last_of_level) {
            assert!(
                kept.contains(first),
                "level starting at {first} kept its first map"
            );
            assert!(
                kept.contains(last),
                "level ending at {last} kept its last map"
            );
        }
        assert!(kept.windows(2).all(|w| w[0] < w[1]), "in run order");
    }
}
