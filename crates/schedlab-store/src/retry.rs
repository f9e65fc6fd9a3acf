//! Waiting out a busy or unreachable database, one loop for both backends: the whole transaction
//! is tried again with jittered exponential backoff for the store's patience (minutes: the
//! caller's data waits in memory), but only until a few seconds after a stop signal's arrival,
//! so Ctrl-C, a hang-up or `kill` ends a run promptly even while the database is held.
use std::path::PathBuf;
use std::time::{Duration, Instant};

use schedlab_core::sys;

use crate::{Result, StoreError};

/// How long the store waits on other processes' locks and on a server that went away.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Patience {
    /// How long one attempt waits for a lock another process or session holds before it counts
    /// as busy and is tried again: SQLite's busy timeout, PostgreSQL's `lock_timeout`.
    pub busy_timeout: Duration,
    /// How long a transaction is retried, with backoff, after SQLite answered busy or the
    /// connection dropped. A run's iteration waits this long in memory before the run gives up
    /// on storing it.
    pub total: Duration,
}

impl Default for Patience {
    fn default() -> Self {
        Patience {
            busy_timeout: Duration::from_secs(5),
            total: Duration::from_secs(15 * 60),
        }
    }
}

/// How long a store still tries once a stop signal has arrived: long enough for another writer's
/// transaction to end, so the run's end can still be recorded, and short enough that nobody
/// waits for it. Counted from the signal's arrival (its handler notes the time), so the iteration
/// being stored and the run's end share one grace, and a lock wait that was under way when the
/// signal came counts against it: no signal interrupts SQLite's busy wait or a PostgreSQL
/// statement waiting out its `lock_timeout`, but as neither lasts longer than
/// [`Patience::busy_timeout`], 5 s by default, either is over by the grace's end.
pub const STOP_GRACE: Duration = Duration::from_secs(5);

/// How long one attempt waits for a lock once a stop signal has arrived (see
/// [`Patience::busy_timeout`]), so the retry loop sees the end of the stop's grace within this.
pub(crate) const STOP_LOCK_WAIT: Duration = Duration::from_millis(100);

/// How long the next attempt may wait for a lock: the patience's step, or [`STOP_LOCK_WAIT`]
/// once a stop signal has arrived (the process is ending, so it is never raised again).
#[cfg(feature = "postgres")]
pub(crate) fn lock_wait(patience: &Patience) -> Duration {
    if sys::interrupt_signal().is_some() {
        STOP_LOCK_WAIT
    } else {
        patience.busy_timeout
    }
}

/// The longest pause between two attempts.
const MAX_BACKOFF: Duration = Duration::from_secs(2);

/// How long ago the stop signal arrived (zero when none has).
fn since_the_stop() -> Duration {
    sys::interrupt_arrived_ns().map_or(Duration::ZERO, |at| {
        Duration::from_nanos(sys::monotonic_ns().saturating_sub(at))
    })
}

/// What one attempt came to: an answer to return, or a failure that may pass (a lock another
/// process holds, a dropped connection), described for the error given when waiting ends.
pub(crate) enum Attempt<T> {
    Done(Result<T>),
    Transient(String),
}

/// Calls `attempt` until it is done. `attempt` learns whether an earlier attempt failed
/// transiently (one whose commit may have landed before its answer was lost). Waiting ends with
/// [`StoreError::Busy`] after `patience.total`, or with [`StoreError::Stopped`] once a stop
/// signal is [`STOP_GRACE`] old (however long ago the wait began); `location` names the database
/// in either.
pub(crate) fn retry<T>(
    patience: &Patience,
    first_pause: Duration,
    location: impl Fn() -> PathBuf,
    mut attempt: impl FnMut(bool) -> Attempt<T>,
) -> Result<T> {
    let started = Instant::now();
    let mut pause = first_pause;
    let mut retrying = false;
    loop {
        let detail = match attempt(retrying) {
            Attempt::Done(result) => return result,
            Attempt::Transient(detail) => detail,
        };
        let waited = started.elapsed();
        let mut left = patience.total.saturating_sub(waited);
        if let Some(signal) = sys::interrupt_signal() {
            let since = since_the_stop();
            let grace = STOP_GRACE.saturating_sub(since);
            if grace.is_zero() {
                return Err(StoreError::Stopped {
                    path: location(),
                    signal,
                    since,
                    detail,
                });
            }
            left = left.min(grace);
        }
        if left.is_zero() {
            return Err(StoreError::Busy {
                path: location(),
                waited,
                detail,
            });
        }
        std::thread::sleep(jittered(pause).min(left));
        pause = (pause * 2).min(MAX_BACKOFF);
        retrying = true;
    }
}

/// `pause` stretched by up to half again, so writers that collided once do not collide again in
/// step.
fn jittered(pause: Duration) -> Duration {
    let seed = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos())
        ^ std::process::id();
    pause.mul_f64(1.0 + f64::from(seed % 1000) / 2000.0)
}
