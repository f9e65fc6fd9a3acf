-- schedlab results store, version 10: what `--explain` and `--profile` measured, in iterations of their
-- own that run after a case's measured ones. They are kept in tables of their own, never in
-- `iterations`, so no comparison of primary metrics can read a probed iteration (docs/explain.md).
--
-- IF NOT EXISTS: a file taken back to an older version by hand (as schedlab's tests do, V7) may still
-- hold these tables; it upgrades again.
CREATE TABLE IF NOT EXISTS probe_iterations (
    id            INTEGER PRIMARY KEY,
    case_id       INTEGER NOT NULL REFERENCES cases (id) ON DELETE CASCADE,
    kind          TEXT    NOT NULL CHECK (kind IN ('explain', 'profile')),
    -- 0-based among the case's probe iterations of this kind.
    position      INTEGER NOT NULL,
    started_at_ns INTEGER NOT NULL,
    UNIQUE (case_id, kind, position)
);

-- Each metric of a probe iteration, self-described: the workload's primary and the runner's
-- secondary metrics measured under the probes (what the probes cost), and the explanatory ones.
CREATE TABLE IF NOT EXISTS probe_measurements (
    probe_iteration_id INTEGER NOT NULL REFERENCES probe_iterations (id) ON DELETE CASCADE,
    -- The task group (command name up to its first digit); '' for all the workload's tasks, or the
    -- whole machine (PSI, /proc/schedstat, hardware counters).
    task_group   TEXT    NOT NULL,
    name         TEXT    NOT NULL,
    unit         TEXT    NOT NULL,
    better       TEXT    NOT NULL CHECK (better IN ('lower', 'higher')),
    role         TEXT    NOT NULL CHECK (role IN ('primary', 'secondary', 'explanatory')),
    shape        TEXT    NOT NULL CHECK (shape IN ('scalar', 'count', 'quantile', 'max')),
    quantile_p   REAL
        CHECK ((shape = 'quantile') = (quantile_p IS NOT NULL AND quantile_p > 0 AND quantile_p < 100)),
    distribution TEXT
        CHECK ((shape IN ('quantile', 'max')) = (distribution IS NOT NULL)),
    value        REAL    NOT NULL,
    UNIQUE (probe_iteration_id, task_group, name)
);

-- A probe the machine could not give, and why: recorded, never stored as zero.
CREATE TABLE IF NOT EXISTS probe_unavailable (
    probe_iteration_id INTEGER NOT NULL REFERENCES probe_iterations (id) ON DELETE CASCADE,
    probe              TEXT    NOT NULL,
    reason             TEXT    NOT NULL,
    UNIQUE (probe_iteration_id, probe)
);

-- Histograms of a probe iteration (the run-queue delay per task group), as `attachments` keeps them.
CREATE TABLE IF NOT EXISTS probe_attachments (
    probe_iteration_id INTEGER NOT NULL REFERENCES probe_iterations (id) ON DELETE CASCADE,
    task_group         TEXT    NOT NULL,
    name               TEXT    NOT NULL,
    encoding           TEXT    NOT NULL,
    data               BLOB    NOT NULL,
    UNIQUE (probe_iteration_id, task_group, name)
);

-- A profile's symbols, largest share first; the ones past the top are summed as `[other]`.
CREATE TABLE IF NOT EXISTS profile_symbols (
    probe_iteration_id INTEGER NOT NULL REFERENCES probe_iterations (id) ON DELETE CASCADE,
    rank               INTEGER NOT NULL,
    symbol             TEXT    NOT NULL,
    module             TEXT    NOT NULL,
    origin             TEXT    NOT NULL CHECK (origin IN ('kernel', 'user', 'unresolved')),
    samples            INTEGER NOT NULL,
    share_pct          REAL    NOT NULL,
    UNIQUE (probe_iteration_id, rank)
);
