//! Writing results.json and curves.csv, atomically (see [`super::atomic`]).

use std::fmt::Write as _;
use std::path::Path;

use super::atomic::write_atomic;
use crate::error::Result;
use crate::run::{IterationRecord, RunResults};

pub fn results_json(results: &RunResults) -> String {
    serde_json::to_string_pretty(results).unwrap_or_else(|e| format!("{{\"error\": \"{e}\"}}"))
}

pub fn write_results(dir: &Path, results: &RunResults) -> Result<()> {
    write_atomic(&dir.join("results.json"), results_json(results).as_bytes())
}

/// `iter,seconds,residual,<metric>...` one row per iteration, metric columns in name order.
/// The columns are every metric any iteration has (some start later, e.g. a change from the
/// best iterate so far); an iteration without one writes NaN.
pub fn curves_csv(history: &[IterationRecord]) -> String {
    let names: std::collections::BTreeSet<&String> =
        history.iter().flat_map(|r| r.metrics.keys()).collect();
    let mut out = String::from("iter,seconds,residual");
    for n in &names {
        out.push(',');
        out.push_str(n);
    }
    out.push('\n');
    for r in history {
        let _ = write!(out, "{},{},{}", r.iter, r.seconds, r.residual);
        for n in &names {
            let _ = write!(out, ",{}", r.metrics.get(*n).copied().unwrap_or(f64::NAN));
        }
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(iter: usize, metrics: &[(&str, f64)]) -> IterationRecord {
        IterationRecord {
            iter,
            seconds: 0.5,
            residual: 1.0,
            metrics: metrics.iter().map(|(k, v)| (k.to_string(), *v)).collect(),
        }
    }

    #[test]
    fn a_metric_that_starts_later_still_gets_its_column() {
        let history = [
            record(1, &[("rmse", 3.0)]),
            record(2, &[("rmse", 2.0), ("change_z", -4.0)]),
        ];
        assert_eq!(
            curves_csv(&history),
            "iter,seconds,residual,change_z,rmse\n1,0.5,1,NaN,3\n2,0.5,1,-4,2\n"
        );
    }
}
