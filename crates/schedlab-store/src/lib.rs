//! schedlab's results store: the [`Store`] trait every backend implements, the SQLite backend
//! (one file per machine, the default) and the PostgreSQL backend (one database for a fleet), each
//! with its migrations of one schema, [`push`](push::push) which copies runs between stores, and
//! [`StoreSink`], which lets the runner write each iteration the moment it finishes.
//!
//! Readers and writers open the database differently: [`SqliteStore::open_existing`] is read-only
//! (it writes nothing, migrates nothing and never blocks a run), [`SqliteStore::open`] and
//! [`SqliteStore::open_existing_writer`] create or upgrade the schema in one exclusive transaction
//! and retry busy writes with backoff; [`SqliteStore::in_memory`] is a writer whose database lives
//! and dies in memory, with the same schema, for runs that are not kept (`run --no-store`).
//! [`Location`] turns a `--db` value into a backend or an error; [`open_reader`] and
//! [`open_writer`] open whichever it names. [`PgStore`] keeps the same promises on a server:
//! readers run read-only transactions (PostgreSQL's MVCC never makes a writer wait for them),
//! every write is one transaction, and each run carries a globally unique id.
#![forbid(unsafe_code)]
// println! and eprintln! panic when the reader has gone (`| head`, a dropped ssh session's
// terminal); output goes through writers whose errors are handled.
#![cfg_attr(not(test), deny(clippy::print_stdout, clippy::print_stderr))]
mod backend;
mod check;
pub mod defaults;
mod error;
mod fleet;
#[doc(hidden)]
pub mod generate;
mod legacy;
pub mod liveness;
mod load;
mod location;
mod migrations;
mod open;
#[cfg(feature = "postgres")]
mod pg;
mod probes;
pub mod push;
mod records;
mod retry;
mod rows;
mod schema;
pub mod select;
mod sink;
mod sql;
mod sqlite;
mod store;
mod summaries;
#[cfg(feature = "postgres")]
#[doc(hidden)]
pub mod testing;
mod transactions;

pub use check::{AbandonedRun, CheckReport};
pub use error::{Result, StoreError};
pub use fleet::{CaseSeries, MetricChoice, SeriesQuery};
#[cfg(feature = "postgres")]
pub use location::PgUrl;
pub use location::{default_db_path, default_db_path_in};
pub use location::{Location, KNOWN_SCHEMES};
pub use open::{open_reader, open_writer};
#[cfg(feature = "postgres")]
pub use pg::PgStore;
pub(crate) use records::refuse_derived_status;
pub use records::{
    Experiment, ExperimentKind, KeepMeasurement, RunProvenance, RunSummary, StoredCalibration,
};
pub use retry::{Patience, STOP_GRACE};
pub use schema::{known_version, OLDEST_READABLE_VERSION};
pub use select::{HostSummary, RunSelection};
pub use sink::StoreSink;
pub use sqlite::SqliteStore;
pub use store::Store;
pub use summaries::SummaryCheck;
