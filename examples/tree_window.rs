//! Opens the explorer on the tree scenario, for demos and screenshots:
//! `cargo run --release --example tree_window -- [gauss-tree|nongauss-chain|retrieval]
//! [chain|star|binary|chowliu] [nK | mK]` (select node K or message K). Never reads or writes
//! the saved window state.

use beliefscope::app::App;
use beliefscope::scenarios::tree::{BuiltinData, Topology, TreeConfig};
use beliefscope::scenarios::{Probe, ScenarioConfig};
use eframe::egui;

fn main() -> Result<(), String> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let builtin: BuiltinData = match args.first() {
        Some(s) => s.parse()?,
        None => BuiltinData::NongaussChain,
    };
    let mut config = TreeConfig::builtin(builtin);
    config.topology = match args.get(1).map(String::as_str) {
        None | Some("chain") => Topology::Chain,
        Some("star") => Topology::Star,
        Some("binary") => Topology::Binary,
        Some("chowliu") => Topology::ChowLiu,
        Some(other) => return Err(format!("unknown tree '{other}'")),
    };
    let select = args.get(2).and_then(|s| {
        let (kind, k) = s.split_at(1);
        let k = k.parse::<usize>().ok()?;
        match kind {
            "n" => Some(Probe::Node(k)),
            "m" => Some(Probe::Message(k)),
            _ => None,
        }
    });
    let options = eframe::NativeOptions {
        viewport: egui::ViewportBuilder::default()
            .with_title("beliefscope: tree kernel BP")
            .with_inner_size([1400.0, 900.0]),
        ..Default::default()
    };
    eframe::run_native(
        "beliefscope-tree",
        options,
        Box::new(move |cc| {
            let mut app = App::with_config(cc, ScenarioConfig::Tree(config), true);
            if let Some(p) = select {
                app.select(p);
            }
            Ok(Box::new(app))
        }),
    )
    .map_err(|e| e.to_string())
}
