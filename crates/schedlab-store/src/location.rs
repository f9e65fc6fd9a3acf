//! Where results live, as the user writes it in `--db` or `$SCHEDLAB_DB`: a plain path, or a URL
//! whose scheme names a backend. A value that looks like a URL is never taken as a file name —
//! `postgres://u@h/x` once became a directory `postgres:` full of results nobody could find.
use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::path::PathBuf;

use crate::{Result, StoreError};

/// A parsed store location. PostgreSQL joins this enum when the fleet store lands.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Location {
    /// An SQLite file at this path (relative paths are relative to the working directory).
    Sqlite(PathBuf),
}

/// The schemes named in every refusal, so a user sees what would have worked.
pub const KNOWN_SCHEMES: &str = "sqlite:PATH, sqlite://PATH or a plain path";

impl Location {
    /// Parses a `--db` value. A value starting with `scheme:` (RFC 3986: a letter, then letters,
    /// digits, `+`, `-` or `.`) is a URL: `sqlite:` and `sqlite://` give the path after them, any
    /// other scheme is refused. Anything else is a path, so `./a:b.db` and `/x/a:b.db` are files.
    pub fn parse(value: &OsStr) -> Result<Location> {
        let bytes = value.as_bytes();
        if bytes.is_empty() {
            return Err(StoreError::BadLocation(
                "the database path is empty".to_string(),
            ));
        }
        let Some(scheme_len) = scheme_len(bytes) else {
            return sqlite_path(value, value);
        };
        let scheme = String::from_utf8_lossy(&bytes[..scheme_len]).to_ascii_lowercase();
        let rest = &bytes[scheme_len + 1..];
        match scheme.as_str() {
            "sqlite" => {
                let path = rest.strip_prefix(b"//").unwrap_or(rest);
                sqlite_path(value, OsStr::from_bytes(path))
            }
            "postgres" | "postgresql" => Err(StoreError::BadLocation(format!(
                "{}: PostgreSQL is not supported yet; schedlab knows {KNOWN_SCHEMES}",
                value.to_string_lossy()
            ))),
            _ => Err(StoreError::BadLocation(format!(
                "{shown}: unknown store scheme \"{scheme}:\"; schedlab knows {KNOWN_SCHEMES} \
                 (PostgreSQL is not supported yet; a file name with a colon can be given as ./{shown})",
                shown = value.to_string_lossy()
            ))),
        }
    }
}

/// The length of a leading URL scheme, when the value has one.
fn scheme_len(bytes: &[u8]) -> Option<usize> {
    let colon = bytes.iter().position(|&b| b == b':')?;
    let scheme = &bytes[..colon];
    let first = *scheme.first()?;
    let valid = first.is_ascii_alphabetic()
        && scheme
            .iter()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'+' | b'-' | b'.'));
    valid.then_some(colon)
}

fn sqlite_path(value: &OsStr, path: &OsStr) -> Result<Location> {
    if path.is_empty() {
        return Err(StoreError::BadLocation(format!(
            "{}: no path after the scheme (sqlite:PATH)",
            value.to_string_lossy()
        )));
    }
    // SQLite gives ":memory:" (and "" above) a private in-memory database: a run would be
    // stored nowhere while looking stored.
    if path == ":memory:" {
        return Err(StoreError::BadLocation(format!(
            "{}: an in-memory database keeps nothing; use --no-store to run without storing",
            value.to_string_lossy()
        )));
    }
    Ok(Location::Sqlite(PathBuf::from(path)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<Location> {
        Location::parse(OsStr::new(text))
    }

    fn sqlite(path: &str) -> Location {
        Location::Sqlite(PathBuf::from(path))
    }

    #[test]
    fn paths_stay_paths() {
        for path in [
            "results.db",
            "./a:b.db",
            "/tmp/x:y/r.db",
            "../r.db",
            "1abc:x.db",
            "_a:b",
        ] {
            assert_eq!(parse(path).unwrap(), sqlite(path), "{path}");
        }
    }

    #[test]
    fn sqlite_urls_name_a_path() {
        assert_eq!(parse("sqlite:foo.db").unwrap(), sqlite("foo.db"));
        assert_eq!(parse("sqlite://foo.db").unwrap(), sqlite("foo.db"));
        assert_eq!(parse("sqlite:///tmp/r.db").unwrap(), sqlite("/tmp/r.db"));
        assert_eq!(parse("SQLite:/tmp/r.db").unwrap(), sqlite("/tmp/r.db"));
        assert_eq!(parse("sqlite:./a:b.db").unwrap(), sqlite("./a:b.db"));
    }

    #[test]
    fn other_schemes_are_refused_with_the_known_ones() {
        for url in [
            "postgres://u@host/x",
            "postgresql://host/db",
            "file:r.db",
            "file:///tmp/r.db",
            "http://example.invalid/r.db",
            "mysql://h/d",
            "a:b.db",
        ] {
            let message = parse(url).unwrap_err().to_string();
            assert!(message.contains("sqlite:PATH"), "{url}: {message}");
            assert!(!message.contains('\n'), "{url}: {message}");
        }
        assert!(parse("postgres://x")
            .unwrap_err()
            .to_string()
            .contains("PostgreSQL is not supported yet"));
    }

    #[test]
    fn empty_and_memory_are_refused() {
        for value in ["", "sqlite:", "sqlite://", ":memory:", "sqlite::memory:"] {
            assert!(
                matches!(parse(value), Err(StoreError::BadLocation(_))),
                "{value}"
            );
        }
    }
}
