//! The kjit scenario's settings (defaults: Exp. 3 of Jitkrittum et al. 2015 with n = 300 and 30
//! problems, as the authors' C# code and the paper's plot) and their parameter table.

use serde::{Deserialize, Serialize};

use super::batch::BatchSettings;
use super::sites::SitesSettings;
use super::teaching::TeachingSettings;
use super::uci::UciSettings;
use crate::error::{Error, Result};
use crate::inference::kjit::JitSettings;
use crate::run::budget::MemoryNeed;
use crate::scenarios::ScenarioParams;
use crate::scenarios::params::{Param, check_table, names_of};

/// Which experiment of Jitkrittum et al. 2015 runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "kebab-case")]
#[derive(strum::IntoStaticStr)]
#[strum(serialize_all = "kebab-case")]
pub enum Experiment {
    /// Supp B.3 / B.6: random-feature quality against the exact kernel.
    Rff,
    /// Exp. 1 / Supp C: batch learning, the log-KL table.
    Batch,
    /// Exp. 2: log predictive variance along the two test curves.
    Uncertainty,
    /// Exp. 3: 30 logistic-regression problems in sequence (the default).
    #[default]
    Logistic,
    /// Exp. 4: compound gamma.
    CompoundGamma,
    /// Exp. 5: the four UCI data sets.
    Uci,
    /// A d = 2 problem, one EP site update per step (the room's teaching mode).
    Teaching,
    /// One problem, one EP sweep per step under a chosen site schedule: the convergence
    /// debugger on EP's sites.
    Sites,
}

impl Experiment {
    /// Its name in configs, results.json and on the command line.
    pub fn name(self) -> &'static str {
        self.into()
    }
}

/// The settings of Exp. 4 (compound gamma, main Fig. 7; the authors' class defaults).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct GammaSettings {
    pub problems: usize,
    pub tau: f64,
    pub minibatch: usize,
    pub d_in: usize,
    pub d_out: usize,
}

impl Default for GammaSettings {
    fn default() -> Self {
        GammaSettings {
            problems: 1500,
            tau: -6.0,
            minibatch: 20,
            d_in: 400,
            d_out: 800,
        }
    }
}

/// A threshold set while the run went on (τ changes take effect at once, without
/// relearning), applied from problem `from_problem` (0-based) of Exps. 3 and 5.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct TauChange {
    pub from_problem: usize,
    pub tau: f64,
}

/// Every parameter of a kjit run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct KjitConfig {
    pub experiment: Experiment,
    /// One seed for the true w, the data, the test points, the particles and the features.
    pub seed: u64,
    /// Problems in sequence (one iteration each).
    pub problems: usize,
    /// Examples per problem (n) and their dimension (d).
    pub examples: usize,
    pub dim: usize,
    /// EP sweeps per problem.
    pub ep_iterations: usize,
    /// EP damping ρ (1 = none).
    pub damping: f64,
    /// Fresh points for the classification error.
    pub test_points: usize,
    /// M, particles of the importance-sampling oracle (paper: 5e5).
    pub particles: usize,
    /// Gauss–Hermite nodes of the reference projection.
    pub quadrature_nodes: usize,
    /// Whether sampling EP (the all-oracle baseline) runs beside KJIT and quadrature.
    pub run_sampling: bool,
    /// τ: the oracle is called when log predictive variance ≥ τ.
    pub tau: f64,
    /// B: oracle calls before the first fit.
    pub minibatch: usize,
    pub d_in: usize,
    pub d_out: usize,
    /// γ² = median_factor × median (0.5 as the authors' code; 1 as Supp A's text).
    pub median_factor: f64,
    /// σ_y², the regression's output noise.
    pub sigma_y2: f64,
    /// σ₀², the regression's prior weight variance.
    pub sigma0_2: f64,
    /// Exp. 4's own problem count, threshold, minibatch and features.
    pub compound_gamma: GammaSettings,
    /// Exp. 1 / Exp. 2's data sets, split and feature counts.
    pub batch: BatchSettings,
    /// Exp. 5's folder, training sizes, threshold, minibatch and features.
    pub uci: UciSettings,
    /// The d = 2 teaching mode's sizes.
    pub teaching: TeachingSettings,
    /// The EP-sites experiment's problem, schedule and damping.
    pub sites: SitesSettings,
    /// Thresholds changed during the run (Exps. 3, 5), so the config reproduces it.
    pub tau_changes: Vec<TauChange>,
    /// Problems before which KJIT's learners were reset during the run (Exps. 3, 5).
    pub operator_resets: Vec<usize>,
}

impl Default for KjitConfig {
    fn default() -> Self {
        KjitConfig {
            experiment: Experiment::Logistic,
            seed: 1,
            problems: 30,
            examples: 300,
            dim: 20,
            ep_iterations: 10,
            damping: 1.0,
            test_points: 10_000,
            particles: 50_000,
            quadrature_nodes: 200,
            run_sampling: true,
            tau: -8.5,
            minibatch: 300,
            d_in: 300,
            d_out: 500,
            median_factor: 0.5,
            sigma_y2: 1e-4,
            sigma0_2: 1.0,
            compound_gamma: GammaSettings::default(),
            batch: BatchSettings::default(),
            uci: UciSettings::default(),
            teaching: TeachingSettings::default(),
            sites: SitesSettings::default(),
            tau_changes: Vec::new(),
            operator_resets: Vec::new(),
        }
    }
}

/// The tunable numbers, described once.
pub const PARAMS: &[Param] = &[
    Param::int("problems", "Problems", 1.0, 10_000.0).help(
        "Logistic problems in sequence (--problems sets the selected experiment's own: \
         compound_gamma.problems, teaching.problems; batch, uncertainty and uci ignore it).",
    ),
    Param::int("examples", "Examples n", 2.0, 100_000.0)
        .log()
        .help("Examples per problem."),
    Param::int("dim", "Dimension d", 1.0, 1000.0).help("Input dimension (no bias)."),
    Param::int("ep_iterations", "EP sweeps", 1.0, 1000.0)
        .help("EP sweeps per problem (paper: 10)."),
    Param::real("damping", "Damping ρ", 0.01, 1.0).help("EP site damping (1 = none)."),
    Param::int("test_points", "Test points", 1.0, 10_000_000.0)
        .log()
        .help("Fresh x for the classification error."),
    Param::int("particles", "Particles M", 100.0, 10_000_000.0)
        .log()
        .help("Importance-sampling particles (paper: 5e5)."),
    Param::int("quadrature_nodes", "Gauss-Hermite nodes", 100.0, 400.0)
        .help("Nodes of the reference projection."),
    Param::real("tau", "Threshold τ", -9.2, 10.0).help(
        "Oracle when log predictive variance ≥ τ (must exceed log σ_y²); --tau sets the \
             selected experiment's own (compound_gamma.tau, uci.tau).",
    ),
    Param::int("minibatch", "Minibatch B", 2.0, 100_000.0)
        .log()
        .help("Oracle calls before the first fit."),
    Param::int("d_in", "D_in", 1.0, 10_000.0)
        .log()
        .flag("din")
        .help(
            "First-stage random features; --din sets the selected experiment's own \
             (compound_gamma.d_in, uci.d_in, batch.d_in).",
        ),
    Param::int("d_out", "D_out", 1.0, 10_000.0)
        .log()
        .flag("dout")
        .help(
            "Second-stage random features; --dout sets the selected experiment's own \
             (compound_gamma.d_out, uci.d_out, batch.d_out).",
        ),
    Param::real("median_factor", "Median factor", 1e-3, 1e3)
        .log()
        .help("γ² = factor × median (code 0.5; Supp A text 1)."),
    Param::real("sigma_y2", "σ_y²", 1e-12, 1e3)
        .log()
        .help("Regression output noise variance."),
    Param::real("sigma0_2", "σ₀²", 1e-6, 1e6)
        .log()
        .help("Regression prior weight variance."),
    Param::int(
        "compound_gamma.problems",
        "Problems (Exp. 4)",
        1.0,
        100_000.0,
    )
    .log()
    .help("Compound-gamma problems, one message each."),
    Param::real("compound_gamma.tau", "Threshold τ (Exp. 4)", -9.2, 10.0)
        .help("Exp. 4's oracle threshold (paper: -6)."),
    Param::int(
        "compound_gamma.minibatch",
        "Minibatch B (Exp. 4)",
        2.0,
        100_000.0,
    )
    .log()
    .help("Exp. 4's minibatch (paper: 20)."),
    Param::int("compound_gamma.d_in", "D_in (Exp. 4)", 1.0, 10_000.0)
        .log()
        .help("First-stage random features of the compound-gamma operator."),
    Param::int("compound_gamma.d_out", "D_out (Exp. 4)", 1.0, 10_000.0)
        .log()
        .help("Second-stage random features of the compound-gamma operator."),
    Param::int("batch.datasets", "Data sets (Exp. 1)", 1.0, 1000.0)
        .help("Synthetic problems whose EP tuples are pooled (paper: 20)."),
    Param::int("batch.examples", "Examples n (Exp. 1)", 2.0, 100_000.0)
        .log()
        .help("Examples per data set (paper: 300)."),
    Param::int("batch.dim", "Dimension d (Exp. 1)", 1.0, 1000.0)
        .help("Input dimension of the batch problems (without the intercept)."),
    Param::int("batch.ep_iterations", "EP sweeps (Exp. 1)", 1.0, 1000.0)
        .help("EP sweeps per batch problem."),
    Param::int(
        "batch.record_iterations",
        "Recorded sweeps (Exp. 1)",
        1.0,
        1000.0,
    )
    .help("Tuples come from the first this-many sweeps (paper: 5)."),
    Param::int("batch.train", "Training tuples (Exp. 1)", 10.0, 100_000.0)
        .log()
        .help("Paper: 5000."),
    Param::int("batch.test", "Test tuples (Exp. 1)", 1.0, 100_000.0)
        .log()
        .help("Paper: 3000."),
    Param::int(
        "batch.select_d_in",
        "D_in for selection (Exp. 1)",
        1.0,
        10_000.0,
    )
    .log()
    .help("First-stage random features of the leave-one-out selection of the kernel parameters."),
    Param::int(
        "batch.select_d_out",
        "D_out for selection (Exp. 1)",
        4.0,
        10_000.0,
    )
    .log()
    .help("Second-stage random features of the leave-one-out selection of the kernel parameters."),
    Param::int("batch.d_in", "D_in (Exp. 1)", 1.0, 10_000.0)
        .log()
        .help("Final first-stage features (paper: 500)."),
    Param::int("batch.d_out", "D_out (Exp. 1)", 4.0, 10_000.0)
        .log()
        .help("Final second-stage features (paper: 1000)."),
    Param::switch("batch.bias", "Intercept (Exp. 1)").help(
        "Adds a constant input with weight b ~ N(0, 1), as the authors' message collection did.",
    ),
    Param::int(
        "batch.truth_particles",
        "Sampled targets (Exp. 1)",
        0.0,
        10_000_000.0,
    )
    .help(
        "0: the targets are the exact (quadrature) belief. Otherwise they are importance-sampled with this many fresh draws per tuple, as the authors' ground truth (1e5).",
    ),
    Param::int("uci.train", "Training examples (Exp. 5)", 2.0, 100_000.0)
        .log()
        .help("Stratified training subsample per data set (paper: 200)."),
    Param::int(
        "uci.fertility_train",
        "Fertility training (Exp. 5)",
        2.0,
        99.0,
    )
    .help("Fertility has 100 rows (paper: 50)."),
    Param::real("uci.tau", "Threshold τ (Exp. 5)", -9.2, 10.0).help("Code: -8.95; paper text: -9."),
    Param::int("uci.minibatch", "Minibatch B (Exp. 5)", 2.0, 100_000.0)
        .log()
        .help("Oracle calls before the first fit (Exp. 5)."),
    Param::int("uci.d_in", "D_in (Exp. 5)", 1.0, 10_000.0)
        .log()
        .help("Code: 400; paper text: 300 (as Exp. 3)."),
    Param::int("uci.d_out", "D_out (Exp. 5)", 1.0, 10_000.0)
        .log()
        .help("Code: 800; paper text: 500 (as Exp. 3)."),
    Param::int("teaching.examples", "Examples (teaching)", 2.0, 1000.0)
        .help("Points of each d = 2 problem."),
    Param::int("teaching.problems", "Problems (teaching)", 1.0, 100.0)
        .help("Logistic problems the teaching run steps through."),
    Param::int("teaching.sweeps", "EP sweeps (teaching)", 1.0, 100.0)
        .help("EP sweeps per teaching problem."),
    Param::int(
        "teaching.minibatch",
        "Minibatch B (teaching)",
        2.0,
        10_000.0,
    )
    .log()
    .help("Oracle calls before KJIT's first fit."),
    Param::int("sites.examples", "Sites n (EP sites)", 2.0, 2000.0)
        .log()
        .help("Examples of the one problem, one EP site each."),
    Param::int("sites.dim", "Dimension d (EP sites)", 1.0, 100.0)
        .help("Input dimension of the EP-sites problem (no bias)."),
    Param::int("sites.sweeps", "EP sweeps (EP sites)", 1.0, 100_000.0)
        .log()
        .help("Sweeps at most (one iteration each)."),
    Param::real("sites.tolerance", "Tolerance (EP sites)", 1e-15, 1.0)
        .log()
        .help("Stop once no site's (τ, ν) moves by more than this in a sweep."),
    Param::real("sites.damping", "Damping (EP sites)", 0.0, 0.99)
        .help("new = d·old + (1 − d)·update on the sites' natural parameters (0 = none)."),
    Param::real(
        "sites.correlation",
        "Input correlation (EP sites)",
        0.0,
        0.999,
    )
    .help("Correlation between the input dimensions."),
    Param::real("sites.weight_scale", "Weight scale (EP sites)", 0.01, 100.0)
        .log()
        .help("Scale of the true w: large values make the classes nearly separable."),
    Param::value("experiment", "Experiment")
        .help("Which experiment of Jitkrittum et al. 2015 runs."),
    Param::value("seed", "Seed").help("Seed of w, data, test points, particles and features."),
    Param::value("uci.dir", "UCI folder")
        .flag("uci-dir")
        .help("Folder of the four UCI files of Exp. 5."),
    Param::choice(
        "sites.schedule",
        "Site schedule",
        names_of::<crate::inference::Schedule>,
    )
    .flag("schedule")
    .help(
        "The order of EP's site updates in a sweep of the sites experiment (sequential is sweep).",
    ),
    Param::value("sites.operator", "Projection")
        .flag("operator")
        .help("What hosts the logistic factor in the sites experiment."),
];

impl KjitConfig {
    /// The number of iterations (problems) of the selected experiment.
    pub fn iterations(&self) -> usize {
        match self.experiment {
            Experiment::CompoundGamma => self.compound_gamma.problems,
            Experiment::Rff => super::rff::RffLab::steps(),
            Experiment::Batch => super::batch::BatchLab::steps(&self.batch, 5),
            Experiment::Uncertainty => super::batch::BatchLab::steps(&self.batch, 1),
            Experiment::Uci => crate::io::uci::UCI_FILES.len(),
            Experiment::Teaching => self.teaching.steps(),
            Experiment::Logistic => self.problems,
            Experiment::Sites => self.sites.sweeps,
        }
    }

    /// Exp. 5's learner settings (the code's features, threshold and minibatch).
    pub fn uci_jit_settings(&self, features_seed: u64) -> JitSettings {
        JitSettings {
            minibatch: self.uci.minibatch,
            tau: self.uci.tau,
            d_in: self.uci.d_in,
            d_out: self.uci.d_out,
            ..self.jit_settings(features_seed)
        }
    }

    /// The learner's settings (features seeded from `features_seed`).
    pub fn jit_settings(&self, features_seed: u64) -> JitSettings {
        JitSettings {
            minibatch: self.minibatch,
            tau: self.tau,
            d_in: self.d_in,
            d_out: self.d_out,
            median_factor: self.median_factor,
            weight_var: self.sigma0_2,
            noise_var: self.sigma_y2,
            seed: features_seed,
        }
    }
}

impl ScenarioParams for KjitConfig {
    const PARAMS: &'static [Param] = PARAMS;

    /// An iteration is one problem (or one step of a lab): about 0.75 s with the default
    /// 5 x 10^4 sampling-EP particles, in proportion to the particles.
    fn time_need(&self) -> Option<crate::run::time_need::TimeNeed> {
        let per = 0.75 * (self.particles as f64 / 5e4).max(0.05);
        Some(crate::run::time_need::TimeNeed::scaled(
            0.05,
            per,
            self.iterations(),
        ))
    }

    fn check(&self) -> Result<()> {
        check_table(self, PARAMS)?;
        self.batch.check()?;
        self.sites.check()?;
        for change in &self.tau_changes {
            if !(change.tau > self.sigma_y2.ln() && change.tau.is_finite()) {
                return Err(Error::param(
                    "tau_changes",
                    format!(
                        "τ = {} from problem {} must exceed log sigma_y2 = {:.4}",
                        change.tau,
                        change.from_problem + 1,
                        self.sigma_y2.ln()
                    ),
                ));
            }
        }
        for (name, tau) in [
            ("tau", self.tau),
            ("compound_gamma.tau", self.compound_gamma.tau),
            ("uci.tau", self.uci.tau),
        ] {
            if tau <= self.sigma_y2.ln() {
                return Err(Error::param(
                    name,
                    format!(
                        "must exceed log sigma_y2 = {:.4}, else every call goes to the oracle; got {tau}",
                        self.sigma_y2.ln(),
                    ),
                ));
            }
        }
        Ok(())
    }

    /// The learner of the larger experiment: the D_out x D_in second-stage features, a
    /// D_out x D_out posterior per output (three outputs), the B stored answers; plus the
    /// logistic problem's examples and test points, the sampling EP's particles (several
    /// values each) and the quadrature nodes. Counted from the shapes in `inference::kjit`.
    fn memory_need(&self) -> Option<MemoryNeed> {
        let g = &self.compound_gamma;
        let (d_in, d_out, b) = [
            (self.d_in, self.d_out, self.minibatch),
            (g.d_in, g.d_out, g.minibatch),
        ]
        .into_iter()
        .map(|(i, o, b)| (i as f64, o as f64, b as f64))
        .max_by(|x, y| (x.1 * (x.0 + x.1)).total_cmp(&(y.1 * (y.0 + y.1))))
        .unwrap_or((0.0, 0.0, 0.0));
        let dim = self.dim as f64;
        // The shapes' counts are upper bounds: about half of them is resident at the peak
        // (measured with 5e4 and 5e5 particles).
        Some(
            MemoryNeed::new(format!("kjit with D_in {d_in} and D_out {d_out}"))
                .doubles(
                    "learned operator (features and per-output posteriors)",
                    0.5 * (2.0 * d_out * d_in + 4.0 * d_out * d_out + b * (d_in + d_out)),
                )
                .doubles(
                    "examples, test points and particles",
                    0.5 * (4.0 * self.examples as f64 * dim
                        + 2.0 * self.test_points as f64 * dim
                        + 8.0 * self.particles as f64),
                ),
        )
    }
}
