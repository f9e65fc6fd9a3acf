//! The HTML format of comparisons (`schedlab report --html`): one self-contained page — inline
//! CSS and SVG, no script, no font or file fetched — with the compare table, a forest plot of
//! change % with CIs, why the cases moved where the runs were probed ([`explain`]), scaling
//! plots of matrix cases against the parameter they vary, latency
//! percentile curves for cases with percentile metrics, each row's samples as strip plots, the
//! sides' fingerprints side by side, the runs, and the statistics footer.
//!
//! The page's prose and furniture — its head and CSS, each section's opening paragraph, the
//! legends — are files under `assets/html/` ([`assets`]); the statistics footer is the one the
//! text formats print ([`super::footer`]). The loops over rows, sides and plots are Rust rather
//! than a template engine's (minijinja) and the plots are drawn here rather than by a plotting
//! library (plotters): a few dozen lines each, and the crate gains no dependency.
//! Nothing is interpolated except through [`escape::Esc`] or numbers we format ourselves, and
//! the tests render hostile strings everywhere a user can put one.
use std::fmt::{self, Write};
use std::io;

use schedlab_analysis::grouping::XScale;
use schedlab_analysis::latency::Curve;
use schedlab_analysis::model::{Comparison, Row, ScalingSeries, SideFigures, SideSummary, Verdict};
use schedlab_analysis::units::Design;
use schedlab_core::metric::Better;
use schedlab_core::record::{RunRecord, RunStatus};
use schedlab_core::words;

use super::block::Block;
use super::footer;
use super::phrases::{level_text, mde_text, row_mark, row_note, unmatched, verdict_name, SIGN};
use crate::model::format_time_ns;
use crate::number::format_value;
use escape::Esc;
use svg::side_color;

pub mod assets;
pub mod blocks;
pub mod escape;
pub mod explain;
pub mod fingerprints;
pub mod latency;
pub mod svg;

/// Writes the page. `candidate_runs` are in the order of `c.candidates`; the runs give the
/// fingerprints, the run list and the latency curves (which use every metric, whatever the
/// comparison's metric filter).
pub fn write(
    c: &Comparison,
    base_runs: &[RunRecord],
    candidate_runs: &[Vec<RunRecord>],
    out: &mut dyn io::Write,
) -> io::Result<()> {
    let mut page = String::new();
    write_page(&mut page, c, base_runs, candidate_runs)
        .map_err(|_| io::Error::other("formatting the HTML report failed"))?;
    out.write_all(page.as_bytes())
}

/// A side as the page shows it: name, colour, stored runs and the model's summary of them.
struct SideView<'a> {
    name: &'a str,
    color: &'static str,
    runs: &'a [RunRecord],
    summary: &'a SideSummary,
}

fn write_page(
    s: &mut impl Write,
    c: &Comparison,
    base_runs: &[RunRecord],
    candidate_runs: &[Vec<RunRecord>],
) -> fmt::Result {
    let sides: Vec<SideView> = c
        .sides()
        .zip(std::iter::once(base_runs).chain(candidate_runs.iter().map(Vec::as_slice)))
        .enumerate()
        .map(|(i, (summary, runs))| SideView {
            name: &summary.name,
            color: side_color(i),
            runs,
            summary,
        })
        .collect();
    let title = super::title(c);
    let curves = &c.latency_curves;
    let machines_values: Vec<fingerprints::SideValues> = sides
        .iter()
        .map(|side| {
            let fps: Vec<_> = side.runs.iter().map(|r| &r.fingerprint).collect();
            fingerprints::SideValues::new(side.name, &fps)
        })
        .collect();

    s.write_str(&assets::fill(
        assets::HEAD,
        &[
            ("version", &Esc(schedlab_core::VERSION).to_string()),
            ("title", &Esc(&title).to_string()),
            ("css", assets::CSS),
        ],
    ))?;
    header(s, c, &sides, &title, &machines_values)?;
    s.write_str(&nav(|section| match section {
        "explain" => c.explanation.is_some(),
        "scaling" => !c.scaling.is_empty(),
        "latency" => !curves.is_empty(),
        _ => true,
    }))?;
    compare_table(s, c)?;
    forest_section(s, c)?;
    explain::section(s, c)?;
    if !c.scaling.is_empty() {
        scaling_section(s, c, &sides)?;
    }
    // Curves before the strip plots: fewer, and what a latency review looks for first.
    if !curves.is_empty() {
        latency_section(s, curves, &sides)?;
    }
    distributions(s, c, &sides)?;
    machines(s, &machines_values)?;
    runs(s, &sides)?;
    statistics(s, c)?;
    s.write_str("</main>\n</body>\n</html>\n")?;
    Ok(())
}

/// The links of [`assets::NAV`] to the sections `present` says the page has.
fn nav(present: impl Fn(&str) -> bool) -> String {
    let mut links = assets::NAV.to_string();
    let mut from = 0;
    while let Some(start) = links[from..].find("<a href=\"#").map(|i| from + i) {
        let end = links[start..]
            .find("</a>")
            .map_or(links.len(), |i| start + i + 4);
        let id = &links[start + 10..];
        let id = &id[..id.find('"').unwrap_or(0)];
        if present(id) {
            from = end;
        } else {
            links.replace_range(start..end, "");
            from = start;
        }
    }
    links
}

fn verdict_class(v: Verdict) -> String {
    format!("v-{}", verdict_name(v))
}

fn header(
    s: &mut impl Write,
    c: &Comparison,
    sides: &[SideView],
    title: &str,
    machines: &[fingerprints::SideValues],
) -> fmt::Result {
    write!(
        s,
        r#"<header class="top"><h1>schedlab report <span class="title">{}</span></h1><div class="sides">"#,
        Esc(title)
    )?;
    for (i, side) in sides.iter().enumerate() {
        let summary = side.summary;
        let role = if i == 0 { "baseline" } else { "candidate" };
        let ids: Vec<String> = summary.run_ids.iter().map(i64::to_string).collect();
        write!(
            s,
            r#"<div class="side-card" style="border-color:{color}"><div class="muted">{role}</div><div class="side-name" style="color:{color}">{}</div><div class="muted">{} {} · {} · kernel {}</div></div>"#,
            Esc(side.name),
            words::noun(ids.len(), "run"),
            Esc(&ids.join(", ")),
            words::counted(summary.boots, "boot"),
            Esc(&summary.kernels.join(", ")),
            color = side.color,
        )?;
    }
    s.write_str(r#"</div><div class="chips">"#)?;
    for v in Verdict::ALL {
        let n = c.count(v);
        write!(
            s,
            r#"<span class="chip {}{}"><b>{n}</b> {} {}</span>"#,
            verdict_class(v),
            if n == 0 { " zero" } else { "" },
            v.mark(),
            verdict_name(v)
        )?;
    }
    write!(
        s,
        r#"<span class="chip-note">{}{}</span></div>"#,
        Esc(&footer::tally(&c.footer)),
        footer::false_mark_bound(c).map_or(String::new(), |b| format!("; {}", Esc(&b)))
    )?;
    fingerprints::summary(s, machines)?;
    s.write_str("</header>")?;
    Ok(())
}

fn arrow(better: Better) -> &'static str {
    match better {
        Better::Lower => r#"<span class="dir" title="lower is better">↓</span>"#,
        Better::Higher => r#"<span class="dir" title="higher is better">↑</span>"#,
    }
}

fn summary_cell(s: &mut impl Write, side: &SideFigures, units: &str) -> fmt::Result {
    match side.median {
        Some(median) => write!(
            s,
            r#"<td class="num">{}<div class="muted">{} n={} {}</div></td>"#,
            format_value(median),
            side.spread_pct
                .map_or(String::new(), |p| format!("±{p:.2}% ·")),
            side.n,
            units
        ),
        None => write!(s, r#"<td class="num">—</td>"#),
    }
}

fn fmt_p(q: Option<f64>) -> String {
    match q {
        Some(q) if q < 0.001 => format!("{q:.1e}"),
        Some(q) => format!("{q:.3}"),
        None => "—".to_string(),
    }
}

fn compare_table(s: &mut impl Write, c: &Comparison) -> fmt::Result {
    let several = c.candidates.len() > 1;
    let level = level_text(c.settings.confidence);
    s.write_str(&assets::fill(
        assets::COMPARISON,
        &[
            ("candidate", if several { "<th>candidate</th>" } else { "" }),
            ("sign", SIGN),
            ("level", &level),
        ],
    ))?;
    let columns = if several { 9 } else { 8 };
    let mut previous: Option<&str> = None;
    for r in &c.rows {
        // The case once above its metrics: case names are long, and repeating them in every
        // row would squeeze the numbers.
        if previous != Some(r.case.as_str()) {
            write!(
                s,
                r#"<tr class="case-head"><th colspan="{columns}">{}</th></tr>"#,
                Esc(&r.case)
            )?;
            previous = Some(&r.case);
        }
        write!(
            s,
            r#"<tr class="row {}"><td class="metric">{} {}<span class="muted unit">{}</span></td>"#,
            verdict_class(r.verdict),
            Esc(&r.metric),
            arrow(r.better),
            Esc(&r.unit)
        )?;
        if several {
            write!(s, "<td>{}</td>", Esc(&r.candidate))?;
        }
        summary_cell(s, &r.base_side, r.unit_noun())?;
        summary_cell(s, &r.candidate_side, r.unit_noun())?;
        match r.change_pct {
            Some(p) => write!(s, r#"<td class="num change">{p:+.2}%</td>"#)?,
            None => s.write_str(r#"<td class="num change">—</td>"#)?,
        }
        match r.ci_pct() {
            Some((low, high)) => write!(s, r#"<td class="num">[{low:+.2}, {high:+.2}]</td>"#)?,
            None => s.write_str(r#"<td class="num">—</td>"#)?,
        }
        write!(s, r#"<td class="num">{}</td>"#, fmt_p(r.q_value))?;
        match r.mde_pct {
            Some(m) => write!(s, r#"<td class="num">{}</td>"#, mde_text(m))?,
            None => s.write_str(r#"<td class="num">—</td>"#)?,
        }
        write!(
            s,
            r#"<td><span class="verdict {}">{} {}</span>"#,
            verdict_class(r.verdict),
            row_mark(r),
            verdict_name(r.verdict)
        )?;
        if let Some(restates) = r.restates {
            write!(
                s,
                r#"<div class="muted">as {}: the same effect, not tested again</div>"#,
                Esc(restates.metric)
            )?;
        }
        if let Some(note) = &r.note {
            write!(s, r#"<div class="muted">{}</div>"#, Esc(&row_note(note)))?;
        }
        s.write_str("</td></tr>")?;
    }
    s.write_str("</tbody></table>")?;
    if !c.unmatched.is_empty() {
        let pairs = words::counted(c.unmatched.len(), "case × metric pair");
        s.write_str(&assets::fill(assets::ONE_SIDE_ONLY, &[("pairs", &pairs)]))?;
    }
    s.write_str("</section>")?;
    Ok(())
}

fn forest_section(s: &mut impl Write, c: &Comparison) -> fmt::Result {
    s.write_str(assets::CHANGE)?;
    svg::forest(s, c)?;
    s.write_str("</section>")?;
    Ok(())
}

fn replication_text(r: &Row) -> &'static str {
    match r.design {
        Design::Pairs if r.pairs_by_boot => {
            "one dot per boot and case: the mean of its runs, each holding both"
        }
        Design::Pairs if r.pairs_within_runs => "one dot per run and case: each run holds both",
        Design::Runs => "one dot per run: the geometric mean of its iterations",
        Design::Boots => "one dot per boot: the mean of its runs",
        Design::Pairs => "one dot per A/B round and arm",
        Design::Values => "one dot per value",
    }
}

fn distributions(s: &mut impl Write, c: &Comparison, sides: &[SideView]) -> fmt::Result {
    s.write_str(assets::DISTRIBUTIONS)?;
    for rows in c.rows_by_case_metric() {
        let first = rows[0];
        let (case, metric) = (&first.case, &first.metric);
        let mut lanes = vec![svg::Lane {
            name: sides[0].name,
            color: sides[0].color,
            values: &first.base_side.units,
            quartiles: first.base_side.quartiles,
        }];
        for side in &sides[1..] {
            if let Some(r) = rows.iter().find(|r| r.candidate == side.name) {
                lanes.push(svg::Lane {
                    name: side.name,
                    color: side.color,
                    values: &r.candidate_side.units,
                    quartiles: r.candidate_side.quartiles,
                });
            }
        }
        let better = match first.better {
            Better::Lower => "lower is better",
            Better::Higher => "higher is better",
        };
        write!(
            s,
            r#"<figure class="dist"><figcaption><b>{}</b><br>{} <span class="muted">({better}; {})</span></figcaption>"#,
            Esc(case),
            Esc(metric),
            Esc(replication_text(first))
        )?;
        svg::strip(s, &lanes, &first.unit, &format!("{case} {metric}"))?;
        s.write_str("</figure>")?;
    }
    s.write_str("</div></section>")?;
    Ok(())
}

fn scaling_section(s: &mut impl Write, c: &Comparison, sides: &[SideView]) -> fmt::Result {
    let level = level_text(c.scaling.first().map_or(c.settings.confidence, |x| x.level));
    s.write_str(&assets::fill(assets::SCALING, &[("level", &level)]))?;
    for series in &c.scaling {
        scaling_series(s, series, sides)?;
    }
    s.write_str("</section>")?;
    Ok(())
}

fn scaling_series(s: &mut impl Write, series: &ScalingSeries, sides: &[SideView]) -> fmt::Result {
    let g = &series.grouping;
    let fixed = g.fixed_label();
    write!(
        s,
        r#"<div class="scaling-series"><h3>{} over {}</h3><p class="muted">{}</p><div class="grid scaling-grid">"#,
        Esc(&g.workload),
        Esc(&g.parameter),
        Esc(&fixed)
    )?;
    let labels: Vec<String> = g.values.iter().map(|v| svg::fmt_plain(*v)).collect();
    let ticks: Vec<(String, f64)> = labels.iter().cloned().zip(g.x.iter().copied()).collect();
    let x_title = match g.x_scale {
        XScale::Log => format!("{} (log scale)", g.parameter),
        XScale::Linear => g.parameter.clone(),
    };
    for metric in &series.metrics {
        let lines: Vec<svg::ScalingSide> = metric
            .lines
            .iter()
            .zip(sides)
            .map(|(line, view)| {
                let points = line
                    .points
                    .iter()
                    .zip(&labels)
                    .map(|(p, value)| {
                        let p = p.as_ref()?;
                        let mut tooltip = format!(
                            "{} {}={value}: {} {}",
                            line.side,
                            g.parameter,
                            format_value(p.mean),
                            metric.unit
                        );
                        if let (Some(lo), Some(hi)) = (p.low, p.high) {
                            tooltip.push_str(&format!(
                                " [{}, {}]",
                                format_value(lo),
                                format_value(hi)
                            ));
                        }
                        tooltip.push_str(&format!(" · {}", words::counted(p.units, "unit")));
                        if let (Some(change), Some(v)) = (p.change_pct, p.verdict) {
                            tooltip.push_str(&format!(" · {change:+.2}% {}", v.mark()));
                        }
                        Some(svg::ScalingMark {
                            mean: p.mean,
                            interval: p.low.zip(p.high),
                            marked: p.verdict.filter(|v| v.is_marked()),
                            tooltip,
                        })
                    })
                    .collect();
                svg::ScalingSide {
                    name: view.name,
                    color: view.color,
                    points,
                }
            })
            .collect();
        let better = match metric.better {
            Better::Lower => "lower is better",
            Better::Higher => "higher is better",
        };
        write!(
            s,
            r#"<figure class="scaling-plot"><figcaption><b>{}</b> <span class="muted">({better})</span></figcaption>"#,
            Esc(&metric.metric)
        )?;
        svg::scaling(
            s,
            &ticks,
            &lines,
            &x_title,
            &metric.unit,
            &format!(
                "{} {} over {} ({fixed})",
                metric.metric, g.workload, g.parameter
            ),
        )?;
        scaling_table(s, metric, &labels, &g.parameter, sides)?;
        s.write_str("</figure>")?;
    }
    s.write_str("</div></div>")?;
    Ok(())
}

/// The plotted numbers: a row per side, a column per parameter value; candidates with the row's
/// change and mark.
fn scaling_table(
    s: &mut impl Write,
    metric: &schedlab_analysis::model::ScalingMetric,
    labels: &[String],
    parameter: &str,
    sides: &[SideView],
) -> fmt::Result {
    write!(
        s,
        r#"<table class="pct scaling-table"><thead><tr><th>{}</th>"#,
        Esc(parameter)
    )?;
    for label in labels {
        write!(s, r#"<th class="num">{}</th>"#, Esc(label))?;
    }
    s.write_str("</tr></thead><tbody>")?;
    // Lines come base first, then the candidates in order: the sides' order (a side compared
    // with itself has one name twice).
    for (line, side) in metric.lines.iter().zip(sides) {
        let color = side.color;
        write!(
            s,
            r#"<tr><td><span class="dot" style="background:{color}"></span>{}</td>"#,
            Esc(&svg::truncate(&line.side, 20))
        )?;
        for p in &line.points {
            let Some(p) = p else {
                s.write_str(r#"<td class="num">—</td>"#)?;
                continue;
            };
            write!(s, r#"<td class="num">{}"#, format_value(p.mean))?;
            if let (Some(change), Some(v)) = (p.change_pct, p.verdict) {
                write!(
                    s,
                    r#"<div class="muted {}">{change:+.1}% {}</div>"#,
                    verdict_class(v),
                    v.mark()
                )?;
            }
            s.write_str("</td>")?;
        }
        s.write_str("</tr>")?;
    }
    s.write_str("</tbody></table>")?;
    Ok(())
}

fn latency_section(s: &mut impl Write, curves: &[Curve], sides: &[SideView]) -> fmt::Result {
    s.write_str(assets::LATENCY)?;
    let figure_sides: Vec<latency::Side> = sides
        .iter()
        .map(|side| latency::Side {
            name: side.name,
            color: side.color,
        })
        .collect();
    for curve in curves {
        latency::figure(
            s,
            curve,
            &figure_sides,
            &format!(
                "<b>{}</b><br>{} latency",
                Esc(&curve.case),
                Esc(&curve.family)
            ),
            &format!("{} {} latency", curve.case, curve.family),
            None,
        )?;
    }
    s.write_str("</div></section>")?;
    Ok(())
}

fn machines(s: &mut impl Write, values: &[fingerprints::SideValues]) -> fmt::Result {
    s.write_str(assets::MACHINES)?;
    fingerprints::table(s, values)?;
    s.write_str("</section>")?;
    Ok(())
}

fn runs(s: &mut impl Write, sides: &[SideView]) -> fmt::Result {
    s.write_str(assets::RUNS)?;
    for side in sides {
        for run in side.runs {
            let iterations = side
                .summary
                .run_iterations
                .iter()
                .find(|r| Some(r.id) == run.id)
                .map_or("—".to_string(), |r| {
                    format!(
                        "{} + {} warm-up",
                        r.measured_iterations, r.warmup_iterations
                    )
                });
            let status_class = match run.status {
                RunStatus::Complete => "ok",
                _ => "bad",
            };
            write!(
                s,
                r#"<tr><td><span class="dot" style="background:{}"></span>{}</td><td class="num">{}</td><td>{}</td><td class="status {status_class}">{}</td><td class="when">{}</td><td class="num">{}</td><td class="num">{iterations}</td><td class="kernel">{}</td><td class="error">{}</td></tr>"#,
                side.color,
                Esc(side.name),
                run.id.map_or("—".to_string(), |i| i.to_string()),
                Esc(run.label.as_deref().unwrap_or("—")),
                run.status.as_str(),
                Esc(&format_time_ns(run.started_at_ns)),
                run.cases.len(),
                Esc(&run.fingerprint.kernel_release),
                Esc(run.error.as_deref().unwrap_or(""))
            )?;
        }
    }
    s.write_str("</tbody></table></section>")?;
    Ok(())
}

fn statistics(s: &mut impl Write, c: &Comparison) -> fmt::Result {
    s.write_str(r#"<footer id="statistics"><h2>Statistics</h2>"#)?;
    blocks::write(s, &[Block::List(footer::lines(c))])?;
    if !c.unmatched.is_empty() {
        s.write_str(assets::UNMATCHED)?;
        for m in &c.unmatched {
            write!(s, "<li>{}</li>", Esc(&unmatched(m)))?;
        }
        s.write_str("</ul>")?;
    }
    let version = Esc(schedlab_core::VERSION).to_string();
    s.write_str(&assets::fill(
        assets::STATISTICS_END,
        &[("version", &version)],
    ))?;
    Ok(())
}

#[cfg(test)]
mod tests;
