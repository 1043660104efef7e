//! Teaching mode's continuous models, on the same small graphs as the discrete ones
//! ([`super::models::shape`]):
//!
//! * Gaussian messages: `φ_t(x) = N(x; μ_t, 1)` with `μ_t = 2 · field · z_t`, `z_t ~ N(0, 1)`
//!   (seeded), and `ψ_st(x_s, x_t) = exp(-|c| (x_s − sgn(c) x_t)² / 2)` for the coupling `c`
//!   (positive: neighbours pulled together; negative: towards opposite signs). The stand-in's
//!   observed variables get tight node factors (standard deviation 0.2) around their `μ_t`.
//!   Exact marginals from the joint's covariance ([`ScalarGaussianMrf::exact`]).
//! * Series messages: the SOSMP experiment's model (Noorshams & Wainwright 2013, eq. 37) on
//!   `[-5, 5]` with 20 grid points per unit: node potentials are mixtures of three Gaussian bumps
//!   (means uniform in `[-3, 3]`, variances uniform in `(0, 0.5]`, raised to 3 grid spacings),
//!   edge potentials centred mixtures of the same kind in `x_s − x_t`, all drawn from the seed;
//!   the stand-in's observed variables get one bump (variance 0.3, wide enough for the default ten Fourier coefficients). Fourier basis with
//!   `coefficients` terms. The reference is grid BP on the same quadrature grid (the paper's
//!   "numerical integration" reference, [`grid_bp`]); SOSMP's approximation floor `a_∞` (the
//!   fixed point of its expected update, [`expected_fixed_point`]) is shown beside it.
//!
//! Cost: Gaussian O(n³) for the covariance; series O(n_grid² r) for the γ tables and
//! O(sweeps · |E→| · n_grid²) for grid BP (a few milliseconds at this size).

use std::sync::Arc;

use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use rand_distr::{Distribution, StandardNormal};

use super::config::TeachConfig;
use super::models::Shape;
use crate::error::Result;
use crate::inference::message_stepper::ScalarGaussianMrf;
use crate::inference::sosmp::SosmpProblem;
use crate::inference::sosmp::basis::{BasisKind, GridBasis};
use crate::inference::sosmp::expected::expected_fixed_point;
use crate::inference::sosmp::grid::{IntervalGrid, StateGrid};
use crate::inference::sosmp::model::GridMrf;
use crate::inference::sosmp::potentials::{
    GaussianMixture, MixtureForm, MixturePrior, draw_difference_potentials,
};
use crate::inference::sosmp::reference::grid_bp;
use crate::inference::sosmp::update::belief_values;
use crate::run::CancelFlag;

const GAUSSIAN_KEY: u64 = 0x7eac_0004;
const SERIES_KEY: u64 = 0x7eac_0005;
/// Precision of an observed variable's node factor (standard deviation 0.2).
const OBSERVED_PRECISION: f64 = 25.0;
/// The series state space and its grid.
pub const SERIES_DOMAIN: (f64, f64) = (-5.0, 5.0);
const SERIES_POINTS_PER_UNIT: f64 = 20.0;
/// The observed variables' bump (series).
const OBSERVED_VARIANCE: f64 = 0.3;

/// The Gaussian model on `shape`, with its one-line description.
pub fn gaussian_model(config: &TeachConfig, shape: &Shape) -> (ScalarGaussianMrf, String) {
    let n = shape.graph.num_nodes();
    let mut rng = ChaCha8Rng::seed_from_u64(config.seed ^ GAUSSIAN_KEY);
    let means: Vec<f64> = (0..n)
        .map(|_| {
            let z: f64 = StandardNormal.sample(&mut rng);
            2.0 * config.field * z
        })
        .collect();
    let node_precision: Vec<f64> = (0..n)
        .map(|t| {
            if shape.observed[t] {
                OBSERVED_PRECISION
            } else {
                1.0
            }
        })
        .collect();
    let node_shift = means
        .iter()
        .zip(&node_precision)
        .map(|(m, a)| m * a)
        .collect();
    let e = shape.graph.num_edges();
    let sign = if config.coupling < 0.0 { -1.0 } else { 1.0 };
    let observed = shape.observed.iter().any(|&o| o);
    let description = format!(
        "{}: {n} Gaussian variables, node factors N(mu_t, 1) with mu_t = 2 x field x N(0, 1) (field {}){}, edge factors exp(-|c| (x_s - {}x_t)^2 / 2) with c = {}",
        config.graph.label(),
        config.field,
        if observed {
            ", observed D..H with sd 0.2"
        } else {
            ""
        },
        if sign < 0.0 { "(-1) " } else { "" },
        config.coupling
    );
    (
        ScalarGaussianMrf {
            graph: shape.graph.clone(),
            node_precision,
            node_shift,
            edge_strength: vec![config.coupling.abs(); e],
            edge_sign: vec![sign; e],
        },
        description,
    )
}

/// The series model: SOSMP's problem, the grid-BP reference beliefs and the beliefs at the
/// expected update's fixed point `a_∞`, all on the grid.
pub struct SeriesModel {
    pub problem: Arc<SosmpProblem<IntervalGrid>>,
    pub reference: Vec<Vec<f64>>,
    pub floor: Vec<Vec<f64>>,
    pub description: String,
}

pub fn series_model(
    config: &TeachConfig,
    shape: &Shape,
    cancel: &CancelFlag,
) -> Result<SeriesModel> {
    let grid =
        IntervalGrid::with_density(SERIES_DOMAIN.0, SERIES_DOMAIN.1, SERIES_POINTS_PER_UNIT)?;
    let basis = GridBasis::on_interval(BasisKind::Fourier, config.coefficients, &grid)?;
    let prior = MixturePrior::node_potentials(grid.spacing(), MixtureForm::Eq37);
    let mut rng = ChaCha8Rng::seed_from_u64(config.seed ^ SERIES_KEY);
    let graph = shape.graph.clone();
    let mut node_potentials = Vec::with_capacity(graph.num_nodes() * grid.len());
    for t in 0..graph.num_nodes() {
        let mut mixture = GaussianMixture::draw(&mut rng, &prior).0;
        if shape.observed[t] {
            mixture = GaussianMixture {
                weights: vec![1.0],
                means: vec![mixture.means[0]],
                variances: vec![OBSERVED_VARIANCE],
                form: MixtureForm::Eq37,
            };
        }
        node_potentials.extend(mixture.on_grid(&grid));
    }
    let pair_potentials = draw_difference_potentials(&mut rng, &prior, &grid, graph.num_edges());
    let mrf = GridMrf {
        edge_potential: (0..graph.num_edges()).collect(),
        graph,
        grid,
        node_potentials: node_potentials.into(),
        pair_potentials,
    };
    let problem = Arc::new(SosmpProblem::new(mrf, basis, cancel)?);
    let n = problem.mrf.grid.len();
    let nodes = problem.mrf.graph.num_nodes();
    let reference = grid_bp(&problem.mrf, 1e-12, 5000, cancel)?;
    let floor = expected_fixed_point(&problem, 1e-12, 5000, cancel)?;
    let r = problem.r();
    let floor_beliefs = (0..nodes)
        .map(|t| belief_values(&problem, |w| &floor.coefficients[w * r..(w + 1) * r], t))
        .collect();
    let description = format!(
        "{}: {nodes} continuous variables on [{}, {}] ({n} grid points), node and edge potentials mixtures of three Gaussian bumps (SOSMP paper, eq. 37){}; messages: {} Fourier coefficients, {} samples per update, seed {}",
        config.graph.label(),
        SERIES_DOMAIN.0,
        SERIES_DOMAIN.1,
        if shape.observed.iter().any(|&o| o) {
            ", observed D..H one bump (variance 0.3)"
        } else {
            ""
        },
        config.coefficients,
        config.samples,
        config.seed
    );
    Ok(SeriesModel {
        reference: (0..nodes)
            .map(|t| reference.beliefs[t * n..(t + 1) * n].to_vec())
            .collect(),
        floor: floor_beliefs,
        problem,
        description,
    })
}
