//! The CSV format of comparisons: one flat line per row with every figure, whatever the style
//! (columns documented in docs/json-schema.md).
use std::io::Write;

use super::phrases::row_note;

use crate::csv::CsvOut;

use schedlab_analysis::model::Comparison;
use schedlab_stats::ministat::MinistatVitals;

const HEADER: [&str; 34] = [
    "candidate",
    "case",
    "case_short",
    "load",
    "metric",
    "unit",
    "better",
    "design",
    "scale",
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
    "variance_source",
    "df",
    "p_value",
    "q_value",
    "equivalence_p_value",
    "mde_pct",
    "units_needed",
    "decided_at_round",
    "verdict",
    "note",
    // Last, so the columns scripts already read by position keep their numbers.
    "base_spread_pct",
    "candidate_spread_pct",
    "restates",
];

/// One dataset alone: a header and one line of its vitals.
pub fn write_dataset(
    name: &str,
    vitals: &MinistatVitals,
    out: &mut dyn Write,
) -> std::io::Result<()> {
    let mut writer = CsvOut::new(out);
    writer.row(["name", "n", "min", "max", "median", "avg", "stddev"])?;
    writer.row([
        name.to_string(),
        vitals.n.to_string(),
        vitals.min.to_string(),
        vitals.max.to_string(),
        vitals.median.to_string(),
        vitals.avg.to_string(),
        vitals.stddev.to_string(),
    ])?;
    writer.finish()
}

fn num(v: Option<f64>) -> String {
    v.map_or(String::new(), |v| format!("{v}"))
}

pub fn write(c: &Comparison, out: &mut dyn Write) -> std::io::Result<()> {
    let mut writer = CsvOut::new(out);
    writer.row(HEADER)?;
    for r in &c.rows {
        writer.row([
            r.candidate.clone(),
            r.case.clone(),
            r.case_short.clone(),
            r.load.clone(),
            r.metric.clone(),
            r.unit.clone(),
            r.better.as_str().to_string(),
            if r.pairs_by_boot {
                "pairs_within_runs_by_boot".to_string()
            } else if r.pairs_within_runs {
                "pairs_within_runs".to_string()
            } else {
                r.design.noun().to_string()
            },
            serde_name(&r.scale),
            r.base_side.n.to_string(),
            r.candidate_side.n.to_string(),
            num(r.base_side.median),
            num(r.base_side.mean),
            num(r.base_side.std_pct),
            num(r.candidate_side.median),
            num(r.candidate_side.mean),
            num(r.candidate_side.std_pct),
            num(r.ratio),
            num(r.change_pct),
            num(r.ci_pct().map(|ci| ci.0)),
            num(r.ci_pct().map(|ci| ci.1)),
            serde_name(&r.variance.source),
            num(r.test.df()),
            num(r.p_value),
            num(r.q_value),
            num(r.equivalence_p_value),
            num(r.mde_pct),
            r.units_needed.map_or(String::new(), |k| k.to_string()),
            r.decided_at_round.map_or(String::new(), |k| k.to_string()),
            serde_name(&r.verdict),
            r.note.as_ref().map_or(String::new(), row_note),
            num(r.base_side.spread_pct),
            num(r.candidate_side.spread_pct),
            r.restates.map_or(String::new(), |r| r.metric.to_string()),
        ])?;
    }
    writer.finish()
}

/// An enum's JSON name, so CSV and JSON spell values alike.
fn serde_name<T: serde::Serialize>(value: &T) -> String {
    serde_json::to_value(value)
        .ok()
        .and_then(|v| v.as_str().map(str::to_string))
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use schedlab_analysis::{compare, CalibrationSet, Settings, Side};
    use schedlab_core::metric::Better;

    /// One run per side: no spread between units, so std% is empty, but the spread the text and
    /// HTML print (within the one run) is in its own column.
    #[test]
    fn one_run_per_side_has_the_spread_the_tables_print() {
        let side = |name: &str, level: f64| {
            let values = vec![level * 0.98, level, level * 1.02];
            Side::from_run_values(
                name,
                vec![(
                    "case".into(),
                    "usec_per_op".into(),
                    Better::Lower,
                    vec![("boot".into(), values)],
                )],
            )
        };
        let c = compare(
            side("base", 100.0),
            vec![side("cand", 110.0)],
            &CalibrationSet::default(),
            Settings::default(),
            None,
        );
        let mut out = Vec::new();
        super::write(&c, &mut out).unwrap();
        let mut reader = ::csv::Reader::from_reader(out.as_slice());
        let header = reader.headers().unwrap().clone();
        let row = reader.records().next().unwrap().unwrap();
        let get = |column: &str| &row[header.iter().position(|h| h == column).unwrap()];
        let figures = (&c.rows[0].base_side, &c.rows[0].candidate_side);
        assert_eq!(get("base_std_pct"), "");
        assert_eq!(get("candidate_std_pct"), "");
        let spread = |cell: &str| cell.parse::<f64>().unwrap();
        assert_eq!(Some(spread(get("base_spread_pct"))), figures.0.spread_pct);
        assert_eq!(
            Some(spread(get("candidate_spread_pct"))),
            figures.1.spread_pct
        );
        assert!(spread(get("base_spread_pct")) > 1.0);
    }
}
