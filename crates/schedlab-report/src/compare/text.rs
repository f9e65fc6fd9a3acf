//! The text format of comparisons: the chosen style, then the statistics footer.
use std::io::Write;

use schedlab_analysis::model::Comparison;
use schedlab_stats::ministat::MinistatVitals;

use super::{benchstat, ministat, mmtests, schedtests};

/// How the comparison table looks: the layouts kernel developers already post.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Style {
    Schedtests,
    Mmtests,
    Ministat,
    Benchstat,
}

pub fn write(c: &Comparison, style: Style, out: &mut dyn Write) -> std::io::Result<()> {
    match style {
        Style::Schedtests => {
            for (title, table) in schedtests::tables(c) {
                writeln!(out, "{title}")?;
                table.write_text(out)?;
                writeln!(out)?;
            }
        }
        Style::Mmtests => {
            for (_, table) in mmtests::tables(c) {
                table.write_text(out)?;
                writeln!(out)?;
            }
        }
        Style::Ministat => {
            ministat::write(c, out)?;
            writeln!(out)?;
        }
        Style::Benchstat => {
            for (_, table, notes) in benchstat::tables(c) {
                table.write_text(out)?;
                for note in notes {
                    writeln!(out, "{note}")?;
                }
                writeln!(out)?;
            }
        }
    }
    write_footer(c, out)
}

/// The ministat style with ministat's switches (`schedlab stat -A -n -q -s -w`); the statistics
/// footer goes with the differences (`-n` leaves both out).
pub fn write_ministat(
    c: &Comparison,
    layout: ministat::Layout,
    out: &mut dyn Write,
) -> std::io::Result<()> {
    ministat::write_with(c, layout, out)?;
    if layout.differences {
        writeln!(out)?;
        write_footer(c, out)?;
    }
    Ok(())
}

/// One dataset alone (`schedlab stat FILE`), as ministat prints a single file: legend, plot and
/// vitals. There is nothing to compare, so no test, no verdict and no footer.
pub fn write_dataset(
    name: &str,
    values: &[f64],
    vitals: MinistatVitals,
    layout: ministat::Layout,
    out: &mut dyn Write,
) -> std::io::Result<()> {
    let names = [name.to_string()];
    ministat::write_block(
        &names,
        &[values.to_vec()],
        &[Some(vitals)],
        &[],
        layout,
        out,
    )
}

pub fn write_footer(c: &Comparison, out: &mut dyn Write) -> std::io::Result<()> {
    for line in &c.footer.text {
        writeln!(out, "{line}")?;
    }
    for missing in &c.unmatched {
        writeln!(out, "unmatched: {missing}")?;
    }
    Ok(())
}
