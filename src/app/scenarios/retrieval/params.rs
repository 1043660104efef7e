//! The retrieval experiment's settings: repeats, pool, samples per edge, seed, and the kernel of
//! every node.

use eframe::egui::{self, RichText};

use crate::app::form::{bounded_count, default_slider_width, param_label, section};
use crate::app::views::kernel_rows::kernel_rows;
use crate::scenarios::retrieval::{PARAMS, RetrievalConfig};

pub fn retrieval_ui(ui: &mut egui::Ui, c: &mut RetrievalConfig) {
    default_slider_width(ui);
    section(ui, "Experiment");
    ui.label(
        RichText::new(
            "9 variables in R⁵; chains of the last L variables, evidence at the head, \
             all pool tails ranked (Song et al. 2010, Sec. 6.1).",
        )
        .small()
        .weak(),
    );
    egui::Grid::new("retrieval")
        .num_columns(2)
        .spacing([8.0, 6.0])
        .show(ui, |ui| {
            let id = param_label(ui, PARAMS, "repeats");
            bounded_count(
                ui,
                &mut c.repeats,
                1,
                100,
                "",
                id,
                " here (more with --repeats)",
            );
            ui.end_row();
            let id = param_label(ui, PARAMS, "pool");
            bounded_count(
                ui,
                &mut c.pool,
                20,
                2000,
                "",
                id,
                " here (more with --pool)",
            );
            ui.end_row();
            let id = param_label(ui, PARAMS, "samples_per_edge");
            let max = c.pool;
            bounded_count(
                ui,
                &mut c.samples_per_edge,
                10,
                max,
                "",
                id,
                " (at most the pool)",
            );
            ui.end_row();
            let id = param_label(ui, PARAMS, "seed");
            ui.add(egui::DragValue::new(&mut c.seed)).labelled_by(id);
            ui.end_row();
        });
    section(ui, "Kernel (every node)");
    kernel_rows(ui, &mut c.kernel, "retrieval", None);
}
