//! The `semaphore` workload, seed 001's IPC test (Jiny's `sem_test4.c`, "sem 800k 2000"): a
//! producer and a consumer hand `items` items through two counting semaphores. Per item the
//! producer fills a slot, posts `full`, burns `work` loop iterations, waits on `empty` and burns
//! `work` again; the consumer waits on `full`, takes the slot, burns `work` and posts `empty`. The
//! producer is the busier side (as in the seed), so the consumer waits at every item: how it waits
//! is the experiment.
//!
//! The semaphores are our own, futex-based (the layout of glibc's: a count and a waiter count), so
//! the wait strategy can be chosen: `block` sleeps in FUTEX_WAIT at once (glibc's sem_wait),
//! `spin` busy-waits (`spin_loop`), `adaptive:NS` spins up to NS nanoseconds, then sleeps (Jiny's
//! idea of idling briefly before halting, done in user space). Threads use private futexes in one
//! process; `processes` forks two processes that share an anonymous MAP_SHARED mapping made
//! before the fork, with process-shared futexes.
//!
//! Verification: the slot holds a value derived from the item number; the consumer checks every
//! item's value in order and sums them; afterwards both sides must have done `items` hand-offs,
//! the checksum must match, and the semaphores must be back at their start (`full` 0, `empty` 1).
use std::fmt;
use std::hint::spin_loop;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use super::tasks::{TaskBudget, TaskLaunch, TaskMode};
use super::work_units::burn;
use super::definition::{field, FieldValue, Given, Param, ParamKind, ParamValue, WorkloadParams};
use super::definition::{IterationInfo, IterationOutput, Workload};
use crate::metric::{ns_to_sec, Better, MetricDef};
use crate::cpu_list::CpuPair;
use crate::sys::{self, task_code, FutexScope, SharedValue, TaskCode, UsageOf};
use crate::{Error, Result};

pub const TIME_SEC: MetricDef = MetricDef::primary("time_sec", "sec", Better::Lower);
/// The iteration's time over its items.
pub const USEC_PER_ITEM: MetricDef =
    MetricDef::primary("usec_per_item", "usec", Better::Lower).multiple_of(TIME_SEC);
const METRICS: &[MetricDef] = &[
    TIME_SEC,
    USEC_PER_ITEM,
    PRODUCER_CPU_SEC,
    CONSUMER_CPU_SEC,
    FUTEX_SLEEPS_COUNT,
    FUTEX_WAKES_COUNT,
];
pub const PRODUCER_CPU_SEC: MetricDef =
    MetricDef::secondary("producer_cpu_sec", "sec", Better::Lower);
pub const CONSUMER_CPU_SEC: MetricDef =
    MetricDef::secondary("consumer_cpu_sec", "sec", Better::Lower);
pub const FUTEX_SLEEPS_COUNT: MetricDef =
    MetricDef::secondary_count("futex_sleeps_count", Better::Lower);
pub const FUTEX_WAKES_COUNT: MetricDef =
    MetricDef::secondary_count("futex_wakes_count", Better::Lower);

/// For the estimate (and the watchdog's first look), measured on a 2-vCPU VM (release build,
/// `--items 200000`, work 0 and 2,000, threads and processes: 4.7 and 7.9 µs an item; 2,000,000
/// items over processes took 14.4 s an iteration, where 20 µs a hand-off had estimated 53.6 s; see
/// bench/estimates.py): one loop iteration of work, and one item's hand-off (a post and the
/// wake-up of the other side).
const WORK_UNIT_SEC: f64 = 1e-9;
const HANDOFF_SEC: f64 = 5e-6;
/// What `adaptive` alone spins for before sleeping.
pub const DEFAULT_ADAPTIVE_SPIN_NS: u64 = 50_000;
const MAX_SPIN_NS: u64 = 1_000_000_000;
/// Spin iterations between two looks at the clock (adaptive) or at the abort flag (spin).
const SPINS_PER_CHECK: u32 = 16;

/// How a side waits for a semaphore that is zero.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WaitStrategy {
    /// Sleep in FUTEX_WAIT at once (glibc's sem_wait).
    Block,
    /// Busy-wait until the count is positive.
    Spin,
    /// Busy-wait up to this many nanoseconds, then sleep.
    Adaptive { spin_ns: u64 },
}

impl WaitStrategy {
    /// Parses `block`, `spin`, `adaptive` or `adaptive:SPIN_NS`.
    pub fn parse(text: &str) -> Result<Self> {
        let bad = || {
            Error::param(
                "wait",
                format!(
                    "must be block, spin, adaptive or adaptive:SPIN_NS (1 to {MAX_SPIN_NS}), not \
                     {text:?}"
                ),
            )
        };
        match text {
            "block" => Ok(WaitStrategy::Block),
            "spin" => Ok(WaitStrategy::Spin),
            "adaptive" => Ok(WaitStrategy::Adaptive {
                spin_ns: DEFAULT_ADAPTIVE_SPIN_NS,
            }),
            _ => {
                let ns = text.strip_prefix("adaptive:").ok_or_else(bad)?;
                let spin_ns: u64 = ns.trim().parse().map_err(|_| bad())?;
                if spin_ns == 0 || spin_ns > MAX_SPIN_NS {
                    return Err(bad());
                }
                Ok(WaitStrategy::Adaptive { spin_ns })
            }
        }
    }
}

impl fmt::Display for WaitStrategy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            WaitStrategy::Block => f.write_str("block"),
            WaitStrategy::Spin => f.write_str("spin"),
            WaitStrategy::Adaptive { spin_ns } => write!(f, "adaptive:{spin_ns}"),
        }
    }
}

impl FieldValue for WaitStrategy {
    fn from_given(given: Given) -> std::result::Result<Self, String> {
        match given {
            Given::Text(text) => WaitStrategy::parse(&text).map_err(|e| match e {
                Error::InvalidParam { reason, .. } => reason,
                other => other.to_string(),
            }),
            other => Err(format!("takes a strategy, not {other:?}")),
        }
    }

    fn value(&self) -> ParamValue {
        ParamValue::Text(self.to_string())
    }
}

impl Serialize for WaitStrategy {
    fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for WaitStrategy {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        let text = String::deserialize(d)?;
        WaitStrategy::parse(&text).map_err(serde::de::Error::custom)
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SemaphoreParams {
    /// Items handed from the producer to the consumer per iteration.
    pub items: u64,
    /// Loop iterations of work per work phase (the producer has two per item, the consumer one).
    pub work: u64,
    /// How a side waits on a semaphore that is zero.
    pub wait: WaitStrategy,
    /// Two processes over shared memory instead of two threads.
    pub processes: bool,
    /// Pin the producer to the first CPU and the consumer to the second.
    #[serde(skip_serializing_if = "Option::is_none", alias = "pin")]
    pub cpus: Option<CpuPair>,
}

impl Default for SemaphoreParams {
    fn default() -> Self {
        SemaphoreParams {
            items: 800_000,
            work: 2_000,
            wait: WaitStrategy::Block,
            processes: false,
            cpus: None,
        }
    }
}

impl WorkloadParams for SemaphoreParams {
    const NAME: &'static str = "semaphore";
    const SUMMARY: &'static str = "producer and consumer hand items through two futex semaphores; \
block, spin or adaptive waits (seed 001, Jiny's sem test)";
    const PARAMS: &'static [Param<Self>] = &[
        Param::new(field!(items), "items", ParamKind::Count { min: 1, max: 1_000_000_000 })
            .value("N")
            .help("Items handed from the producer to the consumer per iteration.")
            .details("Items handed over per iteration (1 to 10^9).")
            .work_size(),
        Param::new(field!(work), "work", ParamKind::Count { min: 0, max: 100_000_000 })
            .value("K")
            .help("Loop iterations of work per work phase (producer: two per item, consumer: one).")
            .details("Loop iterations of real work (additions through `black_box`) per work phase: two per item for the producer, one for the consumer (0 to 10^8)."),
        Param::new(field!(wait), "wait", ParamKind::Text)
            .value("STRATEGY")
            .help("How a waiting side waits: block, spin, adaptive or adaptive:SPIN_NS.")
            .details("`block`: sleep in FUTEX_WAIT at once (glibc's `sem_wait`); `spin`: busy-wait (`spin_loop`); `adaptive[:SPIN_NS]`: spin up to SPIN_NS nanoseconds (default 50,000; 1 to 10^9), then sleep."),
        Param::new(field!(processes), "processes", ParamKind::Switch)
            .help("Two processes over shared memory instead of two threads.")
            .details("Two forked processes sharing an anonymous `MAP_SHARED` mapping (process-shared futexes) instead of two threads of one process (private futexes)."),
        Param::new(field!(cpus), "pin", ParamKind::Text)
            .aliases(&["cpus"])
            .value("A,B")
            .help("Pin the producer to CPU A and the consumer to CPU B (`0,0`: both on CPU 0; `0,1`: apart).")
            .details("Pin the producer to CPU A and the consumer to CPU B: `0,0` both on CPU 0 (every hand-off a context switch on one CPU), `0,1` apart (every hand-off a cross-CPU wake-up)."),
    ];

    fn check_rules(&self) -> Result<()> {
        match self.cpus {
            Some(cpus) => cpus.check_allowed("cpus"),
            None => Ok(()),
        }
    }

    /// The producer and the consumer.
    fn task_budget(&self) -> TaskBudget {
        TaskBudget::tasks(2, "tasks", "")
    }

    fn case_name(&self) -> String {
        let mut name = format!(
            "semaphore:{} wait={} items={} work={}",
            self.mode().as_str(),
            self.wait,
            self.items,
            self.work
        );
        if let Some(cpus) = self.cpus {
            name.push_str(&format!(" cpus={cpus}"));
        }
        name
    }


    fn estimate_sec(&self) -> f64 {
        self.items as f64 * (2.0 * self.work as f64 * WORK_UNIT_SEC + HANDOFF_SEC)
    }

    fn metric_lists(&self) -> &'static [&'static [MetricDef]] {
        &[METRICS]
    }

    fn build(&self) -> Result<Box<dyn Workload>> {
        Ok(Box::new(SemaphoreWorkload::new(self.clone())))
    }
}

impl SemaphoreParams {
    fn mode(&self) -> TaskMode {
        if self.processes {
            TaskMode::Process
        } else {
            TaskMode::Threads
        }
    }
}

sys::process_shared! {
    /// A counting semaphore on a futex word, on a cache line of its own: `value` is the count
    /// (the futex word), `waiters` how many tasks are in or entering FUTEX_WAIT, so a post only
    /// makes the wake system call when someone may sleep.
    #[repr(C, align(64))]
    #[derive(Default)]
    struct FutexSemaphore {
        value: AtomicU32,
        waiters: AtomicU32,
    }
}

/// What one side counts while it runs (kept in registers and stored once at the end).
#[derive(Default)]
struct WaitStats {
    sleeps: u64,
    wakes: u64,
}

impl FutexSemaphore {
    fn try_take(&self) -> bool {
        let mut value = self.value.load(Ordering::Relaxed);
        while value > 0 {
            match self.value.compare_exchange_weak(
                value,
                value - 1,
                Ordering::Acquire,
                Ordering::Relaxed,
            ) {
                Ok(_) => return true,
                Err(now) => value = now,
            }
        }
        false
    }

    /// Increments the count and wakes one sleeper if there may be one. The SeqCst increment and
    /// waiter load pair with the waiter's SeqCst increment of `waiters` and the kernel's check of
    /// `value` in FUTEX_WAIT: either the poster sees the waiter, or the waiter sees the new count.
    fn post(&self, scope: FutexScope, stats: &mut WaitStats) -> std::result::Result<(), TaskCode> {
        self.value.fetch_add(1, Ordering::SeqCst);
        if self.waiters.load(Ordering::SeqCst) != 0 {
            sys::futex_wake_in(&self.value, 1, scope).map_err(|e| task_code::from_io_error(&e))?;
            stats.wakes += 1;
        }
        Ok(())
    }

    /// Spins `SPINS_PER_CHECK` times trying to take the count: whether it took it, or the abort
    /// the run was told of meanwhile.
    #[inline(always)]
    fn spin_briefly(&self, abort: &AtomicU32) -> std::result::Result<bool, TaskCode> {
        for _ in 0..SPINS_PER_CHECK {
            spin_loop();
            if self.try_take() {
                return Ok(true);
            }
        }
        if abort.load(Ordering::Relaxed) != 0 {
            return Err(task_code::ABORTED);
        }
        Ok(false)
    }

    fn wait(
        &self,
        strategy: WaitStrategy,
        scope: FutexScope,
        abort: &AtomicU32,
        stats: &mut WaitStats,
    ) -> std::result::Result<(), TaskCode> {
        if self.try_take() {
            return Ok(());
        }
        match strategy {
            WaitStrategy::Block => {}
            WaitStrategy::Spin => loop {
                if self.spin_briefly(abort)? {
                    return Ok(());
                }
            },
            WaitStrategy::Adaptive { spin_ns } => {
                let deadline = sys::monotonic_ns().saturating_add(spin_ns);
                loop {
                    if self.spin_briefly(abort)? {
                        return Ok(());
                    }
                    if sys::monotonic_ns() >= deadline {
                        break;
                    }
                }
            }
        }
        loop {
            self.waiters.fetch_add(1, Ordering::SeqCst);
            let slept = if self.value.load(Ordering::SeqCst) == 0 {
                sys::futex_wait_in(&self.value, 0, scope)
            } else {
                Ok(false)
            };
            self.waiters.fetch_sub(1, Ordering::SeqCst);
            match slept {
                Ok(true) => stats.sleeps += 1,
                Ok(false) => {}
                Err(e) => return Err(task_code::from_io_error(&e)),
            }
            if self.try_take() {
                return Ok(());
            }
            if abort.load(Ordering::Relaxed) != 0 {
                return Err(task_code::ABORTED);
            }
        }
    }

    /// Unblocks every sleeper for good (after a failure): the count jumps and all are woken.
    fn poison(&self, scope: FutexScope) {
        self.value.fetch_add(u32::MAX / 2, Ordering::SeqCst);
        let _ = sys::futex_wake_in(&self.value, u32::MAX >> 1, scope);
    }
}

sys::process_shared! {
    /// What a side reports at its end, read by the parent after the tasks are done.
    #[repr(C, align(64))]
    #[derive(Default)]
    struct SideReport {
        /// Hand-offs completed (items posted by the producer, items taken by the consumer).
        items: AtomicU64,
        /// The consumer's sum of the item values (wrapping).
        checksum: AtomicU64,
        /// The result of the work loops, stored so no optimiser may drop them.
        work_sink: AtomicU64,
        sleeps: AtomicU64,
        wakes: AtomicU64,
        cpu_ns: AtomicU64,
    }
}

sys::process_shared! {
    /// Everything the two sides share, in a zero-filled mapping forked tasks inherit: every field
    /// is atomic, which `process_shared!` checks.
    #[repr(C)]
    #[derive(Default)]
    struct Shared {
        /// Producer → consumer: items ready. Starts at 0.
        full: FutexSemaphore,
        /// Consumer → producer: free slots. Starts at 1 (the seed's `cons = 1`), so the producer
        /// runs one item ahead and two slots hold the items in flight.
        empty: FutexSemaphore,
        slots: Slots,
        abort: Abort,
        producer: SideReport,
        consumer: SideReport,
    }
}

sys::process_shared! {
    #[repr(C, align(64))]
    #[derive(Default)]
    struct Slots([AtomicU64; 2]);
}

sys::process_shared! {
    #[repr(C, align(64))]
    #[derive(Default)]
    struct Abort(AtomicU32);
}

/// The shared state in a mapping that forked children inherit (threads share it too).
struct SharedBlock {
    shared: SharedValue<Shared>,
}

impl SharedBlock {
    fn new() -> Result<Self> {
        let shared = SharedValue::<Shared>::new()
            .map_err(|e| Error::failed(format!("cannot map shared memory: {e}")))?;
        shared.empty.value.store(1, Ordering::SeqCst);
        Ok(SharedBlock { shared })
    }

    fn get(&self) -> &Shared {
        &self.shared
    }
}

/// The value carried by item `i`: distinct per item, so a lost, repeated or reordered item shows.
fn item_value(i: u64) -> u64 {
    (i + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15)
}

/// The wrapping sum of the values of items `0..items`: C · items(items+1)/2 mod 2^64.
fn expected_checksum(items: u64) -> u64 {
    let triangle = (u128::from(items) * (u128::from(items) + 1) / 2) as u64;
    triangle.wrapping_mul(0x9E37_79B9_7F4A_7C15)
}

fn thread_cpu_ns() -> u64 {
    let u = sys::usage(UsageOf::CurrentThread);
    u.user_ns + u.sys_ns
}

#[derive(Clone, Copy)]
struct SideConfig {
    items: u64,
    work: u64,
    wait: WaitStrategy,
    scope: FutexScope,
}

/// Pins the calling side if asked; a failure ends the side before any hand-off (the other side
/// is unblocked by the abort).
fn pin(cpu: Option<u32>) -> std::result::Result<(), TaskCode> {
    match cpu {
        Some(cpu) => sys::pin_current_thread(cpu).map_err(|_| task_code::AFFINITY_FAILED),
        None => Ok(()),
    }
}

/// What a side did, gathered from its loop's locals once it ends (a side that could not start
/// did nothing).
#[derive(Default)]
struct SideTally {
    done: u64,
    checksum: u64,
    sink: u64,
    stats: WaitStats,
    cpu_start: u64,
}

fn producer(shared: &Shared, cfg: SideConfig, cpu: Option<u32>) -> TaskCode {
    if let Err(code) = pin(cpu) {
        return finish_side(shared, &shared.producer, Err(code), &SideTally::default(), cfg.scope);
    }
    let cpu_start = thread_cpu_ns();
    let mut stats = WaitStats::default();
    let mut sink = 0u64;
    let mut done = 0u64;
    let abort = &shared.abort.0;
    let result = (|| {
        for i in 0..cfg.items {
            shared.slots.0[(i % 2) as usize].store(item_value(i), Ordering::Relaxed);
            shared.full.post(cfg.scope, &mut stats)?;
            sink = burn(cfg.work, sink);
            shared.empty.wait(cfg.wait, cfg.scope, abort, &mut stats)?;
            sink = burn(cfg.work, sink);
            done += 1;
        }
        Ok(())
    })();
    let tally = SideTally {
        done,
        checksum: 0,
        sink,
        stats,
        cpu_start,
    };
    finish_side(shared, &shared.producer, result, &tally, cfg.scope)
}

fn consumer(shared: &Shared, cfg: SideConfig, cpu: Option<u32>) -> TaskCode {
    if let Err(code) = pin(cpu) {
        return finish_side(shared, &shared.consumer, Err(code), &SideTally::default(), cfg.scope);
    }
    let cpu_start = thread_cpu_ns();
    let mut stats = WaitStats::default();
    let mut sink = 0u64;
    let mut done = 0u64;
    let mut checksum = 0u64;
    let abort = &shared.abort.0;
    let result = (|| {
        for i in 0..cfg.items {
            shared.full.wait(cfg.wait, cfg.scope, abort, &mut stats)?;
            let value = shared.slots.0[(i % 2) as usize].load(Ordering::Relaxed);
            if value != item_value(i) {
                return Err(task_code::VERIFY_FAILED);
            }
            checksum = checksum.wrapping_add(value);
            sink = burn(cfg.work, sink);
            shared.empty.post(cfg.scope, &mut stats)?;
            done += 1;
        }
        Ok(())
    })();
    let tally = SideTally {
        done,
        checksum,
        sink,
        stats,
        cpu_start,
    };
    finish_side(shared, &shared.consumer, result, &tally, cfg.scope)
}

/// Stores a side's report; on failure, raises the abort flag and unblocks the other side so it
/// ends too instead of waiting forever.
fn finish_side(
    shared: &Shared,
    report: &SideReport,
    result: std::result::Result<(), TaskCode>,
    tally: &SideTally,
    scope: FutexScope,
) -> TaskCode {
    report.cpu_ns.store(
        thread_cpu_ns().saturating_sub(tally.cpu_start),
        Ordering::Relaxed,
    );
    report.items.store(tally.done, Ordering::Relaxed);
    report.checksum.store(tally.checksum, Ordering::Relaxed);
    report.work_sink.store(tally.sink, Ordering::Relaxed);
    report.sleeps.store(tally.stats.sleeps, Ordering::Relaxed);
    report.wakes.store(tally.stats.wakes, Ordering::Relaxed);
    match result {
        Ok(()) => task_code::OK,
        Err(code) => {
            shared.abort.0.store(1, Ordering::SeqCst);
            shared.full.poison(scope);
            shared.empty.poison(scope);
            code
        }
    }
}

pub struct SemaphoreWorkload {
    params: SemaphoreParams,
}

impl SemaphoreWorkload {
    pub fn new(params: SemaphoreParams) -> Self {
        SemaphoreWorkload { params }
    }
}

/// Checks what the two sides reported after both ended successfully.
fn verify(shared: &Shared, items: u64) -> Result<()> {
    let produced = shared.producer.items.load(Ordering::SeqCst);
    let consumed = shared.consumer.items.load(Ordering::SeqCst);
    if produced != items || consumed != items {
        return Err(Error::failed(format!(
            "semaphore hand-off count wrong: producer finished {produced} and consumer {consumed} \
             of {items} items"
        )));
    }
    let checksum = shared.consumer.checksum.load(Ordering::SeqCst);
    let expected = expected_checksum(items);
    if checksum != expected {
        return Err(Error::failed(format!(
            "semaphore checksum mismatch: consumer summed {checksum:#x}, expected {expected:#x}"
        )));
    }
    let full = shared.full.value.load(Ordering::SeqCst);
    let empty = shared.empty.value.load(Ordering::SeqCst);
    if full != 0 || empty != 1 {
        return Err(Error::failed(format!(
            "semaphores did not balance: full = {full} (expected 0), empty = {empty} (expected 1)"
        )));
    }
    Ok(())
}

impl Workload for SemaphoreWorkload {
    fn metrics(&self) -> &'static [MetricDef] {
        METRICS
    }

    fn run_iteration(&mut self, _info: IterationInfo) -> Result<IterationOutput> {
        let block = Arc::new(SharedBlock::new()?);
        let mode = self.params.mode();
        let cfg = SideConfig {
            items: self.params.items,
            work: self.params.work,
            wait: self.params.wait,
            scope: match mode {
                TaskMode::Process => FutexScope::Shared,
                TaskMode::Threads => FutexScope::Private,
            },
        };
        let [producer_cpu, consumer_cpu] = match self.params.cpus {
            Some(CpuPair([a, b])) => [Some(a), Some(b)],
            None => [None, None],
        };
        let mut launch = TaskLaunch::new(mode)?;
        let p = Arc::clone(&block);
        launch.spawn("semaphore producer", move || {
            producer(p.get(), cfg, producer_cpu)
        })?;
        let c = Arc::clone(&block);
        launch.spawn("semaphore consumer", move || {
            consumer(c.get(), cfg, consumer_cpu)
        })?;
        let start = launch.start()?;
        let stop = launch.wait_all()?;
        drop(launch);
        let shared = block.get();
        verify(shared, self.params.items)?;
        let elapsed_ns = stop.saturating_sub(start).max(1);
        let counted = |f: fn(&SideReport) -> &AtomicU64| {
            (f(&shared.producer).load(Ordering::SeqCst)
                + f(&shared.consumer).load(Ordering::SeqCst)) as f64
        };
        let out = vec![
            TIME_SEC.value(ns_to_sec(elapsed_ns)),
            USEC_PER_ITEM.value(elapsed_ns as f64 / 1_000.0 / self.params.items as f64),
            PRODUCER_CPU_SEC.value(ns_to_sec(shared.producer.cpu_ns.load(Ordering::SeqCst))),
            CONSUMER_CPU_SEC.value(ns_to_sec(shared.consumer.cpu_ns.load(Ordering::SeqCst))),
            FUTEX_SLEEPS_COUNT.value(counted(|r| &r.sleeps)),
            FUTEX_WAKES_COUNT.value(counted(|r| &r.wakes)),
        ];
        Ok(out.into())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metric::Measurement;

    fn run(params: SemaphoreParams) -> Vec<Measurement> {
        params.validate().unwrap();
        SemaphoreWorkload::new(params)
            .run_iteration(IterationInfo::FIRST)
            .unwrap()
            .measurements
    }

    use crate::metric::value_of as value;

    #[test]
    fn every_strategy_hands_off_every_item_with_threads_and_processes() {
        for processes in [false, true] {
            for wait in [
                WaitStrategy::Block,
                WaitStrategy::Spin,
                WaitStrategy::Adaptive { spin_ns: 20_000 },
            ] {
                // Unpinned spinners hand over only when the scheduler runs both sides, which on a
                // loaded machine can take a time slice per item: a few items check it as well.
                let items = if wait == WaitStrategy::Spin { 20 } else { 300 };
                let m = run(SemaphoreParams {
                    items,
                    work: 200,
                    wait,
                    processes,
                    cpus: None,
                });
                assert!(m.len() == 6 || m.len() == 7, "{m:?}");
                assert!(value(&m, "usec_per_item") > 0.0, "{wait} {processes}");
                let implied = value(&m, "time_sec") * 1e6 / items as f64;
                assert!((implied - value(&m, "usec_per_item")).abs() / implied < 1e-9);
                if wait == WaitStrategy::Spin {
                    // Spinning never sleeps, so nobody is ever woken.
                    assert_eq!(value(&m, "futex_sleeps_count"), 0.0);
                    assert_eq!(value(&m, "futex_wakes_count"), 0.0);
                }
            }
        }
    }

    #[test]
    fn blocking_consumer_sleeps_and_is_woken() {
        // Work large enough that the consumer always finds `full` empty and has to sleep.
        let m = run(SemaphoreParams {
            items: 200,
            work: 20_000,
            wait: WaitStrategy::Block,
            processes: false,
            cpus: None,
        });
        assert!(value(&m, "futex_sleeps_count") > 0.0);
        assert!(value(&m, "futex_wakes_count") >= value(&m, "futex_sleeps_count"));
        assert!(value(&m, "producer_cpu_sec") > 0.0);
    }

    #[test]
    fn pinned_sides_on_one_cpu_and_apart() {
        let allowed = sys::allowed_cpus().unwrap();
        let (first, last) = (allowed[0], *allowed.last().unwrap());
        for (cpus, processes) in [([first, first], false), ([first, last], true)] {
            let p = SemaphoreParams {
                items: 200,
                work: 100,
                wait: WaitStrategy::Block,
                processes,
                cpus: Some(CpuPair(cpus)),
            };
            assert!(p
                .case_name()
                .ends_with(&format!(" cpus={},{}", cpus[0], cpus[1])));
            let m = run(p);
            assert!(value(&m, "usec_per_item") > 0.0);
        }
    }

    #[test]
    fn semaphore_counts_balance_after_posts_and_waits() {
        let block = SharedBlock::new().unwrap();
        let shared = block.get();
        let mut stats = WaitStats::default();
        let abort = AtomicU32::new(0);
        for _ in 0..5 {
            shared.full.post(FutexScope::Shared, &mut stats).unwrap();
        }
        assert_eq!(shared.full.value.load(Ordering::SeqCst), 5);
        for _ in 0..5 {
            shared
                .full
                .wait(WaitStrategy::Spin, FutexScope::Shared, &abort, &mut stats)
                .unwrap();
        }
        assert_eq!(shared.full.value.load(Ordering::SeqCst), 0);
        assert_eq!(stats.wakes, 0);
        // An aborted wait gives up instead of hanging.
        abort.store(1, Ordering::SeqCst);
        assert_eq!(
            shared
                .full
                .wait(WaitStrategy::Spin, FutexScope::Shared, &abort, &mut stats),
            Err(task_code::ABORTED)
        );
    }

    #[test]
    fn verification_catches_miscounts() {
        let block = SharedBlock::new().unwrap();
        let shared = block.get();
        shared.producer.items.store(10, Ordering::SeqCst);
        shared.consumer.items.store(9, Ordering::SeqCst);
        let err = verify(shared, 10).unwrap_err().to_string();
        assert!(err.contains("consumer 9 of 10"), "{err}");
        shared.consumer.items.store(10, Ordering::SeqCst);
        shared.consumer.checksum.store(1, Ordering::SeqCst);
        assert!(verify(shared, 10)
            .unwrap_err()
            .to_string()
            .contains("checksum"));
        shared
            .consumer
            .checksum
            .store(expected_checksum(10), Ordering::SeqCst);
        verify(shared, 10).unwrap();
        shared.full.value.store(1, Ordering::SeqCst);
        assert!(verify(shared, 10)
            .unwrap_err()
            .to_string()
            .contains("balance"));
    }

    #[test]
    fn checksum_closed_form_matches_the_sum() {
        for n in [0u64, 1, 2, 7, 1000] {
            let sum = (0..n).fold(0u64, |acc, i| acc.wrapping_add(item_value(i)));
            assert_eq!(sum, expected_checksum(n));
        }
    }

    #[test]
    fn wait_strategies_parse_and_print() {
        assert_eq!(WaitStrategy::parse("block").unwrap(), WaitStrategy::Block);
        assert_eq!(WaitStrategy::parse("spin").unwrap(), WaitStrategy::Spin);
        assert_eq!(
            WaitStrategy::parse("adaptive").unwrap(),
            WaitStrategy::Adaptive {
                spin_ns: DEFAULT_ADAPTIVE_SPIN_NS
            }
        );
        let a = WaitStrategy::parse("adaptive:2000").unwrap();
        assert_eq!(a.to_string(), "adaptive:2000");
        for bad in [
            "",
            "sleep",
            "adaptive:",
            "adaptive:0",
            "adaptive:x",
            "adaptive:-5",
        ] {
            let err = WaitStrategy::parse(bad).unwrap_err().to_string();
            assert!(err.starts_with("--wait must be"), "{bad}: {err}");
        }
    }

    #[test]
    fn rejects_bad_parameters() {
        let bad = |p: SemaphoreParams, flag: &str| {
            let err = p.validate().unwrap_err().to_string();
            assert!(err.contains(flag), "{err}");
        };
        bad(
            SemaphoreParams {
                items: 0,
                ..Default::default()
            },
            "--items",
        );
        bad(
            SemaphoreParams {
                work: 100_000_001,
                ..Default::default()
            },
            "--work",
        );
        bad(
            SemaphoreParams {
                cpus: Some(CpuPair([0, 100_000])),
                ..Default::default()
            },
            "CPU 100000",
        );
    }

    #[test]
    fn suite_text_round_trips() {
        let p = SemaphoreParams {
            wait: WaitStrategy::Adaptive { spin_ns: 777 },
            ..Default::default()
        };
        let text = toml::to_string(&p).unwrap();
        assert!(text.contains("wait = \"adaptive:777\""), "{text}");
        let back: SemaphoreParams = toml::from_str(&text).unwrap();
        assert_eq!(back, p);
        assert!(toml::from_str::<SemaphoreParams>("wait = \"nap\"").is_err());
    }
}
