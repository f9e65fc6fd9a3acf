//! A latency curve as the page draws it, for the latency section and the explanation's
//! run-queue delays alike: the curve per side ([`super::svg::curve`]), then its numbers in a
//! table, since lines a few percent apart overlap on a log axis.
use std::fmt::{self, Write};

use schedlab_analysis::latency::Curve;

use super::escape::Esc;
use super::svg;
use crate::number::format_value;

/// A side as a figure draws it: its name and colour, base first.
pub struct Side<'a> {
    pub name: &'a str,
    pub color: &'a str,
}

/// The figure: `caption` (markup, escaped by the caller), the plot titled `title` for screen
/// readers, and the table; `samples`, where given, is each side's count of values, a column of
/// its own after the side's name.
pub fn figure(
    s: &mut impl Write,
    curve: &Curve,
    sides: &[Side],
    caption: &str,
    title: &str,
    samples: Option<&[u64]>,
) -> fmt::Result {
    let points: Vec<(String, f64)> = curve
        .points
        .iter()
        .map(|p| p.label())
        .zip(curve.x.iter().copied())
        .collect();
    let series: Vec<svg::CurveSeries> = sides
        .iter()
        .zip(&curve.values)
        .map(|(side, values)| svg::CurveSeries {
            name: side.name,
            color: side.color,
            points: values.clone(),
        })
        .collect();
    write!(
        s,
        r#"<figure class="latency"><figcaption>{caption}</figcaption>"#
    )?;
    svg::curve(s, &points, &series, &curve.unit, title)?;
    table(s, curve, &points, sides, samples)?;
    s.write_str("</figure>")?;
    Ok(())
}

/// A row per side, candidates with their change from the baseline.
fn table(
    s: &mut impl Write,
    curve: &Curve,
    points: &[(String, f64)],
    sides: &[Side],
    samples: Option<&[u64]>,
) -> fmt::Result {
    write!(
        s,
        r#"<table class="pct"><thead><tr><th>{}</th>"#,
        Esc(&curve.unit)
    )?;
    if samples.is_some() {
        s.write_str(r#"<th class="num">delays</th>"#)?;
    }
    for (label, _) in points {
        write!(s, r#"<th class="num">{}</th>"#, Esc(label))?;
    }
    s.write_str("</tr></thead><tbody>")?;
    for (i, (side, values)) in sides.iter().zip(&curve.values).enumerate() {
        write!(
            s,
            r#"<tr><td><span class="dot" style="background:{}"></span>{}</td>"#,
            side.color,
            Esc(&svg::truncate(side.name, 24))
        )?;
        if let Some(samples) = samples {
            write!(
                s,
                r#"<td class="num">{}</td>"#,
                samples.get(i).copied().unwrap_or(0)
            )?;
        }
        for (j, v) in values.iter().enumerate() {
            let Some(v) = v else {
                s.write_str(r#"<td class="num">—</td>"#)?;
                continue;
            };
            write!(s, r#"<td class="num">{}"#, format_value(*v))?;
            if let Some(change) = curve.changes.get(i).and_then(|c| c[j]) {
                write!(s, r#"<div class="muted">{change:+.1}%</div>"#)?;
            }
            s.write_str("</td>")?;
        }
        s.write_str("</tr>")?;
    }
    s.write_str("</tbody></table>")?;
    Ok(())
}
