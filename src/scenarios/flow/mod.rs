//! Scenario `flow`: optical flow with two-dimensional SOSMP (Noorshams & Wainwright 2013,
//! Sec. 5.2) and discrete BP on the same MRF.

pub mod metrics;
pub mod synthetic;
