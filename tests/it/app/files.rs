//! Files in and out of the window, driven through egui_kittest: the in-window file browser
//! (what Open falls back to without a system dialog), recent files, sessions (save, quit,
//! reopen: the same state), exports and Copy as command (re-run headless, same config).

use std::path::{Path, PathBuf};

use crate::cli_common::{beliefscope, read_json, stderr};
use crate::common::*;
use beliefscope::app::App;
use beliefscope::app::recent::RecentKind;
use beliefscope::scenarios::ScenarioConfig;
use beliefscope::scenarios::denoise::DenoiseConfig;
use eframe::egui::accesskit::Role;
use eframe::egui::{Key, Modifiers};
use egui_kittest::Harness;
use egui_kittest::kittest::Queryable as _;

fn gradient(dir: &Path, name: &str, w: u32, h: u32) -> PathBuf {
    let path = dir.join(name);
    image::GrayImage::from_fn(w, h, |x, y| image::Luma([(x * 7 + y * 3) as u8]))
        .save(&path)
        .unwrap();
    path
}

fn running_image(h: &Harness<'_, App>) -> Option<PathBuf> {
    let c = &h.state().snapshot()?.config;
    DenoiseConfig::of(c).and_then(|c| c.image.clone())
}

use beliefscope::scenarios::Registered as _;

/// The config a results.json echoes.
fn echoed_config(results: &Path) -> ScenarioConfig {
    let doc = read_json(results);
    let mut config = doc["config"].clone();
    config["scenario"] = doc["scenario"].clone();
    serde_json::from_value(config).unwrap()
}

/// Clicks the widget labelled `label` and lets a menu or popup open.
fn click(h: &mut Harness<'_, App>, label: &str) {
    h.get_by_label(label).click();
    h.run_steps(3);
}

/// Picks `name` in the scenario selector.
fn choose_scenario(h: &mut Harness<'_, App>, name: &str) {
    h.get_by_role_and_label(Role::ComboBox, "Scenario").click();
    h.run_steps(3);
    click(h, name);
}

/// Clicks the browser's Save (or Open) button and waits for the dialog to close.
fn confirm(h: &mut Harness<'_, App>, verb: &str) {
    h.get_by_label(verb).click();
    wait_for(h, "the dialog to close", |h| !h.state().file_dialog_open());
}

#[test]
fn open_falls_back_to_the_in_window_browser_starting_beside_the_last_file() {
    let dir = tempfile::tempdir().unwrap();
    let first = gradient(dir.path(), "first.png", 30, 20);
    gradient(dir.path(), "second.png", 26, 18);
    std::fs::write(dir.path().join("notes.txt"), "not offered").unwrap();
    let mut h = window_on(ScenarioConfig::Denoise(small_denoise()));
    h.state_mut().open_image(first.clone());
    wait_for(&mut h, "the first image", |h| {
        running_image(h).as_deref() == Some(&first)
    });

    // Ctrl+O: no system dialog in tests, so the in-window browser, in the folder of first.png.
    h.key_press_modifiers(Modifiers::COMMAND, Key::O);
    wait_for(&mut h, "the browser", |h| {
        h.query_by_label("second.png").is_some()
    });
    assert!(
        h.query_by_label("notes.txt").is_none(),
        "only images are offered"
    );
    click(&mut h, "second.png");
    confirm(&mut h, "Open");
    wait_for(&mut h, "the second image", |h| {
        running_image(h).is_some_and(|p| p.ends_with("second.png"))
    });
    // Both are recent images, newest first.
    let recent = h.state().state().recent.list(RecentKind::Images).to_vec();
    assert_eq!(recent.len(), 2);
    assert!(recent[0].ends_with("second.png") && recent[1].ends_with("first.png"));
    assert!(h.state().notices().is_empty(), "{:?}", h.state().notices());
}

#[test]
fn file_open_recent_reopens_a_file() {
    let dir = tempfile::tempdir().unwrap();
    let first = gradient(dir.path(), "first.png", 30, 20);
    let second = gradient(dir.path(), "second.png", 26, 18);
    let mut h = window_on(ScenarioConfig::Denoise(small_denoise()));
    for p in [&first, &second] {
        h.state_mut().open_image(p.clone());
        wait_for(&mut h, "the image", |h| {
            running_image(h).as_deref() == Some(p.as_path())
        });
    }
    click(&mut h, "File");
    click(&mut h, "Open recent");
    click(&mut h, "Images");
    h.get_by_label("first.png").click();
    wait_for(&mut h, "first.png again", |h| {
        running_image(h).as_deref() == Some(first.as_path())
    });
    // Clearing forgets them.
    click(&mut h, "File");
    click(&mut h, "Open recent");
    click(&mut h, "Clear recent files");
    assert!(h.state().state().recent.is_empty());
}

#[test]
fn a_saved_session_reopens_with_the_same_settings_and_files() {
    let dir = tempfile::tempdir().unwrap();
    let image = gradient(dir.path(), "photo.png", 28, 22);
    let mut h = window_on(ScenarioConfig::Denoise(small_denoise()));
    h.state_mut().open_image(image.clone());
    wait_for(&mut h, "the image", |h| {
        running_image(h).as_deref() == Some(&image)
    });

    // Switch to another scenario and back: the loaded image is not forgotten.
    choose_scenario(&mut h, "sosmp");
    wait_for(&mut h, "sosmp", |h| {
        h.state()
            .snapshot()
            .is_some_and(|s| s.config.name() == "sosmp")
    });
    choose_scenario(&mut h, "denoise");
    wait_for(&mut h, "denoise with its image", |h| {
        running_image(h).as_deref() == Some(image.as_path())
    });
    let saved_config = h.state().snapshot().unwrap().config.clone();

    // Ctrl+S: save the session beside the image.
    h.key_press_modifiers(Modifiers::COMMAND, Key::S);
    wait_for(&mut h, "the save dialog", |h| {
        h.query_by_label("File name").is_some()
    });
    confirm(&mut h, "Save");
    let session = dir.path().join("session.json");
    let doc = read_json(&session);
    assert_eq!(doc["format"], "beliefscope-session");
    assert!(
        doc["scenarios"]["sosmp"].is_object(),
        "every visited scenario is saved"
    );
    drop(h); // quit

    // A new window restores it.
    let mut h = window_on(ScenarioConfig::Denoise(small_denoise()));
    h.state_mut().open_session_file(session.clone());
    wait_for(&mut h, "the restored session", |h| {
        h.state()
            .snapshot()
            .is_some_and(|s| s.config == saved_config)
    });
    assert!(h.state().state().configs.contains_key("sosmp"));
    assert!(has_text(&h, "photo.png"));

    // A session from a newer beliefscope is refused with the reason; nothing changes.
    let newer = dir.path().join("newer.json");
    std::fs::write(
        &newer,
        r#"{"format":"beliefscope-session","version":99,"scenarios":{}}"#,
    )
    .unwrap();
    h.state_mut().open_session_file(newer);
    wait_for(&mut h, "the refusal", |h| {
        h.state()
            .notices()
            .iter()
            .any(|n| n.contains("newer beliefscope"))
    });
    assert_eq!(h.state().snapshot().unwrap().config, saved_config);
}

#[test]
fn exported_results_and_the_copied_command_rerun_headless_with_the_same_config() {
    let dir = tempfile::tempdir().unwrap();
    let image = gradient(dir.path(), "photo.png", 20, 14);
    let mut h = window_on(ScenarioConfig::Denoise(small_denoise()));
    h.state_mut().open_image(image.clone());
    wait_for(&mut h, "the image", |h| {
        running_image(h).as_deref() == Some(&image)
    });
    h.get_by_label("Step").click();
    wait_for(&mut h, "an iteration", |h| {
        h.state().snapshot().is_some_and(|s| !s.history.is_empty())
    });
    let config = h.state().snapshot().unwrap().config.clone();

    // File > Export > Results as results.json.
    click(&mut h, "File");
    click(&mut h, "Export");
    h.get_by_label("Results as results.json…").click();
    wait_for(&mut h, "the save dialog", |h| {
        h.query_by_label("File name").is_some()
    });
    confirm(&mut h, "Save");
    let exported = dir.path().join("results.json");
    let doc = read_json(&exported);
    assert_eq!(doc["scenario"], "denoise");
    assert!(!doc["iterations"].as_array().unwrap().is_empty());

    // Curves as CSV, without the header row when asked.
    click(&mut h, "File");
    click(&mut h, "Export");
    click(&mut h, "CSV without header row");
    if h.query_by_label("Curves as CSV…").is_none() {
        // (The checkbox closed the menu.)
        click(&mut h, "File");
        click(&mut h, "Export");
    }
    assert!(h.state().state().csv_without_header);
    h.get_by_label("Curves as CSV…").click();
    wait_for(&mut h, "the save dialog", |h| {
        h.query_by_label("File name").is_some()
    });
    confirm(&mut h, "Save");
    let csv = std::fs::read_to_string(dir.path().join("denoise-curves.csv")).unwrap();
    assert!(csv.starts_with("1,"), "{csv}");

    // `beliefscope run --config results.json` re-runs it with the same config.
    let out = dir.path().join("rerun");
    let o = beliefscope(&[
        "run",
        "--config",
        exported.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let rerun = echoed_config(&out.join("results.json"));
    assert_eq!(rerun, config);

    // Copy as command (Ctrl+Shift+C): the line runs and echoes the same config.
    h.key_press_modifiers(Modifiers::COMMAND | Modifiers::SHIFT, Key::C);
    h.step();
    let line = h
        .state()
        .last_copied_command()
        .expect("a command")
        .to_string();
    assert!(line.starts_with("beliefscope run denoise"), "{line}");
    assert!(line.contains("image="), "{line}");
    let out2 = dir.path().join("copied");
    let args: Vec<String> = line
        .split_whitespace()
        .skip(1)
        .map(|a| {
            if a == "results" {
                out2.display().to_string()
            } else {
                a.to_string()
            }
        })
        .collect();
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let o = beliefscope(&args);
    assert!(o.status.success(), "{line}: {}", stderr(&o));
    let copied = echoed_config(&out2.join("results.json"));
    assert_eq!(copied, config);
}

#[test]
fn help_windows_open_from_the_menu() {
    let mut h = window_on(ScenarioConfig::Denoise(small_denoise()));
    click(&mut h, "Help");
    click(&mut h, "Keyboard shortcuts");
    assert!(has_text(&h, "Run one iteration, then pause"));
    click(&mut h, "Help");
    click(&mut h, "About beliefscope");
    assert!(has_text(&h, "Kernel Belief Propagation. AISTATS 2011."));
}

#[test]
fn run_config_reruns_a_saved_results_json_and_says_what_is_wrong_with_a_bad_one() {
    let dir = tempfile::tempdir().unwrap();
    let first = dir.path().join("first");
    let o = beliefscope(&[
        "run",
        "sosmp",
        "--nodes",
        "6",
        "--iters",
        "40",
        "--seed",
        "3",
        "--out",
        first.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let saved = first.join("results.json");
    let second = dir.path().join("second");
    let o = beliefscope(&[
        "run",
        "--config",
        saved.to_str().unwrap(),
        "--out",
        second.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let (mut a, mut b) = (read_json(&saved), read_json(&second.join("results.json")));
    assert_eq!(a["config"], b["config"]);
    for doc in [&mut a, &mut b] {
        // (Timings differ from run to run.)
        doc["final"]["metrics"]
            .as_object_mut()
            .unwrap()
            .retain(|k, _| !k.contains("seconds"));
    }
    assert_eq!(
        a["final"], b["final"],
        "a seeded run reproduces its results"
    );
    // --set applies on top of the saved config.
    let third = dir.path().join("third");
    let o = beliefscope(&[
        "run",
        "--config",
        saved.to_str().unwrap(),
        "--set",
        "seed=4",
        "--out",
        third.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(read_json(&third.join("results.json"))["config"]["seed"], 4);
    // Not a config: one line naming the file and the scenarios.
    let bad = dir.path().join("bad.json");
    std::fs::write(&bad, r#"{"hello": 1}"#).unwrap();
    let o = beliefscope(&["run", "--config", bad.to_str().unwrap()]);
    assert!(!o.status.success());
    let e = stderr(&o);
    assert!(e.contains("bad.json") && e.contains("denoise"), "{e}");
    // Both a scenario and --config: refused by the parser.
    let o = beliefscope(&["run", "--config", bad.to_str().unwrap(), "sosmp"]);
    assert!(!o.status.success());
}

/// Pixels of exactly this colour in a PNG.
fn pixels_of(path: &Path, c: [u8; 3]) -> usize {
    let img = image::open(path).unwrap().to_rgb8();
    img.pixels().filter(|p| p.0 == c).count()
}

#[test]
fn cli_runs_write_figures_in_the_palette_colours() {
    use beliefscope::viz::palette::{FLOOR, Method};
    let dir = tempfile::tempdir().unwrap();
    let s = dir.path().join("sosmp");
    let o = beliefscope(&[
        "run",
        "sosmp",
        "--nodes",
        "6",
        "--iters",
        "60",
        "--out",
        s.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let error = s.join("error.png");
    assert!(
        pixels_of(&error, Method::Sosmp.color()) > 300,
        "the SOSMP mean is drawn"
    );
    assert!(pixels_of(&error, FLOOR) > 100, "the floor is drawn");

    let t = dir.path().join("tree");
    let o = beliefscope(&[
        "run",
        "tree",
        "--builtin",
        "nongauss-chain",
        "--rows",
        "300",
        "--evidence",
        "x1=0.5",
        "--out",
        t.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let beliefs = t.join("beliefs.png");
    for m in [Method::KernelBp, Method::GaussianBp, Method::Exact] {
        assert!(pixels_of(&beliefs, m.color()) > 100, "{m:?} is drawn");
    }
}

#[test]
fn a_csv_without_a_header_row_opens_with_generated_names() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("uci.data.csv");
    let rows: String = (0..200)
        .map(|i| {
            let x = (i as f64 * 0.37).sin();
            format!("{x},{},{}\n", 2.0 * x + 0.1 * (i as f64).cos(), -x)
        })
        .collect();
    std::fs::write(&data, rows).unwrap();
    let out = dir.path().join("out");
    let o = beliefscope(&[
        "run",
        "tree",
        "--data",
        data.to_str().unwrap(),
        "--no-header",
        "--evidence",
        "c1=0.5",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let doc = read_json(&out.join("results.json"));
    assert_eq!(doc["config"]["csv_no_header"], true);
    let csv = std::fs::read_to_string(out.join("beliefs.csv")).unwrap();
    assert!(csv.contains("\nc2,") && csv.contains("\nc3,"), "{csv}");
    // Without --no-header the first data row would be taken for names: the numbers are refused
    // or, here, the run reads one row fewer; either way the flag is what makes it right.
    let o = beliefscope(&["run", "tree", "--no-header", "--builtin", "gauss-tree"]);
    assert!(!o.status.success(), "--no-header needs --data");
}

/// A window-sized picture whose every pixel says where it is: red = x mod 256, green =
/// y mod 256, blue = 16 (x / 256) + y / 256.
fn position_coded(size: [usize; 2]) -> eframe::egui::ColorImage {
    let pixels = (0..size[0] * size[1])
        .map(|i| {
            let (x, y) = (i % size[0], i / size[0]);
            eframe::egui::Color32::from_rgb(
                (x % 256) as u8,
                (y % 256) as u8,
                (16 * (x / 256) + y / 256) as u8,
            )
        })
        .collect();
    eframe::egui::ColorImage::new(size, pixels)
}

/// Where a pixel of `position_coded` came from.
fn decode(p: &image::Rgba<u8>) -> (usize, usize) {
    let [r, g, b, _] = p.0;
    (
        r as usize + 256 * (b as usize / 16),
        g as usize + 256 * (b as usize % 16),
    )
}

/// The screenshot requests of the last frame, completed with `image`; how many there were.
fn answer_screenshots(h: &mut Harness<'_, App>, image: &eframe::egui::ColorImage) -> usize {
    let requests: Vec<eframe::egui::ScreenshotCallback> = h
        .output()
        .viewport_output
        .values()
        .flat_map(|v| v.commands.iter())
        .filter_map(|c| match c {
            eframe::egui::ViewportCommand::Screenshot(cb) => Some(cb.clone()),
            _ => None,
        })
        .collect();
    let n = requests.len();
    for cb in requests {
        cb.complete(std::sync::Arc::new(image.clone()));
    }
    n
}

#[test]
fn a_pane_saved_from_its_right_click_menu_is_the_window_cropped_to_it() {
    let dir = tempfile::tempdir().unwrap();
    let image = gradient(dir.path(), "photo.png", 24, 16);
    let mut h = window_on(ScenarioConfig::Denoise(small_denoise()));
    h.state_mut().open_image(image.clone());
    wait_for(&mut h, "the image", |h| {
        running_image(h).as_deref() == Some(&image)
    });
    h.run_steps(5);
    // The first pane a right-click finds, scanning the central area.
    let ctx = h.ctx.clone();
    let (pos, pane) = (320..1340)
        .step_by(40)
        .flat_map(|x| (80..800).step_by(40).map(move |y| (x, y)))
        .find_map(|(x, y)| {
            let pos = eframe::egui::pos2(x as f32, y as f32);
            h.state_mut().right_click_pane(&ctx, pos).map(|r| (pos, r))
        })
        .expect("a pane under the pointer somewhere");
    h.state_mut().right_click_pane(&ctx, pos);
    h.run_steps(2);
    click(&mut h, "Save this pane as PNG…");
    wait_for(&mut h, "the save dialog", |h| {
        h.query_by_label("File name").is_some()
    });
    h.get_by_label("Save").click();
    // The window answers the app's screenshot request with a picture that encodes positions.
    let ppp = h.ctx.pixels_per_point();
    let screen = h.ctx.content_rect().size() * ppp;
    let window = position_coded([screen.x.round() as usize, screen.y.round() as usize]);
    let mut answered = 0;
    for _ in 0..20 {
        h.step();
        answered += answer_screenshots(&mut h, &window);
        if answered > 0 {
            break;
        }
    }
    assert_eq!(answered, 1, "one screenshot is asked for");
    let saved = dir.path().join("denoise-pane.png");
    wait_for(&mut h, "the pane's PNG", |_| saved.exists());
    let png = image::open(&saved).unwrap().to_rgba8();
    // The PNG is the pane: its size, and its corners are the pane's corners in the window.
    let (w, hgt) = png.dimensions();
    assert!(
        (w as f32 - pane.width() * ppp).abs() <= 1.0
            && (hgt as f32 - pane.height() * ppp).abs() <= 1.0,
        "{w} x {hgt} for a pane of {pane:?}"
    );
    let (x0, y0) = decode(png.get_pixel(0, 0));
    let (x1, y1) = decode(png.get_pixel(w - 1, hgt - 1));
    let near = |a: usize, b: f32| (a as f32 - b).abs() <= 1.0;
    assert!(
        near(x0, pane.min.x * ppp) && near(y0, pane.min.y * ppp),
        "top left from ({x0}, {y0}), pane {pane:?}"
    );
    assert!(
        near(x1, pane.max.x * ppp - 1.0) && near(y1, pane.max.y * ppp - 1.0),
        "bottom right from ({x1}, {y1}), pane {pane:?}"
    );
    assert!(pane.width() < 1000.0, "a pane, not the whole window");
}

#[test]
fn escape_closes_the_dialog_on_top_before_it_clears_the_selection() {
    use beliefscope::scenarios::Probe;
    let mut h = window_on(ScenarioConfig::Denoise(small_denoise()));
    h.state_mut().select(Probe::Node(5));
    h.run_steps(2);
    click(&mut h, "Help");
    click(&mut h, "Keyboard shortcuts");
    click(&mut h, "Help");
    click(&mut h, "About beliefscope");
    assert!(has_text(&h, "Run one iteration, then pause"));
    assert!(has_text(&h, "Kernel Belief Propagation. AISTATS 2011."));

    // The last opened closes first; the selection stays while dialogs close.
    h.key_press(Key::Escape);
    h.run_steps(3);
    assert!(!has_text(&h, "Kernel Belief Propagation. AISTATS 2011."));
    assert!(has_text(&h, "Run one iteration, then pause"));
    h.key_press(Key::Escape);
    h.run_steps(3);
    assert!(!has_text(&h, "Run one iteration, then pause"));

    click(&mut h, "Help");
    click(&mut h, "What am I looking at?");
    assert!(
        h.query_by_label_contains("What am I looking at? (")
            .is_some()
    );
    h.key_press(Key::Escape);
    h.run_steps(3);
    assert!(
        h.query_by_label_contains("What am I looking at? (")
            .is_none()
    );

    click(&mut h, "Help");
    click(&mut h, "Paper figures");
    assert!(h.state_mut().paper_figures().open);
    h.key_press(Key::Escape);
    h.run_steps(3);
    assert!(!h.state_mut().paper_figures().open);

    // The in-window file browser: Escape cancels it.
    h.key_press_modifiers(Modifiers::COMMAND, Key::O);
    wait_for(&mut h, "the browser", |h| h.state().file_dialog_open());
    h.key_press(Key::Escape);
    wait_for(&mut h, "the browser to close", |h| {
        !h.state().file_dialog_open()
    });
    assert_eq!(h.state().selection(), Some(Probe::Node(5)));

    // With no dialog open, Escape clears the selection as before.
    h.key_press(Key::Escape);
    h.run_steps(3);
    assert_eq!(h.state().selection(), None);
}
