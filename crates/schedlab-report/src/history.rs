//! `schedlab history` and `schedlab changes` as text, CSV, JSON and (history) one
//! self-contained HTML page with an SVG plot. Every number comes from the analysis' [`History`]
//! and [`Changes`]; the sparkline and the plot only draw them.
use std::fmt::Write as _;
use std::io::{self, Write};

use schedlab_analysis::history::{Change, ChangeVerdict, Changes, History, Noise, NoiseSource};
use schedlab_core::metric::Better;
use schedlab_core::words;

use crate::compare::html::escape::Esc;
use crate::compare::html::svg::nice_domain;
use crate::compare::table::{Align, Table};
use crate::csv::CsvOut;
use crate::model::format_time_ns;
use crate::number::format_value;
use crate::wrap::{wrap, WIDTH as TEXT_WIDTH};

/// The widest sparkline: a longer history is drawn in groups of consecutive runs.
pub const SPARKLINE_WIDTH: usize = 80;

/// The values as a line of block characters from lowest (▁) to highest (█), one per value; with
/// more values than `width`, one per group of consecutive values (as even as the count allows),
/// drawn at the group's median.
pub fn sparkline(values: &[f64], width: usize) -> String {
    const BARS: [char; 8] = ['▁', '▂', '▃', '▄', '▅', '▆', '▇', '█'];
    let drawn: Vec<f64> = if values.len() <= width {
        values.to_vec()
    } else {
        (0..width)
            .map(|g| {
                let mut group =
                    values[g * values.len() / width..(g + 1) * values.len() / width].to_vec();
                group.sort_by(f64::total_cmp);
                let mid = group.len() / 2;
                if group.len() % 2 == 1 {
                    group[mid]
                } else {
                    (group[mid - 1] + group[mid]) / 2.0
                }
            })
            .collect()
    };
    let lo = drawn.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = drawn.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    drawn
        .iter()
        .map(|v| {
            if hi > lo {
                BARS[(((v - lo) / (hi - lo)) * 7.0).round().clamp(0.0, 7.0) as usize]
            } else {
                BARS[3]
            }
        })
        .collect()
}

fn direction(better: Better) -> &'static str {
    match better {
        Better::Lower => "lower is better",
        Better::Higher => "higher is better",
    }
}

fn pct(v: f64) -> String {
    format!("{v:+.1}%")
}

/// A change's percent for a table column: `-` where the model has none (a change from a level
/// of 0 on the raw scale).
fn change_cell(ch: &Change) -> String {
    ch.change_pct.map_or_else(|| "-".into(), pct)
}

/// A change in words: its percent, or where it has none the levels it moved between.
/// A change's direction as a word.
fn verdict_word(verdict: ChangeVerdict) -> &'static str {
    match verdict {
        ChangeVerdict::Regression => "regression",
        ChangeVerdict::Improvement => "improvement",
    }
}

fn change_words(ch: &Change) -> String {
    ch.change_pct.map_or_else(
        || format!("{} → {}", format_value(ch.before), format_value(ch.after)),
        pct,
    )
}

/// The change's size in noise widths, `-` where the noise is unknown or 0.
fn widths_cell(ch: &Change) -> String {
    ch.noise_widths
        .map_or_else(|| "-".into(), |w| format!("{w:.1}"))
}

/// ` on HOST`, or nothing for runs that recorded no host (imported ones).
fn on_host(hostname: &str) -> String {
    if hostname.is_empty() {
        String::new()
    } else {
        format!(" on {hostname}")
    }
}

/// The history as a table, a run per line, with its sparkline and each change marked on the
/// first run after it.
pub fn write_history_text(h: &History, c: &Changes, out: &mut dyn Write) -> io::Result<()> {
    let values: Vec<f64> = h.points.iter().map(|p| p.value).collect();
    let title = format!(
        "{} {} ({}, {}){}: {}, {}",
        h.key.case,
        h.key.metric,
        h.key.unit,
        direction(h.key.better),
        on_host(&h.key.hostname),
        words::counted(h.points.len(), "run"),
        words::counted(h.kernels.len(), "kernel release")
    );
    write_wrapped(&title, out)?;
    let line = sparkline(&values, SPARKLINE_WIDTH);
    if values.len() > SPARKLINE_WIDTH {
        let per = values.len() as f64 / SPARKLINE_WIDTH as f64;
        writeln!(out, "{line} (a mark per {per:.1} runs: their median)")?;
    } else {
        writeln!(out, "{line}")?;
    }
    let mut table = Table::new(&[
        ("#", Align::Right),
        ("run", Align::Right),
        ("label", Align::Left),
        ("started", Align::Left),
        ("kernel", Align::Left),
        ("iters", Align::Right),
        (h.key.metric.as_str(), Align::Right),
        ("change", Align::Left),
    ]);
    for (i, p) in h.points.iter().enumerate() {
        let mark = c
            .changes
            .iter()
            .find(|ch| ch.index == i)
            .map(|ch| {
                let build = if ch.build_changed.is_some() {
                    " (build changed)"
                } else {
                    ""
                };
                format!("◆ {} {}{build}", change_words(ch), verdict_word(ch.verdict))
            })
            .unwrap_or_default();
        table.push(vec![
            (i + 1).to_string(),
            p.run_id.map_or("-".into(), |id| id.to_string()),
            p.label.clone().unwrap_or_else(|| "-".into()),
            format_time_ns(p.started_at_ns),
            p.kernel.clone(),
            p.iterations.to_string(),
            format_value(p.value),
            mark,
        ]);
    }
    // No change to mark: the column would only take room.
    if table
        .rows
        .iter()
        .all(|r| r.last().is_some_and(String::is_empty))
    {
        table.header.pop();
        table.align.pop();
        for row in &mut table.rows {
            row.pop();
        }
    }
    table.with_names(2).write_text_within(TEXT_WIDTH, out)?;
    if let Some(line) = builds_line(h) {
        write_wrapped(&line, out)?;
    }
    if !h.excluded_runs.is_empty() {
        let line = format!(
            "left out (did not complete; --include-incomplete takes them): runs {}",
            h.excluded_runs
                .iter()
                .map(i64::to_string)
                .collect::<Vec<_>>()
                .join(", ")
        );
        write_wrapped(&line, out)?;
    }
    let mut noise = Vec::new();
    write_noise_line(c, &mut noise)?;
    write_wrapped(String::from_utf8_lossy(&noise).trim_end(), out)
}

/// A sentence of the text within a mail's width, its later lines indented.
fn write_wrapped(text: &str, out: &mut dyn Write) -> io::Result<()> {
    for line in wrap(text, TEXT_WIDTH, 2) {
        writeln!(out, "{line}")?;
    }
    Ok(())
}

/// "measured by 2 builds: …" when the runs were not all measured by one build.
fn builds_line(h: &History) -> Option<String> {
    if h.builds.len() < 2 {
        return None;
    }
    let spans: Vec<String> = h
        .builds
        .iter()
        .map(|b| format!("{} (#{}–#{})", b.measured_by, b.first + 1, b.first + b.runs))
        .collect();
    Some(format!(
        "measured by {} builds: {}; a step where the build changes may be the measuring code's",
        h.builds.len(),
        spans.join(", ")
    ))
}

/// The line under a changes table for a change whose first run a different build measured.
fn build_change_line(c: &Changes, ch: &Change) -> Option<String> {
    let b = ch.build_changed.as_ref()?;
    Some(format!(
        "{} {}, first run {}: the measuring build changed there too ({} → {}); the step may be the build's",
        c.key.case,
        c.key.metric,
        ch.run_id.map_or("-".into(), |id| id.to_string()),
        b.before,
        b.after
    ))
}

/// "noise 2.36% per run (from …); changes under 7.24% are not reported", in the metric's unit
/// where the model has no percent (the raw scale with a series median of 0).
fn noise_sentence(c: &Changes, n: &Noise) -> String {
    let source = match &n.source {
        NoiseSource::Calibration { id, label } => format!(
            "calibration {} ({label})",
            id.map_or("-".into(), |i| i.to_string())
        ),
        NoiseSource::Series => "the series itself".into(),
        NoiseSource::Iterations => "the runs' iterations".into(),
    };
    match (n.pct, n.threshold_pct) {
        (Some(pct), Some(threshold)) => format!(
            "noise {pct:.2}% per run (from {source}); changes under {threshold:.2}% are not reported"
        ),
        _ => format!(
            "noise {} {unit} per run (from {source}; not in percent: the series' median is 0); changes under {} {unit} are not reported",
            format_value(n.sd),
            format_value(n.threshold),
            unit = c.key.unit
        ),
    }
}

fn write_noise_line(c: &Changes, out: &mut dyn Write) -> io::Result<()> {
    match &c.noise {
        Some(n) => writeln!(
            out,
            "{}; {}, {} dismissed",
            noise_sentence(c, n),
            words::counted(c.changes.len(), "change"),
            c.dismissed.len()
        ),
        None => writeln!(
            out,
            "too few runs to tell the noise; {}",
            words::counted(c.changes.len(), "change")
        ),
    }
}

/// The history as CSV, one run per line.
pub fn write_history_csv(h: &History, c: &Changes, out: &mut dyn Write) -> io::Result<()> {
    let mut w = CsvOut::new(out);
    w.row([
        "index",
        "run_id",
        "label",
        "started_at",
        "hostname",
        "kernel",
        "iterations",
        "case",
        "metric",
        "unit",
        "value",
        "change_pct",
        "measured_by",
    ])?;
    for (i, p) in h.points.iter().enumerate() {
        let change = c
            .changes
            .iter()
            .find(|ch| ch.index == i)
            .and_then(|ch| ch.change_pct)
            .map(|v| format!("{v:.4}"))
            .unwrap_or_default();
        w.row([
            i.to_string(),
            p.run_id.map_or(String::new(), |id| id.to_string()),
            p.label.clone().unwrap_or_default(),
            format_time_ns(p.started_at_ns),
            p.hostname.clone(),
            p.kernel.clone(),
            p.iterations.to_string(),
            h.key.case.clone(),
            h.key.metric.clone(),
            h.key.unit.clone(),
            format!("{}", p.value),
            change,
            p.measured_by.clone().unwrap_or_default(),
        ])?;
    }
    w.finish()
}

/// The history and its changes as one JSON document.
pub fn write_history_json(h: &History, c: &Changes, out: &mut dyn Write) -> io::Result<()> {
    crate::json::write_versioned(&serde_json::json!({ "history": h, "changes": c }), out)
}

/// Every change of every history, one per line, and a line for each history without one.
pub fn write_changes_text(all: &[Changes], out: &mut dyn Write) -> io::Result<()> {
    let mut table = Table::new(&[
        ("case", Align::Left),
        ("metric", Align::Left),
        ("host", Align::Left),
        ("first run", Align::Right),
        ("label", Align::Left),
        ("kernel", Align::Left),
        ("before", Align::Right),
        ("after", Align::Right),
        ("change", Align::Right),
        ("noise×", Align::Right),
        ("p", Align::Right),
        ("", Align::Left),
    ]);
    for c in all {
        for ch in &c.changes {
            let kernel = if ch.kernel == ch.kernel_before {
                format!("{} (same kernel)", ch.kernel)
            } else {
                format!("{} → {}", ch.kernel_before, ch.kernel)
            };
            table.push(vec![
                c.key.case.clone(),
                c.key.metric.clone(),
                c.key.hostname.clone(),
                ch.run_id.map_or("-".into(), |id| id.to_string()),
                ch.label.clone().unwrap_or_else(|| "-".into()),
                kernel,
                format!("{} ({})", format_value(ch.before), ch.runs_before),
                format!("{} ({})", format_value(ch.after), ch.runs_after),
                change_cell(ch),
                widths_cell(ch),
                format!("{:.3}", ch.p_value),
                verdict_word(ch.verdict).to_string(),
            ]);
        }
    }
    if !table.rows.is_empty() {
        table.write_text(out)?;
        writeln!(
            out,
            "before and after: medians of the run summaries (runs) between neighbouring changes"
        )?;
        for c in all {
            for line in c.changes.iter().filter_map(|ch| build_change_line(c, ch)) {
                writeln!(out, "{line}")?;
            }
        }
    }
    for c in all {
        write!(
            out,
            "{} {}{} ({}): ",
            c.key.case,
            c.key.metric,
            on_host(&c.key.hostname),
            words::counted(c.runs, "run")
        )?;
        write_noise_line(c, out)?;
    }
    Ok(())
}

/// Every change as CSV, one per line.
pub fn write_changes_csv(all: &[Changes], out: &mut dyn Write) -> io::Result<()> {
    let mut w = CsvOut::new(out);
    w.row([
        "case",
        "metric",
        "hostname",
        "index",
        "run_id",
        "label",
        "started_at",
        "kernel_before",
        "kernel",
        "before",
        "after",
        "runs_before",
        "runs_after",
        "change_pct",
        "noise_widths",
        "p_value",
        "verdict",
        "measured_by_before",
        "measured_by",
    ])?;
    for c in all {
        for ch in &c.changes {
            w.row([
                c.key.case.clone(),
                c.key.metric.clone(),
                c.key.hostname.clone(),
                ch.index.to_string(),
                ch.run_id.map_or(String::new(), |id| id.to_string()),
                ch.label.clone().unwrap_or_default(),
                format_time_ns(ch.started_at_ns),
                ch.kernel_before.clone(),
                ch.kernel.clone(),
                format!("{}", ch.before),
                format!("{}", ch.after),
                ch.runs_before.to_string(),
                ch.runs_after.to_string(),
                ch.change_pct.map_or(String::new(), |v| format!("{v:.4}")),
                ch.noise_widths.map_or(String::new(), |w| format!("{w:.3}")),
                format!("{}", ch.p_value),
                verdict_word(ch.verdict).to_string(),
                ch.build_changed
                    .as_ref()
                    .map_or(String::new(), |b| b.before.clone()),
                ch.build_changed
                    .as_ref()
                    .map_or(String::new(), |b| b.after.clone()),
            ])?;
        }
    }
    w.finish()
}

const WIDTH: f64 = 960.0;
const HEIGHT: f64 = 360.0;
const LEFT: f64 = 70.0;
const RIGHT: f64 = 20.0;
const TOP: f64 = 30.0;
const BOTTOM: f64 = 70.0;

/// The history as one self-contained HTML page: a plot of the run summaries in run order, the
/// kernel releases under it, a line at each level between changes and a marker at each change,
/// then the table `write_history_text` prints.
pub fn write_history_html(h: &History, c: &Changes, out: &mut dyn Write) -> io::Result<()> {
    let mut s = String::new();
    page(&mut s, h, c).map_err(|_| io::Error::other("formatting the history page failed"))?;
    out.write_all(s.as_bytes())
}

fn page(s: &mut String, h: &History, c: &Changes) -> std::fmt::Result {
    let title = format!(
        "{} {}{}",
        h.key.case,
        h.key.metric,
        on_host(&h.key.hostname)
    );
    write!(
        s,
        r#"<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><meta name="generator" content="schedlab {}">
<title>schedlab history: {}</title>
<style>body{{font:14px system-ui,sans-serif;margin:2em;color:#1a202c}}table{{border-collapse:collapse}}td,th{{padding:2px 8px;border-bottom:1px solid #e2e8f0;text-align:right}}td.l,th.l{{text-align:left}}.tick{{font-size:11px;fill:#4a5568}}.change{{color:#c53030;font-weight:600}}.note{{color:#4a5568}}</style>
</head><body><main><h1>{}</h1>
<p>{} ({}, {}); one point per run: the run summary of its measured iterations. {}, {}.</p>
"#,
        Esc(schedlab_core::VERSION),
        Esc(&title),
        Esc(&title),
        Esc(&h.key.metric),
        Esc(&h.key.unit),
        direction(h.key.better),
        words::counted(h.points.len(), "run"),
        words::counted(h.kernels.len(), "kernel release")
    )?;
    plot(s, h, c)?;
    s.push_str(r#"<h2>Changes</h2>"#);
    if c.changes.is_empty() {
        s.push_str("<p>No change cleared the noise.</p>");
    } else {
        s.push_str(r#"<table><tr><th>first run</th><th class="l">kernel</th><th>before</th><th>after</th><th>change</th><th>noise×</th><th>p</th><th class="l"></th></tr>"#);
        for ch in &c.changes {
            write!(
                s,
                r#"<tr><td>{}</td><td class="l">{} → {}</td><td>{}</td><td>{}</td><td class="change">{}</td><td>{}</td><td>{:.3}</td><td class="l">{}</td></tr>"#,
                ch.run_id.map_or("-".into(), |i| i.to_string()),
                Esc(&ch.kernel_before),
                Esc(&ch.kernel),
                format_value(ch.before),
                format_value(ch.after),
                change_cell(ch),
                widths_cell(ch),
                ch.p_value,
                verdict_word(ch.verdict)
            )?;
        }
        s.push_str("</table>");
        for line in c.changes.iter().filter_map(|ch| build_change_line(c, ch)) {
            write!(s, r#"<p class="note">{}</p>"#, Esc(&line))?;
        }
    }
    if let Some(line) = builds_line(h) {
        write!(s, r#"<p class="note">{}</p>"#, Esc(&line))?;
    }
    if let Some(n) = &c.noise {
        write!(s, "<p>{}.</p>", Esc(&capitalised(&noise_sentence(c, n))))?;
    }
    s.push_str(r#"<h2>Runs</h2><table><tr><th>#</th><th>run</th><th class="l">label</th><th class="l">started</th><th class="l">kernel</th><th>iters</th><th>value</th></tr>"#);
    for (i, p) in h.points.iter().enumerate() {
        write!(
            s,
            r#"<tr><td>{}</td><td>{}</td><td class="l">{}</td><td class="l">{}</td><td class="l">{}</td><td>{}</td><td>{}</td></tr>"#,
            i + 1,
            p.run_id.map_or("-".into(), |i| i.to_string()),
            Esc(p.label.as_deref().unwrap_or("-")),
            Esc(&format_time_ns(p.started_at_ns)),
            Esc(&p.kernel),
            p.iterations,
            format_value(p.value)
        )?;
    }
    s.push_str("</table></main></body></html>\n");
    Ok(())
}

fn plot(s: &mut String, h: &History, c: &Changes) -> std::fmt::Result {
    let values: Vec<f64> = h.points.iter().map(|p| p.value).collect();
    let lo = values.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = values.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let (d0, d1, ticks, _) = nice_domain(lo, hi, 5);
    let n = values.len().max(1);
    let x = |i: f64| LEFT + (i + 0.5) / n as f64 * (WIDTH - LEFT - RIGHT);
    let y = |v: f64| {
        let t = if d1 > d0 { (v - d0) / (d1 - d0) } else { 0.5 };
        HEIGHT - BOTTOM - t * (HEIGHT - TOP - BOTTOM)
    };
    write!(
        s,
        r#"<svg class="history" xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {WIDTH} {HEIGHT}" width="{WIDTH}" height="{HEIGHT}" role="img" aria-label="{}">"#,
        Esc(&format!(
            "{} over {}",
            h.key.metric,
            words::counted(n, "run")
        ))
    )?;
    for t in &ticks {
        write!(
            s,
            r##"<line x1="{LEFT}" x2="{}" y1="{:.1}" y2="{:.1}" stroke="#e2e8f0"/><text x="{}" y="{:.1}" text-anchor="end" class="tick">{}</text>"##,
            WIDTH - RIGHT,
            y(*t),
            y(*t),
            LEFT - 6.0,
            y(*t) + 4.0,
            format_value(*t)
        )?;
    }
    // Kernel releases: alternate bands under their runs, each named once.
    for (k, span) in h.kernels.iter().enumerate() {
        let (x0, x1) = (
            x(span.first as f64 - 0.5),
            x((span.first + span.runs) as f64 - 0.5),
        );
        if k % 2 == 1 {
            write!(
                s,
                r##"<rect x="{x0:.1}" y="{TOP}" width="{:.1}" height="{}" fill="#f7fafc"/>"##,
                x1 - x0,
                HEIGHT - TOP - BOTTOM
            )?;
        }
        write!(
            s,
            r#"<text x="{:.1}" y="{}" class="tick" text-anchor="end" transform="rotate(-30 {:.1} {})"><title>{}</title>{}</text>"#,
            (x0 + x1) / 2.0,
            HEIGHT - BOTTOM + 16.0,
            (x0 + x1) / 2.0,
            HEIGHT - BOTTOM + 16.0,
            Esc(&span.kernel),
            Esc(&crate::compare::html::svg::truncate(&span.kernel, 24))
        )?;
    }
    // Levels between changes, and a marker at each change.
    let mut start = 0;
    for (i, ch) in c.changes.iter().enumerate() {
        level(
            s,
            x(start as f64 - 0.5),
            x(ch.index as f64 - 0.5),
            y(ch.before),
        )?;
        if i + 1 == c.changes.len() {
            level(s, x(ch.index as f64 - 0.5), x(n as f64 - 0.5), y(ch.after))?;
        }
        write!(
            s,
            r##"<line x1="{0:.1}" x2="{0:.1}" y1="{TOP}" y2="{1}" stroke="#c53030" stroke-dasharray="4 3"/><text x="{0:.1}" y="{2}" class="tick" fill="#c53030">{3}</text>"##,
            x(ch.index as f64 - 0.5),
            HEIGHT - BOTTOM,
            TOP - 8.0,
            Esc(&change_words(ch))
        )?;
        start = ch.index;
    }
    let path: Vec<String> = values
        .iter()
        .enumerate()
        .map(|(i, v)| format!("{:.1},{:.1}", x(i as f64), y(*v)))
        .collect();
    write!(
        s,
        r##"<polyline points="{}" fill="none" stroke="#a0aec0"/>"##,
        path.join(" ")
    )?;
    for (i, p) in h.points.iter().enumerate() {
        write!(
            s,
            r##"<circle cx="{:.1}" cy="{:.1}" r="3.5" fill="#2b6cb0"><title>run {} {} {}: {}</title></circle>"##,
            x(i as f64),
            y(p.value),
            p.run_id.map_or("-".into(), |i| i.to_string()),
            Esc(p.label.as_deref().unwrap_or("")),
            Esc(&p.kernel),
            format_value(p.value)
        )?;
    }
    s.push_str("</svg>\n");
    Ok(())
}

fn capitalised(text: &str) -> String {
    let mut chars = text.chars();
    chars
        .next()
        .map_or_else(String::new, |c| c.to_uppercase().chain(chars).collect())
}

fn level(s: &mut String, x0: f64, x1: f64, y: f64) -> std::fmt::Result {
    write!(
        s,
        r##"<line x1="{x0:.1}" x2="{x1:.1}" y1="{y:.1}" y2="{y:.1}" stroke="#c53030" stroke-width="2" opacity="0.6"/>"##
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use schedlab_analysis::history::{ChangeSettings, HistoryKey, HistoryPoint, KernelSpan};
    use schedlab_analysis::units::Scale;
    use schedlab_core::record::RunStatus;

    /// A count that is 0 in four runs, then 1 in four, as the analysis models it: the change
    /// from 0 and the noise have no percent, and the noise is 0, so the change has no size in
    /// noise widths.
    fn from_zero() -> (History, Changes) {
        let points: Vec<HistoryPoint> = (0..8)
            .map(|i| HistoryPoint {
                run_id: Some(i + 1),
                label: None,
                started_at_ns: i,
                kernel: "6.1".into(),
                hostname: "box".into(),
                status: RunStatus::Complete,
                iterations: 2,
                value: if i < 4 { 0.0 } else { 1.0 },
                y: if i < 4 { 0.0 } else { 1.0 },
                within_variance: Some(0.0),
                measured_by: None,
            })
            .collect();
        let key = HistoryKey {
            case: "c".into(),
            metric: "migrations".into(),
            unit: "count".into(),
            better: Better::Lower,
            scale: Scale::Raw,
            hostname: "box".into(),
        };
        let h = History {
            key: key.clone(),
            kernels: vec![KernelSpan {
                kernel: "6.1".into(),
                first: 0,
                runs: 8,
                median: 0.5,
            }],
            points,
            builds: Vec::new(),
            excluded_runs: Vec::new(),
            machine: None,
        };
        let c = Changes {
            key,
            runs: 8,
            noise: Some(Noise {
                sd: 0.0,
                pct: None,
                calibrated_sd: None,
                calibrated_pct: None,
                series_sd: Some(0.0),
                series_pct: None,
                source: NoiseSource::Series,
                threshold: 0.0,
                threshold_pct: None,
            }),
            changes: vec![Change {
                index: 4,
                run_id: Some(5),
                label: None,
                started_at_ns: 4,
                kernel: "6.1".into(),
                kernel_before: "6.1".into(),
                runs_before: 4,
                runs_after: 4,
                before: 0.0,
                after: 1.0,
                change_pct: None,
                noise_widths: None,
                p_value: 0.005,
                verdict: ChangeVerdict::Regression,
                build_changed: None,
            }],
            dismissed: Vec::new(),
            settings: ChangeSettings::default(),
        };
        (h, c)
    }

    fn written(write: impl Fn(&mut dyn Write) -> io::Result<()>) -> String {
        let mut out = Vec::new();
        write(&mut out).unwrap();
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn a_change_without_a_percent_reads_the_same_in_every_format() {
        let (h, c) = from_zero();
        let all = std::slice::from_ref(&c);
        // Joined where the text wrapped its sentences at 80 columns.
        let history = written(|out| write_history_text(&h, &c, out)).replace("\n  ", " ");
        assert!(history.contains("◆ 0 → 1.000 regression"), "{history}");
        let noise = "noise 0 count per run (from the series itself; not in percent: the series' \
                     median is 0); changes under 0 count are not reported; 1 change, 0 dismissed";
        assert!(history.contains(noise), "{history}");
        let table = written(|out| write_changes_text(all, out));
        let row = table.lines().nth(1).unwrap();
        assert!(
            row.ends_with("0 (4)  1.000 (4)       -       -  0.005  regression"),
            "{table}"
        );
        assert!(table.contains(noise), "{table}");
        let csv = written(|out| write_history_csv(&h, &c, out));
        assert!(csv.lines().nth(5).unwrap().ends_with(",1,,"), "{csv}");
        let csv = written(|out| write_changes_csv(all, out));
        assert!(
            csv.lines().nth(1).unwrap().contains(",4,4,,,0.005,"),
            "{csv}"
        );
        let html = written(|out| write_history_html(&h, &c, out));
        assert!(
            html.contains(r#"<td class="change">-</td><td>-</td>"#),
            "{html}"
        );
        assert!(html.contains(">0 → 1.000</text>"), "{html}");
        assert!(html.contains("<p>Noise 0 count per run"), "{html}");
        let json: serde_json::Value =
            serde_json::from_str(&written(|out| write_history_json(&h, &c, out))).unwrap();
        let change = &json["changes"]["changes"][0];
        assert!(change["change_pct"].is_null() && change["noise_widths"].is_null());
        assert!(json["changes"]["noise"]["pct"].is_null());
        for text in [&history, &table, &csv, &html] {
            let words = text.split(|c: char| !c.is_alphanumeric());
            assert!(
                words
                    .map(str::to_lowercase)
                    .all(|w| w != "nan" && w != "inf"),
                "{text}"
            );
        }
    }

    /// A noise the runs' iterations set is named as theirs, in the line's usual shape.
    #[test]
    fn a_noise_from_the_runs_iterations_says_so() {
        let (_, mut c) = from_zero();
        let noise = c.noise.as_mut().unwrap();
        (noise.sd, noise.pct, noise.threshold, noise.threshold_pct) =
            (0.02, Some(2.02), 0.06, Some(6.18));
        noise.source = NoiseSource::Iterations;
        let line = written(|out| write_noise_line(&c, out));
        assert_eq!(
            line,
            "noise 2.02% per run (from the runs' iterations); changes under 6.18% are not \
             reported; 1 change, 0 dismissed\n"
        );
    }

    #[test]
    fn sparkline_spans_lowest_to_highest() {
        assert_eq!(sparkline(&[1.0, 2.0, 3.0], 80), "▁▅█");
        assert_eq!(sparkline(&[5.0, 5.0], 80), "▄▄");
        assert_eq!(sparkline(&[], 80), "");
    }

    #[test]
    fn a_long_history_is_drawn_in_groups_at_their_medians() {
        // 9 runs in 3 marks: [1, 1, 9] [2, 2, 2] [3, 30, 3]; each group's outlier leaves its
        // median alone.
        let values = [1.0, 1.0, 9.0, 2.0, 2.0, 2.0, 3.0, 30.0, 3.0];
        assert_eq!(sparkline(&values, 3), "▁▅█");
        // 7 runs in 2 marks of 3 and 4 runs.
        let values = [1.0, 1.0, 1.0, 5.0, 5.0, 6.0, 6.0];
        assert_eq!(sparkline(&values, 2), "▁█");
        assert_eq!(sparkline(&[1.0; 1000], 80).chars().count(), 80);
    }
}
