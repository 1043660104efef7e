//! The window's fixed panels: menu bar, the scenario selector with the room's parameters and the
//! run controls, status bar.

pub mod controls;
pub mod menu;
pub mod status;
