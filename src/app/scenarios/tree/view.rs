//! The tree explorer: the tree drawn as a graph (nodes, and the two messages of every edge as
//! arrows coloured by state), click a node to inspect it and to observe it with a slider over
//! its data range (every other belief follows as the slider moves: the change goes to the
//! worker as a live control, not a rebuild), the selected node's beliefs (kernel BP Parzen and
//! embedding, Gaussian BP, the reference), the message inspector (a message's weights over its
//! samples as a stem plot, negative weights in red), and a canvas to draw a tree: add nodes,
//! drag from one node to another to connect them, assign columns, apply, save or load.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use eframe::egui::{self, Align2, Color32, FontId, Pos2, Rect, RichText, Sense, Stroke, Vec2};
use egui_plot::{Bar, BarChart, Legend, Line, LineStyle, Plot, PlotPoints, Points, VLine};

use crate::app::commands::UiCommand;
use crate::app::views::curves::{Series, metrics_plot};
use crate::runner::Snapshot;
use crate::scenarios::tree::{DraftProblem, TreeConfig, TreeControl, TreeDraft, TreeView};
use crate::scenarios::{Probe, ScenarioConfig, ScenarioControl};

pub const PARZEN_COLOR: Color32 = Color32::from_rgb(66, 165, 245);
pub const EMBEDDING_COLOR: Color32 = Color32::from_rgb(171, 71, 188);
pub const GAUSSIAN_COLOR: Color32 = Color32::from_rgb(102, 187, 106);
pub const REFERENCE_COLOR: Color32 = Color32::from_rgb(160, 160, 160);
pub const OBSERVED_COLOR: Color32 = Color32::from_rgb(255, 167, 38);
pub const NEGATIVE_COLOR: Color32 = Color32::from_rgb(229, 57, 53);
pub const SELECTED_COLOR: Color32 = Color32::from_rgb(255, 238, 88);
const PROBLEM_FLASH: Duration = Duration::from_secs(3);
const NODE_RADIUS: f32 = 15.0;

/// Explore the running tree, or draw a new one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Mode {
    #[default]
    Explore,
    Draw,
}

/// Runtime state of the tree views (not persisted).
#[derive(Default)]
pub struct TreeCache {
    pub mode: Mode,
    /// Slider values per node, ahead of the engine while a slider moves.
    sliders: HashMap<usize, Vec<f64>>,
    /// The drawing being edited.
    pub draft: Option<TreeDraft>,
    draft_selected: Option<usize>,
    drag_from: Option<usize>,
    /// A refused edit, shown (and its edge or node highlighted) for a few seconds.
    flash: Option<(DraftProblem, String, Instant)>,
}

fn selected_node(view: &TreeView, selection: Option<Probe>) -> Option<usize> {
    match selection {
        Some(Probe::Node(n)) if n < view.nodes.len() => Some(n),
        _ => None,
    }
}

/// Status-bar numbers.
pub fn status(view: &TreeView) -> Vec<String> {
    let mut out = Vec::new();
    if view.query_seconds > 0.0 {
        out.push(format!("update {:.1} ms", view.query_seconds * 1e3));
    }
    if let (Some(k), Some(g)) = (
        view.metrics.get("l1_parzen"),
        view.metrics.get("l1_gaussian_bp"),
    ) {
        out.push(format!("L1 kernel BP {k:.3} · Gaussian BP {g:.3}"));
    }
    out
}

/// Canvas coordinates of a [0, 1]² position.
fn to_screen(rect: Rect, p: [f64; 2]) -> Pos2 {
    let m = 34.0;
    Pos2::new(
        rect.left() + m + (rect.width() - 2.0 * m) * p[0] as f32,
        rect.top() + m + (rect.height() - 2.0 * m) * p[1] as f32,
    )
}

fn from_screen(rect: Rect, p: Pos2) -> [f64; 2] {
    let m = 34.0;
    [
        (((p.x - rect.left() - m) / (rect.width() - 2.0 * m).max(1.0)) as f64).clamp(0.0, 1.0),
        (((p.y - rect.top() - m) / (rect.height() - 2.0 * m).max(1.0)) as f64).clamp(0.0, 1.0),
    ]
}

/// Where the arrow of message `from -> to` sits: beside the edge's middle, on the sender's
/// right, pointing towards the receiver.
fn message_arrow(a: Pos2, b: Pos2) -> (Pos2, Vec2) {
    let d = (b - a).normalized();
    let n = Vec2::new(-d.y, d.x);
    let mid = a + (b - a) * 0.5 + n * 7.0;
    (mid - d * 9.0, d * 18.0)
}

fn state_color(state: &str, dark: bool) -> (Color32, f32) {
    match state {
        "weights" => (PARZEN_COLOR, 2.5),
        "one" => (
            if dark {
                Color32::from_gray(110)
            } else {
                Color32::from_gray(170)
            },
            1.0,
        ),
        "pending" => (Color32::from_gray(90), 1.0),
        _ => (Color32::TRANSPARENT, 0.0),
    }
}

/// The running tree with its messages; a click selects a node or a message arrow.
fn tree_canvas(
    ui: &mut egui::Ui,
    view: &TreeView,
    selection: Option<Probe>,
    commands: &mut Vec<UiCommand>,
    height: f32,
) {
    let (response, painter) =
        ui.allocate_painter(Vec2::new(ui.available_width(), height), Sense::click());
    let rect = response.rect;
    let dark = ui.visuals().dark_mode;
    let text_color = ui.visuals().text_color();
    painter.rect_filled(rect, 4.0, ui.visuals().extreme_bg_color);
    let pos: Vec<Pos2> = view
        .nodes
        .iter()
        .map(|n| to_screen(rect, n.position))
        .collect();
    for &(a, b) in &view.edges {
        painter.line_segment([pos[a], pos[b]], Stroke::new(1.5, Color32::from_gray(128)));
    }
    let selected_msg = match selection {
        Some(Probe::Message(m)) => Some(m),
        _ => None,
    };
    for m in &view.messages {
        let (origin, vec) = message_arrow(pos[m.from], pos[m.to]);
        let (color, width) = state_color(m.state, dark);
        if selected_msg == Some(m.id) {
            painter.arrow(origin, vec, Stroke::new(width + 2.5, SELECTED_COLOR));
        }
        if width > 0.0 {
            painter.arrow(origin, vec, Stroke::new(width, color));
        }
    }
    let sel = selected_node(view, selection);
    for (i, n) in view.nodes.iter().enumerate() {
        let p = pos[i];
        let fill = if n.observed.is_some() {
            OBSERVED_COLOR
        } else if dark {
            Color32::from_rgb(40, 70, 100)
        } else {
            Color32::from_rgb(200, 225, 250)
        };
        let stroke = if sel == Some(i) {
            Stroke::new(3.0, SELECTED_COLOR)
        } else {
            Stroke::new(1.5, text_color)
        };
        painter.circle(p, NODE_RADIUS, fill, stroke);
        let label_color = if n.observed.is_some() {
            Color32::BLACK
        } else {
            text_color
        };
        painter.text(
            p,
            Align2::CENTER_CENTER,
            &n.name,
            FontId::proportional(12.0),
            label_color,
        );
        if i == view.root {
            painter.text(
                p + Vec2::new(0.0, -NODE_RADIUS - 8.0),
                Align2::CENTER_CENTER,
                "root",
                FontId::proportional(10.0),
                Color32::from_gray(140),
            );
        }
        // A sparkline of the Parzen belief under every hidden 1-D node.
        if let Some(c) = &n.curves {
            let w = 44.0;
            let h = 14.0;
            let top = c.parzen.iter().fold(0.0f64, |a, v| a.max(v.abs()));
            if top > 0.0 && c.xs.len() > 1 {
                let origin = p + Vec2::new(-w / 2.0, NODE_RADIUS + 4.0 + h);
                let k = c.xs.len() as f32 - 1.0;
                let pts: Vec<Pos2> = c
                    .parzen
                    .iter()
                    .enumerate()
                    .map(|(j, v)| {
                        origin + Vec2::new(w * j as f32 / k, -(h * (*v / top) as f32).max(-h))
                    })
                    .collect();
                painter.add(egui::Shape::line(pts, Stroke::new(1.2, PARZEN_COLOR)));
            }
        } else if let Some(v) = &n.observed {
            let text = v
                .iter()
                .map(|x| format!("{x:.2}"))
                .collect::<Vec<_>>()
                .join(", ");
            painter.text(
                p + Vec2::new(0.0, NODE_RADIUS + 9.0),
                Align2::CENTER_CENTER,
                format!("= {text}"),
                FontId::proportional(11.0),
                OBSERVED_COLOR,
            );
        }
    }
    painter.text(
        rect.left_bottom() + Vec2::new(8.0, -8.0),
        Align2::LEFT_BOTTOM,
        "click a node to observe it · click an arrow to inspect the message · blue: weights, grey: exactly 1",
        FontId::proportional(11.0),
        Color32::from_gray(140),
    );
    if response.clicked()
        && let Some(click) = response.interact_pointer_pos()
    {
        let node = pos
            .iter()
            .enumerate()
            .map(|(i, p)| (i, p.distance(click)))
            .filter(|&(_, d)| d <= NODE_RADIUS + 3.0)
            .min_by(|a, b| a.1.total_cmp(&b.1));
        if let Some((i, _)) = node {
            commands.push(UiCommand::Select(Probe::Node(i)));
        } else {
            let msg = view
                .messages
                .iter()
                .map(|m| {
                    let (o, v) = message_arrow(pos[m.from], pos[m.to]);
                    (m.id, (o + v * 0.5).distance(click))
                })
                .filter(|&(_, d)| d <= 12.0)
                .min_by(|a, b| a.1.total_cmp(&b.1));
            if let Some((id, _)) = msg {
                commands.push(UiCommand::Select(Probe::Message(id)));
            }
        }
    }
}

/// The selected node: evidence switch and sliders, root button, and its belief plot.
fn node_panel(
    ui: &mut egui::Ui,
    view: &TreeView,
    cache: &mut TreeCache,
    selection: Option<Probe>,
    commands: &mut Vec<UiCommand>,
) {
    let sel = selected_node(view, selection);
    ui.horizontal(|ui| {
        let label = ui.label("Node");
        egui::ComboBox::from_id_salt("tree_node")
            .selected_text(sel.map_or("(none)".to_string(), |i| view.nodes[i].name.clone()))
            .show_ui(ui, |ui| {
                for (i, n) in view.nodes.iter().enumerate() {
                    if ui.selectable_label(sel == Some(i), &n.name).clicked() {
                        commands.push(UiCommand::Select(Probe::Node(i)));
                    }
                }
            })
            .response
            .labelled_by(label.id);
        if let Some(i) = sel {
            let n = &view.nodes[i];
            if n.columns.len() > 1 || n.columns.first() != Some(&n.name) {
                ui.weak(format!("columns {}", n.columns.join(", ")));
            }
            let root = ui
                .add_enabled(view.root != i, egui::Button::new("Make root"))
                .on_hover_text(
                    "Root the message schedule here (the beliefs do not change; stepping shows \
                     the new order)",
                );
            if root.clicked() {
                commands.push(UiCommand::Control(ScenarioControl::Tree(
                    TreeControl::SetRoot(i),
                )));
            }
        }
    });
    let Some(i) = sel else {
        ui.add_space(8.0);
        ui.weak(
            "Click a node of the tree (or pick one above) to see its belief and to observe it.",
        );
        return;
    };
    let n = &view.nodes[i];
    // Evidence: a checkbox and one slider per dimension over the data range.
    let mut values = cache.sliders.get(&i).cloned().unwrap_or_else(|| {
        n.observed
            .clone()
            .unwrap_or_else(|| n.range.iter().map(|(lo, hi)| 0.5 * (lo + hi)).collect())
    });
    if let Some(v) = &n.observed
        && !cache.sliders.contains_key(&i)
    {
        values = v.clone();
    }
    let mut observed = n.observed.is_some();
    let mut changed = false;
    // One slider per dimension: beside the switch for a 1-D node, one row each otherwise.
    let one_d = values.len() == 1;
    let slider = |ui: &mut egui::Ui, d: usize, v: &mut f64, width: f32| -> bool {
        let (lo, hi) = n.range[d];
        let name = n.columns.get(d).cloned().unwrap_or_default();
        ui.spacing_mut().slider_width = width.max(120.0);
        let r = ui
            .add(egui::Slider::new(v, lo..=hi).text(name.clone()))
            .on_hover_text(format!("data range [{lo:.4}, {hi:.4}]"));
        let r = if one_d {
            r.accessible_name(format!("Value of {}", n.name))
        } else {
            r.accessible_name(format!("Value of {} ({name})", n.name))
        };
        r.changed()
    };
    ui.horizontal(|ui| {
        if ui
            .checkbox(&mut observed, "Evidence")
            .on_hover_text("Observe this node at the slider's value")
            .accessible_name(format!("Observe {}", n.name))
            .changed()
        {
            changed = true;
        }
        if one_d {
            let w = ui.available_width() - 160.0;
            if slider(ui, 0, &mut values[0], w) {
                observed = true;
                changed = true;
            }
        }
    });
    if !one_d {
        for (d, v) in values.iter_mut().enumerate() {
            ui.horizontal(|ui| {
                ui.add_space(24.0);
                let w = ui.available_width() - 160.0;
                if slider(ui, d, v, w) {
                    observed = true;
                    changed = true;
                }
            });
        }
    }
    if changed {
        cache.sliders.insert(i, values.clone());
        commands.push(UiCommand::Control(ScenarioControl::Tree(
            TreeControl::SetEvidence {
                node: i,
                value: observed.then_some(values),
            },
        )));
    } else if n.observed.is_none() {
        cache.sliders.remove(&i);
    }
    // Numbers.
    let fmt = |v: &[f64]| {
        v.iter()
            .map(|x| format!("{x:.3}"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    if n.observed.is_none() {
        let mut line = format!(
            "kernel BP mean {} · argmax {} · Gaussian BP mean {}",
            fmt(&n.mean),
            fmt(&n.argmax),
            fmt(&n.gaussian_mean)
        );
        if let Some(r) = n.reference_mean {
            line.push_str(&format!(" · reference mean {r:.3}"));
        }
        ui.label(RichText::new(line).small());
    }
    // The plot takes what the sliders leave.
    let h = ui.available_height() - 8.0;
    belief_plot(ui, view, i, h);
}

/// The selected node's beliefs: densities on the grid (1-D) or the candidates' first two
/// coordinates shaded by the Parzen belief (multi-dimensional).
fn belief_plot(ui: &mut egui::Ui, view: &TreeView, i: usize, height: f32) {
    let n = &view.nodes[i];
    let mut plot = Plot::new(("tree_belief", i))
        .height(height.max(120.0))
        .legend(
            Legend::default()
                .follow_insertion_order(true)
                .text_style(egui::TextStyle::Small)
                .background_alpha(0.7),
        )
        .allow_scroll(false);
    if n.dim == 1 {
        let (lo, hi) = n.range[0];
        let pad = 0.1 * (hi - lo);
        plot = plot
            .include_x(lo - pad)
            .include_x(hi + pad)
            .include_y(0.0)
            .x_axis_label(n.name.clone())
            .y_axis_label("density (normalised on the grid)");
    } else {
        plot = plot
            .x_axis_label(n.columns.first().cloned().unwrap_or_default())
            .y_axis_label(n.columns.get(1).cloned().unwrap_or_default())
            .data_aspect(1.0);
    }
    plot.show(ui, |p| {
        if let Some(c) = &n.curves {
            let line = |ys: &[f64]| -> PlotPoints {
                PlotPoints::from(
                    c.xs.iter()
                        .zip(ys)
                        .map(|(&x, &y)| [x, y])
                        .collect::<Vec<_>>(),
                )
            };
            if let Some(r) = &c.reference {
                p.line(
                    Line::new(view.reference_label.unwrap_or("reference"), line(r))
                        .color(REFERENCE_COLOR)
                        .width(4.0),
                );
            }
            p.line(
                Line::new("kernel BP, Parzen P(x)∏m(x)", line(&c.parzen))
                    .color(PARZEN_COLOR)
                    .width(2.0),
            );
            p.line(
                Line::new("kernel BP, embedding", line(&c.embedding))
                    .color(EMBEDDING_COLOR)
                    .style(LineStyle::dashed_dense())
                    .width(1.5),
            );
            p.line(
                Line::new("Gaussian BP (least squares)", line(&c.gaussian_bp))
                    .color(GAUSSIAN_COLOR)
                    .width(1.5),
            );
            p.vline(
                VLine::new("kernel BP mean", n.mean[0])
                    .color(PARZEN_COLOR)
                    .style(LineStyle::dotted_dense()),
            );
            if let Some(r) = n.reference_mean {
                p.vline(
                    VLine::new("reference mean", r)
                        .color(REFERENCE_COLOR)
                        .style(LineStyle::dotted_dense()),
                );
            }
        } else if let Some(c) = &n.candidates {
            // Five shades of the Parzen belief (negative values: red).
            let d = n.dim;
            let top = c.parzen.iter().fold(0.0f64, |a, v| a.max(*v));
            let mut groups: Vec<Vec<[f64; 2]>> = vec![Vec::new(); 6];
            for (k, w) in c.parzen.iter().enumerate() {
                let pt = [c.points[k * d], c.points[k * d + 1]];
                let g = if *w < 0.0 {
                    5
                } else if top > 0.0 {
                    ((w / top) * 4.999) as usize
                } else {
                    0
                };
                groups[g].push(pt);
            }
            for (g, pts) in groups.into_iter().enumerate() {
                if pts.is_empty() {
                    continue;
                }
                let (name, color, r) = if g == 5 {
                    ("negative belief".to_string(), NEGATIVE_COLOR, 2.5)
                } else {
                    let a = 40 + 50 * g as u8;
                    (
                        format!("Parzen belief ≥ {:.0}% of max", 20.0 * g as f64),
                        Color32::from_rgba_unmultiplied(66, 165, 245, a.saturating_add(15)),
                        1.5 + g as f32,
                    )
                };
                p.points(
                    Points::new(name, PlotPoints::from(pts))
                        .color(color)
                        .radius(r),
                );
            }
            p.points(
                Points::new(
                    "kernel BP mean",
                    PlotPoints::from(vec![[n.mean[0], n.mean[1]]]),
                )
                .color(EMBEDDING_COLOR)
                .radius(6.0),
            );
            p.points(
                Points::new(
                    "Gaussian BP mean",
                    PlotPoints::from(vec![[n.gaussian_mean[0], n.gaussian_mean[1]]]),
                )
                .color(GAUSSIAN_COLOR)
                .radius(6.0),
            );
        }
        if let Some(v) = &n.observed {
            if n.dim == 1 {
                p.vline(
                    VLine::new("evidence", v[0])
                        .color(OBSERVED_COLOR)
                        .width(3.0),
                );
            } else {
                p.points(
                    Points::new("evidence", PlotPoints::from(vec![[v[0], v[1]]]))
                        .color(OBSERVED_COLOR)
                        .radius(7.0),
                );
            }
        }
    });
}

/// The drawing canvas and its editor.
fn draw_mode(
    ui: &mut egui::Ui,
    view: &TreeView,
    config: Option<&TreeConfig>,
    cache: &mut TreeCache,
    commands: &mut Vec<UiCommand>,
) {
    let draft = cache.draft.get_or_insert_with(|| view.draft.clone());
    let validation = draft.validate(&view.columns);
    // Toolbar.
    ui.horizontal_wrapped(|ui| {
        let ok = validation.is_ok();
        let apply = ui
            .add_enabled(ok && config.is_some(), egui::Button::new("Apply tree"))
            .on_hover_text("Run kernel BP on this tree (rebuilds the model)");
        if apply.clicked()
            && let Some(c) = config
        {
            let mut c = c.clone();
            crate::scenarios::tree::open::apply_draft_to(&mut c, draft);
            commands.push(UiCommand::Apply(ScenarioConfig::Tree(c)));
            cache.mode = Mode::Explore;
        }
        if ui
            .button("Tidy layout")
            .on_hover_text("Lay the tree out from its first node")
            .clicked()
        {
            draft.relayout(0);
        }
        if ui
            .button("Save tree…")
            .on_hover_text("Save the drawing as an edge-list file")
            .clicked()
        {
            commands.push(UiCommand::SaveTree(draft.to_edge_list().to_text()));
        }
        if ui
            .button("Load tree…")
            .on_hover_text("Open an edge-list file (applies it at once)")
            .clicked()
        {
            commands.push(UiCommand::OpenImageDialog);
        }
        if ui
            .button("Running tree")
            .on_hover_text("Start again from the tree kernel BP is running on")
            .clicked()
        {
            *draft = view.draft.clone();
            cache.draft_selected = None;
        }
        if ui
            .button("Clear")
            .on_hover_text("Remove every node")
            .clicked()
        {
            *draft = TreeDraft::default();
            cache.draft_selected = None;
        }
    });
    let flash = cache
        .flash
        .as_ref()
        .filter(|(_, _, t)| t.elapsed() < PROBLEM_FLASH)
        .map(|(p, m, _)| (p.clone(), m.clone()));
    let problem = flash
        .as_ref()
        .map(|(p, _)| p.clone())
        .or_else(|| validation.clone().err());
    match (&flash, &validation) {
        (Some((_, m)), _) => {
            ui.colored_label(NEGATIVE_COLOR, format!("refused: {m}"));
        }
        (None, Ok(())) => {
            ui.label(format!(
                "a tree over {} nodes: ready to apply",
                draft.nodes.len()
            ));
        }
        (None, Err(p)) => {
            ui.colored_label(NEGATIVE_COLOR, p.message(draft));
        }
    }
    let editor_h = 150.0;
    let height = (ui.available_height() - editor_h).max(200.0);
    let (response, painter) = ui.allocate_painter(
        Vec2::new(ui.available_width(), height),
        Sense::click_and_drag(),
    );
    let rect = response.rect;
    let text_color = ui.visuals().text_color();
    painter.rect_filled(rect, 4.0, ui.visuals().extreme_bg_color);
    let pos: Vec<Pos2> = draft
        .nodes
        .iter()
        .map(|n| to_screen(rect, n.position))
        .collect();
    let hit = |p: Pos2| {
        pos.iter()
            .enumerate()
            .map(|(i, q)| (i, q.distance(p)))
            .filter(|&(_, d)| d <= NODE_RADIUS + 3.0)
            .min_by(|a, b| a.1.total_cmp(&b.1))
            .map(|(i, _)| i)
    };
    for &(a, b) in &draft.edges {
        let bad = problem
            .as_ref()
            .and_then(|p| p.edge())
            .is_some_and(|(x, y)| (x, y) == (a, b) || (x, y) == (b, a));
        let stroke = if bad {
            Stroke::new(4.0, NEGATIVE_COLOR)
        } else {
            Stroke::new(2.0, Color32::from_gray(128))
        };
        painter.line_segment([pos[a], pos[b]], stroke);
    }
    // A refused edge that is not in the drawing (a cycle refused while connecting).
    if let Some((a, b)) = problem.as_ref().and_then(|p| p.edge())
        && a < pos.len()
        && b < pos.len()
        && !draft
            .edges
            .iter()
            .any(|&(x, y)| (x, y) == (a, b) || (x, y) == (b, a))
    {
        painter.line_segment([pos[a], pos[b]], Stroke::new(4.0, NEGATIVE_COLOR));
    }
    let shift = ui.input(|i| i.modifiers.shift);
    // Dragging: from a node to another connects; with Shift it moves the node.
    if response.drag_started()
        && let Some(p) = response.interact_pointer_pos()
    {
        cache.drag_from = hit(p);
    }
    if let (Some(from), Some(p)) = (cache.drag_from, response.interact_pointer_pos())
        && response.dragged()
    {
        if shift {
            draft.move_node(from, from_screen(rect, p));
        } else {
            painter.line_segment([pos[from], p], Stroke::new(2.0, SELECTED_COLOR));
        }
    }
    if response.drag_stopped() {
        if let (Some(from), Some(p)) = (cache.drag_from, response.interact_pointer_pos())
            && !shift
            && let Some(to) = hit(p)
            && to != from
            && let Err(problem) = draft.connect(from, to)
        {
            let m = problem.message(draft);
            cache.flash = Some((problem, m, Instant::now()));
        }
        cache.drag_from = None;
    }
    if response.clicked()
        && let Some(p) = response.interact_pointer_pos()
    {
        match hit(p) {
            Some(i) => cache.draft_selected = Some(i),
            None => {
                let i = draft.add_node(from_screen(rect, p));
                cache.draft_selected = Some(i);
            }
        }
    }
    if response.secondary_clicked()
        && let Some(p) = response.interact_pointer_pos()
    {
        if let Some(i) = hit(p) {
            draft.remove_node(i);
            cache.draft_selected = None;
        } else if let Some(&(a, b)) = draft.edges.iter().min_by(|x, y| {
            let d = |e: &(usize, usize)| (pos[e.0] + (pos[e.1] - pos[e.0]) * 0.5).distance(p);
            d(x).total_cmp(&d(y))
        }) && (pos[a] + (pos[b] - pos[a]) * 0.5).distance(p) < 14.0
        {
            draft.disconnect(a, b);
        }
    }
    let bad_node = problem.as_ref().and_then(|p| p.node());
    for (i, n) in draft.nodes.iter().enumerate() {
        let p = to_screen(rect, n.position);
        let stroke = if bad_node == Some(i) {
            Stroke::new(3.5, NEGATIVE_COLOR)
        } else if cache.draft_selected == Some(i) {
            Stroke::new(3.0, SELECTED_COLOR)
        } else {
            Stroke::new(1.5, text_color)
        };
        let fill = if n.columns.is_empty() {
            Color32::from_gray(90)
        } else {
            Color32::from_rgb(40, 90, 130)
        };
        painter.circle(p, NODE_RADIUS, fill, stroke);
        painter.text(
            p,
            Align2::CENTER_CENTER,
            &n.name,
            FontId::proportional(12.0),
            Color32::WHITE,
        );
        if !n.columns.is_empty() && n.columns != [n.name.clone()] {
            painter.text(
                p + Vec2::new(0.0, NODE_RADIUS + 8.0),
                Align2::CENTER_CENTER,
                n.columns.join(","),
                FontId::proportional(10.0),
                Color32::from_gray(150),
            );
        }
    }
    painter.text(
        rect.left_bottom() + Vec2::new(8.0, -8.0),
        Align2::LEFT_BOTTOM,
        "click: add or select a node · drag node → node: connect · shift-drag: move · right-click: remove",
        FontId::proportional(11.0),
        Color32::from_gray(140),
    );
    // The selected node's name and columns.
    if let Some(i) = cache.draft_selected.filter(|&i| i < draft.nodes.len()) {
        ui.horizontal(|ui| {
            let label = ui.label("Name");
            let mut name = draft.nodes[i].name.clone();
            if ui
                .add(egui::TextEdit::singleline(&mut name).desired_width(120.0))
                .labelled_by(label.id)
                .changed()
            {
                draft.rename(i, &name);
            }
            ui.weak("columns:");
        });
        egui::ScrollArea::vertical()
            .max_height(editor_h - 40.0)
            .show(ui, |ui| {
                ui.horizontal_wrapped(|ui| {
                    for c in &view.columns {
                        let mut on = draft.nodes[i].columns.contains(c);
                        if ui.checkbox(&mut on, c).changed() {
                            let mut cols = draft.nodes[i].columns.clone();
                            if on {
                                cols.push(c.clone());
                            } else {
                                cols.retain(|x| x != c);
                            }
                            // A fresh node takes the name of its first column.
                            if draft.nodes[i].columns.is_empty()
                                && on
                                && draft.nodes[i].name.starts_with('n')
                                && !draft.nodes.iter().any(|n| &n.name == c)
                            {
                                draft.rename(i, c);
                            }
                            draft.assign_columns(i, cols);
                        }
                    }
                });
            });
    } else {
        ui.weak("Select a node on the canvas to name it and assign its columns.");
    }
}

/// The central area of the tree scenario.
pub fn central(
    ui: &mut egui::Ui,
    view: &TreeView,
    config: Option<&TreeConfig>,
    cache: &mut TreeCache,
    selection: Option<Probe>,
    commands: &mut Vec<UiCommand>,
) {
    ui.horizontal_wrapped(|ui| {
        ui.selectable_value(&mut cache.mode, Mode::Explore, "Explore")
            .on_hover_text("Observe nodes and watch every belief");
        ui.selectable_value(&mut cache.mode, Mode::Draw, "Draw tree")
            .on_hover_text("Draw a tree, assign columns, apply it or save it");
        ui.separator();
        ui.label(format!(
            "{} · {} rows · {} nodes · {} · m = {} per edge{}",
            view.data_label,
            view.rows,
            view.nodes.len(),
            view.topology,
            view.samples_per_edge,
            if view.shared_samples { " (shared)" } else { "" }
        ));
        if view.query_seconds > 0.0 {
            let parts: Vec<String> = view
                .query_timings
                .iter()
                .map(|(k, v)| format!("{k} {:.1}", v * 1e3))
                .collect();
            ui.weak(format!(
                "update {:.1} ms ({} ms)",
                view.query_seconds * 1e3,
                parts.join(", ")
            ));
        }
    });
    match cache.mode {
        Mode::Explore => {
            let h = ui.available_height();
            let canvas_h = (h * 0.42).clamp(200.0, 520.0);
            tree_canvas(ui, view, selection, commands, canvas_h);
            ui.add_space(4.0);
            node_panel(ui, view, cache, selection, commands);
        }
        Mode::Draw => draw_mode(ui, view, config, cache, commands),
    }
}

/// The message inspector: β over the receiver's samples as stems (negative in red) and the
/// message as a function on the receiver's grid.
fn message_inspector(ui: &mut egui::Ui, view: &TreeView, height: f32) {
    let Some(m) = &view.inspector else {
        ui.weak("Click an arrow on the tree to inspect that message's weights.");
        return;
    };
    ui.label(format!(
        "message {} → {} ({}), log scale {:.3}",
        m.from, m.to, m.state, m.log_scale
    ));
    if m.weights.is_empty() {
        ui.weak(match m.state {
            "one" => "This message is exactly 1: no evidence on its sending side.",
            "pruned" => "Not computed: its receiver is observed.",
            _ => "Not computed yet.",
        });
        return;
    }
    let negative = m.weights.iter().filter(|w| **w < 0.0).count();
    ui.label(
        RichText::new(format!(
            "β over the {} samples of {} on this edge ({} negative)",
            m.weights.len(),
            m.to,
            negative
        ))
        .small(),
    );
    let span = {
        let lo = m.positions.iter().copied().fold(f64::INFINITY, f64::min);
        let hi = m
            .positions
            .iter()
            .copied()
            .fold(f64::NEG_INFINITY, f64::max);
        (hi - lo).max(1e-9)
    };
    let width = span / (m.weights.len() as f64 * 3.0).max(1.0);
    let (pos, neg): (Vec<Bar>, Vec<Bar>) = m
        .weights
        .iter()
        .zip(&m.positions)
        .map(|(&w, &x)| Bar::new(x, w).width(width))
        .partition(|b| b.value >= 0.0);
    Plot::new(("tree_message", m.id))
        .height(height)
        .legend(Legend::default().text_style(egui::TextStyle::Small))
        .allow_scroll(false)
        .x_axis_label(format!("sample of {}", m.to))
        .y_axis_label("weight β (rescaled)")
        .show(ui, |p| {
            p.bar_chart(BarChart::new("β ≥ 0", pos).color(PARZEN_COLOR));
            p.bar_chart(BarChart::new("β < 0", neg).color(NEGATIVE_COLOR));
        });
    if let Some((xs, ys)) = &m.curve {
        let pts: Vec<[f64; 2]> = xs.iter().zip(ys).map(|(&x, &y)| [x, y]).collect();
        Plot::new(("tree_message_curve", m.id))
            .height(height * 0.7)
            .allow_scroll(false)
            .include_y(0.0)
            .x_axis_label(m.to.clone())
            .y_axis_label("message (max |.| = 1)")
            .show(ui, |p| {
                p.line(
                    Line::new("m(x) = Σ β k(x_i, x)", PlotPoints::from(pts))
                        .color(EMBEDDING_COLOR)
                        .width(2.0),
                );
            });
    }
}

/// The inspector panel of the tree scenario: error curves, the message inspector, the selected
/// node's kernel.
pub fn inspector(ui: &mut egui::Ui, snapshot: &Snapshot, view: &TreeView, height: f32) {
    let has_reference = view.metrics.contains_key("l1_parzen");
    let series = if has_reference {
        vec![
            Series::metric("L1 kernel BP (Parzen)", "l1_parzen"),
            Series::metric("L1 kernel BP (embedding)", "l1_embedding"),
            Series::metric("L1 Gaussian BP", "l1_gaussian_bp"),
        ]
    } else {
        vec![Series::metric("messages computed", "messages_done")]
    };
    ui.label(if has_reference {
        "L1 distance to the reference, per message step (mean over hidden nodes)"
    } else {
        "messages computed, per step"
    });
    metrics_plot(
        ui,
        "tree_curves",
        &snapshot.history,
        &series,
        &[],
        Some(view.schedule.len()),
        height * 0.28,
    );
    ui.separator();
    message_inspector(ui, view, height * 0.3);
    ui.separator();
    if let Some(i) = view.selected_node {
        let n = &view.nodes[i];
        let k = &n.kernel;
        ui.label(RichText::new(format!("Kernel of {}", n.name)).strong());
        let sigma = match k.sigma {
            Some(s) if k.auto => {
                format!("σ = {s:.4} by {} (median distance {:.4})", k.rule, k.median)
            }
            Some(s) => format!("σ = {s:.4} (median distance {:.4})", k.median),
            None => format!("no bandwidth (median distance {:.4})", k.median),
        };
        ui.label(format!("{} · {sigma}", k.kernel));
        ui.label(format!(
            "λ = {} ({})",
            k.lambda, "Gram-diagonal form: K + λI"
        ));
    }
    for w in &view.warnings {
        ui.colored_label(OBSERVED_COLOR, format!("⚠ {w}"));
    }
}
