//! recall.png beside results.json: recall@10 against the chain length (Song et al. 2010,
//! Fig. 3 protocol) and recall@k at the longest chain, each method in its palette colour.

use std::path::Path;

use super::{METHODS, Retrieval};
use crate::error::Result;
use crate::scenarios::output::write_figure;
use crate::viz::figures::{Curve, Panel};
use crate::viz::palette::Method;

fn method(key: &str) -> (String, [u8; 3]) {
    Method::of_key(key).map_or_else(
        || (key.to_string(), crate::viz::palette::series(0)),
        |m| (m.name().to_string(), m.color()),
    )
}

/// The two panels, from the mean curves so far.
pub fn panels(s: &Retrieval) -> Vec<Panel> {
    let lengths = &s.config.lengths;
    let longest = lengths.iter().copied().max().unwrap_or(9);
    let k = 10.min(s.config.max_k);
    let mut by_length = Panel {
        title: format!("recall@{k} against chain length"),
        x_label: "chain length L (variables)".into(),
        integer_x: true,
        y_label: format!("recall@{k} (fraction of queries)"),
        include_y: vec![0.0, 1.0],
        ..Panel::default()
    };
    let mut by_k = Panel {
        title: format!("recall@k at L = {longest}"),
        x_label: "k (candidates returned)".into(),
        integer_x: true,
        y_label: "recall@k (fraction of queries)".into(),
        include_y: vec![0.0, 1.0],
        ..Panel::default()
    };
    for m in METHODS {
        let (name, color) = method(m);
        let mut sorted = lengths.clone();
        sorted.sort_unstable();
        let points: Vec<(f64, f64)> = sorted
            .iter()
            .filter_map(|&l| Some((l as f64, *s.mean_curve(m, l)?.get(k - 1)?)))
            .collect();
        by_length
            .curves
            .push(Curve::new(name.clone(), points, color));
        if let Some(c) = s.mean_curve(m, longest) {
            let points = c
                .iter()
                .enumerate()
                .map(|(i, r)| ((i + 1) as f64, *r))
                .collect();
            by_k.curves.push(Curve::new(name, points, color));
        }
    }
    vec![by_length, by_k]
}

pub fn write(s: &Retrieval, dir: &Path) -> Result<()> {
    write_figure(&dir.join("recall.png"), &panels(s), 2, 1280, 520)
}
