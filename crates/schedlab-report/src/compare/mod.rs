//! The comparison's layouts and formats. The model — units, tests, decisions and every number
//! printed — is `schedlab_analysis::model::Comparison`; these modules only lay it out: one module
//! per style (`schedtests`, `mmtests`, `ministat`, `benchstat`) and one per format (`text`,
//! `markdown`, `csv`, `json`, `html/`), each writing to any `io::Write`.
pub mod benchstat;
pub mod csv;
pub mod html;
pub mod json;
pub mod markdown;
pub mod ministat;
pub mod mmtests;
pub mod schedtests;
pub mod table;
pub mod text;

use schedlab_analysis::model::Comparison;

/// What a comparison compares, as a title: every candidate against the base.
pub(crate) fn title(c: &Comparison) -> String {
    let candidates: Vec<&str> = c.candidates.iter().map(|s| s.name.as_str()).collect();
    format!("{} vs {}", candidates.join(", "), c.base.name)
}
