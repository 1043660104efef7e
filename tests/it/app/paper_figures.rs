//! Help > Paper figures runs a figure and shows our numbers beside the paper's; a right-click
//! on a pane offers to save it as PNG; the "What am I looking at?" panel of every room.
//! Driven through egui_kittest.

use std::time::{Duration, Instant};

use crate::common::*;
use beliefscope::app::App;
use beliefscope::scenarios::ScenarioConfig;
use beliefscope::scenarios::paper_figures::FIGURES;
use egui_kittest::Harness;
use egui_kittest::kittest::Queryable as _;

fn click(h: &mut Harness<'_, App>, label: &str) {
    h.get_by_label(label).click();
    h.run_steps(3);
}

#[test]
fn the_paper_figures_menu_runs_sosmp_figure_5_and_compares_with_the_paper() {
    let dir = tempfile::tempdir().unwrap();
    let mut h = window_on(ScenarioConfig::Denoise(small_denoise()));
    h.state_mut()
        .paper_figures()
        .set_output_folder(dir.path().to_path_buf());
    click(&mut h, "Help");
    click(&mut h, "Paper figures");
    // Every entry is listed, grouped by paper.
    for paper in [
        "Song et al. 2011, Kernel Belief Propagation",
        "Noorshams & Wainwright 2013, SOSMP",
        "Jitkrittum et al. 2015, KJIT",
        "Wang & Gordon 2020, Predictive BP",
    ] {
        assert!(has_text(&h, paper), "{paper} is not listed");
    }
    assert!(FIGURES.len() >= 13);
    click(&mut h, "Fig. 5");
    assert!(has_text(&h, "beliefscope run sosmp --out"));
    click(&mut h, "Run (about 5 s)");
    assert!(h.state_mut().paper_figures().running());
    // The run shares two cores with the other tests: allow minutes, not seconds.
    let start = Instant::now();
    while h
        .state_mut()
        .paper_figures()
        .outcome("sosmp-fig5")
        .is_none()
    {
        assert!(
            start.elapsed() < Duration::from_secs(600),
            "figure 5 did not finish"
        );
        h.step();
        std::thread::sleep(Duration::from_millis(20));
    }
    h.run_steps(3);
    let run = match h.state_mut().paper_figures().outcome("sosmp-fig5") {
        Some(Ok(run)) => run.clone(),
        other => panic!("figure 5 failed: {other:?}"),
    };
    // Our slope beside the paper's 1/t, in the window.
    assert!(has_text(
        &h,
        "slope of log(mean e_t/e_0 - floor) against log t"
    ));
    assert!(has_text(&h, "-1 (1/t, up to log factors)"));
    let slope: f64 = run.rows[0].ours.parse().unwrap();
    assert!((-2.0..0.0).contains(&slope), "slope {slope}");
    // The files the command line writes.
    let out = dir.path().join("sosmp-fig5");
    assert!(out.join("results.json").exists());
    assert!(out.join("curves.csv").exists());
    assert_eq!(
        run.commands,
        vec![format!("beliefscope run sosmp --out {}", out.display())]
    );
}

#[test]
fn a_right_click_on_a_pane_offers_to_save_it_as_png() {
    let mut h = window_on(ScenarioConfig::Denoise(small_denoise()));
    h.run_steps(5);
    let ctx = h.ctx.clone();
    // Right-clicks over the central area and the inspector find the image panes and plots.
    let mut panes: Vec<eframe::egui::Rect> = Vec::new();
    let mut first = None;
    for x in (320..1340).step_by(40) {
        for y in (60..800).step_by(40) {
            let pos = egui_pos(x as f32, y as f32);
            if let Some(rect) = h.state_mut().right_click_pane(&ctx, pos) {
                assert!(rect.contains(pos));
                assert!(rect.width() >= 80.0 && rect.height() >= 50.0);
                assert!(rect.width() < 1000.0, "the pane is not the whole window");
                first.get_or_insert(pos);
                if !panes.contains(&rect) {
                    panes.push(rect);
                }
            }
        }
    }
    assert!(
        panes.len() >= 3,
        "only {} panes found: {panes:?}",
        panes.len()
    );
    h.state_mut().right_click_pane(&ctx, first.unwrap());
    h.run_steps(2);
    click(&mut h, "Save this pane as PNG…");
    wait_for(&mut h, "the save dialog", |h| {
        h.query_by_label("File name").is_some()
    });
    assert!(h.state().file_dialog_open());
    // Nothing to save on a button-sized widget or outside the panels.
    assert!(
        h.state_mut()
            .right_click_pane(&ctx, egui_pos(5.0, 5.0))
            .is_none()
    );
}

fn egui_pos(x: f32, y: f32) -> eframe::egui::Pos2 {
    eframe::egui::pos2(x, y)
}

#[test]
fn every_room_explains_what_it_shows() {
    for kind in beliefscope::scenarios::KINDS {
        let mut rooms = beliefscope::app::scenarios::Rooms::default();
        let text = rooms.get(kind.name).explanation();
        assert!(
            !text.starts_with("This scenario has no room of its own"),
            "{} has no explanation",
            kind.name
        );
        assert!(text.len() > 300, "{}: too short", kind.name);
    }
}

#[test]
fn headless_kjit_and_pbp_figures_use_the_rooms_colours() {
    use beliefscope::app::scenarios::{kjit, pbp};
    use beliefscope::viz::palette;
    let rgb = |c: eframe::egui::Color32| [c.r(), c.g(), c.b()];
    assert_eq!(rgb(kjit::view::KJIT_COLOR), palette::KJIT);
    assert_eq!(rgb(kjit::view::QUADRATURE_COLOR), palette::QUADRATURE);
    assert_eq!(rgb(kjit::view::SAMPLING_COLOR), palette::SAMPLING);
    for (name, colour) in [
        ("pbp", palette::PBP),
        ("em", palette::EM),
        ("online_em", palette::ONLINE_EM),
        ("exact", palette::PBP_EXACT),
    ] {
        assert_eq!(rgb(pbp::view::method_color(name)), colour, "{name}");
    }
}
