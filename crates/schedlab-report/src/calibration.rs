//! How `schedlab calibrate` shows a calibration: per case × metric the spread within a run,
//! between runs and between boots, and the smallest change 1, 2, 3 and 5 runs per side can
//! detect on this machine — as text or JSON. The numbers come from the analysis
//! (`schedlab_analysis::calibration::report`).
use std::io::Write;

use schedlab_analysis::calibration::{CalibrationReport, DETECTABLE_RUNS};
use schedlab_core::words;

use crate::compare::table::{Align, Table};
use crate::model::format_time_ns;

fn pct(v: Option<f64>) -> String {
    v.map_or("-".to_string(), |v| format!("{v:.2}%"))
}

pub fn write_text(r: &CalibrationReport, out: &mut dyn Write) -> std::io::Result<()> {
    writeln!(
        out,
        "calibration {} · {} · label {} · host {} · {} on {}",
        r.id.map_or("(not stored)".to_string(), |id| id.to_string()),
        format_time_ns(r.created_at_ns),
        r.label,
        r.hostname,
        words::counted(r.runs, "run"),
        words::counted(r.boots, "boot"),
    )?;
    let runs: Vec<String> = DETECTABLE_RUNS.iter().map(|k| k.to_string()).collect();
    let same = format!("detectable, {} runs/side", runs.join("/"));
    let across = format!("across boots, {}", runs.join("/"));
    let mut table = Table::new(&[
        ("case", Align::Left),
        ("metric", Align::Left),
        ("n", Align::Right),
        ("within run σ", Align::Right),
        ("between runs τ", Align::Right),
        ("between boots ω", Align::Right),
        (same.as_str(), Align::Right),
        (across.as_str(), Align::Right),
    ]);
    let list = |values: &[Option<f64>]| {
        values
            .iter()
            .map(|v| v.map_or("-".to_string(), |v| format!("{v:.1}%")))
            .collect::<Vec<_>>()
            .join(" / ")
    };
    for m in &r.rows {
        table.push(vec![
            m.case.clone(),
            m.metric.clone(),
            m.iterations.to_string(),
            pct(m.within_run_pct),
            pct(m.between_run_pct),
            pct(m.between_boot_pct),
            list(&m.detectable_same_boot),
            list(&m.detectable_across_boots),
        ]);
    }
    table.write_text(out)?;
    writeln!(
        out,
        "detectable: the smallest change found with 80% power at α = {} for one row, with that many runs per side \
         (on one boot: settings, `schedlab ab`; across boots: kernels, one boot per side); a report of many rows \
         needs larger changes. Across boots needs a calibration whose runs span several boots.",
        r.alpha
    )
}

pub fn write_json(r: &CalibrationReport, out: &mut dyn Write) -> std::io::Result<()> {
    crate::json::write_versioned(r, out)
}
