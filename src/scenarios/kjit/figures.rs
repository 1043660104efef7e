//! Headless figures of `run kjit`, drawn with `viz::figures` in the kjit room's colours
//! (`viz::palette::KJIT`, `QUADRATURE`, `SAMPLING`): `errors.png` for Exps. 3 and 5 (main
//! Figs. 6a, 9: classification error per problem for each EP operator, and KJIT's share of
//! oracle calls per problem, main Figs. 5, 8) and `uncertainty.png` for Exps. 1 and 2 (main
//! Fig. 4b: KJIT's log predictive variance along the two test curves). Cost: O(problems) or
//! O(curve points) plus the bitmap.

use std::path::Path;

use super::batch::UncertaintyReport;
use super::report::LogisticReport;
use crate::error::Result;
use crate::scenarios::output::write_figure;
use crate::viz::figures::{Curve, Panel};
use crate::viz::palette;

/// Exps. 3 and 5: errors and oracle calls per problem.
pub fn errors_panels(report: &LogisticReport) -> Vec<Panel> {
    let problem = |i: usize| (i + 1) as f64;
    let series = |f: &dyn Fn(usize) -> Option<f64>| -> Vec<(f64, f64)> {
        (0..report.problems.len())
            .filter_map(|i| f(i).map(|y| (problem(i), y)))
            .collect()
    };
    let p = &report.problems;
    let mut errors = Panel {
        title: "Classification error per problem".into(),
        x_label: "problem (data set)".into(),
        integer_x: true,
        y_label: "test error (fraction misclassified)".into(),
        include_y: vec![0.0],
        ..Panel::default()
    };
    errors.curves.push(Curve::new(
        "quadrature EP (oracle)",
        series(&|i| Some(p[i].error_quadrature)),
        palette::QUADRATURE,
    ));
    let sampling = series(&|i| p[i].error_sampling);
    if !sampling.is_empty() {
        errors
            .curves
            .push(Curve::new("sampling EP", sampling, palette::SAMPLING));
    }
    errors.curves.push(Curve::new(
        "KJIT EP",
        series(&|i| Some(p[i].error_kjit)),
        palette::KJIT,
    ));
    let mut calls = Panel {
        title: "KJIT: oracle calls per problem".into(),
        x_label: "problem (data set)".into(),
        integer_x: true,
        y_label: "oracle calls (% of KJIT's calls)".into(),
        include_y: vec![0.0],
        ..Panel::default()
    };
    calls.curves.push(Curve::new(
        "KJIT oracle calls",
        series(&|i| (p[i].calls > 0).then(|| 100.0 * p[i].oracle_calls as f64 / p[i].calls as f64)),
        palette::KJIT,
    ));
    vec![errors, calls]
}

/// Exp. 2: log predictive variance along the two test curves.
pub fn uncertainty_panel(u: &UncertaintyReport) -> Panel {
    let along = |ys: &[f64]| -> Vec<(f64, f64)> {
        u.means.iter().copied().zip(ys.iter().copied()).collect()
    };
    Panel {
        title: "KJIT's uncertainty along the test curves (main Fig. 4b)".into(),
        x_label: "mean m of the incoming message m_z→f".into(),
        y_label: "log predictive variance".into(),
        curves: vec![
            Curve::new(
                "test curve #1",
                along(&u.log_var_test1),
                palette::TEST_CURVE_1,
            ),
            Curve::new(
                "test curve #2",
                along(&u.log_var_test2),
                palette::TEST_CURVE_2,
            ),
        ],
        ..Panel::default()
    }
}

pub fn write_errors(dir: &Path, report: &LogisticReport) -> Result<()> {
    if report.problems.is_empty() {
        return Ok(());
    }
    write_figure(
        &dir.join("errors.png"),
        &errors_panels(report),
        2,
        1280,
        520,
    )
}

pub fn write_uncertainty(dir: &Path, u: &UncertaintyReport) -> Result<()> {
    write_figure(
        &dir.join("uncertainty.png"),
        &[uncertainty_panel(u)],
        1,
        900,
        560,
    )
}
