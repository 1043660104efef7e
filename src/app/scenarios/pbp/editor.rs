//! The DAG editor of the pbp room (the graph beside its junction tree, as Wang & Gordon 2020,
//! Figs. 2–3): add nodes, toggle
//! observed / latent, set cardinalities, draw edges (click one node, then another; or type
//! "A -> B"), refuse a cycle or any other invalid graph with the checker's message, and beside
//! it the latent junction tree derived from the draft (moralise, min-fill, maximal cliques,
//! maximum-weight tree; `model::latent_junction_tree`). Saves and loads the JSON model file that
//! `beliefscope run pbp --model FILE` reads, and can learn the draft at once.

use std::path::Path;

use eframe::egui::{self, Align2, Color32, FontId, Pos2, Rect, RichText, Sense, Stroke, Vec2};

use crate::app::commands::UiCommand;
use crate::io::write_atomic;
use crate::model::latent_dag::{DagNode, LatentDag, ModelFile};
use crate::model::latent_junction_tree::LatentJunctionTree;
use crate::scenarios::pbp::{MAX_MODEL_FILE_BYTES, PbpConfig};
use crate::scenarios::{Registered, ScenarioConfig};

/// The editor's draft: nodes, edges and where the nodes sit (unit square).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct DraftModel {
    pub nodes: Vec<DagNode>,
    pub edges: Vec<(usize, usize)>,
    pub positions: Vec<Pos2>,
}

impl DraftModel {
    pub fn from_dag(nodes: &[DagNode], edges: &[(usize, usize)]) -> DraftModel {
        let n = nodes.len().max(1);
        DraftModel {
            nodes: nodes.to_vec(),
            edges: edges.to_vec(),
            positions: (0..nodes.len())
                .map(|i| {
                    let a = std::f32::consts::TAU * i as f32 / n as f32;
                    Pos2::new(0.5 + 0.38 * a.cos(), 0.5 + 0.38 * a.sin())
                })
                .collect(),
        }
    }

    pub fn from_file(file: &ModelFile) -> Result<DraftModel, String> {
        let dag = file.dag().map_err(|e| e.to_string())?;
        Ok(DraftModel::from_dag(dag.nodes(), dag.edges()))
    }

    /// A new latent node with 2 states and a fresh name.
    pub fn add_node(&mut self) {
        let mut k = self.nodes.len();
        let name = loop {
            let candidate = format!("X{k}");
            if self.nodes.iter().all(|n| n.name != candidate) {
                break candidate;
            }
            k += 1;
        };
        self.nodes.push(DagNode {
            name,
            cardinality: 2,
            observed: false,
        });
        let t = self.nodes.len() as f32 * 0.37;
        self.positions.push(Pos2::new(
            0.15 + (t.fract()) * 0.7,
            0.1 + (t * 1.7).fract() * 0.8,
        ));
    }

    pub fn remove_node(&mut self, v: usize) {
        self.nodes.remove(v);
        self.positions.remove(v);
        self.edges.retain(|&(a, b)| a != v && b != v);
        for e in &mut self.edges {
            e.0 -= usize::from(e.0 > v);
            e.1 -= usize::from(e.1 > v);
        }
    }

    /// Adds a → b if the graph stays a DAG; else the checker's message (naming the cycle).
    pub fn add_edge(&mut self, a: usize, b: usize) -> Result<(), String> {
        let mut edges = self.edges.clone();
        edges.push((a, b));
        LatentDag::new(self.nodes.clone(), edges.clone()).map_err(|e| e.to_string())?;
        self.edges = edges;
        Ok(())
    }

    /// Parses "A -> B" (or "A B") and adds the edge.
    pub fn add_edge_text(&mut self, text: &str) -> Result<(String, String), String> {
        let parts: Vec<&str> = text
            .split(|c: char| c.is_whitespace() || c == '-' || c == '>' || c == ',')
            .filter(|s| !s.is_empty())
            .collect();
        let [a, b] = parts[..] else {
            return Err(format!("write an edge as 'A -> B', not '{text}'"));
        };
        let find = |name: &str| {
            self.nodes
                .iter()
                .position(|n| n.name == name)
                .ok_or_else(|| format!("no node is called '{name}'"))
        };
        self.add_edge(find(a)?, find(b)?)?;
        Ok((a.to_string(), b.to_string()))
    }

    pub fn dag(&self) -> Result<LatentDag, String> {
        LatentDag::new(self.nodes.clone(), self.edges.clone()).map_err(|e| e.to_string())
    }

    /// The model file (structure only; CPTs are drawn per run from the seed).
    pub fn file(&self) -> Result<ModelFile, String> {
        Ok(ModelFile::from_model(&self.dag()?, None))
    }

    /// The derived latent junction tree as lines "{cliques} – sep {S} → parent", or why not.
    pub fn junction_tree(&self) -> Result<Vec<String>, String> {
        let dag = self.dag()?;
        let jt = LatentJunctionTree::build(&dag).map_err(|e| e.to_string())?;
        let names = |vs: &[usize]| {
            vs.iter()
                .map(|&v| dag.node(v).name.as_str())
                .collect::<Vec<_>>()
                .join(",")
        };
        let mut lines = Vec::new();
        for (c, clique) in jt.cliques.iter().enumerate() {
            let kind = if jt.leaf_var[c].is_some() {
                "leaf"
            } else {
                "latent"
            };
            let neighbours: Vec<String> = jt.neighbours[c]
                .iter()
                .map(|&d| format!("{{{}}}", names(&jt.cliques[d])))
                .collect();
            lines.push(format!(
                "{{{}}} ({kind}) — {}",
                names(clique),
                neighbours.join(" ")
            ));
        }
        Ok(lines)
    }
}

/// The editor window's state.
#[derive(Debug, Clone, Default)]
pub struct DagEditor {
    pub open: bool,
    pub draft: DraftModel,
    /// Where Save writes and Load reads.
    pub path: String,
    edge_text: String,
    /// The node clicked first when drawing an edge.
    edge_from: Option<usize>,
    dragging: Option<usize>,
    /// The last outcome: (text, is an error).
    pub message: Option<(String, bool)>,
}

impl DagEditor {
    /// Opens on the given model.
    pub fn open_on(&mut self, nodes: &[DagNode], edges: &[(usize, usize)], model: &str) {
        self.open = true;
        self.draft = DraftModel::from_dag(nodes, edges);
        if self.path.is_empty() {
            self.path = if model.ends_with(".json") {
                model.to_string()
            } else {
                std::env::temp_dir()
                    .join("beliefscope-model.json")
                    .display()
                    .to_string()
            };
        }
        self.message = None;
    }

    fn save(&mut self) -> bool {
        let result = self.draft.file().and_then(|file| {
            let text = serde_json::to_string_pretty(&file).map_err(|e| e.to_string())?;
            write_atomic(Path::new(&self.path), text.as_bytes()).map_err(|e| e.to_string())
        });
        match result {
            Ok(()) => {
                self.message = Some((format!("saved {}", self.path), false));
                true
            }
            Err(e) => {
                self.message = Some((format!("not saved: {e}"), true));
                false
            }
        }
    }

    fn load(&mut self) {
        let path = Path::new(&self.path);
        let result = std::fs::metadata(path)
            .map_err(|e| format!("cannot read {}: {e}", self.path))
            .and_then(|m| {
                if m.len() > MAX_MODEL_FILE_BYTES {
                    Err(format!(
                        "{} is {} bytes; at most {MAX_MODEL_FILE_BYTES} are read",
                        self.path,
                        m.len()
                    ))
                } else {
                    std::fs::read_to_string(path).map_err(|e| format!("cannot read: {e}"))
                }
            })
            .and_then(|text| ModelFile::parse(&text).map_err(|e| e.to_string()))
            .and_then(|file| DraftModel::from_file(&file));
        match result {
            Ok(draft) => {
                self.draft = draft;
                self.message = Some((format!("loaded {}", self.path), false));
            }
            Err(e) => self.message = Some((format!("not loaded: {e}"), true)),
        }
    }

    pub fn window(
        &mut self,
        ctx: &egui::Context,
        config: &ScenarioConfig,
        commands: &mut Vec<UiCommand>,
    ) {
        let mut open = self.open;
        egui::Window::new("DAG editor")
            .open(&mut open)
            .default_size([900.0, 560.0])
            .show(ctx, |ui| self.contents(ui, config, commands));
        self.open = open && self.open;
    }

    fn contents(
        &mut self,
        ui: &mut egui::Ui,
        config: &ScenarioConfig,
        commands: &mut Vec<UiCommand>,
    ) {
        ui.label(
            RichText::new(
                "Click a node, then another, to draw an edge; drag nodes to move them; \
                 right-click a node to toggle observed / latent. Observed variables must be \
                 sinks, so that each sits in a leaf clique of the junction tree.",
            )
            .small()
            .weak(),
        );
        ui.horizontal_top(|ui| {
            self.canvas(ui, Vec2::new(360.0, 320.0));
            ui.vertical(|ui| {
                ui.set_width(260.0);
                self.node_table(ui);
                self.edge_list(ui);
            });
            ui.vertical(|ui| {
                ui.label(RichText::new("Derived junction tree").strong());
                match self.draft.junction_tree() {
                    Ok(lines) => {
                        for l in lines {
                            ui.label(RichText::new(l).monospace().small());
                        }
                    }
                    Err(e) => {
                        ui.colored_label(Color32::from_rgb(200, 40, 40), e);
                    }
                }
            });
        });
        ui.separator();
        ui.horizontal(|ui| {
            let label = ui.label("model file");
            ui.add(egui::TextEdit::singleline(&mut self.path).desired_width(340.0))
                .labelled_by(label.id);
            if ui.button("Save").clicked() {
                self.save();
            }
            if ui.button("Load").clicked() {
                self.load();
            }
            if ui.button("Learn this model").clicked()
                && self.draft.junction_tree().is_ok()
                && self.save()
                && let Some(c) = PbpConfig::of(config)
            {
                let c = PbpConfig {
                    model: self.path.clone(),
                    evidence: Default::default(),
                    query: String::new(),
                    evidence_vars: Vec::new(),
                    root: String::new(),
                    ..c.clone()
                };
                commands.push(UiCommand::Apply(ScenarioConfig::Pbp(c)));
            }
        });
        if let Some((text, error)) = &self.message {
            let color = if *error {
                Color32::from_rgb(200, 40, 40)
            } else {
                Color32::from_rgb(30, 130, 60)
            };
            ui.colored_label(color, text);
        }
    }

    fn node_table(&mut self, ui: &mut egui::Ui) {
        ui.horizontal(|ui| {
            ui.label(RichText::new("Nodes").strong());
            if ui.button("Add node").clicked() {
                self.draft.add_node();
            }
        });
        let mut remove = None;
        egui::Grid::new("dag_editor_nodes")
            .num_columns(4)
            .spacing([6.0, 2.0])
            .show(ui, |ui| {
                let header = ui.label(RichText::new("name").small());
                ui.label(RichText::new("values").small());
                ui.label("");
                ui.label("");
                ui.end_row();
                for (v, n) in self.draft.nodes.iter_mut().enumerate() {
                    ui.add(egui::TextEdit::singleline(&mut n.name).desired_width(50.0))
                        .labelled_by(header.id);
                    ui.add(
                        egui::DragValue::new(&mut n.cardinality)
                            .range(2..=64)
                            .suffix(" values"),
                    );
                    ui.checkbox(&mut n.observed, "observed");
                    if ui.small_button("×").on_hover_text("remove").clicked() {
                        remove = Some(v);
                    }
                    ui.end_row();
                }
            });
        if let Some(v) = remove {
            self.draft.remove_node(v);
            self.edge_from = None;
        }
    }

    fn edge_list(&mut self, ui: &mut egui::Ui) {
        ui.label(RichText::new("Edges").strong());
        ui.horizontal(|ui| {
            let label = ui.label("new edge");
            let response = ui
                .add(
                    egui::TextEdit::singleline(&mut self.edge_text)
                        .hint_text("A -> B")
                        .desired_width(90.0),
                )
                .labelled_by(label.id);
            let enter = response.lost_focus() && ui.input(|i| i.key_pressed(egui::Key::Enter));
            if ui.button("Add edge").clicked() || enter {
                self.message = Some(match self.draft.add_edge_text(&self.edge_text) {
                    Ok((a, b)) => {
                        self.edge_text.clear();
                        (format!("added {a} → {b}"), false)
                    }
                    Err(e) => (format!("edge refused: {e}"), true),
                });
            }
        });
        let mut remove = None;
        ui.horizontal_wrapped(|ui| {
            for (k, &(a, b)) in self.draft.edges.iter().enumerate() {
                let label = format!(
                    "{} → {} ×",
                    self.draft.nodes[a].name, self.draft.nodes[b].name
                );
                if ui
                    .small_button(label)
                    .on_hover_text("remove this edge")
                    .clicked()
                {
                    remove = Some(k);
                }
            }
        });
        if let Some(k) = remove {
            self.draft.edges.remove(k);
        }
    }

    fn canvas(&mut self, ui: &mut egui::Ui, size: Vec2) {
        let (rect, response) = ui.allocate_exact_size(size, Sense::click_and_drag());
        let painter = ui.painter_at(rect);
        painter.rect_filled(rect, 4.0, ui.visuals().extreme_bg_color);
        let inner = rect.shrink(22.0);
        let to_screen = |p: Pos2| inner.min + Vec2::new(p.x * inner.width(), p.y * inner.height());
        let screen: Vec<Pos2> = self.draft.positions.iter().map(|&p| to_screen(p)).collect();
        let radius = 16.0;
        let hit = |pos: Pos2| screen.iter().position(|s| s.distance(pos) <= radius);
        for &(a, b) in &self.draft.edges {
            arrow(
                &painter,
                screen[a],
                screen[b],
                radius,
                ui.visuals().text_color(),
            );
        }
        for (v, n) in self.draft.nodes.iter().enumerate() {
            let fill = if n.observed {
                Color32::from_rgb(170, 200, 245)
            } else {
                Color32::WHITE
            };
            let stroke = if self.edge_from == Some(v) {
                Stroke::new(3.0, Color32::from_rgb(230, 120, 20))
            } else {
                Stroke::new(1.5, Color32::DARK_GRAY)
            };
            painter.circle(screen[v], radius, fill, stroke);
            painter.text(
                screen[v],
                Align2::CENTER_CENTER,
                &n.name,
                FontId::proportional(13.0),
                Color32::BLACK,
            );
            painter.text(
                screen[v] + Vec2::new(0.0, radius + 2.0),
                Align2::CENTER_TOP,
                format!("{}", n.cardinality),
                FontId::proportional(10.0),
                Color32::GRAY,
            );
        }
        let pointer = response.interact_pointer_pos();
        if response.drag_started()
            && let Some(p) = pointer
        {
            self.dragging = hit(p);
        }
        if response.dragged()
            && let (Some(v), Some(p)) = (self.dragging, pointer)
        {
            let q = Rect::from_min_size(Pos2::ZERO, Vec2::splat(1.0)).clamp(Pos2::new(
                (p.x - inner.min.x) / inner.width(),
                (p.y - inner.min.y) / inner.height(),
            ));
            self.draft.positions[v] = q;
        }
        if response.drag_stopped() {
            self.dragging = None;
        }
        if response.secondary_clicked()
            && let Some(v) = pointer.and_then(hit)
        {
            self.draft.nodes[v].observed = !self.draft.nodes[v].observed;
        }
        if response.clicked() {
            match (self.edge_from, pointer.and_then(hit)) {
                (None, Some(v)) => self.edge_from = Some(v),
                (Some(a), Some(b)) if a != b => {
                    let (na, nb) = (
                        self.draft.nodes[a].name.clone(),
                        self.draft.nodes[b].name.clone(),
                    );
                    self.message = Some(match self.draft.add_edge(a, b) {
                        Ok(()) => (format!("added {na} → {nb}"), false),
                        Err(e) => (format!("edge refused: {e}"), true),
                    });
                    self.edge_from = None;
                }
                _ => self.edge_from = None,
            }
        }
    }
}

fn arrow(painter: &egui::Painter, from: Pos2, to: Pos2, radius: f32, color: Color32) {
    let dir = (to - from).normalized();
    let (a, b) = (from + dir * radius, to - dir * radius);
    painter.line_segment([a, b], Stroke::new(1.5, color));
    let side = Vec2::new(-dir.y, dir.x) * 4.5;
    painter.line_segment([b, b - dir * 9.0 + side], Stroke::new(1.5, color));
    painter.line_segment([b, b - dir * 9.0 - side], Stroke::new(1.5, color));
}
