//! Writes the window icon `assets/icon.png` (drawn by `beliefscope::viz::app_icon`).
//! Run from the repository root: `cargo run --release --example make_icon`.

fn main() {
    let icon = beliefscope::viz::app_icon(64);
    let path = std::path::Path::new("assets/icon.png");
    if let Err(e) = icon.save(path) {
        eprintln!("error: cannot write {}: {e}", path.display());
        std::process::exit(1);
    }
    println!("wrote {}", path.display());
}
