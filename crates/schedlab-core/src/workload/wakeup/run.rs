//! One iteration: every buffer and histogram is allocated, every thread is started and parked at
//! a gate; the gate opens, the optional warm-up runs, then the measured window (the main thread
//! only wakes once a second to sample the request count); then the threads are stopped and
//! joined, the books are checked, and the per-thread histograms are merged.
//!
//! Closed loop (request and pipe modes), as schbench: a worker pushes itself onto its message
//! thread's wake list, posts the message thread and sleeps on its futex; the message thread takes
//! the list and, for each worker, stamps CLOCK_MONOTONIC and wakes it. The worker's wakeup latency
//! runs from that stamp to its first instruction after the futex wait. Open loop: each message
//! thread is a dispatcher that queues requests at a fixed rate whatever the service time, and a
//! request's latency runs from its scheduled arrival to its completion, queueing included.
//!
//! Stopping never waits without end: threads are joined only once they have returned, and when the
//! iteration's deadline passes the ones still running are named and, if they do not return after
//! being told to stop, left behind (threads cannot be killed; the runner then ends the run).
use std::sync::atomic::{fence, AtomicBool, AtomicI32, AtomicU32, AtomicU64, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;

use hdrhistogram::Histogram;

use crate::latency::{self, record};
use super::sync::{post, wait, wait_timeout, CpuLock, RequestQueue, WakeList, BLOCKED, RUNNING};
use super::work::{allocate_matrices, do_work};
use crate::metric::Measurement;
use crate::sys::{self, AsFd, TransferBuffer, ZeroPageWords};
use crate::workload::tasks::{self, LiveThread, Probe};
use crate::workload::definition::IterationOutput;
use crate::{Error, Result};

const NSEC_PER_SEC: u64 = 1_000_000_000;
const PHASE_WARMUP: u32 = 0;
const PHASE_MEASURE: u32 = 1;
const PHASE_DONE: u32 = 2;
/// Pending requests one worker may hold in open-loop mode before the dispatcher tries the next
/// worker (and, when all are full, drops the request and counts it).
pub const QUEUE_CAPACITY: usize = 1024;
const THREAD_STACK_BYTES: usize = 256 * 1024;
/// How often the untimed start phase checks for signals and threads that died early.
const READY_POLL_NS: u64 = 1_000_000;

/// What a request is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// Closed loop: sleep, then matrix multiplies (schbench's default).
    Request,
    /// Closed loop: no sleep, no math; each round moves `bytes` each way (schbench -p).
    Pipe { bytes: usize },
    /// Open loop: `rate` requests per second over all message threads (schbench -R, but the
    /// latency counts queueing).
    OpenLoop { rate: u64 },
}

/// An iteration's resolved parameters.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Config {
    pub mode: Mode,
    pub message_threads: usize,
    pub workers_per_message: usize,
    pub runtime_sec: u64,
    pub warmup_sec: u64,
    pub sleep_ns: u64,
    pub operations: u64,
    pub matrix_n: usize,
    pub lock: bool,
    pub message_cpus: Option<Vec<u32>>,
    pub worker_cpus: Option<Vec<u32>>,
}

impl Config {
    fn total_workers(&self) -> usize {
        self.message_threads * self.workers_per_message
    }

    fn does_math(&self) -> bool {
        !matches!(self.mode, Mode::Pipe { .. })
    }
}

/// What the main thread and a worker's message thread share with one worker.
#[repr(align(128))]
struct WorkerSlot {
    futex: AtomicU32,
    /// The waker's CLOCK_MONOTONIC stamp, written just before this worker's wake call (kept on
    /// the futex's cache line, as schbench keeps wake_time next to its futex).
    wake_stamp_ns: AtomicU64,
    /// The next worker on the wake list (index + 1; 0 ends the list).
    next: AtomicU32,
    /// Requests or transfers completed inside the measured window, for the per-second samples.
    completed: AtomicU64,
    tid: AtomicI32,
    /// 0, or the errno of a failed setup step (pinning).
    setup_error: AtomicI32,
}

#[repr(align(128))]
struct MessageSlot {
    futex: AtomicU32,
    list: WakeList,
    /// Workers of this message thread that have not exited; it serves until this is zero, so
    /// every worker that posted itself is woken.
    live_workers: AtomicU32,
    tid: AtomicI32,
    setup_error: AtomicI32,
}

struct Shared {
    stop: AtomicBool,
    phase: AtomicU32,
    gate: AtomicU32,
    ready: AtomicU32,
    /// When the gate opened: the open-loop schedule's origin.
    start_ns: AtomicU64,
    workers: Box<[WorkerSlot]>,
    messages: Box<[MessageSlot]>,
    /// Open-loop request queues, one per worker (empty otherwise).
    queues: Box<[RequestQueue]>,
    /// Pipe-mode transfer buffers, one per worker (empty otherwise).
    buffers: Box<[TransferBuffer]>,
    /// The per-CPU locks (empty when locking is off or there is no math).
    locks: Box<[CpuLock]>,
}

impl Shared {
    fn new(config: &Config) -> Self {
        let total = config.total_workers();
        let workers = (0..total)
            .map(|_| WorkerSlot {
                futex: AtomicU32::new(BLOCKED),
                wake_stamp_ns: AtomicU64::new(0),
                next: AtomicU32::new(0),
                completed: AtomicU64::new(0),
                tid: AtomicI32::new(0),
                setup_error: AtomicI32::new(0),
            })
            .collect();
        let messages = (0..config.message_threads)
            .map(|_| MessageSlot {
                futex: AtomicU32::new(BLOCKED),
                list: WakeList::new(),
                live_workers: AtomicU32::new(config.workers_per_message as u32),
                tid: AtomicI32::new(0),
                setup_error: AtomicI32::new(0),
            })
            .collect();
        let queues = match config.mode {
            Mode::OpenLoop { .. } => (0..total)
                .map(|_| RequestQueue::new(QUEUE_CAPACITY))
                .collect(),
            _ => Box::default(),
        };
        let buffers = match config.mode {
            Mode::Pipe { bytes } => (0..total).map(|_| TransferBuffer::new(bytes)).collect(),
            _ => Box::default(),
        };
        let locks = if config.lock && config.does_math() {
            (0..rustix::thread::CpuSet::MAX_CPU)
                .map(|_| CpuLock::new())
                .collect()
        } else {
            Box::default()
        };
        Shared {
            stop: AtomicBool::new(false),
            phase: AtomicU32::new(PHASE_WARMUP),
            gate: AtomicU32::new(0),
            ready: AtomicU32::new(0),
            start_ns: AtomicU64::new(0),
            workers,
            messages,
            queues,
            buffers,
            locks,
        }
    }

    fn stopping(&self) -> bool {
        self.stop.load(Ordering::SeqCst)
    }

    fn measuring(&self) -> bool {
        self.phase.load(Ordering::Relaxed) == PHASE_MEASURE
    }

    fn completed_total(&self) -> u64 {
        self.workers
            .iter()
            .map(|w| w.completed.load(Ordering::Relaxed))
            .sum()
    }

    /// Threads park here after their setup until the main thread opens the gate (or stops).
    fn wait_at_gate(&self) {
        while self.gate.load(Ordering::Acquire) == 0 {
            let _ = sys::futex_wait(&self.gate, 0, None);
        }
    }
}

/// A worker's own state: it owns it while running and hands it back when joined.
struct WorkerLocal {
    index: usize,
    message: usize,
    wakeup: Histogram<u64>,
    request: Histogram<u64>,
    /// Request modes: the three matrices (none in pipe mode).
    matrices: Option<ZeroPageWords>,
    posts: u64,
    wakes_seen: u64,
    wakeup_samples: u64,
    request_samples: u64,
    /// Requests finished in any phase (open loop's books).
    finished: u64,
    verify_failures: u64,
}

impl WorkerLocal {
    fn new(config: &Config, index: usize) -> Result<Self> {
        let matrices = if config.does_math() {
            Some(allocate_matrices(config.matrix_n).map_err(|e| {
                Error::invalid(format!(
                    "cannot allocate the cache footprint of worker {index} ({n}×{n} matrices): {e}",
                    n = config.matrix_n
                ))
            })?)
        } else {
            None
        };
        Ok(WorkerLocal {
            index,
            message: index / config.workers_per_message,
            wakeup: latency::new_latency_histogram(),
            request: latency::new_latency_histogram(),
            matrices,
            posts: 0,
            wakes_seen: 0,
            wakeup_samples: 0,
            request_samples: 0,
            finished: 0,
            verify_failures: 0,
        })
    }
}

#[derive(Debug, Default)]
struct MessageLocal {
    wakes_sent: u64,
    dispatched: u64,
    dropped: u64,
    verify_failures: u64,
}

/// The iteration's books, checked before its metrics are believed (and by the tests).
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Books {
    /// Closed loop: times workers posted themselves to their message thread.
    pub posts: u64,
    /// Closed loop: workers taken off a wake list and woken by their message thread.
    pub wakes_sent: u64,
    /// Times workers returned from their futex wait.
    pub wakes_seen: u64,
    /// Wakeup samples the workers counted, and what the merged histogram holds.
    pub wakeup_samples: u64,
    pub wakeup_recorded: u64,
    pub request_samples: u64,
    pub request_recorded: u64,
    /// Open loop: requests queued, finished, and still queued when the threads stopped.
    pub dispatched: u64,
    pub finished: u64,
    pub left_queued: u64,
    /// Open loop: requests dropped in the measured window because every queue was full.
    pub dropped: u64,
}

/// An iteration's result before it becomes metrics.
pub struct Outcome {
    pub books: Books,
    pub wakeup: Histogram<u64>,
    pub request: Histogram<u64>,
    /// Requests per second, one sample per second of the measured window.
    pub rps_samples: Vec<f64>,
    /// Requests (or transfers) completed in the measured window.
    pub completed: u64,
    pub window_ns: u64,
    /// Mean scheduling delay per timeslice over the window, averaged over the message threads
    /// and over the workers (µs); `None` without /proc/<tid>/schedstat.
    pub sched_delay_usec: Option<(f64, f64)>,
}

/// Decrements the message thread's live-worker count when a worker leaves, however it leaves,
/// and posts the message thread so it notices.
struct LeaveGuard<'a> {
    slot: &'a MessageSlot,
}

impl Drop for LeaveGuard<'_> {
    fn drop(&mut self) {
        self.slot.live_workers.fetch_sub(1, Ordering::SeqCst);
        post(&self.slot.futex);
    }
}

fn pin(cpus: &[u32], setup_error: &AtomicI32) {
    if let Err(e) = sys::set_current_thread_cpus(cpus) {
        setup_error.store(e.raw_os_error().unwrap_or(-1), Ordering::SeqCst);
    }
}

fn worker_thread(shared: &Shared, config: &Config, mut local: WorkerLocal) -> WorkerLocal {
    let slot = &shared.workers[local.index];
    let _leave = LeaveGuard {
        slot: &shared.messages[local.message],
    };
    slot.tid.store(sys::current_tid(), Ordering::SeqCst);
    if let Some(cpus) = &config.worker_cpus {
        pin(cpus, &slot.setup_error);
    }
    shared.ready.fetch_add(1, Ordering::SeqCst);
    shared.wait_at_gate();
    match config.mode {
        Mode::OpenLoop { .. } => open_loop_worker(shared, config, &mut local),
        _ => closed_loop_worker(shared, config, &mut local),
    }
    local
}

fn matrices(m: &mut Option<ZeroPageWords>) -> &mut [u64] {
    m.as_mut().map_or(&mut [], ZeroPageWords::as_mut_slice)
}

fn locks(shared: &Shared) -> Option<&[CpuLock]> {
    (!shared.locks.is_empty()).then_some(&shared.locks[..])
}

fn closed_loop_worker(shared: &Shared, config: &Config, local: &mut WorkerLocal) {
    let index = local.index;
    let slot = &shared.workers[index];
    let message = &shared.messages[local.message];
    let buffer = shared.buffers.get(index);
    let mut completed = 0u64;
    let mut first_round = true;
    loop {
        if shared.stopping() {
            break;
        }
        if let Some(buffer) = buffer {
            // Send our bytes; from the second round on, check the message thread's arrived.
            let expect = (!first_round).then_some(1);
            if !buffer.fill(expect, 2) {
                local.verify_failures += 1;
            }
            first_round = false;
        }
        slot.futex.store(BLOCKED, Ordering::SeqCst);
        message.list.push(index, &slot.next);
        local.posts += 1;
        post(&message.futex);
        wait(&slot.futex);
        let woke = note_wake(shared, slot, local);
        if buffer.is_some() {
            if shared.measuring() {
                completed += 1;
                slot.completed.store(completed, Ordering::Relaxed);
            }
            continue;
        }
        let done = serve_request(shared, config, local);
        if shared.measuring() {
            record(&mut local.request, done.saturating_sub(woke));
            local.request_samples += 1;
            completed += 1;
            slot.completed.store(completed, Ordering::Relaxed);
        }
    }
}

/// A worker just woke: counts the wake and, while measuring, records its latency from the stamp
/// the waker left; returns when it woke.
#[inline(always)]
fn note_wake(shared: &Shared, slot: &WorkerSlot, local: &mut WorkerLocal) -> u64 {
    let woke = sys::monotonic_ns();
    local.wakes_seen += 1;
    if shared.measuring() {
        let stamp = slot.wake_stamp_ns.load(Ordering::Relaxed);
        record(&mut local.wakeup, woke.saturating_sub(stamp));
        local.wakeup_samples += 1;
    }
    woke
}

/// One request as schbench serves it: its simulated network wait, then the math; returns when it
/// was done.
#[inline]
fn serve_request(shared: &Shared, config: &Config, local: &mut WorkerLocal) -> u64 {
    if config.sleep_ns > 0 {
        sys::sleep_ns(config.sleep_ns);
    }
    do_work(
        matrices(&mut local.matrices),
        config.matrix_n,
        config.operations,
        locks(shared),
        &shared.stop,
    );
    sys::monotonic_ns()
}

fn open_loop_worker(shared: &Shared, config: &Config, local: &mut WorkerLocal) {
    let slot = &shared.workers[local.index];
    let queue = &shared.queues[local.index];
    let mut completed = 0u64;
    slot.futex.store(RUNNING, Ordering::SeqCst);
    loop {
        // Once stopping, what is left stays queued; the books count it after the join.
        while !shared.stopping() {
            let Some(arrival) = queue.pop() else { break };
            let done = serve_request(shared, config, local);
            local.finished += 1;
            if shared.measuring() {
                record(&mut local.request, done.saturating_sub(arrival));
                local.request_samples += 1;
                completed += 1;
                slot.completed.store(completed, Ordering::Relaxed);
            }
        }
        if shared.stopping() {
            break;
        }
        // Sleep only if the queue is still empty after saying so: a dispatcher that queues a
        // request and sees BLOCKED stamps and wakes us.
        slot.futex.store(BLOCKED, Ordering::SeqCst);
        // Pairs with the dispatcher's fence: either it sees BLOCKED and wakes us, or we see its
        // request (the store-buffer pattern needs a full fence on both sides).
        fence(Ordering::SeqCst);
        if !queue.is_empty() || shared.stopping() {
            slot.futex.store(RUNNING, Ordering::SeqCst);
            continue;
        }
        wait(&slot.futex);
        slot.futex.store(RUNNING, Ordering::SeqCst);
        note_wake(shared, slot, local);
    }
}

/// Wakes every worker on the message thread's list, stamping the time just before each wake.
fn wake_all(shared: &Shared, message: &MessageSlot, local: &mut MessageLocal) {
    let mut word = message.list.take();
    while let Some(index) = WakeList::first(word) {
        let worker = &shared.workers[index];
        // Read the link before the wake: once woken, the worker may push itself again.
        word = worker.next.load(Ordering::Relaxed);
        if let Some(buffer) = shared.buffers.get(index) {
            if !buffer.fill(Some(2), 1) {
                local.verify_failures += 1;
            }
        }
        worker
            .wake_stamp_ns
            .store(sys::monotonic_ns(), Ordering::Relaxed);
        post(&worker.futex);
        local.wakes_sent += 1;
    }
}

/// If a message thread unwinds, it still wakes its workers until they have all left, so the
/// iteration can stop and join them instead of hanging.
struct DrainOnPanic<'a> {
    shared: &'a Shared,
    message: &'a MessageSlot,
}

impl Drop for DrainOnPanic<'_> {
    fn drop(&mut self) {
        if !std::thread::panicking() {
            return;
        }
        self.shared.stop.store(true, Ordering::SeqCst);
        let mut scratch = MessageLocal::default();
        loop {
            self.message.futex.store(BLOCKED, Ordering::SeqCst);
            wake_all(self.shared, self.message, &mut scratch);
            if self.message.live_workers.load(Ordering::SeqCst) == 0 {
                break;
            }
            wait(&self.message.futex);
        }
    }
}

fn message_thread(shared: &Shared, config: &Config, index: usize) -> MessageLocal {
    let message = &shared.messages[index];
    let _drain = DrainOnPanic { shared, message };
    message.tid.store(sys::current_tid(), Ordering::SeqCst);
    if let Some(cpus) = &config.message_cpus {
        pin(&[cpus[index % cpus.len()]], &message.setup_error);
    }
    shared.ready.fetch_add(1, Ordering::SeqCst);
    shared.wait_at_gate();
    let mut local = MessageLocal::default();
    match config.mode {
        Mode::OpenLoop { rate } => dispatcher(shared, config, index, rate, &mut local),
        _ => loop {
            message.futex.store(BLOCKED, Ordering::SeqCst);
            wake_all(shared, message, &mut local);
            if message.live_workers.load(Ordering::SeqCst) == 0 {
                break;
            }
            wait(&message.futex);
        },
    }
    local
}

/// Open loop: request j (over all message threads) arrives at start + j / rate; message thread
/// m dispatches the requests with j ≡ m (mod message threads) round-robin to its workers. A
/// dispatcher that falls behind catches up in a burst, so arrivals keep their schedule.
fn dispatcher(shared: &Shared, config: &Config, index: usize, rate: u64, local: &mut MessageLocal) {
    let message = &shared.messages[index];
    let start = shared.start_ns.load(Ordering::SeqCst);
    let threads = config.message_threads as u128;
    let arrival = |k: u64| -> u64 {
        let j = u128::from(k) * threads + index as u128;
        start + (j * u128::from(NSEC_PER_SEC) / u128::from(rate)) as u64
    };
    let per = config.workers_per_message;
    let first_worker = index * per;
    let mut next_request = 0u64;
    let mut next_worker = 0usize;
    loop {
        if shared.stopping() {
            break;
        }
        let now = sys::monotonic_ns();
        while arrival(next_request) <= now && !shared.stopping() {
            let at = arrival(next_request);
            next_request += 1;
            let mut placed = false;
            for attempt in 0..per {
                let w = (next_worker + attempt) % per;
                let worker = first_worker + w;
                if shared.queues[worker].push(at) {
                    next_worker = (w + 1) % per;
                    placed = true;
                    // Pairs with the worker's fence before it decides to sleep.
                    fence(Ordering::SeqCst);
                    let slot = &shared.workers[worker];
                    if slot.futex.load(Ordering::SeqCst) == BLOCKED {
                        slot.wake_stamp_ns
                            .store(sys::monotonic_ns(), Ordering::Relaxed);
                        post(&slot.futex);
                    }
                    break;
                }
            }
            if placed {
                local.dispatched += 1;
            } else if shared.measuring() {
                local.dropped += 1;
            }
        }
        message.futex.store(BLOCKED, Ordering::SeqCst);
        if shared.stopping() {
            break;
        }
        let now = sys::monotonic_ns();
        let next = arrival(next_request);
        if next > now {
            wait_timeout(&message.futex, next - now);
        }
    }
}

/// The iteration's threads. Dropping it stops and joins every one of them, so no error path or
/// interruption leaves a thread behind.
struct Crew {
    shared: Arc<Shared>,
    config: Arc<Config>,
    workers: Vec<JoinHandle<WorkerLocal>>,
    messages: Vec<JoinHandle<MessageLocal>>,
}

impl Crew {
    fn spawn_worker(&mut self, local: WorkerLocal) -> Result<()> {
        let shared = Arc::clone(&self.shared);
        let config = Arc::clone(&self.config);
        let name = format!("wakeup-wk-{}", local.index);
        let handle = spawn(name, move || worker_thread(&shared, &config, local))?;
        self.workers.push(handle);
        Ok(())
    }

    fn spawn_message(&mut self, index: usize) -> Result<()> {
        let shared = Arc::clone(&self.shared);
        let config = Arc::clone(&self.config);
        let handle = spawn(format!("wakeup-msg-{index}"), move || {
            message_thread(&shared, &config, index)
        })?;
        self.messages.push(handle);
        Ok(())
    }

    /// Waits (untimed) until every thread is parked at the gate, watching for signals.
    fn wait_ready(&mut self) -> Result<()> {
        let expected = (self.workers.len() + self.messages.len()) as u32;
        while self.shared.ready.load(Ordering::SeqCst) < expected {
            self.check_stop()?;
            let all = self.workers.iter().map(JoinHandle::is_finished);
            if all
                .chain(self.messages.iter().map(JoinHandle::is_finished))
                .any(|finished| finished)
            {
                return Err(Error::failed("a wakeup thread ended before the start"));
            }
            sys::sleep_interruptible_ns(READY_POLL_NS);
        }
        let failed_pin = |what: &str, i: usize, errno: i32, cpus: &Option<Vec<u32>>| {
            Error::failed(format!(
                "cannot pin {what} {i} to CPUs {}: {}",
                cpus.as_ref()
                    .map(|c| crate::cpu_list::CpuList::from(c.clone()).to_string())
                    .unwrap_or_default(),
                std::io::Error::from_raw_os_error(errno)
            ))
        };
        for (i, w) in self.shared.workers.iter().enumerate() {
            let errno = w.setup_error.load(Ordering::SeqCst);
            if errno != 0 {
                return Err(failed_pin("worker", i, errno, &self.config.worker_cpus));
            }
        }
        for (i, m) in self.shared.messages.iter().enumerate() {
            let errno = m.setup_error.load(Ordering::SeqCst);
            if errno != 0 {
                return Err(failed_pin(
                    "message thread",
                    i,
                    errno,
                    &self.config.message_cpus,
                ));
            }
        }
        Ok(())
    }

    fn open_gate(&self) {
        self.shared.gate.store(1, Ordering::Release);
        let _ = sys::futex_wake(&self.shared.gate, i32::MAX as u32);
    }

    fn signal_stop(&self) {
        self.shared.stop.store(true, Ordering::SeqCst);
        self.open_gate();
        for m in self.shared.messages.iter() {
            post(&m.futex);
        }
        if matches!(self.config.mode, Mode::OpenLoop { .. }) {
            for w in self.shared.workers.iter() {
                post(&w.futex);
            }
        }
    }

    fn all_finished(&self) -> bool {
        self.messages.iter().all(JoinHandle::is_finished)
            && self.workers.iter().all(JoinHandle::is_finished)
    }

    /// Sleeps until `deadline_ns`, or until the run or the iteration must stop.
    fn sleep_until(&mut self, deadline_ns: u64) -> Result<()> {
        loop {
            self.check_stop()?;
            let now = sys::monotonic_ns();
            if now >= deadline_ns {
                return Ok(());
            }
            sys::sleep_interruptible_ns(deadline_ns - now);
        }
    }

    /// A stop signal ends the run; an expired deadline ends the iteration with the threads that
    /// had not finished named, after they were told to stop and given the grace period.
    fn check_stop(&mut self) -> Result<()> {
        match crate::error::check_stop() {
            Err(Error::TimedOut(_)) => Err(self.stop_unfinished()),
            other => other,
        }
    }

    fn stop_unfinished(&mut self) -> Error {
        let name = |what: &str, i: usize, tid: &AtomicI32| {
            (
                format!("wakeup {what} {i}"),
                Probe::Thread(tid.load(Ordering::SeqCst)),
            )
        };
        let mut unfinished: Vec<(String, Probe)> = Vec::new();
        for (i, handle) in self.messages.iter().enumerate() {
            if !handle.is_finished() {
                unfinished.push(name("message thread", i, &self.shared.messages[i].tid));
            }
        }
        for (i, handle) in self.workers.iter().enumerate() {
            if !handle.is_finished() {
                unfinished.push(name("worker", i, &self.shared.workers[i].tid));
            }
        }
        let total = self.messages.len() + self.workers.len();
        let report = tasks::describe_unfinished(&unfinished, total);
        self.signal_stop();
        let left = self.wait_finished_for(tasks::GRACE_NS);
        match left {
            0 => Error::TimedOut(format!("{report}; they stopped when told to")),
            n => Error::TimedOut(format!(
                "{report}; {} still running {} s after being told to stop, and threads cannot \
                 be killed",
                tasks::threads(n),
                tasks::GRACE_NS / NSEC_PER_SEC
            )),
        }
    }

    /// Waits up to `ns` for every thread to return; how many have not.
    fn wait_finished_for(&self, ns: u64) -> usize {
        let until = sys::monotonic_ns().saturating_add(ns);
        while !self.all_finished() && sys::monotonic_ns() < until {
            sys::sleep_interruptible_ns(READY_POLL_NS);
        }
        self.messages.iter().filter(|h| !h.is_finished()).count()
            + self.workers.iter().filter(|h| !h.is_finished()).count()
    }

    /// Stops and joins every thread (message threads first: once they are gone nothing more is
    /// queued or woken), handing back their state. Joins only threads that have returned, so a
    /// stuck one ends the iteration at its deadline instead of hanging it.
    fn finish(mut self) -> Result<(Vec<WorkerLocal>, Vec<MessageLocal>)> {
        self.signal_stop();
        while !self.all_finished() {
            self.check_stop()?;
            sys::sleep_interruptible_ns(READY_POLL_NS);
        }
        let messages: Vec<_> = self.messages.drain(..).map(JoinHandle::join).collect();
        let workers: Vec<_> = self.workers.drain(..).map(JoinHandle::join).collect();
        let panicked = || Error::failed("a wakeup thread panicked");
        let messages = messages
            .into_iter()
            .collect::<std::result::Result<Vec<_>, _>>()
            .map_err(|_| panicked())?;
        let workers = workers
            .into_iter()
            .collect::<std::result::Result<Vec<_>, _>>()
            .map_err(|_| panicked())?;
        Ok((workers, messages))
    }
}

impl Drop for Crew {
    /// On every error path: stop the threads and join the ones that return within the grace
    /// period; any other is left running (dropping its handle detaches it) rather than hanging the
    /// run, and the runner sees it in the count of live workload threads.
    fn drop(&mut self) {
        if self.workers.is_empty() && self.messages.is_empty() {
            return;
        }
        self.signal_stop();
        self.wait_finished_for(tasks::GRACE_NS);
        for handle in self.messages.drain(..) {
            if handle.is_finished() {
                let _ = handle.join();
            }
        }
        for handle in self.workers.drain(..) {
            if handle.is_finished() {
                let _ = handle.join();
            }
        }
    }
}

fn spawn<T: Send + 'static>(
    name: String,
    body: impl FnOnce() -> T + Send + 'static,
) -> Result<JoinHandle<T>> {
    let counted = LiveThread::enter();
    sys::with_interrupts_blocked(|| {
        std::thread::Builder::new()
            .name(name)
            .stack_size(THREAD_STACK_BYTES)
            .spawn(move || {
                let _counted = counted;
                body()
            })
    })
    .map_err(|e| Error::failed(format!("cannot start a wakeup thread: {e}")))
}

/// The threads' schedstat files, opened before the window and read at both of its ends.
struct SchedStats {
    message_files: Vec<sys::OwnedFd>,
    worker_files: Vec<sys::OwnedFd>,
}

impl SchedStats {
    fn open(shared: &Shared) -> Option<Self> {
        let open = |tid: &AtomicI32| sys::open_thread_schedstat(tid.load(Ordering::SeqCst)).ok();
        Some(SchedStats {
            message_files: shared
                .messages
                .iter()
                .map(|m| open(&m.tid))
                .collect::<Option<_>>()?,
            worker_files: shared
                .workers
                .iter()
                .map(|w| open(&w.tid))
                .collect::<Option<_>>()?,
        })
    }

    /// Reads every file into `into` (preallocated: no allocation here).
    fn read(&self, into: &mut Vec<sys::SchedStat>) -> bool {
        into.clear();
        for fd in self.message_files.iter().chain(&self.worker_files) {
            match sys::read_schedstat(fd.as_fd()) {
                Ok(s) => into.push(s),
                Err(_) => return false,
            }
        }
        true
    }

    /// Mean over threads of each thread's (Δ runqueue delay / Δ timeslices), in µs, for the
    /// message threads and the workers.
    fn delays(&self, before: &[sys::SchedStat], after: &[sys::SchedStat]) -> (f64, f64) {
        let per_thread = |b: &sys::SchedStat, a: &sys::SchedStat| {
            let slices = a.timeslices.saturating_sub(b.timeslices);
            (slices > 0).then(|| a.delay_ns.saturating_sub(b.delay_ns) as f64 / slices as f64)
        };
        let mean_usec = |range: std::ops::Range<usize>| {
            let values: Vec<f64> = range
                .filter_map(|i| per_thread(&before[i], &after[i]))
                .collect();
            if values.is_empty() {
                0.0
            } else {
                values.iter().sum::<f64>() / values.len() as f64 / 1_000.0
            }
        };
        let m = self.message_files.len();
        (mean_usec(0..m), mean_usec(m..before.len()))
    }
}

/// Runs one iteration.
pub fn run(config: &Config) -> Result<Outcome> {
    let shared = Arc::new(Shared::new(config));
    let config = Arc::new(config.clone());
    // Every worker's histograms and matrices exist before any thread starts.
    let locals = (0..config.total_workers())
        .map(|i| WorkerLocal::new(&config, i))
        .collect::<Result<Vec<_>>>()?;
    let mut crew = Crew {
        shared: Arc::clone(&shared),
        config: Arc::clone(&config),
        workers: Vec::with_capacity(locals.len()),
        messages: Vec::with_capacity(config.message_threads),
    };
    // Workers first: if a message thread cannot start, its workers are still parked at the gate
    // and leave as soon as the crew is stopped.
    for local in locals {
        crew.spawn_worker(local)?;
    }
    for index in 0..config.message_threads {
        crew.spawn_message(index)?;
    }
    crew.wait_ready()?;
    let schedstats = SchedStats::open(&shared);
    let thread_count = config.message_threads + config.total_workers();
    let mut stats_before = Vec::with_capacity(thread_count);
    let mut stats_after = Vec::with_capacity(thread_count);
    let mut rps_samples = Vec::with_capacity(config.runtime_sec as usize + 1);

    // The timed part: nothing below allocates until the threads are stopped.
    let gate_ns = sys::monotonic_ns();
    shared.start_ns.store(gate_ns, Ordering::SeqCst);
    if config.warmup_sec == 0 {
        shared.phase.store(PHASE_MEASURE, Ordering::SeqCst);
    }
    crew.open_gate();
    if config.warmup_sec > 0 {
        crew.sleep_until(gate_ns + config.warmup_sec * NSEC_PER_SEC)?;
        shared.phase.store(PHASE_MEASURE, Ordering::SeqCst);
    }
    let window_start = sys::monotonic_ns();
    let have_before = schedstats
        .as_ref()
        .is_some_and(|s| s.read(&mut stats_before));
    let (mut last_ns, mut last_done) = (window_start, 0u64);
    for second in 1..=config.runtime_sec {
        crew.sleep_until(window_start + second * NSEC_PER_SEC)?;
        let now = sys::monotonic_ns();
        let done = shared.completed_total();
        let elapsed = now.saturating_sub(last_ns).max(1);
        rps_samples.push((done - last_done) as f64 * NSEC_PER_SEC as f64 / elapsed as f64);
        (last_ns, last_done) = (now, done);
    }
    shared.phase.store(PHASE_DONE, Ordering::SeqCst);
    let window_end = last_ns;
    let completed = last_done;
    let have_after = schedstats
        .as_ref()
        .is_some_and(|s| s.read(&mut stats_after));

    let (workers, messages) = crew.finish()?;
    let sched_delay_usec = match (&schedstats, have_before && have_after) {
        (Some(s), true) => Some(s.delays(&stats_before, &stats_after)),
        _ => None,
    };
    let left_queued = shared.queues.iter().map(RequestQueue::len).sum();
    assemble(
        &config,
        workers,
        messages,
        left_queued,
        rps_samples,
        completed,
        window_end - window_start,
        sched_delay_usec,
    )
}

#[allow(clippy::too_many_arguments)]
fn assemble(
    config: &Config,
    workers: Vec<WorkerLocal>,
    messages: Vec<MessageLocal>,
    left_queued: u64,
    rps_samples: Vec<f64>,
    completed: u64,
    window_ns: u64,
    sched_delay_usec: Option<(f64, f64)>,
) -> Result<Outcome> {
    let mut books = Books {
        left_queued,
        ..Books::default()
    };
    let mut wakeup = latency::new_latency_histogram();
    let mut request = latency::new_latency_histogram();
    let mut verify_failures = 0;
    for w in &workers {
        books.posts += w.posts;
        books.wakes_seen += w.wakes_seen;
        books.wakeup_samples += w.wakeup_samples;
        books.request_samples += w.request_samples;
        books.finished += w.finished;
        verify_failures += w.verify_failures;
        wakeup
            .add(&w.wakeup)
            .map_err(|e| Error::failed(format!("cannot merge histograms: {e:?}")))?;
        request
            .add(&w.request)
            .map_err(|e| Error::failed(format!("cannot merge histograms: {e:?}")))?;
    }
    for m in &messages {
        books.wakes_sent += m.wakes_sent;
        books.dispatched += m.dispatched;
        books.dropped += m.dropped;
        verify_failures += m.verify_failures;
    }
    books.wakeup_recorded = wakeup.len();
    books.request_recorded = request.len();
    check_books(config, &books, verify_failures)?;
    Ok(Outcome {
        books,
        wakeup,
        request,
        rps_samples,
        completed,
        window_ns,
        sched_delay_usec,
    })
}

/// Every post must have been answered by exactly one wake and every wake seen exactly once;
/// every queued request finished or still queued; every sample in the histograms.
fn check_books(config: &Config, books: &Books, verify_failures: u64) -> Result<()> {
    if verify_failures > 0 {
        return Err(Error::failed(format!(
            "pipe transfer check failed {verify_failures} times: a side did not see the other's bytes"
        )));
    }
    match config.mode {
        Mode::OpenLoop { .. } => {
            if books.dispatched != books.finished + books.left_queued {
                return Err(Error::failed(format!(
                    "open-loop books do not balance: {} requests queued, {} finished, {} left",
                    books.dispatched, books.finished, books.left_queued
                )));
            }
        }
        _ => {
            if books.posts != books.wakes_sent || books.wakes_sent != books.wakes_seen {
                return Err(Error::failed(format!(
                    "wakeup books do not balance: {} posts, {} wakes sent, {} wakes seen",
                    books.posts, books.wakes_sent, books.wakes_seen
                )));
            }
        }
    }
    if books.wakeup_samples != books.wakeup_recorded
        || books.request_samples != books.request_recorded
    {
        return Err(Error::failed(format!(
            "samples lost: {} wakeups counted, {} recorded; {} requests counted, {} recorded",
            books.wakeup_samples,
            books.wakeup_recorded,
            books.request_samples,
            books.request_recorded
        )));
    }
    Ok(())
}

/// Turns an outcome into the iteration's metrics and histogram attachments.
pub fn output(config: &Config, outcome: &Outcome) -> IterationOutput {
    use super::metrics as m;
    let mut measurements: Vec<Measurement> = Vec::new();
    let usec = |ns: u64| ns as f64 / 1_000.0;
    let quantiles = |h: &Histogram<u64>, defs: [crate::metric::MetricDef; 5], out: &mut Vec<_>| {
        let rows = latency::percentile_rows(h, &[500, 900, 990, 999]);
        if rows.len() == 4 {
            for (def, row) in defs.iter().zip(&rows) {
                out.push(def.value(usec(row.value)));
            }
            out.push(defs[4].value(usec(h.max())));
        }
    };
    quantiles(&outcome.wakeup, m::WAKEUP_QUANTILES, &mut measurements);
    let window_sec = outcome.window_ns.max(1) as f64 / NSEC_PER_SEC as f64;
    match config.mode {
        Mode::Pipe { bytes } => {
            let ops = outcome.completed as f64 / window_sec;
            measurements.push(m::OPS_PER_SEC.value(ops));
            measurements.push(m::WORKER_OPS_PER_SEC.value(ops / config.total_workers() as f64));
            measurements.push(m::MIB_PER_SEC.value(ops * bytes as f64 / (1u64 << 20) as f64));
            measurements.push(m::WAKEUP_SAMPLES_COUNT.value(outcome.books.wakeup_samples as f64));
        }
        Mode::Request | Mode::OpenLoop { .. } => {
            quantiles(&outcome.request, m::REQUEST_QUANTILES, &mut measurements);
            let mut sorted = outcome.rps_samples.clone();
            sorted.sort_by(f64::total_cmp);
            if let Some(p50) = latency::sample_percentile(&sorted, 500) {
                measurements.push(m::REQUESTS_P50_PER_SEC.value(p50));
            }
            measurements.push(m::REQUESTS_AVG_PER_SEC.value(outcome.completed as f64 / window_sec));
            measurements.push(m::WAKEUP_SAMPLES_COUNT.value(outcome.books.wakeup_samples as f64));
            measurements.push(m::REQUEST_SAMPLES_COUNT.value(outcome.books.request_samples as f64));
            if matches!(config.mode, Mode::OpenLoop { .. }) {
                measurements.push(m::REQUESTS_DROPPED_COUNT.value(outcome.books.dropped as f64));
            }
        }
    }
    if let Some((message, worker)) = outcome.sched_delay_usec {
        measurements.push(m::MESSAGE_SCHED_DELAY_USEC.value(message));
        measurements.push(m::WORKER_SCHED_DELAY_USEC.value(worker));
    }

    let mut attachments = vec![latency::attachment(
        latency::WAKEUP_ATTACHMENT,
        &outcome.wakeup,
    )];
    if config.does_math() {
        attachments.push(latency::attachment(
            latency::REQUEST_ATTACHMENT,
            &outcome.request,
        ));
        let mut rps = latency::new_rps_histogram();
        for &sample in &outcome.rps_samples {
            record(&mut rps, sample.round() as u64);
        }
        attachments.push(latency::attachment(latency::RPS_ATTACHMENT, &rps));
    }
    IterationOutput {
        measurements,
        attachments,
    }
}
