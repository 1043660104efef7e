//! `beliefscope collect DIR` (and the end of every sweep): reads `sweep.json` and the runs
//! that have finished (wherever they ran: here, under GNU parallel or Slurm), and writes
//! `summary.csv` with one row per finished run in plan order: id, the varied values, the seed,
//! the final metrics of results.json, then the iteration count and the timing columns
//! (`setup_seconds`, `seconds_per_iter` as the median iteration, `seconds` for set-up plus all
//! iterations), last so that `cut` can drop them. Runs not finished yet are listed in
//! `missing.txt` as their jobs.txt lines. Then the scenario's sweep figures.
//!
//! Cost: reading every results.json once (O(runs x iterations)).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use serde_json::Value;

use super::execute::is_complete;
use super::plan::{SweepFile, run_dir};
use crate::error::{Error, Result};
use crate::io::write_atomic;
use crate::scenarios::registry::kind;

/// One finished run as summary.csv has it.
#[derive(Debug, Clone, PartialEq)]
pub struct SweepRow {
    pub id: String,
    /// The varied values, aligned with [`SweepTable::keys`].
    pub values: Vec<String>,
    pub seed: Option<u64>,
    /// results.json's final metrics (NaN where it wrote none).
    pub metrics: BTreeMap<String, f64>,
    pub iterations: usize,
    pub setup_seconds: f64,
    /// The median seconds of one iteration.
    pub seconds_per_iter: f64,
    /// Set-up plus every iteration.
    pub seconds: f64,
}

impl SweepRow {
    /// The value of varied `key` in this row.
    pub fn value<'a>(&'a self, table: &SweepTable, key: &str) -> Option<&'a str> {
        let i = table.keys.iter().position(|k| k == key)?;
        self.values.get(i).map(String::as_str)
    }
}

/// The finished runs of a sweep.
#[derive(Debug, Clone, PartialEq)]
pub struct SweepTable {
    pub scenario: String,
    pub keys: Vec<String>,
    pub rows: Vec<SweepRow>,
}

fn number(v: Option<&Value>) -> f64 {
    v.and_then(Value::as_f64).unwrap_or(f64::NAN)
}

/// The row of a finished run from its results.json.
fn read_row(dir: &Path, id: &str, values: &[String], seed: Option<u64>) -> Result<SweepRow> {
    let path = run_dir(dir, id).join("results.json");
    let text = std::fs::read_to_string(&path)
        .map_err(|e| Error::Io(format!("cannot read {}: {e}", path.display())))?;
    let doc: Value = serde_json::from_str(&text)
        .map_err(|e| Error::Other(format!("{}: not JSON: {e}", path.display())))?;
    let metrics = doc
        .pointer("/final/metrics")
        .and_then(Value::as_object)
        .map(|m| {
            m.iter()
                .map(|(k, v)| (k.clone(), number(Some(v))))
                .collect()
        })
        .unwrap_or_default();
    let mut seconds: Vec<f64> = doc
        .get("iterations")
        .and_then(Value::as_array)
        .map(|its| its.iter().map(|r| number(r.get("seconds"))).collect())
        .unwrap_or_default();
    let setup = number(doc.get("setup_seconds"));
    let total = setup + seconds.iter().sum::<f64>();
    seconds.sort_by(f64::total_cmp);
    Ok(SweepRow {
        id: id.to_string(),
        values: values.to_vec(),
        seed,
        metrics,
        iterations: seconds.len(),
        setup_seconds: setup,
        seconds_per_iter: seconds.get(seconds.len() / 2).copied().unwrap_or(f64::NAN),
        seconds: total,
    })
}

/// `sweep.json` of `dir`.
pub fn read_sweep_file(dir: &Path) -> Result<SweepFile> {
    let path = dir.join("sweep.json");
    let text = std::fs::read_to_string(&path).map_err(|e| {
        Error::Io(format!(
            "cannot read {}: {e} (collect reads a folder that `sweep ... --out` or `--plan` wrote)",
            path.display()
        ))
    })?;
    serde_json::from_str(&text)
        .map_err(|e| Error::Other(format!("{}: not a sweep.json: {e}", path.display())))
}

/// summary.csv's text.
pub fn summary_csv(table: &SweepTable) -> Result<String> {
    let names: BTreeSet<&String> = table.rows.iter().flat_map(|r| r.metrics.keys()).collect();
    let mut w = csv::Writer::from_writer(Vec::new());
    let mut header: Vec<String> = vec!["id".into()];
    header.extend(table.keys.iter().cloned());
    header.push("seed".into());
    header.extend(names.iter().map(|n| n.to_string()));
    header.extend(["iterations", "setup_seconds", "seconds_per_iter", "seconds"].map(String::from));
    let err = |e: csv::Error| Error::Other(format!("cannot write summary.csv: {e}"));
    w.write_record(&header).map_err(err)?;
    for r in &table.rows {
        let mut rec: Vec<String> = vec![r.id.clone()];
        rec.extend(r.values.iter().cloned());
        rec.push(r.seed.map_or(String::new(), |s| s.to_string()));
        rec.extend(
            names
                .iter()
                .map(|n| r.metrics.get(*n).map_or(String::new(), |v| v.to_string())),
        );
        rec.push(r.iterations.to_string());
        rec.extend([r.setup_seconds, r.seconds_per_iter, r.seconds].map(|v| v.to_string()));
        w.write_record(&rec).map_err(err)?;
    }
    let bytes = w
        .into_inner()
        .map_err(|e| Error::Other(format!("cannot write summary.csv: {e}")))?;
    String::from_utf8(bytes).map_err(|e| Error::Other(e.to_string()))
}

/// What `collect` found.
#[derive(Debug, Clone, PartialEq)]
pub struct Collected {
    pub table: SweepTable,
    /// Runs of the plan without a finished results.json.
    pub missing: Vec<String>,
    pub figures: Vec<PathBuf>,
}

/// Merges the finished runs of the sweep in `dir` into summary.csv, missing.txt and the
/// scenario's figures, and says on stderr how many are missing.
pub fn collect(dir: &Path) -> Result<Collected> {
    let file = read_sweep_file(dir)?;
    let mut rows = Vec::new();
    let mut missing = Vec::new();
    for run in &file.runs {
        if is_complete(&run_dir(dir, &run.id)) {
            rows.push(read_row(dir, &run.id, &run.values, run.seed)?);
        } else {
            missing.push(run.id.clone());
        }
    }
    let table = SweepTable {
        scenario: file.scenario.clone(),
        keys: file.keys.clone(),
        rows,
    };
    write_atomic(&dir.join("summary.csv"), summary_csv(&table)?.as_bytes())?;
    // The jobs.txt lines of the missing runs: `parallel < missing.txt` finishes the sweep.
    let jobs = std::fs::read_to_string(dir.join("jobs.txt")).unwrap_or_default();
    let missing_lines: String = file
        .runs
        .iter()
        .zip(jobs.lines())
        .filter(|(r, _)| missing.contains(&r.id))
        .map(|(_, l)| format!("{l}\n"))
        .collect();
    let missing_path = dir.join("missing.txt");
    if missing.is_empty() {
        let _ = std::fs::remove_file(&missing_path);
    } else {
        write_atomic(&missing_path, missing_lines.as_bytes())?;
    }
    let figures = match kind(&file.scenario) {
        Some(k) if !table.rows.is_empty() => (k.sweep_figures)(dir, &table)?,
        _ => Vec::new(),
    };
    let n = file.runs.len();
    eprintln!(
        "collect: {} of {n} runs finished, {} missing{}; wrote {}{}",
        table.rows.len(),
        missing.len(),
        if missing.is_empty() {
            String::new()
        } else {
            format!(" (their commands are in {})", missing_path.display())
        },
        dir.join("summary.csv").display(),
        figures
            .iter()
            .map(|f| format!(", {}", f.display()))
            .collect::<String>()
    );
    Ok(Collected {
        table,
        missing,
        figures,
    })
}
