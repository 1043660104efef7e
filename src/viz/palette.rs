//! The one palette: each method has one colour everywhere (the window's plots and the PNG
//! figures `beliefscope run` writes), roles (reference, floor, slope) have their own, and
//! overlaid series (sweeps, metrics) take colours that are none of those, so that a sweep curve
//! is never mistaken for a method or a reference line. Colours are sRGB bytes; no GUI types.

/// An sRGB colour.
pub type Rgb = [u8; 3];

/// The methods compared across scenarios. Their names in legends ([`Method::name`]) are not
/// the keys results use ([`Method::of_key`]), so both are written out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, strum::VariantArray)]
pub enum Method {
    /// Kernel BP (loopy or tree; the tree's Parzen read-out of its beliefs).
    KernelBp,
    /// The tree's kernel BP beliefs read out as embeddings.
    KernelBpEmbedding,
    DiscreteBp,
    GaussianBp,
    Sosmp,
    NearestNeighbour,
    /// Exact or fine-grid references.
    Exact,
    /// Other baselines (TV, blur, ...).
    Baseline,
    /// KJIT's learned EP messages (Jitkrittum et al. 2015).
    Kjit,
    /// EP with Gauss-Hermite projections, the KJIT experiments' reference.
    Quadrature,
    /// EP with the importance-sampling oracle of KJIT's eq. (2).
    Sampling,
    /// Predictive BP (Wang and Gordon 2020).
    PredictiveBp,
    /// Expectation maximisation (restarts, exact E-step).
    Em,
    /// Stepwise online EM.
    OnlineEm,
}

impl Method {
    pub const fn color(self) -> Rgb {
        match self {
            Method::KernelBp => [66, 165, 245],
            Method::KernelBpEmbedding => [171, 71, 188],
            Method::DiscreteBp => [38, 198, 218],
            Method::GaussianBp => [102, 187, 106],
            Method::Sosmp => [236, 64, 122],
            Method::NearestNeighbour => [255, 167, 38],
            Method::Exact => [160, 160, 160],
            Method::Baseline => [141, 110, 99],
            Method::Kjit => [0, 114, 178],
            Method::Quadrature => [90, 90, 90],
            Method::Sampling => [216, 67, 21],
            Method::PredictiveBp => [94, 53, 177],
            Method::Em => [183, 28, 28],
            Method::OnlineEm => [46, 125, 50],
        }
    }

    /// The name in legends.
    pub fn name(self) -> &'static str {
        match self {
            Method::KernelBp => "kernel BP",
            Method::KernelBpEmbedding => "kernel BP (embedding)",
            Method::DiscreteBp => "discrete BP",
            Method::GaussianBp => "Gaussian BP",
            Method::Sosmp => "SOSMP",
            Method::NearestNeighbour => "chained nearest neighbour",
            Method::Exact => "exact",
            Method::Baseline => "baseline",
            Method::Kjit => "KJIT",
            Method::Quadrature => "quadrature",
            Method::Sampling => "importance sampling",
            Method::PredictiveBp => "predictive BP",
            Method::Em => "EM",
            Method::OnlineEm => "online EM",
        }
    }

    /// The method a results key names (`kbp`, `gaussian_bp`, `nearest_neighbour`, ...).
    pub fn of_key(key: &str) -> Option<Method> {
        Some(match key {
            "kbp" | "kernel_bp" | "parzen" | "tree_kbp" => Method::KernelBp,
            "embedding" => Method::KernelBpEmbedding,
            "discrete" | "discrete_bp" | "bp" => Method::DiscreteBp,
            "gaussian_bp" | "gaussian" => Method::GaussianBp,
            "sosmp" => Method::Sosmp,
            "nearest_neighbour" | "nn" => Method::NearestNeighbour,
            "reference" | "exact" => Method::Exact,
            "kjit" => Method::Kjit,
            "quadrature" => Method::Quadrature,
            "sampling" => Method::Sampling,
            "pbp" => Method::PredictiveBp,
            "em" => Method::Em,
            "online_em" => Method::OnlineEm,
            _ => return None,
        })
    }
}

impl Method {
    /// The method a longer key mentions (`recall@10_kbp_L9`, `rmse_discrete`), if any.
    pub fn in_key(key: &str) -> Option<Method> {
        // Bare "em" is left out: too many keys contain it.
        const TOKENS: [(&str, Method); 14] = [
            ("nearest_neighbour", Method::NearestNeighbour),
            ("online_em", Method::OnlineEm),
            ("kjit", Method::Kjit),
            ("quadrature", Method::Quadrature),
            ("sampling", Method::Sampling),
            ("pbp", Method::PredictiveBp),
            ("gaussian_bp", Method::GaussianBp),
            ("embedding", Method::KernelBpEmbedding),
            ("discrete", Method::DiscreteBp),
            ("sosmp", Method::Sosmp),
            ("kbp", Method::KernelBp),
            ("parzen", Method::KernelBp),
            ("reference", Method::Exact),
            ("exact", Method::Exact),
        ];
        TOKENS
            .iter()
            .find(|(t, _)| key.contains(t))
            .map(|(_, m)| *m)
    }
}

/// The fixed point, a floor or any level a curve tends to.
pub const FLOOR: Rgb = [239, 108, 0];
/// Slope guides (e.g. 1/t).
pub const SLOPE: Rgb = [120, 120, 120];
/// The distance to the fixed point a_inf (SOSMP).
pub const FIXED_POINT: Rgb = [250, 232, 60];

/// Overlaid series (sweep values, metrics), in order; none is a method or role colour.
pub const SERIES: [Rgb; 7] = [
    [92, 107, 192],
    [0, 150, 136],
    [212, 225, 87],
    [121, 85, 72],
    [255, 112, 67],
    [63, 81, 181],
    [158, 157, 36],
];

/// The colour of the `k`-th overlaid series.
pub fn series(k: usize) -> Rgb {
    SERIES[k % SERIES.len()]
}

/// KJIT's operators, as the kjit room draws them (`tests/it/app/paper_figures.rs` checks that
/// the room and the headless figures agree).
pub const KJIT: Rgb = Method::Kjit.color();
pub const QUADRATURE: Rgb = Method::Quadrature.color();
pub const SAMPLING: Rgb = Method::Sampling.color();
/// KJIT's two test curves of incoming messages (main Fig. 4).
pub const TEST_CURVE_1: Rgb = [0, 158, 115];
pub const TEST_CURVE_2: Rgb = [230, 159, 0];
/// Predictive BP and its baselines, as the pbp room draws them.
pub const PBP: Rgb = Method::PredictiveBp.color();
pub const EM: Rgb = Method::Em.color();
pub const ONLINE_EM: Rgb = Method::OnlineEm.color();
pub const PBP_EXACT: Rgb = Method::Exact.color();

#[cfg(test)]
mod tests {
    use strum::VariantArray;

    use super::*;

    fn distance(a: Rgb, b: Rgb) -> i32 {
        (0..3).map(|i| (a[i] as i32 - b[i] as i32).abs()).sum()
    }

    #[test]
    fn every_colour_is_distinct_from_every_other() {
        let mut all: Vec<Rgb> = Method::VARIANTS.iter().map(|m| m.color()).collect();
        all.extend([FLOOR, SLOPE, FIXED_POINT]);
        all.extend(SERIES);
        for (i, a) in all.iter().enumerate() {
            for b in &all[i + 1..] {
                assert!(distance(*a, *b) > 40, "{a:?} and {b:?} are too close");
            }
        }
    }

    #[test]
    fn keys_name_their_method() {
        assert_eq!(Method::of_key("kbp"), Some(Method::KernelBp));
        assert_eq!(
            Method::of_key("nearest_neighbour").unwrap().name(),
            "chained nearest neighbour"
        );
        assert_eq!(Method::of_key("unknown"), None);
        assert_eq!(Method::in_key("recall@10_kbp_L9"), Some(Method::KernelBp));
        assert_eq!(
            Method::in_key("recall@1_gaussian_bp_L2"),
            Some(Method::GaussianBp)
        );
        assert_eq!(Method::in_key("rmse"), None);
        assert_eq!(Method::in_key("error_kjit"), Some(Method::Kjit));
        assert_eq!(Method::in_key("kl_online_em"), Some(Method::OnlineEm));
        assert_eq!(Method::of_key("em").unwrap().name(), "EM");
    }
}
