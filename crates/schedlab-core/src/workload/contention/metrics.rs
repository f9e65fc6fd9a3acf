//! The metrics of `contention`: every testcase's rates and fairness, the storm's wake calls, and
//! the user-space locks' latency quantiles and off-CPU probes; and how the rates are computed
//! from the ops each task counted in the measured window.
use crate::latency;
use crate::metric::{Better, Measurement, MetricDef};
use crate::{Error, Result};

pub const OPS_PER_SEC: MetricDef = MetricDef::primary("ops_per_sec", "ops/sec", Better::Higher);
pub const MEAN_TASK_OPS_PER_SEC: MetricDef =
    MetricDef::secondary("mean_task_ops_per_sec", "ops/sec", Better::Higher);
pub const MIN_TASK_OPS_PER_SEC: MetricDef =
    MetricDef::secondary("min_task_ops_per_sec", "ops/sec", Better::Higher);
pub const MAX_TASK_OPS_PER_SEC: MetricDef =
    MetricDef::secondary("max_task_ops_per_sec", "ops/sec", Better::Higher);
pub const JAIN_FAIRNESS_INDEX: MetricDef =
    MetricDef::secondary("jain_fairness_index", "index", Better::Higher);

/// futex-wake-storm: the waker's FUTEX_WAKE calls in the window.
pub const WAKE_CALLS_PER_SEC: MetricDef =
    MetricDef::secondary("wake_calls_per_sec", "calls/sec", Better::Higher);

/// The user-space locks: latency quantiles in ns of the sampled critical sections, as wakeup's
/// (optional: a window may take no sample), and how often the probed holders went off CPU.
pub(super) const fn lower_nsec(name: &'static str) -> MetricDef {
    MetricDef::secondary(name, "nsec", Better::Lower)
}
pub const ACQUIRE_QUANTILES: [MetricDef; 5] = [
    lower_nsec("acquire_p50_nsec").quantile("acquire", 50.0).optional(),
    lower_nsec("acquire_p90_nsec").quantile("acquire", 90.0).optional(),
    lower_nsec("acquire_p99_nsec").quantile("acquire", 99.0).optional(),
    lower_nsec("acquire_p99_9_nsec").quantile("acquire", 99.9).optional(),
    lower_nsec("acquire_max_nsec").max_of("acquire").optional(),
];
pub const HOLD_QUANTILES: [MetricDef; 5] = [
    lower_nsec("hold_p50_nsec").quantile("hold", 50.0).optional(),
    lower_nsec("hold_p90_nsec").quantile("hold", 90.0).optional(),
    lower_nsec("hold_p99_nsec").quantile("hold", 99.0).optional(),
    lower_nsec("hold_p99_9_nsec").quantile("hold", 99.9).optional(),
    lower_nsec("hold_max_nsec").max_of("hold").optional(),
];
pub const LOCK_SAMPLES_COUNT: MetricDef =
    MetricDef::secondary_count("lock_samples_count", Better::Higher);
pub const HOLDER_OFF_CPU_PCT: MetricDef =
    MetricDef::secondary("holder_off_cpu_pct", "percent", Better::Lower).optional();
pub const HOLDER_OFF_CPU_PROBES_COUNT: MetricDef =
    MetricDef::secondary_count("holder_off_cpu_probes_count", Better::Higher);
/// The percentiles of the quantiles above, in tenths of a percent.
pub(super) const QUANTILE_PER_MILLE: [latency::PerMille; 4] = [500, 900, 990, 999];
/// The histograms stored with every iteration of a user-space lock (HdrHistogram V2, deflate).
pub const ACQUIRE_ATTACHMENT: &str = "acquire_latency_ns";
pub const HOLD_ATTACHMENT: &str = "hold_time_ns";

/// Every testcase's metrics.
pub(super) const BASE_METRICS: &[MetricDef] = &[
    OPS_PER_SEC,
    MEAN_TASK_OPS_PER_SEC,
    MIN_TASK_OPS_PER_SEC,
    MAX_TASK_OPS_PER_SEC,
    JAIN_FAIRNESS_INDEX,
];
pub(super) const STORM_METRICS: &[MetricDef] = &[
    OPS_PER_SEC,
    MEAN_TASK_OPS_PER_SEC,
    MIN_TASK_OPS_PER_SEC,
    MAX_TASK_OPS_PER_SEC,
    JAIN_FAIRNESS_INDEX,
    WAKE_CALLS_PER_SEC,
];
pub(super) const LOCK_METRICS: &[MetricDef] = &[
    OPS_PER_SEC,
    MEAN_TASK_OPS_PER_SEC,
    MIN_TASK_OPS_PER_SEC,
    MAX_TASK_OPS_PER_SEC,
    JAIN_FAIRNESS_INDEX,
    ACQUIRE_QUANTILES[0],
    ACQUIRE_QUANTILES[1],
    ACQUIRE_QUANTILES[2],
    ACQUIRE_QUANTILES[3],
    ACQUIRE_QUANTILES[4],
    HOLD_QUANTILES[0],
    HOLD_QUANTILES[1],
    HOLD_QUANTILES[2],
    HOLD_QUANTILES[3],
    HOLD_QUANTILES[4],
    LOCK_SAMPLES_COUNT,
    HOLDER_OFF_CPU_PCT,
    HOLDER_OFF_CPU_PROBES_COUNT,
];

/// Jain's fairness index of per-task op counts: (Σx)² / (n·Σx²), 1 when every task did the same,
/// 1/n when one task did everything; `None` when no task did anything.
pub fn jain_index(counts: &[u64]) -> Option<f64> {
    let n = counts.len() as f64;
    let sum: f64 = counts.iter().map(|&c| c as f64).sum();
    let squares: f64 = counts.iter().map(|&c| (c as f64) * (c as f64)).sum();
    (squares > 0.0).then(|| sum * sum / (n * squares))
}

/// The metrics of every testcase from the tasks' ops in the window.
pub(super) fn rate_metrics(ops: &[u64], window_ns: u64) -> Result<Vec<Measurement>> {
    let sec = window_ns.max(1) as f64 / 1e9;
    let total: u64 = ops.iter().sum();
    let jain = jain_index(ops).ok_or_else(|| {
        Error::failed(format!(
            "no task completed an op in the {sec:.3} s measured window; every task starved"
        ))
    })?;
    let rate = |ops: u64| ops as f64 / sec;
    let min = ops.iter().copied().min().unwrap_or(0);
    let max = ops.iter().copied().max().unwrap_or(0);
    Ok(vec![
        OPS_PER_SEC.value(rate(total)),
        MEAN_TASK_OPS_PER_SEC.value(rate(total) / ops.len() as f64),
        MIN_TASK_OPS_PER_SEC.value(rate(min)),
        MAX_TASK_OPS_PER_SEC.value(rate(max)),
        JAIN_FAIRNESS_INDEX.value(jain),
    ])
}
