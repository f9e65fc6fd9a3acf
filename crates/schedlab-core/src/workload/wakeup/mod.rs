//! The `wakeup` workload (alias `schbench`), the class of schbench: message threads wake worker
//! threads through futexes and the workers measure how long the scheduler took to run them.
//!
//! Three modes. Request mode (the default, schbench's): each worker posts itself to its message
//! thread and sleeps; once woken it serves a request (sleep `sleep_usec`, then `operations`
//! matrix multiplies sized by `cache_footprint` under a per-CPU lock with schbench's preemption
//! penalty) and posts itself again. Pipe mode (`pipe` bytes, schbench -p): no sleep and no math,
//! each round moves the bytes both ways, so it measures futex hand-off latency and throughput.
//! Open-loop mode (`rps`): requests arrive at a fixed rate whatever the service time, and their
//! latency counts the time they wait in the queue, which schbench -R leaves out.
//!
//! Differences from schbench, all on purpose (docs/wakeup.md): CLOCK_MONOTONIC in nanoseconds
//! instead of gettimeofday's microseconds; the waker stamps the time for each wakee just before
//! its wake call (schbench stamps once per batch, so later wakees absorb the waker's work);
//! latencies go into HDR histograms stored with each iteration; the warm-up is a phase that
//! discards samples instead of a racy reset; sched delay is read over the measured window while
//! the threads are alive.
use serde::{Deserialize, Serialize};

use super::{check_range, IterationInfo, IterationOutput, Workload};
use crate::metric::MetricDef;
use crate::sys;
use crate::{Error, Result};

pub mod latency;
mod run;
mod sync;
mod work;

pub use latency::{latency_tables, LatencyRow, LatencyTable};
pub use run::{Books, Mode};

/// schbench's limit on -p.
pub const MAX_PIPE_BYTES: u64 = 1 << 20;
const MAX_MESSAGE_THREADS: u64 = 1_024;
const MAX_WORKERS: u64 = 4_096;
const MAX_RUNTIME_SEC: u64 = 86_400;
const MAX_SLEEP_USEC: u64 = 10_000_000;
const MAX_OPERATIONS: u64 = 1_000_000;
/// 4 GiB per worker.
const MAX_FOOTPRINT_KB: u64 = 4 * 1024 * 1024;
const MAX_RPS: u64 = 10_000_000;
const DEFAULT_SLEEP_USEC: u64 = 100;
const DEFAULT_OPERATIONS: u64 = 5;
const DEFAULT_FOOTPRINT_KB: u64 = 256;

fn default_message_threads() -> u64 {
    1
}
fn default_runtime() -> u64 {
    10
}

/// The workload's metrics, by mode.
pub mod metrics {
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

    pub const WAKEUP_QUANTILES: [MetricDef; 5] = [
        latency("wakeup_p50_usec", "wakeup", 50.0),
        latency("wakeup_p90_usec", "wakeup", 90.0),
        latency("wakeup_p99_usec", "wakeup", 99.0),
        latency("wakeup_p99_9_usec", "wakeup", 99.9),
        latency_max("wakeup_max_usec", "wakeup"),
    ];
    pub const REQUEST_QUANTILES: [MetricDef; 5] = [
        latency("request_p50_usec", "request", 50.0),
        latency("request_p90_usec", "request", 90.0),
        latency("request_p99_usec", "request", 99.0),
        latency("request_p99_9_usec", "request", 99.9),
        latency_max("request_max_usec", "request"),
    ];
    /// The median of the per-second request-rate samples of the measured window (one a second,
    /// so never without a sample).
    pub const RPS_P50: MetricDef =
        MetricDef::primary("rps_p50", "requests/sec", Better::Higher).quantile("rps", 50.0);
    /// Requests completed in the measured window over its length.
    pub const RPS_AVG: MetricDef = MetricDef::primary("rps_avg", "requests/sec", Better::Higher);
    /// Pipe mode: transfers per second, all workers together.
    pub const OPS_PER_SEC: MetricDef = MetricDef::primary("ops_per_sec", "ops/sec", Better::Higher);
    /// Pipe mode: transfers per second per worker, schbench's "avg worker transfer".
    pub const WORKER_OPS_PER_SEC: MetricDef =
        MetricDef::primary("worker_ops_per_sec", "ops/sec", Better::Higher);
    /// Pipe mode: bytes moved per second (each way), all workers together.
    pub const MIB_PER_SEC: MetricDef = MetricDef::primary("mib_per_sec", "MiB/sec", Better::Higher);
    // Sample counts are higher-is-better: in the closed-loop modes every sample is one finished
    // round, so more samples in the same window is more work done. (In open-loop mode the count
    // follows the offered rate, and wakeup samples only occur when a worker ran out of work.)
    pub const WAKEUP_SAMPLES_COUNT: MetricDef =
        MetricDef::primary("wakeup_samples_count", "count", Better::Higher).count();
    pub const REQUEST_SAMPLES_COUNT: MetricDef =
        MetricDef::primary("request_samples_count", "count", Better::Higher).count();
    /// Open loop: requests dropped because every queue of their message thread was full.
    pub const REQUESTS_DROPPED_COUNT: MetricDef =
        MetricDef::primary("requests_dropped_count", "count", Better::Lower).count();
    /// Mean runqueue wait per timeslice from /proc/<tid>/schedstat over the measured window:
    /// optional, as kernels without CONFIG_SCHED_INFO have no schedstat (and a read can fail).
    pub const MESSAGE_SCHED_DELAY_USEC: MetricDef =
        lower_usec("message_sched_delay_usec").optional();
    pub const WORKER_SCHED_DELAY_USEC: MetricDef = lower_usec("worker_sched_delay_usec").optional();

    const W: [MetricDef; 5] = WAKEUP_QUANTILES;
    const R: [MetricDef; 5] = REQUEST_QUANTILES;
    pub const REQUEST_MODE: &[MetricDef] = &[
        W[0],
        W[1],
        W[2],
        W[3],
        W[4],
        R[0],
        R[1],
        R[2],
        R[3],
        R[4],
        RPS_P50,
        RPS_AVG,
        WAKEUP_SAMPLES_COUNT,
        REQUEST_SAMPLES_COUNT,
        MESSAGE_SCHED_DELAY_USEC,
        WORKER_SCHED_DELAY_USEC,
    ];
    pub const PIPE_MODE: &[MetricDef] = &[
        W[0],
        W[1],
        W[2],
        W[3],
        W[4],
        OPS_PER_SEC,
        WORKER_OPS_PER_SEC,
        MIB_PER_SEC,
        WAKEUP_SAMPLES_COUNT,
        MESSAGE_SCHED_DELAY_USEC,
        WORKER_SCHED_DELAY_USEC,
    ];
    pub const OPEN_LOOP_MODE: &[MetricDef] = &[
        W[0],
        W[1],
        W[2],
        W[3],
        W[4],
        R[0],
        R[1],
        R[2],
        R[3],
        R[4],
        RPS_P50,
        RPS_AVG,
        WAKEUP_SAMPLES_COUNT,
        REQUEST_SAMPLES_COUNT,
        REQUESTS_DROPPED_COUNT,
        MESSAGE_SCHED_DELAY_USEC,
        WORKER_SCHED_DELAY_USEC,
    ];
}

/// The parameters, as written in suite files (keys are the long flags with `-` as `_`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WakeupParams {
    #[serde(default = "default_message_threads")]
    pub message_threads: u64,
    /// Workers per message thread; unset means ceil(CPUs this process may use / message_threads),
    /// resolved on the machine that runs the case.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workers: Option<u64>,
    /// Seconds measured per iteration.
    #[serde(default = "default_runtime")]
    pub runtime: u64,
    /// Seconds run before the measured window of each iteration, samples discarded.
    #[serde(default)]
    pub warmup_sec: u64,
    /// Request mode: the sleep that starts each request (µs; default 100).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sleep_usec: Option<u64>,
    /// Request mode: matrix multiplies per request (default 5).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub operations: Option<u64>,
    /// Request mode: KiB the three matrices of each worker fill (default 256).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_footprint: Option<u64>,
    /// Request mode: no per-CPU lock around the math.
    #[serde(default)]
    pub no_lock: bool,
    /// Pipe mode: bytes moved each way per round.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pipe: Option<u64>,
    /// Open-loop mode: requests per second over all message threads.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rps: Option<u64>,
    /// Message thread i runs on the (i mod n)-th of these CPUs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message_cpus: Option<Vec<u32>>,
    /// Every worker may run on any of these CPUs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub worker_cpus: Option<Vec<u32>>,
}

impl Default for WakeupParams {
    fn default() -> Self {
        WakeupParams {
            message_threads: default_message_threads(),
            workers: None,
            runtime: default_runtime(),
            warmup_sec: 0,
            sleep_usec: None,
            operations: None,
            cache_footprint: None,
            no_lock: false,
            pipe: None,
            rps: None,
            message_cpus: None,
            worker_cpus: None,
        }
    }
}

impl WakeupParams {
    pub fn mode(&self) -> Mode {
        match (self.pipe, self.rps) {
            (Some(bytes), _) => Mode::Pipe {
                bytes: bytes as usize,
            },
            (None, Some(rate)) => Mode::OpenLoop { rate },
            (None, None) => Mode::Request,
        }
    }

    /// Workers per message thread: the given count, else ceil(usable CPUs / message threads).
    pub fn workers_per_message(&self) -> u64 {
        self.workers.unwrap_or_else(|| {
            let cpus = sys::allowed_cpus().map_or(1, |c| c.len().max(1)) as u64;
            cpus.div_ceil(self.message_threads.max(1))
        })
    }

    pub fn sleep_usec(&self) -> u64 {
        self.sleep_usec.unwrap_or(DEFAULT_SLEEP_USEC)
    }

    pub fn operations(&self) -> u64 {
        self.operations.unwrap_or(DEFAULT_OPERATIONS)
    }

    pub fn cache_footprint(&self) -> u64 {
        self.cache_footprint.unwrap_or(DEFAULT_FOOTPRINT_KB)
    }

    pub fn validate(&self) -> Result<()> {
        check_range(
            "message-threads",
            self.message_threads,
            1,
            MAX_MESSAGE_THREADS,
        )?;
        if let Some(workers) = self.workers {
            check_range("workers", workers, 1, MAX_WORKERS)?;
        }
        check_range("runtime", self.runtime, 1, MAX_RUNTIME_SEC)?;
        check_range("warmup-sec", self.warmup_sec, 0, MAX_RUNTIME_SEC)?;
        if let Some(bytes) = self.pipe {
            check_range("pipe", bytes, 1, MAX_PIPE_BYTES)?;
            if self.rps.is_some() {
                return Err(Error::invalid("--pipe and --rps cannot be combined"));
            }
            let request_flags = [
                ("sleep-usec", self.sleep_usec.is_some()),
                ("operations", self.operations.is_some()),
                ("cache-footprint", self.cache_footprint.is_some()),
                ("no-lock", self.no_lock),
            ];
            if let Some((flag, _)) = request_flags.iter().find(|(_, given)| *given) {
                return Err(Error::invalid(format!(
                    "--{flag} has no effect with --pipe (pipe mode does no sleep and no math)"
                )));
            }
        }
        if let Some(rate) = self.rps {
            check_range("rps", rate, 1, MAX_RPS)?;
        }
        check_range("sleep-usec", self.sleep_usec(), 0, MAX_SLEEP_USEC)?;
        check_range("operations", self.operations(), 0, MAX_OPERATIONS)?;
        check_range(
            "cache-footprint",
            self.cache_footprint(),
            1,
            MAX_FOOTPRINT_KB,
        )?;
        for (flag, cpus) in [
            ("message-cpus", &self.message_cpus),
            ("worker-cpus", &self.worker_cpus),
        ] {
            if let Some(cpus) = cpus {
                check_cpus(flag, cpus)?;
            }
        }
        self.check_machine()
    }

    /// Refuses what this machine cannot hold: more threads than its limits, more matrix memory
    /// than it has available.
    fn check_machine(&self) -> Result<()> {
        let workers = self.message_threads * self.workers_per_message();
        let threads = workers + self.message_threads;
        if let Some(max) = read_u64("/proc/sys/kernel/threads-max") {
            if threads > max {
                return Err(Error::invalid(format!(
                    "{threads} threads exceed kernel.threads-max = {max}; use fewer workers"
                )));
            }
        }
        if !sys::effective_uid_is_root() {
            if let Some(soft) = sys::process_count_limit().soft {
                if threads > soft {
                    return Err(Error::invalid(format!(
                        "{threads} threads exceed RLIMIT_NPROC = {soft} (`ulimit -u`); use fewer \
                         workers"
                    )));
                }
            }
        }
        if matches!(self.mode(), Mode::Pipe { .. }) {
            return Ok(());
        }
        let n = work::matrix_size(self.cache_footprint()) as u64;
        let needed = workers * 3 * n * n * 8;
        if let Some(available) = mem_available_bytes() {
            if needed > available {
                return Err(Error::invalid(format!(
                    "--cache-footprint {} KiB × {workers} workers needs {} MiB of matrices, but \
                     only {} MiB of memory is available",
                    self.cache_footprint(),
                    needed >> 20,
                    available >> 20
                )));
            }
        }
        Ok(())
    }

    pub fn case_name(&self) -> String {
        let m = self.message_threads;
        let t = self.workers_per_message();
        let request = format!(
            "sleep={} ops={} footprint={}",
            self.sleep_usec(),
            self.operations(),
            self.cache_footprint()
        );
        let mut name = match self.mode() {
            Mode::Pipe { bytes } => {
                format!(
                    "wakeup:pipe bytes={bytes} m={m} t={t} runtime={}",
                    self.runtime
                )
            }
            Mode::Request => format!(
                "wakeup:request m={m} t={t} runtime={} {request}",
                self.runtime
            ),
            Mode::OpenLoop { rate } => format!(
                "wakeup:rps rate={rate} m={m} t={t} runtime={} {request}",
                self.runtime
            ),
        };
        if self.no_lock {
            name.push_str(" no-lock");
        }
        if self.warmup_sec > 0 {
            name.push_str(&format!(" warmup={}", self.warmup_sec));
        }
        if let Some(cpus) = &self.message_cpus {
            name.push_str(&format!(" message-cpus={}", format_cpu_list(cpus)));
        }
        if let Some(cpus) = &self.worker_cpus {
            name.push_str(&format!(" worker-cpus={}", format_cpu_list(cpus)));
        }
        name
    }

    fn config(&self) -> run::Config {
        let mode = self.mode();
        run::Config {
            mode,
            message_threads: self.message_threads as usize,
            workers_per_message: self.workers_per_message() as usize,
            runtime_sec: self.runtime,
            warmup_sec: self.warmup_sec,
            sleep_ns: self.sleep_usec() * 1_000,
            operations: self.operations(),
            matrix_n: work::matrix_size(self.cache_footprint()),
            lock: !self.no_lock,
            message_cpus: self.message_cpus.clone(),
            worker_cpus: self.worker_cpus.clone(),
        }
    }
}

fn check_cpus(flag: &str, cpus: &[u32]) -> Result<()> {
    if cpus.is_empty() {
        return Err(Error::invalid(format!("--{flag} names no CPU")));
    }
    let allowed = sys::allowed_cpus()
        .map_err(|e| Error::invalid(format!("cannot read the allowed CPUs: {e}")))?;
    if let Some(cpu) = cpus.iter().find(|c| !allowed.contains(c)) {
        return Err(Error::invalid(format!(
            "--{flag}: CPU {cpu} is not online or not allowed here (allowed: {})",
            format_cpu_list(&allowed)
        )));
    }
    Ok(())
}

fn read_u64(path: &str) -> Option<u64> {
    std::fs::read_to_string(path).ok()?.trim().parse().ok()
}

fn mem_available_bytes() -> Option<u64> {
    let meminfo = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = meminfo.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}

/// Parses a CPU list as the kernel and schbench write them: `0-3,8,10-11`.
pub fn parse_cpu_list(text: &str) -> Result<Vec<u32>> {
    let bad = || Error::invalid(format!("expected a CPU list like 0-3,8, not {text:?}"));
    let mut cpus = Vec::new();
    for part in text.split(',') {
        let part = part.trim();
        let (first, last) = match part.split_once('-') {
            Some((a, b)) => (a.trim(), b.trim()),
            None => (part, part),
        };
        let first: u32 = first.parse().map_err(|_| bad())?;
        let last: u32 = last.parse().map_err(|_| bad())?;
        if last < first || last as usize >= rustix::thread::CpuSet::MAX_CPU {
            return Err(bad());
        }
        cpus.extend(first..=last);
    }
    cpus.sort_unstable();
    cpus.dedup();
    Ok(cpus)
}

/// The compact form of a CPU list: `0-3,8`.
pub fn format_cpu_list(cpus: &[u32]) -> String {
    let mut parts: Vec<String> = Vec::new();
    let mut i = 0;
    while i < cpus.len() {
        let mut j = i;
        while j + 1 < cpus.len() && cpus[j + 1] == cpus[j] + 1 {
            j += 1;
        }
        parts.push(if j == i {
            cpus[i].to_string()
        } else {
            format!("{}-{}", cpus[i], cpus[j])
        });
        i = j + 1;
    }
    parts.join(",")
}

pub struct WakeupWorkload {
    config: run::Config,
}

impl WakeupWorkload {
    pub fn new(params: WakeupParams) -> Result<Self> {
        params.validate()?;
        Ok(WakeupWorkload {
            config: params.config(),
        })
    }
}

impl Workload for WakeupWorkload {
    /// Every metric the mode reports. Declared optional: the two sched-delay metrics, left out
    /// where /proc/<tid>/schedstat is missing (no CONFIG_SCHED_INFO), and each distribution's
    /// quantiles, left out when it took no sample (an open loop whose workers never ran dry).
    fn metrics(&self) -> &'static [MetricDef] {
        match self.config.mode {
            Mode::Request => metrics::REQUEST_MODE,
            Mode::Pipe { .. } => metrics::PIPE_MODE,
            Mode::OpenLoop { .. } => metrics::OPEN_LOOP_MODE,
        }
    }

    fn run_iteration(&mut self, _info: IterationInfo) -> Result<IterationOutput> {
        let outcome = run::run(&self.config)?;
        Ok(run::output(&self.config, &outcome))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn short(params: WakeupParams) -> WakeupParams {
        WakeupParams {
            runtime: 1,
            ..params
        }
    }

    fn run_books(params: WakeupParams) -> (Books, IterationOutput) {
        params.validate().unwrap();
        let config = params.config();
        let outcome = run::run(&config).unwrap();
        let output = run::output(&config, &outcome);
        (outcome.books, output)
    }

    fn names(output: &IterationOutput) -> Vec<&str> {
        output
            .measurements
            .iter()
            .map(|m| m.name.as_str())
            .collect()
    }

    #[test]
    fn request_mode_counts_every_wakeup_once() {
        let (books, output) = run_books(short(WakeupParams {
            message_threads: 2,
            workers: Some(3),
            cache_footprint: Some(16),
            ..Default::default()
        }));
        assert!(books.posts > 0);
        assert_eq!(books.posts, books.wakes_sent);
        assert_eq!(books.wakes_sent, books.wakes_seen);
        assert_eq!(books.wakeup_samples, books.wakeup_recorded);
        assert_eq!(books.request_samples, books.request_recorded);
        assert!(books.wakeup_samples > 0 && books.wakeup_samples <= books.wakes_seen);
        let names = names(&output);
        for name in [
            "wakeup_p50_usec",
            "request_p99_9_usec",
            "rps_p50",
            "rps_avg",
        ] {
            assert!(names.contains(&name), "{name} missing from {names:?}");
        }
        let attached: Vec<&str> = output.attachments.iter().map(|a| a.name.as_str()).collect();
        assert_eq!(
            attached,
            ["wakeup_latency_ns", "request_latency_ns", "rps_per_sec"]
        );
    }

    #[test]
    fn pipe_mode_transfers_and_balances() {
        let (books, output) = run_books(short(WakeupParams {
            message_threads: 2,
            workers: Some(2),
            pipe: Some(4096),
            ..Default::default()
        }));
        assert_eq!(books.posts, books.wakes_sent);
        assert_eq!(books.wakes_sent, books.wakes_seen);
        assert_eq!(books.wakeup_samples, books.wakeup_recorded);
        assert_eq!(books.request_recorded, 0);
        let value = |name: &str| {
            output
                .measurements
                .iter()
                .find(|m| m.name == name)
                .unwrap()
                .value
        };
        assert!(value("ops_per_sec") > 0.0);
        assert!((value("ops_per_sec") / 4.0 - value("worker_ops_per_sec")).abs() < 1e-6);
        let mib = value("ops_per_sec") * 4096.0 / 1048576.0;
        assert!((value("mib_per_sec") - mib).abs() < 1e-6);
        assert_eq!(output.attachments.len(), 1);
    }

    #[test]
    fn open_loop_books_balance_and_count_queueing() {
        let (books, output) = run_books(short(WakeupParams {
            message_threads: 1,
            workers: Some(2),
            rps: Some(500),
            sleep_usec: Some(10),
            operations: Some(1),
            cache_footprint: Some(16),
            ..Default::default()
        }));
        assert!(books.dispatched > 0);
        assert_eq!(books.dispatched, books.finished + books.left_queued);
        assert_eq!(books.request_samples, books.request_recorded);
        assert!(names(&output).contains(&"requests_dropped_count"));
    }

    #[test]
    fn warmup_discards_its_samples() {
        let (books, _) = run_books(short(WakeupParams {
            workers: Some(1),
            pipe: Some(64),
            warmup_sec: 1,
            ..Default::default()
        }));
        assert!(books.wakeup_samples < books.wakes_seen);
        assert_eq!(books.posts, books.wakes_seen);
    }

    #[test]
    fn pinned_threads_run() {
        let cpu = sys::allowed_cpus().unwrap()[0];
        run_books(short(WakeupParams {
            workers: Some(2),
            pipe: Some(8),
            message_cpus: Some(vec![cpu]),
            worker_cpus: Some(vec![cpu]),
            ..Default::default()
        }));
    }

    #[test]
    fn rejects_bad_input() {
        let err = |p: WakeupParams| p.validate().unwrap_err().to_string();
        assert!(err(WakeupParams {
            workers: Some(0),
            ..Default::default()
        })
        .contains("--workers"));
        assert!(err(WakeupParams {
            message_threads: 0,
            ..Default::default()
        })
        .contains("--message-threads"));
        assert!(err(WakeupParams {
            runtime: 0,
            ..Default::default()
        })
        .contains("--runtime"));
        assert!(err(WakeupParams {
            pipe: Some(MAX_PIPE_BYTES + 1),
            ..Default::default()
        })
        .contains("--pipe"));
        assert!(err(WakeupParams {
            pipe: Some(4096),
            sleep_usec: Some(5),
            ..Default::default()
        })
        .contains("no effect with --pipe"));
        assert!(err(WakeupParams {
            pipe: Some(4096),
            rps: Some(10),
            ..Default::default()
        })
        .contains("cannot be combined"));
        assert!(err(WakeupParams {
            worker_cpus: Some(vec![100_000]),
            ..Default::default()
        })
        .contains("CPU 100000"));
    }

    #[test]
    fn footprint_beyond_memory_is_refused() {
        let err = WakeupParams {
            workers: Some(64),
            cache_footprint: Some(MAX_FOOTPRINT_KB),
            ..Default::default()
        }
        .validate()
        .unwrap_err()
        .to_string();
        assert!(err.contains("--cache-footprint"), "{err}");
    }

    #[test]
    fn cpu_lists_parse_and_print() {
        assert_eq!(parse_cpu_list("0-3,8").unwrap(), [0, 1, 2, 3, 8]);
        assert_eq!(parse_cpu_list(" 2 , 1,1").unwrap(), [1, 2]);
        assert!(parse_cpu_list("3-1").is_err());
        assert!(parse_cpu_list("x").is_err());
        assert!(parse_cpu_list("").is_err());
        assert_eq!(format_cpu_list(&[0, 1, 2, 3, 8, 10, 11]), "0-3,8,10-11");
    }

    #[test]
    fn case_names_spell_out_the_mode() {
        let p = WakeupParams {
            message_threads: 3,
            workers: Some(3),
            pipe: Some(4096),
            ..Default::default()
        };
        assert_eq!(p.case_name(), "wakeup:pipe bytes=4096 m=3 t=3 runtime=10");
        let p = WakeupParams {
            workers: Some(2),
            no_lock: true,
            ..Default::default()
        };
        assert_eq!(
            p.case_name(),
            "wakeup:request m=1 t=2 runtime=10 sleep=100 ops=5 footprint=256 no-lock"
        );
    }

    #[test]
    fn default_workers_cover_the_cpus() {
        let cpus = sys::allowed_cpus().unwrap().len() as u64;
        let p = WakeupParams {
            message_threads: 2,
            ..Default::default()
        };
        assert_eq!(p.workers_per_message(), cpus.div_ceil(2));
    }
}
