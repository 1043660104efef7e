//! The pbp room's left panel: the model, N and the learners' settings (a change relearns), then
//! the evidence on each observed variable and the query (live controls, no relearning).

use eframe::egui::{self, RichText};

use super::editor::DagEditor;
use crate::app::commands::UiCommand;
use crate::app::form::{param_row, section};
use crate::scenarios::ScenarioControl;
use crate::scenarios::pbp::config::{PENDIGITS_LAMBDA1, PENDIGITS_SAMPLES};
use crate::scenarios::pbp::{PARAMS, PbpConfig, PbpControl, PbpView};

pub fn pbp_ui(
    ui: &mut egui::Ui,
    c: &mut PbpConfig,
    view: Option<&PbpView>,
    editor: &mut DagEditor,
    commands: &mut Vec<UiCommand>,
) {
    section(ui, "Model");
    ui.horizontal_wrapped(|ui| {
        for (name, label) in [
            ("synthetic", "stand-in (loopy)"),
            ("synthetic-tree", "stand-in (loop-free)"),
            ("pendigits", "pendigits (Sec. 6)"),
        ] {
            if ui.selectable_label(c.model == name, label).clicked() && c.model != name {
                let defaults = PbpConfig::default();
                if name == "pendigits" {
                    c.samples = PENDIGITS_SAMPLES;
                    c.lambda1 = PENDIGITS_LAMBDA1;
                    c.run_online_em = false;
                } else if c.model == "pendigits" {
                    c.samples = defaults.samples;
                    c.lambda1 = defaults.lambda1;
                    c.run_online_em = defaults.run_online_em;
                }
                c.model = name.into();
                c.evidence.clear();
                c.query.clear();
                c.root.clear();
            }
        }
    });
    ui.label(
        RichText::new(
            "Stand-ins for the paper's Figs. 4 and 6 (Sec. 6; their graphs are not in the \
             paper's text): latent A, B, C, I with \
             observed D–H; pendigits chains (needs ../shared/data/pendigits). Open a JSON \
             model file to learn your own DAG.",
        )
        .small()
        .weak(),
    );
    if let Some(v) = view.filter(|v| v.pen.is_none() && !v.nodes.is_empty())
        && ui
            .button("Edit model…")
            .on_hover_text(
                "the DAG editor: nodes, cardinalities, edges; save / load the JSON model file",
            )
            .clicked()
    {
        editor.open_on(&v.nodes, &v.edges, &c.model);
    }
    section(ui, "Learning");
    egui::Grid::new("pbp_params")
        .num_columns(2)
        .spacing([8.0, 6.0])
        .show(ui, |ui| {
            for key in [
                "samples",
                "seed",
                "rank",
                "lambda1",
                "ridge2",
                "em_restarts",
            ] {
                param_row(ui, c, PARAMS, key);
                ui.end_row();
            }
            if c.model == "pendigits" {
                for key in ["states", "sigma", "feature_dim"] {
                    param_row(ui, c, PARAMS, key);
                    ui.end_row();
                }
            }
        });
    if c.model == "pendigits" {
        ui.checkbox(&mut c.run_em, "EM for Gaussian-emission HMMs");
    } else {
        ui.checkbox(&mut c.run_em, "EM (exact E-step)");
        ui.checkbox(&mut c.run_online_em, "stepwise online EM");
    }
    let Some(v) = view.filter(|v| v.pen.is_none()) else {
        return;
    };
    section(ui, "Evidence");
    ui.label(
        RichText::new("Click a value to observe it (or click an observed node in the graph).")
            .small()
            .weak(),
    );
    for (node, n) in v.nodes.iter().enumerate() {
        if !n.observed {
            continue;
        }
        ui.horizontal(|ui| {
            ui.label(RichText::new(&n.name).strong());
            let current = v.evidence[node];
            if ui
                .selectable_label(current.is_none(), format!("{} free", n.name))
                .clicked()
                && current.is_some()
            {
                set_evidence(commands, node, None);
            }
            for x in 0..n.cardinality {
                if ui
                    .selectable_label(current == Some(x), format!("{}={x}", n.name))
                    .clicked()
                    && current != Some(x)
                {
                    set_evidence(commands, node, Some(x));
                }
            }
        });
    }
    section(ui, "Query");
    ui.horizontal_wrapped(|ui| {
        for (node, n) in v.nodes.iter().enumerate() {
            if n.observed
                && ui
                    .selectable_label(v.query == node, format!("query {}", n.name))
                    .clicked()
                && v.query != node
            {
                commands.push(UiCommand::Control(ScenarioControl::Pbp(
                    PbpControl::SetQuery(node),
                )));
            }
        }
    });
}

pub fn set_evidence(commands: &mut Vec<UiCommand>, node: usize, value: Option<usize>) {
    commands.push(UiCommand::Control(ScenarioControl::Pbp(
        PbpControl::SetEvidence { node, value },
    )));
}
