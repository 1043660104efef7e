//! The pbp scenario's fields of results.json (the synthetic experiment of Wang & Gordon 2020,
//! Sec. 6, Figs. 4–5): the
//! true model with its CPTs, the junction tree with α/β per separator, every query of the query
//! set with the exact, PBP, EM and online-EM distributions (so anyone can recompute the exact
//! answers from the CPTs), `kl_mean` and `seconds` per method, and the clip count.

use std::collections::BTreeMap;

use serde::Serialize;

use super::DiscreteScenario;
use crate::inference::pbp::PbpSettings;
use crate::inference::pbp::em::EmSettings;
use crate::model::latent_dag::ModelFile;

#[derive(Debug, Clone, Serialize)]
pub struct PbpReport {
    /// The ground truth (nodes, edges, CPTs; rows = parent configurations, first parent
    /// slowest).
    pub true_model: ModelFile,
    pub junction_tree: Option<JunctionTreeReport>,
    pub query: String,
    pub evidence_vars: Vec<String>,
    pub queries: Vec<QueryReport>,
    pub kl_mean: BTreeMap<&'static str, f64>,
    pub seconds: BTreeMap<&'static str, f64>,
    /// PBP entries clipped at 1e-12 over all queries, and the number of entries.
    pub clipped: usize,
    pub entries: usize,
    /// Training log-likelihood of the kept EM restarts.
    pub log_likelihood: BTreeMap<&'static str, f64>,
    pub pbp_settings: PbpSettings,
    pub em_settings: EmSettings,
    /// PBP's KL against N on this ground truth over 5 sample draws (the window's curve).
    pub learning_curve: Vec<super::experiment::LearningPoint>,
    pub conventions: Conventions,
}

#[derive(Debug, Clone, Serialize)]
pub struct JunctionTreeReport {
    pub root: usize,
    pub cliques: Vec<CliqueReport>,
}

#[derive(Debug, Clone, Serialize)]
pub struct CliqueReport {
    pub vars: Vec<String>,
    pub parent: Option<usize>,
    pub separator: Vec<String>,
    pub leaf: bool,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub alpha: Vec<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub beta: Vec<String>,
    /// k_S and σ_k / σ_1 of Ĉ_θη for inner separators.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub k: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rank_ratio: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub weak_instrument: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rank_used: Option<usize>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub theta_bar_singular: Vec<f64>,
}

#[derive(Debug, Clone, Serialize)]
pub struct QueryReport {
    pub evidence: BTreeMap<String, usize>,
    pub exact: Vec<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pbp: Option<Vec<f64>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub em: Option<Vec<f64>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub online_em: Option<Vec<f64>>,
    /// P(evidence): exact and from each method.
    pub p_evidence: BTreeMap<&'static str, f64>,
}

#[derive(Debug, Clone, Serialize)]
pub struct Conventions {
    pub kl: &'static str,
    pub seconds: &'static str,
    pub model: &'static str,
}

pub const CONVENTIONS: Conventions = Conventions {
    kl: "KL(exact || method) in nats of P(query | evidence), averaged over every joint value of evidence_vars",
    seconds: "learning only: pbp = counting distinct configurations + regressions; em / online_em = all restarts",
    model: "synthetic = our stand-in for the model of the paper's Fig. 4 (Sec. 6), not the paper's graph",
};

impl PbpReport {
    pub fn new(s: &DiscreteScenario) -> PbpReport {
        let p = s.problem();
        let dag = &p.truth.dag;
        let name = |v: usize| dag.node(v).name.clone();
        let names = |vs: &[usize]| vs.iter().map(|&v| name(v)).collect::<Vec<_>>();
        let junction_tree = s.pbp_model().map(|m| JunctionTreeReport {
            root: m.tree.root,
            cliques: (0..m.jt.len())
                .map(|c| {
                    let g = m.groups[c].as_ref();
                    let inner = m.operators[c].as_ref();
                    CliqueReport {
                        vars: names(&m.jt.cliques[c]),
                        parent: m.tree.parent[c],
                        separator: names(&m.tree.separators[c]),
                        leaf: m.tree.is_leaf(c),
                        alpha: g.map_or_else(Vec::new, |g| names(&g.alpha)),
                        beta: g.map_or_else(Vec::new, |g| names(&g.beta)),
                        k: inner.and(g.map(|g| g.k)),
                        rank_ratio: inner.and(g.map(|g| g.rank_ratio)),
                        weak_instrument: inner.and(g.map(|g| g.weak)),
                        rank_used: inner.map(|o| o.rank_used),
                        theta_bar_singular: inner
                            .map_or_else(Vec::new, |o| o.theta_bar_singular.clone()),
                    }
                })
                .collect(),
        });
        let runs = s.runs();
        let run = |n: &str| runs.iter().find(|r| r.name == n);
        let queries = p
            .configs
            .iter()
            .enumerate()
            .map(|(i, ev)| {
                let mut p_evidence = BTreeMap::from([("exact", p.exact_p_evidence[i])]);
                for r in &runs {
                    p_evidence.insert(r.name, r.p_evidence[i]);
                }
                QueryReport {
                    evidence: ev
                        .iter()
                        .enumerate()
                        .filter_map(|(v, x)| x.map(|x| (name(v), x)))
                        .collect(),
                    exact: p.exact_dists[i].clone(),
                    pbp: run("pbp").map(|r| r.dists[i].clone()),
                    em: run("em").map(|r| r.dists[i].clone()),
                    online_em: run("online_em").map(|r| r.dists[i].clone()),
                    p_evidence,
                }
            })
            .collect();
        let config = s.config_ref();
        PbpReport {
            true_model: ModelFile::from_model(dag, Some(&p.truth.cpts)),
            junction_tree,
            query: name(p.query),
            evidence_vars: names(&p.evidence_vars),
            queries,
            kl_mean: runs.iter().map(|r| (r.name, r.kl_mean)).collect(),
            seconds: runs.iter().map(|r| (r.name, r.seconds)).collect(),
            clipped: run("pbp").map_or(0, |r| r.clipped),
            entries: p.configs.len() * dag.cardinality(p.query),
            log_likelihood: runs
                .iter()
                .filter_map(|r| r.log_likelihood.map(|l| (r.name, l)))
                .collect(),
            pbp_settings: config.pbp_settings(),
            em_settings: config.em_settings(),
            learning_curve: s.learning_curve().to_vec(),
            conventions: CONVENTIONS,
        }
    }
}
