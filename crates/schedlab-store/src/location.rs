//! Where results live, as the user writes it in `--db` or `$SCHEDLAB_DB`: a plain path, or a URL
//! whose scheme names a backend. A value that looks like a URL is never taken as a file name —
//! `postgres://u@h/x` once became a directory `postgres:` full of results nobody could find.
//! A `postgres://` or `postgresql://` URL names a PostgreSQL database; it is checked here, so a bad
//! one is a one-line error before anything runs, and it is never shown with its password. Without
//! either, the database is the default file under the user's data directory.
use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use crate::{Result, StoreError};

/// A parsed store location.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Location {
    /// An SQLite file at this path (relative paths are relative to the working directory).
    Sqlite(PathBuf),
    /// A PostgreSQL database.
    #[cfg(feature = "postgres")]
    Postgres(PgUrl),
}

impl Location {
    /// The location as messages show it: the path, or the URL without its password.
    pub fn describe(&self) -> String {
        match self {
            Location::Sqlite(path) => path.display().to_string(),
            #[cfg(feature = "postgres")]
            Location::Postgres(url) => url.redacted(),
        }
    }

    /// Whether the location is a database on a server (which always exists, schema or not),
    /// rather than a file.
    pub fn is_server(&self) -> bool {
        match self {
            Location::Sqlite(_) => false,
            #[cfg(feature = "postgres")]
            Location::Postgres(_) => true,
        }
    }
}

/// The schemes named in every refusal, so a user sees what would have worked.
#[cfg(feature = "postgres")]
pub const KNOWN_SCHEMES: &str =
    "sqlite:PATH, sqlite://PATH, a plain path, or postgres://USER@HOST/DATABASE";
/// The schemes named in every refusal, so a user sees what would have worked.
#[cfg(not(feature = "postgres"))]
pub const KNOWN_SCHEMES: &str = "sqlite:PATH, sqlite://PATH, or a plain path";

/// Why a build without the `postgres` feature refuses a `postgres://` URL.
#[cfg(not(feature = "postgres"))]
const NO_POSTGRES: &str = "this schedlab was built without PostgreSQL support (cargo feature \
     `postgres`); use an SQLite file";

/// How a connection uses TLS, from the URL's `sslmode`.
#[cfg(feature = "postgres")]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TlsMode {
    /// `sslmode=disable`: never.
    Disable,
    /// `sslmode=prefer` (the default, as libpq's): TLS when the server offers it, its certificate
    /// not checked — as libpq does, since whoever can intercept can also refuse TLS.
    Prefer,
    /// `sslmode=require`, `verify-ca` or `verify-full`: TLS or no connection, and the server's
    /// certificate verified (chain and host name) against `sslrootcert`, else the webpki roots.
    Verify,
}

#[cfg(feature = "postgres")]
/// A PostgreSQL URL as given, with what schedlab reads from it itself: the TLS mode and a root
/// certificate file. Debug output never shows the password.
#[derive(Clone, PartialEq, Eq)]
pub struct PgUrl {
    given: String,
    /// The URL handed to the driver: `sslmode` mapped to what it knows, `sslrootcert` removed.
    driver_url: String,
    pub tls: TlsMode,
    pub root_cert: Option<PathBuf>,
}

#[cfg(feature = "postgres")]
impl std::fmt::Debug for PgUrl {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.redacted())
    }
}

#[cfg(feature = "postgres")]
impl PgUrl {
    /// Parses a `postgres://` or `postgresql://` URL (libpq's form: user, password, hosts, port,
    /// database, and parameters such as `sslmode`, `sslrootcert`, `connect_timeout`,
    /// `application_name`, `options`, or `host=/run/postgresql` for a Unix socket).
    pub fn parse(url: &str) -> Result<PgUrl> {
        let bad = |why: String| StoreError::BadLocation(format!("{}: {why}", redact(url)));
        let (base, query) = match url.split_once('?') {
            Some((base, query)) => (base, Some(query)),
            None => (url, None),
        };
        let mut tls = TlsMode::Prefer;
        let mut root_cert = None;
        let mut kept = Vec::new();
        for pair in query
            .into_iter()
            .flat_map(|q| q.split('&'))
            .filter(|p| !p.is_empty())
        {
            let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
            match key {
                "sslmode" => {
                    tls = match percent_decode(value).as_str() {
                        "disable" => TlsMode::Disable,
                        "allow" | "prefer" => TlsMode::Prefer,
                        "require" | "verify-ca" | "verify-full" => TlsMode::Verify,
                        other => {
                            return Err(bad(format!(
                                "sslmode={other} is not one of disable, allow, prefer, require, verify-ca, verify-full"
                            )))
                        }
                    };
                }
                "sslrootcert" => {
                    let path = percent_decode(value);
                    if path.is_empty() {
                        return Err(bad("sslrootcert= names no file".into()));
                    }
                    root_cert = Some(PathBuf::from(path));
                }
                _ => kept.push(pair),
            }
        }
        if root_cert.is_some() && tls == TlsMode::Prefer && !query_has(query, "sslmode") {
            // libpq verifies against a root certificate it is given; so does schedlab.
            tls = TlsMode::Verify;
        }
        let driver_mode = match tls {
            TlsMode::Disable => "disable",
            TlsMode::Prefer => "prefer",
            TlsMode::Verify => "require",
        };
        kept.push(match driver_mode {
            "disable" => "sslmode=disable",
            "prefer" => "sslmode=prefer",
            _ => "sslmode=require",
        });
        let driver_url = format!("{base}?{}", kept.join("&"));
        driver_url
            .parse::<postgres::Config>()
            .map_err(|e| bad(format!("not a PostgreSQL URL schedlab can use: {e}")))?;
        Ok(PgUrl {
            given: url.to_string(),
            driver_url,
            tls,
            root_cert,
        })
    }

    /// The driver's configuration for this URL.
    pub(crate) fn config(&self) -> postgres::Config {
        self.driver_url
            .parse()
            .expect("checked when the URL was parsed")
    }

    /// Whether the URL as given sets the parameter `key`.
    pub(crate) fn names(&self, key: &str) -> bool {
        query_has(self.given.split_once('?').map(|(_, q)| q), key)
    }

    /// The URL as given, with any password replaced by `***`.
    pub fn redacted(&self) -> String {
        redact(&self.given)
    }
}

#[cfg(feature = "postgres")]
fn query_has(query: Option<&str>, key: &str) -> bool {
    query.is_some_and(|q| q.split('&').any(|p| p.split('=').next() == Some(key)))
}

/// `%XX` escapes decoded; anything malformed is kept as written.
#[cfg(feature = "postgres")]
fn percent_decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = |b: u8| (b as char).to_digit(16);
        if bytes[i] == b'%' && i + 2 < bytes.len() {
            if let (Some(h), Some(l)) = (hex(bytes[i + 1]), hex(bytes[i + 2])) {
                out.push((h * 16 + l) as u8);
                i += 3;
                continue;
            }
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// A URL with its password (in the user information or a `password=` parameter) hidden.
pub(crate) fn redact(url: &str) -> String {
    let Some(scheme_end) = url.find("://").map(|i| i + 3) else {
        return url.to_string();
    };
    let (head, rest) = url.split_at(scheme_end);
    let authority_end = rest.find(['/', '?']).unwrap_or(rest.len());
    let (authority, tail) = rest.split_at(authority_end);
    let authority = match authority.rsplit_once('@') {
        Some((userinfo, hosts)) => match userinfo.split_once(':') {
            Some((user, _)) => format!("{user}:***@{hosts}"),
            None => authority.to_string(),
        },
        None => authority.to_string(),
    };
    let tail = match tail.split_once('?') {
        Some((path, query)) => {
            let query: Vec<String> = query
                .split('&')
                .map(|pair| match pair.split_once('=') {
                    Some(("password", _)) => "password=***".to_string(),
                    _ => pair.to_string(),
                })
                .collect();
            format!("{path}?{}", query.join("&"))
        }
        None => tail.to_string(),
    };
    format!("{head}{authority}{tail}")
}

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
            "postgres" | "postgresql" => {
                let url = value.to_str().ok_or_else(|| {
                    StoreError::BadLocation(format!(
                        "{}: a PostgreSQL URL must be UTF-8",
                        redact(&value.to_string_lossy())
                    ))
                })?;
                #[cfg(feature = "postgres")]
                return Ok(Location::Postgres(PgUrl::parse(url)?));
                #[cfg(not(feature = "postgres"))]
                return Err(StoreError::BadLocation(format!(
                    "{}: {NO_POSTGRES}",
                    redact(url)
                )));
            }
            _ => Err(StoreError::BadLocation(format!(
                "{shown}: unknown store scheme \"{scheme}:\"; schedlab knows {KNOWN_SCHEMES} \
                 (a file name with a colon can be given as ./{shown})",
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

/// The default database path: `$XDG_DATA_HOME/schedlab/results.db`, else
/// `$HOME/.local/share/schedlab/results.db`; `None` when neither gives a place.
pub fn default_db_path() -> Option<PathBuf> {
    default_db_path_in(
        std::env::var_os("XDG_DATA_HOME").as_deref(),
        std::env::var_os("HOME").as_deref(),
    )
}

/// [`default_db_path`] for these values of `XDG_DATA_HOME` and `HOME`. A relative
/// `XDG_DATA_HOME` is ignored, as the XDG Base Directory specification says; an empty or
/// relative `HOME` is none, so the database never lands wherever the working directory is.
pub fn default_db_path_in(
    xdg_data_home: Option<&std::ffi::OsStr>,
    home: Option<&std::ffi::OsStr>,
) -> Option<PathBuf> {
    let absolute = |value: &std::ffi::OsStr| Path::new(value).is_absolute();
    let data_home = xdg_data_home
        .filter(|v| absolute(v))
        .map(PathBuf::from)
        .or_else(|| {
            home.filter(|v| absolute(v))
                .map(|h| Path::new(h).join(".local/share"))
        })?;
    Some(data_home.join("schedlab").join("results.db"))
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
    }

    #[test]
    #[cfg(not(feature = "postgres"))]
    fn postgres_urls_are_refused_in_one_line_without_the_feature() {
        for url in [
            "postgres://u:secret@h/lab",
            "postgresql://h/lab?sslmode=require",
        ] {
            let message = parse(url).unwrap_err().to_string();
            assert!(
                message.contains("built without PostgreSQL"),
                "{url}: {message}"
            );
            assert!(
                !message.contains('\n') && !message.contains("secret"),
                "{url}: {message}"
            );
        }
    }

    #[test]
    #[cfg(feature = "postgres")]
    fn postgres_urls_name_a_database_and_their_tls() {
        let Location::Postgres(url) = parse("postgres://u:secret@db.example:5433/lab").unwrap()
        else {
            panic!("not PostgreSQL")
        };
        assert_eq!(url.tls, TlsMode::Prefer);
        assert_eq!(url.redacted(), "postgres://u:***@db.example:5433/lab");
        assert!(!format!("{url:?}").contains("secret"));
        let config = url.config();
        assert_eq!(config.get_dbname(), Some("lab"));
        assert_eq!(config.get_ports(), [5433]);

        let Location::Postgres(url) = parse(
            "postgresql://u@h/lab?sslmode=verify-full&sslrootcert=%2Fetc%2Fca.pem&application_name=x",
        )
        .unwrap() else {
            panic!("not PostgreSQL")
        };
        assert_eq!(url.tls, TlsMode::Verify);
        assert_eq!(
            url.root_cert.as_deref(),
            Some(std::path::Path::new("/etc/ca.pem"))
        );
        assert_eq!(url.config().get_application_name(), Some("x"));
        let Location::Postgres(url) = parse("postgres://h/lab?sslrootcert=ca.pem").unwrap() else {
            panic!("not PostgreSQL")
        };
        assert_eq!(url.tls, TlsMode::Verify, "a root certificate is used");
        let Location::Postgres(url) =
            parse("postgres://h/lab?sslmode=disable&password=pw").unwrap()
        else {
            panic!("not PostgreSQL")
        };
        assert_eq!(url.tls, TlsMode::Disable);
        assert_eq!(
            url.redacted(),
            "postgres://h/lab?sslmode=disable&password=***"
        );

        for bad in [
            "postgres://h/lab?sslmode=sometimes",
            "postgres://h/lab?nosuchoption=1",
            "postgres://u:pw@h:notaport/lab",
            "postgres://h/lab?sslrootcert=",
        ] {
            let message = parse(bad).unwrap_err().to_string();
            assert!(
                !message.contains('\n') && !message.contains(":pw@"),
                "{bad}: {message}"
            );
        }
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
