//! The LKP style: the layout of the 0-day kernel test robot's regression mails, which kernel
//! developers read every week —
//!
//! ```text
//!             base                           cand
//! ---------------- ------------------------------
//!          %stddev     %change            %stddev
//!              \          |                   \
//! fake:value=100 spread=0.5
//!     99.846 ±  0%     +5.2% **       105.0 ±  0%  usec_per_op
//! ```
//!
//! — the base's mean ± its %stddev, the change (every style's sign: positive when the
//! candidate's value is higher), schedlab's mark, the candidate's mean ± %stddev, then the
//! metric; each case's name on a line above its metrics, where 0-day joins testcase and metric
//! with a dot (schedlab's case names are too long for a mail's line). [`LkpTable`] builds the
//! lines from any figures, so another block (what moved under `--explain`) can reuse it; names
//! too long for the width become keys with a legend.
use schedlab_analysis::model::{Comparison, Row};

use super::block::{Block, Document};
use super::footer;
use super::lkp_table::LkpLine;
use super::phrases::{row_mark, SIGN};
use crate::number::format_value;
use crate::wrap::{shorten, wrap, WIDTH};

/// An entry of an LKP table: a heading over the lines that follow it (a case), or a line.
#[derive(Debug, Clone, PartialEq)]
pub enum LkpRow {
    Heading(String),
    Line(LkpLine),
}

/// The two sides' names and the rows between them.
#[derive(Debug, Clone, PartialEq)]
pub struct LkpTable {
    pub base: String,
    pub candidate: String,
    pub rows: Vec<LkpRow>,
}

/// Where the name starts: value, ± %stddev, change, mark, value, ± %stddev, two spaces.
const VALUE: usize = 10;
const STDDEV: usize = 6;
const CHANGE: usize = 9;
const MARK: usize = 4;
const BASE_END: usize = VALUE + STDDEV;
const CHANGE_END: usize = BASE_END + 1 + CHANGE;
const CANDIDATE_END: usize = CHANGE_END + 1 + MARK + VALUE + STDDEV;
const NAME_AT: usize = CANDIDATE_END + 2;

fn value_cell(value: Option<f64>) -> String {
    format!("{:>VALUE$}", value.map_or("-".to_string(), format_value))
}

/// ` ±  3%`, or blank where a side has no spread.
fn stddev_cell(pct: Option<f64>) -> String {
    match pct {
        Some(p) => format!(" ±{p:>3.0}%"),
        None => " ".repeat(STDDEV),
    }
}

impl LkpTable {
    /// The table as lines within `width` columns (as far as the numbers allow): the header,
    /// a line per entry, then the legend of shortened names.
    pub fn text_lines(&self, width: usize) -> Vec<String> {
        let mut out = vec![
            format!(
                "{:>BASE_END$} {:>w$}",
                self.base,
                self.candidate,
                w = CANDIDATE_END - BASE_END - 1
            ),
            format!(
                "{} {}",
                "-".repeat(BASE_END),
                "-".repeat(CANDIDATE_END - BASE_END - 1)
            ),
            format!(
                "{:>BASE_END$}{:>w1$}{:>w2$}",
                "%stddev",
                "%change",
                "%stddev",
                w1 = CHANGE_END - BASE_END,
                w2 = CANDIDATE_END - CHANGE_END
            ),
            format!(
                "{:>a$}{:>b$}{:>c$}",
                "\\",
                "|",
                "\\",
                a = BASE_END - 3,
                b = CHANGE_END - 3 - (BASE_END - 3),
                c = CANDIDATE_END - 3 - (CHANGE_END - 3)
            ),
        ];
        let names: Vec<&str> = self
            .rows
            .iter()
            .filter_map(|r| match r {
                LkpRow::Line(l) => Some(l.metric.as_str()),
                LkpRow::Heading(_) => None,
            })
            .collect();
        let budget = width.saturating_sub(NAME_AT).max(16);
        let shortened = shorten(&names, budget);
        let mut names = shortened.names.iter();
        for row in &self.rows {
            let line = match row {
                LkpRow::Heading(heading) => {
                    out.extend(wrap(heading, width, 2));
                    continue;
                }
                LkpRow::Line(line) => line,
            };
            let name = names.next().map_or("", String::as_str);
            let change = line
                .change_pct
                .map_or("-".to_string(), |p| format!("{p:+.1}%"));
            out.push(format!(
                "{}{} {change:>CHANGE$} {:<MARK$}{}{}  {name}",
                value_cell(line.base),
                stddev_cell(line.base_stddev_pct),
                line.mark,
                value_cell(line.candidate),
                stddev_cell(line.candidate_stddev_pct),
            ));
        }
        for entry in &shortened.legend {
            out.extend(wrap(entry, width, 4));
        }
        out
    }
}

/// A row's line: the sides' plain means (as the other text styles print them, where the
/// explanation's table prints means on the row's scale), the model's spreads and change,
/// schedlab's mark with its note, and its metric (its case is the heading above it).
pub fn row_line(row: &Row) -> LkpLine {
    LkpLine {
        base: row.base_side.mean,
        candidate: row.candidate_side.mean,
        mark: row_mark(row),
        ..LkpLine::of_row(row, row.metric.clone())
    }
}

/// Per candidate, its title and table; then the statistics footer.
pub fn document(c: &Comparison) -> Document {
    Document {
        sections: c
            .candidates
            .iter()
            .map(|candidate| {
                let mut rows = Vec::new();
                let mut case: Option<&str> = None;
                for row in c.rows.iter().filter(|r| r.candidate == candidate.name) {
                    if case != Some(row.case.as_str()) {
                        case = Some(&row.case);
                        rows.push(LkpRow::Heading(row.case.clone()));
                    }
                    rows.push(LkpRow::Line(row_line(row)));
                }
                let table = LkpTable {
                    base: c.base.name.clone(),
                    candidate: candidate.name.clone(),
                    rows,
                };
                vec![
                    Block::Title(format!(
                        "{} vs {} ({SIGN}; marks: schedlab's)",
                        candidate.name, c.base.name
                    )),
                    Block::Preformatted(table.text_lines(WIDTH)),
                ]
            })
            .collect(),
        closing: Some(footer::block(c)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_line_up_under_the_header_and_keep_within_the_width() {
        let table = LkpTable {
            base: "v6.18".into(),
            candidate: "v6.19".into(),
            rows: vec![LkpRow::Line(LkpLine {
                base: Some(99.85),
                base_stddev_pct: Some(2.6),
                change_pct: Some(5.16),
                mark: "**".into(),
                candidate: Some(105.0),
                candidate_stddev_pct: None,
                metric: "cpudl:orig cpus=64 ops=100000 mix=cpudl-bench (no real deletes: cpus is \
                       a multiple of 8).nsec_per_op"
                    .into(),
            })],
        };
        let lines = table.text_lines(80);
        assert!(lines.iter().all(|l| l.chars().count() <= 80), "{lines:#?}");
        assert_eq!(lines[2], "         %stddev   %change              %stddev");
        let row = &lines[4];
        assert!(
            row.starts_with("    99.850 ±  3%     +5.2% **       105.0  "),
            "{row}"
        );
        // The bar of the fourth header line stands under `%change`, over the changes.
        let bar = lines[3].find('|').unwrap();
        let change = lines[2].find("%change").unwrap();
        assert!((change..change + 7).contains(&bar), "{lines:#?}");
        let under: String = row.chars().skip(change).take(7).collect();
        assert_eq!(under, "  +5.2%", "{lines:#?}");
        assert!(lines[5].starts_with("[1] cpudl:orig"), "{lines:#?}");
    }
}
