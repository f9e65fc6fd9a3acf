//! The `rump` workload (seed 003): the rump kernel's scheduler of virtual CPUs, as modelled by
//! `schedlab-kmodels`, timed under real host threads. `threads` threads each make `syscalls`
//! system calls into one virtual kernel of `vcpus` CPUs: enter (take a virtual CPU), run the
//! call's body on the CPU's data, leave (give it back), in a tight loop, as the seed's "two
//! threads making rlimit syscalls in a tight loop" did. `variant` chooses the scheduler: `cached`
//! (each lwp's previous CPU taken back by a compare-and-swap, a lock only on the slow path) or
//! `freelist` (one global list of free CPUs under one lock, the scheduler it replaced).
//!
//! Timing: each thread reads CLOCK_MONOTONIC and (x86_64) the TSC between lfences around its whole
//! loop, and the TSC every [`BATCH`] calls: `nsec_per_op` and `cycles_per_op` are the threads'
//! mean cost of one call, the batches' distribution gives the per-call percentiles and
//! `op_spread_pct`, the jitter the seed saw with the old scheduler. A batch's two TSC reads cost
//! a few tens of cycles per 64 calls.
//!
//! Verification: every call's body checks the CPU's holder word (nobody before, itself after) and
//! counts the call on the CPU, with plain loads and stores; afterwards every thread must have
//! made all its calls alone on its CPU, the CPUs' counts must add up to every call made, the
//! scheduler's own counts must show no anomaly, and with every thread out its state must be
//! quiescent (every CPU free, nobody waiting). With `check`, a second pass, untimed, makes the
//! same calls on a fresh kernel with the exact checker after every call (every thread inside
//! holds one CPU, none is held by two) and fails at the first violation, naming it.
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};

use schedlab_kmodels::rump::{
    checked_syscall, syscall, Cached, Freelist, Lwp, LwpStats, Occupancy, Variant, VirtualKernel,
    MAX_VCPUS,
};

use super::definition::{check_range, field, Choice, Param, ParamKind, WorkloadParams};
use super::definition::{IterationInfo, IterationOutput, Workload};
use super::tasks::{TaskBudget, TaskLaunch, TaskMode};
use crate::metric::{Better, MetricDef};
use crate::sys::{self, task_code, TaskCode};
use crate::{Error, Result};

pub const NSEC_PER_OP: MetricDef = MetricDef::primary("nsec_per_op", "nsec", Better::Lower);
/// TSC reference cycles per call (x86_64 only): the same timed window as `nsec_per_op`, counted
/// by the TSC, which ticks at a constant rate.
pub const CYCLES_PER_OP: MetricDef =
    MetricDef::primary("cycles_per_op", "cycles", Better::Lower).multiple_of(NSEC_PER_OP);
/// Percentiles of the calls' cost over batches of [`BATCH`] calls (x86_64 only).
pub const CYCLES_PER_OP_P10: MetricDef =
    MetricDef::primary("cycles_per_op_p10", "cycles", Better::Lower).quantile(BATCH_DISTRIBUTION, 10.0);
pub const CYCLES_PER_OP_P50: MetricDef =
    MetricDef::primary("cycles_per_op_p50", "cycles", Better::Lower).quantile(BATCH_DISTRIBUTION, 50.0);
pub const CYCLES_PER_OP_P90: MetricDef =
    MetricDef::primary("cycles_per_op_p90", "cycles", Better::Lower).quantile(BATCH_DISTRIBUTION, 90.0);
pub const CYCLES_PER_OP_P99: MetricDef =
    MetricDef::primary("cycles_per_op_p99", "cycles", Better::Lower).quantile(BATCH_DISTRIBUTION, 99.0);
/// (p90 − p10) / p50 of the batches' cost per call: how jittery the calls are.
pub const OP_SPREAD_PCT: MetricDef = MetricDef::primary("op_spread_pct", "%", Better::Lower);
pub const FAST_ENTRIES_COUNT: MetricDef =
    MetricDef::secondary_count("fast_entries_count", Better::Higher);
pub const LOCKED_ENTRIES_COUNT: MetricDef =
    MetricDef::secondary_count("locked_entries_count", Better::Lower);
pub const MIGRATIONS_COUNT: MetricDef =
    MetricDef::secondary_count("vcpu_migrations_count", Better::Lower);
pub const WAITS_COUNT: MetricDef = MetricDef::secondary_count("vcpu_waits_count", Better::Lower);
pub const WAKES_COUNT: MetricDef = MetricDef::secondary_count("vcpu_wakes_count", Better::Lower);
pub const CHECKED_SYSCALLS_COUNT: MetricDef =
    MetricDef::secondary_count("checked_syscalls_count", Better::Higher);

/// What the batch percentiles are of.
const BATCH_DISTRIBUTION: &str = "batch_cycles_per_op";

const METRICS: &[MetricDef] = &[
    NSEC_PER_OP,
    #[cfg(target_arch = "x86_64")]
    CYCLES_PER_OP,
    #[cfg(target_arch = "x86_64")]
    CYCLES_PER_OP_P10,
    #[cfg(target_arch = "x86_64")]
    CYCLES_PER_OP_P50,
    #[cfg(target_arch = "x86_64")]
    CYCLES_PER_OP_P90,
    #[cfg(target_arch = "x86_64")]
    CYCLES_PER_OP_P99,
    OP_SPREAD_PCT,
    FAST_ENTRIES_COUNT,
    LOCKED_ENTRIES_COUNT,
    MIGRATIONS_COUNT,
    WAITS_COUNT,
    WAKES_COUNT,
    CHECKED_SYSCALLS_COUNT,
];

/// Calls between two TSC reads of a thread.
pub const BATCH: u64 = 64;
const MAX_THREADS: u64 = 1_024;
/// A batch's ticks are recorded from 1 to this (above: clamped; 1.6 s at 2.6 GHz), at 3
/// significant digits (a cached call's 29 cycles to 0.03; 2 digits' steps of 0.25 cycles were
/// as wide as the spread measured), with 32-bit counts: a thread's histogram is about 94 KB.
const BATCH_TICKS_MAX: u64 = 1 << 32;
/// For the estimate, measured on a 2-vCPU VM shared with builds (release build, load average
/// 15-20; bench/estimates.py): one call with every thread on a CPU of its own, and one that has
/// to wait for a virtual CPU or a host CPU.
const CACHED_OP_SEC: f64 = 0.1e-6;
const FREELIST_OP_SEC: f64 = 0.15e-6;
const WAITING_OP_SEC: f64 = 0.4e-6;

/// The scheduler, as named on the command line and in suite files.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Scheduler {
    Cached,
    Freelist,
}

impl Choice for Scheduler {
    const ALL: &'static [Self] = &[Scheduler::Cached, Scheduler::Freelist];

    fn name(self) -> &'static str {
        self.as_str()
    }
}

impl Scheduler {
    fn model(self) -> Variant {
        match self {
            Scheduler::Cached => Variant::Cached,
            Scheduler::Freelist => Variant::Freelist,
        }
    }

    pub fn as_str(self) -> &'static str {
        self.model().name()
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct RumpParams {
    pub variant: Scheduler,
    /// Host threads calling into the kernel at once.
    pub threads: u64,
    /// Virtual CPUs of the kernel (this machine's online CPUs when left out, as RUMP_NCPU).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub vcpus: Option<u32>,
    /// System calls per thread per iteration.
    pub syscalls: u64,
    /// A second, untimed pass with every call checked.
    pub check: bool,
}

impl Default for RumpParams {
    fn default() -> Self {
        RumpParams {
            variant: Scheduler::Cached,
            // The seed's "two threads making rlimit syscalls in a tight loop".
            threads: 2,
            vcpus: None,
            syscalls: 1_000_000,
            check: false,
        }
    }
}

impl RumpParams {
    pub fn vcpus(&self) -> u32 {
        self.vcpus
            .unwrap_or_else(crate::fingerprint::online_cpu_count)
            .max(1)
    }
}

impl WorkloadParams for RumpParams {
    const NAME: &'static str = "rump";
    const SUMMARY: &'static str = "the rump kernel's virtual-CPU scheduler under host threads \
making system calls: per-lwp cached CPU or global freelist (seed 003)";
    const PARAMS: &'static [Param<Self>] = &[
        Param::new(
            field!(variant),
            "variant",
            ParamKind::Choice(&[
                ("cached", "each lwp's previous CPU taken back lock-free, a lock only on the slow path"),
                ("freelist", "one global list of free CPUs under one lock (the old scheduler)"),
            ]),
        )
        .value("VARIANT")
        .help("The scheduler: cached or freelist.")
        .details("`cached`: each lwp takes the virtual CPU it last ran on back with one compare-and-swap, and locks only on the slow path (NetBSD's rump scheduler since 2010); `freelist`: one global list of free virtual CPUs under one lock, taken at every entry and exit (the scheduler it replaced)."),
        Param::new(field!(threads), "threads", ParamKind::Count { min: 1, max: MAX_THREADS })
            .value("T")
            .help("Host threads making system calls at once.")
            .details("Host threads making system calls at once (1 to 1,024).")
            .task_count(),
        Param::new(field!(vcpus), "vcpus", ParamKind::Count { min: 1, max: MAX_VCPUS as u64 })
            .value("N")
            .help("Virtual CPUs of the rump kernel [default: this machine's online CPUs]")
            .details("Virtual CPUs of the rump kernel (1 to 4,096; without the flag this machine's online CPUs, as rump's RUMP_NCPU defaults to the host's). 1 is the seed's \"virtual unicpu\".")
            .task_count(),
        Param::new(field!(syscalls), "syscalls", ParamKind::Count { min: 1, max: 10_000_000_000 })
            .value("N")
            .help("System calls per thread per iteration.")
            .details("System calls per thread per iteration (1 to 10^10).")
            .work_size(),
        Param::new(field!(check), "check", ParamKind::Switch)
            .help("Then make the same calls untimed on a fresh kernel, checking every one exactly.")
            .details("After the timed pass, make the same calls on a fresh kernel with the exact checker after every call, untimed: every thread inside holds one virtual CPU and none is held by two; the first violation fails the run, naming the CPU and both lwps."),
    ];

    fn check_rules(&self) -> Result<()> {
        check_range("vcpus", u64::from(self.vcpus()), 1, MAX_VCPUS as u64)
    }

    fn task_budget(&self) -> TaskBudget {
        TaskBudget::tasks(self.threads, "threads", "use fewer --threads")
    }

    fn case_name(&self) -> String {
        let mut name = format!(
            "rump:{} vcpus={} threads={} syscalls={}",
            self.variant.as_str(),
            self.vcpus(),
            self.threads,
            self.syscalls
        );
        if self.check {
            name.push_str(" check");
        }
        name
    }

    /// Threads beyond the host CPUs queue behind each other; beyond the virtual CPUs (or the host
    /// CPUs) they sleep and wake for a CPU; the checked pass costs about three timed ones.
    fn estimate_sec(&self) -> f64 {
        let cpus = u64::from(crate::fingerprint::online_cpu_count()).max(1);
        let rounds = self.threads.div_ceil(cpus) as f64;
        let op = if self.threads > u64::from(self.vcpus()) || self.threads > cpus {
            WAITING_OP_SEC
        } else {
            match self.variant {
                Scheduler::Cached => CACHED_OP_SEC,
                Scheduler::Freelist => FREELIST_OP_SEC,
            }
        };
        let passes = if self.check { 4.0 } else { 1.0 };
        passes * rounds * self.syscalls as f64 * op
    }

    fn metric_lists(&self) -> &'static [&'static [MetricDef]] {
        &[METRICS]
    }

    fn build(&self) -> Result<Box<dyn Workload>> {
        Ok(Box::new(RumpWorkload {
            params: self.clone(),
        }))
    }
}

/// What a thread reports of its pass.
#[derive(Default)]
struct ThreadReport {
    done: AtomicU64,
    alone: AtomicBool,
    span_ns: AtomicU64,
    span_ticks: AtomicU64,
    stats: Mutex<LwpStats>,
    batches: Mutex<Option<Histogram<u32>>>,
    violation: Mutex<Option<String>>,
}

fn batch_histogram() -> Result<Histogram<u32>> {
    Histogram::new_with_bounds(1, BATCH_TICKS_MAX, 3)
        .map_err(|e| Error::failed(format!("rump: cannot make a histogram: {e}")))
}

/// The timed loop of one thread: `ops` system calls, the TSC read every [`BATCH`]. Nothing else
/// in it: the histogram never allocates, and whether every call was alone is looked at after.
fn timed_thread<K: VirtualKernel>(
    kernel: &K,
    id: u32,
    ops: u64,
    mut batches: Histogram<u32>,
    report: &ThreadReport,
) -> TaskCode {
    let Some(mut lwp) = Lwp::new(id) else {
        return task_code::VERIFY_FAILED;
    };
    let mut alone = true;
    let mut done = 0u64;
    let t_start = sys::monotonic_ns();
    let c_start = sys::tsc_serialized();
    let mut last = c_start;
    while done < ops {
        let n = BATCH.min(ops - done);
        for _ in 0..n {
            alone &= syscall(kernel, &mut lwp);
        }
        done += n;
        let now = sys::tsc_serialized();
        if n == BATCH {
            // Never allocates (no auto-resize); a batch beyond the range is clamped to its top.
            batches.saturating_record(now.saturating_sub(last).max(1));
        }
        last = now;
    }
    let t_end = sys::monotonic_ns();
    report.done.store(done, Ordering::SeqCst);
    report.alone.store(alone, Ordering::SeqCst);
    report
        .span_ns
        .store(t_end.saturating_sub(t_start), Ordering::SeqCst);
    report
        .span_ticks
        .store(last.saturating_sub(c_start), Ordering::SeqCst);
    if let Ok(mut slot) = report.stats.lock() {
        *slot = lwp.stats;
    }
    if let Ok(mut slot) = report.batches.lock() {
        *slot = Some(batches);
    }
    task_code::OK
}

/// The checked pass of one thread: the calls under the exact checker, stopping every thread at
/// the first violation (whose description is left in the report).
fn checked_thread<K: VirtualKernel>(
    kernel: &K,
    id: u32,
    ops: u64,
    occupancy: &Occupancy,
    stop: &AtomicBool,
    report: &ThreadReport,
) -> TaskCode {
    let Some(mut lwp) = Lwp::new(id) else {
        return task_code::VERIFY_FAILED;
    };
    let mut done = 0u64;
    while done < ops && !stop.load(Ordering::Relaxed) {
        if let Err(violation) = checked_syscall(kernel, &mut lwp, occupancy) {
            stop.store(true, Ordering::SeqCst);
            if let Ok(mut slot) = report.violation.lock() {
                *slot = Some(format!("call #{done} of thread {}: {violation}", id - 1));
            }
            break;
        }
        done += 1;
    }
    report.done.store(done, Ordering::SeqCst);
    report.alone.store(true, Ordering::SeqCst);
    if let Ok(mut slot) = report.stats.lock() {
        *slot = lwp.stats;
    }
    task_code::OK
}

pub struct RumpWorkload {
    params: RumpParams,
}

/// One pass's outcome, summed over threads.
struct Pass {
    stats: LwpStats,
    nsec_per_op: f64,
    cycles_per_op: f64,
    batches: Option<Histogram<u64>>,
}

impl RumpWorkload {
    fn reports(&self) -> Arc<Vec<ThreadReport>> {
        Arc::new((0..self.params.threads).map(|_| ThreadReport::default()).collect())
    }

    /// The timed pass on a fresh kernel, verified.
    fn timed_pass<K: VirtualKernel + 'static>(&self, kernel: K) -> Result<Pass> {
        let p = &self.params;
        let kernel = Arc::new(kernel);
        let reports = self.reports();
        let mut launch = TaskLaunch::new(TaskMode::Threads)?;
        for t in 0..p.threads as usize {
            let batches = batch_histogram()?;
            let (kernel, reports, ops) = (Arc::clone(&kernel), Arc::clone(&reports), p.syscalls);
            launch.spawn(format!("rump {t}"), move || {
                timed_thread(kernel.as_ref(), t as u32 + 1, ops, batches, &reports[t])
            })?;
        }
        launch.start()?;
        launch.wait_all()?;
        drop(launch);
        self.verify(kernel.as_ref(), &reports, "")?;
        let (mut nsec, mut cycles) = (0.0, 0.0);
        // Every thread's batches in one histogram, with 64-bit counts: a thread's fit in 32 bits
        // (at most 10^10 / 64 batches), a thousand threads' may not.
        let mut batches: Histogram<u64> = Histogram::new_with_bounds(1, BATCH_TICKS_MAX, 3)
            .map_err(|e| Error::failed(format!("rump: cannot make a histogram: {e}")))?;
        for r in reports.iter() {
            let ops = p.syscalls as f64;
            nsec += r.span_ns.load(Ordering::SeqCst) as f64 / ops;
            cycles += r.span_ticks.load(Ordering::SeqCst) as f64 / ops;
            if let Some(mine) = r.batches.lock().ok().and_then(|mut slot| slot.take()) {
                for bucket in mine.iter_recorded() {
                    batches
                        .record_n(bucket.value_iterated_to(), u64::from(bucket.count_at_value()))
                        .map_err(|e| Error::failed(format!("rump: merging histograms: {e}")))?;
                }
            }
        }
        let threads = p.threads as f64;
        Ok(Pass {
            stats: sum_stats(&reports),
            nsec_per_op: nsec / threads,
            cycles_per_op: cycles / threads,
            batches: Some(batches),
        })
    }

    /// The checked pass on a fresh kernel: the number of calls checked.
    fn checked_pass<K: VirtualKernel + 'static>(&self, kernel: K) -> Result<u64> {
        let p = &self.params;
        let kernel = Arc::new(kernel);
        let occupancy = Arc::new(Occupancy::new(kernel.vcpus()));
        let stop = Arc::new(AtomicBool::new(false));
        let reports = self.reports();
        let mut launch = TaskLaunch::new(TaskMode::Threads)?;
        for t in 0..p.threads as usize {
            let (kernel, occupancy, stop, reports, ops) = (
                Arc::clone(&kernel),
                Arc::clone(&occupancy),
                Arc::clone(&stop),
                Arc::clone(&reports),
                p.syscalls,
            );
            launch.spawn(format!("rump check {t}"), move || {
                checked_thread(kernel.as_ref(), t as u32 + 1, ops, &occupancy, &stop, &reports[t])
            })?;
        }
        launch.start()?;
        launch.wait_all()?;
        drop(launch);
        let violation = reports
            .iter()
            .find_map(|r| r.violation.lock().ok().and_then(|v| v.clone()));
        if let Some(violation) = violation {
            return Err(Error::failed(format!(
                "rump {} --check: {violation}",
                p.variant.as_str()
            )));
        }
        self.verify(kernel.as_ref(), &reports, " --check")?;
        if occupancy.held() != 0 {
            return Err(Error::failed(format!(
                "rump {} --check: the checker's record shows {} vCPUs held after every thread left",
                p.variant.as_str(),
                occupancy.held()
            )));
        }
        Ok(p.syscalls * p.threads)
    }

    /// Every thread made every call, alone on its CPU; the CPUs counted every call; the
    /// scheduler saw no anomaly and is quiescent.
    fn verify<K: VirtualKernel>(&self, kernel: &K, reports: &[ThreadReport], pass: &str) -> Result<()> {
        let p = &self.params;
        let name = p.variant.as_str();
        for (t, r) in reports.iter().enumerate() {
            let done = r.done.load(Ordering::SeqCst);
            if done != p.syscalls {
                return Err(Error::failed(format!(
                    "rump {name}{pass}: thread {t} made {done} of {} system calls",
                    p.syscalls
                )));
            }
            if !r.alone.load(Ordering::SeqCst) {
                return Err(Error::failed(format!(
                    "rump {name}{pass}: thread {t} found another holder on its vCPU inside a \
                     system call: a vCPU was held twice"
                )));
            }
        }
        let expected = p.syscalls * p.threads;
        if kernel.syscalls() != expected {
            return Err(Error::failed(format!(
                "rump {name}{pass}: the vCPUs counted {} system calls of {expected} made: a vCPU \
                 was held twice and lost counts",
                kernel.syscalls()
            )));
        }
        let stats = sum_stats(reports);
        if stats.anomalies != 0 {
            return Err(Error::failed(format!(
                "rump {name}{pass}: the scheduler met {} states it never leaves (a release of a CPU \
                 not marked busy, an exit without a CPU)",
                stats.anomalies
            )));
        }
        if stats.fast + stats.locked != expected {
            return Err(Error::failed(format!(
                "rump {name}{pass}: {} fast and {} locked entries for {expected} system calls",
                stats.fast, stats.locked
            )));
        }
        kernel
            .check_quiescent()
            .map_err(|e| Error::failed(format!("rump {name}{pass}: {e}")))
    }

    fn iteration<K: VirtualKernel + 'static>(&self, fresh: impl Fn() -> K) -> Result<IterationOutput> {
        let timed = self.timed_pass(fresh())?;
        let checked = if self.params.check {
            self.checked_pass(fresh())?
        } else {
            0
        };
        let mut out = vec![NSEC_PER_OP.value(timed.nsec_per_op)];
        // Batch ticks per call: the percentiles, and their spread (unitless, so on every
        // architecture).
        let quantile = |q: f64| {
            timed
                .batches
                .as_ref()
                .filter(|h| !h.is_empty())
                .map(|h| h.value_at_quantile(q) as f64 / BATCH as f64)
        };
        if sys::HAS_TSC {
            out.push(CYCLES_PER_OP.value(timed.cycles_per_op));
            for (def, q) in [
                (CYCLES_PER_OP_P10, 0.10),
                (CYCLES_PER_OP_P50, 0.50),
                (CYCLES_PER_OP_P90, 0.90),
                (CYCLES_PER_OP_P99, 0.99),
            ] {
                out.push(def.value(quantile(q).unwrap_or(timed.cycles_per_op)));
            }
        }
        let spread = match (quantile(0.10), quantile(0.50), quantile(0.90)) {
            (Some(p10), Some(p50), Some(p90)) if p50 > 0.0 => (p90 - p10) / p50 * 100.0,
            _ => 0.0,
        };
        let s = timed.stats;
        out.extend([
            OP_SPREAD_PCT.value(spread),
            FAST_ENTRIES_COUNT.value(s.fast as f64),
            LOCKED_ENTRIES_COUNT.value(s.locked as f64),
            MIGRATIONS_COUNT.value(s.migrations as f64),
            WAITS_COUNT.value(s.waits as f64),
            WAKES_COUNT.value(s.wakes as f64),
            CHECKED_SYSCALLS_COUNT.value(checked as f64),
        ]);
        Ok(out.into())
    }
}

fn sum_stats(reports: &[ThreadReport]) -> LwpStats {
    let mut all = LwpStats::default();
    for r in reports {
        if let Ok(stats) = r.stats.lock() {
            all.add(&stats);
        }
    }
    all
}

impl Workload for RumpWorkload {
    fn metrics(&self) -> &'static [MetricDef] {
        METRICS
    }

    fn run_iteration(&mut self, _info: IterationInfo) -> Result<IterationOutput> {
        let vcpus = self.params.vcpus() as usize;
        match self.params.variant {
            Scheduler::Cached => self.iteration(|| Cached::new(vcpus)),
            Scheduler::Freelist => self.iteration(|| Freelist::new(vcpus)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metric::Measurement;

    fn run(params: RumpParams) -> Result<Vec<Measurement>> {
        params.validate().unwrap();
        params.build()?.run_iteration(IterationInfo::FIRST)
        .map(|o| o.measurements)
    }

    use crate::metric::value_of as value;

    #[test]
    fn both_schedulers_run_checked_and_count_their_paths() {
        for variant in [Scheduler::Cached, Scheduler::Freelist] {
            for (threads, vcpus) in [(1, 1), (2, 2), (3, 2), (2, 1)] {
                let syscalls = 5_000;
                let m = run(RumpParams {
                    variant,
                    threads,
                    vcpus: Some(vcpus),
                    syscalls,
                    check: true,
                })
                .unwrap();
                assert_eq!(m.len(), METRICS.len());
                let calls = (threads * syscalls) as f64;
                assert!(value(&m, "nsec_per_op") > 0.0);
                assert_eq!(value(&m, "checked_syscalls_count"), calls);
                let (fast, locked) = (
                    value(&m, "fast_entries_count"),
                    value(&m, "locked_entries_count"),
                );
                assert_eq!(fast + locked, calls, "{variant:?} {threads}/{vcpus}");
                match variant {
                    // The freelist takes its lock at every entry.
                    Scheduler::Freelist => assert_eq!(fast, 0.0),
                    // One thread on its own CPU takes the lock once, then never again.
                    Scheduler::Cached if threads == 1 => assert_eq!(locked, 1.0),
                    Scheduler::Cached => assert!(locked >= 1.0),
                }
                if sys::HAS_TSC {
                    let p10 = value(&m, "cycles_per_op_p10");
                    let p50 = value(&m, "cycles_per_op_p50");
                    assert!(p10 > 0.0 && p10 <= p50, "{m:?}");
                    assert!(p50 <= value(&m, "cycles_per_op_p99"), "{m:?}");
                }
                assert!(value(&m, "op_spread_pct") >= 0.0);
            }
        }
    }

    #[test]
    fn case_names_and_estimates_follow_the_parameters() {
        let p = RumpParams {
            vcpus: Some(2),
            ..Default::default()
        };
        assert_eq!(p.case_name(), "rump:cached vcpus=2 threads=2 syscalls=1000000");
        let checked = RumpParams {
            variant: Scheduler::Freelist,
            check: true,
            ..p.clone()
        };
        assert!(checked.case_name().ends_with(" check"));
        assert!(checked.estimate_sec() > p.estimate_sec());
        assert!(RumpParams::default().vcpus() >= 1);
    }

    #[test]
    fn bad_parameters_name_their_flag() {
        for (params, flag) in [
            (
                RumpParams {
                    threads: 0,
                    ..Default::default()
                },
                "--threads",
            ),
            (
                RumpParams {
                    vcpus: Some(0),
                    ..Default::default()
                },
                "--vcpus",
            ),
            (
                RumpParams {
                    syscalls: 0,
                    ..Default::default()
                },
                "--syscalls",
            ),
        ] {
            let err = params.validate().unwrap_err().to_string();
            assert!(err.contains(flag), "{err}");
        }
        assert!(serde_json::from_value::<Scheduler>("lockless".into()).is_err());
        let back: RumpParams = toml::from_str("variant = \"freelist\"\nvcpus = 1").unwrap();
        assert_eq!((back.variant, back.vcpus), (Scheduler::Freelist, Some(1)));
    }
}
