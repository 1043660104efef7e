//! The explorer window (egui). `logic()` drains the runner's events; `ui()` draws.

use std::sync::Arc;

use eframe::egui;

use crate::runner::{Command, Event, Runner, Snapshot};
use crate::scenarios::ScenarioConfig;

/// Opens the window on the built-in default scenario, already iterating.
pub fn run_window() -> Result<(), String> {
    let options = eframe::NativeOptions {
        viewport: egui::ViewportBuilder::default()
            .with_title("beliefscope")
            .with_inner_size([1280.0, 800.0])
            .with_drag_and_drop(true),
        ..Default::default()
    };
    eframe::run_native(
        "beliefscope",
        options,
        Box::new(|cc| Ok(Box::new(App::new(&cc.egui_ctx)))),
    )
    .map_err(|e| e.to_string())
}

pub struct App {
    runner: Runner,
    snapshot: Option<Arc<Snapshot>>,
    error: Option<String>,
}

impl App {
    pub fn new(ctx: &egui::Context) -> Self {
        let ctx = ctx.clone();
        let runner = Runner::spawn(
            Some(ScenarioConfig::default()),
            Arc::new(move || ctx.request_repaint()),
        );
        App {
            runner,
            snapshot: None,
            error: None,
        }
    }
}

impl eframe::App for App {
    fn logic(&mut self, _ctx: &egui::Context, _frame: &mut eframe::Frame) {
        for event in self.runner.drain() {
            match event {
                Event::Snapshot(s) => self.snapshot = Some(s),
                Event::Error(e) => self.error = Some(e),
                Event::Busy(_) | Event::TaskProgress { .. } | Event::TaskDone(_) => {}
            }
        }
    }

    fn ui(&mut self, ui: &mut egui::Ui, _frame: &mut eframe::Frame) {
        egui::CentralPanel::default().show(ui, |ui| {
            if ui.button("Step").clicked() {
                self.runner.send(Command::Step);
            }
            let it = self.snapshot.as_ref().map_or(0, |s| s.iteration);
            ui.label(format!("iteration {it}"));
            if let Some(e) = &self.error {
                ui.colored_label(egui::Color32::RED, e);
            }
        });
    }
}
