//! Latency percentile curves from metric names: any `<family>_p<N>[_<M>]_usec` metric (the
//! wakeup workload's `wakeup_p99_9_usec`, `request_p50_usec`, …) is a point of its family's
//! curve at percentile N.M, and `<family>_max_usec` closes it. Each side's value at a point is the
//! median over the side's runs of each run's geometric mean: a curve describes a side, so A/B
//! pairing plays no part. The x position of each point and each candidate's change from the
//! baseline are part of the model, so the page only draws them.
use serde::Serialize;

use crate::series::Side;
use crate::units::Scale;
use schedlab_stats::summary::median;

/// Where on a latency curve a metric lies.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[serde(tag = "kind", content = "percentile", rename_all = "lowercase")]
pub enum Point {
    /// A percentile in (0, 100).
    Percentile(f64),
    Max,
}

impl Point {
    pub fn label(self) -> String {
        match self {
            Point::Percentile(p) => format!("p{p}"),
            Point::Max => "max".to_string(),
        }
    }

    fn order(self) -> f64 {
        match self {
            Point::Percentile(p) => p,
            Point::Max => f64::INFINITY,
        }
    }
}

/// `wakeup_p99_9_usec` → `("wakeup", Percentile(99.9))`, `request_max_usec` → `("request", Max)`;
/// `None` for any other name. The digits after `p` are the percentile with `_` for the decimal
/// point, as metric names cannot hold a dot.
pub fn parse_metric(name: &str) -> Option<(&str, Point)> {
    let stem = name.strip_suffix("_usec")?;
    if let Some(family) = stem.strip_suffix("_max") {
        return valid_family(family).then_some((family, Point::Max));
    }
    // The last `_p`: a family may itself contain `_p` (`tcp_pkt_p50_usec`).
    let (family, digits) = stem.rsplit_once("_p")?;
    let (whole, fraction) = match digits.split_once('_') {
        Some((w, f)) => (w, Some(f)),
        None => (digits, None),
    };
    let all_digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    if !all_digits(whole) || fraction.is_some_and(|f| !all_digits(f)) {
        return None;
    }
    let p: f64 = match fraction {
        Some(f) => format!("{whole}.{f}").parse().ok()?,
        None => whole.parse().ok()?,
    };
    (valid_family(family) && p > 0.0 && p < 100.0).then_some((family, Point::Percentile(p)))
}

fn valid_family(family: &str) -> bool {
    !family.is_empty()
        && family
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_')
}

/// Where a point sits on the x axis: percentile p at `-log10(1 - p/100)` (p50 at 0.3, p90 at 1,
/// p99 at 2, p99.9 at 3), so the tail gets the room it needs; max one step past the last
/// percentile.
pub fn x_position(points: &[Point]) -> Vec<f64> {
    let tail = |p: f64| -(1.0 - p / 100.0).log10();
    let last = points
        .iter()
        .filter_map(|p| match p {
            Point::Percentile(p) => Some(tail(*p)),
            Point::Max => None,
        })
        .fold(0.0_f64, f64::max);
    points
        .iter()
        .map(|p| match p {
            Point::Percentile(p) => tail(*p),
            Point::Max => last + 1.0,
        })
        .collect()
}

/// One family's curve in one case: the points in order and, per side, a value at each.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Curve {
    pub case: String,
    pub family: String,
    pub points: Vec<Point>,
    /// Each point's place on the x axis (see [`x_position`]).
    pub x: Vec<f64>,
    /// Per side (base first), per point: the median, or `None` where the side lacks the metric.
    pub values: Vec<Vec<Option<f64>>>,
    /// Per side, per point: the change from the baseline's value in percent (`None` for the
    /// baseline itself and where either value is missing or the baseline's is zero).
    pub changes: Vec<Vec<Option<f64>>>,
}

/// The curves of every case that has at least two points of one family, in the order cases
/// and families first appear (base first).
pub fn curves(sides: &[&Side]) -> Vec<Curve> {
    let mut curves: Vec<Curve> = Vec::new();
    for side in sides {
        for series in &side.series {
            let (label, metric) = (&series.case, &series.metric);
            let Some((family, point)) = parse_metric(metric) else {
                continue;
            };
            let curve = match curves
                .iter_mut()
                .position(|c| c.case == label.name && c.family == family)
            {
                Some(i) => &mut curves[i],
                None => {
                    curves.push(Curve {
                        case: label.name.clone(),
                        family: family.to_string(),
                        points: Vec::new(),
                        x: Vec::new(),
                        values: Vec::new(),
                        changes: Vec::new(),
                    });
                    curves.last_mut().expect("just pushed")
                }
            };
            if !curve.points.contains(&point) {
                curve.points.push(point);
            }
        }
    }
    curves.retain(|c| {
        c.points.len() >= 2 && c.points.iter().any(|p| matches!(p, Point::Percentile(_)))
    });
    for curve in &mut curves {
        curve.points.sort_by(|a, b| a.order().total_cmp(&b.order()));
        curve.values = sides
            .iter()
            .map(|side| {
                curve
                    .points
                    .iter()
                    .map(|point| side_median(side, &curve.case, &curve.family, *point))
                    .collect()
            })
            .collect();
        curve.x = x_position(&curve.points);
        let base = curve.values.first().cloned().unwrap_or_default();
        curve.changes = curve
            .values
            .iter()
            .enumerate()
            .map(|(i, values)| {
                values
                    .iter()
                    .zip(&base)
                    .map(|(v, b)| match (i, v, b) {
                        (0, _, _) => None,
                        (_, Some(v), Some(b)) if *b != 0.0 => Some((v / b - 1.0) * 100.0),
                        _ => None,
                    })
                    .collect()
            })
            .collect();
    }
    curves
}

fn side_median(side: &Side, case: &str, family: &str, point: Point) -> Option<f64> {
    let series = side
        .series
        .iter()
        .find(|s| s.case.name == case && parse_metric(&s.metric) == Some((family, point)))?;
    let scale = Scale::of(series.runs.iter().flat_map(|(_, v)| v.iter().copied()));
    let per_run: Vec<f64> = series
        .runs
        .iter()
        .filter(|(_, v)| !v.is_empty())
        .map(|(_, v)| scale.back(v.iter().map(|x| scale.forward(*x)).sum::<f64>() / v.len() as f64))
        .collect();
    median(&per_run).ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use schedlab_core::metric::Better;

    #[test]
    fn parses_percentile_metric_names() {
        assert_eq!(
            parse_metric("wakeup_p50_usec"),
            Some(("wakeup", Point::Percentile(50.0)))
        );
        assert_eq!(
            parse_metric("wakeup_p99_9_usec"),
            Some(("wakeup", Point::Percentile(99.9)))
        );
        assert_eq!(
            parse_metric("request_p99_99_usec"),
            Some(("request", Point::Percentile(99.99)))
        );
        assert_eq!(
            parse_metric("request_max_usec"),
            Some(("request", Point::Max))
        );
        assert_eq!(
            parse_metric("queue_wait_p90_usec"),
            Some(("queue_wait", Point::Percentile(90.0)))
        );
        for not_a_point in [
            "usec_per_op",
            "rps_p50",
            "wakeup_p_usec",
            "wakeup_p99__usec",
            "wakeup_p99_9_9_usec",
            "wakeup_pxx_usec",
            "wakeup_p100_usec",
            "wakeup_p0_usec",
            "_p50_usec",
            "message_sched_delay_usec",
            "Wakeup_p50_usec",
        ] {
            assert_eq!(parse_metric(not_a_point), None, "{not_a_point}");
        }
        assert_eq!(Point::Percentile(99.9).label(), "p99.9");
    }

    #[test]
    fn places_the_tail_on_a_log_like_axis() {
        let points = [
            Point::Percentile(50.0),
            Point::Percentile(90.0),
            Point::Percentile(99.0),
            Point::Percentile(99.9),
            Point::Max,
        ];
        let x = x_position(&points);
        let expected = [std::f64::consts::LOG10_2, 1.0, 2.0, 3.0, 4.0];
        for (a, b) in x.iter().zip(expected) {
            assert!((a - b).abs() < 1e-4, "{x:?}");
        }
    }

    fn row(case: &str, metric: &str, values: &[f64]) -> (String, String, Better, Vec<f64>) {
        (case.into(), metric.into(), Better::Lower, values.to_vec())
    }

    #[test]
    fn builds_curves_from_synthetic_rows() {
        let base = Side::from_values(
            "base",
            vec![
                row("w", "wakeup_max_usec", &[900.0, 1000.0, 1100.0]),
                row("w", "wakeup_p50_usec", &[4.0, 5.0, 6.0]),
                row("w", "wakeup_p99_9_usec", &[90.0, 100.0, 200.0]),
                row("w", "request_p50_usec", &[40.0, 50.0, 60.0]),
                row("w", "request_p99_usec", &[400.0, 500.0, 600.0]),
                row("w", "rps_p50", &[1.0, 2.0, 3.0]),
                row("f", "usec_per_op", &[1.0, 2.0, 3.0]),
                // One point only: no curve.
                row("f", "lonely_p50_usec", &[1.0, 2.0, 3.0]),
            ],
        );
        let cand = Side::from_values(
            "cand",
            vec![
                row("w", "wakeup_p50_usec", &[6.0, 7.0, 8.0]),
                row("w", "wakeup_p99_9_usec", &[300.0, 310.0, 320.0]),
            ],
        );
        let curves = curves(&[&base, &cand]);
        assert_eq!(curves.len(), 2, "{curves:?}");
        let wakeup = &curves[0];
        assert_eq!(
            (wakeup.case.as_str(), wakeup.family.as_str()),
            ("w", "wakeup")
        );
        assert_eq!(
            wakeup.points,
            vec![Point::Percentile(50.0), Point::Percentile(99.9), Point::Max]
        );
        // Medians go through the log scale and back, so they are equal to a few ulps.
        let close = |got: &[Option<f64>], want: &[Option<f64>]| {
            assert_eq!(got.len(), want.len(), "{got:?}");
            for (g, w) in got.iter().zip(want) {
                match (g, w) {
                    (Some(g), Some(w)) => assert!((g / w - 1.0).abs() < 1e-12, "{got:?}"),
                    _ => assert_eq!(g, w, "{got:?}"),
                }
            }
        };
        close(&wakeup.values[0], &[Some(5.0), Some(100.0), Some(1000.0)]);
        close(&wakeup.values[1], &[Some(7.0), Some(310.0), None]);
        assert_eq!(wakeup.changes[0], vec![None, None, None]);
        close(&wakeup.changes[1][..1], &[Some(40.0)]);
        assert_eq!(wakeup.changes[1][2], None);
        assert_eq!(curves[1].family, "request");
        assert_eq!(curves[1].values[1], vec![None, None]);
    }
}
