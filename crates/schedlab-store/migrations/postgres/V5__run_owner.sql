-- schedlab results store, version 5 (PostgreSQL): who runs a run (pid, process start time in clock
-- ticks after boot, boot id, host), so a reader on that host can tell a live `running` run from an
-- abandoned one; and why a case failed.
ALTER TABLE runs ADD COLUMN owner_pid INTEGER;
ALTER TABLE runs ADD COLUMN owner_start_ticks BIGINT;
ALTER TABLE runs ADD COLUMN owner_boot_id TEXT;
ALTER TABLE runs ADD COLUMN owner_host TEXT;

ALTER TABLE cases ADD COLUMN error TEXT;
