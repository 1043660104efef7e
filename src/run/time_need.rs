//! A run's estimated time, stated when it starts (beside the memory estimate) and turned into
//! an ETA while it runs. Each scenario gives a cost model: set-up seconds and seconds per
//! iteration from its sizes, with constants measured on a 2-core reference machine (see
//! docs/estimates.md); [`machine_factor`] scales them by how fast this machine multiplies
//! matrices against that one. While a run goes, [`Eta`] replaces the model's iteration time by
//! the measured one. Cost: the factor is measured once per process (about 10 ms); the rest O(1).

use std::sync::OnceLock;
use std::time::Instant;

use nalgebra::DMatrix;

/// Side of the reference matrix product.
const REFERENCE_SIDE: usize = 160;
/// Its fastest seconds on the reference machine the cost constants were measured on.
const REFERENCE_SECONDS: f64 = 2.2e-4;

/// How much slower than the reference machine this one multiplies a 160² f64 matrix
/// (1: as fast; 2: twice as slow), clamped to [0.25, 8]; measured once.
pub fn machine_factor() -> f64 {
    static FACTOR: OnceLock<f64> = OnceLock::new();
    *FACTOR.get_or_init(|| {
        let n = REFERENCE_SIDE;
        // Fixed entries: the product's time does not depend on them.
        let a = DMatrix::<f64>::from_fn(n, n, |i, j| ((i * 7 + j * 3) % 11) as f64 - 5.0);
        let b = a.transpose();
        let mut c = DMatrix::<f64>::zeros(n, n);
        // The fastest of many: a capability, not a load average.
        let fastest = (0..41)
            .map(|_| {
                let start = Instant::now();
                c.gemm(1.0, &a, &b, 0.0);
                std::hint::black_box(&c);
                start.elapsed().as_secs_f64()
            })
            .fold(f64::INFINITY, f64::min);
        (fastest / REFERENCE_SECONDS).clamp(0.25, 8.0)
    })
}

/// Estimated seconds of a run: its set-up, then `iterations` of `per_iteration` each.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TimeNeed {
    pub setup: f64,
    pub per_iteration: f64,
    pub iterations: usize,
    /// A stopping rule decides when the run ends (`iterations` is the usual count).
    pub may_stop_early: bool,
}

impl TimeNeed {
    /// A model's estimate on the reference machine, scaled to this one.
    pub fn scaled(setup: f64, per_iteration: f64, iterations: usize) -> Self {
        let f = machine_factor();
        TimeNeed {
            setup: setup.max(0.0) * f,
            per_iteration: per_iteration.max(0.0) * f,
            iterations,
            may_stop_early: false,
        }
    }

    /// Says that a stopping rule may end the run before its last iteration.
    pub fn stopping_early(mut self) -> Self {
        self.may_stop_early = true;
        self
    }

    pub fn total(&self) -> f64 {
        self.setup + self.per_iteration * self.iterations as f64
    }

    /// "about 3 min 20 s (set-up 12 s, then 20 iterations of 9.0 s)"; with a stopping rule
    /// "... then usually about 20 iterations of 9.0 s)".
    pub fn describe(&self) -> String {
        let usually = if self.may_stop_early {
            "usually about "
        } else {
            ""
        };
        let plural = if self.iterations == 1 { "" } else { "s" };
        format!(
            "about {} (set-up {}, then {usually}{} iteration{plural} of {})",
            format_seconds(self.total()),
            format_seconds(self.setup),
            self.iterations,
            format_seconds(self.per_iteration)
        )
    }
}

/// Seconds as a person reads them: "0.4 s", "12 s", "3 min 20 s", "2 h 5 min".
pub fn format_seconds(seconds: f64) -> String {
    let s = seconds.max(0.0);
    if !s.is_finite() {
        "an unknown time".into()
    } else if s < 10.0 {
        format!("{s:.1} s")
    } else if s < 60.0 {
        format!("{s:.0} s")
    } else if s < 3600.0 {
        let m = (s / 60.0).floor();
        format!("{m:.0} min {:.0} s", s - 60.0 * m)
    } else {
        let h = (s / 3600.0).floor();
        format!("{h:.0} h {:.0} min", (s - 3600.0 * h) / 60.0)
    }
}

/// The iteration a run's time left counts to, `done` iterations in, and whether it is only an
/// upper bound: where a stopping rule usually ends the run, the estimate's usual count; once the
/// run has gone past it, the iteration limit, which it may not reach.
pub fn iteration_horizon(
    need: Option<TimeNeed>,
    limit: Option<usize>,
    done: usize,
) -> Option<(usize, bool)> {
    match (need, limit) {
        (Some(n), _) if n.may_stop_early && done < n.iterations => Some((n.iterations, false)),
        (Some(n), Some(limit)) if n.may_stop_early => Some((limit, true)),
        (_, Some(limit)) => Some((limit, false)),
        (Some(n), None) => Some((n.iterations, false)),
        (None, None) => None,
    }
}

/// The time left of a run as it goes: the model's estimate until an iteration has been
/// measured, then the median of the last few measured iterations times the iterations left.
#[derive(Debug, Clone)]
pub struct Eta {
    need: Option<TimeNeed>,
    max_iterations: Option<usize>,
    recent: Vec<f64>,
    done: usize,
}

/// Measured iterations the ETA's median looks back over.
const RECENT: usize = 5;

impl Eta {
    pub fn new(need: Option<TimeNeed>, max_iterations: Option<usize>) -> Self {
        Eta {
            need,
            max_iterations,
            recent: Vec::new(),
            done: 0,
        }
    }

    /// Iteration `iter` took `seconds`.
    pub fn iteration(&mut self, iter: usize, seconds: f64) {
        self.done = iter;
        if self.recent.len() == RECENT {
            self.recent.remove(0);
        }
        self.recent.push(seconds.max(0.0));
    }

    /// Seconds per iteration: measured (median of the recent ones) or modelled.
    fn per_iteration(&self) -> Option<f64> {
        if self.recent.is_empty() {
            return self.need.map(|n| n.per_iteration);
        }
        let mut r = self.recent.clone();
        r.sort_by(f64::total_cmp);
        Some(r[r.len() / 2])
    }

    /// Seconds left of the set-up, `elapsed` into it (None without an estimate).
    pub fn setup_left(&self, elapsed: f64) -> Option<f64> {
        self.need.map(|n| n.setup - elapsed)
    }

    /// Seconds left of the iterations, `into_current` seconds into the running one, and
    /// whether that is only an upper bound (None when the number of iterations is open).
    pub fn iterations_left(&self, into_current: f64) -> Option<(f64, bool)> {
        let (until, upper_bound) = iteration_horizon(self.need, self.max_iterations, self.done)?;
        let per = self.per_iteration()?;
        let left = until.saturating_sub(self.done) as f64 * per;
        Some(((left - into_current.min(per)).max(0.0), upper_bound))
    }

    /// [`Self::describe_left`], or "up to about 3 min left" for an upper bound.
    pub fn describe_iterations_left((left, upper_bound): (f64, bool)) -> String {
        let left = Self::describe_left(left);
        if upper_bound {
            format!("up to {left}")
        } else {
            left
        }
    }

    /// "about 1 min 40 s left" or, past the estimate, "taking longer than estimated".
    pub fn describe_left(left: f64) -> String {
        if left >= 0.0 {
            format!("about {} left", format_seconds(left))
        } else {
            format!("{} longer than estimated", format_seconds(-left))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seconds_read_as_a_person_says_them() {
        assert_eq!(format_seconds(0.42), "0.4 s");
        assert_eq!(format_seconds(12.4), "12 s");
        assert_eq!(format_seconds(200.0), "3 min 20 s");
        assert_eq!(format_seconds(7500.0), "2 h 5 min");
    }

    #[test]
    fn the_eta_uses_the_measured_median_once_iterations_ran() {
        let need = TimeNeed {
            setup: 2.0,
            per_iteration: 1.0,
            iterations: 10,
            may_stop_early: false,
        };
        let mut eta = Eta::new(Some(need), Some(10));
        assert_eq!(eta.iterations_left(0.0), Some((10.0, false)));
        for (i, s) in [3.0, 3.0, 100.0].into_iter().enumerate() {
            eta.iteration(i + 1, s);
        }
        // Median 3 s, 7 iterations left, 1 s into the next.
        assert_eq!(eta.iterations_left(1.0), Some((20.0, false)));
        assert_eq!(eta.setup_left(0.5), Some(1.5));
        assert!(Eta::describe_left(-5.0).contains("longer than estimated"));
        assert_eq!(Eta::new(None, None).iterations_left(0.0), None);
    }

    #[test]
    fn a_run_a_rule_may_stop_counts_to_its_usual_length_then_up_to_its_limit() {
        let need = TimeNeed {
            setup: 0.0,
            per_iteration: 2.0,
            iterations: 8,
            may_stop_early: true,
        };
        let mut eta = Eta::new(Some(need), Some(20));
        eta.iteration(3, 2.0);
        assert_eq!(eta.iterations_left(0.0), Some((10.0, false)));
        assert_eq!(
            Eta::describe_iterations_left((10.0, false)),
            "about 10 s left"
        );
        for i in 4..=9 {
            eta.iteration(i, 2.0);
        }
        // Past the usual 8: the rest of the limit, as a bound.
        assert_eq!(eta.iterations_left(0.0), Some((22.0, true)));
        assert_eq!(
            Eta::describe_iterations_left((22.0, true)),
            "up to about 22 s left"
        );
        assert_eq!(iteration_horizon(Some(need), None, 9), Some((8, false)));
        let fixed = TimeNeed {
            may_stop_early: false,
            ..need
        };
        assert_eq!(
            iteration_horizon(Some(fixed), Some(20), 3),
            Some((20, false))
        );
    }

    #[test]
    fn the_machine_factor_is_measured_and_bounded() {
        let f = machine_factor();
        assert!((0.25..=8.0).contains(&f), "{f}");
        assert_eq!(f, machine_factor(), "measured once");
    }

    #[test]
    fn a_description_names_total_set_up_and_iterations() {
        let need = TimeNeed {
            setup: 12.0,
            per_iteration: 9.0,
            iterations: 20,
            may_stop_early: true,
        };
        assert_eq!(
            need.describe(),
            "about 3 min 12 s (set-up 12 s, then usually about 20 iterations of 9.0 s)"
        );
    }
}
