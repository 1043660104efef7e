//! Scenario `tree`: tree kernel BP (Song, Gretton, Guestrin, AISTATS 2010, Algorithm 1) on a
//! dataset, with the explorer's data: load a CSV or a built-in, pick or draw a tree, set
//! evidence, read every node's belief, compare with Gaussian BP and (for built-ins) the exact
//! or fine-grid reference.
//!
//! `step()` computes **one message** of the upward-then-downward schedule (so the window can
//! show messages travelling to the root and back); a run finishes when every message is
//! computed (at most `2 (n - 1)` steps). Live evidence changes ([`TreeControl`]) skip the
//! stepping: they recompute only the affected messages at once and refresh every read-out, in
//! well under 50 ms at m = 500 samples per edge and 20 nodes (see the `tree` bench group).
//!
//! Cost of a step: one message (see [`crate::inference::tree_kbp::engine`]) plus the read-outs
//! of every node, O(Σ_t deg(t) (G + m) m).

pub mod builtin;
pub mod cli;
pub mod config;
pub mod data;
pub mod draft;
mod figures;
pub mod message_frames;
pub mod open;
pub mod report;
pub mod view;

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

use serde_json::{Map, Value};

use super::{
    CancelFlag, Control, IterationRecord, NoTask, Probe, RunLog, Scenario, ScenarioConfig,
    ScenarioDef, ScenarioView, Verb, report_fields,
};
use crate::error::{Error, Result};
use crate::inference::gaussian_bp::GaussianMarginal;
use crate::inference::tree_kbp::{KernelKind, Message, NodeBelief, TreeKbp};
use crate::io::{results::curves_csv, write_atomic};
use crate::model::NodeId;

pub use builtin::{BuiltinData, ReferenceMarginal, TrueModel};
pub use config::{DEFAULT_SAMPLES_PER_EDGE, DataSource, NodeSpec, PARAMS, Topology, TreeConfig};
pub use data::TreeProblem;
pub use draft::{DraftNode, DraftProblem, TreeDraft, tidy_layout, wide_layout};
pub use view::{
    BeliefCurves, CandidateBeliefs, MessageInspector, MessageView, TreeNodeView, TreeView,
};

pub use crate::inference::tree_kbp::{LAMBDA_CONVENTION, NodeKernelInfo};

/// Live changes the window sends while a tree scenario runs (no model rebuild).
#[derive(Debug, Clone, PartialEq)]
pub enum TreeControl {
    /// Observe `node` at `value` (the slider) or remove its evidence (`None`).
    SetEvidence {
        node: NodeId,
        value: Option<Vec<f64>>,
    },
    /// Remove every evidence.
    ClearEvidence,
    /// Root the schedule elsewhere (beliefs do not change; the stepping order does).
    SetRoot(NodeId),
    /// Compute every remaining message now.
    RunAll,
}

impl Control for TreeControl {
    /// The same evidence slider moved again: only the last position matters.
    fn supersedes(&self, earlier: &TreeControl) -> bool {
        matches!(
            (self, earlier),
            (TreeControl::SetEvidence { node: a, .. }, TreeControl::SetEvidence { node: b, .. })
                if a == b
        )
    }
}

impl ScenarioDef for TreeScenario {
    const NAME: &'static str = "tree";
    const SUMMARY: &'static str = "tree kernel BP on a dataset (Song et al. 2010, Alg. 1): CSV or built-in, chain/star/binary/Chow-Liu/drawn tree, evidence, beliefs";
    const ALGORITHMS: &'static [&'static str] =
        &["tree-kbp", "gaussian-bp", "reference (built-ins)"];
    type Config = TreeConfig;
    type View = Box<TreeView>;
    type Control = TreeControl;
    type Task = NoTask;
    type RunArgs = cli::TreeArgs;
    /// A built-in's draw and the samples taken from it (a CSV file has only the latter).
    const SEED_KEYS: &'static [&'static str] = &["data.seed", "sample_seed"];

    fn build(config: TreeConfig, cancel: &CancelFlag) -> Result<Self> {
        TreeScenario::new(config, cancel)
    }

    /// One step per message: the count depends on the tree, not on the config alone.
    fn max_iters(_: &TreeConfig) -> Option<usize> {
        None
    }

    fn verbs() -> &'static [Verb] {
        &[Verb {
            group: "sweep",
            command: || {
                Verb::command_with_table::<cli::TreeSweepArgs, TreeConfig>(
                    "tree",
                    "Errors of tree kernel BP against the reference over samples per edge, lambda and the bandwidth multiplier (built-in datasets).",
                )
            },
            run: |m| cli::run_sweep(Verb::args(m)?),
            takes_sweep_flags: false,
        }]
    }
}

/// A 1-D node's grid spacing (1 for delta-kernel nodes, whose "grid" is their values).
fn spacing(xs: &[f64], kind: KernelKind) -> f64 {
    if kind == KernelKind::Delta || xs.len() < 2 {
        1.0
    } else {
        (xs[xs.len() - 1] - xs[0]) / (xs.len() - 1) as f64
    }
}

/// Scales `ys` so that `Σ y dx = 1` when the sum is positive (negative values kept).
pub fn normalise_density(ys: &[f64], dx: f64) -> Vec<f64> {
    let z: f64 = ys.iter().sum::<f64>() * dx;
    if z > 0.0 && z.is_finite() {
        ys.iter().map(|y| y / z).collect()
    } else {
        ys.to_vec()
    }
}

/// `Σ |p - q| dx`.
pub fn l1_distance(p: &[f64], q: &[f64], dx: f64) -> f64 {
    p.iter().zip(q).map(|(a, b)| (a - b).abs()).sum::<f64>() * dx
}

/// Errors of one 1-D query against the reference.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct QueryErrors {
    pub l1_parzen: f64,
    pub l1_embedding: f64,
    pub l1_gaussian_bp: f64,
    pub mean_error: f64,
    pub mean_error_gaussian_bp: f64,
}

type Baselines = (
    Vec<GaussianMarginal>,
    Option<Vec<Option<ReferenceMarginal>>>,
    f64,
    f64,
);

/// The evidence per node as the config holds it (kept in step with the engine's).
fn engine_evidence_snapshot(problem: &TreeProblem, config: &TreeConfig) -> Vec<Option<Vec<f64>>> {
    problem
        .names
        .iter()
        .map(|n| config.evidence.get(n).cloned())
        .collect()
}

/// Gaussian BP and the reference posterior for `evidence`, with their seconds.
fn baselines(problem: &TreeProblem, evidence: Vec<Option<Vec<f64>>>) -> Result<Baselines> {
    let t = Instant::now();
    let gaussian = problem.gaussian.posterior(&evidence)?;
    let gauss_s = t.elapsed().as_secs_f64();
    let t = Instant::now();
    let reference = match &problem.truth {
        None => None,
        Some((truth, _)) => {
            let mut by_column = vec![None; problem.dataset.cols()];
            for (node, e) in evidence.iter().enumerate() {
                if let Some(v) = e {
                    for (&c, &x) in problem.columns[node].iter().zip(v) {
                        by_column[c] = Some(x);
                    }
                }
            }
            let post = truth.posterior(&by_column)?;
            Some(
                (0..problem.names.len())
                    .map(|node| {
                        let cols = &problem.columns[node];
                        (cols.len() == 1).then(|| post[cols[0]].clone()).flatten()
                    })
                    .collect(),
            )
        }
    };
    Ok((gaussian, reference, gauss_s, t.elapsed().as_secs_f64()))
}

/// A running tree problem.
pub struct TreeScenario {
    config: TreeConfig,
    problem: TreeProblem,
    engine: TreeKbp,
    gaussian: Vec<GaussianMarginal>,
    reference: Option<Vec<Option<ReferenceMarginal>>>,
    beliefs: Vec<NodeBelief>,
    log: RunLog,
    query_seconds: f64,
    query_timings: BTreeMap<String, f64>,
    evidence_warnings: Vec<String>,
    steps: usize,
    /// Each message's change per message pass or evidence change (the debugger's canvas).
    message_frames: message_frames::TreeMessageFrames,
}

impl TreeScenario {
    pub fn new(mut config: TreeConfig, cancel: &CancelFlag) -> Result<TreeScenario> {
        let start = Instant::now();
        open::resolve_tree_file(&mut config)?;
        let problem = TreeProblem::build(&config, cancel)?;
        let engine = TreeKbp::new(problem.model.clone(), problem.root)?;
        let mut s = TreeScenario {
            gaussian: Vec::new(),
            reference: None,
            beliefs: Vec::new(),
            log: RunLog::new(0.0),
            query_seconds: 0.0,
            query_timings: BTreeMap::new(),
            evidence_warnings: Vec::new(),
            steps: 0,
            message_frames: message_frames::TreeMessageFrames::new(
                &engine,
                &wide_layout(&problem.graph, problem.root),
            ),
            engine,
            problem,
            config,
        };
        for (name, value) in s.config.evidence.clone() {
            let node = s.problem.node_index(&name)?;
            s.set_evidence_inner(node, Some(value))?;
        }
        for q in &s.config.queries {
            s.problem.node_index(q)?;
        }
        s.refresh_baselines()?;
        s.refresh_beliefs()?;
        s.log = RunLog::new(start.elapsed().as_secs_f64());
        Ok(s)
    }

    pub fn problem(&self) -> &TreeProblem {
        &self.problem
    }

    pub fn engine(&self) -> &TreeKbp {
        &self.engine
    }

    pub fn beliefs(&self) -> &[NodeBelief] {
        &self.beliefs
    }

    pub fn gaussian(&self) -> &[GaussianMarginal] {
        &self.gaussian
    }

    pub fn reference(&self, node: NodeId) -> Option<&ReferenceMarginal> {
        self.reference.as_ref()?.get(node)?.as_ref()
    }

    /// Computes every remaining message and refreshes the read-outs (what `run` does step by
    /// step).
    pub fn run_all(&mut self) -> Result<()> {
        let start = Instant::now();
        self.engine.run()?;
        self.message_frames.record(&self.engine);
        self.refresh_beliefs()?;
        self.query_seconds = start.elapsed().as_secs_f64();
        Ok(())
    }

    /// Seconds of the last evidence update.
    pub fn query_seconds(&self) -> f64 {
        self.query_seconds
    }

    fn set_evidence_inner(&mut self, node: NodeId, value: Option<Vec<f64>>) -> Result<()> {
        if let Some(v) = &value {
            let d = self.problem.model.dim(node);
            if v.len() != d {
                return Err(Error::param(
                    "evidence",
                    format!(
                        "node '{}' has {d} column(s) ({}), got {} value(s)",
                        self.problem.names[node],
                        self.problem.column_names[node].join(", "),
                        v.len()
                    ),
                ));
            }
        }
        self.engine.set_evidence(node, value.clone())?;
        let name = self.problem.names[node].clone();
        match value {
            Some(v) => {
                self.config.evidence.insert(name, v);
            }
            None => {
                self.config.evidence.remove(&name);
            }
        }
        self.evidence_warnings = self
            .engine
            .evidence()
            .iter()
            .enumerate()
            .filter_map(|(t, e)| e.as_ref().and_then(|v| self.problem.range_warning(t, v)))
            .collect();
        Ok(())
    }

    /// Observes `node` (or clears it), recomputes the affected messages, the baselines and
    /// every read-out: the slider path.
    pub fn set_evidence(&mut self, node: NodeId, value: Option<Vec<f64>>) -> Result<()> {
        let start = Instant::now();
        self.set_evidence_inner(node, value)?;
        self.update_all()?;
        self.message_frames.record(&self.engine);
        self.query_seconds = start.elapsed().as_secs_f64();
        Ok(())
    }

    /// Kernel BP (remaining messages, then every read-out) and the baselines (Gaussian BP,
    /// reference) for the current evidence, side by side on two threads; the seconds of each
    /// part go to [`TreeScenario::query_timings`].
    fn update_all(&mut self) -> Result<()> {
        let engine = &mut self.engine;
        let problem = &self.problem;
        let (kbp, baselines) = rayon::join(
            || -> Result<(Vec<NodeBelief>, f64, f64)> {
                let t = Instant::now();
                engine.run()?;
                let messages = t.elapsed().as_secs_f64();
                let t = Instant::now();
                let beliefs = engine.beliefs()?;
                Ok((beliefs, messages, t.elapsed().as_secs_f64()))
            },
            || baselines(problem, engine_evidence_snapshot(problem, &self.config)),
        );
        let (beliefs, messages, readouts) = kbp?;
        let (gaussian, reference, gauss_s, ref_s) = baselines?;
        self.beliefs = beliefs;
        self.gaussian = gaussian;
        self.reference = reference;
        self.query_timings = BTreeMap::from([
            ("messages".to_string(), messages),
            ("read-outs".to_string(), readouts),
            ("gaussian_bp".to_string(), gauss_s),
            ("reference".to_string(), ref_s),
        ]);
        Ok(())
    }

    /// Seconds of each part of the last evidence update (messages, read-outs, Gaussian BP,
    /// reference; the last two run beside the first two).
    pub fn query_timings(&self) -> &BTreeMap<String, f64> {
        &self.query_timings
    }

    fn refresh_baselines(&mut self) -> Result<()> {
        let (g, r, _, _) = baselines(
            &self.problem,
            engine_evidence_snapshot(&self.problem, &self.config),
        )?;
        self.gaussian = g;
        self.reference = r;
        Ok(())
    }

    fn refresh_beliefs(&mut self) -> Result<()> {
        self.beliefs = self.engine.beliefs()?;
        Ok(())
    }

    /// The nodes reported in results.json.
    pub fn query_nodes(&self) -> Vec<NodeId> {
        if self.config.queries.is_empty() {
            (0..self.problem.names.len())
                .filter(|&t| self.engine.evidence()[t].is_none())
                .collect()
        } else {
            self.config
                .queries
                .iter()
                .filter_map(|q| self.problem.node_index(q).ok())
                .collect()
        }
    }

    /// Normalised curves of a hidden 1-D node: grid, Parzen, embedding, Gaussian BP and the
    /// reference (when known).
    pub fn curves(&self, node: NodeId) -> Option<BeliefCurves> {
        let b = &self.beliefs[node];
        if b.observed.is_some() || self.problem.model.dim(node) != 1 {
            return None;
        }
        let xs: Vec<f64> = self.problem.model.eval_points(node).as_slice().to_vec();
        let kind = self.problem.kernels[node].settings.kernel;
        let dx = spacing(&xs, kind);
        let g = &self.gaussian[node];
        let gauss: Vec<f64> = xs.iter().map(|&x| g.density(&[x])).collect();
        let reference = self
            .reference(node)
            .map(|r| normalise_density(&r.density(&xs), dx));
        Some(BeliefCurves {
            parzen: normalise_density(&b.parzen, dx),
            embedding: normalise_density(&b.embedding, dx),
            gaussian_bp: normalise_density(&gauss, dx),
            reference,
            xs: Arc::new(xs),
        })
    }

    /// Errors of a hidden 1-D node against the reference.
    pub fn query_errors(&self, node: NodeId) -> Option<QueryErrors> {
        let c = self.curves(node)?;
        let r = c.reference.as_ref()?;
        let reference = self.reference(node)?;
        let dx = spacing(&c.xs, self.problem.kernels[node].settings.kernel);
        Some(QueryErrors {
            l1_parzen: l1_distance(&c.parzen, r, dx),
            l1_embedding: l1_distance(&c.embedding, r, dx),
            l1_gaussian_bp: l1_distance(&c.gaussian_bp, r, dx),
            mean_error: (self.beliefs[node].mean[0] - reference.mean).abs(),
            mean_error_gaussian_bp: (self.gaussian[node].mean[0] - reference.mean).abs(),
        })
    }

    /// Mean errors over the query nodes that have a reference.
    pub fn mean_errors(&self) -> Option<QueryErrors> {
        let errs: Vec<QueryErrors> = self
            .query_nodes()
            .into_iter()
            .filter_map(|t| self.query_errors(t))
            .collect();
        if errs.is_empty() {
            return None;
        }
        let k = errs.len() as f64;
        let avg = |f: fn(&QueryErrors) -> f64| errs.iter().map(f).sum::<f64>() / k;
        Some(QueryErrors {
            l1_parzen: avg(|e| e.l1_parzen),
            l1_embedding: avg(|e| e.l1_embedding),
            l1_gaussian_bp: avg(|e| e.l1_gaussian_bp),
            mean_error: avg(|e| e.mean_error),
            mean_error_gaussian_bp: avg(|e| e.mean_error_gaussian_bp),
        })
    }

    fn metrics(&self) -> BTreeMap<String, f64> {
        let mut m = BTreeMap::new();
        let done = (0..self.engine.model().graph().num_messages())
            .filter(|&i| *self.engine.message(i) != Message::Pending)
            .count();
        m.insert("messages_done".into(), done as f64);
        if let Some(e) = self.mean_errors() {
            m.insert("l1_parzen".into(), e.l1_parzen);
            m.insert("l1_embedding".into(), e.l1_embedding);
            m.insert("l1_gaussian_bp".into(), e.l1_gaussian_bp);
            m.insert("mean_error".into(), e.mean_error);
            m.insert("mean_error_gaussian_bp".into(), e.mean_error_gaussian_bp);
        }
        m
    }

    fn kernel_info(&self, t: NodeId) -> NodeKernelInfo {
        let k = &self.problem.kernels[t];
        NodeKernelInfo {
            kernel: k.settings.kernel.label().to_string(),
            auto: matches!(k.settings.bandwidth, crate::inference::kbp::Bandwidth::Auto),
            multiplier: k.settings.multiplier,
            sigma: k.sigma,
            median: k.median,
            rule: k.rule.clone(),
            lambda: k.settings.lambda,
        }
    }

    fn inspector(&self, msg: usize) -> Option<MessageInspector> {
        let graph = self.engine.model().graph();
        if msg >= graph.num_messages() {
            return None;
        }
        let (from, to) = (graph.source(msg), graph.target(msg));
        let state = self.engine.message(msg);
        let (s, set) = self.engine.model().receiver_set(msg);
        let points = &self.engine.model().node(s).sets[set].points;
        let positions: Vec<f64> = points.rows().map(|r| r[0]).collect();
        let (weights, log_scale) = match state {
            Message::Weights(w) => (w.beta.iter().copied().collect(), w.log_scale),
            _ => (Vec::new(), 0.0),
        };
        let curve = if self.problem.model.dim(to) == 1 {
            self.engine.message_at_eval(msg).ok().flatten().map(|v| {
                let s = v.amax();
                let ys = if s > 0.0 {
                    (v / s).iter().copied().collect()
                } else {
                    v.iter().copied().collect()
                };
                (
                    Arc::new(self.problem.model.eval_points(to).as_slice().to_vec()),
                    ys,
                )
            })
        } else {
            None
        };
        Some(MessageInspector {
            id: msg,
            from: self.problem.names[from].clone(),
            to: self.problem.names[to].clone(),
            state: state.label(),
            weights,
            positions,
            log_scale,
            curve,
        })
    }

    /// The view for the explorer.
    pub fn tree_view(&self, probe: Option<Probe>) -> TreeView {
        let positions = wide_layout(&self.problem.graph, self.engine.root());
        let nodes = (0..self.problem.names.len())
            .map(|t| {
                let b = &self.beliefs[t];
                let dim = self.problem.model.dim(t);
                let candidates = (dim > 1 && b.observed.is_none()).then(|| {
                    let pts = self.problem.model.eval_points(t);
                    let g = &self.gaussian[t];
                    let gauss: Vec<f64> = pts.rows().map(|r| g.density(r)).collect();
                    CandidateBeliefs {
                        points: Arc::new(pts.as_slice().to_vec()),
                        parzen: normalise_density(&b.parzen, 1.0),
                        embedding: normalise_density(&b.embedding, 1.0),
                        gaussian_bp: normalise_density(&gauss, 1.0),
                    }
                });
                TreeNodeView {
                    name: self.problem.names[t].clone(),
                    columns: self.problem.column_names[t].clone(),
                    dim,
                    position: positions[t],
                    observed: b.observed.clone(),
                    range: self.problem.ranges[t].clone(),
                    kernel: self.kernel_info(t),
                    curves: self.curves(t),
                    candidates,
                    mean: b.mean.clone(),
                    argmax: b.argmax.clone(),
                    gaussian_mean: self.gaussian[t].mean.iter().copied().collect(),
                    reference_mean: self.reference(t).map(|r| r.mean),
                    effective_samples: b.effective_samples,
                    belief_samples: b.weights.len(),
                }
            })
            .collect();
        let graph = self.engine.model().graph();
        let messages = (0..graph.num_messages())
            .map(|i| {
                let m = self.engine.message(i);
                MessageView {
                    id: i,
                    from: graph.source(i),
                    to: graph.target(i),
                    state: m.label(),
                    log_scale: match m {
                        Message::Weights(w) => Some(w.log_scale),
                        _ => None,
                    },
                }
            })
            .collect();
        let (selected_node, inspector) = match probe {
            Some(Probe::Node(n)) if n < self.problem.names.len() => (Some(n), None),
            Some(Probe::Message(m)) => (None, self.inspector(m)),
            _ => (None, None),
        };
        let mut warnings = self.problem.warnings.clone();
        warnings.extend(self.evidence_warnings.iter().cloned());
        TreeView {
            data_label: self.config.data.label(),
            rows: self.problem.dataset.rows(),
            columns: self.problem.dataset.names.clone(),
            nodes,
            edges: graph.edges().to_vec(),
            root: self.engine.root(),
            topology: self.config.topology.label().to_string(),
            messages,
            schedule: self.engine.schedule().to_vec(),
            cursor: self.engine.cursor(),
            selected_node,
            inspector,
            hsic: self.problem.hsic.as_ref().map(|h| {
                // Row-major.
                h.transpose().as_slice().to_vec()
            }),
            true_edges: self.problem.true_edges.clone(),
            reference_label: self
                .reference
                .as_ref()
                .and_then(|r| r.iter().flatten().next().map(|m| m.label())),
            samples_per_edge: self
                .config
                .samples_per_edge
                .min(self.problem.dataset.rows()),
            shared_samples: self.config.shared_samples,
            query_seconds: self.query_seconds,
            query_timings: self.query_timings.clone(),
            setup_seconds: self.log.setup_seconds(),
            lambda_convention: LAMBDA_CONVENTION,
            metrics: self.metrics(),
            warnings,
            draft: TreeDraft::from_tree(
                &self.problem.names,
                &self.problem.column_names,
                graph.edges(),
                self.engine.root(),
            ),
        }
    }

    /// `node,x,parzen,embedding,gaussian_bp,reference` for every 1-D query node.
    fn beliefs_csv(&self) -> String {
        let mut out = String::from("node,x,parzen,embedding,gaussian_bp,reference\n");
        for t in self.query_nodes() {
            let Some(c) = self.curves(t) else { continue };
            for i in 0..c.xs.len() {
                let r = c.reference.as_ref().map_or(f64::NAN, |r| r[i]);
                let _ = writeln!(
                    out,
                    "{},{},{},{},{},{}",
                    self.problem.names[t],
                    c.xs[i],
                    c.parzen[i],
                    c.embedding[i],
                    c.gaussian_bp[i],
                    r
                );
            }
        }
        out
    }
}

impl Scenario for TreeScenario {
    fn config(&self) -> ScenarioConfig {
        ScenarioConfig::Tree(self.config.clone())
    }

    fn algorithm(&self) -> String {
        "tree-kbp".into()
    }

    fn log(&self) -> &RunLog {
        &self.log
    }

    fn step(&mut self) -> Result<IterationRecord> {
        let start = Instant::now();
        self.engine.step()?;
        let stats = self.message_frames.record(&self.engine);
        self.refresh_beliefs()?;
        self.steps += 1;
        let total = self.engine.schedule().len().max(1);
        let pending = (0..self.engine.model().graph().num_messages())
            .filter(|&i| *self.engine.message(i) == Message::Pending)
            .count();
        let record = IterationRecord {
            iter: self.steps,
            seconds: start.elapsed().as_secs_f64(),
            // The share of messages still to compute (a tree needs no convergence test).
            residual: pending as f64 / total as f64,
            metrics: {
                let mut m = self.metrics();
                for (key, value) in stats.metrics() {
                    m.insert(key.to_string(), value);
                }
                m
            },
        };
        Ok(self.log.push(record))
    }

    fn finished(&self) -> bool {
        self.engine.done()
    }

    fn convergence(&self) -> Option<crate::run::residuals::ConvergenceView> {
        Some(self.message_frames.view())
    }

    fn set_schedule(&mut self, _: crate::inference::Schedule, _: f64) -> Result<()> {
        Err(Error::Other(format!(
            "the tree scenario has no schedules: {}",
            message_frames::NO_ITERATIVE_RESIDUAL
        )))
    }

    fn view(&self, probe: Option<Probe>) -> ScenarioView {
        ScenarioView::Tree(Box::new(self.tree_view(probe)))
    }

    fn final_metrics(&self) -> BTreeMap<String, f64> {
        let mut m = self.metrics();
        m.insert("query_seconds".into(), self.query_seconds);
        m
    }

    fn control(&mut self, control: &super::ScenarioControl) -> Result<()> {
        let super::ScenarioControl::Tree(c) = control else {
            return Err(Error::Other("not a control of the tree scenario".into()));
        };
        match c {
            TreeControl::SetEvidence { node, value } => {
                if *node >= self.problem.names.len() {
                    return Err(Error::param(
                        "evidence",
                        format!("node {node} does not exist"),
                    ));
                }
                self.set_evidence(*node, value.clone())
            }
            TreeControl::ClearEvidence => {
                let start = Instant::now();
                self.engine.clear_evidence();
                self.config.evidence.clear();
                self.evidence_warnings.clear();
                self.update_all()?;
                self.message_frames.record(&self.engine);
                self.query_seconds = start.elapsed().as_secs_f64();
                Ok(())
            }
            TreeControl::SetRoot(root) => {
                self.engine.set_root(*root)?;
                self.config.root = Some(self.problem.names[*root].clone());
                Ok(())
            }
            TreeControl::RunAll => self.run_all(),
        }
    }

    fn warnings(&self) -> Vec<String> {
        let mut w = self.problem.warnings.clone();
        w.extend(self.evidence_warnings.iter().cloned());
        w
    }

    fn extra_results(&self) -> Map<String, Value> {
        report_fields(&report::TreeReport::of(self))
    }

    fn write_outputs(&self, dir: &Path) -> Result<()> {
        write_atomic(&dir.join("beliefs.csv"), self.beliefs_csv().as_bytes())?;
        write_atomic(
            &dir.join("curves.csv"),
            curves_csv(self.log.history()).as_bytes(),
        )?;
        let draft = TreeDraft::from_tree(
            &self.problem.names,
            &self.problem.column_names,
            self.problem.graph.edges(),
            self.engine.root(),
        );
        crate::io::csv::write_edge_list(&dir.join("tree.edges"), &draft.to_edge_list())?;
        figures::write(self, dir)
    }
}
