//! Scenario `pbp`: predictive belief propagation (Wang & Gordon, AAAI 2020, Secs. 3–4) on a
//! discrete latent-variable model: our stand-in for the synthetic model of the paper's Fig. 4
//! (or its loop-free
//! variant, or a JSON model file) with Dirichlet(1) CPTs, N samples of its observed variables,
//! and three learners on the same data: PBP (step 1), EM with restarts (step 2) and stepwise
//! online EM (step 3), each scored by KL(true ‖ method) of P(X_Q | e) averaged over every joint
//! value of the evidence variables. Live controls set evidence and the query (one pass each).
//! Cost: see [`experiment`].
//!
//! Where predictive BP lives, floor by floor: the models in `model::latent_dag` (DAG, CPTs,
//! the JSON model file, the stand-in of Fig. 4) and `model::latent_junction_tree`; the
//! algorithm and its baselines in `inference::pbp`; here the synthetic experiment of Sec. 6
//! and Fig. 5 ([`experiment`]), `sweep pbp` ([`sweep`]) and pendigits (Sec. 6 "Handwritten
//! Digit Recognition", Fig. 7; [`pendigits`], [`pen_run`], its accuracy curve as a worker job in
//! [`curve_task`]); the room in
//! `app::scenarios::pbp` (its DAG editor checks a draft with `LatentDag::new` and
//! `LatentJunctionTree::build` and saves the file that `--model FILE` reads).
//!
//! [`PbpScenario`] is a discrete run (with the exact reference) or a pendigits run
//! (`--model pendigits`: PBP chains against the EM-HMM baseline, a picked test digit as a live
//! control). Evidence and query changes ([`PbpControl`]) are answered by one pass per method
//! without relearning. The N slider and the rank cut are [`PbpControl::Relearn`]: PBP relearns
//! on the worker while they move; on release the window loads the draft config, rebuilding the
//! run so that EM and online EM follow.

pub mod cli;
pub mod config;
pub mod curve_task;
pub mod experiment;
pub mod figures;
pub mod message_frames;
pub mod pen_run;
pub mod pendigits;
pub mod report;
pub mod sweep;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Instant;

use serde_json::{Map, Value};

use super::{
    CancelFlag, Control, IterationRecord, Probe, RunLog, Scenario, ScenarioConfig, ScenarioControl,
    ScenarioDef, ScenarioParams, ScenarioView, Verb, report_fields,
};
use crate::error::{Error, Result};
use crate::inference::pbp::core_groups::Groups;
use crate::inference::pbp::em::EmSettings;
use crate::inference::pbp::exact::{ObservedJoint, kl_divergence};
use crate::inference::pbp::features::{DiscreteSamples, TrainingData};
use crate::inference::pbp::{PbpModel, PbpSettings};
use crate::io::write_atomic;
use crate::model::latent_dag::{BayesNet, DagNode, ModelFile, synthetic_stand_in};
pub use config::{PARAMS, PbpConfig};
use experiment::{Learned, MethodRun, Problem, Stream, answer, stream};

/// Largest model file read.
pub const MAX_MODEL_FILE_BYTES: u64 = 10 << 20;

/// Where the pendigits files are expected (relative to the checkout).
pub fn pendigits_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/data/pendigits")
}

/// The ground truth named by `config.model`, and whether it is one of the built-in stand-ins.
pub fn load_truth(config: &PbpConfig) -> Result<(BayesNet, bool)> {
    let mut rng = stream(config.seed, Stream::Truth);
    match config.model.as_str() {
        "synthetic" => Ok((
            BayesNet::random(synthetic_stand_in(false), 1.0, &mut rng)?,
            true,
        )),
        "synthetic-tree" => Ok((
            BayesNet::random(synthetic_stand_in(true), 1.0, &mut rng)?,
            true,
        )),
        "pendigits" => {
            let dir = pendigits_dir();
            if !dir.join("pendigits.tra").is_file() {
                return Err(Error::Io(format!(
                    "pendigits data not found: expected {} (../shared/data/pendigits/pendigits.tra and pendigits.tes)",
                    dir.display()
                )));
            }
            Err(Error::Other(
                "pendigits (Sec. 6 of the paper) has continuous pen points and no exact reference: run it with `beliefscope sweep pbp --model pendigits`; `run pbp` takes synthetic, synthetic-tree or a discrete model file"
                    .into(),
            ))
        }
        path => {
            let p = Path::new(path);
            let meta = std::fs::metadata(p).map_err(|e| {
                Error::Io(format!(
                    "model '{path}': not synthetic, synthetic-tree or pendigits, and not a readable file ({e})"
                ))
            })?;
            if meta.len() > MAX_MODEL_FILE_BYTES {
                return Err(Error::Io(format!(
                    "model file {path} is {} bytes; at most {MAX_MODEL_FILE_BYTES} are read",
                    meta.len()
                )));
            }
            let text = std::fs::read_to_string(p)
                .map_err(|e| Error::Io(format!("cannot read model file {path}: {e}")))?;
            let file = ModelFile::parse(&text)
                .map_err(|e| Error::Io(format!("model file {path}: {e}")))?;
            Ok((file.bayes_net(&mut rng)?, false))
        }
    }
}

/// The query variable and evidence variables of a config (stand-ins: P(D | G, H, E)).
pub fn query_set(
    config: &PbpConfig,
    net: &BayesNet,
    stand_in: bool,
) -> Result<(usize, Vec<usize>)> {
    let dag = &net.dag;
    let find = |name: &str, what: &str| {
        let v = dag
            .index_of(name)
            .ok_or_else(|| Error::Other(format!("{what} '{name}' is not a node of the model")))?;
        if !dag.is_observed(v) {
            return Err(Error::Other(format!(
                "{what} '{name}' is latent; queries and evidence are on observed variables"
            )));
        }
        Ok(v)
    };
    let query = match (config.query.as_str(), stand_in) {
        ("", true) => find("D", "query")?,
        ("", false) => dag.observed()[0],
        (name, _) => find(name, "query")?,
    };
    let evidence = if config.evidence_vars.is_empty() {
        if stand_in {
            let mut vars = vec![
                find("G", "evidence")?,
                find("H", "evidence")?,
                find("E", "evidence")?,
            ];
            vars.retain(|&v| v != query);
            vars
        } else {
            dag.observed().into_iter().filter(|&v| v != query).collect()
        }
    } else {
        config
            .evidence_vars
            .iter()
            .map(|n| find(n, "evidence variable"))
            .collect::<Result<Vec<_>>>()?
    };
    if evidence.contains(&query) {
        return Err(Error::Other(
            "the query variable is also an evidence variable".into(),
        ));
    }
    Ok((query, evidence))
}

/// A live change: evidence on an observed node (None clears it) or the query node.
#[derive(Debug, Clone, PartialEq)]
pub enum PbpControl {
    SetEvidence {
        node: usize,
        value: Option<usize>,
    },
    SetQuery(usize),
    /// Relearn PBP from N samples with stage-2 rank r (0 = k_S): the N slider and the rank cut.
    Relearn {
        samples: usize,
        rank: usize,
    },
    /// Pendigits: the test digit shown.
    PickDigit(usize),
}

impl Control for PbpControl {
    fn supersedes(&self, earlier: &Self) -> bool {
        match (self, earlier) {
            (PbpControl::SetEvidence { node: a, .. }, PbpControl::SetEvidence { node: b, .. }) => {
                a == b
            }
            (PbpControl::SetQuery(_), PbpControl::SetQuery(_)) => true,
            (PbpControl::PickDigit(_), PbpControl::PickDigit(_)) => true,
            (PbpControl::Relearn { .. }, PbpControl::Relearn { .. }) => true,
            _ => false,
        }
    }
}

/// One method's answer to the current query.
#[derive(Debug, Clone, PartialEq)]
pub struct MethodAnswer {
    pub name: &'static str,
    pub dist: Vec<f64>,
    pub p_evidence: f64,
    /// KL(exact ‖ this) (0 for exact).
    pub kl: f64,
    pub clipped: usize,
}

/// A clique of the junction tree as the window draws it.
#[derive(Debug, Clone, PartialEq)]
pub struct CliqueView {
    pub vars: Vec<usize>,
    pub parent: Option<usize>,
    pub separator: Vec<usize>,
    pub leaf: bool,
    pub groups: Option<Groups>,
    pub inside: Vec<usize>,
    pub outside: Vec<usize>,
    pub diagnostics: Option<OperatorDiagnostics>,
    /// PBP's downward and upward messages across the separator above, and the population
    /// (exact) model's, for the current evidence.
    pub down: Vec<f64>,
    pub down_exact: Vec<f64>,
    pub up: Vec<f64>,
    pub up_exact: Vec<f64>,
}

/// 2SR diagnostics of one W_S (singular values, rank cut, S1 fit and condition number).
#[derive(Debug, Clone, PartialEq)]
pub struct OperatorDiagnostics {
    pub theta_bar_singular: Vec<f64>,
    pub cross_singular: Vec<f64>,
    pub rank_used: usize,
    pub s1_r2: f64,
    pub condition: f64,
}

/// What the window draws.
#[derive(Debug, Clone, Default)]
pub struct PbpView {
    pub model: String,
    pub stand_in: bool,
    pub samples: usize,
    pub nodes: Vec<DagNode>,
    pub edges: Vec<(usize, usize)>,
    pub cliques: Vec<CliqueView>,
    pub root: usize,
    pub evidence: Vec<Option<usize>>,
    pub query: usize,
    /// Exact first, then the methods learned so far.
    pub answers: Vec<MethodAnswer>,
    /// (method, kl_mean over the query set, learning seconds).
    pub summary: Vec<(&'static str, f64, f64)>,
    /// P̂(evidence) at the root (Eq. 4) and the largest relative gap to any leaf's (Step 4).
    pub root_evidence: f64,
    pub leaf_evidence_gap: f64,
    pub clipped: usize,
    /// Milliseconds of the last evidence or query change (all methods answered).
    pub latency_ms: f64,
    /// A pendigits run (Sec. 6 "Handwritten Digit Recognition"); the discrete fields above are
    /// empty then.
    pub pen: Option<pen_run::PenView>,
    /// PBP's KL against N on this ground truth (mean ± sd over sample draws).
    pub curve: Vec<experiment::LearningPoint>,
}

/// The running scenario: a discrete model with an exact reference, or pendigits (Sec. 6).
pub enum PbpScenario {
    Discrete(Box<DiscreteScenario>),
    Pendigits(Box<pen_run::PenScenario>),
}

impl PbpScenario {
    pub fn new(config: PbpConfig, cancel: &CancelFlag) -> Result<PbpScenario> {
        if config.model == "pendigits" {
            config.check()?;
            Ok(PbpScenario::Pendigits(Box::new(pen_run::PenScenario::new(
                config, cancel,
            )?)))
        } else {
            Ok(PbpScenario::Discrete(Box::new(DiscreteScenario::new(
                config, cancel,
            )?)))
        }
    }

    /// The discrete run (None for pendigits).
    pub fn discrete(&self) -> Option<&DiscreteScenario> {
        match self {
            PbpScenario::Discrete(d) => Some(d),
            PbpScenario::Pendigits(_) => None,
        }
    }

    /// The pendigits run (None for discrete models).
    pub fn pendigits(&self) -> Option<&pen_run::PenScenario> {
        match self {
            PbpScenario::Pendigits(p) => Some(p),
            PbpScenario::Discrete(_) => None,
        }
    }
}

impl Scenario for PbpScenario {
    fn config(&self) -> ScenarioConfig {
        match self {
            PbpScenario::Discrete(d) => d.config(),
            PbpScenario::Pendigits(p) => ScenarioConfig::Pbp(p.config().clone()),
        }
    }

    fn algorithm(&self) -> String {
        match self {
            PbpScenario::Discrete(d) => d.algorithm(),
            PbpScenario::Pendigits(_) => {
                "pbp vs em-hmm (pendigits, Wang & Gordon 2020 Sec. 6)".into()
            }
        }
    }

    fn log(&self) -> &RunLog {
        match self {
            PbpScenario::Discrete(d) => d.log(),
            PbpScenario::Pendigits(p) => p.log(),
        }
    }

    fn step(&mut self) -> Result<IterationRecord> {
        match self {
            PbpScenario::Discrete(d) => d.step(),
            PbpScenario::Pendigits(p) => p.step(),
        }
    }

    fn finished(&self) -> bool {
        match self {
            PbpScenario::Discrete(d) => d.finished(),
            PbpScenario::Pendigits(p) => p.finished(),
        }
    }

    fn view(&self, probe: Option<Probe>) -> ScenarioView {
        match self {
            PbpScenario::Discrete(d) => d.view(probe),
            PbpScenario::Pendigits(p) => p.view(),
        }
    }

    fn final_metrics(&self) -> BTreeMap<String, f64> {
        match self {
            PbpScenario::Discrete(d) => d.final_metrics(),
            PbpScenario::Pendigits(p) => p.final_metrics(),
        }
    }

    fn extra_results(&self) -> Map<String, Value> {
        match self {
            PbpScenario::Discrete(d) => d.extra_results(),
            PbpScenario::Pendigits(p) => report_fields(&p.report()),
        }
    }

    fn write_outputs(&self, dir: &Path) -> Result<()> {
        match self {
            PbpScenario::Discrete(d) => d.write_outputs(dir),
            PbpScenario::Pendigits(_) => Ok(()),
        }
    }

    fn control(&mut self, control: &ScenarioControl) -> Result<()> {
        match self {
            PbpScenario::Discrete(d) => d.control(control),
            PbpScenario::Pendigits(p) => p.control(control),
        }
    }

    fn convergence(&self) -> Option<crate::run::residuals::ConvergenceView> {
        match self {
            PbpScenario::Discrete(d) => d.message_frames.view(),
            PbpScenario::Pendigits(_) => None,
        }
    }

    fn set_schedule(&mut self, _: crate::inference::Schedule, _: f64) -> Result<()> {
        Err(Error::Other(format!(
            "the pbp scenario has no schedules: {}",
            message_frames::NO_ITERATIONS
        )))
    }
}

/// A run on a discrete model (the stand-ins or a model file) with its exact reference.
pub struct DiscreteScenario {
    config: PbpConfig,
    stand_in: bool,
    problem: Problem,
    pbp: Option<(PbpModel, MethodRun)>,
    /// Learned from the exact joint with the same root, α and β: the exact messages.
    population: Option<PbpModel>,
    em: Option<(Learned, MethodRun)>,
    online: Option<(Learned, MethodRun)>,
    evidence: Vec<Option<usize>>,
    query: usize,
    answers: Vec<MethodAnswer>,
    latency_ms: f64,
    /// PBP's learning curve on this truth (computed with step 1).
    curve: Vec<experiment::LearningPoint>,
    stages: Vec<Stage>,
    /// Each pass's message changes (the debugger's canvas).
    message_frames: message_frames::PbpMessageFrames,
    log: RunLog,
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Stage {
    Pbp,
    Em,
    OnlineEm,
}

impl PbpConfig {
    fn stages(&self) -> Vec<Stage> {
        let mut s = vec![Stage::Pbp];
        if self.run_em {
            s.push(Stage::Em);
        }
        if self.run_online_em {
            s.push(Stage::OnlineEm);
        }
        s
    }

    /// The learning settings (root resolved later against the tree).
    pub fn pbp_settings(&self) -> PbpSettings {
        PbpSettings {
            lambda1: self.lambda1,
            rank: (self.rank > 0).then_some(self.rank),
            ridge2: (self.ridge2 > 0.0).then_some(self.ridge2),
            root: None,
            overrides: Vec::new(),
            max_instruments: 2,
        }
    }

    pub fn em_settings(&self) -> EmSettings {
        EmSettings {
            restarts: self.em_restarts,
            ..EmSettings::default()
        }
    }
}

impl DiscreteScenario {
    pub fn new(config: PbpConfig, _cancel: &CancelFlag) -> Result<DiscreteScenario> {
        let start = Instant::now();
        config.check()?;
        let (truth, stand_in) = load_truth(&config)?;
        // The structure is checked before anything is sampled (observed variables must be
        // sinks, so that each sits in a leaf clique).
        crate::model::latent_junction_tree::LatentJunctionTree::build(&truth.dag)?;
        let (query, evidence_vars) = query_set(&config, &truth, stand_in)?;
        let mut evidence = vec![None; truth.dag.len()];
        for (name, &value) in &config.evidence {
            let v = truth
                .dag
                .index_of(name)
                .filter(|&v| truth.dag.is_observed(v))
                .ok_or_else(|| {
                    Error::Other(format!("evidence on '{name}', not an observed variable"))
                })?;
            if value >= truth.dag.cardinality(v) {
                return Err(Error::Other(format!(
                    "evidence {name} = {value} is outside its {} values",
                    truth.dag.cardinality(v)
                )));
            }
            evidence[v] = Some(value);
        }
        let problem = Problem::new(truth, config.samples, config.seed, query, evidence_vars)?;
        let stages = config.stages();
        Ok(DiscreteScenario {
            stand_in,
            problem,
            pbp: None,
            population: None,
            em: None,
            online: None,
            evidence,
            query,
            answers: Vec::new(),
            latency_ms: 0.0,
            curve: Vec::new(),
            stages,
            message_frames: message_frames::PbpMessageFrames::default(),
            log: RunLog::new(start.elapsed().as_secs_f64()),
            config,
        })
    }

    fn settings(&self) -> Result<PbpSettings> {
        let mut s = self.config.pbp_settings();
        if !self.config.root.is_empty() {
            let dag = &self.problem.truth.dag;
            let jt = crate::model::latent_junction_tree::LatentJunctionTree::build(dag)?;
            let names = |c: &Vec<usize>| -> String {
                c.iter().map(|&v| dag.node(v).name.as_str()).collect()
            };
            let root = jt
                .core
                .iter()
                .copied()
                .find(|&c| names(&jt.cliques[c]) == self.config.root)
                .ok_or_else(|| {
                    let options: Vec<String> =
                        jt.core.iter().map(|&c| names(&jt.cliques[c])).collect();
                    Error::param(
                        "root",
                        format!(
                            "'{}' is not a latent clique; choose one of {}",
                            self.config.root,
                            options.join(", ")
                        ),
                    )
                })?;
            s.root = Some(root);
        }
        Ok(s)
    }

    /// Step 1: PBP from the samples, and its exact counterpart (the population learner with
    /// the same root, α and β) for the messages panel.
    fn learn_pbp(&mut self) -> Result<BTreeMap<String, f64>> {
        let settings = self.settings()?;
        let (model, run) = self.problem.run_pbp(&settings)?;
        let overrides = model
            .groups
            .iter()
            .enumerate()
            .filter(|(c, _)| model.operators[*c].is_some())
            .filter_map(|(c, g)| g.as_ref().map(|g| (c, g.alpha.clone(), g.beta.clone())))
            .collect();
        let population = PbpSettings {
            lambda1: 0.0,
            root: Some(model.tree.root),
            overrides,
            ..settings
        };
        let data = TrainingData::population(&self.problem.exact);
        self.population = PbpModel::learn(&self.problem.truth.dag, &data, &population).ok();
        let mut metrics = BTreeMap::new();
        metrics.insert("kl_mean_pbp".into(), run.kl_mean);
        metrics.insert("seconds_pbp".into(), run.seconds);
        metrics.insert("clipped_pbp".into(), run.clipped as f64);
        self.pbp = Some((model, run));
        Ok(metrics)
    }

    /// Live relearning (the N slider, the rank cut): PBP only, from the first `samples` samples
    /// of the same stream with stage-2 rank `rank` (0 = k_S). EM and online EM learned at
    /// another N or rank no longer match the config, so they are dropped; Play relearns them.
    fn relearn_pbp(&mut self, samples: usize, rank: usize) -> Result<()> {
        let config = PbpConfig {
            samples,
            rank,
            ..self.config.clone()
        };
        config.check()?;
        if samples != self.problem.samples.len() {
            self.problem.samples = DiscreteSamples::draw(
                &self.problem.truth,
                samples,
                &mut stream(config.seed, Stream::Samples),
            );
        }
        self.config = config;
        self.learn_pbp()?;
        self.em = None;
        self.online = None;
        Ok(())
    }

    /// PBP's learning curve on this truth (after step 1).
    pub fn learning_curve(&self) -> &[experiment::LearningPoint] {
        &self.curve
    }

    /// The learned PBP model (after step 1).
    pub fn pbp_model(&self) -> Option<&PbpModel> {
        self.pbp.as_ref().map(|(m, _)| m)
    }

    pub fn runs(&self) -> Vec<&MethodRun> {
        [
            self.pbp.as_ref().map(|p| &p.1),
            self.em.as_ref().map(|p| &p.1),
            self.online.as_ref().map(|p| &p.1),
        ]
        .into_iter()
        .flatten()
        .collect()
    }

    pub fn config_ref(&self) -> &PbpConfig {
        &self.config
    }

    pub fn problem(&self) -> &Problem {
        &self.problem
    }

    /// Answers the current query with every method learned so far; times it.
    fn refresh_answers(&mut self) -> Result<()> {
        let start = Instant::now();
        let mut ev = self.evidence.clone();
        ev[self.query] = None;
        let (exact, p_exact) = self.problem.exact.posterior(self.query, &ev);
        let mut answers = vec![MethodAnswer {
            name: "exact",
            dist: exact.clone(),
            p_evidence: p_exact,
            kl: 0.0,
            clipped: 0,
        }];
        if let Some((model, _)) = &self.pbp {
            let q = model.query(&ev, self.query)?;
            answers.push(MethodAnswer {
                name: "pbp",
                kl: kl_divergence(&exact, &q.dist),
                dist: q.dist,
                p_evidence: q.p_evidence,
                clipped: q.clipped,
            });
        }
        for (name, learned) in [
            ("em", self.em.as_ref().map(|e| &e.0)),
            ("online_em", self.online.as_ref().map(|e| &e.0)),
        ] {
            if let Some(l) = learned {
                let a = answer(l, &ev, self.query)?;
                answers.push(MethodAnswer {
                    name,
                    kl: kl_divergence(&exact, &a.dist),
                    dist: a.dist,
                    p_evidence: a.p_evidence,
                    clipped: a.clipped,
                });
            }
        }
        self.answers = answers;
        self.latency_ms = start.elapsed().as_secs_f64() * 1e3;
        Ok(())
    }

    /// Answers of the current query (exact first).
    pub fn answers(&self) -> &[MethodAnswer] {
        &self.answers
    }

    pub fn latency_ms(&self) -> f64 {
        self.latency_ms
    }

    fn node_name(&self, v: usize) -> String {
        self.problem.truth.dag.node(v).name.clone()
    }

    /// The typed results.json report.
    pub fn report(&self) -> report::PbpReport {
        report::PbpReport::new(self)
    }

    /// Records PBP's upward and downward pass for the current evidence (the query's own value
    /// left out, as the answers do) on the debugger's canvas.
    fn record_pass(&mut self) {
        if let Some((model, _)) = &self.pbp {
            let mut ev = self.evidence.clone();
            ev[self.query] = None;
            self.message_frames.record(model, &ev);
        }
    }

    fn clique_views(&self) -> (Vec<CliqueView>, usize, f64, f64) {
        let Some((model, _)) = &self.pbp else {
            return (Vec::new(), 0, 0.0, 0.0);
        };
        let messages = model.propagate(&model.leaf_messages(&self.evidence));
        let exact = self
            .population
            .as_ref()
            .map(|p| p.propagate(&p.leaf_messages(&self.evidence)));
        let root_evidence = messages.root_evidence.value();
        let gap = model
            .leaf_evidence(&messages)
            .iter()
            .map(|(_, s)| (s.value() - root_evidence).abs() / root_evidence.abs().max(1e-300))
            .fold(0.0, f64::max);
        let tree = &model.tree;
        let views = (0..model.jt.len())
            .map(|c| CliqueView {
                vars: model.jt.cliques[c].clone(),
                parent: tree.parent[c],
                separator: tree.separators[c].clone(),
                leaf: tree.is_leaf(c),
                groups: model.groups[c].clone(),
                inside: tree.inside_observed(c),
                outside: tree.outside_observed(c),
                diagnostics: model.operators[c].as_ref().map(|op| OperatorDiagnostics {
                    theta_bar_singular: op.theta_bar_singular.clone(),
                    cross_singular: op.cross_singular.clone(),
                    rank_used: op.rank_used,
                    s1_r2: op.s1_r2,
                    condition: op.condition,
                }),
                down: messages.down[c].values(),
                up: messages.up[c].values(),
                down_exact: exact.as_ref().map_or_else(Vec::new, |m| m.down[c].values()),
                up_exact: exact.as_ref().map_or_else(Vec::new, |m| m.up[c].values()),
            })
            .collect();
        (views, tree.root, root_evidence, gap)
    }
}

impl ScenarioDef for PbpScenario {
    const NAME: &'static str = "pbp";
    const SUMMARY: &'static str = "predictive belief propagation: latent-variable models learned by two-stage regression vs EM and online EM against exact enumeration (Wang & Gordon 2020, Sec. 6, Fig. 5)";
    const ALGORITHMS: &'static [&'static str] = &["pbp", "em", "online-em", "exact"];
    type Config = PbpConfig;
    type View = Box<PbpView>;
    type Control = PbpControl;
    type Task = curve_task::CurveTask;
    type RunArgs = cli::PbpArgs;

    fn build(config: PbpConfig, cancel: &CancelFlag) -> Result<Self> {
        PbpScenario::new(config, cancel)
    }

    fn max_iters(config: &PbpConfig) -> Option<usize> {
        if config.model == "pendigits" {
            return Some(pen_run::PenScenario::stage_count(config));
        }
        Some(config.stages().len())
    }

    fn verbs() -> &'static [Verb] {
        &[Verb {
            group: "sweep",
            command: || {
                Verb::command::<sweep::PbpSweepArgs>(
                    "pbp",
                    "KL(true || method) of P(D | G, H, E) against N for PBP, EM and online EM over seeds, with the fitted log-log slope and training times (the synthetic model of Wang & Gordon 2020, Fig. 5); with --model pendigits, test accuracy against training size (pendigits, Sec. 6, Fig. 7).",
                )
            },
            run: |m| sweep::run_sweep(Verb::args(m)?),
            takes_sweep_flags: false,
        }]
    }
}

impl Scenario for DiscreteScenario {
    fn config(&self) -> ScenarioConfig {
        ScenarioConfig::Pbp(self.config.clone())
    }

    fn algorithm(&self) -> String {
        "pbp vs em vs online-em (exact reference)".into()
    }

    fn log(&self) -> &RunLog {
        &self.log
    }

    fn step(&mut self) -> Result<IterationRecord> {
        let start = Instant::now();
        let k = self.log.history().len();
        let Some(&stage) = self.stages.get(k) else {
            return Err(Error::Other("the pbp run has finished".into()));
        };
        let mut metrics = BTreeMap::new();
        match stage {
            Stage::Pbp => {
                metrics = self.learn_pbp()?;
                let mut sizes: Vec<usize> = experiment::CURVE_SIZES
                    .iter()
                    .copied()
                    .chain([self.config.samples])
                    .collect();
                sizes.sort_unstable();
                sizes.dedup();
                self.curve = experiment::pbp_learning_curve(
                    &self.problem,
                    &self.settings()?,
                    self.config.seed,
                    &sizes,
                )?;
            }
            Stage::Em => {
                let (fit, run) = self
                    .problem
                    .run_em(&self.config.em_settings(), self.config.seed)?;
                metrics.insert("kl_mean_em".into(), run.kl_mean);
                metrics.insert("seconds_em".into(), run.seconds);
                metrics.insert("log_likelihood_em".into(), fit.log_likelihood);
                let joint = ObservedJoint::of(&fit.net)?;
                self.em = Some((Learned::Net(Box::new(joint)), run));
            }
            Stage::OnlineEm => {
                let (fit, run) = self
                    .problem
                    .run_online_em(&self.config.em_settings(), self.config.seed)?;
                metrics.insert("kl_mean_online_em".into(), run.kl_mean);
                metrics.insert("seconds_online_em".into(), run.seconds);
                metrics.insert("log_likelihood_online_em".into(), fit.log_likelihood);
                let joint = ObservedJoint::of(&fit.net)?;
                self.online = Some((Learned::Net(Box::new(joint)), run));
            }
        }
        self.refresh_answers()?;
        if stage == Stage::Pbp {
            self.record_pass();
        }
        let record = IterationRecord {
            iter: k + 1,
            seconds: start.elapsed().as_secs_f64(),
            residual: 0.0,
            metrics,
        };
        Ok(self.log.push(record))
    }

    fn finished(&self) -> bool {
        self.log.history().len() >= self.stages.len()
    }

    fn view(&self, _probe: Option<Probe>) -> ScenarioView {
        let (cliques, root, root_evidence, leaf_evidence_gap) = self.clique_views();
        let dag = &self.problem.truth.dag;
        ScenarioView::Pbp(Box::new(PbpView {
            model: self.config.model.clone(),
            stand_in: self.stand_in,
            samples: self.config.samples,
            nodes: dag.nodes().to_vec(),
            edges: dag.edges().to_vec(),
            cliques,
            root,
            evidence: self.evidence.clone(),
            query: self.query,
            answers: self.answers.clone(),
            summary: self
                .runs()
                .iter()
                .map(|r| (r.name, r.kl_mean, r.seconds))
                .collect(),
            root_evidence,
            leaf_evidence_gap,
            clipped: self.pbp.as_ref().map_or(0, |p| p.1.clipped),
            latency_ms: self.latency_ms,
            pen: None,
            curve: self.curve.clone(),
        }))
    }

    fn final_metrics(&self) -> BTreeMap<String, f64> {
        let mut m = BTreeMap::new();
        for r in self.runs() {
            m.insert(format!("kl_mean_{}", r.name), r.kl_mean);
            m.insert(format!("seconds_{}", r.name), r.seconds);
        }
        if let Some((_, r)) = &self.pbp {
            m.insert("clipped_pbp".into(), r.clipped as f64);
        }
        m.insert("evidence_latency_ms".into(), self.latency_ms);
        m
    }

    fn extra_results(&self) -> Map<String, Value> {
        report_fields(&self.report())
    }

    fn write_outputs(&self, dir: &Path) -> Result<()> {
        let dag = &self.problem.truth.dag;
        let file = ModelFile::from_model(dag, Some(&self.problem.truth.cpts));
        let text = serde_json::to_string_pretty(&file).map_err(|e| Error::Other(e.to_string()))?;
        write_atomic(&dir.join("model.json"), text.as_bytes())?;
        figures::write_posterior(dir, &dag.node(self.query).name, &self.answers)
    }

    fn control(&mut self, control: &ScenarioControl) -> Result<()> {
        let ScenarioControl::Pbp(c) = control else {
            return Err(Error::Other("not a pbp control".into()));
        };
        let dag = &self.problem.truth.dag;
        match *c {
            PbpControl::SetEvidence { node, value } => {
                if node >= dag.len() || !dag.is_observed(node) {
                    return Err(Error::Other(format!(
                        "evidence needs an observed node; {node} is not one"
                    )));
                }
                if let Some(x) = value
                    && x >= dag.cardinality(node)
                {
                    return Err(Error::Other(format!(
                        "{} has {} values; {x} is outside",
                        dag.node(node).name,
                        dag.cardinality(node)
                    )));
                }
                self.evidence[node] = value;
                let name = self.node_name(node);
                match value {
                    Some(x) => self.config.evidence.insert(name, x),
                    None => self.config.evidence.remove(&name),
                };
            }
            PbpControl::SetQuery(node) => {
                if node >= dag.len() || !dag.is_observed(node) {
                    return Err(Error::Other(format!(
                        "the query must be an observed node; {node} is not one"
                    )));
                }
                self.query = node;
                self.config.query = self.node_name(node);
            }
            PbpControl::Relearn { samples, rank } => {
                if self.pbp.is_none() {
                    return Err(Error::Other(
                        "relearning waits until PBP has been learned once".into(),
                    ));
                }
                self.relearn_pbp(samples, rank)?;
            }
            PbpControl::PickDigit(_) => {
                return Err(Error::Other(
                    "picking a test digit needs the pendigits model".into(),
                ));
            }
        }
        self.refresh_answers()?;
        self.record_pass();
        Ok(())
    }
}
