//! Starting a workload's tasks as processes or threads behind hackbench's start barrier: every
//! task reports ready on a pipe and waits in poll() on a wake pipe; the clock starts when all are
//! ready, one byte wakes them all, and the clock stops when the last one has exited and been
//! reaped or joined, as hackbench's window includes exit and wait.
//!
//! When the iteration watchdog fires, the waiting main thread wakes with EINTR like for Ctrl-C and
//! the launch names the tasks that had not finished, with what /proc says of each (stopped,
//! running, blocked), then stops them: processes get SIGTERM and, after a grace period, SIGKILL.
//! Threads cannot be killed; they are counted ([`live_task_threads`]) so the runner can end the
//! run, and with it the process, when any are left. At the watchdog's looks before the deadline
//! the launch checks its processes: one stopped with SIGSTOP (and still stopped a moment later)
//! ends the iteration the same way, at once. (A thread cannot be stopped alone: SIGSTOP stops the
//! whole process, schedlab with it, which the runner sees as a suspension.)
use std::sync::atomic::{AtomicBool, AtomicI32, AtomicUsize, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;

use serde::{Deserialize, Serialize};

use crate::sys::{
    self, task_code, AsFd, ChildExit, ChildSet, OverBudget, OwnedFd, TaskCode, TaskLimits, TaskStat,
};
use crate::{Error, Result};

/// Processes (fork, the default of hackbench and perf bench) or threads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TaskMode {
    Process,
    Threads,
}

impl TaskMode {
    pub fn from_threads_flag(threads: bool) -> Self {
        if threads {
            TaskMode::Threads
        } else {
            TaskMode::Process
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            TaskMode::Process => "process",
            TaskMode::Threads => "threads",
        }
    }
}

/// Thread stacks are small, like hackbench's PTHREAD_STACK_MIN, so 1,600-thread runs stay cheap;
/// task bodies keep their buffers on the heap.
const THREAD_STACK_BYTES: usize = 64 * 1024;

/// How long the untimed start phase sleeps between checks for tasks that died early or a signal.
const START_POLL_MS: u32 = 100;

/// After a deadline: how long tasks are watched to tell a spinning one from a blocked one.
const SAMPLE_NS: u64 = 200_000_000;
/// After a deadline: how long stopped tasks get to exit after SIGTERM (processes) or to finish on
/// their own (threads) before SIGKILL or giving up on them.
pub const GRACE_NS: u64 = 1_000_000_000;
/// Stuck tasks named in a report; the rest are counted.
const NAMED_AT_MOST: usize = 8;

/// Worker threads of workloads that have not returned yet, over all launches: a thread that is
/// stuck cannot be killed, and a run must not go on beside it.
static LIVE_TASK_THREADS: AtomicUsize = AtomicUsize::new(0);

/// How many workload threads are still running.
pub fn live_task_threads() -> usize {
    LIVE_TASK_THREADS.load(Ordering::SeqCst)
}

/// Counts one workload thread from before it is spawned until its body has returned (or the
/// spawn failed and the closure holding it was dropped).
pub(crate) struct LiveThread(());

impl LiveThread {
    pub(crate) fn enter() -> Self {
        LIVE_TASK_THREADS.fetch_add(1, Ordering::SeqCst);
        LiveThread(())
    }
}

impl Drop for LiveThread {
    fn drop(&mut self) {
        LIVE_TASK_THREADS.fetch_sub(1, Ordering::SeqCst);
    }
}

/// Where /proc shows a task: a child process by pid, or a thread of ours by thread id (0 while
/// it has not started).
#[derive(Debug, Clone, Copy)]
pub(crate) enum Probe {
    Process(i32),
    Thread(i32),
}

impl Probe {
    fn stat(self) -> Option<TaskStat> {
        match self {
            Probe::Process(pid) => sys::process_stat(pid),
            Probe::Thread(0) => None,
            Probe::Thread(tid) => sys::thread_stat(tid),
        }
    }

    fn id(self) -> String {
        match self {
            Probe::Process(pid) => format!("pid {pid}"),
            Probe::Thread(tid) => format!("tid {tid}"),
        }
    }
}

/// Names the tasks of `tasks` (out of `total`) that have not finished, with what each was doing:
/// two looks at /proc [`SAMPLE_NS`] apart tell a stopped task from one running on a CPU (an
/// endless loop, or work that needs longer than the deadline) and one blocked in the kernel (a
/// lost wake-up, or waiting for another task). The stopped and running ones come first: they are
/// usually the cause, the blocked ones waiting for them.
pub(crate) fn describe_unfinished(tasks: &[(String, Probe)], total: usize) -> String {
    let before: Vec<Option<TaskStat>> = tasks.iter().map(|(_, p)| p.stat()).collect();
    sleep_through_signals(SAMPLE_NS);
    let mut found: Vec<(u8, String)> = Vec::new();
    for ((name, probe), before) in tasks.iter().zip(before) {
        let (rank, what) = match (probe, before, probe.stat()) {
            (Probe::Thread(0), _, _) => (3, "not started"),
            (_, _, None) => continue,
            (_, _, Some(now)) if now.is_dead() => continue,
            (_, _, Some(now)) if now.is_stopped() => (0, "stopped"),
            (_, Some(then), Some(now)) if now.cpu_ticks > then.cpu_ticks => (1, "running"),
            (_, _, Some(now)) if now.state == 'R' => (2, "runnable, not running"),
            _ => (2, "blocked"),
        };
        found.push((rank, format!("{name} ({}, {what})", probe.id())));
    }
    if found.is_empty() {
        return format!("every one of the {total} tasks had finished by the time it was checked");
    }
    found.sort_by_key(|(rank, _)| *rank);
    let mut list: Vec<String> = found
        .iter()
        .take(NAMED_AT_MOST)
        .map(|(_, t)| t.clone())
        .collect();
    if found.len() > NAMED_AT_MOST {
        list.push(format!("and {} more", found.len() - NAMED_AT_MOST));
    }
    format!(
        "{} of {total} tasks had not finished: {}",
        found.len(),
        list.join(", ")
    )
}

/// "1 thread", "2 threads".
pub(crate) fn threads(n: usize) -> String {
    match n {
        1 => "1 thread".to_string(),
        n => format!("{n} threads"),
    }
}

/// Sleeps `ns` even though the watchdog's signal keeps interrupting.
pub(crate) fn sleep_through_signals(ns: u64) {
    let until = sys::monotonic_ns().saturating_add(ns);
    loop {
        let now = sys::monotonic_ns();
        if now >= until {
            return;
        }
        sys::sleep_interruptible_ns(until - now);
    }
}

/// Where a thread of the launch is, for the watchdog: its thread id once it runs, and whether its
/// body has returned.
#[derive(Default)]
struct ThreadSlot {
    tid: AtomicI32,
    finished: AtomicBool,
}

/// The pipes of the start barrier and, for threads, the pipe on which each reports its end.
struct Barrier {
    ready_read: OwnedFd,
    ready_write: OwnedFd,
    wake_read: OwnedFd,
    wake_write: OwnedFd,
    done_read: OwnedFd,
    done_write: OwnedFd,
}

/// What a task does before its body: tell the parent it is ready, then wait for the wake byte.
fn report_ready_and_wait(barrier: &Barrier) -> std::result::Result<(), TaskCode> {
    sys::write_full(barrier.ready_write.as_fd(), &[1]).map_err(|e| task_code::from_io_error(&e))?;
    loop {
        match sys::poll_readable(barrier.wake_read.as_fd(), None) {
            Ok(true) => break,
            Ok(false) => continue,
            Err(e) => return Err(task_code::from_io_error(&e)),
        }
    }
    Ok(())
}

/// A set of tasks of one iteration, started together behind the barrier.
pub struct TaskLaunch {
    mode: TaskMode,
    barrier: Arc<Barrier>,
    children: ChildSet,
    threads: Vec<JoinHandle<()>>,
    thread_slots: Vec<Arc<ThreadSlot>>,
    /// A human name per task, for error messages ("receiver 3 of group 1").
    names: Vec<String>,
    pids: Vec<i32>,
    aborted: Arc<std::sync::atomic::AtomicBool>,
    started: bool,
}

impl TaskLaunch {
    pub fn new(mode: TaskMode) -> Result<Self> {
        let pipe = || sys::pipe().map_err(|e| Error::failed(format!("cannot create a pipe: {e}")));
        let (ready_read, ready_write) = pipe()?;
        let (wake_read, wake_write) = pipe()?;
        let (done_read, done_write) = pipe()?;
        Ok(TaskLaunch {
            mode,
            barrier: Arc::new(Barrier {
                ready_read,
                ready_write,
                wake_read,
                wake_write,
                done_read,
                done_write,
            }),
            children: ChildSet::new(),
            threads: Vec::new(),
            thread_slots: Vec::new(),
            names: Vec::new(),
            pids: Vec::new(),
            aborted: Arc::new(std::sync::atomic::AtomicBool::new(false)),
            started: false,
        })
    }

    pub fn mode(&self) -> TaskMode {
        self.mode
    }

    pub fn task_count(&self) -> usize {
        self.names.len()
    }

    /// Starts one task that will run `body` once every task is ready. `body` runs in a forked
    /// child or a new thread; it must not allocate in its timed part (buffers are prepared by the
    /// caller and moved in).
    pub fn spawn<F>(&mut self, name: impl Into<String>, body: F) -> Result<()>
    where
        F: FnOnce() -> TaskCode + Send + 'static,
    {
        let name = name.into();
        let barrier = Arc::clone(&self.barrier);
        let aborted = Arc::clone(&self.aborted);
        let run = move || -> TaskCode {
            if let Err(code) = report_ready_and_wait(&barrier) {
                return code;
            }
            if aborted.load(std::sync::atomic::Ordering::SeqCst) {
                return task_code::ABORTED;
            }
            body()
        };
        match self.mode {
            TaskMode::Process => {
                let pid = self
                    .children
                    .spawn(run)
                    .map_err(|e| spawn_error(&e, "fork", self.names.len()))?;
                self.pids.push(pid);
            }
            TaskMode::Threads => {
                let barrier = Arc::clone(&self.barrier);
                let slot = Arc::new(ThreadSlot::default());
                let thread_slot = Arc::clone(&slot);
                let counted = LiveThread::enter();
                let spawned = sys::with_interrupts_blocked(|| {
                    std::thread::Builder::new()
                        .name(name.chars().take(15).collect())
                        .stack_size(THREAD_STACK_BYTES)
                        .spawn(move || {
                            let _counted = counted;
                            thread_slot.tid.store(sys::current_tid(), Ordering::SeqCst);
                            let code = std::panic::catch_unwind(std::panic::AssertUnwindSafe(run))
                                .unwrap_or(task_code::PANICKED);
                            thread_slot.finished.store(true, Ordering::SeqCst);
                            let _ = sys::write_full(barrier.done_write.as_fd(), &[code]);
                        })
                });
                let handle =
                    spawned.map_err(|e| spawn_error(&e, "thread creation", self.names.len()))?;
                self.threads.push(handle);
                self.thread_slots.push(slot);
            }
        }
        self.names.push(name);
        Ok(())
    }

    /// Waits until every task is ready (untimed; watching for early deaths and signals), then
    /// returns the start time and wakes them all.
    pub fn start(&mut self) -> Result<u64> {
        let total = self.names.len();
        let mut ready = 0usize;
        let mut buf = [0u8; 512];
        while ready < total {
            self.check_stop()?;
            if sys::poll_readable(self.barrier.ready_read.as_fd(), Some(START_POLL_MS))
                .map_err(|e| Error::failed(format!("waiting for tasks to start: {e}")))?
            {
                match sys::read_interruptible(self.barrier.ready_read.as_fd(), &mut buf) {
                    Ok(n) => ready += n,
                    Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                    Err(e) => {
                        return Err(Error::failed(format!("waiting for tasks to start: {e}")))
                    }
                }
            } else {
                self.check_early_exit()?;
            }
        }
        let start = sys::monotonic_ns();
        sys::write_full(self.barrier.wake_write.as_fd(), &[1])
            .map_err(|e| Error::failed(format!("cannot wake tasks: {e}")))?;
        self.started = true;
        Ok(start)
    }

    /// Waits for every task to finish and returns the stop time. The first task that fails ends
    /// the iteration: processes are killed, and the failure is named.
    pub fn wait_all(&mut self) -> Result<u64> {
        match self.mode {
            TaskMode::Process => self.wait_processes(),
            TaskMode::Threads => self.wait_threads(),
        }
    }

    fn wait_processes(&mut self) -> Result<u64> {
        while !self.children.is_empty() {
            let reaped = self
                .children
                .reap_one(false)
                .map_err(|e| Error::failed(format!("waiting for tasks: {e}")))?;
            match reaped {
                Some((_, ChildExit::Code(0))) => {}
                Some((pid, exit)) => {
                    let name = self.name_of_pid(pid);
                    self.children.kill_and_reap_all();
                    return Err(Error::failed(format!(
                        "{name} failed: {}",
                        describe_exit(exit)
                    )));
                }
                None => self.check_stop()?,
            }
        }
        Ok(sys::monotonic_ns())
    }

    fn wait_threads(&mut self) -> Result<u64> {
        let total = self.threads.len();
        let mut finished = 0usize;
        let mut codes = [0u8; 512];
        while finished < total {
            let want = (total - finished).min(codes.len());
            match sys::read_interruptible(self.barrier.done_read.as_fd(), &mut codes[..want]) {
                Ok(0) => return Err(Error::failed("worker threads vanished".to_string())),
                Ok(n) => {
                    if let Some(&code) = codes[..n].iter().find(|&&c| c != task_code::OK) {
                        return Err(Error::failed(format!(
                            "a worker thread failed: {}",
                            task_code::describe(code)
                        )));
                    }
                    finished += n;
                }
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => self.check_stop()?,
                Err(e) => return Err(Error::failed(format!("waiting for threads: {e}"))),
            }
        }
        // Every body has returned; joining now only waits for thread exit, which hackbench's
        // window includes (it stops the clock after pthread_join), so ours does too.
        for handle in self.threads.drain(..) {
            let _ = handle.join();
        }
        Ok(sys::monotonic_ns())
    }

    /// What every wait does when it wakes: a stop signal ends the run; an expired deadline, or a
    /// look that finds a process stopped, ends the iteration, naming and stopping the tasks that
    /// had not finished.
    fn check_stop(&mut self) -> Result<()> {
        if sys::take_look_due() && !self.stopped_processes().is_empty() {
            return Err(self.stop_unfinished());
        }
        match crate::error::check_stop() {
            Err(Error::TimedOut(_)) => Err(self.stop_unfinished()),
            other => other,
        }
    }

    /// The processes of the launch in SIGSTOP (state `T`; a debugger's tracing stop is not one),
    /// at two looks [`SAMPLE_NS`] apart.
    fn stopped_processes(&self) -> Vec<i32> {
        if self.mode != TaskMode::Process {
            return Vec::new();
        }
        let stopped = |pids: &[i32]| -> Vec<i32> {
            pids.iter()
                .copied()
                .filter(|&pid| sys::process_stat(pid).is_some_and(|s| s.is_job_stopped()))
                .collect()
        };
        let first = stopped(self.children.live_pids());
        if first.is_empty() {
            return first;
        }
        sleep_through_signals(SAMPLE_NS);
        stopped(&first)
    }

    fn stop_unfinished(&mut self) -> Error {
        let unfinished: Vec<(String, Probe)> = match self.mode {
            TaskMode::Process => self
                .children
                .live_pids()
                .iter()
                .map(|&pid| (self.name_of_pid(pid), Probe::Process(pid)))
                .collect(),
            TaskMode::Threads => self
                .thread_slots
                .iter()
                .zip(&self.names)
                .filter(|(slot, _)| !slot.finished.load(Ordering::SeqCst))
                .map(|(slot, name)| (name.clone(), Probe::Thread(slot.tid.load(Ordering::SeqCst))))
                .collect(),
        };
        let report = describe_unfinished(&unfinished, self.names.len());
        match self.mode {
            TaskMode::Process => {
                self.children.terminate_all(GRACE_NS);
                Error::TimedOut(format!(
                    "{report}; every task was stopped (SIGTERM, SIGKILL after {} s)",
                    GRACE_NS / 1_000_000_000
                ))
            }
            TaskMode::Threads => {
                // Threads at the barrier leave without working; the rest get the grace period
                // to return on their own, since nothing can make them.
                if !self.started {
                    self.aborted.store(true, Ordering::SeqCst);
                    let _ = sys::write_full(self.barrier.wake_write.as_fd(), &[1]);
                    self.started = true;
                }
                let until = sys::monotonic_ns().saturating_add(GRACE_NS);
                let running = |slots: &[Arc<ThreadSlot>]| {
                    slots
                        .iter()
                        .filter(|s| !s.finished.load(Ordering::SeqCst))
                        .count()
                };
                while running(&self.thread_slots) > 0 && sys::monotonic_ns() < until {
                    sleep_through_signals(5_000_000);
                }
                match running(&self.thread_slots) {
                    0 => {
                        Error::TimedOut(format!("{report}; they returned during the grace period"))
                    }
                    n => Error::TimedOut(format!(
                        "{report}; {} still running after {} s, and threads cannot be killed",
                        threads(n),
                        GRACE_NS / 1_000_000_000
                    )),
                }
            }
        }
    }

    /// Before the start, a task that has already exited can only have failed.
    fn check_early_exit(&mut self) -> Result<()> {
        match self.mode {
            TaskMode::Process => {
                if let Some((pid, exit)) = self
                    .children
                    .reap_one(true)
                    .map_err(|e| Error::failed(format!("checking tasks: {e}")))?
                {
                    let name = self.name_of_pid(pid);
                    return Err(Error::failed(format!(
                        "{name} ended before the start: {}",
                        describe_exit(exit)
                    )));
                }
            }
            TaskMode::Threads => {
                if self.threads.iter().any(|h| h.is_finished()) {
                    return Err(Error::failed(
                        "a worker thread ended before the start".to_string(),
                    ));
                }
            }
        }
        Ok(())
    }

    fn name_of_pid(&self, pid: i32) -> String {
        self.pids
            .iter()
            .position(|&p| p == pid)
            .and_then(|i| self.names.get(i))
            .cloned()
            .unwrap_or_else(|| format!("task {pid}"))
    }
}

impl Drop for TaskLaunch {
    fn drop(&mut self) {
        // Tasks still waiting at the barrier are released to do nothing: threads cannot be
        // killed, so they must be let go; processes are killed by the ChildSet's own Drop.
        if !self.started && !self.threads.is_empty() {
            self.aborted
                .store(true, std::sync::atomic::Ordering::SeqCst);
            let _ = sys::write_full(self.barrier.wake_write.as_fd(), &[1]);
            for handle in self.threads.drain(..) {
                let _ = handle.join();
            }
        }
    }
}

fn describe_exit(exit: ChildExit) -> String {
    match exit {
        ChildExit::Code(code) => task_code::describe(code.clamp(0, 255) as u8),
        ChildExit::Signal(signal) => format!("killed by signal {signal}"),
    }
}

/// Descriptors schedlab keeps open besides a workload's own: the store, the barrier's pipes,
/// stdio.
pub const OWN_DESCRIPTORS: u64 = 32;

/// What one iteration of a case starts at once, for the one check of this machine's task and
/// descriptor limits ([`sys::TaskLimits`]) that `WorkloadParams::validate` makes of every case.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TaskBudget {
    /// Processes and threads running at once, besides schedlab's own.
    pub tasks: u64,
    /// What the refusal counts them as: "tasks", "threads".
    pub unit: &'static str,
    /// Descriptors they hold open at once beyond schedlab's own (0: none).
    pub descriptors: u64,
    /// What to change instead, for the refusal: "use fewer --threads" ("" where no parameter
    /// sets the count).
    pub remedy: &'static str,
}

impl TaskBudget {
    /// A workload that starts no task of its own and opens no descriptor.
    pub const NONE: TaskBudget = TaskBudget {
        tasks: 0,
        unit: "tasks",
        descriptors: 0,
        remedy: "",
    };

    /// `tasks` threads or processes (`unit`) holding no descriptors of their own.
    pub const fn tasks(tasks: u64, unit: &'static str, remedy: &'static str) -> TaskBudget {
        TaskBudget {
            tasks,
            unit,
            descriptors: 0,
            remedy,
        }
    }

    /// The same tasks holding `descriptors` open at once.
    pub const fn holding(self, descriptors: u64) -> TaskBudget {
        TaskBudget {
            descriptors,
            ..self
        }
    }

    /// Refuses up front a case this machine's limits cannot hold, naming the limit.
    pub fn check(self) -> Result<()> {
        let TaskBudget {
            tasks,
            unit,
            remedy,
            ..
        } = self;
        let descriptors = if self.descriptors == 0 {
            0
        } else {
            self.descriptors.saturating_add(OWN_DESCRIPTORS)
        };
        let (or_remedy, then_remedy) = if remedy.is_empty() {
            (String::new(), String::new())
        } else {
            (format!(" or {remedy}"), format!("; {remedy}"))
        };
        sys::check_task_budget(tasks, descriptors).map_err(|over| {
            Error::invalid(match over {
                OverBudget::OpenFiles { hard } => format!(
                    "{tasks} {unit} need about {descriptors} open descriptors, over RLIMIT_NOFILE \
                     (hard limit {hard}); raise it with `ulimit -n`{or_remedy}"
                ),
                OverBudget::Kernel { limit, max } => {
                    format!("{tasks} {unit} exceed {limit} = {max}{then_remedy}")
                }
                OverBudget::Processes { soft } => {
                    format!(
                        "{tasks} {unit} exceed RLIMIT_NPROC = {soft} (`ulimit -u`){then_remedy}"
                    )
                }
            })
        })
    }
}

/// fork and thread creation fail with EAGAIN at a process or thread limit; name the limits.
fn spawn_error(e: &std::io::Error, what: &str, already: usize) -> Error {
    if e.raw_os_error() == Some(libc::EAGAIN) || e.kind() == std::io::ErrorKind::WouldBlock {
        let limits = TaskLimits::read();
        let value = |v: Option<u64>| v.map_or("unknown".to_string(), |v| v.to_string());
        let nproc = limits
            .processes
            .soft
            .map_or("unlimited".to_string(), |v| v.to_string());
        Error::failed(format!(
            "{what} failed after {already} tasks: {e} — a process/thread limit was hit \
             (RLIMIT_NPROC soft = {nproc}; see also kernel.threads-max = {} and kernel.pid_max = \
             {})",
            value(limits.threads_max),
            value(limits.pid_max)
        ))
    } else {
        Error::failed(format!("{what} failed after {already} tasks: {e}"))
    }
}
