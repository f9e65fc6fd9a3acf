//! The mmtests style (compare-mmtests.pl): per case and metric, rows Min, Amean (Hmean when higher
//! is better), Stddev, CoeffVar and Max over the row's units, each candidate's value with its
//! change from the baseline in percent; the mean row carries `*` marks where schedlab marks the
//! change. The change has every style's sign (positive when the candidate's figure is higher;
//! the header says so), so a row reads as in the other styles. Normalised (`--normalise`), as the
//! seed's tables are: the mean row alone, the baseline as 1.00 and each candidate's change.
use schedlab_analysis::model::{Comparison, MmtestsLine, Row};

use super::block::{Block, Document};
use super::footer;
use super::phrases::SIGN;
use super::table::{Align, Table};
use crate::number::format_value;

/// One table of every case and metric, candidates side by side, then the statistics footer.
pub fn document(c: &Comparison) -> Document {
    Document {
        sections: vec![vec![Block::Title(title()), Block::Table(table(c))]],
        closing: Some(footer::block(c)),
    }
}

/// The mean rows only, normalised to the baseline: `Amean  name  1.00  +0.26%`.
pub fn normalised_document(c: &Comparison) -> Document {
    Document {
        sections: vec![vec![
            Block::Title(title()),
            Block::Table(normalised_table(c)),
        ]],
        closing: Some(footer::block(c)),
    }
}

/// The sign of the changes and what the stars are.
fn title() -> String {
    format!("{SIGN}; *…* where schedlab marks the change")
}

/// A row's name in the table: case and load, then the metric in a column of its own, so a
/// case name shortened to fit a mail keeps its metric.
fn row_name(first: &Row) -> [String; 2] {
    let case = if first.load == "-" {
        first.case_short.clone()
    } else {
        format!("{}-{}", first.case_short, first.load)
    };
    [case, first.metric.clone()]
}

fn columns(c: &Comparison) -> Table {
    let mut columns = vec![
        ("", Align::Left),
        ("", Align::Left),
        ("", Align::Left),
        (c.base.name.as_str(), Align::Right),
    ];
    for candidate in &c.candidates {
        columns.push((candidate.name.as_str(), Align::Right));
    }
    Table::new(&columns).with_names(1)
}

/// A candidate's change on one line: `(  -5.16%)`, `*  +5.08%*` where marked.
fn change_cell(line: &MmtestsLine) -> String {
    match line.change_pct {
        None => "(      -)".to_string(),
        Some(change) if line.marked => format!("*{change:+7.2}%*"),
        Some(change) => format!("({change:+7.2}%)"),
    }
}

fn table(c: &Comparison) -> Table {
    let mut table = columns(c);
    // One block per case × metric, candidates side by side.
    for rows in c.rows_by_case_metric() {
        let first = rows[0];
        let name = row_name(first);
        for (i, line) in first.styles.mmtests.iter().enumerate() {
            let mut cells = vec![line.name.to_string()];
            cells.extend(name.clone());
            cells.extend([line.base.map_or_else(
                || "-".to_string(),
                |base| format!("{} (   0.00%)", format_value(base)),
            )]);
            for candidate in &c.candidates {
                let cell = rows
                    .iter()
                    .find(|r| r.candidate == candidate.name)
                    .and_then(|r| r.styles.mmtests.get(i))
                    .map(|l| match l.candidate {
                        None => "-".to_string(),
                        Some(value) => format!("{} {}", format_value(value), change_cell(l)),
                    })
                    .unwrap_or_else(|| "-".to_string());
                cells.push(cell);
            }
            table.push(cells);
        }
    }
    table
}

fn normalised_table(c: &Comparison) -> Table {
    let mut table = columns(c);
    for rows in c.rows_by_case_metric() {
        let first = rows[0];
        // The mean line: Amean, or Hmean when higher is better.
        let Some((i, mean)) = first
            .styles
            .mmtests
            .iter()
            .enumerate()
            .find(|(_, l)| l.name.ends_with("mean"))
        else {
            continue;
        };
        let mut cells = vec![mean.name.to_string()];
        cells.extend(row_name(first));
        cells.push(if mean.base.is_some() { "1.00" } else { "-" }.to_string());
        for candidate in &c.candidates {
            let line = rows
                .iter()
                .find(|r| r.candidate == candidate.name)
                .and_then(|r| r.styles.mmtests.get(i));
            cells.push(
                match line.and_then(|l| l.change_pct.map(|p| (p, l.marked))) {
                    Some((change, true)) => format!("*{change:+.2}%*"),
                    Some((change, false)) => format!("{change:+.2}%"),
                    None => "-".to_string(),
                },
            );
        }
        table.push(cells);
    }
    table
}
