//! One way to speak SQL to either backend, so each query and each row mapping is written once:
//! [`Db`] is a transaction on SQLite or PostgreSQL, [`Param`] a value both drivers can bind and
//! [`Column`] one both can read. Queries are written in PostgreSQL's dialect (`$1` placeholders,
//! `::text::uuid` where a uuid column meets a text parameter); [`sqlite_dialect`] turns them into
//! SQLite's, which numbers parameters `?1` and keeps a uuid as its text.
use std::borrow::Cow;
#[cfg(feature = "postgres")]
use std::collections::HashMap;
use std::ops::ControlFlow;

use crate::Result;

/// A value both drivers bind as a query parameter.
pub(crate) trait Param {
    fn sqlite(&self) -> &dyn rusqlite::ToSql;
    #[cfg(feature = "postgres")]
    fn pg(&self) -> &(dyn postgres::types::ToSql + Sync);
}

#[cfg(feature = "postgres")]
impl<T: rusqlite::ToSql + postgres::types::ToSql + Sync> Param for T {
    fn sqlite(&self) -> &dyn rusqlite::ToSql {
        self
    }

    fn pg(&self) -> &(dyn postgres::types::ToSql + Sync) {
        self
    }
}

// Without PostgreSQL (the `postgres` feature) a parameter need only be SQLite's.
#[cfg(not(feature = "postgres"))]
impl<T: rusqlite::ToSql> Param for T {
    fn sqlite(&self) -> &dyn rusqlite::ToSql {
        self
    }
}

/// A type both drivers read out of a column.
#[cfg(feature = "postgres")]
pub(crate) trait Column:
    rusqlite::types::FromSql + for<'a> postgres::types::FromSql<'a>
{
}

#[cfg(feature = "postgres")]
impl<T: rusqlite::types::FromSql + for<'a> postgres::types::FromSql<'a>> Column for T {}

/// A type SQLite reads out of a column (a build without the `postgres` feature).
#[cfg(not(feature = "postgres"))]
pub(crate) trait Column: rusqlite::types::FromSql {}

#[cfg(not(feature = "postgres"))]
impl<T: rusqlite::types::FromSql> Column for T {}

/// A row of a query's answer, on either backend.
pub(crate) trait SqlRow {
    fn get<T: Column>(&self, index: usize) -> Result<T>;
    /// The text of a column, borrowed from the row: a reader that keeps few rows of many copies
    /// nothing of the others.
    fn str_at(&self, index: usize) -> Result<&str>;
}

impl SqlRow for rusqlite::Row<'_> {
    fn get<T: Column>(&self, index: usize) -> Result<T> {
        Ok(rusqlite::Row::get(self, index)?)
    }

    fn str_at(&self, index: usize) -> Result<&str> {
        let value = self.get_ref(index)?;
        Ok(value.as_str().map_err(|e| {
            rusqlite::Error::FromSqlConversionFailure(index, value.data_type(), Box::new(e))
        })?)
    }
}

#[cfg(feature = "postgres")]
impl SqlRow for postgres::Row {
    fn get<T: Column>(&self, index: usize) -> Result<T> {
        Ok(self.try_get(index)?)
    }

    fn str_at(&self, index: usize) -> Result<&str> {
        Ok(self.try_get(index)?)
    }
}

/// Which SQL a backend speaks where the two differ beyond what [`sqlite_dialect`] rewrites.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Dialect {
    Sqlite,
    #[cfg(feature = "postgres")]
    Postgres,
}

/// A transaction on one backend. `sql` is in PostgreSQL's dialect.
pub(crate) trait Db {
    type Row<'r>: SqlRow;
    /// The column that orders rows in insertion order in tables without an `id` (SQLite's
    /// `measurements` and `attachments` have only their rowid; PostgreSQL's have an id).
    const ROW_ORDER: &'static str;
    const DIALECT: Dialect;

    /// Runs a statement; returns how many rows it changed.
    fn execute(&mut self, sql: &str, params: &[&dyn Param]) -> Result<u64>;

    /// Every row of the answer, each through `map`.
    fn query<T>(
        &mut self,
        sql: &str,
        params: &[&dyn Param],
        mut map: impl FnMut(&Self::Row<'_>) -> Result<T>,
    ) -> Result<Vec<T>> {
        let mut out = Vec::new();
        self.query_each(sql, params, |row| {
            out.push(map(row)?);
            Ok(())
        })?;
        Ok(out)
    }

    /// Every row of the answer to `each`, as the server sends them: none is held after `each`
    /// returns, so an answer of millions of rows takes the memory of one.
    fn query_each(
        &mut self,
        sql: &str,
        params: &[&dyn Param],
        mut each: impl FnMut(&Self::Row<'_>) -> Result<()>,
    ) -> Result<()> {
        self.query_until(sql, params, |row| each(row).map(ControlFlow::Continue))
    }

    /// As [`Db::query_each`] until `each` breaks: the rest of the answer is never computed
    /// (PostgreSQL sends it a batch at a time), so a query for the first rows that pass a test
    /// made on each costs what those rows cost.
    fn query_until(
        &mut self,
        sql: &str,
        params: &[&dyn Param],
        each: impl FnMut(&Self::Row<'_>) -> Result<ControlFlow<()>>,
    ) -> Result<()>;

    /// The first row of the answer through `map`, if there is one.
    fn query_opt<T>(
        &mut self,
        sql: &str,
        params: &[&dyn Param],
        map: impl FnMut(&Self::Row<'_>) -> Result<T>,
    ) -> Result<Option<T>> {
        Ok(self.query(sql, params, map)?.into_iter().next())
    }
}

/// A query in PostgreSQL's dialect, in SQLite's: `$N` becomes `?N` (SQLite numbers `$N` by first
/// appearance, not by N) and `::text::uuid` goes (SQLite keeps a uuid as its text).
pub(crate) fn sqlite_dialect(sql: &str) -> Cow<'_, str> {
    if !sql.contains('$') {
        return Cow::Borrowed(sql);
    }
    let sql = sql.replace("::text::uuid", "");
    let mut out = String::with_capacity(sql.len());
    let mut chars = sql.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '$' && chars.peek().is_some_and(char::is_ascii_digit) {
            out.push('?');
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

/// A transaction (or a connection inside one) on SQLite.
pub(crate) struct Lite<'c>(pub(crate) &'c rusqlite::Connection);

impl Db for Lite<'_> {
    type Row<'r> = rusqlite::Row<'r>;
    const ROW_ORDER: &'static str = "rowid";
    const DIALECT: Dialect = Dialect::Sqlite;

    fn execute(&mut self, sql: &str, params: &[&dyn Param]) -> Result<u64> {
        let mut statement = self.0.prepare_cached(&sqlite_dialect(sql))?;
        let changed = statement.execute(rusqlite::params_from_iter(
            params.iter().map(|p| p.sqlite()),
        ))?;
        Ok(changed as u64)
    }

    fn query_until(
        &mut self,
        sql: &str,
        params: &[&dyn Param],
        mut each: impl FnMut(&Self::Row<'_>) -> Result<ControlFlow<()>>,
    ) -> Result<()> {
        let mut statement = self.0.prepare_cached(&sqlite_dialect(sql))?;
        let mut rows = statement.query(rusqlite::params_from_iter(
            params.iter().map(|p| p.sqlite()),
        ))?;
        while let Some(row) = rows.next()? {
            if each(row)?.is_break() {
                break;
            }
        }
        Ok(())
    }
}

#[cfg(feature = "postgres")]
/// A transaction on PostgreSQL, which prepares each query once however often the transaction
/// runs it (an iteration's measurements are one insert each).
pub(crate) struct Pg<'c> {
    pub(crate) tx: postgres::Transaction<'c>,
    prepared: HashMap<String, postgres::Statement>,
}

#[cfg(feature = "postgres")]
impl<'c> Pg<'c> {
    pub(crate) fn new(tx: postgres::Transaction<'c>) -> Self {
        Pg {
            tx,
            prepared: HashMap::new(),
        }
    }

    fn statement(&mut self, sql: &str) -> Result<postgres::Statement> {
        if let Some(statement) = self.prepared.get(sql) {
            return Ok(statement.clone());
        }
        let statement = self.tx.prepare(sql)?;
        self.prepared.insert(sql.to_string(), statement.clone());
        Ok(statement)
    }
}

#[cfg(feature = "postgres")]
/// Rows fetched from a portal at once: few round trips, little memory.
const PORTAL_BATCH: i32 = 2_000;

#[cfg(feature = "postgres")]
fn pg_params<'p>(params: &'p [&dyn Param]) -> Vec<&'p (dyn postgres::types::ToSql + Sync)> {
    params.iter().map(|p| p.pg()).collect()
}

#[cfg(feature = "postgres")]
impl Db for Pg<'_> {
    type Row<'r> = postgres::Row;
    const ROW_ORDER: &'static str = "id";
    const DIALECT: Dialect = Dialect::Postgres;

    fn execute(&mut self, sql: &str, params: &[&dyn Param]) -> Result<u64> {
        let statement = self.statement(sql)?;
        Ok(self.tx.execute(&statement, &pg_params(params))?)
    }

    fn query<T>(
        &mut self,
        sql: &str,
        params: &[&dyn Param],
        map: impl FnMut(&Self::Row<'_>) -> Result<T>,
    ) -> Result<Vec<T>> {
        let statement = self.statement(sql)?;
        self.tx
            .query(&statement, &pg_params(params))?
            .iter()
            .map(map)
            .collect()
    }

    /// Rows fetched through a portal a batch at a time, so the server computes no more of the
    /// answer than is read.
    fn query_until(
        &mut self,
        sql: &str,
        params: &[&dyn Param],
        mut each: impl FnMut(&Self::Row<'_>) -> Result<ControlFlow<()>>,
    ) -> Result<()> {
        let statement = self.statement(sql)?;
        let portal = self.tx.bind(&statement, &pg_params(params))?;
        loop {
            let rows = self.tx.query_portal(&portal, PORTAL_BATCH)?;
            for row in &rows {
                if each(row)?.is_break() {
                    return Ok(());
                }
            }
            if rows.len() < PORTAL_BATCH as usize {
                return Ok(());
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn placeholders_are_numbered_for_sqlite_and_uuid_casts_dropped() {
        assert_eq!(
            sqlite_dialect("UPDATE runs SET status = $2 WHERE id = $1 AND uuid = $10::text::uuid"),
            "UPDATE runs SET status = ?2 WHERE id = ?1 AND uuid = ?10"
        );
        assert_eq!(sqlite_dialect("SELECT 1"), "SELECT 1");
    }
}
