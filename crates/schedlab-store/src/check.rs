//! `schedlab db check`: what SQLite's own consistency check says about a results database, which
//! schema it holds, and how many runs it keeps by status — read-only, so it can run beside a
//! benchmark that is storing results.
use std::path::{Path, PathBuf};

use rusqlite::{Connection, OpenFlags};

use crate::liveness::{why_dead, Here};
use crate::rows::{owner_columns, owner_of, running_silences};
use crate::schema::{self, Shape};
use crate::sql::{Db, Lite, SqlRow};
use crate::summaries::{self, SummaryCheck};
use crate::{Result, StoreError};

/// Problems `integrity_check` lists beyond this many are left out; the first ones say enough.
const MAX_PROBLEMS: usize = 100;

/// What `db check` found.
#[derive(Debug, Clone, PartialEq)]
pub struct CheckReport {
    pub path: PathBuf,
    /// Whether `PRAGMA quick_check` ran instead of `integrity_check`.
    pub quick: bool,
    /// SQLite's complaints, empty when it answered "ok".
    pub integrity_problems: Vec<String>,
    /// The schema version; 0 for a file no writer has filled yet; `None` when it cannot be read.
    pub schema_version: Option<i64>,
    /// Why the schema cannot be trusted (a damaged history), if it cannot.
    pub schema_problem: Option<String>,
    /// Stored runs by status, every known status listed (running, complete, partial, interrupted, failed), then any other.
    pub runs_by_status: Vec<(String, i64)>,
    /// Runs whose process is gone while they still say `running`.
    pub abandoned_runs: Vec<AbandonedRun>,
    /// Every run's stored summaries compared with its iterations (from V9).
    pub summaries: SummaryCheck,
}

/// The statuses a run can have, in the order reports list them.
pub const STATUSES: [&str; 5] = ["running", "complete", "partial", "interrupted", "failed"];

/// A run that says `running` but whose process no longer exists (or whose boot has ended).
#[derive(Debug, Clone, PartialEq)]
pub struct AbandonedRun {
    pub id: i64,
    pub label: Option<String>,
    pub started_at_ns: i64,
    /// Why it is considered abandoned, e.g. "process 1234 on boot 5f… no longer exists".
    pub reason: String,
}

impl CheckReport {
    /// Nothing wrong: SQLite is happy and the schema history is intact.
    pub fn ok(&self) -> bool {
        self.integrity_problems.is_empty()
            && self.schema_problem.is_none()
            && self.summaries.problems.is_empty()
    }

    /// A report on `path` with nothing found yet.
    pub(crate) fn empty(path: PathBuf, quick: bool) -> CheckReport {
        CheckReport {
            path,
            quick,
            integrity_problems: Vec::new(),
            schema_version: None,
            schema_problem: None,
            runs_by_status: Vec::new(),
            abandoned_runs: Vec::new(),
            summaries: SummaryCheck::default(),
        }
    }
}

/// Checks the database at `path` without writing to it. Errors are for files that cannot be
/// judged at all (missing, not SQLite, another application's, from a newer schedlab); damage is
/// reported in the [`CheckReport`].
pub fn check(path: &Path, quick: bool) -> Result<CheckReport> {
    if !path.exists() {
        return Err(StoreError::NotFound(format!(
            "no results database at {}",
            path.display()
        )));
    }
    if let Some(reason) = schema::not_a_file(path) {
        return Err(StoreError::Unopenable {
            path: path.to_path_buf(),
            reason: reason.into(),
        });
    }
    let mut report = CheckReport::empty(path.to_path_buf(), quick);
    schema::refuse_foreign_file(path)?;
    let conn = Connection::open_with_flags(
        path,
        OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )
    .map_err(|e| StoreError::Unopenable {
        path: path.to_path_buf(),
        reason: schema::sqlite_text(&e),
    })?;
    conn.busy_timeout(std::time::Duration::from_secs(30))?;

    // The schema first: a file that cannot be judged at all is an error, not a damage report.
    match schema::inspect(&conn, path) {
        Ok(Shape::Empty) => report.schema_version = Some(0),
        Ok(Shape::Schedlab { version }) => report.schema_version = Some(version),
        Err(StoreError::Damaged { detail, .. }) => report.schema_problem = Some(detail),
        Err(StoreError::Unwritable { reason, .. } | StoreError::Unopenable { reason, .. }) => {
            return Err(StoreError::Unopenable {
                path: path.to_path_buf(),
                reason,
            })
        }
        Err(e @ (StoreError::NotSchedlab { .. } | StoreError::Newer { .. })) => return Err(e),
        Err(e) => report.schema_problem = Some(e.to_string()),
    }

    let pragma = if quick {
        "PRAGMA quick_check"
    } else {
        "PRAGMA integrity_check"
    };
    match integrity(&conn, pragma) {
        Ok(problems) => report.integrity_problems = problems,
        Err(e) => report
            .integrity_problems
            .push(format!("SQLite: {}", schema::sqlite_text(&e))),
    }

    if let Some(version) = report.schema_version.filter(|&v| v > 0) {
        match count_runs(&conn) {
            Ok(counts) => report.runs_by_status = counts,
            Err(e) => report.integrity_problems.push(format!(
                "counting runs: SQLite: {}",
                schema::sqlite_text(&e)
            )),
        }
        // A file the query cannot read lists none: the integrity check reports the damage.
        report.abandoned_runs = abandoned_runs(&mut Lite(&conn), version).unwrap_or_default();
        match summaries::verify(&mut Lite(&conn), version) {
            Ok(summaries) => report.summaries = summaries,
            Err(e) => report.summaries.problems.push(format!(
                "cannot compare the summaries with the iterations: {e}"
            )),
        }
    } else if report.schema_version == Some(0) {
        report.runs_by_status = STATUSES.iter().map(|s| (s.to_string(), 0)).collect();
    }
    Ok(report)
}

fn integrity(conn: &Connection, pragma: &str) -> rusqlite::Result<Vec<String>> {
    let mut stmt = conn.prepare(pragma)?;
    let mut rows = stmt.query([])?;
    let mut problems = Vec::new();
    while let Some(row) = rows.next()? {
        let line: String = row.get(0)?;
        if line == "ok" {
            continue;
        }
        // SQLite puts several findings in one row, separated by newlines.
        for part in line.lines().filter(|l| !l.trim().is_empty()) {
            if problems.len() < MAX_PROBLEMS {
                problems.push(part.to_string());
            }
        }
    }
    Ok(problems)
}

fn count_runs(conn: &Connection) -> rusqlite::Result<Vec<(String, i64)>> {
    let mut counts: Vec<(String, i64)> = STATUSES.iter().map(|s| (s.to_string(), 0)).collect();
    let mut stmt = conn.prepare("SELECT status, count(*) FROM runs GROUP BY status")?;
    let rows = stmt.query_map([], |r| Ok((r.get::<_, String>(0)?, r.get::<_, i64>(1)?)))?;
    for row in rows {
        let (status, n) = row?;
        match counts.iter_mut().find(|(s, _)| *s == status) {
            Some(entry) => entry.1 = n,
            None => counts.push((status, n)),
        }
    }
    Ok(counts)
}

/// The runs that say `running` but whose owner (pid and start time, boot, host) is gone, or,
/// where the owner cannot be looked up, which have been silent too long: judged as every reader
/// judges them ([`crate::liveness`]). Runs stored before owners were recorded still carry their
/// boot id and host, so a run of an earlier boot of this machine is found too. One query for
/// both backends (SQLite's check reads the file through [`Lite`]).
pub(crate) fn abandoned_runs<D: Db>(db: &mut D, version: i64) -> Result<Vec<AbandonedRun>> {
    if version < crate::schema::V_RUNS {
        return Ok(Vec::new());
    }
    let query = format!(
        "SELECT id, label, started_at_ns, boot_id, hostname, {}
           FROM runs WHERE status = 'running' ORDER BY id",
        owner_columns(version, "")
    );
    let rows = db.query(&query, &[], |r| {
        let owner = owner_of(r, 4)?.with_fallback(&r.get::<String>(3)?);
        Ok((
            r.get::<i64>(0)?,
            r.get::<Option<String>>(1)?,
            r.get::<i64>(2)?,
            owner,
        ))
    })?;
    let here = Here::now();
    let silences = running_silences(db)?;
    Ok(rows
        .into_iter()
        .filter_map(|(id, label, started_at_ns, owner)| {
            let reason = why_dead(&owner, &here, || silences.get(&id).copied())?;
            Some(AbandonedRun {
                id,
                label,
                started_at_ns,
                reason,
            })
        })
        .collect())
}
