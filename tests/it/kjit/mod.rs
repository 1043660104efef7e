//! KJIT EP messages: the experiments, sites and the room.

mod experiments;
mod room;
mod sites;
