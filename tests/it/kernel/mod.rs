//! Kernels: bandwidths, Gram matrices, HSIC, low-rank factors and solves.

mod bandwidth;
mod gram;
mod hsic;
mod lowrank;
mod solve;
