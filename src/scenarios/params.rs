//! Parameter tables: each scenario's parameters described once (key, label, help, and for a
//! number its unit, range and scale; for a choice the names it accepts). The table is read by
//! the config's `check()` (ranges), by the command line (a flag's help, `--help`'s default and
//! range, and `--set key=value`, which reaches every field of a config by its results.json
//! name) and by the window (slider rows, and the label and tooltip of a room's own widgets).
//! Defaults are never repeated here: they are the config's `Default`. Keys are dotted paths into
//! the config's JSON, e.g. `kbp.lambda`.
//!
//! An entry is of one [`Kind`]: a number ([`Param::real`], [`Param::int`]), a choice among
//! named values ([`Param::choice`], the names from the enum's strum derive via [`names_of`]),
//! a switch ([`Param::switch`]) or any other value the config checks itself ([`Param::value`]:
//! a seed, a path, a list).
//!
//! Cost: a check or a `--set` serialises the config once (O(fields)).

use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::error::labels::Labelled;
use crate::error::{Error, Result};

/// What an entry of a table describes.
#[derive(Debug, Clone, Copy)]
pub enum Kind {
    /// A number in `min..=max`: a slider in the window, a range in `--help`, checked.
    Number,
    /// One of named values; the function lists the names the field accepts (see [`names_of`]).
    Choice(fn() -> Vec<&'static str>),
    /// On or off. `Some(v)`: its flag is bare and sets the field to `v` (`--no-sure-stop` sets
    /// `sure_stop` to false); `None`: the flag takes true or false.
    Switch(Option<bool>),
    /// Any other value, checked by the config itself: a seed, a path, a list, "auto" or a
    /// number.
    Value,
}

impl PartialEq for Kind {
    fn eq(&self, other: &Kind) -> bool {
        match (self, other) {
            (Kind::Number, Kind::Number) | (Kind::Value, Kind::Value) => true,
            (Kind::Choice(a), Kind::Choice(b)) => a() == b(),
            (Kind::Switch(a), Kind::Switch(b)) => a == b,
            _ => false,
        }
    }
}

/// The names of every variant of a named enum, in declaration order: what a [`Kind::Choice`]
/// of that enum accepts (`Param::choice("algorithm", "Algorithm", names_of::<Algorithm>)`).
pub fn names_of<E: Labelled>() -> Vec<&'static str> {
    E::names().collect()
}

/// One parameter of a config.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Param {
    /// The field's path in the config's JSON (results.json), e.g. `kbp.lambda`.
    pub key: &'static str,
    /// The label beside its slider, e.g. "noise σ".
    pub label: &'static str,
    /// The unit after the value ("" for none).
    pub unit: &'static str,
    /// Smallest and largest valid value (inclusive).
    pub min: f64,
    pub max: f64,
    /// Whether the value must be a whole number.
    pub integer: bool,
    /// Whether a slider should be logarithmic.
    pub log: bool,
    /// One line for the tooltip and `--help`.
    pub help: &'static str,
    /// The command-line flag, where it is not the key's last part (`max_iters` is `--iters`).
    pub flag: Option<&'static str>,
    /// The window slider's range, where it is narrower than the valid range.
    pub slider: Option<(f64, f64)>,
    /// A number, a choice, a switch or another value.
    pub kind: Kind,
}

impl Param {
    /// A real-valued parameter on a linear scale.
    pub const fn real(key: &'static str, label: &'static str, min: f64, max: f64) -> Param {
        Param {
            key,
            label,
            unit: "",
            min,
            max,
            integer: false,
            log: false,
            help: "",
            flag: None,
            slider: None,
            kind: Kind::Number,
        }
    }

    /// A whole-number parameter.
    pub const fn int(key: &'static str, label: &'static str, min: f64, max: f64) -> Param {
        Param {
            integer: true,
            ..Param::real(key, label, min, max)
        }
    }

    /// One of named values (`names` lists them, e.g. `names_of::<Schedule>`).
    pub const fn choice(
        key: &'static str,
        label: &'static str,
        names: fn() -> Vec<&'static str>,
    ) -> Param {
        Param {
            kind: Kind::Choice(names),
            ..Param::real(key, label, 0.0, 0.0)
        }
    }

    /// On or off; its flag takes true or false unless [`Param::sets`] makes it bare.
    pub const fn switch(key: &'static str, label: &'static str) -> Param {
        Param {
            kind: Kind::Switch(None),
            ..Param::real(key, label, 0.0, 0.0)
        }
    }

    /// A switch whose flag is bare and sets the field to `value` (with [`Param::flag`]:
    /// `Param::switch("sure_stop", "SURE").sets(false).flag("no-sure-stop")`).
    pub const fn sets(self, value: bool) -> Param {
        Param {
            kind: Kind::Switch(Some(value)),
            ..self
        }
    }

    /// Any other value the config checks itself (a seed, a path, a list).
    pub const fn value(key: &'static str, label: &'static str) -> Param {
        Param {
            kind: Kind::Value,
            ..Param::real(key, label, 0.0, 0.0)
        }
    }

    /// Whether it is a number with a range (a slider, a range check).
    pub fn is_number(&self) -> bool {
        matches!(self.kind, Kind::Number)
    }

    /// The names a choice accepts (empty for other kinds).
    pub fn names(&self) -> Vec<&'static str> {
        match self.kind {
            Kind::Choice(names) => names(),
            Kind::Switch(None) => vec!["true", "false"],
            _ => Vec::new(),
        }
    }

    pub const fn unit(self, unit: &'static str) -> Param {
        Param { unit, ..self }
    }

    pub const fn log(self) -> Param {
        Param { log: true, ..self }
    }

    pub const fn help(self, help: &'static str) -> Param {
        Param { help, ..self }
    }

    /// Names the command-line flag (without `--`) where the key's last part would not do.
    pub const fn flag(self, flag: &'static str) -> Param {
        Param {
            flag: Some(flag),
            ..self
        }
    }

    /// The window slider's range (within `min..=max`).
    pub const fn slider(self, lo: f64, hi: f64) -> Param {
        Param {
            slider: Some((lo, hi)),
            ..self
        }
    }

    /// The command-line flag without `--`: the named one, or the key's last part with `-` for
    /// `_` (`kbp.max_rank` is `max-rank`).
    pub fn flag_name(&self) -> String {
        self.flag.map_or_else(
            || {
                self.key
                    .rsplit('.')
                    .next()
                    .unwrap_or(self.key)
                    .replace('_', "-")
            },
            str::to_string,
        )
    }

    /// The slider's range: the table's, or the valid range.
    pub fn slider_range(&self) -> (f64, f64) {
        self.slider.unwrap_or((self.min, self.max))
    }

    /// `Ok` if `value` is finite, in range and (for integers) whole; else an error naming the
    /// key, the range and the value.
    pub fn check(&self, value: f64) -> Result<()> {
        let unit = if self.unit.is_empty() {
            String::new()
        } else {
            format!(" {}", self.unit)
        };
        if !value.is_finite() {
            return Err(Error::InvalidParameter {
                name: self.key,
                reason: format!("must be a finite number, got {value}"),
            });
        }
        if value < self.min || value > self.max {
            return Err(Error::InvalidParameter {
                name: self.key,
                reason: format!(
                    "must be between {} and {}{unit}, got {value}",
                    self.min, self.max
                ),
            });
        }
        if self.integer && value.fract() != 0.0 {
            return Err(Error::InvalidParameter {
                name: self.key,
                reason: format!("must be a whole number, got {value}"),
            });
        }
        Ok(())
    }
}

/// The value at a dotted `key` of a JSON object.
pub fn lookup<'a>(json: &'a Value, key: &str) -> Option<&'a Value> {
    key.split('.').try_fold(json, |v, part| v.get(part))
}

fn lookup_mut<'a>(json: &'a mut Value, key: &str) -> Option<&'a mut Value> {
    key.split('.').try_fold(json, |v, part| v.get_mut(part))
}

/// Every leaf key of a config's JSON (what `--set` accepts), sorted.
pub fn keys(json: &Value) -> Vec<String> {
    fn walk(v: &Value, prefix: &str, out: &mut Vec<String>) {
        match v {
            Value::Object(map) => {
                for (k, x) in map {
                    let key = if prefix.is_empty() {
                        k.clone()
                    } else {
                        format!("{prefix}.{k}")
                    };
                    match x {
                        Value::Object(inner) if !inner.is_empty() => walk(x, &key, out),
                        _ => out.push(key),
                    }
                }
            }
            _ => out.push(prefix.to_string()),
        }
    }
    let mut out = Vec::new();
    walk(json, "", &mut out);
    out.sort();
    out
}

/// Checks every number of `config` that `table` describes.
pub fn check_table<C: Serialize>(config: &C, table: &[Param]) -> Result<()> {
    let json = serde_json::to_value(config).map_err(|e| Error::Other(e.to_string()))?;
    for p in table.iter().filter(|p| p.is_number()) {
        if let Some(v) = lookup(&json, p.key).and_then(Value::as_f64) {
            p.check(v)?;
        }
    }
    Ok(())
}

/// The value of `key` in `config` as a number, where it is one.
pub fn get_number<C: Serialize>(config: &C, key: &str) -> Option<f64> {
    let json = serde_json::to_value(config).ok()?;
    lookup(&json, key).and_then(Value::as_f64)
}

/// `config` with the number at `key` replaced by `value` (rounded for whole-number fields).
pub fn with_number<C: Serialize + DeserializeOwned>(
    config: &C,
    key: &str,
    value: f64,
) -> Result<C> {
    let text = if value.fract() == 0.0 && value.abs() < 9e15 {
        format!("{}", value as i64)
    } else {
        format!("{value}")
    };
    set(config, key, &text, &[])
}

/// Text as the JSON value that replaces `old`: numbers stay numbers, text stays text, lists
/// are comma-separated.
fn parse_like(old: &Value, text: &str) -> std::result::Result<Value, String> {
    let number = |t: &str| -> std::result::Result<Value, String> {
        let t = t.trim();
        if let Ok(i) = t.parse::<i64>() {
            return Ok(Value::from(i));
        }
        let f: f64 = t.parse().map_err(|_| format!("'{t}' is not a number"))?;
        serde_json::Number::from_f64(f)
            .map(Value::Number)
            .ok_or_else(|| format!("'{t}' is not a finite number"))
    };
    match old {
        // A number field that also takes "auto" (e.g. SURE's probes) holds a number when set.
        Value::Number(_) if text.trim() == "auto" => Ok(Value::String("auto".to_string())),
        Value::Number(_) => number(text),
        Value::Bool(_) => text
            .trim()
            .parse::<bool>()
            .map(Value::Bool)
            .map_err(|_| format!("'{text}' is not true or false")),
        Value::Array(items) => {
            let like = items.first().cloned().unwrap_or(Value::from(0.0));
            text.split(',')
                .filter(|t| !t.trim().is_empty())
                .map(|t| parse_like(&like, t))
                .collect::<std::result::Result<Vec<_>, _>>()
                .map(Value::Array)
        }
        Value::Null => match text.trim() {
            "" | "none" | "null" => Ok(Value::Null),
            t => number(t).or_else(|_| Ok(Value::String(t.to_string()))),
        },
        _ => Ok(Value::String(text.trim().to_string())),
    }
}

/// `config` with `key` set from `text` (`--set key=text`), checked against `table`. Unknown
/// keys and values the field cannot take are errors that list what is allowed.
pub fn set<C: Serialize + DeserializeOwned>(
    config: &C,
    key: &str,
    text: &str,
    table: &[Param],
) -> Result<C> {
    let mut json = serde_json::to_value(config).map_err(|e| Error::Other(e.to_string()))?;
    let allowed = keys(&json);
    let Some(slot) = lookup_mut(&mut json, key) else {
        return Err(Error::Other(format!(
            "unknown parameter '{key}'; this scenario has: {}",
            allowed.join(", ")
        )));
    };
    let value = parse_like(slot, text)
        .map_err(|e| Error::Other(format!("cannot set {key}={text}: {e}")))?;
    let number = table.iter().find(|p| p.key == key && p.is_number());
    if let (Some(p), Some(v)) = (number, value.as_f64()) {
        p.check(v)?;
    }
    *slot = value;
    serde_json::from_value(json).map_err(|e| Error::Other(format!("cannot set {key}={text}: {e}")))
}

/// `key=value` pairs of `--set`, split at the first `=`.
pub fn split_assignment(text: &str) -> Result<(&str, &str)> {
    text.split_once('=')
        .map(|(k, v)| (k.trim(), v))
        .filter(|(k, _)| !k.is_empty())
        .ok_or_else(|| Error::Other(format!("--set takes key=value, got '{text}'")))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Deserialize;

    #[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
    struct Inner {
        lambda: f64,
    }

    #[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
    struct Config {
        iters: usize,
        name: String,
        image: Option<String>,
        domain: [f64; 2],
        inner: Inner,
    }

    const TABLE: &[Param] = &[
        Param::int("iters", "iterations", 1.0, 100.0),
        Param::real("inner.lambda", "λ", 1e-9, 1.0).log(),
    ];

    fn config() -> Config {
        Config {
            iters: 10,
            name: "a".into(),
            image: None,
            domain: [-5.0, 5.0],
            inner: Inner { lambda: 1e-3 },
        }
    }

    #[test]
    fn set_reaches_nested_fields_and_keeps_types() {
        let c = set(&config(), "inner.lambda", "0.5", TABLE).unwrap();
        assert_eq!(c.inner.lambda, 0.5);
        let c = set(&c, "iters", "20", TABLE).unwrap();
        assert_eq!(c.iters, 20);
        let c = set(&c, "domain", "-2,3", TABLE).unwrap();
        assert_eq!(c.domain, [-2.0, 3.0]);
        let c = set(&c, "image", "x.png", TABLE).unwrap();
        assert_eq!(c.image.as_deref(), Some("x.png"));
        let c = set(&c, "name", "b", TABLE).unwrap();
        assert_eq!(c.name, "b");
    }

    #[test]
    fn unknown_keys_and_bad_values_are_clear_errors() {
        let e = set(&config(), "lamda", "1", TABLE).unwrap_err().to_string();
        assert!(
            e.contains("unknown parameter 'lamda'") && e.contains("inner.lambda"),
            "{e}"
        );
        let e = set(&config(), "iters", "500", TABLE)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("iters") && e.contains("between 1 and 100"),
            "{e}"
        );
        let e = set(&config(), "iters", "2.5", TABLE)
            .unwrap_err()
            .to_string();
        assert!(e.contains("whole number"), "{e}");
        let e = set(&config(), "iters", "many", TABLE)
            .unwrap_err()
            .to_string();
        assert!(e.contains("not a number"), "{e}");
        assert!(split_assignment("iters").is_err());
        assert_eq!(split_assignment("a.b=-1").unwrap(), ("a.b", "-1"));
    }

    #[test]
    fn the_table_check_names_the_key() {
        let mut c = config();
        assert!(check_table(&c, TABLE).is_ok());
        c.inner.lambda = 0.0;
        let e = check_table(&c, TABLE).unwrap_err().to_string();
        assert!(e.contains("inner.lambda"), "{e}");
        assert_eq!(get_number(&config(), "inner.lambda"), Some(1e-3));
        assert_eq!(with_number(&config(), "iters", 7.0).unwrap().iters, 7);
    }
}
