//! Taking a current SQLite file back to an older schema, as an older schedlab left it, for the
//! upgrade tests to start from: the store's own (its unit tests include this file by path) and
//! the binary's (tests/common), so each undo is written once.
use std::path::Path;

/// What V9 added (summaries, their indexes, each run's measuring build): dropping it takes a
/// current file's schema back to V8, as a schedlab before summaries left it.
pub const UNDO_V9: &str = "DROP TABLE summaries;
             DROP TABLE summarised_cases;
             DROP INDEX cases_by_name;
             DROP INDEX runs_by_start;
             DROP INDEX runs_running;
             DROP INDEX runs_by_host_kernel;
             ALTER TABLE runs DROP COLUMN measured_by;";

/// Runs `undo` on `db`, then records the file as at `version`: refinery's history forgets the
/// later migrations, and SQLite's user_version says `user_version` (the schema's number as the
/// schedlab of that version wrote it).
pub fn downgrade(db: &Path, undo: &str, version: u32, user_version: u32) {
    rusqlite::Connection::open(db)
        .unwrap()
        .execute_batch(&format!(
            "{undo}
             DELETE FROM refinery_schema_history WHERE version > {version};
             PRAGMA user_version = {user_version};"
        ))
        .unwrap();
}

/// Takes `db` back to V8: its runs and iterations stay, V9's tables, columns and indexes go.
pub fn downgrade_to_v8(db: &Path) {
    downgrade(db, UNDO_V9, 8, 8);
}
