//! Numeric CSV datasets (one joint sample per row) and tree edge-list files.
//!
//! # CSV
//! Records are split by the `csv` crate (RFC 4180 quoting, so a quoted header such as UCI
//! transfusion's `"whether he/she donated blood in March 2007"` or a quoted comma is one field;
//! CRLF or LF; a UTF-8 byte-order mark is dropped). The first non-empty record is the header:
//! one name per column (surrounding spaces are stripped; names must be unique and non-empty).
//! Every following record is a row of the same number of numbers. Lines starting with `#` are
//! comments. NaN, infinities, text in a numeric field and ragged rows are refused with an error
//! naming the line (1-based, as an editor shows it) and the column. Cost: O(bytes).
//!
//! # Edge lists
//! A tree over named nodes, one statement per line, `#` starts a comment:
//!
//! ```text
//! # beliefscope tree
//! node x1                      # a node whose column is the column of the same name
//! node pos = px, py            # a node made of a group of columns (a 2-D variable)
//! node x3 = x3 @ 0.25 0.5      # optional canvas position after '@'
//! x1 - pos                     # an edge (also "x1, pos" or "x1 pos")
//! pos - x3
//! ```
//!
//! Nodes named only in edges are declared implicitly (their column is their name). The file
//! does not check that the edges form a tree: that is the caller's job (see
//! [`crate::model::Graph::check_tree`]), so the offending edge can be shown.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;

use crate::error::{Error, Result};

/// A numeric table: column names and row-major values (`rows x names.len()`).
#[derive(Debug, Clone, PartialEq)]
pub struct Dataset {
    pub names: Vec<String>,
    /// Row-major values, `values[r * cols + c]`.
    pub values: Vec<f64>,
}

impl Dataset {
    /// Builds a dataset from names and row-major values, checking the shape, the names and
    /// that every value is finite.
    pub fn new(names: Vec<String>, values: Vec<f64>) -> Result<Dataset> {
        if names.is_empty() {
            return Err(Error::Io("a dataset needs at least one column".into()));
        }
        check_names(&names, "dataset")?;
        if !values.len().is_multiple_of(names.len()) {
            return Err(Error::Io(format!(
                "{} values do not fill rows of {} columns",
                values.len(),
                names.len()
            )));
        }
        let d = Dataset { names, values };
        if let Some(i) = d.values.iter().position(|v| !v.is_finite()) {
            let (r, c) = (i / d.cols(), i % d.cols());
            return Err(Error::Io(format!(
                "row {} column '{}' is {} (only finite numbers are allowed)",
                r + 1,
                d.names[c],
                d.values[i]
            )));
        }
        Ok(d)
    }

    pub fn rows(&self) -> usize {
        self.values.len() / self.names.len().max(1)
    }

    pub fn cols(&self) -> usize {
        self.names.len()
    }

    /// The index of a column by name.
    pub fn column_index(&self, name: &str) -> Option<usize> {
        self.names.iter().position(|n| n == name)
    }

    /// Like [`Dataset::column_index`] but an error listing the columns that exist.
    pub fn require_column(&self, name: &str) -> Result<usize> {
        self.column_index(name).ok_or_else(|| {
            Error::Io(format!(
                "unknown column '{name}' (the columns are: {})",
                self.names.join(", ")
            ))
        })
    }

    pub fn value(&self, row: usize, col: usize) -> f64 {
        self.values[row * self.cols() + col]
    }

    /// One column as a vector. O(rows).
    pub fn column(&self, col: usize) -> Vec<f64> {
        (0..self.rows()).map(|r| self.value(r, col)).collect()
    }

    /// The given columns of every row, row-major (`rows x cols.len()`). O(rows · cols).
    pub fn select_columns(&self, cols: &[usize]) -> Vec<f64> {
        let mut out = Vec::with_capacity(self.rows() * cols.len());
        for r in 0..self.rows() {
            for &c in cols {
                out.push(self.value(r, c));
            }
        }
        out
    }

    /// `(min, max)` of a column (`(NaN, NaN)` for an empty table).
    pub fn column_range(&self, col: usize) -> (f64, f64) {
        (0..self.rows()).fold((f64::NAN, f64::NAN), |(lo, hi), r| {
            let v = self.value(r, col);
            (lo.min(v), hi.max(v))
        })
    }

    /// An error naming the first of `cols` whose values are all equal (zero variance).
    pub fn check_variance(&self, cols: &[usize]) -> Result<()> {
        for &c in cols {
            let (lo, hi) = self.column_range(c);
            if self.rows() > 0 && lo == hi {
                return Err(Error::Io(format!(
                    "column '{}' has zero variance (every row is {lo}): a kernel cannot tell \
                     its values apart and a bandwidth cannot be chosen; drop the column",
                    self.names[c]
                )));
            }
        }
        Ok(())
    }

    /// The dataset as CSV text, numbers with up to `decimals` digits after the point
    /// (trailing zeros kept, so the file is stable). O(rows · cols).
    pub fn to_csv(&self, decimals: usize) -> String {
        let mut out = self.names.join(",");
        out.push('\n');
        for r in 0..self.rows() {
            for c in 0..self.cols() {
                if c > 0 {
                    out.push(',');
                }
                let v = self.value(r, c);
                // Avoid "-0.0000" for tiny negatives.
                let v = if v.abs() < 0.5 * 10f64.powi(-(decimals as i32)) {
                    0.0
                } else {
                    v
                };
                let _ = write!(out, "{v:.decimals$}");
            }
            out.push('\n');
        }
        out
    }
}

fn check_names(names: &[String], what: &str) -> Result<()> {
    let mut seen = BTreeMap::new();
    for (i, n) in names.iter().enumerate() {
        if n.is_empty() {
            return Err(Error::Io(format!(
                "{what}: column {} has an empty name",
                i + 1
            )));
        }
        if let Some(j) = seen.insert(n.as_str(), i) {
            return Err(Error::Io(format!(
                "{what}: column name '{n}' appears twice (columns {} and {})",
                j + 1,
                i + 1
            )));
        }
    }
    Ok(())
}

/// Quotes left around a field that did not start with its quote (`a, "b"`: the csv crate keeps
/// a quote that follows a space), stripped as a person means them.
fn unquote(s: &str) -> &str {
    let t = s.trim();
    if t.len() >= 2 && t.starts_with('"') && t.ends_with('"') {
        t[1..t.len() - 1].trim()
    } else {
        t
    }
}

/// Parses CSV text (see the module docs). `source` names the file in errors.
pub fn parse_csv(text: &str, source: &str) -> Result<Dataset> {
    parse_csv_with(text, source, true)
}

/// The names given to the columns of a CSV file without a header row: `c1`, `c2`, ...
pub fn generated_names(columns: usize) -> Vec<String> {
    (1..=columns).map(|i| format!("c{i}")).collect()
}

/// Parses CSV text whose first row is a header (`header`) or already data (e.g. UCI files);
/// without a header the columns are named by [`generated_names`].
pub fn parse_csv_with(text: &str, source: &str, header: bool) -> Result<Dataset> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut reader = ::csv::ReaderBuilder::new()
        .has_headers(false)
        .flexible(true)
        .comment(Some(b'#'))
        .trim(::csv::Trim::All)
        .from_reader(text.as_bytes());
    let mut names: Option<Vec<String>> = None;
    let mut values = Vec::new();
    let mut record = ::csv::StringRecord::new();
    loop {
        let more = reader.read_record(&mut record).map_err(|e| {
            let line = e.position().map_or(0, |p| p.line());
            Error::Io(format!("{source}: line {line}: {e}"))
        })?;
        if !more {
            break;
        }
        let line_no = record.position().map_or(0, |p| p.line()) as usize;
        // A blank (or whitespace-only) line is one empty field: skip it.
        if record.iter().all(str::is_empty) {
            continue;
        }
        if names.is_none() && !header {
            names = Some(generated_names(record.len()));
        }
        match &names {
            None => {
                let header: Vec<String> = record.iter().map(|f| unquote(f).to_string()).collect();
                check_names(&header, &format!("{source}: header (line {line_no})"))?;
                names = Some(header);
            }
            Some(header) => {
                if record.len() != header.len() {
                    return Err(Error::Io(format!(
                        "{source}: line {line_no} has {} fields, but the header has {} columns",
                        record.len(),
                        header.len()
                    )));
                }
                for (f, name) in record.iter().zip(header) {
                    let f = unquote(f);
                    let v: f64 = f.parse().map_err(|_| {
                        Error::Io(format!(
                            "{source}: line {line_no}, column '{name}': '{f}' is not a number"
                        ))
                    })?;
                    if !v.is_finite() {
                        return Err(Error::Io(format!(
                            "{source}: line {line_no}, column '{name}': {f} is not allowed \
                             (every value must be a finite number)"
                        )));
                    }
                    values.push(v);
                }
            }
        }
    }
    let names = names.ok_or_else(|| Error::Io(format!("{source}: no header row (empty file)")))?;
    if values.is_empty() {
        return Err(Error::Io(format!(
            "{source}: the header has no data rows below it"
        )));
    }
    Dataset::new(names, values)
}

/// Reads a CSV file (see the module docs).
pub fn read_csv(path: &Path) -> Result<Dataset> {
    read_csv_with(path, true)
}

/// Reads a CSV file with or without a header row (see [`parse_csv_with`]).
pub fn read_csv_with(path: &Path, header: bool) -> Result<Dataset> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| Error::Io(format!("cannot read {}: {e}", path.display())))?;
    parse_csv_with(&text, &path.display().to_string(), header)
}

/// Writes a dataset as CSV, atomically.
pub fn write_csv(path: &Path, data: &Dataset, decimals: usize) -> Result<()> {
    super::write_atomic(path, data.to_csv(decimals).as_bytes())
}

/// One node of an edge-list file.
#[derive(Debug, Clone, PartialEq)]
pub struct EdgeListNode {
    pub name: String,
    /// The columns of the node; empty means "the column of the same name".
    pub columns: Vec<String>,
    /// Canvas position, if the file gives one.
    pub position: Option<[f64; 2]>,
}

/// A tree as written in an edge-list file: named nodes and edges between them (by index).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct EdgeList {
    pub nodes: Vec<EdgeListNode>,
    pub edges: Vec<(usize, usize)>,
}

impl EdgeList {
    pub fn node_index(&self, name: &str) -> Option<usize> {
        self.nodes.iter().position(|n| n.name == name)
    }

    fn node_or_insert(&mut self, name: &str) -> usize {
        match self.node_index(name) {
            Some(i) => i,
            None => {
                self.nodes.push(EdgeListNode {
                    name: name.to_string(),
                    columns: Vec::new(),
                    position: None,
                });
                self.nodes.len() - 1
            }
        }
    }

    /// The file text: every node (with its columns and position when set), then the edges.
    pub fn to_text(&self) -> String {
        let mut out = String::from(
            "# beliefscope tree: 'node NAME [= COL, ...] [@ X Y]', then one 'A - B' per edge\n",
        );
        for n in &self.nodes {
            let _ = write!(out, "node {}", n.name);
            if !n.columns.is_empty() && n.columns != [n.name.clone()] {
                let _ = write!(out, " = {}", n.columns.join(", "));
            }
            if let Some([x, y]) = n.position {
                let _ = write!(out, " @ {x:.4} {y:.4}");
            }
            out.push('\n');
        }
        for &(a, b) in &self.edges {
            let _ = writeln!(out, "{} - {}", self.nodes[a].name, self.nodes[b].name);
        }
        out
    }
}

fn check_node_name(name: &str, source: &str, line_no: usize) -> Result<()> {
    if name.is_empty()
        || name
            .chars()
            .any(|c| c.is_whitespace() || matches!(c, ',' | '=' | '@' | '#' | ';'))
    {
        return Err(Error::Io(format!(
            "{source}: line {line_no}: '{name}' is not a valid node name (no spaces, ',', '=', \
             '@', '#' or ';')"
        )));
    }
    Ok(())
}

/// Parses edge-list text (see the module docs). Refuses self loops and duplicate edges here,
/// naming the line; cycles and disconnected nodes are left to the tree check.
pub fn parse_edge_list(text: &str, source: &str) -> Result<EdgeList> {
    let mut list = EdgeList::default();
    let mut edge_lines: BTreeMap<(usize, usize), usize> = BTreeMap::new();
    for (i, raw) in text.lines().enumerate() {
        let line_no = i + 1;
        let line = raw.split('#').next().unwrap_or("").trim();
        if line.is_empty() {
            continue;
        }
        if let Some(rest) = line
            .strip_prefix("node ")
            .or_else(|| line.strip_prefix("node\t"))
        {
            let (decl, position) = match rest.split_once('@') {
                Some((d, p)) => {
                    let nums: Vec<&str> = p.split_whitespace().collect();
                    let parsed: Vec<f64> = nums.iter().filter_map(|s| s.parse().ok()).collect();
                    if nums.len() != 2 || parsed.len() != 2 || parsed.iter().any(|v| !v.is_finite())
                    {
                        return Err(Error::Io(format!(
                            "{source}: line {line_no}: the position after '@' must be two \
                             numbers, got '{}'",
                            p.trim()
                        )));
                    }
                    (d, Some([parsed[0], parsed[1]]))
                }
                None => (rest, None),
            };
            let (name, columns) = match decl.split_once('=') {
                Some((n, c)) => {
                    let cols: Vec<String> = c
                        .split(',')
                        .map(|s| s.trim().to_string())
                        .filter(|s| !s.is_empty())
                        .collect();
                    if cols.is_empty() {
                        return Err(Error::Io(format!(
                            "{source}: line {line_no}: node '{}' has '=' but no columns",
                            n.trim()
                        )));
                    }
                    (n.trim(), cols)
                }
                None => (decl.trim(), Vec::new()),
            };
            check_node_name(name, source, line_no)?;
            if list.node_index(name).is_some() {
                return Err(Error::Io(format!(
                    "{source}: line {line_no}: node '{name}' is declared twice"
                )));
            }
            list.nodes.push(EdgeListNode {
                name: name.to_string(),
                columns,
                position,
            });
            continue;
        }
        // Separators: commas, whitespace and free-standing dashes ("a - b", "a -- b").
        let parts: Vec<&str> = line
            .split(|c: char| c == ',' || c.is_whitespace())
            .filter(|s| !s.is_empty() && !s.chars().all(|c| c == '-'))
            .collect();
        if parts.len() != 2 {
            return Err(Error::Io(format!(
                "{source}: line {line_no}: expected an edge 'A - B' or a 'node' line, got '{line}'"
            )));
        }
        for p in &parts {
            check_node_name(p, source, line_no)?;
        }
        let a = list.node_or_insert(parts[0]);
        let b = list.node_or_insert(parts[1]);
        if a == b {
            return Err(Error::Io(format!(
                "{source}: line {line_no}: edge {} - {} is a self loop",
                parts[0], parts[1]
            )));
        }
        if let Some(first) = edge_lines.insert((a.min(b), a.max(b)), line_no) {
            return Err(Error::Io(format!(
                "{source}: line {line_no}: edge {} - {} already appears on line {first}",
                parts[0], parts[1]
            )));
        }
        list.edges.push((a, b));
    }
    if list.nodes.is_empty() {
        return Err(Error::Io(format!("{source}: no nodes or edges")));
    }
    Ok(list)
}

/// Reads an edge-list file.
pub fn read_edge_list(path: &Path) -> Result<EdgeList> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| Error::Io(format!("cannot read {}: {e}", path.display())))?;
    parse_edge_list(&text, &path.display().to_string())
}

/// Writes an edge-list file, atomically.
pub fn write_edge_list(path: &Path, list: &EdgeList) -> Result<()> {
    super::write_atomic(path, list.to_text().as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quoted_fields_crlf_and_a_byte_order_mark_are_read() {
        let text = "\u{feff}x,\"y, in m\",\"whether he/she donated\"\r\n2 ,50,1\r\n0,13,0\r\n";
        let d = parse_csv(text, "t.csv").unwrap();
        assert_eq!(d.names, ["x", "y, in m", "whether he/she donated"]);
        assert_eq!((d.rows(), d.value(0, 0), d.value(1, 1)), (2, 2.0, 13.0));
        let err = parse_csv("a,b\n1,\"2,3\"\n", "t.csv")
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("line 2, column 'b': '2,3' is not a number"),
            "{err}"
        );
    }

    /// On the public data beside the checkout: run with `-- --ignored shared_data`.
    mod shared_data {
        use super::*;

        #[test]
        #[ignore = "needs ../shared/data"]
        fn the_transfusion_set_reads_with_its_header() {
            let transfusion =
                Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/data/uci/transfusion.data");
            let d = read_csv(&transfusion).unwrap();
            assert_eq!((d.rows(), d.cols()), (748, 5));
            assert_eq!(d.names[4], "whether he/she donated blood in March 2007");
        }
    }

    #[test]
    fn parses_a_table_and_round_trips() {
        let d = parse_csv("a, \"b\"\n1,2\n\n# note\n3.5,-4e-1\r\n", "t.csv").unwrap();
        assert_eq!(d.names, ["a", "b"]);
        assert_eq!(d.rows(), 2);
        assert_eq!(d.value(1, 1), -0.4);
        let again = parse_csv(&d.to_csv(6), "again").unwrap();
        assert_eq!(again, d);
        assert_eq!(d.column_range(0), (1.0, 3.5));
    }

    #[test]
    fn bad_tables_name_the_line_and_column() {
        let e = parse_csv("a,b\n1,2\n3,x\n", "f.csv")
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("line 3") && e.contains("'b'") && e.contains("'x'"),
            "{e}"
        );
        let e = parse_csv("a,b\n1,2\n3\n", "f.csv").unwrap_err().to_string();
        assert!(e.contains("line 3") && e.contains("1 fields"), "{e}");
        let e = parse_csv("a,b\n1,NaN\n", "f.csv").unwrap_err().to_string();
        assert!(
            e.contains("line 2") && e.contains("'b'") && e.contains("NaN"),
            "{e}"
        );
        let e = parse_csv("a,a\n1,2\n", "f.csv").unwrap_err().to_string();
        assert!(e.contains("twice"), "{e}");
        assert!(parse_csv("a,b\n", "f.csv").is_err());
        let d = parse_csv("a,b\n1,2\n1,3\n", "f.csv").unwrap();
        // Without a header row the first line is data, under generated names.
        let uci = parse_csv_with("5.1,3.5\n4.9,3.0\n", "iris.data", false).unwrap();
        assert_eq!(uci.names, ["c1", "c2"]);
        assert_eq!(uci.rows(), 2);
        let e = parse_csv_with("1,2\n3\n", "f.csv", false)
            .unwrap_err()
            .to_string();
        assert!(e.contains("line 2"), "{e}");
        assert!(parse_csv_with("a,b\n1,2\n", "f.csv", false).is_err());
        let e = d.check_variance(&[0]).unwrap_err().to_string();
        assert!(e.contains("'a'") && e.contains("zero variance"), "{e}");
        assert!(d.check_variance(&[1]).is_ok());
    }

    #[test]
    fn edge_lists_round_trip() {
        let text = "# t\nnode pos = px, py @ 0.5 0.25\nx1 - pos\npos,x3\nx3 x4\n";
        let l = parse_edge_list(text, "t").unwrap();
        assert_eq!(l.nodes.len(), 4);
        assert_eq!(l.nodes[0].columns, ["px", "py"]);
        assert_eq!(l.nodes[0].position, Some([0.5, 0.25]));
        assert_eq!(l.edges, [(1, 0), (0, 2), (2, 3)]);
        let again = parse_edge_list(&l.to_text(), "again").unwrap();
        assert_eq!(again, l);
        let e = parse_edge_list("a - b\nb - a\n", "t")
            .unwrap_err()
            .to_string();
        assert!(e.contains("line 2") && e.contains("line 1"), "{e}");
        let e = parse_edge_list("a - a\n", "t").unwrap_err().to_string();
        assert!(e.contains("self loop"), "{e}");
        let e = parse_edge_list("a - b - c\n", "t").unwrap_err().to_string();
        assert!(e.contains("line 1"), "{e}");
    }
}
