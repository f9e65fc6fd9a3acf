//! One iteration of `contention`: the tasks of the testcase started from the shared block, the
//! warm-up and the measured window timed by the main thread, the stop, and every check after the
//! tasks ended, before the metrics.
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use super::calls::{spawn_getppid, spawn_mmap, spawn_page_fault, spawn_sched_yield};
use super::locks::{
    check_guarded, check_own_sections, lock_output, spawn_fcntl_lock, spawn_user_locks,
    LockTiming, Timings,
};
use super::metrics::{rate_metrics, BASE_METRICS, LOCK_METRICS, STORM_METRICS, WAKE_CALLS_PER_SEC};
use super::pipes::{check_pipe, spawn_pipe_loopback, spawn_pipe_writers};
use super::storm::{check_storm, spawn_storm};
use super::task::{Guarded, Reason, Shared, Slot, TaskCtx, MEASURE, STOP};
use super::config::{Config, Testcase};
use crate::metric::MetricDef;
use crate::sys::{self, PthreadMutex, SharedValue};
use crate::workload::definition::{IterationInfo, IterationOutput, Workload};
use crate::workload::tasks::TaskLaunch;
use crate::{Error, Result};

/// Every task's counter read at the start and the end of the measured window.
pub(super) struct Window {
    pub(super) ns: u64,
    pub(super) start: Vec<u64>,
    pub(super) end: Vec<u64>,
}

impl Window {
    /// Ops of each task inside the window.
    pub(super) fn ops(&self) -> Vec<u64> {
        self.start
            .iter()
            .zip(&self.end)
            .map(|(a, b)| b.saturating_sub(*a))
            .collect()
    }
}

/// Sleeps until `until` (CLOCK_MONOTONIC ns), waking for signals: a stop signal or the deadline
/// ends the sleep with its error.
pub(super) fn sleep_until(until: u64) -> Result<()> {
    loop {
        crate::error::check_stop()?;
        let now = sys::monotonic_ns();
        if now >= until {
            return Ok(());
        }
        sys::sleep_interruptible_ns(until - now);
    }
}

pub(super) fn read_counters(shared: &Shared, into: &mut [u64]) {
    for (value, slot) in into.iter_mut().zip(&shared.slots) {
        *value = slot.ops.load(Ordering::Relaxed);
    }
}

/// Each task's counter must only have grown: window start ≤ window end ≤ its final total.
pub(super) fn check_counts(window: &Window, totals: &[u64]) -> Result<()> {
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

pub struct ContentionWorkload {
    config: Config,
}

impl ContentionWorkload {
    pub(super) fn new(config: Config) -> Self {
        ContentionWorkload { config }
    }

    /// Starts the testcase's tasks, held at the start line until [`Self::measure`] releases them.
    pub(super) fn spawn_tasks(
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
        match cfg.testcase {
            Testcase::Getppid => spawn_getppid(&cfg, launch, &ctx),
            Testcase::SchedYield => spawn_sched_yield(&cfg, launch, &ctx),
            Testcase::Mmap => spawn_mmap(&cfg, launch, &ctx),
            Testcase::PageFault => spawn_page_fault(&cfg, launch, &ctx),
            Testcase::FcntlLock => spawn_fcntl_lock(&cfg, launch, &ctx),
            Testcase::PipeWriters => spawn_pipe_writers(&cfg, launch, &ctx),
            Testcase::PipeLoopback => spawn_pipe_loopback(&cfg, launch, &ctx),
            Testcase::FutexWakeStorm => spawn_storm(&cfg, launch, &ctx),
            Testcase::Tas
            | Testcase::Ticket
            | Testcase::Mcs
            | Testcase::PthreadMutex
            | Testcase::FutexMutex => spawn_user_locks(&cfg, launch, &ctx, timings, pthread),
        }
    }

    /// Starts the tasks, lets them warm up, reads their counters around the measured window,
    /// stops them and waits for every one.
    pub(super) fn measure(&self, launch: &mut TaskLaunch, shared: &Shared) -> Result<Window> {
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
    pub(super) fn why_failed(&self, shared: &Shared) -> Option<Error> {
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

impl ContentionWorkload {
    /// After every task ended: no critical section let two tasks in, and the pipe's readers
    /// read every record the writers wrote.
    fn check_work(
        &self,
        shared: &Shared,
        slots: &[Slot],
        totals: &[u64],
        pthread: &PthreadMutex<Guarded>,
    ) -> Result<()> {
        let cfg = self.config;
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
        Ok(())
    }

    /// The samples every lock task left when it ended.
    fn lock_samples(&self, timings: &Timings) -> Result<Vec<LockTiming>> {
        let workers = self.config.workers;
        let taken = std::mem::take(&mut *timings.lock().map_err(|_| {
            Error::failed("a lock task panicked while leaving its samples".to_string())
        })?);
        let all: Vec<LockTiming> = taken.into_iter().flatten().collect();
        if all.len() != workers {
            return Err(Error::failed(format!(
                "only {} of {} lock tasks left their samples",
                all.len(),
                workers
            )));
        }
        Ok(all)
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
        self.check_work(shared, slots, &totals, &pthread)?;
        let worker_totals = &totals[..cfg.workers];
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
            let (mut measured, attached) = lock_output(self.lock_samples(&timings)?);
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
