//! beliefs.png beside results.json: each query node's belief from kernel BP (Parzen and
//! embedding read-outs, Song et al. 2010, Alg. 1) and Gaussian BP against the exact / fine-grid
//! reference where the dataset has one, one panel per node, colours from `viz::palette`.

use std::path::Path;

use super::TreeScenario;
use crate::error::Result;
use crate::scenarios::output::write_figure;
use crate::viz::figures::{Curve, Panel};
use crate::viz::palette::Method;

/// Panels drawn (the first query nodes; results.json and beliefs.csv have all of them).
const MAX_PANELS: usize = 6;

fn line(xs: &[f64], ys: &[f64]) -> Vec<(f64, f64)> {
    xs.iter().copied().zip(ys.iter().copied()).collect()
}

pub fn panels(s: &TreeScenario) -> Vec<Panel> {
    s.query_nodes()
        .into_iter()
        .filter_map(|t| Some((t, s.curves(t)?)))
        .take(MAX_PANELS)
        .map(|(t, c)| {
            let name = &s.problem.names[t];
            let mut p = Panel {
                title: format!("belief of {name}"),
                x_label: format!("{name} (value)"),
                y_label: "density".into(),
                include_y: vec![0.0],
                ..Panel::default()
            };
            if let Some(r) = &c.reference {
                p.curves.push(
                    Curve::new(Method::Exact.name(), line(&c.xs, r), Method::Exact.color())
                        .dashed(),
                );
            }
            p.curves.push(Curve::new(
                "kernel BP (Parzen)",
                line(&c.xs, &c.parzen),
                Method::KernelBp.color(),
            ));
            p.curves.push(Curve::new(
                Method::KernelBpEmbedding.name(),
                line(&c.xs, &c.embedding),
                Method::KernelBpEmbedding.color(),
            ));
            p.curves.push(Curve::new(
                Method::GaussianBp.name(),
                line(&c.xs, &c.gaussian_bp),
                Method::GaussianBp.color(),
            ));
            p
        })
        .collect()
}

pub fn write(s: &TreeScenario, dir: &Path) -> Result<()> {
    let panels = panels(s);
    if panels.is_empty() {
        // Every node observed or multi-dimensional: nothing to draw as a curve.
        return Ok(());
    }
    let columns = panels.len().min(3);
    let rows = panels.len().div_ceil(columns) as u32;
    write_figure(
        &dir.join("beliefs.png"),
        &panels,
        columns,
        440 * columns as u32,
        360 * rows,
    )
}
