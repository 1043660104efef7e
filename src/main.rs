//! Entry point: no subcommand opens the explorer window; `list` and `run` work headless.

use std::process::ExitCode;

use clap::Parser;

use beliefscope::cli::{Cli, execute};

fn main() -> ExitCode {
    // Piping output into `head` must end the program quietly, as other Unix tools do, instead
    // of panicking on the closed pipe (Rust ignores SIGPIPE by default).
    #[cfg(unix)]
    // SAFETY: restoring the default disposition of one signal before any thread starts.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
    beliefscope::run::allocator::keep_freed_memory();
    let cli = Cli::parse();
    match cli.command {
        None => match beliefscope::app::run_window() {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => {
                eprintln!("error: cannot open the window: {e}");
                ExitCode::FAILURE
            }
        },
        Some(command) => match execute(command) {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => {
                eprintln!("error: {e}");
                ExitCode::FAILURE
            }
        },
    }
}
