//! The tree inspector: the selected node's panel (evidence switch and slider, kernel read-out),
//! its belief against Gaussian BP and the reference, and the selected message.

use eframe::egui::{self, Color32, RichText};
use egui_plot::{Bar, BarChart, Legend, Line, LineStyle, PlotPoints, Points, VLine};

use super::view::*;
use crate::app::commands::UiCommand;
use crate::app::views::curves::{Series, metrics_plot_over};
use crate::app::views::ticks::{self, Scale};
use crate::runner::Snapshot;
use crate::scenarios::tree::{TreeControl, TreeView};
use crate::scenarios::{Probe, ScenarioControl};

/// The selected node: evidence switch and sliders, root button, and its belief plot.
pub(super) fn node_panel(
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
pub(super) fn belief_plot(ui: &mut egui::Ui, view: &TreeView, i: usize, height: f32) {
    let n = &view.nodes[i];
    // 1-D: the density over the node's variable; more: the candidates' first two coordinates.
    let (x_label, y_label) = if n.dim == 1 {
        (
            n.name.clone(),
            "density (normalised on the grid)".to_string(),
        )
    } else {
        (
            n.columns.first().cloned().unwrap_or_default(),
            n.columns.get(1).cloned().unwrap_or_default(),
        )
    };
    let mut plot = ticks::plot(("tree_belief", i), Scale::Real, Scale::Real)
        .x_axis_label(x_label)
        .y_axis_label(y_label)
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
        plot = plot.include_x(lo - pad).include_x(hi + pad).include_y(0.0);
    } else {
        plot = plot.data_aspect(1.0);
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

/// The message inspector: β over the receiver's samples as stems (negative in red) and the
/// message as a function on the receiver's grid.
pub(super) fn message_inspector(ui: &mut egui::Ui, view: &TreeView, height: f32) {
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
    ticks::plot(("tree_message", m.id), Scale::Real, Scale::Real)
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
        ticks::plot(("tree_message_curve", m.id), Scale::Real, Scale::Real)
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
    // One step computes one message (the schedule's next), so the axis counts message steps.
    metrics_plot_over(
        ui,
        "message step",
        "tree_curves",
        if has_reference {
            "L1 distance"
        } else {
            "messages computed"
        },
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
        if n.observed.is_none() {
            ui.label(format!(
                "belief rests on {:.0} effective samples of {}",
                n.effective_samples, n.belief_samples
            ))
            .on_hover_text(
                "Kish's effective sample size (Σw)²/Σw² of the belief weights clipped at 0. \
                 A sharp posterior keeps few samples; below about 100 its shape is limited \
                 by them whatever the bandwidth: raise samples per edge.",
            );
        }
    }
    for w in &view.warnings {
        ui.colored_label(OBSERVED_COLOR, format!("⚠ {w}"));
    }
}
