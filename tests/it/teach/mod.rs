//! Teaching mode.

mod room;
