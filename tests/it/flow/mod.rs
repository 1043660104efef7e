//! Optical flow: engines, files, reach, the room and its debugger.

mod cli;
mod debugger;
mod debugger_room;
mod engine;
mod io;
mod reach;
mod room;
