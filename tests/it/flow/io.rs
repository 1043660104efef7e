//! Middlebury `.flo` files and the flow colour coding: round trips, refusals with clear
//! messages (never allocating an absurd size), the colour wheel's documented hues, white at
//! rest, a symmetric legend.

use beliefscope::io::flo::{FlowField, encode_flo, parse_flo, read_flo, write_flo};
use beliefscope::viz::flow_color::{
    FlowColoring, color_wheel, flow_arrows, flow_color, flow_rgba, legend_rgba,
};
use strum::VariantArray;

fn sample_field() -> FlowField {
    let (w, h) = (7, 5);
    let u: Vec<f64> = (0..w * h).map(|i| (i as f64 * 0.37).sin() * 3.0).collect();
    let mut v: Vec<f64> = (0..w * h).map(|i| (i as f64 * 0.11).cos() - 0.5).collect();
    v[3] = 1e10; // unknown
    FlowField::new(w, h, u, v).unwrap()
}

#[test]
fn flo_file_round_trip() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("f.flo");
    let f = sample_field();
    write_flo(&path, &f).unwrap();
    let bytes = std::fs::read(&path).unwrap();
    assert_eq!(bytes.len(), 12 + 8 * 7 * 5);
    assert_eq!(&bytes[0..4], b"PIEH");
    let back = read_flo(&path).unwrap();
    assert_eq!((back.width, back.height), (7, 5));
    for i in 0..f.len() {
        if i == 3 {
            assert!(!back.is_known(i));
            continue;
        }
        // float32 storage.
        assert!((back.u[i] - f.u[i]).abs() < 1e-6);
        assert!((back.v[i] - f.v[i]).abs() < 1e-6);
    }
    assert_eq!(back.unknown_count(), 1);
}

#[test]
fn flo_reader_rejects_a_wrong_tag() {
    let mut bytes = encode_flo(&sample_field());
    bytes[0..4].copy_from_slice(b"PIEX");
    let e = parse_flo(&bytes).unwrap_err().to_string();
    assert!(e.contains("wrong tag") && e.contains("PIEH"), "{e}");
}

#[test]
fn flo_reader_rejects_truncated_and_padded_files() {
    let dir = tempfile::tempdir().unwrap();
    let bytes = encode_flo(&sample_field());
    let path = dir.path().join("short.flo");
    std::fs::write(&path, &bytes[..bytes.len() - 5]).unwrap();
    let e = read_flo(&path).unwrap_err().to_string();
    assert!(e.contains("truncated") && e.contains("short.flo"), "{e}");
    std::fs::write(&path, &bytes[..7]).unwrap();
    let e = read_flo(&path).unwrap_err().to_string();
    assert!(e.contains("header"), "{e}");
    let mut long = bytes.clone();
    long.extend_from_slice(&[0; 8]);
    let e = parse_flo(&long).unwrap_err().to_string();
    assert!(e.contains("unexpected bytes"), "{e}");
}

#[test]
fn flo_reader_rejects_an_absurd_size_without_allocating_it() {
    // A header claiming 2^30 x 2^30 pixels (8 EiB of flow) followed by 8 bytes: refused from the
    // header alone, both in memory and from a file.
    let mut bytes = b"PIEH".to_vec();
    bytes.extend_from_slice(&(1i32 << 30).to_le_bytes());
    bytes.extend_from_slice(&(1i32 << 30).to_le_bytes());
    bytes.extend_from_slice(&[0; 8]);
    let e = parse_flo(&bytes).unwrap_err().to_string();
    assert!(e.contains("out of range"), "{e}");
    // In range per side but far longer than the file: refused as truncated before reading.
    let mut bytes = b"PIEH".to_vec();
    bytes.extend_from_slice(&4000i32.to_le_bytes());
    bytes.extend_from_slice(&4000i32.to_le_bytes());
    bytes.extend_from_slice(&[0; 16]);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("big.flo");
    std::fs::write(&path, &bytes).unwrap();
    let e = read_flo(&path).unwrap_err().to_string();
    assert!(e.contains("truncated") && e.contains("128000000"), "{e}");
    // Negative sizes.
    let mut bytes = b"PIEH".to_vec();
    bytes.extend_from_slice(&(-3i32).to_le_bytes());
    bytes.extend_from_slice(&2i32.to_le_bytes());
    let e = parse_flo(&bytes).unwrap_err().to_string();
    assert!(e.contains("-3 x 2"), "{e}");
}

#[test]
fn flo_size_must_match_the_frames() {
    let f = sample_field();
    assert!(f.check_size(7, 5, "ground truth").is_ok());
    let e = f.check_size(8, 5, "ground truth").unwrap_err().to_string();
    assert!(e.contains("7 x 5") && e.contains("8 x 5"), "{e}");
}

#[test]
fn zero_motion_is_white_in_both_codings() {
    let wheel = color_wheel();
    for &coding in FlowColoring::VARIANTS {
        assert_eq!(
            flow_color(coding, &wheel, 0.0, 0.0, 3.0),
            [255, 255, 255, 255]
        );
        // A field at rest everywhere is white too (no division by a zero maximum).
        let img = flow_rgba(2, 2, &[0.0; 4], &[0.0; 4], coding, None);
        assert!(img.pixels().all(|p| p.0 == [255, 255, 255, 255]));
    }
}

#[test]
fn axis_directions_have_the_documented_middlebury_hues() {
    let wheel = color_wheel();
    let c = |u: f64, v: f64| flow_color(FlowColoring::Middlebury, &wheel, u, v, 1.0);
    // Right: a = atan2(-0, -1)/pi = -1, wheel position 0: red.
    assert_eq!(c(1.0, 0.0), [255, 0, 0, 255]);
    // Left: a = 0, position 27 = cyan-blue ramp step 2 (0, 255 - 255*2/11, 255).
    assert_eq!(c(-1.0, 0.0), [0, 209, 255, 255]);
    // Down (v > 0): a = -1/2, position 13.5, between red-yellow steps 13 and 14.
    let down = c(0.0, 1.0);
    assert_eq!((down[0], down[2]), (255, 0));
    assert!((229..=238).contains(&down[1]), "{down:?}");
    // Up: a = 1/2, position 40.5, blue-magenta steps 4 and 5: blue with some red.
    let up = c(0.0, -1.0);
    assert_eq!((up[1], up[2]), (0, 255));
    assert!((78..=98).contains(&up[0]), "{up:?}");
    // Half speed: halfway to white.
    assert_eq!(c(0.5, 0.0), [255, 127, 127, 255]);
    // Unknown: black.
    assert_eq!(c(1e10, 0.0), [0, 0, 0, 255]);
}

#[test]
fn axis_directions_have_the_documented_hsv_hues() {
    let wheel = color_wheel();
    let c = |u: f64, v: f64| flow_color(FlowColoring::Hsv, &wheel, u, v, 1.0);
    assert_eq!(c(1.0, 0.0), [255, 0, 0, 255]); // right: 0°
    assert_eq!(c(0.0, 1.0), [128, 255, 0, 255]); // down: 90°
    assert_eq!(c(-1.0, 0.0), [0, 255, 255, 255]); // left: 180°
    assert_eq!(c(0.0, -1.0), [128, 0, 255, 255]); // up: 270°
}

#[test]
fn legend_is_symmetric() {
    for &coding in FlowColoring::VARIANTS {
        let size = 64;
        let img = legend_rgba(size, coding);
        let sat = |x: u32, y: u32| {
            let p = img.get_pixel(x, y).0;
            let (mx, mn) = (*p[..3].iter().max().unwrap(), *p[..3].iter().min().unwrap());
            (p[3], mx as i32 - mn as i32)
        };
        let s = size as u32 - 1;
        for y in 0..size as u32 {
            for x in 0..size as u32 {
                let (a, sa) = sat(x, y);
                // The disk mask is symmetric under both mirrors and the transposition.
                assert_eq!(a, sat(s - x, y).0);
                assert_eq!(a, sat(x, s - y).0);
                assert_eq!(a, sat(y, x).0);
                if a == 0 {
                    continue;
                }
                // Saturation depends on the radius only (±1 from rounding of the ramps).
                for (xx, yy) in [(s - x, y), (x, s - y), (s - x, s - y), (y, x)] {
                    let sb = sat(xx, yy).1;
                    assert!((sa - sb).abs() <= 2, "{coding:?} ({x},{y}) {sa} vs {sb}");
                }
            }
        }
        // The centre is nearly white, the rim saturated, the corners transparent.
        let c = img.get_pixel(32, 32).0;
        assert!(c[..3].iter().all(|&v| v > 240), "{c:?}");
        assert_eq!(img.get_pixel(0, 0).0[3], 0);
        assert!(sat(63, 32).1 > 200);
    }
}

#[test]
fn arrows_are_subsampled_and_skip_unknowns() {
    let (w, h) = (10, 8);
    let mut u = vec![1.0; w * h];
    let v = vec![-2.0; w * h];
    u[2 * w + 2] = 1e10;
    let arrows = flow_arrows(w, h, &u, &v, 4, 0.5);
    // Rows 2 and 6, columns 2 and 6: four points minus the unknown.
    assert_eq!(arrows.len(), 3);
    let (o, t) = arrows[0];
    assert_eq!(o, [6.5, 2.5]);
    assert_eq!(t, [7.0, 1.5]);
}

/// On the public data beside the checkout (see `crate::shared_data`).
mod shared_data {
    use super::*;
    use crate::shared_data::shared_data;

    #[test]
    #[ignore = "needs ../shared/data"]
    fn a_middlebury_flo_file_loads_with_its_unknowns() {
        let path = shared_data("middlebury/RubberWhale/flow10.flo");
        let f = read_flo(&path).unwrap();
        assert_eq!((f.width, f.height), (584, 388));
        assert_eq!(f.unknown_count(), 3622);
        assert!((f.max_speed() - 4.6).abs() < 0.2, "{}", f.max_speed());
    }
}
