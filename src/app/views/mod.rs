//! View pieces every room shares: image panes with a shared zoom and probe, convergence curves
//! on linear and log axes, belief plots. Each scenario's own views live in its room
//! (`app/scenarios/<name>/`).

pub mod belief;
pub mod curves;
pub mod dashed;
pub mod image_panes;
pub mod kernel_rows;
pub mod legend;
pub mod thin;
pub mod ticks;
