//! Results out of the window: the current run as results.json (the shape `beliefscope run`
//! writes, so `beliefscope run --config` re-runs it), CSV without its header row, and
//! screenshots as PNG. Cost: O(iterations) per export.

use std::path::Path;

use eframe::egui;

use crate::error::Result;
use crate::io::results::results_json;
use crate::runner::Snapshot;
use crate::scenarios::{FinalResults, RunResults};

/// The run shown in the window as results.json: config, timings and every iteration so far;
/// the final metrics are the last iteration's. `exported_from`, `iteration` and `finished` say
/// that it may be a run in progress.
pub fn window_results_json(snapshot: &Snapshot) -> String {
    let mut extra = serde_json::Map::new();
    extra.insert("exported_from".into(), "window".into());
    extra.insert("iteration".into(), snapshot.iteration.into());
    extra.insert("finished".into(), snapshot.finished.into());
    let results = RunResults {
        scenario: snapshot.config.name().to_string(),
        algorithm: snapshot.algorithm.clone(),
        config: snapshot.config.to_json(),
        setup_seconds: snapshot.setup_seconds,
        iterations: snapshot.history.to_vec(),
        final_results: FinalResults {
            metrics: snapshot
                .history
                .last()
                .map(|r| r.metrics.clone())
                .unwrap_or_default(),
        },
        extra,
    };
    results_json(&results)
}

/// `csv` without its first line (the header).
pub fn without_header(csv: &str) -> String {
    csv.split_once('\n')
        .map_or_else(String::new, |(_, rest)| rest.to_string())
}

/// Writes a screenshot (or a crop of one) as PNG, atomically.
pub fn save_color_image(path: &Path, image: &egui::ColorImage) -> Result<()> {
    let [w, h] = image.size;
    let rgba: Vec<u8> = image.pixels.iter().flat_map(|c| c.to_array()).collect();
    crate::io::write_png_atomic(path, w as u32, h as u32, &rgba)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_goes() {
        assert_eq!(without_header("a,b\n1,2\n"), "1,2\n");
        assert_eq!(without_header("a,b"), "");
    }

    #[test]
    fn screenshots_are_written_as_png() {
        let dir = tempfile::tempdir().unwrap();
        let mut image = egui::ColorImage::filled([4, 3], egui::Color32::from_rgb(10, 20, 30));
        image.pixels[0] = egui::Color32::RED;
        let path = dir.path().join("shot.png");
        save_color_image(&path, &image).unwrap();
        let back = image::open(&path).unwrap().to_rgba8();
        assert_eq!(back.dimensions(), (4, 3));
        assert_eq!(back.get_pixel(0, 0).0, [255, 0, 0, 255]);
        assert_eq!(back.get_pixel(3, 2).0, [10, 20, 30, 255]);
    }
}
