-- schedlab results store, version 7: the definition of every metric a case measured, as its workload
-- (or, for the secondary counters, the runner) declared it: unit, direction, role, and shape — a
-- scalar, a count, the quantile p of a named distribution, or that distribution's max — so readers
-- never learn what a metric is from its name. Written with the first iteration that returns the
-- metric; the runner holds every iteration of a case to one declaration. Measurements stored
-- before V7 have no row here, and readers take them as schedlab did then (docs/store.md).
--
-- IF NOT EXISTS: a file taken back to an older version by hand, by dropping the tables and columns
-- of later versions (as schedlab's tests do), may still hold this table; it upgrades again.
CREATE TABLE IF NOT EXISTS metrics (
    case_id      INTEGER NOT NULL REFERENCES cases (id) ON DELETE CASCADE,
    name         TEXT    NOT NULL,
    unit         TEXT    NOT NULL,
    better       TEXT    NOT NULL CHECK (better IN ('lower', 'higher')),
    role         TEXT    NOT NULL CHECK (role IN ('primary', 'secondary')),
    shape        TEXT    NOT NULL CHECK (shape IN ('scalar', 'count', 'quantile', 'max')),
    -- The percentile of a quantile, 0 < p < 100 (99.9 for the 99.9th); NULL for other shapes.
    quantile_p   REAL
        CHECK ((shape = 'quantile') = (quantile_p IS NOT NULL AND quantile_p > 0 AND quantile_p < 100)),
    -- What a quantile or max summarises (`wakeup` latency); NULL for other shapes.
    distribution TEXT
        CHECK ((shape IN ('quantile', 'max')) = (distribution IS NOT NULL)),
    UNIQUE (case_id, name)
);
