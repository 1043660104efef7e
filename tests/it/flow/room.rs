//! The flow views in the explorer window, driven through egui_kittest (AccessKit queries, no
//! GPU): a small built-in pair in compare mode runs to the end, a click on the flow image shows
//! the pixel's beliefs; and how opened or dropped files become frames and ground truth.

use crate::common::{has_text, texts, wait_for};
use beliefscope::app::App;
use beliefscope::scenarios::ScenarioConfig;
use beliefscope::scenarios::flow::open::{FlowOpen, open_flow_files};
use beliefscope::scenarios::flow::{FlowAlgorithm, FlowConfig};
use egui_kittest::Harness;
use egui_kittest::kittest::Queryable as _;

fn small() -> FlowConfig {
    FlowConfig {
        width: 48,
        height: 40,
        levels: 2,
        iters: 10,
        // Every level runs its 10 iterations (the status line reads "20 / 20"), SOSMP too.
        stop_change: 0.0,
        sosmp_iters: 0,
        compare: Some(FlowAlgorithm::Discrete),
        ..FlowConfig::default()
    }
}

#[test]
fn flow_runs_in_compare_mode_and_probes_a_pixel() {
    let mut harness = Harness::builder()
        .with_size([1360.0, 840.0])
        .build_eframe(|cc| App::with_config(cc, ScenarioConfig::Flow(small()), true));
    wait_for(&mut harness, "the finished run", |h| {
        has_text(h, "iteration 20 / 20")
    });
    for part in [
        "frame 1",
        "ground truth · max",
        "sosmp · t 20 · EPE",
        "discrete · t 20 · EPE",
        "EPE (sosmp) · AAE",
        "Endpoint error (px) per iteration",
        "Angular error (°) per iteration",
        "zero flow EPE",
        // The form's pyramid windows and refinement caps.
        "Coarsest window d_c",
        "Refine-only warps",
    ] {
        assert!(
            has_text(&harness, part),
            "{part} missing: {:?}",
            texts(&harness)
        );
    }
    harness.get_by_label("sosmp flow").click();
    wait_for(&mut harness, "the beliefs", |h| has_text(h, "Belief at ("));
    assert!(has_text(&harness, "label probabilities"));
    assert!(has_text(&harness, "density ψ Π m̂"));
    assert!(has_text(&harness, "ground truth ("));
    // Flicker: one frame pane alternates between the frames.
    harness.get_by_label("Flicker").click();
    wait_for(&mut harness, "the flicker pane", |h| {
        has_text(h, "(flicker)")
    });
}

#[test]
fn opened_files_become_frames_and_ground_truth() {
    let dir = tempfile::tempdir().unwrap();
    let touch = |name: &str| {
        let p = dir.path().join(name);
        std::fs::write(&p, b"x").unwrap();
        p
    };
    let f10 = touch("frame10.png");
    let f11 = touch("frame11.png");
    let flo = touch("flow10.flo");
    let other = touch("b.png");
    let base = FlowConfig::default();
    // A Middlebury frame brings its partner and its ground truth.
    match open_flow_files(&base, None, std::slice::from_ref(&f10)) {
        FlowOpen::Apply(c) => {
            assert_eq!(c.frame1.as_deref(), Some(f10.as_path()));
            assert_eq!(c.frame2.as_deref(), Some(f11.as_path()));
            assert_eq!(c.ground_truth.as_deref(), Some(flo.as_path()));
        }
        o => panic!("{o:?}"),
    }
    // Another image waits for its partner, then the pair loads without ground truth.
    let first = match open_flow_files(&base, None, std::slice::from_ref(&other)) {
        FlowOpen::Waiting(p) => p,
        o => panic!("{o:?}"),
    };
    match open_flow_files(&base, Some(&first), std::slice::from_ref(&f11)) {
        FlowOpen::Apply(c) => {
            assert_eq!(c.frame1.as_deref(), Some(other.as_path()));
            assert_eq!(c.frame2.as_deref(), Some(f11.as_path()));
            assert!(c.ground_truth.is_none());
        }
        o => panic!("{o:?}"),
    }
    // Dropped together, in any order of images and .flo.
    match open_flow_files(&base, None, &[flo.clone(), other.clone(), f10.clone()]) {
        FlowOpen::Apply(c) => {
            assert_eq!(c.frame1.as_deref(), Some(other.as_path()));
            assert_eq!(c.ground_truth.as_deref(), Some(flo.as_path()));
        }
        o => panic!("{o:?}"),
    }
    // A .flo alone needs frames; three images are too many.
    assert!(matches!(
        open_flow_files(&base, None, std::slice::from_ref(&flo)),
        FlowOpen::Error(_)
    ));
    assert!(matches!(
        open_flow_files(&base, None, &[f10.clone(), f11.clone(), other.clone()]),
        FlowOpen::Error(_)
    ));
}
