//! The retrieval experiment's views: recall@k curves of kernel BP, Gaussian BP and chained
//! nearest neighbours for one chain length, and recall@10 against the chain length, filling in
//! as repeats finish.

use eframe::egui::{self, Color32};
use egui_plot::{Legend, Line, PlotPoints};

use crate::app::colors;
use crate::app::views::curves;
use crate::app::views::ticks::{self, Scale};
use crate::scenarios::retrieval::RetrievalView;
use crate::viz::palette::Method;

/// The method's colour from the one palette (kernel BP, Gaussian BP, nearest neighbour).
pub fn color(method: &str) -> Color32 {
    Method::of_key(method).map_or(Color32::GRAY, colors::method)
}

/// The method's name in legends.
pub fn label(method: &str) -> &'static str {
    Method::of_key(method).map_or("other", Method::name)
}

/// Which chain length the recall@k plot shows.
#[derive(Default)]
pub struct RetrievalCache {
    length: Option<usize>,
}

pub fn status(view: &RetrievalView) -> Vec<String> {
    vec![format!("repeats {} / {}", view.repeats_done, view.repeats)]
}

pub fn central(ui: &mut egui::Ui, view: &RetrievalView, cache: &mut RetrievalCache) {
    let mut lengths: Vec<usize> = view.curves.iter().map(|c| c.1).collect();
    lengths.sort_unstable();
    lengths.dedup();
    if lengths.is_empty() {
        ui.weak("Press Play: each step runs one repeat (300 queries at every chain length).");
        return;
    }
    let length = cache
        .length
        .filter(|l| lengths.contains(l))
        .unwrap_or(*lengths.last().unwrap_or(&9));
    ui.horizontal(|ui| {
        let label_id = ui.label("Chain length L").id;
        let mut l = length;
        ui.add(egui::Slider::new(
            &mut l,
            lengths[0]..=*lengths.last().unwrap_or(&9),
        ))
        .labelled_by(label_id);
        cache.length = Some(l);
        ui.weak(format!(
            "mean over {} of {} repeats",
            view.repeats_done, view.repeats
        ));
    });
    let h = (ui.available_height() - 30.0) / 2.0;
    ticks::plot("recall_at_k", Scale::Integer, Scale::Real)
        .height(h)
        .legend(Legend::default().position(egui_plot::Corner::RightBottom))
        .include_y(0.0)
        .include_y(1.0)
        .x_axis_label("k")
        .y_axis_label(format!("recall@k, L = {length}"))
        .allow_scroll(false)
        .show(ui, |p| {
            for (m, l, c) in &view.curves {
                if *l == length {
                    let pts: Vec<[f64; 2]> = c
                        .iter()
                        .enumerate()
                        .map(|(k, r)| [(k + 1) as f64, *r])
                        .collect();
                    p.line(
                        Line::new(label(m), PlotPoints::from(pts))
                            .color(color(m))
                            .width(2.0),
                    );
                }
            }
        });
    let k = 10.min(view.max_k);
    ticks::plot("recall_vs_length", Scale::Integer, Scale::Real)
        .height(h)
        .legend(Legend::default().position(egui_plot::Corner::RightTop))
        .include_y(0.0)
        .include_y(1.0)
        .x_axis_label("chain length L")
        .y_axis_label(format!("recall@{k}"))
        .allow_scroll(false)
        .show(ui, |p| {
            for m in ["kbp", "gaussian_bp", "nearest_neighbour"] {
                let pts: Vec<[f64; 2]> = view
                    .curves
                    .iter()
                    .filter(|(mm, _, _)| mm == m)
                    .map(|(_, l, c)| [*l as f64, c[k - 1]])
                    .collect();
                p.line(
                    Line::new(label(m), PlotPoints::from(pts))
                        .color(color(m))
                        .width(2.0),
                );
            }
        });
}

/// The recall@10 metrics of the run as curves with human names ("kernel BP, L = 9"), in the
/// methods' colours (the curves plot picks the colour from the key).
pub fn recall_series(history: &[crate::scenarios::IterationRecord]) -> Vec<curves::Series> {
    let Some(last) = history.last() else {
        return Vec::new();
    };
    last.metrics
        .keys()
        .filter_map(|key| {
            let rest = key.strip_prefix("recall@10_")?;
            let (method, length) = rest.rsplit_once("_L")?;
            Some(curves::Series::metric(
                &format!("{}, recall@10, L = {length}", label(method)),
                key,
            ))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn recall_series_have_human_names() {
        let mut r = crate::scenarios::IterationRecord {
            iter: 1,
            seconds: 0.0,
            residual: 0.0,
            metrics: Default::default(),
        };
        for key in [
            "recall@10_kbp_L9",
            "recall@1_kbp_L9",
            "recall@10_nearest_neighbour_L2",
        ] {
            r.metrics.insert(key.to_string(), 0.5);
        }
        let names: Vec<String> = recall_series(&[r]).into_iter().map(|s| s.name).collect();
        assert_eq!(
            names,
            [
                "kernel BP, recall@10, L = 9",
                "chained nearest neighbour, recall@10, L = 2"
            ]
        );
    }
}
