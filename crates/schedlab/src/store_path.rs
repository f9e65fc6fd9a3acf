//! The results database a command line names: `--db`, else `$SCHEDLAB_DB`, else the default.
use std::path::PathBuf;

use schedlab_store::Location;

use crate::cli::DbArg;
use crate::failure::Failure;

/// The SQLite file `--db` (or `$SCHEDLAB_DB`, or the default) names. A `--db` value with a URL
/// scheme is parsed, never taken as a file name: `sqlite:` gives a path, others are refused.
pub fn db_path(arg: &DbArg) -> Result<PathBuf, Failure> {
    let given = arg
        .db
        .clone()
        .map(PathBuf::into_os_string)
        .or_else(|| std::env::var_os("SCHEDLAB_DB"))
        .filter(|v| !v.is_empty());
    if let Some(value) = given {
        return match Location::parse(&value)? {
            Location::Sqlite(path) => Ok(path),
        };
    }
    schedlab_store::default_db_path().ok_or_else(|| {
        Failure::bad_input("no results database path: set --db, SCHEDLAB_DB, XDG_DATA_HOME or HOME")
    })
}
