//! Enums whose variants have names: on the command line, in configs and in results.json. The
//! names, the list of variants and the parsing are derived with strum (`VariantArray`,
//! `IntoStaticStr`, `EnumString`); strum's own parse error says only that no variant matched,
//! so the derive is pointed at [`unknown`], which names the text and lists the accepted names:
//!
//! ```text
//! #[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
//! #[serde(rename_all = "lowercase")]
//! #[derive(strum::VariantArray, strum::IntoStaticStr, strum::EnumString)]
//! #[strum(serialize_all = "lowercase", parse_err_ty = String, parse_err_fn = unknown::<Self>)]
//! pub enum PotentialKind { Mixture, Kernel }
//!
//! impl Labelled for PotentialKind {
//!     const WHAT: &str = "potentials";
//! }
//!
//! // "kernal".parse::<PotentialKind>() is
//! // Err("unknown potentials 'kernal' (expected mixture or kernel)")
//! ```
//!
//! A variant with aliases names its own spelling with `to_string` (`#[strum(to_string =
//! "sweep", serialize = "sequential")]`): with `serialize` alone strum's name is the longest.
//!
//! A serde name must equal the strum name: `serialize_all` repeats the enum's
//! `#[serde(rename_all)]` (`tests/it/project/labels.rs` checks every such enum). The serde
//! attribute sits between the two derives so that rustfmt keeps them apart.

/// An enum whose variants have names (derived: strum's `VariantArray` and `IntoStaticStr`).
pub trait Labelled: strum::VariantArray + Copy + Into<&'static str> + 'static {
    /// What a value is, as a parse error names it ("schedule", "kernel").
    const WHAT: &'static str;

    /// Every variant's name, in declaration order.
    fn names() -> impl Iterator<Item = &'static str> {
        Self::VARIANTS.iter().map(|&v| v.into())
    }
}

/// The error of parsing `text` as a `T`: "unknown schedule 'zigzag' (expected synchronous,
/// sweep, random or residual)". Aliases a variant also accepts are not listed.
pub fn unknown<T: Labelled>(text: &str) -> String {
    format!(
        "unknown {} '{text}' (expected {})",
        T::WHAT,
        one_of(T::names())
    )
}

/// The variant named exactly `text`, or [`unknown`]'s error: for a `FromStr` that rewrites the
/// text before looking it up.
pub fn parse_label<T: Labelled>(text: &str) -> Result<T, String> {
    T::VARIANTS
        .iter()
        .copied()
        .find(|&v| v.into() == text)
        .ok_or_else(|| unknown::<T>(text))
}

/// `a`, `a or b`, `a, b or c`.
pub fn one_of<'a>(names: impl IntoIterator<Item = &'a str>) -> String {
    let names: Vec<&str> = names.into_iter().collect();
    match names.split_last() {
        None => String::new(),
        Some((last, [])) => (*last).to_string(),
        Some((last, rest)) => format!("{} or {last}", rest.join(", ")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(
        Debug, Clone, Copy, PartialEq, strum::VariantArray, strum::IntoStaticStr, strum::EnumString,
    )]
    #[strum(serialize_all = "kebab-case", parse_err_ty = String, parse_err_fn = unknown::<Self>)]
    enum Shade {
        LightBlue,
        #[strum(to_string = "grey", serialize = "gray")]
        Grey,
        Black,
    }

    impl Labelled for Shade {
        const WHAT: &str = "shade";
    }

    #[test]
    fn names_parse_and_the_error_lists_them() {
        assert_eq!(
            Shade::names().collect::<Vec<_>>(),
            ["light-blue", "grey", "black"]
        );
        assert_eq!("light-blue".parse(), Ok(Shade::LightBlue));
        assert_eq!("gray".parse(), Ok(Shade::Grey));
        assert_eq!(<&str>::from(Shade::Grey), "grey");
        assert_eq!(
            "Black".parse::<Shade>(),
            Err("unknown shade 'Black' (expected light-blue, grey or black)".to_string())
        );
        assert_eq!(parse_label::<Shade>("black"), Ok(Shade::Black));
        assert_eq!(
            parse_label::<Shade>("gray"),
            Err("unknown shade 'gray' (expected light-blue, grey or black)".to_string())
        );
    }

    #[test]
    fn lists_read_as_a_sentence() {
        assert_eq!(one_of([]), "");
        assert_eq!(one_of(["a"]), "a");
        assert_eq!(one_of(["a", "b"]), "a or b");
        assert_eq!(one_of(["a", "b", "c"]), "a, b or c");
    }
}
