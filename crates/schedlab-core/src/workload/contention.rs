//! The `contention` workload, the class of will-it-scale (LKP's kernel-scalability benchmark): one
//! testcase run by `tasks` tasks at once — threads of one process (the default) or processes, as
//! many as asked, more than the CPUs if need be — each in a loop, counting its ops, for a fixed
//! time after a warm-up. will-it-scale's main process samples every task's counter once a second
//! and kills the tasks at the end; here the main thread sleeps through the warm-up, reads every
//! counter, sleeps through the measured window, reads them again, then raises a stop flag the
//! tasks check before each op, and waits for them.
//!
//! Testcases: `getppid` (a raw system call, will-it-scale's getppid1) and `sched-yield`
//! (sched_yield1); `mmap` (map 128 MiB of private anonymous memory, touch its first page, unmap:
//! mmap1 plus the touch) and `page-fault` (map, write every page, unmap: page_fault1, one op per
//! page), which with threads contend on the one address space's mmap_lock, a sleeping lock whose
//! waiters spin while its owner runs; `fcntl-lock` (every task takes and releases a write lock on
//! the first byte of one shared file, through its own open file description, with `work` units
//! of work inside: will-it-scale's lock2 with real exclusion between threads too);
//! `pipe-writers` (every task writes records into one pipe that `readers` more tasks drain: the
//! pipe's mutex, a sleeping lock that spins on its owner, and its wake-ups); `futex-wake-storm`
//! (one waker task wakes every task sleeping on one futex, over and over: the futex hash bucket's
//! lock and a storm of wake-ups). User-space locks around a critical section of `work` units,
//! threads only: `tas` (test-and-test-and-set with exponential backoff), `ticket`, `mcs` (a
//! queue of per-task nodes), `pthread-mutex` (the C library's) and `futex-mutex` (Drepper's
//! three-state futex mutex after 100 tries). For them every `sample_every`-th critical section of a
//! task is timed (acquisition latency and hold time, into HDR histograms), and another in each
//! `sample_every` is probed for its holder going off CPU: the thread's CPU clock and the
//! monotonic clock read on entry and before release, a gap over 20 µs meaning the holder was
//! not running (descheduled, or its vCPU preempted where steal time is accounted).
//!
//! Verification: every call's result is checked, each task's counter must only grow and end at
//! least where the window read it, and a task that fails records why in shared memory, raises
//! the stop flag, and fails the iteration with that reason, naming the task. Inside every
//! critical section the holder writes its id into a holder word (reading it empty first), reads
//! it back (its own id) and clears it, and increments a shared counter by a plain load and
//! store, all plain accesses (no locked instruction of its own), so two
//! holders at once show as a task's failure or, afterwards, as a counter short of the
//! acquisitions counted: lost updates. Pipe records carry their writer's id; readers check that
//! every read holds whole records from known writers, and afterwards the bytes and the ids they
//! summed must match the writes the writers counted. Every wake-up a futex waiter counts must be
//! one the waker's FUTEX_WAKE calls reported: wakes and waits balance exactly.
use std::hint::{black_box, spin_loop};
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};

use super::definition::{field, Choice, ComparisonLabel, Param, ParamKind, WorkloadParams};
use super::definition::{IterationInfo, IterationOutput, Workload};
use super::tasks::{TaskBudget, TaskLaunch, TaskMode};
use crate::latency;
use crate::attachment::Attachment;
use crate::metric::{Better, Measurement, MetricDef};
use super::work_units::burn;
use crate::sys::{
    self, task_code, AsFd, FutexScope, OwnedFd, PthreadMutex, RecordLock, SharedValue, TaskCode,
    ZeroPageWords,
};
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
const fn lower_nsec(name: &'static str) -> MetricDef {
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
const QUANTILE_PER_MILLE: [latency::PerMille; 4] = [500, 900, 990, 999];
/// The histograms stored with every iteration of a user-space lock (HdrHistogram V2, deflate).
pub const ACQUIRE_ATTACHMENT: &str = "acquire_latency_ns";
pub const HOLD_ATTACHMENT: &str = "hold_time_ns";

/// Every testcase's metrics.
const BASE_METRICS: &[MetricDef] = &[
    OPS_PER_SEC,
    MEAN_TASK_OPS_PER_SEC,
    MIN_TASK_OPS_PER_SEC,
    MAX_TASK_OPS_PER_SEC,
    JAIN_FAIRNESS_INDEX,
];
const STORM_METRICS: &[MetricDef] = &[
    OPS_PER_SEC,
    MEAN_TASK_OPS_PER_SEC,
    MIN_TASK_OPS_PER_SEC,
    MAX_TASK_OPS_PER_SEC,
    JAIN_FAIRNESS_INDEX,
    WAKE_CALLS_PER_SEC,
];
const LOCK_METRICS: &[MetricDef] = &[
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

/// The most tasks of a testcase.
pub const MAX_TASKS: u64 = 4_096;
/// Counter slots in the shared block: every task has one, helpers (pipe readers) included.
const SLOTS: usize = 2 * MAX_TASKS as usize;
const MAX_SECONDS: u64 = 86_400;
/// will-it-scale's MEMSIZE: what mmap1 and page_fault1 map each time.
const DEFAULT_MAP_KIB: u64 = 128 * 1024;
const MAX_MAP_KIB: u64 = 64 * 1024 * 1024;
/// Units of work inside a critical section: the default, and the most (a few ms).
const DEFAULT_WORK: u64 = 100;
const MAX_WORK: u64 = 1_000_000;
/// Bytes per pipe write: the default, and the most that a write keeps whole (PIPE_BUF).
const DEFAULT_WRITE_BYTES: u64 = 64;
const MAX_WRITE_BYTES: usize = 4_096;
/// User-space locks: one critical section in this many of a task's is timed, another probed.
const DEFAULT_SAMPLE_EVERY: u64 = 16;
const MAX_SAMPLE_EVERY: u64 = 1_000_000;
/// A probed holder whose wall time inside exceeds its CPU time by more than this was off CPU.
const OFF_CPU_NS: u64 = 20_000;
/// `tas`: the most spins between two attempts (exponential backoff from 1).
const MAX_BACKOFF_SPINS: u32 = 1_024;
/// `futex-mutex`: attempts before sleeping (glibc's adaptive mutex and Rust's std spin 100).
const FUTEX_SPIN_TRIES: u32 = 100;
/// Bytes a pipe reader asks for per read (the default pipe capacity), rounded down to records.
const READ_BYTES: usize = 64 * 1024;

/// What the tasks are doing, as the main thread says it: warming up (0, the zero-filled start),
/// measured, or told to stop.
const MEASURE: u32 = 1;
const STOP: u32 = 2;

/// The testcase every task runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Testcase {
    Getppid,
    SchedYield,
    Mmap,
    PageFault,
    FcntlLock,
    PipeWriters,
    PipeLoopback,
    FutexWakeStorm,
    Tas,
    Ticket,
    Mcs,
    PthreadMutex,
    FutexMutex,
}

impl Testcase {
    pub const ALL: [Testcase; 13] = [
        Testcase::Getppid,
        Testcase::SchedYield,
        Testcase::Mmap,
        Testcase::PageFault,
        Testcase::FcntlLock,
        Testcase::PipeWriters,
        Testcase::PipeLoopback,
        Testcase::FutexWakeStorm,
        Testcase::Tas,
        Testcase::Ticket,
        Testcase::Mcs,
        Testcase::PthreadMutex,
        Testcase::FutexMutex,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Testcase::Getppid => "getppid",
            Testcase::SchedYield => "sched-yield",
            Testcase::Mmap => "mmap",
            Testcase::PageFault => "page-fault",
            Testcase::FcntlLock => "fcntl-lock",
            Testcase::PipeWriters => "pipe-writers",
            Testcase::PipeLoopback => "pipe-loopback",
            Testcase::FutexWakeStorm => "futex-wake-storm",
            Testcase::Tas => "tas",
            Testcase::Ticket => "ticket",
            Testcase::Mcs => "mcs",
            Testcase::PthreadMutex => "pthread-mutex",
            Testcase::FutexMutex => "futex-mutex",
        }
    }

    /// Whether it is a lock of user space, timed and probed (threads only).
    fn is_user_lock(self) -> bool {
        matches!(
            self,
            Testcase::Tas
                | Testcase::Ticket
                | Testcase::Mcs
                | Testcase::PthreadMutex
                | Testcase::FutexMutex
        )
    }

    /// Whether it runs a critical section of `--work` units under a lock.
    fn has_critical_section(self) -> bool {
        self == Testcase::FcntlLock || self.is_user_lock()
    }

    /// Whether it maps memory each time (`--map-kib`).
    fn maps(self) -> bool {
        matches!(self, Testcase::Mmap | Testcase::PageFault)
    }
}

impl Choice for Testcase {
    const ALL: &'static [Self] = &Testcase::ALL;

    fn name(self) -> &'static str {
        self.as_str()
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ContentionParams {
    pub testcase: Testcase,
    /// Tasks running the testcase at once.
    pub tasks: u64,
    /// Processes instead of threads of one process.
    pub processes: bool,
    /// Seconds measured per iteration.
    pub duration: u64,
    /// Seconds run before the measured window, their ops not counted.
    pub warmup_sec: u64,
    /// KiB mapped each time by `mmap` and `page-fault`.
    pub map_kib: u64,
    /// Units of work inside each critical section.
    pub work: u64,
    /// `pipe-writers`: tasks draining the pipe, besides the writers.
    pub readers: u64,
    /// `pipe-writers`: bytes per write.
    pub write_bytes: u64,
    /// User-space locks: one critical section in this many is timed, another probed.
    pub sample_every: u64,
    /// `mmap`: map and unmap only, touching nothing (will-it-scale's mmap1).
    pub map_only: bool,
    /// `fcntl-lock`: every task locks a file of its own (will-it-scale's lock1).
    pub file_per_task: bool,
}

impl Default for ContentionParams {
    fn default() -> Self {
        ContentionParams {
            testcase: Testcase::Getppid,
            tasks: 2,
            processes: false,
            duration: 5,
            warmup_sec: 1,
            map_kib: DEFAULT_MAP_KIB,
            work: DEFAULT_WORK,
            readers: 1,
            write_bytes: DEFAULT_WRITE_BYTES,
            sample_every: DEFAULT_SAMPLE_EVERY,
            map_only: false,
            file_per_task: false,
        }
    }
}

impl WorkloadParams for ContentionParams {
    const NAME: &'static str = "contention";
    const SUMMARY: &'static str = "N threads or processes run one testcase in a loop for a fixed \
time and count their ops: system calls, kernel locks, user-space locks (will-it-scale)";
    const PARAMS: &'static [Param<Self>] = &[
        Param::new(
            field!(testcase),
            "testcase",
            ParamKind::Choice(&[
                ("getppid", "getppid(2) as a raw system call (will-it-scale getppid1)"),
                ("sched-yield", "sched_yield(2) (will-it-scale sched_yield)"),
                ("mmap", "map --map-kib of private anonymous memory, write its first page, unmap (will-it-scale mmap1, plus the write; with --map-only, mmap1)"),
                ("page-fault", "map --map-kib of private anonymous memory, write every page, unmap; one op per page (will-it-scale page_fault1)"),
                ("fcntl-lock", "take and release an open-file-description write lock on the first byte of one file shared by all tasks, --work units inside (will-it-scale lock2; with --file-per-task, lock1)"),
                ("pipe-writers", "write one --write-bytes record into one pipe all tasks share, which --readers more tasks drain"),
                ("pipe-loopback", "write one byte into the task's own pipe and read it back (will-it-scale pipe1)"),
                ("futex-wake-storm", "one task wakes all that sleep on one futex, over and over; the others (at least one) wait on it; one op is one wake-up received"),
                ("tas", "test-and-test-and-set spin lock with exponential backoff around --work units (threads)"),
                ("ticket", "ticket spin lock around --work units (threads)"),
                ("mcs", "MCS queued spin lock, each waiter spinning on its own node, around --work units (threads)"),
                ("pthread-mutex", "the C library's default pthread mutex around --work units (threads)"),
                ("futex-mutex", "three-state futex mutex, 100 tries then FUTEX_WAIT, around --work units (threads)"),
            ]),
        )
        .value("NAME")
        .help("The testcase every task runs in a loop.")
        .details("The testcase every task runs in a loop: `getppid`, `sched-yield` (system calls); `mmap`, `page-fault`, `fcntl-lock`, `pipe-writers`, `futex-wake-storm` (kernel paths with sleeping locks); `pipe-loopback` (a pipe of the task's own); `tas`, `ticket`, `mcs`, `pthread-mutex`, `futex-mutex` (user-space locks, threads only). What one op of each is, and how it is checked: [workloads.md](workloads.md#contention--the-class-of-will-it-scale)."),
        Param::new(field!(tasks), "tasks", ParamKind::Count { min: 1, max: MAX_TASKS })
            .value("N")
            .help("Tasks running the testcase at once; may exceed the CPUs.")
            .details("Tasks running the testcase at once; may exceed the CPUs (1 to 4,096).")
            .task_count(),
        Param::new(field!(processes), "processes", ParamKind::Switch)
            .help("Processes instead of threads of one process.")
            .details("Forked processes instead of threads of one process (will-it-scale's `_processes` binaries against its `_threads` ones): threads share one address space, file table and lock owner, processes share nothing but what the testcase maps for them."),
        Param::new(field!(duration), "duration", ParamKind::Count { min: 1, max: MAX_SECONDS })
            .value("SEC")
            .help("Seconds measured per iteration.")
            .details("Seconds measured per iteration, after the warm-up (1 to 86,400).")
            .work_size(),
        Param::new(field!(warmup_sec), "warmup-sec", ParamKind::Count { min: 0, max: MAX_SECONDS })
            .value("SEC")
            .help("Seconds every task runs before the measured window; their ops are not counted.")
            .details("Seconds every task runs before each iteration's measured window; their ops and samples are not counted (0 to 86,400). Not `--warmup`, which counts warm-up iterations."),
        Param::new(field!(map_kib), "map-kib", ParamKind::Count { min: 4, max: MAX_MAP_KIB })
            .value("KIB")
            .size()
            .help("mmap and page-fault: KiB mapped each time (will-it-scale: 128 MiB).")
            .details("`mmap` and `page-fault`: KiB of private anonymous memory each task maps each time (4 to 64 GiB; will-it-scale's 128 MiB). `page-fault` holds it all at once in every task, which must fit in the memory available."),
        Param::new(field!(work), "work", ParamKind::Count { min: 0, max: MAX_WORK })
            .value("W")
            .help("Lock testcases: units of work inside each critical section.")
            .details("`fcntl-lock` and the user-space locks: units of work inside each critical section, a load, an add and a store each through `black_box` (a few cycles; 0 to 10^6)."),
        Param::new(field!(readers), "readers", ParamKind::Count { min: 1, max: MAX_TASKS })
            .value("R")
            .help("pipe-writers: tasks draining the pipe, besides the --tasks writers.")
            .details("`pipe-writers`: tasks draining the pipe, besides the `--tasks` writers (1 to 4,096); they are not counted in the per-task metrics.")
            .task_count(),
        Param::new(field!(write_bytes), "write-bytes", ParamKind::Count { min: 8, max: MAX_WRITE_BYTES as u64 })
            .value("BYTES")
            .size()
            .help("pipe-writers: bytes per write (at most PIPE_BUF, so no write is split).")
            .details("`pipe-writers`: bytes per write, one record (8 to 4,096: at most PIPE_BUF, so the kernel never splits or interleaves a write)."),
        Param::new(field!(sample_every), "sample-every", ParamKind::Count { min: 0, max: MAX_SAMPLE_EVERY })
            .value("K")
            .help("User-space locks: time one critical section in K of each task's, probe another; 0: none.")
            .details("User-space locks: of every K critical sections of a task in the measured window, one is timed (acquisition latency, hold time) and another probed for its holder going off CPU (2 to 10^6). The clock reads cost about 20 ns each inside the timed one and the probe's two CPU-clock system calls lengthen the probed one, so a small K disturbs what it measures. 0 times and probes none, and the loop carries no sampling code at all: only the rates are reported (will-it-scale's pthread_mutex1 is `pthread-mutex --work 0 --sample-every 0`)."),
        Param::new(field!(map_only), "map-only", ParamKind::Switch)
            .help("mmap: map and unmap only, touching no page (will-it-scale mmap1).")
            .details("`mmap`: map and unmap only, as will-it-scale's mmap1: no page is touched, so no op takes a page fault or frees a page. What can be checked without touching the memory is: mmap succeeds with a page-aligned address, and munmap succeeds."),
        Param::new(field!(file_per_task), "file-per-task", ParamKind::Switch)
            .help("fcntl-lock: every task locks a file of its own (will-it-scale lock1: no waiting).")
            .details("`fcntl-lock`: every task locks the first byte of a file of its own instead of one file all tasks share, as will-it-scale's lock1: no task waits for another, and each task's critical sections are checked against a holder word and a counter of its own."),
    ];

    fn check_rules(&self) -> Result<()> {
        self.check_knobs()?;
        if self.sample_every == 1 {
            return Err(Error::param(
                "sample_every",
                "must be 0 (no sampling) or at least 2: the timed and the probed critical \
                 sections of a period are two different ones",
            ));
        }
        if self.testcase.is_user_lock() && self.processes {
            return Err(Error::param(
                "processes",
                format!(
                    "is not for {}: the user-space locks run as threads of one process, whose \
                     memory holds the lock and the timing histograms",
                    self.testcase.as_str()
                ),
            ));
        }
        if self.testcase.is_user_lock() {
            let bytes = self.tasks * 2 * histogram_bytes();
            if let Some(available) = sys::available_memory_bytes() {
                if bytes > available / 2 {
                    return Err(Error::param(
                        "tasks",
                        format!(
                            "{} tasks need {} MiB of timing histograms, more than half the {} \
                             MiB available",
                            self.tasks,
                            bytes >> 20,
                            available >> 20
                        ),
                    ));
                }
            }
        }
        if self.testcase == Testcase::FutexWakeStorm && self.tasks < 2 {
            return Err(Error::param(
                "tasks",
                format!(
                    "must be at least 2 for futex-wake-storm (one waker and at least one \
                     waiter), not {}",
                    self.tasks
                ),
            ));
        }
        if self.testcase == Testcase::PageFault {
            let bytes = self.tasks.saturating_mul(self.map_kib.saturating_mul(1024));
            if let Some(available) = sys::available_memory_bytes() {
                if bytes > available {
                    return Err(Error::param(
                        "map_kib",
                        format!(
                            "{} KiB in each of {} tasks is {} MiB at once, more than the {} MiB \
                             available; map less or use fewer --tasks",
                            self.map_kib,
                            self.tasks,
                            bytes >> 20,
                            available >> 20
                        ),
                    ));
                }
            }
        }
        Ok(())
    }

    fn task_budget(&self) -> TaskBudget {
        let descriptors = match self.testcase {
            // One open file description per task, and the file's own while they are opened.
            Testcase::FcntlLock => self.tasks + 1,
            Testcase::PipeWriters => 2,
            // Every task's own pipe.
            Testcase::PipeLoopback => 2 * self.tasks,
            _ => 0,
        };
        let all = self.tasks + self.readers_besides();
        TaskBudget::tasks(all, "tasks", "use fewer --tasks").holding(descriptors)
    }

    fn case_name(&self) -> String {
        let mut name = format!(
            "contention:{} {} tasks={} duration={} warmup={}",
            self.testcase.as_str(),
            self.mode().as_str(),
            self.tasks,
            self.duration,
            self.warmup_sec
        );
        if self.testcase.maps() {
            name.push_str(&format!(" map-kib={}", self.map_kib));
        }
        if self.map_only {
            name.push_str(" map-only");
        }
        if self.file_per_task {
            name.push_str(" file-per-task");
        }
        if self.testcase.has_critical_section() {
            name.push_str(&format!(" work={}", self.work));
        }
        if self.testcase.is_user_lock() {
            name.push_str(&format!(" sample-every={}", self.sample_every));
        }
        if self.testcase == Testcase::PipeWriters {
            name.push_str(&format!(
                " readers={} write-bytes={}",
                self.readers, self.write_bytes
            ));
        }
        name
    }


    /// The warm-up and the window; starting and stopping the tasks is a rounding error.
    fn estimate_sec(&self) -> f64 {
        (self.warmup_sec + self.duration) as f64
    }

    fn comparison_label(&self, _case_name: &str) -> ComparisonLabel {
        ComparisonLabel {
            short: format!("{}-{}", self.testcase.as_str(), self.mode().as_str()),
            load: format!("{}-tasks", self.tasks),
        }
    }

    fn build(&self) -> Result<Box<dyn Workload>> {
        Ok(Box::new(ContentionWorkload::new(Config::of(self))))
    }
}

impl ContentionParams {
    fn mode(&self) -> TaskMode {
        if self.processes {
            TaskMode::Process
        } else {
            TaskMode::Threads
        }
    }

    /// Tasks started besides `tasks`: pipe readers.
    fn readers_besides(&self) -> u64 {
        match self.testcase {
            Testcase::PipeWriters => self.readers,
            _ => 0,
        }
    }

    /// A testcase's own flag given to another testcase is refused rather than ignored.
    fn check_knobs(&self) -> Result<()> {
        let default = ContentionParams::default();
        let unused = |key: &'static str, given: bool, used_by: &str| {
            if given {
                return Err(Error::param(
                    key,
                    format!("applies to {used_by} only, not {}", self.testcase.as_str()),
                ));
            }
            Ok(())
        };
        if !self.testcase.maps() {
            unused("map_kib", self.map_kib != default.map_kib, "mmap and page-fault")?;
        }
        if self.testcase != Testcase::Mmap {
            unused("map_only", self.map_only, "mmap")?;
        }
        if self.testcase != Testcase::FcntlLock {
            unused("file_per_task", self.file_per_task, "fcntl-lock")?;
        }
        if !self.testcase.has_critical_section() {
            unused("work", self.work != default.work, "fcntl-lock and the user-space locks")?;
        }
        if !self.testcase.is_user_lock() {
            let sample_every = self.sample_every != default.sample_every;
            unused("sample_every", sample_every, "the user-space locks")?;
        }
        if self.testcase != Testcase::PipeWriters {
            unused("readers", self.readers != default.readers, "pipe-writers")?;
            let write_bytes = self.write_bytes != default.write_bytes;
            unused("write_bytes", write_bytes, "pipe-writers")?;
        }
        Ok(())
    }
}

/// What one iteration runs, in the units the tasks use.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Config {
    testcase: Testcase,
    /// Tasks whose ops the metrics count (slots `0..workers`).
    workers: usize,
    /// Tasks that serve them (pipe readers, the storm's waker; slots after the workers).
    helpers: usize,
    mode: TaskMode,
    warmup_ns: u64,
    duration_ns: u64,
    map_bytes: usize,
    work: u64,
    write_bytes: usize,
    sample_every: u64,
    map_only: bool,
    file_per_task: bool,
}

impl Config {
    fn of(p: &ContentionParams) -> Self {
        // The storm's waker is one of its tasks, and serves the rest.
        let waker = u64::from(p.testcase == Testcase::FutexWakeStorm);
        Config {
            testcase: p.testcase,
            workers: (p.tasks - waker.min(p.tasks)) as usize,
            helpers: (p.readers_besides() + waker) as usize,
            mode: p.mode(),
            warmup_ns: p.warmup_sec * 1_000_000_000,
            duration_ns: p.duration * 1_000_000_000,
            map_bytes: (p.map_kib * 1024) as usize,
            work: p.work,
            write_bytes: p.write_bytes as usize,
            sample_every: p.sample_every,
            map_only: p.map_only,
            file_per_task: p.file_per_task,
        }
    }

    fn all_tasks(&self) -> usize {
        self.workers + self.helpers
    }

    /// Task `t` as messages name it.
    fn task_name(&self, t: usize) -> String {
        match self.testcase {
            Testcase::PipeWriters if t < self.workers => format!("pipe writer {t}"),
            Testcase::PipeWriters => format!("pipe reader {}", t - self.workers),
            Testcase::FutexWakeStorm if t < self.workers => format!("futex waiter {t}"),
            Testcase::FutexWakeStorm => "futex waker".to_string(),
            _ => format!("{} task {t}", self.testcase.as_str()),
        }
    }

    fn futex_scope(&self) -> FutexScope {
        match self.mode {
            TaskMode::Threads => FutexScope::Private,
            TaskMode::Process => FutexScope::Shared,
        }
    }
}

sys::process_shared! {
    /// The main thread's word to the tasks, on a cache line of its own that the tasks only read
    /// until one fails.
    #[repr(C, align(128))]
    struct Control {
        phase: AtomicU32,
        /// Tasks that failed.
        failed: AtomicU32,
    }
}

sys::process_shared! {
    /// The user-space locks' words, on a cache line of their own: `word` is tas's flag,
    /// futex-mutex's state and mcs's tail (the id of the last task queued, 0 for none); ticket's
    /// next ticket and the one served share the line, as in the kernel's old ticket spinlocks.
    /// What the critical section checks lies on the same line, as a lock embedded in the data it
    /// guards (pthread-mutex's lies beside the C library's mutex instead).
    #[repr(C, align(128))]
    struct LockWords {
        word: AtomicU32,
        next_ticket: AtomicU32,
        serving: AtomicU32,
        guarded: Guarded,
    }
}

sys::process_shared! {
    /// What every critical section checks and changes. A user-space lock's lies on the lock's
    /// cache line, so a hand-over moves one line between CPUs, not two (with two, pthread-mutex
    /// at 4 threads on 2 CPUs ran at 0.63-0.75 of will-it-scale's pthread_mutex1, whose op
    /// touches only the mutex); fcntl-lock's, whose lock is the kernel's, on a line of its own
    /// ([`GuardedLine`]).
    #[derive(Default)]
    #[repr(C)]
    struct Guarded {
        /// The id (task + 1) of the task inside, 0 when none is.
        holder: AtomicU32,
        /// Incremented inside every critical section by a plain load and store.
        counter: AtomicU64,
    }
}

sys::process_shared! {
    /// A critical section's words on a cache line of their own.
    #[repr(C, align(128))]
    struct GuardedLine {
        guarded: Guarded,
    }
}

sys::process_shared! {
    /// futex-wake-storm's futex word, which the waker bumps before every wake, and the waiters
    /// that have left.
    #[repr(C, align(128))]
    struct Storm {
        word: AtomicU32,
        exited: AtomicU32,
    }
}

sys::process_shared! {
    /// One task's counters, on two cache lines of its own (adjacent-line prefetchers pair lines)
    /// so no task's counting disturbs another's, and the critical section of its own file on
    /// two more.
    #[repr(C, align(128))]
    struct Slot {
        /// Ops so far, stored after every op, read by the main thread around the window.
        ops: AtomicU64,
        /// Ops when the task ended.
        total: AtomicU64,
        /// Why the task failed ([`Reason`]), 0 if it did not, and the errno of a failed call.
        failure: AtomicU32,
        errno: AtomicU32,
        /// The result of the critical sections' work, stored so no optimiser drops it.
        sink: AtomicU64,
        /// A pipe reader's bytes read and the wrapping sum of the writer ids of its records.
        bytes: AtomicU64,
        ids: AtomicU64,
        /// The storm's waker: tasks its FUTEX_WAKE calls reported woken.
        woken: AtomicU64,
        /// The task's MCS queue node: whether it must still wait, and its successor's id.
        mcs_waiting: AtomicU32,
        mcs_next: AtomicU32,
        /// `fcntl-lock --file-per-task`: the critical section of the task's own file.
        own_file: GuardedLine,
    }
}

sys::process_shared! {
    /// Everything the tasks share, in a zero-filled mapping that forked tasks inherit.
    #[repr(C)]
    struct Shared {
        control: Control,
        lock: LockWords,
        /// `fcntl-lock`'s critical section, of the one file all tasks lock.
        file: GuardedLine,
        storm: Storm,
        slots: [Slot; SLOTS],
    }
}

/// Why a task failed: a call that returned an error (with its errno), or a check of the
/// testcase's own.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u32)]
enum Reason {
    Getppid = 1,
    SchedYield,
    Mmap,
    Munmap,
    RecordLock,
    RecordUnlock,
    PipeWrite,
    PipeRead,
    FutexWait,
    FutexWake,
    MutexLock,
    MutexUnlock,
    WrongParent,
    PageLost,
    TwoHolders,
    SplitRecord,
    UnknownWriter,
    PipeCreate,
    WrongByte,
    MisalignedMap,
}

impl Reason {
    const ALL: [Reason; 20] = [
        Reason::Getppid,
        Reason::SchedYield,
        Reason::Mmap,
        Reason::Munmap,
        Reason::RecordLock,
        Reason::RecordUnlock,
        Reason::PipeWrite,
        Reason::PipeRead,
        Reason::FutexWait,
        Reason::FutexWake,
        Reason::MutexLock,
        Reason::MutexUnlock,
        Reason::WrongParent,
        Reason::PageLost,
        Reason::TwoHolders,
        Reason::SplitRecord,
        Reason::UnknownWriter,
        Reason::PipeCreate,
        Reason::WrongByte,
        Reason::MisalignedMap,
    ];

    fn of(code: u32) -> Option<Reason> {
        Reason::ALL.into_iter().find(|r| *r as u32 == code)
    }

    /// The call that failed, for reasons that are a failed call.
    fn call(self) -> Option<&'static str> {
        match self {
            Reason::Getppid => Some("getppid"),
            Reason::SchedYield => Some("sched_yield"),
            Reason::Mmap => Some("mmap"),
            Reason::Munmap => Some("munmap"),
            Reason::RecordLock => Some("fcntl(F_OFD_SETLKW, F_WRLCK)"),
            Reason::RecordUnlock => Some("fcntl(F_OFD_SETLKW, F_UNLCK)"),
            Reason::PipeWrite => Some("write to the pipe"),
            Reason::PipeRead => Some("read from the pipe"),
            Reason::FutexWait => Some("FUTEX_WAIT"),
            Reason::FutexWake => Some("FUTEX_WAKE"),
            Reason::MutexLock => Some("pthread_mutex_lock"),
            Reason::MutexUnlock => Some("pthread_mutex_unlock"),
            Reason::PipeCreate => Some("pipe"),
            Reason::WrongParent
            | Reason::WrongByte
            | Reason::MisalignedMap
            | Reason::PageLost
            | Reason::TwoHolders
            | Reason::SplitRecord
            | Reason::UnknownWriter => None,
        }
    }

    fn describe(self, errno: i32) -> String {
        if let Some(call) = self.call() {
            return format!(
                "{call} failed: {}",
                std::io::Error::from_raw_os_error(errno)
            );
        }
        match self {
            Reason::WrongParent => {
                "getppid returned another pid than the task's parent".to_string()
            }
            Reason::PageLost => {
                "a page of its mapping did not hold what the task wrote there".to_string()
            }
            Reason::TwoHolders => "another task was inside the critical section with it: the \
                                   lock let two holders in"
                .to_string(),
            Reason::SplitRecord => {
                "a read returned part of a record: a write was split or interleaved".to_string()
            }
            Reason::UnknownWriter => "a record carried no writer's id".to_string(),
            Reason::WrongByte => {
                "its own pipe gave back another byte than the one it wrote".to_string()
            }
            Reason::MisalignedMap => "mmap returned an address that is not page-aligned".to_string(),
            _ => unreachable!("calls are described above"),
        }
    }
}

/// A task's failure, as it records it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Failure {
    reason: Reason,
    errno: i32,
}

impl Failure {
    fn check(reason: Reason) -> Self {
        Failure { reason, errno: 0 }
    }

    fn call(reason: Reason, e: &std::io::Error) -> Self {
        Failure {
            reason,
            errno: e.raw_os_error().unwrap_or(0),
        }
    }

    fn code(self) -> TaskCode {
        if self.reason.call().is_some() {
            task_code::ERRNO_BASE.saturating_add(self.errno.clamp(0, 190) as u8)
        } else {
            task_code::VERIFY_FAILED
        }
    }
}

/// What a task knows: the run, the shared block and its own slot.
#[derive(Clone)]
struct TaskCtx {
    block: Arc<SharedValue<Shared>>,
    me: usize,
    /// Of the futexes in the shared block.
    scope: FutexScope,
}

impl TaskCtx {
    fn shared(&self) -> &Shared {
        &self.block
    }

    fn slot(&self) -> &Slot {
        &self.block.slots[self.me]
    }

    fn stopping(&self) -> bool {
        self.shared().control.phase.load(Ordering::Relaxed) == STOP
    }
}

/// Runs `op` until the main thread says stop, counting ops into the task's slot: one relaxed
/// load of the shared phase and one relaxed store to the task's own cache line per op, as
/// will-it-scale's `(*iterations)++` on its per-task line.
#[inline(always)]
fn op_loop(
    ctx: &TaskCtx,
    ops: &mut u64,
    mut op: impl FnMut() -> std::result::Result<(), Failure>,
) -> std::result::Result<(), Failure> {
    let slot = ctx.slot();
    while !ctx.stopping() {
        op()?;
        *ops += 1;
        slot.ops.store(*ops, Ordering::Relaxed);
    }
    Ok(())
}

/// Stores the task's total and, on failure, why; a failure stops every task.
fn finish(ctx: &TaskCtx, ops: u64, result: std::result::Result<(), Failure>) -> TaskCode {
    let shared = ctx.shared();
    let slot = ctx.slot();
    slot.total.store(ops, Ordering::SeqCst);
    match result {
        Ok(()) => task_code::OK,
        Err(failure) => {
            slot.errno.store(failure.errno as u32, Ordering::SeqCst);
            slot.failure
                .store(failure.reason as u32, Ordering::SeqCst);
            shared.control.failed.fetch_add(1, Ordering::SeqCst);
            shared.control.phase.store(STOP, Ordering::SeqCst);
            // Whoever sleeps on a futex wakes and sees the stop.
            shared.storm.word.fetch_add(1, Ordering::SeqCst);
            let _ = sys::futex_wake_in(&shared.storm.word, i32::MAX as u32, ctx.scope);
            failure.code()
        }
    }
}

fn getppid_task(ctx: &TaskCtx, parent: Option<i64>) -> TaskCode {
    let mut ops = 0;
    let result = op_loop(ctx, &mut ops, || {
        let ppid = sys::raw_getppid();
        match parent {
            _ if ppid < 0 => Err(Failure::call(
                Reason::Getppid,
                &std::io::Error::last_os_error(),
            )),
            Some(parent) if ppid != parent => Err(Failure::check(Reason::WrongParent)),
            _ => Ok(()),
        }
    });
    finish(ctx, ops, result)
}

fn sched_yield_task(ctx: &TaskCtx) -> TaskCode {
    let mut ops = 0;
    let result = op_loop(ctx, &mut ops, || {
        sys::raw_sched_yield().map_err(|e| Failure::call(Reason::SchedYield, &e))
    });
    finish(ctx, ops, result)
}

/// A fresh mapping of `words` u64s, its first word written and read back, then unmapped: the touch
/// makes every op take a page fault and its munmap zap a page (with threads, a TLB flush on every
/// CPU running the process), where mmap1 maps and unmaps only.
fn mmap_task(ctx: &TaskCtx, words: usize) -> TaskCode {
    let mut ops = 0;
    let tag = ctx.me as u64 + 1;
    let result = op_loop(ctx, &mut ops, || {
        let mut map = ZeroPageWords::new(words).map_err(|e| Failure::call(Reason::Mmap, &e))?;
        let first = black_box(map.as_mut_slice());
        first[0] = tag;
        if black_box(&first[..1])[0] != tag {
            return Err(Failure::check(Reason::PageLost));
        }
        map.unmap().map_err(|e| Failure::call(Reason::Munmap, &e))
    });
    finish(ctx, ops, result)
}

/// mmap1 exactly: a fresh mapping of `words` u64s, unmapped untouched. Without a touch, what
/// shows the kernel made a mapping is its address (page-aligned) and munmap's success; a read
/// would map the zero page, a fault and a page-table entry that mmap1 never has.
fn map_only_task(ctx: &TaskCtx, words: usize, page: usize) -> TaskCode {
    let mut ops = 0;
    let result = op_loop(ctx, &mut ops, || {
        let map = ZeroPageWords::new(words).map_err(|e| Failure::call(Reason::Mmap, &e))?;
        check_map_address(map.address(), page)?;
        map.unmap().map_err(|e| Failure::call(Reason::Munmap, &e))
    });
    finish(ctx, ops, result)
}

fn check_map_address(address: usize, page: usize) -> std::result::Result<(), Failure> {
    if address == 0 || !address.is_multiple_of(page) {
        return Err(Failure::check(Reason::MisalignedMap));
    }
    Ok(())
}

/// page_fault1: map `pages` pages, write the first word of each (one op per page, counted as it
/// goes, so the window reads whole faults), check three of them, unmap. The stop flag is read
/// once per mapping, so a task ends at most one mapping after being told.
fn page_fault_task(ctx: &TaskCtx, pages: usize, page_words: usize) -> TaskCode {
    let slot = ctx.slot();
    let mut ops = 0u64;
    let result = (|| {
        let mut round = 0u64;
        while !ctx.stopping() {
            let mut map = ZeroPageWords::new(pages * page_words)
                .map_err(|e| Failure::call(Reason::Mmap, &e))?;
            // Distinct per task, round and page, and never 0 (an untouched page).
            let tag = |page: usize| (ctx.me as u64 + 1) << 48 | (round & 0xffff) << 32 | page as u64;
            let words = map.as_mut_slice();
            for page in 0..pages {
                words[page * page_words] = tag(page);
                ops += 1;
                slot.ops.store(ops, Ordering::Relaxed);
            }
            let words = black_box(words);
            for page in [0, pages - 1, round as usize % pages] {
                if words[page * page_words] != tag(page) {
                    return Err(Failure::check(Reason::PageLost));
                }
            }
            map.unmap().map_err(|e| Failure::call(Reason::Munmap, &e))?;
            round += 1;
        }
        Ok(())
    })();
    finish(ctx, ops, result)
}

/// A lock around a critical section.
trait CriticalLock {
    /// Takes the lock for task `me`, runs `section`, releases the lock. An error means the lock
    /// is not held.
    fn critical(&self, me: usize, section: impl FnOnce()) -> std::result::Result<(), Failure>;
}

/// An open-file-description write lock on the first byte of the shared file, through this task's
/// own description.
struct FileLock(OwnedFd);

impl CriticalLock for FileLock {
    fn critical(&self, _me: usize, section: impl FnOnce()) -> std::result::Result<(), Failure> {
        use sys::AsFd;
        sys::ofd_record_lock(self.0.as_fd(), 0, 1, RecordLock::Write)
            .map_err(|e| Failure::call(Reason::RecordLock, &e))?;
        section();
        sys::ofd_record_lock(self.0.as_fd(), 0, 1, RecordLock::Unlock)
            .map_err(|e| Failure::call(Reason::RecordUnlock, &e))
    }
}

/// One spin of a waiter; once the tasks are told to stop, a yield, so that holders and queued
/// waiters that were preempted get a CPU and every task can leave.
#[inline(always)]
fn relax(control: &Control) {
    spin_loop();
    if control.phase.load(Ordering::Relaxed) == STOP {
        let _ = sys::raw_sched_yield();
    }
}

/// Test-and-test-and-set: spin reading until the flag looks free, then swap; after a failed try,
/// wait 1, 2, 4 … up to [`MAX_BACKOFF_SPINS`] spins.
struct Tas<'a> {
    flag: &'a AtomicU32,
    control: &'a Control,
}

impl CriticalLock for Tas<'_> {
    fn critical(&self, _me: usize, section: impl FnOnce()) -> std::result::Result<(), Failure> {
        let mut backoff = 1;
        while self.flag.load(Ordering::Relaxed) != 0 || self.flag.swap(1, Ordering::Acquire) != 0
        {
            for _ in 0..backoff {
                relax(self.control);
            }
            backoff = (backoff * 2).min(MAX_BACKOFF_SPINS);
        }
        section();
        self.flag.store(0, Ordering::Release);
        Ok(())
    }
}

/// A ticket lock: take the next ticket, spin until it is served, serve the next one: FIFO, so a
/// preempted waiter holds up everyone behind it.
struct Ticket<'a> {
    words: &'a LockWords,
    control: &'a Control,
}

impl CriticalLock for Ticket<'_> {
    fn critical(&self, _me: usize, section: impl FnOnce()) -> std::result::Result<(), Failure> {
        let mine = self.words.next_ticket.fetch_add(1, Ordering::Relaxed);
        while self.words.serving.load(Ordering::Acquire) != mine {
            relax(self.control);
        }
        section();
        self.words.serving.store(mine.wrapping_add(1), Ordering::Release);
        Ok(())
    }
}

/// The MCS lock: a queue of per-task nodes (in the tasks' slots, named by id = task + 1); each
/// waiter spins on its own node's line and the holder hands over to its successor.
struct Mcs<'a> {
    tail: &'a AtomicU32,
    slots: &'a [Slot],
    control: &'a Control,
}

impl CriticalLock for Mcs<'_> {
    fn critical(&self, me: usize, section: impl FnOnce()) -> std::result::Result<(), Failure> {
        let (node, id) = (&self.slots[me], me as u32 + 1);
        node.mcs_next.store(0, Ordering::Relaxed);
        node.mcs_waiting.store(1, Ordering::Relaxed);
        let previous = self.tail.swap(id, Ordering::AcqRel);
        if previous != 0 {
            self.slots[previous as usize - 1]
                .mcs_next
                .store(id, Ordering::Release);
            while node.mcs_waiting.load(Ordering::Acquire) != 0 {
                relax(self.control);
            }
        }
        section();
        let mut next = node.mcs_next.load(Ordering::Acquire);
        if next == 0 {
            if self
                .tail
                .compare_exchange(id, 0, Ordering::Release, Ordering::Relaxed)
                .is_ok()
            {
                return Ok(());
            }
            // A successor has swapped itself in and is about to link up.
            while next == 0 {
                relax(self.control);
                next = node.mcs_next.load(Ordering::Acquire);
            }
        }
        self.slots[next as usize - 1]
            .mcs_waiting
            .store(0, Ordering::Release);
        Ok(())
    }
}

/// The C library's pthread mutex.
struct Pthread<'a>(&'a PthreadMutex<Guarded>);

impl CriticalLock for Pthread<'_> {
    fn critical(&self, _me: usize, section: impl FnOnce()) -> std::result::Result<(), Failure> {
        let guard = self
            .0
            .lock()
            .map_err(|e| Failure::call(Reason::MutexLock, &e))?;
        section();
        guard
            .unlock()
            .map_err(|e| Failure::call(Reason::MutexUnlock, &e))
    }
}

/// Drepper's "mutex3" (Futexes Are Tricky): 0 free, 1 held, 2 held with waiters; a waiter tries
/// [`FUTEX_SPIN_TRIES`] times, then marks the word 2 and sleeps in FUTEX_WAIT; an unlock that
/// finds 2 wakes one.
struct FutexMutex<'a> {
    word: &'a AtomicU32,
    scope: FutexScope,
}

impl FutexMutex<'_> {
    fn lock_contended(&self) -> std::result::Result<(), Failure> {
        for _ in 0..FUTEX_SPIN_TRIES {
            spin_loop();
            if self.word.load(Ordering::Relaxed) == 0
                && self
                    .word
                    .compare_exchange(0, 1, Ordering::Acquire, Ordering::Relaxed)
                    .is_ok()
            {
                return Ok(());
            }
        }
        while self.word.swap(2, Ordering::Acquire) != 0 {
            sys::futex_wait_in(self.word, 2, self.scope)
                .map_err(|e| Failure::call(Reason::FutexWait, &e))?;
        }
        Ok(())
    }
}

impl CriticalLock for FutexMutex<'_> {
    fn critical(&self, _me: usize, section: impl FnOnce()) -> std::result::Result<(), Failure> {
        if self
            .word
            .compare_exchange(0, 1, Ordering::Acquire, Ordering::Relaxed)
            .is_err()
        {
            self.lock_contended()?;
        }
        section();
        if self.word.swap(0, Ordering::Release) == 2 {
            sys::futex_wake_in(self.word, 1, self.scope)
                .map_err(|e| Failure::call(Reason::FutexWake, &e))?;
        }
        Ok(())
    }
}

/// A user-space lock task's samples: acquisition latency and hold time of the timed critical
/// sections (ns), and the probed ones, how many and how many of their holders went off CPU.
struct LockTiming {
    every: u64,
    acquire: Histogram<u64>,
    hold: Histogram<u64>,
    probes: u64,
    off_cpu: u64,
}

impl LockTiming {
    fn new(every: u64) -> Self {
        LockTiming {
            every,
            acquire: latency::new_latency_histogram(),
            hold: latency::new_latency_histogram(),
            probes: 0,
            off_cpu: 0,
        }
    }
}

/// The bytes of one latency histogram, for the memory check of many tasks.
fn histogram_bytes() -> u64 {
    (latency::new_latency_histogram().distinct_values() * 8) as u64
}

/// Where user-space lock tasks leave their samples when they end (threads only).
type Timings = Arc<Mutex<Vec<Option<LockTiming>>>>;

/// The clock readings of one critical section: taken only for timed and probed ones.
#[derive(Default)]
struct Stamps {
    acquired: u64,
    released: u64,
    wall_ns: u64,
    cpu_ns: u64,
}

/// The critical section: `holder` read (nobody) and written in, the shared counter incremented
/// by a plain load and store around `work` units, `holder` read back (itself) and cleared.
/// Returns whether the task was alone inside; it never leaves early, so the lock is always
/// released.
///
/// Plain loads and stores, not swaps: a locked exchange costs about as much as an uncontended
/// pthread mutex's lock or unlock (will-it-scale's pthread_mutex1 takes 13-15 ns an op here), so
/// two would nearly double the shortest op; and with a lock that excludes, its acquire and
/// release order these accesses exactly. Under one that lets two in, the second holder reads
/// the first's id, or the first reads the second's back before leaving, or they lose a counter
/// update, which the check after the run finds.
#[inline]
fn guarded_section(guarded: &Guarded, holder: u32, work: u64, sink: &mut u64) -> bool {
    let before = guarded.holder.load(Ordering::Relaxed);
    guarded.holder.store(holder, Ordering::Relaxed);
    let count = guarded.counter.load(Ordering::Relaxed);
    if work > 0 {
        *sink = burn(work, *sink ^ count);
    }
    guarded.counter.store(count + 1, Ordering::Relaxed);
    let after = guarded.holder.load(Ordering::Relaxed);
    guarded.holder.store(0, Ordering::Relaxed);
    before == 0 && after == holder
}

/// Takes `lock` around the critical section until told to stop, one op per critical section.
/// With `timing`, in the measured window one section in `every` is timed (a clock read before
/// taking the lock, on entry and before release) and the one half a period later probed (the
/// monotonic and the thread CPU clock read on entry and before release); recording happens
/// after the release, into histograms that never allocate.
/// `SAMPLED` false compiles the sampling out, whatever `timing` holds: an untimed loop does per op
/// what will-it-scale's does, plus the critical-section checks and the stop flag.
fn lock_loop<L: CriticalLock, const SAMPLED: bool>(
    ctx: &TaskCtx,
    lock: &L,
    guarded: &Guarded,
    work: u64,
    ops: &mut u64,
    mut timing: Option<&mut LockTiming>,
) -> std::result::Result<(), Failure> {
    if !SAMPLED {
        timing = None;
    }
    let shared = ctx.shared();
    let (control, slot) = (&shared.control, ctx.slot());
    let holder = ctx.me as u32 + 1;
    let mut sink = 0u64;
    let mut tick = 0u64;
    let result = loop {
        let phase = control.phase.load(Ordering::Relaxed);
        if phase == STOP {
            break Ok(());
        }
        let (mut timed, mut probed) = (false, false);
        if let Some(t) = timing.as_deref() {
            timed = phase == MEASURE && tick == 0;
            probed = phase == MEASURE && tick == t.every / 2;
            tick = if tick + 1 == t.every { 0 } else { tick + 1 };
        }
        let mut stamps = Stamps::default();
        let mut alone = true;
        let asked = if timed { sys::monotonic_ns() } else { 0 };
        let section = || {
            if timed {
                stamps.acquired = sys::monotonic_ns();
            }
            if probed {
                stamps.wall_ns = sys::monotonic_ns();
                stamps.cpu_ns = sys::thread_cpu_ns();
            }
            alone = guarded_section(guarded, holder, work, &mut sink);
            if probed {
                stamps.cpu_ns = sys::thread_cpu_ns().saturating_sub(stamps.cpu_ns);
                stamps.wall_ns = sys::monotonic_ns().saturating_sub(stamps.wall_ns);
            }
            if timed {
                stamps.released = sys::monotonic_ns();
            }
        };
        if let Err(failure) = lock.critical(ctx.me, section) {
            break Err(failure);
        }
        if let Some(t) = timing.as_deref_mut() {
            if timed {
                latency::record(&mut t.acquire, stamps.acquired.saturating_sub(asked));
                let held = stamps.released.saturating_sub(stamps.acquired);
                latency::record(&mut t.hold, held);
            }
            if probed {
                t.probes += 1;
                if stamps.wall_ns.saturating_sub(stamps.cpu_ns) > OFF_CPU_NS {
                    t.off_cpu += 1;
                }
            }
        }
        *ops += 1;
        slot.ops.store(*ops, Ordering::Relaxed);
        if !alone {
            break Err(Failure::check(Reason::TwoHolders));
        }
    };
    slot.sink.store(sink, Ordering::Relaxed);
    result
}

/// `own_file`: the file is the task's alone, and so is the critical section it checks.
/// [`lock_loop`] with its sampling compiled in, unless `--sample-every 0` asked for none.
fn sampled_lock_loop<L: CriticalLock>(
    ctx: &TaskCtx,
    lock: &L,
    guarded: &Guarded,
    work: u64,
    ops: &mut u64,
    timing: Option<&mut LockTiming>,
) -> std::result::Result<(), Failure> {
    match timing {
        Some(t) if t.every > 0 => lock_loop::<L, true>(ctx, lock, guarded, work, ops, Some(t)),
        _ => lock_loop::<L, false>(ctx, lock, guarded, work, ops, None),
    }
}

fn fcntl_lock_task(ctx: &TaskCtx, file: FileLock, work: u64, own_file: bool) -> TaskCode {
    let guarded = if own_file {
        &ctx.slot().own_file.guarded
    } else {
        &ctx.shared().file.guarded
    };
    let mut ops = 0;
    let result = lock_loop::<_, false>(ctx, &file, guarded, work, &mut ops, None);
    finish(ctx, ops, result)
}

/// A user-space lock task: the loop with timing, its samples left in `timings` at the end.
fn user_lock_task(
    ctx: &TaskCtx,
    testcase: Testcase,
    pthread: &PthreadMutex<Guarded>,
    work: u64,
    mut timing: LockTiming,
    timings: &Timings,
) -> TaskCode {
    let shared = ctx.shared();
    let (control, guarded) = (&shared.control, &shared.lock.guarded);
    let mut ops = 0;
    let t = Some(&mut timing);
    let result = match testcase {
        Testcase::Tas => {
            let lock = Tas {
                flag: &shared.lock.word,
                control,
            };
            sampled_lock_loop(ctx, &lock, guarded, work, &mut ops, t)
        }
        Testcase::Ticket => {
            let lock = Ticket {
                words: &shared.lock,
                control,
            };
            sampled_lock_loop(ctx, &lock, guarded, work, &mut ops, t)
        }
        Testcase::Mcs => {
            let lock = Mcs {
                tail: &shared.lock.word,
                slots: &shared.slots,
                control,
            };
            sampled_lock_loop(ctx, &lock, guarded, work, &mut ops, t)
        }
        Testcase::PthreadMutex => {
            sampled_lock_loop(ctx, &Pthread(pthread), pthread.data(), work, &mut ops, t)
        }
        _ => {
            let lock = FutexMutex {
                word: &shared.lock.word,
                scope: ctx.scope,
            };
            sampled_lock_loop(ctx, &lock, guarded, work, &mut ops, t)
        }
    };
    if let Ok(mut all) = timings.lock() {
        all[ctx.me] = Some(timing);
    }
    finish(ctx, ops, result)
}

/// The lock metrics and histograms of an iteration, from every task's samples.
fn lock_output(timings: Vec<LockTiming>) -> (Vec<Measurement>, Vec<Attachment>) {
    let mut acquire = latency::new_latency_histogram();
    let mut hold = latency::new_latency_histogram();
    let (mut probes, mut off_cpu) = (0u64, 0u64);
    for t in &timings {
        // Histograms of one shape always add.
        let _ = acquire.add(&t.acquire);
        let _ = hold.add(&t.hold);
        probes += t.probes;
        off_cpu += t.off_cpu;
    }
    let mut out = Vec::new();
    for (h, defs) in [(&acquire, ACQUIRE_QUANTILES), (&hold, HOLD_QUANTILES)] {
        if h.is_empty() {
            continue;
        }
        for (def, pm) in defs.iter().zip(QUANTILE_PER_MILLE) {
            if let Some(v) = latency::value_at(h, pm) {
                out.push(def.value(v as f64));
            }
        }
        out.push(defs[4].value(h.max() as f64));
    }
    out.push(LOCK_SAMPLES_COUNT.value(acquire.len() as f64));
    if probes > 0 {
        out.push(HOLDER_OFF_CPU_PCT.value(100.0 * off_cpu as f64 / probes as f64));
    }
    out.push(HOLDER_OFF_CPU_PROBES_COUNT.value(probes as f64));
    let attachments = vec![
        latency::attachment(ACQUIRE_ATTACHMENT, &acquire),
        latency::attachment(HOLD_ATTACHMENT, &hold),
    ];
    (out, attachments)
}

/// After every task has ended: nobody is inside, and the counter incremented inside the critical
/// section equals the acquisitions the tasks counted (fewer means lost updates: two holders).
fn check_guarded(counter: u64, holder: u32, acquisitions: u64) -> Result<()> {
    if holder != 0 {
        return Err(Error::failed(format!(
            "after every task ended, task {} still shows as inside the critical section",
            holder - 1
        )));
    }
    if counter != acquisitions {
        return Err(Error::failed(format!(
            "the counter incremented inside the critical section reads {counter}, but the tasks \
             counted {acquisitions} acquisitions: {} updates were lost, so two tasks held the \
             lock at once",
            acquisitions.abs_diff(counter)
        )));
    }
    Ok(())
}

/// `--file-per-task`: every task's own critical section, as [`check_guarded`] checks the shared
/// one, against the task's own acquisitions.
fn check_own_sections(cfg: &Config, slots: &[Slot], totals: &[u64]) -> Result<()> {
    for (t, (slot, &total)) in slots.iter().zip(totals).enumerate() {
        let guarded = &slot.own_file.guarded;
        check_guarded(
            guarded.counter.load(Ordering::SeqCst),
            guarded.holder.load(Ordering::SeqCst),
            total,
        )
        .map_err(|e| Error::failed(format!("{}'s own file: {e}", cfg.task_name(t))))?;
    }
    Ok(())
}

/// A pipe writer: one record (its id, then filler) per write, through the C library's write as
/// will-it-scale's tests call it. Its end of the pipe closes when it returns.
fn pipe_writer_task(ctx: &TaskCtx, pipe: Arc<OwnedFd>, bytes: usize) -> TaskCode {
    let mut record = [0xa5u8; MAX_WRITE_BYTES];
    record[..8].copy_from_slice(&(ctx.me as u64 + 1).to_ne_bytes());
    let record = &record[..bytes];
    let mut ops = 0;
    let result = op_loop(ctx, &mut ops, || {
        sys::write_full(pipe.as_fd(), record).map_err(|e| Failure::call(Reason::PipeWrite, &e))
    });
    finish(ctx, ops, result)
}

/// A pipe reader: reads until every writer has closed its end, checking that each read holds
/// whole records of known writers, and keeps the bytes and the sum of the writer ids. `buf` is
/// a whole number of records, allocated before the start.
fn pipe_reader_task(
    ctx: &TaskCtx,
    pipe: Arc<OwnedFd>,
    mut buf: Vec<u8>,
    bytes: usize,
    writers: u64,
) -> TaskCode {
    let slot = ctx.slot();
    let (mut reads, mut total, mut ids) = (0u64, 0u64, 0u64);
    let result = (|| loop {
        let n = match sys::read_interruptible(pipe.as_fd(), &mut buf) {
            Ok(0) => return Ok(()),
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(Failure::call(Reason::PipeRead, &e)),
        };
        if n % bytes != 0 {
            return Err(Failure::check(Reason::SplitRecord));
        }
        for record in buf[..n].chunks_exact(bytes) {
            let id = u64::from_ne_bytes(record[..8].try_into().expect("8 bytes"));
            if id == 0 || id > writers {
                return Err(Failure::check(Reason::UnknownWriter));
            }
            ids = ids.wrapping_add(id);
        }
        total += n as u64;
        reads += 1;
        slot.ops.store(reads, Ordering::Relaxed);
    })();
    drop(pipe);
    slot.bytes.store(total, Ordering::SeqCst);
    slot.ids.store(ids, Ordering::SeqCst);
    finish(ctx, reads, result)
}

/// pipe1: the task writes one byte into a pipe of its own and reads it back, so nobody waits and
/// nothing wakes; through the C library's write and read, as will-it-scale's test calls them.
/// The byte rotates op by op (and starts at the task's id), so a byte that went astray or a read
/// of a stale one shows.
fn pipe_loopback_task(ctx: &TaskCtx) -> TaskCode {
    let mut ops = 0;
    let result = sys::pipe()
        .map_err(|e| Failure::call(Reason::PipeCreate, &e))
        .and_then(|(read, write)| {
            let mut tag = ctx.me as u8;
            op_loop(ctx, &mut ops, || {
                tag = tag.wrapping_add(1);
                loopback_once(read.as_fd(), write.as_fd(), tag)
            })
        });
    finish(ctx, ops, result)
}

/// One byte through a pipe and back, checked.
#[inline(always)]
fn loopback_once(
    read: sys::BorrowedFd<'_>,
    write: sys::BorrowedFd<'_>,
    tag: u8,
) -> std::result::Result<(), Failure> {
    sys::write_full(write, &[tag]).map_err(|e| Failure::call(Reason::PipeWrite, &e))?;
    let mut back = [0u8; 1];
    match sys::read_full(read, &mut back) {
        Ok(true) if back[0] == tag => Ok(()),
        Ok(_) => Err(Failure::check(Reason::WrongByte)),
        Err(e) => Err(Failure::call(Reason::PipeRead, &e)),
    }
}

/// A futex waiter: sleeps on the storm's word while it holds the value last seen, counting the
/// wake-ups (a FUTEX_WAIT that returned 0; one that found the word changed is no op).
fn storm_waiter_task(ctx: &TaskCtx) -> TaskCode {
    let (storm, slot) = (&ctx.shared().storm, ctx.slot());
    let mut ops = 0u64;
    let result = (|| loop {
        let seen = storm.word.load(Ordering::SeqCst);
        if ctx.stopping() {
            return Ok(());
        }
        match sys::futex_wait_in(&storm.word, seen, ctx.scope) {
            Ok(true) => {
                ops += 1;
                slot.ops.store(ops, Ordering::Relaxed);
            }
            Ok(false) => {}
            Err(e) => return Err(Failure::call(Reason::FutexWait, &e)),
        }
    })();
    let code = finish(ctx, ops, result);
    storm.exited.fetch_add(1, Ordering::SeqCst);
    code
}

/// The waker: bumps the word and wakes every sleeper, one op per FUTEX_WAKE call, summing the
/// wake-ups the kernel reports. Told to stop, it goes on waking (yielding between calls) until
/// every waiter has left, so none sleeps forever and every wake-up counted is one reported.
fn storm_waker_task(ctx: &TaskCtx, waiters: u32) -> TaskCode {
    let (storm, slot) = (&ctx.shared().storm, ctx.slot());
    let mut woken = 0u64;
    let wake = |woken: &mut u64| {
        storm.word.fetch_add(1, Ordering::SeqCst);
        let n = sys::futex_wake_in(&storm.word, i32::MAX as u32, ctx.scope)
            .map_err(|e| Failure::call(Reason::FutexWake, &e))?;
        *woken += n as u64;
        Ok(())
    };
    let mut calls = 0;
    let mut result = op_loop(ctx, &mut calls, || wake(&mut woken));
    while storm.exited.load(Ordering::SeqCst) < waiters {
        if let Err(failure) = wake(&mut woken) {
            result = result.and(Err(failure));
            break;
        }
        let _ = sys::raw_sched_yield();
    }
    slot.woken.store(woken, Ordering::SeqCst);
    finish(ctx, calls, result)
}

/// After every task has ended: every waiter left, and the wake-ups the waiters counted are the
/// ones the waker's calls reported.
fn check_storm(woken: u64, received: u64, exited: u32, waiters: u32) -> Result<()> {
    if exited != waiters {
        return Err(Error::failed(format!(
            "{exited} of {waiters} futex waiters left"
        )));
    }
    if woken != received {
        return Err(Error::failed(format!(
            "wakes and waits do not balance: FUTEX_WAKE reported {woken} tasks woken, the \
             waiters counted {received} wake-ups"
        )));
    }
    Ok(())
}

/// After every task has ended: the readers read every byte the writers wrote, and the writer ids
/// they summed are those of the writes counted (writer w's records carry w + 1).
fn check_pipe(writes: &[u64], read_bytes: u64, read_ids: u64, bytes: usize) -> Result<()> {
    let written: u64 = writes.iter().sum::<u64>() * bytes as u64;
    if read_bytes != written {
        return Err(Error::failed(format!(
            "the writers wrote {written} bytes, the readers read {read_bytes}"
        )));
    }
    let ids = writes
        .iter()
        .enumerate()
        .fold(0u64, |sum, (w, &n)| sum.wrapping_add(n.wrapping_mul(w as u64 + 1)));
    if read_ids != ids {
        return Err(Error::failed(format!(
            "the records read do not add up to the writes counted per writer (writer ids sum to \
             {read_ids:#x}, expected {ids:#x})"
        )));
    }
    Ok(())
}

/// Jain's fairness index of per-task op counts: (Σx)² / (n·Σx²), 1 when every task did the same,
/// 1/n when one task did everything; `None` when no task did anything.
pub fn jain_index(counts: &[u64]) -> Option<f64> {
    let n = counts.len() as f64;
    let sum: f64 = counts.iter().map(|&c| c as f64).sum();
    let squares: f64 = counts.iter().map(|&c| (c as f64) * (c as f64)).sum();
    (squares > 0.0).then(|| sum * sum / (n * squares))
}

/// Every task's counter read at the start and the end of the measured window.
struct Window {
    ns: u64,
    start: Vec<u64>,
    end: Vec<u64>,
}

impl Window {
    /// Ops of each task inside the window.
    fn ops(&self) -> Vec<u64> {
        self.start
            .iter()
            .zip(&self.end)
            .map(|(a, b)| b.saturating_sub(*a))
            .collect()
    }
}

/// Sleeps until `until` (CLOCK_MONOTONIC ns), waking for signals: a stop signal or the deadline
/// ends the sleep with its error.
fn sleep_until(until: u64) -> Result<()> {
    loop {
        crate::error::check_stop()?;
        let now = sys::monotonic_ns();
        if now >= until {
            return Ok(());
        }
        sys::sleep_interruptible_ns(until - now);
    }
}

fn read_counters(shared: &Shared, into: &mut [u64]) {
    for (value, slot) in into.iter_mut().zip(&shared.slots) {
        *value = slot.ops.load(Ordering::Relaxed);
    }
}

/// Each task's counter must only have grown: window start ≤ window end ≤ its final total.
fn check_counts(window: &Window, totals: &[u64]) -> Result<()> {
    for (t, ((start, end), total)) in window
        .start
        .iter()
        .zip(&window.end)
        .zip(totals)
        .enumerate()
    {
        if start > end || end > total {
            return Err(Error::failed(format!(
                "contention task {t}'s op counter went backwards: {start} at the window's start, \
                 {end} at its end, {total} when it ended"
            )));
        }
    }
    Ok(())
}

/// The metrics of every testcase from the tasks' ops in the window.
fn rate_metrics(ops: &[u64], window_ns: u64) -> Result<Vec<Measurement>> {
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

pub struct ContentionWorkload {
    config: Config,
}

impl ContentionWorkload {
    fn new(config: Config) -> Self {
        ContentionWorkload { config }
    }

    fn spawn_tasks(
        &self,
        launch: &mut TaskLaunch,
        block: &Arc<SharedValue<Shared>>,
        timings: &Timings,
        pthread: &Arc<PthreadMutex<Guarded>>,
    ) -> Result<()> {
        let cfg = self.config;
        let ctx = |me: usize| TaskCtx {
            block: Arc::clone(block),
            me,
            scope: cfg.futex_scope(),
        };
        let name = |me: usize| cfg.task_name(me);
        match cfg.testcase {
            Testcase::Getppid => {
                // A forked task's parent is this process, for as long as it lives (tasks die
                // with it); threads share this process's parent, which can change (a shell that
                // exits hands a nohup'ed run to init), so a thread only checks for a pid.
                let parent = match cfg.mode {
                    TaskMode::Process => Some(sys::raw_getpid()),
                    TaskMode::Threads => None,
                };
                for me in 0..cfg.workers {
                    let ctx = ctx(me);
                    launch.spawn(name(me), move || getppid_task(&ctx, parent))?;
                }
            }
            Testcase::SchedYield => {
                for me in 0..cfg.workers {
                    let ctx = ctx(me);
                    launch.spawn(name(me), move || sched_yield_task(&ctx))?;
                }
            }
            Testcase::Mmap => {
                let (words, page) = ((cfg.map_bytes / 8).max(1), sys::page_size());
                for me in 0..cfg.workers {
                    let ctx = ctx(me);
                    if cfg.map_only {
                        launch.spawn(name(me), move || map_only_task(&ctx, words, page))?;
                    } else {
                        launch.spawn(name(me), move || mmap_task(&ctx, words))?;
                    }
                }
            }
            Testcase::PageFault => {
                let page = sys::page_size();
                let pages = (cfg.map_bytes / page).max(1);
                for me in 0..cfg.workers {
                    let ctx = ctx(me);
                    launch.spawn(name(me), move || page_fault_task(&ctx, pages, page / 8))?;
                }
            }
            Testcase::FcntlLock => {
                sys::raise_open_files_limit();
                let cannot = |e: std::io::Error| {
                    Error::failed(format!("cannot open the file to lock: {e}"))
                };
                let files = if cfg.file_per_task {
                    // A file of its own for every task: one description of each.
                    (0..cfg.workers)
                        .map(|_| sys::lock_file_descriptions(1).map(|mut one| one.remove(0)))
                        .collect::<std::io::Result<Vec<_>>>()
                        .map_err(cannot)?
                } else {
                    sys::lock_file_descriptions(cfg.workers).map_err(cannot)?
                };
                for (me, file) in files.into_iter().enumerate() {
                    let ctx = ctx(me);
                    let (work, own_file) = (cfg.work, cfg.file_per_task);
                    launch.spawn(name(me), move || {
                        fcntl_lock_task(&ctx, FileLock(file), work, own_file)
                    })?;
                }
            }
            Testcase::PipeWriters => {
                let (read, write) = sys::pipe()
                    .map_err(|e| Error::failed(format!("cannot create a pipe: {e}")))?;
                let (read, write) = (Arc::new(read), Arc::new(write));
                let bytes = cfg.write_bytes;
                for me in 0..cfg.workers {
                    let (ctx, write) = (ctx(me), Arc::clone(&write));
                    launch.spawn(name(me), move || pipe_writer_task(&ctx, write, bytes))?;
                }
                // Only the writers hold the write end from here (a forked reader inherits none),
                // so the readers see the end of the stream once the last writer has returned.
                drop(write);
                let writers = cfg.workers as u64;
                for me in cfg.workers..cfg.all_tasks() {
                    let (ctx, read) = (ctx(me), Arc::clone(&read));
                    let buf = vec![0u8; READ_BYTES / bytes * bytes];
                    launch.spawn(name(me), move || {
                        pipe_reader_task(&ctx, read, buf, bytes, writers)
                    })?;
                }
            }
            Testcase::PipeLoopback => {
                for me in 0..cfg.workers {
                    let ctx = ctx(me);
                    launch.spawn(name(me), move || pipe_loopback_task(&ctx))?;
                }
            }
            Testcase::FutexWakeStorm => {
                for me in 0..cfg.workers {
                    let ctx = ctx(me);
                    launch.spawn(name(me), move || storm_waiter_task(&ctx))?;
                }
                let (ctx, waiters) = (ctx(cfg.workers), cfg.workers as u32);
                launch.spawn(name(cfg.workers), move || storm_waker_task(&ctx, waiters))?;
            }
            Testcase::Tas
            | Testcase::Ticket
            | Testcase::Mcs
            | Testcase::PthreadMutex
            | Testcase::FutexMutex => {
                if cfg.mode != TaskMode::Threads {
                    return Err(Error::invalid(
                        "the user-space locks run as threads of one process only",
                    ));
                }
                for me in 0..cfg.workers {
                    let (ctx, pthread, timings) =
                        (ctx(me), Arc::clone(pthread), Arc::clone(timings));
                    // The histograms are allocated here, before the start.
                    let timing = LockTiming::new(cfg.sample_every);
                    let (testcase, work) = (cfg.testcase, cfg.work);
                    launch.spawn(name(me), move || {
                        user_lock_task(&ctx, testcase, &pthread, work, timing, &timings)
                    })?;
                }
            }
        }
        Ok(())
    }

    /// Starts the tasks, lets them warm up, reads their counters around the measured window,
    /// stops them and waits for every one.
    fn measure(&self, launch: &mut TaskLaunch, shared: &Shared) -> Result<Window> {
        let cfg = self.config;
        let mut start = vec![0u64; cfg.all_tasks()];
        let mut end = vec![0u64; cfg.all_tasks()];
        let released = launch.start()?;
        let timed = (|| -> Result<u64> {
            sleep_until(released.saturating_add(cfg.warmup_ns))?;
            let t0 = sys::monotonic_ns();
            read_counters(shared, &mut start);
            shared.control.phase.store(MEASURE, Ordering::SeqCst);
            sleep_until(t0.saturating_add(cfg.duration_ns))?;
            let t1 = sys::monotonic_ns();
            read_counters(shared, &mut end);
            Ok(t1.saturating_sub(t0))
        })();
        shared.control.phase.store(STOP, Ordering::SeqCst);
        let waited = launch.wait_all();
        let ns = timed.map_err(|e| match e {
            Error::TimedOut(_) => Error::TimedOut(format!(
                "the deadline passed inside the {} s warm-up and {} s measured window; every \
                 task was told to stop",
                cfg.warmup_ns / 1_000_000_000,
                cfg.duration_ns / 1_000_000_000
            )),
            other => other,
        })?;
        waited.map_err(|e| self.why_failed(shared).unwrap_or(e))?;
        Ok(Window { ns, start, end })
    }

    /// The first failure a task recorded, named, if any did.
    fn why_failed(&self, shared: &Shared) -> Option<Error> {
        let cfg = self.config;
        shared.slots[..cfg.all_tasks()]
            .iter()
            .enumerate()
            .find_map(|(t, slot)| {
                let reason = Reason::of(slot.failure.load(Ordering::SeqCst))?;
                let errno = slot.errno.load(Ordering::SeqCst) as i32;
                Some(Error::failed(format!(
                    "contention {}: {} failed: {}",
                    cfg.testcase.as_str(),
                    cfg.task_name(t),
                    reason.describe(errno)
                )))
            })
    }
}

impl Workload for ContentionWorkload {
    fn metrics(&self) -> &'static [MetricDef] {
        match self.config.testcase {
            Testcase::FutexWakeStorm => STORM_METRICS,
            t if t.is_user_lock() => LOCK_METRICS,
            _ => BASE_METRICS,
        }
    }

    fn run_iteration(&mut self, _info: IterationInfo) -> Result<IterationOutput> {
        let cfg = self.config;
        let block = Arc::new(
            SharedValue::<Shared>::new()
                .map_err(|e| Error::failed(format!("cannot map shared memory: {e}")))?,
        );
        let mut launch = TaskLaunch::new(cfg.mode)?;
        let timings: Timings = Arc::new(Mutex::new(
            std::iter::repeat_with(|| None).take(cfg.workers).collect(),
        ));
        // Only pthread-mutex takes it; it is a few bytes.
        let pthread = Arc::new(PthreadMutex::with_data(Guarded::default()));
        self.spawn_tasks(&mut launch, &block, &timings, &pthread)?;
        let window = self.measure(&mut launch, &block)?;
        drop(launch);
        let shared: &Shared = &block;
        let slots = &shared.slots[..cfg.all_tasks()];
        let totals: Vec<u64> = slots
            .iter()
            .map(|s| s.total.load(Ordering::SeqCst))
            .collect();
        check_counts(&window, &totals)?;
        let worker_totals = &totals[..cfg.workers];
        if cfg.file_per_task {
            check_own_sections(&cfg, slots, worker_totals)?;
        } else if cfg.testcase.has_critical_section() {
            let guarded = match cfg.testcase {
                Testcase::FcntlLock => &shared.file.guarded,
                Testcase::PthreadMutex => pthread.data(),
                _ => &shared.lock.guarded,
            };
            check_guarded(
                guarded.counter.load(Ordering::SeqCst),
                guarded.holder.load(Ordering::SeqCst),
                worker_totals.iter().sum(),
            )?;
        }
        if cfg.testcase == Testcase::PipeWriters {
            let readers = &slots[cfg.workers..];
            let sum = |f: fn(&Slot) -> &AtomicU64| {
                readers
                    .iter()
                    .fold(0u64, |a, s| a.wrapping_add(f(s).load(Ordering::SeqCst)))
            };
            check_pipe(
                worker_totals,
                sum(|s| &s.bytes),
                sum(|s| &s.ids),
                cfg.write_bytes,
            )?;
        }
        let mut ops = window.ops();
        let mut out = Vec::new();
        if cfg.testcase == Testcase::FutexWakeStorm {
            check_storm(
                slots[cfg.workers].woken.load(Ordering::SeqCst),
                worker_totals.iter().sum(),
                shared.storm.exited.load(Ordering::SeqCst),
                cfg.workers as u32,
            )?;
            let calls = ops[cfg.workers] as f64;
            out.push(WAKE_CALLS_PER_SEC.value(calls * 1e9 / window.ns.max(1) as f64));
        }
        let mut attachments = Vec::new();
        if cfg.testcase.is_user_lock() {
            let taken = std::mem::take(&mut *timings.lock().map_err(|_| {
                Error::failed("a lock task panicked while leaving its samples".to_string())
            })?);
            let all: Vec<LockTiming> = taken.into_iter().flatten().collect();
            if all.len() != cfg.workers {
                return Err(Error::failed(format!(
                    "only {} of {} lock tasks left their samples",
                    all.len(),
                    cfg.workers
                )));
            }
            let (mut measured, attached) = lock_output(all);
            out.append(&mut measured);
            attachments = attached;
        }
        ops.truncate(cfg.workers);
        let mut metrics = rate_metrics(&ops, window.ns)?;
        metrics.append(&mut out);
        Ok(IterationOutput {
            measurements: metrics,
            attachments,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A short run: 150 ms measured after a 20 ms warm-up, small sizes.
    fn config(testcase: Testcase, tasks: usize, mode: TaskMode) -> Config {
        Config {
            testcase,
            workers: tasks,
            helpers: usize::from(matches!(
                testcase,
                Testcase::PipeWriters | Testcase::FutexWakeStorm
            )),
            mode,
            warmup_ns: 20_000_000,
            duration_ns: 150_000_000,
            map_bytes: 1 << 20,
            work: 50,
            write_bytes: 24,
            sample_every: 4,
            map_only: false,
            file_per_task: false,
        }
    }

    fn run(config: Config) -> Result<IterationOutput> {
        ContentionWorkload::new(config).run_iteration(IterationInfo {
            index: 0,
            warmup: false,
        })
    }

    fn value(m: &[Measurement], name: &str) -> f64 {
        m.iter()
            .find(|m| m.name == name)
            .unwrap_or_else(|| panic!("no {name} in {m:?}"))
            .value
    }

    /// The metrics are there as declared, and agree with each other (no speed is asserted).
    /// Runs one iteration that must succeed, checks its metrics against the declared schema and
    /// the task counts, and returns them.
    fn run_checked(cfg: Config, tasks: usize) -> Vec<Measurement> {
        let m = run(cfg).unwrap().measurements;
        check_metrics(&ContentionWorkload::new(cfg), &m, tasks);
        m
    }

    fn check_metrics(workload: &ContentionWorkload, m: &[Measurement], tasks: usize) {
        assert!(crate::metric::check_declared(workload.metrics(), m).is_empty(), "{m:?}");
        let total = value(m, "ops_per_sec");
        assert!(total > 0.0);
        let per_task = value(m, "mean_task_ops_per_sec");
        assert!((per_task * tasks as f64 - total).abs() / total < 1e-9);
        let (min, max) = (value(m, "min_task_ops_per_sec"), value(m, "max_task_ops_per_sec"));
        // Equal counts give equal rates, up to rounding.
        let slack = per_task * 1e-12;
        assert!(min <= per_task + slack && per_task <= max + slack, "{m:?}");
        let jain = value(m, "jain_fairness_index");
        assert!(jain > 0.0 && jain <= 1.0 + 1e-12, "{jain}");
    }

    #[test]
    fn kernel_baselines_run_as_threads_and_processes() {
        for testcase in [Testcase::Getppid, Testcase::SchedYield] {
            for (mode, tasks) in [(TaskMode::Threads, 3), (TaskMode::Process, 2)] {
                let cfg = config(testcase, tasks, mode);
                run_checked(cfg, tasks);
            }
        }
    }

    #[test]
    fn mappings_are_made_touched_and_unmapped_by_threads_and_processes() {
        for testcase in [Testcase::Mmap, Testcase::PageFault] {
            for (mode, tasks) in [(TaskMode::Threads, 3), (TaskMode::Process, 2)] {
                let cfg = config(testcase, tasks, mode);
                run_checked(cfg, tasks);
            }
        }
    }

    #[test]
    fn map_only_maps_and_unmaps_untouched() {
        for (mode, tasks) in [(TaskMode::Threads, 3), (TaskMode::Process, 2)] {
            let cfg = Config {
                map_only: true,
                ..config(Testcase::Mmap, tasks, mode)
            };
            run_checked(cfg, tasks);
        }
        check_map_address(8 << 20, 4096).unwrap();
        for wrong in [0, (8 << 20) + 64] {
            let err = check_map_address(wrong, 4096).unwrap_err();
            assert_eq!(err, Failure::check(Reason::MisalignedMap));
        }
    }

    #[test]
    fn pipe_loopback_reads_back_its_own_byte() {
        for (mode, tasks) in [(TaskMode::Threads, 3), (TaskMode::Process, 2)] {
            let cfg = config(Testcase::PipeLoopback, tasks, mode);
            run_checked(cfg, tasks);
        }
        let (read, write) = sys::pipe().unwrap();
        loopback_once(read.as_fd(), write.as_fd(), 7).unwrap();
        // A byte left behind is read before the one just written: the check sees it.
        sys::write_full(write.as_fd(), &[9]).unwrap();
        let stale = loopback_once(read.as_fd(), write.as_fd(), 10).unwrap_err();
        assert_eq!(stale, Failure::check(Reason::WrongByte));
        assert!(Reason::WrongByte.describe(0).contains("another byte"));
        // EPIPE needs every read end closed, and a child another test forks meanwhile holds a
        // copy of this one until it exits: then the write succeeds. So fresh pipes are tried
        // until a write meets no reader, each read from a pipe whose write end is closed, which
        // answers EOF (a wrong byte) instead of blocking for ever as a live write end would.
        drop((read, write));
        let broken = (0..1000).find_map(|_| {
            let (read, write) = sys::pipe().unwrap();
            drop(read);
            let (at_eof, closed) = sys::pipe().unwrap();
            drop(closed);
            let failure = loopback_once(at_eof.as_fd(), write.as_fd(), 1).unwrap_err();
            (failure.reason != Reason::WrongByte).then_some(failure)
        });
        assert_eq!(
            broken.map(|f| f.reason),
            Some(Reason::PipeWrite),
            "EPIPE: nobody reads"
        );
    }

    #[test]
    fn file_per_task_locks_check_every_tasks_own_section() {
        for (mode, tasks) in [(TaskMode::Threads, 3), (TaskMode::Process, 2)] {
            let cfg = Config {
                file_per_task: true,
                ..config(Testcase::FcntlLock, tasks, mode)
            };
            run_checked(cfg, tasks);
        }
        let cfg = Config {
            file_per_task: true,
            ..config(Testcase::FcntlLock, 2, TaskMode::Threads)
        };
        let block = SharedValue::<Shared>::new().unwrap();
        for (slot, n) in block.slots.iter().zip([3, 5]) {
            slot.own_file.guarded.counter.store(n, Ordering::SeqCst);
        }
        check_own_sections(&cfg, &block.slots[..2], &[3, 5]).unwrap();
        let err = check_own_sections(&cfg, &block.slots[..2], &[3, 6])
            .unwrap_err()
            .to_string();
        assert!(err.starts_with("fcntl-lock task 1's own file: the counter"), "{err}");
        assert!(err.contains("1 updates were lost"), "{err}");
    }

    #[test]
    fn fcntl_locks_exclude_threads_and_processes() {
        for (mode, tasks) in [(TaskMode::Threads, 3), (TaskMode::Process, 2)] {
            let cfg = config(Testcase::FcntlLock, tasks, mode);
            run_checked(cfg, tasks);
        }
    }

    #[test]
    fn pipe_readers_drain_every_writers_records() {
        for (mode, writers, readers) in [(TaskMode::Threads, 3, 2), (TaskMode::Process, 2, 1)] {
            let cfg = Config {
                helpers: readers,
                ..config(Testcase::PipeWriters, writers, mode)
            };
            run_checked(cfg, writers);
        }
    }

    #[test]
    fn pipe_readers_catch_split_and_foreign_records_and_miscounts() {
        let block = Arc::new(SharedValue::<Shared>::new().unwrap());
        let reader = |bytes: &[u8], record: usize| {
            let (read, write) = sys::pipe().unwrap();
            sys::write_full(write.as_fd(), bytes).unwrap();
            drop(write);
            let ctx = TaskCtx {
                block: Arc::clone(&block),
                me: 2,
                scope: FutexScope::Private,
            };
            pipe_reader_task(&ctx, Arc::new(read), vec![0; 64], record, 2)
        };
        let mut good = [0u8; 16];
        good[0] = 1;
        good[8] = 2;
        assert_eq!(reader(&good, 8), task_code::OK);
        assert_eq!(block.slots[2].bytes.load(Ordering::SeqCst), 16);
        assert_eq!(block.slots[2].ids.load(Ordering::SeqCst), 3);
        assert_eq!(reader(&good[..12], 8), task_code::VERIFY_FAILED, "split");
        assert_eq!(block.slots[2].failure.load(Ordering::SeqCst), Reason::SplitRecord as u32);
        good[8] = 3;
        assert_eq!(reader(&good, 8), task_code::VERIFY_FAILED, "writer 3 of 2");
        assert_eq!(block.slots[2].failure.load(Ordering::SeqCst), Reason::UnknownWriter as u32);

        check_pipe(&[2, 1], 3 * 8, 2 + 2, 8).unwrap();
        let err = check_pipe(&[2, 1], 2 * 8, 3, 8).unwrap_err().to_string();
        assert!(err.contains("wrote 24 bytes, the readers read 16"), "{err}");
        let err = check_pipe(&[2, 1], 3 * 8, 5, 8).unwrap_err().to_string();
        assert!(err.contains("do not add up"), "{err}");
    }

    #[test]
    fn futex_wakes_and_waits_balance() {
        for (mode, waiters) in [(TaskMode::Threads, 3), (TaskMode::Process, 2)] {
            let cfg = config(Testcase::FutexWakeStorm, waiters, mode);
            let m = run_checked(cfg, waiters);
            assert!(value(&m, "wake_calls_per_sec") > 0.0);
        }
        check_storm(7, 7, 3, 3).unwrap();
        let err = check_storm(7, 6, 3, 3).unwrap_err().to_string();
        assert!(err.contains("reported 7 tasks woken, the waiters counted 6"), "{err}");
        assert!(check_storm(7, 7, 2, 3).is_err());
        // The waker is one of the --tasks.
        let p = ContentionParams {
            testcase: Testcase::FutexWakeStorm,
            tasks: 4,
            ..Default::default()
        };
        let cfg = Config::of(&p);
        assert_eq!((cfg.workers, cfg.helpers), (3, 1));
        assert_eq!(cfg.task_name(3), "futex waker");
    }

    const USER_LOCKS: [Testcase; 5] = [
        Testcase::Tas,
        Testcase::Ticket,
        Testcase::Mcs,
        Testcase::PthreadMutex,
        Testcase::FutexMutex,
    ];

    #[test]
    fn user_space_locks_exclude_and_report_their_latencies() {
        for testcase in USER_LOCKS {
            // More threads than this machine's 2 CPUs, so holders are preempted.
            let cfg = config(testcase, 4, TaskMode::Threads);
            let workload = ContentionWorkload::new(cfg);
            let started = std::time::Instant::now();
            let output = run(cfg).unwrap_or_else(|e| panic!("{testcase:?}: {e}"));
            let whole_run_ns = started.elapsed().as_nanos() as f64;
            let m = &output.measurements;
            check_metrics(&workload, m, 4);
            // One critical section in 4 is timed and one probed (`sample_every` 4): a quarter
            // of the ops in the window each, give or take one per task. The rate is over the
            // window's true length, which a loaded machine stretches past the nominal one but
            // never past the whole call's, so the ops counted from it over the nominal length
            // are a floor and over the whole call a ceiling; the two counts, taken from the
            // same ops, agree with each other whatever the stretch.
            let ops_at_least = value(m, "ops_per_sec") * cfg.duration_ns as f64 / 1e9;
            let ops_at_most = value(m, "ops_per_sec") * whole_run_ns / 1e9;
            let samples = value(m, "lock_samples_count");
            let probes = value(m, "holder_off_cpu_probes_count");
            for taken in [samples, probes] {
                let floor = ops_at_least / 4.0;
                let ceiling = ops_at_most / 4.0;
                assert!(taken >= floor - 4.0 - 0.3 * floor, "{testcase:?} {m:?}");
                assert!(taken <= ceiling + 4.0 + 0.3 * ceiling, "{testcase:?} {m:?}");
            }
            assert!(
                (samples - probes).abs() <= 4.0 + 0.1 * samples.max(probes),
                "{testcase:?} {m:?}"
            );
            if samples == 0.0 {
                continue;
            }
            for lock in ["acquire", "hold"] {
                let p50 = value(m, &format!("{lock}_p50_nsec"));
                let p99 = value(m, &format!("{lock}_p99_nsec"));
                assert!(p50 <= p99 && p99 <= value(m, &format!("{lock}_max_nsec")), "{m:?}");
            }
            if probes > 0.0 {
                let pct = value(m, "holder_off_cpu_pct");
                assert!((0.0..=100.0).contains(&pct), "{m:?}");
            }
            let names: Vec<&str> = output.attachments.iter().map(|a| a.name.as_str()).collect();
            assert_eq!(names, [ACQUIRE_ATTACHMENT, HOLD_ATTACHMENT]);
            let acquire = latency::decode(&output.attachments[0].data).unwrap();
            assert_eq!(acquire.len() as f64, samples);
        }
    }

    #[test]
    fn sample_every_0_times_and_probes_nothing() {
        let cfg = Config {
            sample_every: 0,
            work: 0,
            ..config(Testcase::PthreadMutex, 3, TaskMode::Threads)
        };
        let m = run_checked(cfg, 3);
        assert_eq!(value(&m, "lock_samples_count"), 0.0);
        assert_eq!(value(&m, "holder_off_cpu_probes_count"), 0.0);
        assert!(m.iter().all(|m| m.name != "acquire_p50_nsec" && m.name != "holder_off_cpu_pct"));
        let p = ContentionParams {
            testcase: Testcase::PthreadMutex,
            sample_every: 0,
            ..Default::default()
        };
        p.validate().unwrap();
    }

    #[test]
    fn every_lock_is_free_again_after_each_section() {
        // One thread taking each lock many times with nobody else: the counter is exact, the
        // section always finds itself alone, and the lock is left free.
        for testcase in USER_LOCKS {
            let block = SharedValue::<Shared>::new().unwrap();
            let (shared, control) = (&*block, &block.control);
            let pthread = PthreadMutex::with_data(Guarded::default());
            let guarded = match testcase {
                Testcase::PthreadMutex => pthread.data(),
                _ => &shared.lock.guarded,
            };
            let mut sink = 0;
            for _ in 0..1_000 {
                let section = || assert!(guarded_section(guarded, 1, 3, &mut sink));
                let word = &shared.lock.word;
                match testcase {
                    Testcase::Tas => Tas { flag: word, control }.critical(0, section),
                    Testcase::Ticket => Ticket {
                        words: &shared.lock,
                        control,
                    }
                    .critical(0, section),
                    Testcase::Mcs => Mcs {
                        tail: word,
                        slots: &shared.slots,
                        control,
                    }
                    .critical(0, section),
                    Testcase::PthreadMutex => Pthread(&pthread).critical(0, section),
                    _ => FutexMutex {
                        word,
                        scope: FutexScope::Private,
                    }
                    .critical(0, section),
                }
                .unwrap();
            }
            assert_eq!(guarded.counter.load(Ordering::SeqCst), 1_000, "{testcase:?}");
            let free = match testcase {
                Testcase::Ticket => {
                    shared.lock.next_ticket.load(Ordering::SeqCst)
                        == shared.lock.serving.load(Ordering::SeqCst)
                }
                _ => shared.lock.word.load(Ordering::SeqCst) == 0,
            };
            assert!(free, "{testcase:?}");
        }
    }

    #[test]
    fn lock_output_quantiles_and_probes() {
        let mut a = LockTiming::new(4);
        let mut b = LockTiming::new(4);
        for v in 1..=100 {
            latency::record(&mut a.acquire, v);
            latency::record(&mut b.hold, 1_000 + v);
        }
        latency::record(&mut b.acquire, 5_000);
        (a.probes, a.off_cpu, b.probes) = (3, 1, 1);
        let (m, attachments) = lock_output(vec![a, b]);
        assert!(crate::metric::check_declared(LOCK_METRICS, &m)
            .iter()
            .all(|b| matches!(b, crate::metric::Breach::Missing(_))));
        assert_eq!(value(&m, "acquire_p50_nsec"), 51.0);
        // Beyond 2,048 ns a value is kept to 3 significant digits.
        assert!((value(&m, "acquire_max_nsec") - 5_000.0).abs() <= 5.0);
        assert_eq!(value(&m, "hold_p50_nsec"), 1_050.0);
        assert_eq!(value(&m, "lock_samples_count"), 101.0);
        assert_eq!(value(&m, "holder_off_cpu_pct"), 25.0);
        assert_eq!(value(&m, "holder_off_cpu_probes_count"), 4.0);
        assert_eq!(attachments.len(), 2);
        // No probe, no percentage; no sample, no quantile.
        let (m, _) = lock_output(vec![LockTiming::new(4)]);
        assert!(m.iter().all(|m| m.name != "holder_off_cpu_pct" && m.name != "acquire_p50_nsec"));
        assert_eq!(value(&m, "lock_samples_count"), 0.0);
    }

    #[test]
    fn a_second_holder_is_caught_inside_and_lost_updates_after() {
        let block = SharedValue::<Shared>::new().unwrap();
        let mut sink = 0;
        assert!(guarded_section(&block.file.guarded, 1, 10, &mut sink));
        assert_eq!(block.file.guarded.counter.load(Ordering::SeqCst), 1);
        // Task 2 is inside (its id is in the holder word) when task 0 enters.
        block.file.guarded.holder.store(3, Ordering::SeqCst);
        assert!(!guarded_section(&block.file.guarded, 1, 10, &mut sink));
        check_guarded(2, 0, 2).unwrap();
        let err = check_guarded(1, 0, 2).unwrap_err().to_string();
        assert!(err.contains("1 updates were lost, so two tasks held the lock"), "{err}");
        let err = check_guarded(2, 3, 2).unwrap_err().to_string();
        assert!(err.contains("task 2 still shows as inside"), "{err}");
    }

    /// A "lock" that lets everyone in, run by the real loop: the holder word catches it.
    struct NoLock;

    impl CriticalLock for NoLock {
        fn critical(&self, _me: usize, section: impl FnOnce()) -> std::result::Result<(), Failure> {
            section();
            Ok(())
        }
    }

    #[test]
    fn a_lock_that_excludes_nobody_fails_loudly() {
        let block = SharedValue::<Shared>::new().unwrap();
        // Another task is inside for good: the first section sees it.
        block.file.guarded.holder.store(2, Ordering::SeqCst);
        let ctx = TaskCtx {
            block: Arc::new(block),
            me: 0,
            scope: FutexScope::Private,
        };
        let mut ops = 0;
        let result = lock_loop::<_, false>(&ctx, &NoLock, &ctx.shared().file.guarded, 10, &mut ops, None);
        assert_eq!(result, Err(Failure::check(Reason::TwoHolders)));
        assert_eq!(ops, 1, "the section ran and counts");
        assert_eq!(finish(&ctx, ops, result), task_code::VERIFY_FAILED);
        let err = ContentionWorkload::new(config(Testcase::FcntlLock, 2, TaskMode::Threads))
            .why_failed(ctx.shared())
            .unwrap()
            .to_string();
        assert!(err.contains("task 0 failed: another task was inside the critical section with it"), "{err}");
    }

    #[test]
    fn a_failed_call_names_the_task_and_the_reason() {
        let block = Arc::new(SharedValue::<Shared>::new().unwrap());
        let cfg = config(Testcase::Getppid, 2, TaskMode::Threads);
        let ctx = TaskCtx {
            block: Arc::clone(&block),
            me: 1,
            scope: FutexScope::Private,
        };
        // A parent the task does not have: the first call fails the check.
        let code = getppid_task(&ctx, Some(sys::raw_getpid() + 7));
        assert_eq!(code, task_code::VERIFY_FAILED);
        assert_eq!(block.control.phase.load(Ordering::SeqCst), STOP, "it stops the rest");
        assert_eq!(block.slots[1].total.load(Ordering::SeqCst), 0);
        let err = ContentionWorkload::new(cfg)
            .why_failed(&block)
            .unwrap()
            .to_string();
        assert_eq!(
            err,
            "contention getppid: getppid task 1 failed: getppid returned another pid than the \
             task's parent"
        );
        let call = Failure::call(Reason::SchedYield, &std::io::Error::from_raw_os_error(22));
        assert_eq!(call.code(), task_code::ERRNO_BASE + 22);
        assert!(Reason::SchedYield.describe(22).starts_with("sched_yield failed: Invalid"));
    }

    #[test]
    fn counters_that_go_backwards_fail() {
        let window = Window {
            ns: 1,
            start: vec![5, 10],
            end: vec![9, 12],
        };
        check_counts(&window, &[9, 13]).unwrap();
        assert_eq!(window.ops(), [4, 2]);
        let err = check_counts(&window, &[9, 11]).unwrap_err().to_string();
        assert!(err.contains("task 1's op counter went backwards"), "{err}");
    }

    #[test]
    fn jain_index_of_known_inputs() {
        assert_eq!(jain_index(&[5, 5, 5, 5]), Some(1.0));
        assert_eq!(jain_index(&[8, 0, 0, 0]), Some(0.25));
        // (1+2+3)² / (3·(1+4+9)) = 36/42.
        assert!((jain_index(&[1, 2, 3]).unwrap() - 36.0 / 42.0).abs() < 1e-12);
        assert_eq!(jain_index(&[7]), Some(1.0));
        assert_eq!(jain_index(&[0, 0]), None);
        assert_eq!(jain_index(&[]), None);
    }

    #[test]
    fn a_window_without_ops_fails() {
        let err = rate_metrics(&[0, 0], 1_000_000_000).unwrap_err().to_string();
        assert!(err.contains("no task completed an op"), "{err}");
        let m = rate_metrics(&[3, 1], 500_000_000).unwrap();
        assert_eq!(value(&m, "ops_per_sec"), 8.0);
        assert_eq!(value(&m, "min_task_ops_per_sec"), 2.0);
        assert_eq!(value(&m, "max_task_ops_per_sec"), 6.0);
        assert_eq!(value(&m, "jain_fairness_index"), 16.0 / 20.0);
    }

    #[test]
    fn bad_parameters_name_their_flag() {
        let bad = |p: ContentionParams, flag: &str| {
            let err = p.validate().unwrap_err();
            assert!(err.is_invalid_input());
            assert!(err.to_string().contains(flag), "{err}");
        };
        let zero_tasks = ContentionParams {
            tasks: 0,
            ..Default::default()
        };
        bad(zero_tasks, "--tasks");
        let too_many = ContentionParams {
            tasks: MAX_TASKS + 1,
            ..Default::default()
        };
        bad(too_many, "--tasks");
        let no_time = ContentionParams {
            duration: 0,
            ..Default::default()
        };
        bad(no_time, "--duration");
        let long_warmup = ContentionParams {
            warmup_sec: MAX_SECONDS + 1,
            ..Default::default()
        };
        bad(long_warmup, "--warmup-sec");
        let no_section = ContentionParams {
            testcase: Testcase::Mmap,
            work: 7,
            ..Default::default()
        };
        bad(
            no_section,
            "--work applies to fcntl-lock and the user-space locks only, not mmap",
        );
        let unsampled = ContentionParams {
            testcase: Testcase::FcntlLock,
            sample_every: 3,
            ..Default::default()
        };
        bad(unsampled, "--sample-every applies to the user-space locks only");
        let every_one = ContentionParams {
            testcase: Testcase::Mcs,
            sample_every: 1,
            ..Default::default()
        };
        bad(every_one, "--sample-every");
        let forked_lock = ContentionParams {
            testcase: Testcase::Ticket,
            processes: true,
            ..Default::default()
        };
        bad(forked_lock, "--processes is not for ticket");
        let no_pipe = ContentionParams {
            readers: 2,
            ..Default::default()
        };
        bad(no_pipe, "--readers applies to pipe-writers only, not getppid");
        let torn = ContentionParams {
            testcase: Testcase::PipeWriters,
            write_bytes: MAX_WRITE_BYTES as u64 + 1,
            ..Default::default()
        };
        bad(torn, "--write-bytes");
        let lonely = ContentionParams {
            testcase: Testcase::FutexWakeStorm,
            tasks: 1,
            ..Default::default()
        };
        bad(lonely, "--tasks must be at least 2 for futex-wake-storm");
        let absurd_work = ContentionParams {
            testcase: Testcase::FcntlLock,
            work: MAX_WORK + 1,
            ..Default::default()
        };
        bad(absurd_work, "--work");
        let not_mapping = ContentionParams {
            map_kib: 64,
            ..Default::default()
        };
        bad(not_mapping, "--map-kib applies to mmap and page-fault only, not getppid");
        let too_much = ContentionParams {
            testcase: Testcase::PageFault,
            tasks: MAX_TASKS,
            map_kib: MAX_MAP_KIB,
            ..Default::default()
        };
        bad(too_much, "--map-kib");
        // mmap never touches more than a page, so its mappings need only address space.
        ContentionParams {
            testcase: Testcase::Mmap,
            tasks: 64,
            map_kib: MAX_MAP_KIB,
            ..Default::default()
        }
        .validate()
        .unwrap();
        let mapped_elsewhere = ContentionParams {
            testcase: Testcase::PageFault,
            map_only: true,
            ..Default::default()
        };
        bad(mapped_elsewhere, "--map-only applies to mmap only, not page-fault");
        let shared_pipe_file = ContentionParams {
            testcase: Testcase::PipeLoopback,
            file_per_task: true,
            ..Default::default()
        };
        bad(shared_pipe_file, "--file-per-task applies to fcntl-lock only, not pipe-loopback");
        let loopback_records = ContentionParams {
            testcase: Testcase::PipeLoopback,
            write_bytes: 8,
            ..Default::default()
        };
        bad(loopback_records, "--write-bytes applies to pipe-writers only");
        assert!(serde_json::from_value::<Testcase>("fork".into()).is_err());
        ContentionParams::default().validate().unwrap();
    }

    #[test]
    fn names_scaling_and_suite_text() {
        let p = ContentionParams {
            testcase: Testcase::SchedYield,
            tasks: 8,
            processes: true,
            ..Default::default()
        };
        assert_eq!(
            p.case_name(),
            "contention:sched-yield process tasks=8 duration=5 warmup=1"
        );
        assert_eq!(p.scaled(0.5).unwrap().duration, 3);
        let mapping = ContentionParams {
            testcase: Testcase::PageFault,
            map_kib: 4096,
            ..Default::default()
        };
        assert_eq!(
            mapping.case_name(),
            "contention:page-fault threads tasks=2 duration=5 warmup=1 map-kib=4096"
        );
        let exact = ContentionParams {
            testcase: Testcase::Mmap,
            map_only: true,
            ..Default::default()
        };
        assert!(exact.case_name().ends_with(" map-kib=131072 map-only"), "{}", exact.case_name());
        let lock1 = ContentionParams {
            testcase: Testcase::FcntlLock,
            file_per_task: true,
            work: 0,
            ..Default::default()
        };
        assert!(lock1.case_name().ends_with(" file-per-task work=0"), "{}", lock1.case_name());
        assert_eq!(p.scaled(0.01).unwrap().duration, 1);
        assert_eq!(p.estimate_sec(), 6.0);
        let label = p.comparison_label(&p.case_name());
        assert_eq!((label.short.as_str(), label.load.as_str()), ("sched-yield-process", "8-tasks"));
        let text = toml::to_string(&p).unwrap();
        let back: ContentionParams = toml::from_str(&text).unwrap();
        assert_eq!(back, p);
        for testcase in Testcase::ALL {
            let read: Testcase = serde_json::from_value(testcase.as_str().into()).unwrap();
            assert_eq!(read, testcase);
        }
    }
}
