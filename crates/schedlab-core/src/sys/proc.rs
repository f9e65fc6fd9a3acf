//! Tasks as the kernel names and counts them: thread ids, `/proc/.../stat` and
//! `/proc/.../schedstat`, this process's identity, and stopping oneself. Part of the audited OS
//! layer (`crate::sys`).
use std::io;

use rustix::fd::{BorrowedFd, OwnedFd};

/// The calling thread's kernel thread id (gettid).
pub fn current_tid() -> i32 {
    rustix::thread::gettid().as_raw_nonzero().get()
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

    /// Stopped by a signal (SIGSTOP, SIGTSTP; state `T`), not by a debugger (`t`).
    pub fn is_job_stopped(&self) -> bool {
        self.state == 'T'
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sys::boot_id;

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
}
