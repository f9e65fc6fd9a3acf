//! The one audited place where schedlab talks to the kernel: clocks, pipes and sockets, fork and
//! reaping, affinity, resource usage and limits, signal handling, perf software counters, and the
//! /proc and /sys files the fingerprint reads.
//! rustix first; libc where rustix has no call (fork, sigaction, getrusage, prctl) and for the
//! workloads' read/write data path, which must take the same path as the reference tools.
use std::io;
use std::sync::atomic::{AtomicBool, AtomicI32, AtomicU32, AtomicU64, Ordering};

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
///
/// The workloads' data path goes through the C library's `read`/`write`, not rustix's raw system
/// calls, on purpose: hackbench and perf bench call libc, and measured side by side here
/// (`hackbench -g 4 -l 1000`) the raw calls made every mode 15-20 % faster with the same number
/// of system calls — a difference in the call path, not in the scheduler, that would make
/// schedlab's figures incomparable with theirs.
pub fn read_full(fd: BorrowedFd<'_>, buf: &mut [u8]) -> io::Result<bool> {
    let mut done = 0;
    while done < buf.len() {
        let rest = &mut buf[done..];
        // SAFETY: `rest` is a valid, writable buffer of `rest.len()` bytes for the call.
        let n = unsafe { libc::read(fd.as_raw_fd(), rest.as_mut_ptr().cast(), rest.len()) };
        match n {
            0 => return Ok(false),
            n if n > 0 => done += n as usize,
            _ => {
                let err = io::Error::last_os_error();
                if err.kind() != io::ErrorKind::Interrupted {
                    return Err(err);
                }
            }
        }
    }
    Ok(true)
}

/// Writes all of `buf`, finishing short writes as hackbench does (through libc: see
/// [`read_full`]).
pub fn write_full(fd: BorrowedFd<'_>, buf: &[u8]) -> io::Result<()> {
    let mut done = 0;
    while done < buf.len() {
        let rest = &buf[done..];
        // SAFETY: `rest` is a valid buffer of `rest.len()` bytes for the call.
        let n = unsafe { libc::write(fd.as_raw_fd(), rest.as_ptr().cast(), rest.len()) };
        if n >= 0 {
            done += n as usize;
        } else {
            let err = io::Error::last_os_error();
            if err.kind() != io::ErrorKind::Interrupted {
                return Err(err);
            }
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
            let group = *self.group.get_or_insert(pid);
            TASK_GROUP.store(group, Ordering::SeqCst);
            self.live.push(pid);
            return Ok(pid);
        }
        // SAFETY: all calls below are async-signal-safe and operate on this process only.
        unsafe {
            libc::setpgid(0, group);
            // Handlers of the parent would only record a signal in this copy of its memory and
            // leave the task running; ignored signals stay ignored.
            let handled = HANDLED_SIGNALS.load(Ordering::SeqCst);
            for signal in 1..64 {
                if handled & (1 << signal) != 0 {
                    libc::signal(signal, libc::SIG_DFL);
                }
            }
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

    /// The children not reaped yet.
    pub fn live_pids(&self) -> &[i32] {
        &self.live
    }

    /// Stops every live child: SIGTERM with a SIGCONT (a stopped child acts on nothing until it
    /// runs again), up to `grace_ns` for them to exit, then SIGKILL; all are reaped.
    pub fn terminate_all(&mut self, grace_ns: u64) {
        for &pid in &self.live {
            // SAFETY: kill has no memory effects; pid belongs to a child we have not reaped yet.
            unsafe {
                libc::kill(pid, libc::SIGTERM);
                libc::kill(pid, libc::SIGCONT);
            }
        }
        let deadline = monotonic_ns().saturating_add(grace_ns);
        while !self.live.is_empty() && monotonic_ns() < deadline {
            match self.reap_one(true) {
                Ok(Some(_)) => continue,
                Ok(None) => sleep_ns(5_000_000),
                Err(_) => break,
            }
        }
        self.kill_and_reap_all();
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
        if let Some(group) = self.group {
            let _ = TASK_GROUP.compare_exchange(group, 0, Ordering::SeqCst, Ordering::SeqCst);
        }
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
// Threads: futexes, sleeping, CPU placement and per-thread scheduler statistics

fn timespec_of_ns(ns: u64) -> rustix::time::Timespec {
    rustix::time::Timespec {
        tv_sec: (ns / 1_000_000_000) as i64,
        tv_nsec: (ns % 1_000_000_000) as i64,
    }
}

/// FUTEX_WAIT_PRIVATE: sleeps while `word` holds `expected`; returns on a wake, a changed value,
/// a signal or the timeout (callers re-check their condition, as with any futex).
pub fn futex_wait(
    word: &std::sync::atomic::AtomicU32,
    expected: u32,
    timeout_ns: Option<u64>,
) -> io::Result<()> {
    use rustix::thread::futex;
    let timeout = timeout_ns.map(timespec_of_ns);
    match futex::wait(word, futex::Flags::PRIVATE, expected, timeout.as_ref()) {
        Ok(()) | Err(Errno::AGAIN) | Err(Errno::INTR) | Err(Errno::TIMEDOUT) => Ok(()),
        Err(e) => Err(e.into()),
    }
}

/// FUTEX_WAKE_PRIVATE: wakes up to `count` threads sleeping on `word`; returns how many woke.
pub fn futex_wake(word: &std::sync::atomic::AtomicU32, count: u32) -> io::Result<usize> {
    use rustix::thread::futex;
    Ok(futex::wake(word, futex::Flags::PRIVATE, count)?)
}

/// The CPU the calling thread is running on now (sched_getcpu).
pub fn current_cpu() -> usize {
    rustix::thread::sched_getcpu()
}

/// The calling thread's kernel thread id (gettid).
pub fn current_tid() -> i32 {
    rustix::thread::gettid().as_raw_nonzero().get()
}

/// Sleeps `ns` nanoseconds, resuming after signals (usleep as a worker thread uses it).
pub fn sleep_ns(ns: u64) {
    let mut request = timespec_of_ns(ns);
    while let rustix::thread::NanosleepRelativeResult::Interrupted(left) =
        rustix::thread::nanosleep(&request)
    {
        request = left;
    }
}

/// Sleeps up to `ns` nanoseconds but returns early when a signal arrives (handlers are installed
/// without SA_RESTART); returns the nanoseconds left, 0 after a full sleep.
pub fn sleep_interruptible_ns(ns: u64) -> u64 {
    match rustix::thread::nanosleep(&timespec_of_ns(ns)) {
        rustix::thread::NanosleepRelativeResult::Interrupted(left) => {
            (left.tv_sec.max(0) as u64) * 1_000_000_000 + left.tv_nsec.max(0) as u64
        }
        _ => 0,
    }
}

/// Restricts the calling thread to the CPUs in `cpus`.
pub fn set_current_thread_cpus(cpus: &[u32]) -> io::Result<()> {
    let mut set = rustix::thread::CpuSet::new();
    for &cpu in cpus {
        set.set(cpu as usize);
    }
    Ok(rustix::thread::sched_setaffinity(None, &set)?)
}

/// The three counters of `/proc/<tid>/schedstat` (CONFIG_SCHED_INFO).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SchedStat {
    /// Time spent on a CPU, ns.
    pub run_ns: u64,
    /// Time spent runnable, waiting on a runqueue, ns.
    pub delay_ns: u64,
    /// Timeslices run on a CPU.
    pub timeslices: u64,
}

/// Opens a thread of this process's `/proc/self/task/<tid>/schedstat`, to read it later
/// without allocating ([`read_schedstat`]).
pub fn open_thread_schedstat(tid: i32) -> io::Result<OwnedFd> {
    use rustix::fs::{Mode, OFlags};
    let path = format!("/proc/self/task/{tid}/schedstat");
    Ok(rustix::fs::open(
        path.as_str(),
        OFlags::RDONLY | OFlags::CLOEXEC,
        Mode::empty(),
    )?)
}

/// Reads an opened schedstat file from its start (pread into a stack buffer, no allocation).
pub fn read_schedstat(fd: BorrowedFd<'_>) -> io::Result<SchedStat> {
    let mut buf = [0u8; 128];
    let n = rustix::io::pread(fd, &mut buf, 0)?;
    parse_schedstat(&buf[..n])
        .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidData, "unreadable schedstat"))
}

fn parse_schedstat(text: &[u8]) -> Option<SchedStat> {
    let mut fields = std::str::from_utf8(text).ok()?.split_ascii_whitespace();
    let mut next = || fields.next()?.parse::<u64>().ok();
    Some(SchedStat {
        run_ns: next()?,
        delay_ns: next()?,
        timeslices: next()?,
    })
}

/// `u64` words in a private anonymous mapping of their own: zero-filled on first touch, and
/// pages that are only ever read stay mapped to the kernel's shared zero page, as with schbench's
/// untouched malloc'd matrices (a heap allocation may hand back memory that was touched before).
pub struct ZeroPageWords {
    ptr: std::ptr::NonNull<u64>,
    words: usize,
}

// SAFETY: the mapping is plain memory owned by this value alone; `&mut self` guards writes.
unsafe impl Send for ZeroPageWords {}

impl ZeroPageWords {
    /// Maps `words` u64s (at least one page); fails with ENOMEM where the memory cannot be had.
    pub fn new(words: usize) -> io::Result<Self> {
        use rustix::mm::{mmap_anonymous, MapFlags, ProtFlags};
        let bytes = words
            .max(1)
            .checked_mul(8)
            .ok_or_else(|| io::Error::from_raw_os_error(libc::ENOMEM))?;
        // SAFETY: a fresh anonymous mapping at an address of the kernel's choosing aliases nothing.
        let ptr = unsafe {
            mmap_anonymous(
                std::ptr::null_mut(),
                bytes,
                ProtFlags::READ | ProtFlags::WRITE,
                MapFlags::PRIVATE,
            )?
        };
        let ptr = std::ptr::NonNull::new(ptr.cast::<u64>())
            .ok_or_else(|| io::Error::other("mmap returned a null mapping"))?;
        Ok(ZeroPageWords { ptr, words })
    }

    pub fn as_mut_slice(&mut self) -> &mut [u64] {
        // SAFETY: the mapping holds at least `words` u64s, is page-aligned, reads as zeros (valid
        // u64s) until written, and is borrowed mutably through `self` only.
        unsafe { std::slice::from_raw_parts_mut(self.ptr.as_ptr(), self.words) }
    }
}

impl Drop for ZeroPageWords {
    fn drop(&mut self) {
        // SAFETY: ptr and the byte length describe exactly the mapping made in `new`.
        let _ = unsafe { rustix::mm::munmap(self.ptr.as_ptr().cast(), self.words.max(1) * 8) };
    }
}

// ---------------------------------------------------------------------------------------------
// Signals

static INTERRUPT_SIGNAL: AtomicI32 = AtomicI32::new(0);

/// The signals that stop a run: Ctrl-C, `kill`, a hang-up (terminal closed, ssh dropped) and
/// Ctrl-\. Each is recorded and turns into a clean stop with exit code 128 + N.
pub const STOP_SIGNALS: [i32; 4] = [libc::SIGINT, libc::SIGTERM, libc::SIGHUP, libc::SIGQUIT];

/// Bit N set: schedlab installed its own handler for signal N. Forked tasks reset exactly these
/// to the default action; a signal the parent ignores (SIGHUP under nohup) stays ignored in them.
static HANDLED_SIGNALS: AtomicU64 = AtomicU64::new(0);

extern "C" fn record_interrupt(signal: libc::c_int) {
    INTERRUPT_SIGNAL.store(signal, Ordering::SeqCst);
}

/// Installs `handler` for `signal` without SA_RESTART and marks it as handled (for forked tasks).
fn install_handler(signal: i32, handler: extern "C" fn(libc::c_int)) -> io::Result<()> {
    // SAFETY: a zeroed sigaction is valid; we set the handler and an empty mask.
    let mut action: libc::sigaction = unsafe { std::mem::zeroed() };
    action.sa_sigaction = handler as *const () as usize;
    action.sa_flags = 0;
    // SAFETY: sa_mask is a valid sigset_t inside `action`.
    unsafe { libc::sigemptyset(&mut action.sa_mask) };
    // SAFETY: valid signal number and action; the old action is not needed.
    if unsafe { libc::sigaction(signal, &action, std::ptr::null_mut()) } != 0 {
        return Err(io::Error::last_os_error());
    }
    HANDLED_SIGNALS.fetch_or(1 << signal, Ordering::SeqCst);
    Ok(())
}

/// Whether `signal` is ignored now (SIG_IGN), as `nohup` leaves SIGHUP.
fn is_ignored(signal: i32) -> io::Result<bool> {
    // SAFETY: a zeroed sigaction is a valid out-parameter.
    let mut old: libc::sigaction = unsafe { std::mem::zeroed() };
    // SAFETY: a null new action only queries the current one.
    if unsafe { libc::sigaction(signal, std::ptr::null(), &mut old) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(old.sa_sigaction == libc::SIG_IGN)
}

/// Installs handlers for the [`STOP_SIGNALS`] that only record the signal. They are installed
/// without SA_RESTART on purpose: a main thread blocked in waitpid or read gets EINTR and can
/// clean up. A SIGHUP that is ignored already (`nohup schedlab …`) stays ignored: whoever started
/// schedlab asked for the run to outlive its terminal.
pub fn install_interrupt_handlers() -> io::Result<()> {
    for signal in STOP_SIGNALS {
        if signal == libc::SIGHUP && is_ignored(signal)? {
            continue;
        }
        install_handler(signal, record_interrupt)?;
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

/// A signal's conventional name (`SIGHUP`), for messages; `signal N` for the ones schedlab does
/// not expect to see.
pub fn signal_name(signal: i32) -> String {
    let name = match signal {
        libc::SIGHUP => "SIGHUP",
        libc::SIGINT => "SIGINT",
        libc::SIGQUIT => "SIGQUIT",
        libc::SIGKILL => "SIGKILL",
        libc::SIGSEGV => "SIGSEGV",
        libc::SIGPIPE => "SIGPIPE",
        libc::SIGALRM => "SIGALRM",
        libc::SIGTERM => "SIGTERM",
        libc::SIGSTOP => "SIGSTOP",
        libc::SIGABRT => "SIGABRT",
        libc::SIGBUS => "SIGBUS",
        _ => return format!("signal {signal}"),
    };
    name.to_string()
}

/// The signals worker threads block so that they reach the main thread, the one that waits.
fn main_thread_signals() -> libc::sigset_t {
    // SAFETY: sigset operations on a local value.
    unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        for signal in STOP_SIGNALS {
            libc::sigaddset(&mut set, signal);
        }
        libc::sigaddset(&mut set, WATCHDOG_SIGNAL);
        set
    }
}

/// Runs `f` with the stop signals (and the watchdog's) blocked in the calling thread, so threads
/// spawned inside inherit the mask and the signals are delivered to the main thread, which is
/// the one waiting.
pub fn with_interrupts_blocked<T>(f: impl FnOnce() -> T) -> T {
    let set = main_thread_signals();
    // SAFETY: pthread_sigmask affects the calling thread only; both sets are valid.
    unsafe {
        let mut old: libc::sigset_t = std::mem::zeroed();
        libc::pthread_sigmask(libc::SIG_BLOCK, &set, &mut old);
        let result = f();
        libc::pthread_sigmask(libc::SIG_SETMASK, &old, std::ptr::null_mut());
        result
    }
}

// ---------------------------------------------------------------------------------------------
// The iteration watchdog

/// The signal of the watchdog's timer. It is aimed at the thread that armed it (the runner's), so
/// the wait it is blocked in returns EINTR exactly as for Ctrl-C.
pub const WATCHDOG_SIGNAL: i32 = libc::SIGALRM;
/// After the deadline the timer keeps firing at this interval: a signal that lands between a
/// check and the blocking call after it would otherwise be lost, and the wait endless.
const REFIRE_NS: u64 = 200_000_000;
/// The last resort: a run still not stopped this long after its deadline (a wait nobody made
/// interruptible) kills its tasks and exits from the signal handler. The run then shows as
/// `abandoned`, which at least says what happened.
const LAST_RESORT_NS: u64 = 60_000_000_000;

static DEADLINE_EXPIRED: AtomicBool = AtomicBool::new(false);
static WATCHDOG_FIRINGS: AtomicU32 = AtomicU32::new(0);
/// The process group of the current iteration's forked tasks (0: none), for the last resort.
static TASK_GROUP: AtomicI32 = AtomicI32::new(0);

extern "C" fn watchdog_fired(_signal: libc::c_int) {
    DEADLINE_EXPIRED.store(true, Ordering::SeqCst);
    let firings = u64::from(WATCHDOG_FIRINGS.fetch_add(1, Ordering::SeqCst)) + 1;
    if firings.saturating_sub(1) * REFIRE_NS >= LAST_RESORT_NS {
        last_resort();
    }
}

/// Only async-signal-safe calls: it runs inside the signal handler.
fn last_resort() {
    const MESSAGE: &[u8] = b"schedlab: the iteration's deadline passed a minute ago and the run \
        still did not stop; killing its tasks and exiting (the run will show as abandoned)\n";
    let group = TASK_GROUP.load(Ordering::SeqCst);
    // SAFETY: kill, write and _exit are async-signal-safe and touch no memory of ours but MESSAGE.
    unsafe {
        if group > 0 {
            libc::kill(-group, libc::SIGKILL);
        }
        libc::write(2, MESSAGE.as_ptr().cast(), MESSAGE.len());
        libc::_exit(1);
    }
}

/// Whether the armed deadline has passed. Workloads check it wherever they check for a stop
/// signal, and answer with the tasks that are stuck.
pub fn deadline_expired() -> bool {
    DEADLINE_EXPIRED.load(Ordering::SeqCst)
}

/// A POSIX timer on CLOCK_MONOTONIC that signals the thread that created it (SIGEV_THREAD_ID)
/// when an iteration's deadline passes. No thread of its own: nothing runs beside a measurement
/// and nothing is added to the process that forks the tasks; arming and disarming are one system
/// call each, made outside the timed window. rustix has no timer_create, hence libc.
pub struct Watchdog {
    timer: libc::timer_t,
}

impl Watchdog {
    pub fn for_current_thread() -> io::Result<Self> {
        install_handler(WATCHDOG_SIGNAL, watchdog_fired)?;
        // SAFETY: a zeroed sigevent is valid; the fields set below select thread-directed delivery.
        let mut event: libc::sigevent = unsafe { std::mem::zeroed() };
        event.sigev_notify = libc::SIGEV_THREAD_ID;
        event.sigev_signo = WATCHDOG_SIGNAL;
        event.sigev_notify_thread_id = current_tid();
        let mut timer: libc::timer_t = std::ptr::null_mut();
        // SAFETY: both pointers are valid for the call; the timer id is written on success.
        if unsafe { libc::timer_create(libc::CLOCK_MONOTONIC, &mut event, &mut timer) } != 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(Watchdog { timer })
    }

    /// Starts the countdown: the deadline passes `after_ns` from now.
    pub fn arm(&mut self, after_ns: u64) -> io::Result<()> {
        DEADLINE_EXPIRED.store(false, Ordering::SeqCst);
        WATCHDOG_FIRINGS.store(0, Ordering::SeqCst);
        self.set(after_ns.max(1), REFIRE_NS)
    }

    /// Stops the countdown and forgets an expiry.
    pub fn disarm(&mut self) -> io::Result<()> {
        let result = self.set(0, 0);
        DEADLINE_EXPIRED.store(false, Ordering::SeqCst);
        WATCHDOG_FIRINGS.store(0, Ordering::SeqCst);
        result
    }

    fn set(&mut self, value_ns: u64, interval_ns: u64) -> io::Result<()> {
        let spec = |ns: u64| libc::timespec {
            tv_sec: (ns / 1_000_000_000) as libc::time_t,
            tv_nsec: (ns % 1_000_000_000) as libc::c_long,
        };
        let new = libc::itimerspec {
            it_interval: spec(interval_ns),
            it_value: spec(value_ns),
        };
        // SAFETY: `timer` is a live timer of ours; `new` is valid; the old value is not wanted.
        if unsafe { libc::timer_settime(self.timer, 0, &new, std::ptr::null_mut()) } != 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(())
    }
}

impl Drop for Watchdog {
    fn drop(&mut self) {
        let _ = self.disarm();
        // SAFETY: the timer was created in `for_current_thread` and is deleted once, here.
        unsafe { libc::timer_delete(self.timer) };
    }
}

// ---------------------------------------------------------------------------------------------
// Tasks and processes as /proc sees them

/// A task's line of `/proc/.../stat`: the fields schedlab reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TaskStat {
    /// R running, S sleeping, D uninterruptible, T stopped, t traced, Z zombie, ...
    pub state: char,
    /// User plus system time so far, in clock ticks (USER_HZ).
    pub cpu_ticks: u64,
    /// When the task started, in clock ticks after boot (field 22): with the pid, it names one
    /// process for as long as the boot lasts, even after the pid is reused.
    pub start_ticks: u64,
}

impl TaskStat {
    pub fn is_stopped(&self) -> bool {
        matches!(self.state, 'T' | 't')
    }

    /// Exited but not reaped, or being torn down: no longer runs anything.
    pub fn is_dead(&self) -> bool {
        matches!(self.state, 'Z' | 'X' | 'x')
    }
}

/// Parses a `stat` line. The command name (field 2) may hold spaces and parentheses, so the
/// fields are counted from its last `)`.
pub fn parse_task_stat(text: &str) -> Option<TaskStat> {
    let rest = &text[text.rfind(')')? + 1..];
    let fields: Vec<&str> = rest.split_ascii_whitespace().collect();
    // After the name: field 3 (state) is at index 0, so field N is at index N - 3.
    let field = |n: usize| fields.get(n - 3).copied();
    let number = |n: usize| field(n)?.parse::<u64>().ok();
    Some(TaskStat {
        state: field(3)?.chars().next()?,
        cpu_ticks: number(14)? + number(15)?,
        start_ticks: number(22)?,
    })
}

/// A process of this machine, by pid; `None` when there is none.
pub fn process_stat(pid: i32) -> Option<TaskStat> {
    if pid <= 0 {
        return None;
    }
    parse_task_stat(&std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?)
}

/// A thread of this process, by thread id; `None` once it has exited.
pub fn thread_stat(tid: i32) -> Option<TaskStat> {
    parse_task_stat(&std::fs::read_to_string(format!("/proc/self/task/{tid}/stat")).ok()?)
}

/// Stops the calling process as SIGSTOP from outside would (a test hook: the fake workload's
/// stalled task); it runs on after SIGCONT, and dies of SIGTERM or SIGKILL as any stopped task.
pub fn stop_self() -> io::Result<()> {
    Ok(rustix::process::kill_process(
        rustix::process::getpid(),
        rustix::process::Signal::STOP,
    )?)
}

/// This process's id and start time, which together name it for the whole boot.
pub fn this_process() -> (i32, Option<u64>) {
    let pid = rustix::process::getpid().as_raw_nonzero().get();
    (pid, process_stat(pid).map(|s| s.start_ticks))
}

/// The kernel's id of the current boot (`/proc/sys/kernel/random/boot_id`), new at every boot.
pub fn boot_id() -> Option<String> {
    let id = std::fs::read_to_string("/proc/sys/kernel/random/boot_id").ok()?;
    Some(id.trim().to_string()).filter(|id| !id.is_empty())
}

/// This machine's host name (uname's nodename).
pub fn hostname() -> String {
    rustix::system::uname()
        .nodename()
        .to_string_lossy()
        .into_owned()
}

/// A text file of /proc, /sys or /boot, whole; `None` when it is missing or this user may not
/// read it (containers hide some, and debugfs is root's only). Never an error: the fingerprint
/// records what it can see.
pub fn read_text(path: &str) -> Option<String> {
    std::fs::read_to_string(path).ok()
}

/// The entry names of a directory, sorted; empty when it is missing or cannot be listed.
pub fn dir_names(path: &str) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(path)
        .map(|entries| {
            entries
                .flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    names.sort();
    names
}

// ---------------------------------------------------------------------------------------------
// Seed-study workloads: process-shared futexes and memory, the time-stamp counter, raw syscalls

/// Whether a futex word is used by the threads of one process (FUTEX_PRIVATE_FLAG, as glibc's
/// non-pshared semaphores) or by several processes over a shared mapping (no private flag).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FutexScope {
    Private,
    Shared,
}

impl FutexScope {
    fn flags(self) -> rustix::thread::futex::Flags {
        match self {
            FutexScope::Private => rustix::thread::futex::Flags::PRIVATE,
            FutexScope::Shared => rustix::thread::futex::Flags::empty(),
        }
    }
}

/// FUTEX_WAIT in either scope, no timeout: `Ok(true)` after sleeping until a wake, `Ok(false)` when
/// `word` no longer held `expected` (EAGAIN) or a signal interrupted (callers re-check either way).
pub fn futex_wait_in(
    word: &std::sync::atomic::AtomicU32,
    expected: u32,
    scope: FutexScope,
) -> io::Result<bool> {
    match rustix::thread::futex::wait(word, scope.flags(), expected, None) {
        Ok(()) => Ok(true),
        Err(Errno::AGAIN) | Err(Errno::INTR) => Ok(false),
        Err(e) => Err(e.into()),
    }
}

/// FUTEX_WAKE in either scope: wakes up to `count` tasks sleeping on `word`; returns how many woke.
pub fn futex_wake_in(
    word: &std::sync::atomic::AtomicU32,
    count: u32,
    scope: FutexScope,
) -> io::Result<usize> {
    Ok(rustix::thread::futex::wake(word, scope.flags(), count)?)
}

/// An anonymous `MAP_SHARED` read-write mapping, zero-filled; made before fork, the parent and its
/// children see the same pages (futex words in it work across processes). Unmapped on drop.
#[derive(Debug)]
pub struct SharedMapping {
    ptr: std::ptr::NonNull<u8>,
    len: usize,
}

// SAFETY: the mapping is plain memory owned by this value; what is stored in it and how it is
// synchronised (atomics only) is up to the users of `as_ptr`.
unsafe impl Send for SharedMapping {}
// SAFETY: as above; `&SharedMapping` only hands out the raw pointer.
unsafe impl Sync for SharedMapping {}

impl SharedMapping {
    /// Maps `len` bytes (rounded up to whole pages by the kernel), page-aligned and zeroed.
    pub fn new(len: usize) -> io::Result<Self> {
        use rustix::mm::{mmap_anonymous, MapFlags, ProtFlags};
        let len = len.max(1);
        // SAFETY: a fresh anonymous mapping at an address of the kernel's choosing aliases nothing.
        let ptr = unsafe {
            mmap_anonymous(
                std::ptr::null_mut(),
                len,
                ProtFlags::READ | ProtFlags::WRITE,
                MapFlags::SHARED,
            )?
        };
        let ptr = std::ptr::NonNull::new(ptr.cast::<u8>())
            .ok_or_else(|| io::Error::other("mmap returned a null mapping"))?;
        Ok(SharedMapping { ptr, len })
    }

    /// The start of the mapping (page-aligned).
    pub fn as_ptr(&self) -> *mut u8 {
        self.ptr.as_ptr()
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

impl Drop for SharedMapping {
    fn drop(&mut self) {
        // SAFETY: ptr/len describe exactly the mapping made in `new`, unmapped only here.
        let _ = unsafe { rustix::mm::munmap(self.ptr.as_ptr().cast(), self.len) };
    }
}

/// Whether [`tsc_serialized`] reads the x86 time-stamp counter (else it reads the monotonic clock).
pub const HAS_TSC: bool = cfg!(target_arch = "x86_64");

/// The time-stamp counter read between two `lfence`s, so earlier instructions have finished and
/// later ones have not started (x86_64); elsewhere CLOCK_MONOTONIC in ns. See [`HAS_TSC`].
#[inline]
pub fn tsc_serialized() -> u64 {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{_mm_lfence, _rdtsc};
        // SAFETY: lfence and rdtsc exist on every x86_64 CPU and only read the counter.
        unsafe {
            _mm_lfence();
            let t = _rdtsc();
            _mm_lfence();
            t
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        monotonic_ns()
    }
}

/// getpid as a real system call every time (`syscall(SYS_getpid)`, never a libc cache).
#[inline]
pub fn raw_getpid() -> i64 {
    // SAFETY: getpid takes no arguments and cannot fail.
    unsafe { libc::syscall(libc::SYS_getpid) }
}

/// getrlimit(RLIMIT_NOFILE) as a real system call: prlimit64(0, RLIMIT_NOFILE, NULL, &old), which
/// is what getrlimit is on current kernels and libcs; returns the soft limit.
#[inline]
pub fn raw_getrlimit_nofile() -> io::Result<u64> {
    let mut old = libc::rlimit64 {
        rlim_cur: 0,
        rlim_max: 0,
    };
    let null: *const libc::rlimit64 = std::ptr::null();
    // SAFETY: pid 0 is the caller, the new limit is NULL (read only) and `old` is a valid pointer.
    let rc = unsafe {
        libc::syscall(
            libc::SYS_prlimit64,
            0,
            libc::RLIMIT_NOFILE,
            null,
            &mut old as *mut libc::rlimit64,
        )
    };
    if rc != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(old.rlim_cur)
}

/// Opens a device such as `/dev/null` or `/dev/zero` read-write, close-on-exec.
pub fn open_device(path: &str) -> io::Result<OwnedFd> {
    use rustix::fs::{Mode, OFlags};
    Ok(rustix::fs::open(
        path,
        OFlags::RDWR | OFlags::CLOEXEC,
        Mode::empty(),
    )?)
}

/// One write(2) system call (no retry of short writes: each call is what is being counted).
#[inline]
pub fn write_once(fd: BorrowedFd<'_>, buf: &[u8]) -> io::Result<usize> {
    Ok(rustix::io::write(fd, buf)?)
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
        // Migrations happen in the kernel: with perf-event's default exclude_kernel the count
        // would always be 0.
        builder.inherit(true).exclude_kernel(false);
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
    fn stat_lines_parse_past_odd_command_names() {
        let line = "4242 (we (ird) name) T 1 4242 4242 0 -1 4194560 100 0 0 0 7 5 0 0 20 0 1 0 \
                    98765 1000 50 18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 1 0 0 0 0 0";
        let stat = parse_task_stat(line).unwrap();
        assert_eq!(stat.state, 'T');
        assert!(stat.is_stopped());
        assert_eq!(stat.cpu_ticks, 12);
        assert_eq!(stat.start_ticks, 98765);
        assert_eq!(parse_task_stat("12 (x) R 1"), None);
    }

    #[test]
    fn this_process_is_found_and_alive() {
        let (pid, start) = this_process();
        let stat = process_stat(pid).unwrap();
        assert_eq!(Some(stat.start_ticks), start);
        assert!(!stat.is_dead() && !stat.is_stopped());
        assert!(thread_stat(current_tid()).is_some());
        assert_eq!(process_stat(0), None);
        assert_eq!(boot_id().map(|id| id.len()), Some(36));
    }

    #[test]
    fn signals_have_names() {
        assert_eq!(signal_name(libc::SIGHUP), "SIGHUP");
        assert_eq!(signal_name(libc::SIGQUIT), "SIGQUIT");
        assert_eq!(signal_name(64), "signal 64");
    }

    #[test]
    fn task_codes_describe_errno() {
        let e = io::Error::from_raw_os_error(libc::EAGAIN);
        let code = task_code::from_io_error(&e);
        assert!(task_code::describe(code).contains("system call failed"));
        assert!(task_code::describe(task_code::SHORT_COUNT).contains("short count"));
    }
}
