//! What every signal handler of schedlab may do, shared by the stop signals' (`signal.rs`) and
//! the watchdog's (`watchdog.rs`): install itself, say one line on stderr, and kill the current
//! iteration's process group. Part of the audited OS layer (`crate::sys`).
use std::io;
use std::io::IsTerminal;
use std::sync::atomic::{AtomicBool, AtomicI32, AtomicU64, Ordering};

/// Whether stderr is a terminal, asked when the handlers are installed: a handler's line then
/// starts on a line of its own (a progress bar or the terminal's `^C` may hold the current one).
static STDERR_IS_TERMINAL: AtomicBool = AtomicBool::new(false);

/// Bit N set: schedlab installed its own handler for signal N. Forked tasks reset exactly these
/// to the default action; a signal the parent ignores (SIGHUP under nohup) stays ignored in them.
pub(super) static HANDLED_SIGNALS: AtomicU64 = AtomicU64::new(0);

/// The process group of the current iteration's forked tasks (0: none), for the last resort.
pub(super) static TASK_GROUP: AtomicI32 = AtomicI32::new(0);

/// Asks once, while no handler runs, whether stderr is a terminal (see [`say_from_handler`]).
pub(super) fn note_whether_stderr_is_a_terminal() {
    STDERR_IS_TERMINAL.store(io::stderr().is_terminal(), Ordering::SeqCst);
}

/// Writes `line` (one line, newline included) to stderr from a signal handler; on a terminal it
/// starts a line of its own first. Only async-signal-safe calls.
pub(super) fn say_from_handler(line: &[u8]) {
    // SAFETY: write is async-signal-safe; both buffers are static or borrowed for the call.
    unsafe {
        if STDERR_IS_TERMINAL.load(Ordering::SeqCst) {
            libc::write(2, b"\n".as_ptr().cast(), 1);
        }
        libc::write(2, line.as_ptr().cast(), line.len());
    }
}

/// Installs `handler` for `signal` without SA_RESTART and marks it as handled (for forked tasks).
pub(super) fn install_handler(signal: i32, handler: extern "C" fn(libc::c_int)) -> io::Result<()> {
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

/// SIGKILLs the current iteration's process group, if there is one: the first thing every way
/// of quitting from a signal handler does (a second Ctrl-C, the stop bound, the last resort), so
/// that nothing of the iteration outlives schedlab. Forked tasks would also die by their
/// PR_SET_PDEATHSIG, but a program `external` runs may have children of its own, which that
/// does not reach. Only async-signal-safe calls.
pub(super) fn kill_task_group() {
    let group = TASK_GROUP.load(Ordering::SeqCst);
    if group > 0 {
        // SAFETY: kill has no memory effects.
        unsafe { libc::kill(-group, libc::SIGKILL) };
    }
}
