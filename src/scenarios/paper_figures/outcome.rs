//! Reading a figure's output files (results.json, summary.csv, sweep.csv, summary.json,
//! recall.csv) back into numbers. Cost: one parse per file.

use std::collections::BTreeMap;
use std::path::Path;

use serde_json::Value;

use crate::error::{Error, Result};

/// `dir/results.json`.
pub fn results(dir: &Path) -> Result<Value> {
    json(&dir.join("results.json"))
}

pub fn json(path: &Path) -> Result<Value> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| Error::Io(format!("cannot read {}: {e}", path.display())))?;
    serde_json::from_str(&text).map_err(|e| Error::Io(format!("{}: {e}", path.display())))
}

/// The first value named `key` anywhere in `v` that satisfies `pred` (depth first, objects in
/// key order), so that a config field of the same name does not hide a report's table.
pub fn find_by<'a>(v: &'a Value, key: &str, pred: &dyn Fn(&Value) -> bool) -> Option<&'a Value> {
    match v {
        Value::Object(map) => map
            .get(key)
            .filter(|x| pred(x))
            .or_else(|| map.values().find_map(|c| find_by(c, key, pred))),
        Value::Array(items) => items.iter().find_map(|c| find_by(c, key, pred)),
        _ => None,
    }
}

/// The first value named `key` anywhere in `v`.
pub fn find<'a>(v: &'a Value, key: &str) -> Option<&'a Value> {
    find_by(v, key, &|_| true)
}

/// The first array named `key` anywhere in `v`.
pub fn array<'a>(v: &'a Value, key: &str) -> Option<&'a Vec<Value>> {
    find_by(v, key, &Value::is_array).and_then(Value::as_array)
}

/// The number named `key` anywhere in `v`.
pub fn number(v: &Value, key: &str) -> Result<f64> {
    find_by(v, key, &Value::is_number)
        .and_then(Value::as_f64)
        .ok_or_else(|| Error::Other(format!("no number '{key}' in the results")))
}

/// A CSV file as rows of column name -> text.
pub fn csv(path: &Path) -> Result<Vec<BTreeMap<String, String>>> {
    let mut reader = ::csv::Reader::from_path(path)
        .map_err(|e| Error::Io(format!("cannot read {}: {e}", path.display())))?;
    let headers = reader
        .headers()
        .map_err(|e| Error::Io(format!("{}: {e}", path.display())))?
        .clone();
    let mut rows = Vec::new();
    for record in reader.records() {
        let record = record.map_err(|e| Error::Io(format!("{}: {e}", path.display())))?;
        rows.push(
            headers
                .iter()
                .zip(record.iter())
                .map(|(h, v)| (h.to_string(), v.to_string()))
                .collect(),
        );
    }
    Ok(rows)
}

/// Column `name` of a CSV row as a number.
pub fn field(row: &BTreeMap<String, String>, name: &str) -> Result<f64> {
    row.get(name)
        .and_then(|v| v.parse::<f64>().ok())
        .ok_or_else(|| Error::Other(format!("no number in column '{name}'")))
}

/// Least-squares slope of y against x.
pub fn slope(points: &[(f64, f64)]) -> Option<f64> {
    let n = points.len() as f64;
    if points.len() < 2 {
        return None;
    }
    let mx = points.iter().map(|p| p.0).sum::<f64>() / n;
    let my = points.iter().map(|p| p.1).sum::<f64>() / n;
    let sxx: f64 = points.iter().map(|p| (p.0 - mx).powi(2)).sum();
    let sxy: f64 = points.iter().map(|p| (p.0 - mx) * (p.1 - my)).sum();
    (sxx > 0.0).then(|| sxy / sxx)
}

/// A number in 3 significant digits.
pub fn sig(x: f64) -> String {
    if !x.is_finite() {
        return format!("{x}");
    }
    let a = x.abs();
    if a != 0.0 && !(1e-3..1e4).contains(&a) {
        format!("{x:.2e}")
    } else if a >= 100.0 {
        format!("{x:.0}")
    } else if a >= 10.0 {
        format!("{x:.1}")
    } else if a >= 1.0 {
        format!("{x:.2}")
    } else {
        format!("{x:.3}")
    }
}

/// Whether `values` never rise.
pub fn non_increasing(values: &[f64]) -> bool {
    values.windows(2).all(|w| w[1] <= w[0])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_nested_keys_and_fits_slopes() {
        let v = serde_json::json!({"a": {"b": [ {"slope": -0.5} ]}});
        assert_eq!(number(&v, "slope").unwrap(), -0.5);
        assert!(number(&v, "missing").is_err());
        let s = slope(&[(0.0, 1.0), (1.0, 3.0), (2.0, 5.0)]).unwrap();
        assert!((s - 2.0).abs() < 1e-12);
        assert_eq!(sig(0.012345), "0.012");
        assert_eq!(sig(1.2345e-5), "1.23e-5");
        assert_eq!(sig(1.23456), "1.23");
        assert!(non_increasing(&[3.0, 2.0, 2.0]));
        assert!(!non_increasing(&[1.0, 2.0]));
    }
}
