-- schedlab results store, version 7 (PostgreSQL): the definition of every metric a case measured, as
-- its workload (or the runner) declared it: unit, direction, role and shape (migrations/sqlite/V7).
CREATE TABLE metrics (
    case_id      BIGINT NOT NULL REFERENCES cases (id) ON DELETE CASCADE,
    name         TEXT   NOT NULL,
    unit         TEXT   NOT NULL,
    better       TEXT   NOT NULL CHECK (better IN ('lower', 'higher')),
    role         TEXT   NOT NULL CHECK (role IN ('primary', 'secondary')),
    shape        TEXT   NOT NULL CHECK (shape IN ('scalar', 'count', 'quantile', 'max')),
    quantile_p   DOUBLE PRECISION
        CHECK ((shape = 'quantile') = (quantile_p IS NOT NULL AND quantile_p > 0 AND quantile_p < 100)),
    distribution TEXT
        CHECK ((shape IN ('quantile', 'max')) = (distribution IS NOT NULL)),
    UNIQUE (case_id, name)
);
