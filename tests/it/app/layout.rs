//! How the window shares its space, driven through egui_kittest at the 1360 x 840 the issues
//! used: the parameter panel keeps its width whatever its form holds, and Fit fills the central
//! area with the image panes.

use crate::common::{has_text, wait_for};
use beliefscope::app::App;
use beliefscope::scenarios::ScenarioConfig;
use beliefscope::scenarios::flow::{FlowAlgorithm, FlowConfig};
use eframe::egui::accesskit::Role;
use egui_kittest::Harness;
use egui_kittest::kittest::Queryable as _;

#[test]
fn flow_compare_at_fit_fills_the_central_area_and_the_form_keeps_its_panel_width() {
    let config = FlowConfig {
        width: 48,
        height: 48,
        levels: 1,
        iters: 3,
        compare: Some(FlowAlgorithm::Discrete),
        ..FlowConfig::default()
    };
    let mut h = Harness::builder()
        .with_size([1360.0, 840.0])
        .build_eframe(|cc| App::with_config(cc, ScenarioConfig::Flow(config), true));
    wait_for(&mut h, "the finished run", |h| {
        has_text(h, "iteration 3 / 3")
    });
    // A few more frames: a form wider than its panel used to widen it frame by frame.
    h.run_steps(30);

    // The selector spans the parameter panel; the inspector's first title starts its panel.
    let panel_right = h
        .get_by_role_and_label(Role::ComboBox, "Scenario")
        .rect()
        .right()
        + 16.0;
    let inspector_left = h
        .get_by_label("Endpoint error (px) per iteration")
        .rect()
        .left()
        - 8.0;
    assert!(
        panel_right <= 330.0,
        "the parameter panel grew to {panel_right} points (default 300)"
    );

    let panes: Vec<_> = h.query_all_by_role(Role::Image).map(|n| n.rect()).collect();
    assert_eq!(panes.len(), 6, "frame, flows, EPE maps and ground truth");
    let union = panes.iter().skip(1).fold(panes[0], |u, r| u.union(*r));
    let central = inspector_left - panel_right;
    assert!(
        union.width() >= 0.9 * central,
        "Fit uses {} of the {central} points between the panels",
        union.width()
    );
}
