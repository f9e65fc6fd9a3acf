//! The CSV format of comparisons: one flat line per row with every figure, whatever the style.
use std::io::Write;

use super::Comparison;

const HEADER: [&str; 28] = [
    "candidate",
    "case",
    "case_short",
    "load",
    "metric",
    "unit",
    "better",
    "replication",
    "n_base",
    "n_candidate",
    "base_median",
    "base_mean",
    "base_std_pct",
    "candidate_median",
    "candidate_mean",
    "candidate_std_pct",
    "ratio",
    "change_pct",
    "ci_low_pct",
    "ci_high_pct",
    "ratio_of_medians",
    "bootstrap_low_pct",
    "bootstrap_high_pct",
    "p_value",
    "q_value",
    "mde_pct",
    "verdict",
    "note",
];

fn num(v: Option<f64>) -> String {
    v.map_or(String::new(), |v| format!("{v}"))
}

pub fn write(c: &Comparison, out: &mut dyn Write) -> std::io::Result<()> {
    let mut writer = ::csv::Writer::from_writer(out);
    writer.write_record(HEADER)?;
    for r in &c.rows {
        let pct = |x: f64| (x - 1.0) * 100.0;
        writer.write_record([
            r.candidate.clone(),
            r.case.clone(),
            r.label.short.clone(),
            r.label.load.clone(),
            r.metric.clone(),
            r.unit.clone(),
            r.better.as_str().to_string(),
            format!("{:?}", r.replication).to_lowercase(),
            r.base_samples.len().to_string(),
            r.candidate_samples.len().to_string(),
            num(r.base.map(|s| s.median)),
            num(r.base.map(|s| s.mean)),
            num(r.base.and_then(|s| s.std_pct)),
            num(r.candidate_summary.map(|s| s.median)),
            num(r.candidate_summary.map(|s| s.mean)),
            num(r.candidate_summary.and_then(|s| s.std_pct)),
            num(r.ratio),
            num(r.change_pct),
            num(r.ratio_ci.map(|ci| pct(ci.low))),
            num(r.ratio_ci.map(|ci| pct(ci.high))),
            num(r.ratio_of_medians),
            num(r.ratio_of_medians_ci.map(|ci| pct(ci.low))),
            num(r.ratio_of_medians_ci.map(|ci| pct(ci.high))),
            num(r.p_value),
            num(r.q_value),
            num(r.mde_pct),
            r.verdict.as_str().to_string(),
            r.note.clone().unwrap_or_default(),
        ])?;
    }
    writer.flush()
}
