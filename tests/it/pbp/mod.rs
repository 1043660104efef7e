//! Predictive BP: the scenario, its room and debugger.

mod debugger;
mod pendigits_curve;
mod room;
mod scenario;
