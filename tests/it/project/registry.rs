//! The scenario registry: one entry per scenario, whose name, serde tag, default config,
//! parameter table and command-line verbs agree, and `--set` reaching every field.

use beliefscope::cli::{Cli, Command};
use beliefscope::runner::{HistoryLog, Snapshot};
use beliefscope::scenarios::help_text::param_for;
use beliefscope::scenarios::params::{self, Kind, lookup};
use beliefscope::scenarios::{KINDS, ScenarioConfig, catalogue};
use clap::{CommandFactory, Parser};

#[test]
fn every_entry_names_itself_consistently_and_its_defaults_pass_their_checks() {
    assert!(KINDS.len() >= 5);
    for kind in KINDS {
        let config = (kind.default_config)();
        assert_eq!(config.name(), kind.name);
        let tagged = serde_json::to_value(&config).unwrap();
        assert_eq!(tagged["scenario"], kind.name, "serde tag of {}", kind.name);
        config
            .check()
            .unwrap_or_else(|e| panic!("{}: default fails: {e}", kind.name));
        // The table describes fields that exist, with defaults inside their ranges.
        let json = config.to_json();
        for p in (kind.params)() {
            assert!(!p.label.is_empty(), "{}: {} has no label", kind.name, p.key);
            if !p.is_number() {
                // A switch that is off may be left out of the JSON (`csv_no_header`).
                assert!(
                    lookup(&json, p.key).is_some() || matches!(p.kind, Kind::Switch(_)),
                    "{}: no field at {}",
                    kind.name,
                    p.key
                );
                continue;
            }
            let v = lookup(&json, p.key)
                .and_then(|v| v.as_f64())
                .unwrap_or_else(|| panic!("{}: no number at {}", kind.name, p.key));
            p.check(v).unwrap();
            assert!(p.min <= p.max);
        }
    }
    let names: Vec<&str> = catalogue().iter().map(|(n, _, _)| *n).collect();
    // The first scenarios keep their order (the window's selector); names are unique.
    assert!(names.starts_with(&["denoise", "tree", "retrieval", "sosmp", "flow"]));
    let mut unique = names.clone();
    unique.sort_unstable();
    unique.dedup();
    assert_eq!(unique.len(), names.len(), "{names:?}");
}

#[test]
fn the_command_line_is_built_from_the_registry() {
    Cli::command().debug_assert();
    let run = Cli::command();
    let run = run.find_subcommand("run").unwrap();
    for kind in KINDS {
        assert!(
            run.find_subcommand(kind.name).is_some(),
            "run {}",
            kind.name
        );
    }
    let cli = Cli::try_parse_from([
        "beliefscope",
        "run",
        "denoise",
        "--iters",
        "7",
        "--set",
        "kbp.lambda=1e-4",
        "--set",
        "noise=12.5",
    ])
    .unwrap();
    let Some(Command::Run { scenario }) = cli.command else {
        panic!("not a run")
    };
    let (ScenarioConfig::Denoise(c), _) = scenario.run_config().unwrap() else {
        panic!("not denoise")
    };
    assert_eq!((c.max_iters, c.kbp.lambda, c.noise), (7, 1e-4, 12.5));
    // Unknown keys and out-of-range values name the problem.
    let cli = Cli::try_parse_from(["beliefscope", "run", "sosmp", "--set", "nodez=5"]).unwrap();
    let Some(Command::Run { scenario }) = cli.command else {
        panic!()
    };
    let e = scenario.run_config().unwrap_err().to_string();
    assert!(
        e.contains("unknown parameter 'nodez'") && e.contains("nodes"),
        "{e}"
    );
    let cli = Cli::try_parse_from(["beliefscope", "run", "flow", "--set", "levels=99"]).unwrap();
    let Some(Command::Run { scenario }) = cli.command else {
        panic!()
    };
    let e = scenario.run_config().unwrap_err().to_string();
    assert!(e.contains("levels") && e.contains("between 0 and"), "{e}");
    // A negative number is a value that reaches the range check, not an unknown flag.
    let cli = Cli::try_parse_from(["beliefscope", "run", "denoise", "--damping", "-0.5"]).unwrap();
    let Some(Command::Run { scenario }) = cli.command else {
        panic!()
    };
    let e = scenario.run_config().unwrap_err().to_string();
    assert!(e.contains("damping") && e.contains("-0.5"), "{e}");
    assert!(Cli::try_parse_from(["beliefscope", "run", "nosuch"]).is_err());
    assert!(Cli::try_parse_from(["beliefscope", "tune", "sosmp"]).is_err());
    assert!(Cli::try_parse_from(["beliefscope", "sweep", "sosmp", "--samples", "1,2"]).is_ok());
    // Every scenario sweeps over its parameter table.
    for kind in KINDS {
        let args = [
            "beliefscope",
            "sweep",
            kind.name,
            "--vary",
            "seed=1,2",
            "--out",
            "x",
        ];
        assert!(Cli::try_parse_from(args).is_ok(), "sweep {}", kind.name);
    }
}

/// Each parameter is described once, in its scenario's table: `run NAME` has a flag for it
/// (the scenario's own or one the table makes), whose help is the table's, with the default
/// and range generated; and a flag the table makes sets the field, with `--set` still last.
#[test]
fn every_table_parameter_has_a_flag_described_by_the_table() {
    for kind in KINDS {
        let command = (kind.run_command)();
        let table = (kind.params)();
        let mut flagged = 0;
        for p in table {
            let flag = p.flag_name();
            let same_flag = table.iter().filter(|q| q.flag_name() == flag).count();
            let Some(arg) = command
                .get_arguments()
                .find(|a| a.get_long() == Some(flag.as_str()))
            else {
                // Two nested fields with one last name (KJIT's experiments) are `--set` only.
                assert!(
                    same_flag > 1,
                    "{}: no flag --{flag} for {}",
                    kind.name,
                    p.key
                );
                continue;
            };
            if same_flag > 1 {
                continue;
            }
            flagged += 1;
            assert!(
                !p.help.is_empty(),
                "{}: --{flag} ({}) has no help in the table",
                kind.name,
                p.key
            );
            let help = arg.get_help().map(|h| h.to_string()).unwrap_or_default();
            assert!(
                help.starts_with(p.help),
                "{}: --{flag} is described apart from the table: {help}",
                kind.name
            );
            match p.kind {
                Kind::Number => assert!(
                    help.contains("[default: ") && help.contains("[range: "),
                    "{}: --{flag}: {help}",
                    kind.name
                ),
                Kind::Choice(_) => assert!(
                    help.contains("[default: ") && help.contains("[possible values: "),
                    "{}: --{flag}: {help}",
                    kind.name
                ),
                Kind::Switch(_) | Kind::Value => {}
            }
        }
        assert!(flagged > 0 || table.is_empty(), "{}", kind.name);
    }
    let parse = |args: &[&str]| {
        let cli = Cli::try_parse_from(args).unwrap();
        let Some(Command::Run { scenario }) = cli.command else {
            panic!("not a run")
        };
        scenario.run_config()
    };
    let Ok((ScenarioConfig::Teach(c), _)) =
        parse(&["beliefscope", "run", "teach", "--field", "2.5"])
    else {
        panic!("not teach")
    };
    assert_eq!(c.field, 2.5);
    let Ok((ScenarioConfig::Teach(c), _)) = parse(&[
        "beliefscope",
        "run",
        "teach",
        "--field",
        "2.5",
        "--set",
        "field=0.5",
    ]) else {
        panic!("not teach")
    };
    assert_eq!(c.field, 0.5, "--set is applied after every flag");
    let e = parse(&["beliefscope", "run", "teach", "--field", "9"]).unwrap_err();
    assert!(e.to_string().contains("field"), "{e}");
}

/// Every flag of `run NAME` that reaches a field of the config is described in one place, the
/// scenario's table: its field in `cli.rs` has no doc comment, and `--help` shows the table's
/// help. A flag that is not a field (`--out`, `--set`, `--preset`) has help of its own, with no
/// hand-written default.
#[test]
fn every_flag_of_a_config_field_has_its_help_in_the_table_alone() {
    // Flags of an input that is not one field of the config (tree's data source).
    let inputs = [("tree", "data")];
    let mut described = 0;
    for kind in KINDS {
        let table = (kind.params)();
        let json = (kind.default_config)().to_json();
        let written = (kind.run_flags)();
        let shown = (kind.run_command)();
        for arg in written.get_arguments() {
            let Some(long) = arg.get_long() else {
                continue;
            };
            let own = arg.get_help().map(|h| h.to_string()).unwrap_or_default();
            match param_for(table, long) {
                Some(p) => {
                    described += 1;
                    assert!(
                        own.is_empty(),
                        "{}: --{long} ({}) is described in cli.rs as well as in the table: {own}",
                        kind.name,
                        p.key
                    );
                    let help = shown
                        .get_arguments()
                        .find(|a| a.get_long() == Some(long))
                        .and_then(|a| a.get_help())
                        .map(|h| h.to_string())
                        .unwrap_or_default();
                    assert!(
                        !p.help.is_empty() && help.starts_with(p.help),
                        "{}: --{long}: {help}",
                        kind.name
                    );
                }
                None => {
                    assert!(
                        !own.is_empty() && !own.contains("[default:"),
                        "{}: --{long} needs help of its own, without a written default: {own}",
                        kind.name
                    );
                    let key = long.replace('-', "_");
                    assert!(
                        lookup(&json, &key).is_none() || inputs.contains(&(kind.name, long)),
                        "{}: --{long} sets the field {key}, which the table does not describe",
                        kind.name
                    );
                }
            }
        }
    }
    assert!(
        described > 60,
        "only {described} flags described by the tables"
    );
}

/// `run NAME --help` shows a choice's default as the config's `Default` has it, and the names
/// the choice accepts from its enum.
#[test]
fn help_shows_the_real_default_of_every_choice() {
    let mut choices = 0;
    for kind in KINDS {
        let json = (kind.default_config)().to_json();
        let mut command = (kind.run_command)();
        let text = command.render_long_help().to_string();
        for p in (kind.params)() {
            let Kind::Choice(names) = p.kind else {
                continue;
            };
            let Some(arg) = command
                .get_arguments()
                .find(|a| a.get_long() == Some(p.flag_name().as_str()))
            else {
                continue;
            };
            choices += 1;
            let help = arg.get_help().map(|h| h.to_string()).unwrap_or_default();
            let default = match lookup(&json, p.key) {
                Some(serde_json::Value::String(s)) => s.clone(),
                Some(serde_json::Value::Null) => "none".to_string(),
                other => panic!("{}: {} is not a name: {other:?}", kind.name, p.key),
            };
            assert!(
                default == "none" || names().contains(&default.as_str()),
                "{}: {}'s default {default} is not one of {:?}",
                kind.name,
                p.key,
                names()
            );
            let expected = format!("[default: {default}]");
            assert!(
                help.contains(&expected),
                "{}: --{}: {help}",
                kind.name,
                p.flag_name()
            );
            assert!(
                help.contains(&format!("[possible values: {}]", names().join(", "))),
                "{}: --{}: {help}",
                kind.name,
                p.flag_name()
            );
            assert!(
                text.contains(&expected),
                "{}: --help lacks {expected}",
                kind.name
            );
        }
    }
    assert!(choices >= 15, "only {choices} choices");
    // Denoise's algorithm, from its Default.
    let algorithm = beliefscope::scenarios::denoise::DenoiseConfig::default().algorithm;
    let denoise = KINDS.iter().find(|k| k.name == "denoise").unwrap();
    let help = (denoise.run_command)().render_long_help().to_string();
    assert!(
        help.contains(&format!("[default: {}]", algorithm.label())),
        "{help}"
    );
}

/// The keys a room names in `param_row(ui, c, PARAMS, "key")`, `param_label(ui, PARAMS,
/// "key")` and the key lists it loops over: every one is in its scenario's table (a missing
/// key would draw no row, or a bare key as its label).
#[test]
fn every_key_a_room_names_is_in_its_table() {
    let rooms = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src/app/scenarios");
    let mut named = 0;
    for kind in KINDS {
        let table = (kind.params)();
        let Ok(entries) = std::fs::read_dir(rooms.join(kind.name)) else {
            continue;
        };
        for entry in entries {
            let path = entry.unwrap().path();
            let source = std::fs::read_to_string(&path).unwrap();
            let mut keys = Vec::new();
            for pattern in ["PARAMS, \"", "for key in [\""] {
                for (at, _) in source.match_indices(pattern) {
                    let rest = &source[at + pattern.len() - 1..];
                    let end = rest.find([']', ')']).unwrap_or(rest.len());
                    keys.extend(rest[..end].split(',').filter_map(|k| {
                        let k = k.trim();
                        k.strip_prefix('"')?.strip_suffix('"').map(str::to_string)
                    }));
                }
            }
            for key in keys {
                named += 1;
                assert!(
                    table.iter().any(|p| p.key == key),
                    "{}: the room names '{key}', which is not in the {} table",
                    path.display(),
                    kind.name
                );
            }
        }
    }
    assert!(named > 30, "only {named} keys found in the rooms");
}

#[test]
fn set_on_a_config_changes_one_field_and_keeps_the_rest() {
    let c = ScenarioConfig::default();
    let d = c.set("max_iters", "33").unwrap();
    let (a, b) = (c.to_json(), d.to_json());
    assert_eq!(b["max_iters"], 33);
    let changed: Vec<String> = params::keys(&a)
        .into_iter()
        .filter(|k| lookup(&a, k) != lookup(&b, k))
        .collect();
    assert_eq!(changed, ["max_iters"]);
    assert!(c.set("max_iters", "0").is_err());
}

fn record(iter: usize) -> beliefscope::run::IterationRecord {
    beliefscope::run::IterationRecord {
        iter,
        seconds: 0.0,
        residual: 1.0 / iter as f64,
        metrics: Default::default(),
    }
}

fn snapshot(run: u64, first_new: usize, iters: std::ops::Range<usize>) -> Snapshot {
    Snapshot {
        seq: 0,
        answered: 0,
        run,
        first_new,
        new_records: iters.map(record).collect(),
        config: ScenarioConfig::default(),
        algorithm: String::new(),
        setup_seconds: 0.0,
        iteration: 0,
        playing: false,
        finished: false,
        history: Default::default(),
        view: beliefscope::scenarios::ScenarioView::Retrieval(Default::default()),
        probe: None,
        convergence: None,
    }
}

#[test]
fn the_history_log_appends_new_records_and_starts_over_with_a_new_run() {
    let mut log = HistoryLog::default();
    let s = log.absorb(snapshot(1, 0, 1..4));
    assert_eq!(s.history.len(), 3);
    drop(s);
    let s = log.absorb(snapshot(1, 3, 4..6));
    let iters: Vec<usize> = s.history.iter().map(|r| r.iter).collect();
    assert_eq!(iters, [1, 2, 3, 4, 5]);
    // A new run (a reset or a new load) replaces the history.
    let s = log.absorb(snapshot(2, 0, 1..2));
    assert_eq!(s.history.len(), 1);
    // An older snapshot still held does not see later records.
    let t = log.absorb(snapshot(2, 1, 2..3));
    assert_eq!((s.history.len(), t.history.len()), (1, 2));
}

/// A scenario without a room of its own gets the generic room: its parameter table as a form.
#[test]
fn the_generic_room_draws_the_parameter_table_as_a_form() {
    use beliefscope::app::scenarios::{GenericRoom, RoomContext, ScenarioUi};
    use beliefscope::app::state::State;
    use egui_kittest::kittest::{NodeT as _, Queryable as _};

    let mut harness = egui_kittest::Harness::new_ui_state(
        |ui, config: &mut ScenarioConfig| {
            let mut state = State::default();
            let mut commands = Vec::new();
            let mut cx = RoomContext {
                snapshot: None,
                state: &mut state,
                selection: None,
                task_running: false,
                task: None,
                last_task: None,
                commands: &mut commands,
                heights: Default::default(),
            };
            GenericRoom::default().params(ui, config, &mut cx);
        },
        ScenarioConfig::default(),
    );
    harness.run();
    // Every number of the table is there, labelled with its unit.
    for kind in KINDS.iter().filter(|k| k.name == "denoise") {
        for p in (kind.params)().iter().filter(|p| p.is_number()) {
            let label = if p.unit.is_empty() {
                p.label.to_string()
            } else {
                format!("{} ({})", p.label, p.unit)
            };
            // The label and the slider it names.
            assert_eq!(
                harness.query_all_by_label(&label).count(),
                2,
                "row '{label}'"
            );
        }
    }
    // Editing a slider edits the config.
    harness
        .query_all_by_label("Iterations")
        .find(|n| n.accesskit_node().role() == eframe::egui::accesskit::Role::Slider)
        .expect("the iterations slider")
        .focus();
    harness.run();
    harness.key_press(eframe::egui::Key::ArrowRight);
    harness.run();
    let ScenarioConfig::Denoise(c) = harness.state() else {
        panic!("not denoise")
    };
    assert_ne!(
        c.max_iters,
        beliefscope::scenarios::denoise::DenoiseConfig::default().max_iters
    );
}
