-- schedlab results store, version 3: experiments (interleaved A/B runs of settings, per-boot kernel
-- campaigns) and each run's place in one.
CREATE TABLE experiments (
    id            INTEGER PRIMARY KEY AUTOINCREMENT,
    kind          TEXT    NOT NULL CHECK (kind IN ('ab', 'campaign')),
    name          TEXT    NOT NULL,
    spec_json     TEXT    NOT NULL,
    state_json    TEXT    NOT NULL,
    status        TEXT    NOT NULL CHECK (status IN ('running', 'complete', 'interrupted', 'failed')),
    created_at_ns INTEGER NOT NULL,
    UNIQUE (kind, name)
);

ALTER TABLE runs ADD COLUMN experiment_id INTEGER REFERENCES experiments (id);
ALTER TABLE runs ADD COLUMN experiment_side TEXT CHECK (experiment_side IN ('a', 'b'));
ALTER TABLE runs ADD COLUMN experiment_round INTEGER;
