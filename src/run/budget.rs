//! The memory budget: how much a run may use, and the check every scenario's config passes
//! before anything large is allocated. A scenario estimates its peak from the sizes it is
//! given ([`MemoryNeed`]: the largest parts by name, plus the process's own base); a need above
//! the budget is refused with one line naming the part, the estimate and the budget.
//!
//! The budget is process-wide (one per command line or window): half of physical memory unless
//! `--max-memory` or the window's setting changes it. Physical memory is `MemTotal` of
//! `/proc/meminfo`; where that cannot be read, 8 GB is assumed. Cost: O(1) per check.

use std::sync::OnceLock;
use std::sync::atomic::{AtomicU64, Ordering};

use crate::error::{Error, Result};

/// What the binary itself holds before a scenario allocates anything (code, allocator arenas,
/// rayon's threads): the peak RSS of the smallest runs is 13-16 MB.
pub const BASE_BYTES: u64 = 16 << 20;

const GB: f64 = 1e9;

/// 0 means "not set": the default (half of physical memory) applies.
static BUDGET: AtomicU64 = AtomicU64::new(0);

/// Physical memory in bytes (`MemTotal`), or 8 GB where it cannot be read.
pub fn physical_memory() -> u64 {
    static TOTAL: OnceLock<u64> = OnceLock::new();
    *TOTAL.get_or_init(|| {
        std::fs::read_to_string("/proc/meminfo")
            .ok()
            .and_then(|text| parse_meminfo_total(&text))
            .unwrap_or(8_000_000_000)
    })
}

/// `MemTotal` of a `/proc/meminfo` text, in bytes.
fn parse_meminfo_total(text: &str) -> Option<u64> {
    let line = text.lines().find(|l| l.starts_with("MemTotal:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

/// This process's peak resident memory so far (`VmHWM` of `/proc/self/status`), in bytes;
/// None where it cannot be read.
pub fn peak_rss() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

/// The default budget: half of physical memory.
pub fn default_budget() -> u64 {
    physical_memory() / 2
}

/// The budget in force, in bytes.
pub fn budget() -> u64 {
    match BUDGET.load(Ordering::Relaxed) {
        0 => default_budget(),
        b => b,
    }
}

/// Sets the budget (`None`: back to the default).
pub fn set_budget(bytes: Option<u64>) {
    BUDGET.store(bytes.unwrap_or(0), Ordering::Relaxed);
}

/// Bytes as a short human size: "80 GB", "1.5 GB", "350 MB".
pub fn format_bytes(bytes: u64) -> String {
    let b = bytes as f64;
    if b >= 10.0 * GB {
        format!("{:.0} GB", b / GB)
    } else if b >= GB {
        format!("{:.1} GB", b / GB)
    } else if b >= 1e6 {
        format!("{:.0} MB", b / 1e6)
    } else {
        format!("{:.0} kB", (b / 1e3).ceil())
    }
}

/// A size as typed: "12G", "12 GB", "512M", "800MB", "2.5g" or plain bytes. Units are decimal
/// (1 GB = 10⁹ bytes), as `--help` and every message print them.
pub fn parse_size(text: &str) -> std::result::Result<u64, String> {
    let t = text.trim().to_ascii_lowercase();
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let (number, unit) = t.split_at(split);
    let value: f64 = number
        .parse()
        .map_err(|_| format!("'{text}' is not a size (e.g. 12G, 800M)"))?;
    let scale = match unit.trim().trim_end_matches('b').trim_end_matches('i') {
        "" => 1.0,
        "k" => 1e3,
        "m" => 1e6,
        "g" => 1e9,
        "t" => 1e12,
        _ => return Err(format!("'{text}': unknown unit (use K, M, G or T)")),
    };
    let bytes = value * scale;
    if !(bytes.is_finite() && bytes >= 1e6) {
        return Err(format!("'{text}' is below 1 MB, too small to run anything"));
    }
    Ok(bytes.min(u64::MAX as f64) as u64)
}

/// A run's estimated peak memory: its parts (label, bytes), largest first when checked.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct MemoryNeed {
    /// What is being sized, e.g. "retrieval pool 100000".
    pub subject: String,
    parts: Vec<(String, f64)>,
    /// For an image: its size and the bytes that grow with each pixel, so a refusal can name
    /// the largest image of the same shape that would fit.
    image: Option<(usize, usize, f64)>,
    /// Parts alive only during set-up (freed before the run's own parts are allocated): the
    /// peak counts the larger of their sum and the other parts' sum.
    setup_parts: Vec<(String, f64)>,
}

impl MemoryNeed {
    /// A need for `subject` with no parts yet (the base is always counted).
    pub fn new(subject: impl Into<String>) -> Self {
        MemoryNeed {
            subject: subject.into(),
            parts: Vec::new(),
            image: None,
            setup_parts: Vec::new(),
        }
    }

    /// Says that the need is for a `width x height` image and grows by `bytes_per_pixel`.
    pub fn per_pixel(mut self, width: usize, height: usize, bytes_per_pixel: f64) -> Self {
        self.image = Some((width, height, bytes_per_pixel));
        self
    }

    /// The largest image of the same shape whose need fits `budget` (None when the need has
    /// no image or even a pixel does not fit).
    pub fn fitting_image(&self, budget: u64) -> Option<(usize, usize)> {
        let (w, h, per_pixel) = self.image?;
        let fixed = self.total() as f64 - per_pixel * (w * h) as f64;
        let pixels = (budget as f64 - fixed) / per_pixel;
        if !(per_pixel > 0.0 && pixels >= 4.0) {
            return None;
        }
        let scale = (pixels / (w * h) as f64).sqrt();
        Some((
            ((w as f64 * scale).floor() as usize).max(2),
            ((h as f64 * scale).floor() as usize).max(2),
        ))
    }

    /// The parts added so far (label, bytes), in the order added; the base is not among them.
    pub fn parts(&self) -> &[(String, f64)] {
        &self.parts
    }

    /// The parts only the set-up holds.
    pub fn setup_parts(&self) -> &[(String, f64)] {
        &self.setup_parts
    }

    /// Adds `bytes` for `what` that only the set-up holds (see `setup_parts`).
    pub fn setup_bytes(mut self, what: impl Into<String>, bytes: f64) -> Self {
        self.setup_parts.push((what.into(), bytes.max(0.0)));
        self
    }

    /// Adds `doubles` f64 values for `what` (counts may be huge: computed in f64, no overflow).
    pub fn doubles(self, what: impl Into<String>, doubles: f64) -> Self {
        self.bytes(what, doubles * 8.0)
    }

    /// Adds `bytes` for `what`.
    pub fn bytes(mut self, what: impl Into<String>, bytes: f64) -> Self {
        self.parts.push((what.into(), bytes.max(0.0)));
        self
    }

    /// The estimated peak in bytes, base included (saturating).
    pub fn total(&self) -> u64 {
        let run: f64 = self.parts.iter().map(|p| p.1).sum();
        let setup: f64 = self.setup_parts.iter().map(|p| p.1).sum();
        let sum = run.max(setup) + BASE_BYTES as f64;
        sum.min(u64::MAX as f64) as u64
    }

    /// The largest part's label.
    pub fn largest(&self) -> Option<&str> {
        self.parts
            .iter()
            .chain(&self.setup_parts)
            .max_by(|a, b| a.1.total_cmp(&b.1))
            .map(|p| p.0.as_str())
    }

    /// `Ok` if the estimate fits the budget in force, else the one-line refusal.
    pub fn check(&self) -> Result<()> {
        self.check_against(budget())
    }

    /// `Ok` if the estimate fits `budget` bytes, else the one-line refusal.
    pub fn check_against(&self, budget: u64) -> Result<()> {
        let total = self.total();
        if total <= budget {
            return Ok(());
        }
        let part = self
            .largest()
            .map(|p| format!(" for its {p}"))
            .unwrap_or_default();
        let fits = self
            .fitting_image(budget)
            .map(|(w, h)| format!("; an image of up to about {w} x {h} fits"))
            .unwrap_or_default();
        Err(Error::OverBudget(format!(
            "{} needs about {}{part}; the budget is {}{fits} (--max-memory; in the window: \
             Run > Own memory budget)",
            self.subject,
            format_bytes(total),
            format_bytes(budget)
        )))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_refused_image_names_the_largest_of_its_shape_that_fits() {
        let need = MemoryNeed::new("denoise 4000 x 3000")
            .bytes("messages", 1000.0 * 12e6)
            .per_pixel(4000, 3000, 1000.0);
        let (w, h) = need.fitting_image(4_000_000_000).unwrap();
        // (4e9 - 16 MiB base) / 1000 bytes ≈ 3.98 megapixels at 4:3.
        assert!(
            (w * h) as f64 > 3.95e6 && (w * h) as f64 <= 3.984e6,
            "{w} x {h}"
        );
        assert_eq!(w * 3 / 4, h);
        let err = need.check_against(4_000_000_000).unwrap_err().to_string();
        assert!(err.contains(&format!("{w} x {h} fits")), "{err}");
        assert_eq!(MemoryNeed::new("x").fitting_image(1), None);
    }

    #[test]
    fn sizes_parse_and_print_in_decimal_units() {
        assert_eq!(parse_size("12G").unwrap(), 12_000_000_000);
        assert_eq!(parse_size("12 GB").unwrap(), 12_000_000_000);
        assert_eq!(parse_size("512m").unwrap(), 512_000_000);
        assert_eq!(parse_size("2.5GiB").unwrap(), 2_500_000_000);
        assert_eq!(parse_size("3000000").unwrap(), 3_000_000);
        assert!(parse_size("12X").unwrap_err().contains("unknown unit"));
        assert!(parse_size("lots").unwrap_err().contains("not a size"));
        assert!(parse_size("10k").unwrap_err().contains("too small"));
        assert_eq!(format_bytes(80_000_000_000), "80 GB");
        assert_eq!(format_bytes(1_500_000_000), "1.5 GB");
        assert_eq!(format_bytes(350_000_000), "350 MB");
    }

    #[test]
    fn a_need_over_the_budget_names_its_largest_part_and_both_sizes() {
        let need = MemoryNeed::new("retrieval pool 100000")
            .doubles("cross Gram", 1e10)
            .doubles("messages", 1e6);
        let e = need.check_against(12_000_000_000).unwrap_err().to_string();
        assert_eq!(
            e,
            "retrieval pool 100000 needs about 80 GB for its cross Gram; the budget is 12 GB \
             (--max-memory; in the window: Run > Own memory budget)"
        );
        assert!(need.check_against(100_000_000_000).is_ok());
        // Absurd counts saturate instead of overflowing.
        let huge = MemoryNeed::new("x").doubles("table", 1e30);
        assert_eq!(huge.total(), u64::MAX);
        assert!(huge.check_against(u64::MAX - 1).is_err());
    }

    #[test]
    fn meminfo_is_read_in_kib() {
        let text = "MemTotal:       24683656 kB\nMemFree:  1 kB\n";
        assert_eq!(parse_meminfo_total(text), Some(24683656 * 1024));
        assert_eq!(parse_meminfo_total("nothing"), None);
        assert!(physical_memory() > 0);
    }
}
