//! `beliefscope tune denoise`: the auto-tune grid search from the command line. Prints the RMSE
//! surface and the best pair, and writes `autotune.json` and `autotune.csv` with `--out`.

use std::fmt::Write as _;

use clap::Args;

use super::cli::DenoiseArgs;
use crate::error::{Error, Result};
use crate::io::write_atomic;
use crate::scenarios::CancelFlag;
use crate::scenarios::RunFlags;
use crate::scenarios::denoise::{AutotuneSpec, autotune};

#[derive(Debug, Clone, Args)]
pub struct DenoiseTuneArgs {
    /// Lambda values (Gram form), comma separated [default: 1e-5,1e-4,1e-3,1e-2,1e-1].
    #[arg(long, value_delimiter = ',')]
    pub lambdas: Vec<f64>,
    /// Bandwidth multipliers, comma separated [default: 0.025,0.05,0.1,0.2,0.4].
    #[arg(long, value_delimiter = ',')]
    pub multipliers: Vec<f64>,
    /// Iterations per candidate [default: 15].
    #[arg(long)]
    pub tune_iters: Option<usize>,
    #[command(flatten)]
    pub denoise: DenoiseArgs,
}

pub fn run(args: DenoiseTuneArgs) -> Result<()> {
    let d = AutotuneSpec::default();
    let spec = AutotuneSpec {
        lambdas: if args.lambdas.is_empty() {
            d.lambdas
        } else {
            args.lambdas
        },
        multipliers: if args.multipliers.is_empty() {
            d.multipliers
        } else {
            args.multipliers
        },
        iterations: args.tune_iters.unwrap_or(d.iterations),
    };
    let output = args.denoise.output.clone();
    let config = args.denoise.into_checked_config()?;
    let result = autotune(&config, &spec, &CancelFlag::default(), &|done, total| {
        eprintln!("auto-tune: {done}/{total}");
    })?;
    let mut table = String::from("lambda,multiplier,rmse\n");
    println!(
        "validation RMSE (rows: lambda, columns: multiplier); noisy copy: {:.3}",
        result.noisy_rmse
    );
    print!("{:>10}", "");
    for m in &spec.multipliers {
        print!("{m:>10}");
    }
    println!();
    for (i, l) in spec.lambdas.iter().enumerate() {
        print!("{l:>10}");
        for (j, m) in spec.multipliers.iter().enumerate() {
            print!("{:>10.3}", result.rmse[i][j]);
            let _ = writeln!(table, "{l},{m},{}", result.rmse[i][j]);
        }
        println!();
    }
    println!(
        "best: lambda {} multiplier {} (validation RMSE {:.3})",
        result.best_lambda, result.best_multiplier, result.best_rmse
    );
    if let Some(dir) = &output.out {
        std::fs::create_dir_all(dir)
            .map_err(|e| Error::Io(format!("cannot create {}: {e}", dir.display())))?;
        write_atomic(&dir.join("autotune.csv"), table.as_bytes())?;
        let json = serde_json::to_string_pretty(&serde_json::json!({
            "config": config,
            "autotune": result,
        }))
        .map_err(|e| Error::Other(e.to_string()))?;
        write_atomic(&dir.join("autotune.json"), json.as_bytes())?;
    }
    Ok(())
}
