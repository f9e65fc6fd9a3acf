//! Opening the store a location names, for reading or for writing.
use crate::error::Result;
use crate::location::Location;
#[cfg(feature = "postgres")]
use crate::pg::PgStore;
use crate::sqlite::SqliteStore;
use crate::store::Store;

/// Opens the store `location` names for reading only: an SQLite file read-only, a PostgreSQL
/// database in read-only transactions. Neither migrates anything nor makes a writer wait.
pub fn open_reader(location: &Location) -> Result<Box<dyn Store>> {
    Ok(match location {
        Location::Sqlite(path) => Box::new(SqliteStore::open_existing(path)?),
        #[cfg(feature = "postgres")]
        Location::Postgres(url) => Box::new(PgStore::open_reader(url)?),
    })
}

/// Opens the store `location` names for writing, its schema created or upgraded; a missing SQLite
/// file is created when `create` says so, else it is an error. A PostgreSQL database must exist
/// (schedlab creates its tables, not the database).
pub fn open_writer(location: &Location, create: bool) -> Result<Box<dyn Store>> {
    Ok(match location {
        Location::Sqlite(path) if create => Box::new(SqliteStore::open(path)?),
        Location::Sqlite(path) => Box::new(SqliteStore::open_existing_writer(path)?),
        #[cfg(feature = "postgres")]
        Location::Postgres(url) => Box::new(PgStore::open_writer(url)?),
    })
}
