//! Every loader fed mutated valid files (bit flips, byte overwrites, truncations,
//! inserted junk, absurd header sizes, non-UTF-8 bytes, NaN/inf/huge number text) returns `Ok`
//! or an `Err` with a message; never a panic, a hang or a huge allocation. Cases per loader:
//! `BELIEFSCOPE_FUZZ_CASES` (default 5000 per loader, about 12 s in all in a release build; 20000 took 44 s).

use std::path::Path;

use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};

use beliefscope::io::csv::{parse_csv, parse_edge_list, read_csv};
use beliefscope::io::flo::{encode_flo, parse_flo};
use beliefscope::io::{FlowField, load_gray};
use beliefscope::scenarios::{KINDS, ScenarioConfig};

fn cases() -> u32 {
    std::env::var("BELIEFSCOPE_FUZZ_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(5000)
}

/// One mutation of a byte string.
#[derive(Debug, Clone)]
enum Mutation {
    FlipBit(usize, u8),
    SetByte(usize, u8),
    Truncate(usize),
    Insert(usize, Vec<u8>),
    /// A 32-bit field overwritten with an absurd value (huge declared sizes).
    HugeWord(usize, u32),
    /// A number token replaced by a text that is not a plain finite number.
    Text(usize, &'static str),
}

const WORDS: [u32; 6] = [0, 1, 0x7fff_ffff, 0xffff_ffff, 0x0001_0000, 0x8000_0000];
const TEXTS: [&str; 12] = [
    "NaN", "inf", "-inf", "1e999", "-1e999", "", "\"", ",,", "\r\n", "\u{feff}", "0x10", "1e-400",
];

fn mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        (any::<usize>(), 0u8..8).prop_map(|(p, b)| Mutation::FlipBit(p, b)),
        (any::<usize>(), any::<u8>()).prop_map(|(p, b)| Mutation::SetByte(p, b)),
        any::<usize>().prop_map(Mutation::Truncate),
        (
            any::<usize>(),
            proptest::collection::vec(any::<u8>(), 1..16)
        )
            .prop_map(|(p, b)| Mutation::Insert(p, b)),
        (any::<usize>(), proptest::sample::select(&WORDS[..]))
            .prop_map(|(p, w)| Mutation::HugeWord(p, w)),
        (any::<usize>(), proptest::sample::select(&TEXTS[..]))
            .prop_map(|(p, t)| Mutation::Text(p, t)),
    ]
}

fn apply(mut bytes: Vec<u8>, mutations: &[Mutation]) -> Vec<u8> {
    for m in mutations {
        let n = bytes.len().max(1);
        match m {
            Mutation::FlipBit(p, b) => {
                if let Some(x) = bytes.get_mut(p % n) {
                    *x ^= 1 << b;
                }
            }
            Mutation::SetByte(p, b) => {
                if let Some(x) = bytes.get_mut(p % n) {
                    *x = *b;
                }
            }
            Mutation::Truncate(p) => bytes.truncate(p % n),
            Mutation::Insert(p, b) => {
                let at = p % (bytes.len() + 1);
                bytes.splice(at..at, b.iter().copied());
            }
            Mutation::HugeWord(p, w) => {
                // Header fields are near the start: aim there most of the time.
                let at = if p % 4 == 0 { p % n } else { p % 24.min(n) };
                for (i, b) in w.to_le_bytes().iter().enumerate() {
                    if let Some(x) = bytes.get_mut(at + i) {
                        *x = *b;
                    }
                }
            }
            Mutation::Text(p, t) => {
                // Replace the number token around p (between separators) by t.
                let at = p % n;
                let sep = |b: &u8| matches!(b, b',' | b'\n' | b' ' | b'=' | b':');
                let start = bytes[..at.min(bytes.len())]
                    .iter()
                    .rposition(sep)
                    .map_or(0, |i| i + 1);
                let end = bytes[start.min(bytes.len())..]
                    .iter()
                    .position(sep)
                    .map_or(bytes.len(), |i| start + i);
                if start <= end {
                    bytes.splice(start..end, t.bytes());
                }
            }
        }
    }
    bytes
}

/// Runs `check` on `cases()` mutations of the samples; returns (cases, ok, err).
fn fuzz(name: &str, samples: &[Vec<u8>], check: impl Fn(&[u8]) -> Result<(), String>) {
    let ok = std::cell::Cell::new(0usize);
    let err = std::cell::Cell::new(0usize);
    let mut runner = TestRunner::new(Config {
        cases: cases(),
        failure_persistence: None,
        ..Config::default()
    });
    let strategy = (
        0..samples.len(),
        proptest::collection::vec(mutation(), 1..4),
    );
    runner
        .run(&strategy, |(i, mutations)| {
            let bytes = apply(samples[i].clone(), &mutations);
            match check(&bytes) {
                Ok(()) => ok.set(ok.get() + 1),
                Err(message) => {
                    prop_assert!(!message.trim().is_empty(), "an error without a message");
                    err.set(err.get() + 1);
                }
            }
            Ok(())
        })
        .unwrap_or_else(|e| panic!("{name}: {e}"));
    eprintln!(
        "fuzz {name}: {} cases, {} accepted, {} refused with a message, 0 failures",
        ok.get() + err.get(),
        ok.get(),
        err.get()
    );
}

fn encoded(format: image::ImageFormat) -> Vec<u8> {
    let img = image::GrayImage::from_fn(9, 7, |x, y| image::Luma([(x * 25 + y * 9) as u8]));
    let mut out = std::io::Cursor::new(Vec::new());
    // GIF has no gray encoder: RGB for every format (the loader converts to luma).
    image::DynamicImage::ImageLuma8(img)
        .to_rgb8()
        .write_to(&mut out, format)
        .unwrap();
    out.into_inner()
}

#[test]
fn image_loader_survives_mutated_files() {
    use image::ImageFormat::*;
    let samples: Vec<Vec<u8>> = [Png, Bmp, Pnm, Gif, Tiff, Jpeg]
        .into_iter()
        .map(encoded)
        .collect();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("fuzz.img");
    fuzz("image", &samples, |bytes| {
        std::fs::write(&path, bytes).unwrap();
        load_gray(&path).map(|_| ()).map_err(|e| e.to_string())
    });
}

#[test]
fn flo_parser_survives_mutated_files() {
    let mut field = FlowField::zeros(6, 4);
    for (i, (u, v)) in field.u.iter_mut().zip(field.v.iter_mut()).enumerate() {
        *u = i as f64 * 0.25;
        *v = -(i as f64) * 0.5;
    }
    field.u[3] = 1e10;
    let samples = vec![encode_flo(&field), encode_flo(&FlowField::zeros(1, 1))];
    fuzz("flo", &samples, |bytes| {
        parse_flo(bytes).map(|_| ()).map_err(|e| e.to_string())
    });
}

fn shared_or_asset(path: &str) -> Vec<u8> {
    std::fs::read(Path::new(env!("CARGO_MANIFEST_DIR")).join(path)).unwrap()
}

fn csv_samples() -> Vec<Vec<u8>> {
    let head = |bytes: Vec<u8>| -> Vec<u8> {
        let text = String::from_utf8(bytes).unwrap();
        text.lines()
            .take(30)
            .collect::<Vec<_>>()
            .join("\n")
            .into_bytes()
    };
    vec![
        head(shared_or_asset("assets/gauss_tree.csv")),
        head(shared_or_asset("assets/retrieval.csv")),
        // A quoted header with CRLF line ends and a byte-order mark, like UCI files.
        b"\xef\xbb\xbf\"Recency (months)\",\"Frequency, times\",y\r\n2,50,1\r\n0,13,1\r\n1,16,0\r\n"
            .to_vec(),
    ]
}

#[test]
fn csv_reader_survives_mutated_files() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("fuzz.csv");
    fuzz("csv (file, any bytes)", &csv_samples(), |bytes| {
        std::fs::write(&path, bytes).unwrap();
        read_csv(&path).map(|_| ()).map_err(|e| e.to_string())
    });
    fuzz("csv (text)", &csv_samples(), |bytes| {
        let text = String::from_utf8_lossy(bytes);
        parse_csv(&text, "fuzz")
            .map(|_| ())
            .map_err(|e| e.to_string())
    });
}

#[test]
fn edge_list_parser_survives_mutated_files() {
    let samples = vec![
        shared_or_asset("assets/gauss_tree.edges"),
        shared_or_asset("assets/nongauss_chain.edges"),
        shared_or_asset("assets/retrieval.edges"),
    ];
    fuzz("tree edge list", &samples, |bytes| {
        let text = String::from_utf8_lossy(bytes);
        parse_edge_list(&text, "fuzz")
            .map(|_| ())
            .map_err(|e| e.to_string())
    });
}

#[test]
fn config_json_survives_mutations_and_is_checked() {
    let samples: Vec<Vec<u8>> = KINDS
        .iter()
        .map(|k| serde_json::to_vec_pretty(&(k.default_config)()).unwrap())
        .collect();
    fuzz("config json", &samples, |bytes| {
        let config: ScenarioConfig =
            serde_json::from_slice(bytes).map_err(|e| format!("not a config: {e}"))?;
        config.check().map_err(|e| e.to_string())
    });
}

#[test]
fn pbp_model_file_survives_mutated_files() {
    use beliefscope::model::latent_dag::{ModelFile, synthetic_stand_in};
    use rand::SeedableRng;
    let samples: Vec<Vec<u8>> = [false, true]
        .iter()
        .map(|&loop_free| {
            let file = ModelFile::from_model(&synthetic_stand_in(loop_free), None);
            serde_json::to_vec_pretty(&file).unwrap()
        })
        .collect();
    fuzz("pbp model json", &samples, |bytes| {
        let text = std::str::from_utf8(bytes).map_err(|e| format!("not UTF-8: {e}"))?;
        let file = ModelFile::parse(text).map_err(|e| e.to_string())?;
        file.dag().map_err(|e| e.to_string())?;
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(1);
        file.bayes_net(&mut rng).map_err(|e| e.to_string())?;
        Ok(())
    });
}

#[test]
fn session_file_survives_mutations_and_every_restored_config_is_checked() {
    use beliefscope::app::session::{read_session, session_json};
    use beliefscope::app::state::State;
    let samples: Vec<Vec<u8>> = KINDS
        .iter()
        .map(|k| session_json(&State::default(), &(k.default_config)()).into_bytes())
        .collect();
    fuzz("session json", &samples, |bytes| {
        let text = std::str::from_utf8(bytes).map_err(|e| format!("not UTF-8: {e}"))?;
        let restored = read_session(text)?;
        for config in restored.configs.values() {
            config.check().map_err(|e| e.to_string())?;
        }
        restored.current.check().map_err(|e| e.to_string())
    });
}

/// On the public data beside the checkout (see `crate::shared_data`).
mod shared_data {
    use super::*;
    use crate::shared_data::shared_data;

    #[test]
    #[ignore = "needs ../shared/data"]
    fn uci_parsers_survive_mutated_files() {
        use beliefscope::io::uci::{UCI_FILES, parse_uci};
        for layout in UCI_FILES {
            let full = std::fs::read(shared_data(&format!("uci/{}", layout.file))).unwrap();
            // 40 lines spread over the file keep each case fast and both classes present (some
            // files are sorted by class); a header row, if any, stays first.
            let lines: Vec<&[u8]> = full.split_inclusive(|b| *b == b'\n').collect();
            let step = (lines.len() / 40).max(1);
            let head: Vec<u8> = lines
                .iter()
                .enumerate()
                .filter(|(i, _)| *i == 0 || i % step == 0)
                .take(41)
                .flat_map(|(_, l)| l.iter().copied())
                .collect();
            fuzz(&format!("uci {}", layout.file), &[head], |bytes| {
                let text = std::str::from_utf8(bytes).map_err(|e| format!("not UTF-8: {e}"))?;
                parse_uci(text, &layout, layout.file)
                    .map(|_| ())
                    .map_err(|e| e.to_string())
            });
        }
    }
}
