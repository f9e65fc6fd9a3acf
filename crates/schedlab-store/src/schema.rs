//! The schema of an SQLite results database: which version a file holds, found without writing a
//! byte, and the embedded migrations applied inside one exclusive transaction together with the
//! application id and `user_version`, so a file is either empty or a complete schedlab database
//! to every other process — however many open a new file at once.
//!
//! The history table keeps the layout and checksums of refinery, which older schedlab binaries
//! migrated with (`migrations.rs` embeds the files and computes its checksums), so databases
//! written by either stay valid for both. Its runner is not used: it migrates in several
//! transactions, writes the application id nowhere, and panics on a damaged history row.
use std::path::Path;
use std::sync::OnceLock;
use std::time::{SystemTime, UNIX_EPOCH};

use rusqlite::types::ValueRef;
use rusqlite::{params, Connection, ErrorCode};

use crate::{Result, StoreError};

pub use crate::migrations::Migration;

/// refinery's own embedding, for the tests that run its runner as older schedlab binaries did.
#[cfg(test)]
mod embedded {
    refinery::embed_migrations!("migrations/sqlite");
}

/// `PRAGMA application_id` of schedlab databases ("SchL").
pub const APPLICATION_ID: i32 = 0x5363_684C;

/// refinery's schema-history table, kept so older schedlab binaries accept newer files.
pub const HISTORY_TABLE: &str = "refinery_schema_history";

/// The oldest schema readers can read. Every query a reader makes checks the version a table or
/// column arrived in (the `V_*` constants) and reads an older file as "none of those": no
/// attachments before V2, no experiments before V3, no calibrations before V4, no metric
/// definitions before V7 (measurements then read as `legacy` says). A migration that
/// readers cannot do without raises this, and older files then need `schedlab db upgrade`.
pub const OLDEST_READABLE_VERSION: i64 = 1;

/// The versions in which tables readers query arrived.
pub const V_RUNS: i64 = 1;
pub const V_ATTACHMENTS: i64 = 2;
pub const V_EXPERIMENTS: i64 = 3;
pub const V_CALIBRATIONS: i64 = 4;
/// Who runs a run (pid, start time, boot, host) and each case's error.
pub const V_RUN_OWNER: i64 = 5;
/// Each case's metric definitions (`metrics`): a measurement's shape and distribution.
pub const V_METRIC_DEFS: i64 = 7;
/// Every run's globally unique id (`runs.uuid`).
pub const V_RUN_UUID: i64 = 8;
/// Every run's summary of every metric of every case (`summaries`, `summarised_cases`) and its
/// measuring build (`runs.measured_by`), which the upgrade fills for older runs from their
/// iterations ([`AfterMigration`]).
pub const V_SUMMARIES: i64 = 9;
/// The quiet-machine guard's mark of each iteration run under it (`iteration_quiet`).
pub const V_QUIET: i64 = 11;

/// What follows a migration's SQL in the same transaction, given the version just applied: the
/// rows a migration cannot compute in SQL (V9's summaries), which the caller fills.
pub(crate) type AfterMigration<'a> = &'a dyn Fn(&Connection, i64) -> Result<()>;

/// refinery's DDL for the history table, verbatim, so the table looks the same whoever made it;
/// the same on SQLite and PostgreSQL.
pub(crate) const CREATE_HISTORY: &str = "CREATE TABLE IF NOT EXISTS refinery_schema_history(
             version int4 PRIMARY KEY,
             name VARCHAR(255),
             applied_on VARCHAR(255),
             checksum VARCHAR(255));";

/// The embedded migrations, by version.
pub fn migrations() -> &'static [Migration] {
    static MIGRATIONS: OnceLock<Vec<Migration>> = OnceLock::new();
    MIGRATIONS.get_or_init(|| Migration::all(crate::migrations::SQLITE))
}

/// The placeholder V9 that schedlab built between the probes (V10) and the run summaries (the
/// real V9) recorded in both dialects: `SELECT 1`, which changed nothing. A database whose history
/// holds it has V10's tables but not V9's; it reads as V8 until a writer applies the real V9 and
/// puts its record in the placeholder's place ([`History::retired`]).
pub fn retired_v9() -> &'static Migration {
    static RETIRED: OnceLock<Migration> = OnceLock::new();
    RETIRED.get_or_init(|| {
        let (file, sql) = crate::migrations::RETIRED_V9;
        Migration::of_file(file, sql)
    })
}

/// What a schema history says, once checked against this schedlab's migrations.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct History {
    /// The versions recorded with this schedlab's name and checksum, in order.
    pub applied: Vec<i64>,
    /// Versions recorded as a retired migration ([`retired_v9`]): their tables are missing.
    pub retired: Vec<i64>,
}

impl History {
    /// The schema version queries may assume: every migration up to it applied.
    pub fn readable_version(&self) -> i64 {
        let mut version = 0;
        while self.applied.contains(&(version + 1)) {
            version += 1;
        }
        version
    }

    /// Whether migration `version` must still be applied.
    pub fn needs(&self, version: i64) -> bool {
        !self.applied.contains(&version)
    }
}

/// Checks a history row against this schedlab's migrations: `Some(true)` when it is ours, `Some
/// (false)` when it is a retired migration's, `None` when it is neither.
pub(crate) fn recognise(
    ours: &[Migration],
    version: i64,
    name: &str,
    checksum: Option<u64>,
) -> Option<bool> {
    let is = |m: &Migration| m.version == version && m.name == name && Some(m.checksum) == checksum;
    if ours.iter().any(is) {
        Some(true)
    } else if is(retired_v9()) {
        Some(false)
    } else {
        None
    }
}

/// The newest schema version this schedlab knows (its highest migration).
pub fn known_version() -> i64 {
    migrations().last().map_or(0, |m| m.version)
}

/// What a file holds, as far as the schema goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shape {
    /// No tables and no mark: a new or zero-byte file, or one a writer is about to fill.
    Empty,
    /// A schedlab database at this schema version (at most [`known_version`]): every migration up
    /// to it applied ([`History::readable_version`]).
    Schedlab { version: i64 },
}

/// Turns an SQLite error met on `path` into what the user must hear: a damaged file, a file that
/// is not a database, one that cannot be written or opened, or (busy, locked, anything else) the
/// error itself.
pub fn classify(path: &Path, e: rusqlite::Error) -> StoreError {
    match e.sqlite_error_code() {
        Some(ErrorCode::DatabaseCorrupt) => damaged(path, format!("SQLite: {}", sqlite_text(&e))),
        Some(ErrorCode::NotADatabase) => {
            if has_sqlite_magic(path).unwrap_or(false) {
                damaged(path, format!("SQLite: {}", sqlite_text(&e)))
            } else {
                StoreError::NotSchedlab {
                    path: path.to_path_buf(),
                    why: "it is not an SQLite file".into(),
                }
            }
        }
        // SQLite opens a file it may not write read-only without a word; the first write says so.
        Some(ErrorCode::ReadOnly) => StoreError::Unwritable {
            path: path.to_path_buf(),
            reason: sqlite_text(&e),
        },
        Some(ErrorCode::CannotOpen | ErrorCode::PermissionDenied) => StoreError::Unopenable {
            path: path.to_path_buf(),
            reason: sqlite_text(&e),
        },
        _ => StoreError::Database(e),
    }
}

pub fn damaged(path: &Path, detail: impl Into<String>) -> StoreError {
    StoreError::Damaged {
        path: path.to_path_buf(),
        detail: detail.into(),
    }
}

/// SQLite's own message, without rusqlite's wrapping.
pub fn sqlite_text(e: &rusqlite::Error) -> String {
    match e {
        rusqlite::Error::SqliteFailure(_, Some(message)) => message.clone(),
        rusqlite::Error::SqliteFailure(f, None) => f.to_string(),
        other => other.to_string(),
    }
}

/// Whether the file starts as every SQLite database does; tells a damaged database from a file
/// that never was one. A file shorter than the magic does not; one that cannot be read is an
/// error, not a foreign file.
pub fn has_sqlite_magic(path: &Path) -> std::io::Result<bool> {
    use std::io::Read;
    let mut head = Vec::with_capacity(16);
    std::fs::File::open(path)?.take(16).read_to_end(&mut head)?;
    Ok(head == b"SQLite format 3\0")
}

/// A file that is not empty and does not start as an SQLite database does: SQLite would take a
/// file shorter than its header for a new database (and a writer would write over it), so it is
/// refused before SQLite sees it. A file that cannot be read says why.
pub(crate) fn refuse_foreign_file(path: &Path) -> Result<()> {
    let unopenable = |e: std::io::Error| StoreError::Unopenable {
        path: path.to_path_buf(),
        reason: e.to_string(),
    };
    let len = std::fs::metadata(path).map_or(0, |m| m.len());
    if len == 0 || has_sqlite_magic(path).map_err(unopenable)? {
        return Ok(());
    }
    Err(StoreError::NotSchedlab {
        path: path.to_path_buf(),
        why: "it is not an SQLite file".into(),
    })
}

/// Why `path`, which exists, cannot hold a database: a directory, or a device, FIFO or socket
/// (`--db /dev/null` would fail later with SQLite's "disk I/O error"). `None` for a regular file
/// or a path with nothing there yet.
pub(crate) fn not_a_file(path: &Path) -> Option<&'static str> {
    let found = std::fs::metadata(path).ok()?;
    if found.is_dir() {
        Some("it is a directory")
    } else if !found.is_file() {
        Some("it is not a regular file (a device, a FIFO or a socket)")
    } else {
        None
    }
}

/// Reads the schema version of the database on `conn` without writing anything. Refuses files
/// of other applications, files a newer schedlab wrote, and damaged schema histories.
pub fn inspect(conn: &Connection, path: &Path) -> Result<Shape> {
    inspect_history(conn, path).map(|(shape, _)| shape)
}

/// [`inspect`], with which migrations the history records.
pub(crate) fn inspect_history(conn: &Connection, path: &Path) -> Result<(Shape, History)> {
    let sql_err = |e| classify(path, e);
    let application_id: i32 = conn
        .query_row("PRAGMA application_id", [], |r| r.get(0))
        .map_err(sql_err)?;
    let user_version: i64 = conn
        .query_row("PRAGMA user_version", [], |r| r.get(0))
        .map_err(sql_err)?;
    let tables: Vec<String> = conn
        .prepare("SELECT name FROM sqlite_master WHERE type = 'table'")
        .and_then(|mut s| s.query_map([], |r| r.get(0))?.collect())
        .map_err(sql_err)?;
    if application_id != APPLICATION_ID {
        if tables.is_empty() && application_id == 0 && user_version == 0 {
            return Ok((
                Shape::Empty,
                History {
                    applied: Vec::new(),
                    retired: Vec::new(),
                },
            ));
        }
        let why = if application_id == 0 {
            "an SQLite database without schedlab's application id".to_string()
        } else {
            format!("an SQLite database of another application, id {application_id:#010x}")
        };
        return Err(StoreError::NotSchedlab {
            path: path.to_path_buf(),
            why,
        });
    }
    if !tables.iter().any(|t| t == HISTORY_TABLE) {
        return Err(damaged(
            path,
            format!("it has schedlab's mark but no schema history ({HISTORY_TABLE})"),
        ));
    }
    let history = read_history(conn, path)?;
    let known = known_version();
    let history_top = history.last().map_or(0, |row| row.version);
    let version = history_top.max(user_version);
    if version > known {
        return Err(StoreError::Newer {
            path: path.to_path_buf(),
            version,
            known,
        });
    }
    if history.is_empty() {
        return Err(damaged(path, "its schema history is empty"));
    }
    let mut found = History {
        applied: Vec::new(),
        retired: Vec::new(),
    };
    for (expected, row) in (1..).zip(&history) {
        if row.version != expected {
            return Err(damaged(
                path,
                format!("schema history row V{expected} is missing"),
            ));
        }
        let ours = migrations().iter().find(|m| m.version == row.version);
        match recognise(migrations(), row.version, &row.name, Some(row.checksum)) {
            Some(true) => found.applied.push(row.version),
            Some(false) => found.retired.push(row.version),
            None => {
                return Err(damaged(
                    path,
                    format!(
                    "schema history row V{}__{} does not match this schedlab's migration V{}__{}",
                    row.version,
                    row.name,
                    row.version,
                    ours.map_or("?", |m| m.name.as_str())
                ),
                ))
            }
        }
    }
    if user_version > history_top {
        return Err(damaged(
            path,
            format!("user_version {user_version} is ahead of its schema history (V{history_top})"),
        ));
    }
    let version = found.readable_version();
    Ok((Shape::Schedlab { version }, found))
}

struct HistoryRow {
    version: i64,
    name: String,
    checksum: u64,
}

/// The history rows, each checked as refinery would need it (it unwraps the time and the
/// checksum), ordered by version.
fn read_history(conn: &Connection, path: &Path) -> Result<Vec<HistoryRow>> {
    let unreadable = |e: rusqlite::Error| match classify(path, e) {
        StoreError::Database(e) => damaged(
            path,
            format!(
                "its schema history cannot be read (SQLite: {})",
                sqlite_text(&e)
            ),
        ),
        other => other,
    };
    let mut stmt = conn
        .prepare(&format!(
            "SELECT version, name, applied_on, checksum FROM {HISTORY_TABLE} ORDER BY version"
        ))
        .map_err(unreadable)?;
    let mut rows = stmt.query([]).map_err(unreadable)?;
    let mut out = Vec::new();
    let mut position = 0;
    while let Some(row) = rows.next().map_err(unreadable)? {
        position += 1;
        let bad = |what: String| damaged(path, format!("schema history row {position}: {what}"));
        let version = match row.get_ref(0).map_err(unreadable)? {
            ValueRef::Integer(v) if v > 0 => v,
            other => return Err(bad(format!("version {}", describe(other)))),
        };
        let name = match row.get_ref(1).map_err(unreadable)? {
            ValueRef::Text(t) if !t.is_empty() => String::from_utf8_lossy(t).into_owned(),
            other => return Err(bad(format!("name {}", describe(other)))),
        };
        match row.get_ref(2).map_err(unreadable)? {
            ValueRef::Text(t) if looks_rfc3339(t) => {}
            other => return Err(bad(format!("applied_on {}", describe(other)))),
        }
        let checksum = match row.get_ref(3).map_err(unreadable)? {
            ValueRef::Text(t) => std::str::from_utf8(t).ok().and_then(|s| s.parse().ok()),
            ValueRef::Integer(i) => u64::try_from(i).ok(),
            _ => None,
        };
        let Some(checksum) = checksum else {
            let raw = row.get_ref(3).map_err(unreadable)?;
            return Err(bad(format!("checksum {}", describe(raw))));
        };
        out.push(HistoryRow {
            version,
            name,
            checksum,
        });
    }
    Ok(out)
}

/// A stored value as an error message shows it: short, one line.
fn describe(value: ValueRef<'_>) -> String {
    match value {
        ValueRef::Null => "is missing".into(),
        ValueRef::Integer(i) => format!("{i} is invalid"),
        ValueRef::Real(f) => format!("{f} is invalid"),
        ValueRef::Text(t) => {
            let text: String = String::from_utf8_lossy(t)
                .chars()
                .take(40)
                .map(|c| if c.is_control() { '?' } else { c })
                .collect();
            format!("{text:?} is invalid")
        }
        ValueRef::Blob(b) => format!("is a {}-byte blob", b.len()),
    }
}

/// `YYYY-MM-DDTHH:MM:SS[.frac](Z|±HH:MM)`, the only shape refinery can parse back.
pub(crate) fn looks_rfc3339(text: &[u8]) -> bool {
    let digits = |range: std::ops::Range<usize>| {
        text.get(range)
            .is_some_and(|d| d.iter().all(u8::is_ascii_digit))
    };
    let at = |i: usize, c: u8| text.get(i) == Some(&c);
    if !(digits(0..4)
        && at(4, b'-')
        && digits(5..7)
        && at(7, b'-')
        && digits(8..10)
        && (at(10, b'T') || at(10, b't'))
        && digits(11..13)
        && at(13, b':')
        && digits(14..16)
        && at(16, b':')
        && digits(17..19))
    {
        return false;
    }
    let mut rest = &text[19..];
    if let Some(fraction) = rest.strip_prefix(b".") {
        let n = fraction.iter().take_while(|b| b.is_ascii_digit()).count();
        if n == 0 {
            return false;
        }
        rest = &fraction[n..];
    }
    match rest {
        [b'Z' | b'z'] => true,
        [b'+' | b'-', h1, h2, b':', m1, m2] => [h1, h2, m1, m2].iter().all(|b| b.is_ascii_digit()),
        _ => false,
    }
}

/// Now as RFC 3339 UTC with nanoseconds, as refinery writes `applied_on`.
pub(crate) fn now_rfc3339() -> String {
    let since = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default();
    let secs = since.as_secs() as i64;
    let (days, rem) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
    // Howard Hinnant's days-to-civil.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}.{:09}Z",
        rem / 3600,
        rem / 60 % 60,
        rem % 60,
        since.subsec_nanos()
    )
}

/// Brings the database on `tx` to [`known_version`]: inspects it again inside the transaction
/// (another process may have created or upgraded it since the caller looked), applies each
/// missing migration with its history row, and marks the file. Returns the version it found.
/// The caller holds the exclusive transaction and commits it.
pub(crate) fn migrate_in(tx: &Connection, path: &Path, after: AfterMigration<'_>) -> Result<i64> {
    migrate_to(tx, path, known_version(), after)
}

/// [`migrate_in`] up to `target` only: how tests make databases of older schemas.
pub(crate) fn migrate_to(
    tx: &Connection,
    path: &Path,
    target: i64,
    after: AfterMigration<'_>,
) -> Result<i64> {
    let (shape, history) = inspect_history(tx, path)?;
    let from = match shape {
        Shape::Empty => 0,
        Shape::Schedlab { version } => version,
    };
    let sql_err = |e| classify(path, e);
    if shape == Shape::Empty {
        tx.execute_batch(CREATE_HISTORY).map_err(sql_err)?;
    }
    for m in migrations()
        .iter()
        .filter(|m| m.version <= target && history.needs(m.version))
    {
        tx.execute_batch(&m.sql)
            .map_err(|e| match classify(path, e) {
                StoreError::Database(e) => StoreError::Unwritable {
                    path: path.to_path_buf(),
                    reason: format!(
                        "migration V{}__{} failed: {}",
                        m.version,
                        m.name,
                        sqlite_text(&e)
                    ),
                },
                other => other,
            })?;
        after(tx, m.version)?;
        // A retired migration's record gives way to the one applied in its place.
        tx.execute(
            &format!(
                "INSERT OR REPLACE INTO {HISTORY_TABLE} (version, name, applied_on, checksum) VALUES (?1, ?2, ?3, ?4)"
            ),
            params![m.version, m.name, now_rfc3339(), m.checksum.to_string()],
        )
        .map_err(sql_err)?;
    }
    // Migrations run without foreign-key enforcement (a table rebuild needs it off): every key
    // must still hold before the commit.
    let dangling: i64 = tx
        .query_row("SELECT count(*) FROM pragma_foreign_key_check", [], |r| {
            r.get(0)
        })
        .map_err(sql_err)?;
    if dangling > 0 {
        return Err(damaged(
            path,
            format!(
                "rows that refer to rows that do not exist: {dangling} (PRAGMA foreign_key_check)"
            ),
        ));
    }
    tx.pragma_update(None, "application_id", APPLICATION_ID)
        .map_err(sql_err)?;
    let top = history.applied.iter().chain(&history.retired).max();
    tx.pragma_update(None, "user_version", target.max(top.copied().unwrap_or(0)))
        .map_err(sql_err)?;
    Ok(from)
}

/// Checks a schema version a reader found: readable, or the one line saying who must act.
pub fn check_readable(path: &Path, version: i64) -> Result<()> {
    if version < OLDEST_READABLE_VERSION {
        return Err(StoreError::NeedsUpgrade {
            path: path.to_path_buf(),
            version,
            oldest: OLDEST_READABLE_VERSION,
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn embedded_migrations_are_versioned_one_to_n() {
        let all = migrations();
        assert!(!all.is_empty());
        for (expected, m) in (1..).zip(all) {
            assert_eq!(m.version, expected, "{}", m.name);
            assert!(!m.sql.trim().is_empty(), "V{}", m.version);
        }
        assert_eq!(known_version(), all.len() as i64);
        assert!(OLDEST_READABLE_VERSION <= known_version());
        assert!(V_CALIBRATIONS <= known_version());
        assert!(V_METRIC_DEFS <= known_version());
        assert!(V_RUN_UUID <= known_version());
    }

    #[test]
    fn applied_on_is_rfc3339_as_refinery_writes_it() {
        let now = now_rfc3339();
        assert!(looks_rfc3339(now.as_bytes()), "{now}");
        assert!(looks_rfc3339(b"2026-11-23T16:24:01.941680997Z"));
        assert!(looks_rfc3339(b"2026-11-23T16:24:01+02:00"));
        for bad in [
            "",
            "yesterday",
            "2026-11-23",
            "2026-11-23T16:24:01.Z",
            "2026-11-23T16:24:01",
        ] {
            assert!(!looks_rfc3339(bad.as_bytes()), "{bad}");
        }
    }

    /// Older schedlab binaries run refinery's runner on every open: it must find nothing to do in
    /// a file this applier made, and this applier must accept a file refinery made.
    #[test]
    fn refinery_and_this_applier_accept_each_others_databases() {
        let dir = tempfile::tempdir().unwrap();
        let ours = dir.path().join("ours.db");
        drop(crate::SqliteStore::open(&ours).unwrap());
        let mut conn = Connection::open(&ours).unwrap();
        let report = embedded::migrations::runner().run(&mut conn).unwrap();
        assert!(report.applied_migrations().is_empty());

        let theirs = dir.path().join("theirs.db");
        let mut conn = Connection::open(&theirs).unwrap();
        embedded::migrations::runner().run(&mut conn).unwrap();
        conn.pragma_update(None, "application_id", APPLICATION_ID)
            .unwrap();
        drop(conn);
        let reader = crate::SqliteStore::open_existing(&theirs).unwrap();
        assert_eq!(reader.schema_version(), known_version());
        let writer = crate::SqliteStore::open(&theirs).unwrap();
        assert_eq!(writer.found_version(), known_version());

        // A file refinery took to V8, as a schedlab of that version left it: read, then upgraded
        // by this applier, V9's summaries and V10's tables added and recorded after refinery's rows.
        let older = dir.path().join("older.db");
        let mut conn = Connection::open(&older).unwrap();
        embedded::migrations::runner()
            .set_target(refinery::Target::Version(8))
            .run(&mut conn)
            .unwrap();
        conn.pragma_update(None, "application_id", APPLICATION_ID)
            .unwrap();
        drop(conn);
        let reader = crate::SqliteStore::open_existing(&older).unwrap();
        assert_eq!(reader.schema_version(), 8);
        drop(reader);
        let writer = crate::SqliteStore::open(&older).unwrap();
        assert_eq!(writer.found_version(), 8);
        drop(writer);
        let conn = Connection::open(&older).unwrap();
        let (shape, history) = inspect_history(&conn, &older).unwrap();
        assert_eq!(
            shape,
            Shape::Schedlab {
                version: known_version()
            }
        );
        assert_eq!(history.applied, (1..=known_version()).collect::<Vec<_>>());
        drop(conn);
        let mut conn = Connection::open(&older).unwrap();
        let report = embedded::migrations::runner().run(&mut conn).unwrap();
        assert!(
            report.applied_migrations().is_empty(),
            "refinery accepts it"
        );
    }

    #[test]
    fn readers_need_the_oldest_readable_version() {
        let path = Path::new("r.db");
        assert!(check_readable(path, OLDEST_READABLE_VERSION).is_ok());
        let message = check_readable(path, OLDEST_READABLE_VERSION - 1)
            .unwrap_err()
            .to_string();
        assert!(message.contains("schedlab db upgrade"), "{message}");
    }
}
