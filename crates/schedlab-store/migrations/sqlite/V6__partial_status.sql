-- schedlab results store, version 6: a run that `--keep-going` carried past failed cases ends
-- `partial`. SQLite cannot change a CHECK constraint in place, so `runs` is rebuilt as SQLite's
-- table-rebuild procedure says: schedlab applies migrations with foreign-key enforcement off (else
-- dropping the old table would cascade into every case) and checks the keys before it commits.
CREATE TABLE runs_v6 (
    id                INTEGER PRIMARY KEY AUTOINCREMENT,
    label             TEXT,
    suite             TEXT,
    plan_json         TEXT    NOT NULL,
    fingerprint_json  TEXT    NOT NULL,
    boot_id           TEXT    NOT NULL,
    kernel_release    TEXT    NOT NULL,
    hostname          TEXT    NOT NULL,
    started_at_ns     INTEGER NOT NULL,
    ended_at_ns       INTEGER,
    status            TEXT    NOT NULL
        CHECK (status IN ('running', 'complete', 'partial', 'interrupted', 'failed')),
    error             TEXT,
    schedlab_version  TEXT    NOT NULL,
    experiment_id     INTEGER REFERENCES experiments (id),
    experiment_side   TEXT CHECK (experiment_side IN ('a', 'b')),
    experiment_round  INTEGER,
    owner_pid         INTEGER,
    owner_start_ticks INTEGER,
    owner_boot_id     TEXT,
    owner_host        TEXT
);
INSERT INTO runs_v6 (id, label, suite, plan_json, fingerprint_json, boot_id, kernel_release, hostname,
                     started_at_ns, ended_at_ns, status, error, schedlab_version, experiment_id,
                     experiment_side, experiment_round, owner_pid, owner_start_ticks, owner_boot_id,
                     owner_host)
SELECT id, label, suite, plan_json, fingerprint_json, boot_id, kernel_release, hostname,
       started_at_ns, ended_at_ns, status, error, schedlab_version, experiment_id,
       experiment_side, experiment_round, owner_pid, owner_start_ticks, owner_boot_id, owner_host
FROM runs;
-- Run ids are never reused, even those of runs someone deleted by hand: keep the counter.
DELETE FROM sqlite_sequence WHERE name = 'runs_v6';
INSERT INTO sqlite_sequence (name, seq) SELECT 'runs_v6', seq FROM sqlite_sequence WHERE name = 'runs';
DROP TABLE runs;
ALTER TABLE runs_v6 RENAME TO runs;
CREATE INDEX runs_by_label ON runs (label);
CREATE INDEX runs_by_boot ON runs (boot_id);
