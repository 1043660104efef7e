//! Tick positions and labels for plot axes, shared by the window's plots (`app::views::ticks`)
//! and the headless figures (`viz::figures`), so both read the same way: steps of 1, 2 or 5
//! times a power of ten, at least two labelled ticks wherever the axis spans two multiples of
//! the smallest allowed step, whole numbers only on an integer axis (iterations, node and
//! state indices, counts), and on a log axis (values are log10) ticks at decades, or at
//! 1, 2, 5 (then 1..9) times a decade when fewer than two decades are in view.
//! Cost: O(ticks) per axis.

/// How an axis counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scale {
    /// Any real value.
    Real,
    /// Whole numbers only (iterations, indices, counts): no tick between two integers.
    Integer,
    /// The drawn values are log10 of the data; ticks sit at m·10^k.
    Log10,
}

/// The largest number of ticks a log axis shows before it thins its decades.
const MAX_LOG_TICKS: usize = 8;

/// The smallest step 1, 2 or 5 times a power of ten that is at least `x` (> 0).
pub fn nice_step_at_least(x: f64) -> f64 {
    if !(x.is_finite() && x > 0.0) {
        return 1.0;
    }
    let decade = 10f64.powf(x.log10().floor());
    [1.0, 2.0, 5.0, 10.0]
        .into_iter()
        .map(|m| m * decade)
        .find(|s| *s >= x * (1.0 - 1e-12))
        .unwrap_or(10.0 * decade)
}

/// The next smaller step of the 1-2-5 sequence (5 → 2 → 1 → 0.5).
pub fn smaller_step(step: f64) -> f64 {
    let decade = 10f64.powf((step.log10() + 1e-9).floor());
    let mantissa = (step / decade).round();
    if mantissa >= 5.0 {
        2.0 * decade
    } else if mantissa >= 2.0 {
        decade
    } else {
        0.5 * decade
    }
}

/// The multiples of `step` in `[lo, hi]`.
pub fn multiples(step: f64, lo: f64, hi: f64) -> Vec<f64> {
    if !(step > 0.0 && lo.is_finite() && hi.is_finite() && hi >= lo) {
        return Vec::new();
    }
    let first = (lo / step - 1e-9).ceil() as i64;
    let last = (hi / step + 1e-9).floor() as i64;
    (first..=last.min(first + 1000))
        .map(|k| k as f64 * step)
        .collect()
}

/// The labelled step of a linear axis over `[lo, hi]`: the smallest 1-2-5 step at least
/// `comfortable` (the data length of a comfortable gap between labels), made smaller while it
/// leaves fewer than two ticks in view, but never below `least` (where labels would touch)
/// nor below 1 on an integer axis.
pub fn linear_step(lo: f64, hi: f64, comfortable: f64, least: f64, integer: bool) -> f64 {
    let floor = if integer {
        least.max(1.0)
    } else {
        least.max(0.0)
    };
    let mut step = nice_step_at_least(comfortable.max(floor));
    if hi.partial_cmp(&lo) != Some(std::cmp::Ordering::Greater) {
        return step;
    }
    for _ in 0..64 {
        let smaller = smaller_step(step);
        if multiples(step, lo, hi).len() >= 2 || smaller < floor * (1.0 - 1e-9) {
            break;
        }
        step = smaller;
    }
    step
}

/// Decimals that show every multiple of `step` exactly (0.5 → 1, 0.25 → 2, 20 → 0).
pub fn decimals(step: f64) -> usize {
    if !(step.is_finite() && step > 0.0) {
        return 0;
    }
    (0..12)
        .find(|d| {
            let scaled = step * 10f64.powi(*d);
            (scaled - scaled.round()).abs() < 1e-6 * scaled.max(1.0)
        })
        .unwrap_or(12) as usize
}

/// A tick value as its label on a linear axis with ticks `step` apart.
pub fn linear_label(value: f64, step: f64) -> String {
    let a = value.abs();
    if a != 0.0 && !(1e-4..1e6).contains(&a) {
        return format!("{value:.0e}");
    }
    // -0 prints as 0.
    format!("{:.*}", decimals(step), value + 0.0)
}

/// Ticks of a log10 axis over `[lo, hi]` (in log10 units) at least `min_gap` apart where
/// possible: whole decades (every few when many are in view), else 1, 2, 5 or 1, 3 times a
/// decade, else 1..9 times a decade, else linear steps of the values, whichever first gives two
/// ticks.
pub fn log_ticks(lo: f64, hi: f64, min_gap: f64) -> Vec<f64> {
    if !(lo.is_finite() && hi.is_finite() && hi >= lo) {
        return Vec::new();
    }
    let span = hi - lo;
    let every = (span / MAX_LOG_TICKS as f64)
        .ceil()
        .max(min_gap.ceil())
        .max(1.0);
    let decades = multiples(every, lo, hi);
    if decades.len() >= 2 {
        return decades;
    }
    let sets: [&[f64]; 3] = [
        &[1.0, 2.0, 5.0],
        &[1.0, 3.0],
        &[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0],
    ];
    let mut candidates: Vec<Vec<f64>> = sets
        .iter()
        .map(|mantissas| {
            (lo.floor() as i64..=hi.ceil() as i64)
                .flat_map(|k| mantissas.iter().map(move |m| k as f64 + m.log10()))
                .filter(|v| *v >= lo - 1e-9 && *v <= hi + 1e-9)
                .collect()
        })
        .collect();
    // Less than a factor between two multiples of a decade: linear steps of the values.
    let (a, b) = (10f64.powf(lo), 10f64.powf(hi));
    let step = linear_step(a, b, (b - a) / 4.0, 0.0, false);
    candidates.push(
        multiples(step, a, b)
            .into_iter()
            .filter(|v| *v > 0.0)
            .map(f64::log10)
            .collect(),
    );
    // The first set whose ticks sit `min_gap` apart, else the first that does once thinned
    // (each tick kept at least `min_gap` after the last kept), else the first with two ticks.
    let spaced = |t: &Vec<f64>| t.windows(2).all(|w| w[1] - w[0] >= min_gap * (1.0 - 1e-9));
    if let Some(t) = candidates.iter().find(|t| t.len() >= 2 && spaced(t)) {
        return t.clone();
    }
    let thinned = candidates.iter().map(|t| {
        let mut kept: Vec<f64> = Vec::new();
        for &v in t {
            if kept
                .last()
                .is_none_or(|last| v - last >= min_gap * (1.0 - 1e-9))
            {
                kept.push(v);
            }
        }
        kept
    });
    for t in thinned {
        if t.len() >= 2 {
            return t;
        }
    }
    candidates
        .into_iter()
        .find(|t| t.len() >= 2)
        .unwrap_or(decades)
}

/// The label of the log10 value `exponent`: "10⁻³" at a decade, "2·10⁻³" at a multiple of
/// one, "2.5·10⁻³" (or "2.5" in the decade of 1) between.
pub fn log_label(exponent: f64) -> String {
    if !exponent.is_finite() {
        return String::new();
    }
    let k = (exponent + 1e-9).floor();
    let mantissa = 10f64.powf(exponent - k);
    let m = (mantissa * 100.0).round() / 100.0;
    let power = power_of_ten(k as i64);
    if m == 1.0 {
        power
    } else if k == 0.0 {
        format!("{m}")
    } else {
        format!("{m}·{power}")
    }
}

/// "10⁻³" for -3.
pub fn power_of_ten(e: i64) -> String {
    let sup: String = e
        .to_string()
        .chars()
        .map(|c| match c {
            '-' => '⁻',
            '0' => '⁰',
            '1' => '¹',
            '2' => '²',
            '3' => '³',
            '4' => '⁴',
            '5' => '⁵',
            '6' => '⁶',
            '7' => '⁷',
            '8' => '⁸',
            _ => '⁹',
        })
        .collect();
    format!("10{sup}")
}

/// The ticks of an axis over `[lo, hi]` whose labels should sit about `comfortable` apart (in
/// data units), and at least a third of that when the axis is short; a log axis thins by count.
pub fn ticks(scale: Scale, lo: f64, hi: f64, comfortable: f64) -> Vec<f64> {
    match scale {
        Scale::Log10 => log_ticks(lo, hi, comfortable),
        Scale::Real | Scale::Integer => {
            let integer = scale == Scale::Integer;
            let step = linear_step(lo, hi, comfortable, comfortable / 3.0, integer);
            multiples(step, lo, hi)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn steps_follow_one_two_five() {
        assert_eq!(nice_step_at_least(0.3), 0.5);
        assert_eq!(nice_step_at_least(1.0), 1.0);
        assert_eq!(nice_step_at_least(1.01), 2.0);
        assert_eq!(nice_step_at_least(7.0), 10.0);
        assert_eq!(smaller_step(5.0), 2.0);
        assert_eq!(smaller_step(2.0), 1.0);
        assert_eq!(smaller_step(1.0), 0.5);
        assert!((smaller_step(0.1) - 0.05).abs() < 1e-15);
    }

    #[test]
    fn a_narrow_axis_still_gets_two_ticks() {
        // 0..1.3 with a comfortable gap of 2 units: step 2 would leave one tick (0).
        let t = ticks(Scale::Real, 0.0, 1.3, 2.0);
        assert!(t.len() >= 2, "{t:?}");
        // A short AAE axis, 0.42..0.47.
        let t = ticks(Scale::Real, 0.42, 0.47, 0.03);
        assert!(t.len() >= 2, "{t:?}");
        assert_eq!(linear_label(t[0], t[1] - t[0]), "0.42");
    }

    #[test]
    fn integer_axes_have_whole_ticks_only() {
        for (lo, hi, gap) in [
            (0.0, 3.0, 0.2),
            (-0.3, 2.4, 0.05),
            (0.0, 40.0, 3.0),
            (1.0, 7.0, 0.01),
        ] {
            let t = ticks(Scale::Integer, lo, hi, gap);
            assert!(t.len() >= 2, "{lo}..{hi}: {t:?}");
            assert!(t.iter().all(|v| v.fract() == 0.0), "{lo}..{hi}: {t:?}");
        }
        // Less than one unit in view: no fractional tick is invented.
        assert!(ticks(Scale::Integer, 0.2, 0.8, 0.1).is_empty());
    }

    #[test]
    fn labels_show_the_step() {
        assert_eq!(linear_label(1.5, 0.5), "1.5");
        assert_eq!(linear_label(1.0, 0.5), "1.0");
        assert_eq!(linear_label(20.0, 10.0), "20");
        assert_eq!(linear_label(-0.0, 1.0), "0");
        assert_eq!(linear_label(2e6, 1e6), "2e6");
        assert_eq!(decimals(0.25), 2);
    }

    #[test]
    fn log_axes_fall_back_to_multiples_of_a_decade() {
        assert_eq!(
            log_ticks(-6.3, 0.4, 0.1),
            [-6.0, -5.0, -4.0, -3.0, -2.0, -1.0, 0.0]
        );
        assert_eq!(
            log_ticks(-20.0, 0.0, 0.1),
            [-18.0, -15.0, -12.0, -9.0, -6.0, -3.0, 0.0]
        );
        // Labels need 1.5 decades each: every second decade.
        assert_eq!(log_ticks(-6.3, 0.4, 1.5), [-6.0, -4.0, -2.0, 0.0]);
        let t = log_ticks(0.1, 0.9, 0.1);
        let labels: Vec<String> = t.iter().map(|v| log_label(*v)).collect();
        assert_eq!(labels, ["2", "5"]);
        let t = log_ticks(0.35, 0.6, 0.01);
        assert!(t.len() >= 2, "{t:?}");
        assert!(t.iter().all(|v| !log_label(*v).is_empty()));
        assert_eq!(log_label(-3.0), "10⁻³");
        assert_eq!(log_label(2.5f64.log10() - 3.0), "2.5·10⁻³");
    }
}
