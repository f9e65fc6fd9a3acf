//! The schema of a PostgreSQL results database: the same tables as SQLite's, version for version,
//! from `migrations/postgres`, with refinery's history table so either tool sees the same history.
//! A writer migrates inside one transaction holding an advisory lock — DDL is transactional in
//! PostgreSQL — so N machines opening one new database at once all succeed and every other session
//! sees either no schema or a complete one. Readers only look.
use std::sync::OnceLock;

use postgres::GenericClient;

use crate::schema::{
    looks_rfc3339, now_rfc3339, recognise, History, Migration, CREATE_HISTORY, HISTORY_TABLE,
};
use crate::sql::Pg;
use crate::{Result, StoreError};

/// The advisory lock every migrating writer takes ("SchL", as SQLite's application id).
const MIGRATION_LOCK: i64 = 0x5363_684C;

/// The embedded PostgreSQL migrations, by version.
pub fn migrations() -> &'static [Migration] {
    static MIGRATIONS: OnceLock<Vec<Migration>> = OnceLock::new();
    MIGRATIONS.get_or_init(|| Migration::all(crate::migrations::POSTGRES))
}

/// The schema version of the database on `client` (0: no schema yet), found without writing.
/// Refuses a database holding another application's `runs` table, a newer schedlab's schema, and
/// a damaged history.
pub fn inspect(client: &mut impl GenericClient, url: &str) -> Result<i64> {
    inspect_history(client, url).map(|history| history.readable_version())
}

/// [`inspect`], with which migrations the history records (none: no schema yet). A history that
/// records the retired placeholder V9 ([`crate::schema::retired_v9`]) reads as V8.
pub fn inspect_history(client: &mut impl GenericClient, url: &str) -> Result<History> {
    let damaged = |detail: String| StoreError::Damaged {
        path: url.into(),
        detail,
    };
    let (history, runs) = history_and_runs_exist(client)?;
    if !history {
        if runs {
            return Err(StoreError::NotSchedlab {
                path: url.into(),
                why: "it has a `runs` table but no schedlab schema history; give schedlab a database of its own".into(),
            });
        }
        return Ok(History {
            applied: Vec::new(),
            retired: Vec::new(),
        });
    }
    let rows = client
        .query(
            &format!(
                "SELECT version, name, applied_on, checksum FROM {HISTORY_TABLE} ORDER BY version"
            ),
            &[],
        )
        .map_err(|e| {
            damaged(format!(
                "its schema history cannot be read ({})",
                crate::error::postgres_error_text(&e)
            ))
        })?;
    let known = known_version();
    let mut found = History {
        applied: Vec::new(),
        retired: Vec::new(),
    };
    for (expected, row) in (1..).zip(&rows) {
        let version: Option<i32> = row.try_get(0)?;
        let name: Option<String> = row.try_get(1)?;
        let applied_on: Option<String> = row.try_get(2)?;
        let checksum: Option<String> = row.try_get(3)?;
        let version = i64::from(version.unwrap_or(0));
        if version > known {
            return Err(StoreError::Newer {
                path: url.into(),
                version,
                known,
            });
        }
        if version != expected {
            return Err(damaged(format!(
                "schema history row V{expected} is missing"
            )));
        }
        if !applied_on.is_some_and(|t| looks_rfc3339(t.as_bytes())) {
            return Err(damaged(format!(
                "schema history row V{version}: applied_on is invalid"
            )));
        }
        let recognised = recognise(
            migrations(),
            version,
            name.as_deref().unwrap_or_default(),
            checksum.as_deref().and_then(|c| c.parse().ok()),
        );
        match recognised {
            Some(true) => found.applied.push(version),
            Some(false) => found.retired.push(version),
            None => {}
        }
        if recognised.is_none() {
            if version == 1 {
                return Err(StoreError::NotSchedlab {
                    path: url.into(),
                    why: "its refinery schema history is another application's".into(),
                });
            }
            return Err(damaged(format!(
                "schema history row V{version}__{} does not match this schedlab's migration",
                name.unwrap_or_default()
            )));
        }
    }
    if rows.is_empty() {
        return Err(damaged("its schema history is empty".into()));
    }
    Ok(found)
}

/// Whether the history table and a `runs` table are on the search path, read in one statement:
/// one snapshot of the catalog sees a migration's tables all or none. Two looks (as
/// `to_regclass` twice) could straddle a writer's commit, and a reader of a database being
/// created then found `runs` without the history: "not a schedlab database" (seen once in CI).
fn history_and_runs_exist(client: &mut impl GenericClient) -> Result<(bool, bool)> {
    let row = client.query_one(
        "SELECT coalesce(bool_or(c.relname = $1), false), coalesce(bool_or(c.relname = 'runs'), false)
           FROM pg_catalog.pg_class c
          WHERE c.relname IN ($1, 'runs') AND c.relkind IN ('r', 'p')
            AND pg_catalog.pg_table_is_visible(c.oid)",
        &[&HISTORY_TABLE],
    )?;
    Ok((row.try_get(0)?, row.try_get(1)?))
}

/// The newest PostgreSQL schema version this schedlab knows.
pub fn known_version() -> i64 {
    migrations().last().map_or(0, |m| m.version)
}

/// Brings the database to [`known_version`] in one transaction under the migration lock, looking
/// again once the lock is held (another machine may have just done it), with what `after` adds
/// to each migration in the same transaction (V9's summaries). Returns the version found.
pub fn migrate(
    client: &mut postgres::Client,
    url: &str,
    after: &dyn Fn(&mut Pg<'_>, i64) -> Result<()>,
) -> Result<i64> {
    let mut db = Pg::new(client.transaction()?);
    db.tx
        .execute("SELECT pg_advisory_xact_lock($1)", &[&MIGRATION_LOCK])?;
    let history = inspect_history(&mut db.tx, url)?;
    let from = history.readable_version();
    if history.applied.is_empty() && history.retired.is_empty() {
        db.tx.batch_execute(CREATE_HISTORY)?;
    }
    for m in migrations().iter().filter(|m| history.needs(m.version)) {
        db.tx
            .batch_execute(&m.sql)
            .map_err(|e| StoreError::Unwritable {
                path: url.into(),
                reason: format!(
                    "migration V{}__{} failed: {}",
                    m.version,
                    m.name,
                    crate::error::postgres_error_text(&e)
                ),
            })?;
        after(&mut db, m.version)?;
        let version = i32::try_from(m.version).unwrap_or(i32::MAX);
        // A retired migration's record gives way to the one applied in its place.
        db.tx.execute(
            &format!("DELETE FROM {HISTORY_TABLE} WHERE version = $1"),
            &[&version],
        )?;
        db.tx.execute(
            &format!(
                "INSERT INTO {HISTORY_TABLE} (version, name, applied_on, checksum) VALUES ($1, $2, $3, $4)"
            ),
            &[&version, &m.name, &now_rfc3339(), &m.checksum.to_string()],
        )?;
    }
    db.tx.commit()?;
    Ok(from)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One schema in two dialects: the same versions and names, so "schema version N" means the
    /// same tables whichever backend holds them.
    #[test]
    fn both_dialects_have_the_same_migrations() {
        let sqlite: Vec<(i64, &str)> = crate::schema::migrations()
            .iter()
            .map(|m| (m.version, m.name.as_str()))
            .collect();
        let postgres: Vec<(i64, &str)> = migrations()
            .iter()
            .map(|m| (m.version, m.name.as_str()))
            .collect();
        assert_eq!(sqlite, postgres);
    }
}
