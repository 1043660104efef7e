//! The pendigits experiment of Wang & Gordon, AAAI 2020, Sec. 6 "Handwritten Digit
//! Recognition" (Figs. 6–7). The paper's model (Fig. 6) is an image whose graph cannot be
//! recovered, so we use a stand-in: per digit class a latent chain H_1 … H_8 (k states) with
//! the pen point P_t = (x_t, y_t) as child of H_t (an HMM with 2-D emissions). Continuous
//! features are our realisation of Sec. 5 (its App. A.4 is not in the paper's text): 2-D
//! Nyström RBF features (σ = 10, the paper's bandwidth) on a 6 × 6 landmark grid over
//! [0, 100]², compressed to the top D_f = 24 principal directions of the training features,
//! so θ(x)ᵀθ(x') ≈ k(x, x'); an observed pen point enters as the leaf message θ(x_obs), so
//! E[θ | h]ᵀ θ(x_obs) ≈ E[k(X, x_obs) | h] is a kernel-smoothed likelihood. The landmarks and
//! D_f are shared by all classes so that their P̂(x) are comparable; PBP learned per class with
//! ridge λ₁ = 0.1 (the paper's λ); a test digit goes to the
//! class with the largest P̂(x) (Eq. 4 at the root, leaf messages θ(x_t)).
//! The baseline is EM for the same chain with 2-D Gaussian emissions (an HMM, full covariance,
//! 10 restarts; [`crate::inference::pbp::hmm_em`]). `beliefscope sweep pbp --model pendigits`
//! writes both accuracies against training size, the confusion matrix at the largest size and
//! the learning times.
//!
//! Cost: features O(N · 8 · 36 · 24); learning per class O(N_c · Σ_S q(q + p + P)) with one
//! instrument (q = p = 24, P = 576); classification O(10 · one pass) per digit.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::time::Instant;

use nalgebra::{DMatrix, DVector, SymmetricEigen};
use serde::{Deserialize, Serialize};

use super::pendigits_dir;
use crate::error::{Error, Result};
use crate::inference::pbp::features::TrainingData;
use crate::inference::pbp::hmm_em::GaussianHmm;
use crate::inference::pbp::{PbpModel, PbpSettings};
use crate::io::write_atomic;
use crate::model::latent_dag::{DagNode, LatentDag};
use crate::run::CancelFlag;

/// Pen points per digit.
pub const POINTS: usize = 8;

/// One digit: 8 (x, y) points in [0, 100]² and its class.
#[derive(Debug, Clone, PartialEq)]
pub struct Digit {
    pub points: [[f64; 2]; POINTS],
    pub class: usize,
}

/// The paper's split: first 7000 rows of pendigits.tra, its last 494, pendigits.tes.
#[derive(Debug, Clone)]
pub struct PenData {
    pub train: Vec<Digit>,
    pub validation: Vec<Digit>,
    pub test: Vec<Digit>,
}

fn read_digits(path: &Path) -> Result<Vec<Digit>> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| Error::Io(format!("cannot read {}: {e}", path.display())))?;
    text.lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
        .map(|(i, line)| {
            let bad = |what: &str| Error::Io(format!("{} line {}: {what}", path.display(), i + 1));
            let values: Vec<f64> = line
                .split(',')
                .map(|v| v.trim().parse::<f64>())
                .collect::<std::result::Result<_, _>>()
                .map_err(|_| bad("not a number"))?;
            if values.len() != 17 {
                return Err(bad(&format!("{} fields, expected 17", values.len())));
            }
            if values.iter().any(|v| !v.is_finite()) || values[16] < 0.0 || values[16] > 9.0 {
                return Err(bad("class outside 0..9"));
            }
            let mut points = [[0.0; 2]; POINTS];
            for (t, p) in points.iter_mut().enumerate() {
                *p = [values[2 * t], values[2 * t + 1]];
            }
            Ok(Digit {
                points,
                class: values[16] as usize,
            })
        })
        .collect()
}

impl PenData {
    /// Reads `dir/pendigits.tra` and `dir/pendigits.tes`; a clear error names the folder.
    pub fn load(dir: &Path) -> Result<PenData> {
        let (tra, tes) = (dir.join("pendigits.tra"), dir.join("pendigits.tes"));
        if !tra.is_file() || !tes.is_file() {
            return Err(Error::Io(format!(
                "pendigits data not found: expected {} and {} (../shared/data/pendigits)",
                tra.display(),
                tes.display()
            )));
        }
        let mut train = read_digits(&tra)?;
        if train.len() < 7000 {
            return Err(Error::Io(format!(
                "{} has {} rows; the paper's split needs 7494",
                tra.display(),
                train.len()
            )));
        }
        let validation = train.split_off(7000);
        Ok(PenData {
            train,
            validation,
            test: read_digits(&tes)?,
        })
    }

    /// The first `n / 10` training digits of each class (stratified); all 7000 rows when `n`
    /// reaches them (the classes are not exactly balanced, so 700 per class would drop some).
    pub fn stratified(&self, n: usize) -> Vec<Digit> {
        if n >= self.train.len() {
            return self.train.clone();
        }
        let per = (n / 10).max(1);
        let mut counts = [0usize; 10];
        self.train
            .iter()
            .filter(|d| {
                counts[d.class] += 1;
                counts[d.class] <= per
            })
            .cloned()
            .collect()
    }

    /// `n / 10` training digits of each class drawn at random (seeded, without replacement);
    /// all 7000 rows when `n` reaches them. Each seed of the accuracy curve is one such draw.
    pub fn stratified_seeded(&self, n: usize, seed: u64) -> Vec<Digit> {
        use rand::SeedableRng;
        use rand::seq::SliceRandom;
        if n >= self.train.len() {
            return self.train.clone();
        }
        let per = (n / 10).max(1);
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
        rng.set_stream(n as u64);
        let mut out = Vec::with_capacity(10 * per);
        for class in 0..10 {
            let mut rows: Vec<&Digit> = self.train.iter().filter(|d| d.class == class).collect();
            rows.shuffle(&mut rng);
            out.extend(rows.into_iter().take(per).cloned());
        }
        out
    }
}

/// Nyström RBF features on a landmark grid, compressed by PCA (our realisation of Sec. 5).
#[derive(Debug, Clone)]
pub struct PenFeatures {
    landmarks: Vec<[f64; 2]>,
    sigma: f64,
    /// D_f × L: V_Dᵀ Λ^{-1/2} Uᵀ.
    projection: DMatrix<f64>,
}

impl PenFeatures {
    /// `grid` × `grid` landmarks over [0, 100]², bandwidth `sigma`, `dim` principal directions
    /// of the training points' features.
    pub fn new(train: &[Digit], grid: usize, sigma: f64, dim: usize) -> Result<PenFeatures> {
        let step = 100.0 / (grid.max(2) - 1) as f64;
        let landmarks: Vec<[f64; 2]> = (0..grid * grid)
            .map(|i| [(i % grid) as f64 * step, (i / grid) as f64 * step])
            .collect();
        let l = landmarks.len();
        let k = |a: &[f64; 2], b: &[f64; 2]| {
            (-((a[0] - b[0]).powi(2) + (a[1] - b[1]).powi(2)) / (2.0 * sigma * sigma)).exp()
        };
        let kll = DMatrix::from_fn(l, l, |i, j| k(&landmarks[i], &landmarks[j]));
        let eig = SymmetricEigen::new(kll);
        let top = eig.eigenvalues.max();
        let mut nystrom = DMatrix::zeros(l, l);
        for (r, &lam) in eig.eigenvalues.iter().enumerate() {
            if lam > 1e-10 * top {
                let u = eig.eigenvectors.column(r);
                for c in 0..l {
                    nystrom[(r, c)] = u[c] / lam.sqrt();
                }
            }
        }
        let mut cov = DMatrix::<f64>::zeros(l, l);
        let mut n = 0.0;
        for d in train {
            for p in &d.points {
                let kx = DVector::from_fn(l, |i, _| k(&landmarks[i], p));
                let z = &nystrom * kx;
                cov += &z * z.transpose();
                n += 1.0;
            }
        }
        if n == 0.0 {
            return Err(Error::Other("no training digits for the features".into()));
        }
        let eig = SymmetricEigen::new(cov / n);
        let mut order: Vec<usize> = (0..l).collect();
        order.sort_by(|&a, &b| eig.eigenvalues[b].total_cmp(&eig.eigenvalues[a]));
        let dim = dim.min(l);
        let v = DMatrix::from_fn(dim, l, |r, c| eig.eigenvectors[(c, order[r])]);
        Ok(PenFeatures {
            projection: v * nystrom,
            landmarks,
            sigma,
        })
    }

    pub fn dim(&self) -> usize {
        self.projection.nrows()
    }

    pub fn features(&self, p: &[f64; 2]) -> Vec<f64> {
        let s2 = 2.0 * self.sigma * self.sigma;
        let kx = DVector::from_iterator(
            self.landmarks.len(),
            self.landmarks
                .iter()
                .map(|l| (-((l[0] - p[0]).powi(2) + (l[1] - p[1]).powi(2)) / s2).exp()),
        );
        (&self.projection * kx).iter().copied().collect()
    }
}

/// The per-class chain: H_1…H_8 (k states), P_t observed child of H_t (its "cardinality" is
/// the feature dimension).
pub fn chain_dag(k: usize, feature_dim: usize) -> Result<LatentDag> {
    let mut nodes: Vec<DagNode> = (1..=POINTS)
        .map(|t| DagNode {
            name: format!("H{t}"),
            cardinality: k,
            observed: false,
        })
        .collect();
    nodes.extend((1..=POINTS).map(|t| DagNode {
        name: format!("P{t}"),
        cardinality: feature_dim,
        observed: true,
    }));
    let mut edges: Vec<(usize, usize)> = (0..POINTS - 1).map(|t| (t, t + 1)).collect();
    edges.extend((0..POINTS).map(|t| (t, POINTS + t)));
    LatentDag::new(nodes, edges)
}

/// Ten class models sharing one feature map.
pub struct PenClassifier {
    pub features: PenFeatures,
    pub models: Vec<PbpModel>,
    pub seconds: f64,
}

impl PenClassifier {
    pub fn learn(train: &[Digit], features: PenFeatures, k: usize, lambda1: f64) -> Result<Self> {
        let start = Instant::now();
        let dag = chain_dag(k, features.dim())?;
        let vars: Vec<usize> = (POINTS..2 * POINTS).collect();
        let settings = PbpSettings {
            lambda1,
            max_instruments: 1,
            ..PbpSettings::default()
        };
        let mut models = Vec::with_capacity(10);
        for class in 0..10 {
            let rows: Vec<Vec<Vec<f64>>> = train
                .iter()
                .filter(|d| d.class == class)
                .map(|d| d.points.iter().map(|p| features.features(p)).collect())
                .collect();
            if rows.is_empty() {
                return Err(Error::Other(format!("no training digit of class {class}")));
            }
            let data = TrainingData::dense(vars.clone(), vec![features.dim(); POINTS], rows)?;
            models.push(PbpModel::learn(&dag, &data, &settings)?);
        }
        Ok(PenClassifier {
            features,
            models,
            seconds: start.elapsed().as_secs_f64(),
        })
    }

    /// log P̂(x) per class (−∞ where the estimate is not positive).
    pub fn log_scores(&self, digit: &Digit) -> Vec<f64> {
        let theta: Vec<Vec<f64>> = digit
            .points
            .iter()
            .map(|p| self.features.features(p))
            .collect();
        self.models
            .iter()
            .map(|m| {
                let leaf: Vec<Option<Vec<f64>>> = (0..m.jt.len())
                    .map(|c| m.tree.leaf_var[c].map(|x| theta[x - POINTS].clone()))
                    .collect();
                let e = m.propagate(&leaf).root_evidence;
                if e.sign > 0.0 && e.log_abs.is_finite() {
                    e.log_abs
                } else {
                    f64::NEG_INFINITY
                }
            })
            .collect()
    }

    pub fn classify(&self, digit: &Digit) -> usize {
        let s = self.log_scores(digit);
        (0..s.len())
            .max_by(|&a, &b| s[a].total_cmp(&s[b]))
            .unwrap_or(0)
    }
}

/// The settings of `sweep pbp --model pendigits`.
#[derive(Debug, Clone)]
pub struct PendigitsArgs {
    /// Training sizes (stratified: n/10 per class).
    pub sizes: Vec<usize>,
    /// Latent states k of each H_t.
    pub states: usize,
    /// RBF bandwidth σ.
    pub sigma: f64,
    /// D_f, principal directions kept.
    pub dim: usize,
    /// λ₁ of stage 1 (the paper's λ = 0.1).
    pub lambda: f64,
    /// Seeds: each draws its own stratified training subset and EM initialisation.
    pub seeds: usize,
    pub first_seed: u64,
    /// EM-HMM restarts per class.
    pub restarts: usize,
    /// Folder with pendigits.tra and pendigits.tes [default: ../shared/data/pendigits].
    pub data: Option<PathBuf>,
    /// Folder for pendigits.json, pendigits.csv and pendigits.png (stdout when absent).
    pub out: Option<PathBuf>,
}

impl Default for PendigitsArgs {
    /// The sweep's defaults: [`DEFAULT_SIZES`], [`DEFAULT_SEEDS`] seeds from 1, k = 6, σ = 10,
    /// D_f = 24, λ₁ = 0.1, [`EM_RESTARTS`], the shared data folder, no output folder.
    fn default() -> Self {
        PendigitsArgs {
            sizes: DEFAULT_SIZES.to_vec(),
            states: 6,
            sigma: 10.0,
            dim: 24,
            lambda: 0.1,
            seeds: DEFAULT_SEEDS,
            first_seed: 1,
            restarts: EM_RESTARTS,
            data: None,
            out: None,
        }
    }
}

/// One method's test accuracy at one training size over the seeds.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct AccuracyPoint {
    pub n: usize,
    pub mean: f64,
    /// Sample standard deviation over the seeds (0 with one seed).
    pub sd: f64,
    pub min: f64,
    pub max: f64,
    pub per_seed: Vec<f64>,
    pub learn_seconds_mean: f64,
}

impl AccuracyPoint {
    /// Summary of `(accuracy, seconds)` per seed.
    pub fn of(n: usize, runs: &[(f64, f64)]) -> AccuracyPoint {
        let k = runs.len().max(1) as f64;
        let mean = runs.iter().map(|r| r.0).sum::<f64>() / k;
        let var = runs.iter().map(|r| (r.0 - mean).powi(2)).sum::<f64>() / (k - 1.0).max(1.0);
        AccuracyPoint {
            n,
            mean,
            sd: var.sqrt(),
            min: runs.iter().map(|r| r.0).fold(f64::INFINITY, f64::min),
            max: runs.iter().map(|r| r.0).fold(f64::NEG_INFINITY, f64::max),
            per_seed: runs.iter().map(|r| r.0).collect(),
            learn_seconds_mean: runs.iter().map(|r| r.1).sum::<f64>() / k,
        }
    }
}

/// What the sweep writes as pendigits.json (and the window's accuracy-over-N panel reads).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct PendigitsReport {
    pub sizes: Vec<usize>,
    pub seeds: Vec<u64>,
    /// PBP's and EM-HMM's test accuracy per size over the seeds (Fig. 7's curve).
    pub pbp: Vec<AccuracyPoint>,
    pub em_hmm: Vec<AccuracyPoint>,
    /// Mean over the seeds, per size (the same numbers as `pbp` / `em_hmm`).
    pub test_accuracy: Vec<f64>,
    pub test_accuracy_em_hmm: Vec<f64>,
    pub learn_seconds_em_hmm: Vec<f64>,
    pub em_restarts: usize,
    pub validation_accuracy: Vec<f64>,
    pub learn_seconds: Vec<f64>,
    /// Rows = true class, columns = predicted, at the largest size (first seed).
    pub confusion: Vec<Vec<usize>>,
    /// Test digits whose every class score was not positive (classified as 0).
    pub unscored: usize,
    pub states: usize,
    pub sigma: f64,
    pub dim: usize,
    pub lambda1: f64,
    pub model: String,
}

/// The training sizes of the accuracy curve (Fig. 7; 7000 is the paper's whole training set).
pub const DEFAULT_SIZES: [usize; 8] = [50, 100, 200, 500, 1000, 2000, 5000, 7000];
/// Seeds of the accuracy curve by default.
pub const DEFAULT_SEEDS: usize = 3;

/// The (size, seed) pairs the curve runs, sizes outer, each size once per seed.
pub fn plan(sizes: &[usize], seeds: usize, first_seed: u64) -> Vec<(usize, u64)> {
    sizes
        .iter()
        .flat_map(|&n| (0..seeds as u64).map(move |s| (n, first_seed + s)))
        .collect()
}

/// Checks the sweep's settings before any data is read.
pub fn check_args(args: &PendigitsArgs) -> Result<()> {
    if args.sizes.is_empty() || args.sizes.iter().any(|&n| n < 10) || args.states < 2 {
        return Err(Error::param(
            "sizes",
            "need sizes of at least 10 (one digit per class) and at least 2 states",
        ));
    }
    if args.seeds == 0 {
        return Err(Error::param("seeds", "need at least one seed"));
    }
    if args.restarts == 0 {
        return Err(Error::param("restarts", "EM needs at least one restart"));
    }
    if !(args.sigma.is_finite() && args.sigma > 0.0) {
        return Err(Error::param(
            "sigma",
            format!("must be positive, got {}", args.sigma),
        ));
    }
    if !(args.lambda.is_finite() && args.lambda > 0.0) {
        return Err(Error::param(
            "lambda",
            format!("must be positive, got {}", args.lambda),
        ));
    }
    Ok(())
}

/// Writes the curve of [`curve`] as pendigits.json, pendigits.csv and pendigits.png in
/// `args.out` (the JSON to stdout when absent).
pub fn run(args: PendigitsArgs) -> Result<()> {
    let (report, csv) = curve(&args, &CancelFlag::default(), &|_, _| {})?;
    let json = serde_json::to_string_pretty(&report).map_err(|e| Error::Other(e.to_string()))?;
    match &args.out {
        Some(out) => {
            std::fs::create_dir_all(out)
                .map_err(|e| Error::Io(format!("cannot create {}: {e}", out.display())))?;
            write_atomic(&out.join("pendigits.json"), json.as_bytes())?;
            write_atomic(&out.join("pendigits.csv"), csv.as_bytes())?;
            super::figures::write_accuracy(out, &report.pbp, &report.em_hmm)?;
            eprintln!("wrote {}", out.join("pendigits.json").display());
        }
        None => println!("{json}"),
    }
    Ok(())
}

/// The accuracy curve and its CSV (one row per size and seed). `progress(done, total)` after
/// each (size, seed) pair of [`plan`]; `cancel` is checked before each pair and between PBP and
/// EM-HMM ([`Error::Cancelled`]).
pub fn curve(
    args: &PendigitsArgs,
    cancel: &CancelFlag,
    progress: &dyn Fn(usize, usize),
) -> Result<(PendigitsReport, String)> {
    check_args(args)?;
    let dir = args.data.clone().unwrap_or_else(pendigits_dir);
    let data = PenData::load(&dir)?;
    let features = PenFeatures::new(&data.train, 6, args.sigma, args.dim)?;
    let mut sizes = args.sizes.clone();
    sizes.sort_unstable();
    sizes.dedup();
    let seeds: Vec<u64> = (0..args.seeds as u64)
        .map(|s| args.first_seed + s)
        .collect();
    let mut report = PendigitsReport {
        sizes: sizes.clone(),
        seeds,
        pbp: Vec::new(),
        em_hmm: Vec::new(),
        test_accuracy: Vec::new(),
        validation_accuracy: Vec::new(),
        learn_seconds: Vec::new(),
        confusion: vec![vec![0; 10]; 10],
        unscored: 0,
        test_accuracy_em_hmm: Vec::new(),
        learn_seconds_em_hmm: Vec::new(),
        em_restarts: args.restarts,
        states: args.states,
        sigma: args.sigma,
        dim: args.dim,
        lambda1: args.lambda,
        model: "stand-in for the paper's Fig. 6: latent chain H1..H8, pen point P_t child of H_t (Sec. 6 pendigits)".into(),
    };
    let mut csv = String::from(
        "n,seed,test_accuracy,validation_accuracy,learn_seconds,test_accuracy_em_hmm,learn_seconds_em_hmm\n",
    );
    let largest = *sizes.iter().max().unwrap_or(&7000);
    let total = sizes.len() * args.seeds;
    let mut done = 0;
    progress(done, total);
    for &n in &sizes {
        let (mut pbp_runs, mut em_runs, mut val_sum) = (Vec::new(), Vec::new(), 0.0);
        for (_, seed) in plan(&[n], args.seeds, args.first_seed) {
            cancel.check()?;
            let train = data.stratified_seeded(n, seed);
            let clf = PenClassifier::learn(&train, features.clone(), args.states, args.lambda)?;
            let accuracy = |set: &[Digit]| {
                set.iter().filter(|d| clf.classify(d) == d.class).count() as f64 / set.len() as f64
            };
            let (test, val) = (accuracy(&data.test), accuracy(&data.validation));
            if n == largest && seed == args.first_seed {
                for d in &data.test {
                    let s = clf.log_scores(d);
                    if s.iter().all(|x| !x.is_finite()) {
                        report.unscored += 1;
                    }
                    report.confusion[d.class][clf.classify(d)] += 1;
                }
            }
            cancel.check()?;
            let (em_accuracy, em_seconds) =
                em_hmm_accuracy_seeded(&train, &data.test, args.states, args.restarts, seed);
            eprintln!(
                "n {n:5}  seed {seed:2}  PBP test accuracy {test:.4}  validation {val:.4}  learning {:.3} s  |  EM-HMM test accuracy {em_accuracy:.4}  learning {em_seconds:.3} s",
                clf.seconds
            );
            let _ = writeln!(
                csv,
                "{n},{seed},{test},{val},{},{em_accuracy},{em_seconds}",
                clf.seconds
            );
            pbp_runs.push((test, clf.seconds));
            em_runs.push((em_accuracy, em_seconds));
            val_sum += val;
            done += 1;
            progress(done, total);
        }
        let (pbp, em) = (
            AccuracyPoint::of(n, &pbp_runs),
            AccuracyPoint::of(n, &em_runs),
        );
        report.test_accuracy.push(pbp.mean);
        report.learn_seconds.push(pbp.learn_seconds_mean);
        report.validation_accuracy.push(val_sum / args.seeds as f64);
        report.test_accuracy_em_hmm.push(em.mean);
        report.learn_seconds_em_hmm.push(em.learn_seconds_mean);
        report.pbp.push(pbp);
        report.em_hmm.push(em);
    }
    Ok((report, csv))
}

/// Restarts of the EM-HMM baseline (footnote 5 of the paper: 10).
pub const EM_RESTARTS: usize = 10;

/// Per-class Gaussian HMMs fitted by EM (`restarts` each, best training log-likelihood kept),
/// and the learning seconds.
pub fn fit_em_hmms(
    train: &[Digit],
    k: usize,
    restarts: usize,
    rng: &mut impl rand::Rng,
) -> (Vec<GaussianHmm>, f64) {
    let start = Instant::now();
    let models: Vec<GaussianHmm> = (0..10)
        .map(|class| {
            let seqs: Vec<Vec<[f64; 2]>> = train
                .iter()
                .filter(|d| d.class == class)
                .map(|d| d.points.to_vec())
                .collect();
            GaussianHmm::fit(k, &seqs, restarts, 100, 1e-6, rng).0
        })
        .collect();
    (models, start.elapsed().as_secs_f64())
}

/// Test accuracy and learning seconds of per-class Gaussian HMMs fitted by EM.
pub fn em_hmm_accuracy(train: &[Digit], test: &[Digit], k: usize) -> (f64, f64) {
    em_hmm_accuracy_seeded(train, test, k, EM_RESTARTS, 17)
}

/// [`em_hmm_accuracy`] with `restarts` and the initialisations drawn from `seed`.
pub fn em_hmm_accuracy_seeded(
    train: &[Digit],
    test: &[Digit],
    k: usize,
    restarts: usize,
    seed: u64,
) -> (f64, f64) {
    use rand::SeedableRng;
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
    let (models, seconds) = fit_em_hmms(train, k, restarts, &mut rng);
    let correct = test
        .iter()
        .filter(|d| {
            let scores: Vec<f64> = models.iter().map(|m| m.log_likelihood(&d.points)).collect();
            let best = (0..10).max_by(|&a, &b| scores[a].total_cmp(&scores[b]));
            best == Some(d.class)
        })
        .count();
    (correct as f64 / test.len().max(1) as f64, seconds)
}
