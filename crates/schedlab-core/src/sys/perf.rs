//! perf software counters. Part of the audited OS layer (`crate::sys`).

/// A perf software counter that follows the calling thread and every task it creates afterwards
/// (perf's `inherit`), so forked processes and spawned threads are all counted.
pub struct InheritedCounter {
    counter: perf_event::Counter,
}

impl InheritedCounter {
    /// Opens a CPU-migrations counter; `None` where perf events are unavailable (no permission,
    /// no kernel support), which callers report as "not measured" rather than failing.
    pub fn cpu_migrations() -> Option<Self> {
        let mut builder =
            perf_event::Builder::new().kind(perf_event::events::Software::CPU_MIGRATIONS);
        // Migrations happen in the kernel: with perf-event's default exclude_kernel the count
        // would always be 0.
        builder.inherit(true).exclude_kernel(false);
        let mut counter = builder.build().ok()?;
        counter.enable().ok()?;
        Some(InheritedCounter { counter })
    }

    pub fn read(&mut self) -> Option<u64> {
        self.counter.read().ok()
    }
}
