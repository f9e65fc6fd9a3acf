//! The error type shared by the plan, runner and workloads, split by who must act on it.
use thiserror::Error;

/// Errors carry the distinction the CLI needs for its exit code: bad input (2), a failed run (1), or
/// an interruption by a signal.
#[derive(Debug, Error)]
pub enum Error {
    /// The user asked for something invalid or impossible here (exit code 2).
    #[error("{0}")]
    InvalidInput(String),
    /// The run started but a workload could not complete or verify its work (exit code 1).
    #[error("{0}")]
    RunFailed(String),
    /// SIGINT, SIGTERM, SIGHUP or SIGQUIT arrived; the number is the signal.
    #[error("interrupted by {name} (signal {0})", name = crate::sys::signal_name(*.0))]
    Interrupted(i32),
    /// An iteration passed its deadline (the watchdog). The text names the tasks that were stuck
    /// and what was done about them; the runner adds the case and the deadline (exit code 1).
    #[error("{0}")]
    TimedOut(String),
}

impl Error {
    pub fn invalid(msg: impl Into<String>) -> Self {
        Error::InvalidInput(msg.into())
    }

    pub fn failed(msg: impl Into<String>) -> Self {
        Error::RunFailed(msg.into())
    }
}

/// The check every wait of a workload makes when it wakes: a stop signal ends the run, an expired
/// deadline ends the iteration (`detail` says what was still running, when the caller knows).
pub fn check_stop() -> Result<()> {
    if let Some(signal) = crate::sys::interrupt_signal() {
        return Err(Error::Interrupted(signal));
    }
    if crate::sys::deadline_expired() {
        return Err(Error::TimedOut(String::new()));
    }
    Ok(())
}

pub type Result<T, E = Error> = std::result::Result<T, E>;
