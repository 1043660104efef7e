//! Loopy kernel BP iterations (Song et al. 2011, eq. 12 and Sec. 5) on a 4-connected
//! `width x height` grid with scalar states, for the three update modes of [`KbpModel`].
//!
//! A pixel's outgoing messages sit in four slots of an f32 store ([`layout`], [`store`]); the
//! grid's topology is computed, not stored. Every schedule updates groups of pixels with the
//! same number of factors as batched matrix products ([`batch`]):
//! * **synchronous** (Jacobi): chunks of consecutive pixels in parallel, from the previous
//!   iteration's messages into a second store;
//! * **sweep** (Gauss-Seidel, raster order then back, each pixel from the freshest messages):
//!   as a wavefront ([`sweep`]): the pixels of one anti-diagonal depend only on the diagonal
//!   before, so each diagonal is updated in parallel, in place. The messages are those of the
//!   serial sweep, on every core and with one store;
//! * **checkerboard** (red-black Gauss-Seidel): the even pixels in parallel in place, then the
//!   odd ones ([`checkerboard`]): every message once per iteration, half a sweep's work;
//! * **random** and **residual** (Elidan et al. 2006): serial ([`serial`]).
//!
//! After every update a coefficient vector is normalised to unit norm, damped
//! (`new = d old + (1 - d) update`) and normalised again; the residual is the largest
//! `||c_new - c_old||` of any update. A message with no finite norm stops the run (the
//! synchronous store is then untouched; an in-place sweep keeps what it had updated).
//! Tree-reweighted updates (edge appearance probability ρ < 1, Wainwright, Jaakkola, Willsky
//! 2003, eq. 11, carried over to kernel messages at the class points): the product a message
//! sends is `evidence · Π_u m_ut^ρ / m_st` instead of `evidence · Π_{u≠s} m_ut`, and the belief
//! is `P · evidence · Π_u m_ut^ρ`. Powers need positive values, so each message's values are
//! floored at 1e-6 of its largest |value| first. ρ = 1 is the paper's kernel BP, unchanged.
//!
//! Evidence is read from a table over the observed values ([`EvidenceTable`]), evaluated once
//! at each class's points and at the candidates, so a pixel costs O(1) evidence memory.
//! Each slot's change over the last iteration (summed over a sweep's two updates) and its signed
//! projection are kept in f32 for the convergence debugger.
//!
//! Cost per iteration: Σ over messages of the class cost in [`KbpModel`] plus O(M · dim);
//! memory `4 · pixels · dim` f32 per store (two for the synchronous schedule, one otherwise)
//! plus 8 bytes per slot for the change record.

mod batch;
mod checkerboard;
mod estimates;
mod in_place;
pub mod layout;
mod serial;
mod store;
mod sweep;

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Instant;

use nalgebra::{DMatrix, DVector};
use rayon::prelude::*;

use super::model::{EvidenceTable, KbpModel};
use crate::error::{Error, Result};
use crate::inference::{
    Belief, Damping, EstimateKind, Estimates, Inference, MessageChanges, Schedule, StepReport,
};
use crate::model::NodeId;
use crate::run::CancelFlag;
use crate::run::residuals::{OwnedChanges, projection_weight};
use batch::{EngineEvidence, Updater, with_scratch};
pub use layout::GridShape;

/// Pixels per parallel task of the synchronous step: their gathered messages, values and
/// products (a few hundred KB at the default ranks) stay in the core's cache between stages.
const CHUNK_NODES: usize = 64;
/// Pixels per task (and per check of the interrupt flag) when the messages are first set.
const INITIALISE_CHUNK_NODES: usize = 4096;

/// Loopy kernel BP state. Clone copies the messages (a what-if run); the evidence is shared.
#[derive(Clone)]
pub struct KbpEngine {
    model: Arc<KbpModel>,
    shape: GridShape,
    schedule: Schedule,
    damping: Damping,
    dim: usize,
    evidence: Option<Arc<EngineEvidence>>,
    /// Coefficients per slot (`dim` each, f32).
    messages: Vec<f32>,
    /// The synchronous schedule's second store (empty until it runs).
    next: Vec<f32>,
    /// Candidate values for estimates and their basis evaluations (`candidates x dim`).
    candidates: Vec<f64>,
    candidate_eval: DMatrix<f64>,
    candidate_prior: Vec<f64>,
    /// `Σ_j basis(u_j)` over the distinct training values: `orientation · c` is the sum of a
    /// message's values there, used to fix its sign.
    orientation: Vec<f64>,
    projection: Vec<f64>,
    /// Edge appearance probability ρ of tree-reweighted updates (1: kernel BP as published).
    rho: f64,
    /// Fraction of the damped step taken (1: the step `damping` sets; a step guard shrinks it).
    step_scale: f64,
    iteration: usize,
    /// Per slot: the change of the last iteration and its signed projection.
    change: Vec<f32>,
    signed: Vec<f32>,
    /// Residual-schedule buffers (`serial.rs`).
    serial: serial::SerialState,
    /// Checked per block (sweep) or chunk (synchronous) inside an iteration.
    interrupt: Option<CancelFlag>,
}

/// Why an iteration stopped before its end.
pub(super) enum Halt {
    /// The update of this slot had no finite norm.
    NoFiniteNorm(usize),
    /// The interrupt flag was set.
    Interrupted,
}

impl KbpEngine {
    /// Sets up messages on the `shape` grid with optional evidence (one observation per
    /// pixel, from [`KbpModel::evidence_table`]); the model must have a class for every factor
    /// count that occurs (`degree - 1 + [evidence]`). Estimates are argmax/mean over
    /// `candidates`.
    pub fn new(
        model: Arc<KbpModel>,
        shape: GridShape,
        evidence: Option<EvidenceTable>,
        candidates: Vec<f64>,
        schedule: Schedule,
        damping: Damping,
    ) -> Result<Self> {
        Self::new_interruptible(model, shape, evidence, candidates, schedule, damping, None)
    }

    /// As [`Self::new`], with the interrupt flag set from the start: setting up a
    /// photograph's messages takes seconds, and the flag is checked per chunk of pixels
    /// (`Err(Cancelled)` once it is raised).
    pub fn new_interruptible(
        model: Arc<KbpModel>,
        shape: GridShape,
        evidence: Option<EvidenceTable>,
        candidates: Vec<f64>,
        schedule: Schedule,
        damping: Damping,
        interrupt: Option<CancelFlag>,
    ) -> Result<Self> {
        let damping = damping.check()?;
        let dim = model.basis.dim();
        let n = shape.num_nodes();
        if shape.width == 0 || shape.height == 0 || n < 2 {
            return Err(Error::param(
                "graph",
                format!(
                    "a {} x {} grid has no edges: kernel BP needs at least two pixels",
                    shape.width, shape.height
                ),
            ));
        }
        if let Some(e) = &evidence
            && (e.len() != n || e.coefficients.nrows() != dim)
        {
            return Err(Error::param(
                "evidence",
                format!(
                    "expected {n} observations in the basis of dimension {dim}, got {} of dimension {}",
                    e.len(),
                    e.coefficients.nrows()
                ),
            ));
        }
        if candidates.is_empty() {
            return Err(Error::param(
                "candidates",
                "need at least one candidate value",
            ));
        }
        let has_evidence = usize::from(evidence.is_some());
        let mut counts: Vec<usize> = Vec::new();
        for degree in shape.degrees() {
            let p = degree.saturating_sub(1) + has_evidence;
            if p == 0 {
                return Err(Error::param(
                    "graph",
                    format!(
                        "a pixel has {degree} neighbours and no evidence: kernel BP needs every message to multiply at least one factor"
                    ),
                ));
            }
            if !model.classes.contains_key(&p) {
                return Err(Error::param(
                    "model",
                    format!("no update for messages that multiply {p} factors"),
                ));
            }
            counts.push(p);
        }
        let candidate_eval = model.basis.eval_matrix(&candidates)?;
        let candidate_prior = model.prior(&candidates);
        let evidence = evidence.map(|table| {
            let class_values: BTreeMap<usize, DMatrix<f64>> = counts
                .iter()
                .map(|&p| (p, &model.classes[&p].eval * &table.coefficients))
                .collect();
            let candidate_values = &candidate_eval * &table.coefficients;
            Arc::new(EngineEvidence {
                table,
                class_values,
                candidate_values,
            })
        });
        let orientation = model
            .basis
            .eval_matrix(model.training_values())?
            .row_sum()
            .iter()
            .copied()
            .collect();
        let slots = shape.num_slots();
        let mut engine = KbpEngine {
            model,
            shape,
            schedule,
            damping,
            dim,
            evidence,
            messages: vec![0.0; dim * slots],
            next: Vec::new(),
            candidates,
            candidate_eval,
            candidate_prior,
            orientation,
            projection: (0..dim).map(projection_weight).collect(),
            rho: 1.0,
            step_scale: 1.0,
            iteration: 0,
            change: Vec::new(),
            signed: Vec::new(),
            serial: serial::SerialState::default(),
            interrupt,
        };
        if let Err(e) = engine.initialise() {
            crate::run::drop_in_background(engine);
            return Err(e);
        }
        Ok(engine)
    }

    /// Every message starts as the update of the constant function 1 (`U_p 1`): the message
    /// a sender with no information sends. Parallel over chunks of pixels, each checking the
    /// interrupt flag (first writes of a photograph's store are page faults, seconds of them).
    fn initialise(&mut self) -> Result<()> {
        let dim = self.dim;
        let start = self.start_messages();
        let shape = self.shape;
        let interrupt = self.interrupt.as_ref();
        self.messages
            .par_chunks_mut(4 * dim * INITIALISE_CHUNK_NODES)
            .enumerate()
            .try_for_each(|(chunk, slots)| {
                interrupt.map_or(Ok(()), CancelFlag::check)?;
                let first = chunk * INITIALISE_CHUNK_NODES;
                for (i, node_slots) in slots.chunks_mut(4 * dim).enumerate() {
                    let (dirs, n) = shape.directions(first + i);
                    let c = &start[&n];
                    for &d in &dirs[..n] {
                        store::write(node_slots, dim, d, c.as_slice());
                    }
                }
                Ok(())
            })
    }

    /// The message a pixel of each degree sends before any iteration, by degree: `U_p 1`
    /// normalised and oriented.
    fn start_messages(&self) -> BTreeMap<usize, DVector<f64>> {
        let has_evidence = usize::from(self.evidence.is_some());
        let mut start = BTreeMap::new();
        for degree in self.shape.degrees() {
            let p = degree - 1 + has_evidence;
            let class = &self.model.classes[&p];
            let ones = DVector::from_element(class.update.ncols(), 1.0);
            let mut c = &class.update * ones;
            let norm = c.norm()
                * c.dot(&DVector::from_column_slice(&self.orientation))
                    .signum();
            if norm != 0.0 && norm.is_finite() {
                c /= norm;
            }
            start.insert(degree, c);
        }
        start
    }

    /// Tree-reweighted updates with edge appearance probability `rho` in (0, 1] (1: the
    /// published kernel BP).
    pub fn with_edge_appearance(mut self, rho: f64) -> Result<Self> {
        if !(rho.is_finite() && rho > 0.0 && rho <= 1.0) {
            return Err(Error::param(
                "edge appearance",
                format!("must be in (0, 1] (1: ordinary kernel BP), got {rho}"),
            ));
        }
        self.rho = rho;
        Ok(self)
    }

    pub fn edge_appearance(&self) -> f64 {
        self.rho
    }

    /// Takes `scale` (in (0, 1]) of each damped step from the next iteration on.
    pub fn set_step_scale(&mut self, scale: f64) {
        self.step_scale = scale;
    }

    /// Every slot's coefficients (`dim` each, f32; border slots hold zeros).
    pub fn message_coefficients(&self) -> &[f32] {
        &self.messages
    }

    /// Puts back coefficients saved from [`Self::message_coefficients`] (a step guard
    /// returning to an earlier state); the iteration count goes on.
    pub fn restore_messages(&mut self, saved: &[f32]) -> Result<()> {
        if saved.len() != self.messages.len() {
            return Err(Error::param(
                "saved messages",
                format!(
                    "{} values for a store of {}",
                    saved.len(),
                    self.messages.len()
                ),
            ));
        }
        self.messages.copy_from_slice(saved);
        self.serial.reset_queue();
        Ok(())
    }

    pub fn model(&self) -> &KbpModel {
        &self.model
    }

    /// The learned model, shared (a second engine on other evidence reuses it).
    pub fn shared_model(&self) -> Arc<KbpModel> {
        Arc::clone(&self.model)
    }

    pub fn shape(&self) -> GridShape {
        self.shape
    }

    /// Coefficients of the message `from -> to`, if they are neighbours.
    pub fn message(&self, from: NodeId, to: NodeId) -> Option<Vec<f64>> {
        let d = (0..4).find(|&d| self.shape.neighbour(from, d) == Some(to))?;
        let mut c = vec![0.0; self.dim];
        store::read(&self.messages, self.dim, 4 * from + d, &mut c);
        Some(c)
    }

    /// Coefficients of every message into `node`, with the sender.
    pub fn incoming(&self, node: NodeId) -> Vec<(NodeId, Vec<f64>)> {
        let (dirs, n) = self.shape.directions(node);
        dirs[..n]
            .iter()
            .map(|&d| {
                let u = self.shape.neighbour(node, d).expect("a neighbour");
                let mut c = vec![0.0; self.dim];
                let s = self.shape.incoming_slot(node, d).expect("a neighbour");
                store::read(&self.messages, self.dim, s, &mut c);
                (u, c)
            })
            .collect()
    }

    /// Evidence coefficients of `node`, if the model has evidence.
    pub fn evidence(&self, node: NodeId) -> Option<Vec<f64>> {
        self.evidence.as_ref().map(|e| {
            let mut c = vec![0.0; self.dim];
            e.table.interpolate(&e.table.coefficients, node, &mut c);
            c
        })
    }

    pub fn candidates(&self) -> &[f64] {
        &self.candidates
    }

    /// At most `max` messages' changes over the last iteration (every k-th, in slot order, for
    /// the convergence debugger of a large image), or None before the first iteration.
    pub fn changes_sample(&self, max: usize) -> Option<OwnedChanges> {
        if self.change.is_empty() {
            return None;
        }
        let stride = self.shape.num_messages().div_ceil(max.max(1)).max(1);
        let mut out = OwnedChanges::default();
        let existing = (0..self.shape.num_slots()).filter_map(|s| {
            self.shape
                .slot_ends(s)
                .map(|(_, to)| (f64::from(self.change[s]), f64::from(self.signed[s]), to))
        });
        for (c, g, to) in existing.step_by(stride) {
            out.change.push(c);
            out.signed.push(g);
            out.target.push(to);
        }
        Some(out)
    }

    /// What every group update of this iteration reads.
    fn updater(&self, damping: f64) -> Updater<'_> {
        Updater {
            shape: self.shape,
            dim: self.dim,
            classes: &self.model.classes,
            evidence: self.evidence.as_deref(),
            orientation: &self.orientation,
            projection: &self.projection,
            damping,
            rho: self.rho,
        }
    }

    /// One synchronous iteration from `messages` into `next`, chunk by chunk in parallel
    /// (each chunk checks the interrupt flag first). Returns the largest change, or why it
    /// stopped (then `messages` is untouched).
    fn step_synchronous(&mut self, damping: f64) -> std::result::Result<f64, Halt> {
        let dim = self.dim;
        let slots = self.shape.num_slots();
        self.next.resize(dim * slots, 0.0);
        self.change.resize(slots, 0.0);
        self.signed.resize(slots, 0.0);
        let mut next = std::mem::take(&mut self.next);
        let mut change = std::mem::take(&mut self.change);
        let mut signed = std::mem::take(&mut self.signed);
        let updater = self.updater(damping);
        let messages = &self.messages;
        let interrupt = self.interrupt.as_ref();
        let outcome = next
            .par_chunks_mut(4 * dim * CHUNK_NODES)
            .zip(change.par_chunks_mut(4 * CHUNK_NODES))
            .zip(signed.par_chunks_mut(4 * CHUNK_NODES))
            .enumerate()
            .map(|(c, ((out, ch), sg))| {
                if interrupt.is_some_and(|f| f.check().is_err()) {
                    return Err(Halt::Interrupted);
                }
                with_scratch(|sc| {
                    let first = c * CHUNK_NODES;
                    let nodes = first..first + ch.len() / 4;
                    let mut largest: f64 = 0.0;
                    for group in degree_groups(self.shape, nodes) {
                        let w = updater
                            .update_group(
                                &group.nodes,
                                group.degree,
                                |s, o| store::read(messages, dim, s, o),
                                sc,
                                |s, new, l2, projected| {
                                    let local = s - 4 * first;
                                    store::write(out, dim, local, new);
                                    ch[local] = l2 as f32;
                                    sg[local] = projected as f32;
                                },
                            )
                            .map_err(Halt::NoFiniteNorm)?;
                        largest = largest.max(w);
                    }
                    Ok(largest)
                })
            })
            .try_reduce(|| 0.0, |a, b| Ok(a.max(b)));
        self.next = next;
        self.change = change;
        self.signed = signed;
        outcome
    }

    fn halted(&self, halt: Halt, iteration: usize) -> Error {
        match halt {
            Halt::NoFiniteNorm(slot) => self.divergence(slot, iteration),
            Halt::Interrupted => Error::Cancelled,
        }
    }

    fn divergence(&self, slot: usize, iteration: usize) -> Error {
        let (from, to) = self.shape.slot_ends(slot).unwrap_or((slot / 4, slot / 4));
        Error::Diverged {
            iteration,
            detail: format!(
                "the kernel message {from} -> {to} has no finite norm (try a larger lambda or more damping)"
            ),
        }
    }
}

/// Pixels of one neighbour count.
pub(super) struct DegreeGroup {
    pub degree: usize,
    pub nodes: Vec<usize>,
}

/// `nodes` split by neighbour count (in order within each group).
pub(super) fn degree_groups(
    shape: GridShape,
    nodes: impl IntoIterator<Item = usize>,
) -> Vec<DegreeGroup> {
    let mut groups: Vec<DegreeGroup> = Vec::with_capacity(3);
    for t in nodes {
        let degree = shape.degree(t);
        match groups.iter_mut().find(|g| g.degree == degree) {
            Some(g) => g.nodes.push(t),
            None => groups.push(DegreeGroup {
                degree,
                nodes: vec![t],
            }),
        }
    }
    groups
}

impl Inference for KbpEngine {
    fn step(&mut self) -> Result<StepReport> {
        let start = Instant::now();
        let iteration = self.iteration + 1;
        let damping = self.damping.with_step_scale(self.step_scale).0;
        let residual = match self.schedule {
            Schedule::Synchronous => match self.step_synchronous(damping) {
                Ok(residual) => {
                    std::mem::swap(&mut self.messages, &mut self.next);
                    residual
                }
                Err(halt) => return Err(self.halted(halt, iteration)),
            },
            Schedule::Sweep => self
                .step_wavefront(damping)
                .map_err(|halt| self.halted(halt, iteration))?,
            Schedule::Checkerboard => self
                .step_checkerboard(damping)
                .map_err(|halt| self.halted(halt, iteration))?,
            Schedule::Random => self.step_random(iteration, damping)?,
            Schedule::Residual => self.step_residual(iteration, damping)?,
        };
        self.iteration = iteration;
        let messages = self.shape.num_messages();
        Ok(StepReport {
            iteration,
            residual,
            seconds: start.elapsed().as_secs_f64(),
            updates: if matches!(self.schedule, Schedule::Sweep) {
                2 * messages
            } else {
                messages
            },
        })
    }

    fn set_interrupt(&mut self, flag: CancelFlag) {
        self.interrupt = Some(flag);
    }

    fn iteration(&self) -> usize {
        self.iteration
    }

    /// The change record is f32 per slot; [`KbpEngine::changes_sample`] gives it as
    /// [`MessageChanges`].
    fn message_changes(&self) -> Option<MessageChanges<'_>> {
        None
    }

    /// The belief at the candidate values (not normalised; may be negative).
    fn belief(&self, node: NodeId) -> Belief {
        Belief::Curve {
            xs: self.candidates.clone(),
            ys: self.candidate_belief(node),
        }
    }

    /// MAP: the candidate with the largest belief. Mean: the candidates weighted by the
    /// positive part of the belief (negative lobes carry no probability).
    fn estimates(&self, kind: EstimateKind) -> Estimates {
        Estimates {
            dim: 1,
            values: self.point_estimates(kind),
        }
    }
}

/// Evaluates one message (coefficients `c`) at the model's class points of `p` (for tests).
#[cfg(test)]
fn values_at_class_points(model: &KbpModel, p: usize, c: &[f64]) -> Vec<f64> {
    (&model.classes[&p].eval * nalgebra::DVectorView::from_slice(c, c.len()))
        .as_slice()
        .to_vec()
}

#[cfg(test)]
mod tests {
    use rand::SeedableRng;
    use rand_chacha::ChaCha8Rng;
    use rand_distr::{Distribution, StandardNormal};

    use super::*;
    use crate::inference::kbp::{KbpSettings, KbpTraining, KbpUpdate};
    use crate::model::Graph;

    /// A 20 x 20 image of C = 10 gray levels (concentric rings) and a noisy copy (sigma 30).
    fn rings(seed: u64) -> (Vec<f64>, Vec<f64>) {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let clean: Vec<f64> = (0..400)
            .map(|i| {
                let (x, y) = ((i % 20) as f64 - 9.5, (i / 20) as f64 - 9.5);
                let level = ((x * x + y * y).sqrt() / 1.4).floor().min(9.0);
                level * 255.0 / 9.0
            })
            .collect();
        let noisy = clean
            .iter()
            .map(|v| {
                let z: f64 = StandardNormal.sample(&mut rng);
                v + 30.0 * z
            })
            .collect();
        (clean, noisy)
    }

    const SHAPE: GridShape = GridShape {
        width: 20,
        height: 20,
    };

    /// A constant-time engine on that image, learned from a second noise draw of it: 400
    /// pixels, so the synchronous step runs several chunks and a partial one, over the factor
    /// counts p = 2, 3, 4 (corners, edges, interior).
    fn engine(damping: f64, schedule: Schedule) -> KbpEngine {
        let graph = Graph::grid(20, 20).unwrap();
        let (clean, training_noisy) = rings(1);
        let (_, test_noisy) = rings(2);
        let (mut sender, mut receiver) = (Vec::new(), Vec::new());
        for &(a, b) in graph.edges() {
            sender.extend([clean[a], clean[b]]);
            receiver.extend([clean[b], clean[a]]);
        }
        let training = KbpTraining {
            sender: &sender,
            receiver: &receiver,
            hidden: &clean,
            observed: &training_noisy,
            observation_noise: None,
        };
        let settings = KbpSettings {
            update: KbpUpdate::Constant,
            ..KbpSettings::default()
        };
        let model = KbpModel::learn(&training, &settings, &[2, 3, 4]).unwrap();
        let evidence = model.evidence_table(&test_noisy).unwrap();
        let candidates = model.training_values().to_vec();
        KbpEngine::new(
            Arc::new(model),
            SHAPE,
            Some(evidence),
            candidates,
            schedule,
            Damping(damping),
        )
        .unwrap()
    }

    /// The message `t -> u` by eq. 12 straight from the definitions, node by node in f64:
    /// the other incoming messages and the evidence evaluated at the class points, multiplied,
    /// mapped by `U_p`, normalised, oriented and damped against `old`.
    fn reference_message(e: &KbpEngine, messages: &[Vec<f64>], t: usize, d: usize) -> Vec<f64> {
        let (dirs, n) = e.shape.directions(t);
        let p = n - 1 + 1;
        let class = &e.model.classes[&p];
        let ev = e.evidence(t).unwrap();
        let mut g = values_at_class_points(&e.model, p, &ev);
        for &k in &dirs[..n] {
            if k != d {
                let s = e.shape.incoming_slot(t, k).unwrap();
                let v = values_at_class_points(&e.model, p, &messages[s]);
                g.iter_mut().zip(&v).for_each(|(a, b)| *a *= b);
            }
        }
        let mut c: Vec<f64> = (&class.update * DVector::from_vec(g)).as_slice().to_vec();
        let old = &messages[4 * t + d];
        batch::mix_normalised(old, &mut c, &e.orientation, e.damping.0).unwrap();
        c
    }

    fn all_messages(e: &KbpEngine) -> Vec<Vec<f64>> {
        (0..e.shape.num_slots())
            .map(|s| {
                let mut c = vec![0.0; e.dim];
                store::read(&e.messages, e.dim, s, &mut c);
                c
            })
            .collect()
    }

    #[test]
    fn a_synchronous_step_is_eq_12_for_every_message() {
        let mut e = engine(0.3, Schedule::Synchronous);
        for iteration in 0..3 {
            let before = all_messages(&e);
            e.step().unwrap();
            let after = all_messages(&e);
            let mut worst: f64 = 0.0;
            for t in 0..SHAPE.num_nodes() {
                let (dirs, n) = SHAPE.directions(t);
                for &d in &dirs[..n] {
                    let want = reference_message(&e, &before, t, d);
                    for (a, b) in after[4 * t + d].iter().zip(&want) {
                        worst = worst.max((a - b).abs());
                    }
                }
            }
            // f32 storage: unit vectors to about 6e-8 per coefficient.
            assert!(worst < 1e-6, "iteration {iteration}: differs by {worst}");
        }
    }

    /// The messages after updating the pixels of `order` one by one, each from the freshest
    /// messages, as the f32 store keeps them.
    fn serial_pass(e: &KbpEngine, order: impl IntoIterator<Item = usize>) -> Vec<Vec<f64>> {
        let mut want = all_messages(e);
        for t in order {
            let (dirs, k) = SHAPE.directions(t);
            let fresh: Vec<Vec<f64>> = dirs[..k]
                .iter()
                .map(|&d| reference_message(e, &want, t, d))
                .collect();
            for (&d, c) in dirs[..k].iter().zip(fresh) {
                want[4 * t + d] = c.iter().map(|v| f64::from(*v as f32)).collect();
            }
        }
        want
    }

    /// Steps `e` once and returns the largest coefficient difference from `want`, with the
    /// step's report.
    fn step_against(e: &mut KbpEngine, want: &[Vec<f64>]) -> (f64, StepReport) {
        let report = e.step().unwrap();
        let worst = all_messages(e)
            .iter()
            .zip(want)
            .flat_map(|(a, b)| a.iter().zip(b).map(|(x, y)| (x - y).abs()))
            .fold(0.0, f64::max);
        (worst, report)
    }

    #[test]
    fn the_wavefront_sweep_is_the_serial_raster_sweep() {
        let mut e = engine(0.3, Schedule::Sweep);
        let n = SHAPE.num_nodes();
        for iteration in 0..2 {
            // The serial sweep, pixel by pixel from the freshest messages: forward, then back.
            let want = serial_pass(&e, (0..n).chain((0..n).rev()));
            let (worst, _) = step_against(&mut e, &want);
            assert!(worst < 1e-6, "iteration {iteration}: differs by {worst}");
        }
    }

    #[test]
    fn the_checkerboard_is_the_even_pixels_then_the_odd_ones_serially() {
        let mut e = engine(0.3, Schedule::Checkerboard);
        let (w, n) = (SHAPE.width, SHAPE.num_nodes());
        for iteration in 0..2 {
            // Every x + y even pixel in raster order, then every odd one.
            let evens = (0..n).filter(|t| (t % w + t / w) % 2 == 0);
            let odds = (0..n).filter(|t| (t % w + t / w) % 2 == 1);
            let want = serial_pass(&e, evens.chain(odds));
            let (worst, report) = step_against(&mut e, &want);
            assert_eq!(report.updates, SHAPE.num_messages(), "each message once");
            assert!(worst < 1e-6, "iteration {iteration}: differs by {worst}");
        }
    }

    #[test]
    fn a_message_without_a_finite_norm_stops_the_run_and_keeps_the_messages() {
        let mut e = engine(0.5, Schedule::Synchronous);
        e.step().unwrap();
        let dim = e.dim;
        let poisoned = SHAPE.incoming_slot(45, layout::RIGHT).unwrap();
        e.messages[poisoned * dim..(poisoned + 1) * dim].fill(f32::NAN);
        let before: Vec<u32> = e.messages.iter().map(|v| v.to_bits()).collect();
        let err = e.step().unwrap_err().to_string();
        assert!(
            err.contains("no finite norm") && err.contains("->"),
            "{err}"
        );
        let after: Vec<u32> = e.messages.iter().map(|v| v.to_bits()).collect();
        assert_eq!(
            before, after,
            "a failed step must leave the messages as they were"
        );
        assert_eq!(e.iteration(), 1);
    }

    #[test]
    fn chunked_estimates_equal_each_pixels_belief() {
        let mut e = engine(0.5, Schedule::Synchronous);
        e.step().unwrap();
        let estimates = e.estimates(EstimateKind::Map).values;
        for t in [0, 19, 45, 210, 399] {
            let b = e.candidate_belief(t);
            let best = (0..b.len()).fold(0, |i, j| if b[j] > b[i] { j } else { i });
            assert_eq!(estimates[t], e.candidates[best], "pixel {t}");
        }
    }

    /// The set-up shortcut (one product per degree) against the general path (one per
    /// message), for both estimates and for ordinary and tree-reweighted beliefs.
    #[test]
    fn set_up_estimates_equal_the_general_path_before_any_iteration() {
        for rho in [1.0, 0.6] {
            let e = engine(0.5, Schedule::Synchronous)
                .with_edge_appearance(rho)
                .unwrap();
            for kind in [EstimateKind::Map, EstimateKind::Mean] {
                let general = e.estimates(kind).values;
                let shortcut = e.set_up_estimates(kind).unwrap();
                for (t, (a, b)) in general.iter().zip(&shortcut).enumerate() {
                    assert!(
                        (a - b).abs() <= 1e-9 * a.abs().max(1.0),
                        "pixel {t}: {a} vs {b}"
                    );
                }
                let distinct = general
                    .iter()
                    .map(|v| v.to_bits())
                    .collect::<std::collections::BTreeSet<_>>();
                assert!(
                    distinct.len() > 3,
                    "the evidence makes the estimates differ"
                );
            }
        }
    }

    /// A raised flag stops the set-up of the messages and of the estimates.
    #[test]
    fn a_raised_flag_stops_the_set_up() {
        let e = engine(0.5, Schedule::Synchronous);
        let flag = CancelFlag::default();
        flag.cancel();
        let rebuilt = KbpEngine::new_interruptible(
            e.shared_model(),
            e.shape,
            e.evidence.as_ref().map(|ev| ev.table.clone()),
            e.candidates.clone(),
            e.schedule,
            Damping(0.5),
            Some(flag.clone()),
        );
        assert!(matches!(rebuilt, Err(Error::Cancelled)));
        let mut e = e;
        e.set_interrupt(flag);
        assert!(matches!(
            e.set_up_estimates(EstimateKind::Map),
            Err(Error::Cancelled)
        ));
    }
}
