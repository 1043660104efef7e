//! SOSMP: the update, sampler, reference, gains, the scenario and its room.

mod diagnostics;
mod gains;
mod reference;
mod room;
mod sampler;
mod scenario;
mod update;
