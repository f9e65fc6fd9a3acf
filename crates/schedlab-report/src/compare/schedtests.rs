//! The schedtests style (as kernel developers post it, seed 004): per candidate, one line per
//! case — case, load, `baseline(std%)` normalised to 1.00, `compare%(std%)` with schedtests' sign
//! (positive is better whatever the metric's direction), and schedlab's mark.
use schedlab_core::metric::Better;

use super::table::{Align, Table};
use super::{Comparison, Row, Verdict};

/// schedtests' compare%: `(1 - c/b)·100` when lower is better, `(c/b - 1)·100` otherwise.
pub fn better_pct(row: &Row) -> Option<f64> {
    let ratio = row.ratio?;
    Some(match row.better {
        Better::Lower => (1.0 - ratio) * 100.0,
        Better::Higher => (ratio - 1.0) * 100.0,
    })
}

fn std_pct(s: Option<schedlab_stats::summary::Summary>) -> String {
    s.and_then(|s| s.std_pct)
        .map_or("  -  ".to_string(), |p| format!("{p:6.2}"))
}

pub fn mark_text(row: &Row) -> String {
    match (row.verdict, &row.note) {
        (Verdict::Inconclusive | Verdict::Noisy, Some(note)) => {
            format!("{} ({note})", row.verdict.mark())
        }
        _ => row.verdict.mark().to_string(),
    }
}

pub fn tables(c: &Comparison) -> Vec<(String, Table)> {
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
            let mut cells = vec![row.label.short.clone(), row.label.load.clone()];
            if several_metrics {
                cells.push(row.metric.clone());
            }
            cells.push(format!("1.00 ({})", std_pct(row.base)));
            cells.push(match better_pct(row) {
                Some(p) => format!("{p:+.2} ({})", std_pct(row.candidate_summary)),
                None => "-".to_string(),
            });
            cells.push(mark_text(row));
            table.push(cells);
        }
        out.push((format!("{} vs {}", candidate.name, c.base.name), table));
    }
    out
}
