//! `compare --explain` as blocks, whatever the style: beside each case's verdicts, what moved in
//! its probed iterations (an LKP table, [`super::lkp_table`]) and in its profiles (seed 004's
//! table of symbol shares) and each side's run-queue delay percentiles (the HTML draws them),
//! then what the explanation was judged on. Every number is the
//! analysis' ([`schedlab_analysis::explain`]); this file chooses which rows to list and words
//! the rest.
use schedlab_analysis::model::{
    Comparison, DelayCurve, ExplainedFamily, ExplainedRow, Explanation, ProbedSide, Row, SymbolRow,
    Verdict,
};
use schedlab_analysis::notes::RowNote;
use schedlab_core::words;

use super::block::{Block, Document};
use super::footer::tally;
use super::lkp_table::{self, LkpLine};
use super::table::{Align, Table};
use crate::number::format_value;

/// Where none of a case's rows is marked, those that moved at least this much are listed with
/// their marks (`~`, `??`, `?`: none of them a finding), largest first ...
pub const UNMARKED_SHOWN_PCT: f64 = 10.0;
/// ... and at most this many of them.
pub const UNMARKED_SHOWN: usize = 20;
/// Likewise symbols whose share moved by at least this many points.
pub const UNMARKED_SHOWN_PP: f64 = 1.0;
/// What the run-queue delay curves are called.
pub const DELAY_TITLE: &str = "run-queue delay";

/// Adds the explanation, if the comparison has one, after the style's sections.
pub fn append(doc: &mut Document, c: &Comparison) {
    if let Some(e) = &c.explanation {
        doc.sections.extend(sections(c, e));
    }
}

/// A metric of a task group as the tables name it: `runq_delay_p99_usec (fanout worker)`.
pub fn metric_name(row: &ExplainedRow) -> String {
    match &row.group {
        Some(group) => format!("{} ({group})", row.row.metric),
        None => row.row.metric.clone(),
    }
}

/// A case's rows of a family that the tables list: the marked ones; where none is, those that
/// moved at least `threshold` by `moved` (but the `≈` ones), largest first.
pub fn listed<R: AsRef<Row>>(
    rows: Vec<&R>,
    moved: impl Fn(&R) -> Option<f64>,
    threshold: f64,
) -> Vec<&R> {
    let marked: Vec<&R> = rows
        .iter()
        .copied()
        .filter(|r| r.as_ref().verdict.is_marked())
        .collect();
    if !marked.is_empty() {
        return marked;
    }
    let mut moved_rows: Vec<(&R, f64)> = rows
        .into_iter()
        .filter(|r| r.as_ref().verdict != Verdict::Equivalent)
        .filter_map(|r| Some((r, moved(r)?.abs())))
        .filter(|(_, m)| m.is_finite() && *m >= threshold)
        .collect();
    moved_rows.sort_by(|a, b| b.1.total_cmp(&a.1));
    moved_rows
        .into_iter()
        .take(UNMARKED_SHOWN)
        .map(|(r, _)| r)
        .collect()
}

fn listed_metrics<'a>(e: &'a Explanation, candidate: &str, case: &str) -> Vec<&'a ExplainedRow> {
    listed(
        e.metrics.rows_of(case, candidate).collect(),
        |r: &ExplainedRow| r.row.change_pct,
        UNMARKED_SHOWN_PCT,
    )
}

fn listed_symbols<'a>(e: &'a Explanation, candidate: &str, case: &str) -> Vec<&'a SymbolRow> {
    listed(
        e.symbols.rows_of(case, candidate).collect(),
        |r: &SymbolRow| r.share_change_pp,
        UNMARKED_SHOWN_PP,
    )
}

/// One section per candidate and case with explained rows, then the explanation's footer.
pub fn sections(c: &Comparison, e: &Explanation) -> Vec<Vec<Block>> {
    let mut out = Vec::new();
    for candidate in &c.candidates {
        for case in cases(e, &candidate.name) {
            out.push(case_blocks(c, e, &candidate.name, &case));
        }
    }
    out.push(vec![Block::List(footer_lines(c, e))]);
    out
}

/// The cases the explanation has rows of for a candidate, in order.
pub fn cases(e: &Explanation, candidate: &str) -> Vec<String> {
    let mut cases: Vec<String> = Vec::new();
    let rows = e
        .metrics
        .rows
        .iter()
        .map(|r| &r.row)
        .chain(e.symbols.rows.iter().map(|r| &r.row));
    for row in rows.filter(|r| r.candidate == candidate) {
        if !cases.contains(&row.case) {
            cases.push(row.case.clone());
        }
    }
    cases
}

/// The case's title: what it is, and the verdicts of its primary rows it explains.
pub fn case_title(c: &Comparison, candidate: &str, case: &str) -> String {
    let verdicts: Vec<String> = c
        .rows
        .iter()
        .filter(|r| r.case == case && r.candidate == candidate)
        .map(|r| {
            format!(
                "{} {} {}",
                r.metric,
                r.change_pct
                    .map_or_else(|| "-".to_string(), |p| format!("{p:+.2}%")),
                r.verdict.mark()
            )
        })
        .collect();
    let mut title = format!("what moved in {case}, {candidate} vs {}", c.base.name);
    if !verdicts.is_empty() {
        title.push_str(&format!(": {}", verdicts.join(", ")));
    }
    title
}

/// The LKP table of a case's listed explanatory rows, if any is listed.
pub fn metrics_table(
    c: &Comparison,
    e: &Explanation,
    candidate: &str,
    case: &str,
) -> Option<Table> {
    let rows = listed_metrics(e, candidate, case);
    (!rows.is_empty()).then(|| {
        let lines: Vec<LkpLine> = rows
            .iter()
            .map(|r| LkpLine::of_row(&r.row, metric_name(r)))
            .collect();
        lkp_table::table(&c.base.name, candidate, &lines)
    })
}

/// Seed 004's table of a case's listed symbols: each side's share and the change in points.
pub fn symbols_table(
    c: &Comparison,
    e: &Explanation,
    candidate: &str,
    case: &str,
) -> Option<Table> {
    let rows = listed_symbols(e, candidate, case);
    if rows.is_empty() {
        return None;
    }
    let base_header = format!("{} share", c.base.name);
    let candidate_header = format!("{candidate} share");
    let mut table = Table::new(&[
        ("symbol", Align::Left),
        (base_header.as_str(), Align::Right),
        (candidate_header.as_str(), Align::Right),
        ("change", Align::Right),
        ("mark", Align::Left),
        ("module", Align::Left),
    ]);
    let share = |v: Option<f64>| v.map_or_else(|| "-".to_string(), |v| format!("{v:.2}%"));
    for r in rows {
        table.push(vec![
            r.symbol.clone(),
            share(r.row.base_side.mean),
            share(r.row.candidate_side.mean),
            r.share_change_pp
                .map_or_else(|| "-".to_string(), |pp| format!("{pp:+.2} pp")),
            r.row.verdict.mark().to_string(),
            r.module.clone(),
        ]);
    }
    Some(table)
}

/// How many of a case's rows of a family are listed, and what the others were.
fn counts_line<R: AsRef<Row>>(
    what: &str,
    family: &ExplainedFamily<R>,
    candidate: &str,
    case: &str,
    listed: usize,
) -> String {
    let rows: Vec<&Row> = family.rows_of(case, candidate).map(AsRef::as_ref).collect();
    let judged = rows
        .iter()
        .filter(|r| r.verdict != Verdict::NotJudged)
        .count();
    let marked = rows.iter().filter(|r| r.verdict.is_marked()).count();
    let alike = rows
        .iter()
        .filter(|r| matches!(r.note, Some(RowNote::NoSpread)))
        .count();
    let mut line = format!(
        "{what}: {listed} of {} listed; {marked} of {judged} judged marked, {} not judged",
        rows.len(),
        rows.len() - judged
    );
    if alike > 0 {
        line.push_str(&format!(" ({alike} the same in every probed iteration)"));
    }
    line
}

/// How many of a case's rows of each family are listed, and what the others were.
pub fn case_notes(e: &Explanation, candidate: &str, case: &str) -> Vec<String> {
    let mut notes = Vec::new();
    if e.metrics.rows_of(case, candidate).next().is_some() {
        let shown = listed_metrics(e, candidate, case).len();
        notes.push(counts_line(
            "explanatory rows",
            &e.metrics,
            candidate,
            case,
            shown,
        ));
    }
    if e.symbols.rows_of(case, candidate).next().is_some() {
        let shown = listed_symbols(e, candidate, case).len();
        notes.push(counts_line(
            "profile symbols",
            &e.symbols,
            candidate,
            case,
            shown,
        ));
    }
    notes
}

fn case_blocks(c: &Comparison, e: &Explanation, candidate: &str, case: &str) -> Vec<Block> {
    let mut blocks = vec![Block::Title(case_title(c, candidate, case))];
    blocks.extend(metrics_table(c, e, candidate, case).map(Block::Table));
    blocks.extend(symbols_table(c, e, candidate, case).map(Block::Table));
    for d in e.runq_delay.iter().filter(|d| d.curve.case == case) {
        blocks.push(Block::Table(delay_table(c, d, candidate)));
    }
    blocks.push(Block::Notes(case_notes(e, candidate, case)));
    blocks
}

/// What a delay curve is: `run-queue delay (usec) · semaphore`.
pub fn delay_caption(d: &DelayCurve) -> String {
    format!(
        "{DELAY_TITLE} ({}) · {}",
        d.curve.unit,
        d.group.as_deref().unwrap_or("all tasks")
    )
}

/// A delay curve's percentiles for the base and `candidate` (its caption heads the first column):
/// one row per side with its delays counted, the candidate's values with their change from the
/// base's.
pub fn delay_table(c: &Comparison, d: &DelayCurve, candidate: &str) -> Table {
    let labels: Vec<String> = d.curve.points.iter().map(|p| p.label()).collect();
    let caption = delay_caption(d);
    let mut columns = vec![(caption.as_str(), Align::Left), ("delays", Align::Right)];
    columns.extend(labels.iter().map(|l| (l.as_str(), Align::Right)));
    let mut table = Table::new(&columns);
    for (i, side) in c.sides().enumerate() {
        if i != 0 && side.name != candidate {
            continue;
        }
        let mut row = vec![
            side.name.clone(),
            d.samples.get(i).copied().unwrap_or(0).to_string(),
        ];
        let values = d.curve.values.get(i).map_or(&[][..], |v| v.as_slice());
        let changes = d.curve.changes.get(i).map_or(&[][..], |v| v.as_slice());
        for j in 0..labels.len() {
            let cell = match (
                values.get(j).copied().flatten(),
                changes.get(j).copied().flatten(),
            ) {
                (Some(v), Some(change)) => format!("{} ({change:+.1}%)", format_value(v)),
                (Some(v), None) => format_value(v),
                (None, _) => "-".to_string(),
            };
            row.push(cell);
        }
        table.push(row);
    }
    table
}

/// Runs of a side that brought something, as `3 of 4 runs of hog-a`.
fn runs_of(side: &ProbedSide, runs: &[i64], total: usize) -> String {
    format!(
        "{} of {} of {}",
        runs.len(),
        words::counted(total, "run"),
        side.name
    )
}

/// What the explanation was judged on, how it was judged, what is listed and what the machine
/// could not probe.
pub fn footer_lines(c: &Comparison, e: &Explanation) -> Vec<String> {
    let totals: Vec<usize> = c.sides().map(|s| s.run_ids.len()).collect();
    let from = |runs: &dyn Fn(&ProbedSide) -> &[i64]| {
        e.sides
            .iter()
            .zip(&totals)
            .map(|(s, total)| runs_of(s, runs(s), *total))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let explained = e.sides.iter().any(|s| s.explained_iterations > 0);
    let mut lines = Vec::new();
    if explained {
        lines.push(format!(
            "explanations: the probed iterations (--explain) of {}, judged as the rows above are \
             (each run's probed iterations summarised per run; the same units, test and settings) \
             in a multiple-comparison family of their own, so they spend none of the primary \
             rows' error budget: {}",
            from(&|s| &s.explained_runs),
            tally(&e.metrics.footer)
        ));
    }
    if e.sides.iter().any(|s| s.profiled_iterations > 0) {
        let how = if explained {
            "likewise as a third family"
        } else {
            "as the rows above are (the same units and test), in a multiple-comparison family \
             of its own"
        };
        lines.push(format!(
            "profiles (--profile) of {}: each symbol's share of the samples, 0 where a run's \
             profile did not rank it, judged {how}: {}",
            from(&|s| &s.profiled_runs),
            tally(&e.symbols.footer)
        ));
    }
    if c.sequential.is_some() {
        lines.push(
            "explanations of a sequential experiment are judged look by look at the levels its \
             alpha spending allows, as its rows are: one stopped early explains little"
                .to_string(),
        );
    }
    lines.push(format!(
        "listed: the marked rows (**); where a case has none, those that moved by at least \
         {UNMARKED_SHOWN_PCT}% (symbols: {UNMARKED_SHOWN_PP} point), at most {UNMARKED_SHOWN}, \
         largest first, with their marks (~ inconclusive, ?? noisy, ? not judged: no finding); \
         values are each side's mean unit on the row's scale (geometric where the test takes \
         logs), %stddev the units' spread, %change the row's as judged"
    ));
    let unmatched = e.metrics.unmatched.len() + e.symbols.unmatched.len();
    if unmatched > 0 {
        lines.push(format!(
            "{} on one side only, not compared",
            words::counted(unmatched, "explanatory metric or symbol")
        ));
    }
    for u in &e.unavailable {
        lines.push(format!(
            "unavailable: {} ({}; {})",
            u.probe,
            u.reason,
            words::counted(u.iterations, "probed iteration")
        ));
    }
    lines
}
