//! Scaling series of a comparison: each side of it placed at every point of the series that
//! [`crate::grouping::group`] finds among the base side's cases — its mean unit with an interval,
//! from the same units and variance the row's test used, so a plot never looks surer than the
//! verdict, as mmtests graphs a benchmark per client count.
use schedlab_stats::ttest::t_test_from_estimate;

use crate::grouping::{group, MIN_POINTS};
use crate::model::{
    PointInterval, Row, ScalingLine, ScalingMetric, ScalingPoint, ScalingSeries, SideFigures,
};
use crate::series::Side;
use crate::units::Design;

/// The comparison's scaling series: [`group`] over the base side's cases that have rows, and
/// per metric one line per side (base first, then the candidates in order) with a point per
/// case. A candidate's point comes from its own row; the base's from the row of the first
/// candidate that has one. A metric is drawn when at least [`MIN_POINTS`] cases of the series
/// have a row of it.
pub fn series(
    base: &Side,
    candidates: &[String],
    rows: &[Row],
    confidence: f64,
) -> Vec<ScalingSeries> {
    let compared = base
        .cases
        .iter()
        .filter(|spec| rows.iter().any(|r| r.case == spec.name));
    let find = |case: &str, metric: &str, candidate: &str| {
        rows.iter()
            .find(|r| r.case == case && r.metric == metric && r.candidate == candidate)
    };
    group(compared)
        .into_iter()
        .filter_map(|grouping| {
            let mut metrics: Vec<&Row> = Vec::new();
            for r in rows.iter().filter(|r| grouping.cases.contains(&r.case)) {
                if !metrics.iter().any(|m| m.metric == r.metric) {
                    metrics.push(r);
                }
            }
            let metrics: Vec<ScalingMetric> = metrics
                .into_iter()
                .filter_map(|first| {
                    let metric = first.metric.as_str();
                    let base_points: Vec<Option<ScalingPoint>> = grouping
                        .cases
                        .iter()
                        .map(|case| {
                            let row = candidates.iter().find_map(|c| find(case, metric, c))?;
                            point(row, &row.base_side, confidence, false)
                        })
                        .collect();
                    if base_points.iter().flatten().count() < MIN_POINTS {
                        return None;
                    }
                    let mut lines = vec![ScalingLine {
                        side: base.name.clone(),
                        points: base_points,
                    }];
                    for candidate in candidates {
                        lines.push(ScalingLine {
                            side: candidate.clone(),
                            points: grouping
                                .cases
                                .iter()
                                .map(|case| {
                                    let row = find(case, metric, candidate)?;
                                    point(row, &row.candidate_side, confidence, true)
                                })
                                .collect(),
                        });
                    }
                    Some(ScalingMetric {
                        metric: metric.to_string(),
                        unit: first.unit.clone(),
                        better: first.better,
                        lines,
                    })
                })
                .collect();
            (!metrics.is_empty()).then_some(ScalingSeries {
                grouping,
                level: confidence,
                metrics,
            })
        })
        .collect()
}

/// One side's point from its row: the mean of its units on the row's scale (so on the log scale
/// the geometric mean, whose ratio is the row's ratio) with a t interval. Runs and boots take
/// the variance of one unit that the row's test used (today's, calibrated or pooled) over the
/// side's units with the test's df, so one run per side still gets an interval from a
/// calibration. Pairs' test variance is of differences, not of one arm, so an arm takes its own
/// units' spread. Without either, the point has no interval.
fn point(row: &Row, side: &SideFigures, confidence: f64, candidate: bool) -> Option<ScalingPoint> {
    let ys: Vec<f64> = side.units.iter().map(|u| row.scale.forward(*u)).collect();
    if ys.is_empty() || ys.iter().any(|y| !y.is_finite()) {
        return None;
    }
    let k = ys.len() as f64;
    let mean = ys.iter().sum::<f64>() / k;
    let spread = match (row.design, row.variance.used) {
        (Design::Runs | Design::Boots | Design::Values, Some(v)) if v.df > 0.0 => {
            Some(((v.variance / k).sqrt(), v.df, PointInterval::RowVariance))
        }
        _ if ys.len() >= 2 => {
            let var = ys.iter().map(|y| (y - mean).powi(2)).sum::<f64>() / (k - 1.0);
            Some(((var / k).sqrt(), k - 1.0, PointInterval::SideUnits))
        }
        _ => None,
    };
    let ci = spread.and_then(|(se, df, how)| {
        let t = t_test_from_estimate(mean, se, df, confidence).ok()?;
        Some((t.ci, how))
    });
    let back = |y: f64| row.scale.back(y);
    Some(ScalingPoint {
        mean: back(mean),
        low: ci.map(|(ci, _)| back(ci.low)),
        high: ci.map(|(ci, _)| back(ci.high)),
        units: ys.len(),
        interval: ci.map_or(PointInterval::None, |(_, how)| how),
        change_pct: if candidate { row.change_pct } else { None },
        verdict: candidate.then_some(row.verdict),
    })
}

#[cfg(test)]
mod tests {
    use schedlab_core::plan::RunPlan;
    use schedlab_core::record::{CaseRecord, IterationRecord, RunRecord, RunStatus};
    use schedlab_core::workload::fake::FakeParams;
    use schedlab_core::workload::messaging::MessagingParams;
    use schedlab_core::workload::syscall::SyscallParams;
    use schedlab_core::workload::WorkloadSpec;

    use super::*;
    use crate::grouping::{x_scale, XScale};
    use crate::model::Verdict;
    use crate::testutil::{stored_run, PRIMARY_METRIC};
    use crate::{compare, CalibrationSet, MetricFilter, RunInput, Settings};
    use schedlab_core::plan::CaseSpec;

    fn messaging(groups: u64, fds: u64, pipe: bool) -> CaseSpec {
        CaseSpec::new(WorkloadSpec::Messaging(MessagingParams {
            groups,
            fds,
            pipe,
            ..MessagingParams::default()
        }))
        .unwrap()
    }

    fn syscall(threads: u64) -> CaseSpec {
        CaseSpec::new(WorkloadSpec::Syscall(SyscallParams {
            threads,
            ..SyscallParams::default()
        }))
        .unwrap()
    }

    #[test]
    fn a_matrix_is_a_series_per_varying_parameter() {
        // hackbench-matrix in small: groups {1, 2, 4, 8} × fds {15, 30} × pipe {false, true}.
        let mut cases = Vec::new();
        for pipe in [false, true] {
            for fds in [15, 30] {
                for groups in [8, 1, 4, 2] {
                    cases.push(messaging(groups, fds, pipe));
                }
            }
        }
        cases.push(syscall(1));
        let series = group(&cases);
        // fds and pipe take two values each: too few for a curve.
        assert_eq!(series.len(), 4, "{series:#?}");
        for s in &series {
            assert_eq!(
                (s.workload.as_str(), s.parameter.as_str()),
                ("messaging", "groups")
            );
            assert_eq!(s.values, vec![1.0, 2.0, 4.0, 8.0]);
            assert_eq!(s.x_scale, XScale::Log);
            assert_eq!(s.x, vec![0.0, 1.0, 2.0, 3.0]);
            assert!(!s.fixed.contains_key("groups") && !s.fixed.contains_key("workload"));
        }
        let first = &series[0];
        assert_eq!(first.fixed["fds"], 15);
        assert_eq!(first.fixed["pipe"], false);
        let names: Vec<String> = [1, 2, 4, 8]
            .iter()
            .map(|g| messaging(*g, 15, false).name)
            .collect();
        assert_eq!(first.cases, names, "sorted by the parameter");
        assert_eq!(
            first.fixed_label(),
            "datasize=100 fds=15 loops=100 pipe=false threads=false"
        );
        // A case on two series: with three fds values, each groups value also has a series
        // over fds, after the series over groups (more points first).
        let mut cases = Vec::new();
        for fds in [15, 30, 45] {
            for groups in [1, 2, 4, 8] {
                cases.push(messaging(groups, fds, false));
            }
        }
        let series = group(&cases);
        let over: Vec<&str> = series.iter().map(|s| s.parameter.as_str()).collect();
        assert_eq!(over, [["groups"; 3].as_slice(), &["fds"; 4]].concat());
        assert_eq!(series[3].values, vec![15.0, 30.0, 45.0]);
        assert_eq!(series[3].x_scale, XScale::Linear);
    }

    #[test]
    fn cases_differing_in_two_parameters_are_not_one_series() {
        let cases = [
            messaging(1, 15, false),
            messaging(2, 30, false),
            messaging(4, 45, false),
            messaging(8, 60, false),
        ];
        assert_eq!(group(&cases), Vec::new());
        // Nor cases of different workloads that share a parameter name.
        let mixed = [messaging(1, 20, false), syscall(2), syscall(4)];
        assert_eq!(group(&mixed), Vec::new());
    }

    #[test]
    fn fewer_than_three_points_is_not_a_series() {
        let two = [syscall(1), syscall(2), syscall(2), syscall(1)];
        assert_eq!(group(&two), Vec::new(), "repeated cases count once");
        let three = [syscall(1), syscall(2), syscall(2), syscall(4)];
        let series = group(&three);
        assert_eq!(series.len(), 1);
        assert_eq!(series[0].parameter, "threads");
        assert_eq!(series[0].values, vec![1.0, 2.0, 4.0]);
        // A boolean or a string never varies a series: pipe/threads and kinds are categories.
        let categories = [
            messaging(1, 20, false),
            messaging(1, 20, true),
            CaseSpec::new(WorkloadSpec::Messaging(MessagingParams {
                threads: true,
                ..MessagingParams::default()
            }))
            .unwrap(),
        ];
        assert_eq!(group(&categories), Vec::new());
    }

    #[test]
    fn the_axis_is_log_where_values_multiply_and_linear_where_they_add() {
        assert_eq!(x_scale(&[1.0, 2.0, 4.0, 8.0, 16.0, 31.0]), XScale::Log);
        let cpus = [
            1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 48.0, 64.0, 96.0, 128.0, 256.0,
        ];
        assert_eq!(x_scale(&cpus), XScale::Log);
        assert_eq!(x_scale(&[15.0, 30.0, 45.0]), XScale::Linear);
        assert_eq!(x_scale(&[1.0, 2.0, 3.0, 4.0]), XScale::Linear);
        assert_eq!(x_scale(&[0.0, 1.0, 2.0, 4.0]), XScale::Linear, "log 0");
    }

    fn fake(value_usec: f64) -> WorkloadSpec {
        WorkloadSpec::Fake(FakeParams {
            value_usec,
            ..FakeParams::default()
        })
    }

    /// A run of fake cases at `values` (each case's value_usec), every measured iteration of case
    /// i at `values[i] × scale × (1 + j/100)` for iteration j.
    fn run(id: i64, values: &[f64], scale: f64) -> RunRecord {
        let plan = RunPlan::new(None, None, 3, 0, values.iter().map(|v| fake(*v)).collect())
            .expect("a valid plan");
        let cases = plan
            .cases
            .iter()
            .zip(values)
            .map(|(spec, v)| CaseRecord {
                spec: spec.clone(),
                iterations: (0..3)
                    .map(|j| IterationRecord {
                        index: j,
                        warmup: false,
                        started_at_ns: 0,
                        measurements: vec![PRIMARY_METRIC.value(
                            v * scale * (1.0 + f64::from(j) / 100.0) * (1.0 + id as f64 / 1000.0),
                        )],
                        attachments: Vec::new(),
                        quiet: None,
                    })
                    .collect(),
                error: None,
            })
            .collect();
        stored_run(id, "boot", RunStatus::Complete, plan, cases)
    }

    fn side(name: &str, runs: &[RunRecord]) -> Side {
        let inputs: Vec<RunInput> = runs
            .iter()
            .map(|record| RunInput { record, tag: None })
            .collect();
        Side::from_runs(name, &inputs, &MetricFilter::default(), false)
    }

    #[test]
    fn a_comparison_draws_each_side_with_the_rows_numbers() {
        let values = [100.0, 200.0, 400.0, 800.0];
        let base: Vec<RunRecord> = (1..=3).map(|id| run(id, &values, 1.0)).collect();
        let cand: Vec<RunRecord> = (4..=6).map(|id| run(id, &values, 1.1)).collect();
        let c = compare(
            side("base", &base),
            vec![side("cand", &cand)],
            &CalibrationSet::default(),
            Settings::default(),
            None,
        );
        assert_eq!(c.scaling.len(), 1, "{:#?}", c.scaling);
        let s = &c.scaling[0];
        assert_eq!(s.grouping.parameter, "value_usec");
        assert_eq!(s.grouping.values, values.to_vec());
        assert_eq!(s.level, 0.95);
        assert_eq!(s.metrics.len(), 1);
        let m = &s.metrics[0];
        assert_eq!(m.metric, "usec_per_op");
        let sides: Vec<&str> = m.lines.iter().map(|l| l.side.as_str()).collect();
        assert_eq!(sides, ["base", "cand"]);
        for (i, case) in s.grouping.cases.iter().enumerate() {
            let row = c.rows.iter().find(|r| r.case == *case).unwrap();
            let b = m.lines[0].points[i].as_ref().unwrap();
            let k = m.lines[1].points[i].as_ref().unwrap();
            // The geometric means of the units: their ratio is the row's.
            assert!((k.mean / b.mean / row.ratio.unwrap() - 1.0).abs() < 1e-12);
            assert_eq!(k.change_pct, row.change_pct);
            assert_eq!(k.verdict, Some(row.verdict));
            assert_eq!(k.verdict, Some(Verdict::Regression));
            assert_eq!((b.change_pct, b.verdict), (None, None));
            // Three runs per side: the row's pooled variance gives each side a t interval
            // (df 4) of its mean: exp(ȳ ± t·√(V/3)).
            let v = row.variance.used.unwrap();
            let half = 2.776_445_105_2 * (v.variance / 3.0).sqrt();
            for p in [b, k] {
                assert_eq!((p.units, p.interval), (3, PointInterval::RowVariance));
                let (lo, hi) = (p.low.unwrap(), p.high.unwrap());
                assert!((lo / p.mean - (-half).exp()).abs() < 1e-9, "{p:?}");
                assert!((hi / p.mean - half.exp()).abs() < 1e-9, "{p:?}");
            }
        }
        let json = serde_json::to_value(&c).unwrap();
        let first = &json["scaling"][0];
        assert_eq!(first["parameter"], "value_usec");
        assert_eq!(first["x_scale"], "log");
        assert_eq!(
            first["metrics"][0]["lines"][1]["points"][0]["verdict"],
            "regression"
        );
        assert_eq!(
            first["metrics"][0]["lines"][0]["points"][0]["interval"],
            "row_variance"
        );
    }

    #[test]
    fn one_run_per_side_has_points_without_intervals_and_two_cases_no_series() {
        let values = [100.0, 200.0, 400.0];
        let c = compare(
            side("base", &[run(1, &values, 1.0)]),
            vec![side("cand", &[run(2, &values, 1.0)])],
            &CalibrationSet::default(),
            Settings::default(),
            None,
        );
        let line = &c.scaling[0].metrics[0].lines[0];
        for p in line.points.iter().flatten() {
            assert_eq!(
                (p.low, p.high, p.interval),
                (None, None, PointInterval::None)
            );
        }
        let c = compare(
            side("base", &[run(1, &values[..2], 1.0)]),
            vec![side("cand", &[run(2, &values[..2], 1.0)])],
            &CalibrationSet::default(),
            Settings::default(),
            None,
        );
        assert!(c.scaling.is_empty());
    }

    #[test]
    fn a_metric_with_rows_at_fewer_than_three_cases_is_left_out() {
        // The candidate lacks the last case: two rows remain, too few for a curve.
        let values = [100.0, 200.0, 400.0];
        let c = compare(
            side("base", &[run(1, &values, 1.0), run(2, &values, 1.0)]),
            vec![side(
                "cand",
                &[run(3, &values[..2], 1.0), run(4, &values[..2], 1.0)],
            )],
            &CalibrationSet::default(),
            Settings::default(),
            None,
        );
        assert_eq!(c.rows.len(), 2);
        assert!(c.scaling.is_empty(), "{:#?}", c.scaling);
    }
}
