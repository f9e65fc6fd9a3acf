-- schedlab results store, version 11: the quiet-machine guard (`--quiet-below`, docs/store.md). For
-- each iteration run under it: the CPU pressure limit it was held to, how long the guard waited
-- before it, the pressure of the guard's last look, and, if it is marked disturbed, why. An
-- iteration run without the guard has no row. The pressure during the iteration is the measurement
-- `psi_cpu_some_pct`, as every other metric of the machine.
--
-- IF NOT EXISTS: a file taken back to an older version by hand (as schedlab's tests do) may still
-- hold this table; it upgrades again.
CREATE TABLE IF NOT EXISTS iteration_quiet (
    iteration_id INTEGER PRIMARY KEY REFERENCES iterations (id) ON DELETE CASCADE,
    limit_pct    REAL    NOT NULL CHECK (limit_pct > 0 AND limit_pct <= 100),
    waited_ns    INTEGER NOT NULL CHECK (waited_ns >= 0),
    -- NULL when PSI could not be read before the iteration.
    before_pct   REAL    CHECK (before_pct >= 0 AND before_pct <= 100),
    -- NULL for an iteration that ran on a quiet machine.
    disturbed    TEXT    CHECK (disturbed IN ('never_quiet', 'pressure_during'))
);
