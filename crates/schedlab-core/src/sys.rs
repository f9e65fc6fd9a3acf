//! The one audited place where schedlab talks to the kernel: clocks, pipes and sockets, fork and
//! reaping, affinity, resource usage and limits, signal handling and perf software counters.
//! rustix first; raw libc only where rustix has no call (fork, sigaction, getrusage, prctl).
use std::io;
use std::sync::atomic::{AtomicI32, Ordering};

use rustix::event::{PollFd, PollFlags};
pub use rustix::fd::{AsFd, AsRawFd, BorrowedFd, OwnedFd, RawFd};
use rustix::io::Errno;

/// CLOCK_MONOTONIC in nanoseconds (rustix reads it through the vDSO, whatever the libc).
pub fn monotonic_ns() -> u64 {
    let ts = rustix::time::clock_gettime(rustix::time::ClockId::Monotonic);
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// Wall-clock time in nanoseconds since the Unix epoch, for run start and end stamps.
pub fn realtime_ns() -> i64 {
    let ts = rustix::time::clock_gettime(rustix::time::ClockId::Realtime);
    ts.tv_sec * 1_000_000_000 + ts.tv_nsec
}

pub fn pipe() -> io::Result<(OwnedFd, OwnedFd)> {
    Ok(rustix::pipe::pipe_with(rustix::pipe::PipeFlags::CLOEXEC)?)
}

/// A connected pair of AF_UNIX stream sockets, as hackbench uses by default.
pub fn unix_stream_pair() -> io::Result<(OwnedFd, OwnedFd)> {
    use rustix::net::{socketpair, AddressFamily, SocketFlags, SocketType};
    Ok(socketpair(
        AddressFamily::UNIX,
        SocketType::STREAM,
        SocketFlags::CLOEXEC,
        None,
    )?)
}

/// Reads exactly `buf.len()` bytes; `Ok(false)` means end of stream came first.
pub fn read_full(fd: BorrowedFd<'_>, buf: &mut [u8]) -> io::Result<bool> {
    let mut done = 0;
    while done < buf.len() {
        match rustix::io::read(fd, &mut buf[done..]) {
            Ok(0) => return Ok(false),
            Ok(n) => done += n,
            Err(Errno::INTR) => continue,
            Err(e) => return Err(e.into()),
        }
    }
    Ok(true)
}

/// Writes all of `buf`, finishing short writes as hackbench does.
pub fn write_full(fd: BorrowedFd<'_>, buf: &[u8]) -> io::Result<()> {
    let mut done = 0;
    while done < buf.len() {
        match rustix::io::write(fd, &buf[done..]) {
            Ok(n) => done += n,
            Err(Errno::INTR) => continue,
            Err(e) => return Err(e.into()),
        }
    }
    Ok(())
}

/// One read that reports EINTR instead of retrying, so a waiting main thread can notice signals.
pub fn read_interruptible(fd: BorrowedFd<'_>, buf: &mut [u8]) -> io::Result<usize> {
    Ok(rustix::io::read(fd, buf)?)
}

/// Waits until `fd` is readable or `timeout_ms` passes; `Ok(false)` on timeout or EINTR.
pub fn poll_readable(fd: BorrowedFd<'_>, timeout_ms: Option<u32>) -> io::Result<bool> {
    let mut fds = [PollFd::new(&fd, PollFlags::IN)];
    let timeout = timeout_ms.map(|ms| rustix::time::Timespec {
        tv_sec: i64::from(ms / 1000),
        tv_nsec: i64::from(ms % 1000) * 1_000_000,
    });
    match rustix::event::poll(&mut fds, timeout.as_ref()) {
        Ok(n) => Ok(n > 0),
        Err(Errno::INTR) => Ok(false),
        Err(e) => Err(e.into()),
    }
}

/// Pins the calling thread to one CPU.
pub fn pin_current_thread(cpu: u32) -> io::Result<()> {
    let mut set = rustix::thread::CpuSet::new();
    set.set(cpu as usize);
    Ok(rustix::thread::sched_setaffinity(None, &set)?)
}

/// The CPUs the calling thread may run on.
pub fn allowed_cpus() -> io::Result<Vec<u32>> {
    let set = rustix::thread::sched_getaffinity(None)?;
    Ok((0..rustix::thread::CpuSet::MAX_CPU)
        .filter(|&cpu| set.is_set(cpu))
        .map(|cpu| cpu as u32)
        .collect())
}

/// The parts of `struct rusage` schedlab reports, with times in nanoseconds.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Usage {
    pub user_ns: u64,
    pub sys_ns: u64,
    pub voluntary_csw: u64,
    pub involuntary_csw: u64,
}

impl Usage {
    pub fn saturating_sub(self, earlier: Usage) -> Usage {
        Usage {
            user_ns: self.user_ns.saturating_sub(earlier.user_ns),
            sys_ns: self.sys_ns.saturating_sub(earlier.sys_ns),
            voluntary_csw: self.voluntary_csw.saturating_sub(earlier.voluntary_csw),
            involuntary_csw: self.involuntary_csw.saturating_sub(earlier.involuntary_csw),
        }
    }
}

impl std::ops::Add for Usage {
    type Output = Usage;

    fn add(self, other: Usage) -> Usage {
        Usage {
            user_ns: self.user_ns + other.user_ns,
            sys_ns: self.sys_ns + other.sys_ns,
            voluntary_csw: self.voluntary_csw + other.voluntary_csw,
            involuntary_csw: self.involuntary_csw + other.involuntary_csw,
        }
    }
}

/// Whose resource usage to read.
#[derive(Debug, Clone, Copy)]
pub enum UsageOf {
    /// This process, all its threads, including ones that have exited.
    Process,
    /// The calling thread only.
    CurrentThread,
    /// Child processes that have been waited for.
    ReapedChildren,
}

pub fn usage(of: UsageOf) -> Usage {
    let who = match of {
        UsageOf::Process => libc::RUSAGE_SELF,
        UsageOf::CurrentThread => libc::RUSAGE_THREAD,
        UsageOf::ReapedChildren => libc::RUSAGE_CHILDREN,
    };
    // SAFETY: getrusage only writes the struct we pass; a zeroed rusage is a valid value.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: `who` is one of the three valid constants and `ru` is a valid pointer.
    let rc = unsafe { libc::getrusage(who, &mut ru) };
    if rc != 0 {
        return Usage::default();
    }
    let tv_ns = |tv: libc::timeval| tv.tv_sec as u64 * 1_000_000_000 + tv.tv_usec as u64 * 1_000;
    Usage {
        user_ns: tv_ns(ru.ru_utime),
        sys_ns: tv_ns(ru.ru_stime),
        voluntary_csw: ru.ru_nvcsw as u64,
        involuntary_csw: ru.ru_nivcsw as u64,
    }
}

/// A resource limit: the soft value in force and the hard ceiling (`None` is unlimited).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limit {
    pub soft: Option<u64>,
    pub hard: Option<u64>,
}

pub fn open_files_limit() -> Limit {
    let l = rustix::process::getrlimit(rustix::process::Resource::Nofile);
    Limit {
        soft: l.current,
        hard: l.maximum,
    }
}

pub fn process_count_limit() -> Limit {
    let l = rustix::process::getrlimit(rustix::process::Resource::Nproc);
    Limit {
        soft: l.current,
        hard: l.maximum,
    }
}

/// Raises the soft open-files limit to the hard limit, as big hackbench runs need; returns the new
/// soft limit.
pub fn raise_open_files_limit() -> Limit {
    let current = rustix::process::getrlimit(rustix::process::Resource::Nofile);
    if current.current != current.maximum {
        let raised = rustix::process::Rlimit {
            current: current.maximum,
            maximum: current.maximum,
        };
        let _ = rustix::process::setrlimit(rustix::process::Resource::Nofile, raised);
    }
    open_files_limit()
}

pub fn effective_uid_is_root() -> bool {
    rustix::process::geteuid().is_root()
}

// ---------------------------------------------------------------------------------------------
// Processes

/// What a forked task or a worker thread reports when it ends: 0 is success; the rest name a
/// failure that the parent turns into a message (exit codes cannot carry text).
pub type TaskCode = u8;

pub mod task_code {
    use super::TaskCode;
    pub const OK: TaskCode = 0;
    /// The task saw data other than what it expected (a broken token sequence).
    pub const VERIFY_FAILED: TaskCode = 1;
    /// The stream ended before the task received all it was owed.
    pub const SHORT_COUNT: TaskCode = 2;
    /// Pinning to the requested CPU failed.
    pub const AFFINITY_FAILED: TaskCode = 3;
    /// The task panicked.
    pub const PANICKED: TaskCode = 4;
    /// The run was aborted before the start signal; the task did no work.
    pub const ABORTED: TaskCode = 5;
    /// A system call failed with errno `code - ERRNO_BASE`.
    pub const ERRNO_BASE: TaskCode = 64;

    pub fn from_io_error(e: &std::io::Error) -> TaskCode {
        let errno = e.raw_os_error().unwrap_or(0).clamp(0, 190) as u8;
        ERRNO_BASE + errno
    }

    /// A one-phrase description of a task code, for error messages.
    pub fn describe(code: TaskCode) -> String {
        match code {
            OK => "success".into(),
            VERIFY_FAILED => "received data did not match what was sent".into(),
            SHORT_COUNT => "stream ended before every message arrived (short count)".into(),
            AFFINITY_FAILED => "could not pin to the requested CPU".into(),
            PANICKED => "task panicked".into(),
            ABORTED => "aborted before start".into(),
            c if c >= ERRNO_BASE => {
                let errno = i32::from(c - ERRNO_BASE);
                format!(
                    "system call failed: {}",
                    std::io::Error::from_raw_os_error(errno)
                )
            }
            c => format!("unknown failure code {c}"),
        }
    }
}

/// How a reaped child ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChildExit {
    Code(i32),
    Signal(i32),
}

/// Children forked by one workload iteration, all in one process group of their own so they can
/// be waited for and killed as a set (and so a terminal's Ctrl-C reaches only schedlab, which
/// then cleans up). Dropping the set kills and reaps whatever is still alive, so no error path,
/// panic or interruption leaves a stray task behind.
#[derive(Debug, Default)]
pub struct ChildSet {
    group: Option<i32>,
    live: Vec<i32>,
}

impl ChildSet {
    pub fn new() -> Self {
        ChildSet::default()
    }

    /// Forks a child that runs `body` and exits with its code. The child never returns into
    /// the caller: it resets signal handling, dies with its parent, and leaves through `_exit` so
    /// no destructor or atexit handler of the parent runs twice.
    ///
    /// # Safety
    /// The caller must be single-threaded at the time of the call (the usual fork rule), and
    /// `body` must not touch state that another thread could have held locked.
    pub unsafe fn spawn(&mut self, body: impl FnOnce() -> TaskCode) -> io::Result<i32> {
        let parent = rustix::process::getpid();
        let group = self.group.unwrap_or(0);
        // SAFETY: the caller guarantees the process is single-threaded.
        let pid = unsafe { libc::fork() };
        if pid < 0 {
            return Err(io::Error::last_os_error());
        }
        if pid > 0 {
            // Set the group from both sides so neither order of scheduling leaves a window.
            // SAFETY: setpgid on our own child.
            unsafe { libc::setpgid(pid, group) };
            self.group.get_or_insert(pid);
            self.live.push(pid);
            return Ok(pid);
        }
        // SAFETY: all calls below are async-signal-safe and operate on this process only.
        unsafe {
            libc::setpgid(0, group);
            libc::signal(libc::SIGINT, libc::SIG_DFL);
            libc::signal(libc::SIGTERM, libc::SIG_DFL);
            let mut empty: libc::sigset_t = std::mem::zeroed();
            libc::sigemptyset(&mut empty);
            libc::sigprocmask(libc::SIG_SETMASK, &empty, std::ptr::null_mut());
            libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL, 0, 0, 0);
            if rustix::process::getppid() != Some(parent) {
                libc::_exit(i32::from(task_code::ABORTED));
            }
        }
        let code = std::panic::catch_unwind(std::panic::AssertUnwindSafe(body))
            .unwrap_or(task_code::PANICKED);
        // SAFETY: _exit ends the child without running the parent's destructors.
        unsafe { libc::_exit(i32::from(code)) }
    }

    pub fn live_count(&self) -> usize {
        self.live.len()
    }

    pub fn is_empty(&self) -> bool {
        self.live.is_empty()
    }

    /// Reaps one child of this set. Blocks unless `nohang`; returns `Ok(None)` when nothing was
    /// reaped (no child ready, or a signal interrupted the wait: the caller checks for that).
    pub fn reap_one(&mut self, nohang: bool) -> io::Result<Option<(i32, ChildExit)>> {
        let Some(group) = self.group.filter(|_| !self.live.is_empty()) else {
            return Ok(None);
        };
        let mut status = 0;
        let flags = if nohang { libc::WNOHANG } else { 0 };
        // SAFETY: waitpid writes only `status`.
        let pid = unsafe { libc::waitpid(-group, &mut status, flags) };
        if pid < 0 {
            let err = io::Error::last_os_error();
            return match err.raw_os_error() {
                Some(libc::EINTR) => Ok(None),
                Some(libc::ECHILD) => {
                    self.live.clear();
                    Ok(None)
                }
                _ => Err(err),
            };
        }
        if pid == 0 {
            return Ok(None);
        }
        self.live.retain(|&p| p != pid);
        let exit = if libc::WIFSIGNALED(status) {
            ChildExit::Signal(libc::WTERMSIG(status))
        } else {
            ChildExit::Code(libc::WEXITSTATUS(status))
        };
        Ok(Some((pid, exit)))
    }

    /// SIGKILLs every live child and reaps them all.
    pub fn kill_and_reap_all(&mut self) {
        for &pid in &self.live {
            // SAFETY: kill has no memory effects; pid belongs to a child we have not reaped yet.
            unsafe { libc::kill(pid, libc::SIGKILL) };
        }
        for pid in std::mem::take(&mut self.live) {
            let mut status = 0;
            loop {
                // SAFETY: waitpid writes only `status`.
                let rc = unsafe { libc::waitpid(pid, &mut status, 0) };
                if rc >= 0 || io::Error::last_os_error().raw_os_error() != Some(libc::EINTR) {
                    break;
                }
            }
        }
    }
}

impl Drop for ChildSet {
    fn drop(&mut self) {
        self.kill_and_reap_all();
    }
}

// ---------------------------------------------------------------------------------------------
// Signals

static INTERRUPT_SIGNAL: AtomicI32 = AtomicI32::new(0);

extern "C" fn record_interrupt(signal: libc::c_int) {
    INTERRUPT_SIGNAL.store(signal, Ordering::SeqCst);
}

/// Installs SIGINT and SIGTERM handlers that only record the signal. They are installed without
/// SA_RESTART on purpose: a main thread blocked in waitpid or read gets EINTR and can clean up.
pub fn install_interrupt_handlers() -> io::Result<()> {
    for signal in [libc::SIGINT, libc::SIGTERM] {
        // SAFETY: a zeroed sigaction is valid; we set the handler and an empty mask.
        let mut action: libc::sigaction = unsafe { std::mem::zeroed() };
        action.sa_sigaction = record_interrupt as *const () as usize;
        action.sa_flags = 0;
        // SAFETY: sa_mask is a valid sigset_t inside `action`.
        unsafe { libc::sigemptyset(&mut action.sa_mask) };
        // SAFETY: valid signal number and action; the old action is not needed.
        if unsafe { libc::sigaction(signal, &action, std::ptr::null_mut()) } != 0 {
            return Err(io::Error::last_os_error());
        }
    }
    Ok(())
}

/// The signal that asked schedlab to stop, if one has arrived.
pub fn interrupt_signal() -> Option<i32> {
    match INTERRUPT_SIGNAL.load(Ordering::SeqCst) {
        0 => None,
        s => Some(s),
    }
}

/// Runs `f` with SIGINT and SIGTERM blocked in the calling thread, so threads spawned inside
/// inherit the mask and the signals are delivered to the main thread, which is the one waiting.
pub fn with_interrupts_blocked<T>(f: impl FnOnce() -> T) -> T {
    // SAFETY: sigset operations on local values; pthread_sigmask affects the calling thread only.
    unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        libc::sigaddset(&mut set, libc::SIGINT);
        libc::sigaddset(&mut set, libc::SIGTERM);
        let mut old: libc::sigset_t = std::mem::zeroed();
        libc::pthread_sigmask(libc::SIG_BLOCK, &set, &mut old);
        let result = f();
        libc::pthread_sigmask(libc::SIG_SETMASK, &old, std::ptr::null_mut());
        result
    }
}

// ---------------------------------------------------------------------------------------------
// perf software counters

/// A perf software counter that follows the calling thread and every task it creates afterwards
/// (perf's `inherit`), so forked processes and spawned threads are all counted.
pub struct InheritedCounter {
    counter: perf_event::Counter,
}

impl InheritedCounter {
    /// Opens a CPU-migrations counter; `None` where perf events are unavailable (no permission,
    /// no kernel support), which callers report as "not measured" rather than failing.
    pub fn cpu_migrations() -> Option<Self> {
        let mut builder =
            perf_event::Builder::new().kind(perf_event::events::Software::CPU_MIGRATIONS);
        builder.inherit(true);
        let mut counter = builder.build().ok()?;
        counter.enable().ok()?;
        Some(InheritedCounter { counter })
    }

    pub fn read(&mut self) -> Option<u64> {
        self.counter.read().ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn monotonic_clock_advances() {
        let a = monotonic_ns();
        let b = monotonic_ns();
        assert!(b >= a);
    }

    #[test]
    fn pipe_round_trip_full_reads() {
        let (r, w) = pipe().unwrap();
        write_full(w.as_fd(), b"abcd").unwrap();
        let mut buf = [0u8; 4];
        assert!(read_full(r.as_fd(), &mut buf).unwrap());
        assert_eq!(&buf, b"abcd");
        drop(w);
        assert!(!read_full(r.as_fd(), &mut buf).unwrap());
    }

    #[test]
    fn forked_child_exit_code_is_reaped() {
        let mut children = ChildSet::new();
        // SAFETY: the child only returns a code.
        let pid = unsafe { children.spawn(|| 7) }.unwrap();
        let reaped = loop {
            if let Some(r) = children.reap_one(false).unwrap() {
                break r;
            }
        };
        assert_eq!(reaped, (pid, ChildExit::Code(7)));
        assert!(children.is_empty());
    }

    #[test]
    fn dropping_child_set_kills_children() {
        let (r, w) = pipe().unwrap();
        let pid;
        {
            let mut children = ChildSet::new();
            // SAFETY: the child only blocks in read.
            pid = unsafe {
                children.spawn(|| {
                    let mut b = [0u8; 1];
                    let _ = read_full(r.as_fd(), &mut b);
                    0
                })
            }
            .unwrap();
        }
        drop(w);
        // SAFETY: kill with signal 0 only checks existence.
        let alive = unsafe { libc::kill(pid, 0) } == 0;
        assert!(!alive, "child {pid} survived its ChildSet");
    }

    #[test]
    fn task_codes_describe_errno() {
        let e = io::Error::from_raw_os_error(libc::EAGAIN);
        let code = task_code::from_io_error(&e);
        assert!(task_code::describe(code).contains("system call failed"));
        assert!(task_code::describe(task_code::SHORT_COUNT).contains("short count"));
    }
}
