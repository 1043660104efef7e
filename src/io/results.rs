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
pub fn curves_csv(history: &[IterationRecord]) -> String {
    let names: Vec<&String> = history
        .first()
        .map(|r| r.metrics.keys().collect())
        .unwrap_or_default();
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
