//! Forked tasks: the codes they exit with, and the [`ChildSet`] that forks, reaps, stops and kills
//! them as one process group. Part of the audited OS layer (`crate::sys`).
use std::io;
use std::sync::atomic::Ordering;

use super::handler::HANDLED_SIGNALS;
use super::handler::TASK_GROUP;
use super::time::{monotonic_ns, sleep_ns};

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
    /// Not the iteration's set: its group is left out of the signal handlers' last resort, which
    /// kills the current iteration's tasks (a co-runner's process, which outlives many
    /// iterations and dies with schedlab by its own PR_SET_PDEATHSIG).
    apart: bool,
}

impl ChildSet {
    pub fn new() -> Self {
        ChildSet::default()
    }

    /// A set whose children run beside the iterations rather than in one (see `apart`).
    pub fn apart() -> Self {
        ChildSet {
            group: None,
            live: Vec::new(),
            apart: true,
        }
    }

    /// Forks a child that runs `body` and exits with its code. The child never returns into
    /// the caller: it resets signal handling, dies with its parent, and leaves through `_exit` so
    /// no destructor or atexit handler of the parent runs twice.
    ///
    /// Safe to call with other threads running, unlike a bare fork: the child is a copy of the
    /// address space in which only this thread runs, so nothing it does reaches the parent's
    /// memory (what it shares, `SharedValue`s, holds only atomics), and its `body` sees values as
    /// Rust left them at the fork. The fork rule's hazard is a lock another thread held at that
    /// moment: it stays held in the child, which then hangs on it instead of corrupting anything
    /// (the C library's own locks, malloc's and stdio's, it resets in the child itself). A hung
    /// task is what the iteration watchdog names and kills; task bodies keep clear of such locks
    /// by using only descriptors they own and buffers allocated before the fork.
    pub fn spawn(&mut self, body: impl FnOnce() -> TaskCode) -> io::Result<i32> {
        let parent = rustix::process::getpid();
        let group = self.group.unwrap_or(0);
        // SAFETY: fork changes nothing in this process; why the child may go on in Rust code, even
        // when the parent has other threads, is argued above.
        let pid = unsafe { libc::fork() };
        if pid < 0 {
            return Err(io::Error::last_os_error());
        }
        if pid > 0 {
            // Set the group from both sides so neither order of scheduling leaves a window.
            // SAFETY: setpgid on our own child.
            unsafe { libc::setpgid(pid, group) };
            let group = *self.group.get_or_insert(pid);
            if !self.apart {
                TASK_GROUP.store(group, Ordering::SeqCst);
            }
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
        if let Some(group) = self.group.filter(|_| !self.apart) {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sys::{pipe, read_full, AsFd};

    #[test]
    fn forked_child_exit_code_is_reaped() {
        let mut children = ChildSet::new();
        let pid = children.spawn(|| 7).unwrap();
        // Until reaped, or the set finds no child (ECHILD: the kernel reaped it, as it does with
        // SIGCHLD ignored), which fails below instead of spinning.
        let mut reaped = None;
        while reaped.is_none() && !children.is_empty() {
            reaped = children.reap_one(false).unwrap();
        }
        assert_eq!(reaped, Some((pid, ChildExit::Code(7))));
        assert!(children.is_empty());
    }

    #[test]
    fn dropping_child_set_kills_children() {
        let (r, w) = pipe().unwrap();
        let pid;
        {
            let mut children = ChildSet::new();
            pid = children
                .spawn(|| {
                    let mut b = [0u8; 1];
                    let _ = read_full(r.as_fd(), &mut b);
                    0
                })
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
