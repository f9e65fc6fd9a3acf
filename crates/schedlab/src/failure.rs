//! The binary's error: a one-line message and the kind of failure it is. The kind alone decides
//! the exit code scripts read, in [`FailureKind::exit_code`] and nowhere else: 2 for bad input,
//! 1 for a run, store or gate that failed, 128 + N for an interruption by signal N.
use std::fmt;
use std::process::ExitCode;

use schedlab_store::StoreError;

/// What went wrong, as far as whoever called schedlab must tell cases apart.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FailureKind {
    /// What the user gave or must fix: an argument, a path, a file, a name.
    BadInput,
    /// A run, the store or the output failed.
    Failed,
    /// `--keep-going` carried a run to its end past cases that failed.
    Partial,
    /// A stop signal (SIGINT, SIGTERM, SIGHUP, SIGQUIT) ended the command, as a shell reports a
    /// process the signal killed.
    Interrupted { signal: i32 },
    /// A comparison that could not test anything (a side without a complete run, a candidate
    /// that names no run, no row to judge): bad input, unless `--could-not-test-exit` gave it a
    /// code of its own (`git bisect run`'s 125).
    Untestable { exit: Option<u8> },
    /// `--fail-on-regression`, and a row is marked a regression.
    Regression,
}

impl FailureKind {
    pub fn exit_code(self) -> u8 {
        match self {
            FailureKind::BadInput | FailureKind::Untestable { exit: None } => 2,
            FailureKind::Failed | FailureKind::Partial | FailureKind::Regression => 1,
            FailureKind::Interrupted { signal } => 128u8.saturating_add(signal.clamp(0, 127) as u8),
            FailureKind::Untestable { exit: Some(code) } => code,
        }
    }
}

#[derive(Debug)]
pub struct Failure {
    pub kind: FailureKind,
    /// Empty when the command's own output already said what went wrong (`db check`'s report).
    pub message: String,
}

impl Failure {
    pub fn new(kind: FailureKind, message: impl Into<String>) -> Self {
        Failure {
            kind,
            message: message.into(),
        }
    }

    pub fn bad_input(message: impl Into<String>) -> Self {
        Failure::new(FailureKind::BadInput, message)
    }

    pub fn failed(message: impl Into<String>) -> Self {
        Failure::new(FailureKind::Failed, message)
    }

    /// Bad input that means "could not test" to `--could-not-test-exit`.
    pub fn untestable(message: impl Into<String>) -> Self {
        Failure::new(FailureKind::Untestable { exit: None }, message)
    }

    /// A failure the command's output on stdout has explained already.
    pub fn reported(kind: FailureKind) -> Self {
        Failure::new(kind, String::new())
    }

    /// With `--could-not-test-exit CODE`, an untestable comparison exits with CODE.
    pub fn or_could_not_test(mut self, code: Option<u8>) -> Self {
        if let (FailureKind::Untestable { exit }, Some(code)) = (&mut self.kind, code) {
            *exit = Some(code);
        }
        self
    }

    pub fn exit_code(&self) -> ExitCode {
        ExitCode::from(self.kind.exit_code())
    }
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl From<schedlab_core::Error> for Failure {
    fn from(e: schedlab_core::Error) -> Self {
        use schedlab_core::Error;
        let kind = match &e {
            Error::InvalidInput(_) | Error::InvalidParam { .. } => FailureKind::BadInput,
            Error::RunFailed(_) | Error::TimedOut(_) => FailureKind::Failed,
            Error::Interrupted(signal) => FailureKind::Interrupted { signal: *signal },
        };
        Failure::new(kind, e.to_string())
    }
}

impl From<StoreError> for Failure {
    fn from(e: StoreError) -> Self {
        match e {
            // What the user gave or must fix: a path, a file, a schema, a name.
            StoreError::NotSchedlab { .. }
            | StoreError::Unwritable { .. }
            | StoreError::NotAFile { .. }
            | StoreError::Unopenable { .. }
            | StoreError::Damaged { .. }
            | StoreError::Newer { .. }
            | StoreError::NeedsUpgrade { .. }
            | StoreError::BadLocation(_)
            | StoreError::NotFound(_)
            | StoreError::Exists(_) => Failure::bad_input(e.to_string()),
            // The command ends as the signal asked, saying what the store was waiting for.
            StoreError::Stopped { signal, .. } => {
                Failure::new(FailureKind::Interrupted { signal }, e.to_string())
            }
            StoreError::Busy { .. }
            | StoreError::ReadOnly { .. }
            | StoreError::Corrupt(_)
            | StoreError::Database(_) => Failure::failed(e.to_string()),
            #[cfg(feature = "postgres")]
            StoreError::Postgres(_) => Failure::failed(e.to_string()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exit_codes_scripts_rely_on() {
        assert_eq!(FailureKind::BadInput.exit_code(), 2);
        assert_eq!(FailureKind::Failed.exit_code(), 1);
        assert_eq!(FailureKind::Partial.exit_code(), 1);
        assert_eq!(FailureKind::Regression.exit_code(), 1);
        assert_eq!(FailureKind::Interrupted { signal: 1 }.exit_code(), 129);
        assert_eq!(FailureKind::Interrupted { signal: 15 }.exit_code(), 143);
        assert_eq!(FailureKind::Interrupted { signal: 200 }.exit_code(), 255);
        assert_eq!(FailureKind::Untestable { exit: None }.exit_code(), 2);
        assert_eq!(FailureKind::Untestable { exit: Some(125) }.exit_code(), 125);
    }

    #[test]
    fn only_untestable_failures_take_the_could_not_test_code() {
        let untestable = Failure::untestable("no complete run").or_could_not_test(Some(125));
        assert_eq!(untestable.kind.exit_code(), 125);
        let bad = Failure::bad_input("no such label").or_could_not_test(Some(125));
        assert_eq!(bad.kind.exit_code(), 2);
    }
}
