//! The page's fixed text and furniture — its head and styling, each section's opening paragraph,
//! the tables' headers, the legends — from the files under `assets/html/` in this crate, built
//! into the binary: the prose of the page is edited there, not in Rust. Where a file takes a
//! value it names it `{{name}}`, and [`fill`] puts it in (escaped by the caller where it is the
//! user's).

/// A file's text without the newline that ends it.
const fn asset(text: &'static str) -> &'static str {
    match text.as_bytes() {
        [.., b'\n'] => {
            let (head, _) = text.split_at(text.len() - 1);
            head
        }
        _ => text,
    }
}

/// The page's only styling. System fonts only: nothing is fetched.
pub const CSS: &str = include_str!("../../../assets/html/page.css");
/// From `<!DOCTYPE html>` to `<main>`: `{{version}}`, `{{title}}`, `{{css}}`.
pub const HEAD: &str = asset(include_str!("../../../assets/html/head.html"));
pub const CHANGE: &str = asset(include_str!("../../../assets/html/change.html"));
/// The explanation's section up to its cases (`compare --explain`, runs with probes).
pub const EXPLAIN: &str = asset(include_str!("../../../assets/html/explain.html"));
/// `{{level}}`: the confidence of the points' intervals.
pub const SCALING: &str = asset(include_str!("../../../assets/html/scaling.html"));
pub const LATENCY: &str = asset(include_str!("../../../assets/html/latency.html"));
pub const DISTRIBUTIONS: &str = asset(include_str!("../../../assets/html/distributions.html"));
pub const MACHINES: &str = asset(include_str!("../../../assets/html/machines.html"));
pub const MACHINES_ALIKE: &str = asset(include_str!("../../../assets/html/machines-alike.html"));
pub const MACHINES_DIFFER: &str = asset(include_str!("../../../assets/html/machines-differ.html"));
pub const FINGERPRINTS_LEGEND: &str = asset(include_str!(
    "../../../assets/html/fingerprints-legend.html"
));
/// The page's links to its sections, every one; those the page lacks are left out
/// ([`super::nav`]).
pub const NAV: &str = asset(include_str!("../../../assets/html/nav.html"));
/// The comparison section up to its table's body: `{{candidate}}` (the candidate column's
/// header, where there are several), `{{sign}}`, `{{level}}`.
pub const COMPARISON: &str = asset(include_str!("../../../assets/html/comparison.html"));
/// Under the comparison table: `{{pairs}}`, how many case × metric pairs one side lacks.
pub const ONE_SIDE_ONLY: &str = asset(include_str!("../../../assets/html/one-side-only.html"));
/// The statistics' list of unmatched pairs, up to its items.
pub const UNMATCHED: &str = asset(include_str!("../../../assets/html/unmatched.html"));
/// The statistics' last line and the footer's end: `{{version}}`.
pub const STATISTICS_END: &str = asset(include_str!("../../../assets/html/statistics-end.html"));
/// The runs section up to its table's body.
pub const RUNS: &str = asset(include_str!("../../../assets/html/runs.html"));

/// `template` with each `{{name}}` replaced by its value.
pub fn fill(template: &str, values: &[(&str, &str)]) -> String {
    let mut text = template.to_string();
    for (name, value) in values {
        text = text.replace(&format!("{{{{{name}}}}}"), value);
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_placeholder_of_a_file_is_filled() {
        assert_eq!(
            fill("a {{x}} b {{y}}", &[("x", "1"), ("y", "<2>")]),
            "a 1 b <2>"
        );
        for (template, names) in [
            (HEAD, &["version", "title", "css"][..]),
            (SCALING, &["level"][..]),
            (COMPARISON, &["candidate", "sign", "level"][..]),
            (ONE_SIDE_ONLY, &["pairs"][..]),
            (STATISTICS_END, &["version"][..]),
        ] {
            let values: Vec<(&str, &str)> = names.iter().map(|n| (*n, "v")).collect();
            assert!(!fill(template, &values).contains("{{"), "{template}");
        }
        for fixed in [
            CHANGE,
            EXPLAIN,
            LATENCY,
            DISTRIBUTIONS,
            MACHINES,
            RUNS,
            FINGERPRINTS_LEGEND,
            NAV,
            UNMATCHED,
        ] {
            assert!(!fixed.contains("{{") && !fixed.ends_with('\n'), "{fixed}");
        }
    }
}
