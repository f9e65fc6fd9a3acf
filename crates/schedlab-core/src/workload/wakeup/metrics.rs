//! The metrics of `wakeup`, by mode: the wake-up and request latency quantiles, the rates, the
//! sample counts and the runqueue delays.
use crate::metric::{Better, MetricDef};

const fn lower_usec(name: &'static str) -> MetricDef {
    MetricDef::primary(name, "usec", Better::Lower)
}

/// A latency quantile: optional, as a distribution that took no sample in the window (an open
/// loop whose workers never ran dry) has none.
const fn latency(name: &'static str, distribution: &'static str, p: f64) -> MetricDef {
    lower_usec(name).quantile(distribution, p).optional()
}

const fn latency_max(name: &'static str, distribution: &'static str) -> MetricDef {
    lower_usec(name).max_of(distribution).optional()
}

/// The quantiles schbench prints of a latency distribution, named `{distribution}_p50_usec` …
/// `{distribution}_max_usec`.
macro_rules! quantiles {
    ($distribution:literal) => {
        [
            latency(concat!($distribution, "_p50_usec"), $distribution, 50.0),
            latency(concat!($distribution, "_p90_usec"), $distribution, 90.0),
            latency(concat!($distribution, "_p99_usec"), $distribution, 99.0),
            latency(concat!($distribution, "_p99_9_usec"), $distribution, 99.9),
            latency_max(concat!($distribution, "_max_usec"), $distribution),
        ]
    };
}

pub const WAKEUP_QUANTILES: [MetricDef; 5] = quantiles!("wakeup");
pub const REQUEST_QUANTILES: [MetricDef; 5] = quantiles!("request");
/// The median of the per-second request-rate samples of the measured window (one a second,
/// so never without a sample).
pub const REQUESTS_P50_PER_SEC: MetricDef =
    MetricDef::primary("requests_p50_per_sec", "requests/sec", Better::Higher)
        .quantile("rps", 50.0);
/// Requests completed in the measured window over its length.
pub const REQUESTS_AVG_PER_SEC: MetricDef = MetricDef::primary("requests_avg_per_sec", "requests/sec", Better::Higher);
/// Pipe mode: transfers per second, all workers together.
pub const OPS_PER_SEC: MetricDef = MetricDef::primary("ops_per_sec", "ops/sec", Better::Higher);
/// Pipe mode: transfers per second per worker, schbench's "avg worker transfer".
pub const WORKER_OPS_PER_SEC: MetricDef =
    MetricDef::primary("worker_ops_per_sec", "ops/sec", Better::Higher).multiple_of(OPS_PER_SEC);
/// Pipe mode: bytes moved per second (each way), all workers together.
pub const MIB_PER_SEC: MetricDef =
    MetricDef::primary("mib_per_sec", "MiB/sec", Better::Higher).multiple_of(OPS_PER_SEC);
// Sample counts are higher-is-better: in the closed-loop modes every sample is one finished
// round, so more samples in the same window is more work done. (In open-loop mode the count
// follows the offered rate, and wakeup samples only occur when a worker ran out of work.)
pub const WAKEUP_SAMPLES_COUNT: MetricDef =
    MetricDef::primary_count("wakeup_samples_count", Better::Higher);
pub const REQUEST_SAMPLES_COUNT: MetricDef =
    MetricDef::primary_count("request_samples_count", Better::Higher);
/// Open loop: requests dropped because every queue of their message thread was full.
pub const REQUESTS_DROPPED_COUNT: MetricDef =
    MetricDef::primary_count("requests_dropped_count", Better::Lower);
/// Mean runqueue wait per timeslice from /proc/<tid>/schedstat over the measured window:
/// optional, as kernels without CONFIG_SCHED_INFO have no schedstat (and a read can fail).
pub const MESSAGE_SCHED_DELAY_USEC: MetricDef =
    lower_usec("message_sched_delay_usec").optional();
pub const WORKER_SCHED_DELAY_USEC: MetricDef = lower_usec("worker_sched_delay_usec").optional();

const W: [MetricDef; 5] = WAKEUP_QUANTILES;
const R: [MetricDef; 5] = REQUEST_QUANTILES;
// One line per group: the wake-up quantiles, the mode's own, the sample counts, the delays.
#[rustfmt::skip]
pub const REQUEST_MODE: &[MetricDef] = &[
    W[0], W[1], W[2], W[3], W[4],
    R[0], R[1], R[2], R[3], R[4], REQUESTS_P50_PER_SEC, REQUESTS_AVG_PER_SEC,
    WAKEUP_SAMPLES_COUNT, REQUEST_SAMPLES_COUNT,
    MESSAGE_SCHED_DELAY_USEC, WORKER_SCHED_DELAY_USEC,
];
#[rustfmt::skip]
pub const PIPE_MODE: &[MetricDef] = &[
    W[0], W[1], W[2], W[3], W[4],
    OPS_PER_SEC, WORKER_OPS_PER_SEC, MIB_PER_SEC,
    WAKEUP_SAMPLES_COUNT,
    MESSAGE_SCHED_DELAY_USEC, WORKER_SCHED_DELAY_USEC,
];
#[rustfmt::skip]
pub const OPEN_LOOP_MODE: &[MetricDef] = &[
    W[0], W[1], W[2], W[3], W[4],
    R[0], R[1], R[2], R[3], R[4], REQUESTS_P50_PER_SEC, REQUESTS_AVG_PER_SEC,
    WAKEUP_SAMPLES_COUNT, REQUEST_SAMPLES_COUNT, REQUESTS_DROPPED_COUNT,
    MESSAGE_SCHED_DELAY_USEC, WORKER_SCHED_DELAY_USEC,
];
