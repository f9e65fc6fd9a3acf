//! The error type shared by the plan, runner and workloads, split by who must act on it.
use thiserror::Error;

/// Errors carry the distinction the CLI needs for its exit code: bad input (2), a failed run (1), or
/// an interruption by a signal.
#[derive(Debug, Error)]
pub enum Error {
    /// The user asked for something invalid or impossible here (exit code 2).
    #[error("{0}")]
    InvalidInput(String),
    /// A workload parameter is out of its range or does not fit with another; `key` is its suite
    /// key, so the command line can name its flag and a suite file its line (exit code 2).
    #[error("--{flag} {reason}", flag = key.replace('_', "-"))]
    InvalidParam { key: &'static str, reason: String },
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

    /// A parameter's error: `reason` follows the flag or key (`must be between 1 and 8, not 0`).
    pub fn param(key: &'static str, reason: impl Into<String>) -> Self {
        Error::InvalidParam {
            key,
            reason: reason.into(),
        }
    }

    /// Whether the user must act (bad input, exit code 2).
    pub fn is_invalid_input(&self) -> bool {
        matches!(self, Error::InvalidInput(_) | Error::InvalidParam { .. })
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
