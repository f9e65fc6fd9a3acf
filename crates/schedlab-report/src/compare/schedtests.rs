//! The schedtests style (as kernel developers post it, seed 004): per candidate, one line per
//! case — case, load, `baseline(std%)` normalised to 1.00, `compare%(std%)` with schedtests' sign
//! (positive is better whatever the metric's direction), and schedlab's mark.
use schedlab_analysis::model::{Comparison, Row, SideFigures, Verdict};

use super::block::{Block, Document};
use super::footer;
use super::phrases::row_note;
use super::table::{Align, Table};

fn std_cell(side: &SideFigures) -> String {
    side.spread_pct
        .map_or("  -  ".to_string(), |p| format!("{p:6.2}"))
}

pub fn mark_text(row: &Row) -> String {
    match (row.verdict, &row.note) {
        (Verdict::Inconclusive | Verdict::Noisy | Verdict::NotJudged, Some(note)) => {
            format!("{} ({})", row.verdict.mark(), row_note(note))
        }
        _ => row.verdict.mark().to_string(),
    }
}

/// A titled table per candidate, then the statistics footer.
pub fn document(c: &Comparison) -> Document {
    Document {
        sections: tables(c)
            .into_iter()
            .map(|(title, table)| vec![Block::Title(title), Block::Table(table)])
            .collect(),
        closing: Some(footer::block(c)),
    }
}

fn tables(c: &Comparison) -> Vec<(String, Table)> {
    let several_metrics = {
        let mut names: Vec<&str> = c.rows.iter().map(|r| r.metric.as_str()).collect();
        names.sort_unstable();
        names.dedup();
        names.len() > 1
    };
    let mut out = Vec::new();
    for candidate in &c.candidates {
        let mut columns = vec![("case", Align::Left), ("load", Align::Left)];
        if several_metrics {
            columns.push(("metric", Align::Left));
        }
        let compare_header = format!("{}%( std%)", candidate.name);
        columns.push(("baseline(std%)", Align::Right));
        columns.push((compare_header.as_str(), Align::Right));
        columns.push(("mark", Align::Left));
        let mut table = Table::new(&columns);
        for row in c.rows.iter().filter(|r| r.candidate == candidate.name) {
            let mut cells = vec![row.case_short.clone(), row.load.clone()];
            if several_metrics {
                cells.push(row.metric.clone());
            }
            cells.push(format!("1.00 ({})", std_cell(&row.base_side)));
            cells.push(match row.styles.schedtests_pct {
                Some(p) => format!("{p:+.2} ({})", std_cell(&row.candidate_side)),
                None => "-".to_string(),
            });
            cells.push(mark_text(row));
            table.push(cells);
        }
        out.push((format!("{} vs {}", candidate.name, c.base.name), table));
    }
    out
}
