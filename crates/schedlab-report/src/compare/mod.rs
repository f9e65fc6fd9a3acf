//! The comparison's layouts and formats. The model — units, tests, decisions, notes and every
//! number printed — is `schedlab_analysis::model::Comparison`; these modules word and lay it
//! out. A style (`schedtests`, `mmtests`, `ministat`, `benchstat`; chosen in [`style`]) builds a
//! [`block::Document`] once; a format renders blocks (`text`, `markdown`; `html/` renders the
//! footer's blocks in its page). `csv` and `json` write every figure whatever the style. Every
//! sentence is worded in [`phrases`] (rows) and [`footer`] (the statistics footer).
pub mod benchstat;
pub mod block;
pub mod csv;
pub mod footer;
pub mod html;
pub mod json;
pub mod lkp;
pub mod markdown;
pub mod ministat;
pub mod mmtests;
pub mod phrases;
pub mod schedtests;
pub mod style;
pub mod table;
pub mod text;

use schedlab_analysis::model::Comparison;

/// What a comparison compares, as a title: every candidate against the base.
pub(crate) fn title(c: &Comparison) -> String {
    let candidates: Vec<&str> = c.candidates.iter().map(|s| s.name.as_str()).collect();
    format!("{} vs {}", candidates.join(", "), c.base.name)
}
