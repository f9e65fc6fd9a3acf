-- schedlab results store, version 11 (PostgreSQL): the quiet-machine guard (`--quiet-below`), one row
-- per iteration run under it (migrations/sqlite/V11).
CREATE TABLE iteration_quiet (
    iteration_id BIGINT  PRIMARY KEY REFERENCES iterations (id) ON DELETE CASCADE,
    limit_pct    DOUBLE PRECISION NOT NULL CHECK (limit_pct > 0 AND limit_pct <= 100),
    waited_ns    BIGINT  NOT NULL CHECK (waited_ns >= 0),
    -- NULL when PSI could not be read before the iteration.
    before_pct   DOUBLE PRECISION CHECK (before_pct >= 0 AND before_pct <= 100),
    -- NULL for an iteration that ran on a quiet machine.
    disturbed    TEXT    CHECK (disturbed IN ('never_quiet', 'pressure_during'))
);
