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

use super::definition::{field, FieldValue, Given, Param, ParamKind, WorkloadParams};
use super::tasks::TaskBudget;
use super::definition::{IterationInfo, IterationOutput, Workload};
use crate::cpu_list::CpuList;
use crate::metric::MetricDef;
use crate::sys;
use crate::{Error, Result};

pub mod metrics;
mod run;
mod sync;
mod work;

pub use run::{Books, Mode};

/// schbench's limit on -p.
pub const MAX_PIPE_BYTES: u64 = 1 << 20;
const MAX_RUNTIME_SEC: u64 = 86_400;
const DEFAULT_SLEEP_USEC: u64 = 100;
const DEFAULT_OPERATIONS: u64 = 5;
const DEFAULT_FOOTPRINT_KB: u64 = 256;




/// The parameters, as written in suite files (keys are the long flags with `-` as `_`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct WakeupParams {
    pub message_threads: u64,
    /// Workers per message thread; unset means ceil(CPUs this process may use / message_threads),
    /// resolved on the machine that runs the case.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub workers: Option<u64>,
    /// Seconds measured per iteration.
    pub runtime: u64,
    /// Seconds run before the measured window of each iteration, samples discarded.
    pub warmup_sec: u64,
    /// Request mode: the sleep that starts each request (µs; default 100).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sleep_usec: Option<u64>,
    /// Request mode: matrix multiplies per request (default 5).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub operations: Option<u64>,
    /// Request mode: KiB the three matrices of each worker fill (default 256).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cache_footprint: Option<u64>,
    /// Request mode: no per-CPU lock around the math.
    pub no_lock: bool,
    /// Pipe mode: bytes moved each way per round.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pipe: Option<u64>,
    /// Open-loop mode: requests per second over all message threads.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rps: Option<u64>,
    /// Message thread i runs on the (i mod n)-th of these CPUs.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub message_cpus: Option<CpuList>,
    /// Every worker may run on any of these CPUs.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub worker_cpus: Option<CpuList>,
}

impl Default for WakeupParams {
    fn default() -> Self {
        WakeupParams {
            message_threads: 1,
            workers: None,
            runtime: 10,
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

    /// Refuses more matrix memory than this machine has available.
    fn check_memory(&self) -> Result<()> {
        let workers = self.message_threads * self.workers_per_message();
        if matches!(self.mode(), Mode::Pipe { .. }) {
            return Ok(());
        }
        let n = work::matrix_size(self.cache_footprint()) as u64;
        let needed = workers * 3 * n * n * 8;
        if let Some(available) = sys::available_memory_bytes() {
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
            message_cpus: self.message_cpus.as_ref().map(|c| c.as_slice().to_vec()),
            worker_cpus: self.worker_cpus.as_ref().map(|c| c.as_slice().to_vec()),
        }
    }
}

const WAKEUP_REFERENCE: &str = "schbench's flags are taken as schbench spells them, with \
schbench's meaning where it differs: -t/--threads (0: the default), -w/--warmuptime (seconds), \
-s/--sleep_usec, -F/--cache_footprint, -L/--no-locking, -p and -R (0: off), -M/-W auto, \
-J/--jobname. Its -C, -A, -i, -z, -j and --split are refused, with the reason (docs/cli.md).";

const fn refused(
    key: &'static str,
    short: Option<char>,
    value_name: &'static str,
    why: &'static str,
) -> Param<WakeupParams> {
    let def = Param::without_field(
        key,
        key,
        ParamKind::Refused {
            tool: "schbench",
            takes_value: !value_name.is_empty(),
            why,
        },
    )
    .value(value_name);
    match short {
        Some(short) => def.short(short),
        None => def,
    }
}

/// `--message-cpus` and `--worker-cpus` as the command line gives them: a CPU list, or
/// schbench's `auto`, which places both kinds of thread.
enum Placement {
    Auto,
    List(CpuList),
}

impl Placement {
    fn of(key: &'static str, given: Given) -> Result<Placement> {
        let text = String::from_given(given).map_err(|reason| Error::param(key, reason))?;
        if text.trim() == "auto" {
            return Ok(Placement::Auto);
        }
        let list = text.parse().map_err(|reason| Error::param(key, reason))?;
        Ok(Placement::List(list))
    }
}

/// What `auto` with a CPU list for the other kind of thread is told.
const AUTO_ALONE: &str = "--message-cpus auto and --worker-cpus auto place both kinds of thread; \
                          give `auto` alone, or a CPU list for each";

impl WakeupParams {
    /// `--message-cpus`, set after `--message-threads` (declared before it), so `auto` can
    /// place that many.
    fn set_message_cpus(&mut self, given: Given) -> Result<()> {
        match Placement::of("message_cpus", given)? {
            Placement::Auto => self.place_auto(),
            Placement::List(list) => {
                self.message_cpus = Some(list);
                Ok(())
            }
        }
    }

    /// `--worker-cpus`, set after `--message-cpus`: a worker list already there came from
    /// `--message-cpus auto`, and a message list without one from a CPU list.
    fn set_worker_cpus(&mut self, given: Given) -> Result<()> {
        let placed_by_auto = self.worker_cpus.is_some();
        match Placement::of("worker_cpus", given)? {
            Placement::Auto if self.message_cpus.is_some() && !placed_by_auto => {
                Err(Error::invalid(AUTO_ALONE))
            }
            Placement::Auto => self.place_auto(),
            Placement::List(_) if placed_by_auto => Err(Error::invalid(AUTO_ALONE)),
            Placement::List(list) => {
                self.worker_cpus = Some(list);
                Ok(())
            }
        }
    }

    /// schbench's `auto` pinning (either flag): message thread i alone on the i-th CPU this
    /// process may use and every worker on the CPUs after those. schbench itself means the same
    /// but, through a shadowed loop variable, leaves the workers on every CPU, and counts from
    /// CPU 0 whether or not it may use it.
    fn place_auto(&mut self) -> Result<()> {
        let allowed = CpuList::allowed()?;
        let m = usize::try_from(self.message_threads).unwrap_or(usize::MAX);
        if m == 0 || m >= allowed.len() {
            return Err(Error::invalid(format!(
                "`auto` pinning gives each of the {} message threads a CPU of its \
                 own and the workers the rest, but this process may use {} CPUs",
                self.message_threads,
                allowed.len()
            )));
        }
        let (message, workers) = allowed.as_slice().split_at(m);
        self.message_cpus = Some(CpuList::from(message.to_vec()));
        self.worker_cpus = Some(CpuList::from(workers.to_vec()));
        Ok(())
    }
}

impl WorkloadParams for WakeupParams {
    const NAME: &'static str = "wakeup";
    const ALIASES: &'static [&'static str] = &["schbench"];
    const SUMMARY: &'static str =
        "message threads wake workers via futexes: wakeup and request latency, RPS (schbench)";
    const REFERENCE_NOTE: Option<&'static str> = Some(WAKEUP_REFERENCE);
    const PARAMS: &'static [Param<Self>] = &[
        Param::new(field!(message_threads), "message-threads", ParamKind::Count { min: 1, max: 1_024 })
            .short('m')
            .value("M")
            .help("Message threads.")
            .details("Message threads (1 to 1,024).")
            .task_count(),
        Param::new(field!(workers), "workers", ParamKind::Count { min: 1, max: 4_096 })
            .short('t')
            .zero_off()
            .aliases(&["threads"])
            .value("T")
            .help("Workers per message thread; 0 means the default, as in schbench [default: ceil(usable CPUs / M)]")
            .details("Workers per message thread (1 to 4,096); `0` is the default, as in schbench.")
            .task_count(),
        Param::new(field!(runtime), "runtime", ParamKind::Count { min: 1, max: MAX_RUNTIME_SEC })
            .short('r')
            .value("SEC")
            .help("Seconds measured per iteration (not schbench's 30; --help says why).")
            .details("Seconds measured per iteration (1 to 86,400). Not schbench's 30: schedlab measures `--iterations` windows per case (5 + 1 warm-up by default, one minute at 10 s), and case names hold the runtime, so a new default would part new runs from stored ones.")
            .work_size(),
        Param::new(field!(warmup_sec), "warmup-sec", ParamKind::Count { min: 0, max: MAX_RUNTIME_SEC })
            .short('w')
            .aliases(&["warmuptime"])
            .value("SEC")
            .help("Seconds run before each iteration's measured window, samples discarded (schbench's -w).")
            .details("Seconds run before each iteration's measured window; their samples are discarded. schbench's `-w`/`--warmuptime`, in seconds; not to be confused with `--warmup`, warm-up iterations. Unlike schbench it is not dropped when the runtime is under 30 s."),
        Param::new(field!(sleep_usec), "sleep-usec", ParamKind::Count { min: 0, max: 10_000_000 })
            .short('s')
            .aliases(&["sleep_usec"])
            .value("USEC")
            .help("Request mode: sleep at the start of each request [default: 100]")
            .details("Request and open-loop modes: the sleep that starts each request (0 to 10,000,000)."),
        Param::new(field!(operations), "operations", ParamKind::Count { min: 0, max: 1_000_000 })
            .short('n')
            .value("N")
            .help("Request mode: matrix multiplies per request [default: 5]")
            .details("Request and open-loop modes: matrix multiplies per request (0 to 1,000,000)."),
        // 4 GiB per worker at most.
        Param::new(field!(cache_footprint), "cache-footprint", ParamKind::Count { min: 1, max: 4 << 20 })
            .short('F')
            .aliases(&["cache_footprint"])
            .value("KB")
            .size()
            .help("Request mode: KiB the three matrices of each worker fill [default: 256]")
            .details("Request and open-loop modes: KiB the three N×N u64 matrices of each worker fill (1 to 4 GiB; more than the machine has available is refused). schbench's own `--cache_footprint` is silently ignored (it maps to a letter its option switch has no case for); here it works."),
        Param::new(field!(no_lock), "no-lock", ParamKind::Switch)
            .short('L')
            .aliases(&["no-locking"])
            .help("Request mode: no per-CPU lock (and no preemption penalty) around the math.")
            .details("Request and open-loop modes: do the math without the per-CPU lock and its preemption penalty."),
        Param::new(field!(pipe), "pipe", ParamKind::Count { min: 1, max: MAX_PIPE_BYTES })
            .short('p')
            .zero_off()
            .value("BYTES")
            .size()
            .help("Pipe mode: no sleep and no math; worker and message thread exchange BYTES per round (at most 1 MiB; 0: off, as in schbench).")
            .details("Pipe mode: no sleep, no math; worker and message thread exchange BYTES per round (1 to 1,048,576; `0` is off, as in schbench; schbench clamps a larger value, schedlab refuses it). Not with `--rps` or the request-mode flags."),
        Param::new(field!(rps), "rps", ParamKind::Count { min: 1, max: 10_000_000 })
            .short('R')
            .zero_off()
            .value("N")
            .help("Open-loop mode: N requests per second arrive whatever the service time; latency counts queueing (0: off, as in schbench).")
            .details("Open-loop mode: N requests per second over all message threads, whatever the service time; request latency includes queueing (1 to 10,000,000; `0` is off, as in schbench)."),
        Param::new(field!(message_cpus, set: Self::set_message_cpus), "message-cpus", ParamKind::Text)
            .short('M')
            .value("LIST|auto")
            .help("Pin message thread i to the (i mod n)-th CPU of LIST (e.g. 0-1,4), or `auto`, as in schbench.")
            .details("Message thread i runs on the (i mod n)-th CPU of LIST, e.g. `0-1,4`. `auto` (schbench's): message thread i alone on the i-th usable CPU, every worker on the usable CPUs left."),
        Param::new(field!(worker_cpus, set: Self::set_worker_cpus), "worker-cpus", ParamKind::Text)
            .short('W')
            .value("LIST|auto")
            .help("Let every worker run only on the CPUs of LIST (e.g. 2-7); `auto` as for --message-cpus.")
            .details("Every worker may run on the CPUs of LIST only. `auto`: as for `--message-cpus`."),
        Param::without_field("jobname", "jobname", ParamKind::Label)
            .short('J')
            .value("NAME")
            .help("schbench's job name: becomes the run's --label.")
            .details("Schbench's job name: names the run, as `--label` does (both at once must agree)."),
        refused("calibrate", Some('C'), "", "wakeup has no calibration mode (schedlab's `calibrate` command measures run-to-run noise instead); to time the request's math alone, compare -L -s 0 runs"),
        refused("auto-rps", Some('A'), "PCT", "a rate that follows CPU use while measuring would give no two iterations the same load; give a fixed --rps"),
        refused("intervaltime", Some('i'), "SEC", "schedlab reports each iteration at its end, never in the middle of a window"),
        refused("zerotime", Some('z'), "SEC", "each iteration measures its own window from zero; use --runtime and --iterations"),
        refused("json", Some('j'), "FILE", "schedlab writes no side file; use --format json (stdout) or `schedlab show --format json`"),
        refused("split", None, "PCT", "every worker's matrices are private (schbench's default); there is no shared part"),
    ];

    fn check_rules(&self) -> Result<()> {
        if self.pipe.is_some() {
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
        for (key, cpus) in [
            ("message_cpus", &self.message_cpus),
            ("worker_cpus", &self.worker_cpus),
        ] {
            if let Some(cpus) = cpus {
                cpus.check_allowed(key)?;
            }
        }
        self.check_memory()
    }

    fn task_budget(&self) -> TaskBudget {
        let threads = self.message_threads * (self.workers_per_message() + 1);
        TaskBudget::tasks(threads, "threads", "use fewer workers")
    }

    fn case_name(&self) -> String {
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
            name.push_str(&format!(" message-cpus={}", cpus));
        }
        if let Some(cpus) = &self.worker_cpus {
            name.push_str(&format!(" worker-cpus={}", cpus));
        }
        name
    }


    /// The window is timed by the clock, whatever the machine.
    fn estimate_sec(&self) -> f64 {
        (self.runtime + self.warmup_sec) as f64
    }

    /// Requests sleep 100 µs and do 5 matrix multiplies over 256 KiB unless told otherwise, on
    /// every machine (the worker count, which depends on the machine, stays unset).
    fn settled(&self) -> Self {
        let mut settled = self.clone();
        if !matches!(self.mode(), Mode::Pipe { .. }) {
            settled.sleep_usec = Some(self.sleep_usec());
            settled.operations = Some(self.operations());
            settled.cache_footprint = Some(self.cache_footprint());
        }
        settled
    }

    fn metric_lists(&self) -> &'static [&'static [MetricDef]] {
        &[metrics::REQUEST_MODE, metrics::PIPE_MODE, metrics::OPEN_LOOP_MODE]
    }

    fn build(&self) -> Result<Box<dyn Workload>> {
        Ok(Box::new(WakeupWorkload::new(self.clone())?))
    }
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
            "requests_p50_per_sec",
            "requests_avg_per_sec",
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
            message_cpus: Some(CpuList::from(vec![cpu])),
            worker_cpus: Some(CpuList::from(vec![cpu])),
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
            worker_cpus: Some(CpuList::from(vec![100_000])),
            ..Default::default()
        })
        .contains("CPU 100000"));
    }

    #[test]
    fn footprint_beyond_memory_is_refused() {
        let err = WakeupParams {
            workers: Some(64),
            cache_footprint: Some(4 << 20),
            ..Default::default()
        }
        .validate()
        .unwrap_err()
        .to_string();
        assert!(err.contains("--cache-footprint"), "{err}");
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
