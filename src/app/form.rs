//! The parameter form: section titles, labelled rows, and slider rows drawn from a scenario's
//! parameter table (`scenarios::params`), so that a number's label, unit, range, scale and help
//! are written once, beside its config.

use eframe::egui::{self, RichText};
use serde::Serialize;
use serde::de::DeserializeOwned;

use crate::scenarios::params::{self, Param};

/// A section title in the parameter panel.
pub fn section(ui: &mut egui::Ui, title: &str) {
    ui.add_space(8.0);
    ui.label(RichText::new(title).strong().size(15.0));
    ui.add_space(2.0);
}

/// The label of a form row with its hover help; its id labels the row's widget for AccessKit.
pub fn row_label(ui: &mut egui::Ui, text: &str, hint: &str) -> egui::Id {
    ui.label(text).on_hover_text(hint).id
}

/// Width kept for a slider's value box (enough for "1.0e-5" or "10000").
const VALUE_BOX_WIDTH: f32 = 72.0;

/// One row of a `Grid`: the parameter's label and a slider over `lo..=hi` (the comfortable
/// range; typed values may go anywhere in the parameter's valid range). Returns the slider's
/// response. Call `ui.end_row()` after it.
pub fn param_row<C: Serialize + DeserializeOwned>(
    ui: &mut egui::Ui,
    config: &mut C,
    table: &[Param],
    key: &str,
    lo: f64,
    hi: f64,
) -> Option<egui::Response> {
    let param = table.iter().find(|p| p.key == key)?;
    let mut value = params::get_number(config, key)?;
    let label = if param.unit.is_empty() {
        param.label.to_string()
    } else {
        format!("{} ({})", param.label, param.unit)
    };
    let id = row_label(ui, &label, param.help);
    let mut slider = egui::Slider::new(&mut value, lo.max(param.min)..=hi.min(param.max))
        .logarithmic(param.log)
        .clamping(egui::SliderClamping::Never);
    if param.integer {
        slider = slider.integer();
    }
    // The slider takes what the label left of the row, less room for its value box, so a long
    // label (with its unit) never pushes the value past the panel's edge.
    let response = ui
        .scope(|ui| {
            ui.spacing_mut().slider_width = (ui.available_width() - VALUE_BOX_WIDTH).max(60.0);
            ui.add(slider).labelled_by(id)
        })
        .inner;
    if response.changed() {
        let value = value.clamp(param.min, param.max);
        let value = if param.integer { value.round() } else { value };
        if let Ok(updated) = params::with_number(config, key, value) {
            *config = updated;
        }
    }
    Some(response)
}

/// Rows for `keys` of `table`, each over its full valid range (logarithmic where the table
/// says so), in a two-column grid: the whole form of a scenario without a panel of its own.
pub fn param_grid<C: Serialize + DeserializeOwned>(
    ui: &mut egui::Ui,
    id: &str,
    config: &mut C,
    table: &[Param],
) {
    egui::Grid::new(id)
        .num_columns(2)
        .spacing([8.0, 6.0])
        .show(ui, |ui| {
            for p in table {
                if param_row(ui, config, table, p.key, p.min, p.max).is_some() {
                    ui.end_row();
                }
            }
        });
}
