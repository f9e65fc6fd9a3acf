//! Starting a workload's tasks as processes or threads behind hackbench's start barrier: every
//! task reports ready on a pipe and waits in poll() on a wake pipe; the clock starts when all are
//! ready, one byte wakes them all, and the clock stops when the last one has exited and been
//! reaped or joined, as hackbench's window includes exit and wait.
use std::sync::Arc;
use std::thread::JoinHandle;

use serde::{Deserialize, Serialize};

use crate::sys::{self, task_code, AsFd, ChildExit, ChildSet, OwnedFd, TaskCode};
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
                // SAFETY: task bodies only make system calls on descriptors they own and use
                // buffers allocated before the fork.
                let pid = unsafe { self.children.spawn(run) }
                    .map_err(|e| spawn_error(&e, "fork", self.names.len()))?;
                self.pids.push(pid);
            }
            TaskMode::Threads => {
                let barrier = Arc::clone(&self.barrier);
                let spawned = sys::with_interrupts_blocked(|| {
                    std::thread::Builder::new()
                        .name(name.chars().take(15).collect())
                        .stack_size(THREAD_STACK_BYTES)
                        .spawn(move || {
                            let code = std::panic::catch_unwind(std::panic::AssertUnwindSafe(run))
                                .unwrap_or(task_code::PANICKED);
                            let _ = sys::write_full(barrier.done_write.as_fd(), &[code]);
                        })
                });
                let handle =
                    spawned.map_err(|e| spawn_error(&e, "thread creation", self.names.len()))?;
                self.threads.push(handle);
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
            check_interrupt()?;
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
                None => check_interrupt()?,
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
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => check_interrupt()?,
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

fn check_interrupt() -> Result<()> {
    match sys::interrupt_signal() {
        Some(signal) => Err(Error::Interrupted(signal)),
        None => Ok(()),
    }
}

fn describe_exit(exit: ChildExit) -> String {
    match exit {
        ChildExit::Code(code) => task_code::describe(code.clamp(0, 255) as u8),
        ChildExit::Signal(signal) => format!("killed by signal {signal}"),
    }
}

/// fork and thread creation fail with EAGAIN at a process or thread limit; name the limits.
fn spawn_error(e: &std::io::Error, what: &str, already: usize) -> Error {
    if e.raw_os_error() == Some(libc::EAGAIN) || e.kind() == std::io::ErrorKind::WouldBlock {
        let nproc = sys::process_count_limit();
        let limit = nproc
            .soft
            .map_or("unlimited".to_string(), |v| v.to_string());
        Error::failed(format!(
            "{what} failed after {already} tasks: {e} — a process/thread limit was hit \
             (RLIMIT_NPROC soft = {limit}; see also /proc/sys/kernel/threads-max and pid_max)"
        ))
    } else {
        Error::failed(format!("{what} failed after {already} tasks: {e}"))
    }
}
