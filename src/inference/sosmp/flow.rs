//! SOSMP for optical flow (Noorshams & Wainwright 2013, Sec. 5.2): the flow MRF of
//! [`crate::model::flow`] on the displacement box `[-d, d]²` ([`BoxGrid`], the label lattice as
//! quadrature grid), with the tensor Fourier basis (`r = m²`, the paper's `r = 9` is `m = 3`).
//! Everything else is the generic engine: node potentials are computed from the frames when a
//! pixel is updated, the edge potentials are shifted Gaussians (one γ table per distinct shift
//! and direction; a single symmetric table without a pyramid), and an iteration is synchronous
//! and parallel over pixels.
//!
//! ```
//! use beliefscope::inference::sosmp::flow::flow_problem;
//! use beliefscope::inference::sosmp::grid::StateGrid;
//! use beliefscope::io::GrayImage;
//! use beliefscope::model::flow::{FlowEvidence, FlowLabels, FlowMrf};
//! use beliefscope::scenarios::CancelFlag;
//!
//! let frame = GrayImage { width: 4, height: 3, pixels: (0..12).map(|i| (i * 20) as f64).collect() };
//! let labels = FlowLabels::new(1.0, 2).unwrap();
//! let evidence = FlowEvidence::new(&frame, &frame, labels, 10.0, None).unwrap();
//! let mrf = FlowMrf::new(evidence, 0.5).unwrap();
//! let problem = flow_problem(&mrf, 3, &CancelFlag::default()).unwrap();
//! assert_eq!((problem.r(), problem.mrf.grid.len()), (9, 25));
//! assert_eq!(problem.tables.num_tables(), 1);
//! ```

use std::sync::Arc;

use super::SosmpProblem;
use super::basis::{BasisKind, GridBasis};
use super::box_grid::{BoxGrid, ShiftedGaussianPotential};
use super::grid::StateGrid;
use super::model::{GridMrf, NodePotentials};
use super::potentials::PairPotential;
use crate::error::Result;
use crate::model::flow::FlowMrf;
use crate::run::CancelFlag;

/// The box grid of a flow MRF's labels.
pub fn flow_grid(mrf: &FlowMrf) -> Result<BoxGrid> {
    BoxGrid::square(
        mrf.labels.half() as f64 * mrf.labels.step(),
        mrf.labels.per_axis(),
    )
}

/// The SOSMP problem of a flow MRF with the `side x side` tensor Fourier basis. Set-up
/// O(shifts · n² r) for the γ tables plus one evaluation of every node potential (the check).
pub fn flow_problem(
    mrf: &FlowMrf,
    side: usize,
    cancel: &CancelFlag,
) -> Result<SosmpProblem<BoxGrid>> {
    let grid = flow_grid(mrf)?;
    let basis = GridBasis::tensor(BasisKind::Fourier, side, &grid)?;
    let (distinct, edge_potential) = mrf.shift_classes();
    let pair_potentials = distinct
        .iter()
        .map(|&s| {
            ShiftedGaussianPotential::new(&grid, mrf.sigma_smooth, s)
                .and_then(|p| p.with_outlier(mrf.smooth_outlier))
                .map(|p| Arc::new(p) as Arc<dyn PairPotential>)
        })
        .collect::<Result<Vec<_>>>()?;
    cancel.check()?;
    let gm = GridMrf {
        graph: mrf.graph.clone(),
        grid,
        node_potentials: NodePotentials::Computed(mrf.evidence.clone()),
        edge_potential,
        pair_potentials,
    };
    SosmpProblem::new(gm, basis, cancel)
}

/// The uniform message `1/V` on the box (coefficients `(1/√V, 0, ..., 0)` of the tensor Fourier
/// basis, whose first function is the constant `1/√V`): the start of every flow message.
pub fn uniform_start(problem: &SosmpProblem<BoxGrid>) -> Vec<f64> {
    let mut a = vec![0.0; problem.r()];
    a[0] = 1.0 / problem.mrf.grid.volume().sqrt();
    a
}
