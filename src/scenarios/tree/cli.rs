//! `beliefscope run tree`, `beliefscope sweep tree` and `beliefscope dataset` flags.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::PathBuf;

use clap::{ArgGroup, Args};

use crate::error::{Error, Result};
use crate::inference::kbp::Bandwidth;
use crate::inference::tree_kbp::{BandwidthRule, KernelKind, NodeKernelSettings};
use crate::io::csv::{read_edge_list, write_csv};
use crate::io::write_atomic;
use crate::scenarios::tree::{
    BuiltinData, DataSource, NodeSpec, Topology, TreeConfig, TreeScenario, builtin,
};
use crate::scenarios::{CancelFlag, Scenario};
use crate::scenarios::{OutputArgs, RunFlags};

#[derive(Debug, Clone, Args)]
#[command(group(ArgGroup::new("source").required(true).args(["data", "builtin"])))]
pub struct TreeArgs {
    /// A CSV file: a header row of names, one joint sample per row, numeric columns.
    #[arg(long, value_name = "FILE.csv")]
    pub data: Option<PathBuf>,
    #[arg(long)]
    pub no_header: bool,
    /// A built-in dataset: gauss-tree, nongauss-chain or retrieval.
    #[arg(long, value_name = "NAME")]
    pub builtin: Option<BuiltinData>,
    #[arg(long, help = super::config::ROWS_HELP)]
    pub rows: Option<usize>,
    #[arg(long, help = super::config::SIZE_HELP)]
    pub size: Option<usize>,
    #[arg(long, help = super::config::DATA_SEED_HELP)]
    pub data_seed: Option<u64>,
    #[arg(long, value_name = "chain|star|binary|chowliu|EDGEFILE")]
    pub tree: Option<String>,
    #[arg(long, value_name = "NAME=COL[,COL..];...")]
    pub nodes: Option<String>,
    #[arg(long, value_name = "NAME=VALUE,...")]
    pub evidence: Option<String>,
    #[arg(long, value_name = "NAME,...", value_delimiter = ',')]
    pub query: Option<Vec<String>>,
    #[arg(long)]
    pub root: Option<String>,
    #[arg(long)]
    pub samples_per_edge: Option<usize>,
    #[arg(long)]
    pub shared_samples: bool,
    #[arg(long)]
    pub seed: Option<u64>,
    #[arg(long)]
    pub kernel: Option<KernelKind>,
    #[arg(long)]
    pub lambda: Option<f64>,
    #[arg(long)]
    pub bandwidth: Option<Bandwidth>,
    #[arg(long)]
    pub bandwidth_rule: Option<BandwidthRule>,
    #[arg(long)]
    pub multiplier: Option<f64>,
    #[arg(long)]
    pub grid: Option<usize>,
    #[arg(long)]
    pub chow_liu_rows: Option<usize>,
    #[command(flatten)]
    pub output: OutputArgs,
}

/// Parses "a=c1,c2;b=c3".
pub fn parse_nodes(text: &str) -> Result<Vec<NodeSpec>> {
    let mut out = Vec::new();
    for part in text.split(';').map(str::trim).filter(|p| !p.is_empty()) {
        let (name, cols) = part.split_once('=').ok_or_else(|| {
            Error::param(
                "nodes",
                format!("'{part}' is not NAME=COL[,COL..] (groups are separated by ';')"),
            )
        })?;
        let columns: Vec<String> = cols
            .split(',')
            .map(|c| c.trim().to_string())
            .filter(|c| !c.is_empty())
            .collect();
        if name.trim().is_empty() || columns.is_empty() {
            return Err(Error::param(
                "nodes",
                format!("'{part}' needs a name and at least one column"),
            ));
        }
        out.push(NodeSpec {
            name: name.trim().to_string(),
            columns,
        });
    }
    Ok(out)
}

/// Parses "x1=0.5,pos=1:2".
pub fn parse_evidence(text: &str) -> Result<BTreeMap<String, Vec<f64>>> {
    let mut out = BTreeMap::new();
    for part in text.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let (name, value) = part
            .split_once('=')
            .ok_or_else(|| Error::param("evidence", format!("'{part}' is not NAME=VALUE")))?;
        let values: Vec<f64> = value
            .split(':')
            .map(|v| {
                v.trim().parse::<f64>().map_err(|_| {
                    Error::param(
                        "evidence",
                        format!("'{part}': '{}' is not a number", v.trim()),
                    )
                })
            })
            .collect::<Result<_>>()?;
        if values.iter().any(|v| !v.is_finite()) {
            return Err(Error::param(
                "evidence",
                format!("'{part}': values must be finite"),
            ));
        }
        if out.insert(name.trim().to_string(), values).is_some() {
            return Err(Error::param(
                "evidence",
                format!("node '{}' is given twice", name.trim()),
            ));
        }
    }
    Ok(out)
}

/// `beliefscope dataset NAME`: writes a built-in dataset as CSV (how `assets/` is made).
#[derive(Debug, Clone, Args)]
pub struct DatasetArgs {
    /// gauss-tree, nongauss-chain or retrieval.
    pub name: BuiltinData,
    /// Rows.
    #[arg(long, default_value_t = 300)]
    pub rows: usize,
    /// Variables (without it: the dataset's own).
    #[arg(long)]
    pub size: Option<usize>,
    /// Seed.
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// Output file (without it: stdout).
    #[arg(long, value_name = "FILE.csv")]
    pub out: Option<PathBuf>,
    /// Also write the generating tree as an edge-list file.
    #[arg(long, value_name = "FILE.edges")]
    pub edges: Option<PathBuf>,
}

/// Digits after the point in generated CSVs.
pub const DATASET_DECIMALS: usize = 5;

pub fn run_dataset(args: DatasetArgs) -> Result<()> {
    let b = builtin::generate(
        args.name,
        args.size.unwrap_or(args.name.default_size()),
        args.rows,
        args.seed,
    )?;
    match &args.out {
        Some(path) => {
            write_csv(path, &b.dataset, DATASET_DECIMALS)?;
            eprintln!(
                "wrote {} rows x {} columns to {}",
                b.dataset.rows(),
                b.dataset.cols(),
                path.display()
            );
        }
        None => print!("{}", b.dataset.to_csv(DATASET_DECIMALS)),
    }
    if let Some(path) = &args.edges {
        let names: Vec<String> = b.nodes.iter().map(|n| n.name.clone()).collect();
        let cols: Vec<Vec<String>> = b.nodes.iter().map(|n| n.columns.clone()).collect();
        let draft = crate::scenarios::tree::TreeDraft::from_tree(&names, &cols, &b.true_edges, 0);
        crate::io::csv::write_edge_list(path, &draft.to_edge_list())?;
        eprintln!("wrote the generating tree to {}", path.display());
    }
    Ok(())
}

/// `beliefscope sweep tree`: errors against the reference over samples per edge (and
/// repeats), for built-in datasets.
#[derive(Debug, Clone, Args)]
pub struct TreeSweepArgs {
    /// The run to repeat (a --builtin with a reference).
    #[command(flatten)]
    pub run: TreeArgs,
    /// Samples per edge to try, e.g. 100,200,400,800.
    #[arg(long, value_delimiter = ',', default_value = "100,200,400,800")]
    pub samples: Vec<usize>,
    /// Lambdas to try (Gram-diagonal form; without it: the run's).
    #[arg(long, value_delimiter = ',')]
    pub lambdas: Option<Vec<f64>>,
    /// Bandwidth multipliers to try (selects the median rule; without it: the run's).
    #[arg(long, value_delimiter = ',')]
    pub multipliers: Option<Vec<f64>>,
    /// Repeats (different sample and data seeds) per setting.
    #[arg(long, default_value_t = 5)]
    pub repeats: usize,
}

pub fn run_sweep(args: TreeSweepArgs) -> Result<()> {
    let out_dir = args.run.output.out.clone();
    let base = args.run.clone().into_checked_config()?;
    let lambdas = args.lambdas.clone().unwrap_or(vec![base.kernel.lambda]);
    let multipliers = args
        .multipliers
        .clone()
        .unwrap_or(vec![base.kernel.multiplier]);
    if args.repeats == 0 {
        return Err(Error::param("repeats", "must be at least 1"));
    }
    let mut csv = String::from(
        "samples_per_edge,lambda,multiplier,repeat,l1_parzen,l1_embedding,l1_gaussian_bp,mean_error,mean_error_gaussian_bp,setup_seconds\n",
    );
    let mut summary = String::new();
    let cancel = CancelFlag::default();
    for &m in &args.samples {
        for &lambda in &lambdas {
            for &mult in &multipliers {
                let mut sums = [0.0; 5];
                for r in 0..args.repeats {
                    let mut c = base.clone();
                    c.samples_per_edge = m;
                    c.kernel.lambda = lambda;
                    c.kernel.multiplier = mult;
                    if args.multipliers.is_some() {
                        c.kernel.rule = BandwidthRule::Median;
                    }
                    c.sample_seed = base.sample_seed + r as u64;
                    if let DataSource::Builtin { seed, .. } = &mut c.data {
                        *seed += r as u64;
                    }
                    let mut s = TreeScenario::new(c, &cancel)?;
                    s.run_all()?;
                    let e = s.mean_errors().ok_or_else(|| {
                        Error::Other(
                            "sweep tree needs a built-in with a reference (gauss-tree or \
                             nongauss-chain) and a hidden 1-D query node"
                                .into(),
                        )
                    })?;
                    let vals = [
                        e.l1_parzen,
                        e.l1_embedding,
                        e.l1_gaussian_bp,
                        e.mean_error,
                        e.mean_error_gaussian_bp,
                    ];
                    for (s, v) in sums.iter_mut().zip(vals) {
                        *s += v;
                    }
                    let _ = writeln!(
                        csv,
                        "{m},{lambda},{mult},{r},{},{},{},{},{},{}",
                        vals[0],
                        vals[1],
                        vals[2],
                        vals[3],
                        vals[4],
                        s.setup_seconds()
                    );
                }
                let k = args.repeats as f64;
                let line = format!(
                    "m {m:5}  lambda {lambda:8.2e}  mult {mult:5.2}  L1 parzen {:.4}  L1 embedding {:.4}  L1 gaussian-bp {:.4}  |mean err| {:.4}  gaussian-bp {:.4}",
                    sums[0] / k,
                    sums[1] / k,
                    sums[2] / k,
                    sums[3] / k,
                    sums[4] / k
                );
                eprintln!("{line}");
                summary.push_str(&line);
                summary.push('\n');
            }
        }
    }
    if let Some(dir) = out_dir {
        std::fs::create_dir_all(&dir)
            .map_err(|e| Error::Io(format!("cannot create {}: {e}", dir.display())))?;
        write_atomic(&dir.join("sweep.csv"), csv.as_bytes())?;
        write_atomic(&dir.join("summary.txt"), summary.as_bytes())?;
        eprintln!("wrote {}", dir.join("sweep.csv").display());
    } else {
        print!("{csv}");
    }
    Ok(())
}

impl RunFlags for TreeArgs {
    type Config = TreeConfig;

    fn output(&self) -> &OutputArgs {
        &self.output
    }

    /// Defaults overridden by the flags given.
    fn into_config(self) -> Result<TreeConfig> {
        if self.no_header && self.data.is_none() {
            return Err(Error::param(
                "no-header",
                "--no-header describes a --data CSV file; a built-in dataset has its own names",
            ));
        }
        let mut config = match self.builtin {
            Some(b) => TreeConfig::builtin(b),
            None => TreeConfig {
                evidence: BTreeMap::new(),
                ..TreeConfig::default()
            },
        };
        config.data = match (&self.data, self.builtin) {
            (Some(path), _) => {
                config.csv_no_header = self.no_header;
                DataSource::Csv { path: path.clone() }
            }
            (None, Some(name)) => DataSource::Builtin {
                name,
                rows: self.rows.unwrap_or(1000),
                size: self.size,
                seed: self.data_seed.unwrap_or(0),
            },
            (None, None) => {
                return Err(Error::param(
                    "data",
                    "give --data FILE.csv or --builtin NAME",
                ));
            }
        };
        if self.data.is_some() && (self.rows.is_some() || self.size.is_some()) {
            return Err(Error::param(
                "rows/size",
                "--rows and --size only apply to --builtin datasets",
            ));
        }
        let nodes = match &self.nodes {
            Some(t) => parse_nodes(t)?,
            None => Vec::new(),
        };
        if self.evidence.is_some() {
            config.evidence = parse_evidence(self.evidence.as_deref().unwrap_or(""))?;
        }
        config.nodes = nodes.clone();
        config.topology = match self.tree.as_deref() {
            None | Some("chain") => Topology::Chain,
            Some("star") => Topology::Star,
            Some("binary") => Topology::Binary,
            Some("chowliu") | Some("chow-liu") => Topology::ChowLiu,
            Some(path) => {
                let list = read_edge_list(std::path::Path::new(path))?;
                let builtin_nodes = match &config.data {
                    DataSource::Builtin { name, size, .. } => {
                        builtin::generate(*name, size.unwrap_or(name.default_size()), 2, 0)
                            .map(|b| b.nodes)
                            .unwrap_or_default()
                    }
                    DataSource::Csv { .. } => Vec::new(),
                };
                for spec in &nodes {
                    if list.node_index(&spec.name).is_none() {
                        return Err(Error::param(
                            "nodes",
                            format!("node '{}' is not in the tree file {path}", spec.name),
                        ));
                    }
                }
                config.nodes = list
                    .nodes
                    .iter()
                    .map(|n| {
                        if let Some(s) = nodes.iter().find(|s| s.name == n.name) {
                            s.clone()
                        } else if !n.columns.is_empty() {
                            NodeSpec {
                                name: n.name.clone(),
                                columns: n.columns.clone(),
                            }
                        } else if let Some(b) = builtin_nodes.iter().find(|b| b.name == n.name) {
                            b.clone()
                        } else {
                            NodeSpec {
                                name: n.name.clone(),
                                columns: vec![n.name.clone()],
                            }
                        }
                    })
                    .collect();
                Topology::Edges(
                    list.edges
                        .iter()
                        .map(|&(a, b)| (list.nodes[a].name.clone(), list.nodes[b].name.clone()))
                        .collect(),
                )
            }
        };
        if let Some(q) = self.query {
            config.queries = q.into_iter().map(|s| s.trim().to_string()).collect();
        }
        config.root = self.root.or(config.root);
        config.samples_per_edge = self.samples_per_edge.unwrap_or(config.samples_per_edge);
        config.shared_samples = self.shared_samples;
        config.sample_seed = self.seed.unwrap_or(config.sample_seed);
        let d = config.kernel;
        config.kernel = NodeKernelSettings {
            kernel: self.kernel.unwrap_or(d.kernel),
            bandwidth: self.bandwidth.unwrap_or(d.bandwidth),
            rule: self.bandwidth_rule.unwrap_or(if self.multiplier.is_some() {
                BandwidthRule::Median
            } else {
                d.rule
            }),
            multiplier: self.multiplier.unwrap_or(d.multiplier),
            lambda: self.lambda.unwrap_or(d.lambda),
        };
        config.grid = self.grid.unwrap_or(config.grid);
        config.chow_liu_rows = self.chow_liu_rows.unwrap_or(config.chow_liu_rows);
        Ok(config)
    }
}
