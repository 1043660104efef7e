//! KJIT: kernel-based just-in-time learning of EP messages (Jitkrittum, Gretton, Heess, Eslami,
//! Lakshminarayanan, Sejdinovic, Szabó, UAI 2015), Secs. 2–3, Eqs. (1)–(17) of the main paper,
//! and Supp A–B of its supplement. EP for Bayesian logistic
//! regression ([`ep_logistic`]) hosts the logistic factor through one of three operators
//! ([`operator`]): Gauss–Hermite quadrature ([`quadrature`], the reference), the
//! importance-sampling oracle of eq. (2) ([`oracle`]), or KJIT: the kernel on incoming
//! messages ([`embedding`], eqs. 5–8, Alg. 1), Bayesian linear regression per output
//! ([`blr`], eqs. 9–17) and the uncertainty gate ([`learner`]). Costs are stated per module.

pub mod blr;
pub mod compound_gamma;
pub mod embedding;
pub mod ep_logistic;
pub mod ep_schedule;
pub mod feature_maps;
pub mod gauss_hermite;
pub mod learner;
pub mod loo_ridge;
pub mod messages;
pub mod mixture_sampler;
pub mod operator;
pub mod oracle;
pub mod quadrature;

pub use ep_logistic::LogisticEp;
pub use learner::{JitLearner, JitSettings};
pub use messages::{Beta, Gaussian, LogisticTuple, ProjectedBeliefs};
pub use operator::{KjitOperator, SamplingOperator, ZProjection};
pub use oracle::ImportanceOracle;
pub use quadrature::QuadratureProjection;
