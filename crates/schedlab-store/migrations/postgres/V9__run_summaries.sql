-- schedlab results store, version 9 (PostgreSQL): every run's summary of every metric of every case,
-- written as the case completes and filled by the upgrade for runs stored before, so the fleet
-- commands read one row per run and metric, never the iterations (migrations/sqlite/V9).
CREATE TABLE summaries (
    run_id       BIGINT NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    case_name    TEXT   NOT NULL,
    metric       TEXT   NOT NULL,
    ordinal      BIGINT NOT NULL,
    unit         TEXT   NOT NULL,
    better       TEXT   NOT NULL CHECK (better IN ('lower', 'higher')),
    role         TEXT   NOT NULL CHECK (role IN ('primary', 'secondary')),
    n            BIGINT NOT NULL CHECK (n > 0),
    log_mean     DOUBLE PRECISION,
    log_variance DOUBLE PRECISION,
    raw_mean     DOUBLE PRECISION,
    raw_variance DOUBLE PRECISION,
    PRIMARY KEY (run_id, case_name, metric)
);
CREATE TABLE summarised_cases (
    run_id     BIGINT NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    case_name  TEXT   NOT NULL,
    iterations BIGINT NOT NULL,
    measured   BIGINT NOT NULL,
    PRIMARY KEY (run_id, case_name)
);
ALTER TABLE runs ADD COLUMN measured_by TEXT;
-- The fleet's questions: a case's runs, every run by time, a host's kernels, and `--where` on any
-- fingerprint field through a JSON index (jsonb containment).
CREATE INDEX cases_by_name_run ON cases (name, run_id);
CREATE INDEX runs_by_start ON runs (started_at_ns, id);
-- The few runs still marked running, which every reader judges (liveness).
CREATE INDEX runs_running ON runs (id) WHERE status = 'running';
CREATE INDEX runs_by_host_kernel ON runs (hostname, kernel_release, started_at_ns);
CREATE INDEX runs_by_fingerprint ON runs USING GIN ((fingerprint_json::jsonb) jsonb_path_ops);
