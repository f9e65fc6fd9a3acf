//! The HTML report's explanation (`compare --explain`'s, for runs with probes): per case, each
//! candidate's LKP table of the explanatory metrics that moved and its table of profile symbols
//! (the blocks of [`crate::compare::explain`]), then each side's run-queue delay percentiles
//! drawn as curves ([`super::svg::curve`]) with their numbers, and the explanation's footer.
use std::fmt::{self, Write};

use schedlab_analysis::model::{Comparison, DelayCurve, Explanation};

use super::escape::Esc;
use super::svg::side_color;
use super::{assets, blocks, latency};
use crate::compare::block::Block;
use crate::compare::explain::{
    case_title, cases, footer_lines, metrics_table, symbols_table, DELAY_TITLE,
};

/// The section, when the comparison has an explanation.
pub fn section(s: &mut impl Write, c: &Comparison) -> fmt::Result {
    let Some(e) = &c.explanation else {
        return Ok(());
    };
    s.write_str(assets::EXPLAIN)?;
    let mut all_cases: Vec<String> = Vec::new();
    for candidate in &c.candidates {
        for case in cases(e, &candidate.name) {
            if !all_cases.contains(&case) {
                all_cases.push(case);
            }
        }
    }
    for curve in &e.runq_delay {
        if !all_cases.contains(&curve.curve.case) {
            all_cases.push(curve.curve.case.clone());
        }
    }
    for case in &all_cases {
        write!(s, r#"<div class="explain-case"><h3>{}</h3>"#, Esc(case))?;
        for candidate in &c.candidates {
            candidate_blocks(s, c, e, &candidate.name, case)?;
        }
        delay_curves(s, c, e, case)?;
        s.write_str("</div>")?;
    }
    blocks::write(s, &[Block::List(footer_lines(c, e))])?;
    s.write_str("</section>")?;
    Ok(())
}

fn candidate_blocks(
    s: &mut impl Write,
    c: &Comparison,
    e: &Explanation,
    candidate: &str,
    case: &str,
) -> fmt::Result {
    let metrics = e.metrics.rows_of(case, candidate).next().is_some();
    let symbols = e.symbols.rows_of(case, candidate).next().is_some();
    if !metrics && !symbols {
        return Ok(());
    }
    write!(
        s,
        r#"<p class="explain-title">{}</p>"#,
        Esc(&case_title(c, candidate, case))
    )?;
    let mut shown = Vec::new();
    if let Some(table) = metrics_table(c, e, candidate, case) {
        shown.push(Block::Table(table));
    }
    if let Some(table) = symbols_table(c, e, candidate, case) {
        shown.push(Block::Table(table));
    }
    let notes = crate::compare::explain::case_notes(e, candidate, case);
    shown.push(Block::Notes(notes));
    blocks::write(s, &shown)
}

fn delay_curves(s: &mut impl Write, c: &Comparison, e: &Explanation, case: &str) -> fmt::Result {
    let curves: Vec<&DelayCurve> = e
        .runq_delay
        .iter()
        .filter(|d| d.curve.case == case)
        .collect();
    if curves.is_empty() {
        return Ok(());
    }
    let sides: Vec<latency::Side> = c
        .sides()
        .enumerate()
        .map(|(i, side)| latency::Side {
            name: &side.name,
            color: side_color(i),
        })
        .collect();
    s.write_str(r#"<div class="grid">"#)?;
    for d in curves {
        let group = d.group.as_deref().unwrap_or("all tasks");
        latency::figure(
            s,
            &d.curve,
            &sides,
            &format!("<b>{DELAY_TITLE}</b> · {}", Esc(group)),
            &format!("{case} {DELAY_TITLE} {group}"),
            Some(&d.samples),
        )?;
    }
    s.write_str("</div>")?;
    Ok(())
}
