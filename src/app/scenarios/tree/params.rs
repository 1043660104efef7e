//! The tree and retrieval scenarios' parameters: the data (a built-in or a CSV file), the tree
//! (chain, star, binary, HSIC Chow-Liu, or drawn on the canvas), the samples per edge, the
//! kernel of every node and of the selected one (with the median distance it is scaled from),
//! and the retrieval experiment's settings. Edits change the draft config; the app rebuilds once
//! the edit is complete. Evidence is not edited here: it is set live on the tree.

use eframe::egui::{self, RichText};
use strum::VariantArray;

use crate::app::commands::UiCommand;
use crate::app::form::{
    bounded_count, default_slider_width, param_checkbox, param_label, row_label, section,
};
use crate::app::views::kernel_rows::kernel_rows;
use crate::scenarios::tree::config as tree_config;
use crate::scenarios::tree::{BuiltinData, DataSource, PARAMS, Topology, TreeConfig, TreeView};
use crate::scenarios::{Probe, ScenarioControl};

pub fn tree_ui(
    ui: &mut egui::Ui,
    c: &mut TreeConfig,
    running: Option<&TreeView>,
    selection: Option<Probe>,
    commands: &mut Vec<UiCommand>,
) {
    default_slider_width(ui);
    section(ui, "Data");
    let builtin = match &c.data {
        DataSource::Builtin { name, .. } => Some(*name),
        DataSource::Csv { .. } => None,
    };
    ui.horizontal(|ui| {
        let id = ui.label("Dataset").id;
        egui::ComboBox::from_id_salt("tree_data")
            .selected_text(builtin.map_or("CSV file", |b| b.label()))
            .show_ui(ui, |ui| {
                for &b in BuiltinData::VARIANTS {
                    if ui.selectable_label(builtin == Some(b), b.label()).clicked()
                        && builtin != Some(b)
                    {
                        *c = TreeConfig {
                            samples_per_edge: c.samples_per_edge,
                            shared_samples: c.shared_samples,
                            kernel: c.kernel,
                            grid: c.grid,
                            ..TreeConfig::builtin(b)
                        };
                    }
                }
            })
            .response
            .labelled_by(id);
        if ui
            .button("Open CSV or tree…")
            .on_hover_text(UiCommand::OpenImageDialog.tooltip(ui.ctx()))
            .clicked()
        {
            commands.push(UiCommand::OpenImageDialog);
        }
    });
    match &mut c.data {
        DataSource::Csv { path } => {
            let name = path.file_name().map_or_else(
                || path.display().to_string(),
                |n| n.to_string_lossy().into_owned(),
            );
            ui.label(RichText::new(name).monospace())
                .on_hover_text(path.display().to_string());
            param_checkbox(ui, &mut c.csv_no_header, PARAMS, "csv_no_header");
        }
        DataSource::Builtin {
            rows, size, seed, ..
        } => {
            egui::Grid::new("tree_builtin")
                .num_columns(2)
                .spacing([8.0, 6.0])
                .show(ui, |ui| {
                    let id = row_label(ui, "Rows", tree_config::ROWS_HELP);
                    bounded_count(
                        ui,
                        rows,
                        10,
                        100_000,
                        "",
                        id,
                        " here (up to 1000000 with --rows)",
                    );
                    ui.end_row();
                    let id = row_label(ui, "Variables", tree_config::SIZE_HELP);
                    let mut n = size.unwrap_or(builtin.map_or(5, |b| b.default_size()));
                    if ui
                        .add(egui::DragValue::new(&mut n).range(2..=40))
                        .labelled_by(id)
                        .changed()
                    {
                        *size = Some(n);
                    }
                    ui.end_row();
                    let id = row_label(ui, "Data seed", tree_config::DATA_SEED_HELP);
                    ui.add(egui::DragValue::new(seed)).labelled_by(id);
                    ui.end_row();
                });
        }
    }
    if let Some(v) = running {
        ui.weak(format!(
            "{} rows, {} columns, {} nodes",
            v.rows,
            v.columns.len(),
            v.nodes.len()
        ));
    }

    section(ui, "Tree");
    ui.horizontal_wrapped(|ui| {
        for (t, hint) in [
            (Topology::Chain, "Each node joined to the next"),
            (Topology::Star, "The first node joined to every other"),
            (Topology::Binary, "A balanced binary tree in node order"),
            (
                Topology::ChowLiu,
                "The maximum spanning tree of the pairwise HSIC (Song et al. 2010)",
            ),
        ] {
            let on = c.topology == t;
            if ui
                .selectable_label(on, t.label())
                .on_hover_text(hint)
                .clicked()
                && !on
            {
                c.topology = t;
            }
        }
        if matches!(c.topology, Topology::Edges(_)) {
            let _ = ui.selectable_label(true, "drawn");
        }
    });
    ui.weak("Draw a tree with \"Draw tree\" above the canvas.");

    section(ui, "Samples");
    egui::Grid::new("tree_samples")
        .num_columns(2)
        .spacing([8.0, 6.0])
        .show(ui, |ui| {
            let id = param_label(ui, PARAMS, "samples_per_edge");
            bounded_count(
                ui,
                &mut c.samples_per_edge,
                10,
                5000,
                "",
                id,
                " here (more with --samples-per-edge, within the memory budget)",
            );
            ui.end_row();
            let id = param_label(ui, PARAMS, "shared_samples");
            ui.checkbox(&mut c.shared_samples, "same rows on every edge")
                .labelled_by(id);
            ui.end_row();
            let id = param_label(ui, PARAMS, "sample_seed");
            ui.add(egui::DragValue::new(&mut c.sample_seed))
                .labelled_by(id);
            ui.end_row();
            let id = param_label(ui, PARAMS, "grid");
            bounded_count(
                ui,
                &mut c.grid,
                20,
                2000,
                "",
                id,
                " here (more with --grid)",
            );
            ui.end_row();
        });

    section(ui, "Kernel (every node)");
    let first = running.and_then(|v| v.nodes.first().map(|n| &n.kernel));
    kernel_rows(ui, &mut c.kernel, "all", first);

    if let (Some(Probe::Node(i)), Some(v)) = (selection, running)
        && let Some(node) = v.nodes.get(i)
    {
        section(ui, &format!("Kernel of {}", node.name));
        let mut own = c.node_kernels.contains_key(&node.name);
        if ui
            .checkbox(&mut own, "own settings for this node")
            .changed()
        {
            if own {
                c.node_kernels.insert(node.name.clone(), c.kernel);
            } else {
                c.node_kernels.remove(&node.name);
            }
        }
        if let Some(k) = c.node_kernels.get_mut(&node.name) {
            kernel_rows(ui, k, "node", Some(&node.kernel));
        } else {
            ui.weak(format!(
                "σ = {} ({}); settings above",
                node.kernel
                    .sigma
                    .map_or("none".to_string(), |s| format!("{s:.4}")),
                node.kernel.rule,
            ));
        }
    }

    section(ui, "Evidence");
    if c.evidence.is_empty() {
        ui.weak("None: click a node on the tree and move its slider.");
    } else {
        let names: Vec<String> = c.evidence.keys().cloned().collect();
        for name in names {
            ui.horizontal(|ui| {
                let v = &c.evidence[&name];
                let text = v
                    .iter()
                    .map(|x| format!("{x:.3}"))
                    .collect::<Vec<_>>()
                    .join(", ");
                ui.label(format!("{name} = {text}"));
                let node = running.and_then(|r| r.nodes.iter().position(|n| n.name == name));
                if let Some(node) = node
                    && ui
                        .small_button("remove")
                        .on_hover_text("Remove this evidence")
                        .accessible_name(format!("Remove evidence {name}"))
                        .clicked()
                {
                    commands.push(UiCommand::Control(ScenarioControl::Tree(
                        crate::scenarios::tree::TreeControl::SetEvidence { node, value: None },
                    )));
                }
            });
        }
        if ui.button("Clear evidence").clicked() {
            commands.push(UiCommand::Control(ScenarioControl::Tree(
                crate::scenarios::tree::TreeControl::ClearEvidence,
            )));
        }
    }
}
