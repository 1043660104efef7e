//! The denoise room: the kernel-BP / discrete-BP parameters with auto-tune (`params`), the image
//! panes with the pixel probe, the RMSE and residual curves and the pixel's belief (`view`).

pub mod params;
pub mod view;

use std::path::{Path, PathBuf};

use eframe::egui;

use super::{Opened, RoomContext, ScenarioUi};
use crate::runner::Snapshot;
use crate::scenarios::denoise::{AutotuneResult, DenoiseConfig, DenoiseView};
use crate::scenarios::{Probe, Registered, ScenarioConfig, TaskResult};

#[derive(Default)]
pub struct DenoiseRoom {
    textures: view::Textures,
}

impl ScenarioUi for DenoiseRoom {
    fn explanation(&self) -> &'static str {
        "A noisy gray image is denoised on a 4-connected grid pairwise MRF (Song et al. 2011, Sec. 7). Each pixel is a hidden node; its evidence is the noisy pixel.\n\n\
         Kernel BP (Song et al. 2011, eq. 12) passes messages as weight vectors over training pairs, learned from clean/noisy training images; discrete BP, when chosen, passes messages over the gray levels. Each iteration updates every message once.\n\n\
         Centre: the clean image, the noisy input, the estimate and its |error| heat map. Right: RMSE against the clean image per iteration, the message residual on a log axis (how much the messages still change), and the belief of a clicked pixel."
    }

    fn name(&self) -> &'static str {
        "denoise"
    }

    fn params(&mut self, ui: &mut egui::Ui, config: &mut ScenarioConfig, cx: &mut RoomContext<'_>) {
        let Some(c) = DenoiseConfig::of_mut(config) else {
            return;
        };
        let running = cx.snapshot.and_then(|s| DenoiseView::of(&s.view));
        let autotune = cx.last_task.and_then(|r| match r {
            TaskResult::Denoise(a) => Some(a.as_ref() as &AutotuneResult),
            _ => None,
        });
        params::ui(ui, c, running, cx.task_running, autotune, cx.commands);
    }

    fn central(&mut self, ui: &mut egui::Ui, snapshot: &Snapshot, cx: &mut RoomContext<'_>) {
        if let Some(v) = DenoiseView::of(&snapshot.view) {
            let config = DenoiseConfig::of(&snapshot.config);
            let textures = &mut self.textures;
            view::images(ui, v, config, textures, cx.state, cx.selection, cx.commands);
        }
    }

    fn inspector(&mut self, ui: &mut egui::Ui, snapshot: &Snapshot, cx: &mut RoomContext<'_>) {
        let Some(v) = DenoiseView::of(&snapshot.view) else {
            return;
        };
        let config = DenoiseConfig::of(&snapshot.config);
        view::curves(ui, snapshot, v, config, cx.heights.curve);
        ui.add_space(6.0);
        ui.separator();
        view::inspector(ui, v, &mut cx.state.inspector_tab, cx.heights.belief);
    }

    fn status(&self, snapshot: &Snapshot) -> Vec<String> {
        DenoiseView::of(&snapshot.view)
            .map(view::status)
            .unwrap_or_default()
    }

    fn selection_is_valid(&self, snapshot: &Snapshot, selection: Probe) -> bool {
        let v = DenoiseView::of(&snapshot.view);
        matches!((v, selection), (Some(v), Probe::Node(n)) if n < v.width * v.height)
    }

    fn open_paths(&mut self, config: &ScenarioConfig, paths: &[PathBuf]) -> Opened {
        let (Some(c), Some(path)) = (DenoiseConfig::of(config), paths.first()) else {
            return Opened::Refused("nothing to open".into());
        };
        let mut c = c.clone();
        c.image = Some(path.clone());
        params::forget_noisy_image(&mut c);
        Opened::Apply(Box::new(ScenarioConfig::Denoise(c)))
    }

    fn opens_noisy_images(&self) -> bool {
        true
    }

    fn open_noisy_image(&mut self, config: &ScenarioConfig, path: &Path) -> Opened {
        let Some(c) = DenoiseConfig::of(config) else {
            return Opened::Refused("the denoise scenario is not running".into());
        };
        let mut c = c.clone();
        params::use_noisy_image(&mut c, path.to_path_buf());
        Opened::Apply(Box::new(ScenarioConfig::Denoise(c)))
    }

    fn drop_hint(&self) -> &'static str {
        "Drop an image to use it as the clean image"
    }
}
