//! `beliefscope run tree`, `dataset` and `run retrieval` end to end: the results.json fields
//! the issue names, the files, the example assets, and one-line errors for bad input.

use std::path::{Path, PathBuf};

use crate::cli_common::{beliefscope, read_json, stderr};

fn asset(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("assets")
        .join(name)
}

#[test]
fn run_tree_on_a_builtin_writes_queries_reference_and_errors() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("run");
    let o = beliefscope(&[
        "run",
        "tree",
        "--builtin",
        "nongauss-chain",
        "--rows",
        "400",
        "--samples-per-edge",
        "80",
        "--evidence",
        "x2=0.3",
        "--grid",
        "50",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    for f in ["results.json", "beliefs.csv", "curves.csv", "tree.edges"] {
        assert!(out.join(f).is_file(), "{f} missing");
    }
    let r = read_json(&out.join("results.json"));
    assert_eq!(r["scenario"], "tree");
    assert!(r["config"].is_object() && r["iterations"].is_array());
    assert!(r["final"]["metrics"]["l1_parzen"].as_f64().unwrap() >= 0.0);
    let q = &r["queries"];
    assert_eq!(q.as_object().unwrap().len(), 4, "every hidden node");
    for name in ["x1", "x3", "x4", "x5"] {
        let x = &q[name];
        for key in ["grid", "parzen", "embedding", "gaussian_bp", "reference"] {
            assert_eq!(x[key].as_array().unwrap().len(), 50, "{name}.{key}");
        }
        assert!(x["mean"].is_f64() && x["argmax"].is_f64());
        for e in ["l1_parzen", "l1_embedding", "l1_gaussian_bp", "mean_error"] {
            assert!(x["errors"][e].as_f64().unwrap() >= 0.0, "{name}.errors.{e}");
        }
    }
    assert!(
        r["lambda_convention"]
            .as_str()
            .unwrap()
            .contains("K + lambda I")
    );
    assert!(r["kernels"]["x1"]["median_distance"].as_f64().unwrap() > 0.0);
    // The tree file written can be read back as --tree.
    let again = dir.path().join("again");
    let o = beliefscope(&[
        "run",
        "tree",
        "--builtin",
        "nongauss-chain",
        "--rows",
        "400",
        "--samples-per-edge",
        "80",
        "--tree",
        out.join("tree.edges").to_str().unwrap(),
        "--evidence",
        "x2=0.3",
        "--grid",
        "50",
        "--out",
        again.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let r2 = read_json(&again.join("results.json"));
    assert_eq!(r2["queries"]["x1"]["parzen"], r["queries"]["x1"]["parzen"]);
}

#[test]
fn run_tree_on_csv_files_with_groups_queries_and_chow_liu() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("g");
    let data = asset("gauss_tree.csv");
    let o = beliefscope(&[
        "run",
        "tree",
        "--data",
        data.to_str().unwrap(),
        "--tree",
        "chowliu",
        "--evidence",
        "x1=0.5",
        "--query",
        "x2,x3",
        "--samples-per-edge",
        "100",
        "--shared-samples",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let r = read_json(&out.join("results.json"));
    let q = r["queries"].as_object().unwrap();
    assert_eq!(q.len(), 2);
    assert!(q["x2"]["reference"].is_null(), "a CSV has no reference");
    assert_eq!(r["tree"]["topology"], "chowliu");
    assert_eq!(r["tree"]["edges"].as_array().unwrap().len(), 7);
    // A 2-D node: mean and argmax are arrays, beliefs over the candidate set.
    let out = dir.path().join("r");
    let data = asset("retrieval.csv");
    let o = beliefscope(&[
        "run",
        "tree",
        "--data",
        data.to_str().unwrap(),
        "--nodes",
        "a=x1_1,x1_2;b=x2_1,x2_2;c=x3_1",
        "--evidence",
        "a=0.1:-0.2",
        "--samples-per-edge",
        "60",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let r = read_json(&out.join("results.json"));
    let b = &r["queries"]["b"];
    assert_eq!(b["mean"].as_array().unwrap().len(), 2);
    assert_eq!(b["argmax"].as_array().unwrap().len(), 2);
    let n = b["candidates"].as_array().unwrap().len();
    assert!(n > 10);
    assert_eq!(b["parzen"].as_array().unwrap().len(), n);
    assert_eq!(b["gaussian_bp"].as_array().unwrap().len(), n);
    assert!(r["queries"]["c"]["grid"].is_array());
}

#[test]
fn bad_tree_input_exits_with_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let data = asset("nongauss_chain.csv");
    let edges = dir.path().join("cycle.edges");
    std::fs::write(&edges, "x1 - x2\nx2 - x3\nx3 - x1\nx3 - x4\nx4 - x5\n").unwrap();
    let run = |extra: &[&str]| {
        let mut args = vec!["run", "tree", "--data", data.to_str().unwrap()];
        args.extend_from_slice(extra);
        beliefscope(&args)
    };
    let o = run(&["--tree", edges.to_str().unwrap()]);
    assert!(!o.status.success());
    let e = stderr(&o);
    assert!(e.contains("x3 - x1") && e.contains("cycle"), "{e}");
    let o = run(&["--nodes", "a=x1;b=zz"]);
    assert!(!o.status.success());
    assert!(stderr(&o).contains("'zz'"), "{}", stderr(&o));
    let o = run(&["--evidence", "x9=1"]);
    assert!(!o.status.success());
    assert!(stderr(&o).contains("'x9'"), "{}", stderr(&o));
    // Outside the data range: a warning, not an error.
    let o = run(&["--evidence", "x2=3.0", "--samples-per-edge", "50"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stderr(&o).contains("warning") && stderr(&o).contains("outside the data range"));
    let o = beliefscope(&["run", "tree", "--builtin", "gauss-tree", "--lambda=-1"]);
    assert!(!o.status.success());
    assert!(stderr(&o).contains("lambda"), "{}", stderr(&o));
    let o = beliefscope(&["run", "tree"]);
    assert!(!o.status.success(), "a data source is required");
}

#[test]
fn the_example_assets_are_the_generated_datasets() {
    for (name, file) in [
        ("gauss-tree", "gauss_tree.csv"),
        ("nongauss-chain", "nongauss_chain.csv"),
        ("retrieval", "retrieval.csv"),
    ] {
        let o = beliefscope(&["dataset", name, "--rows", "300"]);
        assert!(o.status.success(), "{}", stderr(&o));
        let expected = std::fs::read_to_string(asset(file)).unwrap();
        assert!(
            String::from_utf8_lossy(&o.stdout) == expected,
            "assets/{file} differs from `beliefscope dataset {name} --rows 300`"
        );
    }
}

#[test]
fn run_retrieval_writes_recall_curves() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("ret");
    let o = beliefscope(&[
        "run",
        "retrieval",
        "--lengths",
        "2..3",
        "--repeats",
        "2",
        "--pool",
        "60",
        "--samples-per-edge",
        "30",
        "--max-k",
        "20",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let csv = std::fs::read_to_string(out.join("recall.csv")).unwrap();
    let mut lines = csv.lines();
    assert_eq!(lines.next(), Some("method,length,k,recall"));
    let rows: Vec<Vec<String>> = lines
        .map(|l| l.split(',').map(str::to_string).collect())
        .collect();
    assert_eq!(rows.len(), 3 * 2 * 20);
    for method in ["kbp", "gaussian_bp", "nearest_neighbour"] {
        for length in ["2", "3"] {
            let curve: Vec<f64> = rows
                .iter()
                .filter(|r| r[0] == method && r[1] == length)
                .map(|r| r[3].parse().unwrap())
                .collect();
            assert_eq!(curve.len(), 20);
            assert!(curve.windows(2).all(|w| w[1] >= w[0]), "{method} L{length}");
            assert!(curve[19] <= 1.0 && curve[0] >= 0.0);
        }
    }
    let r = read_json(&out.join("results.json"));
    assert_eq!(r["scenario"], "retrieval");
    assert_eq!(r["iterations"].as_array().unwrap().len(), 2);
    assert_eq!(r["recall"]["kbp"]["3"].as_array().unwrap().len(), 20);
    let o = beliefscope(&["run", "retrieval", "--lengths", "1..12"]);
    assert!(!o.status.success());
    assert!(stderr(&o).contains("lengths"), "{}", stderr(&o));
}
