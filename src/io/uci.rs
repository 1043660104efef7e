//! The four UCI binary-classification files of Exp. 5 of Jitkrittum et al. 2015 (main Figs. 1,
//! 8, 9), in the paper's order: banknote authentication, blood transfusion, fertility,
//! ionosphere. Each is comma-separated text with the class in the last column; the
//! transfusion file has a header row; ionosphere's second column is all zero and is dropped.
//! Every feature is z-scored over the whole file (the authors' `normdata.m`). Cost: O(rows ·
//! columns).

use std::path::Path;

use nalgebra::DMatrix;

use crate::error::{Error, Result};

/// How one file is laid out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct UciFile {
    pub name: &'static str,
    pub file: &'static str,
    pub header: bool,
    /// Feature columns before the class column.
    pub features: usize,
    /// The class value read as `true`.
    pub positive: &'static str,
    /// The class value read as `false`.
    pub negative: &'static str,
    /// A feature column (0-based) to drop.
    pub drop_column: Option<usize>,
}

/// The four files in the order of Exp. 5.
pub const UCI_FILES: [UciFile; 4] = [
    UciFile {
        name: "banknote",
        file: "data_banknote_authentication.txt",
        header: false,
        features: 4,
        positive: "1",
        negative: "0",
        drop_column: None,
    },
    UciFile {
        name: "blood",
        file: "transfusion.data",
        header: true,
        features: 4,
        positive: "1",
        negative: "0",
        drop_column: None,
    },
    UciFile {
        name: "fertility",
        file: "fertility_Diagnosis.txt",
        header: false,
        features: 9,
        positive: "O",
        negative: "N",
        drop_column: None,
    },
    UciFile {
        name: "ionosphere",
        file: "ionosphere.data",
        header: false,
        features: 34,
        positive: "g",
        negative: "b",
        drop_column: Some(1),
    },
];

/// Files larger than this are refused before reading (the largest of the four is 76 KB).
pub const MAX_UCI_BYTES: u64 = 64 << 20;

/// A loaded data set: z-scored inputs (n × d) and labels.
#[derive(Debug, Clone)]
pub struct UciSet {
    pub name: &'static str,
    pub x: DMatrix<f64>,
    pub y: Vec<bool>,
}

/// Parses one file's text (`source` names it in errors).
pub fn parse_uci(text: &str, layout: &UciFile, source: &str) -> Result<UciSet> {
    let bad = |line: usize, reason: String| Error::Io(format!("{source}, line {line}: {reason}"));
    let mut rows: Vec<Vec<f64>> = Vec::new();
    let mut labels = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if (layout.header && i == 0) || line.trim().is_empty() {
            continue;
        }
        let fields: Vec<&str> = line.split(',').map(str::trim).collect();
        if fields.len() != layout.features + 1 {
            return Err(bad(
                i + 1,
                format!(
                    "expected {} comma-separated fields ({} features and the class), found {}",
                    layout.features + 1,
                    layout.features,
                    fields.len()
                ),
            ));
        }
        let mut row = Vec::with_capacity(layout.features);
        for (j, f) in fields[..layout.features].iter().enumerate() {
            if Some(j) == layout.drop_column {
                continue;
            }
            let v: f64 = f
                .parse()
                .map_err(|_| bad(i + 1, format!("column {} is not a number: '{f}'", j + 1)))?;
            if !v.is_finite() {
                return Err(bad(i + 1, format!("column {} is not finite: '{f}'", j + 1)));
            }
            row.push(v);
        }
        let class = fields[layout.features];
        let label = if class == layout.positive {
            true
        } else if class == layout.negative {
            false
        } else {
            return Err(bad(
                i + 1,
                format!(
                    "class '{class}' is neither '{}' nor '{}'",
                    layout.positive, layout.negative
                ),
            ));
        };
        rows.push(row);
        labels.push(label);
    }
    if rows.len() < 3 {
        return Err(Error::Io(format!(
            "{source}: needs at least 3 rows, found {}",
            rows.len()
        )));
    }
    if labels.iter().all(|&l| l) || labels.iter().all(|&l| !l) {
        return Err(Error::Io(format!("{source}: every row has the same class")));
    }
    let (n, d) = (rows.len(), rows[0].len());
    let mut x = DMatrix::from_fn(n, d, |i, j| rows[i][j]);
    for j in 0..d {
        let mean = x.column(j).mean();
        let sd = (x.column(j).map(|v| (v - mean).powi(2)).sum() / (n - 1) as f64).sqrt();
        if sd.is_nan() || sd <= 0.0 {
            return Err(Error::Io(format!(
                "{source}: feature column {} is constant, so it cannot be z-scored",
                j + 1
            )));
        }
        x.column_mut(j).apply(|v| *v = (*v - mean) / sd);
    }
    Ok(UciSet {
        name: layout.name,
        x,
        y: labels,
    })
}

/// Loads the four files from `dir`, naming the folder and the missing file when absent.
pub fn load_uci(dir: &Path) -> Result<Vec<UciSet>> {
    UCI_FILES
        .iter()
        .map(|layout| {
            let path = dir.join(layout.file);
            let meta = std::fs::metadata(&path).map_err(|e| {
                Error::Io(format!(
                    "Exp. 5 needs the four UCI files in {} ({}); cannot open {}: {e}",
                    dir.display(),
                    UCI_FILES.map(|f| f.file).join(", "),
                    path.display()
                ))
            })?;
            if meta.len() > MAX_UCI_BYTES {
                return Err(Error::Io(format!(
                    "{}: {} bytes is more than the {} MB a UCI file may have",
                    path.display(),
                    meta.len(),
                    MAX_UCI_BYTES >> 20
                )));
            }
            let bytes = std::fs::read(&path)
                .map_err(|e| Error::Io(format!("cannot read {}: {e}", path.display())))?;
            let text = String::from_utf8(bytes).map_err(|_| {
                Error::Io(format!("{}: the file is not UTF-8 text", path.display()))
            })?;
            parse_uci(&text, layout, &path.display().to_string())
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uci_parse_zscores_and_names_bad_rows() {
        let layout = UCI_FILES[1];
        let text = "a,b,c,d,class\n1,2,3,4,1\n3,2,5,4,0\n5,8,1,4,1\n";
        let err = parse_uci(text, &layout, "t").unwrap_err().to_string();
        assert!(err.contains("feature column 4 is constant"), "{err}");
        let text = "a,b,c,d,class\n1,2,3,4,1\n3,2,5,5,0\n5,8,1,6,1\n";
        let set = parse_uci(text, &layout, "t").unwrap();
        assert_eq!(set.x.shape(), (3, 4));
        assert!(set.x.column(0).mean().abs() < 1e-15);
        assert_eq!(set.y, vec![true, false, true]);
        let err = parse_uci("h\n1,2,3,4,yes\n", &layout, "t").unwrap_err();
        assert!(err.to_string().contains("line 2"), "{err}");
        let err = parse_uci("h\n1,2,x,4,1\n", &layout, "t").unwrap_err();
        assert!(err.to_string().contains("column 3"), "{err}");
    }
}
