//! Error messages as toasts in the bottom-right corner, each with a close button. They stay
//! until closed (an error should not vanish unread); the oldest go once there are too many.

use eframe::egui::{self, Align2, Color32, RichText};

use super::commands::UiCommand;

/// Most messages kept at once.
const MAX_NOTICES: usize = 4;

#[derive(Debug, Clone)]
pub struct Notice {
    pub id: u64,
    pub text: String,
}

#[derive(Default)]
pub struct Notices {
    items: Vec<Notice>,
    next_id: u64,
}

impl Notices {
    pub fn error(&mut self, text: impl Into<String>) {
        let text = text.into();
        // The same failure twice in a row is one message.
        if self.items.last().is_some_and(|n| n.text == text) {
            return;
        }
        self.next_id += 1;
        self.items.push(Notice {
            id: self.next_id,
            text,
        });
        if self.items.len() > MAX_NOTICES {
            self.items.remove(0);
        }
    }

    pub fn dismiss(&mut self, id: u64) {
        self.items.retain(|n| n.id != id);
    }

    pub fn items(&self) -> &[Notice] {
        &self.items
    }

    /// Draws the toasts over everything, above the status bar.
    pub fn show(&self, ctx: &egui::Context, commands: &mut Vec<UiCommand>) {
        if self.items.is_empty() {
            return;
        }
        egui::Area::new(egui::Id::unique("notices"))
            .anchor(Align2::RIGHT_BOTTOM, [-12.0, -36.0])
            .order(egui::Order::Foreground)
            .show(ctx, |ui| {
                ui.set_max_width(440.0);
                for notice in &self.items {
                    let red = ui.visuals().error_fg_color;
                    egui::Frame::popup(ui.style())
                        .stroke(egui::Stroke::new(1.5, red))
                        .show(ui, |ui| {
                            ui.horizontal(|ui| {
                                ui.label(RichText::new("Error").color(red).strong());
                                ui.add(
                                    egui::Label::new(
                                        RichText::new(&notice.text).color(text_color(ui)),
                                    )
                                    .wrap(),
                                );
                                let close = ui
                                    .small_button("×")
                                    .accessible_name("Dismiss message")
                                    .on_hover_text("Close this message");
                                if close.clicked() {
                                    commands.push(UiCommand::DismissNotice(notice.id));
                                }
                            });
                        });
                    ui.add_space(4.0);
                }
            });
    }
}

fn text_color(ui: &egui::Ui) -> Color32 {
    ui.visuals().strong_text_color()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_the_newest_and_merges_repeats() {
        let mut n = Notices::default();
        for i in 0..6 {
            n.error(format!("e{i}"));
            n.error(format!("e{i}"));
        }
        let texts: Vec<_> = n.items().iter().map(|x| x.text.as_str()).collect();
        assert_eq!(texts, ["e2", "e3", "e4", "e5"]);
        let id = n.items()[0].id;
        n.dismiss(id);
        assert_eq!(n.items().len(), 3);
    }
}
