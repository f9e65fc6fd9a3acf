-- schedlab results store, version 1: runs, their planned cases, iterations and raw measurements.
CREATE TABLE runs (
    id               INTEGER PRIMARY KEY AUTOINCREMENT,
    label            TEXT,
    suite            TEXT,
    plan_json        TEXT    NOT NULL,
    fingerprint_json TEXT    NOT NULL,
    boot_id          TEXT    NOT NULL,
    kernel_release   TEXT    NOT NULL,
    hostname         TEXT    NOT NULL,
    started_at_ns    INTEGER NOT NULL,
    ended_at_ns      INTEGER,
    status           TEXT    NOT NULL CHECK (status IN ('running', 'complete', 'interrupted', 'failed')),
    error            TEXT,
    schedlab_version TEXT    NOT NULL
);
CREATE INDEX runs_by_label ON runs (label);
CREATE INDEX runs_by_boot ON runs (boot_id);

CREATE TABLE cases (
    id        INTEGER PRIMARY KEY,
    run_id    INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    position  INTEGER NOT NULL,
    name      TEXT    NOT NULL,
    workload  TEXT    NOT NULL,
    spec_json TEXT    NOT NULL,
    UNIQUE (run_id, position)
);

CREATE TABLE iterations (
    id            INTEGER PRIMARY KEY,
    case_id       INTEGER NOT NULL REFERENCES cases (id) ON DELETE CASCADE,
    position      INTEGER NOT NULL,
    warmup        INTEGER NOT NULL CHECK (warmup IN (0, 1)),
    started_at_ns INTEGER NOT NULL,
    UNIQUE (case_id, position)
);

CREATE TABLE measurements (
    iteration_id INTEGER NOT NULL REFERENCES iterations (id) ON DELETE CASCADE,
    name         TEXT    NOT NULL,
    unit         TEXT    NOT NULL,
    better       TEXT    NOT NULL CHECK (better IN ('lower', 'higher')),
    role         TEXT    NOT NULL CHECK (role IN ('primary', 'secondary')),
    value        REAL    NOT NULL,
    UNIQUE (iteration_id, name)
);
