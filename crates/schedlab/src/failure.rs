//! The binary's error: a one-line message plus the exit code that tells scripts what happened —
//! 2 for bad input, 1 for a run or store that failed, 128 + signal for an interruption.
use std::fmt;
use std::process::ExitCode;

use schedlab_store::StoreError;

#[derive(Debug)]
pub struct Failure {
    pub message: String,
    pub code: u8,
    /// A comparison that could not test anything (a side without a complete run, a candidate
    /// that names no run, no row to judge): `--could-not-test-exit` gives it its own code.
    pub untestable: bool,
}

pub const EXIT_FAILED: u8 = 1;
pub const EXIT_BAD_INPUT: u8 = 2;

impl Failure {
    pub fn bad_input(message: impl Into<String>) -> Self {
        Failure {
            message: message.into(),
            code: EXIT_BAD_INPUT,
            untestable: false,
        }
    }

    pub fn failed(message: impl Into<String>) -> Self {
        Failure {
            message: message.into(),
            code: EXIT_FAILED,
            untestable: false,
        }
    }

    /// Bad input (exit 2) that means "could not test" to `--could-not-test-exit`.
    pub fn untestable(message: impl Into<String>) -> Self {
        Failure {
            untestable: true,
            ..Failure::bad_input(message)
        }
    }

    /// With `--could-not-test-exit CODE`, an untestable comparison exits with CODE.
    pub fn or_could_not_test(mut self, code: Option<u8>) -> Self {
        if let (true, Some(code)) = (self.untestable, code) {
            self.code = code;
        }
        self
    }

    pub fn exit_code(&self) -> ExitCode {
        ExitCode::from(self.code)
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
        match &e {
            Error::InvalidInput(m) => Failure::bad_input(m.clone()),
            Error::InvalidParam { .. } => Failure::bad_input(e.to_string()),
            Error::RunFailed(m) | Error::TimedOut(m) => Failure::failed(m.clone()),
            Error::Interrupted(signal) => Failure {
                message: e.to_string(),
                code: 128u8.saturating_add((*signal).clamp(0, 127) as u8),
                untestable: false,
            },
        }
    }
}

impl From<StoreError> for Failure {
    fn from(e: StoreError) -> Self {
        match e {
            // What the user gave or must fix: a path, a file, a schema, a name.
            StoreError::NotSchedlab { .. }
            | StoreError::Unwritable { .. }
            | StoreError::Unopenable { .. }
            | StoreError::Damaged { .. }
            | StoreError::Newer { .. }
            | StoreError::NeedsUpgrade { .. }
            | StoreError::BadLocation(_)
            | StoreError::NotFound(_)
            | StoreError::Exists(_) => Failure::bad_input(e.to_string()),
            StoreError::Busy { .. }
            | StoreError::ReadOnly { .. }
            | StoreError::Corrupt(_)
            | StoreError::Database(_) => Failure::failed(e.to_string()),
        }
    }
}
