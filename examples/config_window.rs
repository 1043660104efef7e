//! Opens the explorer on a config given as JSON (the `config` object of a results.json with its
//! `"scenario"` tag, or the file's whole `{"scenario": ..., "config": {...}}`), already playing,
//! without reading or writing the saved window state. For measuring the window on long runs:
//! `BELIEFSCOPE_FRAME_LOG=1 cargo run --release --example config_window -- run.json`. A
//! scenario's name instead of a file opens its defaults; `KEY=VALUE` arguments after it change
//! parameters as `--set` does (`config_window denoise max_iters=100000 tolerance=0`).

use beliefscope::app::App;
use beliefscope::scenarios::{ScenarioConfig, registry};
use eframe::egui;

fn main() -> Result<(), String> {
    let mut args = std::env::args().skip(1);
    let source = args
        .next()
        .ok_or("usage: config_window CONFIG.json|SCENARIO [KEY=VALUE ...]")?;
    let mut config = read_config(&source)?;
    // `KEY=VALUE` as `--set` takes them, e.g. `denoise max_iters=100000 tolerance=0`.
    for assignment in args {
        let (key, value) = assignment
            .split_once('=')
            .ok_or(format!("'{assignment}' is not KEY=VALUE"))?;
        config = config.set(key, value).map_err(|e| e.to_string())?;
    }
    let options = eframe::NativeOptions {
        viewport: egui::ViewportBuilder::default()
            .with_title("beliefscope")
            .with_inner_size([1360.0, 840.0]),
        ..Default::default()
    };
    eframe::run_native(
        "beliefscope-config",
        options,
        Box::new(move |cc| {
            let mut app = App::with_config(cc, config, true);
            // For screenshots: BELIEFSCOPE_SHOW=explain,shortcuts,about,open,figures
            let show = std::env::var("BELIEFSCOPE_SHOW").unwrap_or_default();
            app.show_help(
                show.contains("explain"),
                show.contains("shortcuts"),
                show.contains("about"),
            );
            if show.contains("open") {
                app.ask_to_open();
            }
            // BELIEFSCOPE_SHOW=figures opens Help > Paper figures; BELIEFSCOPE_FIGURE=ID runs one.
            if show.contains("figures") {
                app.paper_figures().open = true;
            }
            if let Ok(id) = std::env::var("BELIEFSCOPE_FIGURE") {
                app.paper_figures().run(&id);
            }
            // BELIEFSCOPE_OPEN=FILE opens FILE as File > Open does (e.g. a sweep's pendigits.json).
            if let Ok(path) = std::env::var("BELIEFSCOPE_OPEN") {
                app.open_image(path.into());
            }
            Ok(Box::new(app))
        }),
    )
    .map_err(|e| e.to_string())
}

/// A config file, or the defaults of the scenario of that name.
fn read_config(source: &str) -> Result<ScenarioConfig, String> {
    if let Some(kind) = registry::kind(source) {
        return Ok((kind.default_config)());
    }
    let text = std::fs::read_to_string(source).map_err(|e| format!("cannot read {source}: {e}"))?;
    let json: serde_json::Value = serde_json::from_str(&text).map_err(|e| e.to_string())?;
    // A results.json carries the tag beside the config; a bare config carries it inside.
    let tagged = match (json.get("scenario"), json.get("config")) {
        (Some(name), Some(serde_json::Value::Object(config))) => {
            let mut config = config.clone();
            config.insert("scenario".into(), name.clone());
            serde_json::Value::Object(config)
        }
        _ => json,
    };
    serde_json::from_value(tagged).map_err(|e| format!("{source}: {e}"))
}
