//! The floor plan of ARCHITECTURE.md, checked: every `crate::` path in `src/` may name only the
//! top-level modules its floor allows, and only `src/app/` and `src/main.rs` name egui or eframe.
//! A failure names the file, the line and the forbidden module.

use std::path::{Path, PathBuf};

/// The floors from the bottom up: each top-level module and the modules it may name (itself
/// always). `error` and `run` are the ground floor.
const FLOORS: &[(&str, &[&str])] = &[
    ("error", &[]),
    ("run", &["error"]),
    ("model", &["error", "run"]),
    ("kernel", &["error", "run"]),
    ("inference", &["error", "run", "model", "kernel"]),
    ("io", &["error", "run", "model"]),
    ("viz", &["error", "run", "model"]),
    (
        "scenarios",
        &["error", "run", "model", "kernel", "inference", "io", "viz"],
    ),
    ("runner", &["error", "run", "model", "scenarios"]),
    (
        "cli",
        &[
            "error",
            "run",
            "model",
            "kernel",
            "inference",
            "io",
            "viz",
            "scenarios",
            "runner",
        ],
    ),
    (
        "app",
        &[
            "error",
            "run",
            "model",
            "kernel",
            "inference",
            "io",
            "viz",
            "scenarios",
            "runner",
        ],
    ),
];

/// A forbidden name found in a file.
#[derive(Debug, PartialEq)]
struct Violation {
    file: String,
    line: usize,
    what: String,
}

impl std::fmt::Display for Violation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{}: {}", self.file, self.line, self.what)
    }
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("src/ is readable") {
        let path = entry.expect("a directory entry").path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The source with every comment replaced by spaces (newlines kept, so byte offsets still give
/// line numbers). String literals are left alone: import paths are never inside one.
fn without_comments(source: &str) -> String {
    let bytes = source.as_bytes();
    let mut out = bytes.to_vec();
    let mut i = 0;
    while i + 1 < bytes.len() {
        if bytes[i] == b'/' && bytes[i + 1] == b'/' {
            while i < bytes.len() && bytes[i] != b'\n' {
                out[i] = b' ';
                i += 1;
            }
        } else if bytes[i] == b'/' && bytes[i + 1] == b'*' {
            while i + 1 < bytes.len() && !(bytes[i] == b'*' && bytes[i + 1] == b'/') {
                if bytes[i] != b'\n' {
                    out[i] = b' ';
                }
                i += 1;
            }
            out[i] = b' ';
            if i + 1 < out.len() {
                out[i + 1] = b' ';
            }
            i += 2;
        } else {
            i += 1;
        }
    }
    String::from_utf8(out).expect("replacing ASCII by spaces keeps UTF-8")
}

fn is_ident(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

fn line_of(text: &str, offset: usize) -> usize {
    text[..offset].matches('\n').count() + 1
}

/// The identifier starting at `offset`.
fn ident_at(text: &str, offset: usize) -> &str {
    let rest = &text[offset..];
    let end = rest.find(|c: char| !is_ident(c)).unwrap_or(rest.len());
    &rest[..end]
}

/// Every module named right after `prefix` (also each member of a `prefix{a, b::c}` group),
/// with its line. `prefix` ends in `::`; a prefix glued to a longer name (`$crate::`,
/// `mycrate::`) is not a path of ours.
fn names_after(source: &str, prefix: &str) -> Vec<(usize, String)> {
    let text = without_comments(source);
    let mut found = Vec::new();
    let mut from = 0;
    while let Some(i) = text[from..].find(prefix) {
        let start = from + i;
        from = start + prefix.len();
        if text[..start]
            .chars()
            .last()
            .is_some_and(|c| is_ident(c) || c == '$')
        {
            continue;
        }
        let after = text[from..].trim_start();
        let at = text.len() - after.len();
        if !after.starts_with('{') {
            let name = ident_at(&text, at);
            if !name.is_empty() {
                found.push((line_of(&text, at), name.to_string()));
            }
            continue;
        }
        // A group: the first identifier of every member at depth 1.
        let mut depth = 0;
        let mut expect_member = false;
        for (j, c) in text[at..].char_indices() {
            let pos = at + j;
            match c {
                '{' => {
                    depth += 1;
                    expect_member = depth == 1;
                }
                '}' => {
                    depth -= 1;
                    if depth == 0 {
                        break;
                    }
                }
                ',' if depth == 1 => expect_member = true,
                c if is_ident(c) && expect_member => {
                    let name = ident_at(&text, pos);
                    found.push((line_of(&text, pos), name.to_string()));
                    expect_member = false;
                }
                _ => {}
            }
        }
    }
    found
}

/// Every top-level module named through `crate::`, with its line.
fn crate_modules(source: &str) -> Vec<(usize, String)> {
    names_after(source, "crate::")
}

/// The folders of `src/scenarios/` that serve every scenario instead of being one: the
/// paper-figure catalogue, which names scenarios by design. What every scenario may use (the
/// registry, the parameter tables, the generic sweep) is files of `src/scenarios/`, not
/// folders.
const SHARED_FOLDERS: &[&str] = &["paper_figures"];

/// The scenarios: the folders of `src/scenarios/` but [`SHARED_FOLDERS`].
fn scenario_names(src: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(src.join("scenarios"))
        .expect("src/scenarios is readable")
        .filter_map(|e| e.ok())
        .filter(|e| e.path().is_dir())
        .filter_map(|e| e.file_name().into_string().ok())
        .filter(|name| !SHARED_FOLDERS.contains(&name.as_str()))
        .collect();
    names.sort();
    names
}

/// The scenario a file belongs to: `scenarios/<name>/...` or `app/scenarios/<name>/...`.
fn owning_scenario<'a>(relative: &Path, scenarios: &'a [String]) -> Option<&'a str> {
    let parts: Vec<&str> = relative.iter().filter_map(|c| c.to_str()).collect();
    let name = match parts.as_slice() {
        ["scenarios", name, _, ..] | ["app", "scenarios", name, _, ..] => *name,
        _ => return None,
    };
    scenarios.iter().map(String::as_str).find(|s| *s == name)
}

/// A scenario's files (engine side and room) that name another scenario or its room.
fn cross_scenario_imports(relative: &Path, source: &str, scenarios: &[String]) -> Vec<Violation> {
    let Some(own) = owning_scenario(relative, scenarios) else {
        return Vec::new();
    };
    let mut found = Vec::new();
    for prefix in ["crate::scenarios::", "crate::app::scenarios::", "super::"] {
        for (line, name) in names_after(source, prefix) {
            if name != own && scenarios.contains(&name) {
                found.push(Violation {
                    file: relative.display().to_string(),
                    line,
                    what: format!(
                        "the `{own}` scenario may not import the `{name}` scenario or room: what two share belongs a floor down"
                    ),
                });
            }
        }
    }
    found.sort_by_key(|v| v.line);
    found
}

/// Whether a line names egui or eframe as a crate path.
fn names_egui(line: &str) -> bool {
    ["egui", "eframe", "egui_plot", "egui_kittest"]
        .iter()
        .any(|name| {
            line.match_indices(name).any(|(i, _)| {
                let before = line[..i].chars().last();
                let after = &line[i + name.len()..];
                !before.is_some_and(|c| is_ident(c) || c == '.')
                    && (after.starts_with("::") || after.starts_with(';'))
            })
        })
}

/// The violations in one file, given its path below `src/`.
fn check_file(relative: &Path, source: &str) -> Vec<Violation> {
    let file = relative.display().to_string();
    let top = relative
        .components()
        .next()
        .and_then(|c| c.as_os_str().to_str())
        .map(|s| s.trim_end_matches(".rs").to_string())
        .unwrap_or_default();
    let mut violations = Vec::new();
    if let Some((_, allowed)) = FLOORS.iter().find(|(name, _)| *name == top) {
        for (line, module) in crate_modules(source) {
            let known = FLOORS.iter().any(|(name, _)| *name == module);
            if known && module != top && !allowed.contains(&module.as_str()) {
                violations.push(Violation {
                    file: file.clone(),
                    line,
                    what: format!("`{top}` may not import `crate::{module}` (see ARCHITECTURE.md)"),
                });
            }
        }
    }
    let egui_allowed = relative.starts_with("app") || relative == Path::new("main.rs");
    if !egui_allowed {
        let text = without_comments(source);
        for (number, line) in text.lines().enumerate() {
            if names_egui(line) {
                violations.push(Violation {
                    file: file.clone(),
                    line: number + 1,
                    what: "only src/app/ and src/main.rs may use egui".to_string(),
                });
            }
        }
    }
    violations
}

/// Every file below `src/` that `wanted` (given its path below `src/`) selects, checked by
/// `check`: the number checked and the violations found.
fn check_sources(
    wanted: impl Fn(&Path) -> bool,
    check: impl Fn(&Path, &str) -> Vec<Violation>,
) -> (usize, Vec<String>) {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    files.sort();
    let mut checked = 0;
    let mut violations = Vec::new();
    for path in &files {
        let relative = path.strip_prefix(&src).expect("below src/");
        if !wanted(relative) {
            continue;
        }
        let source = std::fs::read_to_string(path).expect("a readable source file");
        violations.extend(check(relative, &source).iter().map(|v| v.to_string()));
        checked += 1;
    }
    (checked, violations)
}

#[test]
fn every_import_points_down_a_floor() {
    let (checked, list) = check_sources(|_| true, check_file);
    assert!(checked > 50, "only {checked} files found under src/");
    assert!(
        list.is_empty(),
        "imports that point up a floor:\n{}",
        list.join("\n")
    );
}

#[test]
fn no_scenario_imports_another() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let scenarios = scenario_names(&src);
    assert!(scenarios.len() >= 8, "scenarios found: {scenarios:?}");
    let (checked, list) = check_sources(
        |relative| owning_scenario(relative, &scenarios).is_some(),
        |relative, source| cross_scenario_imports(relative, source, &scenarios),
    );
    assert!(checked > 50, "only {checked} scenario files found");
    assert!(
        list.is_empty(),
        "scenarios that import each other:\n{}",
        list.join("\n")
    );
}

#[test]
fn the_scenario_checker_catches_cross_imports() {
    let scenarios: Vec<String> = ["retrieval", "sosmp", "teach", "tree"]
        .map(String::from)
        .to_vec();
    let check = |file: &str, source: &str| {
        cross_scenario_imports(Path::new(file), source, &scenarios)
            .iter()
            .map(|v| v.line)
            .collect::<Vec<_>>()
    };
    assert_eq!(
        check(
            "scenarios/retrieval/mod.rs",
            "use super::tree::builtin::X;\n"
        ),
        vec![1]
    );
    assert_eq!(
        check(
            "scenarios/teach/continuous.rs",
            "use crate::error::Error;\nuse crate::scenarios::{ScenarioParams, sosmp::config::A};\n"
        ),
        vec![2]
    );
    assert_eq!(
        check(
            "app/scenarios/retrieval/params.rs",
            "use crate::app::scenarios::tree::params::kernel_rows;\n"
        ),
        vec![1]
    );
    // Its own scenario, the shared floor below, comments and files outside a scenario pass.
    assert!(
        check(
            "scenarios/tree/data.rs",
            "use crate::scenarios::tree::X;\nuse super::config::Y;\n"
        )
        .is_empty()
    );
    assert!(
        check(
            "scenarios/tree/mod.rs",
            "use crate::scenarios::params::Param;\n"
        )
        .is_empty()
    );
    assert!(check("scenarios/retrieval/mod.rs", "// super::tree::X\n").is_empty());
    assert!(check("scenarios/registry.rs", "use super::tree::TreeScenario;\n").is_empty());
}

#[test]
fn every_top_level_module_has_a_floor() {
    let lib = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("src/lib.rs"))
        .expect("src/lib.rs");
    for line in lib.lines() {
        if let Some(name) = line.trim().strip_prefix("pub mod ") {
            let name = name.trim_end_matches(';');
            assert!(
                FLOORS.iter().any(|(floor, _)| *floor == name),
                "src/lib.rs declares `{name}`, which has no floor in tests/it/project/layers.rs"
            );
        }
    }
}

#[test]
fn the_checker_catches_wrong_imports() {
    let upward = "use crate::error::Result;\nuse crate::scenarios::CancelFlag;\n";
    assert_eq!(
        check_file(Path::new("inference/sosmp/mod.rs"), upward),
        vec![Violation {
            file: "inference/sosmp/mod.rs".into(),
            line: 2,
            what: "`inference` may not import `crate::scenarios` (see ARCHITECTURE.md)".into(),
        }]
    );
    let group = "use crate::{\n    error::Result,\n    runner::Runner,\n};\n";
    let found = check_file(Path::new("io/results.rs"), group);
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!(found[0].line, 3);
    let inline = "fn f() { let _ = crate::app::App::new; }";
    assert_eq!(check_file(Path::new("model/graph.rs"), inline).len(), 1);
    let commented = "// use crate::scenarios::X;\n/* crate::cli */ use crate::error::Error;";
    assert!(check_file(Path::new("kernel/gram.rs"), commented).is_empty());
    assert_eq!(
        check_file(Path::new("scenarios/flow/mod.rs"), "use eframe::egui;\n").len(),
        1
    );
    assert!(check_file(Path::new("app/mod.rs"), "use eframe::egui;\n").is_empty());
    assert!(check_file(Path::new("viz/icon.rs"), "let legui = 1; // egui::Ui\n").is_empty());
    // Unit tests live on their file's floor too: a fixture from a higher floor is a violation.
    let unit_test =
        "use crate::error::Error;\n#[cfg(test)]\nmod tests {\n    use crate::scenarios::X;\n}\n";
    assert_eq!(
        check_file(Path::new("inference/kbp/engine.rs"), unit_test).len(),
        1
    );
}

/// Every plot of the window is made by `app::views::ticks::plot`, whose spacers give each axis
/// at least two labelled ticks and whole numbers on integer axes: a `Plot::new`
/// anywhere else would bring back egui_plot's powers-of-ten grid with its single-tick axes.
#[test]
fn every_window_plot_uses_the_readable_ticks() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src.join("app"), &mut files);
    files.sort();
    assert!(files.len() > 20, "only {} files under src/app", files.len());
    let mut offenders = Vec::new();
    for path in &files {
        let relative = path.strip_prefix(&src).expect("below src/");
        if relative == Path::new("app/views/ticks.rs") {
            continue;
        }
        let source = without_comments(&std::fs::read_to_string(path).expect("readable"));
        for (offset, _) in source.match_indices("Plot::new(") {
            // `BoxPlot::new(` and the like are other items.
            let before = source[..offset].chars().next_back();
            if before.is_some_and(is_ident) {
                continue;
            }
            offenders.push(format!(
                "{}:{}",
                relative.display(),
                line_of(&source, offset)
            ));
        }
    }
    assert!(
        offenders.is_empty(),
        "plots made without app::views::ticks::plot:\n{}",
        offenders.join("\n")
    );
}

/// The builder expression that starts at `start` (a `ticks::plot(` call): up to the `;` that ends
/// its statement, the `.show(` that draws it, or the bracket that closes the expression around
/// it, whichever comes first. String literals are skipped so a `;` or `)` in a label is no end.
fn builder_expression(source: &str, start: usize) -> &str {
    let bytes = source.as_bytes();
    let mut depth = 0i32;
    let mut i = start;
    while i < bytes.len() {
        match bytes[i] {
            b'"' => {
                i += 1;
                while i < bytes.len() && bytes[i] != b'"' {
                    i += if bytes[i] == b'\\' { 2 } else { 1 };
                }
            }
            b'(' | b'[' | b'{' => depth += 1,
            b')' | b']' | b'}' => {
                depth -= 1;
                if depth < 0 {
                    break;
                }
            }
            b';' if depth == 0 => break,
            b'.' if depth == 0 && source[i..].starts_with(".show(") => break,
            _ => {}
        }
        i += 1;
    }
    &source[start..i.min(bytes.len())]
}

/// The `ticks::plot(` chains of `source` that set no y-axis or no x-axis label, as
/// (line, missing labels).
fn unlabelled_plots(source: &str) -> Vec<(usize, String)> {
    let source = without_comments(source);
    let mut found = Vec::new();
    for (offset, _) in source.match_indices("ticks::plot(") {
        let chain = builder_expression(&source, offset);
        let missing: Vec<&str> = ["x_axis_label", "y_axis_label"]
            .into_iter()
            .filter(|label| !chain.contains(&format!(".{label}(")))
            .collect();
        if !missing.is_empty() {
            found.push((line_of(&source, offset), missing.join(", ")));
        }
    }
    found
}

/// Every axis labelled with its quantity: each `ticks::plot(` chain of the window
/// sets both `.x_axis_label(` and `.y_axis_label(` before it is shown.
#[test]
fn every_window_plot_labels_both_axes() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src.join("app"), &mut files);
    files.sort();
    let mut plots = 0;
    let mut offenders = Vec::new();
    for path in &files {
        let relative = path.strip_prefix(&src).expect("below src/");
        let source = std::fs::read_to_string(path).expect("readable");
        plots += without_comments(&source).matches("ticks::plot(").count();
        for (line, missing) in unlabelled_plots(&source) {
            offenders.push(format!("{}:{line}: no {missing}", relative.display()));
        }
    }
    assert!(
        plots >= 30,
        "only {plots} ticks::plot calls found under src/app"
    );
    assert!(
        offenders.is_empty(),
        "plots without an axis label:\n{}",
        offenders.join("\n")
    );
}

#[test]
fn the_label_check_sees_the_chain_only() {
    let labelled = "let p = ticks::plot(\"a;b)\", X, Y)\n    .x_axis_label(\"t (s)\")\n    .y_axis_label(format!(\"{}\", u))\n    .show(ui, |p| {});";
    assert!(unlabelled_plots(labelled).is_empty());
    // A label set on a later statement or inside the closure is another expression.
    let later =
        "let p = ticks::plot(\"a\", X, Y).x_axis_label(\"t\");\nlet q = p.y_axis_label(\"v\");";
    assert_eq!(
        unlabelled_plots(later),
        vec![(1, "y_axis_label".to_string())]
    );
    let in_closure =
        "f(ticks::plot(\"a\", X, Y).show(ui, |p| p.x_axis_label(\"t\").y_axis_label(\"v\")));";
    assert_eq!(
        unlabelled_plots(in_closure),
        vec![(1, "x_axis_label, y_axis_label".to_string())]
    );
    let commented = "ticks::plot(\"a\", X, Y) // .x_axis_label(\"t\")\n    .y_axis_label(\"v\");";
    assert_eq!(
        unlabelled_plots(commented),
        vec![(1, "x_axis_label".to_string())]
    );
}
