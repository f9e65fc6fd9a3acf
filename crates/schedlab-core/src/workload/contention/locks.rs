//! The lock testcases: `fcntl-lock` (the kernel's open-file-description locks) and the user-space
//! locks (`tas`, `ticket`, `mcs`, `pthread-mutex`, `futex-mutex`) around a checked critical
//! section; the sampled timing of the user-space locks, and the checks after every task ended.
use std::hint::spin_loop;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};

use hdrhistogram::Histogram;

use super::metrics::{
    ACQUIRE_ATTACHMENT, ACQUIRE_QUANTILES, HOLDER_OFF_CPU_PCT, HOLDER_OFF_CPU_PROBES_COUNT,
    HOLD_ATTACHMENT, HOLD_QUANTILES, LOCK_SAMPLES_COUNT, QUANTILE_PER_MILLE,
};
use super::config::{Config, Testcase};
use super::task::{finish, Control, Failure, Guarded, LockWords, Reason, Slot, TaskCtx, MEASURE, STOP};
use crate::attachment::Attachment;
use crate::latency;
use crate::metric::Measurement;
use crate::sys::{self, FutexScope, OwnedFd, PthreadMutex, RecordLock, TaskCode};
use crate::workload::tasks::{TaskLaunch, TaskMode};
use crate::workload::work_units::burn;
use crate::{Error, Result};

/// A probed holder whose wall time inside exceeds its CPU time by more than this was off CPU.
pub(super) const OFF_CPU_NS: u64 = 20_000;

/// `tas`: the most spins between two attempts (exponential backoff from 1).
pub(super) const MAX_BACKOFF_SPINS: u32 = 1_024;

/// `futex-mutex`: attempts before sleeping (glibc's adaptive mutex and Rust's std spin 100).
pub(super) const FUTEX_SPIN_TRIES: u32 = 100;

/// A lock around a critical section.
pub(super) trait CriticalLock {
    /// Takes the lock for task `me`, runs `section`, releases the lock. An error means the lock
    /// is not held.
    fn critical(&self, me: usize, section: impl FnOnce()) -> std::result::Result<(), Failure>;
}

/// An open-file-description write lock on the first byte of the shared file, through this task's
/// own description.
pub(super) struct FileLock(pub(super) OwnedFd);

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
pub(super) fn relax(control: &Control) {
    spin_loop();
    if control.phase.load(Ordering::Relaxed) == STOP {
        let _ = sys::raw_sched_yield();
    }
}

/// Test-and-test-and-set: spin reading until the flag looks free, then swap; after a failed try,
/// wait 1, 2, 4 … up to [`MAX_BACKOFF_SPINS`] spins.
pub(super) struct Tas<'a> {
    pub(super) flag: &'a AtomicU32,
    pub(super) control: &'a Control,
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
pub(super) struct Ticket<'a> {
    pub(super) words: &'a LockWords,
    pub(super) control: &'a Control,
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
pub(super) struct Mcs<'a> {
    pub(super) tail: &'a AtomicU32,
    pub(super) slots: &'a [Slot],
    pub(super) control: &'a Control,
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
pub(super) struct Pthread<'a>(pub(super) &'a PthreadMutex<Guarded>);

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
pub(super) struct FutexMutex<'a> {
    pub(super) word: &'a AtomicU32,
    pub(super) scope: FutexScope,
}

impl FutexMutex<'_> {
    pub(super) fn lock_contended(&self) -> std::result::Result<(), Failure> {
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
pub(super) struct LockTiming {
    pub(super) every: u64,
    pub(super) acquire: Histogram<u64>,
    pub(super) hold: Histogram<u64>,
    pub(super) probes: u64,
    pub(super) off_cpu: u64,
}

impl LockTiming {
    pub(super) fn new(every: u64) -> Self {
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
pub(super) fn histogram_bytes() -> u64 {
    (latency::new_latency_histogram().distinct_values() * 8) as u64
}

/// Where user-space lock tasks leave their samples when they end (threads only).
pub(super) type Timings = Arc<Mutex<Vec<Option<LockTiming>>>>;

/// The clock readings of one critical section: taken only for timed and probed ones.
#[derive(Default)]
pub(super) struct Stamps {
    pub(super) acquired: u64,
    pub(super) released: u64,
    pub(super) wall_ns: u64,
    pub(super) cpu_ns: u64,
}

/// The critical section: `holder` read (nobody) and written in, the shared counter incremented
/// by a plain load and store around `work` units, `holder` read back (itself) and cleared.
/// Returns whether the task was alone inside; it never leaves early, so the lock is always
/// released. With no work (`--work 0`, will-it-scale's empty critical section) only the counter
/// is incremented: the holder word's two stores and two loads inside the section cost a pthread
/// mutex op 12 % more CPU (pthread-mutex at 1 and 4 tasks took 1.13 of will-it-scale's
/// pthread_mutex1 CPU per op with them, 1.00 without), and a lock that lets two in still loses
/// counter updates, which the check after the run finds.
///
/// Plain loads and stores, not swaps: a locked exchange costs about as much as an uncontended
/// pthread mutex's lock or unlock (will-it-scale's pthread_mutex1 takes 13-15 ns an op here), so
/// two would nearly double the shortest op; and with a lock that excludes, its acquire and
/// release order these accesses exactly. Under one that lets two in, the second holder reads
/// the first's id, or the first reads the second's back before leaving, or they lose a counter
/// update, which the check after the run finds.
#[inline]
pub(super) fn guarded_section(guarded: &Guarded, holder: u32, work: u64, sink: &mut u64) -> bool {
    if work == 0 {
        let count = guarded.counter.load(Ordering::Relaxed);
        guarded.counter.store(count + 1, Ordering::Relaxed);
        return true;
    }
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
pub(super) fn lock_loop<L: CriticalLock, const SAMPLED: bool>(
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
pub(super) fn sampled_lock_loop<L: CriticalLock>(
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

pub(super) fn fcntl_lock_task(ctx: &TaskCtx, file: FileLock, work: u64, own_file: bool) -> TaskCode {
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
pub(super) fn user_lock_task(
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
pub(super) fn lock_output(timings: Vec<LockTiming>) -> (Vec<Measurement>, Vec<Attachment>) {
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
pub(super) fn check_guarded(counter: u64, holder: u32, acquisitions: u64) -> Result<()> {
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
pub(super) fn check_own_sections(cfg: &Config, slots: &[Slot], totals: &[u64]) -> Result<()> {
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

/// Starts the `fcntl-lock` tasks, each with an open file description of its own: of the one file
/// they share, or with `--file-per-task` of a file of its own.
pub(super) fn spawn_fcntl_lock(cfg: &Config, launch: &mut TaskLaunch, ctx: &dyn Fn(usize) -> TaskCtx) -> Result<()> {
    sys::raise_open_files_limit();
    let cannot = |e: std::io::Error| Error::failed(format!("cannot open the file to lock: {e}"));
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
        launch.spawn(cfg.task_name(me), move || {
            fcntl_lock_task(&ctx, FileLock(file), work, own_file)
        })?;
    }
    Ok(())
}

/// Starts the user-space lock tasks (threads only), each with its timing histograms.
pub(super) fn spawn_user_locks(
    cfg: &Config,
    launch: &mut TaskLaunch,
    ctx: &dyn Fn(usize) -> TaskCtx,
    timings: &Timings,
    pthread: &Arc<PthreadMutex<Guarded>>,
) -> Result<()> {
    if cfg.mode != TaskMode::Threads {
        return Err(Error::invalid(
            "the user-space locks run as threads of one process only",
        ));
    }
    for me in 0..cfg.workers {
        let (ctx, pthread, timings) = (ctx(me), Arc::clone(pthread), Arc::clone(timings));
        // The histograms are allocated here, before the start.
        let timing = LockTiming::new(cfg.sample_every);
        let (testcase, work) = (cfg.testcase, cfg.work);
        launch.spawn(cfg.task_name(me), move || {
            user_lock_task(&ctx, testcase, &pthread, work, timing, &timings)
        })?;
    }
    Ok(())
}
