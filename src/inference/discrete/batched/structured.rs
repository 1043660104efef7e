//! A shared table that is a scaled constant plus a few lines, applied to a message in O(S) per
//! line instead of O(S²): `ψ(i, j) = u_i v_j (1 + L(i, j))` with `L` nonzero only on a few
//! diagonals, rows and columns. Smoothed pseudo-moment tables have this form (Song et al. 2011,
//! Sec. 7: `ψ = μ_st / (μ_s μ_t)` with every co-occurrence count raised by the same constant, so
//! the pairs never seen in training share `c / (μ_s μ_t)`), and so do Potts tables (one diagonal)
//! and truncated linear or quadratic ones (a band). The message `Σ_i ψ(i, j) x_i` is then
//! `v_j (Σ_i u_i x_i + Σ_i L(i, j) u_i x_i)`: the same sum, grouped differently, so it agrees
//! with the dense product to rounding.
//!
//! Found from the numbers alone: the row scales are the ratios between rows that most columns
//! share (where both entries are at the floor the ratio is the same number), the column scales
//! the largest below the table given those, and the lines cover where the table leaves `u vᵀ`,
//! greedily, the line with the most uncovered entries first. Kept only when the lines cost at
//! most a quarter of the dense product, every entry is rebuilt to 1e-12 relative, and `L >= 0`
//! (so the floor and its lines never cancel; the scales are chosen so).
//! Cost to find: O(S² log S) per reference row tried (at most 16) and O(lines · S²); per message
//! O((lines + 3) S).

use crate::inference::lanes::lane_dots;

/// One direction's product (`out_j = Σ_i ψ(i, j) x_i` for the table as given).
#[derive(Debug, Clone)]
pub(super) struct LinesTable {
    input_scale: Vec<f64>,
    output_scale: Vec<f64>,
    lines: Vec<Line>,
}

/// The entries of `L` that one line adds.
#[derive(Debug, Clone)]
enum Line {
    /// `out_j += values[k] y_{j - offset}` for `j = first + k`.
    Diagonal {
        offset: isize,
        first: usize,
        values: Vec<f64>,
    },
    /// `out_j += y_input values[j]`.
    Row { input: usize, values: Vec<f64> },
    /// `out_output += Σ_i y_i values[i]`.
    Column { output: usize, values: Vec<f64> },
}

/// Entries of the rebuilt table must match the given one to this relative error.
const REBUILD_TOLERANCE: f64 = 1e-12;

/// Rows tried as the reference of the row ratios (evenly spaced).
const REFERENCE_CANDIDATES: usize = 16;

/// The value that most entries of `values` equal to 1e-12 relative, and how many do.
fn most_common(mut values: Vec<f64>) -> (f64, usize) {
    values.sort_unstable_by(f64::total_cmp);
    let mut best = (f64::NAN, 0);
    let mut start = 0;
    for end in 1..=values.len() {
        let same = end < values.len()
            && (values[end] - values[start]).abs() <= REBUILD_TOLERANCE * values[start].abs();
        if !same {
            if end - start > best.1 {
                best = (values[start], end - start);
            }
            start = end;
        }
    }
    best
}

impl LinesTable {
    /// The form of the row-major `s x s` table `[i * s + j] = ψ(i, j)`, or None when it has none
    /// worth using.
    pub(super) fn find(table: &[f64], s: usize) -> Option<Self> {
        if s < 2 || table.len() != s * s || !table.iter().all(|&a| a > 0.0 && a.is_finite()) {
            return None;
        }
        let at = |i: usize, j: usize| table[i * s + j];
        // Where L is 0 the table is u_i v_j, so the ratio of two rows is the same number in
        // every column where both are at the floor: the ratio that most columns share (to a
        // reference row with the most floor entries in common with the others) is u_i / u_ref.
        // Then the largest scales below the table: v_j the smallest ratio down column j, and u_i
        // no more than the smallest along row i, so L >= 0 (a row mostly off the floor gets its
        // scale from that alone, and a line covers it).
        let row_ratios = |reference: usize| -> Vec<(f64, usize)> {
            (0..s)
                .map(|i| most_common((0..s).map(|j| at(i, j) / at(reference, j)).collect()))
                .collect()
        };
        let step = s.div_ceil(REFERENCE_CANDIDATES).max(1);
        let ratios = (0..s)
            .step_by(step)
            .map(row_ratios)
            .max_by_key(|r| r.iter().map(|&(_, n)| n).sum::<usize>())
            .expect("at least one row");
        let floor_rows: Vec<usize> = (0..s).filter(|&i| 2 * ratios[i].1 > s).collect();
        let output_scale: Vec<f64> = (0..s)
            .map(|j| {
                floor_rows
                    .iter()
                    .map(|&i| at(i, j) / ratios[i].0)
                    .fold(f64::INFINITY, f64::min)
            })
            .collect();
        let input_scale: Vec<f64> = (0..s)
            .map(|i| {
                let below = (0..s)
                    .map(|j| at(i, j) / output_scale[j])
                    .fold(f64::INFINITY, f64::min);
                if floor_rows.contains(&i) {
                    below.min(ratios[i].0)
                } else {
                    below
                }
            })
            .collect();
        if !input_scale
            .iter()
            .chain(&output_scale)
            .all(|&x| x > 0.0 && x.is_finite())
        {
            return None;
        }
        let mut rest = vec![0.0; s * s];
        for (k, r) in rest.iter_mut().enumerate() {
            let (i, j) = (k / s, k % s);
            let floor = input_scale[i] * output_scale[j];
            if (floor - at(i, j)).abs() > REBUILD_TOLERANCE * at(i, j) {
                *r = at(i, j) / floor - 1.0;
                if *r < -0.5 {
                    // The floor would cancel against its lines.
                    return None;
                }
            }
        }
        let lines = cover(&mut rest, s, s / 4)?;
        let table = LinesTable {
            input_scale,
            output_scale,
            lines,
        };
        let mut out = vec![0.0; s];
        let mut unit = vec![0.0; s];
        let mut scratch = vec![0.0; s];
        for i in 0..s {
            unit.fill(0.0);
            unit[i] = 1.0;
            table.apply(&unit, &mut scratch, &mut out);
            for (j, o) in out.iter().enumerate() {
                if (o - at(i, j)).abs() > 4.0 * REBUILD_TOLERANCE * at(i, j) {
                    return None;
                }
            }
        }
        Some(table)
    }

    /// `out_j = Σ_i ψ(i, j) x_i`, with `y` as scratch (S values each).
    #[inline(always)]
    pub(super) fn apply(&self, x: &[f64], y: &mut [f64], out: &mut [f64]) {
        // Sums in four lanes: one running sum would wait on each addition in turn.
        let [total] = lane_dots([(x, &self.input_scale)]);
        for ((yi, xi), ui) in y.iter_mut().zip(x).zip(&self.input_scale) {
            *yi = xi * ui;
        }
        out.fill(total);
        for line in &self.lines {
            match line {
                Line::Diagonal {
                    offset,
                    first,
                    values,
                } => {
                    let from = first.wrapping_add_signed(-offset);
                    let inputs = &y[from..from + values.len()];
                    let outputs = &mut out[*first..*first + values.len()];
                    for ((o, v), yi) in outputs.iter_mut().zip(values).zip(inputs) {
                        *o += v * yi;
                    }
                }
                Line::Row { input, values } => {
                    let yi = y[*input];
                    for (o, v) in out.iter_mut().zip(values) {
                        *o += v * yi;
                    }
                }
                Line::Column { output, values } => {
                    out[*output] += lane_dots([(values, &*y)])[0];
                }
            }
        }
        for (o, v) in out.iter_mut().zip(&self.output_scale) {
            *o *= v;
        }
    }
}

/// Lines covering every nonzero of the row-major `s x s` `rest` (taken out of it), greedily by
/// the most entries covered; None when more than `most` lines are needed.
fn cover(rest: &mut [f64], s: usize, most: usize) -> Option<Vec<Line>> {
    let mut lines = Vec::new();
    loop {
        let mut diagonals = vec![0usize; 2 * s - 1];
        let mut rows = vec![0usize; s];
        let mut columns = vec![0usize; s];
        let mut any = false;
        for (k, &r) in rest.iter().enumerate() {
            if r != 0.0 {
                let (i, j) = (k / s, k % s);
                diagonals[j + s - 1 - i] += 1;
                rows[i] += 1;
                columns[j] += 1;
                any = true;
            }
        }
        if !any {
            return Some(lines);
        }
        if lines.len() == most {
            return None;
        }
        let best = |counts: &[usize]| {
            counts
                .iter()
                .enumerate()
                .max_by_key(|&(k, &c)| (c, std::cmp::Reverse(k)))
                .map(|(k, &c)| (k, c))
                .expect("nonempty")
        };
        let (d, dc) = best(&diagonals);
        let (i, ic) = best(&rows);
        let (j, jc) = best(&columns);
        let take = |rest: &mut [f64], k: usize| std::mem::replace(&mut rest[k], 0.0);
        lines.push(if dc >= ic && dc >= jc {
            let offset = d as isize - (s as isize - 1);
            let first = offset.max(0) as usize;
            let len = s - offset.unsigned_abs();
            let values = (first..first + len)
                .map(|j| take(rest, j.wrapping_add_signed(-offset) * s + j))
                .collect();
            Line::Diagonal {
                offset,
                first,
                values,
            }
        } else if ic >= jc {
            let values = (0..s).map(|j| take(rest, i * s + j)).collect();
            Line::Row { input: i, values }
        } else {
            let values = (0..s).map(|i| take(rest, i * s + j)).collect();
            Line::Column { output: j, values }
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    fn dense(table: &[f64], s: usize, x: &[f64]) -> Vec<f64> {
        (0..s)
            .map(|j| (0..s).map(|i| table[i * s + j] * x[i]).sum())
            .collect()
    }

    fn agrees(table: &[f64], s: usize) -> usize {
        let form = LinesTable::find(table, s).expect("a form");
        let mut rng = ChaCha8Rng::seed_from_u64(s as u64);
        let (mut y, mut out) = (vec![0.0; s], vec![0.0; s]);
        for _ in 0..20 {
            let x: Vec<f64> = (0..s).map(|_| rng.random::<f64>()).collect();
            form.apply(&x, &mut y, &mut out);
            for (a, b) in out.iter().zip(dense(table, s, &x)) {
                assert!((a - b).abs() <= 1e-13 * b, "{a} against {b}");
            }
        }
        form.lines.len()
    }

    #[test]
    fn potts_and_truncated_tables_are_a_constant_plus_their_band() {
        for s in [2, 9, 30, 64] {
            let potts: Vec<f64> = (0..s * s)
                .map(|k| if k / s == k % s { 3.5 } else { 0.7 })
                .collect();
            assert!(s < 8 || agrees(&potts, s) == 1, "S = {s}");
            let truncated: Vec<f64> = (0..s * s)
                .map(|k| (-0.4 * (k / s).abs_diff(k % s).min(3) as f64).exp())
                .collect();
            assert!(s < 28 || agrees(&truncated, s) == 5, "S = {s}");
        }
    }

    #[test]
    fn smoothed_co_occurrences_become_scales_a_constant_and_lines() {
        // Counts on a band and on one state's row and column, as a smooth image with one dark
        // level gives; marginals uneven; not symmetric (rows and columns scaled apart).
        let s = 50;
        let mut rng = ChaCha8Rng::seed_from_u64(3);
        let mut joint = vec![1e-3; s * s];
        for i in 0..s {
            for j in i.saturating_sub(1)..(i + 2).min(s) {
                joint[i * s + j] += rng.random_range(1.0..400.0f64).round();
            }
            joint[i * s + 7] += rng.random_range(1.0..30.0f64).round();
            joint[7 * s + i] += rng.random_range(1.0..30.0f64).round();
        }
        let p: Vec<f64> = (0..s).map(|_| rng.random_range(0.01..0.1)).collect();
        let q: Vec<f64> = (0..s).map(|_| rng.random_range(0.01..0.1)).collect();
        let table: Vec<f64> = (0..s * s)
            .map(|k| joint[k] / (p[k / s] * q[k % s]))
            .collect();
        assert_eq!(agrees(&table, s), 5);
    }

    #[test]
    fn dense_or_unusable_tables_have_no_form() {
        let s = 40;
        let mut rng = ChaCha8Rng::seed_from_u64(9);
        let random: Vec<f64> = (0..s * s).map(|_| rng.random_range(0.1..1.0)).collect();
        assert!(LinesTable::find(&random, s).is_none());
        let mut with_zero: Vec<f64> = (0..s * s)
            .map(|k| if k / s == k % s { 2.0 } else { 1.0 })
            .collect();
        with_zero[5] = 0.0;
        assert!(LinesTable::find(&with_zero, s).is_none());
        // A repulsive Potts table is a constant less its diagonal: below the constant everywhere
        // off the diagonal, so no product of scales lies under most of it.
        let repulsive: Vec<f64> = (0..s * s)
            .map(|k| if k / s == k % s { 0.01 } else { 1.0 })
            .collect();
        assert!(LinesTable::find(&repulsive, s).is_none());
    }
}

#[cfg(test)]
mod shared_table_tests {
    use super::super::SharedTable;

    #[test]
    fn the_batched_step_takes_the_lines_in_both_directions_past_the_register_kernel() {
        let truncated = |s: usize, row_scale: f64| -> Vec<f64> {
            (0..s * s)
                .map(|k| {
                    let scale = 1.0 + row_scale * (k / s) as f64;
                    scale * (-0.5 * (k / s).abs_diff(k % s).min(2) as f64).exp()
                })
                .collect()
        };
        let symmetric = SharedTable::new(&truncated(30, 0.0), 30);
        assert!(matches!(symmetric.lines, Some((_, None))));
        let asymmetric = SharedTable::new(&truncated(30, 0.1), 30);
        assert!(matches!(asymmetric.lines, Some((_, Some(_)))));
        // The register kernel's sizes keep their own product.
        assert!(SharedTable::new(&truncated(12, 0.0), 12).lines.is_none());
    }
}
