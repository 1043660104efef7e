//! The teaching room: a small graph with one message at a time, the message
//! discrete (bars), Gaussian (a curve with its mean and precision) or SOSMP's series (the
//! function and its coefficients). The canvas ([`canvas`]) shows the message travelling along
//! its edge and the schedule's next ones; the inspector ([`plots`]) shows the message's content
//! before and after and the receiving node's belief before and after beside the reference. → (Step) sends one message, Space plays
//! at the speed slider's rate (the worker paces itself, [`crate::scenarios::Scenario::play_interval`]),
//! R resets. The room names its iterations "message" (`ScenarioUi::iteration_noun`), so the
//! status bar counts messages.

mod canvas;
mod plots;

use eframe::egui::{self, Color32, RichText};
use strum::VariantArray;

use super::{Opened, RoomContext, ScenarioUi};
use crate::app::colors;
use crate::app::commands::UiCommand;
use crate::app::form;
use crate::inference::Schedule;
use crate::runner::Snapshot;
use crate::scenarios::teach::{
    DEFAULT_SPEED, MessageKind, PARAMS, SPEED_RANGE, TeachConfig, TeachControl, TeachGraph,
    TeachView,
};
use crate::scenarios::{Registered, ScenarioConfig, ScenarioControl};
use crate::viz::palette::{self, Method};

/// The message sent and the BP beliefs: discrete BP's colour.
const SENT: Color32 = colors::method(Method::DiscreteBp);
const BELIEF: Color32 = colors::method(Method::DiscreteBp);
/// The exact marginals (or grid BP, the series messages' reference).
const EXACT: Color32 = colors::method(Method::Exact);
/// SOSMP's approximation floor a_∞.
const FLOOR: Color32 = colors::rgb(palette::SERIES[2]);
/// Before the message (the old message, the old belief).
const BEFORE: Color32 = colors::rgb(palette::SERIES[0]);
/// The schedule's next messages.
const NEXT: Color32 = colors::rgb(palette::FIXED_POINT);

pub const EXPLANATION: &str = "Teaching mode: sum-product belief propagation on a small graph, one message at a time. Each variable has a few labels; the model is a node potential per variable and a table per edge (Potts: neighbours like equal labels when the coupling is positive). The predictive-BP stand-in is our Bayes net for the synthetic model of Wang & Gordon 2020, Fig. 4 (loop-free form) with its observed variables D..H clamped to a sample.\n\n\
A message t → s is a distribution over s's labels: m_ts(x_s) ∝ Σ_{x_t} ψ(x_t, x_s) φ_t(x_t) Π_{u ≠ s} m_ut(x_t) (Yedidia, Freeman, Weiss 2003, eq. 4), mixed with the old message by the damping. A node's belief is its potential times all its incoming messages.\n\n\
Canvas: the blue arrow is the message just sent, its content (bars) travelling to the receiving node (blue ring); the yellow numbered arrows are the schedule's next messages, 1 the very next (its sender has a yellow ring). Under each node, its belief (blue bars) and the exact marginal by enumeration (grey ticks). Right: the message before and after, the receiving node's belief before, after and exact, and the belief error and residual per message.\n\n\
Schedules: sweep sends leaves to root, then root to leaves (on a chain or tree the beliefs are exact after one round); synchronous computes a whole round from the old messages; random uses a fresh order per round; residual BP always sends the message that would change most. On the loopy 3 x 3 grid BP is approximate: the belief error stops above zero.\n\n\
Messages: discrete messages are bars over labels. Gaussian messages (Gaussian BP, Weiss & Freeman 2001) are exp(−J x²/2 + h x), shown as a curve with their mean h/J and precision J; the model has Gaussian node factors N(μ_t, 1) and edge factors exp(−|c|(x_s − sgn(c) x_t)²/2), so BP converges on every graph with exact means, and on trees exact variances (the reference is the joint's covariance). Series messages are SOSMP's (Noorshams & Wainwright 2013): r Fourier coefficients on [−5, 5]; an update draws k samples from the sender's potential times its other incoming messages (clipped at 0), averages the γ coefficients of the samples and steps a ← (1 − η) a + η b with η = 1/(t + 1), t the message's earlier updates. The model is the paper's eq. 37 (mixtures of three bumps per node and edge); the reference is grid BP on the quadrature grid (grey), and SOSMP's floor a_∞ (green) is where the noise averages out with r coefficients. The paper's schedule is synchronous; sweep and random send the same stochastic updates in another order.\n\n\
Keys: → sends one message, Space plays at the speed slider's rate, R starts again.";

/// The room's state: the speed it asked for and the message being animated.
pub struct TeachRoom {
    speed: f64,
    /// The speed last sent to the worker and when (seconds of egui time).
    speed_sent: Option<(f64, f64)>,
    /// The message count being animated and when it arrived.
    animation: Option<(usize, f64)>,
}

impl Default for TeachRoom {
    fn default() -> Self {
        TeachRoom {
            speed: DEFAULT_SPEED,
            speed_sent: None,
            animation: None,
        }
    }
}

impl TeachRoom {
    /// How far the last message has travelled (0..1), asking for frames while it moves.
    fn progress(&mut self, ctx: &egui::Context, v: &TeachView) -> f32 {
        let now = ctx.input(|i| i.time);
        match self.animation {
            Some((sent, _)) if sent == v.sent => {}
            _ => self.animation = Some((v.sent, now)),
        }
        if v.sent == 0 {
            return 1.0;
        }
        let start = self.animation.map_or(now, |a| a.1);
        let duration = (0.8 / v.speed).clamp(0.1, 1.2);
        let t = ((now - start) / duration) as f32;
        if t < 1.0 {
            ctx.request_repaint();
        }
        t.min(1.0)
    }

    /// Sends the slider's speed when the worker runs another (a new run starts at the default).
    fn sync_speed(&mut self, ctx: &egui::Context, v: &TeachView, cx: &mut RoomContext<'_>) {
        let now = ctx.input(|i| i.time);
        let stale = self
            .speed_sent
            .is_none_or(|(s, at)| s != self.speed || now - at > 1.0);
        if (v.speed - self.speed).abs() > 1e-9 && stale {
            cx.commands.push(UiCommand::Control(ScenarioControl::Teach(
                TeachControl::Speed(self.speed),
            )));
            self.speed_sent = Some((self.speed, now));
        }
    }
}

impl ScenarioUi for TeachRoom {
    fn name(&self) -> &'static str {
        "teach"
    }

    fn explanation(&self) -> &'static str {
        EXPLANATION
    }

    fn params(&mut self, ui: &mut egui::Ui, config: &mut ScenarioConfig, _: &mut RoomContext<'_>) {
        let Some(c) = TeachConfig::of_mut(config) else {
            return;
        };
        form::section(ui, "Teach: one message at a time");
        egui::Grid::new("teach_params")
            .num_columns(2)
            .show(ui, |ui| {
                let id = form::param_label(ui, PARAMS, "graph");
                egui::ComboBox::from_id_salt("teach_graph")
                    .selected_text(c.graph.label())
                    .show_ui(ui, |ui| {
                        for &g in TeachGraph::VARIANTS {
                            ui.selectable_value(&mut c.graph, g, g.label());
                        }
                    })
                    .response
                    .labelled_by(id);
                ui.end_row();
                let id = form::param_label(ui, PARAMS, "messages");
                let before = c.messages;
                egui::ComboBox::from_id_salt("teach_messages")
                    .selected_text(c.messages.label())
                    .show_ui(ui, |ui| {
                        for &k in MessageKind::VARIANTS {
                            ui.selectable_value(&mut c.messages, k, k.label());
                        }
                    })
                    .response
                    .labelled_by(id);
                if c.messages != before && c.messages == MessageKind::Series {
                    // SOSMP's step size is its damping, and it has no residual schedule.
                    c.damping = 0.0;
                    if c.schedule == Schedule::Residual {
                        c.schedule = Schedule::Sweep;
                    }
                }
                ui.end_row();
                let id = form::param_label(ui, PARAMS, "schedule");
                let series = c.messages == MessageKind::Series;
                egui::ComboBox::from_id_salt("teach_schedule")
                    .selected_text(c.schedule.label())
                    .show_ui(ui, |ui| {
                        for &s in Schedule::VARIANTS {
                            if !(series && s == Schedule::Residual) {
                                ui.selectable_value(&mut c.schedule, s, s.label());
                            }
                        }
                    })
                    .response
                    .labelled_by(id);
                ui.end_row();
                if !series {
                    form::param_row(ui, c, PARAMS, "damping");
                    ui.end_row();
                }
                if c.messages == MessageKind::Discrete && c.graph != TeachGraph::Pbp {
                    form::param_row(ui, c, PARAMS, "states");
                    ui.end_row();
                }
                if c.messages == MessageKind::Gaussian
                    || (c.messages == MessageKind::Discrete && c.graph != TeachGraph::Pbp)
                {
                    form::param_row(ui, c, PARAMS, "coupling");
                    ui.end_row();
                    form::param_row(ui, c, PARAMS, "field");
                    ui.end_row();
                }
                if series {
                    form::param_row(ui, c, PARAMS, "samples");
                    ui.end_row();
                    form::param_row(ui, c, PARAMS, "coefficients");
                    ui.end_row();
                }
                form::param_row(ui, c, PARAMS, "max_messages");
                ui.end_row();
                let id = form::row_label(
                    ui,
                    "Speed (messages/s)",
                    "How many messages Play sends per second (→ sends one at a time)",
                );
                let (lo, hi) = SPEED_RANGE;
                ui.add(egui::Slider::new(&mut self.speed, lo..=hi).logarithmic(true))
                    .labelled_by(id);
                ui.end_row();
            });
        ui.add_space(4.0);
        ui.label("→ one message · Space play / pause · R reset");
    }

    fn central(&mut self, ui: &mut egui::Ui, snapshot: &Snapshot, cx: &mut RoomContext<'_>) {
        let Some(v) = TeachView::of(&snapshot.view) else {
            return;
        };
        self.sync_speed(ui.ctx(), v, cx);
        let progress = self.progress(ui.ctx(), v);
        ui.label(RichText::new(caption(v)).strong());
        ui.horizontal_wrapped(|ui| {
            ui.label("Next:")
                .on_hover_text(format!("The next messages, found from {}", v.upcoming_note));
            for (k, &(_, from, to)) in v.upcoming.iter().enumerate() {
                let text = format!("{}. {} → {}", k + 1, v.names[from], v.names[to]);
                let text = if k == 0 {
                    RichText::new(text).strong().color(NEXT)
                } else {
                    RichText::new(text)
                };
                ui.label(text);
            }
        });
        let height = (ui.available_height() - 90.0).max(200.0);
        canvas::draw(ui, v, progress, height);
        ui.label(&v.description);
        ui.label(status_line(v));
    }

    fn inspector(&mut self, ui: &mut egui::Ui, snapshot: &Snapshot, cx: &mut RoomContext<'_>) {
        let Some(v) = TeachView::of(&snapshot.view) else {
            return;
        };
        plots::inspector(ui, v, &snapshot.history, cx.heights);
    }

    fn iteration_noun(&self) -> &'static str {
        "message"
    }

    fn status(&self, snapshot: &Snapshot) -> Vec<String> {
        TeachView::of(&snapshot.view)
            .map(|v| {
                vec![
                    format!("round {}", v.round),
                    format!("belief error {:.2e}", v.max_error),
                ]
            })
            .unwrap_or_default()
    }

    fn open_paths(&mut self, _: &ScenarioConfig, _: &[std::path::PathBuf]) -> Opened {
        Opened::Refused("teaching mode builds its own small models; it opens no files".into())
    }
}

/// "Message 3: x5 → x4 (round 1 of the sweep)".
fn caption(v: &TeachView) -> String {
    match &v.last {
        None => format!(
            "No message sent yet ({} schedule, {} messages per round): press → to send the first",
            v.schedule.label(),
            v.round_length
        ),
        Some(m) => format!(
            "Message {}: {} → {} (round {}, {} schedule{}), change {:.3}",
            v.sent,
            v.names[m.from],
            v.names[m.to],
            m.round,
            v.schedule.label(),
            if v.damping > 0.0 {
                format!(", damping {}", v.damping)
            } else {
                String::new()
            },
            m.change
        ),
    }
}

fn status_line(v: &TeachView) -> String {
    let reference = match (v.kind, v.graph.is_tree()) {
        (MessageKind::Series, _) => {
            "SOSMP approaches its floor a∞ like 1/t; the floor differs from grid BP by what r coefficients cannot hold"
        }
        (MessageKind::Gaussian, true) => "Gaussian BP is exact here at its fixed point",
        (MessageKind::Gaussian, false) => {
            "loopy: Gaussian BP's means are exact at its fixed point, its variances are not"
        }
        (MessageKind::Discrete, true) => "BP is exact here at its fixed point",
        (MessageKind::Discrete, false) => {
            "loopy: BP's fixed point is near, not equal to, the exact marginals"
        }
    };
    let state = if v.converged {
        "fixed point reached".to_string()
    } else {
        format!("fixed-point residual {:.2e}", v.fixed_point_residual)
    };
    if v.kind.is_continuous() {
        format!(
            "Largest ∫|belief − reference| {:.2e} · largest |mean − reference mean| {:.2e} · {state} · {reference} (reference: {})",
            v.max_error, v.mean_error, v.reference
        )
    } else {
        format!(
            "Largest |belief − exact| {:.2e} · {state} · {reference}",
            v.max_error
        )
    }
}
