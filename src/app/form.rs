//! The parameter form: section titles, labelled rows, and slider rows drawn from a scenario's
//! parameter table (`scenarios::params`), so that a number's label, unit, range, scale and help
//! are written once, beside its config. A row's slider covers a comfortable range and a typed
//! value may be anywhere in the valid one. Sliders drawn outside [`param_row`] use
//! [`fitted_slider`], sized from the panel's visible edge, so that the parameter panel never
//! widens itself frame by frame.

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

/// The label (with its unit) and tooltip of the table parameter `key`, for a row whose widget
/// the room draws itself; the key itself where the table has no such parameter.
pub fn param_label(ui: &mut egui::Ui, table: &[Param], key: &str) -> egui::Id {
    match table.iter().find(|p| p.key == key) {
        Some(p) if p.unit.is_empty() => row_label(ui, p.label, p.help),
        Some(p) => row_label(ui, &format!("{} ({})", p.label, p.unit), p.help),
        None => row_label(ui, key, ""),
    }
}

/// The table's entry `key`, for a widget that takes its label or help (an entry without label
/// or help where the table has no such key).
pub fn entry<'a>(table: &'a [Param], key: &str) -> &'a Param {
    const MISSING: Param = Param::value("", "");
    table.iter().find(|p| p.key == key).unwrap_or(&MISSING)
}

/// A checkbox for the table switch `key`, with the table's label and help (the key itself
/// where the table has no such entry).
pub fn param_checkbox(
    ui: &mut egui::Ui,
    value: &mut bool,
    table: &[Param],
    key: &str,
) -> egui::Response {
    match table.iter().find(|p| p.key == key) {
        Some(p) => ui.checkbox(value, p.label).on_hover_text(p.help),
        None => ui.checkbox(value, key),
    }
}

/// Width a panel's label column takes beside its sliders.
const LABEL_COLUMN_WIDTH: f32 = 150.0;

/// Sets a parameter panel's default slider width: the panel less its label column. Sliders
/// drawn by [`param_row`] and [`fitted_slider`] size themselves at the cursor instead.
pub fn default_slider_width(ui: &mut egui::Ui) {
    ui.spacing_mut().slider_width = (ui.available_width() - LABEL_COLUMN_WIDTH).max(80.0);
}

/// Width kept for a slider's value box (enough for "1.0e-5" or "10000").
const VALUE_BOX_WIDTH: f32 = 72.0;

/// One row of a `Grid` for a number of the table (`None` for another kind): its label and a
/// slider over `lo..=hi` (the comfortable range; typed values may go anywhere in the
/// parameter's valid range). Returns the slider's response. Call `ui.end_row()` after it.
pub fn param_row<C: Serialize + DeserializeOwned>(
    ui: &mut egui::Ui,
    config: &mut C,
    table: &[Param],
    key: &str,
) -> Option<egui::Response> {
    let param = table.iter().find(|p| p.key == key && p.is_number())?;
    let (lo, hi) = param.slider_range();
    let mut value = params::get_number(config, key)?;
    let label = if param.unit.is_empty() {
        param.label.to_string()
    } else {
        format!("{} ({})", param.label, param.unit)
    };
    let id = row_label(ui, &label, param.help);
    let far_from_one = value != 0.0 && !(1e-3..1e5).contains(&value.abs());
    let mut slider = egui::Slider::new(&mut value, lo.max(param.min)..=hi.min(param.max))
        .logarithmic(param.log)
        .clamping(egui::SliderClamping::Never);
    if param.integer {
        slider = slider.integer();
    } else if param.log && far_from_one {
        // A tolerance of 1e-10 written out ("0.0000000001") is wider than the value box and
        // widened the whole panel; far from 1 a value reads in scientific notation.
        slider = slider
            .custom_formatter(|v, _| format!("{v:.1e}"))
            .custom_parser(|text| text.trim().parse().ok());
    }
    // The slider takes what the label left of the row, less room for its value box, so a long
    // label (with its unit) never pushes the value past the panel's edge.
    let note_id = id.with("clamped");
    let response = ui
        .vertical(|ui| {
            ui.spacing_mut().slider_width = slider_room(ui, VALUE_BOX_WIDTH);
            let response = ui.add(slider).labelled_by(id);
            clamp_note(ui, note_id);
            response
        })
        .inner;
    if response.changed() {
        let clamped = value.clamp(param.min, param.max);
        remember_clamp(ui, note_id, value, clamped, "");
        let value = if param.integer {
            clamped.round()
        } else {
            clamped
        };
        if let Ok(updated) = params::with_number(config, key, value) {
            *config = updated;
        }
    }
    Some(response)
}

/// A whole-number field over `min..=max` that says so when a typed value was out of range
/// (instead of clamping it silently); `beyond` tells where larger values can go.
pub fn bounded_count(
    ui: &mut egui::Ui,
    value: &mut usize,
    min: usize,
    max: usize,
    suffix: &str,
    label: egui::Id,
    beyond: &str,
) -> egui::Response {
    let note_id = label.with("clamped");
    let mut typed = *value as f64;
    let response = ui
        .vertical(|ui| {
            let r = ui
                .add(
                    egui::DragValue::new(&mut typed)
                        .range(0.0..=f64::MAX)
                        .speed(1.0)
                        .max_decimals(0)
                        .suffix(suffix),
                )
                .labelled_by(label);
            clamp_note(ui, note_id);
            r
        })
        .inner;
    if response.changed() {
        let clamped = typed.round().clamp(min as f64, max as f64);
        remember_clamp(ui, note_id, typed, clamped, beyond);
        *value = clamped as usize;
    }
    response
}

/// The width a slider can take at the cursor: up to the visible right edge (the panel's, not a
/// grid column's, which may have grown), less room for its value box.
fn slider_room(ui: &egui::Ui, value_box: f32) -> f32 {
    let right = ui
        .clip_rect()
        .right()
        .min(ui.available_rect_before_wrap().right());
    (right - ui.cursor().left() - value_box).max(60.0)
}

/// Adds `slider` as wide as the row allows less room for its value box, so the value never
/// runs past the panel's edge (for sliders drawn outside [`param_row`]).
pub fn fitted_slider(ui: &mut egui::Ui, slider: egui::Slider<'_>) -> egui::Response {
    fitted_slider_reserving(ui, slider, VALUE_BOX_WIDTH)
}

/// [`fitted_slider`] whose value box needs `value_box` points (a long custom value).
pub fn fitted_slider_reserving(
    ui: &mut egui::Ui,
    slider: egui::Slider<'_>,
    value_box: f32,
) -> egui::Response {
    ui.scope(|ui| {
        ui.spacing_mut().slider_width = slider_room(ui, value_box);
        ui.add(slider)
    })
    .inner
}

/// Shows the note left by [`remember_clamp`] for this field, if any.
fn clamp_note(ui: &mut egui::Ui, note_id: egui::Id) {
    if let Some(note) = ui.data(|d| d.get_temp::<String>(note_id)) {
        ui.label(
            RichText::new(note)
                .small()
                .color(ui.visuals().warn_fg_color),
        );
    }
}

/// Remembers (or clears) the note that `typed` was replaced by `clamped`.
fn remember_clamp(ui: &mut egui::Ui, note_id: egui::Id, typed: f64, clamped: f64, beyond: &str) {
    if typed == clamped {
        ui.data_mut(|d| d.remove::<String>(note_id));
    } else {
        let bound = if typed > clamped {
            "largest"
        } else {
            "smallest"
        };
        let note =
            format!("{typed} is out of range: set to {clamped}, the {bound} allowed{beyond}");
        ui.data_mut(|d| d.insert_temp(note_id, note));
    }
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
                if param_row(ui, config, table, p.key).is_some() {
                    ui.end_row();
                }
            }
        });
}
