//! What a backend itself does — open read and write transactions on its database, retried as it
//! retries, and say where it is — from which [`crate::Store`] follows for every backend
//! (`backend.rs`).
use crate::sql::Db;
use crate::{Result, StoreError};

/// What a backend itself does; [`crate::Store`] follows for every backend from these.
pub(crate) trait Backend {
    type Db<'t>: Db;
    /// The schema version queries run against (0: no schema yet, seen by a reader).
    fn version(&self) -> i64;
    /// One read-only transaction, seeing one snapshot, retried as the backend retries.
    fn read_tx<T>(&self, body: impl FnMut(&mut Self::Db<'_>) -> Result<T>) -> Result<T>;
    /// One write transaction, retried whole as the backend retries; `body` learns whether an
    /// earlier attempt may have committed before its answer was lost.
    fn write_tx<T>(&self, body: impl FnMut(&mut Self::Db<'_>, bool) -> Result<T>) -> Result<T>;
    /// Where the store is, for messages.
    fn location(&self) -> String;
    /// Whether `e` says another writer stored a run with the same uuid first.
    fn is_duplicate_uuid(_e: &StoreError) -> bool {
        false
    }
}
