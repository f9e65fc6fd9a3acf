//! How long `compare` takes for seed 004's matrix: 48 cases, 5 runs of 5 iterations per side, with
//! a 20-run calibration — every row's t test, TOST, exact noncentral-t MDE, units needed and
//! style figures. Prints the median of several timings; the target is well under one second. Run
//! with `cargo bench -p schedlab-analysis --bench compare_speed`.
use std::time::Instant;

use schedlab_analysis::calibration::{CaseCalibration, MetricCalibration};
use schedlab_analysis::{compare, Calibration, CalibrationSet, MachineKey, Settings, Side};
use schedlab_core::metric::Better;

/// A reproducible value near `centre` (±2 %).
fn value(state: &mut u64, centre: f64) -> f64 {
    *state = state
        .wrapping_mul(6364136223846793005)
        .wrapping_add(1442695040888963407);
    centre * (1.0 + ((*state >> 11) as f64 / (1u64 << 53) as f64 - 0.5) * 0.04)
}

fn runs(seed: u64, count: usize, centre: f64) -> Vec<(String, Vec<f64>)> {
    let mut state = seed;
    (0..count)
        .map(|_| {
            let offset = value(&mut state, 1.0);
            let values = (0..5).map(|_| value(&mut state, centre * offset)).collect();
            ("boot".to_string(), values)
        })
        .collect()
}

fn main() {
    let side = |name: &str, offset: u64| {
        let series = (0..48)
            .map(|case| {
                (
                    format!("case-{case:02}"),
                    "time_sec".to_string(),
                    Better::Lower,
                    runs(case * 2 + offset, 5, 1.0 + case as f64),
                )
            })
            .collect();
        Side::from_run_values(name, series)
    };
    let cases = (0..48)
        .map(|case| {
            let values = runs(case * 7 + 100, 20, 1.0 + case as f64);
            let values: Vec<(&str, Vec<f64>)> = values
                .iter()
                .map(|(b, v)| (b.as_str(), v.clone()))
                .collect();
            CaseCalibration {
                case: format!("case-{case:02}"),
                spec: serde_json::Value::Null,
                iterations: 5,
                metrics: vec![MetricCalibration::from_run_values("time_sec", &values).unwrap()],
            }
        })
        .collect();
    let calibrations = CalibrationSet::new(vec![Calibration {
        id: Some(1),
        created_at_ns: 0,
        label: "bench".into(),
        machine: MachineKey::default(),
        run_ids: (1..=20).collect(),
        boots: 1,
        cases,
    }]);
    let mut timings = Vec::new();
    for _ in 0..7 {
        let (base, cand) = (side("base", 0), side("cand", 1));
        let start = Instant::now();
        let comparison = compare(base, vec![cand], &calibrations, Settings::default(), None);
        timings.push(start.elapsed().as_secs_f64());
        assert_eq!(comparison.rows.len(), 48);
    }
    timings.sort_by(f64::total_cmp);
    println!(
        "compare: 48 cases x 5 runs x 5 iterations per side, 20-run calibration: median {:.1} ms (min {:.1} ms, max {:.1} ms)",
        timings[3] * 1e3,
        timings[0] * 1e3,
        timings[6] * 1e3
    );
}
