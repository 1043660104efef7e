//! Shared by the command-line tests: run the real binary and read what it printed.

#![allow(dead_code)]

use std::path::Path;
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

/// A JSON file the command wrote (results.json, sweep.json).
pub fn read_json(path: &Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}
