//! The Markdown format: titles in bold, tables as Markdown tables, preformatted blocks (ministat's
//! plot-bearing report) fenced, the footer as a list; a blank line between sections.
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
        Block::Title(title) | Block::Caption(title) => writeln!(out, "**{title}**\n"),
        Block::Table(table) => table.write_markdown(out),
        Block::Preformatted(lines) => {
            writeln!(out, "```")?;
            for line in lines {
                writeln!(out, "{line}")?;
            }
            writeln!(out, "```")
        }
        Block::Notes(lines) => {
            for line in lines {
                writeln!(out, "\n{line}")?;
            }
            Ok(())
        }
        Block::List(items) => {
            for item in items {
                writeln!(out, "- {item}")?;
            }
            Ok(())
        }
    }
}
