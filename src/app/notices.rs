//! Messages as toasts in the bottom-right corner, each with a close button. Errors stay until
//! closed (an error should not vanish unread); information ("saved to ...", "open frame 2
//! next") is drawn plainly and fades by itself after [`INFO_SECONDS`]. The oldest go once there
//! are too many.

use std::time::{Duration, Instant};

use eframe::egui::{self, Align2, Color32, RichText};

use super::commands::UiCommand;

/// Most messages kept at once.
const MAX_NOTICES: usize = 4;
/// How long an information message stays.
pub const INFO_SECONDS: f32 = 6.0;

#[derive(Debug, Clone)]
pub struct Notice {
    pub id: u64,
    pub text: String,
    /// Information (fades) rather than an error (stays).
    pub info: bool,
    /// When an information message goes.
    expires: Option<Instant>,
}

#[derive(Default)]
pub struct Notices {
    items: Vec<Notice>,
    next_id: u64,
}

impl Notices {
    pub fn error(&mut self, text: impl Into<String>) {
        self.push(text.into(), false);
    }

    /// A message that is not a failure; it fades after [`INFO_SECONDS`].
    pub fn info(&mut self, text: impl Into<String>) {
        self.push(text.into(), true);
    }

    /// Forgets the information messages (e.g. on switching scenario: they were about the old one).
    pub fn clear_info(&mut self) {
        self.items.retain(|n| !n.info);
    }

    /// Drops information messages whose time is up; the time until the next one goes.
    pub fn expire(&mut self, now: Instant) -> Option<Duration> {
        self.items.retain(|n| n.expires.is_none_or(|t| t > now));
        self.items
            .iter()
            .filter_map(|n| n.expires)
            .min()
            .map(|t| t.saturating_duration_since(now))
    }

    fn push(&mut self, text: String, info: bool) {
        // The same failure twice in a row is one message.
        if self.items.last().is_some_and(|n| n.text == text) {
            return;
        }
        self.next_id += 1;
        let expires = info.then(|| Instant::now() + Duration::from_secs_f32(INFO_SECONDS));
        self.items.push(Notice {
            id: self.next_id,
            text,
            info,
            expires,
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
                    let (title, color) = if notice.info {
                        ("Info", ui.visuals().widgets.noninteractive.fg_stroke.color)
                    } else {
                        ("Error", ui.visuals().error_fg_color)
                    };
                    let width = if notice.info { 1.0 } else { 1.5 };
                    egui::Frame::popup(ui.style())
                        .stroke(egui::Stroke::new(width, color))
                        .show(ui, |ui| {
                            ui.horizontal(|ui| {
                                ui.label(RichText::new(title).color(color).strong());
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

    #[test]
    fn information_fades_and_errors_stay() {
        let mut n = Notices::default();
        n.error("bad");
        n.info("saved");
        let later = Instant::now() + Duration::from_secs_f32(INFO_SECONDS + 1.0);
        assert!(n.expire(Instant::now()).is_some());
        assert_eq!(n.expire(later), None);
        let texts: Vec<_> = n.items().iter().map(|x| x.text.as_str()).collect();
        assert_eq!(texts, ["bad"]);
        n.info("x");
        n.clear_info();
        assert_eq!(n.items().len(), 1);
    }
}
