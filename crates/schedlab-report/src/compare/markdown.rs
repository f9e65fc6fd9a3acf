//! The Markdown format of comparisons: tabular styles as Markdown tables, ministat's plot-bearing
//! report as a fenced block, and the footer as a list.
use std::io::Write;

use super::text::Style;
use schedlab_analysis::model::Comparison;

use super::{benchstat, ministat, mmtests, schedtests};

pub fn write(c: &Comparison, style: Style, out: &mut dyn Write) -> std::io::Result<()> {
    match style {
        Style::Schedtests => {
            for (title, table) in schedtests::tables(c) {
                writeln!(out, "**{title}**\n")?;
                table.write_markdown(out)?;
                writeln!(out)?;
            }
        }
        Style::Mmtests => {
            for (_, table) in mmtests::tables(c) {
                table.write_markdown(out)?;
                writeln!(out)?;
            }
        }
        Style::Ministat => {
            writeln!(out, "```")?;
            ministat::write(c, out)?;
            writeln!(out, "```\n")?;
        }
        Style::Benchstat => {
            for (metric, table, notes) in benchstat::tables(c) {
                writeln!(out, "**{metric}**\n")?;
                table.write_markdown(out)?;
                for note in notes {
                    writeln!(out, "\n{note}")?;
                }
                writeln!(out)?;
            }
        }
    }
    write_footer(c, out)
}

/// The ministat style with ministat's switches, as `text::write_ministat` in a fenced block.
pub fn write_ministat(
    c: &Comparison,
    layout: ministat::Layout,
    out: &mut dyn Write,
) -> std::io::Result<()> {
    writeln!(out, "```")?;
    ministat::write_with(c, layout, out)?;
    writeln!(out, "```\n")?;
    if layout.differences {
        write_footer(c, out)?;
    }
    Ok(())
}

/// What `body` writes, in a fenced block: a text layout kept as it is (`schedlab stat FILE`'s
/// one-dataset summary).
pub fn fenced(
    out: &mut dyn Write,
    body: impl FnOnce(&mut dyn Write) -> std::io::Result<()>,
) -> std::io::Result<()> {
    writeln!(out, "```")?;
    body(out)?;
    writeln!(out, "```")
}

fn write_footer(c: &Comparison, out: &mut dyn Write) -> std::io::Result<()> {
    for line in &c.footer.text {
        writeln!(out, "- {line}")?;
    }
    for missing in &c.unmatched {
        writeln!(out, "- unmatched: {missing}")?;
    }
    Ok(())
}
