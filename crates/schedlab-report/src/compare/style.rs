//! The layouts a comparison can take in text and Markdown, each reproducing a tool kernel
//! developers already post, and the one place a style becomes its blocks: a new style is a file
//! with a `document` function, a variant here and an arm below.
use schedlab_analysis::model::Comparison;

use super::block::Document;
use super::{benchstat, footer, lkp, ministat, mmtests, schedtests};

/// How the comparison table looks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Style {
    Schedtests,
    Mmtests,
    Ministat,
    Benchstat,
    /// 0-day's regression mails: `base ± %stddev  %change  candidate ± %stddev  metric`.
    Lkp,
}

/// What else shapes a layout.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Options {
    /// The statistics footer in one line.
    pub brief: bool,
    /// mmtests: the mean rows only, the baseline as 1.00 (as the seed's tables are).
    pub normalised: bool,
}

/// The comparison laid out in `style`: its sections, then the statistics footer.
pub fn document(c: &Comparison, style: Style) -> Document {
    document_with(c, style, Options::default())
}

/// [`document`] with `options`.
pub fn document_with(c: &Comparison, style: Style, options: Options) -> Document {
    let mut doc = match style {
        Style::Schedtests => schedtests::document(c),
        Style::Mmtests if options.normalised => mmtests::normalised_document(c),
        Style::Mmtests => mmtests::document(c),
        Style::Ministat => ministat::document(c),
        Style::Benchstat => benchstat::document(c),
        Style::Lkp => lkp::document(c),
    };
    if options.brief && doc.closing.is_some() {
        doc.closing = Some(footer::brief_block(c));
    }
    doc
}
