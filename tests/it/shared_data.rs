//! The public data beside the checkout (`../shared/data`: Middlebury pairs, test images, UCI
//! sets, pendigits). Tests that read it live in modules named `shared_data`, are
//! `#[ignore = "needs ../shared/data"]`, and fail, naming the file, when it is absent: run them
//! with `cargo test --release -- --ignored shared_data` (CI does).

use std::path::PathBuf;

/// `../shared/data/<relative>`, which must exist.
pub fn shared_data(relative: &str) -> PathBuf {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../shared/data")
        .join(relative);
    assert!(
        path.exists(),
        "needs ../shared/data: {} not found",
        path.display()
    );
    path
}
