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
use serde::{Deserialize, Serialize};

use super::definition::{case_words, field, ComparisonLabel, Param, ParamKind, WorkloadParams};
use super::definition::Workload;
use super::tasks::{TaskBudget, TaskMode};
use crate::sys;
use crate::{Error, Result};

mod calls;
mod config;
mod locks;
pub mod metrics;
mod pipes;
mod run;
mod storm;
mod task;
#[cfg(test)]
mod tests;

use config::Config;
pub use config::Testcase;
use locks::histogram_bytes;
use pipes::MAX_WRITE_BYTES;
pub use run::ContentionWorkload;
pub use task::MAX_TASKS;


const MAX_SECONDS: u64 = 86_400;
/// will-it-scale's MEMSIZE: what mmap1 and page_fault1 map each time.
const DEFAULT_MAP_KIB: u64 = 128 * 1024;
const MAX_MAP_KIB: u64 = 64 * 1024 * 1024;
/// Units of work inside a critical section: the default, and the most (a few ms).
const DEFAULT_WORK: u64 = 100;
const MAX_WORK: u64 = 1_000_000;
/// Bytes per pipe write by default (at most [`MAX_WRITE_BYTES`]).
const DEFAULT_WRITE_BYTES: u64 = 64;
/// User-space locks: one critical section in this many of a task's is timed, another probed.
const DEFAULT_SAMPLE_EVERY: u64 = 16;
const MAX_SAMPLE_EVERY: u64 = 1_000_000;

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
            .details("`mmap` and `page-fault`: KiB of private anonymous memory each task maps each time (4 to 64 GiB; will-it-scale's 128 MiB). `page-fault` holds it all at once in every task, which must fit in the memory available.")
            .applies_to("mmap and page-fault", |p: &Self| p.testcase.maps())
            .in_case_name("map-kib"),
        Param::new(field!(map_only), "map-only", ParamKind::Switch)
            .help("mmap: map and unmap only, touching no page (will-it-scale mmap1).")
            .details("`mmap`: map and unmap only, as will-it-scale's mmap1: no page is touched, so no op takes a page fault or frees a page. What can be checked without touching the memory is: mmap succeeds with a page-aligned address, and munmap succeeds.")
            .applies_to("mmap", |p: &Self| p.testcase == Testcase::Mmap)
            .in_case_name("map-only"),
        Param::new(field!(file_per_task), "file-per-task", ParamKind::Switch)
            .help("fcntl-lock: every task locks a file of its own (will-it-scale lock1: no waiting).")
            .details("`fcntl-lock`: every task locks the first byte of a file of its own instead of one file all tasks share, as will-it-scale's lock1: no task waits for another, and each task's critical sections are checked against a holder word and a counter of its own.")
            .applies_to("fcntl-lock", |p: &Self| p.testcase == Testcase::FcntlLock)
            .in_case_name("file-per-task"),
        Param::new(field!(work), "work", ParamKind::Count { min: 0, max: MAX_WORK })
            .value("W")
            .help("Lock testcases: units of work inside each critical section.")
            .details("`fcntl-lock` and the user-space locks: units of work inside each critical section, a load, an add and a store each through `black_box` (a few cycles; 0 to 10^6).")
            .applies_to("fcntl-lock and the user-space locks", |p: &Self| p.testcase.has_critical_section())
            .in_case_name("work"),
        Param::new(field!(sample_every), "sample-every", ParamKind::Count { min: 0, max: MAX_SAMPLE_EVERY })
            .value("K")
            .help("User-space locks: time one critical section in K of each task's, probe another; 0: none.")
            .details("User-space locks: of every K critical sections of a task in the measured window, one is timed (acquisition latency, hold time) and another probed for its holder going off CPU (2 to 10^6). The clock reads cost about 20 ns each inside the timed one and the probe's two CPU-clock system calls lengthen the probed one, so a small K disturbs what it measures. 0 times and probes none, and the loop carries no sampling code at all: only the rates are reported (will-it-scale's pthread_mutex1 is `pthread-mutex --work 0 --sample-every 0`).")
            .applies_to("the user-space locks", |p: &Self| p.testcase.is_user_lock())
            .in_case_name("sample-every"),
        Param::new(field!(readers), "readers", ParamKind::Count { min: 1, max: MAX_TASKS })
            .value("R")
            .help("pipe-writers: tasks draining the pipe, besides the --tasks writers.")
            .details("`pipe-writers`: tasks draining the pipe, besides the `--tasks` writers (1 to 4,096); they are not counted in the per-task metrics.")
            .task_count()
            .applies_to("pipe-writers", |p: &Self| p.testcase == Testcase::PipeWriters)
            .in_case_name("readers"),
        Param::new(field!(write_bytes), "write-bytes", ParamKind::Count { min: 8, max: MAX_WRITE_BYTES as u64 })
            .value("BYTES")
            .size()
            .help("pipe-writers: bytes per write (at most PIPE_BUF, so no write is split).")
            .details("`pipe-writers`: bytes per write, one record (8 to 4,096: at most PIPE_BUF, so the kernel never splits or interleaves a write).")
            .applies_to("pipe-writers", |p: &Self| p.testcase == Testcase::PipeWriters)
            .in_case_name("write-bytes"),
    ];

    fn check_rules(&self) -> Result<()> {
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

    /// The testcase, how its tasks run, their number and the window; then each knob the
    /// testcase takes, as its declaration words it (`map-kib=131072 map-only`).
    fn case_name(&self) -> String {
        let mut name = format!(
            "contention:{} {} tasks={} duration={} warmup={}",
            self.testcase.as_str(),
            self.mode().as_str(),
            self.tasks,
            self.duration,
            self.warmup_sec
        );
        for word in case_words(self) {
            name.push(' ');
            name.push_str(&word);
        }
        name
    }

    fn mode_name(&self) -> Option<String> {
        Some(self.testcase.as_str().to_string())
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

    fn metric_lists(&self) -> &'static [&'static [crate::metric::MetricDef]] {
        &[metrics::BASE_METRICS, metrics::STORM_METRICS, metrics::LOCK_METRICS]
    }

    fn build(&self) -> Result<Box<dyn Workload>> {
        Ok(Box::new(ContentionWorkload::new(self.config())))
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

    /// What an iteration runs, in the units the tasks use.
    fn config(&self) -> Config {
        // The storm's waker is one of its tasks, and serves the rest.
        let waker = u64::from(self.testcase == Testcase::FutexWakeStorm);
        Config {
            testcase: self.testcase,
            workers: (self.tasks - waker.min(self.tasks)) as usize,
            helpers: (self.readers_besides() + waker) as usize,
            mode: self.mode(),
            warmup_ns: self.warmup_sec * 1_000_000_000,
            duration_ns: self.duration * 1_000_000_000,
            map_bytes: (self.map_kib * 1024) as usize,
            work: self.work,
            write_bytes: self.write_bytes as usize,
            sample_every: self.sample_every,
            map_only: self.map_only,
            file_per_task: self.file_per_task,
        }
    }


    /// Tasks started besides `tasks`: pipe readers.
    fn readers_besides(&self) -> u64 {
        match self.testcase {
            Testcase::PipeWriters => self.readers,
            _ => 0,
        }
    }
}
