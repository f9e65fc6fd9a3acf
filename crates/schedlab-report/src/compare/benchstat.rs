//! The benchstat style: per metric, each side's median ± the half-width of its order-statistic
//! confidence interval over the row's units, and per candidate `vs base`: `~` when Mann–Whitney's
//! p exceeds 0.05, otherwise the change of medians, always with `(p=… n=…)`; a geomean row when
//! there are several cases. The numbers are benchstat's own readings, computed in the model, so
//! they can be set beside schedlab's marks: `**` after a candidate's cell where schedlab marks it.
use schedlab_analysis::model::{Comparison, NoSpread, Row};
use schedlab_analysis::units::Design;

use super::block::{Block, Document};
use super::footer;
use super::phrases::row_mark;
use super::table::{Align, Table};
use crate::number::format_value;

/// benchstat's footnotes, in benchstat's words but counting compare's units: its "samples" are
/// the row's units (one per run, boot, A/B round or data line), never the iterations of a run,
/// so a side of one run has one sample however many iterations it ran.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Note {
    /// ¹ no confidence interval: fewer than 6 units on a side.
    Ci,
    /// ² no difference detectable: fewer than 4 units on a side.
    Detect,
    /// ³ no spread in percent: the median is 0.
    ZeroMedian,
    /// ⁴ a case on several lines: its candidates were judged against different units of the
    /// baseline, and each line prints the baseline its candidates had.
    SplitCase,
    /// ⁵ several geomean lines: each candidate is set against the baseline's geometric mean over
    /// its own rows, which differ where it lacks a case or (`--across`) was paired in fewer runs.
    SplitGeomean,
    /// ⁶ benchstat's `~` beside schedlab's `**`: the mark decides.
    MarkDecides,
}

impl Note {
    /// `within_runs`: every row's pairs are two cases of one run (`compare --across`); `by_boot`:
    /// every row's such pairs are averaged per boot.
    pub fn text(self, design: Option<Design>, within_runs: bool, by_boot: bool) -> String {
        let units = if by_boot {
            "boots of runs holding both cases"
        } else if within_runs {
            "runs holding both cases"
        } else {
            units_per_side(design)
        };
        let why = match design {
            Some(Design::Values) => "",
            _ => " (benchstat's samples are compare's units, not iterations: docs/statistics.md)",
        };
        match self {
            Note::Ci => format!("¹ need >= 6 {units} for a confidence interval at level 0.95{why}"),
            Note::Detect => {
                format!("² need >= 4 {units} to detect a difference at alpha level 0.05")
            }
            Note::ZeroMedian => "³ the median is 0, so its spread has no percentage".to_string(),
            Note::SplitCase => format!(
                "⁴ a line per baseline: each candidate is judged against the {} that hold its case, \
                 and its line shows that baseline",
                if by_boot {
                    "boots of runs"
                } else if within_runs {
                    "runs"
                } else {
                    "baseline's units"
                }
            ),
            Note::SplitGeomean => "⁵ a geomean line per baseline: each candidate is set against \
                 the baseline's geomean over its own rows (it lacks a case, or with --across a \
                 case was held by fewer runs)"
                .to_string(),
            Note::MarkDecides => "⁶ schedlab's ** decides: its test (the footer's) marks the \
                 change; benchstat's ~ says only that its own U test cannot tell at this n"
                .to_string(),
        }
    }
}

/// "runs per side" and the like: what one more sample means for the row's design.
fn units_per_side(design: Option<Design>) -> &'static str {
    match design {
        Some(Design::Runs) => "runs per side",
        Some(Design::Boots) => "boots per side",
        Some(Design::Pairs) => "A/B rounds",
        Some(Design::Values) => "values per file",
        None => "units per side",
    }
}

fn center_cell(
    median: Option<f64>,
    spread: Option<f64>,
    no_spread: Option<NoSpread>,
    notes: &mut Vec<Note>,
) -> String {
    let median = median.map_or("-".to_string(), format_value);
    let (cell, note) = match (spread, no_spread) {
        (Some(spread), _) => return format!("{median} ± {spread:.0}%"),
        (None, Some(NoSpread::ZeroMedian)) => (format!("{median} ± ? ³"), Note::ZeroMedian),
        (None, Some(NoSpread::TooFewUnits) | None) => (format!("{median} ± ∞ ¹"), Note::Ci),
    };
    if !notes.contains(&note) {
        notes.push(note);
    }
    cell
}

/// benchstat's `vs base` reading of the row, with schedlab's `**` after it where schedlab marks
/// the change (which may rest on fewer units than benchstat needs, or on a calibration).
fn delta_cell(row: &Row, notes: &mut Vec<Note>) -> String {
    let cell = benchstat_delta(row, notes);
    if !row.verdict.is_marked() {
        return cell;
    }
    if cell.starts_with('~') {
        // Two readings that disagree on one line: say which one decides.
        if !notes.contains(&Note::MarkDecides) {
            notes.push(Note::MarkDecides);
        }
        format!("{cell} {}⁶", row_mark(row))
    } else {
        format!("{cell} {}", row_mark(row))
    }
}

fn benchstat_delta(row: &Row, notes: &mut Vec<Note>) -> String {
    let (nb, nc) = (row.base_side.n, row.candidate_side.n);
    let n = if nb == nc {
        format!("n={nb}")
    } else {
        format!("n={nb}+{nc}")
    };
    let b = &row.styles.benchstat;
    let Some(p) = b.p_value else {
        return "?".to_string();
    };
    if b.too_few_to_detect {
        if !notes.contains(&Note::Detect) {
            notes.push(Note::Detect);
        }
        return format!("~ (p={p:.3} {n}) ²");
    }
    match b.change_pct {
        Some(change) => format!("{change:+.2}% (p={p:.3} {n})"),
        None => format!("~ (p={p:.3} {n})"),
    }
}

/// Per metric, its name (which benchstat's own text leaves to the header), its table and the
/// footnotes its cells call for; then the statistics footer.
pub fn document(c: &Comparison) -> Document {
    Document {
        sections: tables(c)
            .into_iter()
            .map(|(metric, table, notes)| {
                let mut blocks = vec![Block::Caption(metric), Block::Table(table)];
                if !notes.is_empty() {
                    blocks.push(Block::Notes(notes));
                }
                blocks
            })
            .collect(),
        closing: Some(footer::block(c)),
    }
}

/// A line per case × baseline of `metric`: each side's median ± spread and each candidate's
/// reading; returns how many cases there are.
fn case_rows(c: &Comparison, metric: &str, table: &mut Table, notes: &mut Vec<Note>) -> usize {
    let groups: Vec<Vec<&Row>> = c
        .rows_by_case_metric()
        .into_iter()
        .filter(|g| g[0].metric == metric)
        .collect();
    let mut cases: Vec<&str> = Vec::new();
    for rows in &groups {
        let case = rows[0].case.as_str();
        let split = groups.iter().filter(|g| g[0].case == case).count() > 1;
        if split && !notes.contains(&Note::SplitCase) {
            notes.push(Note::SplitCase);
        }
        if !cases.contains(&case) {
            cases.push(case);
        }
        let first = &rows[0].styles.benchstat;
        let mut cells = vec![
            if split {
                format!("{case} ⁴")
            } else {
                case.to_string()
            },
            center_cell(
                first.base_median,
                first.base_spread_pct,
                first.base_no_spread,
                notes,
            ),
        ];
        for candidate in &c.candidates {
            match rows.iter().find(|r| r.candidate == candidate.name) {
                Some(row) => {
                    let b = &row.styles.benchstat;
                    cells.push(center_cell(
                        b.candidate_median,
                        b.candidate_spread_pct,
                        b.candidate_no_spread,
                        notes,
                    ));
                    cells.push(delta_cell(row, notes));
                }
                None => cells.extend(["-".to_string(), "-".to_string()]),
            }
        }
        table.push(cells);
    }
    cases.len()
}

/// The geomean lines of `metric`: one per baseline the candidates were set against.
fn geomean_rows(c: &Comparison, metric: &str, table: &mut Table, notes: &mut Vec<Note>) {
    let lines = c.geomeans_by_base(metric);
    if lines.len() > 1 {
        notes.push(Note::SplitGeomean);
    }
    for geomeans in lines {
        let base = geomeans[0].base;
        let label = if notes.contains(&Note::SplitGeomean) {
            "geomean ⁵"
        } else {
            "geomean"
        };
        let mut cells = vec![label.to_string(), base.map_or("-".into(), format_value)];
        for candidate in &c.candidates {
            let g = geomeans.iter().find(|g| g.candidate == candidate.name);
            cells.push(
                g.and_then(|g| g.candidate_value)
                    .map_or("-".into(), format_value),
            );
            cells.push(
                g.and_then(|g| g.change_pct)
                    .map_or("-".into(), |p| format!("{p:+.2}%")),
            );
        }
        table.push(cells);
    }
}

/// How the footnotes of `metric` word its units: the design every row of it shares, if one, and
/// whether every row's pairs are two cases of one run, and averaged per boot.
fn wording(c: &Comparison, metric: &str) -> (Option<Design>, bool, bool) {
    let designs: Vec<Design> = c
        .rows
        .iter()
        .filter(|r| r.metric == metric)
        .map(|r| r.design)
        .collect();
    // One wording when every row of the table counts the same units.
    let design = designs
        .first()
        .copied()
        .filter(|d| designs.iter().all(|e| e == d));
    let within_runs = c
        .rows
        .iter()
        .filter(|r| r.metric == metric)
        .all(|r| r.pairs_within_runs);
    let by_boot = c
        .rows
        .iter()
        .filter(|r| r.metric == metric)
        .all(|r| r.pairs_by_boot);
    (design, within_runs, by_boot)
}

/// One table per metric, with the footnotes its cells call for, worded for the metric's units.
fn tables(c: &Comparison) -> Vec<(String, Table, Vec<String>)> {
    let mut metrics: Vec<(&str, &str)> = Vec::new();
    for row in &c.rows {
        if !metrics.iter().any(|(m, _)| *m == row.metric) {
            metrics.push((row.metric.as_str(), row.unit.as_str()));
        }
    }
    let mut out = Vec::new();
    for (metric, unit) in metrics {
        let mut notes = Vec::new();
        let base_header = format!("{} {unit}", c.base.name);
        let mut headers = vec![("", Align::Left), (base_header.as_str(), Align::Right)];
        let candidate_headers: Vec<(String, String)> = c
            .candidates
            .iter()
            .map(|s| (format!("{} {unit}", s.name), format!("vs {}", c.base.name)))
            .collect();
        for (value, versus) in &candidate_headers {
            headers.push((value.as_str(), Align::Right));
            headers.push((versus.as_str(), Align::Left));
        }
        let mut table = Table::new(&headers).with_names(0);
        let cases = case_rows(c, metric, &mut table, &mut notes);
        if cases > 1 {
            geomean_rows(c, metric, &mut table, &mut notes);
        }
        let (design, within_runs, by_boot) = wording(c, metric);
        notes.sort();
        let notes = notes
            .into_iter()
            .map(|n| n.text(design, within_runs, by_boot))
            .collect();
        out.push((metric.to_string(), table, notes));
    }
    out
}
