//! What a finished denoise sweep draws from its summary (Song et al. 2011, Fig. 1(c, d) and
//! Appendix 3 are such sweeps): `summary_by_setting.csv`, the mean and standard deviation over
//! seeds of RMSE, seconds per iteration and set-up seconds per setting (the varied values
//! other than the seed), and, when the sweep varies `colors`, `figure1.png`: RMSE and seconds
//! per iteration against the number of gray levels C, one curve per other setting (Fig. 1(c)
//! and (d)).
//!
//! Cost: O(runs); one small PNG.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use crate::error::Result;
use crate::io::write_atomic;
use crate::scenarios::output::write_figure;
use crate::scenarios::sweep::SweepTable;
use crate::viz::figures::{Curve, Panel};
use crate::viz::palette::{Method, series};

/// Mean and standard deviation.
type Stat = (f64, f64);
/// A curve's label and its RMSE and seconds-per-iteration points over C.
type Curves = Vec<(String, Vec<(f64, f64)>, Vec<(f64, f64)>)>;

fn mean_sd(v: &[f64]) -> Stat {
    let n = v.len() as f64;
    let mean = v.iter().sum::<f64>() / n;
    let var = if v.len() > 1 {
        v.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1.0)
    } else {
        0.0
    };
    (mean, var.sqrt())
}

/// Writes summary_by_setting.csv and (when `colors` is varied) figure1.png into `dir`.
pub fn figures(dir: &Path, table: &SweepTable) -> Result<Vec<PathBuf>> {
    // Settings in plan order: the varied values -> (rmse, seconds per iteration, set-up) per run.
    let mut order: Vec<Vec<String>> = Vec::new();
    let mut cells: BTreeMap<Vec<String>, Vec<[f64; 3]>> = BTreeMap::new();
    for r in &table.rows {
        let rmse = r.metrics.get("rmse").copied().unwrap_or(f64::NAN);
        if !cells.contains_key(&r.values) {
            order.push(r.values.clone());
        }
        cells.entry(r.values.clone()).or_default().push([
            rmse,
            r.seconds_per_iter,
            r.setup_seconds,
        ]);
    }
    let mut csv = String::new();
    for k in &table.keys {
        let _ = write!(csv, "{k},");
    }
    csv.push_str(
        "runs,rmse_mean,rmse_sd,seconds_per_iter_mean,seconds_per_iter_sd,setup_seconds_mean,setup_seconds_sd\n",
    );
    let mut stats: Vec<(Vec<String>, [Stat; 3])> = Vec::new();
    for values in &order {
        let runs = &cells[values];
        let col = |i: usize| mean_sd(&runs.iter().map(|v| v[i]).collect::<Vec<_>>());
        let s = [col(0), col(1), col(2)];
        for v in values {
            let _ = write!(csv, "{v},");
        }
        let _ = writeln!(
            csv,
            "{},{},{},{},{},{},{}",
            runs.len(),
            s[0].0,
            s[0].1,
            s[1].0,
            s[1].1,
            s[2].0,
            s[2].1
        );
        stats.push((values.clone(), s));
    }
    let by_setting = dir.join("summary_by_setting.csv");
    write_atomic(&by_setting, csv.as_bytes())?;
    let mut written = vec![by_setting];
    let Some(ci) = table.keys.iter().position(|k| k == "colors") else {
        return Ok(written);
    };
    // One curve per setting of the other varied keys, points over C.
    let mut curves: Curves = Vec::new();
    for (values, s) in &stats {
        let Ok(c) = values[ci].parse::<f64>() else {
            continue;
        };
        let label: Vec<String> = table
            .keys
            .iter()
            .zip(values)
            .enumerate()
            .filter(|(i, (_, v))| *i != ci && !v.is_empty())
            .map(|(_, (k, v))| {
                if k == "algorithm" {
                    v.clone()
                } else {
                    format!("{k} {v}")
                }
            })
            .collect();
        let label = if label.is_empty() {
            "denoise".to_string()
        } else {
            label.join(", ")
        };
        match curves.iter_mut().find(|(l, _, _)| *l == label) {
            Some((_, rmse, time)) => {
                rmse.push((c, s[0].0));
                time.push((c, s[1].0));
            }
            None => curves.push((label, vec![(c, s[0].0)], vec![(c, s[1].0)])),
        }
    }
    let mut rmse = Panel {
        title: "RMSE against the number of gray levels (Fig. 1(c))".into(),
        x_label: "gray levels C".into(),
        y_label: "RMSE (gray levels), mean over seeds".into(),
        integer_x: true,
        ..Panel::default()
    };
    let mut time = Panel {
        title: "seconds per iteration (Fig. 1(d))".into(),
        x_label: "gray levels C".into(),
        y_label: "seconds per iteration, median, mean over seeds".into(),
        integer_x: true,
        log_y: true,
        ..Panel::default()
    };
    for (k, (label, mut r, mut t)) in curves.into_iter().enumerate() {
        let color = Method::of_key(&label).map_or_else(|| series(k), |m| m.color());
        r.sort_by(|a, b| a.0.total_cmp(&b.0));
        t.sort_by(|a, b| a.0.total_cmp(&b.0));
        rmse.curves.push(Curve::new(label.clone(), r, color));
        time.curves.push(Curve::new(label, t, color));
    }
    let png = dir.join("figure1.png");
    write_figure(&png, &[rmse, time], 2, 1200, 480)?;
    written.push(png);
    Ok(written)
}
