-- schedlab results store, version 8 (PostgreSQL): every run's globally unique id, so many machines
-- writing at once, and `schedlab push` run again and again, never lose or duplicate a run.
ALTER TABLE runs ADD COLUMN uuid UUID;
UPDATE runs SET uuid = gen_random_uuid() WHERE uuid IS NULL;
ALTER TABLE runs ALTER COLUMN uuid SET NOT NULL;
CREATE UNIQUE INDEX runs_by_uuid ON runs (uuid);
-- The fleet's questions: a host's runs, newest first.
CREATE INDEX runs_by_host ON runs (hostname, started_at_ns);
