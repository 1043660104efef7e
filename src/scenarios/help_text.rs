//! `run NAME --help` with the defaults that actually run and the limits that fit the memory
//! budget. Each flag's help gets `[default: V]` read from the config's `Default` (so it cannot
//! drift from the code, unlike a default written into a doc comment, which is replaced) and,
//! for a flag that is a parameter of the scenario's table, `[range: lo..hi]`, where `hi` is the
//! largest value whose run (other parameters at their defaults) fits the memory budget
//! (`ScenarioParams::memory_need`) and says so when the budget lowers it.
//!
//! Cost: per flag one JSON lookup and, for a size parameter, a bisection of about 60
//! `memory_need` estimates (arithmetic on sizes, no allocation of the run itself).

use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::run::budget::{budget, format_bytes};
use crate::scenarios::params::{Kind, Param, lookup};
use crate::scenarios::registry::ScenarioParams;

/// The table entry of the flag `--long`: the one naming it as its flag, or the one whose key is
/// `--samples-per-edge` as `samples_per_edge`, or whose key's last part it is (`kbp.lambda`
/// answers to `--lambda`) where only one key ends so.
pub fn param_for<'a>(table: &'a [Param], long: &str) -> Option<&'a Param> {
    if let Some(p) = table.iter().find(|p| p.flag == Some(long)) {
        return Some(p);
    }
    let key = long.replace('-', "_");
    table.iter().find(|p| p.key == key).or_else(|| {
        let mut ends = table
            .iter()
            .filter(|p| p.key.rsplit('.').next() == Some(key.as_str()));
        let first = ends.next()?;
        // Two nested fields of the same name: the flag does not say which.
        ends.next().is_none().then_some(first)
    })
}

/// A default value as typed on the command line.
fn show_value(value: &Value) -> Option<String> {
    match value {
        Value::Null => Some("none".into()),
        Value::Bool(b) => Some(b.to_string()),
        Value::Number(n) => Some(match n.as_f64() {
            Some(x) if n.is_f64() && x != 0.0 && !(1e-3..1e6).contains(&x.abs()) => {
                format!("{x:e}")
            }
            _ => n.to_string(),
        }),
        Value::String(s) if s.is_empty() => None,
        Value::String(s) => Some(s.clone()),
        Value::Array(items) if items.is_empty() => None,
        Value::Array(items) => items
            .iter()
            .map(show_value)
            .collect::<Option<Vec<_>>>()
            .map(|v| v.join(",")),
        Value::Object(_) => None,
    }
}

fn show_number(x: f64, integer: bool) -> String {
    if !integer && x != 0.0 && !(1e-3..1e6).contains(&x.abs()) {
        format!("{x:e}")
    } else if integer || (x.fract() == 0.0 && x.abs() < 1e15) {
        format!("{}", x as i64)
    } else {
        format!("{x}")
    }
}

/// The largest value of `param` in its range whose run fits `budget`, others at their
/// defaults; `None` when the range's maximum fits (or the parameter does not size the run).
pub fn largest_fitting<C>(param: &Param, budget: u64) -> Option<f64>
where
    C: ScenarioParams + Default + Serialize + DeserializeOwned,
{
    let json = serde_json::to_value(C::default()).ok()?;
    let twin = square_twin(param.key, &json);
    let need_at = |x: f64| -> Option<u64> {
        let mut j = json.clone();
        set(&mut j, param.key, x, param.integer)?;
        if let Some(t) = &twin {
            set(&mut j, t, x, param.integer)?;
        }
        let config: C = serde_json::from_value(j).ok()?;
        Some(config.memory_need().map_or(0, |n| n.total()))
    };
    let fits = |x: f64| need_at(x).is_some_and(|n| n <= budget);
    if fits(param.max) || !fits(param.min) {
        return None;
    }
    let (mut lo, mut hi) = (param.min, param.max);
    for _ in 0..64 {
        if param.integer && hi - lo <= 1.0 {
            break;
        }
        let mid = if param.log && lo > 0.0 {
            (lo * hi).sqrt()
        } else {
            0.5 * (lo + hi)
        };
        let mid = if param.integer { mid.floor() } else { mid };
        if mid <= lo || mid >= hi {
            break;
        }
        if fits(mid) { lo = mid } else { hi = mid }
    }
    Some(lo)
}

/// The other side of an image size (`width` for `height` and back), when the config has it:
/// a limit on one side is shown for a square image, where both grow together.
fn square_twin(key: &str, json: &Value) -> Option<String> {
    let (head, last) = key.rsplit_once('.').map_or(("", key), |(h, l)| (h, l));
    let other = match last {
        "width" => "height",
        "height" => "width",
        _ => return None,
    };
    let twin = if head.is_empty() {
        other.to_string()
    } else {
        format!("{head}.{other}")
    };
    lookup(json, &twin).is_some().then_some(twin)
}

fn set(json: &mut Value, key: &str, x: f64, integer: bool) -> Option<()> {
    let mut node = json;
    for part in key.split('.') {
        node = node.get_mut(part)?;
    }
    *node = if integer {
        Value::from(x as i64)
    } else {
        Value::from(x)
    };
    Some(())
}

/// A help text without a hand-written `[default: ...]` (the generated one replaces it).
fn without_written_default(help: &str) -> String {
    match help.find("[default:") {
        Some(start) => {
            let end = help[start..]
                .find(']')
                .map_or(help.len(), |e| start + e + 1);
            let text = format!("{}{}", &help[..start], &help[end..]);
            without_space_before_punctuation(&text)
        }
        None => help.trim_end().to_string(),
    }
}

/// `text` without the space a removed phrase leaves before a punctuation mark ("nodes ; more"
/// becomes "nodes; more") and without doubled or trailing spaces.
fn without_space_before_punctuation(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if matches!(c, '.' | ',' | ';' | ':' | ')') || c == ' ' {
            while out.ends_with(' ') {
                out.pop();
            }
        }
        out.push(c);
    }
    out.trim_end().to_string()
}

/// The flags of `command` (a `run NAME` subcommand of config `C`) with generated defaults and
/// budget-aware ranges.
pub fn annotate<C>(command: clap::Command) -> clap::Command
where
    C: ScenarioParams + Default + Serialize + DeserializeOwned,
{
    let Ok(defaults) = serde_json::to_value(C::default()) else {
        return command;
    };
    let budget = budget();
    let mut command = command;
    let args: Vec<(clap::Id, String, String)> = command
        .get_arguments()
        .filter_map(|a| {
            let long = a.get_long()?.to_string();
            let help = a.get_help().map(|h| h.to_string()).unwrap_or_default();
            Some((a.get_id().clone(), long, help))
        })
        .collect();
    for (id, long, help) in args {
        let param = param_for(C::PARAMS, &long);
        // A flag of the table is described by the table alone.
        let from_table = param.is_some() && help.is_empty();
        let help = match param {
            Some(p) if from_table => p.help.to_string(),
            _ => help,
        };
        let key = param.map_or_else(|| long.replace('-', "_"), |p| p.key.to_string());
        let default = lookup(&defaults, &key).and_then(show_value);
        let extra = match param {
            Some(p) => generated::<C>(p, &long, default.as_deref(), &defaults, budget),
            None => default
                .map(|d| vec![format!("[default: {d}]")])
                .unwrap_or_default(),
        };
        if extra.is_empty() && !from_table {
            continue;
        }
        let text = format!("{} {}", without_written_default(&help), extra.join(" "));
        command = command.mut_arg(id, |a| a.help(text.trim().to_string()));
    }
    command
}

/// What `--help` adds to the table's help of `p` (flag `--long`): the default read from the
/// config's `Default`, and by the entry's kind the range (with the memory budget's limit), the
/// names a choice accepts, or what a bare switch sets.
fn generated<C>(
    p: &Param,
    long: &str,
    default: Option<&str>,
    defaults: &Value,
    budget: u64,
) -> Vec<String>
where
    C: ScenarioParams + Default + Serialize + DeserializeOwned,
{
    let mut extra = Vec::new();
    match p.kind {
        Kind::Switch(Some(value)) => {
            let field = p.key.rsplit('.').next().unwrap_or(p.key).replace('_', "-");
            match default {
                Some(d) if field == long && value => extra.push(format!("[default: {d}]")),
                Some(d) => extra.push(format!("[sets {} to {value}; default: {d}]", p.key)),
                None => {}
            }
            return extra;
        }
        _ => extra.extend(default.map(|d| format!("[default: {d}]"))),
    }
    match p.kind {
        Kind::Number => {}
        Kind::Choice(_) | Kind::Switch(None) => {
            extra.push(format!("[possible values: {}]", p.names().join(", ")));
            return extra;
        }
        _ => return extra,
    }
    let unit = if p.unit.is_empty() {
        String::new()
    } else {
        format!(" {}", p.unit)
    };
    extra.push(match largest_fitting::<C>(p, budget) {
        Some(hi) => format!(
            "[range: {}..{}{unit}{} within the {} memory budget; up to {} with a larger \
             --max-memory]",
            show_number(p.min, p.integer),
            show_number(hi, p.integer),
            if square_twin(p.key, defaults).is_some() {
                " for a square image"
            } else {
                ""
            },
            format_bytes(budget),
            show_number(p.max, p.integer),
        ),
        None => format!(
            "[range: {}..{}{unit}]",
            show_number(p.min, p.integer),
            show_number(p.max, p.integer)
        ),
    });
    extra
}

/// The flags a table's parameters get without a field of their own in the scenario's flags:
/// one `--flag VALUE` per parameter whose flag name is unique in the table and not already
/// taken, applied by [`apply_table_flags`] as `--set` would.
pub fn add_table_flags(command: clap::Command, table: &'static [Param]) -> clap::Command {
    let taken: Vec<String> = command
        .get_arguments()
        .filter_map(|a| a.get_long().map(str::to_string))
        .collect();
    table
        .iter()
        .filter(|p| {
            let flag = p.flag_name();
            // Only numbers get a flag of the table's: a choice or a switch has its own.
            p.is_number()
                && !taken.contains(&flag)
                && table.iter().filter(|q| q.flag_name() == flag).count() == 1
        })
        .fold(command, |c, p| {
            c.arg(
                clap::Arg::new(table_arg_id(p))
                    .long(p.flag_name())
                    .value_name("VALUE")
                    .allow_hyphen_values(true)
                    .help(p.help),
            )
        })
}

/// `config` with the values of the flags [`add_table_flags`] made, in table order.
pub fn apply_table_flags<C: Serialize + DeserializeOwned>(
    config: C,
    matches: &clap::ArgMatches,
    table: &[Param],
) -> crate::error::Result<C> {
    table.iter().try_fold(config, |c, p| {
        let id = table_arg_id(p);
        match matches.try_get_one::<String>(&id) {
            Ok(Some(text)) => crate::scenarios::params::set(&c, p.key, text, table),
            _ => Ok(c),
        }
    })
}

fn table_arg_id(p: &Param) -> String {
    format!("table:{}", p.key)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn written_defaults_are_replaced() {
        assert_eq!(
            without_written_default("Number of gray levels C [default: 50]."),
            "Number of gray levels C."
        );
        assert_eq!(
            without_written_default("Lambda [default: see `list`]"),
            "Lambda"
        );
        assert_eq!(without_written_default("Seed"), "Seed");
        // A written default in mid-sentence leaves no space before the punctuation after it.
        assert_eq!(
            without_written_default(
                "Number of nodes (a square for grid) [default: 100]; `sweep sosmp` takes several"
            ),
            "Number of nodes (a square for grid); `sweep sosmp` takes several"
        );
        assert_eq!(
            without_written_default("Width [default: 64] , in  pixels ."),
            "Width, in pixels."
        );
    }

    #[test]
    fn the_largest_square_image_that_fits_the_budget() {
        use crate::scenarios::denoise::DenoiseConfig;
        let width = param_for(DenoiseConfig::PARAMS, "width").unwrap();
        let budget = 2_000_000_000;
        let hi = largest_fitting::<DenoiseConfig>(width, budget).unwrap();
        let need = |side: f64| {
            DenoiseConfig {
                width: side as usize,
                height: side as usize,
                ..DenoiseConfig::default()
            }
            .memory_need()
            .map_or(0, |n| n.total())
        };
        assert!(need(hi) <= budget, "{hi} does not fit");
        assert!(need(hi + 1.0) > budget, "{} fits too", hi + 1.0);
        assert!(hi < width.max, "the budget lowers the limit");
        // A budget the whole range fits: the table's maximum stands.
        assert_eq!(largest_fitting::<DenoiseConfig>(width, u64::MAX), None);
    }

    #[test]
    fn values_print_as_typed() {
        assert_eq!(show_value(&Value::from(1e-3)).as_deref(), Some("0.001"));
        assert_eq!(show_value(&Value::from(1e-5)).as_deref(), Some("1e-5"));
        assert_eq!(show_value(&Value::from("kbp")).as_deref(), Some("kbp"));
        assert_eq!(
            show_value(&serde_json::json!([1, 2])).as_deref(),
            Some("1,2")
        );
        assert_eq!(show_number(100.0, true), "100");
        assert_eq!(show_number(1e-12, false), "1e-12");
    }
}
