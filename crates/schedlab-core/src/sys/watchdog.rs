//! The iteration watchdog: a POSIX timer that signals the runner's thread when an iteration's
//! deadline passes, and the last resort when a run still does not stop; and a second one that asks
//! the runner's thread to look at the iteration's tasks now and then before the deadline (a
//! stopped task ends an iteration at the first look, not at the deadline). Part of the audited OS
//! layer (`crate::sys`).
use std::io;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};

use super::handler::{install_handler, kill_task_group, say_from_handler};
use super::proc::current_tid;

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

/// The signal of the look timer: a real-time one after the stop bound's (`signal.rs`).
fn look_signal() -> i32 {
    libc::SIGRTMIN() + 1
}

static DEADLINE_EXPIRED: AtomicBool = AtomicBool::new(false);
static LOOK_DUE: AtomicBool = AtomicBool::new(false);
static WATCHDOG_FIRINGS: AtomicU32 = AtomicU32::new(0);
extern "C" fn watchdog_fired(_signal: libc::c_int) {
    DEADLINE_EXPIRED.store(true, Ordering::SeqCst);
    let firings = u64::from(WATCHDOG_FIRINGS.fetch_add(1, Ordering::SeqCst)) + 1;
    if firings.saturating_sub(1) * REFIRE_NS >= LAST_RESORT_NS {
        last_resort();
    }
}

extern "C" fn look_fired(_signal: libc::c_int) {
    LOOK_DUE.store(true, Ordering::SeqCst);
}

/// Only async-signal-safe calls: it runs inside the signal handler.
fn last_resort() {
    const MESSAGE: &[u8] = b"schedlab: the iteration's deadline passed a minute ago and the run \
        still did not stop; killing its tasks and exiting (the run will show as abandoned)\n";
    kill_task_group();
    say_from_handler(MESSAGE);
    // SAFETY: _exit is async-signal-safe.
    unsafe { libc::_exit(1) };
}

/// Whether the armed deadline has passed. Workloads check it wherever they check for a stop
/// signal, and answer with the tasks that are stuck.
pub fn deadline_expired() -> bool {
    DEADLINE_EXPIRED.load(Ordering::SeqCst)
}

/// Whether a look at the iteration's tasks is due (asked once per firing of the look timer):
/// the waits that know their tasks end the iteration at once when one is stopped. Others ignore
/// it; the look's signal only wakes their wait, which goes back to waiting.
pub fn take_look_due() -> bool {
    LOOK_DUE.swap(false, Ordering::SeqCst)
}

/// Two POSIX timers on CLOCK_MONOTONIC that signal the thread that created them
/// (SIGEV_THREAD_ID): one when an iteration's deadline passes, one at every look before it. No
/// thread of its own: nothing runs beside a measurement and nothing is added to the process that
/// forks the tasks; arming and disarming are a system call per timer, made outside the timed
/// window. rustix has no timer_create, hence libc.
pub struct Watchdog {
    deadline: libc::timer_t,
    look: libc::timer_t,
}

/// A timer that sends `signal` to the calling thread.
fn thread_timer(signal: i32) -> io::Result<libc::timer_t> {
    // SAFETY: a zeroed sigevent is valid; the fields set below select thread-directed delivery.
    let mut event: libc::sigevent = unsafe { std::mem::zeroed() };
    event.sigev_notify = libc::SIGEV_THREAD_ID;
    event.sigev_signo = signal;
    event.sigev_notify_thread_id = current_tid();
    let mut timer: libc::timer_t = std::ptr::null_mut();
    // SAFETY: both pointers are valid for the call; the timer id is written on success.
    if unsafe { libc::timer_create(libc::CLOCK_MONOTONIC, &mut event, &mut timer) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(timer)
}

impl Watchdog {
    pub fn for_current_thread() -> io::Result<Self> {
        install_handler(WATCHDOG_SIGNAL, watchdog_fired)?;
        install_handler(look_signal(), look_fired)?;
        let deadline = thread_timer(WATCHDOG_SIGNAL)?;
        let look = match thread_timer(look_signal()) {
            Ok(look) => look,
            Err(e) => {
                // SAFETY: made just above, deleted once.
                unsafe { libc::timer_delete(deadline) };
                return Err(e);
            }
        };
        Ok(Watchdog { deadline, look })
    }

    /// Starts the countdown: the deadline passes `after_ns` from now; with `look_every_ns`, a
    /// look is due every that often before it (none when the first would not come sooner).
    pub fn arm(&mut self, after_ns: u64, look_every_ns: Option<u64>) -> io::Result<()> {
        DEADLINE_EXPIRED.store(false, Ordering::SeqCst);
        WATCHDOG_FIRINGS.store(0, Ordering::SeqCst);
        LOOK_DUE.store(false, Ordering::SeqCst);
        set(self.deadline, after_ns.max(1), REFIRE_NS)?;
        match look_every_ns.filter(|&every| every > 0 && every < after_ns) {
            Some(every) => set(self.look, every, every),
            None => set(self.look, 0, 0),
        }
    }

    /// Stops the countdown and the looks, and forgets an expiry and a look not taken.
    pub fn disarm(&mut self) -> io::Result<()> {
        let result = set(self.deadline, 0, 0).and(set(self.look, 0, 0));
        DEADLINE_EXPIRED.store(false, Ordering::SeqCst);
        WATCHDOG_FIRINGS.store(0, Ordering::SeqCst);
        LOOK_DUE.store(false, Ordering::SeqCst);
        result
    }
}

fn set(timer: libc::timer_t, value_ns: u64, interval_ns: u64) -> io::Result<()> {
    let spec = |ns: u64| libc::timespec {
        // `as _`: time_t is i64 on every 64-bit target; libc deprecates naming it on musl.
        tv_sec: (ns / 1_000_000_000) as _,
        tv_nsec: (ns % 1_000_000_000) as libc::c_long,
    };
    let new = libc::itimerspec {
        it_interval: spec(interval_ns),
        it_value: spec(value_ns),
    };
    // SAFETY: `timer` is a live timer of ours; `new` is valid; the old value is not wanted.
    if unsafe { libc::timer_settime(timer, 0, &new, std::ptr::null_mut()) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

impl Drop for Watchdog {
    fn drop(&mut self) {
        let _ = self.disarm();
        // SAFETY: the timers were created in `for_current_thread` and are deleted once, here.
        unsafe {
            libc::timer_delete(self.deadline);
            libc::timer_delete(self.look);
        }
    }
}
