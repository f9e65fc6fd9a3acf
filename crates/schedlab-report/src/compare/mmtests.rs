//! The mmtests style (compare-mmtests.pl): per case and metric, rows Min, Amean (Hmean when higher
//! is better), Stddev, CoeffVar and Max, each candidate's value with its gain over the baseline in
//! percent (positive is better); the mean row carries `*` marks where schedlab marks the change.
use schedlab_core::metric::Better;
use schedlab_stats::summary::harmonic_mean;

use super::table::{Align, Table};
use super::{Comparison, Verdict};
use crate::text::format_value;

/// A row of the block: its name, which statistic it shows, and which way that statistic improves.
type StatLine<'a> = (&'a str, fn(&Stats) -> f64, Better);

struct Stats {
    min: f64,
    mean: f64,
    stddev: f64,
    coeff_var: f64,
    max: f64,
}

fn stats(samples: &[f64], better: Better) -> Option<Stats> {
    let s = schedlab_stats::summary::summarize(samples).ok()?;
    let mean = match better {
        Better::Higher => harmonic_mean(samples).unwrap_or(s.mean),
        Better::Lower => s.mean,
    };
    let stddev = s.std.unwrap_or(0.0);
    Some(Stats {
        min: s.min,
        mean,
        stddev,
        coeff_var: s.std_pct.unwrap_or(0.0),
        max: s.max,
    })
}

/// mmtests' gain: positive when the candidate is better.
fn gain(base: f64, cand: f64, better: Better) -> f64 {
    if base == 0.0 {
        return 0.0;
    }
    match better {
        Better::Lower => (base - cand) / base * 100.0,
        Better::Higher => (cand - base) / base * 100.0,
    }
}

pub fn tables(c: &Comparison) -> Vec<(String, Table)> {
    let mut columns = vec![
        ("", Align::Left),
        ("", Align::Left),
        (c.base.name.as_str(), Align::Right),
    ];
    for candidate in &c.candidates {
        columns.push((candidate.name.as_str(), Align::Right));
    }
    let mut table = Table::new(&columns);
    // One block per case × metric, candidates side by side.
    for rows in c.rows_by_case_metric() {
        let metric = &rows[0].metric;
        let first = rows[0];
        let Some(base) = stats(&first.base_samples, first.better) else {
            continue;
        };
        let name = if first.label.load == "-" {
            format!("{} {metric}", first.label.short)
        } else {
            format!("{}-{} {metric}", first.label.short, first.label.load)
        };
        let mean_name = if first.better == Better::Higher {
            "Hmean"
        } else {
            "Amean"
        };
        let lines: [StatLine; 5] = [
            ("Min", |s| s.min, first.better),
            (mean_name, |s| s.mean, first.better),
            ("Stddev", |s| s.stddev, Better::Lower),
            ("CoeffVar", |s| s.coeff_var, Better::Lower),
            ("Max", |s| s.max, first.better),
        ];
        for (line, pick, better) in lines {
            let mut cells = vec![
                line.to_string(),
                name.clone(),
                format!("{} (   0.00%)", format_value(pick(&base))),
            ];
            for candidate in &c.candidates {
                let cell = rows
                    .iter()
                    .find(|r| r.candidate == candidate.name)
                    .and_then(|r| stats(&r.candidate_samples, r.better).map(|s| (r, s)))
                    .map(|(r, s)| {
                        let g = gain(pick(&base), pick(&s), better);
                        let marked = line == mean_name
                            && matches!(r.verdict, Verdict::Regression | Verdict::Improvement);
                        if marked {
                            format!("{} *{g:7.2}%*", format_value(pick(&s)))
                        } else {
                            format!("{} ({g:7.2}%)", format_value(pick(&s)))
                        }
                    })
                    .unwrap_or_else(|| "-".to_string());
                cells.push(cell);
            }
            table.push(cells);
        }
    }
    vec![(
        format!(
            "{} vs {}",
            c.candidates
                .iter()
                .map(|s| s.name.as_str())
                .collect::<Vec<_>>()
                .join(", "),
            c.base.name
        ),
        table,
    )]
}
