//! perf software counters. Part of the audited OS layer (`crate::sys`).

/// A perf software counter on every given CPU, counting whatever runs there (system-wide, like the
/// interrupt rows of /proc/interrupts).
///
/// Per-CPU rather than per-task on purpose: a counter that follows the workload's tasks (perf's
/// `inherit`) hooks every context switch of those tasks, which made `pipe`'s round trips cost
/// 10 % more CPU (docs/fidelity.md). Per-CPU events add nothing to a context switch.
pub struct SystemCounter {
    counters: Vec<perf_event::Counter>,
}

impl SystemCounter {
    /// Opens a CPU-migrations counter on each of `cpus`; `None` where perf events are unavailable
    /// (system-wide counting needs CAP_PERFMON or `perf_event_paranoid` ≤ 0; no kernel support),
    /// which callers report as "not measured" rather than failing.
    pub fn cpu_migrations(cpus: &[u32]) -> Option<Self> {
        let counters = cpus
            .iter()
            .map(|&cpu| {
                let mut builder = perf_event::Builder::new()
                    .kind(perf_event::events::Software::CPU_MIGRATIONS)
                    .one_cpu(cpu as usize)
                    .any_pid();
                // Migrations happen in the kernel: with perf-event's default exclude_kernel the
                // count would always be 0.
                builder.exclude_kernel(false);
                let mut counter = builder.build().ok()?;
                counter.enable().ok()?;
                Some(counter)
            })
            .collect::<Option<Vec<_>>>()?;
        (!counters.is_empty()).then_some(SystemCounter { counters })
    }

    /// The sum over the CPUs; `None` if any of them cannot be read.
    pub fn read(&mut self) -> Option<u64> {
        self.counters
            .iter_mut()
            .map(|c| c.read().ok())
            .sum::<Option<u64>>()
    }
}
