//! The oracle the KJIT speed-ups in Jitkrittum et al. 2015 (Sec. 5) are quoted against, timed
//! inside a run: importance sampling (eq. 2) with the paper's 5e5 particles, over every
//! particle, on one thread, as `cargo bench --bench engine -- kjit_message` times it. A run
//! reports its KJIT message's speed-up against this and, separately, against the windowed
//! oracle it actually calls. Cost: building 5e5 particles and three calls (tens of ms).

use std::time::Instant;

use crate::error::{Error, Result};
use crate::inference::kjit::{Beta, Gaussian, ImportanceOracle, LogisticTuple};

/// Particles of the paper's oracle.
pub const PAPER_PARTICLES: usize = 500_000;
/// Calls timed; the median is reported.
const CALLS: usize = 3;

/// Median seconds of one call of the paper-scale oracle on the bench's probe tuple.
pub fn paper_oracle_seconds(seed: u64) -> Result<f64> {
    let oracle = ImportanceOracle::new(PAPER_PARTICLES, seed)?;
    let probe = LogisticTuple {
        z: Gaussian::new(1.0, 0.5),
        p: Beta::from_label(true),
    };
    let one_thread = rayon::ThreadPoolBuilder::new()
        .num_threads(1)
        .build()
        .map_err(|e| Error::Other(format!("cannot start a one-thread pool: {e}")))?;
    let mut seconds = Vec::with_capacity(CALLS);
    for _ in 0..CALLS {
        let start = Instant::now();
        one_thread.install(|| oracle.estimate_full(&probe))?;
        seconds.push(start.elapsed().as_secs_f64());
    }
    seconds.sort_by(f64::total_cmp);
    Ok(seconds[CALLS / 2])
}
