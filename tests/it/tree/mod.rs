//! Kernel BP on trees: the engine, the scenario, the command line and the room.

mod bimodal;
mod cli;
mod debugger;
mod kbp;
mod room;
mod scenario;
