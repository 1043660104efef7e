//! Escape closes the dialog on top: the in-window file browser first (it asks for an answer),
//! then the help and paper-figures windows and a room's own window (`ScenarioUi::dialog_open`,
//! the pbp DAG editor), the most recently opened first. The order is kept
//! here because a window's open flag lives with its owner (`Help`, `PaperFigures`).

/// A window that Escape can close.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dialog {
    Shortcuts,
    About,
    Explain,
    PaperFigures,
    /// The running scenario's room's own window (the pbp DAG editor).
    Room,
}

/// The open dialogs, oldest first.
#[derive(Debug, Default, Clone)]
pub struct OpenOrder(Vec<Dialog>);

impl OpenOrder {
    /// Records which dialogs are open now: one opened since the last call goes on top, a closed
    /// one leaves.
    pub fn sync(&mut self, open: &[(Dialog, bool)]) {
        self.0
            .retain(|d| open.iter().any(|(o, is_open)| o == d && *is_open));
        for (d, is_open) in open {
            if *is_open && !self.0.contains(d) {
                self.0.push(*d);
            }
        }
    }

    /// The dialog Escape closes.
    pub fn top(&self) -> Option<Dialog> {
        self.0.last().copied()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_last_opened_is_on_top_and_closed_ones_leave() {
        let mut order = OpenOrder::default();
        order.sync(&[(Dialog::About, true), (Dialog::Shortcuts, false)]);
        order.sync(&[(Dialog::About, true), (Dialog::Shortcuts, true)]);
        assert_eq!(order.top(), Some(Dialog::Shortcuts));
        order.sync(&[(Dialog::About, true), (Dialog::Shortcuts, false)]);
        assert_eq!(order.top(), Some(Dialog::About));
        order.sync(&[(Dialog::About, false), (Dialog::Shortcuts, false)]);
        assert_eq!(order.top(), None);
    }
}
