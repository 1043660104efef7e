//! The predictive-BP room (Wang & Gordon, AAAI 2020, Secs. 3–6): the model and
//! learning settings with evidence and query controls (`params`), the DAG beside its latent
//! junction tree with the query's bar chart for exact / PBP / EM / online EM (`view`), and the
//! learning summary, 2SR diagnostics and messages of a separator (`inspector`). A pendigits run
//! shows its accuracy, confusion matrix and a picked digit (`pen`) above the accuracy-over-N
//! curve of PBP and EM-HMM (`curve`), computed on the worker or opened from a pendigits.json.

pub mod curve;
pub mod editor;
pub mod inspector;
pub mod params;
pub mod pen;
pub mod view;

use eframe::egui;

use super::{OpenKind, Opened, RoomContext, ScenarioUi};
use crate::runner::Snapshot;
use crate::scenarios::pbp::curve_task::read_curve;
use crate::scenarios::pbp::{PbpConfig, PbpView};
use crate::scenarios::{Registered, ScenarioConfig, TaskResult};

#[derive(Default)]
pub struct PbpRoom {
    /// The separator (by child clique) the inspector shows: the last hovered or clicked.
    separator: Option<usize>,
    /// Pendigits: the method whose confusion matrix is shown.
    confusion_of: usize,
    /// The DAG editor window.
    editor: editor::DagEditor,
    /// Pendigits: the accuracy-over-N curve shown below the run.
    pub curve: curve::CurvePanel,
}

impl ScenarioUi for PbpRoom {
    fn name(&self) -> &'static str {
        "pbp"
    }

    fn explanation(&self) -> &'static str {
        super::explanations::PBP
    }

    fn dialog_open(&self) -> bool {
        self.editor.open
    }

    fn close_dialog(&mut self) {
        self.editor.open = false;
    }

    fn params(&mut self, ui: &mut egui::Ui, config: &mut ScenarioConfig, cx: &mut RoomContext<'_>) {
        let view = cx
            .snapshot
            .and_then(|s| <Box<PbpView>>::of(&s.view))
            .map(|v| v.as_ref());
        if let Some(c) = PbpConfig::of_mut(config) {
            params::pbp_ui(ui, c, view, &mut self.editor, cx.commands);
        }
    }

    fn central(&mut self, ui: &mut egui::Ui, snapshot: &Snapshot, cx: &mut RoomContext<'_>) {
        if self.editor.open {
            self.editor.window(ui.ctx(), &cx.state.config, cx.commands);
        }
        if let Some(v) = <Box<PbpView>>::of(&snapshot.view) {
            match &v.pen {
                Some(pen) => {
                    pen::central(ui, pen, &mut self.confusion_of, cx.commands);
                    ui.separator();
                    let height = (ui.available_height() - 40.0).max(220.0);
                    let config = PbpConfig::of(&snapshot.config);
                    curve::show(ui, &self.curve, config, cx.task, height, cx.commands);
                }
                None => {
                    let draft = PbpConfig::of_mut(&mut cx.state.config);
                    view::central(ui, v, &mut self.separator, draft, cx.commands);
                }
            }
        }
    }

    fn inspector(&mut self, ui: &mut egui::Ui, snapshot: &Snapshot, cx: &mut RoomContext<'_>) {
        if let Some(v) = <Box<PbpView>>::of(&snapshot.view)
            && v.pen.is_none()
        {
            let draft = PbpConfig::of_mut(&mut cx.state.config);
            inspector::inspector(ui, v, self.separator, draft, cx.commands);
        }
    }

    fn status(&self, snapshot: &Snapshot) -> Vec<String> {
        let Some(v) = <Box<PbpView>>::of(&snapshot.view) else {
            return Vec::new();
        };
        let mut out = vec![format!("N = {}", v.samples)];
        if let Some(pen) = &v.pen {
            for m in &pen.methods {
                out.push(format!("{} test accuracy {:.4}", m.name, m.test_accuracy));
            }
            return out;
        }
        for (name, kl, _) in &v.summary {
            out.push(format!("KL {name} {kl:.2e}"));
        }
        out.push(format!("query answered in {:.2} ms", v.latency_ms));
        out
    }

    fn open_kind(&self) -> OpenKind {
        OpenKind::Data
    }

    fn open_paths(&mut self, config: &ScenarioConfig, paths: &[std::path::PathBuf]) -> Opened {
        let (Some(c), [path]) = (PbpConfig::of(config), paths) else {
            return Opened::Refused("open one JSON model file or one pendigits.json".into());
        };
        // A sweep's accuracy curve (named so, or read as one) is shown, not run as a model.
        let named = path.file_name().is_some_and(|n| n == "pendigits.json");
        match read_curve(path) {
            Ok(report) => {
                self.curve
                    .set(std::sync::Arc::new(report), path.display().to_string());
                return Opened::Shown(format!(
                    "accuracy over N read from {}{}",
                    path.display(),
                    if c.model == "pendigits" {
                        ""
                    } else {
                        " (shown in the pendigits view: model pendigits)"
                    }
                ));
            }
            Err(e) if named => return Opened::Refused(e.to_string()),
            Err(_) => {}
        }
        let mut c = c.clone();
        c.model = path.display().to_string();
        c.evidence.clear();
        c.query.clear();
        c.evidence_vars.clear();
        c.root.clear();
        Opened::Apply(Box::new(ScenarioConfig::Pbp(c)))
    }

    fn drop_hint(&self) -> &'static str {
        "Drop a JSON model file (nodes, edges, optional CPTs) or a sweep's pendigits.json"
    }

    fn task_done(&mut self, result: &TaskResult) {
        if let TaskResult::Pbp(report) = result {
            self.curve.set(report.clone(), "computed in the window");
        }
    }
}
