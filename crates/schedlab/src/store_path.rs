//! The results database a command line names: `--db`, else `$SCHEDLAB_DB`, else the default file;
//! an SQLite file or a PostgreSQL URL, opened as a reader or a writer.
use schedlab_store::{Location, Store, StoreError};

use crate::cli::DbArg;
use crate::failure::Failure;

/// The store `--db` (or `$SCHEDLAB_DB`, or the default) names. A value with a URL scheme is
/// parsed, never taken as a file name: `sqlite:` gives a path, `postgres://` a database, others
/// are refused. `$SCHEDLAB_DB` is read here rather than by clap, so that an empty one is named
/// as what it is.
pub fn db_location(arg: &DbArg) -> Result<Location, Failure> {
    if let Some(db) = &arg.db {
        return Ok(Location::parse(db.as_os_str())?);
    }
    if let Some(value) = std::env::var_os("SCHEDLAB_DB") {
        if value.is_empty() {
            return Err(Failure::bad_input(
                "SCHEDLAB_DB is empty: unset it for the default database, or set it to one",
            ));
        }
        return Location::parse(&value).map_err(|e| match e {
            StoreError::BadLocation(why) => Failure::bad_input(format!("SCHEDLAB_DB {why}")),
            e => Failure::from(e),
        });
    }
    schedlab_store::default_db_path()
        .map(Location::Sqlite)
        .ok_or_else(|| {
            Failure::bad_input(
                "no results database path: set --db or SCHEDLAB_DB, or an absolute XDG_DATA_HOME or HOME",
            )
        })
}

/// Whether the command line or the environment names a store (`--db` or `$SCHEDLAB_DB`).
pub fn db_named(arg: &DbArg) -> bool {
    arg.db.is_some() || std::env::var_os("SCHEDLAB_DB").is_some()
}

/// Whether the location is an SQLite file that does not exist yet (a database on a server
/// always exists, schema or not).
pub fn is_missing(location: &Location) -> bool {
    match location {
        Location::Sqlite(path) => !path.exists(),
        #[cfg(feature = "postgres")]
        Location::Postgres(_) => false,
    }
}

/// The store opened read-only: it migrates nothing and never makes a writer wait.
pub fn open_reader(location: &Location) -> Result<Box<dyn Store>, Failure> {
    Ok(schedlab_store::open_reader(location)?)
}

/// The store opened for writing, created (an SQLite file) or upgraded as needed.
pub fn open_writer(location: &Location) -> Result<Box<dyn Store>, Failure> {
    Ok(schedlab_store::open_writer(location, true)?)
}

/// The store opened for writing; a missing SQLite file is an error, not a new database.
pub fn open_existing_writer(location: &Location) -> Result<Box<dyn Store>, Failure> {
    Ok(schedlab_store::open_writer(location, false)?)
}
