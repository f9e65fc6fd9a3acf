//! The decision procedure of `compare` on small hand-made sides whose every number is chosen:
//! which rows are judged and which stay `?`, the variance each row uses, `**` and `≈`, and the
//! MDE and units-needed figures of the rows.
use schedlab_analysis::calibration::{CaseCalibration, MetricCalibration, UnitKind};
use schedlab_analysis::model::{IntervalKind, Test, VarianceSource};
use schedlab_analysis::notes::{GuardMethod, LeftOutRun, LoneUnit, Note, RowNote, SideBuilds};
use schedlab_analysis::series::{RunMeta, RunValuesSeries};
use schedlab_analysis::units::Design;
use schedlab_analysis::{
    compare, Calibration, CalibrationSet, Comparison, MachineKey, Row, Settings, Side, Verdict,
};
use schedlab_core::metric::Better;
use schedlab_core::record::{Arm, RunStatus};
use schedlab_stats::dist::normal_quantile;
use schedlab_stats::power::mde_t;

const METRIC: &str = "usec_per_op";
const ITERATIONS: usize = 3;

/// One run's iterations: `level` × e^(offset + 0.002 × (−1, 0, 1)); its summary is
/// ln(level) + offset exactly.
fn run(level: f64, offset: f64) -> Vec<f64> {
    [-1.0, 0.0, 1.0]
        .iter()
        .map(|k| level * (offset + 0.002 * k).exp())
        .collect()
}

/// A case of one side: its runs (all on one boot) at `level`, one per offset.
fn case(name: &str, better: Better, level: f64, offsets: &[f64]) -> RunValuesSeries {
    (
        name.to_string(),
        METRIC.to_string(),
        better,
        offsets
            .iter()
            .map(|o| ("boot".to_string(), run(level, *o)))
            .collect(),
    )
}

/// A calibration (id 7) of this machine for `cases`, from `runs` runs on one boot whose
/// offsets are `spread` × (0, 1, −1, 2, −2, …), so its run variance is known.
fn calibration(cases: &[&str], runs: usize, spread: f64) -> (CalibrationSet, MetricCalibration) {
    let offsets: Vec<f64> = (0..runs)
        .map(|i| {
            let k = i.div_ceil(2) as f64;
            spread * if i % 2 == 1 { k } else { -k }
        })
        .collect();
    let values: Vec<(&str, Vec<f64>)> = offsets.iter().map(|o| ("boot", run(100.0, *o))).collect();
    let metric = MetricCalibration::from_run_values(METRIC, &values).unwrap();
    let set = CalibrationSet::new(vec![Calibration {
        id: Some(7),
        created_at_ns: 0,
        label: "cal".into(),
        machine: MachineKey::default(),
        run_ids: (1..=runs as i64).collect(),
        boots: 1,
        cases: cases
            .iter()
            .map(|c| CaseCalibration {
                case: c.to_string(),
                spec: serde_json::Value::Null,
                iterations: ITERATIONS,
                metrics: vec![metric.clone()],
            })
            .collect(),
    }]);
    (set, metric)
}

fn run_compare(base: Side, candidate: Side, calibrations: &CalibrationSet) -> Comparison {
    compare_with(base, candidate, calibrations, Settings::default())
}

fn compare_with(
    base: Side,
    candidate: Side,
    calibrations: &CalibrationSet,
    settings: Settings,
) -> Comparison {
    compare(base, vec![candidate], calibrations, settings, None)
}

fn row<'a>(c: &'a Comparison, case: &str) -> &'a Row {
    c.rows.iter().find(|r| r.case == case).unwrap()
}

fn close(got: f64, want: f64, tolerance: f64) {
    assert!(
        (got - want).abs() <= tolerance * want.abs().max(1e-300),
        "{got} vs {want}"
    );
}

/// Three cases, one run a side: doubled, unchanged and halved.
fn one_run_per_side() -> (Side, Side) {
    let base = Side::from_run_values(
        "base",
        vec![
            case("double", Better::Lower, 100.0, &[0.0]),
            case("same", Better::Lower, 100.0, &[0.0]),
            case("half", Better::Lower, 100.0, &[0.0]),
        ],
    );
    let candidate = Side::from_run_values(
        "cand",
        vec![
            case("double", Better::Lower, 200.0, &[0.0]),
            case("same", Better::Lower, 100.0, &[0.001]),
            case("half", Better::Lower, 50.0, &[0.0]),
        ],
    );
    (base, candidate)
}

#[test]
fn one_run_per_side_without_a_calibration_is_not_judged() {
    let (base, candidate) = one_run_per_side();
    let c = run_compare(base, candidate, &CalibrationSet::default());
    assert_eq!(c.rows.len(), 3);
    for r in &c.rows {
        assert_eq!(r.verdict, Verdict::NotJudged, "{}", r.case);
        assert_eq!((r.p_value, r.q_value), (None, None));
        assert_eq!(r.test, Test::None);
        assert_eq!(r.variance.source, VarianceSource::None);
        assert_eq!((r.mde_pct, r.units_needed), (None, None));
        assert_eq!(
            r.note,
            Some(RowNote::OneUnit {
                unit: LoneUnit::Run
            })
        );
    }
    // The change is shown even though it is not judged.
    close(row(&c, "double").change_pct.unwrap(), 100.0, 1e-9);
    assert_eq!(c.footer.comparisons, 0);
    assert_eq!(c.footer.not_judged, 3);
    assert_eq!(c.footer.marked, 0);
    // No bound on false marks is claimed when nothing was tested, nor a test named; the
    // footer says how to make such rows judgeable.
    assert_eq!(c.footer.tested_on, None);
    assert_eq!(c.footer.notes, [Note::NoVariance]);
}

#[test]
fn one_run_per_side_with_a_calibration_is_judged() {
    let (base, candidate) = one_run_per_side();
    let (set, metric) = calibration(&["double", "same", "half"], 4, 0.01);
    let c = run_compare(base, candidate, &set);
    for r in &c.rows {
        assert!(r.p_value.is_some() && r.q_value.is_some(), "{}", r.case);
        assert_eq!(r.variance.source, VarianceSource::Calibration);
        let used = r.variance.used.unwrap();
        // One boot: the calibration's df is its runs − 1, its variance its run mean square.
        assert_eq!(used.df, 3.0);
        close(used.variance, metric.ms_run.unwrap(), 1e-12);
        assert_eq!(r.variance.calibration.unwrap().id, 7);
    }
    assert_eq!(row(&c, "double").verdict, Verdict::Regression);
    assert_eq!(row(&c, "half").verdict, Verdict::Improvement);
    assert_eq!(c.footer.comparisons, 3);
    assert!(c.footer.notes.contains(&Note::FalseMarkBound {
        assumes_calibrations: true
    }));
    assert_eq!(c.calibrations.iter().map(|c| c.id).collect::<Vec<_>>(), [7]);
    // Three rows are too few for the guard at one run per side.
    assert_eq!(
        (c.guard.method, c.guard.factor),
        (GuardMethod::TooFewRows, 1.0)
    );
    assert!(c
        .footer
        .notes
        .contains(&Note::GuardNotApplied { rows: 3, needed: 8 }));
}

#[test]
fn rows_that_are_not_judged_stay_out_of_the_adjustment() {
    // "judged" has two runs a side, "alone" one: only "judged" is in the BH family, so its q
    // equals its p (with "alone" in the family q would be at least 2p or 1).
    let base = Side::from_run_values(
        "base",
        vec![
            case("judged", Better::Lower, 100.0, &[0.0, 0.01]),
            case("alone", Better::Lower, 100.0, &[0.0]),
        ],
    );
    let candidate = Side::from_run_values(
        "cand",
        vec![
            case("judged", Better::Lower, 103.0, &[0.0, 0.01]),
            case("alone", Better::Lower, 300.0, &[0.0]),
        ],
    );
    let c = run_compare(base, candidate, &CalibrationSet::default());
    let judged = row(&c, "judged");
    assert_eq!(judged.q_value, judged.p_value);
    assert!(judged.p_value.unwrap() < 0.5);
    assert_eq!(row(&c, "alone").verdict, Verdict::NotJudged);
    assert_eq!(c.footer.comparisons, 1);
    assert_eq!(c.footer.not_judged, 1);
}

#[test]
fn two_runs_per_side_mark_a_large_change() {
    let offsets = [0.0, 0.005];
    let base = Side::from_run_values(
        "base",
        vec![
            case("time", Better::Lower, 100.0, &offsets),
            case("rate", Better::Higher, 100.0, &offsets),
        ],
    );
    let candidate = Side::from_run_values(
        "cand",
        vec![
            case("time", Better::Lower, 150.0, &offsets),
            case("rate", Better::Higher, 150.0, &offsets),
        ],
    );
    let c = run_compare(base, candidate, &CalibrationSet::default());
    let time = row(&c, "time");
    assert_eq!(time.verdict, Verdict::Regression);
    assert_eq!(row(&c, "rate").verdict, Verdict::Improvement);
    assert_eq!(time.variance.source, VarianceSource::Today);
    // k_A + k_B − 2 = 2 df.
    assert!(matches!(time.test, Test::StudentT { df, .. } if df == 2.0));
    close(time.ratio.unwrap(), 1.5, 1e-12);
    assert_eq!(c.footer.marked, 2);
}

#[test]
fn a_significant_change_smaller_than_delta_is_not_marked() {
    // +0.5 % measured precisely: q is small, but a mark needs |change| ≥ δ = 1 %; TOST shows it
    // within ±1 % instead. The runs agree more closely than their iterations allow (±0.1 %
    // inside each), so the unit variance is that floor: 0.002² / 3.
    let offsets = [0.0, 0.0001, -0.0001, 0.0002, -0.0002];
    let base = Side::from_run_values("base", vec![case("c", Better::Lower, 100.0, &offsets)]);
    let candidate = Side::from_run_values("cand", vec![case("c", Better::Lower, 100.5, &offsets)]);
    let c = run_compare(base, candidate, &CalibrationSet::default());
    let r = row(&c, "c");
    assert!(r.q_value.unwrap() < 1e-3, "{:?}", r.q_value);
    close(r.variance.within_floor.unwrap(), 0.002 * 0.002 / 3.0, 1e-12);
    assert_eq!(
        r.variance.used.unwrap().variance,
        r.variance.within_floor.unwrap()
    );
    assert_eq!(r.verdict, Verdict::Equivalent);
}

#[test]
fn identical_tight_sides_are_equivalent_within_delta() {
    let offsets = [0.0, 0.001, -0.001];
    let base = Side::from_run_values("base", vec![case("c", Better::Lower, 100.0, &offsets)]);
    let candidate = Side::from_run_values("cand", vec![case("c", Better::Lower, 100.0, &offsets)]);
    let c = run_compare(base, candidate, &CalibrationSet::default());
    let r = row(&c, "c");
    assert_eq!(r.verdict, Verdict::Equivalent);
    assert!(r.equivalence_p_value.unwrap() < 0.05);
    let used = r.interval_used.as_ref().unwrap();
    assert_eq!(used.kind, IntervalKind::Equivalence);
    // TOST at α = 0.05 is a 90 % interval, inside the ±δ band [1/(1 + δ), 1 + δ].
    close(used.level, 0.9, 1e-12);
    assert!(used.low > 1.0 / 1.01 && used.high < 1.01, "{used:?}");
    assert!(used.low <= 1.0 && used.high >= 1.0);
}

#[test]
fn an_equivalent_row_on_the_raw_scale_draws_its_interval_inside_the_band() {
    // A zero in every run puts the row on the raw scale: 999 iterations at 100 ± 0.1 (109.5 ±
    // 0.1) and one at 0, so the run means sit at 0.999 × that and the zero's share of each
    // run's variance, over 1,000 iterations, stays near the spread between runs. With δ = 10 %
    // the relative change 9.5 % ± 0.2 % is shown within ±10 %: the interval drawn must hold
    // the ratio 1.095 and lie inside [0.9, 1.1].
    let raw = |mean: f64| -> RunValuesSeries {
        (
            "c".into(),
            METRIC.into(),
            Better::Lower,
            [0.0, 0.1, -0.1]
                .iter()
                .map(|d| {
                    let mut values = vec![mean + d; 999];
                    values.push(0.0);
                    ("boot".to_string(), values)
                })
                .collect(),
        )
    };
    let base = Side::from_run_values("base", vec![raw(100.0)]);
    let candidate = Side::from_run_values("cand", vec![raw(109.5)]);
    let settings = Settings {
        min_effect: 0.1,
        ..Settings::default()
    };
    let c = compare_with(base, candidate, &CalibrationSet::default(), settings);
    let r = row(&c, "c");
    assert_eq!(r.scale, schedlab_analysis::units::Scale::Raw);
    assert_eq!(r.verdict, Verdict::Equivalent);
    close(r.ratio.unwrap(), 1.095, 1e-12);
    let used = r.interval_used.as_ref().unwrap();
    assert!(
        used.low <= 1.095 && 1.095 <= used.high,
        "the interval {used:?} does not hold the ratio"
    );
    assert!(used.low > 0.9 && used.high < 1.1, "{used:?}");
}

/// Two rows with two runs a side and a 2 % run-to-run spread: judged, neither marked nor
/// equivalent.
fn two_inconclusive_rows() -> Comparison {
    let base = Side::from_run_values(
        "base",
        vec![
            case("a", Better::Lower, 100.0, &[0.0, 0.02]),
            case("b", Better::Lower, 100.0, &[0.0, 0.03]),
        ],
    );
    let candidate = Side::from_run_values(
        "cand",
        vec![
            case("a", Better::Lower, 100.0, &[0.01, 0.02]),
            case("b", Better::Lower, 100.0, &[0.01, 0.03]),
        ],
    );
    run_compare(base, candidate, &CalibrationSet::default())
}

/// `ab --until-decided` stops on [`Comparison::is_decided`]: every row `**` or `≈`, and at least
/// one row.
#[test]
fn a_comparison_is_decided_when_every_row_is_marked_or_equivalent() {
    let tight = [0.0, 0.001, -0.001];
    let sides = |candidate_levels: &[(&str, f64)]| {
        let cases = |levels: &[(&str, f64)]| {
            levels
                .iter()
                .map(|(name, level)| case(name, Better::Lower, *level, &tight))
                .collect()
        };
        let base: Vec<(&str, f64)> = candidate_levels.iter().map(|(n, _)| (*n, 100.0)).collect();
        run_compare(
            Side::from_run_values("base", cases(&base)),
            Side::from_run_values("cand", cases(candidate_levels)),
            &CalibrationSet::default(),
        )
    };
    let marked_and_equivalent = sides(&[("slower", 150.0), ("same", 100.0)]);
    assert_eq!(
        row(&marked_and_equivalent, "slower").verdict,
        Verdict::Regression
    );
    assert_eq!(
        row(&marked_and_equivalent, "same").verdict,
        Verdict::Equivalent
    );
    assert_eq!(marked_and_equivalent.decided_rows(), 2);
    assert!(marked_and_equivalent.is_decided());

    let inconclusive = two_inconclusive_rows();
    assert_eq!(inconclusive.decided_rows(), 0);
    assert!(!inconclusive.is_decided());

    let mut one_open = sides(&[("slower", 150.0)]);
    one_open.rows.extend(inconclusive.rows);
    assert_eq!(one_open.decided_rows(), 1);
    assert!(!one_open.is_decided());

    let unmatched = run_compare(
        Side::from_run_values("base", vec![case("x", Better::Lower, 100.0, &tight)]),
        Side::from_run_values("cand", vec![case("y", Better::Lower, 100.0, &tight)]),
        &CalibrationSet::default(),
    );
    assert!(unmatched.rows.is_empty());
    assert!(!unmatched.is_decided());
}

/// t's quantile at 2 df, by hand: (2p − 1)/√(2p(1 − p)).
fn t_quantile_df2(p: f64) -> f64 {
    (2.0 * p - 1.0) / (2.0 * p * (1.0 - p)).sqrt()
}

#[test]
fn the_mde_uses_t_quantiles_at_the_level_the_best_row_must_reach() {
    let c = two_inconclusive_rows();
    let r = row(&c, "a");
    assert_eq!(r.verdict, Verdict::Inconclusive);
    let Test::StudentT { df, std_err, .. } = r.test else {
        panic!("{:?}", r.test)
    };
    assert_eq!(df, 2.0);
    // Two judged rows: the most significant must reach q/m = 0.025, two-sided.
    let alpha = 0.05 / 2.0;
    let t_sum = t_quantile_df2(1.0 - alpha / 2.0) + t_quantile_df2(0.8);
    let want = (t_sum * std_err).exp_m1() * 100.0;
    close(r.mde_pct.unwrap(), want, 1e-6);
    // The normal approximation understates it more than twice at 2 df.
    let z_sum = normal_quantile(1.0 - alpha / 2.0) + normal_quantile(0.8);
    let normal = (z_sum * std_err).exp_m1() * 100.0;
    assert!(
        r.mde_pct.unwrap() > 2.0 * normal,
        "{:?} vs {normal}",
        r.mde_pct
    );
    match &r.note {
        Some(RowNote::Inconclusive { mde_pct, .. }) => assert_eq!(*mde_pct, r.mde_pct),
        other => panic!("{other:?}"),
    }
}

/// Runs spread by a factor of e² a side: the MDE is in the thousands of percent, and the note says
/// only that it is above 1000 % where the row keeps the number.
#[test]
fn an_mde_past_a_thousand_percent_is_named_not_spelled_out() {
    let base = Side::from_run_values("base", vec![case("a", Better::Lower, 100.0, &[-1.0, 1.0])]);
    let candidate =
        Side::from_run_values("cand", vec![case("a", Better::Lower, 100.0, &[1.0, -1.0])]);
    let settings = Settings {
        noise_cap_pct: 1000.0,
        ..Settings::default()
    };
    let c = compare_with(base, candidate, &CalibrationSet::default(), settings);
    let r = row(&c, "a");
    assert_eq!(r.verdict, Verdict::Inconclusive);
    assert!(r.mde_pct.unwrap() > 1000.0, "{:?}", r.mde_pct);
    // The note keeps the number; the report says only that it is above 1000 %.
    match &r.note {
        Some(RowNote::Inconclusive { mde_pct, .. }) => assert_eq!(*mde_pct, r.mde_pct),
        other => panic!("{other:?}"),
    }
}

#[test]
fn units_needed_is_the_smallest_count_whose_mde_reaches_delta() {
    let c = two_inconclusive_rows();
    let delta = 0.01f64.ln_1p();
    let alpha = 0.05 / 2.0;
    for r in &c.rows {
        let v = r.variance.used.unwrap().variance;
        let k = r.units_needed.unwrap();
        // k runs a side: se² = 2v/k on 2k − 2 df (no calibration adds any).
        let mde = |k: usize| {
            let k = k as f64;
            mde_t((2.0 * v / k).sqrt(), 2.0 * k - 2.0, alpha, 0.8)
                .unwrap()
                .log_effect
        };
        assert!(k > 2, "{}: {k}", r.case);
        assert!(mde(k) <= delta, "{}: {k} runs do not reach δ", r.case);
        assert!(
            mde(k - 1) > delta,
            "{}: {} runs already reach δ",
            r.case,
            k - 1
        );
        assert_eq!(
            r.note,
            Some(RowNote::Inconclusive {
                mde_pct: r.mde_pct,
                units_needed: Some(k),
                counted: Design::Runs,
                per_side: true,
                min_effect_pct: 1.0,
            })
        );
    }
}

/// Two runs a side and a 6-run calibration (5 df) quiet enough that one or two runs a side
/// would see δ, so the calibration's df matter to the runs needed; `spread` scales today's run
/// offsets.
fn pooled(spread: f64) -> (Comparison, MetricCalibration) {
    let base = Side::from_run_values(
        "base",
        vec![case("c", Better::Lower, 100.0, &[0.0, 0.01 * spread])],
    );
    let candidate = Side::from_run_values(
        "cand",
        vec![case(
            "c",
            Better::Lower,
            100.0,
            &[0.002, 0.002 + 0.01 * spread],
        )],
    );
    let (set, metric) = calibration(&["c"], 6, 0.001);
    (run_compare(base, candidate, &set), metric)
}

#[test]
fn today_and_a_calibration_are_pooled_by_their_df() {
    let (c, metric) = pooled(0.1);
    let r = row(&c, "c");
    assert_eq!(r.variance.source, VarianceSource::Pooled);
    let today = r.variance.today.unwrap();
    let cal = r.variance.calibration.unwrap();
    // Today: each side's two run summaries differ by 0.001, so each side's squared deviations
    // sum to 2 × 0.0005², pooled over 2 df.
    close(today.variance, 0.000_000_5, 1e-9);
    assert_eq!(today.df, 2.0);
    assert_eq!(cal.df, 5.0);
    close(cal.variance, metric.ms_run.unwrap(), 1e-12);
    // Today is far quieter than calibrated: the guard leaves the calibration as it is.
    assert_eq!(cal.guard_factor, 1.0);
    let used = r.variance.used.unwrap();
    assert_eq!(used.df, 7.0);
    close(
        used.variance,
        (2.0 * today.variance + 5.0 * cal.variance) / 7.0,
        1e-12,
    );
    // The units needed count the calibration's df on top of the runs' own: one run a side
    // is enough here, which it could not be on the runs' own (0 df).
    let k = r.units_needed.unwrap();
    assert_eq!(k, 1);
    let alpha = 0.05;
    let mde = |k: f64| {
        mde_t(
            (2.0 * used.variance / k).sqrt(),
            5.0 + 2.0 * k - 2.0,
            alpha,
            0.8,
        )
        .unwrap()
        .log_effect
    };
    assert!(mde(k as f64) <= 0.01f64.ln_1p());
    assert!(k == 1 || mde(k as f64 - 1.0) > 0.01f64.ln_1p());
}

#[test]
fn a_calibration_far_noisier_than_today_is_named_in_the_footer() {
    let says = |c: &Comparison| {
        c.footer
            .notes
            .iter()
            .any(|n| matches!(n, Note::CalibrationTooWide { .. }))
    };
    // pooled(0.1): today's runs vary far less than the calibrated ones.
    let (quiet, _) = pooled(0.1);
    assert!(quiet.guard.today_over_calibrated.unwrap() < 0.25);
    assert!(says(&quiet), "{:?}", quiet.footer.notes);
    let (noisy, _) = pooled(10.0);
    assert!(noisy.guard.today_over_calibrated.unwrap() > 1.0);
    assert!(!says(&noisy), "{:?}", noisy.footer.notes);
    // The guard's line says what it measured, not the floored factor it applied: the quiet
    // machine's spread is a fraction of the calibrated one, left as it is; the noisy one's
    // is the factor it widened by.
    let guard_note = |c: &Comparison| {
        c.footer
            .notes
            .iter()
            .find(|n| matches!(n, Note::Guard { .. }))
            .cloned()
            .unwrap()
    };
    assert_eq!(quiet.guard.factor, 1.0);
    assert_eq!(
        quiet.guard.measured,
        quiet.guard.today_over_calibrated.unwrap()
    );
    assert_eq!(
        guard_note(&quiet),
        Note::Guard {
            method: GuardMethod::VarianceRatio,
            measured: quiet.guard.measured,
            factor: 1.0,
            rows: quiet.guard.rows,
        }
    );
    assert!(quiet.guard.measured < 1.0);
    assert_eq!(noisy.guard.measured, noisy.guard.factor);
    assert_eq!(
        guard_note(&noisy),
        Note::Guard {
            method: GuardMethod::VarianceRatio,
            measured: noisy.guard.factor,
            factor: noisy.guard.factor,
            rows: noisy.guard.rows,
        }
    );
}

#[test]
fn the_guard_widens_only_the_calibrated_part_of_a_pooled_variance() {
    let (c, _) = pooled(10.0);
    let r = row(&c, "c");
    let today = r.variance.today.unwrap();
    let cal = r.variance.calibration.unwrap();
    let g = cal.guard_factor;
    // One row with today's variance: the guard is its F-median-normalised ratio.
    let f_median = schedlab_stats::dist::f_quantile(0.5, 2.0, 5.0);
    close(g, today.variance / cal.variance / f_median, 1e-9);
    assert!(g > 1.0);
    assert_eq!(c.guard.factor, g);
    close(
        r.variance.used.unwrap().variance,
        (2.0 * today.variance + 5.0 * g * cal.variance) / 7.0,
        1e-12,
    );
}

#[test]
fn a_stale_calibration_is_widened_at_one_run_per_side() {
    // Eight rows whose changes spread far more than a 1 %-per-run calibration allows: the
    // guard's z-scale widens every calibrated variance by one factor.
    let shifts = [-2.0, -1.0, -1.0, 0.0, 0.0, 1.0, 1.0, 2.0];
    let names: Vec<String> = (0..shifts.len()).map(|i| format!("c{i}")).collect();
    let base = Side::from_run_values(
        "base",
        names
            .iter()
            .map(|n| case(n, Better::Lower, 100.0, &[0.0]))
            .collect(),
    );
    let candidate = Side::from_run_values(
        "cand",
        names
            .iter()
            .zip(shifts)
            .map(|(n, s)| case(n, Better::Lower, 100.0, &[0.02 * s]))
            .collect(),
    );
    let refs: Vec<&str> = names.iter().map(String::as_str).collect();
    let (set, metric) = calibration(&refs, 4, 0.01);
    let c = run_compare(base, candidate, &set);
    assert_eq!((c.guard.method, c.guard.rows), (GuardMethod::ZScale, 8));
    assert!(
        c.guard.factor > 2.0 && c.guard.factor < 10.0,
        "{:?}",
        c.guard
    );
    for r in &c.rows {
        let used = r.variance.used.unwrap();
        close(
            used.variance,
            c.guard.factor * metric.ms_run.unwrap(),
            1e-12,
        );
        assert_eq!(used.df, 3.0);
        assert_eq!(r.variance.calibration.unwrap().guard_factor, c.guard.factor);
    }
    assert!(c.footer.notes.contains(&Note::Guard {
        method: GuardMethod::ZScale,
        measured: c.guard.factor,
        factor: c.guard.factor,
        rows: 8,
    }));
}

/// A calibration so far from today (the guard's factor above 10) is no evidence about today's
/// machine: rows that rest on it alone are not judged, and say why.
#[test]
fn a_calibration_far_from_today_is_refused_at_one_run_per_side() {
    let shifts = [-2.0, -1.0, -1.0, 0.0, 0.0, 1.0, 1.0, 2.0];
    let names: Vec<String> = (0..shifts.len()).map(|i| format!("c{i}")).collect();
    let side = |name: &str, step: f64| {
        Side::from_run_values(
            name,
            names
                .iter()
                .zip(shifts)
                .map(|(n, s)| case(n, Better::Lower, 100.0, &[step * s]))
                .collect(),
        )
    };
    let refs: Vec<&str> = names.iter().map(String::as_str).collect();
    let (set, _) = calibration(&refs, 4, 0.01);
    let c = run_compare(side("base", 0.0), side("cand", 0.2), &set);
    assert!(c.guard.factor > 10.0, "{:?}", c.guard);
    for r in &c.rows {
        assert_eq!(r.verdict, Verdict::NotJudged, "{r:?}");
        assert!(r.p_value.is_none());
        assert_eq!(r.variance.source, VarianceSource::None);
        assert_eq!(
            r.note,
            Some(RowNote::CalibrationRefused {
                unit: LoneUnit::Run,
                calibration: 7,
                factor: c.guard.factor,
            })
        );
    }
    assert_eq!(c.footer.comparisons, 0);
    assert!(!c
        .footer
        .notes
        .iter()
        .any(|n| matches!(n, Note::FalseMarkBound { .. })));
    assert!(c
        .footer
        .notes
        .contains(&Note::CalibrationRefused { limit: 10.0 }));
}

/// A calibration (id 7) of `case` from four runs on two boots, with both levels of variance.
fn two_boot_calibration(case: &str) -> (CalibrationSet, MetricCalibration) {
    let values: Vec<(&str, Vec<f64>)> = [("x", 0.0), ("x", 0.01), ("y", 0.03), ("y", 0.045)]
        .iter()
        .map(|(boot, o)| (*boot, run(100.0, *o)))
        .collect();
    let metric = MetricCalibration::from_run_values(METRIC, &values).unwrap();
    assert!(metric.omega2.unwrap() > 0.0);
    let set = CalibrationSet::new(vec![Calibration {
        id: Some(7),
        created_at_ns: 0,
        label: "cal".into(),
        machine: MachineKey::default(),
        run_ids: vec![1, 2, 3, 4],
        boots: 2,
        cases: vec![CaseCalibration {
            case: case.into(),
            spec: serde_json::Value::Null,
            iterations: ITERATIONS,
            metrics: vec![metric.clone()],
        }],
    }]);
    (set, metric)
}

#[test]
fn boot_units_take_the_calibrated_variance_of_a_boot_mean() {
    // Two boots a side, two runs each: the calibration's variance of a mean of two runs.
    let side = |name: &str, boots: [&str; 2], level: f64| {
        let runs = [
            (boots[0], 0.0),
            (boots[0], 0.01),
            (boots[1], 0.02),
            (boots[1], 0.0),
        ]
        .iter()
        .map(|(b, o)| (b.to_string(), run(level, *o)))
        .collect();
        Side::from_run_values(name, vec![("c".into(), METRIC.into(), Better::Lower, runs)])
    };
    let (set, metric) = two_boot_calibration("c");
    let c = run_compare(
        side("base", ["b1", "b2"], 100.0),
        side("cand", ["b3", "b4"], 100.0),
        &set,
    );
    let r = row(&c, "c");
    assert_eq!(r.design, schedlab_analysis::units::Design::Boots);
    let cal = r.variance.calibration.unwrap();
    let want = metric
        .unit_variance(UnitKind::BootMean { runs: 2.0 })
        .unwrap();
    close(cal.variance, want.variance, 1e-12);
    close(cal.df, want.df, 1e-12);
    assert_eq!(r.variance.source, VarianceSource::Pooled);
}

/// One A/B round of experiment 1: A on `boot_a`, B on `boot_b`.
fn one_round(boot_a: &str, boot_b: &str) -> (Side, Side) {
    let side = |name: &str, arm: Arm, boot: &str, level: f64| {
        let mut s = Side::from_run_values(
            name,
            vec![(
                "c".into(),
                METRIC.into(),
                Better::Lower,
                vec![(boot.to_string(), run(level, 0.0))],
            )],
        );
        s.runs[0].experiment_id = Some(1);
        s.runs[0].arm = Some(arm);
        s.runs[0].round = Some(0);
        s
    };
    (
        side("a", Arm::A, boot_a, 100.0),
        side("b", Arm::B, boot_b, 100.0),
    )
}

#[test]
fn a_pair_takes_twice_the_calibrated_variance_of_one_arm() {
    let (set, metric) = two_boot_calibration("c");
    // `ab`: A and B of a round on one boot.
    let (a, b) = one_round("boot", "boot");
    let c = run_compare(a, b, &set);
    let r = row(&c, "c");
    assert_eq!(r.design, schedlab_analysis::units::Design::Pairs);
    assert_eq!(r.variance.source, VarianceSource::Calibration);
    let cal = r.variance.calibration.unwrap();
    close(cal.variance, 2.0 * metric.ms_run.unwrap(), 1e-12);
    assert_eq!(cal.df, metric.run_df);
    // `campaign`: each arm on a boot of its own, so the boot component enters.
    let (a, b) = one_round("boot-a", "boot-b");
    let c = run_compare(a, b, &set);
    let cal = row(&c, "c").variance.calibration.unwrap();
    let arm = metric
        .unit_variance(UnitKind::BootMean { runs: 1.0 })
        .unwrap();
    close(cal.variance, 2.0 * arm.variance, 1e-12);
    close(cal.df, arm.df, 1e-12);
}

/// Three A/B rounds of experiment 1 on one boot whose differences spread 2 %: the row is
/// judged on pairs, inconclusive, and says how many pairs (rounds) would see δ, not how many
/// per side, since each pair is one unit of both sides.
#[test]
fn units_needed_of_pairs_counts_pairs_not_units_per_side() {
    let side = |name: &str, arm: Arm, offsets: &[f64]| {
        let mut s = Side::from_run_values(name, vec![case("c", Better::Lower, 100.0, offsets)]);
        for (round, meta) in s.runs.iter_mut().enumerate() {
            meta.experiment_id = Some(1);
            meta.arm = Some(arm);
            meta.round = Some(round as u32);
        }
        s
    };
    let a = side("a", Arm::A, &[0.0, 0.05, -0.03]);
    let b = side("b", Arm::B, &[0.01, 0.03, -0.01]);
    let c = run_compare(a, b, &CalibrationSet::default());
    let r = row(&c, "c");
    assert_eq!(r.design, schedlab_analysis::units::Design::Pairs);
    assert_eq!(r.verdict, Verdict::Inconclusive);
    let k = r.units_needed.unwrap();
    // k pairs, each one unit of both sides: not per side.
    match &r.note {
        Some(RowNote::Inconclusive {
            units_needed,
            counted: Design::Pairs,
            per_side: false,
            ..
        }) => assert_eq!(*units_needed, Some(k)),
        other => panic!("{other:?}"),
    }
}

#[test]
fn a_calibration_of_another_precision_or_machine_is_not_used() {
    let (set, _) = calibration(&["double", "same", "half"], 4, 0.01);
    // Runs of two iterations: the calibration describes summaries of three.
    let two = |level: f64| {
        let mut values = run(level, 0.0);
        values.pop();
        Side::from_run_values(
            "s",
            vec![(
                "same".into(),
                METRIC.into(),
                Better::Lower,
                vec![("boot".into(), values)],
            )],
        )
    };
    let c = run_compare(two(100.0), two(100.0), &set);
    assert_eq!(c.rows[0].verdict, Verdict::NotJudged);
    // Another machine.
    let (base, mut candidate) = one_run_per_side();
    candidate.runs[0].machine = Some(Box::new(MachineKey {
        hostname: "elsewhere".into(),
        ..MachineKey::default()
    }));
    let c = run_compare(base, candidate, &set);
    assert!(c.rows.iter().all(|r| r.verdict == Verdict::NotJudged));
    assert!(c.calibrations.is_empty());
}

#[test]
fn the_footer_names_the_runs_left_out() {
    let (mut base, candidate) = one_run_per_side();
    base.excluded.push(RunMeta {
        id: Some(42),
        boot_id: "boot".into(),
        status: RunStatus::Interrupted,
        machine: Some(Box::default()),
        ..RunMeta::default()
    });
    let c = run_compare(base, candidate, &CalibrationSet::default());
    assert_eq!(c.base.excluded.len(), 1);
    assert_eq!(
        c.footer.notes.last(),
        Some(&Note::LeftOut {
            sides: vec!["base".to_string()],
            every_side: false,
            runs: vec![LeftOutRun {
                id: Some(42),
                status: RunStatus::Interrupted
            }],
        }),
        "{:?}",
        c.footer.notes
    );
}

#[test]
fn the_footer_says_when_the_sides_were_measured_by_different_builds() {
    let builds_note = |c: &Comparison| {
        c.footer
            .notes
            .iter()
            .find(|n| matches!(n, Note::ManyBuilds { .. }))
            .cloned()
    };
    let (mut base, mut candidate) = one_run_per_side();
    base.runs[0].measured_by = Some("schedlab 0.1.0 aaa (glibc 2.36)".into());
    candidate.runs[0].measured_by = Some("schedlab 0.1.0 aaa (glibc 2.36)".into());
    let same = run_compare(base.clone(), candidate.clone(), &CalibrationSet::default());
    assert_eq!(builds_note(&same), None, "{:?}", same.footer.notes);
    candidate.runs[0].measured_by = Some("schedlab 0.1.0 bbb (musl 1.2.5)".into());
    let differ = run_compare(base, candidate, &CalibrationSet::default());
    let side = |side: &str, build: &str| SideBuilds {
        side: side.to_string(),
        builds: vec![Some(build.to_string())],
    };
    assert_eq!(
        builds_note(&differ),
        Some(Note::ManyBuilds {
            sides: vec![
                side("base", "schedlab 0.1.0 aaa (glibc 2.36)"),
                side("cand", "schedlab 0.1.0 bbb (musl 1.2.5)"),
            ]
        })
    );
    // The rows are what they were: the note adds to the verdicts, it does not change them.
    let verdicts = |c: &Comparison| c.rows.iter().map(|r| r.verdict).collect::<Vec<_>>();
    assert_eq!(verdicts(&same), verdicts(&differ));
}

#[test]
fn the_footer_names_the_machine_fields_that_differ_but_not_an_imports_unknowns() {
    let machine_note = |c: &Comparison| {
        c.footer
            .notes
            .iter()
            .find(|n| matches!(n, Note::MachinesDiffer { .. }))
            .cloned()
    };
    let here = MachineKey {
        hostname: "box".into(),
        cpu_model: "EPYC".into(),
        ..MachineKey::default()
    };
    let (mut base, mut candidate) = one_run_per_side();
    base.runs[0].machine = Some(Box::new(here.clone()));
    candidate.runs[0].machine = Some(Box::new(here.clone()));
    let c = run_compare(base.clone(), candidate.clone(), &CalibrationSet::default());
    assert_eq!(machine_note(&c), None);
    candidate.runs[0].machine = Some(Box::new(MachineKey {
        cpu_model: "Xeon".into(),
        ..here
    }));
    let c = run_compare(base.clone(), candidate.clone(), &CalibrationSet::default());
    assert_eq!(
        machine_note(&c),
        Some(Note::MachinesDiffer {
            fields: vec!["cpu_model"]
        })
    );
    // An imported run knows no CPU model: that is not a difference.
    candidate.runs[0].machine = Some(Box::new(MachineKey {
        hostname: "box".into(),
        ..MachineKey::default()
    }));
    candidate.runs[0].imported = true;
    let c = run_compare(base, candidate, &CalibrationSet::default());
    assert_eq!(machine_note(&c), None, "{:?}", c.footer.notes);
}

/// Runs `values` of every run, `runs` times over, as one side's only case.
fn repeated(name: &str, values: &[f64], runs: usize) -> Side {
    Side::from_run_values(
        name,
        vec![(
            "c".to_string(),
            METRIC.to_string(),
            Better::Lower,
            (0..runs)
                .map(|_| ("boot".to_string(), values.to_vec()))
                .collect(),
        )],
    )
}

/// Two identical runs a side (the same log imported twice) spread 0 between runs, but each run
/// varies ±5 % inside: a 2 % change is far inside that and must not be marked with p = 0.
#[test]
fn runs_that_agree_exactly_are_judged_on_their_iterations_spread() {
    let base = repeated("base", &[95.0, 100.0, 105.0], 2);
    let candidate = repeated("cand", &[96.9, 102.0, 107.1], 2);
    let c = run_compare(base, candidate, &CalibrationSet::default());
    let r = row(&c, "c");
    let today = r.variance.today.unwrap();
    assert!(today.variance < 1e-20, "{today:?}");
    let ln = [95.0_f64, 100.0, 105.0].map(f64::ln);
    let mean = ln.iter().sum::<f64>() / 3.0;
    let within = ln.iter().map(|y| (y - mean).powi(2)).sum::<f64>() / 2.0;
    close(r.variance.within_floor.unwrap(), within / 3.0, 1e-9);
    assert!(r.p_value.unwrap() > 0.3, "{:?}", r.p_value);
    assert_eq!(r.verdict, Verdict::Inconclusive);
}

/// Values that never vary, inside a run or between runs, leave nothing to test against: the
/// row shows its change and is not judged, rather than certain.
#[test]
fn values_without_any_spread_are_not_judged() {
    let base = repeated("base", &[5.0, 5.0, 5.0], 2);
    let candidate = repeated("cand", &[6.0, 6.0, 6.0], 2);
    let c = run_compare(base, candidate, &CalibrationSet::default());
    let r = row(&c, "c");
    assert_eq!(r.verdict, Verdict::NotJudged);
    assert_eq!((r.p_value, r.q_value), (None, None));
    assert_eq!(r.note, Some(RowNote::NoSpread), "{r:?}");
    close(r.change_pct.unwrap(), 20.0, 1e-9);
    assert_eq!(
        (
            c.footer.comparisons,
            c.footer.not_judged,
            c.footer.tested_on
        ),
        (0, 1, None)
    );
}

/// A calibration whose runs agreed exactly (τ estimated at 0) still gives one run the variance
/// of a mean of its iterations, so one run per side is not judged on a variance of 0.
#[test]
fn a_calibration_of_runs_that_agree_exactly_keeps_its_iterations_spread() {
    let values = [95.0, 100.0, 105.0];
    let runs: Vec<(&str, Vec<f64>)> = (0..4).map(|_| ("boot", values.to_vec())).collect();
    let m = MetricCalibration::from_run_values(METRIC, &runs).unwrap();
    assert!(m.ms_run.unwrap() < 1e-20);
    let v = m.unit_variance(UnitKind::RunWithinBoot).unwrap();
    close(v.variance, m.sigma2 / 3.0, 1e-12);
    assert_eq!(v.df, 3.0);
    // Two boots of two such runs each: a mean of two runs, no less than σ² / 6.
    let runs: Vec<(&str, Vec<f64>)> = ["b1", "b1", "b2", "b2"]
        .into_iter()
        .map(|boot| (boot, values.to_vec()))
        .collect();
    let m = MetricCalibration::from_run_values(METRIC, &runs).unwrap();
    let boot = m.unit_variance(UnitKind::BootMean { runs: 2.0 }).unwrap();
    close(boot.variance, m.sigma2 / 6.0, 1e-12);
}
