//! The text format: a document's sections as aligned text, a blank line between them, within a
//! plain-text mail's 80 columns by default: sentences wrapped with a hanging indent, tables with
//! long names shortened to keys and a legend. Preformatted blocks (ministat's plot) are the
//! style's to fit.
use std::io::Write;

use super::block::{Block, Document};
use crate::wrap::{wrap, WIDTH};

pub fn write(doc: &Document, out: &mut dyn Write) -> std::io::Result<()> {
    write_within(doc, WIDTH, out)
}

/// The document within `width` columns, as far as its tables' other columns allow.
pub fn write_within(doc: &Document, width: usize, out: &mut dyn Write) -> std::io::Result<()> {
    for (i, part) in doc.parts().enumerate() {
        if i > 0 {
            writeln!(out)?;
        }
        for block in part {
            write_block(block, width, out)?;
        }
    }
    Ok(())
}

fn write_block(block: &Block, width: usize, out: &mut dyn Write) -> std::io::Result<()> {
    let wrapped = |lines: &[String], out: &mut dyn Write| -> std::io::Result<()> {
        for line in lines {
            for part in wrap(line, width, 2) {
                writeln!(out, "{part}")?;
            }
        }
        Ok(())
    };
    match block {
        Block::Title(title) => wrapped(std::slice::from_ref(title), out),
        // The tools whose text these layouts reproduce print no such title.
        Block::Caption(_) => Ok(()),
        Block::Table(table) => table.write_text_within(width, out),
        Block::Preformatted(lines) => {
            for line in lines {
                writeln!(out, "{line}")?;
            }
            Ok(())
        }
        Block::Notes(lines) | Block::List(lines) => wrapped(lines, out),
    }
}
