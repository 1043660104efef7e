//! Predictive BP: the scenario, its room and debugger.

mod debugger;
mod room;
mod scenario;
