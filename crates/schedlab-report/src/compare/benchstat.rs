//! The benchstat style: per metric, each side's median ± the half-width of its order-statistic
//! confidence interval, and per candidate `vs base`: `~` when Mann–Whitney's p exceeds 0.05,
//! otherwise the change of medians, always with `(p=… n=…)`; a geomean row when there are several
//! cases. The numbers are benchstat's own, so its reading and schedlab's marks can be set side by
//! side.
use schedlab_stats::rank::mann_whitney_u;
use schedlab_stats::summary::{geometric_mean, median_ci};

use super::table::{Align, Table};
use super::{Comparison, Row};
use crate::text::format_value;

/// benchstat's defaults.
const ALPHA: f64 = 0.05;
const CONFIDENCE: f64 = 0.95;
/// benchstat cannot detect a difference with fewer samples than this on a side.
const MIN_DETECT: usize = 4;

pub const NOTE_CI: &str = "¹ need >= 6 samples for confidence interval at level 0.95";
pub const NOTE_DETECT: &str = "² need >= 4 samples to detect a difference at alpha level 0.05";

fn center_cell(samples: &[f64], notes: &mut Vec<&'static str>) -> String {
    match median_ci(samples, CONFIDENCE) {
        Ok(Some(ci)) if ci.median != 0.0 => {
            let spread =
                (ci.ci.high - ci.median).max(ci.median - ci.ci.low) / ci.median.abs() * 100.0;
            format!("{} ± {spread:.0}%", format_value(ci.median))
        }
        _ => {
            if !notes.contains(&NOTE_CI) {
                notes.push(NOTE_CI);
            }
            let median = schedlab_stats::summary::median(samples).unwrap_or(f64::NAN);
            format!("{} ± ∞ ¹", format_value(median))
        }
    }
}

fn delta_cell(row: &Row, notes: &mut Vec<&'static str>) -> String {
    let (nb, nc) = (row.base_samples.len(), row.candidate_samples.len());
    let n = if nb == nc {
        format!("n={nb}")
    } else {
        format!("n={nb}+{nc}")
    };
    let Ok(test) = mann_whitney_u(&row.base_samples, &row.candidate_samples) else {
        return "?".to_string();
    };
    if nb.min(nc) < MIN_DETECT {
        if !notes.contains(&NOTE_DETECT) {
            notes.push(NOTE_DETECT);
        }
        return format!("~ (p={:.3} {n}) ²", test.p_value);
    }
    if test.p_value > ALPHA {
        return format!("~ (p={:.3} {n})", test.p_value);
    }
    let median = |xs: &[f64]| schedlab_stats::summary::median(xs).unwrap_or(f64::NAN);
    let change = (median(&row.candidate_samples) / median(&row.base_samples) - 1.0) * 100.0;
    format!("{change:+.2}% (p={:.3} {n})", test.p_value)
}

pub fn tables(c: &Comparison) -> Vec<(String, Table, Vec<&'static str>)> {
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
        let mut table = Table::new(&headers);
        let mut cases: Vec<&str> = Vec::new();
        for row in c.rows.iter().filter(|r| r.metric == metric) {
            if !cases.contains(&row.case.as_str()) {
                cases.push(&row.case);
            }
        }
        let mut base_centers = Vec::new();
        let mut cand_centers: Vec<Vec<f64>> = vec![Vec::new(); c.candidates.len()];
        for case in &cases {
            let rows: Vec<&Row> = c
                .rows
                .iter()
                .filter(|r| r.metric == metric && r.case == *case)
                .collect();
            let base_samples = &rows[0].base_samples;
            base_centers.push(schedlab_stats::summary::median(base_samples).unwrap_or(f64::NAN));
            let mut cells = vec![case.to_string(), center_cell(base_samples, &mut notes)];
            for (i, candidate) in c.candidates.iter().enumerate() {
                match rows.iter().find(|r| r.candidate == candidate.name) {
                    Some(row) => {
                        cand_centers[i].push(
                            schedlab_stats::summary::median(&row.candidate_samples)
                                .unwrap_or(f64::NAN),
                        );
                        cells.push(center_cell(&row.candidate_samples, &mut notes));
                        cells.push(delta_cell(row, &mut notes));
                    }
                    None => cells.extend(["-".to_string(), "-".to_string()]),
                }
            }
            table.push(cells);
        }
        if cases.len() > 1 {
            let base_geo = geometric_mean(&base_centers).ok();
            let mut cells = vec![
                "geomean".to_string(),
                base_geo.map_or("-".into(), format_value),
            ];
            for centers in &cand_centers {
                let geo = geometric_mean(centers).ok();
                cells.push(geo.map_or("-".into(), format_value));
                cells.push(match (base_geo, geo) {
                    (Some(b), Some(g)) if b != 0.0 => format!("{:+.2}%", (g / b - 1.0) * 100.0),
                    _ => "-".into(),
                });
            }
            table.push(cells);
        }
        out.push((metric.to_string(), table, notes));
    }
    out
}
