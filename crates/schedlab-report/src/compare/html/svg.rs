//! The report's plots as inline SVG, written by hand: a forest plot of change % with CIs, strip
//! plots with boxes of each row's samples, latency percentile curves, and scaling plots of a
//! metric against the parameter a matrix varies. Each is a few dozen
//! lines of axes, lines and circles, so a plotting library would add dependencies without
//! removing much code; every string drawn goes through [`Esc`].
use std::fmt::{self, Write};

use super::escape::Esc;
use crate::compare::phrases::{level_text, row_mark, verdict_name};
use crate::number::format_value;
use schedlab_analysis::model::{Comparison, IntervalKind, Row, Verdict};
use schedlab_core::metric::Better;

/// Colours of the verdicts: red and green only for marked rows, so a glance finds them.
pub fn verdict_color(v: Verdict) -> &'static str {
    match v {
        Verdict::Regression => "#b91c1c",
        Verdict::Improvement => "#15803d",
        Verdict::Equivalent => "#0369a1",
        Verdict::Inconclusive => "#6b7280",
        Verdict::Noisy => "#b45309",
        Verdict::NotJudged => "#9ca3af",
    }
}

/// Colours of the sides: the baseline grey, candidates in hues that are neither the regression
/// red nor the improvement green.
pub fn side_color(index: usize) -> &'static str {
    const CANDIDATES: [&str; 5] = ["#2563eb", "#d97706", "#7c3aed", "#0d9488", "#db2777"];
    if index == 0 {
        "#475569"
    } else {
        CANDIDATES[(index - 1) % CANDIDATES.len()]
    }
}

/// A tick label: as many decimals as the step needs, and no `-0`.
fn fmt_tick(v: f64, step: f64) -> String {
    let mut decimals = (-step.log10().floor()).max(0.0) as usize;
    while decimals < 6 {
        let scaled = step * 10f64.powi(decimals as i32);
        if (scaled - scaled.round()).abs() < 1e-6 {
            break;
        }
        decimals += 1;
    }
    let text = format!("{v:.decimals$}");
    if text
        .trim_start_matches('-')
        .chars()
        .all(|c| c == '0' || c == '.')
    {
        text.trim_start_matches('-').to_string()
    } else {
        text
    }
}

/// Shortens `text` to `max` characters with an ellipsis; the full text goes in a `<title>`.
pub fn truncate(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        text.to_string()
    } else {
        let mut short: String = text.chars().take(max.saturating_sub(1)).collect();
        short.push('…');
        short
    }
}

/// A linear domain widened to round steps, with its ticks.
pub fn nice_domain(lo: f64, hi: f64, target: usize) -> (f64, f64, Vec<f64>, f64) {
    let (lo, hi) = if hi > lo {
        (lo, hi)
    } else {
        let pad = if lo == 0.0 { 1.0 } else { lo.abs() * 0.01 };
        (lo - pad, hi + pad)
    };
    let span = hi - lo;
    let raw = span / target.max(1) as f64;
    let magnitude = 10f64.powf(raw.log10().floor());
    let step = [1.0, 2.0, 2.5, 5.0, 10.0]
        .iter()
        .map(|m| m * magnitude)
        .find(|s| span / s <= target as f64)
        .unwrap_or(10.0 * magnitude);
    let start = (lo / step).floor() * step;
    let end = (hi / step).ceil() * step;
    let count = ((end - start) / step).round();
    if !(count.is_finite() && (0.0..=1000.0).contains(&count) && (end - start).is_finite()) {
        // Values near f64's limits, whose span overflows: the two ends, unrounded, and a plot
        // that is drawn rather than a panic.
        return (lo, hi, vec![lo, hi], hi / 2.0 - lo / 2.0);
    }
    let ticks = (0..=count as usize)
        .map(|i| start + i as f64 * step)
        .collect();
    (start, end, ticks, step)
}

/// A log domain from the 1-2-5 step at or below `lo` to the one at or above `hi`; its ticks are
/// every 1-2-5 step in between, or only the decades and the ends when that would crowd.
fn log_domain(lo: f64, hi: f64) -> (f64, f64, Vec<f64>) {
    let steps: Vec<f64> = ((lo.log10().floor() as i32 - 1)..=(hi.log10().ceil() as i32))
        .flat_map(|e| [1.0, 2.0, 5.0].map(|m| m * 10f64.powi(e)))
        .collect();
    let close = |a: f64, b: f64| (a - b).abs() <= b.abs() * 1e-9;
    let d0 = steps
        .iter()
        .copied()
        .filter(|t| *t <= lo || close(*t, lo))
        .fold(lo, |_, t| t);
    let d1 = steps
        .iter()
        .copied()
        .find(|t| *t >= hi || close(*t, hi))
        .unwrap_or(hi);
    let mut ticks: Vec<f64> = steps
        .into_iter()
        .filter(|t| (*t >= d0 || close(*t, d0)) && (*t <= d1 || close(*t, d1)))
        .collect();
    if ticks.len() > 7 {
        let decade = |t: f64| close(10f64.powf(t.log10().round()), t);
        ticks.retain(|t| decade(*t) || close(*t, d0) || close(*t, d1));
    }
    (d0, d1, ticks)
}

/// A number without trailing zeros: `100`, not `100.0`; for log-axis ticks.
pub fn fmt_plain(v: f64) -> String {
    let text = format_value(v);
    if text.contains('.') && !text.contains('e') {
        text.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        text
    }
}

/// Maps a domain onto pixels, linearly or on log10.
#[derive(Debug, Clone, Copy)]
struct Scale {
    d0: f64,
    d1: f64,
    r0: f64,
    r1: f64,
    log: bool,
}

impl Scale {
    fn map(&self, v: f64) -> f64 {
        let (v, d0, d1) = if self.log {
            (
                v.max(f64::MIN_POSITIVE).log10(),
                self.d0.log10(),
                self.d1.log10(),
            )
        } else {
            (v, self.d0, self.d1)
        };
        let t = if d1 > d0 { (v - d0) / (d1 - d0) } else { 0.5 };
        self.r0 + t * (self.r1 - self.r0)
    }
}

fn svg_open(s: &mut impl Write, width: f64, height: f64, class: &str, label: &str) -> fmt::Result {
    write!(
        s,
        r#"<svg class="{class}" xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {width} {height}" width="{width}" height="{height}" role="img" aria-label="{}">"#,
        Esc(label)
    )
}

const FOREST_WIDTH: f64 = 1140.0;
const FOREST_LABEL: f64 = 400.0;
const FOREST_TEXT: f64 = 240.0;
const FOREST_ROW: f64 = 24.0;

/// The value (y) axis of a plot of `values` from `bottom` up to `top`, with its ticks and their
/// step (0 on a log axis): logarithmic when the finite values are all positive and span more
/// than a factor of ten, else linear over `linear(lo, hi)` made nice.
fn value_axis(
    values: &[f64],
    (bottom, top): (f64, f64),
    linear: impl FnOnce(f64, f64) -> (f64, f64),
) -> (Scale, Vec<f64>, f64) {
    let finite = || values.iter().copied().filter(|v| v.is_finite());
    let lo = finite().fold(f64::INFINITY, f64::min);
    let hi = finite().fold(f64::NEG_INFINITY, f64::max);
    let log = lo > 0.0 && hi / lo > 10.0;
    let (d0, d1, ticks, step) = if !lo.is_finite() {
        nice_domain(0.0, 1.0, 5)
    } else if log {
        let (a, b, t) = log_domain(lo, hi);
        (a, b, t, 0.0)
    } else {
        let (a, b) = linear(lo, hi);
        nice_domain(a, b, 5)
    };
    let y = Scale {
        d0,
        d1,
        r0: bottom,
        r1: top,
        log,
    };
    (y, ticks, step)
}

/// Horizontal grid lines across `left..right`, each labelled with its value at the left edge
/// (plain numbers on a log axis, as many decimals as the step needs on a linear one).
fn y_grid(
    s: &mut impl Write,
    ticks: &[f64],
    y: &Scale,
    (left, right): (f64, f64),
    log: bool,
    step: f64,
) -> fmt::Result {
    for t in ticks {
        let py = y.map(*t);
        let label = if log {
            fmt_plain(*t)
        } else {
            fmt_tick(*t, step)
        };
        write!(
            s,
            r##"<line x1="{left}" x2="{right}" y1="{py:.1}" y2="{py:.1}" stroke="#e2e8f0"/><text x="{:.1}" y="{:.1}" text-anchor="end" class="tick">{label}</text>"##,
            left - 6.0,
            py + 4.0
        )?;
    }
    Ok(())
}

/// A vertical grid line at `px` from `top` to `bottom`; `width` where it is not SVG's default.
fn x_grid_line(
    s: &mut impl Write,
    px: f64,
    (top, bottom): (f64, f64),
    stroke: &str,
    width: Option<f64>,
) -> fmt::Result {
    write!(
        s,
        r#"<line x1="{px:.1}" x2="{px:.1}" y1="{top}" y2="{bottom}" stroke="{stroke}""#
    )?;
    if let Some(width) = width {
        write!(s, r#" stroke-width="{width}""#)?;
    }
    s.write_str("/>")
}

/// A tick's label centred under its grid line at `px`.
fn x_tick_label(s: &mut impl Write, px: f64, y: f64, label: impl fmt::Display) -> fmt::Result {
    write!(
        s,
        r#"<text x="{px:.1}" y="{y:.1}" text-anchor="middle" class="tick">{label}</text>"#
    )
}

/// An axis title centred at (`x`, `y`).
fn axis_title(s: &mut impl Write, x: f64, y: f64, title: impl fmt::Display) -> fmt::Result {
    write!(
        s,
        r#"<text x="{x:.1}" y="{y:.1}" text-anchor="middle" class="axis-title">{title}</text>"#
    )
}

fn direction_arrow(better: Better) -> &'static str {
    match better {
        Better::Lower => "↓",
        Better::Higher => "↑",
    }
}

/// What the forest's bars are, with the levels the rows' verdicts used: the test's interval,
/// and TOST's for `≈` rows (at the level spent at each row's look in a sequential experiment).
fn bar_meaning(c: &Comparison) -> String {
    let levels = |kind: IntervalKind| {
        let mut texts: Vec<String> = c
            .used_interval_levels(kind)
            .into_iter()
            .map(level_text)
            .collect();
        texts.dedup();
        texts.join(" / ")
    };
    let test = match levels(IntervalKind::Test) {
        none if none.is_empty() => level_text(c.settings.confidence),
        some => some,
    };
    match levels(IntervalKind::Equivalence) {
        none if none.is_empty() => format!("{test} CI of the test"),
        tost => format!("{test} CI of the test, or TOST's {tost} interval for ≈"),
    }
}

/// One line per row: its change % (candidate ÷ base − 1) as a dot and the CI as a line, on a
/// shared axis with 0 and the ±δ band marked. Rows without a test get a dash instead.
pub fn forest(s: &mut impl Write, c: &Comparison) -> fmt::Result {
    let several = c.candidates.len() > 1;
    let delta = c.settings.min_effect * 100.0;
    let ci_pct = |r: &Row| r.interval_used.map(|ci| ci.pct());
    let (mut lo, mut hi) = (-delta, delta);
    for r in &c.rows {
        for v in r
            .change_pct
            .into_iter()
            .chain(ci_pct(r).into_iter().flat_map(|(a, b)| [a, b]))
        {
            if v.is_finite() {
                lo = lo.min(v);
                hi = hi.max(v);
            }
        }
    }
    let pad = (hi - lo) * 0.05;
    let (d0, d1, ticks, step) = nice_domain(lo - pad, hi + pad, 8);
    let top = 8.0;
    let plot_height = FOREST_ROW * c.rows.len().max(1) as f64;
    let height = top + plot_height + 46.0;
    let x = Scale {
        d0,
        d1,
        r0: FOREST_LABEL,
        r1: FOREST_WIDTH - FOREST_TEXT,
        log: false,
    };
    svg_open(
        s,
        FOREST_WIDTH,
        height,
        "forest",
        "change in percent of every row, with confidence intervals",
    )?;
    for (i, _) in c.rows.iter().enumerate().filter(|(i, _)| i % 2 == 1) {
        write!(
            s,
            r##"<rect x="0" y="{}" width="{FOREST_WIDTH}" height="{FOREST_ROW}" fill="#f8fafc"/>"##,
            top + i as f64 * FOREST_ROW
        )?;
    }
    let (band0, band1) = (x.map(-delta), x.map(delta));
    write!(
        s,
        r##"<rect class="delta-band" x="{band0:.1}" y="{top}" width="{:.1}" height="{plot_height}" fill="#e0f2fe" opacity="0.7"><title>±δ = ±{delta}%: changes this small are not marked</title></rect>"##,
        band1 - band0
    )?;
    let bottom = top + plot_height;
    for t in &ticks {
        let px = x.map(*t);
        let (stroke, width) = if t.abs() < step * 1e-9 {
            ("#334155", 1.2)
        } else {
            ("#e2e8f0", 1.0)
        };
        x_grid_line(s, px, (top, bottom), stroke, Some(width))?;
        x_tick_label(s, px, bottom + 16.0, fmt_tick(*t, step))?;
    }
    axis_title(
        s,
        (x.r0 + x.r1) / 2.0,
        bottom + 36.0,
        format_args!(
            "change % (candidate ÷ base − 1) · bar: {} · shaded: ±δ ({delta}%) · ↓ lower is better, ↑ higher is better",
            bar_meaning(c)
        ),
    )?;
    for (i, r) in c.rows.iter().enumerate() {
        forest_row(s, r, top + (i as f64 + 0.5) * FOREST_ROW, &x, several)?;
    }
    s.write_str("</svg>")?;
    Ok(())
}

/// One row of the forest: its label, its interval's bar, its dot and its change.
fn forest_row(s: &mut impl Write, r: &Row, y: f64, x: &Scale, several: bool) -> fmt::Result {
    let color = verdict_color(r.verdict);
    let mut label = format!("{} · {} {}", r.case, r.metric, direction_arrow(r.better));
    if several {
        label.push_str(&format!(" · {}", r.candidate));
    }
    write!(
        s,
        r#"<text x="6" y="{:.1}" class="row-label"><title>{}</title>{}</text>"#,
        y + 4.0,
        Esc(&label),
        Esc(&truncate(&label, 60))
    )?;
    let text = match (r.change_pct, r.interval_used.map(|ci| ci.pct())) {
        (Some(p), Some((a, b))) => format!("{p:+.2}% [{a:+.2}, {b:+.2}] {}", row_mark(r)),
        (Some(p), None) => format!("{p:+.2}% {}", row_mark(r)),
        _ => format!("— {}", row_mark(r)),
    };
    write!(
        s,
        r#"<text x="{:.1}" y="{:.1}" class="row-value" fill="{color}">{}</text>"#,
        FOREST_WIDTH - FOREST_TEXT + 10.0,
        y + 4.0,
        Esc(&text)
    )?;
    // A NaN coordinate is an SVG error Chromium reports on the console: draw finite CIs only.
    if let Some((a, b)) = r
        .interval_used
        .map(|ci| ci.pct())
        .filter(|(a, b)| a.is_finite() && b.is_finite())
    {
        let (xa, xb) = (x.map(a), x.map(b));
        write!(
            s,
            r#"<line class="ci" x1="{xa:.1}" x2="{xb:.1}" y1="{y:.1}" y2="{y:.1}" stroke="{color}" stroke-width="2"/><line x1="{xa:.1}" x2="{xa:.1}" y1="{:.1}" y2="{:.1}" stroke="{color}" stroke-width="1.5"/><line x1="{xb:.1}" x2="{xb:.1}" y1="{:.1}" y2="{:.1}" stroke="{color}" stroke-width="1.5"/>"#,
            y - 5.0,
            y + 5.0,
            y - 5.0,
            y + 5.0
        )?;
    }
    if let Some(p) = r.change_pct.filter(|p| p.is_finite()) {
        write!(
            s,
            r#"<circle class="estimate" cx="{:.1}" cy="{y:.1}" r="4.5" fill="{color}"><title>{}: {p:+.2}% ({})</title></circle>"#,
            x.map(p),
            Esc(&label),
            verdict_name(r.verdict)
        )?;
    }
    Ok(())
}

/// One side's samples in a strip plot.
pub struct Lane<'a> {
    pub name: &'a str,
    pub color: &'a str,
    pub values: &'a [f64],
    /// First quartile, median and third quartile, from the model.
    pub quartiles: Option<[f64; 3]>,
}

const STRIP_WIDTH: f64 = 560.0;
const STRIP_LABEL: f64 = 150.0;
const STRIP_LANE: f64 = 34.0;

/// Every sample as a dot (spread vertically so equal values stay visible), over a box from the
/// first to the third quartile with a bar at the median.
pub fn strip(s: &mut impl Write, lanes: &[Lane], unit: &str, title: &str) -> fmt::Result {
    let all = lanes.iter().flat_map(|l| l.values.iter().copied());
    let (lo, hi) = all
        .filter(|v| v.is_finite())
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), v| {
            (a.min(v), b.max(v))
        });
    let (lo, hi) = if lo.is_finite() { (lo, hi) } else { (0.0, 1.0) };
    let pad = (hi - lo) * 0.04;
    let (d0, d1, ticks, step) = nice_domain(lo - pad, hi + pad, 5);
    let top = 6.0;
    let bottom = top + STRIP_LANE * lanes.len() as f64;
    let height = bottom + 36.0;
    let x = Scale {
        d0,
        d1,
        r0: STRIP_LABEL,
        r1: STRIP_WIDTH - 26.0,
        log: false,
    };
    svg_open(s, STRIP_WIDTH, height, "strip", title)?;
    for t in &ticks {
        let px = x.map(*t);
        x_grid_line(s, px, (top, bottom), "#e2e8f0", None)?;
        x_tick_label(s, px, bottom + 15.0, fmt_tick(*t, step))?;
    }
    axis_title(s, (x.r0 + x.r1) / 2.0, bottom + 31.0, Esc(unit))?;
    for (i, lane) in lanes.iter().enumerate() {
        let y = top + (i as f64 + 0.5) * STRIP_LANE;
        write!(
            s,
            r#"<text x="6" y="{:.1}" class="lane-label" fill="{}"><title>{}</title>{}</text>"#,
            y + 4.0,
            lane.color,
            Esc(lane.name),
            Esc(&truncate(lane.name, 20))
        )?;
        if let Some([q1, q2, q3]) = lane.quartiles.filter(|q| q.iter().all(|v| v.is_finite())) {
            let (x1, x3) = (x.map(q1), x.map(q3));
            write!(
                s,
                r#"<rect class="box" x="{x1:.1}" y="{:.1}" width="{:.1}" height="22" fill="{}" fill-opacity="0.12" stroke="{}" stroke-opacity="0.5"><title>quartiles {} – {}</title></rect><line class="median" x1="{m:.1}" x2="{m:.1}" y1="{:.1}" y2="{:.1}" stroke="{}" stroke-width="2.5"><title>median {}</title></line>"#,
                y - 11.0,
                (x3 - x1).max(1.0),
                lane.color,
                lane.color,
                format_value(q1),
                format_value(q3),
                y - 13.0,
                y + 13.0,
                lane.color,
                format_value(q2),
                m = x.map(q2),
            )?;
        }
        for (j, v) in lane
            .values
            .iter()
            .enumerate()
            .filter(|(_, v)| v.is_finite())
        {
            // A low-discrepancy vertical spread (golden-ratio steps) instead of random jitter,
            // so the same data always draw the same picture.
            let jitter = ((j as f64 * 0.618_034) % 1.0 - 0.5) * 16.0;
            write!(
                s,
                r#"<circle class="sample" cx="{:.1}" cy="{:.1}" r="3" fill="{}" fill-opacity="0.75"><title>{}</title></circle>"#,
                x.map(*v),
                y + jitter,
                lane.color,
                format_value(*v)
            )?;
        }
    }
    s.write_str("</svg>")?;
    Ok(())
}

/// One side's line in a plot against an x axis of named positions: a point (or a gap) per
/// position, in the axis's order.
pub struct Series<'a, P> {
    pub name: &'a str,
    pub color: &'a str,
    pub points: Vec<Option<P>>,
}

/// One side's latency curve: a value per percentile.
pub type CurveSeries<'a> = Series<'a, f64>;

/// The x axis through named positions: the first at `r0`, the last at `r1` (a linear axis:
/// positions that should spread on a log scale arrive already as logs).
fn positions_axis(positions: &[(String, f64)], r0: f64, r1: f64) -> Scale {
    Scale {
        d0: positions.first().map_or(0.0, |p| p.1),
        d1: positions.last().map_or(1.0, |p| p.1),
        r0,
        r1,
        log: false,
    }
}

const CURVE_WIDTH: f64 = 560.0;
const CURVE_HEIGHT: f64 = 300.0;

/// Latency (y) against percentile (x, at the positions given: see `latency::x_position`), one
/// line per side. The y axis is logarithmic when the values span more than a factor of ten, as
/// tails usually do.
pub fn curve(
    s: &mut impl Write,
    points: &[(String, f64)],
    series: &[CurveSeries],
    unit: &str,
    title: &str,
) -> fmt::Result {
    let values: Vec<f64> = series
        .iter()
        .flat_map(|c| c.points.iter().flatten().copied())
        .collect();
    let (left, right, top, bottom) = (64.0, CURVE_WIDTH - 20.0, 28.0, CURVE_HEIGHT - 44.0);
    let (y, ticks, step) = value_axis(&values, (bottom, top), |_, hi| (0.0, hi));
    let log = y.log;
    let x = positions_axis(points, left + 16.0, right - 16.0);
    svg_open(s, CURVE_WIDTH, CURVE_HEIGHT, "curve", title)?;
    y_grid(s, &ticks, &y, (left, right), log, step)?;
    for (name, px) in points {
        let px = x.map(*px);
        x_grid_line(s, px, (top, bottom), "#f1f5f9", None)?;
        x_tick_label(s, px, bottom + 16.0, Esc(name))?;
    }
    axis_title(s, (left + right) / 2.0, bottom + 34.0, "percentile")?;
    write!(
        s,
        r#"<text x="14" y="{:.1}" text-anchor="middle" class="axis-title" transform="rotate(-90 14 {:.1})">{}{}</text>"#,
        (top + bottom) / 2.0,
        (top + bottom) / 2.0,
        Esc(unit),
        if log { " (log scale)" } else { "" }
    )?;
    for (i, c) in series.iter().enumerate() {
        let lx = left + 10.0 + i as f64 * 150.0;
        write!(
            s,
            r#"<line x1="{lx:.1}" x2="{:.1}" y1="12" y2="12" stroke="{}" stroke-width="2.5"/><text x="{:.1}" y="16" class="legend"><title>{}</title>{}</text>"#,
            lx + 18.0,
            c.color,
            lx + 24.0,
            Esc(c.name),
            Esc(&truncate(c.name, 18))
        )?;
        // Gaps (a point one side lacks) break the line rather than bridge it.
        let mut path = String::new();
        let mut pen_down = false;
        for ((_, px), v) in points.iter().zip(&c.points) {
            match v.filter(|v| v.is_finite()) {
                Some(v) => {
                    let cmd = if pen_down { 'L' } else { 'M' };
                    write!(path, "{cmd}{:.1},{:.1} ", x.map(*px), y.map(v))?;
                    pen_down = true;
                }
                None => pen_down = false,
            }
        }
        write!(
            s,
            r#"<path class="latency-line" d="{}" fill="none" stroke="{}" stroke-width="2.5"/>"#,
            path.trim_end(),
            c.color
        )?;
        for ((name, px), v) in points.iter().zip(&c.points) {
            if let Some(v) = v.filter(|v| v.is_finite()) {
                write!(
                    s,
                    r#"<circle cx="{:.1}" cy="{:.1}" r="3.5" fill="{}"><title>{} {}: {} {}</title></circle>"#,
                    x.map(*px),
                    y.map(v),
                    c.color,
                    Esc(c.name),
                    Esc(name),
                    format_value(v),
                    Esc(unit)
                )?;
            }
        }
    }
    s.write_str("</svg>")?;
    Ok(())
}

/// One side's point in a scaling plot.
#[derive(Debug, Clone)]
pub struct ScalingMark {
    pub mean: f64,
    /// The interval of the mean, where it has one.
    pub interval: Option<(f64, f64)>,
    /// A candidate point the comparison marks (`**`): ringed in its verdict's colour.
    pub marked: Option<Verdict>,
    /// The tooltip: side, parameter value and the numbers.
    pub tooltip: String,
}

/// One side's line in a scaling plot: a point per parameter value.
pub type ScalingSide<'a> = Series<'a, ScalingMark>;

const SCALING_WIDTH: f64 = 420.0;
const SCALING_HEIGHT: f64 = 270.0;

/// A metric (y) against the parameter a series varies (x, at the positions the model gives, so
/// a log axis arrives already as log2), one polyline per side through the points it has, each
/// point with its interval as a vertical bar. Sides are nudged apart horizontally so equal
/// intervals stay visible. The y axis is logarithmic when the values span more than a factor of
/// ten (time against 1 to 256 CPUs), else it spans the data.
pub fn scaling(
    s: &mut impl Write,
    ticks: &[(String, f64)],
    sides: &[ScalingSide],
    x_title: &str,
    unit: &str,
    title: &str,
) -> fmt::Result {
    let values: Vec<f64> = sides
        .iter()
        .flat_map(|side| side.points.iter().flatten())
        .flat_map(|p| {
            std::iter::once(p.mean).chain(p.interval.into_iter().flat_map(|(a, b)| [a, b]))
        })
        .collect();
    let legend_rows = sides.len().div_ceil(3).max(1) as f64;
    let (left, right, top, bottom) = (
        64.0,
        SCALING_WIDTH - 16.0,
        17.0 + 13.0 * legend_rows,
        SCALING_HEIGHT - 44.0,
    );
    let (y, yticks, step) = value_axis(&values, (bottom, top), |lo, hi| {
        let pad = (hi - lo).max(hi.abs() * 0.02) * 0.08;
        (lo - pad, hi + pad)
    });
    let log = y.log;
    let x = positions_axis(ticks, left + 18.0, right - 18.0);
    svg_open(s, SCALING_WIDTH, SCALING_HEIGHT, "scaling", title)?;
    y_grid(s, &yticks, &y, (left, right), log, step)?;
    scaling_ticks(s, ticks, &x, (top, bottom))?;
    // The unit sits top right, beside the legend: eight-digit tick labels (calls per second)
    // leave no room for a rotated title at the left.
    axis_title(s, (left + right) / 2.0, bottom + 34.0, Esc(x_title))?;
    write!(
        s,
        r#"<text x="{right}" y="16" text-anchor="end" class="axis-title">{}{}</text>"#,
        Esc(unit),
        if log { " (log)" } else { "" }
    )?;
    let nudge = |i: usize| (i as f64 - (sides.len() as f64 - 1.0) / 2.0) * 4.0;
    for (i, side) in sides.iter().enumerate() {
        scaling_side(s, side, i, ticks, (&x, &y), nudge(i), left)?;
    }
    s.write_str("</svg>")?;
    Ok(())
}

/// The x axis of a scaling plot: a grid line per value, and its label where it does not touch
/// the one before.
fn scaling_ticks(
    s: &mut impl Write,
    ticks: &[(String, f64)],
    x: &Scale,
    (top, bottom): (f64, f64),
) -> fmt::Result {
    // Every value gets a grid line; labels that would touch the previous one are left out
    // (1 to 256 CPUs crowd at the top of a log axis).
    let mut last_label = f64::NEG_INFINITY;
    for (name, px) in ticks {
        let px = x.map(*px);
        x_grid_line(s, px, (top, bottom), "#f1f5f9", None)?;
        if px - last_label >= 8.0 + 7.0 * name.chars().count() as f64 {
            x_tick_label(s, px, bottom + 16.0, Esc(name))?;
            last_label = px;
        }
    }
    Ok(())
}

/// One side of a scaling plot: its legend entry, its line through its points, each point's
/// interval and mark; `nudge` moves its points aside so the sides' bars do not overlap.
fn scaling_side(
    s: &mut impl Write,
    side: &ScalingSide,
    i: usize,
    ticks: &[(String, f64)],
    (x, y): (&Scale, &Scale),
    nudge: f64,
    left: f64,
) -> fmt::Result {
    // Three legend entries a row, so several candidates stay inside the plot's width.
    let (lx, ly) = (
        left - 40.0 + (i % 3) as f64 * 96.0,
        12.0 + (i / 3) as f64 * 13.0,
    );
    write!(
        s,
        r#"<line x1="{lx:.1}" x2="{:.1}" y1="{ly:.1}" y2="{ly:.1}" stroke="{}" stroke-width="2.5"/><text x="{:.1}" y="{:.1}" class="legend"><title>{}</title>{}</text>"#,
        lx + 16.0,
        side.color,
        lx + 21.0,
        ly + 4.0,
        Esc(side.name),
        Esc(&truncate(side.name, 10))
    )?;
    let placed: Vec<(f64, &ScalingMark)> = ticks
        .iter()
        .zip(&side.points)
        .filter_map(|((_, px), p)| {
            let p = p.as_ref().filter(|p| p.mean.is_finite())?;
            Some((x.map(*px) + nudge, p))
        })
        .collect();
    // One line per side through the points it has: a missing point is a missing marker,
    // and the table below the plot says which.
    let path: Vec<String> = placed
        .iter()
        .map(|(px, p)| format!("{px:.1},{:.1}", y.map(p.mean)))
        .collect();
    if !path.is_empty() {
        write!(
            s,
            r#"<polyline class="scaling-line" points="{}" fill="none" stroke="{}" stroke-width="2.2"/>"#,
            path.join(" "),
            side.color
        )?;
    }
    for (px, p) in &placed {
        if let Some((a, b)) = p.interval.filter(|(a, b)| a.is_finite() && b.is_finite()) {
            let (ya, yb) = (y.map(a), y.map(b));
            write!(
                s,
                r#"<path class="scaling-ci" d="M{px:.1},{ya:.1}V{yb:.1}M{:.1},{ya:.1}h6M{:.1},{yb:.1}h6" stroke="{}" stroke-width="1.4" fill="none"/>"#,
                px - 3.0,
                px - 3.0,
                side.color
            )?;
        }
        let py = y.map(p.mean);
        if let Some(v) = p.marked {
            write!(
                s,
                r#"<circle class="scaling-mark" cx="{px:.1}" cy="{py:.1}" r="7" fill="none" stroke="{}" stroke-width="2"/>"#,
                verdict_color(v)
            )?;
        }
        write!(
            s,
            r#"<circle class="scaling-point" cx="{px:.1}" cy="{py:.1}" r="3.5" fill="{}"><title>{}</title></circle>"#,
            side.color,
            Esc(&p.tooltip)
        )?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Values near f64's largest, whose span overflows, give a domain of their own two ends
    /// instead of a tick count of usize::MAX (a panic: capacity overflow).
    #[test]
    fn a_domain_near_the_largest_float_is_its_ends() {
        let (start, end, ticks, step) = nice_domain(1e308, 1.7e308, 5);
        assert_eq!((start, end), (1e308, 1.7e308));
        assert_eq!(ticks, [1e308, 1.7e308]);
        assert!(step.is_finite() && step > 0.0);
        let (_, _, ticks, _) = nice_domain(-1.7e308, 1.7e308, 5);
        assert_eq!(ticks.len(), 2);
    }
    use schedlab_analysis::{compare, CalibrationSet, Settings, Side};

    fn render(f: impl FnOnce(&mut String) -> fmt::Result) -> String {
        let mut s = String::new();
        f(&mut s).unwrap();
        s
    }

    /// Five cases, three runs per side on one boot; the candidate is 2 % slower per case index.
    fn comparison() -> Comparison {
        let series = |shift: f64| {
            (0..5)
                .map(|i| {
                    let runs: Vec<(String, Vec<f64>)> = (0..3)
                        .map(|r| {
                            let values = (0..8)
                                .map(|j| {
                                    100.0 * (1.0 + shift * i as f64)
                                        + (j % 3) as f64 * 0.3
                                        + r as f64 * 0.2
                                })
                                .collect();
                            ("boot".to_string(), values)
                        })
                        .collect();
                    (
                        format!("case<{i}>"),
                        "usec_per_op".to_string(),
                        Better::Lower,
                        runs,
                    )
                })
                .collect::<Vec<_>>()
        };
        compare(
            Side::from_run_values("base", series(0.0)),
            vec![Side::from_run_values("cand", series(0.02))],
            &CalibrationSet::default(),
            Settings::default(),
            None,
        )
    }

    #[test]
    fn forest_draws_one_ci_line_and_one_dot_per_row() {
        let c = comparison();
        assert_eq!(c.rows.len(), 5);
        assert!(c.rows.iter().all(|r| r.interval_used.is_some()));
        let svg = render(|s| forest(s, &c));
        assert_eq!(svg.matches(r#"class="ci""#).count(), c.rows.len());
        assert_eq!(svg.matches(r#"class="estimate""#).count(), c.rows.len());
        assert_eq!(svg.matches(r#"class="delta-band""#).count(), 1);
        assert!(svg.contains("case&lt;3&gt;"), "case names are escaped");
        assert!(!svg.contains("case<"));
        assert!(svg.starts_with("<svg") && svg.ends_with("</svg>"));
    }

    #[test]
    fn forest_places_the_ci_around_the_estimate() {
        let c = comparison();
        let svg = render(|s| forest(s, &c));
        // The last row (+8 %) has its CI line's ends on either side of its dot.
        let line = svg.rsplit(r#"class="ci" x1=""#).next().unwrap();
        let x1: f64 = line.split('"').next().unwrap().parse().unwrap();
        let x2: f64 = line
            .split("x2=\"")
            .nth(1)
            .unwrap()
            .split('"')
            .next()
            .unwrap()
            .parse()
            .unwrap();
        let dot = svg.rsplit(r#"class="estimate" cx=""#).next().unwrap();
        let cx: f64 = dot.split('"').next().unwrap().parse().unwrap();
        assert!(x1 < cx && cx < x2, "{x1} {cx} {x2}");
    }

    #[test]
    fn strip_draws_every_sample_and_a_box_per_lane() {
        let base = [1.0, 2.0, 3.0, 4.0];
        let cand = [2.0, 2.5, 3.0];
        let lanes = [
            Lane {
                name: "<b>base</b>",
                color: side_color(0),
                values: &base,
                quartiles: Some([1.75, 2.5, 3.25]),
            },
            Lane {
                name: "cand",
                color: side_color(1),
                values: &cand,
                quartiles: Some([2.25, 2.5, 2.75]),
            },
        ];
        let svg = render(|s| strip(s, &lanes, "usec", "t"));
        assert_eq!(svg.matches(r#"class="sample""#).count(), 7);
        assert_eq!(svg.matches(r#"class="box""#).count(), 2);
        assert_eq!(svg.matches(r#"class="median""#).count(), 2);
        assert!(svg.contains("&lt;b&gt;base&lt;/b&gt;") && !svg.contains("<b>"));
    }

    #[test]
    fn strip_survives_identical_values() {
        let same = [5.0, 5.0, 5.0];
        let lanes = [Lane {
            name: "a",
            color: side_color(0),
            values: &same,
            quartiles: Some([5.0, 5.0, 5.0]),
        }];
        let svg = render(|s| strip(s, &lanes, "usec", "t"));
        assert!(!svg.contains("NaN") && !svg.contains("inf"));
    }

    #[test]
    fn curve_breaks_lines_at_gaps_and_uses_log_for_tails() {
        let points: Vec<(String, f64)> = [("p50", 0.301), ("p99", 2.0), ("max", 3.0)]
            .iter()
            .map(|(n, x)| (n.to_string(), *x))
            .collect();
        let series = [
            CurveSeries {
                name: "base",
                color: side_color(0),
                points: vec![Some(5.0), Some(50.0), Some(900.0)],
            },
            CurveSeries {
                name: "cand",
                color: side_color(1),
                points: vec![Some(6.0), None, Some(700.0)],
            },
        ];
        let svg = render(|s| curve(s, &points, &series, "usec", "t"));
        assert!(svg.contains("(log scale)"));
        let paths: Vec<&str> = svg.split(r#"class="latency-line" d=""#).skip(1).collect();
        assert_eq!(paths.len(), 2);
        assert_eq!(paths[0].split('"').next().unwrap().matches('M').count(), 1);
        assert_eq!(paths[1].split('"').next().unwrap().matches('M').count(), 2);
    }

    #[test]
    fn scaling_draws_a_line_per_side_with_bars_and_rings() {
        let ticks: Vec<(String, f64)> = [1.0, 2.0, 4.0, 8.0]
            .iter()
            .map(|v: &f64| (fmt_plain(*v), v.log2()))
            .collect();
        let mark = |mean: f64, interval: Option<(f64, f64)>, marked: Option<Verdict>| {
            Some(ScalingMark {
                mean,
                interval,
                marked,
                tooltip: "<b>tip</b>".into(),
            })
        };
        let sides = [
            ScalingSide {
                name: "base",
                color: side_color(0),
                points: vec![
                    mark(1.0, Some((0.9, 1.1)), None),
                    mark(2.0, Some((1.9, 2.1)), None),
                    mark(4.0, None, None),
                    mark(12.0, Some((11.0, 13.0)), None),
                ],
            },
            ScalingSide {
                name: "cand",
                color: side_color(1),
                points: vec![
                    mark(1.1, Some((1.0, 1.2)), Some(Verdict::Regression)),
                    None,
                    mark(4.4, Some((4.2, 4.6)), Some(Verdict::Regression)),
                    mark(f64::NAN, None, None),
                ],
            },
        ];
        let svg = render(|s| scaling(s, &ticks, &sides, "groups", "sec", "t"));
        assert_eq!(svg.matches(r#"class="scaling-line""#).count(), 2);
        // A gap and a non-finite mean leave two points on the candidate's line.
        let lines: Vec<&str> = svg
            .split(r#"class="scaling-line" points=""#)
            .skip(1)
            .collect();
        assert_eq!(lines[0].split('"').next().unwrap().split(' ').count(), 4);
        assert_eq!(lines[1].split('"').next().unwrap().split(' ').count(), 2);
        assert_eq!(svg.matches(r#"class="scaling-ci""#).count(), 3 + 2);
        assert_eq!(svg.matches(r#"class="scaling-point""#).count(), 6);
        assert_eq!(svg.matches(r#"class="scaling-mark""#).count(), 2);
        assert!(svg.contains("&lt;b&gt;tip&lt;/b&gt;") && !svg.contains("<b>"));
        assert!(
            svg.contains("sec (log)"),
            "0.9 to 13 spans more than ten times"
        );
        assert!(!svg.contains("NaN") && !svg.contains("inf"));
        for label in ["1", "2", "4", "8"] {
            assert!(svg.contains(&format!(">{label}</text>")), "{label}");
        }
    }

    #[test]
    fn numbers_and_ticks_read_well() {
        assert_eq!(fmt_tick(-0.0, 0.5), "0.0");
        assert_eq!(fmt_tick(2.5, 2.5), "2.5");
        assert_eq!(fmt_tick(10.0, 5.0), "10");
        let (lo, hi, ticks, _) = nice_domain(-3.2, 7.9, 8);
        assert!(lo <= -3.2 && hi >= 7.9 && ticks.len() <= 10, "{ticks:?}");
        assert!(ticks.contains(&0.0));
        let (lo, hi, ticks) = log_domain(3.0, 3000.0);
        assert_eq!((lo, hi), (2.0, 5000.0));
        assert_eq!(ticks, vec![2.0, 10.0, 100.0, 1000.0, 5000.0]);
        let (lo, hi, ticks) = log_domain(5.0, 60.0);
        assert_eq!((lo, hi), (5.0, 100.0));
        assert_eq!(ticks, vec![5.0, 10.0, 20.0, 50.0, 100.0]);
        assert_eq!(fmt_plain(1000.0), "1000");
        assert_eq!(fmt_plain(0.5), "0.5");
        assert_eq!(truncate("abcdef", 4), "abc…");
    }
}
