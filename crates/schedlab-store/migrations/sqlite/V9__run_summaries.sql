-- schedlab results store, version 9: every run's summary of every metric of every case — how many
-- measured iterations returned it, and the mean and sample variance of ln x (when every value is
-- positive) and of x — written as the case completes, so `history`, `changes`, `hosts`, `runs` and
-- `compare`'s selection read one row per run and metric, never the iterations. Cases of one name in
-- one run are summarised together, as the analysis reads them. Runs stored before V9 are summarised
-- by the upgrade itself: schedlab fills these tables from their iterations in the same transaction.
CREATE TABLE summaries (
    run_id       INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    case_name    TEXT    NOT NULL,
    -- Its current name (crates/schedlab-core/src/metric.rs, FORMER_NAMES).
    metric       TEXT    NOT NULL,
    -- Where the metric first appeared among the case's metrics in the run, from 0.
    ordinal      INTEGER NOT NULL,
    unit         TEXT    NOT NULL,
    better       TEXT    NOT NULL CHECK (better IN ('lower', 'higher')),
    role         TEXT    NOT NULL CHECK (role IN ('primary', 'secondary')),
    -- Measured iterations that returned it.
    n            INTEGER NOT NULL CHECK (n > 0),
    -- Of ln x: NULL unless every value is positive (and finite); the variance NULL with one value.
    log_mean     REAL,
    log_variance REAL,
    -- Of x: NULL when a value is not a finite number; the variance NULL with one value.
    raw_mean     REAL,
    raw_variance REAL,
    PRIMARY KEY (run_id, case_name, metric)
);
-- Which cases the summaries cover: the iterations (warm-ups too) and the measured ones the cases of
-- this name had when their summaries were written. Summaries are current while the count is.
CREATE TABLE summarised_cases (
    run_id     INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    case_name  TEXT    NOT NULL,
    iterations INTEGER NOT NULL,
    measured   INTEGER NOT NULL,
    PRIMARY KEY (run_id, case_name)
);
-- The build (or imported tool) that measured the run, from its fingerprint, for histories.
ALTER TABLE runs ADD COLUMN measured_by TEXT;
-- The fleet's questions: a case's runs, every run by time, a host's kernels.
CREATE INDEX cases_by_name ON cases (name, run_id);
CREATE INDEX runs_by_start ON runs (started_at_ns, id);
-- The few runs still marked running, which every reader judges (liveness).
CREATE INDEX runs_running ON runs (id) WHERE status = 'running';
CREATE INDEX runs_by_host_kernel ON runs (hostname, kernel_release, started_at_ns);
