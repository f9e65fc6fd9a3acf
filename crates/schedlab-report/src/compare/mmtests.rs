//! The mmtests style (compare-mmtests.pl): per case and metric, rows Min, Amean (Hmean when higher
//! is better), Stddev, CoeffVar and Max over the row's units, each candidate's value with its gain
//! over the baseline in percent (positive is better); the mean row carries `*` marks where
//! schedlab marks the change.
use schedlab_analysis::model::Comparison;

use super::block::{Block, Document};
use super::footer;
use super::table::{Align, Table};
use crate::number::format_value;

/// One table of every case and metric, candidates side by side, then the statistics footer.
pub fn document(c: &Comparison) -> Document {
    Document {
        sections: vec![vec![Block::Table(table(c))]],
        closing: Some(footer::block(c)),
    }
}

fn table(c: &Comparison) -> Table {
    let mut columns = vec![
        ("", Align::Left),
        ("", Align::Left),
        (c.base.name.as_str(), Align::Right),
    ];
    for candidate in &c.candidates {
        columns.push((candidate.name.as_str(), Align::Right));
    }
    let mut table = Table::new(&columns);
    // One block per case × metric, candidates side by side.
    for rows in c.rows_by_case_metric() {
        let first = rows[0];
        let name = if first.load == "-" {
            format!("{} {}", first.case_short, first.metric)
        } else {
            format!("{}-{} {}", first.case_short, first.load, first.metric)
        };
        for (i, line) in first.styles.mmtests.iter().enumerate() {
            let mut cells = vec![
                line.name.to_string(),
                name.clone(),
                line.base.map_or_else(
                    || "-".to_string(),
                    |base| format!("{} (   0.00%)", format_value(base)),
                ),
            ];
            for candidate in &c.candidates {
                let cell = rows
                    .iter()
                    .find(|r| r.candidate == candidate.name)
                    .and_then(|r| r.styles.mmtests.get(i))
                    .map(|l| match (l.candidate, l.gain_pct) {
                        (None, _) => "-".to_string(),
                        (Some(value), None) => format!("{} (      -)", format_value(value)),
                        (Some(value), Some(gain)) if l.marked => {
                            format!("{} *{gain:7.2}%*", format_value(value))
                        }
                        (Some(value), Some(gain)) => {
                            format!("{} ({gain:7.2}%)", format_value(value))
                        }
                    })
                    .unwrap_or_else(|| "-".to_string());
                cells.push(cell);
            }
            table.push(cells);
        }
    }
    table
}
