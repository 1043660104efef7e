//! The named enums (`error::labels`): every variant's name is its serde name (so configs and
//! results.json read the names the command line takes), every name parses back, and a bad
//! name's error names it and lists the accepted ones.

use std::fmt::Debug;
use std::str::FromStr;

use beliefscope::error::labels::Labelled;
use beliefscope::inference::kbp::KbpUpdate;
use beliefscope::inference::kjit::feature_maps::OperatorKind;
use beliefscope::inference::sosmp::basis::BasisKind;
use beliefscope::inference::sosmp::potentials::MixtureForm;
use beliefscope::inference::tree_kbp::{BandwidthRule, KernelKind};
use beliefscope::inference::{EstimateKind, Schedule};
use beliefscope::scenarios::denoise::config::{BuiltinTraining, Candidates, DenoiseAlgorithm};
use beliefscope::scenarios::denoise::sure_stop::SureRule;
use beliefscope::scenarios::flow::config::{BuiltinPair, FlowAlgorithm};
use beliefscope::scenarios::kjit::Experiment;
use beliefscope::scenarios::sosmp::config::{GraphKind, PotentialKind};
use beliefscope::scenarios::sosmp::sweep::SweepParameter;
use beliefscope::scenarios::teach::config::{MessageKind, TeachGraph};
use beliefscope::scenarios::tree::builtin::BuiltinData;
use beliefscope::viz::flow_color::FlowColoring;
use clap::ValueEnum;
use serde::Serialize;
use serde::de::DeserializeOwned;
use strum::VariantArray;

/// Checks `T`: names equal serde names and parse back; a bad name's error names it and every
/// accepted name. Returns the error of `bad`.
fn check<T>(bad: &str) -> String
where
    T: Labelled + Serialize + DeserializeOwned + FromStr<Err = String> + PartialEq + Debug,
{
    let names: Vec<&str> = T::names().collect();
    assert_eq!(names.len(), T::VARIANTS.len());
    for (&v, name) in T::VARIANTS.iter().zip(&names) {
        assert_eq!(serde_json::to_value(v).unwrap(), *name, "{v:?}");
        assert_eq!(serde_json::from_value::<T>((*name).into()).unwrap(), v);
        assert_eq!(name.parse::<T>(), Ok(v), "{name}");
    }
    let err = bad.parse::<T>().unwrap_err();
    assert!(err.contains(&format!("'{bad}'")), "{err}");
    assert!(err.contains(T::WHAT), "{err}");
    for name in &names {
        assert!(err.contains(name), "{name} not in: {err}");
    }
    err
}

#[test]
fn every_name_is_its_serde_name_and_parses_back() {
    check::<KbpUpdate>("fast");
    check::<KernelKind>("gauss");
    check::<BandwidthRule>("loo_cv");
    check::<BasisKind>("chebyshev");
    check::<MixtureForm>("eq38");
    check::<Schedule>("shuffled");
    check::<EstimateKind>("median");
    check::<BuiltinPair>("zoom");
    check::<FlowAlgorithm>("horn-schunck");
    check::<BuiltinData>("gauss_tree");
    check::<SureRule>("halt");
    check::<DenoiseAlgorithm>("tv");
    check::<Candidates>("some");
    check::<BuiltinTraining>("lena");
    check::<SweepParameter>("iters");
    check::<GraphKind>("ring");
    check::<PotentialKind>("gauss");
    check::<TeachGraph>("loop");
    check::<MessageKind>("particles");
    check::<FlowColoring>("rainbow");
}

#[test]
fn errors_read_as_before() {
    assert_eq!(
        check::<PotentialKind>("kernal"),
        "unknown potentials 'kernal' (expected mixture or kernel)"
    );
    assert_eq!(
        check::<Schedule>("zigzag"),
        "unknown schedule 'zigzag' (expected synchronous, sweep, checkerboard, random or residual)"
    );
    assert_eq!(
        check::<BuiltinData>("toy"),
        "unknown built-in dataset 'toy' (expected gauss-tree, nongauss-chain or retrieval)"
    );
    assert_eq!(
        check::<FlowAlgorithm>("lk"),
        "unknown flow algorithm 'lk' (expected sosmp or discrete)"
    );
}

#[test]
fn aliases_still_parse() {
    for (alias, schedule) in [
        ("sync", Schedule::Synchronous),
        ("sequential", Schedule::Sweep),
        ("rbp", Schedule::Residual),
    ] {
        assert_eq!(alias.parse(), Ok(schedule));
    }
    assert_eq!(Schedule::Sweep.label(), "sweep");
    // Names are case-sensitive, as before.
    assert!("Sweep".parse::<Schedule>().is_err());
    for (text, b) in [
        ("dead-leaves", BuiltinTraining::DeadLeaves),
        ("dead-leaves-shaded", BuiltinTraining::DeadLeavesShaded),
        ("dead_leaves-shaded", BuiltinTraining::DeadLeavesShaded),
    ] {
        assert_eq!(text.parse(), Ok(b));
    }
    let err = "dead-leafs".parse::<BuiltinTraining>().unwrap_err();
    assert!(err.contains("'dead-leafs'"), "{err}");
}

#[test]
fn descriptive_labels_and_table_order_are_kept() {
    assert_eq!(TeachGraph::Grid.key(), "grid");
    assert_eq!(TeachGraph::Grid.label(), "3 x 3 grid");
    assert_eq!(MessageKind::Series.key(), "series");
    assert_eq!(BuiltinTraining::DeadLeaves.label(), "dead_leaves");
    assert_eq!(BuiltinTraining::DeadLeaves.title(), "dead leaves");
    // The Supp C table's order, with each operator's results.json name.
    let names: Vec<&str> = OperatorKind::VARIANTS.iter().map(|k| k.name()).collect();
    assert_eq!(
        names,
        [
            "mean-variance",
            "joint-expected-product",
            "sum-of-expected-products",
            "product-of-expected-products",
            "kjit"
        ]
    );
    for &k in OperatorKind::VARIANTS {
        assert_eq!(serde_json::to_value(k).unwrap(), k.name());
    }
}

#[test]
fn kjit_experiments_have_one_name_everywhere() {
    for v in Experiment::value_variants() {
        let name = v.to_possible_value().unwrap();
        assert_eq!(name.get_name(), v.name());
        assert_eq!(serde_json::to_value(v).unwrap(), v.name());
    }
    assert_eq!(Experiment::CompoundGamma.name(), "compound-gamma");
}
