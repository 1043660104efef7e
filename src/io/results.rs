//! Writing results.json and curves.csv. Files are written atomically (temp file, then rename)
//! so an interrupted run never leaves half a file.

use std::fmt::Write as _;
use std::path::Path;

use crate::error::{Error, Result};
use crate::scenarios::{IterationRecord, RunResults};

/// Writes `contents` to `path` through a temporary file in the same folder and a rename.
pub fn write_atomic(path: &Path, contents: &[u8]) -> Result<()> {
    let tmp = path.with_extension("tmp~");
    std::fs::write(&tmp, contents)
        .map_err(|e| Error::Io(format!("cannot write {}: {e}", tmp.display())))?;
    std::fs::rename(&tmp, path)
        .map_err(|e| Error::Io(format!("cannot write {}: {e}", path.display())))
}

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
