//! What a sweep runs: the lists of `--vary key=v1,v2,...` (every combination, or paired with
//! `--zip`), times `--seeds N`, each applied to a base config (the scenario's defaults and
//! `--set`). Every key and value is checked up front, before any run starts, and every run's
//! config passes the scenario's own checks and the memory budget. A run is named by its index
//! and its varied values, e.g. `007_colors=50_algorithm=kbp_seed=3`.
//!
//! Cost: one config serialisation per key and run (milliseconds for thousands of runs).

use serde_json::Value;

use crate::error::{Error, Result};
use crate::scenarios::ScenarioConfig;
use crate::scenarios::params;

/// The parameters a sweep varies and their values, point by point.
#[derive(Debug, Clone, PartialEq)]
pub struct Points {
    /// The varied keys, as `--set` names them.
    pub keys: Vec<String>,
    /// One row of values per point, aligned with `keys`; an empty value leaves that key at
    /// the base config's value for this point.
    pub rows: Vec<Vec<String>>,
}

/// One run of a sweep.
#[derive(Debug, Clone, PartialEq)]
pub struct RunSpec {
    /// The folder name under `runs/`: index and varied values.
    pub id: String,
    /// The varied values, aligned with [`Points::keys`].
    pub values: Vec<String>,
    /// The value of the scenario's seed parameter in this run.
    pub seed: Option<u64>,
    pub config: ScenarioConfig,
}

/// `key=v1,v2,...` as a key and its values. Values are separated by commas, or by `;` when the
/// text has one (for parameters whose value is itself a comma-separated list).
pub fn parse_vary(text: &str) -> Result<(String, Vec<String>)> {
    let (key, list) = text.split_once('=').ok_or_else(|| {
        Error::Other(format!(
            "--vary takes key=v1,v2,... (e.g. --vary colors=10,25), got '{text}'"
        ))
    })?;
    let key = key.trim();
    if key.is_empty() {
        return Err(Error::Other(format!("--vary '{text}' names no parameter")));
    }
    let separator = if list.contains(';') { ';' } else { ',' };
    let values: Vec<String> = list
        .split(separator)
        .map(|v| v.trim().to_string())
        .filter(|v| !v.is_empty())
        .collect();
    if values.is_empty() {
        return Err(Error::Other(format!(
            "--vary {key}= has no values; give at least one, e.g. --vary {key}=1,2"
        )));
    }
    Ok((key.to_string(), values))
}

/// The points of `--vary` lists: every combination (the first key outermost), or with `zip`
/// the lists paired element by element (all the same length).
pub fn points(varies: &[String], zip: bool) -> Result<Points> {
    let mut keys: Vec<String> = Vec::new();
    let mut lists: Vec<Vec<String>> = Vec::new();
    for text in varies {
        let (key, values) = parse_vary(text)?;
        if keys.contains(&key) {
            return Err(Error::Other(format!(
                "--vary {key} is given twice; list all its values once"
            )));
        }
        keys.push(key);
        lists.push(values);
    }
    let rows = if lists.is_empty() {
        vec![Vec::new()]
    } else if zip {
        let n = lists[0].len();
        if let Some((k, l)) = keys.iter().zip(&lists).find(|(_, l)| l.len() != n) {
            return Err(Error::Other(format!(
                "--zip pairs the lists element by element, but {} has {n} values and {k} has {}",
                keys[0],
                l.len()
            )));
        }
        (0..n)
            .map(|i| lists.iter().map(|l| l[i].clone()).collect())
            .collect()
    } else {
        lists.iter().fold(vec![Vec::new()], |rows, list| {
            rows.iter()
                .flat_map(|row: &Vec<String>| {
                    list.iter().map(move |v| {
                        let mut r = row.clone();
                        r.push(v.clone());
                        r
                    })
                })
                .collect()
        })
    };
    Ok(Points { keys, rows })
}

/// `config` with `key` set from `text` (the rules `--set` follows), not yet checked as a whole.
pub fn assign(config: &ScenarioConfig, key: &str, text: &str) -> Result<ScenarioConfig> {
    if key == "scenario" {
        return Err(Error::Other(
            "'scenario' is not a parameter; sweep one scenario at a time".into(),
        ));
    }
    // On the config without its "scenario" tag, so that an unknown key's message lists only
    // the parameters.
    let mut json = serde_json::to_value(config).map_err(|e| Error::Other(e.to_string()))?;
    let tag = json
        .as_object_mut()
        .and_then(|m| m.remove("scenario"))
        .unwrap_or(Value::Null);
    let mut json = params::set(&json, key, text, config.params())?;
    if let Some(m) = json.as_object_mut() {
        m.insert("scenario".into(), tag);
    }
    serde_json::from_value(json).map_err(|e| Error::Other(format!("cannot set {key}={text}: {e}")))
}

/// A file-name-safe form of a value (at most 24 characters).
fn safe(text: &str) -> String {
    let s: String = text
        .chars()
        .map(|c| match c {
            'a'..='z' | 'A'..='Z' | '0'..='9' | '.' | '+' | '-' => c,
            _ => '_',
        })
        .take(24)
        .collect();
    if s.is_empty() { "_".into() } else { s }
}

/// The runs of a sweep: every point of `points` (each key checked on the base first, so a bad
/// key or value is named before anything runs), times `seeds` values of the seed parameters
/// (those of `seed_keys` the config has, each counted up from the base's). Every run's config
/// passes its scenario's checks and the memory budget.
pub fn runs(
    base: &ScenarioConfig,
    points: &Points,
    seed_keys: &[&str],
    seeds: Option<usize>,
) -> Result<Vec<RunSpec>> {
    if seeds == Some(0) {
        return Err(Error::Other("--seeds must be at least 1".into()));
    }
    let json = serde_json::to_value(base).map_err(|e| Error::Other(e.to_string()))?;
    // The seed parameters this config has, with their base values.
    let present: Vec<(&str, u64)> = seed_keys
        .iter()
        .filter_map(|k| Some((*k, params::lookup(&json, k).and_then(Value::as_u64)?)))
        .collect();
    if let Some(n) = seeds {
        if present.is_empty() {
            return Err(Error::Other(format!(
                "--seeds {n}: this {} config has no seed parameter ({})",
                base.name(),
                seed_keys.join(", ")
            )));
        }
        if let Some((k, _)) = present
            .iter()
            .find(|(k, _)| points.keys.iter().any(|v| v == k))
        {
            return Err(Error::Other(format!(
                "--seeds steps {k} itself; give either --seeds or --vary {k}=..."
            )));
        }
    }
    // Each key and value on its own, against the base: the error names the key and value.
    for (i, key) in points.keys.iter().enumerate() {
        let mut seen: Vec<&str> = Vec::new();
        for row in &points.rows {
            let v = row[i].as_str();
            if v.is_empty() || seen.contains(&v) {
                continue;
            }
            seen.push(v);
            assign(base, key, v).map_err(|e| Error::Other(format!("--vary {key}={v}: {e}")))?;
        }
    }
    let offsets: Vec<Option<u64>> = match seeds {
        None => vec![None],
        Some(n) => (0..n as u64).map(Some).collect(),
    };
    let total = points.rows.len() * offsets.len();
    let width = total.saturating_sub(1).to_string().len().max(3);
    let mut out = Vec::with_capacity(total);
    for row in &points.rows {
        let mut config = base.clone();
        for (key, v) in points.keys.iter().zip(row) {
            if !v.is_empty() {
                config = assign(&config, key, v)?;
            }
        }
        for &offset in &offsets {
            let index = out.len();
            let mut c = config.clone();
            let mut id = format!("{index:0width$}");
            for (key, v) in points.keys.iter().zip(row) {
                if !v.is_empty() {
                    id.push_str(&format!("_{}={}", safe(key), safe(v)));
                }
            }
            if let Some(k) = offset {
                for (key, first) in &present {
                    c = params::with_number(&c, key, (first + k) as f64)?;
                }
                if let Some((_, first)) = present.first() {
                    id.push_str(&format!("_seed={}", first + k));
                }
            }
            let seed = present
                .first()
                .and_then(|(key, _)| params::get_number(&c, key))
                .map(|s| s as u64);
            c.check()
                .map_err(|e| Error::Other(format!("run {id}: {e}")))?;
            out.push(RunSpec {
                id,
                values: row.clone(),
                seed,
                config: c,
            });
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vary(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn product_and_zip() {
        let p = points(&vary(&["a=1,2", "b=x,y,z"]), false).unwrap();
        assert_eq!(p.keys, ["a", "b"]);
        assert_eq!(p.rows.len(), 6);
        assert_eq!(p.rows[1], ["1", "y"]);
        let p = points(&vary(&["a=1,2", "b=x,y"]), true).unwrap();
        assert_eq!(p.rows, [["1", "x"], ["2", "y"]]);
        let e = points(&vary(&["a=1,2", "b=x,y,z"]), true).unwrap_err();
        assert!(e.to_string().contains("b has 3"), "{e}");
        let p = points(&vary(&["domain=-1,1;-2,2"]), false).unwrap();
        assert_eq!(p.rows, [["-1,1"], ["-2,2"]]);
    }

    #[test]
    fn bad_lists_are_named() {
        for (text, says) in [
            ("colors", "key=v1,v2"),
            ("colors=", "no values"),
            ("=1,2", "names no parameter"),
        ] {
            let e = points(&vary(&[text]), false).unwrap_err().to_string();
            assert!(e.contains(says), "{text}: {e}");
        }
        let e = points(&vary(&["a=1", "a=2"]), false).unwrap_err();
        assert!(e.to_string().contains("twice"), "{e}");
    }

    #[test]
    fn runs_check_keys_values_and_seeds() {
        let base = ScenarioConfig::default();
        let p = points(&vary(&["colors=10,20", "algorithm=discrete,kbp"]), false).unwrap();
        let r = runs(&base, &p, &["seed"], Some(2)).unwrap();
        assert_eq!(r.len(), 8);
        assert_eq!(r[3].id, "003_colors=10_algorithm=kbp_seed=1");
        assert_eq!(r[3].seed, Some(1));
        let e = runs(
            &base,
            &points(&vary(&["colour=1"]), false).unwrap(),
            &["seed"],
            None,
        )
        .unwrap_err()
        .to_string();
        assert!(
            e.contains("colour") && e.contains("unknown parameter"),
            "{e}"
        );
        let e = runs(
            &base,
            &points(&vary(&["colors=10,x"]), false).unwrap(),
            &["seed"],
            None,
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("colors=x"), "{e}");
        let e = runs(&base, &p, &["seed"], Some(0)).unwrap_err().to_string();
        assert!(e.contains("at least 1"), "{e}");
        let p = points(&vary(&["seed=1,2"]), false).unwrap();
        assert!(runs(&base, &p, &["seed"], Some(2)).is_err());
    }
}
