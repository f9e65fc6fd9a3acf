//! The store's one error type and its `Result`: every way opening, reading or writing a results
//! database can fail, each with the sentence a user reads.
use std::path::PathBuf;
use std::time::Duration;

use thiserror::Error;

#[derive(Debug, Error)]
pub enum StoreError {
    #[error("{path} is not a schedlab results database ({why}); choose another file with --db or SCHEDLAB_DB")]
    NotSchedlab { path: PathBuf, why: String },
    #[error("cannot write the results database {path}: {reason}")]
    Unwritable { path: PathBuf, reason: String },
    /// A writer's path is a directory, a device, a FIFO or a socket: `--db /dev/null` may have
    /// meant to keep nothing.
    #[error("cannot write the results database {path}: {reason}; --no-store keeps nothing")]
    NotAFile { path: PathBuf, reason: String },
    #[error("cannot open the results database {path}: {reason}")]
    Unopenable { path: PathBuf, reason: String },
    /// The file is (or was) an SQLite database but SQLite, or its schema history, says it is
    /// broken.
    #[error("{path} is damaged ({detail}); `schedlab db check` says more")]
    Damaged { path: PathBuf, detail: String },
    #[error("{path}: this database has schema version {version}; this schedlab knows up to {known} — upgrade schedlab")]
    Newer {
        path: PathBuf,
        version: i64,
        known: i64,
    },
    #[error("{path}: this database has schema version {version} and this schedlab reads {oldest} and newer; a writer must upgrade it first: `schedlab db upgrade --db {path}`")]
    NeedsUpgrade {
        path: PathBuf,
        version: i64,
        oldest: i64,
    },
    /// A `--db` value that names no store this schedlab has.
    #[error("--db {0}")]
    BadLocation(String),
    /// Another process held the write lock for longer than the store's patience.
    #[error("the results database {path} stayed busy for {} s ({detail}); another process holds it", waited.as_secs())]
    Busy {
        path: PathBuf,
        waited: Duration,
        detail: String,
    },
    /// A stop signal arrived while the database was busy or unreachable, and waiting ended
    /// [`STOP_GRACE`] after the signal (`since`: how long after, when it ended) instead of after
    /// the patience.
    #[error("{} arrived while the results database {path} was busy ({detail}); stopped waiting {:.1} s after it", schedlab_core::sys::signal_name(*signal), since.as_secs_f64())]
    Stopped {
        path: PathBuf,
        signal: i32,
        since: Duration,
        detail: String,
    },
    /// A write through a store opened read-only: a bug in the caller, not in the file.
    #[error("the results database {path} was opened read-only and cannot store anything")]
    ReadOnly { path: PathBuf },
    #[error("{0}")]
    NotFound(String),
    #[error("{0}")]
    Exists(String),
    #[error("the results database is inconsistent: {0}")]
    Corrupt(String),
    #[error("database error: {0}")]
    Database(#[from] rusqlite::Error),
    /// An error the PostgreSQL server or the connection to it reported.
    #[cfg(feature = "postgres")]
    #[error("PostgreSQL: {}", postgres_error_text(.0))]
    Postgres(#[from] postgres::Error),
}

pub type Result<T, E = StoreError> = std::result::Result<T, E>;

#[cfg(feature = "postgres")]
/// The server's own message, or the driver's when the server said nothing.
pub(crate) fn postgres_error_text(e: &postgres::Error) -> String {
    match e.as_db_error() {
        Some(db) => match db.detail() {
            Some(detail) => format!("{} ({detail})", db.message()),
            None => db.message().to_string(),
        },
        None => {
            let mut text = e.to_string();
            let mut source = std::error::Error::source(e);
            while let Some(inner) = source {
                text = format!("{text}: {inner}");
                source = inner.source();
            }
            text
        }
    }
}
