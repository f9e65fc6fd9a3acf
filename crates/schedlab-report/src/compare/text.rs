//! The text format: a document's sections as aligned text, a blank line between them.
use std::io::Write;

use super::block::{Block, Document};

pub fn write(doc: &Document, out: &mut dyn Write) -> std::io::Result<()> {
    for (i, part) in doc.parts().enumerate() {
        if i > 0 {
            writeln!(out)?;
        }
        for block in part {
            write_block(block, out)?;
        }
    }
    Ok(())
}

fn write_block(block: &Block, out: &mut dyn Write) -> std::io::Result<()> {
    match block {
        Block::Title(title) => writeln!(out, "{title}"),
        // The tools whose text these layouts reproduce print no such title.
        Block::Caption(_) => Ok(()),
        Block::Table(table) => table.write_text(out),
        Block::Preformatted(lines) | Block::Notes(lines) | Block::List(lines) => {
            for line in lines {
                writeln!(out, "{line}")?;
            }
            Ok(())
        }
    }
}
