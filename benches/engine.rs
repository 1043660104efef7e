//! The one bench target: fixed seeds, the same sizes every run. Each group lives in
//! `benches/groups/<name>.rs` and exposes `pub fn benches(c: &mut Criterion)`.
//! Run one group with `cargo bench --bench engine -- <group name prefix>`.
use std::time::Duration;

use criterion::{Criterion, criterion_group, criterion_main};

#[path = "groups/discrete.rs"]
mod discrete_benches;
#[path = "groups/flow.rs"]
mod flow_benches;
#[path = "groups/kbp.rs"]
mod kbp_benches;
#[path = "groups/kernel.rs"]
mod kernel_benches;
#[path = "groups/kjit.rs"]
mod kjit_benches;
#[path = "groups/matmul.rs"]
mod matmul_benches;
#[path = "groups/pbp.rs"]
mod pbp_benches;
#[path = "groups/sosmp.rs"]
mod sosmp_benches;
#[path = "groups/tree.rs"]
mod tree_benches;

fn all(c: &mut Criterion) {
    discrete_benches::benches(c);
    flow_benches::benches(c);
    kbp_benches::benches(c);
    kernel_benches::benches(c);
    kjit_benches::benches(c);
    matmul_benches::benches(c);
    pbp_benches::benches(c);
    tree_benches::benches(c);
    sosmp_benches::benches(c);
}

criterion_group! {
    name = engine;
    config = Criterion::default()
        .sample_size(20)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(3));
    targets = all
}
criterion_main!(engine);
