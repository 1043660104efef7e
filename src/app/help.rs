//! The Help menu and its windows: keyboard shortcuts (read from the one command table,
//! [`UiCommand::KEYED`]), About (version and the five papers), and "What am I looking at?" (the
//! running scenario's model, update and plots, from its room: `ScenarioUi::explanation`; flow,
//! kjit and pbp keep their text in `app/scenarios/explanations.rs`). Escape closes these
//! windows in the order `dialogs.rs` keeps.

use eframe::egui;

use super::commands::UiCommand;

/// The papers beliefscope implements, as cited in About.
pub const PAPERS: [(&str, &str); 5] = [
    (
        "Tree kernel BP",
        "L. Song, A. Gretton, C. Guestrin. Nonparametric Tree Graphical Models via Kernel \
         Embeddings. AISTATS 2010.",
    ),
    (
        "Loopy kernel BP",
        "L. Song, A. Gretton, D. Bickson, Y. Low, C. Guestrin. Kernel Belief Propagation. \
         AISTATS 2011.",
    ),
    (
        "SOSMP",
        "N. Noorshams, M. J. Wainwright. Belief Propagation for Continuous State Spaces: \
         Stochastic Message-Passing with Quantitative Guarantees. JMLR 14, 2013.",
    ),
    (
        "KJIT",
        "W. Jitkrittum, A. Gretton, N. Heess, S. M. A. Eslami, B. Lakshminarayanan, D. \
         Sejdinovic, Z. Szabó. Kernel-Based Just-In-Time Learning for Passing Expectation \
         Propagation Messages. UAI 2015.",
    ),
    (
        "Predictive BP",
        "Y. Wang, G. Gordon. Learning General Latent-Variable Graphical Models with Predictive \
         Belief Propagation. AAAI 2020.",
    ),
];

/// Which help windows are open.
#[derive(Debug, Default, Clone)]
pub struct Help {
    pub shortcuts: bool,
    pub about: bool,
    pub explain: bool,
    /// Help > Paper figures.
    pub figures: bool,
}

impl Help {
    /// The Help menu.
    pub fn menu(&mut self, ui: &mut egui::Ui) {
        ui.menu_button("Help", |ui| {
            if ui.button("What am I looking at?").clicked() {
                self.explain = true;
            }
            if ui
                .button("Paper figures")
                .on_hover_text("Run a figure or table of the five papers and compare")
                .clicked()
            {
                self.figures = true;
            }
            if ui.button("Keyboard shortcuts").clicked() {
                self.shortcuts = true;
            }
            if ui.button("About beliefscope").clicked() {
                self.about = true;
            }
        });
    }

    /// Draws the open windows; `explanation` is the running scenario's (title, text).
    pub fn show(&mut self, ctx: &egui::Context, explanation: (&str, &str)) {
        egui::Window::new("Keyboard shortcuts")
            .open(&mut self.shortcuts)
            .collapsible(false)
            .resizable(false)
            .show(ctx, |ui| {
                egui::Grid::new("shortcuts")
                    .num_columns(2)
                    .striped(true)
                    .show(ui, |ui| {
                        for c in UiCommand::KEYED {
                            if let Some(s) = c.shortcut() {
                                ui.monospace(ctx.format_shortcut(&s));
                                ui.label(c.description());
                                ui.end_row();
                            }
                        }
                    });
                ui.add_space(4.0);
                ui.weak("Shortcuts do nothing while a number is being typed.");
            });
        egui::Window::new("About beliefscope")
            .open(&mut self.about)
            .collapsible(false)
            .default_width(460.0)
            .show(ctx, |ui| {
                ui.heading(format!("beliefscope {}", env!("CARGO_PKG_VERSION")));
                ui.label(env!("CARGO_PKG_DESCRIPTION"));
                ui.add_space(6.0);
                ui.strong("The papers it implements");
                for (name, cite) in PAPERS {
                    ui.horizontal_wrapped(|ui| {
                        ui.label(egui::RichText::new(format!("{name}:")).strong());
                        ui.label(cite);
                    });
                }
                ui.add_space(6.0);
                ui.weak(format!("Licence: {}", env!("CARGO_PKG_LICENSE")));
            });
        let (title, text) = explanation;
        egui::Window::new(format!("What am I looking at? ({title})"))
            .id(egui::Id::unique("explain_window"))
            .open(&mut self.explain)
            .collapsible(false)
            .default_width(480.0)
            .show(ctx, |ui| {
                egui::ScrollArea::vertical()
                    .max_height(420.0)
                    .show(ui, |ui| {
                        for paragraph in text.split("\n\n") {
                            ui.add(egui::Label::new(paragraph.replace('\n', " ")).wrap());
                            ui.add_space(4.0);
                        }
                    });
            });
    }
}
