//! "Copy as command": the `beliefscope run ...` line that reproduces the window's settings
//! headless. Settings that differ from the scenario's defaults become `--set key=value`; the
//! line is checked by applying it to the defaults the way the CLI does, and where that does not
//! give back exactly the same config (a value `--set` cannot express) the command carries the
//! config itself: `beliefscope run --config - <<'EOF' ... EOF`. Cost: O(fields) per call.

use serde_json::Value;

use crate::scenarios::ScenarioConfig;
use crate::scenarios::params::{self, lookup};
use crate::scenarios::registry::kind;

/// The value of a leaf as `--set` text.
fn set_text(v: &Value) -> Option<String> {
    match v {
        Value::Null => Some("none".into()),
        Value::Bool(b) => Some(b.to_string()),
        Value::Number(n) => Some(n.to_string()),
        Value::String(s) => Some(s.clone()),
        Value::Array(items) => items
            .iter()
            .map(|x| match x {
                Value::Number(n) => Some(n.to_string()),
                _ => None,
            })
            .collect::<Option<Vec<_>>>()
            .filter(|v| !v.is_empty())
            .map(|v| v.join(",")),
        Value::Object(_) => None,
    }
}

/// Quotes `s` for a POSIX shell where it needs it.
fn shell_quote(s: &str) -> String {
    let safe = |c: char| c.is_ascii_alphanumeric() || "-_.,=/:+@%".contains(c);
    if !s.is_empty() && s.chars().all(safe) {
        s.to_string()
    } else {
        format!("'{}'", s.replace('\'', r"'\''"))
    }
}

/// The `--set` assignments taking the defaults to `config`, if they reproduce it exactly.
fn assignments(config: &ScenarioConfig) -> Option<Vec<String>> {
    let default = (kind(config.name())?.default_config)();
    let (want, base) = (
        serde_json::to_value(config).ok()?,
        serde_json::to_value(&default).ok()?,
    );
    let mut sets = Vec::new();
    let mut rebuilt = default.clone();
    let mut keys = params::keys(&want);
    keys.extend(params::keys(&base));
    keys.sort();
    keys.dedup();
    for key in keys {
        let (w, b) = (lookup(&want, &key), lookup(&base, &key));
        if w == b {
            continue;
        }
        let text = set_text(w?)?;
        rebuilt = params::set(&rebuilt, &key, &text, config.params()).ok()?;
        sets.push(format!("{key}={text}"));
    }
    (rebuilt == *config).then_some(sets)
}

/// The command line reproducing `config` headless (results into `out`).
pub fn reproducing_command(config: &ScenarioConfig, out: &str) -> String {
    match assignments(config) {
        Some(sets) => {
            let mut line = format!(
                "beliefscope run {} --out {}",
                config.name(),
                shell_quote(out)
            );
            for s in sets {
                line.push_str(" --set ");
                line.push_str(&shell_quote(&s));
            }
            line
        }
        None => {
            let json = serde_json::to_string_pretty(config).unwrap_or_default();
            format!(
                "beliefscope run --config - --out {} <<'EOF'\n{json}\nEOF",
                shell_quote(out)
            )
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenarios::KINDS;

    #[test]
    fn defaults_need_no_sets() {
        for k in KINDS {
            let c = (k.default_config)();
            assert_eq!(
                reproducing_command(&c, "out"),
                format!("beliefscope run {} --out out", k.name)
            );
        }
    }

    #[test]
    fn an_edited_number_becomes_a_set_that_reproduces_it() {
        let k = &KINDS[0];
        let c = (k.default_config)();
        let p = c.params().first().expect("a parameter");
        let v = params::get_number(&c, p.key).unwrap();
        let edited =
            params::with_number(&c, p.key, if v == p.max { p.min } else { p.max }).unwrap();
        let sets = assignments(&edited).expect("expressible");
        assert_eq!(sets.len(), 1, "{sets:?}");
        assert!(sets[0].starts_with(p.key), "{sets:?}");
    }

    #[test]
    fn quoting() {
        assert_eq!(shell_quote("a=b"), "a=b");
        assert_eq!(shell_quote("my file.png"), "'my file.png'");
        assert_eq!(shell_quote("it's"), r"'it'\''s'");
    }
}
