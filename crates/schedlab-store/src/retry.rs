//! Waiting out a busy or unreachable database, one loop for both backends: the whole transaction
//! is tried again with jittered exponential backoff for the store's patience (minutes: the
//! caller's data waits in memory), but only for a few seconds more once a stop signal has
//! arrived, so Ctrl-C, a hang-up or `kill` ends a run promptly even while the database is held.
use std::path::PathBuf;
use std::sync::OnceLock;
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
/// waits for it. Counted from the first time any retry saw the signal, so the iteration being
/// stored and the run's end share one grace.
pub const STOP_GRACE: Duration = Duration::from_secs(5);

/// How long one attempt waits for a lock once a stop signal has arrived (see
/// [`Patience::busy_timeout`]), so the retry loop sees the end of the stop's grace within this.
pub(crate) const STOP_LOCK_WAIT: Duration = Duration::from_millis(100);

/// How long the next attempt may wait for a lock: the patience's step, or [`STOP_LOCK_WAIT`]
/// once a stop signal has arrived (the process is ending, so it is never raised again).
pub(crate) fn lock_wait(patience: &Patience) -> Duration {
    if sys::interrupt_signal().is_some() {
        STOP_LOCK_WAIT
    } else {
        patience.busy_timeout
    }
}

/// The longest pause between two attempts.
const MAX_BACKOFF: Duration = Duration::from_secs(2);

static STOP_SEEN: OnceLock<Instant> = OnceLock::new();

/// What one attempt came to: an answer to return, or a failure that may pass (a lock another
/// process holds, a dropped connection), described for the error given when waiting ends.
pub(crate) enum Attempt<T> {
    Done(Result<T>),
    Transient(String),
}

/// Calls `attempt` until it is done. `attempt` learns whether an earlier attempt failed
/// transiently (one whose commit may have landed before its answer was lost). Waiting ends with
/// [`StoreError::Busy`] after `patience.total`, or with [`StoreError::Stopped`] once a stop
/// signal is [`STOP_GRACE`] old; `location` names the database in either.
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
            let seen = *STOP_SEEN.get_or_init(Instant::now);
            let grace = STOP_GRACE.saturating_sub(seen.elapsed());
            if grace.is_zero() {
                return Err(StoreError::Stopped {
                    path: location(),
                    signal,
                    waited: seen.elapsed(),
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
