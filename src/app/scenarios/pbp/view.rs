//! The pbp room's central area: the DAG (click an observed node to cycle its evidence,
//! right-click to query it) beside the latent junction tree (hover a separator for In(S),
//! Out(S), α(S), β(S); the paper's Figs. 2–3), then the query's bar chart for exact / PBP / EM /
//! online EM with KL and P̂(e) per method.

use eframe::egui::{self, Align2, Color32, FontId, Pos2, Rect, RichText, Sense, Stroke, Vec2};
use egui_plot::{Bar, BarChart, Legend};

use super::params::set_evidence;
use crate::app::commands::UiCommand;
use crate::app::views::ticks::{self, Scale};
use crate::scenarios::ScenarioControl;
use crate::scenarios::pbp::{PbpConfig, PbpControl, PbpView};

/// The methods' colours, from the one palette.
pub const METHOD_COLORS: [(&str, Color32); 4] = [
    (
        "exact",
        crate::app::colors::method(crate::viz::palette::Method::Exact),
    ),
    (
        "pbp",
        crate::app::colors::method(crate::viz::palette::Method::PredictiveBp),
    ),
    (
        "em",
        crate::app::colors::method(crate::viz::palette::Method::Em),
    ),
    (
        "online_em",
        crate::app::colors::method(crate::viz::palette::Method::OnlineEm),
    ),
];
const ALPHA_COLOR: Color32 = Color32::from_rgb(230, 120, 20);
const BETA_COLOR: Color32 = Color32::from_rgb(150, 60, 200);
const IN_FILL: Color32 = Color32::from_rgb(255, 228, 190);
const OBSERVED_FILL: Color32 = Color32::from_rgb(170, 200, 245);

pub fn method_color(name: &str) -> Color32 {
    METHOD_COLORS
        .iter()
        .find(|(n, _)| *n == name)
        .map_or(Color32::GRAY, |(_, c)| *c)
}

pub fn central(
    ui: &mut egui::Ui,
    v: &PbpView,
    separator: &mut Option<usize>,
    draft: Option<&mut PbpConfig>,
    commands: &mut Vec<UiCommand>,
) {
    let title = if v.stand_in {
        "stand-in model (not the paper's Fig. 4)"
    } else {
        "model file"
    };
    // The width before the header: a header wider than the area wraps instead of widening the
    // canvases and the chart past the inspector.
    let width = ui.available_width();
    ui.horizontal_wrapped(|ui| {
        ui.label(RichText::new(format!("{title}: {}", v.model)).strong());
        if let Some(c) = draft {
            samples_slider(ui, v, c, commands);
        }
    });
    let height = 300.0f32.min(ui.available_height() * 0.5).max(180.0);
    let hovered_now = ui
        .horizontal(|ui| {
            dag_canvas(ui, v, Vec2::new(width * 0.42, height), *separator, commands);
            tree_canvas(ui, v, Vec2::new(width * 0.56, height), separator)
        })
        .inner;
    if hovered_now.is_some() {
        *separator = hovered_now;
    }
    ui.separator();
    query_chart(ui, v);
}

/// N, relearning PBP live on the worker while it moves (one pass of Steps 3–6 per change); on
/// release the draft's N rebuilds the run so EM and online EM follow.
fn samples_slider(
    ui: &mut egui::Ui,
    v: &PbpView,
    c: &mut PbpConfig,
    commands: &mut Vec<UiCommand>,
) {
    let before = c.samples;
    ui.add(
        egui::Slider::new(&mut c.samples, 100..=200_000)
            .logarithmic(true)
            .text("N (live)"),
    );
    if ui.small_button("÷2").clicked() {
        c.samples = (c.samples / 2).max(100);
    }
    if ui.small_button("×2").clicked() {
        c.samples = (c.samples * 2).min(200_000);
    }
    if c.samples != before && c.samples != v.samples {
        commands.push(UiCommand::Control(ScenarioControl::Pbp(
            PbpControl::Relearn {
                samples: c.samples,
                rank: c.rank,
            },
        )));
    }
    ui.label(format!("learned at N = {}", v.samples));
}

/// Node positions of the DAG: layers by longest path from a root.
fn dag_layout(v: &PbpView, rect: Rect) -> Vec<Pos2> {
    let n = v.nodes.len();
    let mut depth = vec![0usize; n];
    for _ in 0..n {
        for &(a, b) in &v.edges {
            depth[b] = depth[b].max(depth[a] + 1);
        }
    }
    let layers = depth.iter().max().map_or(1, |d| d + 1);
    let mut pos = vec![Pos2::ZERO; n];
    for d in 0..layers {
        let members: Vec<usize> = (0..n).filter(|&i| depth[i] == d).collect();
        for (k, &i) in members.iter().enumerate() {
            let x = rect.left() + rect.width() * (k as f32 + 0.5) / members.len() as f32;
            let y = rect.top() + rect.height() * (d as f32 + 0.5) / layers as f32;
            pos[i] = Pos2::new(x, y);
        }
    }
    pos
}

fn dag_canvas(
    ui: &mut egui::Ui,
    v: &PbpView,
    size: Vec2,
    separator: Option<usize>,
    commands: &mut Vec<UiCommand>,
) {
    let (response, painter) = ui.allocate_painter(size, Sense::click());
    let rect = response.rect;
    painter.rect_stroke(
        rect,
        4.0,
        Stroke::new(1.0, Color32::from_gray(200)),
        egui::StrokeKind::Inside,
    );
    painter.text(
        rect.left_top() + Vec2::new(6.0, 4.0),
        Align2::LEFT_TOP,
        "DAG  (click: evidence, right-click: query)",
        FontId::proportional(12.0),
        ui.visuals().weak_text_color(),
    );
    let pos = dag_layout(v, rect.shrink2(Vec2::new(10.0, 18.0)));
    let radius = 15.0;
    let stroke = Stroke::new(1.5, ui.visuals().text_color());
    for &(a, b) in &v.edges {
        let dir = (pos[b] - pos[a]).normalized();
        let (from, to) = (pos[a] + dir * radius, pos[b] - dir * radius);
        painter.arrow(from, to - from, stroke);
    }
    let groups = separator
        .and_then(|c| v.cliques.get(c))
        .and_then(|c| c.groups.clone());
    for (i, node) in v.nodes.iter().enumerate() {
        let fill = if node.observed {
            OBSERVED_FILL
        } else {
            Color32::WHITE
        };
        painter.circle(pos[i], radius, fill, stroke);
        if let Some(g) = &groups {
            for (set, color) in [(&g.alpha, ALPHA_COLOR), (&g.beta, BETA_COLOR)] {
                if set.contains(&i) {
                    painter.circle_stroke(pos[i], radius + 4.0, Stroke::new(3.0, color));
                }
            }
        }
        if v.query == i {
            painter.circle_stroke(pos[i], radius + 2.0, Stroke::new(2.0, Color32::RED));
        }
        let label = match v.evidence.get(i).copied().flatten() {
            Some(x) => format!("{}={x}", node.name),
            None => node.name.clone(),
        };
        painter.text(
            pos[i],
            Align2::CENTER_CENTER,
            label,
            FontId::proportional(12.0),
            Color32::BLACK,
        );
    }
    let Some(p) = response.interact_pointer_pos() else {
        return;
    };
    let hit =
        (0..v.nodes.len()).find(|&i| v.nodes[i].observed && pos[i].distance(p) <= radius + 2.0);
    let Some(i) = hit else {
        return;
    };
    if response.clicked() {
        let card = v.nodes[i].cardinality;
        let next = match v.evidence[i] {
            None => Some(0),
            Some(x) if x + 1 < card => Some(x + 1),
            Some(_) => None,
        };
        set_evidence(commands, i, next);
    } else if response.secondary_clicked() && v.query != i {
        commands.push(UiCommand::Control(ScenarioControl::Pbp(
            PbpControl::SetQuery(i),
        )));
    }
}

/// Clique positions: leaves spread in depth-first order, parents above their children's mean.
fn tree_layout(v: &PbpView, rect: Rect) -> Vec<Pos2> {
    let n = v.cliques.len();
    let mut children = vec![Vec::new(); n];
    for (c, cl) in v.cliques.iter().enumerate() {
        if let Some(p) = cl.parent {
            children[p].push(c);
        }
    }
    let mut depth = vec![0usize; n];
    let mut x = vec![0.0f32; n];
    let mut next_leaf = 0.0f32;
    fn place(
        c: usize,
        d: usize,
        children: &[Vec<usize>],
        depth: &mut [usize],
        x: &mut [f32],
        next_leaf: &mut f32,
    ) {
        depth[c] = d;
        if children[c].is_empty() {
            x[c] = *next_leaf;
            *next_leaf += 1.0;
            return;
        }
        for &k in &children[c] {
            place(k, d + 1, children, depth, x, next_leaf);
        }
        x[c] = children[c].iter().map(|&k| x[k]).sum::<f32>() / children[c].len() as f32;
    }
    if n > 0 {
        place(v.root, 0, &children, &mut depth, &mut x, &mut next_leaf);
    }
    let layers = depth.iter().max().map_or(1, |d| d + 1) as f32;
    let leaves = next_leaf.max(1.0);
    (0..n)
        .map(|c| {
            Pos2::new(
                rect.left() + rect.width() * (x[c] + 0.5) / leaves,
                rect.top() + rect.height() * (depth[c] as f32 + 0.5) / layers,
            )
        })
        .collect()
}

fn names(v: &PbpView, vars: &[usize]) -> String {
    vars.iter()
        .map(|&i| v.nodes[i].name.as_str())
        .collect::<Vec<_>>()
        .join(",")
}

/// Draws the junction tree; returns the separator under the pointer (clicked or hovered).
fn tree_canvas(
    ui: &mut egui::Ui,
    v: &PbpView,
    size: Vec2,
    separator: &mut Option<usize>,
) -> Option<usize> {
    let (response, painter) = ui.allocate_painter(size, Sense::click());
    let rect = response.rect;
    painter.rect_stroke(
        rect,
        4.0,
        Stroke::new(1.0, Color32::from_gray(200)),
        egui::StrokeKind::Inside,
    );
    painter.text(
        rect.left_top() + Vec2::new(6.0, 4.0),
        Align2::LEFT_TOP,
        "latent junction tree  (hover a separator)",
        FontId::proportional(12.0),
        ui.visuals().weak_text_color(),
    );
    if v.cliques.is_empty() {
        painter.text(
            rect.center(),
            Align2::CENTER_CENTER,
            "learning…",
            FontId::proportional(14.0),
            Color32::GRAY,
        );
        return None;
    }
    let pos = tree_layout(v, rect.shrink2(Vec2::new(24.0, 22.0)));
    let pointer = response.hover_pos();
    let mut hovered = None;
    for (c, cl) in v.cliques.iter().enumerate() {
        if let Some(p) = cl.parent {
            let mid = pos[c].lerp(pos[p], 0.5);
            if pointer.is_some_and(|q| q.distance(mid) < 12.0) {
                hovered = Some(c);
            }
        }
    }
    let shown = hovered.or(*separator);
    let inside: Vec<bool> = (0..v.cliques.len())
        .map(|c| {
            let Some(s) = shown else { return false };
            let mut at = Some(c);
            while let Some(a) = at {
                if a == s {
                    return true;
                }
                at = v.cliques[a].parent;
            }
            false
        })
        .collect();
    let stroke = Stroke::new(1.5, ui.visuals().text_color());
    for (c, cl) in v.cliques.iter().enumerate() {
        if let Some(p) = cl.parent {
            painter.line_segment([pos[c], pos[p]], stroke);
        }
    }
    for (c, cl) in v.cliques.iter().enumerate() {
        let text = names(v, &cl.vars);
        let w = 12.0 + 9.0 * text.len() as f32;
        let r = Rect::from_center_size(pos[c], Vec2::new(w, 22.0));
        let fill = if inside[c] {
            IN_FILL
        } else if c == v.root {
            Color32::from_rgb(255, 205, 215)
        } else {
            Color32::from_rgb(250, 225, 235)
        };
        painter.rect_filled(r, 3.0, fill);
        painter.rect_stroke(r, 3.0, stroke, egui::StrokeKind::Inside);
        painter.text(
            pos[c],
            Align2::CENTER_CENTER,
            text,
            FontId::proportional(12.0),
            Color32::BLACK,
        );
    }
    for (c, cl) in v.cliques.iter().enumerate() {
        let Some(p) = cl.parent else { continue };
        let mid = pos[c].lerp(pos[p], 0.5);
        let weak = cl.groups.as_ref().is_some_and(|g| g.weak) && !cl.leaf;
        let fill = if shown == Some(c) {
            Color32::from_rgb(255, 200, 60)
        } else if weak {
            Color32::from_rgb(240, 120, 120)
        } else {
            Color32::from_rgb(255, 240, 150)
        };
        let r = Rect::from_center_size(mid, Vec2::splat(16.0));
        painter.rect_filled(r, 1.0, fill);
        painter.rect_stroke(
            r,
            1.0,
            Stroke::new(1.0, Color32::DARK_GRAY),
            egui::StrokeKind::Inside,
        );
        painter.text(
            mid,
            Align2::CENTER_CENTER,
            names(v, &cl.separator),
            FontId::proportional(10.0),
            Color32::BLACK,
        );
    }
    if let Some(c) = hovered {
        let cl = &v.cliques[c];
        let mut text = format!(
            "separator {{{}}}\nIn(S): {}\nOut(S): {}",
            names(v, &cl.separator),
            names(v, &cl.inside),
            names(v, &cl.outside)
        );
        if let Some(g) = &cl.groups {
            text += &format!("\nα(S): {}", names(v, &g.alpha));
            if !cl.leaf {
                text += &format!(
                    "\nβ(S): {}\nk_S = {}, σ_k/σ_1 of Ĉθη = {:.3}{}",
                    names(v, &g.beta),
                    g.k,
                    g.rank_ratio,
                    if g.weak { "  (weak instrument)" } else { "" }
                );
            }
        }
        response.on_hover_text_at_pointer(text);
    } else if response.clicked() {
        return None;
    }
    hovered
}

fn query_chart(ui: &mut egui::Ui, v: &PbpView) {
    let Some(q) = v.nodes.get(v.query) else {
        return;
    };
    let evidence: Vec<String> = v
        .evidence
        .iter()
        .enumerate()
        .filter_map(|(i, e)| {
            e.filter(|_| i != v.query)
                .map(|x| format!("{}={x}", v.nodes[i].name))
        })
        .collect();
    let given = if evidence.is_empty() {
        "no evidence".to_string()
    } else {
        evidence.join(", ")
    };
    ui.label(RichText::new(format!("P({} | {given})", q.name)).strong());
    let k = v.answers.len().max(1) as f64;
    let width = 0.8 / k;
    let plot_height = (ui.available_height() - 130.0).clamp(120.0, 260.0);
    ticks::plot("pbp_query", Scale::Integer, Scale::Real)
        .height(plot_height)
        .legend(Legend::default())
        .include_y(0.0)
        .include_y(1.0)
        .allow_scroll(false)
        .allow_drag(false)
        .x_axis_label(format!("value of {}", q.name))
        .y_axis_label("probability")
        .show(ui, |plot| {
            for (j, a) in v.answers.iter().enumerate() {
                let offset = (j as f64 - (k - 1.0) / 2.0) * width;
                let bars = a
                    .dist
                    .iter()
                    .enumerate()
                    .map(|(x, &p)| Bar::new(x as f64 + offset, p).width(width * 0.95))
                    .collect();
                plot.bar_chart(BarChart::new(a.name, bars).color(method_color(a.name)));
            }
        });
    egui::Grid::new("pbp_answers")
        .num_columns(4)
        .striped(true)
        .spacing([14.0, 3.0])
        .show(ui, |ui| {
            ui.label(RichText::new("method").strong());
            ui.label(RichText::new(format!("P({} | e)", q.name)).strong());
            ui.label(RichText::new("KL(exact ‖ ·)").strong());
            ui.label(RichText::new("P̂(e)").strong());
            ui.end_row();
            for a in &v.answers {
                ui.label(RichText::new(a.name).color(method_color(a.name)));
                let dist: Vec<String> = a.dist.iter().map(|p| format!("{p:.4}")).collect();
                ui.label(dist.join("  "));
                ui.label(format!("{:.2e}", a.kl));
                let clip = if a.clipped > 0 {
                    format!("  ({} clipped)", a.clipped)
                } else {
                    String::new()
                };
                ui.label(format!("{:.5}{clip}", a.p_evidence));
                ui.end_row();
            }
        });
}
