//! Every parameter of a tree run, with its checks.

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use super::builtin::BuiltinData;
use crate::error::{Error, Result};
use crate::inference::tree_kbp::NodeKernelSettings;
use crate::run::budget::MemoryNeed;
use crate::scenarios::ScenarioParams;
use crate::scenarios::params::{Param, check_table, names_of};

/// The tunable numbers of a tree run, described once.
pub const PARAMS: &[Param] = &[
    Param::int("samples_per_edge", "Samples per edge m", 2.0, 20_000.0)
        .log()
        .help("Joint samples per edge (each edge factorises an m x m matrix)."),
    Param::int("grid", "Grid points", 3.0, 100_000.0).help("Points of the belief grid."),
    Param::int("chow_liu_rows", "Chow-Liu rows", 10.0, 1e9)
        .help("Rows used to learn a Chow-Liu tree."),
    Param::switch("csv_no_header", "No header row (first row is data)")
        .sets(true)
        .flag("no-header")
        .help(
            "The CSV file has no header row (e.g. UCI files): the first row is data and the \
             columns are named c1, c2, ...",
        ),
    Param::value("topology", "Tree")
        .flag("tree")
        .help("The tree: chain, star, binary, chowliu (HSIC Chow-Liu) or an edge-list file."),
    Param::value("nodes", "Nodes")
        .help("Nodes as column groups, e.g. \"pos=px,py;x3=x3\" (empty: one node per column)."),
    Param::value("evidence", "Evidence").help(
        "Evidence, e.g. \"x1=0.5,pos=1.0:2.0\" (':' joins the values of a multi-column node).",
    ),
    Param::value("queries", "Queries")
        .flag("query")
        .help("Nodes to report in results.json (empty: every hidden node)."),
    Param::value("root", "Root").help(
        "Root of the message schedule (any root gives the same beliefs; none: the first node).",
    ),
    Param::switch("shared_samples", "Shared")
        .sets(true)
        .help("All edges use the same rows (else each edge draws its own, as in the paper)."),
    Param::value("sample_seed", "Sample seed")
        .flag("seed")
        .help("Seed of the per-edge sample draws."),
    Param::choice(
        "kernel.kernel",
        "Kernel",
        names_of::<crate::inference::tree_kbp::KernelKind>,
    )
    .flag("kernel")
    .help("Kernel of every node."),
    Param::value("kernel.lambda", "λ")
        .flag("lambda")
        .help("Regulariser lambda, Gram-diagonal form K + lambda I."),
    Param::value("kernel.bandwidth", "Bandwidth")
        .flag("bandwidth")
        .help("Bandwidth: auto (chosen by the bandwidth rule) or a value."),
    Param::choice(
        "kernel.rule",
        "Bandwidth rule",
        names_of::<crate::inference::tree_kbp::BandwidthRule>,
    )
    .flag("bandwidth-rule")
    .help(
        "Rule of an auto bandwidth: loo-cv (leave-one-out likelihood, per node) or median \
         (median distance times the multiplier); on the command line --multiplier alone \
         selects median.",
    ),
    Param::value("kernel.multiplier", "Bandwidth ×")
        .flag("multiplier")
        .help("Multiplier of the median-heuristic bandwidth (the median rule's)."),
];

/// Help of a built-in dataset's rows (`--rows` and the room's row), written once here: the
/// data source is an enum, outside the parameter table.
pub const ROWS_HELP: &str = "Rows of a built-in dataset (1000 without it).";
/// Help of a built-in dataset's variables (`--size` and the room's row).
pub const SIZE_HELP: &str = "Variables of a built-in dataset (without it: the dataset's own, 8 \
                             for gauss-tree, 5 for nongauss-chain, 9 for retrieval).";
/// Help of a built-in dataset's seed (`--data-seed` and the room's row).
pub const DATA_SEED_HELP: &str = "Seed of a built-in dataset's rows (0 without it).";

/// Where the rows come from.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum DataSource {
    /// A generated dataset: `rows` rows of `size` variables (default per dataset) from `seed`.
    Builtin {
        name: BuiltinData,
        rows: usize,
        #[serde(default)]
        size: Option<usize>,
        #[serde(default)]
        seed: u64,
    },
    /// A CSV file: header of names, one joint sample per row.
    Csv { path: PathBuf },
}

impl DataSource {
    pub fn label(&self) -> String {
        match self {
            DataSource::Builtin { name, .. } => name.label().to_string(),
            DataSource::Csv { path } => path.display().to_string(),
        }
    }
}

/// A node: one column, or a named group of columns (a 2-D or higher variable).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NodeSpec {
    pub name: String,
    pub columns: Vec<String>,
}

/// The tree over the nodes.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Topology {
    /// Nodes in order, each joined to the next.
    #[default]
    Chain,
    /// The first node joined to every other.
    Star,
    /// A balanced binary tree in node order (node i's parent is (i - 1) / 2).
    Binary,
    /// The maximum spanning tree of pairwise HSIC (Song et al. 2010, Sec. 5).
    #[serde(rename = "chowliu")]
    ChowLiu,
    /// Named edges (drawn on the canvas or read from an edge-list file).
    Edges(Vec<(String, String)>),
}

impl Topology {
    pub fn label(&self) -> &'static str {
        match self {
            Topology::Chain => "chain",
            Topology::Star => "star",
            Topology::Binary => "binary",
            Topology::ChowLiu => "chowliu",
            Topology::Edges(_) => "edges",
        }
    }
}

/// Every parameter of a tree run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct TreeConfig {
    pub data: DataSource,
    /// The nodes; empty means one node per column (a built-in's own variables).
    pub nodes: Vec<NodeSpec>,
    pub topology: Topology,
    /// Root of the message schedule (any root gives the same beliefs); default the first node.
    pub root: Option<String>,
    /// Observed nodes and their values (several numbers for a multi-column node).
    pub evidence: BTreeMap<String, Vec<f64>>,
    /// Nodes reported in results.json; empty means every hidden node.
    pub queries: Vec<String>,
    /// Sample pairs per edge `m` (all rows when `m` >= the rows). The default, 1000, makes
    /// every row of the built-ins an edge sample: the messages, not the read-out, limit a
    /// sharp belief, and they need the samples (README, "Samples per edge": on the sharp
    /// bimodal case with 1000 rows, mean L1 0.37 at m = 300 against 0.24 at 1000; the
    /// built-ins' L1 falls too, at 0.2 s more set-up).
    pub samples_per_edge: usize,
    /// All edges use the same `m` rows (else each edge draws its own).
    pub shared_samples: bool,
    /// Seed of the per-edge row draws.
    pub sample_seed: u64,
    /// Kernel settings of every node, unless overridden in `node_kernels`.
    pub kernel: NodeKernelSettings,
    pub node_kernels: BTreeMap<String, NodeKernelSettings>,
    /// Grid points of 1-D read-outs.
    pub grid: usize,
    /// Rows used for the HSIC of the Chow-Liu tree (at most).
    pub chow_liu_rows: usize,
    /// An edge-list file (`.edges`) to take the nodes and the tree from. It is read when the
    /// scenario is built, on the worker; the built scenario's config carries the tree itself
    /// (this field is then empty), so results.json reproduces the run without the file.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tree_file: Option<PathBuf>,
    /// The CSV file has no header row (e.g. UCI files): its first row is data and the columns
    /// are named c1, c2, ...
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub csv_no_header: bool,
}

/// The default samples per edge (see [`TreeConfig::samples_per_edge`]).
pub const DEFAULT_SAMPLES_PER_EDGE: usize = 1000;

impl Default for TreeConfig {
    fn default() -> Self {
        TreeConfig {
            data: DataSource::Builtin {
                name: BuiltinData::NongaussChain,
                rows: 1000,
                size: None,
                seed: 0,
            },
            nodes: Vec::new(),
            topology: Topology::Chain,
            root: None,
            evidence: BTreeMap::from([("x2".to_string(), vec![0.0])]),
            queries: Vec::new(),
            samples_per_edge: DEFAULT_SAMPLES_PER_EDGE,
            shared_samples: false,
            sample_seed: 0,
            kernel: NodeKernelSettings::default(),
            node_kernels: BTreeMap::new(),
            grid: 200,
            chow_liu_rows: 400,
            tree_file: None,
            csv_no_header: false,
        }
    }
}

impl TreeConfig {
    /// The default run on a built-in dataset (its default evidence included).
    pub fn builtin(name: BuiltinData) -> TreeConfig {
        let evidence = match name {
            BuiltinData::NongaussChain => BTreeMap::from([("x2".to_string(), vec![0.0])]),
            BuiltinData::GaussTree => BTreeMap::from([("x4".to_string(), vec![1.0])]),
            BuiltinData::Retrieval => BTreeMap::new(),
        };
        TreeConfig {
            data: DataSource::Builtin {
                name,
                rows: 1000,
                size: None,
                seed: 0,
            },
            evidence,
            ..TreeConfig::default()
        }
    }

    /// The kernel settings of a node.
    pub fn kernel_for(&self, node: &str) -> NodeKernelSettings {
        self.node_kernels.get(node).copied().unwrap_or(self.kernel)
    }
}

impl ScenarioParams for TreeConfig {
    const PARAMS: &'static [Param] = PARAMS;

    /// Checks the numbers (names are checked against the data when the problem is built).
    fn check(&self) -> Result<()> {
        check_table(self, PARAMS)?;
        self.kernel.check()?;
        for (name, k) in &self.node_kernels {
            k.check()
                .map_err(|e| Error::Other(format!("kernel of node '{name}': {e}")))?;
        }
        if let DataSource::Builtin { rows, .. } = &self.data
            && !(2..=1_000_000).contains(rows)
        {
            return Err(Error::param(
                "rows",
                format!("a built-in has 2 to 1000000 rows, got {rows}"),
            ));
        }
        for (name, v) in &self.evidence {
            if v.is_empty() || v.iter().any(|x| !x.is_finite()) {
                return Err(Error::param(
                    "evidence",
                    format!("node '{name}': the value must be finite numbers, got {v:?}"),
                ));
            }
        }
        let mut names = std::collections::BTreeSet::new();
        for n in &self.nodes {
            if n.columns.is_empty() {
                return Err(Error::param(
                    "nodes",
                    format!("node '{}' has no columns", n.name),
                ));
            }
            if !names.insert(n.name.as_str()) {
                return Err(Error::param(
                    "nodes",
                    format!("node '{}' is named twice", n.name),
                ));
            }
        }
        Ok(())
    }

    /// The data (rows x columns), one Gram factor of m x m per sample set (two per edge, or one
    /// per node when every edge uses the same rows) plus one transient Gram per thread, the
    /// cross-Grams (grid x m per set and m x m between a node's sets, capped at 2^26 values by
    /// the model), and the Parzen prior's blocks. A CSV is sized from its file (a number takes
    /// at least two bytes of text) and its header (the columns); nodes default to columns.
    fn memory_need(&self) -> Option<MemoryNeed> {
        let (rows, data_doubles, nodes) = self.estimate_sizes();
        let m = (self.samples_per_edge as f64).min(rows);
        let sets = if self.shared_samples || m >= rows {
            nodes
        } else {
            2.0 * (nodes - 1.0)
        };
        let threads = rayon::current_num_threads() as f64;
        let grid = self.grid as f64;
        let cross = (grid * m * sets + m * m * (sets - nodes).max(0.0)).min((1u64 << 26) as f64);
        Some(
            MemoryNeed::new(format!(
                "tree with {nodes} nodes and {} samples per edge",
                self.samples_per_edge
            ))
            .doubles("data", 3.0 * data_doubles)
            .doubles(
                "Gram factors (m x m per sample set)",
                (sets + threads) * m * m,
            )
            .doubles("cross-Grams", cross)
            .doubles(
                "Parzen prior blocks",
                threads * (grid * rows.min(data_doubles)).min((1u64 << 22) as f64),
            ),
        )
    }

    /// Set-up about 0.3 s per edge at m = 1000 samples, growing as m^1.44 (the edge's
    /// factorisation and bandwidth choice; measured at m = 1000 and 4000); a message about
    /// 0.75 µs per sample.
    fn time_need(&self) -> Option<crate::run::time_need::TimeNeed> {
        let (rows, _, nodes) = self.estimate_sizes();
        let m = (self.samples_per_edge as f64).min(rows);
        let edges = (nodes - 1.0).max(1.0);
        let setup = 0.1 + edges * 0.3 * (m / 1000.0).powf(1.44);
        let messages = 2 * edges as usize;
        Some(crate::run::time_need::TimeNeed::scaled(
            setup,
            7.5e-7 * m,
            messages,
        ))
    }
}

/// The number of fields of a CSV file's first line (its header), where it can be read.
fn csv_header_columns(path: &std::path::Path) -> Option<usize> {
    use std::io::{BufRead, Read};
    let file = std::fs::File::open(path).ok()?;
    let mut line = Vec::new();
    std::io::BufReader::new(file)
        .take(1 << 20)
        .read_until(b'\n', &mut line)
        .ok()?;
    Some(line.iter().filter(|&&b| b == b',').count() + 1)
}

impl TreeConfig {
    /// Rows (infinite for a CSV, sized from its file), data values and nodes, as the
    /// estimates see them before any data is read.
    fn estimate_sizes(&self) -> (f64, f64, f64) {
        let (rows, columns, data_doubles) = match &self.data {
            DataSource::Builtin {
                name, rows, size, ..
            } => {
                let cols = size.unwrap_or(name.default_size()) as f64
                    * if *name == BuiltinData::Retrieval {
                        5.0
                    } else {
                        1.0
                    };
                (*rows as f64, cols, *rows as f64 * cols)
            }
            DataSource::Csv { path } => {
                let bytes = std::fs::metadata(path).map_or(0.0, |m| m.len() as f64);
                let columns = csv_header_columns(path).unwrap_or(1) as f64;
                (f64::INFINITY, columns, bytes / 2.0)
            }
        };
        let nodes = if self.nodes.is_empty() {
            match &self.topology {
                Topology::Edges(edges) if !edges.is_empty() => edges.len() as f64 + 1.0,
                _ => columns,
            }
        } else {
            self.nodes.len() as f64
        }
        .max(2.0);
        (rows, data_doubles, nodes)
    }
}
