//! What a comparison report is made of, whatever its format: a style ([`super::style`]) builds a
//! [`Document`] of sections of blocks once, and each format (`text`, `markdown`, `html`) renders
//! blocks. A new kind of content is a variant here and an arm in each renderer; a new layout is
//! a style file.
use super::table::Table;

/// One piece of a report.
#[derive(Debug, Clone, PartialEq)]
pub enum Block {
    /// A title over the blocks that follow it (schedtests' `cand vs base`).
    Title(String),
    /// A title that only formats able to set it apart show (Markdown, HTML); plain text leaves
    /// it out, as the tool whose layout it reproduces does (benchstat names the metric in its
    /// header).
    Caption(String),
    Table(Table),
    /// Lines kept exactly as they are, plots and aligned figures included (ministat's report).
    Preformatted(Vec<String>),
    /// Sentences that belong to the block before them (benchstat's footnotes).
    Notes(Vec<String>),
    /// Sentences that stand on their own, each an item (the statistics footer).
    List(Vec<String>),
}

/// A report: its sections, each a group of blocks set apart from the next, then the closing
/// list of statistics (none for a report without a test, or ministat's `-n`).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Document {
    pub sections: Vec<Vec<Block>>,
    pub closing: Option<Block>,
}

impl Document {
    /// The sections, then the closing block as a section of its own: what renderers walk.
    pub fn parts(&self) -> impl Iterator<Item = &[Block]> {
        self.sections
            .iter()
            .map(Vec::as_slice)
            .chain(self.closing.as_ref().map(std::slice::from_ref))
    }
}
