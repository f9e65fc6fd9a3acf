//! What a measurement stored without its metric's definition is taken to be: runs stored before
//! V7 kept only a metric's name, unit, direction and role, and their shape is derived here exactly
//! as schedlab read it then, so their show and compare output stays what it was. This is the one
//! place that reads anything from a metric's name, and only for such rows (pre-V7 files, and
//! measurement rows a V7 file holds without a `metrics` row); everything stored since carries the
//! definition its workload declared.
use schedlab_core::metric::MetricShape;

/// The shape, and the distribution of a quantile or max, of a measurement stored before V7: a
/// quantile or max where the name follows the old percentile convention (see [`percentile_name`]),
/// a count where the unit is `count`, else a scalar.
pub fn shape_before_v7(name: &str, unit: &str) -> (MetricShape, Option<String>) {
    if let Some((distribution, shape)) = percentile_name(name) {
        return (shape, Some(distribution.to_string()));
    }
    if unit == "count" {
        return (MetricShape::Count, None);
    }
    (MetricShape::Scalar, None)
}

/// The convention the latency curves went by before V7: `<distribution>_p<N>[_<M>]_usec` is the
/// quantile N.M (the `_` stands for the decimal point, which names cannot hold) and
/// `<distribution>_max_usec` the max, for a lower-case snake_case distribution.
/// `wakeup_p99_9_usec` → `("wakeup", Quantile(99.9))`, `request_max_usec` → `("request", Max)`.
fn percentile_name(name: &str) -> Option<(&str, MetricShape)> {
    let stem = name.strip_suffix("_usec")?;
    if let Some(distribution) = stem.strip_suffix("_max") {
        return valid_distribution(distribution).then_some((distribution, MetricShape::Max));
    }
    // The last `_p`: a distribution may itself contain `_p` (`tcp_pkt_p50_usec`).
    let (distribution, digits) = stem.rsplit_once("_p")?;
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
    (valid_distribution(distribution) && p > 0.0 && p < 100.0)
        .then_some((distribution, MetricShape::Quantile(p)))
}

fn valid_distribution(distribution: &str) -> bool {
    !distribution.is_empty()
        && distribution
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_')
}

#[cfg(test)]
mod tests {
    use super::*;
    use schedlab_core::workload::wakeup::metrics as wakeup;

    #[test]
    fn old_percentile_names_are_quantiles_and_maxima() {
        let quantile = |d: &str, p: f64| (MetricShape::Quantile(p), Some(d.to_string()));
        assert_eq!(
            shape_before_v7("wakeup_p50_usec", "usec"),
            quantile("wakeup", 50.0)
        );
        assert_eq!(
            shape_before_v7("wakeup_p99_9_usec", "usec"),
            quantile("wakeup", 99.9)
        );
        assert_eq!(
            shape_before_v7("request_p99_99_usec", "usec"),
            quantile("request", 99.99)
        );
        assert_eq!(
            shape_before_v7("request_max_usec", "usec"),
            (MetricShape::Max, Some("request".to_string()))
        );
        assert_eq!(
            shape_before_v7("queue_wait_p90_usec", "usec"),
            quantile("queue_wait", 90.0)
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
            assert_eq!(
                shape_before_v7(not_a_point, "usec"),
                (MetricShape::Scalar, None),
                "{not_a_point}"
            );
        }
        assert_eq!(
            shape_before_v7("res_ipi_count", "count"),
            (MetricShape::Count, None)
        );
    }

    /// Old rows of the wakeup latencies read as what the wakeup workload now declares, so runs
    /// stored before V7 and after draw the same curves.
    #[test]
    fn old_wakeup_latencies_read_as_they_are_declared_now() {
        for def in wakeup::WAKEUP_QUANTILES
            .iter()
            .chain(&wakeup::REQUEST_QUANTILES)
            .chain([&wakeup::WAKEUP_SAMPLES_COUNT, &wakeup::REQUESTS_AVG_PER_SEC])
        {
            let (shape, distribution) = shape_before_v7(def.name, def.unit);
            assert_eq!(shape, def.shape, "{}", def.name);
            assert_eq!(distribution.as_deref(), def.distribution, "{}", def.name);
        }
    }
}
