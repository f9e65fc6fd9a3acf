//! What one task of a scenario does, in its own forked process: set its CPUs, measure what a work
//! unit costs there (its calibration: the first task of each group measures, the others take its
//! answer), join its cgroup, set its policy (which dies with the
//! process), report ready, wait for the common start, then loop
//! its steps until its loops are done or the window ends, counting every step it completes; then
//! wait for every other task to finish measuring, and write its report (counts in its shared slot,
//! latency histograms into its result file). Nothing is allocated, logged or drawn between the
//! start and the end of its loops: the histograms are made and touched before, recording into
//! them never allocates, and every buffer is on the stack.
//!
//! A step that blocks (sleep, timer, wait, barrier, a full or empty pipe) never waits past the
//! window's end: it returns [`Flow::Ended`] and the task stops there, releasing any mutex it holds.
use std::path::PathBuf;
use std::sync::atomic::Ordering;
use std::sync::Arc;

use hdrhistogram::Histogram;

use super::shared::{stage, Common, TaskSlot, NO_END, STOP_BIT};
use super::spec::{Syscall, MAX_MUTEXES, MAX_PHASES};
use crate::latency;
use crate::sys::{self, task_code, AsFd, FutexScope, OwnedFd, SchedRequest, SharedValue, TaskCode};

/// One step of a task's loop, compiled from a phase: names as indices. A run's duration becomes
/// work units in the task, by its own calibration.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step {
    Run { requested_ns: u64 },
    Spin { ns: u64 },
    Sleep { ns: u64 },
    Timer { period_ns: u64, timer: usize, relative: bool },
    Lock { mutex: usize },
    Unlock { mutex: usize },
    /// Wakes tasks `first .. first + count` (a group).
    Wake { first: usize, count: usize },
    Wait,
    Barrier { barrier: usize, parties: u32 },
    Yield,
    Syscall(Syscall),
    /// Sends one message to each of tasks `first .. first + count`.
    Send { first: usize, count: usize },
    Recv,
}

/// Everything one task needs, made before the fork.
#[derive(Debug, Clone)]
pub struct TaskPlan {
    /// Its index among all the scenario's tasks.
    pub index: usize,
    /// The task that calibrates the work unit for its group (the group's first; the others,
    /// alike and on the same CPUs, take its calibration).
    pub calibrator: usize,
    pub cgroup: Option<PathBuf>,
    pub cpus: Option<Vec<u32>>,
    pub sched: Option<SchedRequest>,
    pub loops: Option<u64>,
    pub steps: Arc<[Step]>,
}

/// The pipe a task receives messages on.
#[derive(Debug)]
pub struct Inbox {
    pub read: OwnedFd,
    pub write: OwnedFd,
}

/// What all tasks of one run share, made before the fork.
pub struct Shared {
    pub common: SharedValue<Common>,
    pub slots: Vec<SharedValue<TaskSlot>>,
    pub inboxes: Vec<Option<Inbox>>,
    /// Where each task writes its histograms at its end.
    pub results: Vec<OwnedFd>,
    /// Readable once the run is told to stop: what a task blocked on a pipe also watches.
    pub stop_read: OwnedFd,
    pub stop_write: OwnedFd,
}

/// A message on a pipe: when it was sent, and a tag naming the sender and its count.
const MESSAGE_BYTES: usize = 16;

/// How a step ended.
enum Flow {
    Next,
    /// The window ended (or the run was told to stop) while the step waited.
    Ended,
}

/// A failed step: the system call's error, or a check that failed (no errno).
struct Failed {
    code: TaskCode,
    error: Option<std::io::Error>,
}

impl From<std::io::Error> for Failed {
    fn from(error: std::io::Error) -> Self {
        Failed {
            code: task_code::from_io_error(&error),
            error: Some(error),
        }
    }
}

fn verify_failed() -> Failed {
    Failed {
        code: task_code::VERIFY_FAILED,
        error: None,
    }
}

/// The task's counts, kept in its own memory while it runs and stored once at the end.
struct Tally {
    loops: u64,
    done: [u64; MAX_PHASES],
    run_units: u64,
    run_requested_ns: u64,
    run_cpu_ns: u64,
    run_wall_ns: u64,
    periods: u64,
    missed: u64,
    taken: u64,
    received: u64,
    received_tags: u64,
    sink: u64,
    sent: u64,
}

struct Task<'a> {
    /// Work units of each run step: from the task's calibration at first, then corrected by what
    /// the step's runs cost ([`corrected_units`]).
    units: [u64; MAX_PHASES],
    /// The calibration's units of each run step, which the corrections stay near.
    calibrated_units: [u64; MAX_PHASES],
    shared: &'a Shared,
    plan: &'a TaskPlan,
    common: &'a Common,
    me: &'a TaskSlot,
    /// The next deadline of each timer of the loop.
    next_deadline: [u64; MAX_PHASES],
    /// The mutexes held now, by index.
    held: u32,
    tally: Tally,
    wakeup: Histogram<u64>,
    lateness: Histogram<u64>,
}

/// The body of task `plan.index`, run in its forked process.
pub fn run_task(shared: &Shared, plan: &TaskPlan) -> TaskCode {
    let common: &Common = &shared.common;
    let me: &TaskSlot = &shared.slots[plan.index];
    let code = match set_up(shared, plan, me) {
        Ok(()) => run(shared, plan, common, me),
        Err(code) => code,
    };
    if code != task_code::OK {
        let _ = common.failed.compare_exchange(
            0,
            plan.index as u32 + 1,
            Ordering::SeqCst,
            Ordering::SeqCst,
        );
        // The parent waits for the others to be ready; wake it to notice.
        let _ = sys::futex_wake_in(&common.ready, 1, FutexScope::Shared);
    }
    code
}

/// Work units of the probe that sizes the calibration's trials; the long trials then take about
/// [`LONG_TRIAL_NS`] of CPU time here and the short ones a tenth of that.
const PROBE_UNITS: u64 = 20_000;
const LONG_TRIAL_NS: f64 = 1_000_000.0;
const TRIALS: usize = 7;
/// The pause before each trial: a run phase usually follows a wake-up, not another run.
const PAUSE_NS: u64 = 200_000;

/// What running `units` work units costs where the task runs: a fixed part per run (the clock
/// reads around it, the caches it finds cold after a pause) and a part per unit.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Calibration {
    pub fixed_ns: f64,
    pub ns_per_unit: f64,
}

impl Calibration {
    /// The units whose run costs `requested_ns` of CPU time (at least 1).
    pub fn units_for(&self, requested_ns: u64) -> u64 {
        let units = (requested_ns as f64 - self.fixed_ns) / self.ns_per_unit;
        (units.round() as u64).max(1)
    }
}

/// Measures the cost of the work unit ([`sys::dependent_work`], which every run step executes) on
/// the CPU the calling task runs on, as the first task of every group does on the group's CPUs
/// before it starts (the CPUs of a virtual machine or a big.LITTLE system differ), before it joins
/// its cgroup or takes its policy, which could only slow the trials down. Each trial is timed as a run step is, by
/// the thread's CPU clock around the work (so a preemption inside it is not counted), after a
/// pause as a run step usually follows one: [`TRIALS`] short and long trials alternate, and the
/// line through their medians gives the cost per unit (its slope) and per run (where it starts).
pub fn calibrate() -> Calibration {
    let time = |units: u64, sink: &mut u64| {
        let before = sys::thread_cpu_ns();
        *sink = sys::dependent_work(units, *sink);
        sys::thread_cpu_ns().saturating_sub(before) as f64
    };
    let mut sink = 0;
    let probe = (time(PROBE_UNITS, &mut sink) / PROBE_UNITS as f64).max(0.01);
    let long = ((LONG_TRIAL_NS / probe) as u64).clamp(100_000, 1_000_000_000);
    let short = long / 10;
    let mut long_ns = [0f64; TRIALS];
    let mut short_ns = [0f64; TRIALS];
    for (long_ns, short_ns) in long_ns.iter_mut().zip(&mut short_ns) {
        sys::sleep_ns(PAUSE_NS);
        *short_ns = time(short, &mut sink);
        sys::sleep_ns(PAUSE_NS);
        *long_ns = time(long, &mut sink);
    }
    std::hint::black_box(sink);
    let median = |mut values: [f64; TRIALS]| {
        values.sort_by(f64::total_cmp);
        values[TRIALS / 2]
    };
    let (long_ns, short_ns) = (median(long_ns), median(short_ns));
    let ns_per_unit = ((long_ns - short_ns) / (long - short) as f64).max(0.001);
    let fixed_ns = (short_ns - ns_per_unit * short as f64).clamp(0.0, short_ns);
    Calibration {
        fixed_ns,
        ns_per_unit,
    }
}

/// The units of a run step's next run, after one of `units` cost `cost_ns` of CPU time for the
/// `requested_ns` it asked for: a quarter of the way to what would have cost exactly that, within
/// half and twice the calibration's `calibrated` units. The calibration is made after short pauses;
/// a step that follows a long sleep finds its caches colder and costs more (1–2.4 % on a CI
/// virtual machine after 9 ms timers), so each step's own runs correct it. A quarter damps a run
/// that an interrupt lengthened; the bounds keep a step that lost its CPU time to something else
/// (an emulator, a stolen tick) from drifting away from the work it asks for.
fn corrected_units(units: u64, calibrated: u64, requested_ns: u64, cost_ns: u64) -> u64 {
    if cost_ns == 0 {
        return units;
    }
    let exact = units as f64 * requested_ns as f64 / cost_ns as f64;
    let next = units as f64 + (exact - units as f64) / 4.0;
    let low = (calibrated / 2).max(1) as f64;
    let high = calibrated.saturating_mul(2).max(1) as f64;
    next.clamp(low, high).round() as u64
}

fn set_up(shared: &Shared, plan: &TaskPlan, me: &TaskSlot) -> Result<(), TaskCode> {
    let fail = |stage: u32, e: std::io::Error| {
        me.fail(stage, &e);
        task_code::from_io_error(&e)
    };
    if let Some(cpus) = &plan.cpus {
        me.stage.store(stage::SETTING_AFFINITY, Ordering::SeqCst);
        sys::set_current_thread_cpus(cpus).map_err(|e| fail(stage::SETTING_AFFINITY, e))?;
    }
    me.stage.store(stage::CALIBRATING, Ordering::SeqCst);
    let calibrator: &TaskSlot = &shared.slots[plan.calibrator];
    if plan.index == plan.calibrator {
        let calibration = calibrate();
        me.unit_ps
            .store((calibration.ns_per_unit * 1_000.0).round() as u64, Ordering::SeqCst);
        me.fixed_ns
            .store(calibration.fixed_ns.round() as u64, Ordering::SeqCst);
        me.calibrated.store(1, Ordering::SeqCst);
        let _ = sys::futex_wake_in(&me.calibrated, u32::MAX >> 1, FutexScope::Shared);
    } else {
        while calibrator.calibrated.load(Ordering::SeqCst) == 0 {
            sys::futex_wait_until_in(&calibrator.calibrated, 0, FutexScope::Shared, None)
                .map_err(|e| fail(stage::CALIBRATING, e))?;
        }
        let unit_ps = calibrator.unit_ps.load(Ordering::SeqCst);
        me.unit_ps.store(unit_ps, Ordering::SeqCst);
        let fixed_ns = calibrator.fixed_ns.load(Ordering::SeqCst);
        me.fixed_ns.store(fixed_ns, Ordering::SeqCst);
    }
    if let Some(dir) = &plan.cgroup {
        me.stage.store(stage::JOINING_CGROUP, Ordering::SeqCst);
        sys::join_cgroup(dir).map_err(|e| fail(stage::JOINING_CGROUP, e))?;
    }
    if let Some(request) = &plan.sched {
        me.stage.store(stage::SETTING_POLICY, Ordering::SeqCst);
        sys::set_current_sched(request).map_err(|e| fail(stage::SETTING_POLICY, e))?;
    }
    Ok(())
}

/// The task after its set-up: ready, the window (its loops, timed from the common start), and its
/// report.
fn run(shared: &Shared, plan: &TaskPlan, common: &Common, me: &TaskSlot) -> TaskCode {
    let mut task = Task::new(shared, plan, common, me);
    if let Err(code) = wait_for_go(common, me) {
        return code;
    }
    me.stage.store(stage::RUNNING, Ordering::SeqCst);
    // The timed window: only the clock reads and the loops lie inside it; all the rest of the
    // task's work is before it (Task::new, wait_for_go) or after it (store, report).
    let start = common.start_ns.load(Ordering::SeqCst);
    sleep_until(start);
    let began = sys::monotonic_ns();
    let cpu_began = sys::thread_cpu_ns();
    let result = task.loops(start);
    let cpu_ns = sys::thread_cpu_ns().saturating_sub(cpu_began);
    let span_ns = sys::monotonic_ns().saturating_sub(began);
    task.release_held();
    if let Err((phase, failed)) = result {
        let stage = stage::PHASE + phase as u32;
        match &failed.error {
            Some(e) => me.fail(stage, e),
            None => me.stage.store(stage, Ordering::SeqCst),
        }
        return failed.code;
    }
    task.store(cpu_ns, span_ns);
    task.report()
}

/// Reports the task ready and waits for the parent's go (the common start is set by then).
fn wait_for_go(common: &Common, me: &TaskSlot) -> Result<(), TaskCode> {
    me.stage.store(stage::READY, Ordering::SeqCst);
    common.ready.fetch_add(1, Ordering::SeqCst);
    let _ = sys::futex_wake_in(&common.ready, 1, FutexScope::Shared);
    while common.go.load(Ordering::SeqCst) == 0 {
        if let Err(e) = sys::futex_wait_until_in(&common.go, 0, FutexScope::Shared, None) {
            me.fail(stage::READY, &e);
            return Err(task_code::from_io_error(&e));
        }
    }
    Ok(())
}

/// Waits until no task is still measuring (the last to finish wakes the others), so that no
/// task's report disturbs another's window.
fn wait_for_the_others(common: &Common, me: &TaskSlot) -> Result<(), TaskCode> {
    if common.running.fetch_sub(1, Ordering::SeqCst) == 1 {
        let _ = sys::futex_wake_in(&common.running, u32::MAX >> 1, FutexScope::Shared);
        return Ok(());
    }
    loop {
        let running = common.running.load(Ordering::SeqCst);
        if running == 0 {
            return Ok(());
        }
        if let Err(e) = sys::futex_wait_until_in(&common.running, running, FutexScope::Shared, None) {
            me.fail(stage::REPORTING, &e);
            return Err(task_code::from_io_error(&e));
        }
    }
}

impl Tally {
    /// No counts yet; the work's sink starts from the task's index.
    fn new(sink: u64) -> Self {
        Tally {
            loops: 0,
            done: [0; MAX_PHASES],
            run_units: 0,
            run_requested_ns: 0,
            run_cpu_ns: 0,
            run_wall_ns: 0,
            periods: 0,
            missed: 0,
            taken: 0,
            received: 0,
            received_tags: 0,
            sink,
            sent: 0,
        }
    }
}

/// The work units of each run step, by the task's calibration (stored in its slot by
/// [`set_up`]).
fn calibrated_units(plan: &TaskPlan, me: &TaskSlot) -> [u64; MAX_PHASES] {
    let calibration = Calibration {
        fixed_ns: me.fixed_ns.load(Ordering::SeqCst) as f64,
        ns_per_unit: me.unit_ps.load(Ordering::SeqCst).max(1) as f64 / 1_000.0,
    };
    let mut units = [0u64; MAX_PHASES];
    for (units, step) in units.iter_mut().zip(plan.steps.iter()) {
        if let Step::Run { requested_ns } = step {
            *units = calibration.units_for(*requested_ns);
        }
    }
    units
}

impl<'a> Task<'a> {
    /// A task before its window: everything its loops touch is made here.
    fn new(shared: &'a Shared, plan: &'a TaskPlan, common: &'a Common, me: &'a TaskSlot) -> Self {
        // Made and touched (clear writes every count) before the start, so recording into them
        // inside the window neither allocates nor faults a page in.
        let mut wakeup = latency::new_latency_histogram();
        let mut lateness = latency::new_latency_histogram();
        wakeup.clear();
        lateness.clear();
        let units = calibrated_units(plan, me);
        Task {
            units,
            calibrated_units: units,
            shared,
            plan,
            common,
            me,
            next_deadline: [0; MAX_PHASES],
            held: 0,
            tally: Tally::new(plan.index as u64),
            wakeup,
            lateness,
        }
    }

    /// After the task's counts are stored: waits for the last task still measuring before
    /// writing anything, then writes its histograms.
    fn report(&self) -> TaskCode {
        self.me.stage.store(stage::REPORTING, Ordering::SeqCst);
        if let Err(code) = wait_for_the_others(self.common, self.me) {
            return code;
        }
        match self.write_histograms() {
            Ok(()) => {
                self.me.stage.store(stage::DONE, Ordering::SeqCst);
                task_code::OK
            }
            Err(e) => {
                self.me.fail(stage::REPORTING, &e);
                task_code::from_io_error(&e)
            }
        }
    }
}

impl Task<'_> {
    fn end_ns(&self) -> u64 {
        self.common.end_ns.load(Ordering::Relaxed)
    }

    /// How long a wait may last from `now`: `None` for no end, `Some(0)` when it has passed.
    fn time_left(&self, now: u64) -> Option<u64> {
        match self.end_ns() {
            NO_END => None,
            end => Some(end.saturating_sub(now)),
        }
    }

    /// The loops, until the loop count or the window's end; the error names the step that failed.
    fn loops(&mut self, start: u64) -> Result<(), (usize, Failed)> {
        for deadline in &mut self.next_deadline {
            *deadline = start;
        }
        let steps = Arc::clone(&self.plan.steps);
        loop {
            if self.plan.loops.is_some_and(|n| self.tally.loops >= n)
                || sys::monotonic_ns() >= self.end_ns()
            {
                return Ok(());
            }
            for (i, step) in steps.iter().enumerate() {
                match self.step(i, step) {
                    Ok(Flow::Next) => self.tally.done[i] += 1,
                    Ok(Flow::Ended) => return Ok(()),
                    Err(failed) => return Err((i, failed)),
                }
            }
            self.tally.loops += 1;
        }
    }

    fn step(&mut self, i: usize, step: &Step) -> Result<Flow, Failed> {
        match *step {
            Step::Run { requested_ns } => {
                let units = self.units[i];
                let wall = sys::monotonic_ns();
                let cpu = sys::thread_cpu_ns();
                self.tally.sink = sys::dependent_work(units, self.tally.sink);
                let cost_ns = sys::thread_cpu_ns().saturating_sub(cpu);
                self.tally.run_cpu_ns += cost_ns;
                self.tally.run_wall_ns += sys::monotonic_ns().saturating_sub(wall);
                self.units[i] =
                    corrected_units(units, self.calibrated_units[i], requested_ns, cost_ns);
                self.tally.run_units += units;
                self.tally.run_requested_ns += requested_ns;
                Ok(Flow::Next)
            }
            Step::Spin { ns } => {
                let until = sys::monotonic_ns().saturating_add(ns);
                while sys::monotonic_ns() < until {
                    std::hint::spin_loop();
                }
                Ok(Flow::Next)
            }
            Step::Sleep { ns } => {
                let due = sys::monotonic_ns().saturating_add(ns);
                self.sleep_until(due, true)
            }
            Step::Timer {
                period_ns,
                timer,
                relative,
            } => self.timer(period_ns, timer, relative),
            Step::Lock { mutex } => self.lock(mutex),
            Step::Unlock { mutex } => self.unlock(mutex),
            Step::Wake { first, count } => {
                for slot in &self.shared.slots[first..first + count] {
                    slot.wake_stamp_ns.store(sys::monotonic_ns(), Ordering::SeqCst);
                    slot.posted.fetch_add(1, Ordering::SeqCst);
                    slot.tokens.fetch_add(1, Ordering::SeqCst);
                    if slot.waiting.load(Ordering::SeqCst) != 0 {
                        sys::futex_wake_in(&slot.tokens, 1, FutexScope::Shared)?;
                    }
                }
                Ok(Flow::Next)
            }
            Step::Wait => self.wait(),
            Step::Barrier { barrier, parties } => self.barrier(barrier, parties),
            Step::Yield => {
                sys::raw_sched_yield()?;
                Ok(Flow::Next)
            }
            Step::Syscall(call) => {
                let answer = match call {
                    Syscall::Getppid => sys::raw_getppid(),
                    Syscall::Getpid => sys::raw_getpid(),
                    Syscall::Getrlimit => sys::raw_getrlimit_nofile()? as i64,
                };
                if answer <= 0 {
                    return Err(verify_failed());
                }
                self.tally.sink = self.tally.sink.wrapping_add(answer as u64);
                Ok(Flow::Next)
            }
            Step::Send { first, count } => {
                for target in first..first + count {
                    if let Flow::Ended = self.send(target)? {
                        return Ok(Flow::Ended);
                    }
                }
                Ok(Flow::Next)
            }
            Step::Recv => self.recv(),
        }
    }

    /// Sleeps until `due` (or the window's end, which ends the step); a wake-up on time records
    /// its latency when `record`.
    fn sleep_until(&mut self, due: u64, record: bool) -> Result<Flow, Failed> {
        let end = self.end_ns();
        if due > end {
            sleep_until(end);
            return Ok(Flow::Ended);
        }
        sleep_until(due);
        if record {
            let woke = sys::monotonic_ns();
            latency::record(&mut self.wakeup, woke.saturating_sub(due).max(1));
        }
        Ok(Flow::Next)
    }

    /// The next period boundary of timer `timer`: sleep to it, or, arriving late, count the miss
    /// and go on at once. Lateness (waking after the deadline, or arriving after it) is recorded
    /// either way; a wake-up on time is a wake-up too.
    fn timer(&mut self, period_ns: u64, timer: usize, relative: bool) -> Result<Flow, Failed> {
        let deadline = self.next_deadline[timer].saturating_add(period_ns);
        self.next_deadline[timer] = deadline;
        let now = sys::monotonic_ns();
        if now < deadline {
            if let Flow::Ended = self.sleep_until(deadline, false)? {
                return Ok(Flow::Ended);
            }
            let woke = sys::monotonic_ns();
            let late = woke.saturating_sub(deadline).max(1);
            latency::record(&mut self.wakeup, late);
            latency::record(&mut self.lateness, late);
        } else {
            self.tally.missed += 1;
            latency::record(&mut self.lateness, (now - deadline).max(1));
            if relative {
                self.next_deadline[timer] = now;
            }
        }
        self.tally.periods += 1;
        Ok(Flow::Next)
    }

    fn lock(&mut self, mutex: usize) -> Result<Flow, Failed> {
        let m = &self.common.mutexes[mutex];
        m.lock()?;
        self.held |= 1 << mutex;
        let me = self.plan.index as u32 + 1;
        if m.holder.load(Ordering::Relaxed) != 0 {
            return Err(verify_failed());
        }
        m.holder.store(me, Ordering::Relaxed);
        let count = m.acquisitions.load(Ordering::Relaxed);
        m.acquisitions.store(count + 1, Ordering::Relaxed);
        Ok(Flow::Next)
    }

    fn unlock(&mut self, mutex: usize) -> Result<Flow, Failed> {
        let m = &self.common.mutexes[mutex];
        if m.holder.load(Ordering::Relaxed) != self.plan.index as u32 + 1 {
            return Err(verify_failed());
        }
        m.holder.store(0, Ordering::Relaxed);
        self.held &= !(1 << mutex);
        m.unlock()?;
        Ok(Flow::Next)
    }

    /// Releases what the task holds when it stops inside a critical section (the window ended
    /// while it slept there), so no other task waits for it forever.
    fn release_held(&mut self) {
        for mutex in 0..MAX_MUTEXES {
            if self.held & (1 << mutex) != 0 {
                let m = &self.common.mutexes[mutex];
                m.holder.store(0, Ordering::Relaxed);
                let _ = m.unlock();
            }
        }
        self.held = 0;
    }

    /// Takes one wake-up posted to this task, sleeping until one comes; a wake-up that found the
    /// task asleep records its latency from the waker's stamp.
    fn wait(&mut self) -> Result<Flow, Failed> {
        let tokens = &self.me.tokens;
        let mut slept_since = None;
        loop {
            let value = tokens.load(Ordering::SeqCst);
            if value & STOP_BIT != 0 {
                return Ok(Flow::Ended);
            }
            if value > 0 {
                if tokens
                    .compare_exchange(value, value - 1, Ordering::SeqCst, Ordering::SeqCst)
                    .is_err()
                {
                    continue;
                }
                self.tally.taken += 1;
                if let Some(entered) = slept_since {
                    let stamp = self.me.wake_stamp_ns.load(Ordering::SeqCst);
                    if stamp >= entered {
                        let now = sys::monotonic_ns();
                        latency::record(&mut self.wakeup, now.saturating_sub(stamp).max(1));
                    }
                }
                return Ok(Flow::Next);
            }
            let now = sys::monotonic_ns();
            let left = self.time_left(now);
            if left == Some(0) {
                return Ok(Flow::Ended);
            }
            slept_since.get_or_insert(now);
            self.me.waiting.fetch_add(1, Ordering::SeqCst);
            let result = if tokens.load(Ordering::SeqCst) == 0 {
                sys::futex_wait_until_in(tokens, 0, FutexScope::Shared, left)
            } else {
                Ok(false)
            };
            self.me.waiting.fetch_sub(1, Ordering::SeqCst);
            result?;
        }
    }

    fn barrier(&mut self, barrier: usize, parties: u32) -> Result<Flow, Failed> {
        let b = &self.common.barriers[barrier];
        let generation = b.generation.load(Ordering::SeqCst);
        if generation & STOP_BIT != 0 {
            return Ok(Flow::Ended);
        }
        if b.arrived.fetch_add(1, Ordering::SeqCst) + 1 == parties {
            b.arrived.store(0, Ordering::SeqCst);
            b.released_ns.store(sys::monotonic_ns(), Ordering::SeqCst);
            b.generation.fetch_add(1, Ordering::SeqCst);
            sys::futex_wake_in(&b.generation, u32::MAX >> 1, FutexScope::Shared)?;
            return Ok(Flow::Next);
        }
        let entered = sys::monotonic_ns();
        loop {
            let now = sys::monotonic_ns();
            let left = self.time_left(now);
            if left == Some(0) {
                return Ok(Flow::Ended);
            }
            sys::futex_wait_until_in(&b.generation, generation, FutexScope::Shared, left)?;
            let current = b.generation.load(Ordering::SeqCst);
            if current & STOP_BIT != 0 {
                return Ok(Flow::Ended);
            }
            if current != generation {
                let released = b.released_ns.load(Ordering::SeqCst);
                if released >= entered {
                    let now = sys::monotonic_ns();
                    latency::record(&mut self.wakeup, now.saturating_sub(released).max(1));
                }
                return Ok(Flow::Next);
            }
        }
    }

    /// Writes one message into task `target`'s pipe, waiting while it is full.
    fn send(&mut self, target: usize) -> Result<Flow, Failed> {
        let Some(inbox) = &self.shared.inboxes[target] else {
            return Err(verify_failed());
        };
        self.tally.sent += 1;
        let tag = ((self.plan.index as u64 + 1) << 32) | (self.tally.sent & 0xFFFF_FFFF);
        let mut message = [0u8; MESSAGE_BYTES];
        loop {
            message[..8].copy_from_slice(&sys::monotonic_ns().to_le_bytes());
            message[8..].copy_from_slice(&tag.to_le_bytes());
            match sys::write_once(inbox.write.as_fd(), &message) {
                Ok(MESSAGE_BYTES) => break,
                // Writes of at most PIPE_BUF bytes are whole or not at all.
                Ok(_) => return Err(verify_failed()),
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {}
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e.into()),
            }
            let left = self.time_left(sys::monotonic_ns());
            if left == Some(0) {
                return Ok(Flow::Ended);
            }
            let (_, stopped) = sys::poll_with_stop(
                inbox.write.as_fd(),
                true,
                self.shared.stop_read.as_fd(),
                left,
            )?;
            if stopped {
                return Ok(Flow::Ended);
            }
        }
        let slot = &self.shared.slots[target];
        slot.sent.fetch_add(1, Ordering::SeqCst);
        slot.sent_tags.fetch_add(tag, Ordering::SeqCst);
        Ok(Flow::Next)
    }

    /// Reads one message from this task's pipe, waiting while it is empty; a message that came
    /// while the task waited records the latency from its sending.
    fn recv(&mut self) -> Result<Flow, Failed> {
        let Some(inbox) = &self.shared.inboxes[self.plan.index] else {
            return Err(verify_failed());
        };
        let mut message = [0u8; MESSAGE_BYTES];
        let mut waited_since = None;
        loop {
            match sys::read_interruptible(inbox.read.as_fd(), &mut message) {
                Ok(MESSAGE_BYTES) => break,
                Ok(_) => return Err(verify_failed()),
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {}
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e.into()),
            }
            let now = sys::monotonic_ns();
            let left = self.time_left(now);
            if left == Some(0) {
                return Ok(Flow::Ended);
            }
            waited_since.get_or_insert(now);
            let (_, stopped) = sys::poll_with_stop(
                inbox.read.as_fd(),
                false,
                self.shared.stop_read.as_fd(),
                left,
            )?;
            if stopped {
                return Ok(Flow::Ended);
            }
        }
        let now = sys::monotonic_ns();
        let sent_ns = u64::from_le_bytes(message[..8].try_into().unwrap_or_default());
        let tag = u64::from_le_bytes(message[8..].try_into().unwrap_or_default());
        let sender = (tag >> 32) as usize;
        if sender == 0 || sender > self.shared.slots.len() || sent_ns > now {
            return Err(verify_failed());
        }
        if waited_since.is_some_and(|since| sent_ns >= since) {
            latency::record(&mut self.wakeup, (now - sent_ns).max(1));
        }
        self.tally.received += 1;
        self.tally.received_tags = self.tally.received_tags.wrapping_add(tag);
        Ok(Flow::Next)
    }

    /// Stores the task's report in its slot.
    fn store(&self, cpu_ns: u64, span_ns: u64) {
        let t = &self.tally;
        let me = self.me;
        me.loops.store(t.loops, Ordering::SeqCst);
        for (slot, &count) in me.done.iter().zip(&t.done) {
            slot.store(count, Ordering::SeqCst);
        }
        me.cpu_ns.store(cpu_ns, Ordering::SeqCst);
        me.span_ns.store(span_ns, Ordering::SeqCst);
        me.run_units.store(t.run_units, Ordering::SeqCst);
        me.run_requested_ns.store(t.run_requested_ns, Ordering::SeqCst);
        me.run_cpu_ns.store(t.run_cpu_ns, Ordering::SeqCst);
        me.run_wall_ns.store(t.run_wall_ns, Ordering::SeqCst);
        me.periods.store(t.periods, Ordering::SeqCst);
        me.missed.store(t.missed, Ordering::SeqCst);
        me.taken.store(t.taken, Ordering::SeqCst);
        me.received.store(t.received, Ordering::SeqCst);
        me.received_tags.store(t.received_tags, Ordering::SeqCst);
        me.sink.store(t.sink, Ordering::SeqCst);
    }

    /// The two histograms into the task's result file, each as its length and its encoding.
    fn write_histograms(&self) -> std::io::Result<()> {
        let file = self.shared.results[self.plan.index].as_fd();
        for histogram in [&self.wakeup, &self.lateness] {
            let data = latency::attachment("", histogram).data;
            sys::write_full(file, &(data.len() as u64).to_le_bytes())?;
            sys::write_full(file, &data)?;
        }
        Ok(())
    }
}

/// Tells every task of the run to stop: the end moves to now, every wake-up word and barrier
/// generation gets [`STOP_BIT`] and its sleepers are woken, the stop pipe becomes readable, and
/// tasks not yet started start and stop at once. A task in a run, spin or sleep phase finishes
/// it first (a timer or sleep at most until its due time).
pub fn request_stop(shared: &Shared) -> std::io::Result<()> {
    let common: &Common = &shared.common;
    common.end_ns.fetch_min(sys::monotonic_ns(), Ordering::SeqCst);
    for slot in &shared.slots {
        slot.tokens.fetch_or(STOP_BIT, Ordering::SeqCst);
        sys::futex_wake_in(&slot.tokens, u32::MAX >> 1, FutexScope::Shared)?;
    }
    for barrier in &common.barriers {
        barrier.generation.fetch_or(STOP_BIT, Ordering::SeqCst);
        sys::futex_wake_in(&barrier.generation, u32::MAX >> 1, FutexScope::Shared)?;
    }
    sys::write_full(shared.stop_write.as_fd(), &[1])?;
    if common.go.swap(1, Ordering::SeqCst) == 0 {
        sys::futex_wake_in(&common.go, u32::MAX >> 1, FutexScope::Shared)?;
    }
    Ok(())
}

/// Sleeps until CLOCK_MONOTONIC reads `deadline_ns`, again after a signal; at once for a
/// deadline already passed.
fn sleep_until(deadline_ns: u64) {
    while let Err(e) = sys::sleep_until_ns(deadline_ns) {
        if e.kind() != std::io::ErrorKind::Interrupted {
            return;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::corrected_units;

    /// A step whose units cost `slower` times what the calibration found: the CPU time of its
    /// `n`th run for 1 ms asked.
    fn nth_cost(slower: f64, n: usize) -> f64 {
        let calibrated = 250_000u64; // 4 ns a unit
        let mut units = calibrated;
        let cost = |units: u64| units as f64 * 4.0 * slower;
        for _ in 0..n {
            let spent = cost(units);
            units = corrected_units(units, calibrated, 1_000_000, spent as u64);
        }
        cost(units)
    }

    #[test]
    fn a_step_costing_more_than_calibrated_comes_to_its_requested_time() {
        assert!((nth_cost(1.024, 0) - 1_024_000.0).abs() < 1.0);
        let settled = nth_cost(1.024, 30);
        assert!((settled - 1_000_000.0).abs() < 1_000.0, "{settled}");
        let settled = nth_cost(0.97, 30);
        assert!((settled - 1_000_000.0).abs() < 1_000.0, "{settled}");
    }

    #[test]
    fn corrections_stay_between_half_and_twice_the_calibration() {
        assert_eq!(corrected_units(600, 1_000, 1_000_000, 100_000_000), 500);
        assert_eq!(corrected_units(1_900, 1_000, 1_000_000, 1), 2_000);
        assert_eq!(corrected_units(700, 1_000, 1_000_000, 0), 700);
        // One run lengthened fivefold by an interrupt moves the next a quarter of the way.
        assert_eq!(corrected_units(1_000, 1_000, 1_000_000, 5_000_000), 800);
    }
}
