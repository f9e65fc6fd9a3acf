//! The HTML report's explanation (`compare --explain`'s, for runs with probes): per case, each
//! candidate's LKP table of the explanatory metrics that moved and its table of profile symbols
//! (the blocks of [`crate::compare::explain`]), then each side's run-queue delay percentiles
//! drawn as curves ([`super::svg::curve`]) with their numbers, and the explanation's footer.
use std::fmt::{self, Write as _};

use schedlab_analysis::model::{Comparison, DelayCurve, Explanation};

use super::escape::Esc;
use super::svg::{self, side_color};
use super::{assets, blocks};
use crate::compare::block::Block;
use crate::compare::explain::{
    case_title, cases, footer_lines, metrics_table, symbols_table, DELAY_TITLE,
};
use crate::number::format_value;

/// The section, when the comparison has an explanation.
pub fn section(s: &mut String, c: &Comparison) -> fmt::Result {
    let Some(e) = &c.explanation else {
        return Ok(());
    };
    s.push_str(assets::EXPLAIN);
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
        s.push_str("</div>");
    }
    blocks::write(s, &[Block::List(footer_lines(c, e))])?;
    s.push_str("</section>");
    Ok(())
}

fn candidate_blocks(
    s: &mut String,
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

fn delay_curves(s: &mut String, c: &Comparison, e: &Explanation, case: &str) -> fmt::Result {
    let curves: Vec<&DelayCurve> = e
        .runq_delay
        .iter()
        .filter(|d| d.curve.case == case)
        .collect();
    if curves.is_empty() {
        return Ok(());
    }
    let names: Vec<&str> = c.sides().map(|side| side.name.as_str()).collect();
    s.push_str(r#"<div class="grid">"#);
    for d in curves {
        let group = d.group.as_deref().unwrap_or("all tasks");
        let points: Vec<(String, f64)> = d
            .curve
            .points
            .iter()
            .map(|p| p.label())
            .zip(d.curve.x.iter().copied())
            .collect();
        let series: Vec<svg::CurveSeries> = names
            .iter()
            .zip(&d.curve.values)
            .enumerate()
            .map(|(i, (name, values))| svg::CurveSeries {
                name,
                color: side_color(i),
                values: values.clone(),
            })
            .collect();
        write!(
            s,
            r#"<figure class="latency"><figcaption><b>{DELAY_TITLE}</b> · {}</figcaption>"#,
            Esc(group)
        )?;
        svg::curve(
            s,
            &points,
            &series,
            &d.curve.unit,
            &format!("{case} {DELAY_TITLE} {group}"),
        )?;
        delay_table(s, d, &points, &names)?;
        s.push_str("</figure>");
    }
    s.push_str("</div>");
    Ok(())
}

/// The curve's numbers: a row per side with its delays counted, candidates with their change.
fn delay_table(
    s: &mut String,
    d: &DelayCurve,
    points: &[(String, f64)],
    names: &[&str],
) -> fmt::Result {
    write!(
        s,
        r#"<table class="pct"><thead><tr><th>{}</th><th class="num">delays</th>"#,
        Esc(&d.curve.unit)
    )?;
    for (label, _) in points {
        write!(s, r#"<th class="num">{}</th>"#, Esc(label))?;
    }
    s.push_str("</tr></thead><tbody>");
    for (i, (name, values)) in names.iter().zip(&d.curve.values).enumerate() {
        write!(
            s,
            r#"<tr><td><span class="dot" style="background:{}"></span>{}</td><td class="num">{}</td>"#,
            side_color(i),
            Esc(&svg::truncate(name, 24)),
            d.samples.get(i).copied().unwrap_or(0)
        )?;
        for (j, v) in values.iter().enumerate() {
            let Some(v) = v else {
                s.push_str(r#"<td class="num">—</td>"#);
                continue;
            };
            write!(s, r#"<td class="num">{}"#, format_value(*v))?;
            if let Some(change) = d.curve.changes.get(i).and_then(|c| c[j]) {
                write!(s, r#"<div class="muted">{change:+.1}%</div>"#)?;
            }
            s.push_str("</td>");
        }
        s.push_str("</tr>");
    }
    s.push_str("</tbody></table>");
    Ok(())
}
