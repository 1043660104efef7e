//! Per-message convergence diagnostics, shared by every message-passing engine: the change of
//! each message in one iteration, an oscillation detector on the sign of successive changes,
//! residual quantiles, and downsampled per-node residual maps kept within a memory budget.
//!
//! Oscillation: each message's change `Δ_t = m_t - m_{t-1}` is summarised by its projection
//! `s_t = w · Δ_t` on fixed weights (so a message flipping between two values gives alternating
//! signs whatever its parametrisation). A message oscillates with period `p` (2..=4) when the
//! sign pattern of its last [`HISTORY`] changes repeats with period `p` (a transient of a few
//! iterations is not enough), is not constant (a constant
//! sign is a monotone drift), returns to where it started (`|Σ s| <= ½ Σ |s|` over one period)
//! and does not decay (`Σ |s|` over the last period `>= 0.9 ×` the period before). A message
//! converging with an oscillating but shrinking change (rate `r`, `r^p < 0.9`) is not flagged.
//! Changes below [`NOISE_FLOOR`] count as zero.
//!
//! A scenario keeps a [`ConvergenceTracker`] (grid scenarios: per-node maps; graph scenarios,
//! [`ConvergenceTracker::for_graph`]: per-message frames, `run::edge_frames`) and feeds it each
//! iteration's [`MessageChanges`]; its statistics go into the iteration record
//! (`residual_p50/p90/p99`, `oscillating_fraction`) and a [`ConvergenceView`] rides on every
//! snapshot for the window's debugger panel (`app::debugger`). Maps are max-pooled to at most
//! [`MAP_SIDE`] cells a side and kept within [`MAP_BUDGET_BYTES`] per run; past it every other
//! map is dropped, so the stored maps span the run evenly. They are f32: drawn only.
//!
//! Cost per iteration: O(M) for M messages (quantiles by selection, not sorting); memory
//! `HISTORY * 4 + 2` bytes per message for the detector (the changes in f32 and two sign
//! bytes), plus the stored maps.

use std::sync::Arc;

use rayon::prelude::*;
use serde::{Deserialize, Serialize};

pub use super::edge_frames::{ConvergenceGraph, EDGE_BUDGET_BYTES, EdgeFrame, EdgeFrames};

/// Signed changes kept per message: enough to compare two periods of length 4.
pub const HISTORY: usize = 8;
// The sign history of a message is one byte.
const _: () = assert!(HISTORY <= u8::BITS as usize);
/// The longest cycle detected.
pub const MAX_PERIOD: usize = 4;
/// Changes smaller than this are numerical noise, not oscillation.
pub const NOISE_FLOOR: f64 = 1e-9;
/// A period's total |change| must stay above this share of the period before.
const NON_DECAY: f64 = 0.9;
/// Longest side of a stored residual map (maps are max-pooled down to it).
pub const MAP_SIDE: usize = 128;
/// Default budget for the stored maps of one run.
pub const MAP_BUDGET_BYTES: usize = 64 << 20;

/// The fixed projection weight of coordinate `i` of a message (golden-ratio sequence in
/// [-½, ½): never constant, so normalised messages whose changes sum to zero still project).
pub fn projection_weight(i: usize) -> f64 {
    ((i as f64 + 1.0) * 0.618_033_988_749_895).fract() - 0.5
}

/// `(L1 norm, signed projection)` of the change from `old` to `new`.
pub fn change_of(old: &[f64], new: &[f64]) -> (f64, f64) {
    let mut l1 = 0.0;
    let mut signed = 0.0;
    for (i, (a, b)) in old.iter().zip(new).enumerate() {
        let d = b - a;
        l1 += d.abs();
        signed += projection_weight(i) * d;
    }
    (l1, signed)
}

/// [`MessageChanges`] held by value: an engine that keeps its change record in another form
/// (f32 per slot) hands out the messages' changes, or a sample of them, like this.
#[derive(Debug, Clone, Default)]
pub struct OwnedChanges {
    pub change: Vec<f64>,
    pub signed: Vec<f64>,
    pub target: Vec<usize>,
}

impl OwnedChanges {
    pub fn as_changes(&self) -> MessageChanges<'_> {
        MessageChanges {
            change: &self.change,
            signed: &self.signed,
            target: &self.target,
        }
    }
}

/// What an engine reports about the messages of its last iteration, one entry per message.
#[derive(Debug, Clone, Copy)]
pub struct MessageChanges<'a> {
    /// Size of each message's change (the engine's norm).
    pub change: &'a [f64],
    /// Each message's change projected on [`projection_weight`] (its sign matters).
    pub signed: &'a [f64],
    /// The node each message goes into.
    pub target: &'a [usize],
}

/// The last [`HISTORY`] signed changes of every message.
#[derive(Debug, Clone, Default)]
pub struct OscillationDetector {
    /// `history[m * HISTORY + (k % HISTORY)]`: change number `k` of message `m`.
    history: Vec<f32>,
    /// Per message, bit k: the k-th most recent change is above the noise floor.
    moving: Vec<u8>,
    /// Per message, bit k: the k-th most recent change is above the noise floor and positive.
    positive: Vec<u8>,
    observed: usize,
    oscillating: Vec<bool>,
}

impl OscillationDetector {
    pub fn new(num_messages: usize) -> Self {
        OscillationDetector {
            history: vec![0.0; num_messages * HISTORY],
            moving: vec![0; num_messages],
            positive: vec![0; num_messages],
            observed: 0,
            oscillating: vec![false; num_messages],
        }
    }

    pub fn num_messages(&self) -> usize {
        self.oscillating.len()
    }

    /// Records one iteration's signed changes (one per message) and re-evaluates every message.
    pub fn observe(&mut self, signed: &[f64]) {
        let n = self.num_messages();
        assert_eq!(signed.len(), n, "one signed change per message");
        let slot = self.observed % HISTORY;
        for (m, s) in signed.iter().enumerate() {
            // Stored as f32; the signs are read from what is stored.
            let stored = *s as f32;
            self.history[m * HISTORY + slot] = stored;
            let moving = f64::from(stored).abs() >= NOISE_FLOOR;
            self.moving[m] = self.moving[m] << 1 | u8::from(moving);
            self.positive[m] = self.positive[m] << 1 | u8::from(moving && stored > 0.0);
        }
        self.observed += 1;
        // Each message's verdict reads only its own history: in parallel on large graphs.
        let mut oscillating = std::mem::take(&mut self.oscillating);
        let this = &*self;
        oscillating
            .par_iter_mut()
            .with_min_len(4096)
            .enumerate()
            .for_each(|(m, o)| *o = this.period_of(m).is_some());
        self.oscillating = oscillating;
    }

    /// The `k`-th most recent change of message `m` (`k = 0` is the newest).
    fn recent(&self, m: usize, k: usize) -> f64 {
        let idx = (self.observed - 1 - k) % HISTORY;
        f64::from(self.history[m * HISTORY + idx])
    }

    /// The shortest period (2..=[`MAX_PERIOD`]) with which message `m` is oscillating now.
    pub fn period_of(&self, m: usize) -> Option<usize> {
        if self.observed < HISTORY {
            return None;
        }
        let (moving, positive) = (u32::from(self.moving[m]), u32::from(self.positive[m]));
        for p in 2..=MAX_PERIOD {
            // The sign pattern must repeat with period p across every stored change: changes
            // k and k + p both moving, with one sign, for every k < HISTORY - p.
            let span = (1u32 << (HISTORY - p)) - 1;
            let repeats = (moving & span) == span
                && ((moving >> p) & span) == span
                && ((positive ^ (positive >> p)) & span) == 0;
            // The last p changes are moving (span covers them), so their signs are the bits of
            // `positive`: both signs must occur, read from the bits before any value is.
            let period = (1u32 << p) - 1;
            let both_signs = positive & period != 0 && positive & period != period;
            if !(repeats && both_signs) {
                continue;
            }
            let (mut recent_abs, mut before_abs, mut recent_sum) = (0.0, 0.0, 0.0);
            for k in 0..p {
                let (a, b) = (self.recent(m, k), self.recent(m, k + p));
                recent_abs += a.abs();
                recent_sum += a;
                before_abs += b.abs();
            }
            if recent_sum.abs() <= 0.5 * recent_abs && recent_abs >= NON_DECAY * before_abs {
                return Some(p);
            }
        }
        None
    }

    /// Whether each message was oscillating at the last observation.
    pub fn oscillating(&self) -> &[bool] {
        &self.oscillating
    }

    /// Share of messages oscillating at the last observation (0 before any).
    pub fn fraction(&self) -> f64 {
        let n = self.num_messages();
        if n == 0 {
            return 0.0;
        }
        self.oscillating.iter().filter(|o| **o).count() as f64 / n as f64
    }

    /// The last up to [`HISTORY`] signed changes of message `m`, oldest first.
    pub fn history_of(&self, m: usize) -> Vec<f64> {
        let k = self.observed.min(HISTORY);
        (0..k).rev().map(|i| self.recent(m, i)).collect()
    }
}

/// The `q`-quantiles of `values` (each `q` in [0, 1], nearest rank), by selection on a copy.
/// Ascending `qs` narrow the search: after selecting one rank everything above it sits to its
/// right, so the next is selected there (p50, p90, p99 cost about 1.6 passes, not 3).
pub fn quantiles(values: &[f64], qs: &[f64]) -> Vec<f64> {
    if values.is_empty() {
        return vec![0.0; qs.len()];
    }
    let mut work: Vec<f64> = values.to_vec();
    let n = work.len();
    let mut floor = 0;
    qs.iter()
        .map(|q| {
            let rank = ((q.clamp(0.0, 1.0) * n as f64).ceil() as usize).clamp(1, n) - 1;
            if rank < floor {
                floor = 0;
            }
            let value = *work[floor..]
                .select_nth_unstable_by(rank - floor, |a, b| a.total_cmp(b))
                .1;
            floor = rank;
            value
        })
        .collect()
}

/// The per-iteration numbers written into results.json.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct ConvergenceStats {
    pub residual_p50: f64,
    pub residual_p90: f64,
    pub residual_p99: f64,
    pub oscillating_fraction: f64,
}

impl ConvergenceStats {
    /// The stats as `(metric name, value)` pairs for an `IterationRecord`.
    pub fn metrics(&self) -> [(&'static str, f64); 4] {
        [
            ("residual_p50", self.residual_p50),
            ("residual_p90", self.residual_p90),
            ("residual_p99", self.residual_p99),
            ("oscillating_fraction", self.oscillating_fraction),
        ]
    }
}

/// One stored, downsampled residual map: per cell the largest change of any message into a
/// node of the cell, and the share of those messages oscillating.
#[derive(Debug, Clone, PartialEq)]
pub struct ResidualMap {
    pub iteration: usize,
    pub width: usize,
    pub height: usize,
    pub residual: Vec<f32>,
    /// Share of the cell's incoming messages that oscillate, 0..=255.
    pub oscillating: Vec<u8>,
}

impl ResidualMap {
    pub fn bytes(&self) -> usize {
        self.residual.len() * 4 + self.oscillating.len() + std::mem::size_of::<Self>()
    }
}

/// Residual maps of a grid run, one per stored iteration, within a byte budget: when the
/// budget would be exceeded every other map is dropped (the stride doubles), so the maps
/// always span the whole run evenly and the newest iteration is always kept.
#[derive(Debug, Clone)]
pub struct ResidualMaps {
    /// Full grid size and the pooled size.
    pub grid: (usize, usize),
    pub pooled: (usize, usize),
    budget_bytes: usize,
    stride: usize,
    maps: Vec<Arc<ResidualMap>>,
}

impl ResidualMaps {
    pub fn new(grid: (usize, usize), budget_bytes: usize) -> Self {
        let (w, h) = grid;
        let factor = w.max(h).div_ceil(MAP_SIDE).max(1);
        ResidualMaps {
            grid,
            pooled: (w.div_ceil(factor).max(1), h.div_ceil(factor).max(1)),
            budget_bytes,
            stride: 1,
            maps: Vec::new(),
        }
    }

    /// Pool factor (full pixels per map cell along each side).
    pub fn factor(&self) -> usize {
        self.grid.0.div_ceil(self.pooled.0).max(1)
    }

    /// Stores the map of `iteration` from per-message changes (targets are grid node ids
    /// `y * width + x`) unless the current stride skips it.
    pub fn record(&mut self, iteration: usize, changes: &MessageChanges, oscillating: &[bool]) {
        // The newest iteration is always shown; an off-stride newest map gives way to the next.
        if self.maps.len() > 1
            && self
                .maps
                .last()
                .is_some_and(|last| !last.iteration.is_multiple_of(self.stride))
        {
            self.maps.pop();
        }
        let map = self.pool(iteration, changes, oscillating);
        self.maps.push(Arc::new(map));
        while self.bytes() > self.budget_bytes && self.maps.len() > 2 {
            self.stride *= 2;
            let stride = self.stride;
            let last = self.maps.len() - 1;
            let mut i = 0;
            self.maps.retain(|m| {
                let keep = m.iteration.is_multiple_of(stride) || i == last || i == 0;
                i += 1;
                keep
            });
        }
    }

    fn pool(
        &self,
        iteration: usize,
        changes: &MessageChanges,
        oscillating: &[bool],
    ) -> ResidualMap {
        let (w, _) = self.grid;
        let (pw, ph) = self.pooled;
        let f = self.factor();
        let mut residual = vec![0.0f32; pw * ph];
        let mut count = vec![0u32; pw * ph];
        let mut osc = vec![0u32; pw * ph];
        for (m, (&c, &t)) in changes.change.iter().zip(changes.target).enumerate() {
            let cell = (t / w / f) * pw + (t % w) / f;
            if cell >= residual.len() {
                continue;
            }
            residual[cell] = residual[cell].max(c as f32);
            count[cell] += 1;
            osc[cell] += u32::from(oscillating.get(m).copied().unwrap_or(false));
        }
        let oscillating = osc
            .iter()
            .zip(&count)
            .map(|(&o, &c)| {
                if c == 0 {
                    0
                } else {
                    ((o * 255).div_ceil(c)).min(255) as u8
                }
            })
            .collect();
        ResidualMap {
            iteration,
            width: pw,
            height: ph,
            residual,
            oscillating,
        }
    }

    /// Bytes held by the stored maps.
    pub fn bytes(&self) -> usize {
        self.maps.iter().map(|m| m.bytes()).sum()
    }

    pub fn budget_bytes(&self) -> usize {
        self.budget_bytes
    }

    pub fn maps(&self) -> &[Arc<ResidualMap>] {
        &self.maps
    }

    /// The stored map closest to `iteration` (at or before it when one exists).
    pub fn at(&self, iteration: usize) -> Option<&Arc<ResidualMap>> {
        let i = self.maps.partition_point(|m| m.iteration <= iteration);
        self.maps.get(i.saturating_sub(1))
    }
}

/// Everything a scenario keeps to diagnose one engine's convergence.
#[derive(Debug, Clone)]
pub struct ConvergenceTracker {
    detector: OscillationDetector,
    maps: Option<ResidualMaps>,
    /// Per-message changes (and values) per stored iteration, for graph scenarios.
    edges: Option<EdgeFrames>,
    /// How graph scenarios draw their nodes and messages.
    graph: Option<Arc<ConvergenceGraph>>,
    /// Per-message change of the last iteration (for message histories and edge colours).
    last_change: Vec<f64>,
}

impl ConvergenceTracker {
    /// A tracker for `num_messages`; `grid` (width, height) when the nodes are pixels.
    pub fn new(num_messages: usize, grid: Option<(usize, usize)>) -> Self {
        Self::with_map_budget(num_messages, grid, MAP_BUDGET_BYTES)
    }

    /// [`ConvergenceTracker::new`] whose maps hold at most `map_budget_bytes` (a pyramid
    /// level's share, `run/level_maps.rs`).
    pub fn with_map_budget(
        num_messages: usize,
        grid: Option<(usize, usize)>,
        map_budget_bytes: usize,
    ) -> Self {
        ConvergenceTracker {
            detector: OscillationDetector::new(num_messages),
            maps: grid.map(|g| ResidualMaps::new(g, map_budget_bytes)),
            edges: None,
            graph: None,
            last_change: Vec::new(),
        }
    }

    /// A tracker for a graph scenario: every message's change (and, through
    /// [`ConvergenceTracker::observe_with_values`], its content) is stored per iteration within
    /// `budget_bytes`, for the canvas coloured by residual and the message histories.
    pub fn for_graph(graph: ConvergenceGraph, budget_bytes: usize) -> Self {
        ConvergenceTracker {
            detector: OscillationDetector::new(graph.messages.len()),
            maps: None,
            edges: Some(EdgeFrames::new(budget_bytes)),
            graph: Some(Arc::new(graph)),
            last_change: Vec::new(),
        }
    }

    /// [`ConvergenceTracker::observe`], storing each message's `per_message` values
    /// (`values[m * per_message + j]`, f32: drawn only) beside its change.
    pub fn observe_with_values(
        &mut self,
        iteration: usize,
        changes: &MessageChanges,
        values: &[f64],
        per_message: usize,
    ) -> ConvergenceStats {
        let fits = per_message > 0 && values.len() == per_message * changes.change.len();
        self.observe_inner(iteration, changes, fits.then_some((values, per_message)))
    }

    /// Takes in one iteration's changes and returns its stats.
    pub fn observe(&mut self, iteration: usize, changes: &MessageChanges) -> ConvergenceStats {
        self.observe_inner(iteration, changes, None)
    }

    fn observe_inner(
        &mut self,
        iteration: usize,
        changes: &MessageChanges,
        values: Option<(&[f64], usize)>,
    ) -> ConvergenceStats {
        if changes.signed.len() != self.detector.num_messages() {
            self.detector = OscillationDetector::new(changes.signed.len());
        }
        self.detector.observe(changes.signed);
        if let Some(maps) = &mut self.maps {
            maps.record(iteration, changes, self.detector.oscillating());
        }
        if let Some(edges) = &mut self.edges {
            edges.record(EdgeFrame::new(
                iteration,
                changes.change.iter().map(|&c| c as f32).collect(),
                self.detector.oscillating().to_vec(),
                values.map_or_else(Vec::new, |(v, _)| v.iter().map(|&x| x as f32).collect()),
                values.map_or(0, |(_, k)| k),
            ));
        }
        self.last_change.clear();
        self.last_change.extend_from_slice(changes.change);
        let q = quantiles(changes.change, &[0.5, 0.9, 0.99]);
        ConvergenceStats {
            residual_p50: q[0],
            residual_p90: q[1],
            residual_p99: q[2],
            oscillating_fraction: self.detector.fraction(),
        }
    }

    pub fn detector(&self) -> &OscillationDetector {
        &self.detector
    }

    pub fn maps(&self) -> Option<&ResidualMaps> {
        self.maps.as_ref()
    }

    pub fn last_change(&self) -> &[f64] {
        &self.last_change
    }

    pub fn edges(&self) -> Option<&EdgeFrames> {
        self.edges.as_ref()
    }
}

/// What the window's convergence debugger draws, as of one snapshot (cheap to clone: the
/// stored maps are shared).
#[derive(Debug, Clone, Default)]
pub struct ConvergenceView {
    /// Full grid size, for grid scenarios.
    pub grid: Option<(usize, usize)>,
    /// The stored maps, oldest first.
    pub maps: Vec<Arc<ResidualMap>>,
    pub map_bytes: usize,
    pub map_budget_bytes: usize,
    /// Graph scenarios: where nodes and messages are drawn.
    pub graph: Option<Arc<ConvergenceGraph>>,
    /// Graph scenarios: every message's change per stored iteration, oldest first.
    pub edges: Vec<Arc<EdgeFrame>>,
    pub edge_bytes: usize,
    pub edge_budget_bytes: usize,
    /// Share of messages oscillating now.
    pub oscillating_fraction: f64,
    /// The schedule and damping running.
    pub schedule: String,
    pub damping: f64,
    /// The run's stopping tolerance and iteration budget (for what-if runs and hints).
    pub tolerance: f64,
    pub max_iters: usize,
    /// Why the engine cannot be copied for what-if runs or re-scheduled (None: it can).
    pub fixed_schedule: Option<String>,
    /// Coarse-to-fine runs: where each level's iterations (and so its maps) are, coarse first
    /// (`run/level_maps.rs`); empty for single-grid runs.
    pub levels: Vec<crate::run::level_maps::LevelSpan>,
    /// What else sets the step, shown under the schedule (e.g. denoise's SURE guard).
    pub step_note: Option<String>,
    /// What ended the run other than its tolerance or iteration budget (e.g. denoise's SURE
    /// guard settling it), said instead of "not converged".
    pub ended_by: Option<String>,
}

impl ConvergenceTracker {
    /// The view of what has been tracked so far.
    pub fn view(
        &self,
        schedule: &str,
        damping: f64,
        tolerance: f64,
        max_iters: usize,
    ) -> ConvergenceView {
        ConvergenceView {
            grid: self.maps.as_ref().map(|m| m.grid),
            maps: self
                .maps
                .as_ref()
                .map(|m| m.maps().to_vec())
                .unwrap_or_default(),
            map_bytes: self.maps.as_ref().map_or(0, |m| m.bytes()),
            map_budget_bytes: self.maps.as_ref().map_or(0, |m| m.budget_bytes()),
            graph: self.graph.clone(),
            edges: self
                .edges
                .as_ref()
                .map(|e| e.frames().to_vec())
                .unwrap_or_default(),
            edge_bytes: self.edges.as_ref().map_or(0, |e| e.bytes()),
            edge_budget_bytes: self.edges.as_ref().map_or(0, |e| e.budget_bytes()),
            oscillating_fraction: self.detector.fraction(),
            schedule: schedule.to_string(),
            damping,
            tolerance,
            max_iters,
            fixed_schedule: None,
            levels: Vec::new(),
            step_note: None,
            ended_by: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(detector: &mut OscillationDetector, seq: &[f64]) {
        for s in seq {
            detector.observe(&[*s]);
        }
    }

    /// The rule of the module doc, change by change: the reference the bit masks must match.
    fn period_by_definition(changes_newest_first: &[f64]) -> Option<usize> {
        let sign = |v: f64| {
            if v.abs() < NOISE_FLOOR {
                0
            } else if v > 0.0 {
                1
            } else {
                -1
            }
        };
        let c = changes_newest_first;
        (2..=MAX_PERIOD).find(|&p| {
            let repeats = (0..HISTORY - p).all(|k| sign(c[k]) != 0 && sign(c[k]) == sign(c[k + p]));
            let recent = &c[..p];
            let recent_abs: f64 = recent.iter().map(|v| v.abs()).sum();
            let before_abs: f64 = c[p..2 * p].iter().map(|v| v.abs()).sum();
            repeats
                && recent.iter().any(|v| *v > 0.0)
                && recent.iter().any(|v| *v < 0.0)
                && recent.iter().sum::<f64>().abs() <= 0.5 * recent_abs
                && recent_abs >= NON_DECAY * before_abs
        })
    }

    #[test]
    fn periods_match_the_definition_on_random_histories() {
        use rand::{Rng, SeedableRng};
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(11);
        let messages = 20_000;
        let mut detector = OscillationDetector::new(messages);
        // Signs drawn from a few patterns (periods 2-4, constant, random) with some changes
        // at or below the noise floor, so every branch of the rule is taken.
        let patterns: Vec<Vec<f64>> = (0..messages)
            .map(|_| {
                let period = rng.random_range(1..=5usize);
                let base: Vec<f64> = (0..period)
                    .map(|_| if rng.random_bool(0.5) { 1.0 } else { -1.0 })
                    .collect();
                let decay = [1.0, 0.95, 0.7][rng.random_range(0..3)];
                (0..HISTORY + 3)
                    .map(|t| {
                        let tiny = rng.random_bool(0.03);
                        let size = if tiny {
                            1e-10
                        } else {
                            rng.random_range(0.5..1.5)
                        };
                        base[t % period] * size * f64::powi(decay, t as i32)
                    })
                    .collect()
            })
            .collect();
        for t in 0..HISTORY + 3 {
            let signed: Vec<f64> = patterns.iter().map(|p| p[t]).collect();
            detector.observe(&signed);
        }
        let mut flagged = 0;
        for m in 0..messages {
            // What the detector stored (f32), newest first.
            let newest_first: Vec<f64> = detector.history_of(m).into_iter().rev().collect();
            let want = period_by_definition(&newest_first);
            assert_eq!(detector.period_of(m), want, "message {m}: {newest_first:?}");
            flagged += usize::from(want.is_some());
        }
        assert!(
            flagged > 1_000 && flagged < messages - 1_000,
            "{flagged} flagged"
        );
    }

    #[test]
    fn period_two_flagged_converging_not() {
        let mut flip = OscillationDetector::new(1);
        run(&mut flip, &[0.3, -0.3, 0.3, -0.3, 0.3, -0.3, 0.3]);
        assert_eq!(
            flip.period_of(0),
            None,
            "seven changes are not enough evidence"
        );
        run(&mut flip, &[-0.3]);
        assert_eq!(flip.period_of(0), Some(2));
        assert_eq!(flip.fraction(), 1.0);

        // Same alternation, shrinking by 0.5 per iteration: converging.
        let mut damped = OscillationDetector::new(1);
        let seq: Vec<f64> = (0..8).map(|k| 0.3 * (-0.5f64).powi(k)).collect();
        run(&mut damped, &seq);
        assert_eq!(damped.period_of(0), None);

        // Monotone approach: never oscillating.
        let mut mono = OscillationDetector::new(1);
        run(&mut mono, &[0.3, 0.2, 0.1, 0.05, 0.02, 0.01, 0.005, 0.002]);
        assert_eq!(mono.period_of(0), None);
    }

    #[test]
    fn period_three_cycle_flagged() {
        // Values cycling a -> b -> c -> a: changes +1, +1, -2 repeating.
        let mut d = OscillationDetector::new(1);
        run(&mut d, &[1.0, 1.0, -2.0, 1.0, 1.0, -2.0, 1.0, 1.0]);
        // The newest change is +1 after +1, -2: the pattern (+, +, -) repeats.
        assert_eq!(d.period_of(0), Some(3));
    }

    #[test]
    fn quantiles_nearest_rank() {
        let v: Vec<f64> = (1..=100).map(f64::from).collect();
        assert_eq!(quantiles(&v, &[0.5, 0.9, 0.99]), vec![50.0, 90.0, 99.0]);
        // Any order of qs, repeats, the ends; against a full sort.
        let shuffled: Vec<f64> = (0..997).map(|i| ((i * 7919) % 997) as f64).collect();
        let mut sorted = shuffled.clone();
        sorted.sort_by(f64::total_cmp);
        let qs = [0.9, 0.1, 0.5, 0.5, 0.99, 0.0, 1.0];
        let want: Vec<f64> = qs
            .iter()
            .map(|q: &f64| sorted[((q * 997.0).ceil() as usize).clamp(1, 997) - 1])
            .collect();
        assert_eq!(quantiles(&shuffled, &qs), want);
    }

    #[test]
    fn maps_stay_within_budget_and_span_the_run() {
        let target: Vec<usize> = (0..256 * 256).collect();
        let change = vec![1.0; target.len()];
        let signed = vec![0.0; target.len()];
        let ch = MessageChanges {
            change: &change,
            signed: &signed,
            target: &target,
        };
        let mut maps = ResidualMaps::new((256, 256), 2 << 20);
        for it in 1..=200 {
            maps.record(it, &ch, &[]);
        }
        assert_eq!(maps.pooled, (128, 128));
        assert!(maps.bytes() <= 2 << 20, "{}", maps.bytes());
        assert_eq!(maps.maps().last().unwrap().iteration, 200);
        assert_eq!(maps.maps().first().unwrap().iteration, 1);
        assert!(maps.maps().len() >= 10);
        assert!(maps.at(100).unwrap().iteration <= 100);
    }
}
