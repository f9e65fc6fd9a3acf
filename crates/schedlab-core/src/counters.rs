//! What the runner measures around every iteration of a workload that runs tasks: wall time, the
//! tasks' user and system CPU and context switches (getrusage), CPU migrations on every online CPU
//! (a perf software counter, where perf events are available) and IPIs from /proc/interrupts summed over CPUs:
//! rescheduling (RES) and function-call (CAL) interrupts — current kernels deliver many remote
//! wake-ups through the wake list as CAL, not RES. Around every iteration of every workload
//! ([`MachineCounters`]): from /proc/stat, the steal time of all CPUs, which says whether a
//! guest's host took its vCPUs away during the iteration, and the CPU pressure (PSI) it ran under.
use crate::metric::{ns_to_sec, secondary, Measurement};
use crate::quiet::{pressure_pct, Pressure, Reading};
use crate::sys::{self, Usage, UsageOf};

/// A row of /proc/interrupts (`RES`, `CAL`, ...) summed over CPUs.
pub fn parse_interrupt_row(text: &str, row: &str) -> Option<u64> {
    let prefix = format!("{row}:");
    let line = text.lines().find(|l| l.trim_start().starts_with(&prefix))?;
    let counts = line.trim_start()[prefix.len()..]
        .split_whitespace()
        .map_while(|field| field.parse::<u64>().ok());
    Some(counts.sum())
}

/// The RES and CAL rows, read together.
fn read_ipis() -> (Option<u64>, Option<u64>) {
    match std::fs::read_to_string("/proc/interrupts") {
        Ok(text) => (
            parse_interrupt_row(&text, "RES"),
            parse_interrupt_row(&text, "CAL"),
        ),
        Err(_) => (None, None),
    }
}

/// The online CPUs' numbers.
fn online_cpus() -> Option<Vec<u32>> {
    let text = std::fs::read_to_string("/sys/devices/system/cpu/online").ok()?;
    let list: crate::cpu_list::CpuList = text.trim().parse().ok()?;
    Some(list.into())
}

/// The steal time of the `cpu` line of /proc/stat (all CPUs), in clock ticks.
pub fn parse_steal_ticks(text: &str) -> Option<u64> {
    let line = text.lines().find(|l| l.starts_with("cpu "))?;
    // user nice system idle iowait irq softirq steal: the eighth count, since Linux 2.6.11.
    line.split_whitespace().nth(8)?.parse().ok()
}

fn read_steal_ticks() -> Option<u64> {
    parse_steal_ticks(&std::fs::read_to_string("/proc/stat").ok()?)
}

/// Usage of the workload's tasks as seen from the main thread: the whole process minus the main
/// thread itself (worker threads, including finished ones) plus reaped child processes.
fn task_usage() -> (Usage, Usage, Usage) {
    (
        sys::usage(UsageOf::Process),
        sys::usage(UsageOf::CurrentThread),
        sys::usage(UsageOf::ReapedChildren),
    )
}

/// Counters opened before an iteration and read after it. Opening and reading happen outside the
/// workload's timed window.
pub struct IterationCounters {
    wall_start_ns: u64,
    usage_start: (Usage, Usage, Usage),
    migrations: Option<sys::SystemCounter>,
    migrations_start: Option<u64>,
    ipis_start: (Option<u64>, Option<u64>),
}

impl IterationCounters {
    pub fn start() -> Self {
        let mut migrations =
            online_cpus().and_then(|cpus| sys::SystemCounter::cpu_migrations(&cpus));
        let migrations_start = migrations.as_mut().and_then(|c| c.read());
        let ipis_start = read_ipis();
        IterationCounters {
            wall_start_ns: sys::monotonic_ns(),
            usage_start: task_usage(),
            migrations,
            migrations_start,
            ipis_start,
        }
    }

    /// The secondary metrics; a counter this machine cannot provide is left out, not zeroed.
    pub fn finish(mut self) -> Vec<Measurement> {
        let wall_ns = sys::monotonic_ns().saturating_sub(self.wall_start_ns);
        let (process, main_thread, children) = task_usage();
        let (p0, m0, c0) = self.usage_start;
        let threads = process
            .saturating_sub(p0)
            .saturating_sub(main_thread.saturating_sub(m0));
        let tasks = threads + children.saturating_sub(c0);
        let mut out = vec![
            secondary::WALL_TIME_SEC.value(ns_to_sec(wall_ns)),
            secondary::USER_CPU_SEC.value(ns_to_sec(tasks.user_ns)),
            secondary::SYS_CPU_SEC.value(ns_to_sec(tasks.sys_ns)),
            secondary::VOLUNTARY_CSW_COUNT.value(tasks.voluntary_csw as f64),
            secondary::INVOLUNTARY_CSW_COUNT.value(tasks.involuntary_csw as f64),
        ];
        if let (Some(counter), Some(start)) = (self.migrations.as_mut(), self.migrations_start) {
            if let Some(end) = counter.read() {
                out.push(secondary::CPU_MIGRATIONS_COUNT.value(end.saturating_sub(start) as f64));
            }
        }
        let (res_end, cal_end) = read_ipis();
        let (res_start, cal_start) = self.ipis_start;
        if let (Some(start), Some(end)) = (res_start, res_end) {
            out.push(secondary::RES_IPI_COUNT.value(end.saturating_sub(start) as f64));
        }
        if let (Some(start), Some(end)) = (cal_start, cal_end) {
            out.push(secondary::CAL_IPI_COUNT.value(end.saturating_sub(start) as f64));
        }
        out
    }
}

/// The machine's counters around an iteration of any workload: steal time and CPU pressure,
/// read before and after it, outside its timed window.
pub struct MachineCounters {
    steal_start: Option<u64>,
    psi_start: Option<Reading>,
}

impl MachineCounters {
    pub fn start(pressure: &Pressure) -> Self {
        MachineCounters {
            steal_start: read_steal_ticks(),
            psi_start: pressure.read(),
        }
    }

    /// The metrics, and the pressure on its own for the quiet-machine guard; what this machine
    /// cannot read is left out, not zeroed.
    pub fn finish(self, pressure: &Pressure) -> (Vec<Measurement>, Option<f64>) {
        let psi_end = pressure.read();
        let mut out = Vec::new();
        if let (Some(start), Some(end)) = (self.steal_start, read_steal_ticks()) {
            let ticks = end.saturating_sub(start);
            out.push(secondary::STEAL_CPU_SEC.value(ticks as f64 / sys::clock_ticks_per_sec()));
        }
        let psi = self
            .psi_start
            .zip(psi_end)
            .and_then(|(a, b)| pressure_pct(a, b));
        if let Some(pct) = psi {
            out.push(secondary::PSI_CPU_SOME_PCT.value(pct));
        }
        (out, psi)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sums_res_over_cpus() {
        let text = "           CPU0       CPU1\n  0:         40          0   IO-APIC   2-edge      timer\n\
                    NMI:          0          0   Non-maskable interrupts\n\
                    RES:     811227     833019   Rescheduling interrupts\n\
                    CAL:       1000       2000   Function call interrupts\n";
        assert_eq!(parse_interrupt_row(text, "RES"), Some(811227 + 833019));
        assert_eq!(parse_interrupt_row(text, "CAL"), Some(3000));
    }

    #[test]
    fn steal_is_the_eighth_count_of_the_cpu_line() {
        let text = "cpu  4705 356 584 3699 23 23 0 91 0 0\ncpu0 2000 100 300 1800 10 10 0 41 0 0\n";
        assert_eq!(parse_steal_ticks(text), Some(91));
        assert_eq!(parse_steal_ticks("cpu  1 2 3 4\n"), None);
        assert_eq!(parse_steal_ticks("intr 5\n"), None);
    }

    #[test]
    fn missing_res_row_is_none() {
        assert_eq!(
            parse_interrupt_row("NMI: 0 0 Non-maskable interrupts\n", "RES"),
            None
        );
    }

    /// Where PSI is off, the pressure is left out (and steal still read); where it is on, a
    /// busy thread of this process shows as pressure only if it waited, so only the range is
    /// held.
    #[test]
    fn pressure_is_left_out_where_psi_is_missing() {
        let missing = Pressure::at("/nonexistent/pressure/cpu");
        let counters = MachineCounters::start(&missing);
        let (m, psi) = counters.finish(&missing);
        assert_eq!(psi, None);
        assert!(m.iter().all(|m| m.name != "psi_cpu_some_pct"), "{m:?}");
        let system = Pressure::system();
        if system.availability().is_ok() {
            let counters = MachineCounters::start(&system);
            sys::sleep_ns(20_000_000);
            let (m, psi) = counters.finish(&system);
            let pct = psi.expect("PSI is readable here");
            assert!((0.0..=100.0).contains(&pct), "{pct}");
            assert!(m
                .iter()
                .any(|m| m.name == "psi_cpu_some_pct" && m.value == pct));
        }
    }

    #[test]
    fn counts_cpu_of_a_worker_thread() {
        let counters = IterationCounters::start();
        std::thread::spawn(|| {
            let start = sys::monotonic_ns();
            let mut x = 0u64;
            while sys::monotonic_ns() - start < 30_000_000 {
                x = std::hint::black_box(x.wrapping_add(1));
            }
        })
        .join()
        .unwrap();
        let m = counters.finish();
        let cpu: f64 = m
            .iter()
            .filter(|m| m.name == "user_cpu_sec" || m.name == "sys_cpu_sec")
            .map(|m| m.value)
            .sum();
        assert!(cpu > 0.0, "worker CPU time not counted: {m:?}");
    }
}
