//! The tree canvas: the running tree with its message states, and the draw mode that edits a
//! tree of the dataset's columns (validated live).

use std::time::Instant;

use eframe::egui::{self, Align2, Color32, FontId, Pos2, Rect, Sense, Stroke, Vec2};

use super::view::*;
use crate::app::commands::UiCommand;
use crate::scenarios::tree::{TreeConfig, TreeDraft, TreeView};
use crate::scenarios::{Probe, ScenarioConfig};

/// Canvas coordinates of a [0, 1]² position.
pub(super) fn to_screen(rect: Rect, p: [f64; 2]) -> Pos2 {
    let m = 34.0;
    Pos2::new(
        rect.left() + m + (rect.width() - 2.0 * m) * p[0] as f32,
        rect.top() + m + (rect.height() - 2.0 * m) * p[1] as f32,
    )
}

pub(super) fn from_screen(rect: Rect, p: Pos2) -> [f64; 2] {
    let m = 34.0;
    [
        (((p.x - rect.left() - m) / (rect.width() - 2.0 * m).max(1.0)) as f64).clamp(0.0, 1.0),
        (((p.y - rect.top() - m) / (rect.height() - 2.0 * m).max(1.0)) as f64).clamp(0.0, 1.0),
    ]
}

/// Where the arrow of message `from -> to` sits: beside the edge's middle, on the sender's
/// right, pointing towards the receiver.
pub(super) fn message_arrow(a: Pos2, b: Pos2) -> (Pos2, Vec2) {
    let d = (b - a).normalized();
    let n = Vec2::new(-d.y, d.x);
    let mid = a + (b - a) * 0.5 + n * 7.0;
    (mid - d * 9.0, d * 18.0)
}

pub(super) fn state_color(state: &str, dark: bool) -> (Color32, f32) {
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
pub(super) fn tree_canvas(
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

/// The drawing canvas and its editor.
pub(super) fn draw_mode(
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
