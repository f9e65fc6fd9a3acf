//! The results database a command line names: `--db`, else `$SCHEDLAB_DB`, else the default file;
//! an SQLite file or a PostgreSQL URL, opened as a reader or a writer.
use std::path::PathBuf;

use schedlab_store::{Location, Store};

use crate::cli::DbArg;
use crate::failure::Failure;

/// The store `--db` (or `$SCHEDLAB_DB`, or the default) names. A value with a URL scheme is
/// parsed, never taken as a file name: `sqlite:` gives a path, `postgres://` a database, others
/// are refused.
pub fn db_location(arg: &DbArg) -> Result<Location, Failure> {
    let given = arg
        .db
        .clone()
        .map(PathBuf::into_os_string)
        .or_else(|| std::env::var_os("SCHEDLAB_DB"))
        .filter(|v| !v.is_empty());
    if let Some(value) = given {
        return Ok(Location::parse(&value)?);
    }
    schedlab_store::default_db_path()
        .map(Location::Sqlite)
        .ok_or_else(|| {
            Failure::bad_input(
                "no results database path: set --db, SCHEDLAB_DB, XDG_DATA_HOME or HOME",
            )
        })
}

/// Whether the location is an SQLite file that does not exist yet (a database on a server
/// always exists, schema or not).
pub fn is_missing(location: &Location) -> bool {
    match location {
        Location::Sqlite(path) => !path.exists(),
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
