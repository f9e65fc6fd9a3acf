//! The table 0-day's LKP regression mails print, as a block any layout can use: per metric the
//! base's mean and `%stddev`, the `%change`, the candidate's mean and `%stddev`, then the metric,
//! with schedlab's mark before its name — the verdict LKP's table lacks. `compare --explain` lists
//! what moved in it; a layout of primary rows can build the same table from its rows.
//!
//! ```text
//!  hog-a  %stddev  %change   hog-b  %stddev  mark  metric
//!  6.667     ± 4%  +1.4e4%   937.5     ± 9%  **    runq_delay_p99_usec (syscall worker)
//! ```
//!
//! The means are the model's: each side's mean unit (runs, boots or A/B arms) on the row's scale
//! — the geometric mean where the test took logs, so candidate ÷ base is the %change the verdict
//! judged — and %stddev the units' spread about their plain mean (within its one run where a side
//! has a single unit, as schedtests' std% is).
use schedlab_analysis::model::Row;

use super::table::{Align, Table};
use crate::number::format_value;

/// One line of the table.
#[derive(Debug, Clone, PartialEq)]
pub struct LkpLine {
    pub base: Option<f64>,
    pub base_stddev_pct: Option<f64>,
    pub change_pct: Option<f64>,
    pub candidate: Option<f64>,
    pub candidate_stddev_pct: Option<f64>,
    /// The verdict's mark (`**`, `~`, `?` ...).
    pub mark: String,
    pub metric: String,
}

impl LkpLine {
    /// A row of a comparison as a line, named `metric` (a row's metric, or a qualified name).
    pub fn of_row(row: &Row, metric: impl Into<String>) -> LkpLine {
        LkpLine {
            base: row.base_side.scale_mean,
            base_stddev_pct: row.base_side.spread_pct,
            change_pct: row.change_pct,
            candidate: row.candidate_side.scale_mean,
            candidate_stddev_pct: row.candidate_side.spread_pct,
            mark: row.verdict.mark().to_string(),
            metric: metric.into(),
        }
    }
}

/// `± 4%` as LKP prints a stddev (whole percent), empty where there is none.
fn stddev_cell(pct: Option<f64>) -> String {
    pct.filter(|p| p.is_finite())
        .map_or_else(String::new, |p| format!("± {:.0}%", p.abs()))
}

/// A change as LKP prints it: one decimal, its sign, and an exponent from ±10,000 % on.
pub fn change_cell(pct: Option<f64>) -> String {
    match pct {
        Some(p) if p.is_finite() && p.abs() >= 10_000.0 => format!("{p:+.1e}%"),
        Some(p) if p.is_finite() => format!("{p:+.1}%"),
        _ => "-".to_string(),
    }
}

/// The table of `lines`, its value columns headed by the sides' names.
pub fn table(base: &str, candidate: &str, lines: &[LkpLine]) -> Table {
    let mut table = Table::new(&[
        (base, Align::Right),
        ("%stddev", Align::Right),
        ("%change", Align::Right),
        (candidate, Align::Right),
        ("%stddev", Align::Right),
        ("mark", Align::Left),
        ("metric", Align::Left),
    ]);
    let value = |v: Option<f64>| v.map_or_else(|| "-".to_string(), format_value);
    for line in lines {
        table.push(vec![
            value(line.base),
            stddev_cell(line.base_stddev_pct),
            change_cell(line.change_pct),
            value(line.candidate),
            stddev_cell(line.candidate_stddev_pct),
            line.mark.clone(),
            line.metric.clone(),
        ]);
    }
    table
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prints_as_lkp_mails_do_with_the_mark() {
        let lines = [
            LkpLine {
                base: Some(6.6667),
                base_stddev_pct: Some(4.2),
                change_pct: Some(14_000.0),
                candidate: Some(937.5),
                candidate_stddev_pct: Some(9.4),
                mark: "**".into(),
                metric: "runq_delay_p99_usec (worker)".into(),
            },
            LkpLine {
                base: Some(12.0),
                base_stddev_pct: None,
                change_pct: Some(-3.04),
                candidate: Some(11.6),
                candidate_stddev_pct: None,
                mark: "?".into(),
                metric: "migrations_count".into(),
            },
        ];
        let mut text = Vec::new();
        table("hog-a", "hog-b", &lines)
            .write_text(&mut text)
            .unwrap();
        let expected = [
            " hog-a  %stddev  %change   hog-b  %stddev  mark  metric",
            " 6.667     ± 4%  +1.4e4%   937.5     ± 9%  **    runq_delay_p99_usec (worker)",
            "12.000             -3.0%  11.600           ?     migrations_count",
        ];
        assert_eq!(
            String::from_utf8(text).unwrap(),
            format!("{}\n", expected.join("\n"))
        );
    }
}
