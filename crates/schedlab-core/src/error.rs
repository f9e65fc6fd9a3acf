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
    /// SIGINT or SIGTERM arrived; the number is the signal.
    #[error("interrupted by signal {0}")]
    Interrupted(i32),
}

impl Error {
    pub fn invalid(msg: impl Into<String>) -> Self {
        Error::InvalidInput(msg.into())
    }

    pub fn failed(msg: impl Into<String>) -> Self {
        Error::RunFailed(msg.into())
    }
}

pub type Result<T, E = Error> = std::result::Result<T, E>;
