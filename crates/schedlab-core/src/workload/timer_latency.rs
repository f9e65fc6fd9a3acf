//! The `timer-latency` workload, the class of cyclictest (rt-tests): timer threads, SCHED_FIFO 99
//! by default and one per usable CPU pinned to it (`cyclictest -S -p99`), each sleeping to absolute
//! CLOCK_MONOTONIC deadlines `interval_usec` apart with clock_nanosleep(TIMER_ABSTIME) and, at each
//! wake, measuring how late it woke: the time read right after the sleep minus the deadline, as
//! cyclictest's `now - next`. The next deadline is the previous one plus the interval; a wake so
//! late that deadlines already passed skips them, as cyclictest does, and each skipped deadline
//! counts as an overrun.
//!
//! Kept from cyclictest on purpose: CLOCK_MONOTONIC, absolute sleeps, the first deadline one
//! interval after the thread reads the clock, the policy set by each thread on itself, one
//! priority for all threads (its `-S`), pinning thread i to the i-th listed CPU (its `-a CPUSET`).
//! Different on purpose (docs/workloads.md): every thread has the same interval (cyclictest's `-d`
//! staggers them by 500 µs unless `-d 0`), latencies are kept in nanoseconds in HDR histograms
//! (cyclictest's `-h` buckets are whole microseconds), /dev/cpu_dma_latency is left alone (what
//! `cyclictest --default-system` does), memory is not locked (cyclictest's default, no `-m`): the
//! timed loop touches only the histogram, written through once before the start.
//!
//! Verification: every thread must have woken `loops` times, its histogram must hold exactly
//! `loops` samples, its latencies must be ordered (minimum ≤ p50 ≤ p99 ≤ maximum) and its deadlines
//! must add up (wakes plus overruns deadlines, ending where the interval says); otherwise the
//! iteration fails naming the thread.
use std::sync::{Arc, Mutex};

use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};

use super::definition::{field, Choice, Param, ParamKind, WorkloadParams};
use super::definition::{IterationInfo, IterationOutput, Workload};
use super::tasks::{TaskBudget, TaskLaunch, TaskMode};
use crate::attachment::Attachment;
use crate::cpu_list::CpuList;
use crate::latency;
use crate::metric::{Better, MetricDef};
use crate::sys::{self, task_code, TaskCode};
use crate::{Error, Result};

/// The distribution the latency quantiles summarise.
const DISTRIBUTION: &str = "timer";
/// The merged histogram of every thread's latencies, ns.
pub const ATTACHMENT: &str = "timer_latency_ns";

const fn latency_usec(name: &'static str) -> MetricDef {
    MetricDef::primary(name, "usec", Better::Lower)
}

pub const LATENCY_P50_USEC: MetricDef = latency_usec("latency_p50_usec").quantile(DISTRIBUTION, 50.0);
pub const LATENCY_P99_USEC: MetricDef = latency_usec("latency_p99_usec").quantile(DISTRIBUTION, 99.0);
pub const LATENCY_P99_9_USEC: MetricDef =
    latency_usec("latency_p99_9_usec").quantile(DISTRIBUTION, 99.9);
pub const LATENCY_MAX_USEC: MetricDef = latency_usec("latency_max_usec").max_of(DISTRIBUTION);
/// The mean over every wake of every thread (cyclictest's `Avg`).
pub const LATENCY_AVG_USEC: MetricDef = latency_usec("latency_avg_usec");
/// The smallest latency of any wake (cyclictest's `Min`).
pub const LATENCY_MIN_USEC: MetricDef = latency_usec("latency_min_usec");
/// The highest p99 of any one thread: one CPU's trouble that the merged p99 dilutes.
pub const WORST_THREAD_P99_USEC: MetricDef = latency_usec("worst_thread_p99_usec");
/// Deadlines skipped because a wake came more than an interval late, all threads.
pub const OVERRUNS_COUNT: MetricDef = MetricDef::primary_count("overruns_count", Better::Lower);

const METRICS: &[MetricDef] = &[
    LATENCY_P50_USEC,
    LATENCY_P99_USEC,
    LATENCY_P99_9_USEC,
    LATENCY_MAX_USEC,
    LATENCY_AVG_USEC,
    LATENCY_MIN_USEC,
    WORST_THREAD_P99_USEC,
    OVERRUNS_COUNT,
];

/// cyclictest's default interval, µs.
pub const DEFAULT_INTERVAL_USEC: u64 = 1_000;
const MAX_INTERVAL_USEC: u64 = 10_000_000;
/// The priority every cyclictest run for latency uses (`-p99`), the highest FIFO level.
pub const DEFAULT_PRIORITY: u64 = 99;

/// The scheduling policy of the timer threads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Policy {
    Fifo,
    Rr,
    Other,
}

impl Policy {
    pub fn as_str(self) -> &'static str {
        match self {
            Policy::Fifo => "fifo",
            Policy::Rr => "rr",
            Policy::Other => "other",
        }
    }

    fn realtime(self) -> bool {
        self != Policy::Other
    }

    fn kernel(self) -> i32 {
        match self {
            Policy::Fifo => sys::POLICY_FIFO,
            Policy::Rr => sys::POLICY_RR,
            Policy::Other => sys::POLICY_OTHER,
        }
    }

    fn kernel_name(self) -> &'static str {
        match self {
            Policy::Fifo => "SCHED_FIFO",
            Policy::Rr => "SCHED_RR",
            Policy::Other => "SCHED_OTHER",
        }
    }
}

impl Choice for Policy {
    const ALL: &'static [Self] = &[Policy::Fifo, Policy::Rr, Policy::Other];

    fn name(self) -> &'static str {
        self.as_str()
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct TimerLatencyParams {
    /// Timer threads; unset: one per CPU of `cpus`, or per usable CPU.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub threads: Option<u64>,
    /// Thread i is pinned to the (i mod n)-th CPU listed; unset with `threads` unset: each thread
    /// on a usable CPU of its own; unset with `threads` given: unpinned.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cpus: Option<CpuList>,
    /// Time between two deadlines, µs.
    pub interval_usec: u64,
    /// Wakes per thread per iteration.
    pub loops: u64,
    pub policy: Policy,
    /// The real-time priority of FIFO and RR threads.
    pub priority: u64,
}

impl Default for TimerLatencyParams {
    fn default() -> Self {
        TimerLatencyParams {
            threads: None,
            cpus: None,
            interval_usec: DEFAULT_INTERVAL_USEC,
            loops: 10_000,
            policy: Policy::Fifo,
            priority: DEFAULT_PRIORITY,
        }
    }
}

impl WorkloadParams for TimerLatencyParams {
    const NAME: &'static str = "timer-latency";
    const SUMMARY: &'static str = "real-time timer threads wake at absolute deadlines; wake-up \
latency histogram, p50/p99/max and overruns (the class of cyclictest)";
    const PARAMS: &'static [Param<Self>] = &[
        Param::new(field!(threads), "threads", ParamKind::Count { min: 1, max: 4_096 })
            .short('t')
            .value("N")
            .help("Timer threads [default: one per CPU of --cpus, else one per usable CPU, pinned].")
            .details("Timer threads (1 to 4,096). Without it: one per CPU of `--cpus`, else one per usable CPU, each pinned to its CPU (`cyclictest -S`); given without `--cpus`, the threads are not pinned (`cyclictest -t N`).")
            .task_count(),
        Param::new(field!(cpus), "cpus", ParamKind::Text)
            .short('a')
            .value("LIST")
            .help("Pin thread i to the (i mod n)-th CPU of LIST (`0`, `0-1`, `0,2`), as cyclictest -a.")
            .details("Pin thread i to the (i mod n)-th CPU of LIST (`0`, `0-1`, `0,2`), round robin as `cyclictest -a LIST`; without `--threads`, one thread per listed CPU."),
        Param::new(field!(interval_usec), "interval", ParamKind::Count { min: 10, max: MAX_INTERVAL_USEC })
            .short('i')
            .aliases(&["interval-usec"])
            .value("USEC")
            .help("Microseconds between two deadlines of a thread (cyclictest -i).")
            .details("Microseconds between two deadlines of a thread, the same for every thread (10 to 10^7; cyclictest's `-i`, with `-d 0`)."),
        Param::new(field!(loops), "loops", ParamKind::Count { min: 1, max: 1_000_000_000 })
            .short('l')
            .value("N")
            .help("Wakes per thread per iteration (cyclictest -l).")
            .details("Wakes per thread per iteration (1 to 10^9; cyclictest's `-l`): an iteration lasts about N × the interval.")
            .work_size(),
        Param::new(
            field!(policy),
            "policy",
            ParamKind::Choice(&[
                ("fifo", "SCHED_FIFO"),
                ("rr", "SCHED_RR"),
                ("other", "SCHED_OTHER at the nice schedlab runs with"),
            ]),
        )
        .value("POLICY")
        .help("The timer threads' scheduling policy (cyclictest --policy)."),
        Param::new(field!(priority), "priority", ParamKind::Count { min: 1, max: 99 })
            .short('p')
            .value("PRIO")
            .help("Real-time priority of the fifo and rr threads, 1 to 99 (cyclictest -p).")
            .details("Real-time priority of every timer thread under `fifo` and `rr`, 1 to 99 (cyclictest's `-p`; one level for all threads, as its `-S`). Needs CAP_SYS_NICE (or RLIMIT_RTPRIO) and real-time bandwidth; without them the run is refused before it starts.")
            .applies_to("fifo and rr", |p: &Self| p.policy.realtime()),
    ];

    fn check_rules(&self) -> Result<()> {
        if let Some(cpus) = &self.cpus {
            cpus.check_allowed("cpus")?;
        }
        if self.policy.realtime() {
            let priority = self.priority as u32;
            if let Err(e) = sys::try_policy(self.policy.kernel(), priority) {
                let bandwidth = sys::read_text("/proc/sys/kernel/sched_rt_runtime_us")
                    .map_or_else(|| "unknown".to_string(), |t| t.trim().to_string());
                // Not a parameter's error: the same case is fine on a machine that allows it (a
                // suite file is not at fault), so it is checked when the plan is made.
                return Err(Error::invalid(format!(
                    "timer-latency: {} {priority} is not allowed to this process ({e}): it needs \
                     CAP_SYS_NICE or RLIMIT_RTPRIO ≥ {priority}, and real-time bandwidth \
                     (kernel.sched_rt_runtime_us = {bandwidth}); or use --policy other",
                    self.policy.kernel_name()
                )));
            }
        }
        Ok(())
    }

    fn task_budget(&self) -> TaskBudget {
        TaskBudget::tasks(self.thread_count() as u64, "threads", "use fewer --threads")
    }

    fn case_name(&self) -> String {
        let mut name = format!(
            "timer-latency:{}",
            match self.policy {
                Policy::Other => "other".to_string(),
                realtime => format!("{}{}", realtime.as_str(), self.priority),
            }
        );
        if let Some(threads) = self.threads {
            name.push_str(&format!(" threads={threads}"));
        }
        if let Some(cpus) = &self.cpus {
            name.push_str(&format!(" cpus={cpus}"));
        }
        name.push_str(&format!(" interval={} loops={}", self.interval_usec, self.loops));
        name
    }

    fn estimate_sec(&self) -> f64 {
        self.loops as f64 * self.interval_usec as f64 * 1e-6
    }

    fn metric_lists(&self) -> &'static [&'static [MetricDef]] {
        &[METRICS]
    }

    fn build(&self) -> Result<Box<dyn Workload>> {
        Ok(Box::new(TimerLatencyWorkload {
            params: self.clone(),
        }))
    }
}

impl TimerLatencyParams {
    /// The CPU of each thread (`None`: unpinned), as the parameters say on this machine.
    fn placement(&self) -> Vec<Option<u32>> {
        let listed: Vec<u32> = match &self.cpus {
            Some(cpus) => cpus.as_slice().to_vec(),
            None if self.threads.is_none() => sys::allowed_cpus().unwrap_or_default(),
            None => Vec::new(),
        };
        let count = self.threads.map_or(listed.len().max(1), |n| n as usize);
        (0..count)
            .map(|i| (!listed.is_empty()).then(|| listed[i % listed.len()]))
            .collect()
    }

    fn thread_count(&self) -> usize {
        self.placement().len()
    }
}

/// What one thread measured: filled by the thread alone (it holds the lock for its whole run), read
/// by the main thread once every thread has returned.
struct ThreadBook {
    histogram: Histogram<u64>,
    wakes: u64,
    overruns: u64,
    min_ns: u64,
    max_ns: u64,
    sum_ns: u64,
    /// The first deadline and the one after the last wake, for the arithmetic check.
    first_deadline_ns: u64,
    next_deadline_ns: u64,
}

impl ThreadBook {
    fn new() -> ThreadBook {
        let mut histogram = latency::new_latency_histogram();
        // Writes every count once, so the pages of the (lazily zeroed) counts array are mapped
        // before the timed loop and no wake there takes a page fault for them.
        latency::record(&mut histogram, 1);
        histogram.reset();
        ThreadBook {
            histogram,
            wakes: 0,
            overruns: 0,
            min_ns: u64::MAX,
            max_ns: 0,
            sum_ns: 0,
            first_deadline_ns: 0,
            next_deadline_ns: 0,
        }
    }
}

/// The settings a thread runs with.
#[derive(Clone, Copy)]
struct ThreadPlan {
    cpu: Option<u32>,
    policy: Policy,
    priority: u32,
    interval_ns: u64,
    loops: u64,
}

/// One timer thread: pin, take the policy, then `loops` absolute sleeps, each wake's lateness
/// recorded. No allocation and no output inside the loop; a stop signal or the deadline ends it
/// at the next wake.
fn timer_thread(plan: ThreadPlan, book: &Mutex<ThreadBook>) -> TaskCode {
    let Ok(mut book) = book.lock() else {
        return task_code::PANICKED;
    };
    let book = &mut *book;
    if let Some(cpu) = plan.cpu {
        if sys::pin_current_thread(cpu).is_err() {
            return task_code::AFFINITY_FAILED;
        }
    }
    if plan.policy.realtime() {
        if let Err(e) = sys::set_current_thread_policy(plan.policy.kernel(), plan.priority) {
            return task_code::from_io_error(&e);
        }
    }
    let mut next = sys::monotonic_ns() + plan.interval_ns;
    book.first_deadline_ns = next;
    let (mut min, mut max, mut sum, mut overruns) = (u64::MAX, 0u64, 0u64, 0u64);
    let mut wakes = 0u64;
    let mut code = task_code::OK;
    while wakes < plan.loops {
        if let Err(e) = sys::sleep_until_ns(next) {
            if e.kind() != std::io::ErrorKind::Interrupted {
                code = task_code::from_io_error(&e);
                break;
            }
        }
        let now = sys::monotonic_ns();
        if now < next {
            // Woken early by a signal: sleep again to the same deadline, unless told to stop.
            if sys::interrupt_signal().is_some() || sys::deadline_expired() {
                code = task_code::ABORTED;
                break;
            }
            continue;
        }
        let late = now - next;
        latency::record(&mut book.histogram, late);
        min = min.min(late);
        max = max.max(late);
        sum += late;
        wakes += 1;
        next += plan.interval_ns;
        while now > next {
            next += plan.interval_ns;
            overruns += 1;
        }
        if sys::interrupt_signal().is_some() || sys::deadline_expired() {
            code = task_code::ABORTED;
            break;
        }
    }
    book.wakes = wakes;
    book.overruns = overruns;
    book.min_ns = min;
    book.max_ns = max;
    book.sum_ns = sum;
    book.next_deadline_ns = next;
    code
}

pub struct TimerLatencyWorkload {
    params: TimerLatencyParams,
}

fn usec(ns: u64) -> f64 {
    ns as f64 / 1_000.0
}

/// Checks one thread's book after it returned: its wakes, its histogram's count, the order of its
/// latencies and the arithmetic of its deadlines.
fn verify(thread: usize, book: &ThreadBook, loops: u64, interval_ns: u64) -> Result<()> {
    let fail = |what: String| Err(Error::failed(format!("timer thread {thread}: {what}")));
    if book.wakes != loops {
        return fail(format!("woke {} of {loops} times", book.wakes));
    }
    if book.histogram.len() != loops {
        return fail(format!(
            "its histogram holds {} samples for {loops} wakes",
            book.histogram.len()
        ));
    }
    let deadlines = book.wakes + book.overruns;
    let expected_next = book
        .first_deadline_ns
        .checked_add(deadlines.saturating_mul(interval_ns));
    if expected_next != Some(book.next_deadline_ns) {
        return fail(format!(
            "{} wakes and {} overruns do not add up to its deadlines",
            book.wakes, book.overruns
        ));
    }
    let p50 = latency::value_at(&book.histogram, 500).unwrap_or(0);
    let p99 = latency::value_at(&book.histogram, 990).unwrap_or(0);
    // The histogram's buckets round a value up to the highest equivalent one; the exact extremes
    // bound them once rounded the same way.
    let max = book.histogram.highest_equivalent(book.max_ns);
    let min = book.histogram.lowest_equivalent(book.min_ns);
    if !(min <= p50 && p50 <= p99 && p99 <= max) {
        return fail(format!(
            "latencies out of order: min {min} ns, p50 {p50} ns, p99 {p99} ns, max {max} ns"
        ));
    }
    Ok(())
}

impl Workload for TimerLatencyWorkload {
    fn metrics(&self) -> &'static [MetricDef] {
        METRICS
    }

    fn run_iteration(&mut self, _info: IterationInfo) -> Result<IterationOutput> {
        let p = &self.params;
        let placement = p.placement();
        let books: Arc<Vec<Mutex<ThreadBook>>> = Arc::new(
            placement
                .iter()
                .map(|_| Mutex::new(ThreadBook::new()))
                .collect(),
        );
        let interval_ns = p.interval_usec * 1_000;
        let mut launch = TaskLaunch::new(TaskMode::Threads)?;
        for (t, &cpu) in placement.iter().enumerate() {
            let plan = ThreadPlan {
                cpu,
                policy: p.policy,
                priority: p.priority as u32,
                interval_ns,
                loops: p.loops,
            };
            let books = Arc::clone(&books);
            launch.spawn(format!("timer {t}"), move || timer_thread(plan, &books[t]))?;
        }
        launch.start()?;
        launch.wait_all()?;
        drop(launch);

        let mut merged = latency::new_latency_histogram();
        let (mut min, mut max, mut sum, mut overruns) = (u64::MAX, 0u64, 0u64, 0u64);
        let mut worst_p99 = 0u64;
        let mut attachments = Vec::with_capacity(placement.len() + 1);
        for (t, book) in books.iter().enumerate() {
            let book = book
                .lock()
                .map_err(|_| Error::failed(format!("timer thread {t} panicked")))?;
            verify(t, &book, p.loops, interval_ns)?;
            merged
                .add(&book.histogram)
                .map_err(|e| Error::failed(format!("merging timer thread {t}'s histogram: {e}")))?;
            min = min.min(book.min_ns);
            max = max.max(book.max_ns);
            sum += book.sum_ns;
            overruns += book.overruns;
            worst_p99 = worst_p99.max(latency::value_at(&book.histogram, 990).unwrap_or(0));
            attachments.push(thread_attachment(t, &book.histogram));
        }
        let wakes = p.loops * placement.len() as u64;
        if merged.len() != wakes {
            return Err(Error::failed(format!(
                "the merged histogram holds {} samples for {wakes} wakes",
                merged.len()
            )));
        }
        attachments.insert(0, latency::attachment(ATTACHMENT, &merged));
        let at = |pm| usec(latency::value_at(&merged, pm).unwrap_or(0));
        let measurements = vec![
            LATENCY_P50_USEC.value(at(500)),
            LATENCY_P99_USEC.value(at(990)),
            LATENCY_P99_9_USEC.value(at(999)),
            LATENCY_MAX_USEC.value(usec(max)),
            LATENCY_AVG_USEC.value(sum as f64 / 1_000.0 / wakes as f64),
            LATENCY_MIN_USEC.value(usec(min)),
            WORST_THREAD_P99_USEC.value(usec(worst_p99)),
            OVERRUNS_COUNT.value(overruns as f64),
        ];
        Ok(IterationOutput {
            measurements,
            attachments,
        })
    }
}

/// Thread `t`'s own histogram, `timer_latency_ns_thread_T`.
fn thread_attachment(t: usize, histogram: &Histogram<u64>) -> Attachment {
    latency::attachment(&format!("{ATTACHMENT}_thread_{t}"), histogram)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(params: TimerLatencyParams) -> IterationOutput {
        params.validate().unwrap();
        TimerLatencyWorkload { params }
            .run_iteration(IterationInfo::FIRST)
            .unwrap()
    }

    use crate::metric::value_of as value;

    #[test]
    fn every_thread_wakes_every_loop_and_its_histogram_counts_them() {
        let cpus = sys::allowed_cpus().unwrap();
        let params = TimerLatencyParams {
            loops: 200,
            interval_usec: 500,
            ..Default::default()
        };
        let out = run(params.clone());
        let m = &out.measurements;
        assert_eq!(m.len(), METRICS.len());
        let (p50, p99, max) = (
            value(m, "latency_p50_usec"),
            value(m, "latency_p99_usec"),
            value(m, "latency_max_usec"),
        );
        assert!(value(m, "latency_min_usec") <= p50, "{m:?}");
        assert!(p50 <= p99 && p99 <= value(m, "latency_p99_9_usec"), "{m:?}");
        // The quantiles are bucket tops (within 0.1 %) and the max is exact.
        assert!(value(m, "latency_p99_9_usec") <= max * 1.001, "{m:?}");
        assert!(p50 > 0.0 && value(m, "worst_thread_p99_usec") >= p99 * 0.999);
        // One histogram per usable CPU and the merged one, each counting every wake.
        assert_eq!(out.attachments.len(), cpus.len() + 1);
        let merged = latency::decode(&out.attachments[0].data).unwrap();
        assert_eq!(out.attachments[0].name, "timer_latency_ns");
        assert_eq!(merged.len(), 200 * cpus.len() as u64);
        for a in &out.attachments[1..] {
            assert_eq!(latency::decode(&a.data).unwrap().len(), 200, "{}", a.name);
        }
    }

    #[test]
    fn threads_over_a_cpu_list_and_unpinned_other_threads() {
        let first = sys::allowed_cpus().unwrap()[0];
        let pinned = TimerLatencyParams {
            threads: Some(3),
            cpus: Some(CpuList::from(vec![first])),
            loops: 50,
            policy: Policy::Rr,
            priority: 10,
            ..Default::default()
        };
        assert_eq!(pinned.placement(), vec![Some(first); 3]);
        assert_eq!(
            pinned.case_name(),
            format!("timer-latency:rr10 threads=3 cpus={first} interval=1000 loops=50")
        );
        assert_eq!(run(pinned).attachments.len(), 4);
        let other = TimerLatencyParams {
            threads: Some(2),
            loops: 50,
            policy: Policy::Other,
            ..Default::default()
        };
        assert_eq!(other.placement(), vec![None, None]);
        assert_eq!(run(other).attachments.len(), 3);
    }

    /// The policy is what the workload measures: beside a nice −20 SCHED_OTHER spinner on its CPU,
    /// an OTHER timer thread waits for the spinner's slice (tens of ms on this machine), a FIFO one
    /// preempts it at once (tens of µs). Measured here: p99 56 ms against 72 µs; the test asks for
    /// a factor of 5 only, as a noisy VM can stretch the FIFO side's tail. Needs root (nice −20).
    #[test]
    fn fifo_wakes_through_a_nice_minus_20_spinner_and_other_does_not() {
        use std::sync::atomic::{AtomicBool, Ordering};
        let cpu = *sys::allowed_cpus().unwrap().last().unwrap();
        let stop = Arc::new(AtomicBool::new(false));
        let spinning = Arc::clone(&stop);
        let spinner = std::thread::spawn(move || {
            sys::pin_current_thread(cpu).unwrap();
            sys::set_current_thread_nice(-20).expect("nice -20 needs root (CI runs as root)");
            while !spinning.load(Ordering::Relaxed) {
                std::hint::spin_loop();
            }
        });
        std::thread::sleep(std::time::Duration::from_millis(50));
        let p99 = |policy| {
            let out = run(TimerLatencyParams {
                cpus: Some(CpuList::from(vec![cpu])),
                policy,
                loops: 500,
                ..Default::default()
            });
            value(&out.measurements, "latency_p99_usec")
        };
        let (other, fifo) = (p99(Policy::Other), p99(Policy::Fifo));
        stop.store(true, Ordering::Relaxed);
        spinner.join().unwrap();
        assert!(other > 5.0 * fifo, "p99: other {other} µs, fifo {fifo} µs");
    }

    #[test]
    fn verification_catches_missing_wakes_samples_and_deadlines() {
        let mut book = ThreadBook::new();
        book.first_deadline_ns = 1_000;
        for late in [5, 7, 9] {
            latency::record(&mut book.histogram, late);
        }
        (book.wakes, book.overruns, book.min_ns, book.max_ns) = (3, 1, 5, 9);
        book.next_deadline_ns = 1_000 + 4 * 100;
        verify(0, &book, 3, 100).unwrap();
        let err = verify(0, &book, 4, 100).unwrap_err().to_string();
        assert!(err.contains("woke 3 of 4 times"), "{err}");
        book.overruns = 0;
        let err = verify(0, &book, 3, 100).unwrap_err().to_string();
        assert!(err.contains("do not add up"), "{err}");
        book.overruns = 1;
        latency::record(&mut book.histogram, 11);
        let err = verify(2, &book, 3, 100).unwrap_err().to_string();
        assert!(err.starts_with("timer thread 2: its histogram holds 4"), "{err}");
    }

    #[test]
    fn rejects_bad_parameters() {
        let bad = |p: TimerLatencyParams, needle: &str| {
            let err = p.validate().unwrap_err();
            assert!(err.is_invalid_input());
            assert!(err.to_string().contains(needle), "{err}");
        };
        bad(
            TimerLatencyParams {
                priority: 100,
                ..Default::default()
            },
            "--priority must be between 1 and 99",
        );
        bad(
            TimerLatencyParams {
                priority: 50,
                policy: Policy::Other,
                ..Default::default()
            },
            "--priority applies to fifo and rr only",
        );
        bad(
            TimerLatencyParams {
                interval_usec: 5,
                ..Default::default()
            },
            "--interval-usec",
        );
        bad(
            TimerLatencyParams {
                cpus: Some(CpuList::from(vec![100_000])),
                ..Default::default()
            },
            "CPU 100000",
        );
    }

    #[test]
    fn suite_text_round_trips() {
        let p = TimerLatencyParams {
            threads: Some(2),
            policy: Policy::Rr,
            ..Default::default()
        };
        let text = toml::to_string(&p).unwrap();
        assert!(text.contains("policy = \"rr\""), "{text}");
        assert_eq!(toml::from_str::<TimerLatencyParams>(&text).unwrap(), p);
    }
}
