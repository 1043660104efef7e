//! The KJIT room's settings: the experiment (each of the paper's Exps. 1–5 and Supp B.3/B.6 is
//! one click), the paper's
//! particle count as a preset, and the parameters the chosen experiment uses, from the
//! scenario's parameter table.

use eframe::egui::{self, RichText};
use strum::VariantArray;

use crate::app::form::{default_slider_width, param_grid, param_label, section};
use crate::scenarios::kjit::{Experiment, KjitConfig, PARAMS};
use crate::scenarios::params::Param;

/// The experiments in the order of the paper, with what each shows.
pub const EXPERIMENTS: [(Experiment, &str, &str); 8] = [
    (
        Experiment::Rff,
        "Random features (Supp B.3, B.6)",
        "Random-feature Gram matrices against the exact kernels.",
    ),
    (
        Experiment::Batch,
        "Batch operators (Exp. 1, Supp C)",
        "Five random-feature operators learned from 5000 EP tuples, scored by log KL on 3000; KJIT's uncertainty along the test curves (Exp. 2).",
    ),
    (
        Experiment::Uncertainty,
        "Uncertainty curves (Exp. 2)",
        "KJIT alone, trained as in Exp. 1: its log predictive variance along two test curves.",
    ),
    (
        Experiment::Logistic,
        "30 logistic problems (Exp. 3)",
        "One KJIT operator learns across 30 problems beside quadrature-EP and sampling-EP.",
    ),
    (
        Experiment::CompoundGamma,
        "Compound gamma (Exp. 4)",
        "1500 problems, one message each: KJIT against quadrature posteriors.",
    ),
    (
        Experiment::Uci,
        "Four UCI sets (Exp. 5)",
        "Banknote, blood, fertility, ionosphere in sequence (needs the files in ../shared/data/uci).",
    ),
    (
        Experiment::Teaching,
        "Teaching: d = 2, site by site",
        "EP on a two-dimensional problem, one site update per step (use Step): the posterior ellipse of w and the decision line, KJIT beside quadrature.",
    ),
    (
        Experiment::Sites,
        "EP sites: schedules and convergence",
        "One problem, one EP sweep per step under a site schedule and damping: every site's message coloured by its change on the debugger's canvas.",
    ),
];

/// Whether the experiment uses the parameter `key`.
fn used_by(experiment: Experiment, key: &str) -> bool {
    let shared_learner = matches!(key, "median_factor" | "sigma_y2" | "sigma0_2");
    match experiment {
        Experiment::Rff => false,
        Experiment::Batch | Experiment::Uncertainty => {
            key.starts_with("batch.") || key == "quadrature_nodes"
        }
        Experiment::Logistic => !key.contains('.'),
        Experiment::CompoundGamma => key.starts_with("compound_gamma.") || shared_learner,
        Experiment::Teaching => {
            key.starts_with("teaching.")
                || shared_learner
                || matches!(key, "tau" | "d_in" | "d_out" | "particles")
        }
        Experiment::Sites => key.starts_with("sites.") || key == "quadrature_nodes",
        Experiment::Uci => {
            key.starts_with("uci.")
                || shared_learner
                || matches!(
                    key,
                    "ep_iterations" | "damping" | "particles" | "quadrature_nodes"
                )
        }
    }
}

pub fn kjit_ui(ui: &mut egui::Ui, c: &mut KjitConfig) {
    section(ui, "Experiment");
    let current = EXPERIMENTS.iter().find(|e| e.0 == c.experiment);
    let id = param_label(ui, PARAMS, "experiment");
    egui::ComboBox::from_id_salt("kjit_experiment")
        .selected_text(current.map(|e| e.1).unwrap_or("?"))
        .width(ui.available_width() - 8.0)
        .show_ui(ui, |ui| {
            for (experiment, label, help) in EXPERIMENTS {
                ui.selectable_value(&mut c.experiment, experiment, label)
                    .on_hover_text(help);
            }
        })
        .response
        .labelled_by(id);
    if let Some((_, _, help)) = current {
        ui.label(RichText::new(*help).small().weak());
    }
    ui.horizontal(|ui| {
        let id = param_label(ui, PARAMS, "seed");
        ui.add(egui::DragValue::new(&mut c.seed)).labelled_by(id);
    });
    if matches!(c.experiment, Experiment::Logistic | Experiment::Uci) {
        ui.checkbox(&mut c.run_sampling, "Run sampling-EP beside KJIT")
            .on_hover_text("The all-oracle baseline (costly at M = 5e5)");
        ui.horizontal(|ui| {
            if ui
                .button("Paper: M = 5e5")
                .on_hover_text("The paper's particle count for the oracle")
                .clicked()
            {
                c.particles = 500_000;
            }
            if ui
                .button("Interactive: M = 5e4")
                .on_hover_text("Ten times fewer particles: faster, noisier oracle")
                .clicked()
            {
                c.particles = 50_000;
            }
        });
    }
    if c.experiment == Experiment::Sites {
        sites_choices(ui, c);
    }
    if c.experiment == Experiment::Uci {
        ui.label(
            RichText::new(format!("UCI folder: {}", c.uci.dir.display()))
                .small()
                .weak(),
        );
    }
    let table: Vec<Param> = PARAMS
        .iter()
        .copied()
        .filter(|p| used_by(c.experiment, p.key))
        .collect();
    if !table.is_empty() {
        section(ui, "Settings");
        default_slider_width(ui);
        param_grid(ui, "kjit_params", c, &table);
    }
}

/// The EP-sites experiment's schedule and projection (the numbers are in the table).
fn sites_choices(ui: &mut egui::Ui, c: &mut KjitConfig) {
    use crate::inference::Schedule;
    use crate::scenarios::kjit::sites::SiteOperator;
    let id = param_label(ui, PARAMS, "sites.schedule");
    egui::ComboBox::from_id_salt("kjit_sites_schedule")
        .selected_text(c.sites.schedule.label())
        .show_ui(ui, |ui| {
            for &s in Schedule::VARIANTS {
                ui.selectable_value(&mut c.sites.schedule, s, s.label());
            }
        })
        .response
        .labelled_by(id);
    let id = param_label(ui, PARAMS, "sites.operator");
    egui::ComboBox::from_id_salt("kjit_sites_operator")
        .selected_text(match c.sites.operator {
            SiteOperator::Quadrature => "quadrature",
            SiteOperator::Kjit => "KJIT",
        })
        .show_ui(ui, |ui| {
            ui.selectable_value(
                &mut c.sites.operator,
                SiteOperator::Quadrature,
                "quadrature",
            );
            ui.selectable_value(&mut c.sites.operator, SiteOperator::Kjit, "KJIT");
        })
        .response
        .labelled_by(id);
}
