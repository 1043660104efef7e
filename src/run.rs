//! The vocabulary of a run, on the ground floor so that every layer can speak it: the cancel
//! flag long computations poll, the per-iteration record, the shared run log and the document
//! written as results.json. Nothing here knows which scenario or algorithm runs.

pub mod allocator;
pub mod budget;
pub mod edge_frames;
pub mod level_maps;
pub mod residuals;
pub mod shared_copies;
pub mod time_need;

use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::error::{Error, Result};

/// A shared flag that asks long computations to stop early. It also counts its checks, so a
/// test can see that a long loop looks at it per chunk of work.
#[derive(Debug, Clone, Default)]
pub struct CancelFlag {
    cancelled: Arc<AtomicBool>,
    checks: Arc<AtomicU64>,
}

impl CancelFlag {
    pub fn cancel(&self) {
        self.cancelled.store(true, Ordering::Relaxed);
    }
    pub fn reset(&self) {
        self.cancelled.store(false, Ordering::Relaxed);
    }
    pub fn is_cancelled(&self) -> bool {
        self.cancelled.load(Ordering::Relaxed)
    }
    /// How many times [`check`](Self::check) has been called on this flag or its clones.
    pub fn checks(&self) -> u64 {
        self.checks.load(Ordering::Relaxed)
    }
    /// `Err(Cancelled)` once cancelled; call inside long loops.
    pub fn check(&self) -> Result<()> {
        self.checks.fetch_add(1, Ordering::Relaxed);
        if self.is_cancelled() {
            Err(Error::Cancelled)
        } else {
            Ok(())
        }
    }
}

/// Drops `value` on a thread of its own: returning a photograph's gigabytes to the system
/// takes most of a second, which a cancelled set-up, a reset or closing the window need not
/// wait for. Without a thread (none can be started) it is dropped here.
pub fn drop_in_background<T: Send + 'static>(value: T) {
    let spawned = std::thread::Builder::new()
        .name("beliefscope-discard".into())
        .spawn(move || drop(value));
    drop(spawned);
}

/// One row of the per-iteration log (the `iterations` array of results.json).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct IterationRecord {
    pub iter: usize,
    pub seconds: f64,
    pub residual: f64,
    pub metrics: BTreeMap<String, f64>,
}

/// The bookkeeping every scenario shares: the set-up time and the iterations so far.
#[derive(Debug, Clone, Default)]
pub struct RunLog {
    setup_seconds: f64,
    history: Vec<IterationRecord>,
}

impl RunLog {
    /// A log for a run whose set-up took `setup_seconds`.
    pub fn new(setup_seconds: f64) -> Self {
        RunLog {
            setup_seconds,
            history: Vec::new(),
        }
    }

    pub fn setup_seconds(&self) -> f64 {
        self.setup_seconds
    }

    /// Every iteration so far, oldest first.
    pub fn history(&self) -> &[IterationRecord] {
        &self.history
    }

    pub fn last(&self) -> Option<&IterationRecord> {
        self.history.last()
    }

    /// Appends `record` and returns a copy (what `Scenario::step` reports).
    pub fn push(&mut self, record: IterationRecord) -> IterationRecord {
        self.history.push(record.clone());
        record
    }

    /// Whether the last iteration reached `max_iters` or a residual below `tolerance`.
    pub fn reached(&self, max_iters: usize, tolerance: f64) -> bool {
        self.last()
            .is_some_and(|r| r.iter >= max_iters || r.residual < tolerance)
    }
}

/// The document written as results.json; every scenario shares this outer shape.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RunResults {
    pub scenario: String,
    pub algorithm: String,
    pub config: Value,
    pub setup_seconds: f64,
    pub iterations: Vec<IterationRecord>,
    #[serde(rename = "final")]
    pub final_results: FinalResults,
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct FinalResults {
    pub metrics: BTreeMap<String, f64>,
}
