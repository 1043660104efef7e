//! `beliefscope run sosmp` and `beliefscope sweep sosmp` flags.

use std::path::PathBuf;

use clap::Args;

use crate::error::{Error, Result};
use crate::inference::sosmp::basis::BasisKind;
use crate::inference::sosmp::potentials::MixtureForm;
use crate::io::write_atomic;
use crate::scenarios::CancelFlag;
use crate::scenarios::ScenarioParams;
use crate::scenarios::sosmp::sweep::{SweepProgress, sweeps_csv};
use crate::scenarios::sosmp::{
    GraphKind, PotentialKind, SosmpConfig, SweepParameter, SweepSpec, run_sweep,
};
use crate::scenarios::{OutputArgs, RunFlags};

/// The model and run flags shared by `run sosmp` and `sweep sosmp`.
#[derive(Debug, Clone, Args)]
pub struct SosmpModelArgs {
    #[arg(long)]
    pub graph: Option<GraphKind>,
    #[arg(long, value_delimiter = ',')]
    pub nodes: Vec<usize>,
    #[arg(long)]
    pub potentials: Option<PotentialKind>,
    #[arg(long)]
    pub mixture_form: Option<MixtureForm>,
    #[arg(long)]
    pub basis: Option<BasisKind>,
    #[arg(long)]
    pub iters: Option<usize>,
    #[arg(long)]
    pub paths: Option<usize>,
    #[arg(long)]
    pub step_gamma: Option<f64>,
    #[arg(long)]
    pub seed: Option<u64>,
    #[arg(long, value_delimiter = ',', allow_hyphen_values = true)]
    pub domain: Option<Vec<f64>>,
    #[arg(long)]
    pub points_per_unit: Option<f64>,
    #[arg(long)]
    pub kernel_terms: Option<usize>,
}

impl SosmpModelArgs {
    /// Sets `c` from the flags; `nodes` must be a single value (a list is a sweep's).
    fn apply(&self, c: &mut SosmpConfig) -> Result<()> {
        let d = SosmpConfig::default();
        c.graph = self.graph.unwrap_or(d.graph);
        c.nodes = match self.nodes.as_slice() {
            [] => d.nodes,
            [n] => *n,
            _ => {
                return Err(Error::param(
                    "nodes",
                    "give one value (a list such as 2,5,10 is for `sweep sosmp`)",
                ));
            }
        };
        c.potentials = self.potentials.unwrap_or(d.potentials);
        c.mixture_form = self.mixture_form.unwrap_or(d.mixture_form);
        c.basis = self.basis.or(d.basis);
        c.iters = self.iters.unwrap_or(d.iters);
        c.paths = self.paths.unwrap_or(d.paths);
        c.step_gamma = self.step_gamma.unwrap_or(d.step_gamma);
        c.seed = self.seed.unwrap_or(d.seed);
        if let Some(dom) = &self.domain {
            if dom.len() != 2 {
                return Err(Error::param("domain", "give two numbers: --domain=a,b"));
            }
            c.domain = [dom[0], dom[1]];
        }
        c.points_per_unit = self.points_per_unit.unwrap_or(d.points_per_unit);
        c.kernel_terms = self.kernel_terms.unwrap_or(d.kernel_terms);
        if c.graph == GraphKind::Custom {
            return Err(Error::param(
                "graph",
                "custom graphs come from the explorer or a config file, not the command line",
            ));
        }
        Ok(())
    }
}

#[derive(Debug, Clone, Args)]
pub struct SosmpArgs {
    #[command(flatten)]
    pub model: SosmpModelArgs,
    #[arg(long)]
    pub alpha: Option<f64>,
    #[arg(long)]
    pub coefficients: Option<usize>,
    #[arg(long)]
    pub samples: Option<usize>,
    #[arg(long)]
    pub schedule: Option<crate::inference::Schedule>,
    #[command(flatten)]
    pub output: OutputArgs,
}

impl SosmpArgs {}

/// `beliefscope sweep sosmp`: a flag with several comma-separated values is swept (each such
/// flag is its own sweep, the others at their base values); a single value sets the base.
#[derive(Debug, Clone, Args)]
pub struct SosmpSweepArgs {
    #[command(flatten)]
    pub model: SosmpModelArgs,
    /// r values, e.g. 2,3,5,10 (Fig. 6a; Fig. 8 is the final error against r).
    #[arg(long, value_delimiter = ',')]
    pub coefficients: Vec<usize>,
    /// k values, e.g. 1,2,5,10 (Fig. 6b).
    #[arg(long, value_delimiter = ',')]
    pub samples: Vec<usize>,
    /// alpha values, e.g. 0.1,1 (Fig. 7; switches to kernel potentials).
    #[arg(long, value_delimiter = ',')]
    pub alpha: Vec<f64>,
    /// Write sweep.csv (and sweep.json with the floors, slopes and final errors) into this
    /// folder; without it the CSV goes to stdout.
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
}

impl SosmpSweepArgs {
    /// The base config and the sweeps asked for.
    pub fn plan(&self) -> Result<(SosmpConfig, Vec<SweepSpec>)> {
        let mut base = SosmpConfig::default();
        // Several node counts are the depth sweep; the base keeps the first.
        let mut model = self.model.clone();
        let nodes = std::mem::take(&mut model.nodes);
        if let Some(&first) = nodes.first() {
            model.nodes = vec![first];
        }
        model.apply(&mut base)?;
        let mut specs = Vec::new();
        let mut push =
            |p: SweepParameter, values: Vec<f64>, base_set: &mut dyn FnMut(f64)| match values.len()
            {
                0 => {}
                1 => base_set(values[0]),
                _ => specs.push(SweepSpec {
                    parameter: p,
                    values,
                }),
            };
        let mut r = base.coefficients;
        let mut k = base.samples;
        let mut alpha = base.alpha;
        let mut kernel = false;
        push(
            SweepParameter::Coefficients,
            self.coefficients.iter().map(|&v| v as f64).collect(),
            &mut |v| r = v as usize,
        );
        push(
            SweepParameter::Samples,
            self.samples.iter().map(|&v| v as f64).collect(),
            &mut |v| k = v as usize,
        );
        push(SweepParameter::Alpha, self.alpha.clone(), &mut |v| {
            alpha = v;
            kernel = true;
        });
        if nodes.len() > 1 {
            specs.push(SweepSpec {
                parameter: SweepParameter::Nodes,
                values: nodes.iter().map(|&v| v as f64).collect(),
            });
        }
        base.coefficients = r;
        base.samples = k;
        base.alpha = alpha;
        if kernel {
            base.potentials = PotentialKind::Kernel;
        }
        base.check()?;
        if specs.is_empty() {
            return Err(Error::param(
                "sweep",
                "give at least one flag with several values, e.g. --coefficients 2,3,5,10 or --nodes 2,5,10,20,50,100",
            ));
        }
        Ok((base, specs))
    }

    /// Runs the sweeps with progress on stderr and writes the CSV (and JSON).
    pub fn execute(self) -> Result<()> {
        let (base, specs) = self.plan()?;
        if let Some(dir) = &self.out {
            std::fs::create_dir_all(dir)
                .map_err(|e| Error::Io(format!("cannot create {}: {e}", dir.display())))?;
        }
        let cancel = CancelFlag::default();
        let mut results = Vec::new();
        for spec in &specs {
            let symbol = spec.parameter.symbol();
            let mut report = |p: SweepProgress| match p {
                SweepProgress::Started { index, runs, value } => {
                    eprintln!(
                        "sweep {symbol}: run {}/{runs}, {symbol} = {value}",
                        index + 1
                    )
                }
                SweepProgress::Iteration { .. } => {}
                SweepProgress::Finished {
                    curve_floor,
                    final_error,
                    ..
                } => eprintln!(
                    "  final e_T/e_0 {final_error:.4e}  floor e(a_inf)/e_0 {curve_floor:.4e}"
                ),
            };
            let result = run_sweep(&base, spec, &cancel, &mut report)?;
            let fmt = |s: Option<f64>| s.map_or("n/a".to_string(), |s| format!("{s:.3}"));
            for c in &result.curves {
                eprintln!(
                    "{symbol} = {:>5}: final {:.4e} (raw {:.4e})  floor {:.4e} (raw {:.4e})  L2 floor {:.4e} (final {:.4e})  slope {} ({} points), to a_inf {}{}  median gain {}  run {:.2} s",
                    c.value,
                    c.final_error(),
                    c.final_error_raw(),
                    c.floor,
                    c.floor_raw,
                    c.floor_l2,
                    c.final_error_l2_raw(),
                    fmt(c.slope),
                    c.slope_points,
                    fmt(c.fixed_point_slope),
                    if spec.parameter == SweepParameter::Nodes {
                        format!(", noise-free {}", fmt(c.noise_free_slope))
                    } else {
                        String::new()
                    },
                    fmt(c.median_gain),
                    c.run_seconds
                );
            }
            results.push(result);
        }
        let csv = sweeps_csv(&results);
        match &self.out {
            Some(dir) => {
                write_atomic(&dir.join("sweep.csv"), csv.as_bytes())?;
                let summary: Vec<serde_json::Value> = results
                    .iter()
                    .map(|r| {
                        serde_json::json!({
                            "parameter": r.parameter.label(),
                            "base": r.base,
                            "runs": r.curves.iter().map(|c| serde_json::json!({
                                "value": c.value,
                                "final_error": c.final_error(),
                                "final_error_raw": c.final_error_raw(),
                                "floor": c.floor,
                                "floor_raw": c.floor_raw,
                                "e0": c.e0,
                                "truncation": c.truncation,
                                "floor_l2": c.floor_l2,
                                "e0_l2": c.e0_l2,
                                "final_error_l2_raw": c.final_error_l2_raw(),
                                "median_gain": c.median_gain,
                                "noise_free_slope": c.noise_free_slope,
                                "slope": c.slope,
                                "slope_points": c.slope_points,
                                "fixed_point_slope": c.fixed_point_slope,
                                "setup_seconds": c.setup_seconds,
                                "run_seconds": c.run_seconds,
                                "warnings": c.warnings,
                            })).collect::<Vec<_>>(),
                        })
                    })
                    .collect();
                let text = serde_json::to_string_pretty(&summary)
                    .map_err(|e| Error::Other(e.to_string()))?;
                write_atomic(&dir.join("sweep.json"), text.as_bytes())?;
                eprintln!("wrote {}", dir.join("sweep.csv").display());
            }
            None => print!("{csv}"),
        }
        Ok(())
    }
}

impl RunFlags for SosmpArgs {
    type Config = SosmpConfig;

    fn output(&self) -> &OutputArgs {
        &self.output
    }

    /// Defaults overridden by the flags given.
    fn into_config(self) -> Result<SosmpConfig> {
        let d = SosmpConfig::default();
        let mut c = SosmpConfig::default();
        self.model.apply(&mut c)?;
        c.alpha = self.alpha.unwrap_or(d.alpha);
        c.coefficients = self.coefficients.unwrap_or(d.coefficients);
        c.samples = self.samples.unwrap_or(d.samples);
        c.schedule = self.schedule.unwrap_or(d.schedule);
        Ok(c)
    }
}
