//! Predictive BP: the scenario, its room and debugger.

mod curve_panel;
mod debugger;
mod pendigits_curve;
mod room;
mod scenario;
