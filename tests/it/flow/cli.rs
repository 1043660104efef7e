//! `beliefscope run flow` end to end: the files, results.json's shape with EPE and AAE per
//! iteration, the user's frames with a .flo, and one-line errors for bad input.

use serde_json::Value;

use crate::cli_common::{beliefscope, read_json, stderr};

#[test]
fn run_flow_on_the_built_in_pair_writes_the_files() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("run");
    let o = beliefscope(&[
        "run",
        "flow",
        "--width",
        "48",
        "--height",
        "40",
        "--iters",
        "4",
        "--levels",
        "2",
        "--compare",
        "discrete",
        "--out",
        out.to_str().unwrap(),
        "--json",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    for f in [
        "results.json",
        "flow.flo",
        "flow.png",
        "legend.png",
        "ground_truth.png",
        "epe.png",
        "flow_discrete.flo",
        "curves.csv",
        "errors.csv",
    ] {
        assert!(out.join(f).is_file(), "{f} missing");
    }
    let r: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(r["scenario"], "flow");
    assert_eq!(r["algorithm"], "sosmp");
    assert_eq!(r["config"]["coefficients"], 9);
    assert_eq!(r["config"]["samples"], 3);
    let iters = r["iterations"].as_array().unwrap();
    assert_eq!(iters.len(), 8, "4 iterations at each of 2 levels");
    for (i, it) in iters.iter().enumerate() {
        assert_eq!(it["iter"], i + 1);
        for k in ["epe", "aae", "epe_discrete", "aae_discrete"] {
            assert!(it["metrics"][k].as_f64().unwrap().is_finite(), "{k} at {i}");
        }
    }
    let fin = &r["final"]["metrics"];
    assert!(fin["epe"].as_f64().unwrap() < fin["epe_zero_flow"].as_f64().unwrap());
    let flow = beliefscope::io::read_flo(&out.join("flow.flo")).unwrap();
    assert_eq!((flow.width, flow.height), (48, 40));
    let legend = image::open(out.join("legend.png")).unwrap();
    assert_eq!(legend.width(), legend.height());
}

#[test]
fn run_flow_on_user_frames_with_ground_truth() {
    let (f1, f2, gt) = beliefscope::scenarios::flow::synthetic::synthetic_pair(40, 32, 5);
    let dir = tempfile::tempdir().unwrap();
    let (a, b, g) = (
        dir.path().join("a.png"),
        dir.path().join("b.png"),
        dir.path().join("gt.flo"),
    );
    beliefscope::io::save_gray_png(&a, 40, 32, &f1.pixels).unwrap();
    beliefscope::io::save_gray_png(&b, 40, 32, &f2.pixels).unwrap();
    beliefscope::io::write_flo(&g, &gt).unwrap();
    let out = dir.path().join("o");
    let o = beliefscope(&[
        "run",
        "flow",
        "--frame1",
        a.to_str().unwrap(),
        "--frame2",
        b.to_str().unwrap(),
        "--gt",
        g.to_str().unwrap(),
        "--algorithm",
        "discrete",
        "--iters",
        "3",
        "--levels",
        "1",
        "--max-displacement",
        "3",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let r: Value = read_json(&out.join("results.json"));
    assert_eq!(r["algorithm"], "discrete");
    assert!(r["iterations"][2]["metrics"]["epe"].as_f64().is_some());
    // Without ground truth: no metrics, still the flow.
    let o = beliefscope(&[
        "run",
        "flow",
        "--frame1",
        a.to_str().unwrap(),
        "--frame2",
        b.to_str().unwrap(),
        "--iters",
        "2",
        "--levels",
        "1",
        "--json",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let r: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert!(r["iterations"][0]["metrics"]["epe"].is_null());
}

#[test]
fn bad_flow_input_is_one_line_and_non_zero() {
    let dir = tempfile::tempdir().unwrap();
    let a = dir.path().join("a.png");
    beliefscope::io::save_gray_png(&a, 8, 8, &[100.0; 64]).unwrap();
    let bad_tag = dir.path().join("x.flo");
    std::fs::write(&bad_tag, b"XXXX\x08\0\0\0\x08\0\0\0").unwrap();
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (vec!["--frame1", a.to_str().unwrap()], "both frames"),
        (vec!["--coefficients", "10"], "square"),
        (vec!["--max-displacement", "1.3"], "multiple"),
        (
            vec![
                "--frame1",
                a.to_str().unwrap(),
                "--frame2",
                a.to_str().unwrap(),
                "--gt",
                bad_tag.to_str().unwrap(),
                "--levels",
                "1",
            ],
            "wrong tag",
        ),
        (
            vec![
                "--frame1",
                "/nonexistent.png",
                "--frame2",
                "/nonexistent.png",
            ],
            "nonexistent",
        ),
    ];
    for (extra, needle) in cases {
        let mut args = vec!["run", "flow", "--iters", "1"];
        args.extend(extra);
        let o = beliefscope(&args);
        assert!(!o.status.success(), "{args:?} should fail");
        let e = stderr(&o);
        assert!(e.contains(needle), "{args:?}: {e}");
        assert_eq!(e.trim().lines().count(), 1, "{e}");
    }
}
