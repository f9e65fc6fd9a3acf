-- schedlab results store, version 4: calibrations (`schedlab calibrate`), a machine's noise model
-- per case and metric, computed from stored runs whose ids it keeps.
CREATE TABLE calibrations (
    id            INTEGER PRIMARY KEY AUTOINCREMENT,
    created_at_ns INTEGER NOT NULL,
    label         TEXT    NOT NULL,
    hostname      TEXT    NOT NULL,
    run_ids_json  TEXT    NOT NULL,
    model_json    TEXT    NOT NULL
);
