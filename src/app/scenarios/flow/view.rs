//! The flow scenario's views: frame 1 and frame 2 (or one pane flickering between them), the
//! flow field of each algorithm colour-coded with its colour-wheel legend and an optional arrow
//! overlay, the ground truth and an EPE map; a slider that reviews the stored snapshots
//! (t = 1, 10, 40 of every level, as in the paper's Fig. 10); EPE and AAE curves; and the probed
//! pixel's 2-D belief over the displacement lattice as a heat map with the ground truth marked.

use std::any::Any;
use std::sync::Arc;

use eframe::egui::{self, Color32, RichText, Stroke};
use egui_plot::{HoverPosition, Legend, MarkerShape, PlotImage, PlotPoint, Points};

use crate::app::commands::UiCommand;
use crate::app::state::State;
use crate::app::textures::{AsyncTexture, CachedTexture, Source};
use crate::app::views::curves::{Reference, Series, metrics_plot, residual_plot};
use crate::app::views::image_panes::{self, ColorBar, Pane};
use crate::app::views::ticks::{self, Scale};
use crate::inference::EstimateKind;
use crate::io::{FlowField, GrayImage};
use crate::scenarios::Probe;
use crate::scenarios::flow::metrics::FlowErrors;
use crate::scenarios::flow::{FlowAlgorithm, FlowBeliefProbe, FlowRunView, FlowView};
use crate::viz;
use crate::viz::flow_color::{
    FlowColoring, endpoint_errors, error_map_rgba, flow_arrows, flow_rgba, legend_rgba,
};

const GT_COLOR: Color32 = Color32::from_rgb(102, 187, 106);
const ESTIMATE_COLOR: Color32 = Color32::from_rgb(0, 230, 255);
/// Seconds each frame shows while flickering.
const FLICKER_SECONDS: f64 = 0.5;

/// Textures and the display choices of the flow panes (runtime only).
pub struct Caches {
    frame1: CachedTexture,
    frame2: CachedTexture,
    /// Redrawn off the window's thread: they change with every iteration.
    flows: [AsyncTexture; 2],
    errors: [AsyncTexture; 2],
    ground_truth: CachedTexture,
    legend: CachedTexture,
    colorbar: CachedTexture,
    beliefs: [CachedTexture; 2],
    pub coding: FlowColoring,
    pub arrows: bool,
    /// Pixels between arrows.
    pub arrow_step: usize,
    pub flicker: bool,
    /// The snapshot under review (index into the primary run's snapshots); `None` = live.
    pub review: Option<usize>,
    /// EPE (pixels) shown as the brightest colour of the EPE maps.
    pub epe_scale: f64,
}

impl Default for Caches {
    fn default() -> Self {
        Caches {
            frame1: CachedTexture::default(),
            frame2: CachedTexture::default(),
            flows: Default::default(),
            errors: Default::default(),
            ground_truth: CachedTexture::default(),
            legend: CachedTexture::default(),
            colorbar: CachedTexture::default(),
            beliefs: Default::default(),
            coding: FlowColoring::Middlebury,
            arrows: false,
            arrow_step: 8,
            flicker: false,
            review: None,
            epe_scale: 2.0,
        }
    }
}

fn shared<T: Any + Send + Sync>(a: &Arc<T>) -> Arc<dyn Any + Send + Sync> {
    a.clone()
}

/// One flow a pane shows and the errors the engine measured on it.
struct ShownFlow {
    flow: Arc<FlowField>,
    /// Measured when the flow was read out (never recomputed per frame: a pass over every
    /// pixel on the window's thread).
    errors: Option<FlowErrors>,
    when: String,
}

/// The flow each run shows: live, or the reviewed snapshot (the compared run's snapshot of the
/// same iteration, else its live flow).
fn shown_flows(view: &FlowView, review: Option<usize>) -> Vec<ShownFlow> {
    let primary = &view.runs[0];
    let chosen = review.and_then(|i| primary.snapshots.get(i));
    let live = |r: &FlowRunView, when: String| ShownFlow {
        flow: r.flow.clone(),
        errors: r.errors,
        when,
    };
    view.runs
        .iter()
        .map(|r| match chosen {
            None => live(r, format!("t {}", r.iteration)),
            Some(s) => match r.snapshots.iter().find(|o| o.iteration == s.iteration) {
                Some(o) => ShownFlow {
                    flow: o.full_flow(),
                    errors: o.errors,
                    when: format!("t {} (level {})", o.iteration, level_ordinal(view, o.level)),
                },
                None => live(r, format!("t {} live", r.iteration)),
            },
        })
        .collect()
}

fn gray_texture<'a>(
    ctx: &egui::Context,
    cache: &'a mut CachedTexture,
    name: &str,
    frame: &Arc<GrayImage>,
) -> &'a egui::TextureHandle {
    cache.get(ctx, name, Source::shared(vec![shared(frame)], &[]), || {
        viz::gray_rgba(frame.width, frame.height, &frame.pixels, 0.0, 255.0)
    })
}

/// Arrows closer than this on screen (points) are thinned out.
const MIN_ARROW_GAP: f32 = 14.0;

/// The toolbar, the image panes and the arrow overlay.
pub fn central(
    ui: &mut egui::Ui,
    view: &FlowView,
    caches: &mut Caches,
    state: &mut State,
    selection: Option<Probe>,
    commands: &mut Vec<UiCommand>,
) {
    let ctx = ui.ctx().clone();
    let (w, h) = (view.width, view.height);
    let snapshots = &view.runs[0].snapshots;
    if caches.review.is_some_and(|i| i >= snapshots.len()) {
        caches.review = None;
    }
    toolbar(ui, view, caches, state, commands);
    if !view.warnings.is_empty() {
        ui.label(RichText::new(view.warnings.join(" · ")).small().weak());
    }
    ui.add_space(4.0);

    let max = view.max_speed;
    let coding = caches.coding;
    let scale = caches.epe_scale;
    let flows = shown_flows(view, caches.review);
    let time = ui.input(|i| i.time);
    let second = caches.flicker && ((time / FLICKER_SECONDS) as u64).is_multiple_of(2);
    if caches.flicker {
        ctx.request_repaint_after(std::time::Duration::from_secs_f64(FLICKER_SECONDS / 2.0));
    }
    let Caches {
        frame1,
        frame2,
        flows: flow_tex,
        errors: error_tex,
        ground_truth,
        legend,
        colorbar,
        ..
    } = caches;
    let f1 = gray_texture(&ctx, frame1, "frame 1", &view.frame1);
    let f2 = gray_texture(&ctx, frame2, "frame 2", &view.frame2);
    let legend = legend.get(
        &ctx,
        "flow legend",
        Source::new(&[], &[coding as u8 as f64]),
        || legend_rgba(64, coding),
    );
    let bar = colorbar.get(&ctx, "heat colour bar", Source::default(), || {
        viz::heat_bar(256, 1)
    });
    let mut flow_panes = Vec::new();
    let mut error_panes = Vec::new();
    for (k, (shown, (ft, et))) in flows
        .iter()
        .zip(flow_tex.iter_mut().zip(error_tex.iter_mut()))
        .enumerate()
    {
        let run = &view.runs[k];
        let label = run.algorithm.label();
        let (flow, when, errors) = (&shown.flow, &shown.when, shown.errors);
        let tex = ft.get(
            &ctx,
            label,
            Source::shared(vec![shared(flow)], &[max, coding as u8 as f64]),
            {
                let flow = flow.clone();
                move || flow_rgba(w, h, &flow.u, &flow.v, coding, Some(max))
            },
        );
        let title = match errors {
            Some(e) => format!("{label} · {when} · EPE {:.3}", e.epe),
            None => format!("{label} · {when}"),
        };
        flow_panes.push(Pane {
            title,
            name: format!("{label} flow"),
            texture: tex,
            colorbar: None,
            legend: Some(legend),
        });
        if let Some(g) = &view.ground_truth {
            let etex = et.get(
                &ctx,
                &format!("{label} epe"),
                Source::shared(vec![shared(flow), shared(g)], &[scale]),
                {
                    let (flow, g) = (flow.clone(), g.clone());
                    move || {
                        let e = endpoint_errors(&flow.u, &flow.v, &g.u, &g.v);
                        error_map_rgba(w, h, &e, scale)
                    }
                },
            );
            error_panes.push(Pane {
                title: format!("EPE ({label}) · AAE {:.2}°", errors.map_or(0.0, |e| e.aae)),
                name: format!("{label} EPE map"),
                texture: etex,
                colorbar: Some(ColorBar {
                    texture: bar,
                    low: "0 px".into(),
                    high: format!("≥ {scale:.1} px"),
                }),
                legend: None,
            });
        }
    }
    let gt_pane = view.ground_truth.as_ref().map(|g| {
        let tex = ground_truth.get(
            &ctx,
            "ground truth",
            Source::shared(vec![shared(g)], &[max, coding as u8 as f64]),
            || flow_rgba(w, h, &g.u, &g.v, coding, Some(max)),
        );
        Pane {
            title: format!("ground truth · max {max:.2} px"),
            name: "ground truth flow".into(),
            texture: tex,
            colorbar: None,
            legend: Some(legend),
        }
    });
    let frame_pane = |second: bool, flicker: bool| Pane {
        title: match (second, flicker) {
            (false, false) => "frame 1".into(),
            (true, false) => "frame 2".into(),
            (false, true) => "frame 1 (flicker)".into(),
            (true, true) => "frame 2 (flicker)".into(),
        },
        name: if flicker {
            "frames".into()
        } else if second {
            "frame 2".into()
        } else {
            "frame 1".into()
        },
        texture: if second { f2 } else { f1 },
        colorbar: None,
        legend: None,
    };
    let flicker = caches.flicker;
    let compare = view.runs.len() > 1;
    let mut flow_panes = flow_panes.into_iter();
    let mut error_panes = error_panes.into_iter();
    // Rows: (frames, flow, its EPE map) per algorithm; the ground truth in the first column of
    // the second row (in place of frame 2 when flickering or comparing).
    let mut panes: Vec<Pane<'_>> = Vec::new();
    let mut flow_index = Vec::new();
    let columns: &[usize] = if compare {
        panes.push(frame_pane(second, flicker));
        flow_index.push(panes.len());
        panes.push(flow_panes.next().expect("primary"));
        panes.extend(error_panes.next());
        match gt_pane {
            Some(g) => panes.push(g),
            None => panes.push(frame_pane(true, false)),
        }
        flow_index.push(panes.len());
        panes.push(flow_panes.next().expect("compared"));
        panes.extend(error_panes.next());
        if view.ground_truth.is_some() {
            &[3]
        } else {
            &[2, 4, 1]
        }
    } else {
        panes.push(frame_pane(second, flicker));
        if !flicker {
            panes.push(frame_pane(true, false));
        }
        flow_index.push(panes.len());
        panes.push(flow_panes.next().expect("primary"));
        if let Some(g) = gt_pane {
            panes.push(g);
        }
        panes.extend(error_panes.next());
        match panes.len() {
            5 => &[3, 5, 2],
            4 => &[2, 4, 1],
            3 => &[3, 1],
            _ => &[2, 1],
        }
    };
    let selected = match selection {
        Some(Probe::Node(n)) if n < w * h => Some([n % w, n / w]),
        _ => None,
    };
    let hover = |[x, y]: [usize; 2]| {
        let i = y * w + x;
        let mut text = format!(
            "pixel ({x}, {y})\nframe 1 {:.0} · frame 2 {:.0}",
            view.frame1.pixels[i], view.frame2.pixels[i]
        );
        for (k, shown) in flows.iter().enumerate() {
            text.push_str(&format!(
                "\n{} ({:.2}, {:.2})",
                view.runs[k].algorithm.label(),
                shown.flow.u[i],
                shown.flow.v[i]
            ));
        }
        if let Some(g) = &view.ground_truth {
            if g.is_known(i) {
                text.push_str(&format!("\nground truth ({:.2}, {:.2})", g.u[i], g.v[i]));
            } else {
                text.push_str("\nground truth unknown here");
            }
        }
        text
    };
    let response = image_panes::show(
        ui,
        &mut state.zoom,
        [w, h],
        &panes,
        columns,
        selected,
        &hover,
    );
    if caches.arrows {
        // Thinned with zoom: arrows at least MIN_ARROW_GAP screen points apart, so that at low
        // zoom they do not bury the flow.
        let step = caches
            .arrow_step
            .max(2)
            .max((MIN_ARROW_GAP / response.zoom.max(1e-3)).ceil() as usize);
        // Arrows as long as the motion, times the step over the largest speed when motions are
        // small (so the longest is one step long).
        let gain = if max > 0.0 {
            (step as f64 / max).max(1.0)
        } else {
            1.0
        };
        for (&pi, shown) in flow_index.iter().zip(&flows) {
            if let Some(rect) = response.rects.get(pi) {
                let arrows = flow_arrows(w, h, &shown.flow.u, &shown.flow.v, step, gain);
                let painter = ui.painter().with_clip_rect(*rect);
                let z = response.zoom;
                let at = |p: [f64; 2]| rect.min + egui::vec2(p[0] as f32 * z, p[1] as f32 * z);
                for (o, t) in arrows {
                    let (a, b) = (at(o), at(t));
                    painter.line_segment([a, b], Stroke::new(2.5, Color32::from_black_alpha(140)));
                    painter.arrow(a, b - a, Stroke::new(1.2, Color32::WHITE));
                }
            }
        }
    }
    if let Some([x, y]) = response.clicked {
        commands.push(UiCommand::Select(Probe::Node(y * w + x)));
    }
}

fn toolbar(
    ui: &mut egui::Ui,
    view: &FlowView,
    caches: &mut Caches,
    state: &mut State,
    commands: &mut Vec<UiCommand>,
) {
    ui.horizontal_wrapped(|ui| {
        image_panes::zoom_toolbar(ui, &mut state.zoom, commands);
        ui.separator();
        ui.checkbox(&mut caches.flicker, "Flicker")
            .on_hover_text("Show frame 1 and frame 2 alternately in one pane");
        ui.separator();
        let id = ui.label("Colours").id;
        egui::ComboBox::from_id_salt("flow_coding")
            .selected_text(match caches.coding {
                FlowColoring::Middlebury => "Middlebury wheel",
                FlowColoring::Hsv => "plain HSV",
            })
            .show_ui(ui, |ui| {
                ui.selectable_value(
                    &mut caches.coding,
                    FlowColoring::Middlebury,
                    "Middlebury wheel",
                )
                .on_hover_text(
                    "Baker et al.'s 55-colour wheel: hue from the direction, white at rest",
                );
                ui.selectable_value(&mut caches.coding, FlowColoring::Hsv, "plain HSV")
                    .on_hover_text(
                        "Hue = direction (right red, down yellow-green), saturation = speed",
                    );
            })
            .response
            .labelled_by(id);
        ui.checkbox(&mut caches.arrows, "Arrows")
            .on_hover_text("Overlay arrows on the flow images, one every few pixels");
        if caches.arrows {
            let id = ui.label("every").id;
            ui.add(
                egui::DragValue::new(&mut caches.arrow_step)
                    .range(2..=64)
                    .suffix(" px"),
            )
            .labelled_by(id);
        }
        if view.ground_truth.is_some() {
            ui.separator();
            // Kept on one line: a wrapped toolbar label reads as two controls.
            let id = ui.add(egui::Label::new("EPE scale").extend()).id;
            ui.add(
                egui::DragValue::new(&mut caches.epe_scale)
                    .range(0.1..=20.0)
                    .speed(0.05)
                    .max_decimals(1)
                    .suffix(" px"),
            )
            .labelled_by(id)
            .on_hover_text("Endpoint error shown as the brightest colour of the EPE maps");
        }
    });
    let snapshots = &view.runs[0].snapshots;
    ui.horizontal_wrapped(|ui| {
        let live = caches.review.is_none();
        if ui
            .selectable_label(live, "Live")
            .on_hover_text("Show the flow of the latest iteration")
            .clicked()
        {
            caches.review = None;
        }
        if snapshots.is_empty() {
            ui.weak("snapshots appear at t = 1, 10, 40 of each level");
            return;
        }
        let mut index = caches.review.unwrap_or(snapshots.len() - 1);
        let id = ui.label("Snapshot").id;
        let s = &snapshots[index.min(snapshots.len() - 1)];
        let text = if caches.review.is_some() {
            format!(
                "t = {} (level {} of {}, step {})",
                s.iteration,
                level_ordinal(view, s.level),
                view.level_sizes.len(),
                s.level_iteration
            )
        } else {
            format!("{} stored; drag to review", snapshots.len())
        };
        let slider = ui
            .add(
                egui::Slider::new(&mut index, 0..=snapshots.len() - 1)
                    .show_value(false)
                    .text(text),
            )
            .labelled_by(id)
            .on_hover_text("Review the stored flows (the paper's Fig. 10 shows t = 1, 10, 40)");
        if slider.changed() {
            caches.review = Some(index);
        }
        ui.weak(format!(
            "{} × {} px · {} labels per axis · click a pixel to see its belief",
            view.width, view.height, view.labels_per_axis
        ));
    });
}

/// EPE and AAE curves (or the residual without ground truth) and the probed pixel's beliefs.
pub fn inspector(
    ui: &mut egui::Ui,
    snapshot: &crate::runner::Snapshot,
    view: &FlowView,
    caches: &mut Caches,
    curve_h: f32,
    belief_h: f32,
) {
    let history = &snapshot.history;
    let max_iters = Some(view.config.total_iters());
    let labels: Vec<&str> = view.runs.iter().map(|r| r.algorithm.label()).collect();
    let key = |base: &str, k: usize| {
        if k == 0 {
            base.to_string()
        } else {
            format!("{base}_{}", labels[k])
        }
    };
    if let Some(z) = view.zero_errors {
        ui.strong("Endpoint error (px) per iteration")
            .on_hover_text(
                "Mean |estimate − ground truth| over the pixels with known ground truth; \
             pyramid levels follow one another",
            );
        let series: Vec<Series> = (0..labels.len())
            .map(|k| Series::metric(labels[k], &key("epe", k)))
            .collect();
        metrics_plot(
            ui,
            "flow_epe",
            "EPE (px)",
            history,
            &series,
            &[Reference {
                name: format!("zero flow ({:.2})", z.epe),
                value: z.epe,
            }],
            max_iters,
            curve_h,
        );
        ui.add_space(6.0);
        ui.strong("Angular error (°) per iteration")
            .on_hover_text("Mean angle between (u, v, 1) and (u_gt, v_gt, 1)");
        let series: Vec<Series> = (0..labels.len())
            .map(|k| Series::metric(labels[k], &key("aae", k)))
            .collect();
        metrics_plot(
            ui,
            "flow_aae",
            "AAE (°)",
            history,
            &series,
            &[Reference {
                name: format!("zero flow ({:.1}°)", z.aae),
                value: z.aae,
            }],
            max_iters,
            curve_h,
        );
    } else {
        ui.strong("Residual").on_hover_text(
            "No ground truth loaded: the size of the change of the messages per iteration",
        );
        let series: Vec<Series> = (0..labels.len())
            .map(|k| {
                if k == 0 {
                    Series::residual(labels[0])
                } else {
                    Series::metric(labels[k], &key("residual", k))
                }
            })
            .collect();
        residual_plot(
            ui,
            "flow_residual",
            history,
            &series,
            None,
            max_iters,
            curve_h,
        );
    }
    ui.add_space(6.0);
    ui.separator();
    let Some(p) = &view.probe else {
        ui.strong("Belief");
        ui.weak("Click a pixel in an image to see its belief over the displacements.");
        return;
    };
    ui.strong(format!("Belief at ({}, {})", p.x, p.y));
    if p.beliefs.len() == 2 {
        // Compare mode: side by side, each as large as half the width allows (stacked, each
        // got half of a short height and shrank to a few dozen pixels).
        let beliefs = &mut caches.beliefs;
        ui.columns(2, |cols| {
            for (k, (col, b)) in cols.iter_mut().zip(&p.beliefs).enumerate() {
                let side = col.available_width().min(belief_h - 60.0).max(120.0);
                belief_heatmap(col, &mut beliefs[k.min(1)], b, p.ground_truth, side, view);
            }
        });
    } else {
        let n = p.beliefs.len().max(1) as f32;
        let each = ((belief_h - 24.0 * n) / n).max(120.0);
        for (k, b) in p.beliefs.iter().enumerate() {
            belief_heatmap(
                ui,
                &mut caches.beliefs[k.min(1)],
                b,
                p.ground_truth,
                each,
                view,
            );
        }
    }
    let gt = match p.ground_truth {
        Some([u, v]) => format!("ground truth ({u:.2}, {v:.2})"),
        None => "ground truth unknown here".into(),
    };
    ui.label(RichText::new(format!("■ green: {gt} · ◆ cyan: estimate")).small());
}

/// One belief over the displacement lattice as a heat map (total flow in full-resolution
/// pixels; v grows downwards as in the image), with the ground truth and the estimate marked.
fn belief_heatmap(
    ui: &mut egui::Ui,
    cache: &mut CachedTexture,
    b: &FlowBeliefProbe,
    gt: Option<[f64; 2]>,
    height: f32,
    view: &FlowView,
) {
    let (nx, ny) = (b.us.len(), b.vs.len());
    if nx < 2 || ny < 2 || b.values.len() != nx * ny {
        ui.weak("no belief to show");
        return;
    }
    let top = b.values.iter().copied().fold(0.0, f64::max);
    let values = Arc::new(b.values.clone());
    let tex = cache.get(
        ui.ctx(),
        &format!("belief {}", b.algorithm.label()),
        Source::new(&[&values], &[top]),
        || viz::heat_rgba(nx, ny, &values, top),
    );
    let kind = match view.config.estimate {
        EstimateKind::Mean => "mean",
        EstimateKind::Map => "MAP",
    };
    let what = match b.algorithm {
        crate::scenarios::flow::FlowAlgorithm::Sosmp => "density ψ Π m̂ (clipped messages)",
        crate::scenarios::flow::FlowAlgorithm::Discrete => "label probabilities",
    };
    ui.label(
        RichText::new(format!(
            "{} · level {} pixel ({}, {}) · {what} · estimate ({kind}) ({:.2}, {:.2})",
            b.algorithm.label(),
            level_ordinal(view, b.level),
            b.level_pixel.0,
            b.level_pixel.1,
            b.estimate[0],
            b.estimate[1]
        ))
        .small(),
    );
    let (u0, u1) = (b.us[0], b.us[nx - 1]);
    let (v0, v1) = (b.vs[0], b.vs[ny - 1]);
    let (du, dv) = ((u1 - u0) / (nx - 1) as f64, (v1 - v0) / (ny - 1) as f64);
    // Plot y = -v, so that v grows downwards as in the frames.
    let centre = PlotPoint::new(0.5 * (u0 + u1), -0.5 * (v0 + v1));
    let size = egui::vec2((u1 - u0 + du) as f32, (v1 - v0 + dv) as f32);
    // Square, so that the lattice cells are square at aspect 1.
    let side = height.min(ui.available_width()).max(80.0);
    ticks::plot(
        format!("flow_belief_{}", b.algorithm.label()),
        Scale::Real,
        Scale::Real,
    )
    .height(side)
    .width(side)
    .data_aspect(1.0)
    .allow_scroll(false)
    .legend(Legend::default().text_style(egui::TextStyle::Small))
    .x_axis_label("u (px, right)")
    .y_axis_label("v (px, down)")
    .y_axis_formatter(|mark, _| crate::viz::ticks::linear_label(-mark.value, mark.step_size))
    .include_x(u0 - 0.5 * du)
    .include_x(u1 + 0.5 * du)
    .include_y(-v0 + 0.5 * dv)
    .include_y(-v1 - 0.5 * dv)
    .label_formatter(|hover| {
        let p = match hover {
            HoverPosition::NearDataPoint { position, .. } => position,
            HoverPosition::Elsewhere { position } => position,
        };
        Some(format!("u {:.2}, v {:.2}", p.x, -p.y))
    })
    .show(ui, |plot| {
        plot.image(PlotImage::new("belief", tex.id(), centre, size));
        if let Some([u, v]) = gt {
            plot.points(
                Points::new("ground truth", vec![[u, -v]])
                    .shape(MarkerShape::Square)
                    .radius(6.0)
                    .filled(false)
                    .color(GT_COLOR),
            );
        }
        plot.points(
            Points::new("estimate", vec![[b.estimate[0], -b.estimate[1]]])
                .shape(MarkerShape::Diamond)
                .radius(5.0)
                .filled(false)
                .color(ESTIMATE_COLOR),
        );
    });
}

/// A pyramid level's number as the window shows it: counted coarse to fine from 1 (the order the
/// run visits them, as the debugger's map labels count), from the engine's index (0 = finest).
fn level_ordinal(view: &FlowView, index: usize) -> usize {
    let count = view.level_sizes.len().max(1);
    count - index.min(count - 1)
}

/// Numbers for the status bar.
pub fn status(view: &FlowView) -> Vec<String> {
    let mut out = Vec::new();
    for r in &view.runs {
        match r.errors {
            Some(e) => out.push(format!(
                "EPE {:.3} px · AAE {:.2}° ({})",
                e.epe,
                e.aae,
                r.algorithm.label()
            )),
            None => out.push(format!("{} (no ground truth)", r.algorithm.label())),
        }
    }
    let r: &FlowRunView = &view.runs[0];
    let coarsest = view.level_sizes.last().copied().unwrap_or((0, 0));
    let change = r
        .levels
        .last()
        .filter(|l| l.flow_change.is_finite())
        .map_or(String::new(), |l| {
            format!(" · Δflow {:.4} px/iteration", l.flow_change)
        });
    let size = view.level_sizes.get(r.level).copied().unwrap_or((0, 0));
    out.push(format!(
        "level {} of {} ({} × {}){} · coarsest {} × {} px · step {}{change}",
        level_ordinal(view, r.level),
        view.level_sizes.len(),
        size.0,
        size.1,
        if view.config.levels == 0 {
            " (from the image size)"
        } else {
            ""
        },
        coarsest.0,
        coarsest.1,
        r.level_iteration
    ));
    for r in view
        .runs
        .iter()
        .filter(|r| r.algorithm == FlowAlgorithm::Sosmp)
    {
        let per_level: Vec<String> = r
            .levels
            .iter()
            .map(|l| {
                format!(
                    "level {} {:.3}%",
                    level_ordinal(view, l.level),
                    100.0 * l.fallback_fraction()
                )
            })
            .collect();
        out.push(format!("SOSMP fallbacks to β: {}", per_level.join(" · ")));
    }
    if let Some(z) = view.zero_errors {
        out.push(format!("zero flow EPE {:.2}", z.epe));
    }
    out
}
