//! The decision procedure on generated matrices that drift from run to run, as real machines do:
//! a 48-case matrix where every run has its own offset (τ, 2–10 % per case) on top of its
//! iterations' noise (σ, 1–5 %), 5 iterations per run. A test without that run-level component
//! cannot fail for the bug that matters — iterations of one run taken as independent samples —
//! and the last test shows this generator does catch it.
//!
//! No timing is involved: the data are synthetic and the seeds fixed.
use schedlab_analysis::calibration::{CaseCalibration, MetricCalibration};
use schedlab_analysis::{
    compare, Calibration, CalibrationSet, MachineKey, Settings, Side, Verdict,
};
use schedlab_core::metric::Better;
use schedlab_core::rng::SplitMix64;

mod common;
use common::{case_name, Case, Noise};

const CASES: usize = 48;
const ITERATIONS: usize = 5;
const REPORTS: usize = 500;
const METRIC: &str = "time_sec";

fn matrix(g: &mut SplitMix64) -> Vec<Case> {
    let noise = Noise {
        omega: None,
        tau: (0.02, 0.10),
        sigma: (0.01, 0.05),
    };
    common::matrix(g, CASES, 1.0, &noise)
}

/// One run's iterations: the run's own offset, then each iteration's noise.
fn run(g: &mut SplitMix64, case: Case, tau: f64, shift: f64) -> Vec<f64> {
    let offset = tau * g.normal();
    (0..ITERATIONS)
        .map(|_| (case.centre + shift + offset + case.sigma * g.normal()).exp())
        .collect()
}

/// A side of `k` runs per case on one boot; `shift(i)` moves case i (log scale).
fn side(
    g: &mut SplitMix64,
    name: &str,
    cases: &[Case],
    k: usize,
    shift: impl Fn(usize) -> f64,
) -> Side {
    let series = cases
        .iter()
        .enumerate()
        .map(|(i, c)| {
            let runs = (0..k)
                .map(|_| ("boot".to_string(), run(g, *c, c.tau, shift(i))))
                .collect();
            (case_name(i), METRIC.to_string(), Better::Lower, runs)
        })
        .collect();
    Side::from_run_values(name, series)
}

/// A calibration of `runs` runs per case on one boot, made while each case's run offset was
/// `tau_factor` × its true τ.
fn calibration(g: &mut SplitMix64, cases: &[Case], runs: usize, tau_factor: f64) -> CalibrationSet {
    let cases = cases
        .iter()
        .enumerate()
        .map(|(i, c)| {
            let values: Vec<(&str, Vec<f64>)> = (0..runs)
                .map(|_| ("boot", run(g, *c, c.tau * tau_factor, 0.0)))
                .collect();
            CaseCalibration {
                case: case_name(i),
                spec: serde_json::Value::Null,
                iterations: ITERATIONS,
                metrics: vec![MetricCalibration::from_run_values(METRIC, &values).unwrap()],
            }
        })
        .collect();
    CalibrationSet::new(vec![Calibration {
        id: Some(1),
        created_at_ns: 0,
        label: "calibration".into(),
        machine: MachineKey::default(),
        run_ids: (1..=runs as i64).collect(),
        boots: 1,
        cases,
    }])
}

/// Generates `REPORTS` A/A reports (or A/B with `shift`) and returns each report's rows.
fn reports(
    seed: u64,
    k: usize,
    calibration_runs: Option<usize>,
    tau_factor: f64,
    shift: impl Fn(&[Case], usize) -> f64 + Copy,
    mut per_report: impl FnMut(&[Case], &schedlab_analysis::Comparison),
) {
    let mut g = SplitMix64::new(seed);
    for _ in 0..REPORTS {
        let cases = matrix(&mut g);
        let cals = match calibration_runs {
            Some(c) => calibration(&mut g, &cases, c, tau_factor),
            None => CalibrationSet::default(),
        };
        let base = side(&mut g, "base", &cases, k, |_| 0.0);
        let cand = side(&mut g, "cand", &cases, k, |i| shift(&cases, i));
        let c = compare(base, vec![cand], &cals, Settings::default(), None);
        assert_eq!(c.rows.len(), CASES);
        per_report(&cases, &c);
    }
}

fn marks(c: &schedlab_analysis::Comparison) -> usize {
    c.rows.iter().filter(|r| r.verdict.is_marked()).count()
}

#[test]
fn aa_false_marks_stay_rare_whatever_the_runs_and_calibration() {
    let mut failures = Vec::new();
    for k in [1, 2, 3, 5] {
        for calibration_runs in [None, Some(6), Some(20)] {
            let seed = 1000 * k as u64 + calibration_runs.unwrap_or(0) as u64;
            let (mut total, mut judged) = (0usize, 0usize);
            reports(
                seed,
                k,
                calibration_runs,
                1.0,
                |_, _| 0.0,
                |_, c| {
                    total += marks(c);
                    judged += c.footer.comparisons;
                },
            );
            let per_report = total as f64 / REPORTS as f64;
            eprintln!(
                "k={k} calibration={calibration_runs:?}: {per_report:.3} false marks per report ({judged} judged rows)"
            );
            if k == 1 && calibration_runs.is_none() {
                assert_eq!(
                    judged, 0,
                    "one run per side without calibration is not judged"
                );
            } else {
                assert!(judged > 0);
            }
            if per_report > 0.06 {
                failures.push(format!(
                    "k={k} calibration={calibration_runs:?}: {per_report}"
                ));
            }
        }
    }
    assert!(failures.is_empty(), "too many false marks: {failures:?}");
}

#[test]
fn a_stale_calibration_is_widened_by_the_guard() {
    for calibration_runs in [6, 20] {
        let mut total = 0;
        let mut factors = Vec::new();
        reports(
            77 + calibration_runs as u64,
            1,
            Some(calibration_runs),
            0.5,
            |_, _| 0.0,
            |_, c| {
                total += marks(c);
                factors.push(c.guard.factor);
            },
        );
        let per_report = total as f64 / REPORTS as f64;
        factors.sort_by(f64::total_cmp);
        let median_factor = factors[factors.len() / 2];
        eprintln!(
            "stale calibration of {calibration_runs} runs (τ half the true one): {per_report:.3} false marks per report, median guard factor {median_factor:.2}"
        );
        assert!(
            median_factor > 1.5,
            "the guard did not notice: {median_factor}"
        );
        assert!(per_report <= 0.25, "{per_report} false marks per report");
    }
}

#[test]
fn ten_percent_changes_in_quiet_cases_are_found() {
    let quiet = |c: &Case| c.tau <= 0.04;
    let shift = |cases: &[Case], i: usize| {
        if quiet(&cases[i]) {
            1.10_f64.ln()
        } else {
            0.0
        }
    };
    let (mut found, mut changed, mut false_marks) = (0usize, 0usize, 0usize);
    reports(4242, 5, Some(20), 1.0, shift, |cases, c| {
        for (case, row) in cases.iter().zip(&c.rows) {
            if quiet(case) {
                changed += 1;
                found += usize::from(row.verdict == Verdict::Regression);
            } else {
                false_marks += usize::from(row.verdict.is_marked());
            }
        }
    });
    let power = found as f64 / changed as f64;
    eprintln!(
        "10 % regressions in {changed} quiet cases: {:.1} % marked; {false_marks} marks among unchanged cases",
        power * 100.0
    );
    assert!(power >= 0.70, "power {power}");
}

#[test]
fn two_runs_per_side_can_mark_a_large_change() {
    let mut found = 0;
    reports(
        99,
        2,
        None,
        1.0,
        |_, _| 1.5_f64.ln(),
        |_, c| {
            found += marks(c);
        },
    );
    let rate = found as f64 / (REPORTS * CASES) as f64;
    eprintln!(
        "+50 % everywhere with two runs per side and no calibration: {:.1} % of rows marked",
        rate * 100.0
    );
    assert!(rate > 0.5, "{rate}");
}

/// The negative control: the same data with each run's iterations taken as independent samples
/// (today's mistake, made here on purpose) cries wolf — so the tests above can fail for it.
#[test]
fn iterations_taken_as_units_cry_wolf_on_this_generator() {
    let mut g = SplitMix64::new(31337);
    let mut total = 0;
    let reports = 50;
    for _ in 0..reports {
        let cases = matrix(&mut g);
        let pooled = |g: &mut SplitMix64, name: &str| {
            let series = cases
                .iter()
                .enumerate()
                .map(|(i, c)| {
                    let values: Vec<f64> = (0..3).flat_map(|_| run(g, *c, c.tau, 0.0)).collect();
                    (case_name(i), METRIC.to_string(), Better::Lower, values)
                })
                .collect();
            Side::from_values(name, series)
        };
        let (base, cand) = (pooled(&mut g, "base"), pooled(&mut g, "cand"));
        let c = compare(
            base,
            vec![cand],
            &CalibrationSet::default(),
            Settings::default(),
            None,
        );
        total += marks(&c);
    }
    let per_report = total as f64 / reports as f64;
    eprintln!("iterations as units: {per_report:.1} false marks per report");
    assert!(per_report > 5.0, "{per_report}");
}

/// One run per side judged on a calibration: a run that is far noisier inside than the
/// calibration's runs were brings its own noise into the test (`within_excess`), so a shift
/// it cannot support is not marked, while the same shift between quiet runs is.
#[test]
fn a_run_noisier_inside_than_calibrated_brings_its_own_noise() {
    let mut g = SplitMix64::new(7);
    let case = Case {
        centre: 3.0,
        omega: 0.0,
        tau: 0.01,
        sigma: 0.01,
    };
    let cals = calibration(&mut g, &[case], 6, 1.0);
    let one_run = |g: &mut SplitMix64, name: &str, sigma: f64, shift: f64| {
        let noisy = Case { sigma, ..case };
        let runs = vec![("boot".to_string(), run(g, noisy, case.tau, shift))];
        Side::from_run_values(
            name,
            vec![(case_name(0), METRIC.to_string(), Better::Lower, runs)],
        )
    };
    let settings = Settings::default();
    let base = one_run(&mut g, "base", 0.01, 0.0);
    let quiet = one_run(&mut g, "quiet", 0.01, 0.10);
    let noisy = one_run(&mut g, "noisy", 0.30, 0.10);
    let report = compare(base, vec![quiet, noisy], &cals, settings, None);
    let row = |name: &str| {
        report
            .rows
            .iter()
            .find(|r| r.candidate == name)
            .expect("row")
    };
    assert_eq!(row("quiet").verdict, Verdict::Regression);
    let quiet = &row("quiet").variance;
    assert!(quiet.within_excess < quiet.calibration.expect("calibrated").variance);
    let noisy = row("noisy");
    assert!(noisy.variance.within_excess > 0.0);
    let used = noisy.variance.used.expect("judged").variance;
    assert!(used > 10.0 * noisy.variance.calibration.expect("calibrated").variance);
    assert!(
        !matches!(noisy.verdict, Verdict::Regression | Verdict::Improvement),
        "{:?}",
        noisy.verdict
    );
}
