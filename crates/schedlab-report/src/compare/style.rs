//! The layouts a comparison can take in text and Markdown, each reproducing a tool kernel
//! developers already post, and the one place a style becomes its blocks: a new style is a file
//! with a `document` function, a variant here and an arm below.
use schedlab_analysis::model::Comparison;

use super::block::Document;
use super::{benchstat, ministat, mmtests, schedtests};

/// How the comparison table looks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Style {
    Schedtests,
    Mmtests,
    Ministat,
    Benchstat,
}

/// The comparison laid out in `style`: its sections, then the statistics footer.
pub fn document(c: &Comparison, style: Style) -> Document {
    match style {
        Style::Schedtests => schedtests::document(c),
        Style::Mmtests => mmtests::document(c),
        Style::Ministat => ministat::document(c),
        Style::Benchstat => benchstat::document(c),
    }
}
