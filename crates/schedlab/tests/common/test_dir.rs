//! Every test's temporary directory, and the check each database in it gets when the test ends:
//! the store's summaries of every run (what `history` and `changes` read) are what the analysis
//! computes from the run's iterations ([`super::summaries`]), and `db check` finds them current.
//! A fixture that changes stored iterations behind the store's back says so with
//! [`resummarise`], as the store would have summarised them had a run measured them.
use std::path::{Path, PathBuf};

use schedlab_store::{SqliteStore, Store};

use super::summaries;

pub fn temp_db() -> (TestDir, PathBuf) {
    let dir = temp_dir();
    let db = dir.path().join("results.db");
    (dir, db)
}

/// A temporary directory whose databases are checked when the test lets go of it ([`TestDir`]).
pub fn temp_dir() -> TestDir {
    TestDir {
        dir: tempfile::tempdir().unwrap(),
    }
}

/// A test's temporary directory: when a test that passed lets go of it, every database in it
/// (`*.db`) is checked — each run's stored summaries against what the analysis computes from the
/// run's iterations, and against what `db check` recomputes — so every database a test leaves
/// behind is checked.
pub struct TestDir {
    dir: tempfile::TempDir,
}

impl std::ops::Deref for TestDir {
    type Target = tempfile::TempDir;

    fn deref(&self) -> &tempfile::TempDir {
        &self.dir
    }
}

impl Drop for TestDir {
    fn drop(&mut self) {
        if std::thread::panicking() {
            return;
        }
        let Ok(entries) = std::fs::read_dir(self.dir.path()) else {
            return;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            if path.extension().is_some_and(|e| e == "db") {
                summaries::assert_they_are_the_analysis(&path);
                assert_db_check_finds_them_current(&path);
            }
        }
    }
}

/// `db check` compares every run's summaries with its iterations: in a sound database it finds
/// nothing (a damaged, foreign or newer file is its own test's business).
fn assert_db_check_finds_them_current(db: &Path) {
    let Ok(report) = SqliteStore::check(db, true) else {
        return;
    };
    if !report.integrity_problems.is_empty() || report.schema_problem.is_some() {
        return;
    }
    assert!(
        report.summaries.problems.is_empty(),
        "{}: db check: {:?}",
        db.display(),
        report.summaries
    );
}

/// Summarises the cases of every run in `db` again from their stored iterations, through the
/// store's own writer: for a fixture that added measurements or renamed cases with SQL, as the
/// store would have summarised them had the runs measured them. Summaries of a case name no run
/// has any longer go. Below V9 there are none: the upgrade to V9 summarises every run.
pub fn resummarise(db: &Path) {
    let conn = rusqlite::Connection::open(db).unwrap();
    let summaries: i64 = conn
        .query_row(
            "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'summaries'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    if summaries == 0 {
        return;
    }
    conn.execute(
        "DELETE FROM summaries WHERE NOT EXISTS (SELECT 1 FROM cases c
           WHERE c.run_id = summaries.run_id AND c.name = summaries.case_name)",
        [],
    )
    .unwrap();
    conn.execute(
        "DELETE FROM summarised_cases WHERE NOT EXISTS (SELECT 1 FROM cases c
           WHERE c.run_id = summarised_cases.run_id AND c.name = summarised_cases.case_name)",
        [],
    )
    .unwrap();
    let cases: Vec<(i64, i64)> = conn
        .prepare("SELECT run_id, position FROM cases ORDER BY run_id, position")
        .unwrap()
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    drop(conn);
    let mut store = SqliteStore::open_existing_writer(db).unwrap();
    for (run, position) in cases {
        store.summarise_case(run, position as usize).unwrap();
    }
}
