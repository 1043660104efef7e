//! The convergence debugger: engine side and its rooms.

mod convergence;
mod graph_room;
mod grid_room;
