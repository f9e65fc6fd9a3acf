//! The schedtests style (as kernel developers post it, seed 004): per candidate, one line per
//! case — case, load (where a workload has one), `baseline(std%)` normalised to 1.00, the candidate's change in percent
//! with its std%, and schedlab's mark. The change has every style's sign (positive when the
//! candidate's value is higher, whatever the metric's direction; the title says so and the mark
//! says better or worse), so a row reads as in the ministat, benchstat, LKP and HTML styles. Why
//! a row is `~`, `??` or `?` is a lettered note under the table, so the mark column stays narrow.
use schedlab_analysis::model::{Comparison, Row, SideFigures, Verdict};

use super::block::{Block, Document};
use super::footer;
use super::phrases::{row_mark, row_note, SIGN};
use super::table::{Align, Table};

fn std_cell(side: &SideFigures) -> String {
    side.spread_pct
        .map_or("  -  ".to_string(), |p| format!("{p:6.2}"))
}

/// Lettered notes under a table: each distinct note once, `[a]`, `[b]`, …
#[derive(Debug, Default)]
pub struct Lettered {
    notes: Vec<String>,
}

impl Lettered {
    /// The letter of `note`, given it on first use.
    pub fn letter(&mut self, note: String) -> String {
        let index = match self.notes.iter().position(|n| *n == note) {
            Some(i) => i,
            None => {
                self.notes.push(note);
                self.notes.len() - 1
            }
        };
        letter(index)
    }

    /// `[a] note`, in letter order.
    pub fn lines(&self) -> Vec<String> {
        self.notes
            .iter()
            .enumerate()
            .map(|(i, n)| format!("[{}] {n}", letter(i)))
            .collect()
    }
}

/// a … z, then aa, ab, …
fn letter(index: usize) -> String {
    let letters = b"abcdefghijklmnopqrstuvwxyz";
    if index < 26 {
        (letters[index] as char).to_string()
    } else {
        format!("{}{}", letter(index / 26 - 1), letters[index % 26] as char)
    }
}

/// The mark, with the letter of the note that says why a row is `~`, `??` or `?`.
pub fn mark_cell(row: &Row, notes: &mut Lettered) -> String {
    match (row.verdict, &row.note) {
        (Verdict::Inconclusive | Verdict::Noisy | Verdict::NotJudged, Some(note)) => {
            format!("{} [{}]", row_mark(row), notes.letter(row_note(note)))
        }
        _ => row_mark(row),
    }
}

/// A titled table per candidate with its notes, then the statistics footer.
pub fn document(c: &Comparison) -> Document {
    Document {
        sections: tables(c)
            .into_iter()
            .map(|(title, table, notes)| {
                let mut blocks = vec![Block::Title(title), Block::Table(table)];
                if !notes.is_empty() {
                    blocks.push(Block::Notes(notes));
                }
                blocks
            })
            .collect(),
        closing: Some(footer::block(c)),
    }
}

fn tables(c: &Comparison) -> Vec<(String, Table, Vec<String>)> {
    let several_metrics = {
        let mut names: Vec<&str> = c.rows.iter().map(|r| r.metric.as_str()).collect();
        names.sort_unstable();
        names.dedup();
        names.len() > 1
    };
    // A load column of dashes only takes room a mail does not have.
    let loads = c.rows.iter().any(|r| r.load != "-");
    let mut out = Vec::new();
    for candidate in &c.candidates {
        let mut columns = vec![("case", Align::Left)];
        if loads {
            columns.push(("load", Align::Left));
        }
        if several_metrics {
            columns.push(("metric", Align::Left));
        }
        let compare_header = format!("{}%( std%)", candidate.name);
        columns.push(("baseline(std%)", Align::Right));
        columns.push((compare_header.as_str(), Align::Right));
        columns.push(("mark", Align::Left));
        let mut table = Table::new(&columns).with_names(0);
        let mut notes = Lettered::default();
        for row in c.rows.iter().filter(|r| r.candidate == candidate.name) {
            let mut cells = vec![row.case_short.clone()];
            if loads {
                cells.push(row.load.clone());
            }
            if several_metrics {
                cells.push(row.metric.clone());
            }
            cells.push(format!("1.00 ({})", std_cell(&row.base_side)));
            cells.push(match row.change_pct {
                Some(p) => format!("{p:+.2} ({})", std_cell(&row.candidate_side)),
                None => "-".to_string(),
            });
            cells.push(mark_cell(row, &mut notes));
            table.push(cells);
        }
        out.push((
            format!("{} vs {} ({SIGN})", candidate.name, c.base.name),
            table,
            notes.lines(),
        ));
    }
    out
}
