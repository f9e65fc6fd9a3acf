-- schedlab results store, version 8: every run gets a globally unique id (a random UUID, version 4,
-- in its text form), so runs from many machines can meet in one store (PostgreSQL, or a file `push`
-- copies into) without being lost or copied twice. The integer id stays the handle users type
-- within one store. Runs stored before V8 get a new random UUID here.
ALTER TABLE runs ADD COLUMN uuid TEXT;
UPDATE runs SET uuid = lower(
    hex(randomblob(4)) || '-' || hex(randomblob(2)) || '-4' || substr(hex(randomblob(2)), 2) || '-'
    || substr('89ab', 1 + (abs(random()) % 4), 1) || substr(hex(randomblob(2)), 2) || '-'
    || hex(randomblob(6)));
CREATE UNIQUE INDEX runs_by_uuid ON runs (uuid);
-- The fleet's questions: a host's runs, newest first.
CREATE INDEX runs_by_host ON runs (hostname, started_at_ns);
