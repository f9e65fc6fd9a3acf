-- schedlab results store, version 2: binary attachments of iterations (serialized HDR histograms).
CREATE TABLE attachments (
    iteration_id INTEGER NOT NULL REFERENCES iterations (id) ON DELETE CASCADE,
    name         TEXT    NOT NULL,
    encoding     TEXT    NOT NULL,
    data         BLOB    NOT NULL,
    UNIQUE (iteration_id, name)
);
