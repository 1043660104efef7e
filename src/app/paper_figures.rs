//! Help > Paper figures: one entry per reproducible figure or table of the five papers
//! (`scenarios::paper_figures`). One click runs the entry's commands on a thread of their own,
//! with a progress bar and Cancel; the result is a table of our numbers beside the paper's, with
//! the command lines that reproduce it headless into the same folder.

use std::path::PathBuf;
use std::sync::mpsc::{Receiver, channel};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use eframe::egui::{self, Color32, RichText};

use crate::scenarios::CancelFlag;
use crate::scenarios::paper_figures::{FIGURES, FigureRun, PaperFigure, run_figure};

/// A figure running on its own thread.
struct Job {
    id: &'static str,
    cancel: CancelFlag,
    /// Fraction done and the command running.
    progress: Arc<Mutex<(f64, String)>>,
    done: Receiver<Result<FigureRun, String>>,
    started: Instant,
}

/// The Paper figures window.
pub struct PaperFigures {
    pub open: bool,
    selected: &'static str,
    job: Option<Job>,
    /// The last outcome of each figure run in this session.
    outcomes: Vec<(&'static str, Result<FigureRun, String>)>,
    /// Each figure writes into `<out_root>/<id>`.
    out_root: PathBuf,
    /// Asked for by [`Self::run`], started at the next frame.
    pending: Option<&'static PaperFigure>,
}

impl Default for PaperFigures {
    fn default() -> Self {
        let root = std::env::current_dir()
            .unwrap_or_else(|_| std::env::temp_dir())
            .join("paper-figures");
        PaperFigures {
            open: false,
            selected: FIGURES.first().map_or("", |f| f.id),
            job: None,
            outcomes: Vec::new(),
            out_root: root,
            pending: None,
        }
    }
}

impl PaperFigures {
    /// Where the figures write their outputs (a folder per figure inside).
    pub fn set_output_folder(&mut self, root: PathBuf) {
        self.out_root = root;
    }

    /// Opens the window on figure `id` and runs it (as its Run button does); false if there is
    /// no such figure.
    pub fn run(&mut self, id: &str) -> bool {
        let Some(figure) = FIGURES.iter().find(|f| f.id == id) else {
            return false;
        };
        self.open = true;
        self.selected = figure.id;
        self.pending = Some(figure);
        true
    }

    /// Whether a figure is running.
    pub fn running(&self) -> bool {
        self.job.is_some()
    }

    /// The finished run of figure `id`, if any.
    pub fn outcome(&self, id: &str) -> Option<&Result<FigureRun, String>> {
        self.outcomes.iter().find(|(i, _)| *i == id).map(|(_, r)| r)
    }

    fn start(&mut self, figure: &'static PaperFigure, ctx: &egui::Context) {
        if self.job.is_some() {
            return;
        }
        let cancel = CancelFlag::default();
        let progress = Arc::new(Mutex::new((0.0, String::new())));
        let (tx, rx) = channel();
        let out = self.out_root.join(figure.id);
        let (c, p, repaint) = (cancel.clone(), progress.clone(), ctx.clone());
        let spawned = std::thread::Builder::new()
            .name(format!("figure {}", figure.id))
            .spawn(move || {
                let report = |f: f64, line: &str| {
                    if let Ok(mut g) = p.lock() {
                        *g = (f, line.to_string());
                    }
                    repaint.request_repaint();
                };
                let result = run_figure(figure, &out, &c, &report).map_err(|e| e.to_string());
                let _ = tx.send(result);
                repaint.request_repaint();
            });
        match spawned {
            Ok(_) => {
                self.job = Some(Job {
                    id: figure.id,
                    cancel,
                    progress,
                    done: rx,
                    started: Instant::now(),
                });
            }
            Err(e) => self
                .outcomes
                .push((figure.id, Err(format!("cannot start a thread: {e}")))),
        }
    }

    /// Collects a finished job.
    fn poll(&mut self) {
        let Some(job) = &self.job else {
            return;
        };
        if let Ok(result) = job.done.try_recv() {
            let id = job.id;
            self.outcomes.retain(|(i, _)| *i != id);
            self.outcomes.push((id, result));
            self.job = None;
        }
    }

    /// Draws the window (when open) and collects finished runs.
    pub fn show(&mut self, ctx: &egui::Context) {
        if let Some(figure) = self.pending.take() {
            self.start(figure, ctx);
        }
        self.poll();
        if self.job.is_some() {
            ctx.request_repaint_after(Duration::from_millis(200));
        }
        let mut open = self.open;
        egui::Window::new("Paper figures")
            .open(&mut open)
            .default_size([860.0, 560.0])
            .collapsible(false)
            .show(ctx, |ui| {
                ui.horizontal_top(|ui| {
                    ui.vertical(|ui| {
                        ui.set_width(290.0);
                        egui::ScrollArea::vertical()
                            .id_salt("figure_list")
                            .max_height(520.0)
                            .show(ui, |ui| self.list(ui));
                    });
                    ui.separator();
                    ui.vertical(|ui| {
                        egui::ScrollArea::vertical()
                            .id_salt("figure_detail")
                            .max_height(520.0)
                            .show(ui, |ui| self.detail(ui, ctx));
                    });
                });
            });
        self.open = open;
    }

    fn list(&mut self, ui: &mut egui::Ui) {
        {
            let mut paper = "";
            for f in FIGURES {
                if f.paper != paper {
                    paper = f.paper;
                    ui.add_space(4.0);
                    ui.label(RichText::new(paper).strong());
                }
                let short = f.title.split(':').next().unwrap_or(f.title);
                let mark = match self.outcome(f.id) {
                    Some(Ok(_)) => " (done)",
                    Some(Err(_)) => " (failed)",
                    None if self.job.as_ref().is_some_and(|j| j.id == f.id) => " (running)",
                    None => "",
                };
                ui.selectable_value(&mut self.selected, f.id, format!("{short}{mark}"))
                    .on_hover_text(f.title);
            }
        }
    }

    fn detail(&mut self, ui: &mut egui::Ui, ctx: &egui::Context) {
        let Some(figure) = FIGURES.iter().find(|f| f.id == self.selected) else {
            return;
        };
        ui.heading(figure.title);
        ui.weak(figure.paper);
        ui.add_space(4.0);
        ui.label(RichText::new("The paper reports").strong());
        ui.add(egui::Label::new(figure.paper_says).wrap());
        ui.add_space(6.0);
        let out = self.out_root.join(figure.id);
        let lines = figure.command_lines(&out);
        ui.horizontal(|ui| {
            ui.label(RichText::new("Reproduce headless").strong());
            if ui
                .small_button("Copy")
                .on_hover_text("Copy the command lines")
                .clicked()
            {
                ctx.copy_text(lines.join("\n"));
            }
        });
        for line in &lines {
            ui.add(egui::Label::new(RichText::new(line).monospace()).wrap());
        }
        if figure.split.is_some() {
            ui.weak(format!(
                "The window runs it one {} value at a time (each value writes its own folder), \
                 so that progress shows and Cancel acts between values.",
                figure.split.unwrap_or_default()
            ));
        }
        ui.add_space(6.0);
        let running_this = self.job.as_ref().is_some_and(|j| j.id == figure.id);
        ui.horizontal(|ui| {
            if let Some(job) = &self.job {
                if ui.button("Cancel").clicked() {
                    job.cancel.cancel();
                }
                if !running_this {
                    ui.weak("another figure is running");
                }
            } else if ui
                .button(format!("Run ({})", figure.duration))
                .on_hover_text("Runs the commands above in this process, writing the same files")
                .clicked()
            {
                self.start(figure, ctx);
            }
        });
        if let Some(job) = self.job.as_ref().filter(|_| running_this) {
            let (fraction, line) = job.progress.lock().map(|g| g.clone()).unwrap_or_default();
            let elapsed = job.started.elapsed().as_secs_f64();
            ui.add(
                egui::ProgressBar::new(fraction as f32)
                    .show_percentage()
                    .animate(true),
            );
            ui.weak(format!("{elapsed:.0} s: {line}"));
        }
        match self.outcome(figure.id) {
            Some(Ok(run)) => outcome_table(ui, run),
            Some(Err(e)) => {
                ui.colored_label(ui.visuals().error_fg_color, format!("Failed: {e}"));
            }
            None => {}
        }
    }
}

fn outcome_table(ui: &mut egui::Ui, run: &FigureRun) {
    ui.add_space(6.0);
    ui.label(RichText::new(format!("Result ({:.1} s)", run.seconds)).strong());
    egui::Grid::new(("figure_outcome", run.id))
        .num_columns(4)
        .striped(true)
        .show(ui, |ui| {
            ui.strong("Quantity");
            ui.strong("beliefscope");
            ui.strong("Paper");
            ui.strong("Agrees");
            ui.end_row();
            for row in &run.rows {
                ui.add(egui::Label::new(&row.quantity).wrap());
                ui.monospace(&row.ours);
                ui.add(egui::Label::new(&row.paper).wrap());
                match row.agrees {
                    Some(true) => ui.colored_label(Color32::from_rgb(40, 160, 70), "yes"),
                    Some(false) => ui.colored_label(Color32::from_rgb(220, 120, 30), "no"),
                    None => ui.weak("-"),
                };
                ui.end_row();
            }
        });
    ui.weak(format!("Output files: {}", run.out.display()));
}
