//! The parameters of an SOSMP run, and the model they describe (graph, potentials, grid,
//! basis), drawn reproducibly from the seed.

use std::sync::Arc;

use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};

use crate::error::labels::{Labelled, unknown};
use crate::error::{Error, Result};
use crate::inference::sosmp::basis::{BasisKind, GridBasis};
use crate::inference::sosmp::grid::{IntervalGrid, StateGrid};
use crate::inference::sosmp::model::GridMrf;
use crate::inference::sosmp::potentials::{
    ClipReport, DifferencePotential, GaussianMixture, MercerKernelPotential, MixtureForm,
    MixturePrior, PairPotential,
};
use crate::inference::sosmp::update::{MODEL_STREAM, stream_key};
use crate::inference::sosmp::{SosmpParams, SosmpProblem};
use crate::model::Graph;
use crate::run::budget::MemoryNeed;
use crate::scenarios::CancelFlag;
use crate::scenarios::ScenarioParams;
use crate::scenarios::params::{Param, check_table, names_of};

/// The tunable numbers of an SOSMP run, described once.
pub const PARAMS: &[Param] = &[
    Param::int("nodes", "Nodes", 2.0, 100_000.0)
        .log()
        .help(
            "Nodes of the chain or tree (a square number for a grid); `sweep sosmp` takes \
             several, e.g. 2,5,10,20,50,100 (the depth sweep).",
        ),
    Param::real("alpha", "α", 0.0, 10.0)
        .slider(0.05, 3.0).log().help(
            "Kernel eigenvalues j^-α (eq. 39): α = 1 is smooth, α = 0.1 nearly a delta function (not positive between grid nodes).",
        ),
    Param::int("kernel_terms", "Kernel terms", 1.0, 100_000.0)
        .log()
        .help("Terms of the kernel sum (eq. 39)."),
    Param::int("coefficients", "Coefficients r", 1.0, 200.0)
        .slider(1.0, 60.0)
        .help("Basis functions per message."),
    Param::int("samples", "Samples k", 1.0, 10_000.0)
        .slider(1.0, 50.0)
        .log()
        .help("Monte Carlo samples per message update."),
    Param::int("paths", "Paths", 1.0, 1000.0)
        .slider(1.0, 50.0)
        .help("Independent sample paths run side by side."),
    Param::int("iters", "Iterations T", 1.0, 1e7)
        .log()
        .help("Stop after this many iterations."),
    Param::real("step_gamma", "Step γ", 1e-3, 1.999)
        .slider(0.1, 1.99).help(
            "Step size η_t = 1 / (γ (t + 1)); γ = 1 is the tree rule, γ in (0, 2) for graphs with cycles (Theorem 2).",
        ),
    Param::real("points_per_unit", "Grid / unit", 1.0, 2000.0)
        .slider(10.0, 200.0)
        .log()
        .help("Quadrature points per unit length of the domain (the paper's reference uses 100)."),
    Param::choice("graph", "Graph", names_of::<GraphKind>).help(
        "chain: the paper's experiment; tree: a random recursive tree from the seed; grid: a \
         square 4-connected grid (loopy: set the step γ); custom: drawn in the explorer or read \
         from a config file, not the command line.",
    ),
    Param::choice("potentials", "Potentials", names_of::<PotentialKind>).help(
        "mixture: Gaussian mixtures (eq. 37); kernel: mixture node potentials with the \
         Mercer-kernel edge potential of eq. 39.",
    ),
    Param::choice("mixture_form", "Mixture form", names_of::<MixtureForm>).help(
        "eq37: the paper's unnormalised bumps π exp(−(x − μ)² / 2σ²), each of height π; \
         normalised: the densities π N(x; μ, σ²), taller and peakier for small σ².",
    ),
    Param::choice("basis", "Basis", names_of::<BasisKind>).help(
        "The orthogonal basis of the messages; none (auto): Fourier for mixtures, the Mercer \
         eigenbasis for kernels.",
    ),
    Param::value("seed", "Seed").help("Seed of the potentials and of the samples."),
    Param::value("domain", "Domain").help("Domain a,b, e.g. --domain=-5,5."),
    Param::choice("schedule", "Schedule", names_of::<crate::inference::Schedule>).help(
        "Message schedule (residual: residual BP, Elidan et al. 2006). SOSMP runs only \
         synchronous (refused otherwise).",
    ),
];

/// The graph an SOSMP run uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
#[derive(strum::VariantArray, strum::IntoStaticStr, strum::EnumString)]
#[strum(serialize_all = "lowercase", parse_err_ty = String, parse_err_fn = unknown::<Self>)]
pub enum GraphKind {
    /// The path `0 - 1 - ... - (n-1)` (the paper's experiments).
    #[default]
    Chain,
    /// A random recursive tree on n nodes drawn from the seed.
    Tree,
    /// A square 4-connected grid of n nodes (n must be a square); loopy, uses `step_gamma`.
    Grid,
    /// The edges listed in `edges` (for trees drawn or picked in the explorer).
    Custom,
}

impl Labelled for GraphKind {
    const WHAT: &str = "graph";
}

impl GraphKind {
    pub fn label(self) -> &'static str {
        self.into()
    }
}

/// Which potentials of the paper's experiments.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
#[derive(strum::VariantArray, strum::IntoStaticStr, strum::EnumString)]
#[strum(serialize_all = "lowercase", parse_err_ty = String, parse_err_fn = unknown::<Self>)]
pub enum PotentialKind {
    /// Gaussian mixtures, eq. 37.
    #[default]
    Mixture,
    /// Mixture node potentials with the Mercer-kernel edge potential of eq. 39.
    Kernel,
}

impl Labelled for PotentialKind {
    const WHAT: &str = "potentials";
}

impl PotentialKind {
    pub fn label(self) -> &'static str {
        self.into()
    }
}

pub use crate::inference::sosmp::potentials::{
    MAX_VARIANCE, MEAN_RANGE, MIN_SD_SPACINGS, MIXTURE_COMPONENTS,
};

/// Every parameter of an SOSMP run; echoed into results.json.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct SosmpConfig {
    pub graph: GraphKind,
    /// Number of nodes (a square for `grid`; ignored for `custom`, which uses `custom_nodes`).
    pub nodes: usize,
    /// Nodes of a `custom` graph.
    pub custom_nodes: usize,
    /// Edges of a `custom` graph.
    pub edges: Vec<[usize; 2]>,
    pub potentials: PotentialKind,
    /// The mixture components: eq. 37's unnormalised bumps (default) or normalised densities.
    pub mixture_form: MixtureForm,
    /// Decay of the kernel eigenvalues `j^{-α}` (kernel potentials).
    pub alpha: f64,
    /// Terms J of the kernel sum (eq. 39 uses 1000).
    pub kernel_terms: usize,
    /// The basis; `None` picks Fourier for mixtures and the Mercer eigenbasis for kernels.
    pub basis: Option<BasisKind>,
    /// Coefficients per message, r.
    pub coefficients: usize,
    /// Samples per update, k.
    pub samples: usize,
    /// Independent sample paths.
    pub paths: usize,
    /// Iterations T.
    pub iters: usize,
    /// γ of the step size `1/(γ (t+1))`; 1 is the tree rule.
    pub step_gamma: f64,
    pub seed: u64,
    /// The domain `[a, b]`.
    pub domain: [f64; 2],
    /// Quadrature points per unit length (100 as the paper's reference).
    pub points_per_unit: f64,
    /// Message schedule; SOSMP runs only `synchronous` (see `sosmp::check_schedule`), so the
    /// others are refused with the reason.
    pub schedule: crate::inference::Schedule,
}

impl Default for SosmpConfig {
    fn default() -> Self {
        SosmpConfig {
            graph: GraphKind::Chain,
            nodes: 100,
            custom_nodes: 0,
            edges: Vec::new(),
            potentials: PotentialKind::Mixture,
            mixture_form: MixtureForm::Eq37,
            alpha: 1.0,
            kernel_terms: 1000,
            basis: None,
            coefficients: 10,
            samples: 5,
            paths: 10,
            iters: 1000,
            step_gamma: 1.0,
            seed: 0,
            domain: [-5.0, 5.0],
            points_per_unit: 100.0,
            schedule: crate::inference::Schedule::Synchronous,
        }
    }
}

impl SosmpConfig {
    /// The basis actually used.
    pub fn basis_kind(&self) -> BasisKind {
        self.basis.unwrap_or(match self.potentials {
            PotentialKind::Mixture => BasisKind::Fourier,
            PotentialKind::Kernel => BasisKind::Mercer,
        })
    }

    /// The engine parameters.
    pub fn params(&self) -> SosmpParams {
        SosmpParams {
            samples: self.samples,
            paths: self.paths,
            step_gamma: self.step_gamma,
            seed: self.seed,
        }
    }

    /// The graph of this config.
    pub fn build_graph(&self) -> Result<Graph> {
        let g = match self.graph {
            GraphKind::Chain => Graph::chain(self.nodes)?,
            GraphKind::Tree => Graph::random_tree(self.nodes, self.seed)?,
            GraphKind::Grid => {
                let side = (self.nodes as f64).sqrt().round() as usize;
                Graph::grid(side, side)?
            }
            GraphKind::Custom => {
                let edges: Vec<(usize, usize)> = self.edges.iter().map(|e| (e[0], e[1])).collect();
                Graph::from_edges(self.custom_nodes, &edges)?
            }
        };
        if g.num_edges() == 0 {
            return Err(Error::param("graph", "has no edges, so no messages"));
        }
        Ok(g)
    }
}

/// What the potentials are, for results.json and the views.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ModelDescription {
    /// ψ_u of every node.
    pub node_mixtures: Vec<GaussianMixture>,
    /// ψ_uv of every undirected edge (graph order); empty for kernel potentials.
    pub edge_mixtures: Vec<GaussianMixture>,
    /// Where the kernel was clipped (kernel potentials only).
    pub kernel_clip: Option<ClipReport>,
    /// Variances raised to `min_variance`.
    pub clamped_variances: usize,
    pub min_variance: f64,
}

impl ModelDescription {
    /// A sentence for the window and results.json when the kernel is not positive.
    pub fn clip_warning(&self, alpha: f64) -> Option<String> {
        let c = self.kernel_clip?;
        let mut parts = Vec::new();
        if c.offgrid_negative_fraction > 0.0 {
            parts.push(format!(
                "the kernel potential (alpha = {alpha}) is negative between grid nodes on {:.1}% of \
                 the (off-node point, node) pairs (minimum {:.3}, maximum {:.3}): it oscillates on a scale \
                 finer than the grid, which samples it where the oscillations cancel",
                100.0 * c.offgrid_negative_fraction,
                c.offgrid_min_value,
                c.max_value
            ));
        }
        if c.clipped_fraction > 0.0 {
            parts.push(format!(
                "on the grid nodes it is below {:.3e} (1e-6 of its maximum; it vanishes on the \
                 boundary) on {:.2}% of the pairs (negative beyond rounding on {:.3}%, minimum \
                 {:.3e}) and is clipped there to that value",
                c.clip_value,
                100.0 * c.clipped_fraction,
                100.0 * c.negative_fraction,
                c.min_value
            ));
        }
        (!parts.is_empty()).then(|| parts.join("; "))
    }

    /// A sentence when variances were clamped.
    pub fn clamp_note(&self) -> Option<String> {
        (self.clamped_variances > 0).then(|| {
            format!(
                "{} mixture variance(s) below {:.2e} (sd = {MIN_SD_SPACINGS} grid spacings) were raised to it",
                self.clamped_variances, self.min_variance
            )
        })
    }
}

/// Edge mixtures, distinct pair potentials, the potential of each edge, the kernel's clipping.
type EdgeModel = (
    Vec<GaussianMixture>,
    Vec<Arc<dyn PairPotential>>,
    Vec<usize>,
    Option<ClipReport>,
);

/// Builds the grid, the potentials (from the seed), the basis and the precomputed tables.
pub fn build_problem(
    config: &SosmpConfig,
    cancel: &CancelFlag,
) -> Result<(SosmpProblem<IntervalGrid>, ModelDescription)> {
    config.check()?;
    let graph = config.build_graph()?;
    let grid =
        IntervalGrid::with_density(config.domain[0], config.domain[1], config.points_per_unit)?;
    let basis = GridBasis::on_interval(config.basis_kind(), config.coefficients, &grid)?;
    let mut rng = ChaCha8Rng::from_seed(stream_key(config.seed, MODEL_STREAM, 0, 0));
    let node_prior = MixturePrior::node_potentials(grid.spacing(), config.mixture_form);
    let min_variance = node_prior.min_variance;
    let edge_prior = MixturePrior {
        mean_range: 0.0,
        ..node_prior
    };
    let mut clamped = 0;
    let node_mixtures: Vec<GaussianMixture> = (0..graph.num_nodes())
        .map(|_| {
            let (m, c) = GaussianMixture::draw(&mut rng, &node_prior);
            clamped += c;
            m
        })
        .collect();
    let n = grid.len();
    let mut node_potentials = Vec::with_capacity(graph.num_nodes() * n);
    for m in &node_mixtures {
        node_potentials.extend(m.on_grid(&grid));
    }
    cancel.check()?;
    let (edge_mixtures, pair_potentials, edge_potential, kernel_clip): EdgeModel = match config
        .potentials
    {
        PotentialKind::Mixture => {
            let mixtures: Vec<GaussianMixture> = (0..graph.num_edges())
                .map(|_| {
                    let (m, c) = GaussianMixture::draw(&mut rng, &edge_prior);
                    clamped += c;
                    m
                })
                .collect();
            let pots: Vec<Arc<dyn PairPotential>> = mixtures
                .iter()
                .map(|m| {
                    Arc::new(DifferencePotential::from_mixture(&grid, m)) as Arc<dyn PairPotential>
                })
                .collect();
            let idx = (0..graph.num_edges()).collect();
            (mixtures, pots, idx, None)
        }
        PotentialKind::Kernel => {
            let k = MercerKernelPotential::new(&grid, config.alpha, config.kernel_terms)?;
            let report = k.clip_report();
            (
                Vec::new(),
                vec![Arc::new(k) as Arc<dyn PairPotential>],
                vec![0; graph.num_edges()],
                Some(report),
            )
        }
    };
    let mrf = GridMrf {
        graph,
        grid,
        node_potentials: node_potentials.into(),
        edge_potential,
        pair_potentials,
    };
    let problem = SosmpProblem::new(mrf, basis, cancel)?;
    Ok((
        problem,
        ModelDescription {
            node_mixtures,
            edge_mixtures,
            kernel_clip,
            clamped_variances: clamped,
            min_variance,
        },
    ))
}

impl ScenarioParams for SosmpConfig {
    const PARAMS: &'static [Param] = PARAMS;

    /// About 1.8 µs per node and per coefficient-or-sample (r + k) an iteration, set-up about
    /// 2 ms per node; measured on chains of 100 and 200 nodes.
    fn time_need(&self) -> Option<crate::run::time_need::TimeNeed> {
        let nodes = match self.graph {
            GraphKind::Custom => self.custom_nodes,
            _ => self.nodes,
        } as f64;
        let width = (self.coefficients + self.samples) as f64;
        Some(crate::run::time_need::TimeNeed::scaled(
            0.1 + 2.2e-3 * nodes,
            1.8e-6 * nodes * width * (1.0 + 0.1 * self.paths as f64),
            self.iters,
        ))
    }

    /// Checks every parameter before any data is made.
    fn check(&self) -> Result<()> {
        match self.graph {
            GraphKind::Custom if self.custom_nodes == 0 => {
                return Err(Error::param("custom_nodes", "a custom graph needs nodes"));
            }
            GraphKind::Grid => {
                let side = (self.nodes as f64).sqrt().round() as usize;
                if side * side != self.nodes || side < 2 {
                    return Err(Error::param(
                        "nodes",
                        format!(
                            "a grid needs a square number of nodes (4, 9, 25, 100, ...), got {}",
                            self.nodes
                        ),
                    ));
                }
            }
            _ => {}
        }
        if !(2..=100_000).contains(&self.nodes) && self.graph != GraphKind::Custom {
            return Err(Error::param(
                "nodes",
                format!("must be between 2 and 100000, got {}", self.nodes),
            ));
        }
        check_table(self, PARAMS)?;
        let [a, b] = self.domain;
        if !(a.is_finite() && b.is_finite() && a < b) {
            return Err(Error::param(
                "domain",
                format!("needs finite a < b, got [{a}, {b}]"),
            ));
        }
        if self.potentials == PotentialKind::Mixture && (a > -MEAN_RANGE || b < MEAN_RANGE) {
            return Err(Error::param(
                "domain",
                format!(
                    "mixture means are drawn in [-{MEAN_RANGE}, {MEAN_RANGE}]; the domain [{a}, {b}] must contain it"
                ),
            ));
        }
        self.params().check()?;
        crate::inference::sosmp::check_schedule(self.schedule)?;
        if self.coefficients == 0 {
            return Err(Error::param("coefficients", "must be at least 1"));
        }
        Ok(())
    }

    /// Per directed message and grid point: its γ table row (r values, one table per edge with
    /// the symmetric potentials drawn here, so r/2 per message), β, the grid-BP reference message
    /// and its sweep buffers, the expected update's fixed point, the gains: about 8 + 0.65 r
    /// values, fitted to the peak RSS of chains of 100-10000 nodes (r = 10 and 40, 251 and 1001
    /// grid points). Plus the sample paths' coefficients and samples.
    fn memory_need(&self) -> Option<MemoryNeed> {
        let nodes = match self.graph {
            GraphKind::Custom => self.custom_nodes,
            _ => self.nodes,
        } as f64;
        let edges = match self.graph {
            GraphKind::Grid => 2.0 * nodes,
            GraphKind::Custom => self.edges.len() as f64,
            _ => nodes - 1.0,
        };
        let messages = 2.0 * edges;
        let n = ((self.domain[1] - self.domain[0]) * self.points_per_unit).round() + 1.0;
        let r = self.coefficients as f64;
        let k = self.samples as f64;
        Some(
            MemoryNeed::new(format!(
                "sosmp with {} nodes, {n} grid points and r = {}",
                nodes, self.coefficients
            ))
            .doubles(
                "per-message tables (γ, β, the grid-BP reference)",
                messages * n * (8.0 + 0.65 * r),
            )
            .doubles("node potentials", nodes * n)
            .doubles("sample paths", self.paths as f64 * messages * (2.0 * r + k))
            .bytes(
                "the debugger's stored message frames (capped)",
                stored_frames_bytes(self.iters as f64, messages, r),
            ),
        )
    }
}

/// Bytes of the convergence debugger's per-iteration message frames (each message's change, its
/// oscillation flag and its r coefficients as f32, `run::edge_frames`), which thin out past
/// [`EDGE_BUDGET_BYTES`](crate::run::residuals::EDGE_BUDGET_BYTES): at most the budget plus the
/// frame that crosses it.
fn stored_frames_bytes(iterations: f64, messages: f64, r: f64) -> f64 {
    let frame = messages * (4.0 + 1.0 + 4.0 * r);
    (iterations * frame).min(crate::run::residuals::EDGE_BUDGET_BYTES as f64 + frame)
}
