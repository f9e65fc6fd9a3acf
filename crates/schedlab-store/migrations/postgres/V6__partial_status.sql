-- schedlab results store, version 6 (PostgreSQL): a run that `--keep-going` carried past failed
-- cases ends `partial`. PostgreSQL changes the CHECK constraint in place (SQLite rebuilds the table).
ALTER TABLE runs DROP CONSTRAINT runs_status_check;
ALTER TABLE runs ADD CONSTRAINT runs_status_check
    CHECK (status IN ('running', 'complete', 'partial', 'interrupted', 'failed'));
