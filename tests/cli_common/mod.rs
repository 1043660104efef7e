//! Shared by the command-line tests: run the real binary and read what it printed.

#![allow(dead_code)]

use std::process::{Command, Output};

/// Runs `beliefscope` with `args` and waits for it.
pub fn beliefscope(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_beliefscope"))
        .args(args)
        .output()
        .expect("cannot start beliefscope")
}

pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}
