-- schedlab results store, version 5: who runs a run, so a later reader can tell a live `running`
-- run from one whose process died (SIGKILL, OOM killer, power loss) or whose boot ended — it shows
-- such a run as `abandoned`, a status derived on load and never written; and why a case failed
-- (a workload error, or the iteration watchdog naming the tasks that were stuck).
ALTER TABLE runs ADD COLUMN owner_pid INTEGER;
-- Clock ticks after boot at which the process started (/proc/<pid>/stat field 22): with the pid it
-- names one process for the whole boot, so a reused pid is not mistaken for the run's.
ALTER TABLE runs ADD COLUMN owner_start_ticks INTEGER;
ALTER TABLE runs ADD COLUMN owner_boot_id TEXT;
ALTER TABLE runs ADD COLUMN owner_host TEXT;

ALTER TABLE cases ADD COLUMN error TEXT;
