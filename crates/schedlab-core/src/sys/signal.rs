//! Signals: the handlers that turn Ctrl-C, `kill`, a hang-up and Ctrl-\ into a clean stop, the
//! bound on how long that stop may take (a timer the first stop signal starts), the mask worker
//! threads run with, and signal names for messages. Part of the audited OS layer (`crate::sys`).
use std::io;
use std::sync::atomic::{AtomicBool, AtomicI32, AtomicU64, AtomicUsize, Ordering};

use super::handler::{
    install_handler, kill_task_group, note_whether_stderr_is_a_terminal, say_from_handler,
};
use super::watchdog::WATCHDOG_SIGNAL;

static INTERRUPT_SIGNAL: AtomicI32 = AtomicI32::new(0);
/// Sleeps `ns` nanoseconds in steps of at most 50 ms, so that a stop signal ends the sleep within
/// a step; returns that signal, or `None` after the whole sleep.
pub fn sleep_unless_interrupted(ns: u64) -> Option<i32> {
    let deadline = super::monotonic_ns().saturating_add(ns);
    loop {
        if let Some(signal) = interrupt_signal() {
            return Some(signal);
        }
        let now = super::monotonic_ns();
        if now >= deadline {
            return None;
        }
        super::sleep_ns((deadline - now).min(50_000_000));
    }
}

/// When the first stop signal arrived, CLOCK_MONOTONIC in nanoseconds (0: none yet), so that a
/// wait the signal cannot interrupt (a store waiting out a busy database) ends a fixed time after
/// the signal, not a fixed time after whenever the wait got round to noticing it.
static INTERRUPT_AT_NS: AtomicU64 = AtomicU64::new(0);
/// The signals that stop a run: Ctrl-C, `kill`, a hang-up (terminal closed, ssh dropped) and
/// Ctrl-\. Each is recorded and turns into a clean stop with exit code 128 + N.
pub const STOP_SIGNALS: [i32; 4] = [libc::SIGINT, libc::SIGTERM, libc::SIGHUP, libc::SIGQUIT];

/// Said on stderr when a second Ctrl-C ends schedlab at once: one line, like every error.
const QUIT_NOW: &[u8] = b"schedlab: a second Ctrl-C: quitting now; what was stored stays stored, \
and a run cut short reads abandoned\n";

extern "C" fn record_interrupt(signal: libc::c_int) {
    // The arrival is noted before the signal, so whoever sees the signal sees when it came.
    let _ = INTERRUPT_AT_NS.compare_exchange(0, now_ns(), Ordering::SeqCst, Ordering::SeqCst);
    let earlier = INTERRUPT_SIGNAL.swap(signal, Ordering::SeqCst);
    if earlier == 0 {
        start_stop_countdown();
    }
    // Ctrl-C pressed again while the clean stop is under way (a store waiting out a busy
    // database, a task that does not die): quit at once, as the default action would, after
    // killing the iteration's process group (forked tasks would die with schedlab by
    // PR_SET_PDEATHSIG, but a tool `external` runs has children of its own). Nothing
    // uncommitted is stored, and the next reader sees the run abandoned. Only SIGINT counts: a
    // dropped ssh session can deliver SIGHUP twice (the kernel's and the shell's), and must
    // still stop cleanly.
    if signal == libc::SIGINT && earlier != 0 {
        kill_task_group();
        say_from_handler(QUIT_NOW);
        // SAFETY: signal and raise are async-signal-safe. The re-raised SIGINT is delivered when
        // this handler returns, with the default action.
        unsafe {
            libc::signal(libc::SIGINT, libc::SIG_DFL);
            libc::raise(libc::SIGINT);
        }
    }
}

/// CLOCK_MONOTONIC in nanoseconds, as [`super::monotonic_ns`] reads it, through libc's
/// clock_gettime, which is async-signal-safe: for signal handlers.
fn now_ns() -> u64 {
    let mut now = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes only `now`.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut now) };
    now.tv_sec as u64 * 1_000_000_000 + now.tv_nsec as u64
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
    note_whether_stderr_is_a_terminal();
    for signal in STOP_SIGNALS {
        if signal == libc::SIGHUP && is_ignored(signal)? {
            continue;
        }
        install_handler(signal, record_interrupt)?;
    }
    Ok(())
}

/// Gives SIGCHLD its default action back when whoever started schedlab left it ignored, which
/// exec keeps. Ignored, it makes the kernel reap every child itself and send no SIGCHLD: a wait
/// for a workload's task or a tool then fails with ECHILD, and the reaper of an `external` tool,
/// which sleeps until SIGCHLD, would wait for the iteration's deadline. Called first thing in
/// `main`; the tools schedlab runs inherit the default too, as from any shell.
pub fn reap_own_children() -> io::Result<()> {
    if !is_ignored(libc::SIGCHLD)? {
        return Ok(());
    }
    // SAFETY: a zeroed sigaction is valid; SIG_DFL with an empty mask and no flags.
    let mut action: libc::sigaction = unsafe { std::mem::zeroed() };
    action.sa_sigaction = libc::SIG_DFL;
    // SAFETY: sa_mask is a valid sigset_t inside `action`.
    unsafe { libc::sigemptyset(&mut action.sa_mask) };
    // SAFETY: a valid signal number and action; the old action is not needed.
    if unsafe { libc::sigaction(libc::SIGCHLD, &action, std::ptr::null_mut()) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// Blocks SIGCONT in the calling thread, and so in every thread it starts afterwards: called
/// first thing in `main`. Blocking does not keep a stopped process from continuing; it keeps the
/// SIGCONT pending, where [`take_continued`] finds it, without a handler that would interrupt the
/// main thread's waits. Forked tasks start with an empty mask, and so does every program std's
/// `Command` runs.
pub fn watch_for_suspension() -> io::Result<()> {
    // SAFETY: sigset operations on a local value; pthread_sigmask affects the calling thread only.
    let code = unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        libc::sigaddset(&mut set, libc::SIGCONT);
        libc::pthread_sigmask(libc::SIG_BLOCK, &set, std::ptr::null_mut())
    };
    if code != 0 {
        return Err(io::Error::from_raw_os_error(code));
    }
    Ok(())
}

/// Whether the process was stopped (SIGSTOP, Ctrl-Z) and continued since the last call: takes the
/// pending SIGCONT, without waiting. Always false unless [`watch_for_suspension`] ran.
pub fn take_continued() -> bool {
    // SAFETY: sigset operations on a local value; a zero timeout makes sigtimedwait a poll, and a
    // null siginfo is allowed.
    unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        libc::sigaddset(&mut set, libc::SIGCONT);
        let now = libc::timespec {
            tv_sec: 0,
            tv_nsec: 0,
        };
        libc::sigtimedwait(&set, std::ptr::null_mut(), &now) == libc::SIGCONT
    }
}

/// The signal that asked schedlab to stop, if one has arrived.
pub fn interrupt_signal() -> Option<i32> {
    match INTERRUPT_SIGNAL.load(Ordering::SeqCst) {
        0 => None,
        s => Some(s),
    }
}

/// When the first stop signal arrived: CLOCK_MONOTONIC in nanoseconds, as
/// [`super::monotonic_ns`] reads it; `None` before one has.
pub fn interrupt_arrived_ns() -> Option<u64> {
    match INTERRUPT_AT_NS.load(Ordering::SeqCst) {
        0 => None,
        at => Some(at),
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

/// How long a clean stop may take. Every wait a stop signal cuts short ends far sooner (a busy,
/// locked or silent database 5 s after the signal, a new connection within 2 s, tasks at once);
/// what is left is a wait nothing can interrupt, as a call to a database server that is alive but
/// never answers (stopped with SIGSTOP, hung). A process still alive this long after the first
/// stop signal quits as a second Ctrl-C would, so that a stop nobody can repeat (a dropped ssh
/// session's SIGHUP, a job scheduler's SIGTERM) never leaves schedlab hanging.
pub const STOP_BOUND_SECS: u64 = 30;

/// Said on stderr when the bound passes: one line, like every error.
const STOP_OVERDUE: &[u8] = b"schedlab: the clean stop did not finish within 30 s of the stop \
signal (a results database that does not answer?); quitting now: what was stored stays stored, \
a run cut short reads abandoned, and what the stop had left to do (ab's --restore) is not done\n";

/// The stop bound's timer, once [`bound_clean_stops`] has made it.
static STOP_TIMER: AtomicUsize = AtomicUsize::new(0);
static STOP_TIMER_MADE: AtomicBool = AtomicBool::new(false);

/// The stop bound's signal: a real-time one, which nothing else here sends.
fn stop_bound_signal() -> i32 {
    libc::SIGRTMIN()
}

extern "C" fn stop_overdue(_signal: libc::c_int) {
    let code = 128 + interrupt_signal().unwrap_or(libc::SIGTERM);
    kill_task_group();
    say_from_handler(STOP_OVERDUE);
    // SAFETY: _exit is async-signal-safe.
    unsafe { libc::_exit(code) };
}

/// Makes the timer that bounds a clean stop (see [`STOP_BOUND_SECS`]); from then on the first
/// stop signal starts it. Called by the commands that measure, whose stops write to the store;
/// others (`push`, `import`) let a stop finish the transaction under way, however long it takes.
pub fn bound_clean_stops() -> io::Result<()> {
    if STOP_TIMER_MADE.load(Ordering::SeqCst) {
        return Ok(());
    }
    install_handler(stop_bound_signal(), stop_overdue)?;
    // SAFETY: a zeroed sigevent is valid; SIGEV_SIGNAL sends the signal to the process.
    let mut event: libc::sigevent = unsafe { std::mem::zeroed() };
    event.sigev_notify = libc::SIGEV_SIGNAL;
    event.sigev_signo = stop_bound_signal();
    let mut timer: libc::timer_t = std::ptr::null_mut();
    // SAFETY: both pointers are valid for the call; the timer id is written on success.
    if unsafe { libc::timer_create(libc::CLOCK_MONOTONIC, &mut event, &mut timer) } != 0 {
        return Err(io::Error::last_os_error());
    }
    STOP_TIMER.store(timer as usize, Ordering::SeqCst);
    STOP_TIMER_MADE.store(true, Ordering::SeqCst);
    Ok(())
}

/// Starts the stop bound's countdown, if [`bound_clean_stops`] made its timer. Called from the
/// stop signals' handler, so only async-signal-safe calls (timer_settime is one).
pub(super) fn start_stop_countdown() {
    if !STOP_TIMER_MADE.load(Ordering::SeqCst) {
        return;
    }
    let countdown = libc::itimerspec {
        it_interval: libc::timespec {
            tv_sec: 0,
            tv_nsec: 0,
        },
        it_value: libc::timespec {
            tv_sec: STOP_BOUND_SECS as _,
            tv_nsec: 0,
        },
    };
    // SAFETY: the timer was made by `bound_clean_stops` and is never deleted; `countdown` is
    // valid; the old value is not wanted.
    unsafe {
        libc::timer_settime(
            STOP_TIMER.load(Ordering::SeqCst) as libc::timer_t,
            0,
            &countdown,
            std::ptr::null_mut(),
        )
    };
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A SIGCONT is seen once, by the thread that watches (sent to that thread alone here: a
    /// process-wide one could go to another thread of the test binary, which does not block it).
    #[test]
    fn a_continue_is_seen_once() {
        std::thread::spawn(|| {
            watch_for_suspension().unwrap();
            assert!(!take_continued());
            // SAFETY: pthread_kill to the calling thread; SIGCONT is blocked, so it stays pending.
            unsafe { libc::pthread_kill(libc::pthread_self(), libc::SIGCONT) };
            assert!(take_continued());
            assert!(!take_continued());
        })
        .join()
        .unwrap();
    }

    /// Every error is one line on stderr, starting `schedlab: `; a line break before it is the
    /// handler's to add, on a terminal only.
    #[test]
    fn the_quit_now_message_is_one_line() {
        let message = String::from_utf8_lossy(QUIT_NOW);
        assert!(message.starts_with("schedlab: "), "{message:?}");
        assert_eq!(message.matches('\n').count(), 1, "{message:?}");
        assert!(message.ends_with('\n'), "{message:?}");
    }

    #[test]
    fn signals_have_names() {
        assert_eq!(signal_name(libc::SIGHUP), "SIGHUP");
        assert_eq!(signal_name(libc::SIGQUIT), "SIGQUIT");
        assert_eq!(signal_name(64), "signal 64");
    }

    #[test]
    fn the_overdue_stop_message_names_the_bound() {
        let message = String::from_utf8_lossy(STOP_OVERDUE);
        assert!(
            message.contains(&format!("within {STOP_BOUND_SECS} s of the stop signal")),
            "{message}"
        );
        assert!(message.starts_with("schedlab: "), "{message:?}");
        assert_eq!(message.matches('\n').count(), 1, "{message:?}");
    }
}
