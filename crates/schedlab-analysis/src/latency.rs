//! Latency percentile curves from the metrics' declared shapes: each quantile of a distribution
//! (the wakeup workload's `wakeup` and `request` latencies) is a point of its curve at its
//! percentile, and the distribution's max closes it. Each side's value at a point is the median
//! over the side's runs of each run's geometric mean: a curve describes a side, so A/B pairing
//! plays no part. The x position of each point and each candidate's change from the baseline are
//! part of the model, so the page only draws them.
use serde::Serialize;

use schedlab_core::metric::MetricShape;

use crate::series::{Series, Side};
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
    /// The point a metric of this shape is, if it is one.
    pub fn of(shape: MetricShape) -> Option<Point> {
        match shape {
            MetricShape::Quantile(p) => Some(Point::Percentile(p)),
            MetricShape::Max => Some(Point::Max),
            MetricShape::Scalar | MetricShape::Count => None,
        }
    }

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

/// The distribution a series summarises and its point on that distribution's curve; `None` for a
/// series that is no quantile or max.
fn curve_point(series: &Series) -> Option<(&str, Point)> {
    Some((series.distribution.as_deref()?, Point::of(series.shape)?))
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

/// One distribution's curve in one case: the points in order and, per side, a value at each.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Curve {
    pub case: String,
    /// The distribution (`wakeup`).
    pub family: String,
    /// The unit of its values (`usec`), as the first side's first point has it.
    pub unit: String,
    pub points: Vec<Point>,
    /// Each point's place on the x axis (see [`x_position`]).
    pub x: Vec<f64>,
    /// Per side (base first), per point: the median, or `None` where the side lacks the metric.
    pub values: Vec<Vec<Option<f64>>>,
    /// Per side, per point: the change from the baseline's value in percent (`None` for the
    /// baseline itself and where either value is missing or the baseline's is zero).
    pub changes: Vec<Vec<Option<f64>>>,
}

/// The curves of every case that has at least two points of one distribution, one a quantile,
/// in the order cases and distributions first appear (base first).
pub fn curves(sides: &[&Side]) -> Vec<Curve> {
    let mut curves: Vec<Curve> = Vec::new();
    for side in sides {
        for series in &side.series {
            let label = &series.case;
            let Some((family, point)) = curve_point(series) else {
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
                        unit: series.unit.clone(),
                        points: Vec::new(),
                        x: Vec::new(),
                        values: Vec::new(),
                        changes: Vec::new(),
                    });
                    let last = curves.len() - 1;
                    &mut curves[last]
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
        curve.changes = changes(&curve.values);
    }
    curves
}

/// Each side's change from the base (the first side) at each point, in percent; none for the
/// base itself, and none where either side lacks the point or the base's is 0.
pub(crate) fn changes(values: &[Vec<Option<f64>>]) -> Vec<Vec<Option<f64>>> {
    let base = values.first().cloned().unwrap_or_default();
    values
        .iter()
        .enumerate()
        .map(|(i, side)| {
            side.iter()
                .zip(&base)
                .map(|(v, b)| match (i, v, b) {
                    (0, _, _) => None,
                    (_, Some(v), Some(b)) if *b != 0.0 => Some((v / b - 1.0) * 100.0),
                    _ => None,
                })
                .collect()
        })
        .collect()
}

fn side_median(side: &Side, case: &str, family: &str, point: Point) -> Option<f64> {
    let series = side
        .series
        .iter()
        .find(|s| s.case.name == case && curve_point(s) == Some((family, point)))?;
    let scale = Scale::of(series.runs.iter().flat_map(|(_, v)| v.iter().copied()));
    let per_run: Vec<f64> = side
        .groups(series)
        .map(|v| scale.back(v.iter().map(|x| scale.forward(*x)).sum::<f64>() / v.len() as f64))
        .collect();
    median(&per_run).ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use schedlab_core::metric::{Better, MetricDef};
    use schedlab_core::workload::wakeup::metrics as wakeup;

    #[test]
    fn quantiles_and_maxima_are_points_and_nothing_else_is() {
        assert_eq!(
            Point::of(MetricShape::Quantile(99.9)),
            Some(Point::Percentile(99.9))
        );
        assert_eq!(Point::of(MetricShape::Max), Some(Point::Max));
        assert_eq!(Point::of(MetricShape::Scalar), None);
        assert_eq!(Point::of(MetricShape::Count), None);
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

    /// A side of plain numbers whose metrics have the shapes `declared` gives them (plain numbers
    /// are scalars otherwise), as stored runs would carry them.
    fn side(name: &str, rows: Vec<(String, String, Better, Vec<f64>)>) -> Side {
        let mut side = Side::from_values(name, rows);
        for series in &mut side.series {
            if let Some(def) = declared().iter().find(|d| d.name == series.metric) {
                series.unit = def.unit.to_string();
                series.shape = def.shape;
                series.distribution = def.distribution.map(str::to_string);
            }
        }
        side
    }

    /// The wakeup latencies as the workload declares them, and two of a distribution of one point.
    fn declared() -> Vec<MetricDef> {
        const LONELY_P50_USEC: MetricDef =
            MetricDef::primary("lonely_p50_usec", "usec", Better::Lower).quantile("lonely", 50.0);
        let mut defs: Vec<MetricDef> = wakeup::WAKEUP_QUANTILES
            .iter()
            .chain(&wakeup::REQUEST_QUANTILES)
            .copied()
            .collect();
        defs.extend([wakeup::REQUESTS_P50_PER_SEC, LONELY_P50_USEC]);
        defs
    }

    #[test]
    fn builds_curves_from_synthetic_rows() {
        let base = side(
            "base",
            vec![
                row("w", "wakeup_max_usec", &[900.0, 1000.0, 1100.0]),
                row("w", "wakeup_p50_usec", &[4.0, 5.0, 6.0]),
                row("w", "wakeup_p99_9_usec", &[90.0, 100.0, 200.0]),
                row("w", "request_p50_usec", &[40.0, 50.0, 60.0]),
                row("w", "request_p99_usec", &[400.0, 500.0, 600.0]),
                row("w", "requests_p50_per_sec", &[1.0, 2.0, 3.0]),
                row("f", "usec_per_op", &[1.0, 2.0, 3.0]),
                // One point only: no curve.
                row("f", "lonely_p50_usec", &[1.0, 2.0, 3.0]),
            ],
        );
        let cand = side(
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
            (
                wakeup.case.as_str(),
                wakeup.family.as_str(),
                wakeup.unit.as_str()
            ),
            ("w", "wakeup", "usec")
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

    /// A curve is made of what the metrics are declared to be: a name that looks like a
    /// percentile makes no point, and a declared quantile makes one whatever its name.
    #[test]
    fn curves_follow_declared_shapes_not_names() {
        let mut base = Side::from_values(
            "base",
            vec![
                row("w", "wakeup_p50_usec", &[4.0, 5.0, 6.0]),
                row("w", "wakeup_p99_usec", &[40.0, 50.0, 60.0]),
                row("w", "median_wait_nsec", &[1.0, 2.0, 3.0]),
                row("w", "worst_wait_nsec", &[7.0, 8.0, 9.0]),
            ],
        );
        let shapes = [
            MetricShape::Scalar,
            MetricShape::Scalar,
            MetricShape::Quantile(50.0),
            MetricShape::Max,
        ];
        for (series, shape) in base.series.iter_mut().zip(shapes) {
            series.unit = "nsec".into();
            series.shape = shape;
            series.distribution = shape.of_distribution().then(|| "wait".to_string());
        }
        let curves = curves(&[&base]);
        assert_eq!(curves.len(), 1, "{curves:?}");
        assert_eq!(
            (curves[0].family.as_str(), curves[0].unit.as_str()),
            ("wait", "nsec")
        );
        assert_eq!(curves[0].points, [Point::Percentile(50.0), Point::Max]);
        let medians: Vec<f64> = curves[0].values[0].iter().flatten().copied().collect();
        assert_eq!(medians.len(), 2);
        for (got, want) in medians.iter().zip([2.0, 8.0]) {
            assert!((got / want - 1.0).abs() < 1e-12, "{medians:?}");
        }
    }
}
